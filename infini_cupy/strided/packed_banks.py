"""Shared-memory bank conflicts of a packed tile, and the slot strides that avoid them.

Pure Python (NumPy), for :mod:`.packed_planner`. A packed tile's slots are laid out in
destination order, so phase 2 (destination order) reads consecutive slots; phase 1 walks the
source order, whose contiguous dim has the slot stride of every destination dim before it.
Dense slots make that stride the product of those tile lengths (56 or 80 words for short
dims: 8- to 16-way conflicted stores). Padding it to an odd number of 4-byte words spreads 32
consecutive source elements over the 32 banks.

>>> padded_stride(56, 4), padded_stride(56, 1), padded_stride(12, 2)
(57, 60, 14)
"""

from __future__ import annotations

import math

import numpy as np

from ..perf.devices import BANKS, SECTOR
from ..perf.distinct import distinct, distinct_counts

SAMPLED_UNITS = 4096  # units of each phase the estimate walks (the pattern repeats)
WORD_BYTES = 8  # PACKED_WORD_BYTES in packed.cu: a work item of smaller units moves a word


def padded_stride(stride: int, unit: int) -> int:
    """The least slot stride >= ``stride`` spanning an odd number of 4-byte words (an odd
    number of elements for 8- and 16-byte units)."""
    step = max(1, 4 // unit)  # elements per word
    s = -(-stride // step) * step
    if (s // step) % 2 == 0:
        s += step
    return s


def units_per_item(unit: int, words: bool) -> int:
    """Units a work item moves: a WORD_BYTES word of 1- or 2-byte units where ``words``, else
    one unit (``PackedWord`` in packed.cu)."""
    return WORD_BYTES // unit if words and unit < 4 else 1


def _group(side):
    """Each dim's (group shift, group pad), zeros where the side names none."""
    dims = len(side.length)
    return (tuple(side.group_shift) or (0,) * dims), (tuple(side.group_pad) or (0,) * dims)


def _items(side, unit):
    """(warp access, slot) of the first SAMPLED_UNITS units of the work items of one phase over
    a tile of full chunks at a sector boundary (``packed_copy``'s walk: a work item of a side
    of ``words`` moves IU units, the k-th of each a warp access of its own)."""
    n = side.length
    run, rows = math.prod(n[:side.run]), math.prod(n[side.run:])
    along = side.stride[0] if side.run else unit
    low = (run - 1) * along if along < 0 else 0
    sec = SECTOR // unit
    vl = run
    if side.aligned:
        lead = (low % SECTOR) // unit if side.uniform else sec - 1
        vl = -(-(run + lead) // sec) * sec
    iu = units_per_item(unit, side.words)
    position = np.arange(min(rows * vl, SAMPLED_UNITS))
    r, q = position // vl, position % vl
    access = (r * (vl // iu) + q // iu) // 32 * iu + q % iu
    offset = np.full(position.size, low, np.int64)
    slot = np.zeros(position.size, np.int64)
    shift, pad = _group(side)
    for d in range(side.run, len(n)):
        k, r = r % n[d], r // n[d]
        offset += k * side.stride[d]
        slot += k * side.slot[d] + (k >> shift[d]) * pad[d]
    lead = (offset % SECTOR) // unit if side.aligned else 0
    p = q - lead
    active = (p >= 0) & (p < run)
    e = np.where(along < 0, run - 1 - p, p)
    for d in range(side.run):
        k = e % n[d] if d + 1 < side.run else e
        e = e // n[d]
        slot += k * side.slot[d] + (k >> shift[d]) * pad[d]
    if side.contiguous and iu > 1:
        # two 4-byte loads per word from its first slot, lanes 16 and up taking the second
        # word first (packed_walk's CONTIGUOUS path)
        first = active & (q % iu == 0)
        item = (position // vl) * (vl // iu) + q // iu
        flip = (item % 32) >> 4
        step = item // 32
        words = slot * unit // 4
        access = np.concatenate([step * 2, step * 2 + 1])[np.r_[first, first]]
        word = np.concatenate([words + flip, words + (flip ^ 1)])[np.r_[first, first]]
        return access, word * 4 // unit
    return access[active], slot[active]


def wavefront_ratio(sides, unit) -> float:
    """Shared-memory wavefronts of the phases' warp accesses over the fewest they could take
    (1.0: conflict-free), over the first work items of each phase."""
    words_per = max(1, unit // 4)
    spent = ideal = 0
    for side in sides:
        step, slot = _items(side, unit)
        if step.size == 0:
            continue
        word = (slot * unit // 4)[:, None] + np.arange(words_per)
        step = np.repeat(step, words_per)
        pairs = distinct(step * (1 << 32) + word.reshape(-1))
        step_of, word_of = pairs >> 32, pairs & 0xFFFFFFFF
        keys, counts = distinct_counts(step_of * BANKS + word_of % BANKS)
        # the busiest bank of each access (keys sorted: each access's banks in a stretch)
        access = keys // BANKS
        starts = np.flatnonzero(np.r_[True, access[1:] != access[:-1]])
        spent += int(np.maximum.reduceat(counts, starts).sum())
        words = np.bincount(step_of - step_of.min())
        ideal += int(np.sum(np.maximum(1, -(-words[words > 0] // BANKS))))
    return spent / ideal if ideal else 1.0
