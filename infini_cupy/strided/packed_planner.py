"""Packed staged copies: tiles spanning several whole dims on each side (and a chunk of at
most one more dim per side, cuTT's "packed-split"), for permutations whose contiguous dims
are short.

Pure Python, like :mod:`.tile_planner`; :mod:`.planner` calls :func:`plan_packed` on its
normalized layout and takes the packed plan when the sector model (:mod:`infini_cupy.perf.sectors`) predicts it
coalesces better than the staged-copy or seed plan it would launch otherwise, and
:mod:`infini_cupy.perf.limits` predicts it faster (its table-driven walk issues about 8 instructions
per byte for 1-byte elements, 7 for 2-byte ones, 6 for 4-byte ones; 1- and 2-byte plans
only where both phases move words, :func:`words_on_both`).

A tile is a box of *tile dims*: the innermost dims of the source in memory order, united with
the innermost dims of the destination. Dims that chain in one side's memory (each stride the
previous stride times its length) form that side's *run*, a stretch contiguous in its memory;
the other tile dims are the run's *rows*. A dim too long to fit whole is cut into chunks: the
tile takes one chunk of it, the chunk index becoming an outer dim (walked by the blocks with
the dims the tile leaves out).

Kernel semantics of a :class:`PackedPlan` (kernel ``packed_copy<Unit, D, Wide>`` of
``kernels_src/packed.cu``): block ``b`` of a grid-stride loop over ``tiles`` decomposes ``b``
over ``outer_len`` (last fastest) for its base offsets (sums of index times stride, plus
``src_offset``/``dst_offset``) and the chunk index of each split dim. Phase 1 walks the tile in
source order: rows (the read side's dims after ``read.run``, first fastest) of runs (its first
``read.run`` dims, first fastest); each run is a *virtual row* starting at the sector boundary
at or below its lowest address (``aligned``; else rows follow each other densely), so a warp's
32 consecutive work items cover whole sectors of a run; a work item is a ``WORD_BYTES`` word
of 1- or 2-byte units where the side's ``words`` says so, else one unit. Each element is
loaded and stored in shared memory at slot ``sum(index * slot + (index >> group_shift) *
group_pad)``, the row part and the run part looked up in the tables the block writes at the
tile's start (``rows_at``, ``run_at``; ``table_bytes`` after the tile). After a barrier,
phase 2 walks the tile likewise in destination order, loading shared slots and storing them
to dst; a barrier ends the tile. A split dim's tile length is ``min(chunk, full - chunk index
* chunk)``; the rest of a chunk is not copied. Slots are the destination-order position of an
element in a tile of full chunks, the stride of one dim padded (:mod:`.packed_banks`) where
that spreads the source-order stores over the shared-memory banks, below ``tile_elements``;
the tile and its tables fit the variant's capacity (``Wide``). Each thread takes 2 to 4 work
items per round, its global loads issued first.

>>> from infini_cupy.strided.layout import normalize_layout
>>> layout = normalize_layout((3, 4, 7, 53, 9), (4, 12, 48, 336, 17808),
...                           (53424, 13356, 1908, 36, 4), 4)    # row- to column-major, fp32
>>> plan = plan_packed(layout, 0, 0, 1024)
>>> plan.kernel, plan.read.length, plan.write.length, plan.outer_len, plan.predicted
('packed_copy<4, 8, 1>', (9, 14, 7, 4, 3), (3, 4, 7, 14, 9), (4,), (0.9446, 0.9968))
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..perf import sectors as sm
from .layout import LaunchPlan, NormalizedLayout
from .packed_banks import WORD_BYTES, padded_stride, units_per_item, wavefront_ratio

PACKED_UNITS = (1, 2, 4, 8, 16)  # element sizes the family instantiates, bytes
DIM_BUCKETS = (4, 8)  # template D: tile dims the kernel's loops unroll to
TILE_DIMS = DIM_BUCKETS[-1]  # PACKED_TILE_DIMS in packed.cu
OUTER_DIMS = 12  # PACKED_OUTER_DIMS in packed.cu
# Shared memory per block, bytes: PACKED_COMPACT_BYTES and PACKED_WIDE_BYTES in packed.cu.
PACKED_COMPACT_BYTES = 8192
PACKED_WIDE_BYTES = 49152
DYNAMIC = 2  # Wide of the variant whose tile is the launch's dynamic shared memory
# Larger tiles (dynamic shared memory) are tried in steps of this many bytes, the smallest
# reaching LARGE_TARGET of the sector limit on both sides taken (fewer bytes: more blocks
# per SM); a plan below the target takes them only when the budget allows (see plan_large).
LARGE_STEP = 16384
LARGE_TARGET = 0.9
# The most dynamic shared memory a tile takes, whatever the device allows: 160 KiB, which an
# A100 (163 KiB) and an H100 (227 KiB) let a block opt in to; beyond, too few blocks fit an
# SM to keep its loads in flight.
LARGE_MAX_BYTES = 163840
MAX_THREADS = 512  # PACKED_MAX_THREADS in packed.cu: its __launch_bounds__
ITEMS_PER_THREAD = 4  # work items (per phase) a thread takes, about
# Bank conflicts (wavefronts over the ideal, by the bank model) a plan of 1- or 2-byte units
# may have and still be weighed by the recorded costs, which assume none.
MILD_CONFLICTS = 1.25
NEAR_BEST = 0.005  # candidates this close to the best predicted ratio count as equally good
MAX_CHUNK_COUNTS = 12  # double splits try each dim cut into at most this many chunks
# A rival plan this close to its sector limit on both sides is kept (the staged transpose
# issues vector accesses and less index arithmetic); below, a packed plan predicted to do
# better by MARGIN replaces it.
RIVAL_GOOD = 0.95
MARGIN = 0.01


@dataclass(frozen=True)
class PackedSide:
    """One phase's walk of a tile: the tile dims in that side's memory order, innermost first.

    length: elements of each dim in a tile (a split dim: its chunk).
    full: each dim's whole length (``length`` unless the dim is split).
    chunk_of: -1, or which split (0 or 1: ``PackedPlan.split_outer``) holds the chunk index.
    stride: bytes between consecutive indices in this side's memory.
    slot: shared-memory slot stride (the dim's stride in the destination-order tile).
    run: the first ``run`` dims chain in memory (the first one's stride is +-unit): a run.
    aligned: runs are virtual rows starting at sector boundaries (else items are dense).
    uniform: every run of the launch starts equally far into a sector (its other strides are
        multiples of 32 bytes), so virtual rows need no room for other leads.
    rows_at, run_at: bytes into the block's shared memory of this phase's row table (a row's
        byte offset and first slot, 8 bytes per row) and run table (the slot of each run
        position, 4 bytes), which the kernel writes per tile; each 16-byte aligned.
    words: the work items of virtual rows are WORD_BYTES words (1- and 2-byte units), where
        every run starts on a word boundary (and, on the destination side, ends on one: a
        word cut by a run's end is written unit by unit, which costs accesses; the source
        reads it whole inside the source's bytes).
    contiguous: phase 2 of words whose run's slots are its positions (ascending) and whose rows
        start on 4-byte words: a word's units are read from shared memory as two words, and
        the phase needs no run table.
    group_shift, group_pad: index k of each dim adds ``(k >> group_shift) * group_pad`` slots
        to ``k * slot`` (0: none): padding every few indices of a dim, which spreads the units
        of a warp's words (a word's k-th units, 8 bytes apart) over the banks.
    """

    length: tuple[int, ...]
    full: tuple[int, ...]
    chunk_of: tuple[int, ...]
    stride: tuple[int, ...]
    slot: tuple[int, ...]
    run: int
    aligned: bool
    uniform: bool
    rows_at: int = 0
    run_at: int = 0
    words: bool = False
    contiguous: bool = False
    group_shift: tuple[int, ...] = ()
    group_pad: tuple[int, ...] = ()


@dataclass(frozen=True)
class PackedPlan(LaunchPlan):
    """A launch of ``packed_copy<unit, dims, wide>`` (semantics: module doc).

    unit: bytes per element (1, 2, 4, 8 or 16).
    dims: the template's tile-dim bucket (4 or 8), at least the tile's dims.
    wide: 0 for the variant with PACKED_COMPACT_BYTES of shared memory, 1 for PACKED_WIDE_BYTES, 2
        (DYNAMIC) for ``shared_bytes`` of dynamic shared memory.
    read, write: the walks of phase 1 (source order) and phase 2 (destination order).
    outer_len, outer_src_stride, outer_dst_stride: the dims the blocks walk (a split dim's
        chunk index among them, its strides times the chunk), outer -> inner.
    split_outer: the position in ``outer_len`` of each split dim's chunk index (at most 2).
    src_offset, dst_offset: bytes from each pointer to element 0 of the copy.
    tile_elements: shared slots a tile spans (the product of the tile lengths, more where a
        slot stride is padded against bank conflicts).
    table_bytes: shared memory the phases' tables take after the tile (at
        ``tile_bytes(tile_elements, unit)``).
    wavefronts: the bank model's shared-memory wavefronts per warp access of the tile over
        the conflict-free ideal (:func:`.packed_banks.wavefront_ratio`).
    sectors: (reads, writes) sectors the sector model predicts the launch's warp accesses
        touch, each counted once per access.
    predicted: (reads, writes) ratio of the sector model's estimate of the sector limit (the
        sectors of the best possible walk) to ``sectors``: 1.0 when each side is as coalesced
        as its layout allows.
    tiles: tiles to copy, the product of ``outer_len``; block_threads: threads per block;
        grid_blocks: blocks to launch (``tiles``; 0 when there is nothing to copy).
    kernel: the name expression, ``packed_kernel_name(unit, dims, wide)``.
    """

    unit: int
    dims: int
    wide: int
    read: PackedSide
    write: PackedSide
    outer_len: tuple[int, ...]
    outer_src_stride: tuple[int, ...]
    outer_dst_stride: tuple[int, ...]
    split_outer: tuple[int, ...]
    src_offset: int
    dst_offset: int
    tile_elements: int
    table_bytes: int
    wavefronts: float
    sectors: tuple[int, int]
    predicted: tuple[float, float]
    tiles: int
    block_threads: int
    grid_blocks: int
    kernel: str

    @property
    def capacity(self) -> int:
        """Bytes of shared memory the variant has."""
        if self.wide == DYNAMIC:
            return self.shared_bytes
        return PACKED_WIDE_BYTES if self.wide else PACKED_COMPACT_BYTES

    @property
    def footprint(self) -> int:
        """Bytes of shared memory the tile and its tables take."""
        return tile_bytes(self.tile_elements, self.unit) + self.table_bytes

    @property
    def shared_bytes(self) -> int:
        """Dynamic shared memory per block the launch asks for (0: static variants)."""
        return -(-self.footprint // 16) * 16 if self.wide == DYNAMIC else 0


def tile_bytes(elements: int, unit: int) -> int:
    """Shared memory a tile of ``elements`` slots takes, rounded to 16 bytes (its tables
    follow)."""
    return -(-elements * unit // 16) * 16


def row_table_bytes(rows: int) -> int:
    """Bytes of a row table: 8 per row (its offset and first slot), rounded to 16."""
    return -(-8 * rows // 16) * 16


def run_table_bytes(run: int) -> int:
    """Bytes of a run table: 4 per run position (its slot), in groups of 8 (32 bytes: a work
    item reads its 1, 2, 4 or 8 entries by aligned 16-byte shared accesses; the table of
    8-unit words is two planes of half-groups, see ``PackedPass::run_index``)."""
    return -(-run // 8) * 32


def words_on_both(plan: PackedPlan) -> bool:
    """Both phases move the words the family's recorded costs assume (always, for units of 4
    bytes or more; 1- and 2-byte units: where runs start on word boundaries, and phase 2 also
    reads its words as two shared words), with at most MILD_CONFLICTS bank conflicts. Elsewhere
    a phase walks unit by unit or through its rare path, at several times the recorded
    instructions per byte, or queues on the banks, so the planner does not weigh such a plan by
    those costs (it keeps the rival plan)."""
    if plan.unit >= 4:
        return True
    return (plan.read.words and plan.write.words and plan.write.contiguous
            and plan.wavefronts <= MILD_CONFLICTS)


def packed_kernel_name(unit: int, dims: int, wide: int) -> str:
    """Name expression of a packed staged copy: ``packed_copy<Unit, D, Wide>``."""
    return f"packed_copy<{unit}, {dims}, {int(wide)}>"


def all_packed_kernel_names() -> tuple[str, ...]:
    """Every packed name expression the planner can return (30)."""
    return tuple(packed_kernel_name(u, d, w) for u in PACKED_UNITS for d in DIM_BUCKETS
                 for w in (0, 1, DYNAMIC))


# ---- the search


def _balanced(length: int, limit: int, granule: int) -> int:
    """A chunk <= limit (a multiple of granule when one fits) cutting ``length`` into nearly
    equal pieces."""
    limit = max(granule, limit // granule * granule) if limit >= granule else limit
    count = -(-length // limit)
    chunk = -(-length // count)
    return min(limit, -(-chunk // granule) * granule) if limit >= granule else chunk


def _chunks(length: int, room: int, granules) -> set[int]:
    """Chunk lengths worth trying for a dim that fits ``room`` elements at most."""
    top = min(length - 1, room)
    if top < 1:
        return set()
    options = {top, _balanced(length, top, 1)}
    for g in granules:
        if g > 1 and top >= g:
            options |= {top // g * g, _balanced(length, top, g)}
    return {c for c in options if 1 <= c < length}


class _Search:
    """Every tile the two chains suggest, scored by the sector model."""

    def __init__(self, layout: NormalizedLayout, dst_residue: int, src_residue: int,
                 capacity_bytes: int = PACKED_WIDE_BYTES):
        shape, unit = layout.shape, layout.unit
        self.shape, self.unit = shape, unit
        ndim = len(shape)
        dst_order = list(range(ndim - 1, -1, -1))  # normalized order: smallest |dst| last
        src_order = sorted(range(ndim), key=lambda d: (layout.src_strides[d] == 0,
                                                       abs(layout.src_strides[d]), -d))
        self.write = sm.Side(shape, layout.dst_strides, dst_residue, unit, dst_order)
        self.read = sm.Side(shape, layout.src_strides, src_residue, unit, src_order)
        self.capacity = capacity_bytes // unit
        self.capacity_bytes = capacity_bytes
        self.write_residue, self.read_residue = dst_residue, src_residue
        self.best = []  # ((min ratio, sum of ratios, -volume), (read, write ratios), tile)

    def table_bytes(self, tile: dict[int, int]) -> int:
        """Shared memory both phases' tables take for a tile (of full chunks)."""
        volume = math.prod(tile.values())
        total = 0
        for side in (self.read, self.write):
            run = math.prod(tile[d] for d in _run_dims(side, tile))
            total += row_table_bytes(volume // run) + run_table_bytes(run)
        return total

    def fits(self, tile: dict[int, int], elements: int) -> bool:
        """A tile spanning ``elements`` slots fits shared memory with its tables, and its
        offsets from the tile's base fit the tables' 32 bits on both sides."""
        if tile_bytes(elements, self.unit) + self.table_bytes(tile) > self.capacity_bytes:
            return False
        return all(sum((n - 1) * abs(side.strides[d]) for d, n in tile.items()) < 2**31
                   for side in (self.read, self.write))

    def _fitted(self, tile: dict[int, int]) -> dict[int, int] | None:
        """The tile, its longest split dim (else its longest dim) cut by eighths until it
        fits with its tables (long runs: a run table takes 4 bytes per element)."""
        tile = dict(tile)
        while not self.fits(tile, math.prod(tile.values())):
            split = [d for d in tile if tile[d] < self.shape[d]] or list(tile)
            d = max(split, key=lambda k: tile[k])
            if tile[d] == 1:
                return None
            tile[d] = max(1, tile[d] * 7 // 8)
        return tile

    def consider(self, tile: dict[int, int]) -> None:
        if not tile or math.prod(tile.values()) > self.capacity or len(tile) > TILE_DIMS:
            return
        tile = self._fitted(tile)
        if tile is None:
            return
        volume = math.prod(tile.values())
        splits = sum(tile[d] < self.shape[d] for d in tile)
        if len(self.shape) - len(tile) + splits > OUTER_DIMS:
            return
        read, write = self.read.ratio(tile), self.write.ratio(tile)
        self.best.append(((min(read, write), read + write, -volume), (read, write), dict(tile)))

    def _side_chunks(self, d, room, ks, kw):
        granules = []
        for side, k in ((self.read, ks), (self.write, kw)):
            if k < len(side.chain) and side.chain[k] == d:
                granules.append(side.granule(k))
        return _chunks(self.shape[d], room, granules)

    def run(self) -> None:
        rc, wc = self.read.chain, self.write.chain
        for ks in range(len(rc) + 1):
            for kw in range(len(wc) + 1):
                base = {d: self.shape[d] for d in rc[:ks] + wc[:kw]}
                volume = math.prod(base.values())
                if volume > self.capacity:
                    break
                if base:
                    self.consider(base)
                room = self.capacity // volume
                nexts = [c[k] for c, k in ((rc, ks), (wc, kw)) if k < len(c) and c[k] not in base]
                for d in set(nexts):
                    for chunk in self._side_chunks(d, room, ks, kw):
                        self.consider({**base, d: chunk})
                if len(set(nexts)) == 2:
                    self._double_split(base, room, nexts, ks, kw)
        if not self.best:  # neither side has a contiguous dim: a stretch of dst's innermost
            d = self.write.order[0]
            self.consider({d: min(self.shape[d], self.capacity)})

    def _double_split(self, base, room, nexts, ks, kw):
        ds, dw = nexts
        ns = self.shape[ds]
        counts = range(2, min(ns, MAX_CHUNK_COUNTS) + 1)
        for cs in {-(-ns // count) for count in counts} | self._side_chunks(ds, room, ks, kw):
            if cs < ns and room // cs >= 1:
                for cw in self._side_chunks(dw, room // cs, ks, kw):
                    self.consider({**base, ds: cs, dw: cw})

    def choice(self):
        if not self.best:
            return None
        top = max(key[0] for key, _, _ in self.best)
        near = [entry for entry in self.best if entry[0][0] >= top - NEAR_BEST]
        return max(near, key=lambda entry: entry[0][1:])


# ---- the plan


def _widen(layout: NormalizedLayout) -> NormalizedLayout:
    """A 32-byte-unit layout as 16-byte units (the widest the family instantiates)."""
    return NormalizedLayout(16, layout.shape + (2,), layout.dst_strides + (16,),
                            layout.src_strides + (16,), layout.contiguous_bytes)


def _uniform(side: sm.Side, rows, tile) -> bool:
    """Every run of a tile starts equally far into a sector: the strides of its row dims are
    multiples of 32 bytes (the kernel takes the lead of each block's first run)."""
    return all(side.strides[d] % sm.SECTOR == 0 for d in rows if tile[d] > 1)


def _run_dims(side: sm.Side, tile: dict[int, int]) -> list[int]:
    """The tile dims that chain in one side's memory (its run), innermost first."""
    j, chunk = side.run_of(tile)
    return side.chain[:j] + ([side.chain[j]] if chunk is not None else [])


def _word_runs(side: sm.Side, residue: int, tile: dict[int, int], run_dims: list[int],
               ends: bool = True) -> bool:
    """Every run of a side, in every tile, starts (and where ``ends``, ends) on a word
    boundary: its lowest address is one, as are the strides of every dim outside the run (a
    split run dim's chunk stride included), and the run's bytes (and a short last chunk's)
    are whole words."""
    unit = side.unit
    if not run_dims:
        return False
    along = side.strides[run_dims[0]]
    inner = math.prod(tile[d] for d in run_dims[:-1])
    last = run_dims[-1]
    lengths = {inner * tile[last]}
    if side.shape[last] % tile[last]:
        lengths.add(inner * (side.shape[last] % tile[last]))
    for n in lengths:
        low = (n - 1) * along if along < 0 else 0
        if (ends and n * unit % WORD_BYTES) or (residue + low) % WORD_BYTES:
            return False
    steps = [side.strides[d] for d in range(len(side.shape))
             if d not in run_dims and side.shape[d] > 1]
    if tile[last] < side.shape[last]:
        steps.append(side.strides[last] * tile[last])
    return all(step % WORD_BYTES == 0 for step in steps)


def _contiguous_slots(side, tile, run_dims, row_dims, slot_of, group) -> bool:
    """A run's slots are its positions from slot 0 (its dims ascending in memory, chained in
    slot space, unpadded) and every row starts on a 4-byte word of slots."""
    word = max(1, 4 // side.unit)
    span = 1
    for d in run_dims:
        if side.strides[d] < 0 or slot_of[d] != span or group.get(d, (0, 0))[1]:
            return False
        span *= tile[d]
    return all(slot_of[d] % word == 0 and group.get(d, (0, 0))[1] % word == 0 for d in row_dims)


def _walk(side: sm.Side, tile: dict[int, int], slot_of: dict[int, int], split_of: dict[int, int],
          residue: int, read: bool, group: dict[int, tuple[int, int]] | None = None):
    """The PackedSide of one side for a tile, and its work items per tile (worst case).
    ``residue``: the side's address modulo 32; ``read``: the source (phase 1), whose words
    may end inside a run (read whole inside the source's bytes)."""
    run_dims = _run_dims(side, tile)
    order = run_dims + [d for d in side.order if d in tile and d not in run_dims]
    run_elements = math.prod(tile[d] for d in run_dims)
    sec = sm.SECTOR // side.unit
    aligned = run_elements * side.unit >= sm.SECTOR // 2
    uniform = _uniform(side, order[len(run_dims):], tile)
    words = aligned and side.unit < 4 and _word_runs(side, residue, tile, run_dims, ends=not read)
    group = group or {}
    contiguous = words and not read and _contiguous_slots(
        side, tile, run_dims, order[len(run_dims):], slot_of, group)
    vl = -(-(run_elements + (0 if uniform else sec - 1)) // sec) * sec if aligned else run_elements
    items = math.prod(tile.values()) // run_elements * vl // units_per_item(side.unit, words)
    walk = PackedSide(
        length=tuple(tile[d] for d in order),
        full=tuple(side.shape[d] for d in order),
        chunk_of=tuple(split_of.get(d, -1) for d in order),
        stride=tuple(side.strides[d] for d in order),
        slot=tuple(slot_of[d] for d in order),
        run=len(run_dims), aligned=aligned, uniform=uniform, words=words, contiguous=contiguous,
        group_shift=tuple((group or {}).get(d, (0, 0))[0] for d in order),
        group_pad=tuple((group or {}).get(d, (0, 0))[1] for d in order),
    )
    return walk, items


def plan_packed(layout: NormalizedLayout, dst_residue: int, src_residue: int, max_threads: int,
                rival: tuple[float, float] | None = None, capacity_bytes: int = PACKED_WIDE_BYTES,
                ) -> PackedPlan | None:
    """The best :class:`PackedPlan` for a normalized layout, or None.

    ``dst_residue``/``src_residue``: the addresses modulo 32. ``max_threads``: thread budget.
    ``rival``: the (reads, writes) efficiency (bytes / 32 x sectors) the plan launched
    otherwise would reach; None returns the best packed plan whatever it predicts. With a
    rival, a packed plan is returned only when the sector model predicts it beats the rival.
    ``capacity_bytes``: the most shared memory a tile may take (beyond PACKED_WIDE_BYTES, the tile
    lives in dynamic shared memory).
    """
    if layout.unit == 32:
        layout = _widen(layout)
    if layout.unit not in PACKED_UNITS or layout.total == 0 or not layout.shape:
        return None
    search = _Search(layout, dst_residue, src_residue, capacity_bytes)
    rival_ratio = 0.0
    if rival is not None:
        rival_ratio = _rival_ratio(search, layout, rival)
        if rival_ratio >= RIVAL_GOOD:
            return None
    search.run()
    chosen = search.choice()
    if chosen is None:
        return None
    (score, _, _), predicted, tile = chosen
    if rival is not None and score <= rival_ratio + MARGIN:
        return None
    return _build(search, layout, tile, predicted, max_threads)


def _rival_ratio(search: _Search, layout, rival) -> float:
    """The lower of a rival plan's (reads, writes) ratios to the sector limit estimate."""
    total = layout.total * layout.unit / sm.SECTOR  # sectors the copy's bytes fill
    return min(rival[0] * search.read.ideal / total, rival[1] * search.write.ideal / total)


def plan_large(layout: NormalizedLayout, dst_residue: int, src_residue: int, max_threads: int,
               rival: tuple[float, float], budget_bytes: int) -> PackedPlan | None:
    """A packed plan with a tile beyond the 48 KiB a block declares statically (dynamic shared
    memory, at most ``budget_bytes``), for layouts whose best plan within 48 KiB stays below
    LARGE_TARGET of the sector limit on a side: 1- and 2-byte transposes whose rows start
    anywhere in a sector lose about a sector per run, so both sides' runs must be ~280 bytes
    long. The smallest tile reaching LARGE_TARGET on both sides, else the best one that
    beats ``rival`` (the plan launched otherwise: (reads, writes) bytes / 32 x sectors) by
    MARGIN; None when none does.
    """
    if layout.unit == 32:
        layout = _widen(layout)
    if layout.unit not in PACKED_UNITS or layout.total == 0 or not layout.shape:
        return None
    if layout.total * layout.unit <= PACKED_WIDE_BYTES:
        return None  # one static tile holds the whole copy
    if _rival_ratio(_Search(layout, dst_residue, src_residue), layout, rival) >= LARGE_TARGET:
        return None  # more blocks per SM are worth more than the last sectors
    best = None
    for capacity in range(PACKED_WIDE_BYTES + LARGE_STEP, budget_bytes + 1, LARGE_STEP):
        search = _Search(layout, dst_residue, src_residue, capacity)
        search.run()
        chosen = search.choice()
        if chosen is None:
            continue
        (score, _, _), predicted, tile = chosen
        if best is None or score > best[0] + MARGIN:
            best = (score, search, tile, predicted)
        if score >= LARGE_TARGET or layout.total * layout.unit <= capacity:
            break  # the target is met, or the whole copy fits one tile
    if best is None:
        return None
    score, search, tile, predicted = best
    if score <= _rival_ratio(search, layout, rival) + MARGIN:
        return None
    return _build(search, layout, tile, predicted, max_threads)


def _slot_strides(dst_dims, tile, unit, pad, group):
    """Destination-order slot strides (those of ``pad`` dims padded to an odd number of words,
    ``group`` dims padded every few indices) and the slots they span."""
    slot_of, stride = {}, 1
    for d in dst_dims:
        slot_of[d] = padded_stride(stride, unit) if d in pad else stride
        shift, extra = group.get(d, (0, 0))
        stride = slot_of[d] * tile[d] + ((tile[d] - 1) >> shift) * extra
    return slot_of, stride


def _slots(search: _Search, tile, split_of):
    """Both walks of a tile and the slots they share: the destination-order position in a tile
    of full chunks, with the slot stride of the source's contiguous dim (or of every dim after
    the destination's first) padded where that takes fewer shared-memory wavefronts and fits,
    then up to two dims padded by a word (a slot, for units of 4 bytes and more) every 2^g
    indices where that takes fewer still; layouts keeping phase 2's words in
    consecutive slots (``contiguous``) first.
    Returns (read, write, read items, write items, slots spanned)."""
    unit = search.unit
    dst_dims = [d for d in search.write.order if d in tile]
    src_first = next(d for d in search.read.order if d in tile)
    best = None

    def consider(pad, group, must_fit=True):
        nonlocal best
        slot_of, stride = _slot_strides(dst_dims, tile, unit, pad, group)
        if must_fit and not search.fits(tile, stride):
            return
        read, read_items = _walk(search.read, tile, slot_of, split_of, search.read_residue,
                                 True, group)
        write, write_items = _walk(search.write, tile, slot_of, split_of, search.write_residue,
                                   False, group)
        ratio = wavefront_ratio((read, write), unit)
        # words of consecutive slots are read whole in phase 2 (half its instructions, no
        # bank conflicts): layouts that keep them come first where their conflicts are mild
        rank = (not (ratio <= MILD_CONFLICTS and (not write.words or write.contiguous)), ratio)
        if best is None or rank[0] < best[0][0] or rank[0] == best[0][0] and ratio < best[0][1] - 0.01:
            best = (rank, read, write, read_items, write_items, stride, pad, group)

    consider((), {}, must_fit=False)
    for pad in ((src_first,), tuple(dst_dims[1:])):
        if not (src_first == dst_dims[0] and len(pad) == 1):
            consider(pad, {})
    word = max(1, 4 // unit)  # slots in a 4-byte word (or one slot of a wider unit)
    for d in [src_first] + [d for d in dst_dims if d != src_first]:
        if best[0][1] <= 1.0 or len(best[7]) == 2:
            break
        base_pad, base_group = best[6], best[7]
        for shift in range(1, 8):
            if tile[d] > 1 << shift:
                for extra in (word, 2 * word):
                    consider(base_pad, {**base_group, d: (shift, extra)})
    return best[1:6] + (best[0][1],)


def _build(search: _Search, layout, tile, predicted, max_threads) -> PackedPlan:
    shape, unit = layout.shape, layout.unit
    split = [d for d in sorted(tile) if tile[d] < shape[d]]
    split_of = {d: k for k, d in enumerate(split)}
    read, write, read_items, write_items, footprint, wavefronts = _slots(search, tile, split_of)
    outer, split_outer = [], [0] * len(split)
    for d in range(len(shape)):  # normalized order: blocks in a row walk dst upwards
        if d in split_of:
            split_outer[split_of[d]] = len(outer)
            outer.append((-(-shape[d] // tile[d]), layout.src_strides[d] * tile[d],
                          layout.dst_strides[d] * tile[d]))
        elif d not in tile:
            outer.append((shape[d], layout.src_strides[d], layout.dst_strides[d]))
    outer = outer or [(1, 0, 0)]
    tiles = math.prod(n for n, _, _ in outer)
    volume = footprint
    # Shared memory: the tile, then the row tables of both phases, then their run tables.
    rows_at = tile_bytes(volume, unit)
    sizes = [row_table_bytes(math.prod(side.length) // math.prod(side.length[:side.run]))
             for side in (read, write)]
    runs = [0 if side.contiguous else run_table_bytes(math.prod(side.length[:side.run]))
            for side in (read, write)]
    read = replace(read, rows_at=rows_at, run_at=rows_at + sum(sizes))
    write = replace(write, rows_at=rows_at + sizes[0], run_at=rows_at + sum(sizes) + runs[0])
    tables = sum(sizes) + sum(runs)
    budget = max(32, min(MAX_THREADS, max_threads - max_threads % 32))
    work = -(-max(read_items, write_items) // ITEMS_PER_THREAD)
    threads = min(budget, max(32, -(-work // 32) * 32))
    needed = rows_at + tables
    wide = DYNAMIC if needed > PACKED_WIDE_BYTES else int(needed > PACKED_COMPACT_BYTES)
    dims = next(b for b in DIM_BUCKETS if b >= len(tile))
    return PackedPlan(
        unit, dims, wide, read, write,
        tuple(n for n, _, _ in outer), tuple(s for _, s, _ in outer), tuple(d for _, _, d in outer),
        tuple(split_outer), 0, 0, volume, tables, round(wavefronts, 3),
        (search.read.sectors(*search.read.run_of(tile)), search.write.sectors(*search.write.run_of(tile))),
        (round(predicted[0], 4), round(predicted[1], 4)),
        tiles=tiles, block_threads=threads, grid_blocks=tiles,
        kernel=packed_kernel_name(unit, dims, wide),
    )  # fmt: skip
