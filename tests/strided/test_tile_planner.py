"""Tests of the staged-copy planner (``infini_cupy.strided.tile_planner``) through ``plan_rearrange``.

Every plan is checked by the Python simulation of the kernel (tests/tile_simulation.py): each
destination byte copied once from the right source byte, accesses aligned to their vector
width, shared memory inside the variant's capacity. On top of that: which layouts get staged,
the tile shapes and vector widths, and bank conflicts of the shared-memory accesses.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infini_cupy import variants
from infini_cupy.strided import tile_planner
from infini_cupy.strided.planner import plan_rearrange
from infini_cupy.strided.seed_planner import RearrangePlan
from infini_cupy.strided.tile_planner import (
    TILE_COMPACT_BYTES,
    TILE_WIDE_BYTES,
    TilePlan,
    all_tiled_kernel_names,
    plan_tiles,
)
from tests.strided.test_planner import check_copies_exactly
from tests.support.tile_simulation import simulate_tile_kernel


def c_strides(shape, itemsize):
    return tuple(itemsize * math.prod(shape[i + 1:]) for i in range(len(shape)))


def transpose_layout(rows, cols, itemsize, src_pitch=None, dst_pitch=None):
    """Copying x[:rows, :cols].T (x rows of src_pitch elements) into y[:, :rows] (rows of
    dst_pitch): shape (cols, rows)."""
    src_pitch, dst_pitch = src_pitch or cols, dst_pitch or rows
    return (cols, rows), (dst_pitch * itemsize, itemsize), (itemsize, src_pitch * itemsize)


def test_the_family_is_registered_for_nvrtc_and_small():
    names = all_tiled_kernel_names()
    assert len(names) == len(set(names)) == 121  # 72 plain and stacked, 49 Grouped
    assert variants.all_variants()["transpose.cu"] == names


def test_an_aligned_fp32_transpose_gets_compact_64_by_64_tiles():
    shape, dst, src = transpose_layout(2048, 2048, 4)
    plan = plan_rearrange(shape, dst, src, 4)
    assert isinstance(plan, TilePlan) and plan.kernel == "tiled_copy<4, 4, 4, 0, 0>"
    assert (plan.tile0, plan.tile1, plan.pitch, plan.shift0, plan.shift1) == (64, 64, 65, 0, 0)
    assert plan.tiles == 32 * 32 and plan.block_threads == 256 and plan.read_along == 0


@pytest.mark.parametrize("itemsize, vector", [(1, 16), (2, 8), (4, 4)])
def test_aligned_transposes_are_free_of_bank_conflicts(itemsize, vector):
    # 16-byte accesses, 4 rows per warp step. (Tiles cut short by the array's end can see
    # 2-way conflicts: rows shorter than a warp.)
    shape, dst, src = transpose_layout(256, 384, itemsize)
    plan = plan_rearrange(shape, dst, src, itemsize)
    assert (plan.read_vector, plan.write_vector, plan.wide) == (vector, vector, False)
    simulated = simulate_tile_kernel(plan, banks=True)
    assert simulated.bank_conflicts == {"read": 1, "write": 1}
    check_copies_exactly(shape, dst, src, itemsize)


@pytest.mark.parametrize("itemsize, pitch, vectors", [
    (2, 386, (2, 8)), (4, 386, (1, 4)),  # src rows not 16-byte aligned (nor sector aligned)
    (1, 388, (4, 16)), (2, 384, (8, 8)),
])
def test_narrow_and_mixed_vectors_are_free_of_bank_conflicts(itemsize, pitch, vectors):
    shape, dst, src = transpose_layout(256, 384, itemsize, src_pitch=pitch)
    plan = plan_tiles(itemsize, shape, dst, src, 0, 0, 1024)
    assert (plan.read_vector, plan.write_vector) == vectors
    simulated = simulate_tile_kernel(plan, banks=True)
    # (int8 rows of 4-byte accesses starting anywhere in a sector take whole warp steps each:
    # no step spans two rows, which could meet in a bank)
    assert simulated.bank_conflicts == {"read": 1, "write": 1}


def test_odd_pitches_get_wide_tiles_of_balanced_extents():
    shape, dst, src = transpose_layout(2001, 2001, 4)
    plan = plan_rearrange(shape, dst, src, 4)
    assert plan.wide and plan.kernel == "tiled_copy<4, 1, 1, 1, 0>"
    assert plan.tile0 == plan.tile1 == 106 and plan.tiles0 == plan.tiles1 == 19  # 19 x 106 >= 2001
    assert plan.tile0 * plan.pitch * 4 <= TILE_WIDE_BYTES
    shape, dst, src = transpose_layout(301, 257, 2)
    check_copies_exactly(shape, dst, src, 2)


def test_a_common_misalignment_shifts_the_tile_grid_instead():
    # y rows of 320 fp16 (640 bytes) starting 2 bytes into a sector: tile edges along dim 1
    # move by one element so that all but the first start on a sector boundary.
    shape, dst, src = transpose_layout(320, 300, 2, src_pitch=320)
    plan = plan_rearrange(shape, dst, src, 2, dst_address=2)
    assert not plan.wide and plan.shift1 == 1 and plan.shift0 == 0
    assert (2 + (plan.tile1 - plan.shift1) * 2) % 32 == 0
    check_copies_exactly(shape, dst, src, 2, dst_address=2)


def test_thin_transposes_chain_the_short_side():
    shape, dst, src = transpose_layout(100000, 3, 4)  # (100000, 3) -> (3, 100000)
    plan = plan_rearrange(shape, dst, src, 4)
    assert plan.tile0 == 3 and plan.read_chained and not plan.write_chained
    shape, dst, src = transpose_layout(3, 100000, 4)
    plan = plan_rearrange(shape, dst, src, 4)
    assert plan.tile1 == 3 and plan.write_chained and not plan.read_chained
    check_copies_exactly(*transpose_layout(3, 1000, 4), 4)
    check_copies_exactly(*transpose_layout(1000, 3, 2), 2)


def test_vectors_need_every_address_of_their_side_aligned():
    shape, dst, src = transpose_layout(128, 128, 1)
    assert plan_rearrange(shape, dst, src, 1).kernel == "tiled_copy<1, 16, 16, 0, 0>"
    assert plan_rearrange(shape, dst, src, 1, src_address=2).kernel == "tiled_copy<1, 1, 16, 0, 0>"
    assert plan_rearrange(shape, dst, src, 1, src_address=4).kernel == "tiled_copy<1, 4, 16, 0, 0>"
    shape, dst, src = transpose_layout(128, 127, 1, src_pitch=128)  # no whole vectors
    assert plan_tiles(1, shape, dst, src, 0, 0, 1024).kernel == "tiled_copy<1, 1, 16, 0, 0>"
    shape, dst, src = transpose_layout(64, 64, 1)  # rows of 64 bytes: 4-byte accesses
    plan = plan_rearrange(shape, dst, src, 1)  # (short rows spread apart: a Grouped variant)
    assert (plan.read_vector, plan.write_vector, plan.wide) == (4, 4, False)
    shape, dst, src = transpose_layout(64, 64, 2, dst_pitch=65)  # odd dst pitch
    assert plan_rearrange(shape, dst, src, 2).kernel == "tiled_copy<2, 8, 1, 1, 0>"
    shape, dst, src = transpose_layout(64, 64, 2, dst_pitch=66)  # 4-byte aligned dst rows
    assert plan_rearrange(shape, dst, src, 2).kernel == "tiled_copy<2, 8, 2, 1, 0>"


def test_negative_strides_are_walked_upwards():
    shape, dst, src = transpose_layout(200, 100, 2)
    src = (-src[0], src[1])  # reversed along src's contiguous dim
    plan = plan_rearrange(shape, dst, src, 2, src_address=198)
    assert plan.src_stride0 == 2 and plan.src_offset == -198 and plan.read_vector == 2
    check_copies_exactly(shape, dst, src, 2, src_address=198)
    dst = (dst[0], -dst[1])  # and dst reversed along its contiguous dim
    plan = plan_rearrange(shape, dst, src, 2, src_address=198, dst_address=398)
    assert plan.dst_stride1 == 2 and plan.dst_offset == 99 * 400 - 398  # both dims flipped
    check_copies_exactly(shape, dst, src, 2, src_address=198, dst_address=398)


def test_misaligned_rows_stage_only_when_it_pays():
    shape, strides = (40, 300), (1200, 4)
    assert isinstance(plan_rearrange(shape, strides, strides, 4), RearrangePlan)  # aligned
    src = (1204, 4)  # x[1:, 1:] of a (41, 301) array
    plan = plan_rearrange(shape, strides, src, 4, src_address=4)
    assert isinstance(plan, TilePlan) and plan.read_along == 1 and plan.tile1 == 300
    check_copies_exactly(shape, strides, src, 4, src_address=4)
    check_copies_exactly(shape, strides, (1204, -4), 4, src_address=1196)  # rows read backwards
    assert not isinstance(plan_rearrange((40, 30), (120, 4), (124, 4), 4, src_address=4), TilePlan)
    assert not isinstance(plan_rearrange((40, 300), (4800, 16), (4816, 16), 16, src_address=16),
                          TilePlan)  # 16-byte units: the seed kernel loses 1 sector in 17


def test_more_than_four_batch_dims_fall_back():
    shape = (2, 3, 2, 3, 2, 8, 8)
    dst = c_strides(shape, 4)
    order = (5, 3, 1, 4, 2, 0, 6)  # every dim moves: nothing merges
    src_of = c_strides(tuple(shape[i] for i in order), 4)
    src = tuple(src_of[order.index(i)] for i in range(len(shape)))
    assert not isinstance(plan_rearrange(shape, dst, src, 4), TilePlan)
    check_copies_exactly(shape, dst, src, 4)


@pytest.mark.parametrize("max_threads", [1, 32, 100, 1024])
def test_the_thread_budget_bounds_the_block(max_threads):
    plan = check_copies_exactly(*transpose_layout(70, 90, 4), 4, max_threads=max_threads)
    assert plan.block_threads % 32 == 0
    assert plan.block_threads <= min(512, max(32, max_threads - max_threads % 32))


def test_the_host_mirrors_the_kernel_source():
    from infini_cupy.runtime.sources import read_source
    from infini_cupy.strided.plan_cache import TILE_LAYOUT

    text = read_source("transpose.cu")
    assert f"TILE_COMPACT_BYTES = {TILE_COMPACT_BYTES};" in text
    assert f"TILE_WIDE_BYTES = {TILE_WIDE_BYTES};" in text
    assert f"TILE_ITEMS = {tile_planner.TILE_ITEMS};" in text
    # ic::TileLayout, field by field, is the struct strided_copy packs
    body = text.split("struct TileLayout {")[1].split("};")[0]
    fields = [name.strip() for line in body.splitlines() if line.strip().startswith("index_t")
              for name in line.split("//")[0].replace("index_t", "").replace(";", "").split(",")]
    assert fields == list(TILE_LAYOUT.names)


def reversed_or_broadcast(draw, strides, broadcast_odds):
    """Each stride negated one time in 6, else set to 0 one time in ``broadcast_odds + 1``."""
    for d in range(len(strides)):
        if draw(st.integers(0, 5)) == 0:
            strides[d] = -strides[d]
        elif draw(st.integers(0, broadcast_odds)) == 0:
            strides[d] = 0
    return strides


@st.composite
def permuted_layouts(draw):
    """A permutation of a padded, offset, maybe reversed or broadcast source into a padded,
    offset destination: 2 to 4 dims, lengths up to a few hundred."""
    ndim = draw(st.integers(2, 4))
    budget = {2: 300, 3: 40, 4: 12}[ndim]
    shape = tuple(draw(st.integers(1, budget)) for _ in range(ndim))
    itemsize = draw(st.sampled_from([1, 2, 4, 8, 16]))
    perm = draw(st.permutations(range(ndim)))

    def padded(order):
        strides, step = [0] * ndim, itemsize
        for d in reversed(order):
            strides[d] = step
            step *= shape[d] + draw(st.sampled_from([0, 0, 1, 3]))
        return strides

    src = reversed_or_broadcast(draw, padded(perm), broadcast_odds=7)
    dst = padded(tuple(range(ndim)))
    unit = itemsize if itemsize < 16 else 8  # 16-byte items at 8-byte-aligned addresses too
    options = dict(dst_address=draw(st.sampled_from([0, 256, unit, 32 - unit])),
                   src_address=draw(st.sampled_from([0, unit, 64 + 2 * unit])),
                   max_threads=draw(st.sampled_from([1024, 256, 64])))
    return shape, tuple(dst), tuple(src), itemsize, options


@settings(max_examples=100, deadline=None)
@given(permuted_layouts())
def test_permutations_copy_exactly(layout):
    shape, dst, src, itemsize, options = layout
    src_address = options["src_address"]
    # negative strides start element 0 at the far end of the buffer
    options["src_address"] = src_address + sum((n - 1) * -s for n, s in zip(shape, src) if s < 0)
    check_copies_exactly(shape, dst, src, itemsize, **options)


def _pitch(length, itemsize, kind):
    """Row pitch in elements: tight, one more, or rounded up to whole 32-byte sectors."""
    if kind == "sector":
        return -(-length * itemsize // 32) * 32 // itemsize
    return length + (kind == "odd")


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 300), cols=st.integers(1, 300), itemsize=st.sampled_from([1, 2, 4, 8]),
    src_pitch=st.sampled_from(["tight", "odd", "sector"]),
    dst_pitch=st.sampled_from(["tight", "odd", "sector", "sector"]),
    src_address=st.sampled_from([0, 0, 4, 8, 20]), dst_address=st.sampled_from([0, 0, 4, 16]),
)
def test_large_2d_transposes_with_shifts_and_vectors(rows, cols, itemsize, src_pitch, dst_pitch,
                                                      src_address, dst_address):
    shape, dst, src = transpose_layout(rows, cols, itemsize, _pitch(cols, itemsize, src_pitch),
                                       _pitch(rows, itemsize, dst_pitch))
    # an address is a multiple of its item size
    check_copies_exactly(shape, dst, src, itemsize, src_address=src_address // itemsize * itemsize,
                         dst_address=dst_address // itemsize * itemsize)


def test_plan_tiles_declines_what_it_cannot_stage():
    assert plan_tiles(32, (8, 8), (256, 32), (32, 256), 0, 0, 1024) is None  # 32-byte units
    assert plan_tiles(4, (8, 8), (64, 8), (4, 32), 0, 0, 1024) is None  # dst not contiguous
    assert plan_tiles(4, (8, 8), (32, 4), (8, 64), 0, 0, 1024) is None  # src not contiguous
    assert plan_tiles(4, (8, 8), (32, 4), (0, 0), 0, 0, 1024) is None  # src a scalar
    assert plan_tiles(4, (8, 0), (32, 4), (4, 32), 0, 0, 1024) is None  # nothing to copy
    # a broadcast dim is neither side's contiguous dim: the column of a (500, 1) array
    plan = plan_tiles(4, (500, 300), (1200, 4), (4, 0), 0, 0, 1024)
    assert plan.src_stride1 == 0 and plan.src_stride0 == 4
    assert np.all(np.diff(simulate_tile_kernel(plan).dst) != 0)


def test_staged_copies_count_tiles_in_32_bits():
    # 2^31 batched 3 x 2 float32 transposes (a tile each) are staged; 2^32 of them go to the
    # seed kernels, since the staged kernel splits tile numbers in 32 bits.
    plan = plan_tiles(4, (2**31, 3, 2), (24, 8, 4), (24, 4, 12), 0, 0, 1024)
    assert plan.tiles == 2**31
    assert plan_tiles(4, (2**32, 3, 2), (24, 8, 4), (24, 4, 12), 0, 0, 1024) is None
    assert plan_rearrange((2**32, 3, 2), (24, 8, 4), (24, 4, 12), 4).kernel.startswith("rearrange<")


# --- stacked tiles ---------------------------------------------------------------------------


def test_stacks_are_even_groups_within_every_bound():
    stack = tile_planner._stack
    assert stack(19, 128, 2432, 130321, 7) == 7  # groups of 7, 7 and 5, not 7, 7, 5 by chance
    assert stack(19, 128, 2432, 130321, 31) == 10  # MAX_STACK 16: two groups, 10 and 9
    assert stack(19, 128, 2432, 130321, 1) == 1  # one tile fills shared memory
    assert stack(19, 128, 2432, 3 * tile_planner.STACK_MIN_BLOCKS, 31) == 3  # blocks to spare
    assert stack(19, 128, 2432, tile_planner.STACK_MIN_BLOCKS, 31) == 1
    assert stack(19, 100, 2432, 130321, 31) == 1  # a step that moves rows within their sectors
    assert stack(19, -128, 0, 130321, 31) == 10  # reversed and broadcast steps stay whole


def test_a_six_dim_tensor_transpose_stacks_its_small_tiles():
    # The TTC suite's 6-D reversal of (16, 19, 19, 19, 19, 32) float32: 16 x 32 tiles of
    # 2 KiB, 130321 of them. Stacked 7 deep along the innermost batch dim (19: 7, 7, 5).
    shape = (16, 19, 19, 19, 19, 32)  # normalized: dst strides descending (C order)
    src = c_strides(shape[::-1], 4)[::-1]  # the source is dst's shape reversed, C order
    plan = plan_tiles(4, shape, c_strides(shape, 4), src, 0, 0, 1024)
    assert (plan.tile0, plan.tile1, plan.stack) == (16, 32, 7)
    assert plan.tiles == 19 ** 3 * 3 and plan.grid_blocks == plan.tiles
    assert plan.stack * plan.tile0 * plan.pitch <= plan.capacity


@st.composite
def stackable_layouts(draw):
    """A permutation of 3 to 5 dims whose rows start on sector boundaries on both sides (each
    side's rows padded to whole sectors), maybe reversed or broadcast along any dim: the
    layouts whose small tiles the planner stacks."""
    ndim = draw(st.integers(3, 5))
    shape = tuple(draw(st.integers(1, {3: 24, 4: 9, 5: 6}[ndim])) for _ in range(ndim))
    itemsize = draw(st.sampled_from([1, 2, 4, 8]))
    perm = draw(st.permutations(range(ndim)))

    def sector_rows(order):
        strides, step = [0] * ndim, itemsize
        for k, d in enumerate(reversed(order)):
            strides[d] = step
            step *= shape[d]
            if k == 0:
                step = -(-step // 32) * 32 * draw(st.sampled_from([1, 1, 2]))
        return strides

    src = reversed_or_broadcast(draw, sector_rows(perm), broadcast_odds=9)
    options = dict(dst_address=draw(st.sampled_from([0, 256, 32])),
                   src_address=draw(st.sampled_from([0, 64])),
                   max_threads=draw(st.sampled_from([1024, 256])))
    return shape, tuple(sector_rows(tuple(range(ndim)))), tuple(src), itemsize, options


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # one patch for all
@given(layout=st.one_of(permuted_layouts(), stackable_layouts()))
def test_stacked_permutations_copy_exactly(layout, stack_small_copies):
    _drawn_layout_copies_exactly(layout)


def _drawn_layout_copies_exactly(layout):
    """check_copies_exactly on a drawn layout, its source address moved past the bytes its
    reversed dims reach below element 0."""
    shape, dst, src, itemsize, options = layout
    options["src_address"] += sum((n - 1) * -s for n, s in zip(shape, src) if s < 0)
    check_copies_exactly(shape, dst, src, itemsize, **options)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # one patch for all
@given(layout=st.one_of(permuted_layouts(), stackable_layouts()))
def test_short_rows_spread_apart_copy_exactly(layout, spread_short_rows):
    # Every short-row pass spread 4 apart (whatever the banks say): the walk still copies each
    # byte once, from the right source byte.
    _drawn_layout_copies_exactly(layout)


def test_stacking_needs_sector_steps_on_both_sides(stack_small_copies):
    # (7, 5, 64) float32 -> its (1, 0, 2) permutation, src 4 bytes into a sector (misaligned
    # rows of 256 bytes: staged, never wide). One side's rows padded to 65: its batch step
    # moves rows within their sectors, so no stacking; padded to 72 (whole sectors), they
    # stack.
    shape = (5, 7, 64)
    for pad, stacked in ((65, False), (72, True)):
        padded = (7 * pad * 4, pad * 4, 4)  # dst[5, 7, pad][..., :64]
        src_padded = (pad * 4, 5 * pad * 4, 4)  # x[7, 5, pad][..., :64].transpose(1, 0, 2)
        for dst, src in ((padded, (256, 5 * 256, 4)), (c_strides(shape, 4), src_padded)):
            plan = plan_tiles(4, shape, dst, src, 0, 4, 1024)
            assert plan is not None and not plan.wide, (pad, dst, src)
            assert (plan.stack > 1) == stacked, (pad, dst, src, plan.stack)
