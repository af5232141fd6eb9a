"""Tests of the packed planner (``infini_cupy.strided.packed_planner``) and the sector model.

Packed plans are simulated in Python (``tests/support/packed_simulation.py``): every work item
of every tile computes its addresses and shared-memory slot exactly as ``packed_copy`` does,
and the bytes the plan copies are compared with NumPy index arithmetic, as for the other plan
kinds (``test_planner.py``). The simulation also counts the sectors of every warp access, which
the sector model must predict.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infini_cupy.perf import sectors as sm
from infini_cupy.strided.layout import normalize_layout
from infini_cupy.strided.packed_planner import (
    DYNAMIC,
    LARGE_MAX_BYTES,
    LARGE_STEP,
    MARGIN,
    PACKED_WIDE_BYTES,
    PackedPlan,
    all_packed_kernel_names,
    packed_kernel_name,
    plan_large,
    plan_packed,
    words_on_both,
)
from infini_cupy.strided.planner import _efficiency, plan_rearrange
from infini_cupy.strided.tile_planner import TilePlan
from tests.strided.test_planner import element_offsets, expand_bytes, layouts
from tests.support.packed_simulation import check_packed_plan, simulate_packed_kernel
from tests.support.plan_model import predicted_fraction


def check_packed_copies_exactly(shape, dst_strides, src_strides, itemsize, *, dst_address=0,
                                src_address=0, max_threads=1024):
    """The best packed plan of a layout (no rival to beat), simulated: every dst byte written
    once from the right src byte; each aligned side touches at most the sectors predicted."""
    layout = normalize_layout(shape, dst_strides, src_strides, itemsize,
                              dst_address=dst_address, src_address=src_address)
    plan = plan_packed(layout, dst_address % 32, src_address % 32, max_threads)
    if plan is None:  # nothing to copy, or one element folded whole into the unit
        assert layout.total == 0 or layout.shape == ()
        return None, None
    check_packed_plan(plan, max_threads)
    copied = simulate_packed_kernel(plan, dst_address, src_address)
    expected_dst = expand_bytes(element_offsets(shape, dst_strides), itemsize)
    expected_src = expand_bytes(element_offsets(shape, src_strides), itemsize)
    copied_dst, copied_src = expand_bytes(copied.dst, plan.unit), expand_bytes(copied.src, plan.unit)
    assert len(copied_dst) == len(expected_dst)
    order, expected_order = np.argsort(copied_dst), np.argsort(expected_dst)
    assert np.array_equal(copied_dst[order], expected_dst[expected_order])
    assert np.array_equal(copied_src[order], expected_src[expected_order])
    # Sectors two runs share in one warp access count once there: the model may only overcount.
    if plan.read.aligned:
        assert copied.read_sectors <= plan.sectors[0]
    if plan.write.aligned:
        assert copied.write_sectors <= plan.sectors[1]
    return plan, copied


def c_strides(shape, itemsize):
    return tuple(itemsize * math.prod(shape[d + 1:]) for d in range(len(shape)))


def permuted(shape, perm, itemsize):
    """(y shape, y strides, x strides): x C-contiguous of ``shape``, y = C-contiguous copy of
    x.transpose(perm)."""
    x = c_strides(shape, itemsize)
    y_shape = tuple(shape[p] for p in perm)
    return y_shape, c_strides(y_shape, itemsize), tuple(x[p] for p in perm)


def row_to_column_major(shape, itemsize):
    return shape, c_strides(shape[::-1], itemsize)[::-1], c_strides(shape, itemsize)


# --- every byte once, from the right byte ----------------------------------------------


@settings(max_examples=300, deadline=None)
@given(layouts())
def test_every_dst_byte_is_copied_once_from_the_right_src_byte(layout):
    # Any layout, forced through a packed plan: slices, negative steps, broadcast sources,
    # offsets, 1- to 16-byte elements, tiny thread budgets.
    shape, dst_strides, src_strides, itemsize, options = layout
    check_packed_copies_exactly(shape, dst_strides, src_strides, itemsize, **options)


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_permutations_of_rank_2_to_8(data):
    rank = data.draw(st.integers(2, 8))
    limit = {2: 300, 3: 40, 4: 12}.get(rank, 6)
    shape = tuple(data.draw(st.integers(1, limit)) for _ in range(rank))
    if math.prod(shape) > 40000:
        shape = shape[:-1] + (1,)
    perm = data.draw(st.permutations(range(rank)))
    itemsize = data.draw(st.sampled_from([1, 2, 4, 8, 16]))
    address = data.draw(st.sampled_from([0, 256, 4096 + 16, 8, 4, 2, 1]))
    y_shape, y_strides, x_strides = permuted(shape, perm, itemsize)
    check_packed_copies_exactly(y_shape, y_strides, x_strides, itemsize, src_address=address,
                                max_threads=data.draw(st.sampled_from([1024, 256, 32])))


def test_split_dims_on_both_sides_and_a_short_last_chunk():
    # 3,4,13,25,5,7 row- to column-major fp32: 13 and 25 both cut into chunks.
    plan, copied = check_packed_copies_exactly(*row_to_column_major((3, 4, 13, 25, 5, 7), 4), 4)
    assert len(plan.split_outer) == 2
    assert any(n < full for n, full in zip(plan.read.length, plan.read.full))
    assert (copied.read_sectors, copied.write_sectors) == plan.sectors


def test_descending_runs_and_offsets():
    # A reversed, transposed source 3 bytes into a sector, into an offset destination.
    shape = (7, 5, 3, 11)
    _, y_strides, x_strides = permuted(shape, (3, 1, 0, 2), 2)
    x_strides = tuple(-s for s in x_strides)
    y_shape = (11, 5, 7, 3)
    plan, _ = check_packed_copies_exactly(y_shape, y_strides, x_strides, 2, dst_address=6,
                                          src_address=4096 + 2)
    assert plan.read.run and plan.read.stride[0] < 0


def test_plans_depend_on_addresses_only_through_their_sector_offset():
    layout = normalize_layout(*row_to_column_major((3, 4, 7, 53, 9), 2), 2)
    for residue in (0, 2, 6, 30):
        plan = plan_packed(layout, residue, (residue * 3) % 32, 1024)
        assert plan == plan_packed(layout, residue, (residue * 3) % 32, 1024)
        assert hash(plan) == hash(plan_packed(layout, residue, (residue * 3) % 32, 1024))


# --- which plan the planner picks ---------------------------------------------------------

# The issue's layouts: (name, (shape, dst strides, src strides), itemsize).
ISSUE_LAYOUTS = [
    ("3,4,7,53,9 fp32", row_to_column_major((3, 4, 7, 53, 9), 4), 4),
    ("3,4,7,53,9 fp16", row_to_column_major((3, 4, 7, 53, 9), 2), 2),
    ("3,4,13,25,5,7 fp32", row_to_column_major((3, 4, 13, 25, 5, 7), 4), 4),
    ("2,2,2,2,2,2 permuted", permuted((2,) * 6, (3, 1, 5, 0, 4, 2), 4), 4),
    ("500x500 fp16", permuted((500, 500), (1, 0), 2), 2),
    ("2,2,2,4 fp16", permuted((2, 2, 2, 4), (3, 2, 1, 0), 2), 2),
]
# Beyond the 48 KiB of static shared memory a block may declare: no box tile that fits
# reaches 0.9 (501x501 fp16 needs 167 x 167 elements, 54.5 KiB; 3,4,13,25,5,7 fp16 a chunk of
# 5 of the 25, 53.3 KiB; an odd int8 transpose runs of ~280 bytes), so the planner takes a
# tile in dynamic shared memory: the smallest (in 16 KiB steps) that reaches 0.9.
CAPACITY_BOUND = [
    ("3,4,13,25,5,7 fp16", row_to_column_major((3, 4, 13, 25, 5, 7), 2), 2),
    ("501x501 fp16", permuted((501, 501), (1, 0), 2), 2),
    ("999x1001 int8", permuted((999, 1001), (1, 0), 1), 1),
]


@pytest.mark.parametrize("name, layout, itemsize", CAPACITY_BOUND, ids=[c[0] for c in CAPACITY_BOUND])
def test_layouts_bound_by_shared_memory_take_dynamic_tiles(name, layout, itemsize):
    normalized = normalize_layout(*layout, itemsize)
    best_static = plan_packed(normalized, 0, 0, 1024)
    assert min(best_static.predicted) < 0.9
    plan = plan_large(normalized, 0, 0, 1024, _efficiency(best_static, normalized, 0, 0),
                      LARGE_MAX_BYTES)
    assert isinstance(plan, PackedPlan) and plan.wide == DYNAMIC, plan.kernel
    assert min(plan.predicted) >= 0.9
    assert PACKED_WIDE_BYTES < plan.shared_bytes <= LARGE_MAX_BYTES
    smaller = plan_packed(normalize_layout(*layout, itemsize), 0, 0, 1024,
                          capacity_bytes=plan.shared_bytes - LARGE_STEP)
    assert min(smaller.predicted) < 0.9  # the smallest step that reaches the target
    copied = simulate_packed_kernel(plan)
    assert (copied.read_sectors, copied.write_sectors) == plan.sectors  # the model is exact
    # plan_rearrange launches it only where the model predicts it faster than the plans it
    # weighs it against (packed tiles issue ~30-260 instructions per byte), and never on a
    # device that allows only 48 KiB (or a planner told so).
    chosen = plan_rearrange(*layout, itemsize)
    if chosen.kernel != plan.kernel:
        assert predicted_fraction(plan, normalized) <= predicted_fraction(chosen, normalized) + MARGIN
    assert plan_rearrange(*layout, itemsize, max_shared_bytes=PACKED_WIDE_BYTES).kernel != plan.kernel


def test_plans_near_their_limit_keep_static_tiles():
    # Below 0.95 but above 0.9 of the limit: more blocks per SM are worth more.
    plan = plan_rearrange(*permuted((301, 257), (1, 0), 4), 4)
    assert plan.kernel.endswith((", 0>", ", 1>")), plan.kernel


def test_aligned_transposes_keep_the_staged_transpose():
    # Both contiguous dims long and whole sectors: the 2-D tile is already at the limit.
    plan = plan_rearrange(*permuted((2048, 2048), (1, 0), 4), 4)
    assert isinstance(plan, TilePlan)
    plan = plan_rearrange(*permuted((32, 64, 56, 56), (0, 2, 3, 1), 4), 4)  # NCHW -> NHWC
    assert isinstance(plan, TilePlan)


def test_copies_contiguous_on_both_sides_keep_the_seed_kernel():
    plan = plan_rearrange((64, 256), (1024, 4), (2048, 4), 4)  # rows of a wider array
    assert plan.kernel.startswith("rearrange<")
    heads = permuted((8, 256, 16, 64), (0, 2, 1, 3), 2)  # heads split: 128-byte rows
    assert plan_rearrange(*heads, 2).kernel.startswith("rearrange<")


def test_broadcast_sources_keep_their_plans():
    # A packed tile would read the broadcast row again for every tile.
    plan = plan_rearrange((5, 3, 7), (84, 28, 4), (0, 4, 12), 4)
    assert not isinstance(plan, PackedPlan)


def test_thirty_two_byte_units_are_copied_as_sixteen():
    # 64 contiguous bytes in both (unit 32) under a permutation of short dims.
    y_shape, y_strides, x_strides = permuted((3, 5, 7, 16), (2, 0, 1, 3), 4)
    plan, _ = check_packed_copies_exactly(y_shape, y_strides, x_strides, 4)
    assert plan.unit == 16


def test_kernel_names():
    names = all_packed_kernel_names()
    assert len(names) == len(set(names)) == 30
    assert packed_kernel_name(2, 8, 1) == "packed_copy<2, 8, 1>" in names
    assert packed_kernel_name(1, 4, DYNAMIC) == "packed_copy<1, 4, 2>" in names


# --- the sector model ---------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(-300, 300)), max_size=4),
       st.integers(0, 31))
def test_residue_histograms_count_every_index(dims, base):
    h = sm.histogram(dims, base)
    offsets = element_offsets(tuple(n for n, _ in dims), tuple(s for _, s in dims)) + base
    assert h == np.bincount(offsets % 32, minlength=32).tolist()


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 200), st.integers(1, 64), st.integers(0, 31), st.sampled_from([1, 2, 4, 8]))
def test_run_sectors_count_sectors(length, chunk, base, unit):
    # Runs of chunks of one contiguous dim, against the sectors of each chunk counted.
    shift = 0
    rows = sm.point(base)
    predicted = sm.chunked_run_sectors(rows, 1, length, unit, chunk, shift, unit)
    counted = 0
    for start in range(0, length, chunk):
        lo = base + start * unit
        hi = base + min(length, start + chunk) * unit
        counted += (hi - 1) // 32 - lo // 32 + 1
    assert predicted == counted
    classes = sm.chunk_classes(length, chunk, 0)
    assert sum(count * size for count, _, _, size in classes) == length


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_planner_takes_the_plan_its_model_predicts_fastest(data):
    # Random permutations: where coalescing alone would take a packed plan, the plan
    # plan_rearrange returns is that plan or one predicted at least as fast (less the margin a
    # switch needs); a packed plan is taken only where coalescing alone takes it too. (A
    # packed plan of 1- or 2-byte units whose phases cannot both move words is not weighed by
    # the recorded costs: the planner keeps the other plan.)
    rank = data.draw(st.integers(2, 6))
    shape = tuple(data.draw(st.integers(1, {2: 400, 3: 60}.get(rank, 12))) for _ in range(rank))
    perm = data.draw(st.permutations(range(rank)))
    itemsize = data.draw(st.sampled_from([1, 2, 4, 8]))
    y_shape, y_strides, x_strides = permuted(shape, perm, itemsize)
    layout = normalize_layout(y_shape, y_strides, x_strides, itemsize)
    chosen = plan_rearrange(y_shape, y_strides, x_strides, itemsize)
    by_coalescing = plan_rearrange(y_shape, y_strides, x_strides, itemsize, weigh_issue=False)
    if isinstance(by_coalescing, PackedPlan) and by_coalescing != chosen and words_on_both(
            by_coalescing):
        assert (predicted_fraction(by_coalescing, layout)
                <= predicted_fraction(chosen, layout) + MARGIN)
    if isinstance(chosen, PackedPlan):
        assert by_coalescing == chosen and words_on_both(chosen)
