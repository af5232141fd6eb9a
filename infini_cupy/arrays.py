"""Facts about arrays shared by every layer: what is an array, which device and backend it
belongs to, its data pointer, the bytes it spans, overlap, and allocating beside it.

Arrays are ``numpy.ndarray`` (CPU: the ``numpy`` and ``emulate`` backends) or
``cupy.ndarray`` (the ``cuda`` backend). CuPy is never imported here unless the ``cuda``
backend is asked for: a CuPy array can only exist once CuPy is imported.

The NumPy data pointer is read straight from the array object: NumPy exposes it only through
``__array_interface__`` or ``.ctypes`` (about 3 us each, they build a dict or a ctypes
object), which alone would triple the host cost of a cached copy. A ``PyArrayObject`` starts
with ``PyObject_HEAD`` followed by ``char *data`` (NumPy's ABI, the same in 1.x and 2.x), and
on CPython ``id(a)`` is the object's address. The layout is checked once against
``__array_interface__`` on views of several kinds; elsewhere the public path is used.

>>> import numpy as np
>>> from infini_cupy import arrays
>>> a = np.zeros((3, 4), np.float32)
>>> arrays.byte_extent(a[:, ::-1])[1] - arrays.byte_extent(a[:, ::-1])[0]
48
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import sys

import numpy as np

from . import config, dtypes


def is_cupy_array(x) -> bool:
    cp = sys.modules.get("cupy")
    return cp is not None and isinstance(x, cp.ndarray)


def is_array(x) -> bool:
    """A NumPy or CuPy array (the kinds our functions take)."""
    return isinstance(x, np.ndarray) or is_cupy_array(x)


def require_cupy():
    """Import CuPy for the ``cuda`` backend, with an error that says what to install."""
    try:
        import cupy
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError(
            "the cuda backend needs CuPy: pip install 'infini_cupy[cuda12]' or "
            "'infini_cupy[cuda13]' (matching your CUDA driver)"
        ) from e
    return cupy


def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy
    except ImportError:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def type_name(value) -> str:
    """``value``'s type for error messages: ``list``, ``numpy.ndarray``,
    ``dask.array.core.Array`` (module-qualified: a foreign array's bare name, Dask's
    ``Array``, would read as ours).

    >>> type_name([1.0]), type_name(np.zeros(2))
    ('list', 'numpy.ndarray')
    """
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"


def check_plain_buffer(x, func: str = "") -> None:
    """TypeError for a NumPy array subclass whose meaning is more than its buffer: a
    ``numpy.ma.MaskedArray`` (its mask would be dropped and the result look valid) or a
    unit-carrying array (a ``unit``/``units`` attribute: astropy's Quantity). Subclasses
    that are a plain buffer (``numpy.memmap``) pass.

    >>> check_plain_buffer(np.ma.masked_array([1.0, 2.0], mask=[0, 1]), "sqrt")
    Traceback (most recent call last):
    TypeError: sqrt(): got a numpy.ma.MaskedArray, whose mask would be lost; pass x.filled(value) for the values you mean, or np.asarray(x) to drop the mask on purpose
    """
    kind = type(x)
    if kind is np.ndarray or not isinstance(x, np.ndarray) or isinstance(x, np.memmap):
        return
    where = f"{func}(): " if func else ""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{where}got a numpy.ma.MaskedArray, whose mask would be lost; pass "
                        "x.filled(value) for the values you mean, or np.asarray(x) to drop "
                        "the mask on purpose")
    if hasattr(x, "unit") or hasattr(x, "units"):
        raise TypeError(f"{where}got a {type_name(x)}, whose unit would be lost; pass x.value (or "
                        "np.asarray(x)) to compute on the bare numbers on purpose")


def device_of(x) -> str:
    """A short device description for error messages: ``cpu`` or ``cuda:N``."""
    if is_cupy_array(x):
        return f"cuda:{x.device.id}"
    return "cpu"


def backend_for(*arrays) -> str:
    """The backend for an operation on ``arrays`` (non-arrays, such as Python scalars, are ignored).

    Raises ValueError naming both devices when CuPy arrays of different GPUs, or CuPy and
    NumPy arrays, are mixed.
    """
    devices = []
    for a in arrays:
        if is_array(a):
            if type(a) is not np.ndarray:
                check_plain_buffer(a)
            d = device_of(a)
            if d not in devices:
                devices.append(d)
    if len(devices) > 1:
        raise ValueError(
            f"arrays are on different devices: {' and '.join(devices)}; "
            "move them to one device first (to_device)"
        )
    if devices and devices[0] != "cpu":
        return "cuda"
    name = config.get_backend()
    if name == "cuda" and devices:
        raise ValueError(
            "the cuda backend needs CuPy arrays, got NumPy arrays (device cpu); "
            "upload them (infini_cupy.asarray(a, device='cuda') or cupy.asarray(a)) or "
            "choose the 'emulate' or 'numpy' backend"
        )
    return name


def array_module(backend: str):
    """The array library a backend allocates from: CuPy for ``cuda``, else NumPy."""
    return require_cupy() if backend == "cuda" else np


# ---- pointers

DATA_FIELD_OFFSET = 2 * ctypes.sizeof(ctypes.c_void_p)  # after ob_refcnt and ob_type
read_address = ctypes.c_void_p.from_address


def _interface_pointer(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _field_pointer(a: np.ndarray) -> int:
    return read_address(id(a) + DATA_FIELD_OFFSET).value or 0


def _field_layout_holds() -> bool:
    if sys.implementation.name != "cpython":
        return False
    base = np.arange(64, dtype=np.int32).reshape(8, 8)
    samples = (base, base[1:, 3:], base.T[::-1], base[::2, ::-3], base[5], base * 2.0, base[:0])
    try:
        return all(_field_pointer(a) == _interface_pointer(a) for a in samples)
    except (ValueError, OSError):  # pragma: no cover - an unreadable address
        return False


# Address of element 0 of a NumPy array (with negative strides, not the lowest address).
numpy_data_pointer = _field_pointer if _field_layout_holds() else _interface_pointer
# The hot path inlines _field_pointer where it holds: read_address(id(a) + DATA_FIELD_OFFSET).
FIELD_POINTERS = numpy_data_pointer is _field_pointer


def cupy_data_pointer(a) -> int:
    return a.data.ptr


def data_pointer(a) -> int:
    """Address of element 0 of a NumPy or CuPy array (with negative strides, not the lowest)."""
    if isinstance(a, np.ndarray):
        return numpy_data_pointer(a)
    return a.data.ptr


def pointer_reader(backend: str):
    """The fastest data-pointer function for the arrays of ``backend``."""
    return cupy_data_pointer if backend == "cuda" else numpy_data_pointer


# ---- extents and overlap


def layout_extent(shape, strides, itemsize: int) -> tuple[int, int]:
    """``[lo, hi)`` bytes a layout spans, relative to element 0 (``(0, 0)`` if it is empty)."""
    if 0 in shape:
        return 0, 0
    lo = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    hi = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0)
    return lo, hi + itemsize


def byte_extent(a) -> tuple[int, int]:
    """Half-open address range ``[lo, hi)`` the array's elements occupy (empty if size 0)."""
    base = data_pointer(a)
    lo, hi = layout_extent(a.shape, a.strides, a.itemsize)
    return base + lo, base + hi


def may_overlap(a, b) -> bool:
    """True when the byte extents of ``a`` and ``b`` intersect (cheap; may say True for
    interleaved arrays that share no byte, which only costs a snapshot copy)."""
    a_lo, a_hi = byte_extent(a)
    b_lo, b_hi = byte_extent(b)
    return a_lo < b_hi and b_lo < a_hi


def same_layout(a, b) -> bool:
    """``a`` and ``b`` are the same elements of the same memory."""
    return data_pointer(a) == data_pointer(b) and a.shape == b.shape and a.strides == b.strides


def is_operand(value) -> bool:
    """An array, a NumPy scalar or a Python scalar (bool, int, float, complex): what the
    elementwise functions and ``where`` take as values (a str, a list, None: none of them)."""
    return is_array(value) or isinstance(value, np.generic) or dtypes.is_python_scalar(value)


def is_writeable(a) -> bool:
    """False for read-only NumPy arrays (CuPy arrays are always writeable). Reads the bit
    from ``flags.num``: asking views of ``broadcast_arrays`` for ``flags.writeable`` warns."""
    if not isinstance(a, np.ndarray):
        return True
    return bool(a.flags.num & NPY_ARRAY_WRITEABLE)


NPY_ARRAY_WRITEABLE = 0x0400  # numpy/ndarraytypes.h


# ---- allocation


# None: outputs come from the backend's array library; else alloc(shape, dtype).
_allocator: contextvars.ContextVar = contextvars.ContextVar("infini_cupy_allocator", default=None)
# () -> the allocator outputs_from set, or None: the hot path's check before numpy.empty
current_allocator = _allocator.get


def empty(backend: str, shape, dtype):
    """A new C-contiguous output or temporary for a kernel of ``backend``."""
    alloc = _allocator.get()
    if alloc is not None:
        return alloc(tuple(shape), np.dtype(dtype))
    if backend != "cuda":
        return np.empty(shape, dtype)
    if dtype is dtypes.BFLOAT16:  # callers pass np.dtype objects
        dtypes.check_bfloat16_on_cupy(dtype)
    return (sys.modules.get("cupy") or require_cupy()).empty(shape, dtype)


@contextlib.contextmanager
def outputs_from(alloc):
    """Outputs and temporaries of elementwise calls come from ``alloc(shape, dtype)`` inside
    the ``with`` block: the bench aligns them like CuPy's allocator, or allocates them once."""
    token = _allocator.set(alloc)
    try:
        yield
    finally:
        _allocator.reset(token)


def device_context(arrays):
    """A context that makes the CuPy arrays' GPU the current one while outputs and temporaries
    are allocated (launches run there); a no-op for NumPy arrays."""
    for a in arrays:
        if is_cupy_array(a):
            return a.device
    return contextlib.nullcontext()


def empty_on_device_of(x, shape, dtype):
    """A new C-contiguous array of ``shape``/``dtype`` on ``x``'s device (NumPy for CPU arrays)."""
    if is_cupy_array(x):
        import cupy

        dtypes.check_bfloat16_on_cupy(np.dtype(dtype))
        with x.device:
            return cupy.empty(shape, dtype=dtype)
    return np.empty(shape, dtype=dtype)


def as_strided(a, shape, strides):
    """A view of ``a``'s memory with ``shape`` and byte ``strides``, in ``a``'s library."""
    if is_cupy_array(a):
        import cupy

        return cupy.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)
    return np.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)
