"""The instruction costs the planner weighs (infini_cupy/perf/kernel_costs.json) against the
sm_90 code NVRTC makes now (NVRTC and nvdisasm run; no GPU): every variant the planners can
return has a cost, a sample of the record matches the SASS (of the NVRTC that made it, or within
wider bounds of another 13.x), and the seed kernels' heaviest variant bounds the others."""

from __future__ import annotations

import json

import pytest

from infini_cupy.perf import kernel_costs
from infini_cupy.strided.packed_planner import all_packed_kernel_names
from infini_cupy.strided.seed_planner import all_kernel_names
from infini_cupy.strided.tile_planner import all_tiled_kernel_names
from infini_cupy.readers import sass
from infini_cupy.tools.warmup.record_costs import recorded_kernels
from tests.support import nvrtc_programs
from tests.support.nvrtc_records import (OTHER_NVRTC_IN_FLIGHT_FACTOR, OTHER_NVRTC_TOLERANCE,
                                         recorded_here)

SOURCE = {"rearrange": "rearrange.cu", "rearrange_general": "rearrange.cu",
          "tiled_copy": "transpose.cu", "packed_copy": "packed.cu"}
# A sample spanning every family and unit: every packed D=4 variant, the staged copies' narrow
# and widest variants, the heaviest seed variants of 32-bit indices, the flat kernels.
SAMPLE = ([f"packed_copy<{u}, 4, 1>" for u in (1, 2, 4, 8, 16)]
          + [f"tiled_copy<{u}, 1, 1, 1, 0>" for u in (1, 2, 4, 8, 16)]
          + ["tiled_copy<1, 16, 16, 0, 0>", "tiled_copy<2, 8, 8, 0, 0>", "tiled_copy<4, 4, 4, 0, 0>",
             "tiled_copy<4, 1, 4, 0, 1>", "tiled_copy<4, 4, 4, 0, 1>", "tiled_copy<4, 1, 1, 0, 0, 1>",
             "tiled_copy<2, 8, 2, 0, 1, 1>"]
          + [f"rearrange<{u}, 5, 5, 2, int>" for u in (1, 4, 32)]
          + [f"rearrange_general<{u}, int>" for u in (1, 4)])
TOLERANCE = 0.15  # relative: NVRTC releases move a few instructions; decisions need less


def _source(name):
    return SOURCE[name.split("<")[0]]


pytestmark = pytest.mark.usefixtures("sass_tools")


@pytest.fixture(scope="module", autouse=True)
def _read_together(request, sass_tools):
    """The selected variants' SASS, read at once from the session's NVRTC programs."""
    nvrtc_programs.read_sass({(_source(item.callspec.params["name"]), item.callspec.params["name"])
                              for item in request.session.items
                              if getattr(item, "module", None) is request.module
                              and hasattr(item, "callspec")})


def test_every_variant_the_planners_return_has_a_cost():
    names = all_kernel_names() + all_tiled_kernel_names() + all_packed_kernel_names()
    for name in names:
        cost = kernel_costs.kernel_cost(name)
        assert cost.per_byte > 0 and cost.per_tile >= 0 and cost.registers > 0, name
    recorded = json.loads(kernel_costs.TABLE.read_text())["kernels"]
    assert set(recorded) == {name for _, name in recorded_kernels()}
    with pytest.raises(KeyError, match="kernel_costs"):
        kernel_costs.kernel_cost("tiled_copy<3, 1, 1, 0, 0>")


@pytest.mark.parametrize("name", SAMPLE)
def test_the_record_matches_the_sm_90_code(name):
    same = recorded_here(json.loads(kernel_costs.TABLE.read_text())["nvrtc"])
    tolerance = TOLERANCE if same else OTHER_NVRTC_TOLERANCE
    code = sass.read_kernel(_source(name), name)
    cost = kernel_costs.kernel_cost(name)
    assert cost.per_byte == pytest.approx(code.instructions_per_byte, rel=tolerance), (
        f"{name}: recorded {cost.per_byte}, the code issues {code.instructions_per_byte:.2f} "
        "instructions per byte: python -m infini_cupy.tools.warmup.record_costs records it again")
    assert cost.per_tile == pytest.approx(code.per_block_instructions, rel=tolerance, abs=8)
    assert cost.registers == pytest.approx(code.registers, rel=tolerance, abs=4)
    assert cost.shared_bytes == code.shared_bytes
    if same:
        assert cost.bytes_in_flight == code.bytes_in_flight
    else:
        recorded, factor = cost.bytes_in_flight, OTHER_NVRTC_IN_FLIGHT_FACTOR
        assert recorded / factor <= code.bytes_in_flight <= recorded * factor, name


def test_grouped_variants_keep_the_plain_variants_loads_in_flight():
    # Why only these have Grouped variants (tile_planner.has_grouped_variant): the others'
    # loads would wait on their shared stores. (Their registers: test_transpose_kernels.)
    grouped = [n for n in all_tiled_kernel_names() if n.count(",") == 5]
    assert grouped
    for name in grouped:
        plain = name[:-len(", 1>")] + ">"
        assert kernel_costs.kernel_cost(name).bytes_in_flight \
            >= kernel_costs.kernel_cost(plain).bytes_in_flight, name


@pytest.mark.parametrize("name", ["rearrange<1, 1, 1, 0, int>", "rearrange<1, 3, 2, 1, int>",
                                  "rearrange<4, 5, 4, 2, long long>"])
def test_the_heaviest_seed_variant_bounds_the_others(name):
    assert kernel_costs.table_key(name) != name
    code = sass.read_kernel("rearrange.cu", name)
    assert code.instructions_per_byte <= kernel_costs.kernel_cost(name).per_byte * (1 + TOLERANCE)


def test_the_planner_weighs_issue_against_coalescing():
    # An odd int8 transpose: a packed tile coalesces better (0.90 of the sector limit against
    # the staged transpose's 0.87), and the recorded costs would predict it faster; but its
    # rows start anywhere in a word, so its phases cannot move 8-byte words (the recorded
    # costs' walk) and the planner keeps the staged transpose.
    from infini_cupy.strided.layout import normalize_layout
    from infini_cupy.strided.packed_planner import plan_large, words_on_both
    from infini_cupy.strided.planner import _efficiency, plan_rearrange
    from tests.support.plan_model import predicted_fraction

    shape, dst, src = (3999, 4001), (4001, 1), (1, 3999)
    plan = plan_rearrange(shape, dst, src, 1)
    assert plan.kernel.startswith("tiled_copy<1, ")
    layout = normalize_layout(shape, dst, src, 1)
    large = plan_large(layout, 0, 0, 1024, _efficiency(plan, layout, 0, 0), 163840)
    assert min(large.predicted) > min(_efficiency(plan, layout, 0, 0))
    assert not words_on_both(large)
    assert predicted_fraction(large, layout) > predicted_fraction(plan, layout)
