"""Raw facts about array memory shared by every launcher: pointers, byte extents, overlap,
and allocating an output on an input's device."""

from __future__ import annotations

import numpy as np

from . import backends


def data_pointer(a) -> int:
    """Address of element 0 (with negative strides, not the lowest address)."""
    if isinstance(a, np.ndarray):
        return a.__array_interface__["data"][0]
    return a.data.ptr


def byte_extent(a) -> tuple[int, int]:
    """Half-open address range ``[lo, hi)`` the array's elements occupy (empty if size 0)."""
    base = data_pointer(a)
    if a.size == 0:
        return base, base
    lo = hi = base
    for n, s in zip(a.shape, a.strides):
        if s < 0:
            lo += s * (n - 1)
        else:
            hi += s * (n - 1)
    return lo, hi + a.itemsize


def may_overlap(a, b) -> bool:
    """True when the byte extents of ``a`` and ``b`` intersect (cheap; may say True for
    interleaved arrays that share no byte, which only costs a snapshot copy)."""
    a_lo, a_hi = byte_extent(a)
    b_lo, b_hi = byte_extent(b)
    return a_lo < b_hi and b_lo < a_hi


def same_layout(a, b) -> bool:
    """``a`` and ``b`` are the same elements of the same memory."""
    return data_pointer(a) == data_pointer(b) and a.shape == b.shape and a.strides == b.strides


def empty_on_device_of(x, shape, dtype):
    """A new C-contiguous array of ``shape``/``dtype`` on ``x``'s device (NumPy for CPU arrays)."""
    if backends.is_cupy_array(x):
        import cupy

        with x.device:
            return cupy.empty(shape, dtype=dtype)
    return np.empty(shape, dtype=dtype)
