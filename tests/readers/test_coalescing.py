"""The coalescing profiler on hand-made traces (where the answer is known), then on a launch."""

from __future__ import annotations

import numpy as np
import pytest

from infini_cupy.runtime.emulate.launcher import TRACE_DTYPE, LaunchTrace
from infini_cupy.readers import coalescing

BASE = 1 << 20  # a 32-byte (and 256-byte) boundary


def trace(rows):
    """A LaunchTrace from (address, bytes, block, thread, is_write) rows in program order;
    the per-thread access counter is filled in as the emulator does."""
    records = np.zeros(len(rows), TRACE_DTYPE)
    counters: dict = {}
    for i, (address, size, block, thread, is_write) in enumerate(rows):
        access = counters.get((block, thread), 0)
        counters[(block, thread)] = access + 1
        records[i] = (address, block, size, thread, access, is_write, False)
    order = np.lexsort((records["access"], records["thread"], records["block"]))
    return LaunchTrace("test.cu", "k", (1, 1, 1), (32, 1, 1), records[order])


def warp_reads(addresses, size=4, block=0):
    return [(a, size, block, lane, False) for lane, a in enumerate(addresses)]


@pytest.mark.parametrize("addresses, bytes_, sectors", [
    ([BASE + 4 * lane for lane in range(32)], 128, 4),  # coalesced
    ([BASE + 4 + 4 * lane for lane in range(32)], 128, 5),  # 4 bytes off a sector
    ([BASE + 128 * lane for lane in range(32)], 128, 32),  # a transpose's reads
    ([BASE] * 32, 4, 1),  # one element for all lanes: 4 distinct bytes
    ([BASE + 4 * (31 - lane) for lane in range(32)], 128, 4),  # reversed: still 4 sectors
])
def test_one_warp_access(addresses, bytes_, sectors):
    table = coalescing.warp_accesses(trace(warp_reads(addresses)))
    assert table.size == 1 and table["lanes"][0] == 32
    assert (table["bytes"][0], table["sectors"][0]) == (bytes_, sectors)
    stats = coalescing.profile_launch(trace(warp_reads(addresses))).reads
    assert stats.efficiency == pytest.approx(bytes_ / (32 * sectors))
    assert stats.requests == 1


def test_accesses_crossing_a_sector_count_both_sectors():
    stats = coalescing.profile_launch(trace([(BASE + 28, 8, 0, 0, False)])).reads
    assert (stats.bytes, stats.sectors) == (8, 2)


def test_reads_and_writes_are_numbered_apart():
    # Lane 0 writes between its reads, lane 1 after both: the k-th reads still pair up.
    rows = [(BASE, 4, 0, 0, False), (BASE + 4096, 4, 0, 0, True), (BASE + 128, 4, 0, 0, False),
            (BASE + 4, 4, 0, 1, False), (BASE + 132, 4, 0, 1, False), (BASE + 4100, 4, 0, 1, True)]
    table = coalescing.warp_accesses(trace(rows))
    reads = table[~table["is_write"]]
    assert list(reads["lanes"]) == [2, 2] and list(reads["sectors"]) == [1, 1]
    writes = table[table["is_write"]]
    assert list(writes["lanes"]) == [2] and writes["bytes"][0] == 8


def test_warps_and_blocks_are_told_apart():
    rows = warp_reads([BASE + 4 * lane for lane in range(32)])
    rows += [(BASE + 4 * lane, 4, 0, 32 + lane, False) for lane in range(32)]  # warp 1: same data
    rows += warp_reads([BASE + 4 * lane for lane in range(32)], block=1)
    launch = trace(rows)
    table = coalescing.warp_accesses(launch)
    assert sorted(zip(table["block"].tolist(), table["warp"].tolist())) == [(0, 0), (0, 1), (1, 0)]
    stats = coalescing.profile_launch(launch).reads
    assert (stats.requests, stats.bytes, stats.sectors) == (3, 384, 12)
    # per block, warp 1 re-reads what warp 0 read: 128 bytes in 4 sectors for each block
    assert (stats.block_bytes, stats.block_sectors) == (256, 8)
    assert stats.efficiency == stats.block_efficiency == 1.0


def test_block_efficiency_sees_reuse_that_warps_do_not():
    # Each lane of 8 warps reads 4 bytes of its own sector; the 8 warps cover all 32 bytes.
    rows = [(BASE + 32 * lane + 4 * warp, 4, 0, 32 * warp + lane, False)
            for warp in range(8) for lane in range(32)]
    stats = coalescing.profile_launch(trace(rows)).reads
    assert stats.efficiency == pytest.approx(0.125)
    assert stats.block_efficiency == 1.0


def test_totals_add_up_and_empty_traces_waste_nothing():
    empty = coalescing.profile_launch(trace([]))
    assert empty.reads == coalescing.NO_ACCESSES and empty.reads.efficiency == 1.0
    one = coalescing.profile_launch(trace(warp_reads([BASE + 128 * lane for lane in range(32)])))
    reads, writes = coalescing.total([one, one, empty])
    assert (reads.requests, reads.sectors, writes.requests) == (2, 64, 0)
    assert reads.efficiency == pytest.approx(0.125)


def test_profile_runs_a_function_under_tracing(backend_name):
    if backend_name != "emulate":
        pytest.skip("tracing is the emulator's")
    import infini_cupy as xp

    x = np.arange(64 * 64, dtype=np.float32).reshape(64, 64)
    y = np.empty_like(x)
    result, launches = coalescing.profile(xp.rearrange_, y, x.T)
    assert result is y and len(launches) == 1 and launches[0].kernel.startswith("tiled_copy<4")
    assert launches[0].reads.requests > 0 and launches[0].writes.bytes == x.nbytes
