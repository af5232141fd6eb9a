"""The H100 model's arithmetic (infini_cupy/perf/limits.py) against hand-computed limits."""

import math

import pytest

from infini_cupy.perf import devices
from infini_cupy.perf import limits
from infini_cupy.perf.devices import H100


@pytest.mark.parametrize("registers, shared, threads, expected", [
    (32, 0, 256, (8, "threads")),           # 2048 threads per SM
    (32, 0, 32, (32, "blocks")),            # 32 blocks per SM
    (42, 0, 512, (2, "registers")),         # 48 per thread x 32 = 1536 per warp: 42 warps
    (64, 0, 256, (4, "registers")),
    (32, 49152 + 1024, 256, (4, "shared memory")),  # 228 KiB / 49 KiB
    (42, 96192 + 1024, 512, (2, "registers")),
])
def test_occupancy(registers, shared, threads, expected):
    assert devices.occupancy(registers, shared, threads) == expected


def test_littles_law_and_the_issue_bound_use_the_h100_figures():
    assert H100.little_bytes == pytest.approx(3.35e12 / 132 * 0.7e-6)  # ~17.8 KB
    # 0.9 of a copy: 3.35 TB/s at 4 x 132 x 1.98e9 warp instructions per second
    assert devices.issue_bound(0.9) == pytest.approx(4 * 132 * 1.98e9 * 32 / 3.35e12 / 0.9)


class Kernel:  # what predict reads of a KernelSass
    def __init__(self, ipb, in_flight, registers=32, shared=0, per_block=0, asynchronous=False):
        self.instructions_per_byte, self.bytes_in_flight = ipb, in_flight
        self.registers, self.shared_bytes, self.per_block_instructions = registers, shared, per_block
        self.asynchronous = asynchronous


def test_asynchronous_copies_count_the_whole_tile_in_flight():
    # a load loop of cp.async copies keeps a thread's share of the tile in flight, not one
    # round of loads: 256 threads over a 32 KiB tile have 128 bytes each
    common = dict(sector=1.0, shared_wavefronts_per_byte=0.0, grid_blocks=132 * 40,
                  block_threads=256, tile_bytes=32768)
    rounds = limits.predict(kernel=Kernel(1.0, 4), **common)
    copies = limits.predict(kernel=Kernel(1.0, 4, asynchronous=True), **common)
    assert copies.bytes_in_flight_per_sm == 32 * rounds.bytes_in_flight_per_sm
    assert copies.limits["latency"] > rounds.limits["latency"]
    assert limits.thread_in_flight(16, True, 256, 32768) == 128
    assert limits.thread_in_flight(16, False, 256, 32768) == 16
    assert limits.thread_in_flight(16, True, 256, 0) == 16  # no tile: the loop's own


def test_each_limit():
    ideal = limits.predict(sector=1.0, shared_wavefronts_per_byte=0.0,
                              kernel=Kernel(1.0, 16), grid_blocks=132 * 8 * 10, block_threads=256)
    assert ideal.fraction == 1.0 and ideal.blocks_per_sm == 8 and ideal.waves == 10
    assert ideal.bytes_in_flight_per_sm == 16 * 2048
    # sectors: reads at 0.125 cost 8x their bytes, writes at 1.0: 2 / 9
    assert limits.sector_limit((0.125, 100), (1.0, 100)) == pytest.approx(2 / 9)
    # issue: twice the bound's instructions per byte -> 0.45
    bound = devices.issue_bound(0.9)
    slow = limits.predict(sector=1.0, shared_wavefronts_per_byte=0.0,
                             kernel=Kernel(2 * bound, 16), grid_blocks=1320, block_threads=256)
    assert slow.limits["issue"] == pytest.approx(0.45) and slow.limiter == "issue"
    # latency: 1 byte per thread in flight, 2048 threads, half the bytes are reads
    thin = limits.predict(sector=1.0, shared_wavefronts_per_byte=0.0, kernel=Kernel(1.0, 1),
                             grid_blocks=1320, block_threads=256)
    assert thin.limits["latency"] == pytest.approx(2048 / (H100.little_bytes / 2))
    # waves: 133 blocks on 132 SMs -> one SM runs two
    tail = limits.predict(sector=1.0, shared_wavefronts_per_byte=0.0, kernel=None,
                             grid_blocks=133, block_threads=256)
    assert tail.limits["waves"] == pytest.approx(133 / 132 / 2)
    # shared: one wavefront per byte at 132 x 1.98e9 per second
    banks = limits.predict(sector=1.0, shared_wavefronts_per_byte=1.0, kernel=None,
                              grid_blocks=1320, block_threads=256)
    assert banks.limits["shared"] == pytest.approx(132 * 1.98e9 / 3.35e12)


def test_per_tile_instructions_spread_over_the_tile():
    code = Kernel(4.0, 16, per_block=512)
    p = limits.predict(sector=1.0, shared_wavefronts_per_byte=0.0, kernel=code,
                          grid_blocks=1320, block_threads=256, tile_bytes=16384)
    assert p.instructions_per_byte == pytest.approx(4.0 + 512 * 256 / (2 * 16384))


def test_launches_in_sequence_add_their_times():
    a = limits.predict(sector=0.5, shared_wavefronts_per_byte=0.0, kernel=None,
                          grid_blocks=1320, block_threads=256)
    b = limits.predict(sector=1.0, shared_wavefronts_per_byte=0.0, kernel=None,
                          grid_blocks=1320, block_threads=256)
    assert limits.combined_fraction([a, b], [100, 300]) == pytest.approx(400 / 500, abs=1e-3)
    assert math.isclose(a.fraction, 0.5)


CALIBRATED = dict(sector=1.0, shared_wavefronts_per_byte=0.0, grid_blocks=132 * 40,
                  block_threads=256, tile_bytes=16384, terms=True)


def test_calibrated_terms_leave_the_limits_alone_unless_asked():
    kernel = Kernel(1.5, 64, per_block=300)
    plain = limits.predict(kernel=kernel, kernel_name="tiled_copy<1, 1, 1, 1, 0>",
                           **{**CALIBRATED, "terms": False})
    assert plain.stalls is None and "requests" not in plain.limits
    assert plain.fraction == min(plain.limits.values())


def test_the_phases_cost_a_latency_fraction_per_tile():
    # 4 resident blocks (64 registers x 256 threads): a tile's drain costs PHASE_LATENCIES of
    # the reads a copy keeps in flight, over the bytes the resident blocks copy per tile
    kernel = Kernel(1.5, 64, registers=64)
    small, large = (limits.predict(kernel=kernel, kernel_name="tiled_copy<4, 4, 4, 0, 0>",
                                   **{**CALIBRATED, "tile_bytes": n}) for n in (4096, 65536))
    need = H100.little_bytes * 0.5
    assert small.stalls["phases"] == pytest.approx(
        1 / (1 + limits.PHASE_LATENCIES * need / (4 * 4096)))
    assert small.fraction < large.fraction <= 1.0


def test_narrow_reads_are_held_by_the_requests_an_sm_keeps_in_flight():
    # 32 lanes of 1 byte per request (odd int8 transpose) against 4 x 4 bytes: however many
    # threads wait, LOAD_REQUESTS requests hold that many bytes
    kernel = Kernel(1.5, 64)
    narrow = limits.predict(kernel=kernel, kernel_name="tiled_copy<1, 1, 1, 1, 0>", **CALIBRATED)
    wide = limits.predict(kernel=kernel, kernel_name="tiled_copy<4, 4, 4, 0, 0>", **CALIBRATED)
    assert narrow.limits["requests"] == pytest.approx(
        limits.LOAD_REQUESTS * 32 / (H100.little_bytes * 0.5))
    assert narrow.limiter == "requests" and wide.limits["requests"] == 1.0


def test_the_launch_gap_weighs_on_small_copies_only():
    kernel = Kernel(1.5, 64, registers=64)
    small, large = (limits.predict(kernel=kernel, kernel_name="tiled_copy<4, 4, 4, 0, 0>",
                                   moved_bytes=n, **CALIBRATED) for n in (8 << 20, 1 << 30))
    busy = (8 << 20) / H100.dram_bytes_per_s / min(small.limits.values()) / small.stalls["phases"]
    assert small.stalls["launch"] == pytest.approx(busy / (busy + limits.LAUNCH_GAP_S))
    assert small.stalls["launch"] < 0.9 < large.stalls["launch"]


def test_issue_counts_the_measured_share_of_the_slots():
    ipb = devices.issue_bound(1.0) * 0.9  # 0.9 of the issue bound: not limiting at full issue
    kernel = Kernel(ipb, 64)
    plain = limits.predict(kernel=kernel, **{**CALIBRATED, "terms": False, "tile_bytes": 0})
    calibrated = limits.predict(kernel=kernel, **{**CALIBRATED, "tile_bytes": 0})
    assert plain.limits["issue"] == 1.0
    assert calibrated.limits["issue"] == pytest.approx(limits.ISSUE_EFFICIENCY / 0.9)
