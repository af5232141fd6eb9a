"""The limits and the predicted fraction: what fraction of a device-to-device copy's bandwidth
a launch can reach on an H100, predicted without a GPU from what limits a memory-bound kernel
there. One implementation: the bench and the plan command call :func:`predict_profile` on traced
launches and their SASS, the planners :func:`predicted_fraction` on a plan and the recorded
costs (:mod:`.kernel_costs`).

A copy of R bytes read and W written takes ``(R + W) / 3.35 TB/s`` at best. Five limits,
each a fraction of that best (1.0: not limiting), and the prediction is the lowest:

- **sector**: DRAM moves 32-byte sectors; a side whose warp accesses use a fraction ``e`` of
  the sectors they touch moves ``1 / e`` times its bytes (the emulator's sector counts);
- **shared**: shared memory serves one wavefront per clock per SM; bank conflicts multiply
  the wavefronts (the emulator's trace of ``lds``/``sts``,
  :mod:`infini_cupy.readers.bank_conflicts`);
- **issue**: an SM issues 4 warp instructions per clock; a kernel whose hot loops spend ``i``
  instructions per byte moved needs ``i / 32`` warp instructions per byte
  (:mod:`infini_cupy.readers.sass`; a staged copy's per-tile instructions spread over the tile's bytes), against
  ``3.35 TB/s / (132 SMs x 1.98 GHz x 4)`` = 3.2 bytes per warp instruction: above ~10
  instructions per byte a copy cannot keep up;
- **latency**: Little's law: to sustain 3.35 TB/s with ~0.7 us of DRAM latency an SM must
  have ~18 KiB in flight, of which the reads' share (half, for a copy: ~9 KiB) is loads a
  thread waits for; a thread has the bytes of the global loads it issues before using one
  (:mod:`infini_cupy.readers.sass`) in flight, times the threads resident on an SM (occupancy from registers,
  shared memory, threads and blocks per SM);
- **waves**: the blocks of a grid spread over 132 SMs; the SM with the most blocks sets the
  time: ``(blocks / 132) / ceil(blocks / 132)``.

These are estimates from first principles. What they leave out, the measured record
(``tests/tools/h100_measured.json``) prices as named terms (:func:`calibrated`, applied with
``terms=True``: where the model is held to a GPU's measurements; the planners and the
``>= 0.9`` targets of the bench cases weigh the limits alone, the bound a kernel can reach):

- **issue efficiency** (:data:`ISSUE_EFFICIENCY`): Nsight Compute measured 83% of an SM's
  issue slots used by a copy whose warps are never short of work (dependent instructions,
  barrier and memory stalls leave the rest empty);
- **wide-tile row work** (:data:`WIDE_ROW_WORK`): the wide-tile staged copies (``Wide = 1``,
  rows that start anywhere in a sector: the odd transposes) compute each row's bounds and
  skew outside the counted hot loop, 1.5-1.8x its instructions in their SASS;
- **phases** (:data:`PHASE_LATENCIES`): a block that loops over tiles (a staged copy's
  tiles, the seed kernel's blocks) drains its loads at the end of each (a barrier, or the
  block's last warp): the next one's loads start from nothing, a DRAM latency the other
  resident blocks' tiles cover only in part. The time lost per tile is this many latencies
  over the read bytes the SM's resident blocks hold per tile;
- **launch gap** (:data:`LAUNCH_GAP_S`): between two kernels of a stream the GPU idles a
  little longer for a call of the package than for the device-to-device copy its fraction is
  taken over, which a copy of a few MB does not hide (the host's own time per call is the
  next term, not this one);
- **load requests** (:data:`LOAD_REQUESTS`): an SM keeps a bounded number of warp load
  requests in flight, not of bytes: a staged copy whose reading phase loads narrow elements
  (32 lanes of ``Unit x ReadVector`` bytes, :func:`read_request_bytes`) has fewer bytes in
  flight than Little's law asks for, however many threads wait (Nsight Compute: the odd
  transposes saturated neither DRAM nor issue).

A measurement is a ratio of two timings, and two more terms turn the model's fraction (of a
copy at DRAM's pace) into the one a bench run reports (:func:`as_measured`):

- **the host floor**: a run times back-to-back calls; a call whose kernel is shorter than the
  host's time per call (its argument checks and launch, measured on that machine: gpu-check's
  launch costs) leaves the GPU waiting for the next launch, so the call takes the host's time;
- **the measured copy**: the copy a fraction is taken over is timed at the case's size, and
  it is not always at DRAM's pace: faster where its bytes stay in the 50 MB L2 between calls,
  slower where its own launch shows; the model prices a kernel's time at DRAM's pace (the
  record's copy of 256 MB or more) and divides the copy's measured time by it.

The constants are fitted to the H100 record (docs/performance/model.md: how, and how well
they predict a suite they were not fitted on).

>>> limits = predict(sector=(1.0, 1.0), shared_wavefronts_per_byte=0.0,
...                  kernel=None, grid_blocks=4096, block_threads=256)
>>> round(limits.fraction, 3), limits.limiter
(0.97, 'waves')
>>> round(sector_limit((0.5, 1), (1.0, 1)), 3)   # reads at half their sectors' bytes
0.667
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .devices import H100, Device, issue_limit, latency_limit, occupancy, resident_threads
from .kernel_costs import kernel_cost

# The calibrated terms (module docstring; docs/performance/model.md). Measured: the share of
# issue slots a copy uses (Nsight Compute on the H100). Fitted to the H100 record: the others.
ISSUE_EFFICIENCY = 0.83
# Instructions per byte of a Wide staged copy over its hot loop's: fitted to 1.0 (no effect)
# once LOAD_REQUESTS holds the narrow reads of the same odd transposes.
WIDE_ROW_WORK = 1.0
PHASE_LATENCIES = 0.5  # DRAM latencies lost per tile a block loops over
LAUNCH_GAP_S = 2e-6  # seconds the GPU idles between a call's launches beyond a copy's
LOAD_REQUESTS = 64  # warp load requests an SM keeps in flight (0: no such limit)


def read_request_bytes(kernel_name: str) -> int:
    """Bytes one warp load instruction of a staged copy's reading phase asks for (32 lanes
    of ``Unit x ReadVector`` bytes), 0 for other kernels.

    >>> read_request_bytes("tiled_copy<4, 1, 4, 0, 1>"), read_request_bytes("ew_contig<a, b, c>")
    (128, 0)
    """
    if not kernel_name.startswith("tiled_copy<"):
        return 0
    unit, read_vector = (int(x) for x in kernel_name[len("tiled_copy<"):].split(",")[:2])
    return 32 * unit * read_vector


def is_wide(kernel_name: str) -> bool:
    """Whether a name expression is a wide-tile staged copy (``tiled_copy<U, RV, WV, 1, S>``).

    >>> is_wide("tiled_copy<1, 1, 1, 1, 0>"), is_wide("tiled_copy<4, 4, 4, 0, 0>")
    (True, False)
    """
    if not kernel_name.startswith("tiled_copy<"):
        return False
    return kernel_name[len("tiled_copy<"):].split(",")[3].strip() == "1"


def calibrated(fraction: float, *, resident_blocks: int, tile_bytes: int, moved_bytes: int,
               read_share: float = 0.5, device: Device = H100) -> dict[str, float]:
    """The factors (each <= 1) by which the phases and the launch gap lower a launch's
    ``fraction`` of a copy: ``{"phases": ..., "launch": ...}``.

    phases: ``1 / (1 + PHASE_LATENCIES x (reads a copy keeps in flight per SM) / (read bytes
    the SM's resident blocks copy per tile))``, for a block looping over tiles of
    ``tile_bytes`` (0: none). launch: a copy of ``moved_bytes`` (read + written; 0: not
    counted) at ``fraction`` of the bandwidth, plus :data:`LAUNCH_GAP_S`.

    >>> f = calibrated(1.0, resident_blocks=4, tile_bytes=16384, moved_bytes=512 << 20)
    >>> round(f["phases"], 3), round(f["launch"], 3)
    (0.937, 0.988)
    """
    factors = {"phases": 1.0, "launch": 1.0}
    if tile_bytes and resident_blocks:
        need = device.little_bytes * read_share
        factors["phases"] = 1 / (1 + PHASE_LATENCIES * need / (resident_blocks * tile_bytes))
    if moved_bytes and fraction > 0:
        busy = moved_bytes / device.dram_bytes_per_s / (fraction * factors["phases"])
        factors["launch"] = busy / (busy + LAUNCH_GAP_S)
    return factors


def with_tile_overhead(per_byte: float, per_tile: int, block_threads: int,
                       tile_bytes: int) -> float:
    """Instructions per byte once a staged copy's per-tile instructions are spread over the
    bytes a thread moves per tile (``2 * tile_bytes / block_threads``, read and written)."""
    if per_tile and tile_bytes:
        per_byte += per_tile * block_threads / (2 * tile_bytes)
    return per_byte


def thread_in_flight(bytes_in_flight: int, asynchronous: bool, block_threads: int,
                     tile_bytes: int) -> int:
    """Load bytes a thread has in flight at once: those its load loop issues before using one,
    or for a loop of asynchronous copies (cp.async, nothing waits on them until the phase
    ends) its share of the whole tile."""
    if asynchronous and tile_bytes and block_threads:
        return max(bytes_in_flight, tile_bytes // block_threads)
    return bytes_in_flight


def sector_limit(read: tuple[float, int], write: tuple[float, int] | None = None) -> float:
    """Bytes asked for over bytes DRAM moves, over both sides' ``(efficiency, bytes)``
    (efficiency: bytes over 32 x sectors)."""
    sides = [s for s in (read, write) if s is not None]
    asked = sum(n for _, n in sides)
    moved = sum(n / e for e, n in sides if e > 0)
    return asked / moved if moved else 1.0


def waves_limit(blocks: int, device: Device = H100) -> float:
    """The SM with the most of a grid's blocks sets its time:
    ``(blocks / SMs) / ceil(blocks / SMs)`` (1.0 for an empty grid)."""
    if blocks <= 0:
        return 1.0
    per_sm = blocks / device.sms
    return per_sm / math.ceil(per_sm)


def as_measured(fraction: float, *, copy_seconds: float, dram_copy_seconds: float,
                host_seconds: float) -> float:
    """The fraction of a copy a GPU run measures for a call the model predicts at
    ``fraction`` of a copy at DRAM's pace (module docstring: the host floor and the measured
    copy): the copy's measured time over the call's, which is its kernel's time
    (``dram_copy_seconds``, the same bytes copied at DRAM's pace, over ``fraction``) or the
    host's time per call, the longer.

    >>> as_measured(0.9, copy_seconds=100e-6, dram_copy_seconds=100e-6, host_seconds=15e-6)
    0.9
    >>> round(as_measured(0.9, copy_seconds=6e-6, dram_copy_seconds=5e-6, host_seconds=12e-6), 3)
    0.5
    """
    if fraction <= 0:
        return 0.0
    return copy_seconds / max(dram_copy_seconds / fraction, host_seconds)


def tile_bytes(plan, nbytes: int, *, seed_blocks: bool = True) -> int:
    """Bytes a block copies per iteration of its loop over tiles (a staged copy's tiles, the
    seed kernels' blocks of the plan), over which the kernel's per-tile instructions spread.
    ``seed_blocks=False`` counts staged and packed tiles only (0 for a seed plan), as the
    planners weigh plans: their recorded per-tile costs are those of the tile loops."""
    tiles = getattr(plan, "tiles", 0) or (getattr(plan, "grid_blocks", 0) if seed_blocks else 0)
    return nbytes // tiles if tiles else 0


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
    stalls: dict | None = None  # name -> factor (<= 1) on the lowest limit: calibrated()

    @property
    def fraction(self) -> float:
        return min(self.limits.values()) * math.prod((self.stalls or {}).values())

    @property
    def limiter(self) -> str:
        """The lowest limit, or a calibrated stall lower than it."""
        figures = {**self.limits, **(self.stalls or {})}
        return min(figures, key=figures.get)

    def record(self) -> dict:
        """JSON-ready figures."""
        return {"predicted_fraction": round(self.fraction, 3), "limiter": self.limiter,
                **{f"{k}_limit": round(v, 3) for k, v in self.limits.items()},
                **{f"{k}_stall": round(v, 3) for k, v in (self.stalls or {}).items()},
                "instructions_per_byte": (round(self.instructions_per_byte, 2)
                                          if math.isfinite(self.instructions_per_byte) else None),
                "bytes_in_flight_per_sm": round(self.bytes_in_flight_per_sm),
                "blocks_per_sm": self.blocks_per_sm, "waves": round(self.waves, 2)}


def predict(*, sector, shared_wavefronts_per_byte, kernel, grid_blocks, block_threads,
            dynamic_shared=0, tile_bytes=0, read_share=0.5, device: Device = H100,
            terms: bool = False, kernel_name: str = "", moved_bytes: int = 0) -> Prediction:
    """The limits of one launch.

    sector: ``(read efficiency, write efficiency)`` (equal byte counts), or a fraction.
    shared_wavefronts_per_byte: shared-memory wavefronts per global byte moved.
    kernel: the :class:`~infini_cupy.readers.sass.KernelSass` of the launched variant, or None
        (then no issue or latency limit and no register or shared-memory occupancy limit).
    tile_bytes: bytes a block copies per iteration of its loop over tiles (a staged copy's
        tile), over which the kernel's per-tile instructions are spread; 0: none.
    read_share: the reads' share of the bytes moved (Little's law covers loads: a thread
        does not wait for its stores).
    terms: apply the calibrated terms (module docstring): issue efficiency, the row work of
        a wide-tile ``kernel_name``, the phases and the launch gap of a launch moving
        ``moved_bytes`` (read + written, at its full size; 0: no launch gap counted).
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
    if terms and not blocks_per_sm:
        # A launch priced as it ran had a block resident: the SASS read here holds more
        # registers than the GPU's compile of it did (its register cap), not fewer blocks.
        blocks_per_sm = 1
    ipb = kernel.instructions_per_byte if kernel else 0.0  # inf: no hot loop found
    if terms and is_wide(kernel_name):
        ipb *= WIDE_ROW_WORK
    if kernel:
        ipb = with_tile_overhead(ipb, kernel.per_block_instructions, block_threads, tile_bytes)
    if kernel and math.isfinite(ipb) and ipb > 0:
        limits["issue"] = issue_limit(ipb / (ISSUE_EFFICIENCY if terms else 1.0), device)
    resident = resident_threads(blocks_per_sm, grid_blocks, block_threads, device)
    per_thread = thread_in_flight(kernel.bytes_in_flight, kernel.asynchronous, block_threads,
                                  tile_bytes) if kernel else 0
    in_flight = per_thread * resident
    if per_thread:  # 0: no load loop found, nothing to say
        limits["latency"] = latency_limit(in_flight, read_share, device)
    if terms and LOAD_REQUESTS and read_request_bytes(kernel_name):
        limits["requests"] = latency_limit(LOAD_REQUESTS * read_request_bytes(kernel_name),
                                           read_share, device)
    limits["waves"] = waves_limit(grid_blocks, device)
    waves = grid_blocks / (max(1, blocks_per_sm) * device.sms)
    stalls = None
    if terms:
        stalls = calibrated(min(limits.values()), tile_bytes=tile_bytes,
                            resident_blocks=min(blocks_per_sm, -(-grid_blocks // device.sms)),
                            moved_bytes=moved_bytes, read_share=read_share, device=device)
    return Prediction(limits, ipb, in_flight, blocks_per_sm, limiter, waves, device, stalls)


def predict_profile(profile, *, kernel=None, grid_blocks=None, block_threads=None,
                    dynamic_shared=0, tile_bytes=0, device: Device = H100, kernel_name="",
                    moved_bytes=0, terms: bool = False) -> Prediction:
    """:func:`predict` for a traced launch (a :class:`~infini_cupy.readers.coalescing.LaunchProfile`:
    its sector efficiencies and shared-memory wavefronts), on ``grid_blocks`` x
    ``block_threads`` (default: the traced launch's); ``terms``: with the calibrated terms of
    kernel ``kernel_name`` moving ``moved_bytes`` at its full size."""
    reads, writes = profile.reads, profile.writes
    moved = reads.bytes + writes.bytes
    sides = [(s.efficiency, s.bytes) for s in (reads, writes) if s.bytes]
    return predict(sector=sector_limit(*sides) if sides else 1.0,
                   shared_wavefronts_per_byte=profile.shared.wavefronts / moved if moved else 0.0,
                   kernel=kernel, grid_blocks=grid_blocks or math.prod(profile.grid),
                   block_threads=block_threads or math.prod(profile.block),
                   dynamic_shared=dynamic_shared, tile_bytes=tile_bytes,
                   read_share=reads.bytes / moved if moved else 0.5, device=device,
                   terms=terms, kernel_name=kernel_name, moved_bytes=moved_bytes)


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


class _RecordedKernel:
    """A variant's recorded :class:`~.kernel_costs.Cost` in the shape :func:`predict` reads a
    kernel's SASS figures."""

    def __init__(self, cost):
        self.registers, self.shared_bytes = cost.registers, cost.shared_bytes
        self.instructions_per_byte, self.per_block_instructions = cost.per_byte, cost.per_tile
        self.bytes_in_flight, self.asynchronous = cost.bytes_in_flight, cost.asynchronous


def limits(plan, efficiency: tuple[float, float], nbytes: int,
           device: Device = H100) -> dict[str, float]:
    """The sector, issue, latency and waves limits of ``plan`` copying ``nbytes`` bytes with
    ``(reads, writes)`` sector ``efficiency``, each a fraction of a device-to-device copy:
    :func:`predict` of the plan's launch with its recorded costs (all but the shared-memory
    limit: the planners' bank models, :mod:`infini_cupy.strided.tile_banks` and
    :mod:`infini_cupy.strided.packed_banks`, weigh bank conflicts on their own)."""
    prediction = predict(
        sector=tuple(efficiency), shared_wavefronts_per_byte=0.0,
        kernel=_RecordedKernel(kernel_cost(plan.kernel)),
        grid_blocks=getattr(plan, "launch_blocks", 0) or plan.grid_blocks,
        block_threads=plan.block_threads, dynamic_shared=getattr(plan, "shared_bytes", 0),
        tile_bytes=tile_bytes(plan, nbytes, seed_blocks=False), device=device)
    return {name: prediction.limits.get(name, 1.0)
            for name in ("sector", "issue", "latency", "waves")}


def predicted_fraction(plan, efficiency: tuple[float, float], nbytes: int,
                       device: Device = H100) -> float:
    """The fraction of a device-to-device copy ``plan`` is predicted to reach: the lowest of
    its :func:`limits`.

    >>> from collections import namedtuple
    >>> Plan = namedtuple("Plan", "kernel block_threads grid_blocks tiles shared_bytes")
    >>> plan = Plan("tiled_copy<4, 1, 1, 0, 0>", 256, 4096, 4096, 0)
    >>> round(predicted_fraction(plan, (1.0, 1.0), 4096 * 16896), 3)
    0.97
    """
    return min(limits(plan, efficiency, nbytes, device).values())
