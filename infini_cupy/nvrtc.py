"""NVRTC compile checks that need no GPU.

``cupy.RawModule`` asks the device for its architecture before compiling, so on a machine
without one we drive NVRTC directly (the ``nvidia-cuda-nvrtc`` wheel) with the same code and
options as the ``cuda`` runtime and an explicit ``--gpu-architecture``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import KernelCompileError
from .runtime import NVRTC_OPTIONS
from .sources import expanded_source, numbered


@dataclass(frozen=True)
class CompiledProgram:
    """What NVRTC produced for a batch of name expressions of one source."""

    source: str
    arch: str
    lowered_names: dict  # name expression -> mangled kernel symbol in the PTX
    ptx: str


def nvrtc_version() -> tuple[int, int]:
    from cupy.cuda import nvrtc

    return tuple(nvrtc.getVersion())


def compile_ptx(source: str, names, arch: str = "sm_90", extra_options=()) -> CompiledProgram:
    """Compile name expressions ``names`` of ``kernels_src/<source>`` to PTX for ``arch``.

    Raises KernelCompileError (kernel names, options, log, numbered source) on failure.
    """
    from cupy.cuda import nvrtc

    code = expanded_source(source)
    options = (*NVRTC_OPTIONS, f"--gpu-architecture={arch}", *extra_options)
    prog = nvrtc.createProgram(code, source, [], [])
    try:
        for name in names:
            nvrtc.addNameExpression(prog, name)
        try:
            nvrtc.compileProgram(prog, list(options))
        except nvrtc.NVRTCError:
            log = nvrtc.getProgramLog(prog)
            raise KernelCompileError("NVRTC", names, options, log, numbered(code)) from None
        lowered = {name: nvrtc.getLoweredName(prog, name) for name in names}
        ptx = nvrtc.getPTX(prog)
        if isinstance(ptx, bytes):
            ptx = ptx.decode()
        return CompiledProgram(source, arch, lowered, ptx)
    finally:
        nvrtc.destroyProgram(prog)
