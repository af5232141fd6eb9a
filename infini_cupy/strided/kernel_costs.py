"""What each kernel variant costs in instructions, recorded from its sm_90 code, so that the
planner weighs a plan's instruction issue against its memory traffic with no compiler at hand.

``kernel_costs.json`` holds, per name expression, the instructions a thread issues per global
byte in the variant's hot loops and per tile in its loop over tiles, its registers, static
shared memory and bytes of loads in flight per thread, as
:func:`infini_cupy.tools.sass.read_kernel` reads them from NVRTC's sm_90 code
(``python -m infini_cupy.tools.kernel_costs`` rewrites the file;
``tests/tools/test_kernel_costs.py`` fails when the record and the code part ways).

:func:`predicted_fraction` is the bench's model (:mod:`infini_cupy.tools.gpu_model`) without
its shared-memory limit: the lowest of the sector limit (the bytes asked for over the bytes
DRAM moves, both sides), the issue limit (:func:`.device_model.issue_limit`), the latency
limit (loads in flight per SM against Little's law) and the waves limit (the grid's blocks over
the SMs). The planner takes a packed plan only
where it predicts a larger fraction than the staged or seed plan it would launch otherwise,
and splits a staged copy's tiles where that fills the SMs better.

>>> kernel_cost("tiled_copy<4, 1, 1, 0, 0>")
Cost(per_byte=4.34, per_tile=315, registers=48, shared_bytes=17920, bytes_in_flight=16, asynchronous=1)
>>> round(sector_limit((0.5, 1), (1.0, 1)), 3)   # reads at half their sectors' bytes
0.667
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import NamedTuple

from .device_model import (H100, Device, issue_limit, latency_limit, occupancy,
                           resident_threads)

TABLE = Path(__file__).with_name("kernel_costs.json")


@functools.cache
def _kernels() -> dict:
    return json.loads(TABLE.read_text())["kernels"]


def table_key(kernel: str) -> str:
    """The entry that holds a variant's cost: its own, except for the seed kernels
    ``rearrange<Unit, B, G, C, Index>``, whose heaviest variant per unit and index type
    (``B = G = 5``, ``C = 2``) stands for them all (an upper bound: their instructions grow
    with the dims they walk)."""
    if kernel.startswith("rearrange<"):
        unit, *_, index = (part.strip() for part in kernel[len("rearrange<"):-1].split(","))
        return f"rearrange<{unit}, 5, 5, 2, {index}>"
    return kernel


class Cost(NamedTuple):
    """What one variant's sm_90 code costs (a row of ``kernel_costs.json``)."""

    per_byte: float  # instructions a thread issues per global byte in its hot loops
    per_tile: int  # instructions per tile of its loop over tiles, outside the hot loops
    registers: int  # per thread
    shared_bytes: int  # static shared memory per block
    bytes_in_flight: int  # bytes of global loads a thread issues before using one
    asynchronous: int = 0  # 1: loads go global -> shared by cp.async (see thread_in_flight)


def kernel_cost(kernel: str) -> Cost:
    """The :class:`Cost` of a name expression. Raises KeyError for a name the record lacks."""
    try:
        return Cost(*_kernels()[table_key(kernel)])
    except KeyError:
        raise KeyError(f"{kernel}: no instruction count recorded in {TABLE.name}; "
                       "python -m infini_cupy.tools.kernel_costs records every variant") from None


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


def limits(plan, efficiency: tuple[float, float], nbytes: int,
           device: Device = H100) -> dict[str, float]:
    """The sector, issue, latency and waves limits of ``plan`` copying ``nbytes`` bytes with
    ``(reads, writes)`` sector ``efficiency``, each a fraction of a device-to-device copy."""
    cost = kernel_cost(plan.kernel)
    tiles = getattr(plan, "tiles", 0)
    tile_bytes = nbytes // tiles if tiles else 0
    per_byte = with_tile_overhead(cost.per_byte, cost.per_tile, plan.block_threads, tile_bytes)
    in_flight = thread_in_flight(cost.bytes_in_flight, cost.asynchronous, plan.block_threads,
                                 tile_bytes)
    blocks = getattr(plan, "launch_blocks", 0) or plan.grid_blocks
    shared = cost.shared_bytes + getattr(plan, "shared_bytes", 0)  # static + dynamic
    per_sm, _ = occupancy(cost.registers, shared, plan.block_threads, device)
    resident = resident_threads(per_sm, blocks, plan.block_threads, device)
    reads, writes = efficiency
    return {"sector": sector_limit((reads, 1), (writes, 1)),
            "issue": issue_limit(per_byte, device),
            "latency": (latency_limit(in_flight * resident, device=device)
                        if in_flight else 1.0),
            "waves": waves_limit(blocks, device)}


def predicted_fraction(plan, efficiency: tuple[float, float], nbytes: int,
                       device: Device = H100) -> float:
    """The fraction of a device-to-device copy ``plan`` is predicted to reach: the lowest of
    its :func:`limits`."""
    return min(limits(plan, efficiency, nbytes, device).values())
