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

SECTOR = 32
BANKS = 32
SAMPLED_ITEMS = 4096  # work items of each phase the estimate walks (the pattern repeats)


def padded_stride(stride: int, unit: int) -> int:
    """The least slot stride >= ``stride`` spanning an odd number of 4-byte words (an odd
    number of elements for 8- and 16-byte units)."""
    step = max(1, 4 // unit)  # elements per word
    s = -(-stride // step) * step
    if (s // step) % 2 == 0:
        s += step
    return s


def _items(side, unit):
    """(warp step, slot) of the first SAMPLED_ITEMS work items of one phase over a tile of
    full chunks at a sector boundary (``packed_copy``'s PackedPass::locate)."""
    n = side.length
    run, rows = math.prod(n[:side.run]), math.prod(n[side.run:])
    along = side.stride[0] if side.run else unit
    low = (run - 1) * along if along < 0 else 0
    sec = SECTOR // unit
    vl = run
    if side.aligned:
        lead = (low % SECTOR) // unit if side.uniform else sec - 1
        vl = -(-(run + lead) // sec) * sec
    item = np.arange(min(rows * vl, SAMPLED_ITEMS))
    r, q = item // vl, item % vl
    offset = np.full(item.size, low, np.int64)
    slot = np.zeros(item.size, np.int64)
    for d in range(side.run, len(n)):
        k, r = r % n[d], r // n[d]
        offset += k * side.stride[d]
        slot += k * side.slot[d]
    lead = (offset % SECTOR) // unit if side.aligned else 0
    p = q - lead
    active = (p >= 0) & (p < run)
    e = np.where(along < 0, run - 1 - p, p)
    for d in range(side.run):
        k = e % n[d] if d + 1 < side.run else e
        e = e // n[d]
        slot += k * side.slot[d]
    return item[active] // 32, slot[active]


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
        pairs = np.unique(step * (1 << 32) + word.reshape(-1))
        step_of, word_of = pairs >> 32, pairs & 0xFFFFFFFF
        banks = np.unique(step_of * BANKS + word_of % BANKS, return_counts=True)
        per_step = {}
        for key, count in zip(*banks):
            s = int(key) // BANKS
            per_step[s] = max(per_step.get(s, 0), int(count))
        words = np.bincount(step_of - step_of.min())
        spent += sum(per_step.values())
        ideal += int(np.sum(np.maximum(1, -(-words[words > 0] // BANKS))))
    return spent / ideal if ideal else 1.0
