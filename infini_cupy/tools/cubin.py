"""A kernel variant's cubin, read without a GPU: the figures its ELF sections hold (registers,
shared memory, stack frame per function) and its SASS, from ``nvdisasm`` (the
``nvidia-cuda-nvdisasm`` wheel).

>>> from infini_cupy.runtime.nvrtc import compile_program
>>> cubin = compile_program("transpose.cu", ["tiled_copy<4, 1, 1, 0, 0>"]).binary
>>> sorted(n for n in sections(cubin) if n.startswith(".nv.shared."))[:1]  # doctest: +SKIP
['.nv.shared._Z10tiled_copyILi4ELi1ELi1ELi0ELi0EEvPvPKvN2ic10TileLayoutENS3_11ArrayStructILi4ExEES6_S6_']
"""

from __future__ import annotations

import functools
import glob
import os
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

NVDISASM_HINT = "pip install nvidia-cuda-nvdisasm (the wheel of NVRTC's CUDA major version)"
EIATTR_FRAME_SIZE, EIATTR_REGCOUNT = 0x11, 0x2F


@functools.lru_cache(maxsize=1)
def nvdisasm() -> str:
    """Path of ``nvdisasm``: the nvidia-cuda-nvdisasm wheel's, else one on PATH;
    RuntimeError saying what to install."""
    try:
        import nvidia

        for root in nvidia.__path__:
            for found in sorted(glob.glob(os.path.join(root, "*", "bin", "nvdisasm"))):
                if os.access(found, os.X_OK):
                    return found
    except ImportError:
        pass
    found = shutil.which("nvdisasm")
    if found:
        return found
    raise RuntimeError(f"reading SASS needs nvdisasm: {NVDISASM_HINT}")


def sections(cubin: bytes) -> dict[str, tuple[int, int, int, int]]:
    """name -> (type, offset, size, info) of every section."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQII", cubin, shoff + k * shentsize) for k in range(shnum)]
    names_at = headers[shstrndx][4]
    out = {}
    for name, kind, _flags, _addr, offset, size, _link, info in headers:
        end = cubin.index(b"\0", names_at + name)
        out[cubin[names_at + name:end].decode()] = (kind, offset, size, info)
    return out


def info_values(cubin: bytes, found: dict, attribute: int) -> list[int]:
    """The values of one (symbol, value) attribute of the .nv.info section: stack bytes
    (EIATTR_FRAME_SIZE) or registers (EIATTR_REGCOUNT) per function."""
    if ".nv.info" not in found:
        return []
    _, offset, size, _ = found[".nv.info"]
    at, end, values = offset, offset + size, []
    while at + 4 <= end:
        fmt, attr, length = struct.unpack_from("<BBH", cubin, at)
        if fmt == 0x04:  # EIFMT_SVAL: a payload of `length` bytes
            if attr == attribute and length >= 8:
                values.append(struct.unpack_from("<I", cubin, at + 8)[0])
            at += 4 + length
        else:
            at += 4
    return values


def disassemble(cubin: bytes) -> str:
    """``nvdisasm -c`` of a cubin (its code sections only)."""
    with tempfile.TemporaryDirectory(prefix="infini_cupy-sass-") as folder:
        path = Path(folder) / "kernel.cubin"
        path.write_bytes(cubin)
        done = subprocess.run([nvdisasm(), "-c", "-g", str(path)], capture_output=True,
                              text=True, timeout=120)
    if done.returncode:
        raise RuntimeError(f"nvdisasm failed: {done.stderr.strip()}")
    return done.stdout
