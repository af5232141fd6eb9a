"""The staged-copy kernel (``tiled_copy`` in kernels_src/transpose.cu) simulated in Python.

Follows the kernel's index arithmetic step by step (tiles, the two phases, virtual rows that
start on sector boundaries, vector units, 4-byte words of byte units, chained rows) so planner tests can check the bytes a
TilePlan copies without compiling anything, plus what the GPU would see: the alignment of
every access, the shared-memory slots (inside the declared capacity, each written once and
read once) and the bank conflicts of each warp step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from infini_cupy.strided.tile_planner import SECTOR, TilePlan


@dataclass
class Simulated:
    dst: np.ndarray  # byte offset (from dst's pointer) of every copied element...
    src: np.ndarray  # ...and of its source, element for element
    bank_conflicts: dict = field(default_factory=dict)  # phase -> worst ways of a warp step


def _pass(origin, along, row_stride, rows, row_len, chained, uniform, vector, unit, sh_row,
          sh_along, spread=1, short_spread=1, group_rows=1):
    """(global addresses, shared slots, warp step of each) of every element moved by one pass.

    ``spread``: the row spacing of a 16-byte pass's warp steps (4 / unit where sh_along is 1).
    ``short_spread``: the plan's spread of the pass (``TilePass::spread_rows``): the row
    spacing of a warp step over short rows (virtual rows of 8 or 16 items, uniform, ascending,
    not chained), or over the plan's ``group_rows`` K > 1 rows (32 / K lanes each).
    """
    if vector == 1 and unit == 1:
        return _word_pass(origin, along, row_stride, rows, row_len, chained, uniform, unit,
                          sh_row, sh_along)
    rows_per_step = 4 if vector > 1 and vector * unit == 16 else 1
    if rows_per_step == 1 and group_rows > 1 and not chained and along > 0:
        rows_per_step, spread = group_rows, short_spread  # the grouped walk of K rows
    chained = chained and rows_per_step == 1
    uniform = uniform or chained
    run = rows * row_len if chained else row_len
    units = run // vector
    sec = SECTOR // (vector * unit)
    descending = along < 0
    first_lo = origin + ((run - 1) * along if descending else 0)
    lead0 = (first_lo % SECTOR) // (vector * unit)
    lead = lead0 if uniform else sec - 1
    vl = _virtual_row(units + lead, sec, uniform)
    if rows_per_step == 1 and short_spread > 1 and uniform and not chained and not descending \
            and vl < 32 and 32 % vl == 0:
        k_rows = 32 // vl
        steps = -(-rows // (k_rows * short_spread)) * short_spread
        step = np.repeat(np.arange(steps), 32)
        lane = np.tile(np.arange(32), steps)
        r = step // short_spread * (k_rows * short_spread) + lane // vl * short_spread \
            + step % short_spread
        q = lane % vl
        keep = r < rows
        r, q, step = r[keep], q[keep], step[keep]
    elif rows_per_step == 1:
        item = np.arange((1 if chained else rows) * vl)
        r = item // vl
        q = item - r * vl
        step = item // 32
    else:
        lanes = 32 // rows_per_step
        chunks = -(-(units + lead) // lanes)
        groups = -(-rows // (rows_per_step * spread)) * spread
        g = np.repeat(np.arange(groups * chunks), 32)
        lane = np.tile(np.arange(32), groups * chunks)
        big, c = g // chunks, g % chunks
        r = big // spread * (rows_per_step * spread) + lane // lanes * spread + big % spread
        q = c * lanes + lane % lanes
        keep = r < rows
        r, q, step = r[keep], q[keep], g[keep]
    lo = origin + r * row_stride + ((run - 1) * along if descending else 0)
    skew = (lo % SECTOR) // (vector * unit)
    assert not uniform or np.all(skew == lead0), "rows said to share their lead do not"
    p = q - skew
    active = (p >= 0) & (p < units)
    step, r, lo, p = step[active], r[active], lo[active], p[active]
    e = run - 1 - p if descending else p * vector
    a = e % row_len if chained else e
    row = e // row_len if chained else r
    address = lo + p * vector * unit
    assert np.all(address % (vector * unit) == 0), "misaligned vector access"
    k = np.arange(vector)
    element_address = (address[:, None] + k * unit).reshape(-1)
    slot = ((row * sh_row + a * sh_along)[:, None] + k * sh_along).reshape(-1)
    step = (step[:, None] * vector + k).reshape(-1)  # one shared access per element
    return element_address, slot, step


def _virtual_row(items, sec, uniform):
    """Work items of a virtual row (``TilePass::virtual_row``): whole sectors of ``sec``
    items; whole warp steps where rows start anywhere in a sector and outlast a step."""
    vl = -(-items // sec) * sec
    return vl if uniform or vl <= 32 else -(-vl // 32) * 32


def _word_pass(origin, along, row_stride, rows, row_len, chained, uniform, unit, sh_row,
               sh_along):
    """:func:`_pass` for byte units moved in aligned 4-byte words: item q of a
    virtual row is the word q sectors' worth from the sector boundary below the row, its
    units ``q * 4 / unit - lead + k``; each unit k is its own shared access."""
    iu = 4 // unit
    run = rows * row_len if chained else row_len
    descending = along < 0
    first_lo = origin + ((run - 1) * along if descending else 0)
    lead0 = (first_lo % SECTOR) // unit
    lead = lead0 if uniform or chained else SECTOR // unit - 1
    vl = _virtual_row(-(-(run + lead) // iu), 8, uniform or chained)  # words
    item = np.arange((1 if chained else rows) * vl)
    r, q = item // vl, item % vl
    step = item // 32
    lo = origin + r * row_stride + ((run - 1) * along if descending else 0)
    skew = (lo % SECTOR) // unit
    assert not (uniform or chained) or np.all(skew == lead0), "rows said to share their lead do not"
    k = np.arange(iu)
    p = (q * iu - skew)[:, None] + k  # unit positions in the run, word by word
    assert np.all((lo[:, None] + p * unit) % 4 == k * unit), "words are not aligned"
    r, step = np.broadcast_to(r[:, None], p.shape), step[:, None] * iu + k
    active = (p >= 0) & (p < run)
    r, step, p, lo = r[active], step[active], p[active], np.broadcast_to(lo[:, None], active.shape)[active]
    e = run - 1 - p if descending else p
    a = e % row_len if chained else e
    row = e // row_len if chained else r
    return lo + p * unit, row * sh_row + a * sh_along, step


def _worst_bank_conflict(slot, step, unit):
    """Most distinct 4-byte words one bank serves in a warp step (1: conflict-free)."""
    word = slot * unit // 4
    worst = 1
    for s in np.unique(step):
        words = np.unique(word[step == s])
        worst = max(worst, int(np.bincount(words % 32).max()))
    return worst


def simulate_tile_kernel(plan: TilePlan, dst_address=0, src_address=0, banks=False) -> Simulated:
    """Every (dst offset, src offset) pair ``tiled_copy`` copies, checking as it goes."""
    unit = plan.unit
    capacity = plan.capacity
    dst_out, src_out = [], []
    conflicts = {"read": 1, "write": 1}
    # Stacked tiles: the kernel counts the innermost batch dim in groups of plan.stack.
    stack, batch_len = plan.stack, plan.batch_len
    groups = (*batch_len[:-1], -(-batch_len[-1] // stack)) if batch_len else ()
    group_index = np.unravel_index(np.arange(math.prod(groups)), groups or (1,))
    for b in range(plan.tiles):
        t1 = b % plan.tiles1
        t0 = b // plan.tiles1 % plan.tiles0
        group = b // plan.tiles1 // plan.tiles0
        first_of_group = [int(i[group]) for i in group_index] if batch_len else []
        if batch_len:
            first_of_group[-1] *= stack
            count = min(stack, batch_len[-1] - first_of_group[-1])
        else:
            count = 1
        start0, start1 = t0 * plan.tile0 - plan.shift0, t1 * plan.tile1 - plan.shift1
        first0, first1 = max(start0, 0), max(start1, 0)
        n0 = min(start0 + plan.tile0, plan.len0) - first0
        n1 = min(start1 + plan.tile1, plan.len1) - first1
        assert n0 > 0 and n1 > 0, "an empty tile"
        src_at = plan.src_offset + first0 * plan.src_stride0 + first1 * plan.src_stride1
        dst_at = plan.dst_offset + first0 * plan.dst_stride0 + first1 * plan.dst_stride1
        for i, (s, d) in enumerate(zip(plan.src_batch_stride, plan.dst_batch_stride)):
            src_at += first_of_group[i] * s
            dst_at += first_of_group[i] * d
        spread = max(1, 4 // unit)
        if plan.read_along == 0:
            read = _pass(src_address + src_at, plan.src_stride0, plan.src_stride1, n1, n0,
                         plan.read_chained, plan.read_uniform, plan.read_vector, unit, 1, plan.pitch,
                         1, plan.read_spread, plan.read_rows)
        else:
            read = _pass(src_address + src_at, plan.src_stride1, plan.src_stride0, n0, n1,
                         plan.read_chained, plan.read_uniform, plan.read_vector, unit, plan.pitch, 1,
                         spread, plan.read_spread, plan.read_rows)
        write = _pass(dst_address + dst_at, plan.dst_stride1, plan.dst_stride0, n0, n1,
                      plan.write_chained, plan.write_uniform, plan.write_vector, unit, plan.pitch, 1,
                      spread, plan.write_spread)
        (src_bytes, read_slot, read_step), (dst_bytes, write_slot, write_step) = read, write
        assert read_slot.size == n0 * n1 and len(np.unique(read_slot)) == read_slot.size
        assert np.array_equal(np.sort(read_slot), np.sort(write_slot)), "phases disagree"
        if banks:
            conflicts["read"] = max(conflicts["read"], _worst_bank_conflict(read_slot, read_step, unit))
            conflicts["write"] = max(conflicts["write"], _worst_bank_conflict(write_slot, write_step, unit))
        # Tile k of a stack: the first tile's accesses, k steps further in memory and k tiles
        # further in shared memory (as the kernel moves them: located once).
        src_step = plan.src_batch_stride[-1] if batch_len else 0
        dst_step = plan.dst_batch_stride[-1] if batch_len else 0
        for k in range(count):
            slot_at = k * plan.tile0 * plan.pitch
            assert read_slot.min() >= 0 and read_slot.max() + slot_at < capacity, \
                "beyond shared memory"
            if k:
                assert (src_step % 32, dst_step % 32) == (0, 0), "a stack step off the sectors"
            source_of_slot = dict(zip(read_slot.tolist(), (src_bytes + k * src_step).tolist()))
            dst_out.append(dst_bytes + k * dst_step - dst_address)
            src_out.append(np.array([source_of_slot[s] for s in write_slot.tolist()]) - src_address)
    if not dst_out:
        return Simulated(np.zeros(0, np.int64), np.zeros(0, np.int64), conflicts)
    return Simulated(np.concatenate(dst_out), np.concatenate(src_out), conflicts)
