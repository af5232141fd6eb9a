"""The device table: every hardware figure the planners and the models use, defined once (the
GPU launches are sized for and predicted against is an H100 SXM).

Pure Python. The memory and warp granules every NVIDIA GPU shares are module constants
(:data:`SECTOR`, :data:`BANKS`, :data:`WARP_SIZE`, the shared memory a kernel gets without
opting in and the most a block may opt in to); the figures of one device are a
:class:`Device`. The planners size grids with them
(:func:`infini_cupy.strided.seed_planner.launch_blocks`) and weigh a plan's instruction issue
against its memory traffic (:mod:`.limits`), which also predicts the bench's fractions. Plans
are correct on any GPU: only their speed assumes these figures.

>>> H100.sms, round(issue_bound(1.0), 2)
(132, 9.99)
"""

from __future__ import annotations

from dataclasses import dataclass, replace

SECTOR = 32  # bytes: the granule of global memory traffic (a DRAM sector)
BANKS = 32  # shared-memory banks, 4 bytes wide: one wavefront serves one word per bank
WARP_SIZE = 32  # threads of a warp
STATIC_SHARED_BYTES = 48 * 1024  # shared memory per block without opting in to more
MAX_DYNAMIC_SHARED = 227 * 1024  # the most dynamic shared memory a block may opt in to (sm_90)


@dataclass(frozen=True)
class Device:
    """The figures of a GPU the models use."""

    name: str
    sms: int
    dram_bytes_per_s: float  # a device-to-device copy's read + write bandwidth
    clock_hz: float
    warp_issue_per_clock: int  # warp instructions per clock per SM
    dram_latency_s: float
    registers_per_sm: int
    register_unit: int  # registers are allocated per warp in units of this many
    shared_per_sm: int  # bytes of shared memory per SM for blocks
    threads_per_sm: int
    blocks_per_sm: int

    @property
    def little_bytes(self) -> float:
        """Bytes an SM must have in flight to sustain its share of the bandwidth."""
        return self.dram_bytes_per_s / self.sms * self.dram_latency_s


H100 = Device("H100 SXM", sms=132, dram_bytes_per_s=3.35e12, clock_hz=1.98e9,
              warp_issue_per_clock=4, dram_latency_s=0.7e-6, registers_per_sm=65536,
              register_unit=256, shared_per_sm=228 * 1024, threads_per_sm=2048, blocks_per_sm=32)
# The H200 SXM is the H100's processor (sm_90: the same SMs, clock, registers and shared
# memory, by NVIDIA's H200 datasheet) with 141 GB of HBM3e at 4.8 TB/s (the datasheet's
# figure; a device-to-device copy measured 4.03-4.16 TB/s read + write on 2026-12-04,
# docs/performance/h200.md). DRAM latency is taken as the H100's: not measured.
H200 = replace(H100, name="H200 SXM", dram_bytes_per_s=4.8e12)
DEVICES = {"h100": H100, "h200": H200}  # by the name of their measured records


def issue_bound(fraction: float = 0.9, device: Device = H100) -> float:
    """The most instructions a thread may issue per byte it moves for the issue limit to stay
    at ``fraction`` of a device-to-device copy (~11 on an H100 for 0.9): an SM issues
    ``warp_issue_per_clock`` warp instructions (32 threads' worth) per clock."""
    return 32 * device.warp_issue_per_clock * device.sms * device.clock_hz / (
        device.dram_bytes_per_s * fraction)


def issue_limit(instructions_per_byte: float, device: Device = H100) -> float:
    """The fraction of a device-to-device copy a kernel issuing ``instructions_per_byte``
    (per thread, per global byte moved) can reach: 1.0 when issue does not limit it.

    >>> issue_limit(5.0), round(issue_limit(146.25), 3)
    (1.0, 0.068)
    """
    if instructions_per_byte <= 0:
        return 1.0
    return min(1.0, issue_bound(1.0, device) / instructions_per_byte)


def occupancy(registers: int, shared_bytes: int, block_threads: int, device: Device = H100):
    """(blocks resident per SM, what limits them: "threads", "blocks", "registers" or
    "shared memory"). ``shared_bytes``: static plus dynamic per block."""
    warps = -(-block_threads // 32)
    limits = {"threads": device.threads_per_sm // (warps * 32),
              "blocks": device.blocks_per_sm}
    if registers:
        per_warp = -(-registers * 32 // device.register_unit) * device.register_unit
        limits["registers"] = device.registers_per_sm // per_warp // warps
    if shared_bytes:
        limits["shared memory"] = device.shared_per_sm // shared_bytes
    limiter = min(limits, key=limits.get)
    return max(0, limits[limiter]), limiter


def resident_threads(blocks_per_sm: int, grid_blocks: int, block_threads: int,
                     device: Device = H100) -> int:
    """Threads of a grid an SM holds at once: as many blocks as occupancy allows, at most the
    grid's share of them."""
    return min(blocks_per_sm, -(-grid_blocks // device.sms)) * block_threads


def latency_limit(bytes_in_flight_per_sm: float, read_share: float = 0.5,
                  device: Device = H100) -> float:
    """Little's law: the fraction of a copy an SM sustains with this many bytes of loads in
    flight, against the ``read_share`` of ``little_bytes`` a copy's loads need (a thread does
    not wait for its stores)."""
    return min(1.0, bytes_in_flight_per_sm / (device.little_bytes * read_share))
