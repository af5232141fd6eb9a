"""The chooser among the three planners: which plan a strided copy gets, the seed plan
(:mod:`.seed_planner`), a staged copy through shared memory (:mod:`.tile_planner`) or a packed
one (:mod:`.packed_planner`), by the performance model (:mod:`infini_cupy.perf`).

Pure Python (no CuPy, no NumPy): every input is an int or a tuple of ints, every output a
frozen, hashable dataclass, so the caller can cache plans and the tests run on any machine.
Strides are in BYTES, as NumPy/CuPy ``.strides`` report them; they may be negative, and
source strides may be 0 (broadcast).

The rule, in order (:func:`plan_rearrange`; the constants below, the predicates named):

1. ``tiles=False`` or nothing to copy: the seed plan.
2. A transpose (or a copy whose rows are misaligned) gets a staged copy
   (:class:`~infini_cupy.strided.tile_planner.TilePlan`: a tile at a time through shared
   memory, both sides coalesced), with smaller tiles where a grid of few waves leaves SMs idle
   (:func:`_fill_the_sms`) and fewer threads per block where the model cannot tell them apart
   (:func:`_smaller_blocks`); other layouts the seed plan.
3. A broadcast source keeps that plan (packed tiles would re-read it).
4. While a side may be below its sector limit (:func:`_may_coalesce_better`), a packed copy
   (:class:`~infini_cupy.strided.packed_planner.PackedPlan`: tiles spanning several dims on
   each side) replaces it where it coalesces better and :func:`_packed_wins`: predicted
   faster by :func:`infini_cupy.perf.limits.predicted_fraction`, which weighs the
   instructions each kernel issues per byte against its sectors; it is kept outright when it
   reaches LARGE_TARGET of the sector limit (:func:`_packed_is_enough`).
5. Else, where the device lets a block opt in to more shared memory than a wide tile, larger
   packed tiles (:func:`~infini_cupy.strided.packed_planner.plan_large`) where
   :func:`_large_wins`.

>>> plan = plan_rearrange((2001, 2001), (8004, 4), (4, 8004), 4)   # fp32 transpose
>>> plan.kernel, (plan.tile0, plan.tile1)
('tiled_copy<4, 1, 1, 1, 0>', (106, 106))
>>> plan = plan_rearrange((2001, 2001), (8004, 4), (4, 8004), 4, tiles=False)
>>> plan.kernel, plan.block_len, plan.grid_len, len(plan.constraints)
('rearrange<4, 2, 2, 2, int>', (32, 32), (63, 63), 2)
"""

from __future__ import annotations

import dataclasses
import operator

from ..perf import limits, sectors
from ..perf.devices import SECTOR, WARP_SIZE
from .layout import NormalizedLayout, normalize_layout
from .packed_planner import (
    LARGE_MAX_BYTES,
    LARGE_TARGET,
    MARGIN,
    RIVAL_GOOD,
    PACKED_WIDE_BYTES,
    PackedPlan,
    plan_large,
    plan_packed,
    words_on_both,
)
from .seed_planner import GeneralRearrangePlan, RearrangePlan, seed_plan, thread_budget
from .tile_planner import TilePlan, plan_tiles

# The chooser's constants, in one place. From the packed planner: RIVAL_GOOD (a side below
# it may be below its sector limit), MARGIN (how much more a plan must be predicted to reach
# to replace another), LARGE_TARGET (the sector limit a packed plan must reach to be kept
# outright), LARGE_MAX_BYTES (the most dynamic shared memory a large tile takes) and
# PACKED_WIDE_BYTES (a wide packed tile's static shared memory: larger tiles need more).
SAMPLED_THREADS = 1024  # threads of the first blocks whose warps estimate a seed plan's coalescing
# A staged transpose whose grid fills the SMs below FILL_WAVES_GOOD tries tiles of 1 / split
# of its shared memory (_fill_the_sms), for copies of FILL_MIN_BYTES or more.
FILL_WAVES_GOOD = 0.95
FILL_SPLITS = (2, 3, 4, 6, 8)
FILL_MIN_BYTES = 4 << 20
MIN_TILE_THREADS = 256  # _smaller_blocks halves a staged copy's blocks down to this


def plan_rearrange(
    shape, dst_strides, src_strides, itemsize, *, max_threads=1024, dst_address=0, src_address=0,
    tiles=True, max_shared_bytes=LARGE_MAX_BYTES, weigh_issue=True,
) -> RearrangePlan | GeneralRearrangePlan | TilePlan | PackedPlan:
    """Plan copying a ``shape`` array laid out by ``src_strides`` into ``dst_strides``.

    Strides are in bytes; addresses matter only through their offset in a 32-byte sector
    (``address % 32``, which also gives :func:`alignment_class`). Returns a
    :class:`~infini_cupy.strided.tile_planner.TilePlan` when staging through shared memory pays (a
    transpose, or misaligned rows; not with ``tiles=False``), a
    :class:`~infini_cupy.strided.packed_planner.PackedPlan` when tiles of several dims coalesce
    better still (short contiguous dims; not with ``tiles=False``), else a :class:`RearrangePlan`
    when the block and grid each need at most 5 dims, else a :class:`GeneralRearrangePlan`.
    ``max_shared_bytes``: the dynamic shared memory a block may opt in to on the device
    (packed tiles take up to ``packed_planner.LARGE_MAX_BYTES`` of it when 48 KiB tiles stay
    below ``LARGE_TARGET`` of the sector limit).
    A packed plan is taken only where it is predicted faster than the plan it replaces: a
    larger fraction of a device-to-device copy by :func:`infini_cupy.perf.limits.predicted_fraction`,
    which weighs the instructions each kernel issues per byte against its sectors.
    ``weigh_issue=False`` compares coalescing alone (packed tiles wherever they coalesce
    better), to reach the packed kernels on any layout and to compare the two rules.
    Zero-size arrays give a plan with ``grid_blocks == 0`` (``plan.empty``): launch nothing.
    Raises ValueError on invalid layouts, including a destination that overlaps itself.

    >>> plan = plan_rearrange((4, 8), (32, 4), (32, 4), 4)   # C-contiguous fp32 copy
    >>> plan.kernel, plan.block_len, plan.grid_len, plan.block_threads
    ('rearrange<32, 1, 1, 0, int>', (4,), (1,), 32)
    """
    budget = thread_budget(operator.index(max_threads))
    layout = normalize_layout(
        shape, dst_strides, src_strides, itemsize, dst_address=dst_address, src_address=src_address
    )
    if not (tiles and layout.total):
        return seed_plan(layout, budget)
    dst_residue, src_residue = dst_address % SECTOR, src_address % SECTOR
    plan = plan_tiles(layout.unit, layout.shape, layout.dst_strides, layout.src_strides,
                      dst_residue, src_residue, budget)
    if plan is None:
        plan = seed_plan(layout, budget)
    else:
        plan = _fill_the_sms(plan, layout, dst_residue, src_residue, budget)
        plan = _smaller_blocks(plan, layout, dst_residue, src_residue)
    if 0 in layout.src_strides:  # broadcast sources: packed tiles would re-read them
        return plan
    efficiency = _efficiency(plan, layout, dst_residue, src_residue)
    if not _may_coalesce_better(efficiency):
        return plan
    nbytes = layout.total * layout.unit
    fraction = limits.predicted_fraction(plan, efficiency, nbytes)
    packed = plan_packed(layout, dst_residue, src_residue, budget, rival=efficiency)
    if packed is not None:
        packed_efficiency = _efficiency(packed, layout, dst_residue, src_residue)
        packed_fraction = limits.predicted_fraction(packed, packed_efficiency, nbytes)
        if weigh_issue and not _packed_wins(packed, packed_fraction, fraction):
            return plan  # it coalesces better but issues too many instructions
        plan, efficiency, fraction = packed, packed_efficiency, packed_fraction
        if _packed_is_enough(packed):
            return plan
    large_budget = min(max_shared_bytes, LARGE_MAX_BYTES)
    if large_budget > PACKED_WIDE_BYTES:
        large = plan_large(layout, dst_residue, src_residue, budget, efficiency, large_budget)
        if large is not None and (not weigh_issue or _large_wins(large, layout, dst_residue,
                                                                  src_residue, fraction)):
            return large
    return plan


# ------------------------------------------------------------------ the rule's predicates
def _may_coalesce_better(efficiency: tuple[float, float]) -> bool:
    """At least one side may be below its sector limit: a packed plan may do better."""
    return min(efficiency) < RIVAL_GOOD


def _packed_wins(packed: PackedPlan, packed_fraction: float, fraction: float) -> bool:
    """The packed plan moves words in both phases and is predicted faster, by more than
    MARGIN, than the plan it would replace."""
    return packed_fraction > fraction + MARGIN and words_on_both(packed)


def _packed_is_enough(packed: PackedPlan) -> bool:
    """Both sides of the packed plan reach LARGE_TARGET of their sector limit: larger tiles
    have nothing to add."""
    return min(packed.predicted) >= LARGE_TARGET


def _large_wins(large: PackedPlan, layout: NormalizedLayout, dst_residue, src_residue,
                fraction: float) -> bool:
    """The plan of larger tiles moves words in both phases and is predicted faster, by more
    than MARGIN, than the plan it would replace."""
    return words_on_both(large) and limits.predicted_fraction(
        large, _efficiency(large, layout, dst_residue, src_residue),
        layout.total * layout.unit) > fraction + MARGIN


def _fill_the_sms(plan: TilePlan, layout: NormalizedLayout, dst_residue, src_residue,
                  budget) -> TilePlan:
    """The staged transpose with smaller tiles where the model predicts that faster: a grid
    of a few waves leaves SMs idle at its end (the waves limit), and splitting its tiles
    trades that for a few partial sectors and per-tile instructions more. Copies under
    FILL_MIN_BYTES keep their tiles (launch latency dominates them)."""
    nbytes = layout.total * layout.unit
    if (plan.read_along != 0 or nbytes < FILL_MIN_BYTES
            or limits.waves_limit(plan.grid_blocks) >= FILL_WAVES_GOOD):
        return plan
    best = plan, limits.predicted_fraction(
        plan, _efficiency(plan, layout, dst_residue, src_residue), nbytes)
    for split in FILL_SPLITS:
        candidate = plan_tiles(layout.unit, layout.shape, layout.dst_strides, layout.src_strides,
                               dst_residue, src_residue, budget, split=split)
        if candidate is None:
            continue
        fraction = limits.predicted_fraction(
            candidate, _efficiency(candidate, layout, dst_residue, src_residue), nbytes)
        if fraction > best[1] + MARGIN:
            best = candidate, fraction
    return best[0]


def _smaller_blocks(plan: TilePlan, layout: NormalizedLayout, dst_residue,
                    src_residue) -> TilePlan:
    """The staged copy with fewer threads per block (halved, down to MIN_TILE_THREADS) where
    the model predicts it as fast: where it cannot tell them apart, more and smaller blocks
    per SM win, because a block's loads wait at the barrier between its two phases and other
    blocks' phases fill that time. On an H100 (2026-11-25), 48 KiB tiles at 256 threads
    instead of 512 took NCHW->NHWC RGB float32 from 0.51 to 0.75-0.81 of a device copy and
    the thin transpose from 0.71 to 0.85; byte tiles, which need 512 threads for their loads
    in flight, lost at 256 (0.21 -> 0.18), and the model keeps them at 512."""
    nbytes = layout.total * layout.unit
    efficiency = _efficiency(plan, layout, dst_residue, src_residue)
    best = plan, round(limits.predicted_fraction(plan, efficiency, nbytes), 2)
    threads = plan.block_threads // 2
    while threads >= MIN_TILE_THREADS and threads % WARP_SIZE == 0:
        candidate = dataclasses.replace(plan, block_threads=threads)
        fraction = round(limits.predicted_fraction(candidate, efficiency, nbytes), 2)
        if fraction >= best[1]:
            best = candidate, fraction
        threads //= 2
    return best[0]


def _efficiency(plan, layout: NormalizedLayout, dst_residue, src_residue) -> tuple[float, float]:
    """(reads, writes) bytes / (32 x sectors) the plan is predicted to reach: the sector model
    of a staged or packed copy, or the warps of its first SAMPLED_THREADS threads for the
    seed kernels."""
    if isinstance(plan, (TilePlan, PackedPlan)):
        read, write = (plan.sectors if isinstance(plan, PackedPlan) else
                       sectors.tile_plan_sectors(plan, dst_residue, src_residue))
        total = layout.total * layout.unit
        return total / (32 * max(read, 1)), total / (32 * max(write, 1))
    if isinstance(plan, GeneralRearrangePlan):
        dst, src = _first_offsets(SAMPLED_THREADS, plan.shape, plan.dst_strides, plan.src_strides)
    else:
        dst, src = [], []
        units = [tuple(int(d == k) for d in range(len(plan.block_len))) for k in range(len(plan.block_len))]
        thread_dst, thread_src, *index = _first_offsets(
            plan.block_elements, plan.block_len, plan.dst_block_stride, plan.src_block_stride,
            *units)
        idle = [None] * (plan.block_threads - plan.block_elements)
        for b in range(min(plan.grid_blocks, -(-SAMPLED_THREADS // plan.block_threads))):
            grid_index, block_dst, block_src = _offsets(b, plan.grid_len, plan.dst_grid_stride,
                                                        plan.src_grid_stride)
            inside = [all(grid_index[c.grid_idx] * c.grid_div_block + index[c.block_idx][t]
                          < c.total_len for c in plan.constraints)
                      for t in range(plan.block_elements)]
            dst += [block_dst + o if ok else None for o, ok in zip(thread_dst, inside)] + idle
            src += [block_src + o if ok else None for o, ok in zip(thread_src, inside)] + idle
    read = sectors.warp_sectors([None if a is None else a + src_residue for a in src], plan.unit)
    write = sectors.warp_sectors([None if a is None else a + dst_residue for a in dst], plan.unit)
    return tuple(b / (32 * s) if s else 1.0 for b, s in (read, write))


def _first_offsets(count, lengths, *strides):
    """For each strides tuple, the offsets of the first ``count`` indices of the C-order walk
    of ``lengths`` (last index fastest)."""
    out = [[0] for _ in strides]
    inner = 1
    for d in range(len(lengths) - 1, -1, -1):
        if inner >= count:
            break
        n = min(lengths[d], -(-count // inner))
        out = [[o + i * s[d] for i in range(n) for o in offsets] for s, offsets in zip(strides, out)]
        inner *= n
    return [offsets[:count] for offsets in out]


def _offsets(linear, lengths, dst_strides, src_strides):
    """``linear`` decomposed over ``lengths`` (last fastest): (indices, dst and src offsets)."""
    index, dst_offset, src_offset = [0] * len(lengths), 0, 0
    for d in range(len(lengths) - 1, -1, -1):
        linear, index[d] = divmod(linear, lengths[d])
        dst_offset += index[d] * dst_strides[d]
        src_offset += index[d] * src_strides[d]
    return index, dst_offset, src_offset
