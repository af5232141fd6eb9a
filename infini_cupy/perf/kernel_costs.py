"""The recorded instruction costs of every kernel variant (``kernel_costs.json``), read from
its sm_90 code, so that the planners weigh a plan's instruction issue against its memory
traffic with no compiler at hand.

``kernel_costs.json`` holds, per name expression, the instructions a thread issues per global
byte in the variant's hot loops and per tile in its loop over tiles, its registers, static
shared memory and bytes of loads in flight per thread, as
:func:`infini_cupy.readers.sass.read_kernel` reads them from NVRTC's sm_90 code
(``python -m infini_cupy.tools.warmup.record_costs`` rewrites the file;
``tests/perf/test_kernel_costs.py`` fails when the record and the code part ways). What the
costs predict is :mod:`.limits`'s.

>>> kernel_cost("tiled_copy<4, 1, 1, 0, 0>")
Cost(per_byte=4.34, per_tile=315, registers=48, shared_bytes=17920, bytes_in_flight=16, asynchronous=1)
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import NamedTuple

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
                       "python -m infini_cupy.tools.warmup.record_costs records every variant") from None
