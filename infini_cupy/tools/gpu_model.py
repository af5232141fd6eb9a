"""What fraction of a device-to-device copy's bandwidth a launch can reach on an H100,
predicted without a GPU from what limits a memory-bound kernel there.

A copy of R bytes read and W written takes ``(R + W) / 3.35 TB/s`` at best. Five limits,
each a fraction of that best (1.0: not limiting), and the prediction is the lowest:

- **sector**: DRAM moves 32-byte sectors; a side whose warp accesses use a fraction ``e`` of
  the sectors they touch moves ``1 / e`` times its bytes (the emulator's sector counts);
- **shared**: shared memory serves one wavefront per clock per SM; bank conflicts multiply
  the wavefronts (the emulator's trace of ``lds``/``sts``, :mod:`.bank_conflicts`);
- **issue**: an SM issues 4 warp instructions per clock; a kernel whose hot loops spend ``i``
  instructions per byte moved needs ``i / 32`` warp instructions per byte
  (:mod:`.sass`; a staged copy's per-tile instructions spread over the tile's bytes), against
  ``3.35 TB/s / (132 SMs x 1.98 GHz x 4)`` = 3.2 bytes per warp instruction: above ~10
  instructions per byte a copy cannot keep up;
- **latency**: Little's law: to sustain 3.35 TB/s with ~0.7 us of DRAM latency an SM must
  have ~18 KiB in flight, of which the reads' share (half, for a copy: ~9 KiB) is loads a
  thread waits for; a thread has the bytes of the global loads it issues before using one
  (:mod:`.sass`) in flight, times the threads resident on an SM (occupancy from registers,
  shared memory, threads and blocks per SM);
- **waves**: the blocks of a grid spread over 132 SMs; the SM with the most blocks sets the
  time: ``(blocks / 132) / ceil(blocks / 132)``.

These are estimates from first principles; ``bench`` on a GPU prints the measured GB/s (and
``measured_fraction``) beside them, which calibrates the model.

>>> limits = predict(sector=(1.0, 1.0), shared_wavefronts_per_byte=0.0,
...                  kernel=None, grid_blocks=4096, block_threads=256)
>>> round(limits.fraction, 3), limits.limiter
(0.97, 'waves')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..strided.device_model import (  # noqa: F401 (re-exported)
    H100, Device, issue_bound, issue_limit, latency_limit, occupancy, resident_threads)
from ..strided.kernel_costs import (  # noqa: F401 (sector_limit re-exported)
    sector_limit, thread_in_flight, waves_limit, with_tile_overhead)


@dataclass(frozen=True)
class Prediction:
    """The limits of one launch (fractions of a device-to-device copy) and the numbers behind
    them."""

    limits: dict  # name -> fraction
    instructions_per_byte: float
    bytes_in_flight_per_sm: float
    blocks_per_sm: int
    occupancy_limiter: str
    waves: float  # grid blocks over the blocks all SMs hold at once
    device: Device = H100

    @property
    def fraction(self) -> float:
        return min(self.limits.values())

    @property
    def limiter(self) -> str:
        return min(self.limits, key=self.limits.get)

    def record(self) -> dict:
        """JSON-ready figures."""
        return {"predicted_fraction": round(self.fraction, 3), "limiter": self.limiter,
                **{f"{k}_limit": round(v, 3) for k, v in self.limits.items()},
                "instructions_per_byte": (round(self.instructions_per_byte, 2)
                                          if math.isfinite(self.instructions_per_byte) else None),
                "bytes_in_flight_per_sm": round(self.bytes_in_flight_per_sm),
                "blocks_per_sm": self.blocks_per_sm, "waves": round(self.waves, 2)}


def predict(*, sector, shared_wavefronts_per_byte, kernel, grid_blocks, block_threads,
            dynamic_shared=0, tile_bytes=0, read_share=0.5, device: Device = H100) -> Prediction:
    """The limits of one launch.

    sector: ``(read efficiency, write efficiency)`` (equal byte counts), or a fraction.
    shared_wavefronts_per_byte: shared-memory wavefronts per global byte moved.
    kernel: the :class:`~infini_cupy.tools.sass.KernelSass` of the launched variant, or None
        (then no issue or latency limit and no register or shared-memory occupancy limit).
    tile_bytes: bytes a block copies per iteration of its loop over tiles (a staged copy's
        tile), over which the kernel's per-tile instructions are spread; 0: none.
    read_share: the reads' share of the bytes moved (Little's law covers loads: a thread
        does not wait for its stores).
    """
    if isinstance(sector, tuple):
        sector = sector_limit(*((e, 1) for e in sector))
    copy_s_per_byte = 1 / device.dram_bytes_per_s
    limits = {"sector": sector}
    shared_s = shared_wavefronts_per_byte / (device.sms * device.clock_hz)
    limits["shared"] = min(1.0, copy_s_per_byte / shared_s) if shared_s else 1.0
    registers = kernel.registers if kernel else 0
    shared_bytes = (kernel.shared_bytes if kernel else 0) + dynamic_shared
    blocks_per_sm, limiter = occupancy(registers, shared_bytes, block_threads, device)
    ipb = kernel.instructions_per_byte if kernel else 0.0  # inf: no hot loop found
    if kernel:
        ipb = with_tile_overhead(ipb, kernel.per_block_instructions, block_threads, tile_bytes)
    if kernel and math.isfinite(ipb) and ipb > 0:
        limits["issue"] = issue_limit(ipb, device)
    resident = resident_threads(blocks_per_sm, grid_blocks, block_threads, device)
    per_thread = thread_in_flight(kernel.bytes_in_flight, kernel.asynchronous, block_threads,
                                  tile_bytes) if kernel else 0
    in_flight = per_thread * resident
    if per_thread:  # 0: no load loop found, nothing to say
        limits["latency"] = latency_limit(in_flight, read_share, device)
    limits["waves"] = waves_limit(grid_blocks, device)
    waves = grid_blocks / (max(1, blocks_per_sm) * device.sms)
    return Prediction(limits, ipb, in_flight, blocks_per_sm, limiter, waves, device)


def predict_profile(profile, *, kernel=None, grid_blocks=None, block_threads=None,
                    dynamic_shared=0, tile_bytes=0, device: Device = H100) -> Prediction:
    """:func:`predict` for a traced launch (a :class:`~infini_cupy.tools.profiler.LaunchProfile`:
    its sector efficiencies and shared-memory wavefronts), on ``grid_blocks`` x
    ``block_threads`` (default: the traced launch's)."""
    reads, writes = profile.reads, profile.writes
    moved = reads.bytes + writes.bytes
    sides = [(s.efficiency, s.bytes) for s in (reads, writes) if s.bytes]
    return predict(sector=sector_limit(*sides) if sides else 1.0,
                   shared_wavefronts_per_byte=profile.shared.wavefronts / moved if moved else 0.0,
                   kernel=kernel, grid_blocks=grid_blocks or math.prod(profile.grid),
                   block_threads=block_threads or math.prod(profile.block),
                   dynamic_shared=dynamic_shared, tile_bytes=tile_bytes,
                   read_share=reads.bytes / moved if moved else 0.5, device=device)


def combined_fraction(predictions, moved, credited: int | None = None) -> float:
    """The fraction of several launches run one after another, moving ``moved`` bytes each:
    ``credited`` bytes (default: all they move) over the time a copy would take for them. A
    call that stages an operand first is credited with its own inputs and output only, as a
    GPU measures it: its staging pass costs time and earns nothing.

    >>> full = Prediction({"sector": 1.0}, 4.0, 65536, 4, "registers", 4.0)
    >>> combined_fraction([full, full], [200, 300]), combined_fraction([full, full], [200, 300], 300)
    (1.0, 0.6)
    """
    total = sum(moved) if credited is None else credited
    time = sum(n / p.fraction for p, n in zip(predictions, moved) if p.fraction > 0)
    return round(total / time, 3) if time else 1.0
