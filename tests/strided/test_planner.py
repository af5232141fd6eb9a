"""Tests of the rearrange planner.

The kernels are simulated in Python (NumPy, vectorized): every thread of every block computes
its offsets exactly as the kernel semantics in ``infini_cupy.strided.seed_planner`` say, and the bytes the
plan copies are compared with NumPy index arithmetic (for every multi-index and every byte of
the element: dst byte <- src byte). Each destination byte must be written exactly once, from
the right source byte, with vector accesses aligned to the unit.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infini_cupy.strided.layout import (
    EXACT_OVERLAP_CHECK_LIMIT,
    NormalizedLayout,
    alignment_class,
    normalize_layout,
)
from infini_cupy.strided.planner import plan_rearrange
from infini_cupy.strided.seed_planner import Constraint, GeneralRearrangePlan, RearrangePlan, all_kernel_names, fast_divisor, general_kernel_name, index_type, rearrange_kernel_name
from infini_cupy.strided import planner
from infini_cupy.perf import limits
from infini_cupy.strided.tile_planner import (
    TilePlan,
    all_tiled_kernel_names,
    plan_tiles,
    tiled_kernel_name,
)
from infini_cupy.strided.packed_planner import (
    MARGIN,
    PackedPlan,
    all_packed_kernel_names,
    plan_packed,
)
from tests.support.packed_simulation import check_packed_plan, simulate_packed_kernel
from tests.support.plan_model import predicted_fraction
from tests.support.tile_simulation import simulate_tile_kernel

KERNEL_NAMES = frozenset(all_kernel_names() + all_tiled_kernel_names() + all_packed_kernel_names())


# --- the oracle and the simulators ------------------------------------------------------


def element_offsets(shape, strides):
    """Byte offset of every element, multi-indices in C order (NumPy index arithmetic)."""
    offsets = np.zeros((), np.int64)
    for length, stride in zip(shape, strides):
        offsets = offsets[..., None] + np.arange(length, dtype=np.int64) * stride
    return offsets.reshape(-1)


def expand_bytes(offsets, size):
    return (offsets[:, None] + np.arange(size, dtype=np.int64)).reshape(-1)


def simulate_matrix_kernel(plan: RearrangePlan):
    """(dst offset, src offset) of every thread of ``rearrange<...>`` that copies."""
    if plan.grid_blocks == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    grid_index = np.unravel_index(np.arange(plan.grid_blocks), plan.grid_len)
    thread = np.arange(plan.block_threads)
    block_index = np.unravel_index(np.minimum(thread, plan.block_elements - 1), plan.block_len)
    copies = np.broadcast_to(thread < plan.block_elements, (plan.grid_blocks, plan.block_threads))
    for c in plan.constraints:
        copies = copies & (
            grid_index[c.grid_idx][:, None] * c.grid_div_block + block_index[c.block_idx][None, :]
            < c.total_len
        )

    def offsets(grid_strides, block_strides):
        per_block = sum((i * s for i, s in zip(grid_index, grid_strides)), np.zeros(1, np.int64))
        per_thread = sum((i * s for i, s in zip(block_index, block_strides)), np.zeros(1, np.int64))
        return per_block[:, None] + per_thread[None, :]

    dst = offsets(plan.dst_grid_stride, plan.dst_block_stride)
    src = offsets(plan.src_grid_stride, plan.src_block_stride)
    return np.broadcast_to(dst, copies.shape)[copies], np.broadcast_to(src, copies.shape)[copies]


def simulate_general_kernel(plan: GeneralRearrangePlan):
    """(dst offset, src offset) of every thread of ``rearrange_general<...>`` that copies."""
    flat = np.arange(plan.grid_blocks * plan.block_threads)
    index = np.unravel_index(flat[flat < plan.total], plan.shape)
    dst = sum((i * s for i, s in zip(index, plan.dst_strides)), np.zeros(1, np.int64))
    src = sum((i * s for i, s in zip(index, plan.src_strides)), np.zeros(1, np.int64))
    return dst, src


def index_of(plan) -> str:
    """The Index the plan's kernel must use: 32-bit exactly when every offset fits."""
    if isinstance(plan, GeneralRearrangePlan):
        shape, dst, src = plan.shape, plan.dst_strides, plan.src_strides
    else:
        shape = plan.block_len + plan.grid_len
        dst, src = plan.dst_block_stride + plan.dst_grid_stride, plan.src_block_stride + plan.src_grid_stride
    return index_type(shape, dst, src)


def check_plan_invariants(plan, max_threads):
    assert plan.kernel in KERNEL_NAMES
    assert plan.unit in (1, 2, 4, 8, 16, 32)
    assert plan.block_threads % 32 == 0 and plan.block_threads <= max(32, max_threads)
    if isinstance(plan, PackedPlan):
        check_packed_plan(plan, max_threads)
        return
    if isinstance(plan, TilePlan):
        grouped = max(plan.read_spread, plan.write_spread, plan.read_rows) > 1
        assert plan.kernel == tiled_kernel_name(plan.unit, plan.read_vector, plan.write_vector,
                                                plan.wide, plan.stack > 1, grouped)
        rows = plan.read_rows  # K rows per step: separate rows, whole sectors of each
        assert rows in (1, 2, 4, 8) and (rows == 1 or not plan.read_chained)
        assert rows == 1 or 32 // rows * plan.read_vector * plan.unit >= 32
        assert plan.stack == 1 or not plan.wide
        assert plan.dst_stride1 == plan.unit and plan.tile0 * plan.pitch <= plan.capacity
        assert 0 <= plan.shift0 < plan.tile0 and 0 <= plan.shift1 < plan.tile1
        assert plan.tiles0 == -(-(plan.len0 + plan.shift0) // plan.tile0)
        assert plan.tiles1 == -(-(plan.len1 + plan.shift1) // plan.tile1)
        groups = plan.batch_len[:-1] + (-(-plan.batch_len[-1] // plan.stack),) if plan.batch_len else ()
        assert plan.stack == 1 or plan.stack * plan.tile0 * plan.pitch <= plan.capacity
        assert plan.tiles == plan.grid_blocks == plan.tiles0 * plan.tiles1 * math.prod(groups)
        assert len(plan.batch_len) == len(plan.src_batch_stride) == len(plan.dst_batch_stride) <= 4
        return
    if isinstance(plan, GeneralRearrangePlan):
        assert plan.kernel == general_kernel_name(plan.unit, index_of(plan))
        assert plan.total == math.prod(plan.shape)
        assert plan.grid_blocks == -(-plan.total // plan.block_threads)
        assert min(1, plan.grid_blocks) <= plan.launch_blocks <= plan.grid_blocks
        return
    b, g, c = len(plan.block_len), len(plan.grid_len), len(plan.constraints)
    assert 1 <= b <= 5 and 1 <= g <= 5 and c <= 2
    assert plan.kernel == rearrange_kernel_name(plan.unit, b, g, c, index_of(plan))
    assert min(1, plan.grid_blocks) <= plan.launch_blocks <= plan.grid_blocks
    assert len(plan.dst_block_stride) == len(plan.src_block_stride) == b
    assert len(plan.dst_grid_stride) == len(plan.src_grid_stride) == g
    assert plan.block_elements == math.prod(plan.block_len) <= plan.block_threads
    assert plan.block_threads - plan.block_elements < 32
    assert plan.grid_blocks == math.prod(plan.grid_len)
    for constraint in plan.constraints:
        assert isinstance(constraint, tuple) and len(constraint) == 4
        assert plan.block_len[constraint.block_idx] == constraint.grid_div_block
        assert plan.grid_len[constraint.grid_idx] == -(-constraint.total_len // constraint.grid_div_block)
        assert constraint.total_len % constraint.grid_div_block != 0


def check_copies_exactly(shape, dst_strides, src_strides, itemsize, **options):
    """Plan, simulate, and compare every copied byte with NumPy index arithmetic."""
    plan = plan_rearrange(shape, dst_strides, src_strides, itemsize, **options)
    check_plan_invariants(plan, options.get("max_threads", 1024))
    assert hash(plan) == hash(plan_rearrange(shape, dst_strides, src_strides, itemsize, **options))
    if isinstance(plan, TilePlan):
        copied = simulate_tile_kernel(plan, options.get("dst_address", 0), options.get("src_address", 0))
        dst_offsets, src_offsets = copied.dst, copied.src
    elif isinstance(plan, PackedPlan):
        copied = simulate_packed_kernel(plan, options.get("dst_address", 0), options.get("src_address", 0))
        dst_offsets, src_offsets = copied.dst, copied.src
    else:
        simulate = simulate_matrix_kernel if isinstance(plan, RearrangePlan) else simulate_general_kernel
        dst_offsets, src_offsets = simulate(plan)
    # Vector accesses must be aligned to the unit in both memories.
    assert np.all((options.get("dst_address", 0) + dst_offsets) % plan.unit == 0)
    assert np.all((options.get("src_address", 0) + src_offsets) % plan.unit == 0)

    expected_dst = expand_bytes(element_offsets(shape, dst_strides), itemsize)
    expected_src = expand_bytes(element_offsets(shape, src_strides), itemsize)
    assert len(np.unique(expected_dst)) == len(expected_dst), "the test built an overlapping dst"
    copied_dst = expand_bytes(dst_offsets, plan.unit)
    copied_src = expand_bytes(src_offsets, plan.unit)
    assert len(copied_dst) == len(expected_dst)
    order, expected_order = np.argsort(copied_dst), np.argsort(expected_dst)
    # Sorted dst bytes equal to the (unique) expected ones: every dst byte written once...
    assert np.array_equal(copied_dst[order], expected_dst[expected_order])
    # ...and from the source byte NumPy indexing pairs it with.
    assert np.array_equal(copied_src[order], expected_src[expected_order])
    return plan


# --- layouts NumPy can produce --------------------------------------------------------


@st.composite
def numpy_views(draw, shape, itemsize):
    """(strides, byte offset) of a view of ``shape``: a slice (offsets, steps, negative steps)
    of a padded C-contiguous base, transposed. A quarter are plainly C-contiguous."""
    ndim = len(shape)
    if draw(st.integers(0, 3)) == 0:
        strides = [itemsize * math.prod(shape[axis + 1 :]) for axis in range(ndim)]
        return tuple(strides), 0
    perm = draw(st.permutations(range(ndim)))  # memory axis m holds view axis perm[m]
    steps = [draw(st.sampled_from([1, 1, 2, 3, -1, -2])) for _ in range(ndim)]
    pads = [draw(st.sampled_from([0, 0, 1, 2])) for _ in range(ndim)]
    base_len = [max(shape[perm[m]] - 1, 0) * abs(steps[m]) + 1 + pads[m] for m in range(ndim)]
    strides, offset = [0] * ndim, 0
    for m, axis in enumerate(perm):
        base_stride = itemsize * math.prod(base_len[m + 1 :])
        strides[axis] = base_stride * steps[m]
        skip = draw(st.integers(0, pads[m]))
        offset += base_stride * (skip if steps[m] > 0 else base_len[m] - 1 - skip)
    return tuple(strides), offset


@st.composite
def layouts(draw, max_dims=8):
    ndim = draw(st.integers(0, max_dims))
    max_len = {0: 8, 1: 8, 2: 8, 3: 8, 4: 6, 5: 4}.get(ndim, 3)
    shape = [draw(st.integers(1, max_len)) for _ in range(ndim)]
    if ndim and draw(st.integers(0, 9)) == 0:
        shape[draw(st.integers(0, ndim - 1))] = 0
    shape = tuple(shape)
    itemsize = draw(st.sampled_from([1, 2, 4, 8, 16]))
    dst_strides, dst_offset = draw(numpy_views(shape, itemsize))
    src_strides, src_offset = draw(numpy_views(shape, itemsize))
    broadcast = [draw(st.integers(0, 4)) == 0 for _ in range(ndim)]
    src_strides = tuple(0 if b else s for b, s in zip(broadcast, src_strides))
    bases = st.sampled_from([0, 256, 4096 + 16, 8, 4, 2, 1])
    options = dict(
        max_threads=draw(st.sampled_from([1024, 32, 64, 96, 512, 7, 1])),
        dst_address=draw(bases) + dst_offset,
        src_address=draw(bases) + src_offset,
    )
    return shape, dst_strides, src_strides, itemsize, options


@settings(max_examples=400, deadline=None)
@given(layouts())
def test_every_dst_byte_is_copied_once_from_the_right_src_byte(layout):
    shape, dst_strides, src_strides, itemsize, options = layout
    check_copies_exactly(shape, dst_strides, src_strides, itemsize, **options)


@settings(max_examples=100, deadline=None)
@given(
    shape=st.one_of(
        st.tuples(st.integers(1, 90), st.integers(1, 90)),
        st.tuples(st.integers(1, 24), st.integers(1, 24), st.integers(1, 24)),
    ),
    data=st.data(),
)
def test_larger_layouts_split_dims_with_constraints(shape, data):
    itemsize = data.draw(st.sampled_from([1, 4, 8]))
    dst_strides, _ = data.draw(numpy_views(shape, itemsize))
    src_strides, _ = data.draw(numpy_views(shape, itemsize))
    max_threads = data.draw(st.sampled_from([32, 64, 256, 1024]))
    check_copies_exactly(shape, dst_strides, src_strides, itemsize, max_threads=max_threads)


@settings(max_examples=200, deadline=None)
@given(layouts(max_dims=4), st.integers(0, 1 << 40), st.integers(0, 1 << 40))
def test_plan_depends_on_addresses_only_through_their_sector_offset(layout, dst_address, src_address):
    shape, dst_strides, src_strides, itemsize, options = layout
    options.update(dst_address=dst_address, src_address=src_address)
    plan = plan_rearrange(shape, dst_strides, src_strides, itemsize, **options)
    options.update(dst_address=dst_address % 32, src_address=src_address % 32)
    assert plan == plan_rearrange(shape, dst_strides, src_strides, itemsize, **options)
    # The seed-style plans only through the alignment class.
    options.update(tiles=False)
    plan = plan_rearrange(shape, dst_strides, src_strides, itemsize, **options)
    options.update(dst_address=alignment_class(dst_address), src_address=alignment_class(src_address))
    assert plan == plan_rearrange(shape, dst_strides, src_strides, itemsize, **options)


def overlaps_by_brute_force(shape, strides, itemsize):
    written = expand_bytes(element_offsets(shape, strides), itemsize)
    return len(np.unique(written)) != len(written)


@settings(max_examples=300, deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), max_size=4).map(tuple),
    data=st.data(),
    itemsize=st.sampled_from([1, 2, 4]),
)
def test_self_overlap_check_is_exact_on_small_layouts(shape, data, itemsize):
    strides = tuple(data.draw(st.integers(-12, 12)) for _ in shape)
    if overlaps_by_brute_force(shape, strides, itemsize):
        with pytest.raises(ValueError, match="overlaps itself"):
            plan_rearrange(shape, strides, strides, itemsize)
    else:
        check_copies_exactly(shape, strides, (0,) * len(shape), itemsize, max_threads=32)


# --- behaviours of the seed planner, and where ours differs ------------------------------


def test_contiguous_copy_folds_into_the_unit():
    # (4, 8) fp32: 128 contiguous bytes -> four 32-byte vectors, one block dim, one grid dim.
    assert normalize_layout((4, 8), (32, 4), (32, 4), 4) == NormalizedLayout(32, (4,), (32,), (32,), 128)
    plan = check_copies_exactly((4, 8), (32, 4), (32, 4), 4)
    assert (plan.kernel, plan.block_len, plan.grid_len, plan.block_threads) == (
        "rearrange<32, 1, 1, 0, int>", (4,), (1,), 32,
    )  # fmt: skip


def test_large_contiguous_copy_splits_its_one_dim():
    plan = plan_rearrange((1000, 1000), (4000, 4), (4000, 4), 4)
    assert plan.unit == 32 and plan.block_len == (1024,) and plan.grid_len == (123,)
    assert plan.constraints == (Constraint(0, 0, 1024, 125000),)
    assert plan.kernel == "rearrange<32, 1, 1, 1, int>"


def test_transpose_tiles_32x32_with_constraints_when_lengths_do_not_divide():
    # The seed-style plan of a transpose (the planner prefers a staged copy: test_tile_planner).
    plan = plan_rearrange((2001, 2001), (8004, 4), (4, 8004), 4, tiles=False)
    assert plan.block_len == (32, 32) and plan.grid_len == (63, 63)
    assert plan.src_block_stride == (4, 8004)  # the fastest thread index walks dst's rows
    assert plan.constraints == (Constraint(0, 0, 32, 2001), Constraint(1, 1, 32, 2001))
    assert plan.kernel == "rearrange<4, 2, 2, 2, int>"
    assert plan_rearrange((2048, 2048), (8192, 4), (4, 8192), 4, tiles=False).kernel == (
        "rearrange<4, 2, 2, 0, int>")
    plan = check_copies_exactly((201, 201), (804, 4), (4, 804), 4, tiles=False)  # simulated
    assert plan.kernel == "rearrange<4, 2, 2, 2, int>" and plan.grid_len == (7, 7)
    assert isinstance(check_copies_exactly((201, 201), (804, 4), (4, 804), 4), TilePlan)


def test_nchw_to_nhwc():
    # The seed's example: (32, 64, 224, 224) fp32, x NCHW-contiguous, y NHWC-contiguous. The
    # seed picked block=[C] (64 threads), grid=[N, H, W]. Ours merges H and W (they chain in
    # both layouts) and, as C is innermost in dst but HW innermost in src, tiles 32 of HW by
    # 32 of C: reads are 128-byte runs along HW, writes 128-byte runs along C, 1024 threads.
    N, C, H, W = 32, 64, 224, 224
    src = (C * H * W * 4, H * W * 4, W * 4, 4)
    dst = (H * W * C * 4, 4, W * C * 4, C * 4)
    layout = normalize_layout((N, C, H, W), dst, src, 4)
    assert layout.shape == (N, H * W, C) and layout.unit == 4
    plan = plan_rearrange((N, C, H, W), dst, src, 4, tiles=False)
    assert plan.block_len == (32, 32) and plan.grid_len == (N, H * W // 32, C // 32)
    assert plan.kernel == "rearrange<4, 2, 3, 0, int>" and plan.grid_blocks == 100352
    assert plan.launch_blocks == 132 * 2 * 4  # 25088 trips of 4 logical blocks: 4 waves
    # The same transformation, small enough to simulate: (N, C, H, W) = (2, 8, 6, 5).
    for tiles in (False, True):
        check_copies_exactly((2, 8, 6, 5), (960, 4, 160, 32), (960, 120, 20, 4), 4,
                             max_threads=64, tiles=tiles)


def test_kernel_matrix_names():
    names = all_kernel_names()
    assert len(names) == len(set(names)) == 912
    assert sum(name.startswith("rearrange<") for name in names) == 6 * 5 * 5 * 3 * 2
    assert {"rearrange<1, 1, 1, 0, int>", "rearrange<32, 5, 5, 2, long long>",
            "rearrange<16, 5, 1, 2, int>"} <= set(names)
    assert names[-12:] == tuple(f"rearrange_general<{u}, {index}>" for index in ("int", "long long")
                                for u in (1, 2, 4, 8, 16, 32))


@pytest.mark.parametrize(
    "address, unit", [(0, 32), (4096, 32), (16, 16), (8, 8), (4, 4), (2, 2), (1, 1), (48, 16)]
)
def test_misaligned_addresses_give_a_smaller_unit(address, unit):
    assert alignment_class(address) == min(32, address & -address or 32)
    for options in (dict(src_address=address), dict(dst_address=address)):
        plan = check_copies_exactly((64,), (4,), (4,), 4, tiles=False, **options)
        assert plan.unit == min(unit, 4 * 64) and plan.block_len == (256 // plan.unit,)
        check_copies_exactly((64,), (4,), (4,), 4, **options)  # staged when misaligned


def test_every_stride_limits_the_unit():
    # Rows of 8 fp32 padded to 36 bytes in src: the seed checked only the outermost strides.
    plan = check_copies_exactly((2, 8), (32, 4), (36, 4), 4)
    assert plan.unit == 4
    assert normalize_layout((5,), (3,), (3,), 3).unit == 1  # 3-byte items: bytes


def test_general_plan_for_a_permutation_that_cannot_merge():
    shape = (3, 5, 3, 5, 3, 5, 3)
    dst = np.empty(shape, np.float32).strides
    src = np.empty(shape[::-1], np.float32).transpose().strides
    plan = check_copies_exactly(shape, dst, src, 4, tiles=False)
    assert isinstance(plan, GeneralRearrangePlan) and plan.kernel == "rearrange_general<4, int>"
    assert plan.shape == shape and plan.block_threads == 256 and plan.grid_blocks == 40
    assert check_copies_exactly(shape, dst, src, 4, max_threads=32, tiles=False).block_threads == 32
    # With staged plans allowed, two packed tiles (the whole reversal, 2025 elements, and
    # its run tables do not fit one) coalesce to 0.94, but over 8 tile dims: the planner
    # keeps the flat kernel, which the model (kernel_costs) predicts faster.
    plan = check_copies_exactly(shape, dst, src, 4)
    layout = normalize_layout(shape, dst, src, 4)
    packed = plan_packed(layout, 0, 0, 1024)
    assert packed.tiles == 2 and min(packed.predicted) >= 0.9
    fractions = {p.kernel: predicted_fraction(p, layout) for p in (plan, packed)}
    assert plan.kernel == max(fractions, key=fractions.get) == "rearrange_general<4, int>"


def test_broadcast_source():
    # A row broadcast over 500 rows: the row folds into the unit (32-byte vectors).
    plan = check_copies_exactly((50, 200), (800, 4), (0, 4), 4)
    assert plan.unit == 32 and plan.src_block_stride == (0, 32)
    plan = check_copies_exactly((7, 9), (36, 4), (0, 0), 4)  # a scalar broadcast: one merged dim
    assert plan.block_len == (63,) and plan.src_block_stride == (0,)


def test_zero_size_and_scalar():
    plan = plan_rearrange((3, 0, 5), (0, 20, 4), (4, 4, 4), 4)  # zero size: nothing overlaps
    assert plan.empty and plan.grid_blocks == 0 and plan.kernel == "rearrange<4, 1, 1, 0, int>"
    plan = check_copies_exactly((), (), (), 8)
    assert not plan.empty and plan.unit == 8 and plan.block_len == (1,) and plan.grid_len == (1,)
    assert check_copies_exactly((1, 1), (0, 0), (8, 8), 16, dst_address=4).unit == 4


def test_max_threads_not_a_multiple_of_32():
    plan = check_copies_exactly((1000,), (4,), (8,), 4, max_threads=1000, tiles=False)
    assert plan.block_len == (992,) and plan.block_threads == 992
    plan = check_copies_exactly((100,), (4,), (8,), 4, max_threads=10, tiles=False)
    assert plan.block_len == (10,) and plan.block_threads == 32
    # Ten threads write 40 bytes per warp access; a packed tile of whole warps coalesces
    # better, and the planner takes whichever the model predicts faster.
    plan = check_copies_exactly((100,), (4,), (8,), 4, max_threads=10)
    assert plan.block_threads == 32
    layout = normalize_layout((100,), (4,), (8,), 4)
    packed = plan_packed(layout, 0, 0, 10)
    assert packed.block_threads == 32 and min(packed.predicted) == 1.0
    assert predicted_fraction(packed, layout) <= predicted_fraction(plan, layout) + MARGIN


# --- errors ----------------------------------------------------------------------------


def test_self_overlapping_destination_is_rejected():
    with pytest.raises(ValueError, match=r"overlaps itself.*stride 0.*\(4,\)"):
        plan_rearrange((4,), (0,), (4,), 4)
    with pytest.raises(ValueError, match="overlaps itself"):
        plan_rearrange((3, 2), (8, 12), (16, 8), 8)  # interleaved and colliding
    check_copies_exactly((3, 2), (8, 12), (8, 24), 4)  # interleaved without collision
    big = EXACT_OVERLAP_CHECK_LIMIT
    with pytest.raises(ValueError, match="may overlap"):
        plan_rearrange((big, 2), (8, 12), (8, 8 * big), 4)


def test_invalid_arguments_are_rejected_naming_the_values():
    with pytest.raises(ValueError, match=r"shape \(2, 3\) has 2 dims.*dst_strides \(4,\) has 1"):
        plan_rearrange((2, 3), (4,), (12, 4), 4)
    with pytest.raises(ValueError, match="at most 64 dims, got 65"):
        plan_rearrange((1,) * 65, (4,) * 65, (4,) * 65, 4)
    with pytest.raises(ValueError, match=r"non-negative lengths, got shape \(2, -1\)"):
        plan_rearrange((2, -1), (4, 4), (4, 4), 4)
    with pytest.raises(ValueError, match="positive itemsize, got 0"):
        plan_rearrange((2,), (4,), (4,), 0)
    with pytest.raises(ValueError, match="max_threads >= 1, got 0"):
        plan_rearrange((2,), (4,), (4,), 4, max_threads=0)
    plan_rearrange((1,) * 64, (0,) * 64, (4,) * 64, 4)  # 64 dims of length 1 are fine


@pytest.mark.parametrize("index, bits", [("int", 31), ("long long", 63)])
def test_fast_divisor_divides_exactly(index, bits):
    """The flat-index kernel's division by a dim's length: a multiply-high and a shift, exact
    for every numerator the kernel can pass (below 2**31 or 2**63) and every divisor >= 2."""
    rng = np.random.default_rng(bits)
    width = bits + 1
    divisors = [2, 3, 7, 10, 641, 2**16 + 1, 2**bits - 1, 2**(bits - 1), 2**(bits - 1) + 1]
    divisors += [int(d) for d in rng.integers(2, 2**min(bits, 62), 200)]
    divisors += [1 << int(k) for k in rng.integers(1, bits, 20)]
    for divisor in divisors:
        magic, shift = fast_divisor(divisor, index)
        assert 0 < magic < 2**width and shift >= 0
        top = 2**bits - 1
        numerators = [0, 1, divisor - 1, divisor, top, top - 1, top - top % divisor,
                      top - top % divisor - 1] + [int(n) for n in rng.integers(0, 2**min(bits, 62), 50)]
        for n in numerators:
            assert ((n * magic) >> width) >> shift == n // divisor, (divisor, n)
    with pytest.raises(ValueError, match="divisor >= 2"):
        fast_divisor(1, index)


def test_staged_transposes_split_their_tiles_to_fill_the_sms():
    # NCHW -> NHWC of 32 RGB 224 x 224 float32 images (19 MB): 48 KiB tiles make 416 blocks,
    # 3.2 per SM (the last round leaves most SMs idle); smaller tiles fill them, at the same
    # sector limit, and the model predicts the copy faster.
    shape = (32, 224, 224, 3)
    src = tuple(s * 4 for s in (3 * 224 * 224, 224, 1, 224 * 224))
    dst = np.empty(shape, np.float32).strides
    plan = plan_rearrange(shape, dst, src, 4)
    layout = normalize_layout(shape, dst, src, 4)
    whole = plan_tiles(4, layout.shape, layout.dst_strides, layout.src_strides, 0, 0, 1024)
    assert isinstance(plan, TilePlan) and plan.tiles > 2 * whole.tiles
    assert limits.waves_limit(whole.grid_blocks) < planner.FILL_WAVES_GOOD
    assert predicted_fraction(plan, layout) > predicted_fraction(whole, layout) + 0.1
    # A copy of less than FILL_MIN_BYTES keeps its tiles: launch latency dominates it.
    small = (2, 224, 224, 3)
    layout = normalize_layout(small, np.empty(small, np.float32).strides, src, 4)
    assert layout.total * 4 < planner.FILL_MIN_BYTES
    kept = plan_rearrange(small, np.empty(small, np.float32).strides, src, 4)
    whole = plan_tiles(4, layout.shape, layout.dst_strides, layout.src_strides, 0, 0, 1024)
    assert (kept.tile0, kept.tile1, kept.tiles) == (whole.tile0, whole.tile1, whole.tiles)


@pytest.mark.parametrize("dtype, n, threads", [(np.float32, 2001, 256)])
def test_staged_copies_take_smaller_blocks_unless_the_model_needs_their_threads(dtype, n, threads):
    # An odd transpose (48 KiB tiles, 512 threads from plan_tiles): where the model predicts
    # 256 threads as fast, they win (measured on an H100); elsewhere the model keeps 512.
    # (Odd byte transposes move words, whose wide variants plan_tiles gives 256.)
    itemsize = np.dtype(dtype).itemsize
    shape, src, dst = (n, n), (itemsize, n * itemsize), (n * itemsize, itemsize)
    plan = plan_rearrange(shape, dst, src, itemsize)
    layout = normalize_layout(shape, dst, src, itemsize)
    whole = plan_tiles(itemsize, layout.shape, layout.dst_strides, layout.src_strides, 0, 0,
                       1024)
    assert isinstance(plan, TilePlan) and whole.block_threads == 512
    assert plan.block_threads == threads
    assert dataclasses.replace(plan, block_threads=512) == whole
    halved = dataclasses.replace(whole, block_threads=256)
    faster = predicted_fraction(halved, layout) >= round(predicted_fraction(whole, layout), 2)
    assert faster == (threads == 256)
