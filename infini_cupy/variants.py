"""Every kernel name expression the package can ever request, by source file.

The NVRTC compile checks, ``warmup`` and the tests read this one list, so a variant the
runtime can launch is a variant the tests have compiled.

>>> len(all_variants()["rearrange.cu"])
912
"""

from __future__ import annotations

from .elementwise import kernels as elementwise_kernels
from .strided.packed_planner import all_packed_kernel_names
from .strided.plan_cache import PACKED_SOURCE, TILED_SOURCE
from .strided.plan_cache import SOURCE as REARRANGE_SOURCE
from .strided.seed_planner import all_kernel_names
from .strided.tile_planner import all_tiled_kernel_names


def all_variants() -> dict[str, tuple[str, ...]]:
    """Every name expression the package can request, grouped by source file."""
    return {
        REARRANGE_SOURCE: all_kernel_names(),
        TILED_SOURCE: all_tiled_kernel_names(),
        PACKED_SOURCE: all_packed_kernel_names(),
        elementwise_kernels.SOURCE: elementwise_kernels.all_names(),
    }
