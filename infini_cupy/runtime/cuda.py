"""The ``cuda`` launcher: our kernel sources compiled by NVRTC through ``cupy.RawModule``.

One module per (device, source, name expression), compiled on first use: a new variant
costs one small compile, never the whole matrix. CuPy caches the binaries on disk
(``~/.cupy/kernel_cache``), so a warm process loads instead of compiling.
"""

from __future__ import annotations

import threading

from ..arrays import require_cupy
from ..errors import KernelCompileError
from .nvrtc import NVRTC_OPTIONS, load_nvrtc
from .sources import expanded_source, numbered

_functions: dict[tuple[int, str, str], object] = {}
_lock = threading.Lock()


def get_function(source: str, name: str):
    """The ``cupy.RawKernel`` for name expression ``name`` of ``kernels_src/<source>``
    on the current device, compiling it once."""
    cupy = require_cupy()
    key = (cupy.cuda.Device().id, source, name)
    fn = _functions.get(key)
    if fn is not None:
        return fn
    with _lock:  # one compile per variant even when threads race for it
        fn = _functions.get(key)
        if fn is None:
            load_nvrtc()  # a missing NVRTC says what to install, not what CuPy failed to open
            code = expanded_source(source)
            try:
                module = cupy.RawModule(
                    code=code, options=NVRTC_OPTIONS, name_expressions=[name]
                )
                fn = module.get_function(name)
            except cupy.cuda.compiler.CompileException as e:
                raise KernelCompileError(
                    "NVRTC", [name], NVRTC_OPTIONS, str(e), numbered(code)
                ) from None
            _functions[key] = fn
    return fn


def _device_of_arguments(args):
    """The device of the first CuPy array argument (callers have checked they agree)."""
    cupy = require_cupy()
    for a in args:
        if isinstance(a, cupy.ndarray):
            return a.device
    return None


def launch(source: str, name: str, grid, block, args, shared_mem: int = 0) -> None:
    """Launch on the arrays' device, on CuPy's current stream there; no synchronization."""
    device = _device_of_arguments(args)
    if device is not None and device.id != require_cupy().cuda.Device().id:
        with device:  # arrays on a GPU that is not the current one: launch where they live
            get_function(source, name)(grid, block, tuple(args), shared_mem=shared_mem)
        return
    get_function(source, name)(grid, block, tuple(args), shared_mem=shared_mem)


def prepare(source: str, names) -> None:
    """Compile ``names`` for the current device ahead of their first launch."""
    for name in names:
        get_function(source, name)
