"""Coalescing profiler: how many 32-byte sectors each warp access touches, from emulator traces.

A GPU serves a warp's global access instruction in 32-byte sectors. For every warp and every
access instruction of a launch (threads ``32w .. 32w + 31`` of a block; the k-th access of
each thread, reads and writes apart) this counts the distinct sectors touched and the distinct
bytes asked for, and reports

- **efficiency** = bytes requested / (32 x sectors), summed over warp accesses: 1.0 when every
  fetched sector is used whole, 0.125 when each 4-byte lane lands in a sector of its own;
- **block efficiency** = bytes each block needs / (32 x distinct sectors each block touches):
  an estimate of DRAM traffic when L1/L2 catch the reuse within a block;
- **shared**: shared-memory wavefronts against the conflict-free ideal
  (:mod:`.bank_conflicts`), from the trace of ``ic::lds``/``ic::sts``.

The emulator numbers accesses per thread, so "the k-th read (write) of each lane" stands for an
instruction: exact when the lanes of a warp issue the same sequence of reads (writes), lanes
that skip a trailing access only lowering the bytes of that instruction. A kernel whose lanes
skip accesses in the middle of a sequence must keep them in step in emulation (the staged
copy repeats an active lane's access on idle lanes; ``load_if`` / ``store_if`` of
``common.cuh`` do it for any predicated access).

>>> import numpy as np, infini_cupy as xp
>>> from infini_cupy.readers import coalescing
>>> x = np.zeros((64, 64), np.float32)
>>> with xp.backend("emulate"):                                      # doctest: +SKIP
...     _, launches = coalescing.profile(xp.rearrange_, np.empty_like(x), x.T)
>>> launches[0].reads.efficiency, launches[0].writes.efficiency     # doctest: +SKIP
(1.0, 1.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..runtime.emulate import launcher as emulator
from ..perf.devices import SECTOR
from ..perf.distinct import distinct
from . import bank_conflicts

# One row per warp access instruction (see warp_accesses).
WARP_ACCESS_DTYPE = np.dtype([
    ("block", "<u8"), ("warp", "<u4"), ("access", "<u4"), ("is_write", "?"),
    ("lanes", "<u4"), ("bytes", "<u8"), ("sectors", "<u4"),
])


@dataclass(frozen=True)
class AccessStats:
    """Reads or writes of one launch (or several, summed)."""

    requests: int  # warp access instructions
    bytes: int  # bytes requested: distinct bytes of each warp access, summed
    sectors: int  # distinct sectors of each warp access, summed
    block_bytes: int  # distinct bytes of each block, summed
    block_sectors: int  # distinct sectors of each block, summed

    @property
    def efficiency(self) -> float:
        """bytes / (32 x sectors); 1.0 when nothing accessed (nothing wasted)."""
        return self.bytes / (SECTOR * self.sectors) if self.sectors else 1.0

    @property
    def block_efficiency(self) -> float:
        return self.block_bytes / (SECTOR * self.block_sectors) if self.block_sectors else 1.0

    @property
    def sectors_per_request(self) -> float:
        return self.sectors / self.requests if self.requests else 0.0

    def __add__(self, other: AccessStats) -> AccessStats:
        return AccessStats(*(a + b for a, b in zip(self._fields(), other._fields())))

    def _fields(self):
        return (self.requests, self.bytes, self.sectors, self.block_bytes, self.block_sectors)


NO_ACCESSES = AccessStats(0, 0, 0, 0, 0)


@dataclass(frozen=True)
class LaunchProfile:
    """The coalescing of one launch: its kernel, configuration, reads and writes."""

    source: str
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    reads: AccessStats
    writes: AccessStats
    shared: bank_conflicts.BankStats = bank_conflicts.NO_SHARED  # shared-memory wavefronts


_PAD = np.uint64(2**64 - 1)


def _split_at_sectors(records: np.ndarray) -> np.ndarray:
    """Records cut where they cross a sector boundary, so each piece touches one sector (a
    no-op for aligned accesses of up to 32 bytes, which is every access of our kernels)."""
    address = records["address"]
    last = (address + records["bytes"].astype(np.uint64) - np.uint64(1)) // np.uint64(SECTOR)
    count = (last - address // np.uint64(SECTOR) + np.uint64(1)).astype(np.int64)
    if records.size == 0 or count.max() == 1:
        return records
    pieces = np.repeat(records, count)
    k = (np.arange(pieces.size) - np.repeat(np.cumsum(count) - count, count)).astype(np.uint64)
    start = np.maximum(pieces["address"], (pieces["address"] // np.uint64(SECTOR) + k) * np.uint64(SECTOR))
    end = np.minimum(pieces["address"] + pieces["bytes"].astype(np.uint64),
                     (pieces["address"] // np.uint64(SECTOR) + k + np.uint64(1)) * np.uint64(SECTOR))
    pieces["address"], pieces["bytes"] = start, (end - start).astype(np.uint32)
    return pieces


def _pairs(records: np.ndarray) -> np.ndarray:
    """(address, size) as one integer (sizes below 64): equal-size aligned accesses coincide or
    are disjoint, so distinct pairs count distinct bytes; pair >> 11 is the sector."""
    return records["address"] * np.uint64(64) + records["bytes"].astype(np.uint64)


def warp_accesses(launch: emulator.LaunchTrace) -> np.ndarray:
    """One row per warp access instruction of a launch (WARP_ACCESS_DTYPE): block, warp,
    access index (the k-th read or write of each lane), direction, lanes taking part, distinct
    bytes and distinct sectors."""
    return _warp_table(_split_at_sectors(launch.accesses))


def _warp_table(records: np.ndarray) -> np.ndarray:
    if records.size == 0:
        return np.zeros(0, WARP_ACCESS_DTYPE)
    warp = (records["thread"] // 32).astype(np.int64)
    rank = emulator.direction_ranks(records)
    n_warps, n_rank = int(warp.max()) + 1, int(rank.max()) + 1
    if (int(records["block"].max()) + 1) * n_warps * n_rank * 2 >= 2**63:  # pragma: no cover
        raise ValueError("trace too large to profile (block x warp x access overflows int64)")
    key = ((records["block"].astype(np.int64) * n_warps + warp) * n_rank + rank) * 2
    key += records["is_write"]
    order = np.argsort(key, kind="stable")  # merges each warp's 32 sorted lanes: fast
    key, pairs = key[order], _pairs(records)[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    sizes = np.diff(np.r_[starts, key.size])
    # Each warp access becomes a row of a padded matrix, sorted: distinct pairs are distinct
    # bytes, distinct pair >> 11 distinct sectors.
    table = np.full((starts.size, int(sizes.max())), _PAD, np.uint64)
    table[np.repeat(np.arange(starts.size), sizes), np.arange(key.size) - np.repeat(starts, sizes)] = pairs
    table.sort(axis=1)
    used = table != _PAD
    new_pair = used.copy()
    new_pair[:, 1:] &= table[:, 1:] != table[:, :-1]
    sector = table >> np.uint64(11)
    new_sector = used.copy()
    new_sector[:, 1:] &= sector[:, 1:] != sector[:, :-1]
    first = key[starts]
    out = np.zeros(starts.size, WARP_ACCESS_DTYPE)
    out["is_write"] = first % 2
    out["access"] = first // 2 % n_rank
    out["warp"] = first // 2 // n_rank % n_warps
    out["block"] = first // 2 // n_rank // n_warps
    out["lanes"] = sizes
    out["bytes"] = ((table & np.uint64(63)) * new_pair).sum(axis=1)
    out["sectors"] = new_sector.sum(axis=1)
    return out


def _block_totals(records: np.ndarray, is_write: bool) -> tuple[int, int]:
    """(distinct bytes, distinct sectors) of each block, summed over blocks, one direction."""
    chosen = records[records["is_write"] == is_write]
    if chosen.size == 0:
        return 0, 0
    pairs = _pairs(chosen)
    low = int(pairs.min())
    span = int(pairs.max()) - low + 1
    block = chosen["block"].astype(np.int64)
    if span * (int(block.max()) + 1) >= 2**63:  # pragma: no cover - astronomically spread
        order = np.lexsort((pairs, block))
        block, pairs = block[order], pairs[order]
    else:  # one integer sort of (block, pair)
        combined = np.sort(block * span + (pairs - np.uint64(low)).astype(np.int64))
        block, pairs = combined // span, (combined % span).astype(np.uint64) + np.uint64(low)
    new_block = np.r_[True, block[1:] != block[:-1]]
    new_pair = new_block | np.r_[True, pairs[1:] != pairs[:-1]]
    sector = pairs >> np.uint64(11)
    new_sector = new_block | np.r_[True, sector[1:] != sector[:-1]]
    return int((pairs & np.uint64(63))[new_pair].sum()), int(new_sector.sum())


def profile_launch(launch: emulator.LaunchTrace) -> LaunchProfile:
    """The coalescing of one traced launch."""
    records = _split_at_sectors(launch.accesses)
    table = _warp_table(records)
    stats = []
    for is_write in (False, True):
        rows = table[table["is_write"] == is_write]
        block_bytes, block_sectors = _block_totals(records, is_write)
        stats.append(AccessStats(int(rows.size), int(rows["bytes"].sum()),
                                 int(rows["sectors"].sum()), block_bytes, block_sectors))
    return LaunchProfile(launch.source, launch.name, launch.grid, launch.block, *stats,
                         bank_conflicts.count_launch(launch))


def profile(fn, *args, **kwargs):
    """Run ``fn(*args, **kwargs)`` under the emulator's tracing; returns (its result, one
    :class:`LaunchProfile` per launch). Arrays must be NumPy under the emulate backend."""
    with emulator.tracing() as trace:
        result = fn(*args, **kwargs)
    return result, [profile_launch(launch) for launch in trace.launches]


def total(profiles) -> tuple[AccessStats, AccessStats]:
    """(reads, writes) summed over launches."""
    reads = writes = NO_ACCESSES
    for p in profiles:
        reads, writes = reads + p.reads, writes + p.writes
    return reads, writes


def best_efficiency(a) -> float:
    """The best efficiency any kernel can reach on NumPy array ``a``: the bytes of its
    distinct elements / 32 x the distinct 32-byte sectors holding them (1.0 for a sector-
    aligned contiguous array; less when rows start or end inside sectors)."""
    if a.size == 0:
        return 1.0
    offsets = np.zeros((), np.int64)
    for n, stride in zip(a.shape, a.strides):
        offsets = np.add.outer(offsets, np.arange(n, dtype=np.int64) * stride)
    starts = distinct(offsets) + a.__array_interface__["data"][0]
    sectors = distinct(np.concatenate([starts // SECTOR, (starts + a.itemsize - 1) // SECTOR]))
    return starts.size * a.itemsize / (SECTOR * sectors.size)
