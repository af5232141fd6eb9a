"""The planner's performance model (infini_cupy.perf.kernel_costs) of one plan, for tests
that check the planner took the plan the model predicts fastest."""

from __future__ import annotations

from infini_cupy.strided import planner
from infini_cupy.perf import limits


def predicted_fraction(plan, layout, dst_residue=0, src_residue=0) -> float:
    """The fraction of a device-to-device copy the model predicts for ``plan`` of a
    normalized ``layout`` at those sector offsets."""
    efficiency = planner._efficiency(plan, layout, dst_residue, src_residue)
    return limits.predicted_fraction(plan, efficiency, layout.total * layout.unit)
