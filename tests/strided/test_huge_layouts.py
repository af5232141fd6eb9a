"""Layouts past 32 bits: byte strides and spans beyond 2**31 and 2**32, grids beyond one
launch's block limit, and 64-dimensional arrays. Correct addresses, no overflow, no silent
truncation.

Huge strides need no huge memory: in emulation the views live in an anonymous mapping of
20 GiB that the kernel only materializes where a page is touched (a few dozen pages here);
under ``--backend cuda`` the same views are carved from one device allocation when the GPU
has room, else the test skips. Grids past the limit are made by lowering the limit
constants (``strided_copy.MAX_GRID_X``, ``elementwise_plan.MAX_GRID``): the kernels then
loop over blocks, exactly as they would past CUDA's 2**31 - 1.
"""

from __future__ import annotations

import contextlib

import mmap
import sys

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.elementwise import launcher as elementwise
from infini_cupy.runtime import recent
from infini_cupy.runtime.launch import recording
from infini_cupy.strided import plan_cache as strided_copy
from infini_cupy.strided import planner as strided_planner
from infini_cupy.strided import seed_planner
from infini_cupy.strided.packed_planner import PackedPlan
from infini_cupy.strided.seed_planner import GeneralRearrangePlan, RearrangePlan
from infini_cupy.strided.tile_planner import TilePlan

G = 2**31
MAPPING_BYTES = 20 << 30
MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)  # Linux's value; Python < 3.13 lacks it


@pytest.fixture(scope="module")
def _mapping():
    if not sys.platform.startswith("linux"):
        pytest.skip("lazily allocated anonymous mappings are set up for Linux")
    try:
        mapping = mmap.mmap(-1, MAPPING_BYTES,
                            flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE)
    except OSError as e:  # pragma: no cover - a machine refusing to overcommit
        pytest.skip(f"cannot map {MAPPING_BYTES >> 30} GiB lazily: {e}")
    yield mapping


class Huge:
    """Views at byte ``offset`` with any byte strides into one large buffer of the suite's
    device; ``view(...)`` with ``values`` also writes them (through the view)."""

    def __init__(self, backend_name, mapping_factory):
        self.backend = backend_name
        self._mapping_factory = mapping_factory
        self._memory = None

    def view(self, offset, shape, strides, dtype=np.float32, values=None):
        dtype = np.dtype(dtype)
        span = offset + dtype.itemsize + sum((n - 1) * s for n, s in zip(shape, strides) if s > 0)
        if self.backend == "cuda":
            view = self._cuda_view(offset, shape, strides, dtype, span)
        else:
            view = np.ndarray(shape, dtype, buffer=self._mapping_factory(), offset=offset,
                              strides=strides)
        if values is not None:
            view[...] = values if self.backend != "cuda" else _cupy().asarray(values)
        return view

    def _cuda_view(self, offset, shape, strides, dtype, span):
        cupy = _cupy()
        if self._memory is None:
            free, _ = cupy.cuda.runtime.memGetInfo()
            size = min(MAPPING_BYTES, free - (1 << 30))
            if size < 9 << 30:
                pytest.skip(f"the GPU has {free >> 30} GiB free; huge layouts need 10")
            self._memory = cupy.cuda.alloc(size)
        if span > self._memory.mem.size:
            pytest.skip(f"a {span >> 30} GiB span does not fit the device allocation")
        return cupy.ndarray(shape, dtype, memptr=self._memory + offset, strides=strides)


def _cupy():
    import cupy

    return cupy


@pytest.fixture
def huge(backend_name, request):
    huge = Huge(backend_name, lambda: request.getfixturevalue("_mapping"))
    yield huge
    # The device block goes back to the pool now, whatever still refers to this fixture.
    huge._memory = None


def _kernels(launches):
    return [r.name.split("<")[0] for r in launches]


def _values(shape, seed=0, dtype=np.float32):
    return (np.random.default_rng(seed).integers(-1000, 1000, shape) / 4).astype(dtype)


# ---------------------------------------------------------------- rearrange_ with huge strides
TWELVE_DIMS = (64, (2,) * 12, (2 * G + 8, 4, G + 4, 8, 2**30 + 16, 32, 2**29, 128, 512, 2048,
                              2**28, 16))
HUGE_COPIES = [
    # (name, kernel family, (source offset, shape, strides) or None: a C-contiguous array,
    #  destination likewise)
    ("issue example: (3, 4) fp32, strides (2**31 + 8, 2**32 + 4)", "rearrange",
     (0, (3, 4), (G + 8, 2 * G + 4)), None),
    ("destination with the huge strides", "rearrange", None, (0, (3, 4), (2 * G + 4, G + 8))),
    ("both huge", "rearrange", (96, (3, 4), (G + 8, 2 * G + 4)), (1 << 20, (3, 4), (2 * G + 4, G + 8))),
    ("negative huge strides", "rearrange",
     (3 * (2 * G + 4) + 2 * (G + 8), (3, 4), (-(G + 8), -(2 * G + 4))), None),
    ("row pitch past 2**32, rows of 300", "tiled_copy", (4100, (3, 300), (2 * G + 4, 4)), None),
    ("transpose with a 2**32 + 12 pitch", "tiled_copy", (4096, (64, 3), (4, 2 * G + 12)), None),
    ("transpose into a 2**31 + 16 pitch", "tiled_copy", None, (0, (3, 64), (G + 16, 4))),
    ("batched transpose, batch stride 2**32 + 64", "tiled_copy",
     (8192, (2, 40, 33), (2 * G + 64, 4, 160)), None),
    ("packed tile, 12 dims with huge strides", "packed_copy", TWELVE_DIMS, None),
]


def _operand(huge, to_device, layout, shape, values=None):
    """A huge view, or a C-contiguous array on the device, disjoint from the huge buffer."""
    if layout is not None:
        return huge.view(*layout, values=values)
    return to_device(np.zeros(shape, np.float32) if values is None else values)


@pytest.mark.parametrize("name, family, source, destination", HUGE_COPIES,
                         ids=[c[0] for c in HUGE_COPIES])
def test_rearrange_with_huge_strides(name, family, source, destination, huge, to_device, to_host):
    shape = (source or destination)[1]
    values = _values(shape)
    x = _operand(huge, to_device, source, shape, values=values)
    if source is None and family == "tiled_copy":  # a source contiguous along the other dim
        x = to_device(np.ascontiguousarray(values.T)).T
    y = _operand(huge, to_device, destination, shape)
    y[...] = 0
    # packed tiles: planned by coalescing alone (the model gives these layouts to others)
    rule = strided_copy.coalescing_plans() if family == "packed_copy" else contextlib.nullcontext()
    with rule, recording() as launches:
        assert xp.rearrange_(y, x) is y
        plan = strided_copy.plan_for(y, x).plan
    # both in one buffer: their byte ranges intersect, so the copy goes through a snapshot
    assert _kernels(launches) == ["rearrange"] * (len(launches) - 1) + [family]
    assert len(launches) == 1 + (source is not None and destination is not None)
    np.testing.assert_array_equal(to_host(y), values)
    # the plan carries the strides whole (grid strides are multiples of them): not truncated
    largest = max(abs(s) for layout in (source, destination) if layout for s in layout[2])
    assert _largest_stride(plan) >= largest


@pytest.mark.parametrize("margin, index", [(-4096, "int"), (4096, "long long")])
def test_seed_kernels_index_in_32_bits_just_up_to_the_limit(margin, index, huge, to_device,
                                                          to_host):
    """A layout whose offsets end just inside the 32-bit limit runs the int kernels, one just
    past it the long long ones; both copy exactly, the int one without overflowing."""
    shape = (3, 5)
    stride = (seed_planner.INDEX_32_LIMIT + margin - 5 * 8) // 3 // 4 * 4
    values = _values(shape)
    x = huge.view(64, shape, (stride, 8), values=values)
    y = to_device(np.zeros(shape, np.float32))
    with strided_copy.seed_plans_only(), recording() as launches:
        xp.rearrange_(y, x)
    assert [r.name.rsplit(", ", 1)[1] for r in launches] == [index + ">"]
    np.testing.assert_array_equal(to_host(y), values)


def test_the_general_kernel_with_huge_strides(huge, to_device, to_host):
    # The 12-dim layout above, planned without staged copies: the flat-index kernel.
    shape = TWELVE_DIMS[1]
    values = _values(shape)
    x = huge.view(*TWELVE_DIMS, values=values)
    y = to_device(np.zeros(shape, np.float32))
    with strided_copy.seed_plans_only(), recording() as launches:
        xp.rearrange_(y, x)
        plan = strided_copy.plan_for(y, x).plan
    assert _kernels(launches) == ["rearrange_general"]
    np.testing.assert_array_equal(to_host(y), values)
    assert _largest_stride(plan) >= 2 * G + 8


def _largest_stride(plan) -> int:
    if isinstance(plan, PackedPlan):
        values = (*plan.read.stride, *plan.write.stride, *plan.outer_src_stride,
                  *plan.outer_dst_stride)
    elif isinstance(plan, TilePlan):
        values = (plan.src_stride0, plan.src_stride1, plan.dst_stride0, plan.dst_stride1,
                  *plan.src_batch_stride, *plan.dst_batch_stride, plan.src_offset, plan.dst_offset)
    elif isinstance(plan, GeneralRearrangePlan):
        values = (*plan.src_strides, *plan.dst_strides)
    else:
        assert isinstance(plan, RearrangePlan)
        values = (*plan.src_block_stride, *plan.dst_block_stride, *plan.src_grid_stride,
                  *plan.dst_grid_stride)
    return max(abs(v) for v in values)


def test_rearrange_copy_and_pattern_of_a_huge_view(huge, to_host):
    values = _values((3, 4, 5), seed=1)
    x = huge.view(256, (3, 4, 5), (2 * G + 20, 4, G + 64), values=values)
    np.testing.assert_array_equal(to_host(xp.rearrange(x)), values)
    np.testing.assert_array_equal(to_host(xp.rearrange(x, "a b c -> c (a b)")),
                                  values.transpose(2, 0, 1).reshape(5, 12))
    np.testing.assert_array_equal(to_host(xp.concat([x, x], axis=1)), np.concatenate([values] * 2, 1))


def test_overlapping_huge_views_copy_from_a_snapshot(huge, to_host):
    base = _values((4, 4), seed=2)
    y = huge.view(512, (4, 4), (G + 4, 4), values=base)
    x = huge.view(516, (4, 4), (G + 4, 4))  # y shifted by one element: they overlap
    expected = to_host(x).copy()
    xp.rearrange_(y, x)
    np.testing.assert_array_equal(to_host(y), expected)


def test_packed_arguments_keep_64_bit_values():
    """Planning alone (nothing launched): a 2**42-byte broadcast copy needs 2**32 logical
    blocks, more than one launch allows; the launch is sized to fill the SMs, 64-bit indexed,
    and the kernel gets the full count."""
    prepared = strided_copy.prepared_copy(1, (2**42,), (1,), (0,), 0, 0)
    assert prepared.plan.grid_blocks > 2**31
    assert prepared.grid == prepared.plan.launch_blocks < strided_copy.MAX_GRID_X
    assert prepared.plan.kernel.endswith(", long long>")
    assert int(prepared.struct_args[-1]) == prepared.plan.grid_blocks  # grid_blocks, int64
    huge_stride = strided_copy.prepared_copy(4, (3, 2), (8, 4), (2**40 + 4, 2**33), 0, 0)
    assert _largest_stride(huge_stride.plan) == 2**40 + 4
    assert huge_stride.src_extent == (0, 2 * (2**40 + 4) + 2**33 + 4)


# ---------------------------------------------------------------- elementwise with huge strides
EW_CASES = [
    ("add scalar", lambda x: xp.add(x, 1), lambda v: v + 1),
    ("negative", lambda x: xp.negative(x), lambda v: -v),
    ("add itself", lambda x: xp.add(x, x), lambda v: v + v),
    ("astype float64", lambda x: xp.astype(x, np.float64), lambda v: v.astype(np.float64)),
    ("less than its transpose's transpose", lambda x: xp.less(x, x.T.T), lambda v: v < v),
]


@pytest.mark.parametrize("name, op, oracle", EW_CASES, ids=[c[0] for c in EW_CASES])
def test_elementwise_with_huge_strides(name, op, oracle, huge, to_host):
    values = _values((3, 4), seed=3)
    x = huge.view(4 << 20, (3, 4), (G + 8, 2 * G + 4), values=values)
    np.testing.assert_array_equal(to_host(op(x)), oracle(values))


def test_elementwise_out_with_huge_strides(huge, to_host):
    values = _values((2, 3), seed=4)
    x = huge.view(6 << 20, (2, 3), (4 * G + 8, G + 12), values=values)
    out = huge.view(8 << 20, (2, 3), (2 * G + 16, G + 4))
    assert xp.multiply(x, 2, out=out) is out
    np.testing.assert_array_equal(to_host(out), values * 2)


def test_elementwise_offsets_just_inside_and_past_32_bits(huge, to_host):
    for stride in (G - 12, G - 8, G):  # the last element at 2**31 - 4, 2**31, 2**31 + 8
        values = _values((2, 3), seed=stride)
        x = huge.view(10 << 20, (2, 3), (stride, 4), values=values)
        np.testing.assert_array_equal(to_host(xp.add(x, 0.5)), values + 0.5)


# ---------------------------------------------------------------- grids past the limit
@pytest.fixture
def small_grids(monkeypatch):
    """Launch limits of 3 blocks: every kernel's block loop runs."""
    from infini_cupy.elementwise import plan as elementwise_plan

    recent.forget_all()
    monkeypatch.setattr(strided_copy, "MAX_GRID_X", 3)
    for module in (elementwise_plan, elementwise):
        if hasattr(module, "MAX_GRID"):
            monkeypatch.setattr(module, "MAX_GRID", 3)
    yield 3
    recent.forget_all()  # before monkeypatch restores the limits: no plan made with them survives


def _misaligned_rows(a):
    """``a``'s rows starting one element past a sector boundary (a shifted copy)."""
    padded = a.reshape(-1)[: a.size - a.shape[-1]].reshape(a.shape[0] - 1, a.shape[-1])
    return padded[:, 1:]


GRID_COPIES = [
    # (name, kernel family, shape of the buffer, the source as a view of it)
    ("kernel matrix", "rearrange", (40, 100, 6), lambda a: a[:, ::2, :]),
    ("kernel matrix, constraints", "rearrange", (37, 3, 41), lambda a: a.transpose(1, 0, 2)),
    ("tiled transpose", "tiled_copy", (300, 200), lambda a: a.T),
    ("tiled misaligned rows", "tiled_copy", (41, 333), _misaligned_rows),
    ("general kernel", "rearrange_general", (3, 2) * 6,
     lambda a: a.transpose(11, 0, 10, 1, 9, 2, 8, 3, 7, 4, 6, 5)),
    ("packed tiles", "packed_copy", (3, 4, 13, 25, 5, 7), lambda a: a.transpose(5, 4, 3, 2, 1, 0)),
]


@pytest.mark.parametrize("name, family, shape, view", GRID_COPIES, ids=[c[0] for c in GRID_COPIES])
def test_block_loops_past_the_grid_limit(name, family, shape, view, small_grids, to_device,
                                         to_host, monkeypatch):
    if family != "packed_copy":  # the layouts of the other families, planned without packing
        monkeypatch.setattr(strided_planner, "plan_packed", lambda *args, **kwargs: None)
        monkeypatch.setattr(strided_planner, "plan_large", lambda *args, **kwargs: None)
    values = _values(shape, seed=5)
    x = view(to_device(values))
    y = to_device(np.zeros(x.shape, np.float32))
    # packed tiles: planned by coalescing (the model gives this layout to a staged transpose)
    rule = strided_copy.coalescing_plans() if family == "packed_copy" else contextlib.nullcontext()
    with rule, recording() as launches:
        xp.rearrange_(y, x)
        plan = strided_copy.plan_for(y, x).plan
    assert _kernels(launches) == [family]
    # the seed kernels' launches are sized to their trips of several units per thread
    assert launches[0].grid == (min(small_grids, getattr(plan, "launch_blocks", small_grids)), 1, 1)
    assert plan.grid_blocks > small_grids
    np.testing.assert_array_equal(to_host(y), view(values))


def test_elementwise_grid_stride_loops_past_the_grid_limit(small_grids, to_device, to_host):
    values = _values((70, 90), seed=6)
    x = to_device(values)
    for op, oracle in [(lambda a: xp.add(a, 1), values + 1),
                       (lambda a: xp.add(a.T, 1), values.T + 1),
                       (lambda a: xp.multiply(a[::-1, 1:], a[::-1, :-1]),
                        values[::-1, 1:] * values[::-1, :-1]),
                       (lambda a: xp.astype(a.T, np.float64), values.T.astype(np.float64))]:
        with recording() as launches:
            result = op(x)
        assert launches and all(r.grid[0] <= small_grids for r in launches)
        np.testing.assert_array_equal(to_host(result), oracle)


def test_huge_strides_and_a_small_grid_together(small_grids, huge, to_host):
    values = _values((3, 40), seed=7)
    x = huge.view(12 << 20, (3, 40), (2 * G + 4, 4), values=values)
    np.testing.assert_array_equal(to_host(xp.rearrange(x)), values)
    np.testing.assert_array_equal(to_host(xp.add(x, 1)), values + 1)


# ---------------------------------------------------------------- 64 dimensions
def _shape64(rng, twos=14, threes=2):
    shape = [1] * 64
    picked = rng.choice(64, twos + threes, replace=False)
    for d in picked[:twos]:
        shape[d] = 2
    for d in picked[twos:]:
        shape[d] = 3
    return tuple(shape)


@pytest.mark.parametrize("seed", range(4))
def test_64_dims_random_permutations(seed, to_device, to_host):
    rng = np.random.default_rng(seed)
    shape = _shape64(rng)
    values = _values(shape, seed=seed)
    perm = tuple(int(p) for p in rng.permutation(64))
    x = to_device(values).transpose(perm)
    expected = values.transpose(perm)
    # into C order (the flat-index kernel, and packed tiles of the 16 dims longer than 1,
    # which the planner takes by coalescing), and
    # into a destination laid out by another permutation
    with strided_copy.seed_plans_only(), recording() as launches:
        y = xp.rearrange(x)
    assert _kernels(launches) == ["rearrange_general"]
    np.testing.assert_array_equal(to_host(y), expected)
    with strided_copy.coalescing_plans(), recording() as launches:
        y = xp.rearrange(x)
    assert _kernels(launches) == ["packed_copy"]
    np.testing.assert_array_equal(to_host(y), expected)
    other = tuple(int(p) for p in rng.permutation(64))
    z = to_device(np.zeros(tuple(expected.shape[p] for p in np.argsort(other)), np.float32))
    z = z.transpose(other)
    xp.rearrange_(z, x)
    np.testing.assert_array_equal(to_host(z), expected)
    names = [f"a{i}" for i in range(64)]
    pattern = f"{' '.join(names)} -> {' '.join(names[p] for p in perm[::-1])}"
    np.testing.assert_array_equal(to_host(xp.reshape(xp.rearrange(x, pattern), (-1,))),
                                  expected.transpose(perm[::-1]).ravel())


def test_64_dims_elementwise_and_data_movement(to_device, to_host):
    rng = np.random.default_rng(9)
    shape = _shape64(rng, twos=10, threes=1)
    values = _values(shape, seed=9)
    perm = tuple(int(p) for p in rng.permutation(64))
    x = to_device(values).transpose(perm)
    expected = values.transpose(perm)
    np.testing.assert_array_equal(to_host(xp.add(x, x)), expected + expected)
    np.testing.assert_array_equal(to_host(xp.astype(x, np.float64)), expected.astype(np.float64))
    axis = int(np.argmax(expected.shape))  # a dim of length 3
    np.testing.assert_array_equal(to_host(xp.roll(x, 1, axis=axis)), np.roll(expected, 1, axis=axis))
    np.testing.assert_array_equal(to_host(xp.stack([x[0], x[-1]], axis=63)),
                                  np.stack([expected[0], expected[-1]], axis=63))


def test_64_dims_with_huge_strides(huge, to_host):
    shape = [1] * 64
    strides = [4] * 64
    for d, (n, s) in {5: (2, 2 * G + 8), 17: (3, 4), 40: (2, G + 16), 63: (2, 32)}.items():
        shape[d], strides[d] = n, s
    values = _values(tuple(shape), seed=10)
    x = huge.view(14 << 20, tuple(shape), tuple(strides), values=values)
    np.testing.assert_array_equal(to_host(xp.rearrange(x)), values)
    np.testing.assert_array_equal(to_host(xp.add(x, 2)), values + 2)
