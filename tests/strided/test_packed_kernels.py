"""The packed staged copy (``packed_copy``, kernels_src/packed.cu) in emulation, against NumPy.

Every variant of the family is launched; then random permutations of rank 2 to 8 with 1- to
16-byte elements, odd sizes, negative strides, offset views and broadcast sources, copied
through the best packed plan of their layout whatever the planner would pick. Each staged and
seed kernel runs with the block's threads in forward, reversed and shuffled order, so a
missing barrier cannot pass. The coalescing of the issue's layouts is measured from the
emulator's traces (``infini_cupy.readers.coalescing``) and matched against the sector model.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import pytest

from infini_cupy import config
from infini_cupy.arrays import data_pointer
from infini_cupy.runtime.launch import launch
from infini_cupy.strided import plan_cache
from infini_cupy.perf import sectors as sector_model
from infini_cupy.strided.copy import rearrange_
from infini_cupy.strided.layout import normalize_layout
from infini_cupy.strided.packed_planner import (
    LARGE_MAX_BYTES,
    PACKED_WIDE_BYTES,
    PackedPlan,
    all_packed_kernel_names,
    plan_packed,
)
from infini_cupy.strided.planner import plan_rearrange
from infini_cupy.strided.seed_planner import GeneralRearrangePlan, RearrangePlan
from infini_cupy.strided.plan_cache import coalescing_plans, pack, plan_for, seed_plans_only
from infini_cupy.strided.tile_planner import TilePlan
from infini_cupy.readers import coalescing
from infini_cupy.readers.sampled_launches import launch_plan
from infini_cupy.tools.plan_command import describe_plan
from tests.strided.test_transpose_kernels import aligned_empty, random_fill
from tests.support import dtype_cases
from tests.support.batches import batch_built

DTYPE_OF_UNIT = dtype_cases.OF_UNIT
ORDERS = ("forward", "reverse", "shuffle")


@pytest.fixture(autouse=True)
def _emulation_only(backend_name):
    if backend_name != "emulate":
        pytest.skip("direct NumPy layouts; the cuda run covers plans in test_rearrange")


@pytest.fixture(scope="module", autouse=True)
def _compiled():
    with batch_built():
        plan_cache.warm("emulate", all_packed_kernel_names())  # one g++ run for the family


def copy_and_check(y, x):
    """rearrange_(y, x) equals NumPy's copy bit for bit and writes no byte outside y (NumPy
    arrays: this file runs in emulation)."""
    expected = np.ascontiguousarray(x)  # a snapshot, before y is written
    owner = y if y.base is None else y.base
    raw = owner.reshape(-1).view(np.uint8)
    before = raw.copy()
    rearrange_(y, x)
    np.testing.assert_array_equal(np.ascontiguousarray(y).view(np.uint8), expected.view(np.uint8))
    mask = np.zeros(raw.size, bool)
    offset = y.__array_interface__["data"][0] - raw.__array_interface__["data"][0]
    np.lib.stride_tricks.as_strided(mask[offset:], y.shape + (y.itemsize,), y.strides + (1,))[...] = True
    np.testing.assert_array_equal(raw[~mask], before[~mask])
    return plan_for(y, x).plan


def packed_plan(y, x, max_threads=1024, capacity_bytes=PACKED_WIDE_BYTES) -> PackedPlan:
    """The best packed plan of ``rearrange_(y, x)``'s layout, whatever the planner picks, with
    tiles of at most ``capacity_bytes`` (beyond 48 KiB: in dynamic shared memory)."""
    layout = normalize_layout(x.shape, y.strides, x.strides, x.itemsize,
                              dst_address=data_pointer(y), src_address=data_pointer(x))
    return plan_packed(layout, data_pointer(y) % 32, data_pointer(x) % 32, max_threads,
                       capacity_bytes=capacity_bytes)


def packed_copy_and_check(y, x, max_threads=1024, grid=None, capacity_bytes=PACKED_WIDE_BYTES):
    """Copies x into y through the best packed plan: bit for bit NumPy's copy, and no byte
    outside y written."""
    plan = packed_plan(y, x, max_threads, capacity_bytes)
    source, blocks, block, args, shared_mem = pack(plan)
    expected = np.ascontiguousarray(x)  # a snapshot, before y is written
    owner = y if y.base is None else y.base
    raw = owner.reshape(-1).view(np.uint8)
    before = raw.copy()
    launch(source, plan.kernel, grid or blocks, block, (y, x, *args), backend="emulate",
           shared_mem=shared_mem)
    np.testing.assert_array_equal(np.ascontiguousarray(y).view(np.uint8), expected.view(np.uint8))
    mask = np.zeros(raw.size, bool)
    offset = y.__array_interface__["data"][0] - raw.__array_interface__["data"][0]
    np.lib.stride_tricks.as_strided(mask[offset:], y.shape + (y.itemsize,), y.strides + (1,))[...] = True
    np.testing.assert_array_equal(raw[~mask], before[~mask])
    return plan


def permutation(shape, perm, dtype, rng, src_offset=0, dst_offset=0):
    """(y, x): x a C-contiguous array of ``shape`` (``src_offset`` bytes past a 256-byte
    boundary) transposed by ``perm``, y a C-contiguous destination."""
    x = random_fill(aligned_empty(shape, dtype, src_offset), rng).transpose(perm)
    return aligned_empty(x.shape, dtype, dst_offset), x


# --- every variant, every layout --------------------------------------------------------


def layout_for_every_variant():
    """variant name -> (shape, perm, dtype, tile capacity) of the first permutation planned
    onto it (the dynamic-shared-memory variants: with tiles up to LARGE_MAX_BYTES)."""
    found = {}
    shapes = [((3, 5, 7), (2, 0, 1)), ((30, 50, 7), (2, 0, 1)), ((9, 17, 3), (1, 2, 0)),
              ((3, 2, 5, 2, 3, 7), (5, 3, 1, 4, 0, 2)), ((7, 5, 6, 9, 3, 5), (5, 4, 3, 2, 1, 0)),
              ((2, 3, 2, 3, 2, 3), (1, 3, 5, 0, 2, 4)), ((3, 3, 3, 3, 3), (4, 3, 2, 1, 0)),
              ((301, 257), (1, 0)), ((9, 7, 5, 6, 9, 5), (5, 4, 3, 2, 1, 0))]
    for capacity, unit, (shape, perm) in itertools.product(
            (PACKED_WIDE_BYTES, LARGE_MAX_BYTES), DTYPE_OF_UNIT, shapes):
        dtype = DTYPE_OF_UNIT[unit]
        y = aligned_empty(tuple(shape[p] for p in perm), dtype)
        x = aligned_empty(shape, dtype).transpose(perm)
        plan = packed_plan(y, x, capacity_bytes=capacity)
        found.setdefault(plan.kernel, (shape, perm, dtype, capacity))
    return found


VARIANT_LAYOUTS = layout_for_every_variant()


def test_the_layouts_reach_every_variant():
    assert set(VARIANT_LAYOUTS) == set(all_packed_kernel_names())


@pytest.mark.parametrize("name", sorted(VARIANT_LAYOUTS))
def test_every_variant_copies_exactly(name):
    shape, perm, dtype, capacity = VARIANT_LAYOUTS[name]
    y, x = permutation(shape, perm, dtype, np.random.default_rng(len(name)))
    plan = packed_copy_and_check(y, x, capacity_bytes=capacity)
    assert plan.kernel == name
    assert (plan.shared_bytes > PACKED_WIDE_BYTES) == name.endswith(", 2>")


# --- the walks of 1- and 2-byte units --------------------------------------------------
# (name, shape, perm, dtype, src offset, dst offset, the walk each phase is to take:
# (read.words, write.words, write.contiguous))
WORD_WALKS = [
    ("words, consecutive slots", (5, 12, 34, 16), (1, 3, 0, 2), np.uint8, 0, 0, (True, True, True)),
    ("fp16 words, consecutive", (5, 12, 34, 16), (1, 3, 0, 2), np.float16, 0, 0, (True, True, True)),
    ("words, padded slots", (8, 16, 5, 64), (3, 2, 1, 0), np.uint8, 0, 0, (True, True, False)),
    ("fp16 words, padded slots", (6, 10, 24, 12), (2, 3, 0, 1), np.float16, 0, 0,
     (True, True, False)),
    ("runs ending inside a word", (16, 40, 48), (2, 0, 1), np.uint8, 0, 0, (True, False, False)),
    ("rows starting anywhere", (9, 33, 17), (2, 1, 0), np.float16, 0, 0, (False, False, False)),
    ("source off a word", (5, 12, 34, 16), (1, 3, 0, 2), np.uint8, 3, 0, (False, True, False)),
    ("destination off a word", (5, 12, 34, 16), (1, 3, 0, 2), np.float16, 0, 6,
     (True, False, False)),
    ("odd transpose", (301, 257), (1, 0), np.uint8, 0, 0, (False, False, False)),
]


@pytest.mark.parametrize("name, shape, perm, dtype, src_offset, dst_offset, walks", WORD_WALKS,
                         ids=[w[0] for w in WORD_WALKS])
def test_every_walk_of_narrow_units_copies_exactly(name, shape, perm, dtype, src_offset,
                                                   dst_offset, walks):
    # Whole words, words cut by a run's end (read whole inside the source's bytes, or unit by
    # unit at its ends), misaligned words (the rare path) and unit walks, through the kernel.
    y, x = permutation(shape, perm, dtype, np.random.default_rng(7), src_offset, dst_offset)
    plan = packed_copy_and_check(y, x)
    assert (plan.read.words, plan.write.words, plan.write.contiguous) == walks


def test_wide_units_pad_slots_every_few_indices_where_that_spreads_the_banks():
    # The random suite's 7-d float32 permutation (x 8x4x7x7x11x2x7): dims of 2 to 11, whose
    # slots meet in a few banks; a dim's slots padded by one every 2^g indices spreads them
    # (1.94 wavefronts per access unpadded).
    y, x = permutation((8, 4, 7, 7, 11, 2, 7), (0, 3, 4, 6, 2, 1, 5), np.float32,
                       np.random.default_rng(5))
    plan = plan_for(y, x).plan  # the model's choice (the bench's)
    _, launches = coalescing.profile(rearrange_, y, x)
    np.testing.assert_array_equal(y, x)
    assert isinstance(plan, PackedPlan) and plan.kernel.startswith("packed_copy<4,")
    assert any(plan.read.group_pad) or any(plan.write.group_pad)
    assert launches[0].shared.ratio < 1.4
    packed_copy_and_check(y, x)  # bit for bit, no byte outside y written


def test_words_cut_by_the_ends_of_the_source_are_read_unit_by_unit():
    # Runs of 44 bytes 48 apart (a slice): each run's last word is cut by its end; inside the
    # source's bytes phase 1 reads it whole, past the source's last byte unit by unit.
    base = random_fill(aligned_empty((16, 40, 48), np.uint8), np.random.default_rng(8))
    x = base[:, :, :44].transpose(2, 0, 1)
    y = aligned_empty(x.shape, np.uint8)
    plan = packed_copy_and_check(y, x)
    assert plan.read.words and plan.read.length[0] == 44


def random_layout(seed):
    """(y, x) of a random permutation of rank 2 to 8, odd lengths, 1- to 16-byte elements; some
    with negative strides, an offset source or destination, or a broadcast source."""
    rng = np.random.default_rng(seed)
    rank = 2 + seed % 7
    dtype = DTYPE_OF_UNIT[(1, 2, 4, 8, 16)[seed % 5]]
    limit = {2: 90, 3: 30, 4: 11, 5: 7, 6: 5}.get(rank, 4)
    shape = tuple(int(n) for n in rng.integers(1, limit + 1, rank))
    perm = tuple(int(p) for p in rng.permutation(rank))
    kind = seed % 4
    itemsize = np.dtype(dtype).itemsize
    base = random_fill(aligned_empty(tuple(n + 2 for n in shape), dtype,
                                     itemsize if kind == 1 else 0), rng)
    if kind == 0:  # negative strides on some dims
        flips = tuple(slice(None, None, -1) if f else slice(None) for f in rng.integers(0, 2, rank))
        x = base[tuple(slice(0, n) for n in shape)][flips]
    elif kind == 1:  # an interior slice of an offset base
        x = base[tuple(slice(1, 1 + n) for n in shape)]
    elif kind == 2:  # a broadcast source: some dims of length 1 stretched
        small = tuple(1 if b else n for n, b in zip(shape, rng.integers(0, 3, rank) == 0))
        x = np.broadcast_to(base[tuple(slice(0, n) for n in small)], shape)
    else:
        x = base[tuple(slice(0, n) for n in shape)]
    x = x.transpose(perm)
    y_base = aligned_empty(tuple(n + 1 for n in x.shape), dtype, itemsize * (seed % 3))
    y = y_base[tuple(slice(1, 1 + n) for n in x.shape)] if seed % 2 else y_base[
        tuple(slice(0, n) for n in x.shape)]
    return y, x


@pytest.mark.parametrize("seed", range(40))
def test_random_permutations_copy_exactly(seed, monkeypatch):
    monkeypatch.setenv(config.THREAD_ORDER_VAR, ORDERS[seed // 3 % 3])  # no barrier missed
    y, x = random_layout(seed)
    plan = packed_copy_and_check(y, x, max_threads=(1024, 256, 32)[seed % 3],
                                 capacity_bytes=(PACKED_WIDE_BYTES, LARGE_MAX_BYTES)[seed % 2])
    assert isinstance(plan, PackedPlan)
    copy_and_check(y, x)  # and through whichever plan the planner picks


@pytest.mark.parametrize("order", ORDERS)
def test_fewer_blocks_than_tiles(order, monkeypatch):
    # The blocks' grid-stride loop: 3 blocks walk every tile, each tile's writes of shared
    # memory waiting for the last tile's reads (the barrier that ends a tile).
    monkeypatch.setenv(config.THREAD_ORDER_VAR, order)
    y, x = permutation((3, 4, 13, 25, 5, 7), (5, 4, 3, 2, 1, 0), np.float32,
                       np.random.default_rng(1))
    assert packed_copy_and_check(y, x, grid=3).tiles > 3


# --- thread orders: a missing barrier cannot pass -----------------------------------------


def layout_of_each_kind(rng):
    """(kind, y, x) for a packed, a staged-transpose, a seed-matrix and a flat-index copy."""
    y, x = permutation((3, 4, 7, 53, 9), (4, 3, 2, 1, 0), np.float16, rng)
    yield PackedPlan, y, x
    y, x = permutation((301, 257), (1, 0), np.float32, rng)
    yield TilePlan, y, x
    x = random_fill(aligned_empty((40, 301), np.float32), rng)[:, 1:]
    yield RearrangePlan, aligned_empty((40, 300), np.float32), x
    y, x = permutation((3, 5, 3, 5, 3, 5, 3), (6, 5, 4, 3, 2, 1, 0), np.int8, rng)
    yield GeneralRearrangePlan, y, x


@pytest.mark.parametrize("order", ORDERS)
def test_every_kernel_copies_exactly_in_every_thread_order(order, monkeypatch):
    monkeypatch.setenv(config.THREAD_ORDER_VAR, order)
    for kind, y, x in layout_of_each_kind(np.random.default_rng(2)):
        rule = (seed_plans_only() if kind in (RearrangePlan, GeneralRearrangePlan) else
                coalescing_plans() if kind is PackedPlan else contextlib.nullcontext())
        with rule:
            plan = copy_and_check(y, x)
        assert isinstance(plan, kind), (kind, plan.kernel)
    y, x = random_layout(5)
    packed_copy_and_check(y, x)
    y, x = permutation((501, 501), (1, 0), np.float16, np.random.default_rng(3))
    with coalescing_plans():
        assert copy_and_check(y, x).shared_bytes > PACKED_WIDE_BYTES  # a tile in dynamic shared memory


# --- coalescing, measured from the emulator's traces --------------------------------------

ISSUE_LAYOUTS = [  # (name, shape, perm, dtype, lowest ratio of either side to its limit)
    ("3,4,7,53,9 fp32", (3, 4, 7, 53, 9), (4, 3, 2, 1, 0), np.float32, 0.9),
    ("3,4,7,53,9 fp16", (3, 4, 7, 53, 9), (4, 3, 2, 1, 0), np.float16, 0.9),
    ("3,4,13,25,5,7 fp32", (3, 4, 13, 25, 5, 7), (5, 4, 3, 2, 1, 0), np.float32, 0.9),
    ("2,2,2,2,2,2 permuted", (2,) * 6, (3, 1, 5, 0, 4, 2), np.float32, 0.9),
    ("500x500 fp16", (500, 500), (1, 0), np.float16, 0.9),
    ("2,2,2,4 fp16", (2, 2, 2, 4), (3, 2, 1, 0), np.float16, 0.9),
    # Beyond the 48 KiB a block declares statically: tiles in dynamic shared memory.
    ("3,4,13,25,5,7 fp16", (3, 4, 13, 25, 5, 7), (5, 4, 3, 2, 1, 0), np.float16, 0.9),
    ("501x501 fp16", (501, 501), (1, 0), np.float16, 0.9),
    ("999x1001 int8", (999, 1001), (1, 0), np.int8, 0.9),
]


@pytest.mark.parametrize("name, shape, perm, dtype, lowest", ISSUE_LAYOUTS,
                         ids=[c[0] for c in ISSUE_LAYOUTS])
def test_the_issue_layouts_reach_their_sector_limit(name, shape, perm, dtype, lowest):
    # Planned by coalescing alone: the model gives some of these to plans that coalesce
    # less but issue fewer instructions (test_planner, test_kernel_costs).
    y, x = permutation(shape, perm, dtype, np.random.default_rng(3))
    with coalescing_plans():
        _, launches = coalescing.profile(rearrange_, y, x)
        plan = plan_for(y, x).plan
    np.testing.assert_array_equal(y, x)
    reads, writes = coalescing.total(launches)
    ratios = (reads.efficiency / coalescing.best_efficiency(x),
              writes.efficiency / coalescing.best_efficiency(y))
    assert min(ratios) >= lowest, ratios
    if isinstance(plan, PackedPlan):  # the sector model predicted what the GPU sees
        # exactly, but for the words cut by the ends of the source's memory (at most two),
        # which phase 1 reads unit by unit: an access per unit
        assert writes.sectors == plan.sectors[1]
        assert 0 <= reads.sectors - plan.sectors[0] <= 2 * 8 // np.dtype(dtype).itemsize
        # the ratios divide the sectors by two estimates of the limit (the sector model's and
        # the profiler's), which differ by up to two hundredths on these tiles
        assert ratios == pytest.approx(plan.predicted, abs=2e-2)


@pytest.mark.parametrize("shape, perm, dtype, offset", [
    ((301, 257), (1, 0), np.float16, 0), ((64, 20000 // 64), (1, 0), np.float32, 4),
    ((3, 20, 9, 13), (0, 3, 1, 2), np.float16, 0), ((40, 301), None, np.float32, 0),
])
def test_the_sector_model_of_staged_transposes_matches_the_emulator(shape, perm, dtype, offset):
    # The planner compares packed plans with the staged transpose through this model.
    rng = np.random.default_rng(4)
    if perm is None:  # misaligned rows
        x = random_fill(aligned_empty(shape, dtype), rng)[1:, 1:]
        y = aligned_empty(x.shape, dtype)
    else:
        y, x = permutation(shape, perm, dtype, rng, dst_offset=offset)
    # Within 48 KiB (the 1- and 2-byte ones otherwise take larger packed tiles).
    plan = plan_rearrange(x.shape, y.strides, x.strides, x.itemsize,
                          dst_address=data_pointer(y) % 32, src_address=data_pointer(x) % 32,
                          max_shared_bytes=PACKED_WIDE_BYTES)
    assert isinstance(plan, TilePlan)
    trace, _ = launch_plan(plan, y, x)
    np.testing.assert_array_equal(y, x)
    reads, writes = coalescing.total([coalescing.profile_launch(trace)])
    predicted = sector_model.tile_plan_sectors(plan, data_pointer(y) % 32, data_pointer(x) % 32)
    if perm is None:
        # Rows 4 bytes apart share a sector, which one warp access may touch for both: the
        # model counts it twice (an upper bound, off by at most a sector per row).
        assert predicted[0] - x.shape[0] <= reads.sectors <= predicted[0]
        assert writes.sectors == predicted[1]
    elif plan.unit == 1 and plan.read_vector == 1:
        # 4-byte words: the source's first and last words, where they reach outside it, are
        # read unit by unit (at most 4 more accesses each), which the model leaves out
        assert predicted[0] <= reads.sectors <= predicted[0] + 8
        assert writes.sectors == predicted[1]
    else:
        assert (reads.sectors, writes.sectors) == predicted


def test_the_plan_tool_describes_and_samples_packed_plans():
    y, x = permutation((3, 4, 13, 25, 5, 7), (5, 4, 3, 2, 1, 0), np.float32,
                       np.random.default_rng(5))
    plan = packed_plan(y, x)
    text = "\n".join(describe_plan(plan))
    assert plan.kernel in text and "phase 1 reads in src order" in text and "of 25" in text
    trace, blocks = launch_plan(plan, y, x, max_blocks=2)
    assert blocks == 2 and set(np.unique(trace.accesses["block"])) == {0, 1}
