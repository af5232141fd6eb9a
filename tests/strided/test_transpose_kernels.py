"""The staged-copy kernels (``tiled_copy``, kernels_src/transpose.cu) against NumPy, on the
suite's backend.

Every variant of the family is launched through a layout the planner maps to it; then the
edges: odd sizes, thin and chained tiles, batch dims, negative strides, broadcast sources,
misaligned rows, a grid smaller than the tiles. Each case is a pair of host buffers at chosen
offsets from a 256-byte boundary and the views to copy between; the buffers move to the
device (keeping those offsets) and the same views are carved there. The coalescing each
achieves is measured from the emulator's traces (``infini_cupy.readers.coalescing``): emulation only.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infini_cupy import arrays, config
from infini_cupy.runtime import recent
from infini_cupy.runtime.launch import launch
from infini_cupy.strided import planner
from infini_cupy.perf import kernel_costs, limits
from infini_cupy.strided import plan_cache as rearrange_module
from infini_cupy.strided.copy import rearrange_
from infini_cupy.strided.plan_cache import coalescing_plans, plan_for, seed_plans_only
from infini_cupy.strided.tile_planner import TilePlan, all_tiled_kernel_names
from infini_cupy.readers import bank_conflicts
from infini_cupy.readers import coalescing
from tests.support import dtype_cases
from tests.support.batches import batch_built

DTYPE_OF_UNIT = dtype_cases.OF_UNIT


@pytest.fixture(scope="module", autouse=True)
def _compiled(backend_name):
    """Emulation: every variant in one g++ run. On the cuda backend the launcher compiles one
    variant per program anyway, so each compiles when a test first launches it."""
    if backend_name == "emulate":
        with batch_built():
            rearrange_module.warm(backend_name, all_tiled_kernel_names())


def aligned_empty(shape, dtype, offset=0, align=256):
    """A zeroed host array whose element 0 is ``offset`` bytes past a 256-byte boundary
    (CuPy's allocator aligns to 256; ``to_device`` keeps the offset)."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.zeros(nbytes + align + offset, np.uint8)
    start = (-raw.ctypes.data) % align + offset
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def random_fill(a, rng):
    """Random bit patterns (compared bitwise: no NaN trouble)."""
    bits = a.view(np.uint8)
    bits[...] = rng.integers(0, 256, size=bits.shape, dtype=np.uint8)
    return a


def broadcast(a, shape):
    """``a`` broadcast to ``shape`` (stride 0 on its length-1 dims) in ``a``'s own library:
    the same view of a host buffer and of its device copy."""
    strides = [0 if n == 1 else st for n, st in zip(a.shape, a.strides)]
    return arrays.as_strided(a, shape, strides)


def identity(a):
    return a


def transposed(a):
    return a.T


def transposed_case(unit, rows, cols, src_pitch, dst_pitch, src_offset, dst_offset, rng):
    """(y buffer, x buffer, y view, x view): x is x_base[:rows, :cols].T (src rows of
    ``src_pitch`` elements), y a (cols, rows) view of rows of ``dst_pitch`` elements; both
    buffers at the given byte offsets."""
    dtype = DTYPE_OF_UNIT[unit]
    x_base = random_fill(aligned_empty((rows, src_pitch), dtype, src_offset), rng)
    y_base = random_fill(aligned_empty((cols, dst_pitch), dtype, dst_offset), rng)
    return y_base, x_base, lambda b: b[:, :rows], lambda b: b[:rows, :cols].T


def copy_and_check(y_base, x_base, y_of, x_of, to_device, to_host):
    """``rearrange_(y_of(y), x_of(x))`` on the device copies of the host buffers gives, over
    all of y's buffer, NumPy's copy bit for bit (and writes no byte outside the view).
    Returns the plan it ran."""
    expected = y_base.copy()
    y_of(expected)[...] = x_of(x_base)
    y_buffer, x_buffer = to_device(y_base), to_device(x_base)
    y, x = y_of(y_buffer), x_of(x_buffer)
    prepared = plan_for(y, x)
    assert rearrange_(y, x) is y
    # the buffer's bytes (CuPy's own copy kernels would fault on a misaligned float64 buffer)
    np.testing.assert_array_equal(to_host(y_buffer.reshape(-1).view(np.uint8)),
                                  expected.reshape(-1).view(np.uint8))
    return prepared.plan


def layout_for_every_variant():
    """variant name -> transposed_case arguments (unit, rows, cols, src pitch, dst pitch,
    src offset, dst offset) of the first layout the planner maps to it."""
    found = {}
    for unit in (1, 2, 4, 8, 16):
        for rows, cols, src_extra, dst_extra, src_offset, dst_offset in itertools.product(
            *[(128, 64, 36, 35) if unit == 1 else (64, 36, 35)] * 2, (0, 1, 4, 29, 8, 16),
            (0, 1, 4, 28, 29), (0, unit, 4),
            (0, unit, 4),
        ):
            src_pitch, dst_pitch = cols + src_extra, rows + dst_extra
            plan = rearrange_module.prepared_copy(
                unit, (cols, rows), (dst_pitch * unit, unit), (unit, src_pitch * unit),
                dst_offset % 32, src_offset % 32).plan
            if isinstance(plan, TilePlan) and plan.kernel not in found:
                found[plan.kernel] = (unit, rows, cols, src_pitch, dst_pitch, src_offset, dst_offset)
    return found


# The search above plans ~14,000 layouts (minutes): its result is kept beside this file, and
# each test below fails, naming the kernel planned instead, if the planner maps a kept layout
# elsewhere. Rewrite it with ``python -m tests.strided.test_transpose_kernels``.
LAYOUTS_FILE = Path(__file__).with_name("tiled_variant_layouts.json")
VARIANT_LAYOUTS = {name: tuple(args) for name, args in json.loads(LAYOUTS_FILE.read_text()).items()}


def template_flags(name):
    """(Stacked, Grouped) of a tiled_copy name expression."""
    args = [int(a) for a in name[name.index("<") + 1:-1].split(",")]
    return args[4], args[5] if len(args) > 5 else 0


# Every variant, and the planner's search for a layout per variant, are left out of the
# stand-in's run (same_either_way): the variants share one parameter list, and the layouts the
# other tests plan take the launcher through them.
@pytest.mark.same_either_way
def test_the_layouts_reach_every_variant():
    plain = {name for name in all_tiled_kernel_names() if template_flags(name) == (0, 0)}
    # (Some 2-d layouts take K rows per step in phase 1: Grouped variants, tested with them.)
    assert {name for name in VARIANT_LAYOUTS if template_flags(name) == (0, 0)} == plain


@pytest.mark.same_either_way
@pytest.mark.parametrize("name", sorted(VARIANT_LAYOUTS))
def test_every_variant_copies_exactly(name, to_device, to_host):
    rng = np.random.default_rng(abs(hash(name)) % 2**32)
    case = transposed_case(*VARIANT_LAYOUTS[name], rng)
    assert copy_and_check(*case, to_device, to_host).kernel == name, (
        f"{LAYOUTS_FILE.name}'s layout for {name} plans otherwise now: rewrite it with "
        "python -m tests.strided.test_transpose_kernels")


@pytest.mark.parametrize("shape", [(2001, 33), (33, 2001), (1, 300), (300, 1), (3, 1000),
                                   (1000, 3), (2, 5), (97, 131)])
@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.complex128])
def test_odd_and_thin_transposes(shape, dtype, to_device, to_host):
    rng = np.random.default_rng(shape[0] * 7 + shape[1])
    x = random_fill(aligned_empty(shape, dtype), rng)
    copy_and_check(aligned_empty(shape[::-1], dtype), x, identity, transposed, to_device, to_host)
    y = aligned_empty(shape, dtype, offset=np.dtype(dtype).itemsize)  # misaligned dst
    x = random_fill(aligned_empty(shape[::-1], dtype), rng)
    copy_and_check(y, x, identity, transposed, to_device, to_host)


def test_thin_tiles_chain_their_rows(to_device, to_host):
    # (20000, 3) -> (3, 20000): the src rows of 3 follow each other; and the other way.
    rng = np.random.default_rng(5)
    x = random_fill(aligned_empty((20000, 3), np.float32), rng)
    plan = copy_and_check(aligned_empty((3, 20000), np.float32), x, identity, transposed,
                          to_device, to_host)
    assert plan.read_chained and plan.tile0 == 3
    x = random_fill(aligned_empty((3, 20000), np.float32), rng)
    plan = copy_and_check(aligned_empty((20000, 3), np.float32), x, identity, transposed,
                          to_device, to_host)
    assert plan.write_chained and plan.tile1 == 3


@pytest.mark.parametrize("perm", [(0, 2, 3, 1), (0, 3, 1, 2), (2, 0, 3, 1), (3, 2, 1, 0)])
def test_nchw_nhwc_and_4d_permutations(perm, to_device, to_host):
    rng = np.random.default_rng(sum(perm))
    x = random_fill(aligned_empty((3, 20, 9, 13), np.float16), rng)
    copy_and_check(aligned_empty(tuple(x.shape[p] for p in perm), np.float16), x, identity,
                   lambda b: b.transpose(perm), to_device, to_host)


def test_four_batch_dims_and_a_fifth(to_device, to_host):
    rng = np.random.default_rng(6)
    x = random_fill(aligned_empty((2, 3, 2, 3, 5, 40, 7), np.float32), rng)
    # dims 5 and 6 swap (the tile); of dims 0-4 only 0 and 1 stay adjacent: 4 batch dims
    perm = (4, 2, 0, 1, 3, 6, 5)
    y = aligned_empty(tuple(x.shape[p] for p in perm), np.float32)
    plan = copy_and_check(y, x, identity, lambda b: b.transpose(perm), to_device, to_host)
    assert isinstance(plan, TilePlan) and len(plan.batch_len) == 4
    five = (4, 2, 0, 3, 1, 6, 5)  # five batch dims: the seed-style path
    y = aligned_empty(tuple(x.shape[p] for p in five), np.float32)
    plan = copy_and_check(y, x, identity, lambda b: b.transpose(five), to_device, to_host)
    assert not isinstance(plan, TilePlan)


@pytest.fixture
def no_packing(monkeypatch):
    """Staged transposes only (no packed plans), and no plan made so survives the test."""
    monkeypatch.setattr(planner, "plan_packed", lambda *args, **kwargs: None)
    monkeypatch.setattr(planner, "plan_large", lambda *args, **kwargs: None)
    recent.forget_all()
    yield
    recent.forget_all()


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32])
def test_negative_strides(dtype, to_device, to_host, no_packing):
    # One packed tile would hold each of these small arrays whole: the staged transpose is
    # what this tests.
    rng = np.random.default_rng(7)
    x = random_fill(aligned_empty((130, 70), dtype), rng)
    for view in (lambda b: b.T[::-1], lambda b: b.T[:, ::-1], lambda b: b.T[::-1, ::-2],
                 lambda b: b[::-1, ::-1].T):
        copy_and_check(aligned_empty(view(x).shape, dtype), x, identity, view, to_device, to_host)
    y = aligned_empty((70, 130), dtype)
    # dst reversed: the planner flips both dims
    plan = copy_and_check(y, x, lambda b: b[::-1, ::-1], transposed, to_device, to_host)
    assert isinstance(plan, TilePlan) and plan.dst_stride1 == plan.unit


def test_broadcast_source(to_device, to_host):
    rng = np.random.default_rng(8)
    column = random_fill(aligned_empty((500, 1), np.float32), rng)  # contiguous (500, 1)
    plan = copy_and_check(aligned_empty((500, 300), np.float32), column, identity,
                          lambda b: broadcast(b, (500, 300)), to_device, to_host)
    assert isinstance(plan, TilePlan) and plan.src_stride1 == 0
    row = random_fill(aligned_empty((1, 300), np.float16), rng)
    copy_and_check(aligned_empty((300, 500), np.float16), row, identity,
                   lambda b: broadcast(b, (500, 300)).T, to_device, to_host)


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.float64])
def test_misaligned_rows_copy_staged(dtype, to_device, to_host):
    rng = np.random.default_rng(9)
    x = random_fill(aligned_empty((40, 301), dtype), rng)
    plan = copy_and_check(aligned_empty((39, 300), dtype), x, identity, lambda b: b[1:, 1:],
                          to_device, to_host)
    assert isinstance(plan, TilePlan) and plan.read_along == 1
    copy_and_check(aligned_empty((39, 300), dtype), x, identity,
                   lambda b: b[1:, :0:-1], to_device, to_host)  # src rows descending
    flat = random_fill(aligned_empty((5000,), dtype), rng)
    plan = copy_and_check(aligned_empty((4999,), dtype), flat, identity, lambda b: b[1:],
                          to_device, to_host)
    assert isinstance(plan, TilePlan) and plan.len0 == 1


@pytest.mark.parametrize("dtype, cols", [(np.int8, 257), (np.uint8, 259)])
@pytest.mark.parametrize("traced", [False, True])
def test_words_at_the_ends_of_the_source_are_read_unit_by_unit(dtype, cols, traced, to_device,
                                                               to_host, backend_name):
    """Byte units move in aligned 4-byte words; a word reaching past the source's
    first or last byte is read unit by unit (the emulator faults on any byte outside the
    view), words at row ends are written unit by unit (copy_and_check: no byte of y's buffer
    outside the view changes). Traced, lanes that skip a word's access repeat another's."""
    if traced and backend_name != "emulate":
        pytest.skip("the emulator's tracing")
    rng = np.random.default_rng(21)
    itemsize = np.dtype(dtype).itemsize
    rows = 301
    # the view (from element 1) starts 2 bytes into a word and ends inside one
    x_base = random_fill(aligned_empty((rows * cols + 2,), dtype, offset=2 - itemsize), rng)
    assert x_base[1:].ctypes.data % 4 == 2 and (2 + rows * cols * itemsize) % 4 != 0
    y_base = random_fill(aligned_empty((cols, rows + 3), dtype, offset=itemsize), rng)
    with coalescing.emulator.tracing() if traced else contextlib.nullcontext():
        plan = copy_and_check(y_base, x_base, lambda b: b[:, 1:rows + 1],
                              lambda b: b[1:rows * cols + 1].reshape(rows, cols).T,
                              to_device, to_host)
    assert isinstance(plan, TilePlan) and (plan.read_vector, plan.write_vector) == (1, 1)


@pytest.mark.parametrize("case", ["rgb channels", "reversed rows", "misaligned rows", "offset"])
def test_traced_word_copies_keep_each_warp_access_one_width(case, emulation_only):
    """Traced, a lane that skips a word's access (a row's end) repeats another lane's, so the
    k-th access of every lane of a warp is one instruction: one width, as on the GPU."""
    rng = np.random.default_rng(22)
    if case == "rgb channels":  # 3 channels read as one run of words
        x = random_fill(aligned_empty((2, 40, 41, 3), np.int8, 1), rng).transpose(0, 3, 1, 2)
    elif case == "reversed rows":
        x = random_fill(aligned_empty((301, 257), np.int8, 3), rng)[::-1].T
    elif case == "misaligned rows":
        x = random_fill(aligned_empty((40, 999), np.int8), rng)[1:, 1:]
    else:
        x = random_fill(aligned_empty((97, 301), np.uint8, 2), rng).T
    y = aligned_empty(x.shape, x.dtype, 1 if x.itemsize == 1 else 0)
    plan = plan_for(y, x).plan
    assert isinstance(plan, TilePlan) and 1 in (plan.read_vector, plan.write_vector)
    with coalescing.emulator.tracing() as trace:
        rearrange_(y, x)
    np.testing.assert_array_equal(y, x)
    (launch,) = trace.launches
    for records in (launch.accesses, launch.shared):
        rank = coalescing.emulator.direction_ranks(records)
        key = ((records["block"].astype(np.int64) * 64 + records["thread"] // 32) * (rank.max() + 1)
               + rank) * 2 + records["is_write"]
        widths = np.unique(np.stack([key, records["bytes"]]), axis=1)
        assert len(np.unique(widths[0])) == widths.shape[1], "a warp access of mixed widths"


def test_every_variant_fits_its_block_in_registers():
    """A block's threads x registers (sm_90 code, kernel_costs.json, allocated 8 at a time)
    within the 64 K registers of an SM, at the most threads the planner launches it with."""
    from infini_cupy.perf.kernel_costs import _kernels
    from infini_cupy.strided.tile_planner import max_block_threads

    checked = 0
    for name, figures in _kernels().items():
        if not name.startswith("tiled_copy<"):
            continue
        unit, rv, wv, wide = (int(v) for v in name[11:-1].split(",")[:4])
        registers = -(-figures[2] // 8) * 8
        assert registers * max_block_threads(unit, rv, wv, bool(wide)) <= 65536, name
        checked += 1
    assert checked == len(all_tiled_kernel_names())


def test_fewer_blocks_than_tiles(backend_name, to_device, to_host):
    rng = np.random.default_rng(10)
    x_host = random_fill(aligned_empty((300, 200), np.float32), rng)
    x, y = to_device(x_host), to_device(aligned_empty((200, 300), np.float32))
    prepared = plan_for(y, x.T)
    assert prepared.plan.tiles > 1
    launch(prepared.source, prepared.kernel, 1, prepared.block, (y, x.T, *prepared.struct_args),
           backend=backend_name)
    np.testing.assert_array_equal(to_host(y), x_host.T)


# --- coalescing, measured from the emulator's traces -------------------------------------


@pytest.fixture
def emulation_only(backend_name):
    if backend_name != "emulate":
        pytest.skip("coalescing is measured from the emulator's access traces; on a GPU, "
                    "python -m infini_cupy bench measures bandwidth")


def efficiency(y, x, **plan_options):
    with_tiles = plan_options.get("tiles", True)
    with contextlib.nullcontext() if with_tiles else seed_plans_only():
        _, launches = coalescing.profile(rearrange_, y, x)
    np.testing.assert_array_equal(y, x)
    return coalescing.total(launches)


# Transposes whose rows start anywhere in a sector on both sides (odd lengths): the planner
# takes tiles whose rows fill whole warp steps (no step spans two rows of different leads),
# and the 8-byte units' idle lanes (emulation repeats a lane of their own half warp) add no
# word to the other half's phase. (x shape, dtype)
UNEVEN_ROWS = [((701, 374), np.float32), ((333, 555), np.float32), ((771, 513), np.float16),
               ((411, 333), np.float16), ((255, 301), np.float64), ((203, 157), np.float64)]


@pytest.mark.parametrize("shape, dtype", UNEVEN_ROWS,
                         ids=[f"{np.dtype(d).name}-{s[0]}x{s[1]}" for s, d in UNEVEN_ROWS])
def test_transposes_of_rows_starting_anywhere_are_free_of_bank_conflicts(shape, dtype,
                                                                         emulation_only):
    x = random_fill(aligned_empty(shape, dtype), np.random.default_rng(sum(shape)))
    y = aligned_empty(shape[::-1], dtype)
    _, launches = coalescing.profile(rearrange_, y, x.T)
    np.testing.assert_array_equal(y, x.T)
    plan = plan_for(y, x.T).plan
    assert isinstance(plan, TilePlan) and not (plan.read_uniform or plan.write_uniform)
    assert [p.kernel for p in launches] == [plan.kernel]
    assert launches[0].shared.ratio == 1.0


# Permutations whose dst rows are short and one run (chained), the src rows anywhere in a
# sector: the run needs a pitch of the rows' length, a multiple of 2, 4 or 8 words (modulo
# 32), which phase 1 takes K rows at a time (TilePlan.read_rows) to fill the banks between
# each other's; the last, short dst rows of one lead spread apart beside K src rows.
# (Where tiles are small, K rows cost more instructions per tile than the conflicts cost, by
# the model: test_small_tiles_keep_their_rows_per_step_plain.)
# (x shape, perm, dtype) -> the read rows planned.
CHAINED_SHORT_ROWS = [((54, 1039, 5), (1, 2, 0), np.float32, 2),
                      ((20, 13094), (1, 0), np.float32, 4),
                      ((54, 1039, 5), (1, 2, 0), np.float64, 4),
                      ((21593, 12), (1, 0), np.float64, 8),
                      ((8, 7, 68, 74), (3, 1, 2, 0), np.float64, 4)]


@pytest.mark.parametrize("shape, perm, dtype, rows", CHAINED_SHORT_ROWS,
                         ids=[f"{np.dtype(d).name}-{'x'.join(map(str, s))}"
                              for s, _, d, _ in CHAINED_SHORT_ROWS])
def test_transposes_beside_short_chained_rows_are_free_of_bank_conflicts(shape, perm, dtype,
                                                                         rows, emulation_only):
    x = random_fill(aligned_empty(shape, dtype), np.random.default_rng(sum(shape)))
    y = aligned_empty(tuple(shape[p] for p in perm), dtype)
    _, launches = coalescing.profile(rearrange_, y, x.transpose(perm))
    np.testing.assert_array_equal(y, x.transpose(perm))
    plan = plan_for(y, x.transpose(perm)).plan
    assert isinstance(plan, TilePlan) and plan.read_rows == rows, plan
    assert [p.kernel for p in launches] == [plan.kernel]
    assert launches[0].shared.ratio == 1.0


def test_small_tiles_keep_their_rows_per_step_plain(emulation_only):
    # 6 x 4 x 15 x 14 x 7 x 7 float32 to rows of 6: tiles of 49 x 6 elements, whose K-row
    # walk the model finds slower (more instructions per tile than its conflicts cost).
    shape, perm = (6, 4, 15, 14, 7, 7), (3, 2, 1, 4, 5, 0)
    x = random_fill(aligned_empty(shape, np.float32), np.random.default_rng(3))
    y = aligned_empty(tuple(shape[p] for p in perm), np.float32)
    plan = plan_for(y, x.transpose(perm)).plan
    assert isinstance(plan, TilePlan) and (plan.tile0, plan.tile1) == (49, 6)
    assert plan.read_rows == 1 and plan.kernel == "tiled_copy<4, 1, 1, 1, 0>"
    # The same plan with 2 rows per step (pitch 6: conflict-free) by the model's costs:
    grouped = dataclasses.replace(plan, read_rows=2, pitch=6,
                                  kernel="tiled_copy<4, 1, 1, 1, 0, 1>")
    assert limits.predicted_fraction(plan, (1.0, 1.0), y.nbytes) > \
        limits.predicted_fraction(grouped, (1.0, 1.0), y.nbytes)


def test_seed_kernel_reads_an_eighth_of_each_sector_on_an_fp32_transpose(emulation_only):
    x = random_fill(aligned_empty((256, 256), np.float32), np.random.default_rng(11))
    reads, writes = efficiency(aligned_empty((256, 256), np.float32), x.T, tiles=False)
    assert reads.efficiency == pytest.approx(0.125) and writes.efficiency == 1.0


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape, offset", [((256, 384), 0), ((301, 257), 0), ((320, 300), 1)])
def test_tiled_transposes_use_whole_sectors(dtype, shape, offset, emulation_only):
    rng = np.random.default_rng(12)
    x = random_fill(aligned_empty(shape, dtype), rng)
    y = aligned_empty(shape[::-1], dtype, offset=offset * np.dtype(dtype).itemsize)
    if shape == (256, 384):
        reads, writes = efficiency(y, x.T)
        assert reads.efficiency == writes.efficiency == 1.0
    elif dtype == np.float16 and shape == (301, 257):
        # Rows misaligned on both sides, 2-byte elements: each row run of a tile loses one
        # partial sector in 16 alignments of 2 bytes. A packed tile beyond 48 KiB (runs of
        # ~300 bytes) reaches ~0.9, planned by coalescing alone; the model keeps the staged
        # transpose, which issues fewer instructions per byte.
        with coalescing_plans():
            reads, writes = efficiency(y, x.T)
        assert reads.efficiency >= 0.88 and writes.efficiency >= 0.88
        reads, writes = efficiency(y, x.T)
        assert reads.efficiency >= 0.8 and writes.efficiency >= 0.8
    else:
        reads, writes = efficiency(y, x.T)
        assert reads.efficiency >= 0.9 and writes.efficiency >= 0.9


@pytest.mark.parametrize("shape, dtype", [((501, 501), np.float16), ((999, 1001), np.int8),
                                          ((3, 4, 13, 25, 5, 7), np.float16)])
def test_tiles_in_dynamic_shared_memory_copy_exactly(shape, dtype, backend_name, to_device,
                                                     to_host):
    """Layouts whose tiles outgrow the 48 KiB a block declares statically: on a GPU the
    launch opts the kernel in to more (cuFuncSetAttribute), in emulation each block's dynamic
    shared memory starts poisoned."""
    rng = np.random.default_rng(13)
    x_host = random_fill(aligned_empty(shape, dtype), rng)
    x = to_device(x_host).transpose(tuple(range(len(shape)))[::-1])
    y = to_device(aligned_empty(x.shape, dtype))
    with coalescing_plans():  # packed tiles: the model gives these layouts to others
        prepared = plan_for(y, x)
        assert prepared.shared_mem > 49152, prepared.kernel
        rearrange_(y, x)
    np.testing.assert_array_equal(to_host(y), x_host.transpose(tuple(range(len(shape)))[::-1]))


# --- stacked tiles ---------------------------------------------------------------------------


@pytest.fixture
def stacking(stack_small_copies, no_packing):
    """Small tiles stacked however small the copy (conftest.py's stack_small_copies), staged
    transposes only."""


@pytest.mark.parametrize("dtype", [np.int8, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("perm", [(4, 3, 2, 1, 0), (4, 1, 3, 2, 0), (1, 4, 2, 3, 0)])
def test_stacked_tiles_copy_exactly(dtype, perm, to_device, to_host, stacking):
    # 5-D permutations whose contiguous dims (32 long) make every other step whole sectors;
    # the innermost batch dim of 3, 5 or 7 splits into groups, the last one shorter. (A 32 x 32
    # tile of 16-byte units fills shared memory: those go one at a time.)
    rng = np.random.default_rng(sum(perm) + np.dtype(dtype).itemsize)
    x = random_fill(aligned_empty((32, 3, 5, 7, 32), dtype), rng)
    y = aligned_empty(tuple(x.shape[p] for p in perm), dtype)
    plan = copy_and_check(y, x, identity, lambda b: b.transpose(perm), to_device, to_host)
    assert isinstance(plan, TilePlan) and plan.stack > 1, plan


@pytest.mark.parametrize("view", ["reversed", "broadcast", "offset"])
def test_stacked_tiles_of_reversed_broadcast_and_offset_sources(view, to_device, to_host,
                                                                  stacking):
    # (16, 6, 11, 32) float32 (rows of 40: no dims merge) into (6, 11, 32, 16): 32 x 16 tiles
    # stacked along the dim of 11, which the source walks backwards, or broadcasts, or whose
    # rows both sides start 8 bytes into a sector.
    rng = np.random.default_rng(14)
    offset = 8 if view == "offset" else 0
    if view == "broadcast":
        x = random_fill(aligned_empty((16, 6, 1, 40), np.float32), rng)
        of = lambda b: broadcast(b[..., :32], (16, 6, 11, 32)).transpose(1, 2, 3, 0)  # noqa: E731
    else:
        x = random_fill(aligned_empty((16, 6, 11, 40), np.float32, offset=offset), rng)
        flip = (slice(None, None, -1), slice(None), slice(None, None, -1), slice(0, 32))
        keep = (Ellipsis, slice(0, 32))
        of = lambda b: b[flip if view == "reversed" else keep].transpose(1, 2, 3, 0)  # noqa: E731
    y = aligned_empty((6, 11, 32, 16), np.float32, offset=offset)
    plan = copy_and_check(y, x, identity, of, to_device, to_host)
    assert isinstance(plan, TilePlan) and plan.stack > 1, plan


def test_stacked_tiles_with_fewer_blocks_than_groups(backend_name, to_device, to_host,
                                                     stacking):
    rng = np.random.default_rng(15)
    x_host = random_fill(aligned_empty((16, 13, 5, 40), np.float32), rng)
    expected = x_host[..., :32].transpose(1, 2, 3, 0)
    x = to_device(x_host)[..., :32].transpose(1, 2, 3, 0)
    y = to_device(aligned_empty(expected.shape, np.float32))
    prepared = plan_for(y, x)
    assert prepared.plan.stack > 1 and prepared.plan.tiles > 2
    launch(prepared.source, prepared.kernel, 2, prepared.block, (y, x, *prepared.struct_args),
           backend=backend_name)
    np.testing.assert_array_equal(to_host(y), expected)


@functools.cache
def stacked_layout_for_every_variant():
    """stacked variant name -> (unit, rows, cols, src pitch, dst pitch, src offset, dst offset)
    of the first 3-D layout mapped to it: three (rows, cols) transposes one after another,
    each matrix's buffer rounded up to whole sectors (the stacking steps)."""
    found = {}
    for unit in (1, 2, 4, 8, 16):
        sizes = {1: (128, 64, 35, 32), 2: (64, 32, 36, 35)}.get(unit, (32, 36, 35, 16))
        # the unit's search ends when each of its stacked variants has a layout (a planner
        # call costs milliseconds, and the whole product has thousands)
        wanted = {name for name in all_tiled_kernel_names()
                  if template_flags(name) == (1, 0) and name.startswith(f"tiled_copy<{unit},")}
        for rows, cols, src_extra, dst_extra, src_offset, dst_offset in itertools.product(
                sizes, sizes, (0, 1, 4, 29), (0, 1, 4, 28), (0, unit, 4), (0, unit, 4)):
            if wanted <= found.keys():
                break
            src_pitch, dst_pitch = cols + src_extra, rows + dst_extra
            src_step = -(-rows * src_pitch * unit // 32) * 32
            dst_step = -(-cols * dst_pitch * unit // 32) * 32
            plan = rearrange_module.prepared_copy(
                unit, (3, cols, rows), (dst_step, dst_pitch * unit, unit),
                (src_step, unit, src_pitch * unit), dst_offset % 32, src_offset % 32).plan
            if isinstance(plan, TilePlan) and template_flags(plan.kernel) == (1, 0) \
                    and plan.kernel not in found:
                found[plan.kernel] = (unit, rows, cols, src_pitch, dst_pitch, src_offset,
                                      dst_offset)
    return found


@pytest.mark.same_either_way
def test_stacked_layouts_reach_every_stacked_variant_but_the_widest(stacking):
    # Both sides' 16-byte accesses of 1-byte units need rows of 128 on both sides: a 16 KiB
    # tile, all the shared memory the compact variant has.
    stacked = {name for name in all_tiled_kernel_names() if template_flags(name) == (1, 0)}
    assert set(stacked_layout_for_every_variant()) == stacked - {"tiled_copy<1, 16, 16, 0, 1>"}


@pytest.mark.same_either_way
def test_every_stacked_variant_copies_exactly(to_device, to_host, stacking):
    for name, layout in sorted(stacked_layout_for_every_variant().items()):
        unit, rows, cols, src_pitch, dst_pitch, src_offset, dst_offset = layout
        dtype, rng = DTYPE_OF_UNIT[unit], np.random.default_rng(len(name) * unit)
        # each matrix's rows rounded up to a multiple of 32: whole sectors between matrices
        x_base = random_fill(aligned_empty((3, -(-rows // 32) * 32, src_pitch), dtype,
                                           src_offset), rng)
        y_base = random_fill(aligned_empty((3, -(-cols // 32) * 32, dst_pitch), dtype,
                                           dst_offset), rng)
        plan = copy_and_check(y_base, x_base, lambda b: b[:, :cols, :rows],
                              lambda b: b[:, :rows, :cols].transpose(0, 2, 1), to_device, to_host)
        assert plan.kernel == name and plan.stack > 1, (name, plan)


# Permutations whose tiles have short rows (virtual rows of 8 or 16 work items): a warp
# step covers several rows, which the planner takes `spread` rows apart (TilePass::spread_rows)
# so that both phases are free of bank conflicts. (shape, perm, dtype) -> the spreads planned.
SHORT_ROWS = [
    ((16, 35, 16), (2, 1, 0), np.float32, (1, 8)),    # 16 x 16 tile, pitch 18
    ((16, 35, 16), (1, 2, 0), np.float32, (1, 16)),   # 16-byte reads, chained writes unchained
    ((8, 35, 8), (2, 0, 1), np.float32, (8, 1)),      # 8-element rows read 4 to a step
    ((8, 9, 8, 8), (0, 1, 3, 2), np.float32, (1, 2)),
    ((8, 9, 8, 8), (1, 2, 3, 0), np.float32, (1, 8)),
    ((16, 35, 16), (1, 2, 0), np.float16, (1, 16)),   # 2-byte units read 16 bytes at a time
    ((8, 35, 8), (2, 1, 0), np.float64, (1, 4)),      # 8-byte units: half-warp phases
    ((8, 20, 8), (2, 0, 1), np.float64, (8, 1)),
    ((4, 33, 4), (2, 1, 0), np.complex128, (1, 2)),   # 16-byte units: quarter-warp phases
]


@pytest.mark.parametrize("shape, perm, dtype, spreads", SHORT_ROWS,
                         ids=[f"{np.dtype(c[2]).name}-{c[0]}-{c[1]}" for c in SHORT_ROWS])
def test_short_rows_spread_apart_copy_exactly(shape, perm, dtype, spreads, to_device, to_host,
                                              no_packing):
    rng = np.random.default_rng(sum(shape) + sum(perm))
    x = random_fill(aligned_empty(shape, dtype), rng)
    y = aligned_empty(tuple(shape[p] for p in perm), dtype)
    plan = copy_and_check(y, x, identity, lambda b: b.transpose(perm), to_device, to_host)
    assert isinstance(plan, TilePlan) and (plan.read_spread, plan.write_spread) == spreads, plan
    # Partial tiles (the array's end cuts rows and row groups short) and an offset view.
    cut = tuple(n - 3 if n > 8 else n - 1 for n in shape)
    x = random_fill(aligned_empty(cut, dtype), rng)
    y = aligned_empty(tuple(cut[p] for p in perm), dtype, offset=np.dtype(dtype).itemsize)
    copy_and_check(y, x, identity, lambda b: b.transpose(perm), to_device, to_host)


@pytest.mark.parametrize("shape, perm, dtype, spreads", SHORT_ROWS,
                         ids=[f"{np.dtype(c[2]).name}-{c[0]}-{c[1]}" for c in SHORT_ROWS])
def test_short_rows_spread_apart_are_free_of_bank_conflicts(shape, perm, dtype, spreads,
                                                            no_packing, emulation_only):
    x = random_fill(aligned_empty(shape, dtype), np.random.default_rng(3))
    y = aligned_empty(tuple(shape[p] for p in perm), dtype)
    _, launches = coalescing.profile(rearrange_, y, x.transpose(perm))
    np.testing.assert_array_equal(y, x.transpose(perm))
    assert [p.kernel for p in launches] == [plan_for(y, x.transpose(perm)).kernel]
    assert launches[0].shared.ratio == 1.0
    reads, writes = coalescing.total(launches)
    assert reads.efficiency == writes.efficiency == 1.0


def test_short_rows_of_2_byte_units_moved_by_plain_loads_are_spread_apart(no_packing):
    # The Grouped variant of tiled_copy<2, 2, 2, 0, 0> keeps its loads in flight (idle
    # lanes load stand-ins, no predicate waits): the planner spreads phase 2's short rows,
    # which leaves both phases free of bank conflicts.
    rng = np.random.default_rng(12)
    x = random_fill(aligned_empty((16, 35, 16), np.float16), rng)
    y = aligned_empty((16, 35, 16), np.float16)
    plan = plan_for(y, x.transpose(2, 1, 0)).plan
    assert plan.kernel == "tiled_copy<2, 2, 2, 0, 0, 1>" and plan.write_spread > 1, plan
    with config.backend("emulate"), coalescing.emulator.tracing() as trace:
        rearrange_(y, x.transpose(2, 1, 0))
    np.testing.assert_array_equal(y, x.transpose(2, 1, 0))
    assert bank_conflicts.count_launch(trace.launches[0]).ratio == 1.0
    assert kernel_costs.kernel_cost(plan.kernel).bytes_in_flight == \
        kernel_costs.kernel_cost("tiled_copy<2, 2, 2, 0, 0>").bytes_in_flight == 16


# Grouped variant -> (shape, perm, src offset, dst offset) of a layout that reaches it with
# every short-row pass spread (spread_short_rows) and, for the stacked ones, stacking: x, an
# array of that shape (its rows padded to whole sectors) at the offset, copied transposed by
# perm into y (likewise). Phase 2 of the 16-byte units, one access per row of 4, ends rows
# mid-group.
GROUPED_LAYOUTS = {
    "tiled_copy<1, 1, 4, 0, 0, 1>": ((64, 7, 8), (2, 1, 0), 2, 0),
    "tiled_copy<1, 1, 4, 0, 1, 1>": ((64, 7, 8), (2, 1, 0), 2, 0),
    "tiled_copy<1, 4, 1, 0, 0, 1>": ((64, 7, 8), (1, 2, 0), 0, 2),
    "tiled_copy<1, 4, 1, 0, 1, 1>": ((64, 7, 8), (1, 2, 0), 0, 2),
    "tiled_copy<1, 4, 4, 0, 0, 1>": ((8, 7, 16), (1, 2, 0), 0, 0),
    "tiled_copy<1, 4, 4, 0, 1, 1>": ((8, 7, 16), (1, 2, 0), 0, 0),
    "tiled_copy<1, 4, 16, 0, 0, 1>": ((128, 7, 8), (1, 2, 0), 0, 0),
    "tiled_copy<1, 4, 16, 0, 1, 1>": ((128, 7, 8), (1, 2, 0), 0, 0),
    "tiled_copy<1, 16, 4, 0, 0, 1>": ((8, 7, 32), (1, 2, 0), 0, 0),
    "tiled_copy<1, 16, 4, 0, 1, 1>": ((8, 7, 128), (2, 1, 0), 0, 0),
    "tiled_copy<2, 1, 1, 0, 0, 1>": ((8, 7, 16), (0, 2, 1), 2, 0),
    "tiled_copy<2, 1, 1, 0, 1, 1>": ((8, 7, 16), (0, 2, 1), 2, 0),
    "tiled_copy<2, 1, 2, 0, 0, 1>": ((8, 7, 16), (1, 2, 0), 2, 0),
    "tiled_copy<2, 1, 2, 0, 1, 1>": ((8, 7, 16), (2, 1, 0), 2, 0),
    "tiled_copy<2, 1, 8, 0, 0, 1>": ((64, 7, 8), (1, 2, 0), 2, 0),
    "tiled_copy<2, 1, 8, 0, 1, 1>": ((64, 7, 8), (1, 2, 0), 2, 0),
    "tiled_copy<2, 2, 1, 0, 0, 1>": ((8, 7, 16), (2, 1, 0), 0, 2),
    "tiled_copy<2, 2, 1, 0, 1, 1>": ((8, 7, 16), (2, 1, 0), 0, 2),
    "tiled_copy<2, 2, 2, 0, 0, 1>": ((8, 7, 16), (1, 2, 0), 4, 0),
    "tiled_copy<2, 2, 2, 0, 1, 1>": ((8, 7, 16), (2, 1, 0), 0, 0),
    "tiled_copy<2, 2, 8, 0, 0, 1>": ((64, 7, 8), (1, 2, 0), 0, 0),
    "tiled_copy<2, 2, 8, 0, 1, 1>": ((64, 7, 8), (1, 2, 0), 0, 0),
    "tiled_copy<2, 8, 1, 0, 0, 1>": ((8, 7, 16), (1, 2, 0), 0, 2),
    "tiled_copy<2, 8, 1, 0, 1, 1>": ((8, 7, 64), (2, 1, 0), 0, 2),
    "tiled_copy<2, 8, 2, 0, 0, 1>": ((8, 7, 16), (1, 2, 0), 0, 0),
    "tiled_copy<2, 8, 2, 0, 1, 1>": ((8, 7, 64), (2, 1, 0), 0, 0),
    "tiled_copy<4, 1, 1, 0, 0, 1>": ((8, 35, 8), (2, 1, 0), 0, 0),
    "tiled_copy<4, 1, 1, 0, 1, 1>": ((8, 7, 4), (2, 1, 0), 0, 0),
    "tiled_copy<4, 1, 4, 0, 0, 1>": ((32, 7, 4), (2, 1, 0), 0, 0),
    "tiled_copy<4, 1, 4, 0, 1, 1>": ((32, 7, 4), (2, 1, 0), 0, 0),
    "tiled_copy<4, 4, 1, 0, 0, 1>": ((4, 7, 8), (1, 2, 0), 0, 0),
    "tiled_copy<4, 4, 1, 0, 1, 1>": ((8, 7, 32), (2, 1, 0), 0, 0),
    "tiled_copy<8, 1, 1, 0, 0, 1>": ((16, 7, 64), (2, 1, 0), 0, 0),
    "tiled_copy<8, 1, 1, 0, 1, 1>": ((8, 7, 4), (2, 1, 0), 0, 0),
    "tiled_copy<16, 1, 1, 0, 0, 1>": ((8, 7, 64), (2, 1, 0), 0, 0),
    "tiled_copy<16, 1, 1, 0, 1, 1>": ((8, 7, 4), (2, 1, 0), 0, 0),
}
# The wide Grouped variants: x's rows padded by one element (they start anywhere in a
# sector), phase 1 taking K rows per warp step where it transposes and phase 2's short rows
# spread apart where it does not; (shape, perm, x pad, y pad) in elements.
WIDE_GROUPED_LAYOUTS = {
    "tiled_copy<1, 4, 1, 1, 0, 1>": ((128, 7, 32), (2, 1, 0), 0, 1),
    "tiled_copy<1, 4, 4, 1, 0, 1>": ((128, 7, 32), (2, 1, 0), 0, 4),
    "tiled_copy<1, 4, 16, 1, 0, 1>": ((32, 7, 128), (2, 0, 1), 4, 0),
    "tiled_copy<2, 1, 1, 1, 0, 1>": ((8, 7, 32), (0, 2, 1), 1, 0),
    "tiled_copy<2, 1, 2, 1, 0, 1>": ((8, 7, 32), (1, 2, 0), 1, 0),
    "tiled_copy<2, 1, 8, 1, 0, 1>": ((16, 7, 64), (2, 0, 1), 1, 0),
    "tiled_copy<2, 2, 1, 1, 0, 1>": ((8, 7, 64), (0, 2, 1), 2, 0),
    "tiled_copy<2, 2, 2, 1, 0, 1>": ((8, 7, 64), (1, 2, 0), 2, 0),
    "tiled_copy<2, 2, 8, 1, 0, 1>": ((16, 7, 64), (2, 0, 1), 2, 0),
    "tiled_copy<4, 1, 1, 1, 0, 1>": ((8, 7, 40), (0, 2, 1), 1, 0),
    "tiled_copy<4, 1, 4, 1, 0, 1>": ((8, 7, 40), (2, 0, 1), 1, 0),
    "tiled_copy<8, 1, 1, 1, 0, 1>": ((8, 7, 40), (0, 2, 1), 1, 0),
    "tiled_copy<16, 1, 1, 1, 0, 1>": ((8, 7, 40), (0, 2, 1), 1, 1),
}


def test_grouped_layouts_cover_every_grouped_variant():
    grouped = {name for name in all_tiled_kernel_names() if template_flags(name)[1]}
    assert set(GROUPED_LAYOUTS) | set(WIDE_GROUPED_LAYOUTS) == grouped


def padded_view(shape, dtype, offset, rng, pad=None):
    """(buffer, view): a random array of ``shape`` whose last dim is padded to whole sectors
    (or by ``pad`` elements), ``offset`` bytes past a 256-byte boundary."""
    unit = np.dtype(dtype).itemsize
    pitch = -(-shape[-1] * unit // 32) * 32 // unit if pad is None else shape[-1] + pad
    buffer = random_fill(aligned_empty((*shape[:-1], pitch), dtype, offset), rng)
    return buffer, lambda b: b[..., :shape[-1]]


@pytest.mark.parametrize("name", sorted(GROUPED_LAYOUTS))
def test_every_grouped_variant_copies_exactly(name, to_device, to_host, spread_short_rows,
                                              no_packing, request):
    if template_flags(name)[0]:
        request.getfixturevalue("stack_small_copies")
    shape, perm, x_offset, y_offset = GROUPED_LAYOUTS[name]
    unit = int(name[name.index("<") + 1:name.index(",")])
    dtype, rng = DTYPE_OF_UNIT[unit], np.random.default_rng(len(name) + unit)
    for cut in (0, 1):  # whole tiles, then rows and row groups cut short
        dims = tuple(n - cut if n > 4 else n for n in shape)
        x_base, x_view = padded_view(dims, dtype, x_offset, rng)
        y_base, y_view = padded_view(tuple(dims[p] for p in perm), dtype, y_offset, rng)
        plan = copy_and_check(y_base, x_base, y_view, lambda b: x_view(b).transpose(perm),
                              to_device, to_host)
        if not cut:
            assert plan.kernel == name and max(plan.read_spread, plan.write_spread) > 1, plan


@pytest.mark.parametrize("name", sorted(WIDE_GROUPED_LAYOUTS))
def test_every_wide_grouped_variant_copies_exactly(name, to_device, to_host, spread_short_rows,
                                                   no_packing):
    shape, perm, x_pad, y_pad = WIDE_GROUPED_LAYOUTS[name]
    unit = int(name[name.index("<") + 1:name.index(",")])
    dtype, rng = DTYPE_OF_UNIT[unit], np.random.default_rng(len(name) + unit)
    for cut in (0, 1):  # whole tiles, then rows and row groups cut short
        dims = tuple(n - cut if n > 4 else n for n in shape)
        x_base, x_view = padded_view(dims, dtype, 0, rng, x_pad)
        y_base, y_view = padded_view(tuple(dims[p] for p in perm), dtype, 0, rng, y_pad)
        plan = copy_and_check(y_base, x_base, y_view, lambda b: x_view(b).transpose(perm),
                              to_device, to_host)
        if not cut:
            assert plan.kernel == name, plan
            assert max(plan.read_spread, plan.write_spread, plan.read_rows) > 1, plan


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])  # one patch for all
@given(data=st.data())
def test_random_permutations_of_short_rows_spread_apart(data, to_device, to_host,
                                                        spread_short_rows, no_packing):
    # The real kernels on random 3- and 4-dim permutations of short dims, rows padded to
    # whole sectors (so they share their lead), every short-row pass spread 4 apart.
    unit = data.draw(st.sampled_from([2, 4, 8, 16]))
    ndim = data.draw(st.integers(3, 4))
    shape = tuple(data.draw(st.sampled_from([2, 3, 4, 8, 12, 16, 32])) for _ in range(ndim))
    perm = tuple(data.draw(st.permutations(range(ndim))))
    rng = np.random.default_rng(sum(shape) * unit)
    dtype = DTYPE_OF_UNIT[unit]
    x_base, x_view = padded_view(shape, dtype, 0, rng)
    y_base, y_view = padded_view(tuple(shape[p] for p in perm), dtype, 0, rng)
    copy_and_check(y_base, x_base, y_view, lambda b: x_view(b).transpose(perm), to_device,
                   to_host)


if __name__ == "__main__":  # rewrite the kept layouts (after a planner change)
    found = layout_for_every_variant()
    LAYOUTS_FILE.write_text(json.dumps({k: list(v) for k, v in sorted(found.items())}, indent=1)
                            + "\n")
    print(f"{LAYOUTS_FILE}: {len(found)} variants")
