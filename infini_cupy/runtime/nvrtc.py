"""NVRTC compile checks that need no GPU.

``cupy.RawModule`` asks the device for its architecture before compiling, so on a machine
without one we drive NVRTC directly (the ``nvidia-cuda-nvrtc`` wheel) with the same code and
options as the ``cuda`` runtime and an explicit ``--gpu-architecture``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..errors import KernelCompileError
from .sources import expanded_source, numbered

# -std=c++17 for alignas/if constexpr; no device-wide options that change numerics.
NVRTC_OPTIONS = ("-std=c++17",)


@dataclass(frozen=True)
class CompiledProgram:
    """What NVRTC produced for a batch of name expressions of one source."""

    source: str
    arch: str
    lowered_names: dict  # name expression -> mangled kernel symbol in the PTX
    ptx: str


INSTALL_HINT = (
    "pip install nvidia-cuda-nvrtc (the NVRTC wheel matching CuPy's CUDA major version: "
    "'nvidia-cuda-nvrtc>=13,<14' for cupy-cuda13x; 'nvidia-cuda-nvrtc-cu12' for cupy-cuda12x), "
    "or install the CUDA toolkit"
)


@functools.lru_cache(maxsize=1)  # only a success is cached: a later install is picked up
def load_nvrtc():
    """CuPy's NVRTC bindings with the NVRTC library loaded, or RuntimeError saying what to
    install. CuPy loads the library on first use, so that is tried here, once."""
    try:
        from cupy.cuda import nvrtc
    except ImportError as e:  # no CuPy, or a CuPy that links NVRTC at import
        raise RuntimeError(
            f"NVRTC compiles our kernels, but CuPy's NVRTC bindings do not import ({e}); "
            f"install CuPy (pip install cupy-cuda13x) and NVRTC: {INSTALL_HINT}"
        ) from e
    try:
        nvrtc.getVersion()
    except (OSError, RuntimeError) as e:  # cuda.pathfinder's DynamicLibNotFoundError
        raise RuntimeError(
            f"NVRTC compiles our kernels, but its library could not be loaded ({e}); "
            f"{INSTALL_HINT}"
        ) from e
    return nvrtc


def nvrtc_version() -> tuple[int, int]:
    return tuple(load_nvrtc().getVersion())


def compile_ptx(source: str, names, arch: str = "sm_90", extra_options=()) -> CompiledProgram:
    """Compile name expressions ``names`` of ``kernels_src/<source>`` to PTX for ``arch``.

    Raises KernelCompileError (kernel names, options, log, numbered source) on failure, and
    RuntimeError saying what to install when NVRTC is missing.
    """
    nvrtc = load_nvrtc()

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
