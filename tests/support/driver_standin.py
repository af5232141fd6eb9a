"""A stand-in for ``cuda.bindings.driver`` (NVIDIA's ``cuda-bindings`` 13.x), as much of it
as the cuda launcher's driver mechanism (``infini_cupy/runtime/cuda_driver.py``) touches:
``CUresult``, ``CUfunction``, ``CUstream`` and ``cuLaunchKernel``, beside the CuPy stand-in
(``tests/support/cupy_standin.py``), whose kernels, devices, contexts and streams it shares;
and libcuda's ``cuLaunchKernel`` and ``cuCtxGetCurrent`` as C functions (ctypes callbacks at
addresses, :func:`c_entry_points`) for the compiled launch (``runtime/cuda_compiled.py``),
the same model behind them.

What it models, read from ``cuda_bindings/cuda/bindings/driver.pyx.in`` (``cuLaunchKernel``,
``_HelperKernelParams``, the handle classes) and checked against the installed bindings where
they are present (``tests/runtime/test_driver_launch.py``):

- handle classes built from anything Cython converts to ``void_ptr`` (an ``unsigned long
  long``: ints, NumPy ints, objects with ``__int__``; ``None`` and strings are "an integer is
  required", negatives and values past 64 bits ``OverflowError``), ``int()`` giving it back;
- ``cuLaunchKernel(f, gridDimX, ..., blockDimZ, sharedMemBytes, hStream, kernelParams,
  extra)``: ``f`` a ``CUfunction`` or what ``CUfunction()`` takes (the real one does not tell
  a ``CUstream`` from a ``CUfunction``: it reads the int); dims and shared memory Cython
  ``unsigned int``s; ``hStream`` ``None`` (0), a ``CUstream`` or what ``CUstream()`` takes;
  ``kernelParams`` ``None``, an int (the address of a ``void*[]``), an object with the buffer
  protocol (its address) or ``(values, types)`` tuples of equal length, anything else
  TypeError with the real message; ``extra`` a ``void_ptr`` (``None`` is a TypeError);
- the driver's answers, as a ``(CUresult,)`` tuple: ``CUDA_ERROR_INVALID_CONTEXT`` without a
  current context on the thread, ``CUDA_ERROR_INVALID_HANDLE`` for a handle no ``Function``
  gave out, a function loaded on another device, or a stream of another device (or none:
  a real driver may crash on a bad handle; this one refuses), ``CUDA_ERROR_INVALID_VALUE`` for
  both ``kernelParams`` and ``extra``, for no parameters where the kernel takes some, and for
  more dynamic shared memory than the kernel was opted in to.

Then it decodes the buffer as the driver does, one parameter at a time (count and sizes from
the kernel's PTX, as the CuPy stand-in checks them): an 8-byte value that lies in a live block
of the stand-in's device memory is a pointer, passed to the emulator over that whole block
(bounds are checked per block here, per array on CuPy's path); anything else is a value,
passed as its bytes. The launch runs in the emulator like the CuPy stand-in's. Not modelled:
the ``(values, types)`` form's packing and ``extra`` (the launcher uses neither).
"""

from __future__ import annotations

import contextlib
import ctypes
import enum
import importlib.util
import operator
import sys
import types

import numpy as np

from infini_cupy.arrays import byte_extent
from infini_cupy.runtime import cuda_compiled
from tests.support import cupy_standin


class CUresult(enum.IntEnum):
    CUDA_SUCCESS = 0
    CUDA_ERROR_INVALID_VALUE = 1
    CUDA_ERROR_INVALID_CONTEXT = 201
    CUDA_ERROR_INVALID_HANDLE = 400
    CUDA_ERROR_NOT_SUPPORTED = 801


def _unsigned(value, bits: int, c_name: str) -> int:
    """Cython's conversion to a C unsigned integer: ``__index__``, else ``__int__``."""
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError("an integer is required")
    try:
        number = operator.index(value)
    except TypeError:
        if not hasattr(type(value), "__int__"):
            raise TypeError("an integer is required") from None
        number = int(value)
    if number < 0:
        raise OverflowError(f"can't convert negative value to {c_name}")
    if number >= 1 << bits:
        raise OverflowError("Python int too large to convert to C unsigned long" if bits == 64
                            else f"value too large to convert to {c_name}")
    return number


def _void_ptr(value) -> int:
    return _unsigned(value, 64, "unsigned PY_LONG_LONG")


class _Handle:
    """A driver handle (``CUfunction``, ``CUstream``): an address, ``int()`` of it."""

    __slots__ = ("_ptr",)

    def __init__(self, init_value=0, _ptr=0):
        self._ptr = _void_ptr(init_value)

    def __int__(self):
        return self._ptr

    def getPtr(self) -> int:
        return id(self)

    def __repr__(self):
        return f"<{type(self).__name__} {self._ptr:#x}>"


class CUfunction(_Handle):
    __slots__ = ()


class CUstream(_Handle):
    __slots__ = ()


def _handle_value(value, cls) -> int:
    """``cuLaunchKernel``'s reading of a handle argument: None is 0, an instance its int,
    anything else ``int(cls(value))``."""
    if value is None:
        return 0
    if isinstance(value, cls):
        return int(value)
    return int(cls(value))


_PARAMS_TYPE_ERROR = ("Argument 'kernelParams' is not a valid type: tuple[tuple[Any, ...], "
                      "tuple[Any, ...]] or PyObject implimenting Buffer Protocol or Int")


def _params_address(params) -> int:
    """``_HelperKernelParams``: the ``void**`` that ``kernelParams`` names (0: NULL)."""
    if params is None:
        return 0
    if isinstance(params, int):
        return _void_ptr(params)
    try:
        view = memoryview(params)
    except TypeError:
        view = None
    if view is not None:
        holder = np.frombuffer(view, np.uint8)
        return holder.__array_interface__["data"][0]
    if (isinstance(params, tuple) and len(params) == 2 and isinstance(params[0], tuple)
            and isinstance(params[1], tuple)):
        if len(params[0]) != len(params[1]):
            raise TypeError("Argument 'kernelParams' has tuples with different length")
        raise NotImplementedError("the driver stand-in does not pack (values, types) tuples")
    raise TypeError(_PARAMS_TYPE_ERROR)


def _live_references() -> list:
    """The device blocks' weak references, copied at one go (threads add blocks; a block
    collected during the copy changes the set, and the copy is taken again)."""
    while True:
        try:
            return list(cupy_standin.memories.data)
        except RuntimeError:
            continue


def _device_block(address: int):
    """(lo, hi, writable) of the live stand-in device memory block holding ``address``, the
    widest writable one first; None when no block holds it."""
    found = None
    for ref in _live_references():
        memory = ref()
        if memory is None:
            continue
        buffer = memory.buffer
        lo, hi = byte_extent(buffer) if buffer.size else (memory.ptr, memory.ptr)
        if lo <= address < hi:
            candidate = (bool(buffer.flags.writeable), hi - lo, lo, hi)
            found = candidate if found is None or candidate > found else found
    return None if found is None else (found[2], found[3], found[0])


def _pointer_view(address: int, block) -> np.ndarray:
    """A uint8 array whose element 0 is at ``address`` and whose bytes span the block: what
    the emulator takes for a pointer parameter (its address, its bounds)."""
    lo, hi, writable = block
    below, above = address - lo, hi - address
    whole = np.frombuffer((ctypes.c_char * (hi - lo)).from_address(lo), np.uint8)
    return np.lib.stride_tricks.as_strided(whole[below:], shape=(2, 2),
                                           strides=(-below, above - 1), writeable=writable)


def _decode(address: int, sizes) -> list:
    """The kernel's arguments from a ``void*[]`` at ``address``: pointers into device memory
    as arrays over their block, every other value as its bytes."""
    pointers = (ctypes.c_void_p * len(sizes)).from_address(address)
    args = []
    for index, size in enumerate(sizes):
        raw = ctypes.string_at(pointers[index] or 0, size) if pointers[index] else None
        if raw is None:
            raise cupy_standin.CUDADriverError(CUresult.CUDA_ERROR_INVALID_VALUE,
                                               f"kernelParams[{index}] is NULL")
        if size == 8:
            block = _device_block(int.from_bytes(raw, "little"))
            if block is not None:
                args.append(_pointer_view(int.from_bytes(raw, "little"), block))
                continue
        args.append(np.frombuffer(raw, np.dtype((np.void, size)))[0])
    return args


def cuLaunchKernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                   sharedMemBytes, hStream, kernelParams, extra):
    """``cuda.bindings.driver.cuLaunchKernel``: ``(CUresult,)``."""
    stream = _handle_value(hStream, CUstream)
    function = _handle_value(f, CUfunction)
    params = _params_address(kernelParams)
    grid = tuple(_unsigned(v, 32, "unsigned int") for v in (gridDimX, gridDimY, gridDimZ))
    block = tuple(_unsigned(v, 32, "unsigned int") for v in (blockDimX, blockDimY, blockDimZ))
    shared_mem = _unsigned(sharedMemBytes, 32, "unsigned int")
    extra = _void_ptr(extra)
    thread = cupy_standin._thread
    if thread.device not in thread.contexts:
        return (CUresult.CUDA_ERROR_INVALID_CONTEXT,)
    loaded = cupy_standin.handles.get(function)
    if loaded is None or loaded.device != thread.device:
        return (CUresult.CUDA_ERROR_INVALID_HANDLE,)
    if not cupy_standin.stream_of_current_device(stream):
        return (CUresult.CUDA_ERROR_INVALID_HANDLE,)
    if params and extra:
        return (CUresult.CUDA_ERROR_INVALID_VALUE,)
    if extra:
        raise NotImplementedError("the driver stand-in does not read `extra`")
    raw = loaded.raw
    if not params and raw.param_sizes:
        return (CUresult.CUDA_ERROR_INVALID_VALUE,)
    if shared_mem > raw._max_dynamic[loaded.device]:
        return (CUresult.CUDA_ERROR_INVALID_VALUE,)
    args = _decode(params, raw.param_sizes) if raw.param_sizes else []
    cupy_standin.launch_on(stream, raw, grid, block, args, shared_mem)
    return (CUresult.CUDA_SUCCESS,)


# libcuda's entry points as C calls them (runtime/cuda_compiled.py, INFINI_CUPY_LAUNCH=compiled):
# cuda.h's CUresult cuLaunchKernel(CUfunction, unsigned int x 7, CUstream, void **, void **)
# and CUresult cuCtxGetCurrent(CUcontext *).
C_LAUNCH_KERNEL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *[ctypes.c_uint] * 7,
                                   ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
C_CURRENT_CONTEXT = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_void_p))
CONTEXT_BASE = 0x7C000  # a device's primary context handle: this plus its ordinal


def _c_launch_kernel(f, grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_mem,
                     stream, params, extra):
    """``cuLaunchKernel`` as C calls it: the model above on the C values (NULL handles and
    pointers 0), its CUresult an int. Anything else that fails in the model (the emulator's
    bounds checks) is ``CUDA_ERROR_UNKNOWN``, the failure kept for CuPy's ``check_status``
    to chain."""
    try:
        status, = cuLaunchKernel(f or 0, grid_x, grid_y, grid_z, block_x, block_y, block_z,
                                 shared_mem, stream or 0, params or 0, extra or 0)
        return int(status)
    except cupy_standin.CUDADriverError as error:
        return error.status
    except BaseException as error:  # noqa: BLE001 - nothing may leave a C callback
        cupy_standin.c_failures.append(error)
        return cupy_standin.CUDA_ERROR_UNKNOWN


def _c_current_context(context):
    """``cuCtxGetCurrent``: the current device's context where this thread made it current
    (CuPy's ``_ensure_context``, a load, a launch through CuPy), else NULL; always success."""
    thread = cupy_standin._thread
    context[0] = CONTEXT_BASE + thread.device if thread.device in thread.contexts else None
    return CUresult.CUDA_SUCCESS


_C_ENTRY_POINTS = (C_LAUNCH_KERNEL(_c_launch_kernel), C_CURRENT_CONTEXT(_c_current_context))


def c_entry_points() -> tuple[int, int]:
    """The addresses of the C entry points (``cuda_compiled.ENTRY_POINTS``' order)."""
    return tuple(ctypes.cast(entry, ctypes.c_void_p).value for entry in _C_ENTRY_POINTS)


NAME = "cuda.bindings.driver"
_real: list = []  # the installed cuda.bindings.driver, imported before the stand-in took its name


def real_driver():
    """``cuda.bindings.driver`` itself (the tests that compare the stand-in with it), also
    while the stand-in has its name; skips the calling test where it is not installed."""
    import pytest

    if _real:
        return _real[0]
    module = pytest.importorskip(NAME)
    if module is sys.modules[__name__]:
        pytest.skip("cuda-bindings is not installed")
    return module


@contextlib.contextmanager
def installed():
    """This module is ``cuda.bindings.driver`` inside the block (with placeholder parent
    packages where ``cuda-bindings`` is not installed)."""
    saved, placed = sys.modules.get(NAME), []
    if not _real and saved is not sys.modules[__name__]:
        with contextlib.suppress(ImportError):
            _real.append(importlib.import_module(NAME))
    try:
        real_parents = importlib.util.find_spec("cuda.bindings") is not None
    except (ImportError, ValueError):
        real_parents = False
    if not real_parents:  # `cuda` may still be a namespace package (cuda-pathfinder's)
        for name in ("cuda", "cuda.bindings"):
            if sys.modules.get(name) is None:
                try:
                    importlib.import_module(name)
                except ImportError:
                    package = types.ModuleType(name)
                    package.__path__ = []
                    sys.modules[name] = package
                    placed.append(name)
    sys.modules[NAME] = sys.modules[__name__]
    try:
        with cuda_compiled.entry_points_replaced(c_entry_points):
            yield sys.modules[__name__]
    finally:
        if saved is None:
            sys.modules.pop(NAME, None)
        else:
            sys.modules[NAME] = saved
        for name in placed:
            sys.modules.pop(name, None)
