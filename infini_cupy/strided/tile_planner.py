"""Staged-copy planning: when and how to copy a tile at a time through shared memory.

Pure Python, like :mod:`infini_cupy.strided.planner`, which calls :func:`plan_tiles` on its normalized
layout before falling back to the seed-style kernel matrix. Two layouts qualify:

- a **transpose**: the dim contiguous in dst (the innermost of the normalized layout, dst
  stride +-unit) is not the dim contiguous in src (the smallest non-zero |src stride|, equal to
  the unit). The seed kernel walks dst's dim with the threads of a warp, so each thread reads
  another source row: 1/8 of every fetched sector used for fp32. A tile read along src's dim
  and written along dst's fixes both sides.
- a **misaligned copy**: both contiguous dims are the same, but some rows on one side do not
  start on a 32-byte sector boundary (an offset slice, an odd row pitch), and rows span at
  least two warps' accesses (and 256 bytes): the seed kernel's warp accesses then each touch a
  sector more than their data fills (5 for 4 with 4-byte units). Staging lets each side align
  its own accesses, leaving one extra sector per row.

Kernel semantics of a :class:`TilePlan` (kernel ``tiled_copy<Unit, ReadVector, WriteVector,
Wide, Stacked>`` of ``kernels_src/transpose.cu``): launch ``grid_blocks`` blocks of ``block_threads``
threads over ``tiles = tiles0 * tiles1 * prod(batch_len)`` tiles (blocks loop with stride
``gridDim.x``). Tile ``b`` is ``b`` decomposed over ``(*batch_len, tiles0, tiles1)``, last
fastest; it covers ``i0 in [max(0, t0 * tile0 - shift0), min(len0, (t0 + 1) * tile0 -
shift0))`` and ``i1`` likewise, with the batch indices fixed. Each of its elements is copied once: ``unit`` bytes from
``src + src_offset + sum(index * src stride)`` to ``dst + dst_offset + sum(index * dst
stride)`` over dims 0, 1 and the batch dims. Phase 1 reads along dim ``read_along``,
``read_vector`` elements per access; phase 2 writes along dim 1, ``write_vector`` per access;
both start each row's accesses at the sector boundary below its lowest address (see
``TilePass`` in the kernel source), and where a side's rows start anywhere in a sector, a
row longer than a warp step takes whole warp steps (no step spans two rows of different
leads, whose slots would share banks). A side of 1-byte units with vector 1 (rows that
start anywhere in a word) moves aligned 4-byte **words** instead, a work item being word ``q``
of the virtual row: a word wholly inside the row is one access, a word at a row's end is read
whole where it lies inside the source's bytes (``src_lo``/``src_hi`` of the packed layout) and
otherwise, and always when written, unit by unit, so no byte outside the copy is written or
read from outside the source. Accesses narrower than 16 bytes take 32 consecutive
work items per warp step; 16-byte ones (``vector * unit == 16``, vector > 1) take 8 of each of
4 rows, the rows 1 apart on the side whose shared accesses step by the pitch and
``4 // unit`` apart on the other, so that with an odd pitch every warp access of shared memory
is free of bank conflicts. A phase whose rows are short (virtual rows of ``vl`` = 8 or 16
work items that all share their lead, ascending, not chained) covers ``K = 32 / vl`` rows per
warp step; with ``read_spread`` (``write_spread``) > 1, in the Grouped variants
(``tiled_copy<..., 1>``), those rows are ``spread`` apart: step ``G`` takes rows ``G // spread
* K * spread + k * spread + G % spread``, lane ``k * vl + q`` item ``q`` of row ``k``. With
``read_rows`` K > 1 (Grouped variants), phase 1's rows are C chunks of ``vl = 32 / K`` work
items (whole sectors, room for any lead) and its step ``g = G * C + c`` takes, lane ``k * vl
+ q``, item ``c * vl + q`` of the same row ``k`` of row group ``G``: a transposing read
beside a phase 2 of short rows laid out as one run (whose pitch must be their length modulo
32 words) then fills the banks. The planner picks the pitch, spreads and rows per step that leave
both phases conflict-free (:mod:`.tile_banks`). Each thread takes 4 warp steps at a time,
all global loads first.
Element ``(i0, i1)`` of a tile sits in shared memory at
``i0 * pitch + i1``, which must stay below the capacity of the variant (``Wide``). The kernel
splits tile numbers in 32 bits with multipliers the host computes: copies of 2^32 tiles or more
are not staged.

**Stacked tiles.** Small tiles spend most of a block's instructions on the tile's setup (its
index, the passes' row layouts) rather than on moving it. With ``stack > 1`` a block copies
``stack`` tiles one step apart along the innermost batch dim in each phase, locating its work
items once for all of them: the launch loops over ``tiles = tiles0 * tiles1 * prod(batch_len)``
with that dim's length counted in groups, ``ceil(len / stack)`` (the last group shorter), and
tile ``s`` of a group sits ``s * tile0 * pitch`` elements into shared memory. The planner
stacks where both sides' steps along that dim are whole sectors (every row of every stacked
tile then starts where the first tile's rows do) and enough groups remain to fill the GPU.

>>> plan = plan_tiles(4, (2048, 2048), (8192, 4), (4, 8192), 0, 0, 1024)   # fp32 transpose
>>> plan.kernel, (plan.tile0, plan.tile1), plan.pitch, plan.tiles
('tiled_copy<4, 4, 4, 0, 0>', (64, 64), 65, 1024)
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..perf import limits
from ..perf.devices import H100, SECTOR, WARP_SIZE
from ..perf.kernel_costs import kernel_cost
from . import tile_banks
from .layout import LaunchPlan

TILE_UNITS = (1, 2, 4, 8, 16)  # element sizes the family instantiates, bytes
MAX_BATCH_DIMS = 4  # TILE_BATCH_DIMS in transpose.cu
# Shared memory per block, bytes: TILE_COMPACT_BYTES and TILE_WIDE_BYTES in transpose.cu.
TILE_COMPACT_BYTES = 16896
TILE_WIDE_BYTES = 49152
TILE_ITEMS = 4  # warp steps a warp takes per round of a pass (TILE_ITEMS in transpose.cu)
COMPACT_THREADS = 256
WIDE_THREADS = 512  # per wide block, where the variant's registers allow (max_block_threads)
MISALIGNED_ROW_MIN_BYTES = 256  # shorter rows lose as much to their two ends as staging saves
MISALIGNED_MAX_UNIT = 8  # 16-byte units already cover 16 of every 17 sectors they touch
WORD_PITCH_MAX_ROWS = 128  # _word_pitch tries 4 alignments per row: more rows, more time
# Stacked tiles: at most MAX_STACK per block, and only while STACK_MIN_BLOCKS blocks remain
# (about 2 waves of 128-thread blocks on 132 SMs: stacking must not empty the GPU).
MAX_STACK = 16
STACK_MIN_BLOCKS = 4096


@dataclass(frozen=True)
class TilePlan(LaunchPlan):
    """A launch of ``tiled_copy<unit, read_vector, write_vector, wide, stack > 1>`` (semantics:
    module doc).

    unit: bytes per element (1, 2, 4, 8 or 16); ``dst_stride1 == unit``.
    read_vector, write_vector: elements per global access of phase 1 and phase 2: 16 bytes
        (or 4 for 1- and 2-byte elements) when every address of that side allows it, else 1
        (1-byte elements then move in aligned 4-byte words, see the module doc).
    wide: the variant with TILE_WIDE_BYTES of shared memory (else TILE_COMPACT_BYTES).
    len0, len1: lengths of the tiled dims; dim 1 is dst's contiguous dim.
    src_stride0, src_stride1, dst_stride0, dst_stride1: their byte strides.
    src_offset, dst_offset: bytes from each pointer to element 0 of the copy (dims whose stride
        the planner negated, to walk memory upwards, start at their far end).
    tile0, tile1: tile extents (elements); shift0, shift1: elements the first tile of each
        dim gives up (so later tiles start on sector boundaries); tiles0, tiles1: tiles along
        each dim, ``ceil((len + shift) / tile)``.
    pitch: shared-memory row pitch in elements (odd for transposes and for misaligned copies
        with 16-byte accesses: no bank conflicts; wider for wide transposes whose warp steps
        span two rows of the tile, see ``_wide_pitch``).
    read_along: 0 when phase 1 walks dim 0 (a transpose), 1 when it walks dim 1.
    read_chained, write_chained: the rows of phase 1 (phase 2) follow each other in memory, so
        the phase is one run (its along dim lies whole in the tile); never with 16-byte
        accesses, which walk each row on its own.
    read_uniform, write_uniform: the rows of phase 1 (phase 2) all start equally far into a
        sector (every other stride of that side a multiple of 32), so a warp's accesses need
        no room for rows starting anywhere else.
    batch_len, src_batch_stride, dst_batch_stride: the other dims (at most 4), outer -> inner.
    stack: tiles a block copies at once along the innermost batch dim (1: one at a time).
    tiles: tiles (groups of stacked tiles) to copy; block_threads: threads per block;
        grid_blocks: blocks to launch (``tiles``; 0 when there is nothing to copy).
    kernel: the name expression, ``tiled_kernel_name(unit, read_vector, write_vector, wide,
        stack > 1)``.
    read_spread, write_spread: where a phase's rows are short (virtual rows of 8 or 16 work
        items, uniform, not chained, accesses narrower than 16 bytes), a warp step takes its
        rows this many apart rather than consecutive (:mod:`.tile_banks`); 1 elsewhere.
    read_rows: K > 1 where a warp step of phase 1 (the transposing side) takes ``32 / K``
        lanes of each of K rows (``read_spread`` apart), so that a pitch of K times an odd
        number of words (modulo 32), which phase 2's chained rows need, leaves both
        conflict-free; 1
        elsewhere (Grouped variants only).
    """

    unit: int
    read_vector: int
    write_vector: int
    wide: bool
    len0: int
    len1: int
    src_stride0: int
    src_stride1: int
    dst_stride0: int
    dst_stride1: int
    src_offset: int
    dst_offset: int
    tile0: int
    tile1: int
    shift0: int
    shift1: int
    tiles0: int
    tiles1: int
    pitch: int
    read_along: int
    read_chained: bool
    write_chained: bool
    read_uniform: bool
    write_uniform: bool
    batch_len: tuple[int, ...]
    src_batch_stride: tuple[int, ...]
    dst_batch_stride: tuple[int, ...]
    stack: int
    tiles: int
    block_threads: int
    grid_blocks: int
    kernel: str
    read_spread: int = 1
    write_spread: int = 1
    read_rows: int = 1

    @property
    def capacity(self) -> int:
        """Elements of shared memory the variant declares."""
        return (TILE_WIDE_BYTES if self.wide else TILE_COMPACT_BYTES) // self.unit


def tiled_kernel_name(unit: int, read_vector: int, write_vector: int, wide: bool,
                      stacked: bool = False, grouped: bool = False) -> str:
    """Name expression of a staged-copy kernel: ``tiled_copy<Unit, RV, WV, Wide, Stacked>``,
    ``tiled_copy<Unit, RV, WV, Wide, Stacked, 1>`` for the variant that spreads short rows."""
    tail = ", 1" if grouped else ""
    return f"tiled_copy<{unit}, {read_vector}, {write_vector}, {int(wide)}, {int(stacked)}{tail}>"


def can_group(unit: int, vector: int) -> bool:
    """A side of this unit and vector walks 32 consecutive work items per warp step (not
    16-byte accesses, which take 4 rows, nor byte units moved in words): its short rows may
    be spread apart (a Grouped variant)."""
    return not (vector > 1 and vector * unit == 16) and not (unit == 1 and vector == 1)


def has_grouped_variant(unit: int, read_vector: int, write_vector: int,
                        wide: bool = False) -> bool:
    """A Grouped variant exists: a side can group (the other may move byte units in words).
    Wide ones (rows that start anywhere in a sector on one side) where phase 1 can: a
    transposing read of K rows per warp step (``TilePlan.read_rows``) beside the chained
    rows of phase 2."""
    return (can_group(unit, read_vector) or can_group(unit, write_vector)) \
        and (can_group(unit, read_vector) or not wide)


@functools.lru_cache(maxsize=None)
def max_block_threads(unit: int, read_vector: int, write_vector: int, wide: bool) -> int:
    """Threads per block a staged-copy variant is launched with, at most: WIDE_THREADS for
    wide tiles but where byte units move in 4-byte words (a side of vector 1: their work
    items are words), COMPACT_THREADS for the others; fewer where the registers of its sm_90
    code (``kernel_costs.json``, the Grouped variant's too: up to ~150 per thread for byte
    units) would not fit a block in the 64 K registers of an SM."""
    names = [tiled_kernel_name(unit, read_vector, write_vector, wide)]
    if has_grouped_variant(unit, read_vector, write_vector, wide):
        names.append(tiled_kernel_name(unit, read_vector, write_vector, wide, grouped=True))
    try:
        registers = max(kernel_cost(name).registers for name in names)
    except KeyError:  # not recorded yet (a new variant): the most a thread may take
        registers = 255
    per_thread = -(-registers // 8) * 8  # allocated 8 at a time
    fit = H100.registers_per_sm // per_thread // WARP_SIZE * WARP_SIZE
    words = unit == 1 and 1 in (read_vector, write_vector)
    return min(WIDE_THREADS if wide and not words else COMPACT_THREADS, fit)


def vector_widths(unit: int) -> tuple[int, ...]:
    """Elements per global access a side may use: 4- and 16-byte accesses for 1- and 2-byte
    units, 16-byte ones for 4-byte units (8- and 16-byte units are one access each)."""
    return (1, 4 // unit, 16 // unit) if unit < 4 else (1, 16 // unit) if unit == 4 else (1,)


def warp_row(unit: int, vector: int) -> int:
    """Elements of one row a warp step covers: 16-byte accesses take 8 lanes of 4 rows
    (``TilePass`` with R == 4 in the kernel), narrower ones 32 lanes of one row."""
    return (8 if vector > 1 and vector * unit == 16 else 32) * vector


def all_tiled_kernel_names() -> tuple[str, ...]:
    """Every staged-copy name expression the planner can return (121: stacked tiles only in
    the compact variant; Grouped ones, compact, stacked and wide, see
    :func:`has_grouped_variant`)."""
    return tuple(
        tiled_kernel_name(unit, rv, wv, wide, stacked, grouped)
        for unit in TILE_UNITS
        for rv in vector_widths(unit)
        for wv in vector_widths(unit)
        for wide, stacked, grouped in ((False, False, False), (True, False, False),
                                       (False, True, False), (False, False, True),
                                       (True, False, True), (False, True, True))
        if not grouped or has_grouped_variant(unit, rv, wv, wide)
    )


def _row_skew(shape, strides, residue, along) -> int | None:
    """Where in its sector (bytes) the lowest address of every row along dim ``along`` lies,
    when all rows agree (every other stride a multiple of 32); None when they differ."""
    if any(s % SECTOR for i, (n, s) in enumerate(zip(shape, strides)) if i != along and n > 1):
        return None
    low = residue + ((shape[along] - 1) * strides[along] if strides[along] < 0 else 0)
    return low % SECTOR


def _shift(length, extent, skew, unit) -> int:
    """Elements the first tile of a dim gives up so that every later tile starts on a sector
    boundary of rows whose first element sits ``skew`` bytes into its sector (0 when the
    extent is not whole sectors or the rows disagree)."""
    sector_elems = SECTOR // unit
    if skew is None or extent >= length or extent % sector_elems:
        return 0
    return skew // unit % sector_elems


def _vector(unit, shape, strides, residue, along) -> int:
    """The widest access of vector_widths(unit) that every element of the side allows."""
    for v in reversed(vector_widths(unit)):
        width = v * unit
        if (
            v == 1
            or strides[along] == unit
            and shape[along] % v == 0
            and residue % width == 0
            and all(s % width == 0 for i, (n, s) in enumerate(zip(shape, strides)) if i != along and n > 1)
        ):
            return v
    return 1  # pragma: no cover - v == 1 always qualifies


def _tile_vector(vector, length, tile, shift) -> int:
    """``vector`` when every tile along a dim of ``length`` starts and ends on a whole
    vector (tiles of ``tile`` elements, the first ``shift`` short), else 1."""
    if vector == 1 or -(-(length + shift) // tile) == 1:
        return vector  # one tile: the whole dim, whose start and length _vector checked
    return vector if tile % vector == 0 and shift % vector == 0 else 1


def _short_row_vector(unit, vector, row, chained, skew) -> int:
    """``vector``, or the next narrower width where 16-byte accesses (which walk each row on
    its own, 8 lanes to a row) would find rows of ``row`` elements shorter than those 8 lanes'
    128 bytes, or chained rows that do not each start and end on sector boundaries (``skew``:
    where in its sector every row starts, None when rows differ)."""
    if vector * unit == 16 and vector > 1 and (
        row * unit < 128 or chained and (skew != 0 or row * unit % SECTOR)
    ):
        return 4 // unit if unit < 4 else 1
    return vector


def _stack(length: int, src_step: int, dst_step: int, tiles: int, room: int) -> int:
    """Tiles to stack along a batch dim of ``length`` (byte steps ``src_step``, ``dst_step``):
    as many as ``room`` (tiles shared memory holds) and MAX_STACK allow while at least
    STACK_MIN_BLOCKS blocks remain, in groups of equal size but the last; 1 where a step is not
    whole sectors."""
    if src_step % SECTOR or dst_step % SECTOR:
        return 1
    most = min(length, MAX_STACK, room, tiles // STACK_MIN_BLOCKS)
    if most <= 1:
        return 1
    return -(-length // -(-length // most))  # the same groups, spread evenly


def _round_down(n: int, granule: int) -> int:
    return max(granule, n // granule * granule)


def _balanced(length: int, limit: int, granule: int) -> int:
    """An extent <= limit (a multiple of granule unless it is the whole length) splitting
    ``length`` into tiles of nearly equal size, so the last tile's short rows do not drag the
    sector efficiency down."""
    if length <= limit:
        return length
    limit = _round_down(limit, granule)
    count = -(-length // limit)
    extent = -(-(-(-length // count)) // granule) * granule
    return min(extent, limit)


def _transpose_extents(len0, len1, capacity, granule0, granule1) -> tuple[int, int]:
    """Tile extents (dim 0 = src-contiguous, dim 1 = dst-contiguous) fitting
    ``tile0 * (tile1 | 1) <= capacity``, as square as the lengths allow."""
    side = math.isqrt(capacity - math.isqrt(capacity))  # leaves room for the pitch's +1
    if len1 <= side:
        tile1 = len1
        tile0 = _balanced(len0, capacity // (tile1 | 1), granule0)
    elif len0 <= side:
        tile0 = len0
        tile1 = _balanced(len1, capacity // tile0 - 1, granule1)
    else:
        tile0 = _balanced(len0, side, granule0)
        tile1 = _balanced(len1, side, granule1)
    return tile0, tile1


def _wide_pitch(tile0, tile1, unit, capacity, read_chained, write_vector) -> int | None:
    """A pitch (>= tile1, elements) for wide transposes of 2- and 4-byte units read one unit
    at a time whose warp steps span two or more rows of the tile (rows of virtual length not a
    multiple of 32 items), or None for ``tile1 | 1``. (Byte units move in 4-byte words, whose
    lanes an odd pitch spreads best.)

    An odd pitch spreads one row's 32 consecutive items over the banks, but the tail of one
    row and the head of the next then share banks. A chained read of ``tile0`` short rows
    puts 32 items on about ``ceil(32 / tile0)`` consecutive words of each of its ``tile0``
    columns: a pitch of that many words (one more for units under 4 bytes, whose runs may
    straddle a word) lays the columns side by side. Unaligned rows on both sides (each row's
    lead differs) land on disjoint banks with a pitch of 15 words modulo 32 (an odd number of
    words, half the banks from the next row's start)."""
    if tile1 * unit < 128 or unit > 4:
        return None
    if read_chained and tile0 >= 3:
        words = -(-(-(-32 // tile0) * unit) // 4) + (unit < 4)
    elif not read_chained and write_vector == 1 and unit > 1:
        words = 15
    else:
        return None
    step = 128 // unit  # elements per 32 words
    target = words * 4 // unit
    pitch = tile1 + (target - tile1) % step
    return pitch if tile0 * pitch <= capacity else None


def _word_pitch(tile0, tile1, unit, capacity) -> int | None:
    """A pitch (>= tile1, elements) for a chained transposing read of byte units in 4-byte
    words (``tile0`` short rows one run), or None for ``tile1 | 1``.

    A warp's 32 words hold ``128 / unit`` consecutive elements of the run; the k-th unit of
    each word goes to shared memory in one instruction, at slot ``e // tile0 + (e % tile0) *
    pitch`` for run element ``e``: one column of slots per residue ``e % tile0``, each a few
    consecutive words long (or, for rows of 32 and more, a warp's words over a few columns).
    The pitch that lays those columns side by side over the 32 banks is found by trying the
    next ``128 / unit`` pitches (a bank's pattern repeats after them) on every alignment of a
    warp step: the first with no bank serving two words, else the one with the fewest."""
    if tile0 > WORD_PITCH_MAX_ROWS:  # the alignments to try grow with the rows
        return None
    pitch = tile1 + _word_pitch_offset(tile0, tile1 % (128 // unit), unit)
    return pitch if tile0 * pitch <= capacity else None


@functools.lru_cache(maxsize=256)
def _word_pitch_offset(tile0, residue, unit) -> int:
    """d of the best pitch ``residue + d`` modulo ``128 / unit`` for :func:`_word_pitch`."""
    per_word = 4 // unit
    period = 128 // unit
    # run elements of every alignment (the pattern repeats every 4 * tile0 elements) and
    # unit k of each of a warp's 32 words: (alignments x per_word, 32)
    e = (np.arange(4 * tile0)[:, None, None] + np.arange(per_word)[None, :, None]
         + per_word * np.arange(32)[None, None, :]).reshape(-1, 32)
    rows = np.arange(e.shape[0])[:, None]
    best = None
    for d in range(period):
        pitch = residue + d + 64 * period  # the banks of tile1 + d, columns far apart
        words = np.sort((e // tile0 + e % tile0 * pitch) * unit // 4, axis=1)
        repeat = np.zeros(words.shape, bool)
        repeat[:, 1:] = words[:, 1:] == words[:, :-1]  # one word read by two lanes: once
        banks = tile_banks.BANKS
        bank = np.where(repeat, banks, words % banks)
        counts = np.bincount((rows * (banks + 1) + bank).ravel(), minlength=rows.size * (banks + 1))
        worst = int(counts.reshape(-1, banks + 1)[:, :banks].max())
        if best is None or worst < best[0]:
            best = worst, d
        if worst == 1:
            break
    return best[1]


def _tile_pass(unit, vector, chained, skew, extent, shift, tiles, rows, along_pitch, stride,
               row_stride):
    """One phase over a full tile as :mod:`.tile_banks` models it (rows of ``extent``
    elements, ``rows`` of them, ``tiles`` tiles along the dim), or None where it does not:
    descending rows (``stride`` < 0), or rows that start anywhere in a sector (``skew`` None)
    and share warp steps (short, separate rows: their banks depend on each row's lead). The
    rows' lead is a later tile's where the dim has several (tiles then start ``shift``
    elements early, on sector boundaries when the extent is whole sectors), else the
    first's; where it is not, the rows ``row_stride`` bytes apart give each row's lead past
    the one before's. Byte units one at a time move in 4-byte words (``words``)."""
    if stride < 0:
        return None
    words = unit == 1 and vector == 1
    rows_per_step = 4 if vector > 1 and vector * unit == 16 else 1
    fixed = 1 if along_pitch else max(1, 4 // unit)
    if skew is None:
        lead_step = row_stride % SECTOR // (vector * unit)
        modelled = tile_banks.TilePass(rows, extent, vector, rows_per_step, fixed, chained, 0,
                                       along_pitch, uniform=False, words=words,
                                       lead_step=lead_step)
        short = rows_per_step == 1 and not chained and modelled.virtual_row(unit) <= 32
        return None if short else modelled
    start = skew + ((extent - shift) * unit if tiles > 1 else 0)
    lead = start % SECTOR // (vector * unit)
    return tile_banks.TilePass(rows, extent, vector, rows_per_step, fixed, chained, lead,
                               along_pitch, words=words)


def _spread(unit, read_pass, write_pass, pitch, tile0, tile1, capacity, wide, read_chained,
            write_chained, row_groups=True):
    """(pitch, read spread, write spread, read rows, read chained, write chained) from
    :func:`.tile_banks.spread_layout` where a pass has rows to group (short rows spread apart;
    K rows per warp step on the transposing side; a chained pass of rows that are whole
    sectors may walk them row by row instead, at no cost in sectors), else ``(pitch, 1, 1,
    1)`` and the passes' own chaining."""
    unchanged = pitch, 1, 1, 1, read_chained, write_chained
    if read_pass is None or write_pass is None:
        return unchanged
    if (read_pass.words or write_pass.words) and not any(
            len(tile_banks.options(unit, p, row_groups)) > 1 for p in (read_pass, write_pass)):
        return unchanged  # a pitch alone seldom mends words' conflicts, and costs the search
    # Within the split's share of shared memory, or what the tile already takes beyond it.
    room = max(capacity, tile0 * pitch)
    pitch, read_spread, write_spread, read_pass, write_pass = tile_banks.spread_layout(
        unit, (read_pass, write_pass), pitch, room, tile0, least_pitch=tile1,
        row_groups=row_groups)
    if read_pass.grouped:  # K rows per step (only phase 1, the transposing side, takes them)
        read_rows, read_spread = read_pass.rows_per_step, read_pass.fixed_spread
    else:
        read_rows = 1
    if max(read_spread, write_spread, read_rows) == 1:
        return pitch, 1, 1, 1, read_pass.chained, write_pass.chained
    if not has_grouped_variant(unit, read_pass.vector, write_pass.vector, wide):
        return unchanged
    return pitch, read_spread, write_spread, read_rows, read_pass.chained, write_pass.chained


def _flip(dim, shape, dst_strides, src_strides, offsets):
    """Walk ``dim`` backwards: same copy, strides negated, element 0 at the far end."""
    n = shape[dim]
    offsets[0] += (n - 1) * dst_strides[dim]
    offsets[1] += (n - 1) * src_strides[dim]
    dst_strides[dim] = -dst_strides[dim]
    src_strides[dim] = -src_strides[dim]


def plan_tiles(unit, shape, dst_strides, src_strides, dst_residue, src_residue, max_threads,
               split=1):
    """A :class:`TilePlan` for a normalized layout, or None when staging does not pay.

    ``shape``/strides: the normalized layout (:func:`infini_cupy.strided.layout.normalize_layout`:
    no length-1 dims, ordered by |dst stride| descending, unit-contiguous dims folded).
    ``dst_residue``/``src_residue``: the addresses modulo 32. ``max_threads``: thread budget.
    ``split``: tiles of at most ``1 / split`` of the variant's shared memory (more, smaller
    tiles: the planner's remedy for grids that leave SMs idle at the end).
    """
    ndim = len(shape)
    if unit not in TILE_UNITS or ndim == 0 or 0 in shape:
        return None
    dim1 = ndim - 1  # dst-contiguous
    if abs(dst_strides[dim1]) != unit:
        return None
    readable = [i for i in range(ndim) if src_strides[i] != 0]
    if not readable:
        return None
    src_dim = min(readable, key=lambda i: (abs(src_strides[i]), i != dim1, -i))
    if abs(src_strides[src_dim]) != unit:
        return None
    dst_strides, src_strides = list(dst_strides), list(src_strides)
    offsets = [0, 0]  # dst, src
    transpose = src_dim != dim1
    if transpose:
        dim0, read_along = src_dim, 0
        if src_strides[dim0] < 0:
            _flip(dim0, shape, dst_strides, src_strides, offsets)
        if dst_strides[dim1] < 0:
            _flip(dim1, shape, dst_strides, src_strides, offsets)
    else:
        # A row one warp covers loses one sector either way: staging pays from two.
        row_bytes = shape[dim1] * unit
        if unit > MISALIGNED_MAX_UNIT or row_bytes < max(MISALIGNED_ROW_MIN_BYTES, 64 * unit):
            return None
        if _row_skew(shape, dst_strides, dst_residue, dim1) == 0 == _row_skew(
            shape, src_strides, src_residue, dim1
        ):
            return None  # the seed kernel's warps already cover whole sectors on both sides
        if dst_strides[dim1] < 0:
            _flip(dim1, shape, dst_strides, src_strides, offsets)
        dim0 = dim1 - 1 if ndim > 1 else None
        read_along = 1
    batch = [i for i in range(ndim) if i not in (dim0, dim1)]
    if len(batch) > MAX_BATCH_DIMS:
        return None
    dst_residue = (dst_residue + offsets[0]) % SECTOR
    src_residue = (src_residue + offsets[1]) % SECTOR
    read_dim = dim0 if transpose else dim1
    read_vector = _vector(unit, shape, src_strides, src_residue, read_dim)
    write_vector = _vector(unit, shape, dst_strides, dst_residue, dim1)

    def dim_fields(i):  # (len, src stride, dst stride); a missing dim 0 has length 1
        return (1, 0, 0) if i is None else (shape[i], src_strides[i], dst_strides[i])

    len0, src_stride0, dst_stride0 = dim_fields(dim0)
    len1, src_stride1, dst_stride1 = dim_fields(dim1)
    sector_elems = SECTOR // unit
    dst_skew = _row_skew(shape, dst_strides, dst_residue, dim1)
    src_skew = _row_skew(shape, src_strides, src_residue, read_dim)
    if transpose:
        # Rows that disagree in alignment lose a partial sector at both ends of every run:
        # longer runs (wider tiles) make that a smaller part.
        wide = src_skew is None or dst_skew is None
        capacity = (TILE_WIDE_BYTES if wide else TILE_COMPACT_BYTES) // unit // split
        # Where rows share their alignment, tile edges fall on sector boundaries and rows are
        # whole warps of accesses (no warp straddles two rows: fewer bank conflicts).
        granule0 = max(sector_elems, warp_row(unit, read_vector)) if src_skew is not None else read_vector
        granule1 = max(sector_elems, warp_row(unit, write_vector)) if dst_skew is not None else write_vector
        tile0, tile1 = _transpose_extents(len0, len1, capacity, granule0, granule1)
        shift0 = _shift(len0, tile0, src_skew, unit)
        read_chained = tile0 == len0 and src_stride1 == len0 * unit
        pitch = tile1 | 1  # or a wider one below, once the vectors are known
    else:
        wide = False
        capacity = TILE_COMPACT_BYTES // unit // split
        # 16-byte accesses take 4 rows (4 // unit apart) per warp step: an odd pitch spreads
        # them over the banks, and a tile of that many rows keeps the lanes busy.
        odd = max(read_vector, write_vector) * unit == 16
        rows = min(len0, 4 * max(1, 4 // unit)) if odd else 1
        tile1 = _balanced(len1, capacity // rows - odd, max(sector_elems, read_vector, write_vector))
        pitch = tile1 | 1 if odd else tile1
        tile0 = min(len0, capacity // pitch)
        shift0 = 0
        read_chained = tile1 == len1 and src_stride1 == unit and src_stride0 == len1 * unit
    shift1 = _shift(len1, tile1, dst_skew, unit)
    # A side's vector must fit every tile's rows, not just element 0's: tile edges fall at
    # t * tile - shift along the dim the side walks, and the shift of dim 1 follows dst's
    # sectors, so a misaligned copy's src rows can start off the vector (float16 src read
    # 4 bytes at a time from the second tile on, 2 bytes past it: a misaligned access).
    read_tile, read_shift = (tile0, shift0) if transpose else (tile1, shift1)
    read_vector = _tile_vector(read_vector, len0 if transpose else len1, read_tile, read_shift)
    write_vector = _tile_vector(write_vector, len1, tile1, shift1)
    # 16-byte accesses walk 4 rows per warp step, each row on its own: rows shorter than the
    # 128 bytes a warp step gives a row would leave lanes idle, so those take narrower ones.
    # Rows that follow each other in memory but do not each fill whole sectors are better
    # copied as one run (chained) with narrower accesses than row by row.
    write_chained = tile1 == len1 and dst_stride0 == len1 * unit
    read_vector = _short_row_vector(unit, read_vector, read_tile, read_chained, src_skew)
    write_vector = _short_row_vector(unit, write_vector, tile1, write_chained, dst_skew)
    read_chained = read_chained and warp_row(unit, read_vector) == 32 * read_vector
    write_chained = write_chained and warp_row(unit, write_vector) == 32 * write_vector
    if transpose and read_vector == 1 and unit == 1 and read_chained and tile0 > 1:
        pitch = _word_pitch(tile0, tile1, unit, capacity) or pitch
    elif transpose and wide and read_vector == 1 and unit >= 2:
        pitch = _wide_pitch(tile0, tile1, unit, capacity, read_chained, write_vector) or pitch
    tiles0, tiles1 = -(-(len0 + shift0) // tile0), -(-(len1 + shift1) // tile1)
    read_tiles, read_stride = (tiles0, src_stride0) if transpose else (tiles1, src_stride1)
    read_pass = _tile_pass(unit, read_vector, read_chained, src_skew, read_tile, read_shift,
                           read_tiles, tile1 if transpose else tile0, transpose, read_stride,
                           src_stride1 if transpose else src_stride0)
    write_pass = _tile_pass(unit, write_vector, write_chained, dst_skew, tile1, shift1, tiles1,
                            tile0, False, dst_stride1, dst_stride0)
    grouped = _spread(unit, read_pass, write_pass, pitch, tile0, tile1, capacity, wide,
                      read_chained, write_chained)
    tiles = tiles0 * tiles1 * math.prod(shape[i] for i in batch)
    if tiles >= 2**32:
        return None  # the kernel counts tiles in 32 bits (the seed kernels take it)
    budget = max(32, max_threads - max_threads % 32)
    # Warps enough for one round of TILE_ITEMS warp steps each: a thread of a smaller tile's
    # block would spend its per-tile instructions on fewer items.
    work = max(tile0 * tile1 // min(read_vector, write_vector), 1)
    threads = min(max_block_threads(unit, read_vector, write_vector, wide), budget,
                  -(-work // (32 * TILE_ITEMS)) * 32)

    def launch(pitch, read_spread, write_spread, read_rows, read_chained, write_chained):
        count, stack = tiles, 1
        if batch and split == 1 and not wide:
            inner = batch[-1]
            stack = _stack(shape[inner], src_strides[inner], dst_strides[inner], count,
                           TILE_COMPACT_BYTES // unit // (tile0 * pitch))
            count = count // shape[inner] * -(-shape[inner] // stack)
        return TilePlan(
            unit, read_vector, write_vector, wide,
            len0, len1, src_stride0, src_stride1, dst_stride0, dst_stride1,
            offsets[1], offsets[0], tile0, tile1, shift0, shift1, tiles0, tiles1, pitch,
            read_along, read_chained, write_chained, src_skew is not None, dst_skew is not None,
            tuple(shape[i] for i in batch),
            tuple(src_strides[i] for i in batch),
            tuple(dst_strides[i] for i in batch),
            stack=stack, tiles=count, block_threads=threads, grid_blocks=count,
            kernel=tiled_kernel_name(unit, read_vector, write_vector, wide, stack > 1,
                                     max(read_spread, write_spread, read_rows) > 1),
            read_spread=read_spread, write_spread=write_spread, read_rows=read_rows,
        )  # fmt: skip

    plan = launch(*grouped)
    if plan.read_rows > 1:
        # K rows per step cost the walk instructions per tile: on small tiles more than the
        # bank conflicts they remove, which the model finds not limiting there.
        plain = launch(*_spread(unit, read_pass, write_pass, pitch, tile0, tile1, capacity,
                                wide, read_chained, write_chained, row_groups=False))
        nbytes = math.prod(shape) * unit
        if limits.predicted_fraction(plan, (1.0, 1.0), nbytes) < \
                limits.predicted_fraction(plain, (1.0, 1.0), nbytes):
            return plain
    return plan
