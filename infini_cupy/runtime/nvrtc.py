"""NVRTC, driven directly: the one compiler of our kernels for the GPU, and compile checks
that need no GPU.

CuPy's ``RawModule`` appends ``-ftz=true`` to every compile (after the caller's options;
NVRTC takes the last one), which flushes float32 subnormals on the GPU while the emulator
keeps them. So the ``cuda`` launcher compiles here, with exactly :data:`NVRTC_OPTIONS`, and
loads the binary through CuPy; the compile checks of the test suite use the same function and
the same options, for an explicit ``--gpu-architecture`` (the ``nvidia-cuda-nvrtc`` wheel
runs without a GPU).
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass

from ..errors import KernelCompileError
from . import elf
from .sources import expanded_source, numbered

# What the GPU computes must be what the emulator computes (g++, IEEE float without FMA
# contraction): no flush-to-zero, correctly rounded division and square root, no fused
# multiply-add contraction (it changes the last bit of a*b+c, complex products for one).
# -std=c++17 for alignas / if constexpr.
NVRTC_OPTIONS = ("-std=c++17", "-ftz=false", "-prec-div=true", "-prec-sqrt=true", "-fmad=false")


@dataclass(frozen=True)
class CompiledProgram:
    """What NVRTC produced for a batch of name expressions of one source."""

    source: str
    arch: str  # sm_XX: ``binary`` is a cubin; compute_XX: ``binary`` is PTX
    lowered_names: dict  # name expression -> mangled kernel symbol
    ptx: str
    binary: bytes  # what the driver loads: the cubin (sm_XX), or the PTX (compute_XX)
    log: str = ""  # NVRTC's log: its warnings, and ptxas's report where the options ask for it


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


@functools.lru_cache(maxsize=1)
def _c_api():
    """NVRTC's C library, the one CuPy loaded (``cuda.pathfinder`` returns a library already
    in the process), for what CuPy's bindings get wrong: the cubin's size."""
    from cuda.pathfinder import load_nvidia_dynamic_lib

    library = ctypes.CDLL(load_nvidia_dynamic_lib("nvrtc").abs_path)
    library.nvrtcGetCUBINSize.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    library.nvrtcGetCUBIN.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    major, minor = ctypes.c_int(), ctypes.c_int()
    library.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    if (major.value, minor.value) != nvrtc_version():  # two NVRTCs: a handle is not portable
        raise RuntimeError(f"NVRTC {major.value}.{minor.value} found beside CuPy's "
                           f"{'.'.join(map(str, nvrtc_version()))}")
    return library


def cubin_of(program: int) -> bytes:
    """The whole cubin of a compiled NVRTC program (``nvrtcGetCUBINSize`` bytes). CuPy's
    ``nvrtc.getCUBIN`` drops the last byte, as for PTX's trailing NUL; a cubin has none, and
    its program header table ends there."""
    library = _c_api()
    size = ctypes.c_size_t()
    if library.nvrtcGetCUBINSize(ctypes.c_void_p(program), ctypes.byref(size)) != 0:
        raise RuntimeError("nvrtcGetCUBINSize failed")
    buffer = ctypes.create_string_buffer(size.value)
    if library.nvrtcGetCUBIN(ctypes.c_void_p(program), buffer) != 0:
        raise RuntimeError("nvrtcGetCUBIN failed")
    return buffer.raw


def arch_for(compute_capability: int) -> str:
    """``sm_XX`` (a cubin) when this NVRTC knows the architecture, else ``compute_XX`` of
    the newest one it knows, below it (PTX, which the driver compiles for the device)."""
    supported = tuple(int(a) for a in load_nvrtc().getSupportedArchs())
    if compute_capability in supported:
        return f"sm_{compute_capability}"
    older = [a for a in supported if a <= compute_capability]
    if not older:
        raise RuntimeError(
            f"this GPU is sm_{compute_capability}, older than every architecture NVRTC "
            f"{'.'.join(map(str, nvrtc_version()))} compiles for (sm_{min(supported)} and up); "
            "install the NVRTC of an older CUDA toolkit (and the matching CuPy)"
        )
    return f"compute_{max(older)}"


def compile_program(source: str, names, arch: str = "sm_90", extra_options=()) -> CompiledProgram:
    """Compile name expressions ``names`` of ``kernels_src/<source>`` for ``arch``: PTX, and
    for ``sm_XX`` a cubin too.

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
        ptx_bytes = ptx if isinstance(ptx, bytes) else ptx.encode()
        binary = cubin_of(prog) if arch.startswith("sm_") else ptx_bytes
        if arch.startswith("sm_") and elf.problem(binary, arch):
            raise RuntimeError(f"NVRTC's cubin for {', '.join(names)} ({arch}) is "
                               f"{elf.problem(binary, arch)}")
        log = nvrtc.getProgramLog(prog)
        return CompiledProgram(source, arch, lowered, ptx_bytes.decode().rstrip("\0"), binary,
                               log if isinstance(log, str) else log.decode())
    finally:
        nvrtc.destroyProgram(prog)


# The compile checks read the PTX of the same compile the GPU runs.
compile_ptx = compile_program
