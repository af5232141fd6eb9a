"""Sector model: how many 32-byte sectors the warp accesses of a copy touch, predicted in pure
Python from the residues of addresses modulo 32 (staged copies) or from a sample of warps (the
seed kernels), so the planner can tell which plan of a layout coalesces best.

A staged copy (``tiled_copy``, ``packed_copy``) moves each side of a tile as *runs*: stretches
contiguous in that side's memory, every run walked by warps whose accesses start on sector
boundaries, so a run of ``span`` bytes whose lowest address lies ``lead`` bytes into a sector
touches ``ceil((lead + span) / 32)`` sectors, each in one warp access. Summed over all runs of
a launch that is what the emulator's profiler counts; the same sum over the runs of the best
possible walk (the layout's whole contiguous stretches) estimates the sector limit. The leads
of all runs come from a histogram over Z_32 (a list of 32 counts): each dim walked outside the
run adds its ``index * stride`` residues (a circular convolution).

>>> rows = histogram([(4, 36)])                  # 4 rows 36 bytes apart, from address 0
>>> [rows[r] for r in (0, 4, 8, 12)], run_sectors(rows, 36)
([1, 1, 1, 1], 8)
"""

from __future__ import annotations

import math

from .devices import SECTOR


def point(residue: int) -> list[int]:
    """The histogram of one address: all weight at ``residue % 32``."""
    h = [0] * SECTOR
    h[residue % SECTOR] = 1
    return h


def _steps(length: int, stride: int) -> list[tuple[int, int]]:
    """(residue, count) of ``i * stride`` for ``i < length``, sparse."""
    s = stride % SECTOR
    period = SECTOR // math.gcd(s, SECTOR)
    full, rest = divmod(length, period)
    return [(i * s % SECTOR, full + (i < rest)) for i in range(min(period, length))]


def dim_histogram(length: int, stride: int) -> list[int]:
    """Residues of ``i * stride`` for ``i < length``, counted (length may be 0)."""
    h = [0] * SECTOR
    for residue, count in _steps(length, stride):
        h[residue] += count
    return h


def convolve_dim(h: list[int], length: int, stride: int) -> list[int]:
    """Residues of x + i * stride for x counted by ``h`` and every ``i < length``."""
    out = [0] * SECTOR
    for r, count in _steps(length, stride):
        rotated = h[-r:] + h[:-r] if r else h
        out = [a + count * b for a, b in zip(out, rotated)]
    return out


def histogram(dims, base: int = 0) -> list[int]:
    """Residues of ``base + sum(i_d * stride_d)`` over every index of ``dims`` ((length,
    stride) pairs)."""
    h = point(base)
    for length, stride in dims:
        if length != 1:
            h = convolve_dim(h, length, stride)
    return h


def shifted(h: list[int], offset: int) -> list[int]:
    """Every residue moved by ``offset`` bytes."""
    r = offset % SECTOR
    return h[-r:] + h[:-r] if r else h


def run_sectors(rows: list[int], span: int, word_unit: int = 0, writes: bool = True) -> int:
    """Sectors touched by runs of ``span`` bytes whose lowest addresses have the residues
    counted by ``rows``, each run walked from a sector boundary; ``word_unit`` (1 or 2): runs
    moved in 4-byte words of such units, whose end words take extra warp accesses
    (:func:`word_end_accesses`; ``writes``: written, else read)."""
    if span <= 0:
        return 0
    return sum(count * ((lead + span + SECTOR - 1) // SECTOR
                        + (word_end_accesses(lead, span, word_unit, writes) if word_unit else 0))
               for lead, count in enumerate(rows) if count)


def _piece_accesses(lo: int, hi: int, unit: int, writes: bool) -> int:
    """Accesses of bytes [lo, hi) of a 4-byte word at a run's end in ``tiled_copy``'s word
    walk: written one per unit, read whole once more (its units then go to shared memory)."""
    return (hi - lo) // unit if writes else 1


def word_end_accesses(lead: int, span: int, unit: int, writes: bool = True) -> int:
    """Warp accesses beyond one per sector that a run of ``span`` bytes, its lowest byte
    ``lead`` bytes into a sector, takes when moved in aligned 4-byte words: each unit of a
    partial word at its ends is written on its own (a read partial word is read again whole),
    touching its sector again, less the sectors that hold no whole word of the run (those
    accesses are then their only ones).
    An upper bound for runs of a few bytes with partial words at both ends of one sector,
    which may share an access."""
    lo, end = lead % 4, (lead + span) % 4
    if lo + span <= 4:  # within one word
        return 0 if span == 4 else _piece_accesses(lo, lo + span, unit, writes) - 1
    extra = 0
    if lo:
        extra += _piece_accesses(lo, 4, unit, writes) - (lead % SECTOR >= SECTOR - 4)
    if end:
        extra += _piece_accesses(0, end, unit, writes) - ((lead + span) % SECTOR < 4)
    return extra


def chunk_classes(length: int, chunk: int, shift: int = 0):
    """A dim of ``length`` cut into chunks of ``chunk`` elements, the first giving up ``shift``
    (chunk k covers ``[max(0, k * chunk - shift), min(length, (k + 1) * chunk - shift))``):
    ``(count, first start, start step, chunk length)`` per class of equal chunks."""
    if chunk >= length + shift:
        return [(1, 0, 0, length)]
    count = -(-(length + shift) // chunk)
    first = chunk - shift
    last_start = (count - 1) * chunk - shift
    classes = [(1, 0, 0, first)]
    if count > 2:
        classes.append((count - 2, first, chunk, chunk))
    classes.append((1, last_start, 0, length - last_start))
    return classes


def chunked_run_sectors(rows, inner: int, length: int, stride: int, chunk: int, shift: int,
                        unit: int, descending: bool = False, words: bool = False,
                        writes: bool = True) -> int:
    """Sectors of runs of ``inner`` elements times a chunk of a dim (``length``, byte
    ``stride``) cut into chunks of ``chunk`` (the first giving up ``shift``); ``rows`` counts
    the leads of the runs' element 0 when the chunk index is 0. ``words``: moved in 4-byte
    words (:func:`run_sectors`, ``writes`` or reads)."""
    total = 0
    for count, start, step, size in chunk_classes(length, chunk, shift):
        leads = convolve_dim(shifted(rows, start * stride), count, step * stride)
        elements = inner * size
        if descending:  # a run's lowest address is its last element's
            leads = shifted(leads, -(elements - 1) * unit)
        total += run_sectors(leads, elements * unit, unit if words else 0, writes)
    return total


# ---- one side of a layout, for tiles of several dims (the packed planner's)


def ideal_sectors(shape, strides, residue, unit) -> int:
    """The sector model's estimate of a side's sector limit: runs as long as its memory is
    contiguous. Reversing a dim moves its addresses, not the set of them: strides count by
    magnitude, from the lowest address."""
    lowest = residue + sum((n - 1) * s for n, s in zip(shape, strides) if s < 0)
    order = sorted(range(len(shape)), key=lambda d: (strides[d] == 0, abs(strides[d])))
    magnitudes = [abs(s) for s in strides]
    chain = chain_of(order, magnitudes, shape, unit)
    rest = [(shape[d], magnitudes[d]) for d in range(len(shape)) if d not in chain]
    return run_sectors(histogram(rest, lowest), math.prod(shape[d] for d in chain) * unit)


def chain_of(order, strides, shape, unit) -> list[int]:
    """The dims of ``order`` that chain from the innermost one (stride +-unit) on."""
    chain: list[int] = []
    for d in order:
        if chain:
            chains = strides[d] == strides[chain[-1]] * shape[chain[-1]]
        else:
            chains = abs(strides[d]) == unit
        if not chains:
            break
        chain.append(d)
    return chain


class Side:
    """One side (src or dst) of a normalized layout: its memory ``order``, its ``chain`` (the
    dims that chain in its memory from the innermost on), the sectors runs of any prefix of
    the chain (plus a chunk of the next dim) would touch, and the ``ideal`` walk's."""

    def __init__(self, shape, strides, residue, unit, order):
        self.shape, self.strides, self.unit, self.order = shape, strides, unit, order
        self.chain = chain_of(order, strides, shape, unit)
        self.inner = [math.prod(shape[d] for d in self.chain[:j]) for j in range(len(self.chain) + 1)]
        self.descending = bool(self.chain) and strides[self.chain[0]] < 0
        rest = [(shape[d], strides[d]) for d in range(len(shape)) if d not in self.chain]
        h = histogram(rest, residue)
        self.rows = [h] * (len(self.chain) + 1)  # rows[j]: leads when the run is chain[:j]
        for j in reversed(range(len(self.chain))):
            d = self.chain[j]
            h = convolve_dim(h, shape[d], strides[d])
            self.rows[j] = h
        self._cache: dict = {}
        self.ideal = ideal_sectors(shape, strides, residue, unit)

    def sectors(self, j: int, chunk: int | None) -> int:
        """Sectors when runs are chain[:j], plus chunks of ``chunk`` elements of chain[j]."""
        key = (j, chunk)
        if key not in self._cache:
            if chunk is None:
                rows, elements = self.rows[j], self.inner[j]
                if self.descending:  # a run's lowest address is its last element's
                    rows = shifted(rows, -(elements - 1) * self.unit)
                value = run_sectors(rows, elements * self.unit)
            else:
                d = self.chain[j]
                value = chunked_run_sectors(self.rows[j + 1], self.inner[j], self.shape[d],
                                            self.strides[d], chunk, 0, self.unit, self.descending)
            self._cache[key] = value
        return self._cache[key]

    def run_of(self, tile: dict[int, int]) -> tuple[int, int | None]:
        """(whole chain dims in the run, chunk of the next one or None) for a tile."""
        j = 0
        while j < len(self.chain) and tile.get(self.chain[j]) == self.shape[self.chain[j]]:
            j += 1
        if j < len(self.chain) and self.chain[j] in tile:
            return j, tile[self.chain[j]]
        return j, None

    def ratio(self, tile) -> float:
        """Predicted sectors of the ideal walk over those of this tile's runs."""
        return self.ideal / self.sectors(*self.run_of(tile))

    def granule(self, k: int) -> int:
        """Chunk lengths of chain[k] that keep chunks whole sectors (after k whole dims)."""
        return SECTOR // math.gcd(SECTOR, self.inner[k] * self.unit)


# ---- the staged copy of tile_planner (duck-typed on its TilePlan: no import cycle)


def tile_plan_sectors(plan, dst_residue: int, src_residue: int) -> tuple[int, int]:
    """(read, write) sectors a ``tiled_copy`` plan touches (see :mod:`.tile_planner`)."""
    unit = plan.unit
    src_rows = histogram(zip(plan.batch_len, plan.src_batch_stride), src_residue + plan.src_offset)
    dst_rows = histogram(zip(plan.batch_len, plan.dst_batch_stride), dst_residue + plan.dst_offset)
    dim0 = (plan.len0, plan.src_stride0, plan.tile0, plan.shift0)
    dim1 = (plan.len1, plan.src_stride1, plan.tile1, plan.shift1)
    along, across = (dim0, dim1) if plan.read_along == 0 else (dim1, dim0)
    # Byte units one at a time move in 4-byte words, whose end words take extra
    # accesses (word_end_accesses; but the source's first and last words, read unit by unit
    # where they reach outside it: not counted here).
    read_words = unit == 1 and plan.read_vector == 1
    if plan.read_chained:  # one run per tile: the along dim whole, a chunk of the other
        read = chunked_run_sectors(src_rows, along[0], *across, unit, words=read_words,
                                   writes=False)
    else:
        rows = convolve_dim(src_rows, across[0], across[1])
        read = chunked_run_sectors(rows, 1, *along, unit, descending=along[1] < 0,
                                   words=read_words, writes=False)
    words = unit == 1 and plan.write_vector == 1
    if plan.write_chained:
        write = chunked_run_sectors(dst_rows, plan.len1, plan.len0, plan.dst_stride0, plan.tile0,
                                    plan.shift0, unit, words=words)
    else:
        rows = convolve_dim(dst_rows, plan.len0, plan.dst_stride0)
        write = chunked_run_sectors(rows, 1, plan.len1, plan.dst_stride1, plan.tile1, plan.shift1,
                                    unit, words=words)
    return read, write


# ---- kernels whose warps walk elements in thread order (the seed kernels)


def warp_sectors(addresses, unit: int) -> tuple[int, int]:
    """(distinct bytes, sectors) summed over warps, for unit-byte accesses at ``addresses``
    listed in thread order, None for a thread that copies nothing."""
    requested = sectors = 0
    for first in range(0, len(addresses), 32):
        lanes = {a for a in addresses[first:first + 32] if a is not None}
        requested += unit * len(lanes)
        sectors += len({s for a in lanes for s in range(a // SECTOR, (a + unit - 1) // SECTOR + 1)})
    return requested, sectors
