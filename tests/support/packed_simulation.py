"""The packed staged copy (``packed_copy`` in kernels_src/packed.cu) simulated in Python.

Follows the kernel's index arithmetic step by step (outer dims and chunk indices, each side's
lengths for the tile, virtual rows from sector boundaries, the run and row digits of every
work item) so planner tests can check the bytes a PackedPlan copies without compiling
anything, plus what the GPU would see: the alignment of every access, the shared-memory slots
(inside the declared capacity, each written once and read once), and the sectors of every
warp access, counted as the emulator's profiler counts them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from infini_cupy.strided.packed_planner import (
    WORD_BYTES, PackedPlan, row_table_bytes, run_table_bytes, tile_bytes, units_per_item)

SECTOR = 32


@dataclass
class Simulated:
    dst: np.ndarray  # byte offset (from dst's pointer) of every copied element...
    src: np.ndarray  # ...and of its source, element for element
    read_sectors: int  # distinct sectors of each warp access, summed
    write_sectors: int


def _lengths(side, chunks):
    return [min(n, full - chunks[c] * n) if c >= 0 else n
            for n, full, c in zip(side.length, side.full, side.chunk_of)]


def _side(side, base, chunks, unit):
    """(item, active, address, slot) of every unit of a virtual row of one phase over one tile,
    ``item`` the work item moving it (a 4-byte word of units where ``side.words``)."""
    n = _lengths(side, chunks)
    assert all(k > 0 for k in n), "an empty tile"
    run, rows = math.prod(n[:side.run]), math.prod(n[side.run:])
    along = side.stride[0] if side.run else unit
    assert side.run == 0 or abs(along) == unit, "a run's first dim must be contiguous"
    low = (run - 1) * along if along < 0 else 0
    sec = SECTOR // unit
    vl = run
    if side.aligned:
        lead = ((base + low) % SECTOR) // unit if side.uniform else sec - 1
        vl = -(-(run + lead) // sec) * sec
    position = np.arange(rows * vl)
    r, q = position // vl, position % vl
    iu = units_per_item(unit, side.words)
    item = r * (vl // iu) + q // iu
    offset = np.full(item.size, low, np.int64)
    slot = np.zeros(item.size, np.int64)
    shift = side.group_shift or (0,) * len(n)
    pad = side.group_pad or (0,) * len(n)
    for d in range(side.run, len(n)):  # the row's dims, innermost fastest
        k, r = r % n[d], r // n[d]
        offset += k * side.stride[d]
        slot += k * side.slot[d] + (k >> shift[d]) * pad[d]
    lowest = base + offset
    lead = (lowest % SECTOR) // unit if side.aligned else np.zeros_like(lowest)
    if side.aligned and side.uniform:
        assert np.all(lead == lead[0]), "rows said to share their lead do not"
    p = q - lead
    active = (p >= 0) & (p < run)
    e = np.where(along < 0, run - 1 - p, p)
    for d in range(side.run):
        k = e % n[d] if d + 1 < side.run else e
        e = e // n[d]
        slot += k * side.slot[d] + (k >> shift[d]) * pad[d]
    address = lowest + p * unit
    return item, active, address, slot


def _warp_sectors(item, active, address, threads):
    """Distinct sectors of each warp access: item i is thread i % threads's, step i // threads."""
    key = (item // threads) * (threads // 32) + (item % threads) // 32
    pairs = np.unique(np.stack([key[active], address[active] // SECTOR]), axis=1)
    return pairs.shape[1]


def simulate_packed_kernel(plan: PackedPlan, dst_address=0, src_address=0) -> Simulated:
    """Every (dst offset, src offset) pair ``packed_copy`` copies, checking as it goes."""
    unit = plan.unit
    assert plan.footprint <= plan.capacity, "beyond shared memory"
    assert plan.block_threads % 32 == 0
    dst_out, src_out = [], []
    read_sectors = write_sectors = 0
    outer = np.unravel_index(np.arange(plan.tiles), plan.outer_len)
    for b in range(plan.tiles):
        index = [int(i[b]) for i in outer]
        src_at = plan.src_offset + sum(i * s for i, s in zip(index, plan.outer_src_stride))
        dst_at = plan.dst_offset + sum(i * s for i, s in zip(index, plan.outer_dst_stride))
        chunks = [index[k] for k in plan.split_outer]
        read = _side(plan.read, src_address + src_at, chunks, unit)
        write = _side(plan.write, dst_address + dst_at, chunks, unit)
        (_, r_active, r_address, r_slot), (w_item, w_active, w_address, w_slot) = read, write
        if plan.write.words:  # words are written whole: each run starts and ends on a word
            per_word = np.bincount(w_item, weights=w_active)
            assert np.all((per_word == 0) | (per_word == WORD_BYTES // unit)), "a word cut by a run's end"
        if plan.write.contiguous:  # a word's slots: consecutive, from a 4-byte boundary
            word_slots = w_slot[w_active].reshape(-1, WORD_BYTES // unit)
            assert np.all(np.diff(word_slots, axis=1) == 1)
            assert np.all(word_slots[:, 0] * unit % 4 == 0)
        elements = math.prod(_lengths(plan.read, chunks))
        assert r_active.sum() == w_active.sum() == elements
        src_slots, dst_slots = r_slot[r_active], w_slot[w_active]
        assert len(np.unique(src_slots)) == elements, "two elements share a slot"
        assert np.array_equal(np.sort(src_slots), np.sort(dst_slots)), "phases disagree"
        assert src_slots.min() >= 0 and src_slots.max() < plan.tile_elements
        assert np.all(r_address[r_active] % unit == 0) and np.all(w_address[w_active] % unit == 0)
        read_sectors += _warp_sectors(read[0], r_active, r_address, plan.block_threads)
        write_sectors += _warp_sectors(write[0], w_active, w_address, plan.block_threads)
        source_of_slot = np.empty(plan.tile_elements, np.int64)
        source_of_slot[src_slots] = r_address[r_active]
        dst_out.append(w_address[w_active] - dst_address)
        src_out.append(source_of_slot[dst_slots] - src_address)
    if not dst_out:
        return Simulated(np.zeros(0, np.int64), np.zeros(0, np.int64), 0, 0)
    return Simulated(np.concatenate(dst_out), np.concatenate(src_out), read_sectors, write_sectors)


def check_packed_plan(plan: PackedPlan, max_threads: int) -> None:
    """The invariants every PackedPlan keeps."""
    from infini_cupy.strided.packed_planner import DIM_BUCKETS, OUTER_DIMS, packed_kernel_name

    assert plan.kernel == packed_kernel_name(plan.unit, plan.dims, plan.wide)
    assert plan.unit in (1, 2, 4, 8, 16) and plan.dims in DIM_BUCKETS
    assert plan.block_threads % 32 == 0 and plan.block_threads <= max(32, max_threads)
    assert plan.tiles == plan.grid_blocks == math.prod(plan.outer_len)
    assert 1 <= len(plan.outer_len) <= OUTER_DIMS
    assert len(plan.outer_len) == len(plan.outer_src_stride) == len(plan.outer_dst_stride)
    assert math.prod(plan.read.length) <= plan.tile_elements and plan.footprint <= plan.capacity
    assert not plan.wide or plan.footprint > 8192  # compact when it fits
    # the tables follow the tile: both row tables (8 bytes a row), then both run tables
    read, write = plan.read, plan.write
    assert read.rows_at == tile_bytes(plan.tile_elements, plan.unit)
    runs = [math.prod(s.length[:s.run]) for s in (read, write)]
    rows = [math.prod(s.length) // run for s, run in zip((read, write), runs)]
    assert write.rows_at == read.rows_at + row_table_bytes(rows[0])
    assert read.run_at == write.rows_at + row_table_bytes(rows[1])
    assert write.run_at == read.run_at + run_table_bytes(runs[0])
    assert read.rows_at + plan.table_bytes == write.run_at + (
        0 if write.contiguous else run_table_bytes(runs[1]))
    assert not read.contiguous and (not write.contiguous or write.words)
    assert not (read.words or write.words) or plan.unit < 4
    assert all(at % 16 == 0 for s in (read, write) for at in (s.rows_at, s.run_at))
    assert (not read.words or read.aligned) and (not write.words or write.aligned)
    for side in (plan.read, plan.write):
        assert len(side.length) <= plan.dims and 0 <= side.run <= len(side.length)
        assert sorted(side.length) == sorted(plan.read.length)
        for n, full, c in zip(side.length, side.full, side.chunk_of):
            assert (c >= 0) == (n < full) and 0 < n <= full
            if c >= 0:  # the chunk index walks the outer dim the plan names
                assert plan.outer_len[plan.split_outer[c]] == -(-full // n)
        # a run is one stretch of memory: its dims chain, the first contiguous
        for d in range(1, side.run):
            assert side.stride[d] == side.stride[d - 1] * side.length[d - 1]
            assert side.length[d - 1] == side.full[d - 1]  # only a run's last dim is split
        assert side.run == 0 or abs(side.stride[0]) == plan.unit
    # slots: the destination-order position in a tile of full chunks, a stride padded at most
    # to the next odd number of words past the dense one, at most two dims padded by a word or
    # two every 2^g indices (each the same for both phases)
    word = max(1, 4 // plan.unit)
    slot, length = plan.write.slot, plan.write.length
    shift = plan.write.group_shift or (0,) * len(slot)
    pad = plan.write.group_pad or (0,) * len(slot)
    span = [slot[d] * length[d] + ((length[d] - 1) >> shift[d]) * pad[d] for d in range(len(slot))]
    assert slot[0] == 1 and plan.tile_elements == span[-1]
    for d in range(1, len(slot)):
        assert span[d - 1] <= slot[d] <= span[d - 1] + 2 * word
    assert sum(p > 0 for p in pad) <= 2 and all(p in (0, word, 2 * word) for p in pad)
    assert sorted(plan.read.slot) == sorted(plan.write.slot)
    assert sorted(zip(plan.read.slot, plan.read.group_shift, plan.read.group_pad)) == sorted(
        zip(plan.write.slot, plan.write.group_shift, plan.write.group_pad))
