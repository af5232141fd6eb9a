"""The ``cuda`` launcher: our kernels loaded and launched through ``cupy.RawModule`` /
``RawKernel``, on CuPy's current device and stream.

Why we compile ourselves: ``RawModule(code=...)`` appends ``-ftz=true`` to the caller's
options (NVRTC takes the last), flushing float32 subnormals that the emulator keeps. So NVRTC
runs here with exactly our options (:mod:`.nvrtc`), one binary per (source, name expression,
architecture), kept on disk under ``$INFINI_CUPY_CACHE_DIR/cubin`` (keyed by the expanded
source, options, NVRTC version and architecture), and ``RawModule(path=...)`` loads it.

Everything else is CuPy's: it loads the module on every device that launches it, makes a
context current on the calling thread, launches on the current stream, and packs the
arguments by its rules (a ``cupy.ndarray`` as its data pointer, a NumPy scalar by value).
Kernels that need more than 48 KiB of dynamic shared memory are opted in through
``RawKernel.max_dynamic_shared_size_bytes``.

Structs pass as what our planners make, NumPy structured scalars (``numpy.void``), which
CuPy 14 packs like any NumPy scalar (``_scalar.CScalar``: the bytes, by value), not as the
NumPy arrays of size one that CuPy's documentation shows: measured with CuPy 14.2's own
classes, an array costs 3.1 us per struct per launch (``CNumpyArray`` reads
``__array_interface__``), a structured scalar 0.17 us, and a copy plan passes seven.

Tests without a GPU run this module against a stand-in for CuPy's device side
(``tests/support/cupy_standin.py``, installed with :func:`device_side`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from .. import config
from ..arrays import require_cupy
from .nvrtc import NVRTC_OPTIONS, arch_for, compile_program, nvrtc_version
from .sources import expanded_source
from .structs import dim3

STATIC_SHARED_LIMIT = 49152  # dynamic shared memory a kernel gets without opting in

_kernels: dict[tuple[int, str, str], object] = {}  # (device id, source, name) -> RawKernel
_by_arch: dict[tuple[str, str, str], object] = {}  # (arch, source, name) -> RawKernel
_lock = threading.Lock()
_optin_limits: dict[int, int] = {}  # device id -> cudaDevAttrMaxSharedMemoryPerBlockOptin
_without_gpu: list = []  # non-empty once CuPy said it has no device
_device_side = None  # a stand-in for CuPy (tests), else None: CuPy itself
_fallback_dir: list = []  # a per-process folder when the cache folder cannot be written
_compiles = [0]  # NVRTC compiles in this process (a kernel load's log says compile or cache)
_log = logging.getLogger("infini_cupy")  # one INFO record per kernel load, none per launch


@contextlib.contextmanager
def device_side(module):
    """Run this launcher against ``module`` in place of CuPy (every thread): a stand-in for
    CuPy's device side that runs launches without a GPU."""
    global _device_side
    previous, _device_side = _device_side, module
    forget_kernels()
    try:
        yield module
    finally:
        _device_side = previous
        forget_kernels()


def forget_kernels() -> None:
    """Drop the loaded kernels and device attributes (the next launch loads them again)."""
    with _lock:
        _kernels.clear()
        _by_arch.clear()
        _optin_limits.clear()


def _cupy():
    return _device_side if _device_side is not None else require_cupy()


def device_arch() -> str:
    """The NVRTC architecture of the current device (see :func:`.nvrtc.arch_for`)."""
    return arch_for(int(_cupy().cuda.Device().compute_capability))


def _cache_stem(source: str, name: str, arch: str) -> str:
    return hashlib.sha256(repr((expanded_source(source), name, NVRTC_OPTIONS, nvrtc_version(),
                                arch)).encode()).hexdigest()[:32]


def _write_atomically(path: Path, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as f:
        f.write(data)
    os.replace(f.name, path)


def _write_entry(folder: Path, stem: str, binary: bytes, about: dict) -> Path:
    """``<stem>.bin``, then ``<stem>.json`` (its lowered name): the JSON marks it complete."""
    folder.mkdir(parents=True, exist_ok=True)
    _write_atomically(folder / f"{stem}.bin", binary)
    _write_atomically(folder / f"{stem}.json", json.dumps(about).encode())
    return folder / f"{stem}.bin"


def _store(stem: str, binary: bytes, about: dict) -> Path:
    """Keep a binary on disk (``RawModule`` loads from a path). An unwritable cache folder
    costs a compile per process, nothing else: the binary goes to a folder of this process."""
    try:
        return _write_entry(config.cache_dir() / "cubin", stem, binary, about)
    except OSError:
        if not _fallback_dir:
            _fallback_dir.append(Path(tempfile.mkdtemp(prefix="infini_cupy-cubin-")))
        return _write_entry(_fallback_dir[0], stem, binary, about)


def module_file(source: str, name: str, arch: str) -> tuple[str, Path]:
    """(lowered name, path of the cubin or PTX) of one name expression: from the disk cache,
    else compiled by NVRTC and written there."""
    stem = _cache_stem(source, name, arch)
    for folder in [config.cache_dir() / "cubin"] + _fallback_dir:
        try:
            lowered = json.loads((folder / f"{stem}.json").read_text())["lowered"]
        except (OSError, ValueError, KeyError):
            continue
        if (folder / f"{stem}.bin").is_file():
            return lowered, folder / f"{stem}.bin"
    program = compile_program(source, [name], arch)
    _compiles[0] += 1
    lowered = program.lowered_names[name]
    about = {"source": source, "name": name, "arch": arch, "lowered": lowered}
    return lowered, _store(stem, program.binary, about)


def get_kernel(source: str, name: str):
    """The ``RawKernel`` of name expression ``name`` of ``kernels_src/<source>`` for the
    current device: compiled (or read from disk) once per architecture; CuPy loads its module
    on each device that launches it."""
    cupy = _cupy()
    key = (cupy.cuda.runtime.getDevice(), source, name)
    kernel = _kernels.get(key)
    if kernel is not None:
        return kernel
    with _lock:  # one compile per variant even when threads race for it
        kernel = _kernels.get(key)
        if kernel is None:
            arch = device_arch()
            kernel = _by_arch.get((arch, source, name))
            if kernel is None:
                started, compiles = time.perf_counter(), _compiles[0]
                lowered, path = module_file(source, name, arch)
                module = cupy.RawModule(path=str(path))
                kernel = _by_arch[(arch, source, name)] = module.get_function(lowered)
                _log.info("kernel %s (%s): cuda %s, %.1f ms, %s", name, source, arch,
                          (time.perf_counter() - started) * 1e3,
                          "compiled by NVRTC" if _compiles[0] > compiles else "disk cache")
            _kernels[key] = kernel
    return kernel


def max_dynamic_shared() -> int | None:
    """The dynamic shared memory a block may opt in to on the current device (227 KiB on an
    H100), or None without CuPy or a GPU."""
    cupy = _device_side or sys.modules.get("cupy")  # no GPU arrays exist before CuPy's import
    if cupy is None or (_without_gpu and _device_side is None):
        return None
    try:
        device = cupy.cuda.runtime.getDevice()
    except Exception:  # CuPy without a GPU or driver: asked once (plans ask per layout)
        _without_gpu.append(True)
        return None
    limit = _optin_limits.get(device)
    if limit is None:
        runtime = cupy.cuda.runtime
        limit = _optin_limits[device] = int(runtime.deviceGetAttribute(
            runtime.cudaDevAttrMaxSharedMemoryPerBlockOptin, device))
    return limit


def _allow_shared(kernel, name: str, shared_mem: int) -> None:
    """Opt ``kernel`` in to ``shared_mem`` bytes of dynamic shared memory on the current
    device (beyond 48 KiB a launch fails without it); the attribute is per device."""
    limit = max_dynamic_shared()
    if limit is not None and shared_mem > limit:
        raise ValueError(f"kernel {name}: {shared_mem} bytes of dynamic shared memory; this "
                         f"device allows {limit}")
    if kernel.max_dynamic_shared_size_bytes < shared_mem:
        kernel.max_dynamic_shared_size_bytes = shared_mem


def _check_arguments(cupy, name: str, args) -> None:
    for index, arg in enumerate(args):
        if not isinstance(arg, (cupy.ndarray, np.generic)):
            raise TypeError(f"argument {index} of kernel {name}: expected a CuPy array or a "
                            f"NumPy scalar, got {type(arg).__name__}")


def _launch_here(cupy, source, name, grid, block, args, shared_mem):
    kernel = get_kernel(source, name)
    if shared_mem > STATIC_SHARED_LIMIT:
        _allow_shared(kernel, name, shared_mem)
    _check_arguments(cupy, name, args)
    kernel(dim3(grid), dim3(block), tuple(args), shared_mem=shared_mem)


def launch(source: str, name: str, grid, block, args, shared_mem: int = 0) -> None:
    """Launch on the arrays' device, on CuPy's current stream there; no synchronization."""
    cupy = _cupy()
    for a in args:  # the first array's device (callers have checked that they agree)
        if isinstance(a, cupy.ndarray):
            if a.device.id != cupy.cuda.runtime.getDevice():
                with a.device:  # arrays on a GPU that is not the current one: launch there
                    _launch_here(cupy, source, name, grid, block, args, shared_mem)
                return
            break
    _launch_here(cupy, source, name, grid, block, args, shared_mem)


def prepare(source: str, names) -> None:
    """Compile (or read from disk) and load ``names`` for the current device ahead of their
    first launch."""
    for name in names:
        get_kernel(source, name)
