"""Layout normalization, steps 1-2 of rearrange planning: validate a layout, refuse a
destination that overlaps itself, drop length-1 dims, sort and merge dims, and choose the
vector width (the unit) every stride and both addresses allow.

Pure Python, like the planners that build on it (:mod:`.seed_planner`, :mod:`.tile_planner`, :mod:`.packed_planner`).
Strides are in BYTES, as NumPy/CuPy ``.strides`` report them.

>>> normalize_layout((3, 4), (4, 12), (16, 4), 4).shape     # a transpose keeps both dims
(4, 3)
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

MAX_DIMS = 64
UNIT_SIZES = (1, 2, 4, 8, 16, 32)  # vector widths the kernels instantiate, in bytes
# The exact self-overlap check enumerates every element; beyond this many we refuse instead.
EXACT_OVERLAP_CHECK_LIMIT = 1 << 18


class LaunchPlan:
    """What every plan (a frozen dataclass with ``grid_blocks``) shares."""

    __slots__ = ()

    @property
    def empty(self) -> bool:
        """True when nothing is copied: the caller launches nothing."""
        return self.grid_blocks == 0


@dataclass(frozen=True)
class NormalizedLayout:
    """A layout after steps 1-2 of planning (see :func:`normalize_layout`).

    unit: bytes each thread copies (a power of two <= 32 dividing every stride and address).
    shape: remaining dims, outer -> inner (by |dst stride| descending); ``(0,)`` if empty.
    dst_strides, src_strides: bytes, one per dim of ``shape``.
    contiguous_bytes: bytes contiguous in both dst and src (itemsize times the folded dims),
        before it was distributed over the vector width ``unit``.
    """

    unit: int
    shape: tuple[int, ...]
    dst_strides: tuple[int, ...]
    src_strides: tuple[int, ...]
    contiguous_bytes: int

    @property
    def total(self) -> int:
        """Number of ``unit``-byte copies: the product of ``shape``."""
        return math.prod(self.shape)


def alignment_class(address: int) -> int:
    """Largest power of two <= 32 dividing ``address`` (32 for 0): all a plan depends on.

    >>> alignment_class(0), alignment_class(4096 + 8), alignment_class(3)
    (32, 8, 1)
    """
    address = operator.index(address)
    return 32 if address == 0 else min(address & -address, 32)


def _validate(shape, dst_strides, src_strides, itemsize):
    """Check the arguments; return them as tuples of Python ints."""
    shape = tuple(operator.index(n) for n in shape)
    dst_strides = tuple(operator.index(s) for s in dst_strides)
    src_strides = tuple(operator.index(s) for s in src_strides)
    itemsize = operator.index(itemsize)
    if not len(shape) == len(dst_strides) == len(src_strides):
        raise ValueError(
            f"rearrange needs one stride per dim: shape {shape} has {len(shape)} dims, "
            f"dst_strides {dst_strides} has {len(dst_strides)}, "
            f"src_strides {src_strides} has {len(src_strides)}"
        )
    if len(shape) > MAX_DIMS:
        raise ValueError(f"rearrange supports at most {MAX_DIMS} dims, got {len(shape)}")
    if itemsize <= 0:
        raise ValueError(f"rearrange needs a positive itemsize, got {itemsize}")
    if any(n < 0 for n in shape):
        raise ValueError(f"rearrange needs non-negative lengths, got shape {shape}")
    return shape, dst_strides, src_strides, itemsize


def check_dst_not_self_overlapping(shape, dst_strides, itemsize):
    """Raise ValueError unless distinct indices write disjoint dst bytes.

    Rule: sorted by |stride|, each dim's |stride| must be at least the extent (span plus
    itemsize) of the dims inside it. Every layout NumPy slicing, transposing, reshaping and
    negative steps produce passes. Layouts that fail (interleaved ones built with
    ``as_strided``) get an exact check enumerating every element's offset when there are at
    most EXACT_OVERLAP_CHECK_LIMIT elements, and are refused as 'may overlap' otherwise.
    """
    if 0 in shape:
        return  # nothing is written
    dims = sorted((abs(stride), n) for n, stride in zip(shape, dst_strides) if n > 1)
    extent = itemsize
    for stride, n in dims:
        if stride < extent:
            break
        extent += stride * (n - 1)
    else:
        return
    layout = f"shape {shape}, dst_strides {dst_strides}, itemsize {itemsize}"
    if dims[0][0] == 0:
        raise ValueError(f"the destination overlaps itself (stride 0, length > 1): {layout}")
    total = math.prod(n for _, n in dims)
    if total > EXACT_OVERLAP_CHECK_LIMIT:
        raise ValueError(
            f"the destination may overlap itself (interleaved dims, and {total} elements are too "
            f"many for the exact check): {layout}"
        )
    offsets = [0]
    for n, stride in zip(shape, dst_strides):
        offsets = [offset + i * stride for offset in offsets for i in range(n)]
    offsets.sort()
    if any(b - a < itemsize for a, b in zip(offsets, offsets[1:])):
        raise ValueError(f"the destination overlaps itself (two elements share bytes): {layout}")


def overlaps_itself(a) -> bool:
    """Two elements of ``a`` share a byte (``as_strided`` views; a ``broadcast_to`` view is
    read-only on NumPy, writeable on CuPy): no kernel can write such an ``out=``, so no
    device takes one. Contiguous arrays answer from their flags; others get the rearrange
    planner's check (exact for interleaved layouts of up to a million elements)."""
    flags = a.flags
    if flags.c_contiguous or flags.f_contiguous:
        return False
    try:
        check_dst_not_self_overlapping(tuple(a.shape), tuple(a.strides), a.itemsize)
    except ValueError:
        return True
    return False


def normalize_layout(
    shape, dst_strides, src_strides, itemsize, *, dst_address=0, src_address=0
) -> NormalizedLayout:
    """Steps 1-2 of planning: validate, simplify the dims, pick the vector width.

    Drops length-1 dims; sorts by |dst stride| descending (ties: |src| descending, then
    length descending); merges adjacent dims whose strides chain in dst and src; folds
    the innermost dims contiguous in both into the unit; then takes as ``unit`` the widest of
    32, 16, 8, 4, 2, 1 bytes dividing the unit, every stride and both addresses, the rest of
    the unit becoming an extra innermost dim. Raises ValueError on invalid layouts.

    >>> layout = normalize_layout((4, 8), (32, 4), (32, 4), 4)   # a C-contiguous fp32 copy
    >>> layout.contiguous_bytes, layout.unit, layout.shape, layout.dst_strides
    (128, 32, (4,), (32,))
    """
    shape, dst_strides, src_strides, itemsize = _validate(shape, dst_strides, src_strides, itemsize)
    alignment = min(alignment_class(dst_address), alignment_class(src_address))
    if 0 in shape:
        unit = next(w for w in reversed(UNIT_SIZES) if itemsize % w == 0 and w <= alignment)
        return NormalizedLayout(unit, (0,), (0,), (0,), itemsize)
    check_dst_not_self_overlapping(shape, dst_strides, itemsize)

    dims = [dim for dim in zip(shape, dst_strides, src_strides) if dim[0] != 1]
    dims.sort(key=lambda dim: (-abs(dim[1]), -abs(dim[2]), -dim[0]))
    merged: list[tuple[int, int, int]] = []
    for n, dst, src in dims:
        if merged:
            outer_n, outer_dst, outer_src = merged[-1]
            if dst * n == outer_dst and src * n == outer_src:
                merged[-1] = (outer_n * n, dst, src)
                continue
        merged.append((n, dst, src))
    unit = itemsize
    while merged and merged[-1][1] == unit and merged[-1][2] == unit:
        unit *= merged.pop()[0]

    # The seed checked only the outermost strides: an offset view then issued misaligned
    # vector accesses. Every stride and both addresses must be multiples of the width.
    width = next(
        w
        for w in reversed(UNIT_SIZES)
        if w <= alignment and unit % w == 0 and all(d % w == 0 and s % w == 0 for _, d, s in merged)
    )
    if width < unit:
        merged.append((unit // width, width, width))
    return NormalizedLayout(width, *columns(merged), contiguous_bytes=unit)


def columns(dims: list[tuple[int, int, int]]) -> tuple[tuple[int, ...], ...]:
    """(lengths, dst strides, src strides) of a list of (length, dst stride, src stride)."""
    return tuple(zip(*dims)) if dims else ((), (), ())


