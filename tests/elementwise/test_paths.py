"""Which path an elementwise call takes, and that each path is right: a transposed input
read through a shared-memory tile (``ew_tiled``), staged copies for the other operands laid
out across the walk (an ``out=`` unlike the inputs, inputs beyond the tile's dims), the
16-byte strided path (rows, columns), and the short path of remembered signatures (pointer
alignment, scalars, backends). Coalescing is measured with the profiler in emulation."""

from __future__ import annotations

import numpy as np
import pytest

from infini_cupy import arrays, config
from infini_cupy.elementwise import short_path
from infini_cupy.namespace import elementwise_functions as F
from infini_cupy.runtime import recent
from infini_cupy.runtime.launch import recording
from infini_cupy.readers import coalescing
from tests.support.elementwise_cases import kernels_launched, prepare


def _floats(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_transposed_input_is_read_through_a_tile(stage_small, backend_name, to_device, to_host):
    prepare(backend_name, "add", "subtract")
    a, b = _floats((40, 24)), _floats((24, 40), 1)
    for _ in range(2):  # planned, then remembered
        r, names = kernels_launched(lambda: F.add(to_device(a), to_device(b).T))
        assert names == ["ew_tiled"]
        np.testing.assert_array_equal(to_host(r), a + b.T)
    r, names = kernels_launched(lambda: F.subtract(2.5, to_device(b).T))
    assert names == ["ew_tiled"]
    np.testing.assert_array_equal(to_host(r), np.float32(2.5) - b.T)


def test_transposed_input_beyond_the_tiles_dims_is_staged(stage_small, backend_name, to_device,
                                                          to_host):
    """Four dims that do not coalesce: the input is copied into walk order first."""
    prepare(backend_name, "add")
    a = _floats((3, 4, 5, 6))
    b = _floats((4, 3, 6, 5), 1).transpose(1, 0, 3, 2)
    for _ in range(2):
        r, names = kernels_launched(lambda: F.add(to_device(a), to_device(b)))
        assert names == ["tiled_copy", "ew_contig"]
        np.testing.assert_array_equal(to_host(r), a + b)


def test_inputs_alike_write_the_output_through_a_tile(stage_small, backend_name, to_device,
                                                      to_host):
    """Both inputs transposed: compute in their order, the result written through a tile."""
    prepare(backend_name, "multiply")
    a, b = _floats((24, 40)), _floats((24, 40), 1)
    for _ in range(2):
        r, names = kernels_launched(lambda: F.multiply(to_device(a).T, to_device(b).T))
        assert names == ["ew_tiled_out"]
        assert to_host(r).flags.c_contiguous
        np.testing.assert_array_equal(to_host(r), a.T * b.T)


def test_out_unlike_the_inputs(stage_small, backend_name, to_device, to_host):
    prepare(backend_name, "add")
    a, b = _floats((24, 40)), _floats((24, 40), 1)
    out = to_device(np.zeros((40, 24), np.float32)).T
    r, names = kernels_launched(lambda: F.add(to_device(a), to_device(b), out=out))
    assert r is out and names == ["ew_tiled_out"]
    np.testing.assert_array_equal(to_host(out), a + b)


def test_permuted_3d_and_broadcast_views(stage_small, backend_name, to_device, to_host):
    prepare(backend_name, "add", "maximum")
    a = _floats((6, 8, 10))
    b = _floats((10, 6, 8), 1).transpose(1, 2, 0)
    r, names = kernels_launched(lambda: F.add(to_device(a), to_device(b)))
    assert names == ["ew_tiled"]
    np.testing.assert_array_equal(to_host(r), a + b)
    # A view repeating elements is read as it is (a copy would materialize the repeats).
    column = np.broadcast_to(_floats((6, 8, 1), 2), (6, 8, 10))
    r, names = kernels_launched(lambda: F.maximum(to_device(column), to_device(b)))
    assert names == ["ew_tiled"]
    np.testing.assert_array_equal(to_host(r), np.maximum(column, b))


def test_small_calls_are_not_staged(backend_name, to_device, to_host):
    prepare(backend_name, "add")
    a, b = _floats((40, 24)), _floats((24, 40), 1)
    r, names = kernels_launched(lambda: F.add(to_device(a), to_device(b).T))
    assert names == ["ew_strided"]
    np.testing.assert_array_equal(to_host(r), a + b.T)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "float64", "complex128"])
def test_column_and_row_broadcasts_move_rows_in_vectors(dtype, backend_name, to_device, to_host):
    prepare(backend_name, "add")
    a = np.arange(12 * 64).reshape(12, 64).astype(dtype)
    column = (np.arange(12).reshape(12, 1) * 3).astype(dtype)
    row = np.arange(64).astype(dtype)
    for b in (column, row):
        for x, y in ((a, b), (b, a)):
            r, names = kernels_launched(lambda: F.add(to_device(x), to_device(y)))
            assert names == ["ew_strided"]
            np.testing.assert_array_equal(to_host(r), x + y)


def test_short_path_checks_alignment_per_call(backend_name, to_device, to_host):
    """One signature (shape, strides), pointers aligned or not: the 16-byte path only when
    every pointer allows it (a misaligned vector access faults in emulation)."""
    prepare(backend_name, "add")
    buffer = to_device(np.arange(4 * 66, dtype=np.float32))
    for offset in (0, 1, 2, 4):
        x = buffer[offset:offset + 4 * 64].reshape(4, 64)
        column = buffer[offset:offset + 4].reshape(4, 1)
        for y in (x, column, 1.5):
            r = F.add(x, y)
            np.testing.assert_array_equal(to_host(r), to_host(x) + (to_host(y) if not isinstance(y, float) else y))
    assert short_path._known


def test_short_path_scalars_and_backends(backend_name, to_device, to_host):
    prepare(backend_name, "add", "less")
    x = to_device(np.array([1, 2, 100], np.int8))
    np.testing.assert_array_equal(to_host(F.add(x, 3)), [4, 5, 103])
    np.testing.assert_array_equal(to_host(F.add(x, -3)), [-2, -1, 97])  # remembered
    np.testing.assert_array_equal(to_host(F.add(x, 127)), [-128, -127, -29])  # wraps
    with pytest.raises(OverflowError):
        F.add(x, 128)
    f = to_device(np.array([1.0, 2.0], np.float16))
    F.add(f, 1.0)
    with np.errstate(over="ignore"):
        assert np.isinf(to_host(F.add(f, 1e300))).all()  # out of float16's range: inf
    assert np.isnan(to_host(F.add(f, float("nan")))).all()
    if backend_name == "emulate":
        with config.backend("numpy"), recording() as launches:
            assert F.add(np.asarray([1.0]), 1.0).tolist() == [2.0]
        assert launches == []


def _efficiency(fn):
    with config.backend("emulate"):
        _, launches = coalescing.profile(fn)
    reads, writes = coalescing.total(launches)
    return reads.efficiency, writes.efficiency, [p.kernel.split("<")[0] for p in launches]


def _aligned(shape, dtype=np.float32, seed=0):
    """Rows on 256-byte boundaries, as CuPy allocates."""
    a = _floats(shape, seed, dtype)
    raw = np.empty(a.nbytes + 256, np.uint8)
    start = -raw.ctypes.data % 256
    out = raw[start:start + a.nbytes].view(dtype).reshape(shape)
    out[...] = a
    return out


@pytest.mark.parametrize("layout", ["transposed", "both transposed", "column", "row", "scalar"])
def test_coalescing_of_every_layout_class(layout, backend_name, monkeypatch):
    """Warp-level sector efficiency >= 0.9 for reads and writes (the profiler in emulation)."""
    if backend_name != "emulate":
        pytest.skip("the profiler reads emulator traces")
    prepare("emulate", "add")

    n = 256  # 65536 elements: the smallest staged call
    a, b = _aligned((n, n)), _aligned((n, n), seed=1)
    second = {"transposed": b.T, "both transposed": b.T, "column": b[:, :1], "row": b[0],
              "scalar": 2.0}[layout]
    first = a.T if layout == "both transposed" else a
    # outputs and temporaries aligned like CuPy's
    with arrays.outputs_from(lambda shape, dtype: _aligned(shape, dtype)):
        reads, writes, kernels = _efficiency(lambda: F.add(first, second))
    assert reads >= 0.9 and writes >= 0.9, (layout, reads, writes, kernels)


# ---------------------------------------------------------------- NumPy scalars go by value
def _kernel_args(monkeypatch):
    """The arguments of every elementwise kernel launch (the launcher's and the short path's)."""
    from infini_cupy.elementwise import launcher
    from infini_cupy.runtime import launch as runtime_launch

    seen = []

    def spy(source, name, grid, block, args, **kwargs):
        if name.startswith("ew_"):
            seen.append(args)
        return runtime_launch.launch(source, name, grid, block, args, **kwargs)

    monkeypatch.setattr(launcher, "launch", spy)
    monkeypatch.setattr(short_path, "launch", spy)
    return seen


@pytest.mark.parametrize("scalar,dtype", [(np.float32(2.5), "float32"), (np.int8(-3), "int16"),
                                          (np.float64(0.5), "float64"), (np.uint8(7), "int16"),
                                          (np.float16(1.5), "float32")])
def test_numpy_scalar_is_one_launch_by_value(scalar, dtype, backend_name, to_device, to_host,
                                             monkeypatch):
    """A NumPy scalar of the array's dtype, or of one that promotes to it: one launch (planned,
    then remembered), the scalar in the kernel's value slot, no temporary (on cuda a 0-d array
    would be a host-to-device copy per call)."""
    prepare(backend_name, "multiply")
    x = to_device(np.arange(-4, 8, dtype=dtype))
    expected_dtype = np.result_type(x.dtype, scalar.dtype)
    assert expected_dtype == x.dtype
    seen = _kernel_args(monkeypatch)
    allocated = []

    def alloc(shape, dtype):
        allocated.append((shape, dtype))
        return to_device(np.empty(shape, dtype))

    for left in (False, True):
        for _ in range(2):  # planned, then the short path
            seen.clear()
            allocated.clear()
            with recording() as launches, arrays.outputs_from(alloc):
                r = F.multiply(scalar, x) if left else F.multiply(x, scalar)
            assert len(launches) == 1 and len(allocated) == 1, (launches, allocated)
            (args,) = seen
            k = 0 if left else 1
            assert int(args[7]) == 1 << k  # the scalar mask: position k by value
            assert isinstance(args[4 + k], np.generic) and args[4 + k].dtype == x.dtype
            assert args[4 + k] == scalar
            assert r.dtype == expected_dtype
            np.testing.assert_array_equal(to_host(r), to_host(x) * scalar)


def test_numpy_scalars_promote_like_0d_arrays(backend_name, to_device, to_host):
    """Every pair of dtypes, the scalar on either side: the dtype and values (or the error)
    of the same call with a 0-d array (how NumPy scalars were taken before they went by
    value), and NumPy's result dtype."""
    from infini_cupy import dtypes

    prepare(backend_name, "add", "cast")
    differences = []
    for array_dtype in dtypes.ALL_DTYPES:
        x = to_device(np.arange(1, 6).astype(array_dtype))
        for scalar_dtype in dtypes.ALL_DTYPES:
            scalar = scalar_dtype.type(3)
            zero_d = to_device(np.asarray(scalar))
            for args, reference in (((x, scalar), (x, zero_d)), ((scalar, x), (zero_d, x))):
                outcomes = []
                for call_args in (args, reference):
                    try:
                        r = F.add(*call_args)
                        outcomes.append((str(r.dtype), to_host(r).tolist()))
                    except TypeError as e:
                        outcomes.append(("TypeError", str(e)))
                if outcomes[0] != outcomes[1]:
                    differences.append((array_dtype, scalar_dtype, outcomes))
                elif outcomes[0][0] != "TypeError":
                    # NumPy cannot promote bfloat16 (ml_dtypes): our rule, tested in test_dtypes
                    extension = "bfloat16" in (array_dtype.name, scalar_dtype.name)
                    promote = dtypes.result_type if extension else np.result_type
                    assert outcomes[0][0] == str(promote(array_dtype, scalar_dtype))
    assert not differences, differences[:5]


# ---------------------------------------------------------------- launches per call are bounded
def test_twenty_alternating_broadcast_dims_launch_a_handful(backend_name, to_device, to_host):
    """20 dims, each broadcast in one input or the other, 2**20 elements: no dims coalesce,
    so a host loop over the dims past the widest kernel would launch 131072 times. The
    inputs are materialized by one rearrange launch each, then one contiguous kernel."""
    prepare(backend_name, "add")
    a = _floats(tuple(2 if d % 2 == 0 else 1 for d in range(20)))
    b = _floats(tuple(1 if d % 2 == 0 else 2 for d in range(20)), 1)
    da, db = to_device(a), to_device(b)
    for _ in range(2):  # planned, then remembered
        r, names = kernels_launched(lambda: F.add(da, db))
        assert len(names) <= 4 and names[-1] == "ew_contig", names
        np.testing.assert_array_equal(to_host(r), a + b)


def _gapped_out(ndim, to_device):
    """A (2,) * ndim float32 output whose every other dim skips a slot: no two dims merge."""
    base = to_device(np.full((2, 3) * (ndim // 2), np.nan, np.float32))
    return base[(slice(None), slice(None, 2)) * (ndim // 2)]


def _random_view(rng, shape, to_device):
    """A random layout of ``shape``: broadcast dims, a permuted memory order, reversed and
    sliced dims."""
    import infini_cupy as xp

    own = tuple(1 if rng.random() < 0.3 else n for n in shape)
    perm = rng.permutation(len(shape))
    base = _floats(tuple(2 * own[p] for p in perm), int(rng.integers(1 << 30)))
    index = tuple(slice(None, None, -2) if rng.random() < 0.3 else slice(None, own[p])
                  for p in perm)
    view = to_device(base)[index].transpose(tuple(int(i) for i in np.argsort(perm)))
    return xp.broadcast_to(view, shape) if own != shape else view


def test_high_dim_layouts_launch_at_most_four_kernels(backend_name, to_device, to_host):
    """A random sample of 4- to 12-d layouts (broadcast, permuted, reversed, sliced inputs;
    new, permuted and gapped outputs; outputs that are an input or overlap one): every
    binary call launches at most 4 kernels, copies included, and equals NumPy."""
    prepare(backend_name, "add", "multiply", "subtract", "negative")
    rng = np.random.default_rng(10)
    for case in range(40):
        ndim = int(rng.integers(2, 7)) * 2
        shape = (2,) * ndim
        x, y = _random_view(rng, shape, to_device), _random_view(rng, shape, to_device)
        name = ("add", "multiply", "subtract")[case % 3]
        expected = getattr(np, name)(to_host(x), to_host(y))
        expected_negative = -to_host(y)
        writable_x = 0 not in x.strides
        out = [None, _gapped_out(ndim, to_device),
               to_device(np.empty(shape, np.float32)).transpose(tuple(rng.permutation(ndim))),
               x if writable_x else None,  # in place
               x[::-1] if writable_x else None][case % 5]  # overlapping x: NumPy's answer
        r, names = kernels_launched(lambda: getattr(F, name)(x, y, out=out))
        assert len(names) <= 4, (case, x.strides, y.strides, None if out is None else out.strides,
                                 names)
        assert out is None or r is out
        np.testing.assert_array_equal(to_host(r), expected)
        r, names = kernels_launched(lambda: F.negative(y))
        assert len(names) <= 4, names
        np.testing.assert_array_equal(to_host(r), expected_negative)


# ---------------------------------------------------------------- the short path of casts and out=
@pytest.fixture
def full_calls(monkeypatch):
    """How many calls went the full way (validation, promotion, planning) in the launcher."""
    from infini_cupy.elementwise import launcher

    calls = []
    full = launcher._apply

    def counted(*args):
        calls.append(args[0].name)
        return full(*args)

    monkeypatch.setattr(launcher, "_apply", counted)
    recent.forget_all()
    yield calls
    recent.forget_all()


@pytest.mark.parametrize("first,second", [("int8", "float32"), ("uint8", "float16"),
                                          ("uint16", "int32"), ("float32", "complex128"),
                                          ("int64", "float64")])
def test_mixed_dtypes_repeat_through_the_short_path(first, second, backend_name, to_device,
                                                    to_host, full_calls):
    """An input of another dtype than the result's is cast into a temporary, planned once:
    repeats (new data, broadcast and strided inputs, either side) skip the full call."""
    prepare(backend_name, "add", "multiply", "cast")
    rng = np.random.default_rng(3)

    def draw(shape, dtype):
        return to_device((rng.standard_normal(shape) * 50).astype(dtype))

    layouts = [((24, 40), (24, 40)), ((24, 1), (24, 40)), ((40,), (24, 40))]
    for small_shape, shape in layouts:
        for flip in (False, True):
            for repeat in range(3):
                x = draw(small_shape, first)
                y = draw((24, 80), second)[:, ::2] if repeat == 2 else draw(shape, second)
                args = (y, x) if flip else (x, y)
                r = F.add(*args)
                expected = np.add(*(to_host(a) for a in args))
                assert r.dtype == expected.dtype
                np.testing.assert_array_equal(to_host(r), expected)
    # one full call per signature: each layout/side once, and once more for the strided y
    assert len(full_calls) == 2 * len(layouts) * 2, full_calls
    # a NumPy scalar of a wider dtype casts the array too
    x = draw((24, 40), "float32")
    for _ in range(2):
        r = F.multiply(x, np.float64(0.25))
        assert r.dtype == np.float64
        np.testing.assert_array_equal(to_host(r), to_host(x).astype(np.float64) * 0.25)


def test_mixed_dtypes_misaligned_input_goes_the_full_way(backend_name, to_device, to_host,
                                                         full_calls):
    prepare(backend_name, "add", "cast")
    buffer = to_device(np.arange(4 * 65, dtype=np.int16))
    y = to_device(_floats((4, 64)))
    for offset in (0, 1, 0):  # int16 at a 2-byte offset is aligned; views into uint8 are not
        x = buffer[offset:offset + 256].reshape(4, 64)
        np.testing.assert_array_equal(to_host(F.add(x, y)), to_host(x) + to_host(y))
    raw = to_device(np.zeros(4 * 64 * 2 + 1, np.uint8))
    odd = raw[1:].view(np.int16).reshape(4, 64) if backend_name == "emulate" else None
    if odd is not None:  # CuPy refuses views of a misaligned offset
        odd[...] = np.arange(256, dtype=np.int16).reshape(4, 64)
        for _ in range(2):
            np.testing.assert_array_equal(to_host(F.add(odd, y)), to_host(odd) + to_host(y))
    assert full_calls.count("add") == 1 + (2 if odd is not None else 0)


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "column"])
def test_out_repeats_through_the_short_path(layout, backend_name, to_device, to_host,
                                            full_calls):
    """``out=`` of a remembered layout: new output arrays and inputs each call, no full call."""
    prepare(backend_name, "subtract")
    rng = np.random.default_rng(4)
    for _ in range(3):
        a = to_device(rng.standard_normal((24, 40)).astype(np.float32))
        b = to_device(rng.standard_normal((24, 1) if layout == "column" else (24, 40))
                      .astype(np.float32))
        out = to_device(np.full((40, 24), np.nan, np.float32)).T if layout == "transposed" \
            else to_device(np.full((24, 40), np.nan, np.float32))
        r = F.subtract(a, b, out=out)
        assert r is out
        np.testing.assert_array_equal(to_host(out), to_host(a) - to_host(b))
    assert full_calls == ["subtract"]


def test_out_overlapping_an_input_is_checked_per_call(backend_name, to_device, to_host,
                                                      full_calls):
    """One remembered layout of ``out=``; per call, an out that is an input (in place), one
    that overlaps an input shifted by one element (NumPy's answer: computed aside), a
    read-only one (the full call's ValueError, nothing written)."""
    prepare(backend_name, "add")
    rng = np.random.default_rng(5)
    buffer = to_device(rng.standard_normal(1001).astype(np.float32))
    b = to_device(rng.standard_normal(1000).astype(np.float32))
    a, out_apart = buffer[:-1], to_device(np.empty(1000, np.float32))
    expected = to_host(a) + to_host(b)
    F.add(a, b, out=out_apart)  # remembered
    np.testing.assert_array_equal(to_host(out_apart), expected)
    shifted = buffer[1:]
    F.add(a, b, out=shifted)  # each thread would read an element another one wrote
    np.testing.assert_array_equal(to_host(buffer[1:]), expected)
    c = to_device(rng.standard_normal(1000).astype(np.float32))
    expected = to_host(c) + to_host(b)
    F.add(c, b, out=c)  # in place: the same view is safe
    np.testing.assert_array_equal(to_host(c), expected)
    if backend_name == "emulate":
        frozen = np.zeros(1000, np.float32)
        frozen.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            F.add(a, b, out=frozen)
        assert not frozen.any()
    assert full_calls.count("add") == 2 + (backend_name == "emulate")


def test_astype_repeats_through_the_short_path(backend_name, to_device, to_host, monkeypatch):
    """A cast of a layout seen before skips planning (new arrays each call), and stays
    NumPy's cast; a misaligned view of the same layout goes the full way."""
    import infini_cupy as xp
    from infini_cupy.elementwise import launcher

    prepare(backend_name, "cast")
    planned = []
    full = launcher._cast_into
    monkeypatch.setattr(launcher, "_cast_into", lambda *a: planned.append(1) or full(*a))
    recent.forget_all()
    rng = np.random.default_rng(6)
    for dtype, target in (("float32", "int16"), ("int8", "float64"), ("float64", "float16")):
        for view in (lambda a: a, lambda a: a[:, ::3], lambda a: a.T):
            for _ in range(3):
                host = (rng.standard_normal((12, 30)) * 100).astype(dtype)
                x = view(to_device(host))
                r = xp.astype(x, target)
                with np.errstate(all="ignore"):
                    np.testing.assert_array_equal(to_host(r), view(host).astype(target))
    assert len(planned) == 9  # once per (dtypes, layout)
    recent.forget_all()
