"""Arrays on the suite's device laid out exactly like NumPy ones, and views carved at any byte
offset, so that ``pytest --backend cuda`` plans, and launches, the very variants an emulated
run does.

``cupy.asarray`` of a NumPy view makes a C-contiguous copy at a 256-byte boundary: a test's
transposed, sliced, broadcast or offset input would reach the GPU as a plain contiguous one,
and every layout class would run the contiguous kernel. :func:`same_layout_on_gpu` keeps the
shape, the strides and the address modulo 256 (CuPy's allocation granule) of element 0.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from infini_cupy import arrays
from infini_cupy.dtypes import is_bfloat16

ALIGN = 256  # CuPy's allocator aligns every allocation to 256 bytes


class _Bytes:
    """The bytes ``[lo, lo + n)`` of ``owner``'s memory, for ``np.array`` to copy."""

    def __init__(self, lo: int, n: int, owner):
        self.owner = owner  # keeps the memory alive while it is read
        self.__array_interface__ = {"data": (lo, True), "shape": (n,), "typestr": "|u1",
                                    "version": 3}


def _byte_copyable(a) -> bool:
    """Whether ``a`` can be carved out of a uint8 buffer: a non-empty array of a numeric,
    bool or bfloat16 dtype (kind 'V', which CuPy 14 holds through ml_dtypes) in native order."""
    return (isinstance(a, np.ndarray) and a.size > 0 and a.dtype.isnative
            and (a.dtype.kind in "biufc" or is_bfloat16(a.dtype)))


def same_layout_on_gpu(a, xp=None):
    """A CuPy array equal to ``a`` with its shape, strides and address modulo 256; anything
    CuPy cannot lay out that way (lists, scalars, empty arrays, dtypes CuPy refuses) goes
    through ``cupy.asarray`` unchanged, with its errors. ``xp``: the array module (CuPy)."""
    if xp is None:
        import cupy as xp

    if not _byte_copyable(a):
        return xp.asarray(a)
    lo, hi = arrays.byte_extent(a)
    host = np.array(_Bytes(lo, hi - lo, a), copy=True)
    raw = xp.empty(hi - lo + ALIGN, np.uint8)
    start = (lo - arrays.data_pointer(raw)) % ALIGN
    raw[start:start + hi - lo] = xp.asarray(host)
    first = start + arrays.data_pointer(a) - lo  # element 0, which negative strides put above lo
    return byte_view(raw, first, a.dtype, a.shape, a.strides)


def aligned_bytes(nbytes: int, offset: int = 0, seed: int | None = None) -> np.ndarray:
    """A host uint8 buffer whose byte 0 lies ``offset`` bytes past a 256-byte boundary (random
    bytes from ``seed``, else zeros); ``to_device`` keeps that on the GPU."""
    raw = np.zeros(nbytes + ALIGN + offset, np.uint8)
    start = (-arrays.data_pointer(raw)) % ALIGN + offset
    buffer = raw[start:start + nbytes]
    if seed is not None:
        buffer[...] = np.random.default_rng(seed).integers(0, 256, nbytes, dtype=np.uint8)
    return buffer


def byte_view(buffer, offset: int, dtype, shape, strides):
    """A ``dtype`` view of the uint8 ``buffer`` (NumPy or CuPy) with element 0 at byte
    ``offset`` and byte ``strides`` (any: odd, negative, zero); the caller keeps it inside."""
    dtype = np.dtype(dtype)
    first = buffer[offset:offset + dtype.itemsize].view(dtype)
    return arrays.as_strided(first, tuple(shape), tuple(strides))


def view_extent(shape, strides, itemsize) -> tuple[int, int]:
    """``(first, nbytes)``: the offset of element 0 that puts a layout's lowest byte at 0,
    and the bytes it spans."""
    lo, hi = arrays.layout_extent(tuple(shape), tuple(strides), itemsize)
    return -lo, hi - lo


# ---------------------------------------------------------------- views at any byte offset
@st.composite
def byte_layouts(draw, shape, itemsize: int, max_offset: int = 15, max_gap: int = 3):
    """``(offset, strides, nbytes)``: a layout of ``shape`` whose element 0 sits ``offset``
    bytes into a buffer of ``nbytes``, its lowest byte at 0 to 15 bytes in. Dims are laid out
    in a random order, each stride the extent of the dims inside it plus a gap of 0 to 3 bytes
    (so strides need not be multiples of the itemsize), some reversed; elements never share a
    byte, so the layout also serves as a destination."""
    ndim = len(shape)
    if draw(st.integers(0, 2)) == 0:  # C-contiguous (at a byte offset): dims merge into rows
        gaps, order, flips = [0] * ndim, list(range(ndim)), [False] * ndim
    else:
        gaps = [draw(st.sampled_from([0, 0, 0] + list(range(1, max_gap + 1)))) for _ in shape]
        order = draw(st.permutations(range(ndim)))  # outermost first
        flips = [draw(st.integers(0, 3)) == 0 for _ in shape]
    strides = [0] * ndim
    step = itemsize
    for d in reversed(order):
        strides[d] = step + gaps[d]
        step = strides[d] * max(shape[d], 1)
    strides = [-s if flip else s for s, flip in zip(strides, flips)]
    first, span = view_extent(shape, strides, itemsize)
    start = draw(st.integers(0, max_offset))
    return start + first, tuple(strides), start + span + 16


@st.composite
def byte_offset_case(draw, dtypes, max_ndim: int = 3, max_len: int = 9):
    """``(dtype, shape, layouts, seed)``: three layouts of one shape (:func:`byte_layouts`);
    one case in eight a single row longer than a staged copy's tile (16 KiB)."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    if draw(st.integers(0, 7)) == 0:
        shape = (draw(st.integers(8000, 40000)),)
    else:
        ndim = draw(st.integers(0, max_ndim))
        shape = tuple(draw(st.integers(0 if draw(st.integers(0, 9)) == 0 else 1, max_len))
                      for _ in range(ndim))
    layouts = tuple(draw(byte_layouts(shape, dtype.itemsize)) for _ in range(3))
    return dtype, shape, layouts, draw(st.integers(0, 2**32 - 1))


def twin_views(to_device, dtype, shape, layout, values):
    """``(host buffer, host view, device buffer, device view)``: ``values`` written into a
    host view of ``layout`` (:func:`byte_layouts`), its buffer moved to the device, and the
    same view carved there."""
    offset, strides, nbytes = layout
    host_buffer = aligned_bytes(nbytes, seed=nbytes)
    host = byte_view(host_buffer, offset, dtype, shape, strides)
    host[...] = values
    device_buffer = to_device(host_buffer)
    return host_buffer, host, device_buffer, byte_view(device_buffer, offset, dtype, shape, strides)
