"""The ``cuda`` launcher: our kernel sources compiled by NVRTC with our own options
(:mod:`.nvrtc`), loaded and launched through the CUDA driver API that CuPy exposes, on CuPy's
current stream.

One binary per (device architecture, source, name expression), compiled on first use: a new
variant costs one small compile, never the whole matrix. Binaries are kept on disk under
``$INFINI_CUPY_CACHE_DIR/cubin`` (keyed by the expanded source, options, NVRTC version and
architecture), so a warm process loads instead of compiling.

Arguments are packed by :func:`.structs.pack_arguments`, the same packing the emulator runs
(array -> its device pointer, NumPy scalar -> its bytes, structured scalar -> a struct by
value) and handed to ``cuLaunchKernel``: no CuPy argument conversion is involved, so structs
of any size pass on every CuPy version with the driver API (13 and 14).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import threading

import numpy as np

from .. import config
from ..arrays import require_cupy
from .nvrtc import NVRTC_OPTIONS, arch_for, compile_program, nvrtc_version
from .sources import expanded_source
from .structs import argument_bytes, dim3, pack_arguments

_functions: dict[tuple[int, str, str], object] = {}
_lock = threading.Lock()


def _cache_path(source: str, name: str, arch: str):
    key = hashlib.sha256(repr((expanded_source(source), name, NVRTC_OPTIONS, nvrtc_version(),
                               arch)).encode()).hexdigest()[:32]
    return config.cache_dir() / "cubin" / f"{key}.bin"


def device_arch() -> str:
    """The NVRTC architecture of the current device (see :func:`.nvrtc.arch_for`)."""
    return arch_for(int(require_cupy().cuda.Device().compute_capability))


def cached_binary(source: str, name: str, arch: str) -> tuple[str, bytes]:
    """(lowered name, cubin or PTX) of one name expression, from the disk cache or NVRTC."""
    path = _cache_path(source, name, arch)
    try:
        lowered, _, binary = path.read_bytes().partition(b"\0")
        if binary:
            return lowered.decode(), binary
    except OSError:
        pass
    program = compile_program(source, [name], arch)
    lowered, binary = program.lowered_names[name], program.binary
    try:  # a cache that cannot be written costs a compile per process, nothing else
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as f:
            f.write(lowered.encode() + b"\0" + binary)
        os.replace(f.name, path)
    except OSError:
        pass
    return lowered, binary


def get_function(source: str, name: str) -> int:
    """The ``CUfunction`` of name expression ``name`` of ``kernels_src/<source>`` on the
    current device, compiled (or loaded) once; its module stays loaded for the process."""
    cupy = require_cupy()
    device = cupy.cuda.Device()
    key = (device.id, source, name)
    fn = _functions.get(key)
    if fn is not None:
        return fn
    with _lock:  # one compile per variant even when threads race for it
        fn = _functions.get(key)
        if fn is None:
            lowered, binary = cached_binary(source, name, arch_for(int(device.compute_capability)))
            driver = cupy.cuda.driver
            module = driver.moduleLoadData(binary)
            fn = _functions[key] = driver.moduleGetFunction(module, lowered.encode())
    return fn


def _device_of_arguments(args):
    """The device of the first CuPy array argument (callers have checked they agree)."""
    cupy = require_cupy()
    for a in args:
        if isinstance(a, cupy.ndarray):
            return a.device
    return None


def _device_pointer(a) -> int:
    return a.data.ptr


STATIC_SHARED_LIMIT = 49152  # dynamic shared memory a kernel gets without opting in
_opted_in: dict[int, int] = {}  # CUfunction -> dynamic shared bytes it was allowed
_optin_limits: dict[int, int] = {}  # device id -> cudaDevAttrMaxSharedMemoryPerBlockOptin
_without_gpu: list = []  # non-empty once CuPy said it has no device


def max_dynamic_shared() -> int | None:
    """The dynamic shared memory a block may opt in to on the current device (227 KiB on an
    H100), or None without CuPy or a GPU."""
    cupy = sys.modules.get("cupy")  # no arrays of a GPU exist before CuPy is imported
    if cupy is None or _without_gpu:
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


def _allow_shared(cupy, fn, name, shared_mem) -> None:
    """Opt ``fn`` in to ``shared_mem`` bytes of dynamic shared memory (beyond 48 KiB a
    launch fails without it)."""
    if _opted_in.get(fn, STATIC_SHARED_LIMIT) >= shared_mem:
        return
    limit = max_dynamic_shared()
    if limit is not None and shared_mem > limit:
        raise ValueError(f"kernel {name}: {shared_mem} bytes of dynamic shared memory; this "
                         f"device allows {limit}")
    driver = cupy.cuda.driver
    driver.funcSetAttribute(fn, driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared_mem)
    _opted_in[fn] = shared_mem


def _launch_here(cupy, source, name, grid, block, args, shared_mem):
    fn = get_function(source, name)
    if shared_mem > STATIC_SHARED_LIMIT:
        _allow_shared(cupy, fn, name, shared_mem)
    for index, arg in enumerate(args):
        if not isinstance(arg, (cupy.ndarray, np.generic)):
            raise TypeError(f"argument {index} of kernel {name}: expected a CuPy array or a "
                            f"NumPy scalar, got {type(arg).__name__}")
    storage, _, params = pack_arguments([argument_bytes(a, _device_pointer) for a in args])
    (gx, gy, gz), (bx, by, bz) = dim3(grid), dim3(block)
    stream = cupy.cuda.get_current_stream().ptr
    cupy.cuda.driver.launchKernel(fn, gx, gy, gz, bx, by, bz, shared_mem, stream, params, 0)
    del storage  # cuLaunchKernel has copied the values


def launch(source: str, name: str, grid, block, args, shared_mem: int = 0) -> None:
    """Launch on the arrays' device, on CuPy's current stream there; no synchronization."""
    cupy = require_cupy()
    device = _device_of_arguments(args)
    if device is not None and device.id != cupy.cuda.Device().id:
        with device:  # arrays on a GPU that is not the current one: launch where they live
            _launch_here(cupy, source, name, grid, block, args, shared_mem)
        return
    _launch_here(cupy, source, name, grid, block, args, shared_mem)


def prepare(source: str, names) -> None:
    """Compile ``names`` for the current device ahead of their first launch."""
    for name in names:
        get_function(source, name)
