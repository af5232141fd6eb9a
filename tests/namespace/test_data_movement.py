"""The namespace's data movement against NumPy: values, dtypes, views that stay views, and the
number of rearrange launches every copy costs.

Inputs come in every layout (C-contiguous, transposed, sliced, reversed, broadcast; 0-d and
zero-size) and in bool, int8, uint8, float16, float32 and complex128. Runs in emulation by
default; ``pytest --backend cuda`` runs the same tests on a GPU (layouts are made on the
device by the same indexing that makes the NumPy oracle's).
"""

from __future__ import annotations

import warnings

import array_api_compat
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import infini_cupy as xp
from infini_cupy import arrays, config
from infini_cupy.elementwise.plan import MAX_LAUNCHES
from infini_cupy.namespace import data_movement
from tests.support.layout_cases import (  # noqa: F401  cast_launches, launches, same: fixtures
    DTYPES,
    LAYOUTS,
    cases,
    cast_launches,
    launches,
    make,
    random_shape,
    same,
    shares,
    values,
    viewable,
)

# --- copies: values, dtype, launch counts --------------------------------------------------


def test_rearrange_and_ascontiguousarray(to_device, same, launches):
    for shape, dtype, layout, rng in cases(1, 40):
        x, h = make(rng, shape, dtype, layout, to_device)
        launches.clear()
        y = xp.rearrange(x)
        same(y, np.array(h, order="C"))
        assert y.flags.c_contiguous and len(launches) == (h.size > 0)
        launches.clear()
        z = xp.ascontiguousarray(x)
        same(z, np.array(h, order="C"))
        assert z.flags.c_contiguous
        if x.flags.c_contiguous:
            assert z is x and not launches
        else:
            assert len(launches) == 1 and not shares(z, x)


def test_asarray_copy(to_device, same, launches, cast_launches):
    for shape, dtype, layout, rng in cases(2, 30):
        x, h = make(rng, shape, dtype, layout, to_device)
        launches.clear()
        y = xp.asarray(x, copy=True)
        assert type(y) is xp.Array
        same(y, np.array(h, copy=True))
        assert len(launches) == (h.size > 0) and not (h.size and shares(y._a, x))
        launches.clear()
        assert xp.asarray(x, copy=False)._a is x and xp.asarray(x)._a is x and not launches
        target = "float32" if dtype != "float32" else "int8"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            expected = np.asarray(h, dtype=target)
        cast_launches.clear()
        same(xp.asarray(x, dtype=np.dtype(target)), expected)  # copy=None: cast needed
        # the cast kernel; a layout of more dims than it takes that do not merge is first
        # copied dense by one rearrange launch (elementwise.plan.MAX_LAUNCHES)
        assert len(launches) <= 1 and len(cast_launches) >= (h.size > 0)
        assert len(launches) + len(cast_launches) <= MAX_LAUNCHES
        with pytest.raises(ValueError):
            xp.asarray(x, dtype=np.dtype(target), copy=False)


@pytest.mark.parametrize(("make", "values"), [
    (lambda a, b, c: [0, a], lambda a, b, c: [0, a]),
    (lambda a, b, c: [[0, 1], b], lambda a, b, c: [[0, 1], b]),
    (lambda a, b, c: (0.5, c), lambda a, b, c: (0.5, c)),
    (lambda a, b, c: [b, [True, False]], lambda a, b, c: [b, [True, False]]),
], ids=["int-and-0d", "list-and-1d", "tuple-float-and-float32", "bool-list-and-1d"])
def test_asarray_of_a_list_holding_arrays_beside_scalars(on, host, make, values):
    """``xp.asarray([0, x])`` of Arrays beside Python scalars and lists is NumPy's array of
    the same values on every device, promoted as NumPy's discovery promotes (a Python int
    beside float32: float64): on a GPU it raised TypeError (CuPy converts such a list through
    NumPy, which a GPU array refuses)."""
    h = (np.array(1.5), np.array([1, 2]), np.array(2.5, np.float32))
    got = xp.asarray(make(*(on(v) for v in h)))
    want = np.asarray(values(*h))
    assert got.dtype == want.dtype and got.device == on(h[0]).device
    np.testing.assert_array_equal(host(got), want)
    assert xp.asarray(make(*(on(v) for v in h)), dtype=xp.float32).dtype == xp.float32
    with pytest.raises(ValueError, match="copy"):  # a list is copied: NumPy's refusal
        xp.asarray(make(*(on(v) for v in h)), copy=False)
    with pytest.raises(ValueError):  # ragged: NumPy's ValueError on every device
        xp.asarray([[0, 1, 2], on(h[1])])


def test_asarray_of_python_objects(same):
    same(xp.asarray([[1, 2], [3, 4]], dtype=xp.int8, device="cpu"), np.array([[1, 2], [3, 4]], np.int8))
    same(xp.asarray(2.5, device="cpu"), np.asarray(2.5))


@pytest.mark.parametrize("device", ["cpu", "emulator"])
@pytest.mark.parametrize("dtype", ["int16", "uint32", "float32", "float64", "complex128"])
def test_asarray_of_swapped_bytes_holds_native_order(device, dtype):
    """A NumPy array (or buffer) of non-native byte order becomes an Array of the same values
    in native order, as CuPy's ``asarray`` gives on a GPU: the kernels take native order only.
    It is a copy, so ``copy=False`` refuses it."""
    rng = np.random.default_rng(45)
    native = (rng.standard_normal((3, 4)) * 100).astype(dtype)
    swapped = native.astype(native.dtype.newbyteorder("S"))
    for source in (swapped, swapped.T, swapped[::-1, ::2], memoryview(swapped)):
        expected = np.asarray(source)
        for asked in (None, np.dtype(dtype), np.dtype("complex128")):
            x = xp.asarray(source, dtype=asked, device=device)
            assert x.dtype == (expected.dtype.newbyteorder("=") if asked is None else asked)
            host = np.asarray(x.to_device("cpu"))
            np.testing.assert_array_equal(host, expected.astype(x.dtype))
            np.testing.assert_array_equal(np.asarray((x + 1).to_device("cpu")), host + 1)
        copied = xp.asarray(source, copy=True, device=device)
        assert not np.shares_memory(np.asarray(copied.to_device("cpu")), expected)
        with pytest.raises(ValueError, match=r"byte order.*copy=False"):
            xp.asarray(source, copy=False, device=device)


@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_complex_to_real_casts_warn_as_numpy_does(device):
    """``astype`` and ``asarray(dtype=)`` of complex values to a real dtype warn with NumPy's
    ``ComplexWarning`` on every device, where NumPy warns (CuPy too), naming the caller's
    line, with NumPy's values, first calls and repeats alike; to bool or complex they are
    silent."""
    rng = np.random.default_rng(63)
    z = (rng.standard_normal(6) + 1j * rng.standard_normal(6)).astype("complex64")
    x = xp.asarray(z, device=device)
    for target in ("int8", "uint16", "float32", "float64", "bool", "complex128") * 2:
        for cast in (lambda a, t: a.astype(t), lambda a, t: xp.asarray(a, dtype=t),
                     lambda a, t: xp.astype(a, t)):
            with warnings.catch_warnings(record=True) as ours:
                warnings.simplefilter("always")
                got = np.asarray(cast(x, np.dtype(target)).to_device("cpu"))
            with warnings.catch_warnings(record=True) as numpys:
                warnings.simplefilter("always")
                expected = z.astype(target)
            assert ([w.category for w in ours] == [w.category for w in numpys]
                    and len(numpys) <= 1), (target, ours, numpys)
            assert all(w.filename == __file__ for w in ours)  # the caller's line, as NumPy's
            if target.startswith(("float", "complex", "bool")):  # (ints: the kernels' cast)
                np.testing.assert_array_equal(got, expected)


def test_complex_to_real_casts_warn_in_lazy_and_fused_code():
    """Inside ``lazy()`` each deferred complex-to-real ``astype`` warns once, as the eager
    call (not again when the chain is traced or run); a fused function warns once, when it
    is traced."""
    z = xp.asarray(np.array([1 + 2j, 3 - 1j] * 4, np.complex64), device="emulator")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            with xp.lazy():
                y = xp.astype(z * 2, xp.float32) + 1
            np.testing.assert_array_equal(np.asarray(y.to_device("cpu")), [3, 7] * 4)
    assert [w.category for w in caught] == [np.exceptions.ComplexWarning] * 3
    fused = xp.fuse(lambda a: xp.astype(a * 2, xp.float32) + 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            np.testing.assert_array_equal(np.asarray(fused(z).to_device("cpu")), [3, 7] * 4)
    assert [w.category for w in caught] == [np.exceptions.ComplexWarning]


@pytest.mark.parametrize("target", DTYPES + ("int64", "float64", "complex64"))
def test_astype_matches_numpy(target, to_device, same, launches, cast_launches):
    for shape, dtype, layout, rng in cases(3, 12):
        # float -> unsigned is undefined in C++ for negative values: keep them non-negative
        x, h = make(rng, shape, dtype, layout, to_device, nonnegative=np.dtype(target).kind == "u")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            expected = h.astype(target)
        launches.clear()
        cast_launches.clear()
        y = xp.astype(x, np.dtype(target))
        same(y, expected)
        assert y.flags.c_contiguous
        if dtype == target:
            assert len(launches) == (h.size > 0) and not (h.size and shares(y, x))
            assert xp.astype(x, np.dtype(target), copy=False) is x
        else:
            assert not launches and len(cast_launches) >= (h.size > 0)
            assert xp.astype(x, np.dtype(target), copy=False).dtype == np.dtype(target)


def test_astype_uses_the_cast_kernel(monkeypatch, to_device, same):
    calls = []
    real = data_movement.cast
    monkeypatch.setattr(data_movement, "cast",
                        lambda x, dtype, **kw: calls.append(x.dtype) or real(x, dtype, **kw))
    x = to_device(np.arange(6, dtype=np.int8).reshape(2, 3))
    same(xp.astype(x.T, np.float16), np.arange(6, dtype=np.float16).reshape(2, 3).T)
    same(xp.concat([x, to_device(np.ones((1, 3), np.float32))]),
         np.concatenate([np.arange(6).reshape(2, 3), np.ones((1, 3))]).astype(np.float32))
    assert calls == [np.int8, np.int8]


def _factor_shapes(rng, size, ndim_max=4):
    """Random shapes of ``size`` elements (maybe with one -1)."""
    if size == 0:
        return [(0,), (0, 2), (2, 0, 1)]
    shapes = []
    for _ in range(4):
        dims, rest = [], size
        while rest > 1 and len(dims) < ndim_max - 1:
            d = int(rng.choice([d for d in range(2, rest + 1) if rest % d == 0]))
            dims.append(d)
            rest //= d
        if rest > 1:
            dims.append(rest)
        dims.extend([1] * int(rng.integers(0, 2)))
        rng.shuffle(dims)
        if dims and rng.random() < 0.4:
            dims[rng.integers(0, len(dims))] = -1
        shapes.append(tuple(dims))
    return shapes


def test_reshape_views_where_numpy_can_and_copies_otherwise(to_device, same, launches):
    for shape, dtype, layout, rng in cases(4, 60):
        x, h = make(rng, shape, dtype, layout, to_device)
        for new in _factor_shapes(rng, h.size):
            expected = np.reshape(h, new)
            view = viewable(h, new)
            launches.clear()
            y = xp.reshape(x, new)
            same(y, expected)
            assert len(launches) == (not view and h.size > 0)
            if h.size:
                assert shares(y, x) == view
            if view:
                assert shares(xp.reshape(x, new, copy=False), x) or not h.size
            else:
                with pytest.raises(ValueError, match="copy=False"):
                    xp.reshape(x, new, copy=False)
            launches.clear()
            y = xp.reshape(x, new, copy=True)
            same(y, expected)
            assert len(launches) == (h.size > 0) and not (h.size and shares(y, x))


def test_reshape_errors(to_device):
    x = to_device(np.zeros((2, 3)))
    for bad in [(4,), (-1, -1), (5, -1), (-2, -3), (0, -1)]:
        with pytest.raises(ValueError, match="reshape"):
            xp.reshape(x, bad)
    assert xp.reshape(x, 6).shape == (6,)  # a bare int, as NumPy takes
    with pytest.raises(TypeError):
        xp.reshape([1, 2], (2,))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_concat_matches_numpy(to_device, same, launches, data):
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    ndim = data.draw(st.integers(1, 3))
    n = data.draw(st.integers(1, 4))
    shape = random_shape(rng, ndim)
    axis = data.draw(st.sampled_from([None, *range(-ndim, ndim)]))
    dtypes = data.draw(st.lists(st.sampled_from(DTYPES), min_size=n, max_size=n))
    xs, hs = [], []
    for dtype in dtypes:
        piece = list(shape)
        if axis is not None:
            piece[axis] = data.draw(st.integers(0, 4))
        else:
            piece = random_shape(rng, data.draw(st.integers(0, 3)))
        x, h = make(rng, piece, dtype, data.draw(st.sampled_from(LAYOUTS)), to_device)
        xs.append(x)
        hs.append(h)
    expected = np.concatenate([h.reshape(-1) for h in hs] if axis is None else hs, axis=0 if axis is None else axis)
    assert expected.dtype == xp.result_type(*xs)  # promotion: the namespace's result_type
    launches.clear()
    same(xp.concat(xs, axis=axis), expected)
    assert len(launches) == sum(h.size > 0 and h.dtype == expected.dtype for h in hs)


def test_concat_and_stack_errors(to_device):
    a, b = to_device(np.zeros((2, 3))), to_device(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="differ outside axis"):
        xp.concat([a, b], axis=1)
    with pytest.raises(IndexError):
        xp.concat([a, b], axis=2)
    with pytest.raises(ValueError, match="zero-dimensional"):
        xp.concat([a[0, 0, ...], a[0, 1, ...]])
    with pytest.raises(ValueError, match="at least one"):
        xp.concat([])
    with pytest.raises(TypeError, match="list"):
        xp.concat([a, [1, 2, 3]])
    with pytest.raises(ValueError, match="shapes must agree"):
        xp.stack([a, b])
    with pytest.raises(IndexError):
        xp.stack([a, a], axis=-4)
    with pytest.raises(TypeError, match="object|numeric"):
        xp.concat([np.empty(2, object)])


def test_stack_matches_numpy(to_device, same, launches):
    for shape, dtype, layout, rng in cases(5, 40):
        n = int(rng.integers(1, 4))
        dtypes = [dtype] + [str(rng.choice(DTYPES)) for _ in range(n - 1)]
        made = [make(rng, shape, d, str(rng.choice(LAYOUTS)), to_device) for d in dtypes]
        axis = int(rng.integers(-len(shape) - 1, len(shape) + 1))
        expected = np.stack([h for _, h in made], axis=axis)
        launches.clear()
        same(xp.stack([x for x, _ in made], axis=axis), expected)
        assert len(launches) == sum(h.size > 0 and h.dtype == expected.dtype for _, h in made)


def test_tile_matches_numpy(to_device, same, launches):
    for shape, dtype, layout, rng in cases(6, 40):
        x, h = make(rng, shape, dtype, layout, to_device)
        reps = tuple(int(r) for r in rng.integers(0, 4, size=int(rng.integers(0, 5))))
        expected = np.tile(h, reps)
        launches.clear()
        same(xp.tile(x, reps), expected)
        assert len(launches) == (expected.size > 0)
    with pytest.raises(ValueError, match="non-negative"):
        xp.tile(x, (-1,))


def test_repeat_matches_numpy(to_device, same, launches):
    for shape, dtype, layout, rng in cases(7, 40):
        x, h = make(rng, shape, dtype, layout, to_device)
        count = int(rng.integers(0, 4))
        for axis in [None, *range(-h.ndim, h.ndim)]:
            expected = np.repeat(h, count, axis=axis)
            launches.clear()
            same(xp.repeat(x, count, axis=axis), expected)
            assert len(launches) == (expected.size > 0)
            if axis is not None:
                counts = rng.integers(0, 3, size=h.shape[axis])
                same(xp.repeat(x, to_device(counts), axis=axis), np.repeat(h, counts, axis=axis))
    same(xp.repeat(x, np.int64(2)), np.repeat(h, 2))
    with pytest.raises(ValueError, match="non-negative"):
        xp.repeat(x, -1)
    with pytest.raises(TypeError):
        xp.repeat(x, 1.5)
    with pytest.raises(IndexError):
        xp.repeat(x, 2, axis=h.ndim)


def test_roll_matches_numpy(to_device, same, launches):
    for shape, dtype, layout, rng in cases(8, 50):
        x, h = make(rng, shape, dtype, layout, to_device)
        if h.ndim == 0 or rng.random() < 0.25:
            shift = int(rng.integers(-7, 8))
            expected = np.roll(h, shift)
            launches.clear()
            same(xp.roll(x, shift), expected)
            if h.size:
                assert len(launches) == (not viewable(h, (-1,))) + (1 if shift % h.size == 0 else 2)
            continue
        k = int(rng.integers(1, h.ndim + 2))
        axes = tuple(int(a) for a in rng.integers(-h.ndim, h.ndim, size=k))  # repeats add up
        shifts = tuple(int(s) for s in rng.integers(-7, 8, size=k))
        shift = shifts if rng.random() < 0.7 else shifts[0]
        expected = np.roll(h, shift, axis=axes)
        launches.clear()
        same(xp.roll(x, shift, axis=axes if len(axes) > 1 else axes[0]), expected)
        totals = {}
        for a, s in zip(axes, shifts if isinstance(shift, tuple) else (shift,) * k):
            totals[a % h.ndim] = totals.get(a % h.ndim, 0) + s
        rolled = sum(1 for a, s in totals.items() if h.size and s % h.shape[a])
        assert len(launches) == (2**rolled if h.size else 0)
    with pytest.raises(ValueError, match="shifts"):
        xp.roll(to_device(np.zeros((2, 2))), (1, 2), axis=(0,))
    with pytest.raises(ValueError, match="axis=None"):
        xp.roll(to_device(np.zeros((2, 2))), (1, 2))


# --- views stay views ---------------------------------------------------------------------


def test_unstack_returns_views(to_device, same, launches):
    for shape, dtype, layout, rng in cases(9, 30):
        if not shape:
            continue
        x, h = make(rng, shape, dtype, layout, to_device)
        axis = int(rng.integers(-len(shape), len(shape)))
        got = xp.unstack(x, axis=axis)
        expected = [np.asarray(v) for v in np.moveaxis(h, axis, 0)]
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            same(g, e)
            assert not g.size or shares(g, x)
    assert not launches
    with pytest.raises(ValueError, match="0-d"):
        xp.unstack(to_device(np.asarray(1.0)))


def test_view_functions_are_views(to_device, same, launches):
    for shape, dtype, layout, rng in cases(10, 40, dtypes=("bool", "float16", "complex128")):
        x, h = make(rng, shape, dtype, layout, to_device)
        ndim = h.ndim
        results = []
        perm = tuple(int(p) for p in rng.permutation(ndim))
        results.append((xp.permute_dims(x, perm), np.transpose(h, perm)))
        if ndim:
            src, dst = (int(a) for a in rng.integers(-ndim, ndim, size=2))
            results.append((xp.moveaxis(x, src, dst), np.moveaxis(h, src, dst)))
            axis = int(rng.integers(-ndim, ndim))
            results.append((xp.flip(x, axis=axis), np.flip(h, axis=axis)))
        if ndim:  # a 0-d flip comes back a copy from _delegated (NumPy gives a scalar)
            results.append((xp.flip(x), np.flip(h)))
        axis = int(rng.integers(-ndim - 1, ndim + 1))
        results.append((xp.expand_dims(x, axis=axis), np.expand_dims(h, axis)))
        ones = tuple(d for d in range(ndim) if h.shape[d] == 1)
        if ones:
            results.append((xp.squeeze(x, axis=ones), np.squeeze(h, axis=ones)))
        target = (2,) + tuple(1 if n == 1 and rng.random() < 0.5 else n for n in h.shape)
        results.append((xp.broadcast_to(x, target), np.broadcast_to(h, target)))
        other = to_device(np.zeros((3,) + (1,) * ndim, np.int8))
        for g, e in zip(xp.broadcast_arrays(x, other), np.broadcast_arrays(h, np.zeros((3,) + (1,) * ndim, np.int8))):
            results.append((g, e))
        for got, expected in results[:-1]:
            same(got, expected)
            assert not expected.size or shares(got, x)
        same(*results[-1])
    assert not launches


def test_squeeze_of_a_non_unit_axis_is_an_error(to_device):
    with pytest.raises(ValueError):
        xp.squeeze(to_device(np.zeros((2, 1))), axis=0)


# --- devices --------------------------------------------------------------------------------


def test_device_arguments_are_honoured(to_device, same):
    info = xp.__array_namespace_info__()
    device = info.default_device()
    for create in (lambda d: xp.zeros((2, 3), device=d), lambda d: xp.arange(4, device=d),
                   lambda d: xp.asarray([1, 2], device=d), lambda d: xp.full(3, 1.5, device=d)):
        assert array_api_compat.device(create(device)) == device
        created = create("cpu")  # creation functions make Arrays
        assert type(created) is xp.Array and created.device == "cpu"
    x = to_device(np.arange(6, dtype=np.int8).reshape(2, 3))
    y = xp.astype(x, xp.float32, device="cpu")
    same(y, np.arange(6, dtype=np.float32).reshape(2, 3))
    assert type(y) is np.ndarray  # given a plain array: a plain array
    y = xp.asarray(x, device="cpu", copy=True)
    assert type(y) is xp.Array and not (isinstance(x, np.ndarray) and shares(y._a, x))
    same(y, np.arange(6, dtype=np.int8).reshape(2, 3))
    assert array_api_compat.device(xp.astype(x, xp.int8, device=device)) == array_api_compat.device(x)
    same(xp.zeros_like(x, device="cpu"), np.zeros((2, 3), np.int8))


def test_to_device_cpu(to_device, same):
    h = np.arange(5.0)
    x = to_device(h)
    y = xp.to_device(x, "cpu")
    same(y, h)
    assert type(y) is np.ndarray
    if isinstance(x, np.ndarray):
        assert y is x  # already there: no copy
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        xp.to_device(x, "gpu")


class FakeGpu0(np.ndarray):
    """Stands in for a CuPy array on cuda:0 (no GPU here): only device bookkeeping sees it."""


class FakeGpu1(np.ndarray):
    """... and one on cuda:1."""


@pytest.fixture
def fake_gpus(monkeypatch):
    real_is_cupy = arrays.is_cupy_array
    monkeypatch.setattr(arrays, "is_cupy_array",
                        lambda a: isinstance(a, (FakeGpu0, FakeGpu1)) or real_is_cupy(a))
    names = {FakeGpu0: "cuda:0", FakeGpu1: "cuda:1"}
    monkeypatch.setattr(arrays, "device_of", lambda a: names.get(type(a), "cpu"))
    return np.ones((2, 2)).view(FakeGpu0), np.ones((2, 2)).view(FakeGpu1)


@pytest.mark.parametrize(
    "call",
    [
        lambda a, b: xp.concat([a, b]),
        lambda a, b: xp.concat([a, b], axis=None),
        lambda a, b: xp.stack([a, b], axis=1),
        lambda a, b: xp.rearrange_(a, b),
        lambda a, b: xp.repeat(a, b[0].astype(np.int64)),
    ],
)
@pytest.mark.parametrize("pair", ["cpu+gpu", "gpu+cpu", "gpu0+gpu1"])
def test_mixed_devices_name_both(fake_gpus, call, pair):
    gpu0, gpu1 = fake_gpus
    cpu = np.ones((2, 2))
    a, b = {"cpu+gpu": (cpu, gpu1), "gpu+cpu": (gpu1, cpu), "gpu0+gpu1": (gpu0, gpu1)}[pair]
    names = [arrays.device_of(a), arrays.device_of(b)]
    with pytest.raises(ValueError, match=f"different devices: ({names[0]} and {names[1]}|{names[1]} and {names[0]})"):
        call(a, b)


def test_numpy_arrays_under_the_cuda_backend_are_an_error():
    x = np.ones((2, 3))
    with config.backend("cuda"):
        for call in (lambda: xp.concat([x, x]), lambda: xp.tile(x, (2,)), lambda: xp.rearrange(x.T),
                     lambda: xp.roll(x, 1, axis=0), lambda: xp.astype(x.T, xp.float64)):
            with pytest.raises(ValueError, match="cuda backend needs CuPy arrays"):
                call()
        for call in (lambda: xp.asarray(x, copy=True), lambda: xp.asarray(x)):  # as _delegated's
            with pytest.raises(ValueError, match="cuda backend needs CuPy arrays"):
                call()


# --- the numpy backend: the same functions without kernels -----------------------------------


def test_numpy_backend_runs_without_kernels(same, launches, cast_launches):
    rng = np.random.default_rng(11)
    h = values(rng, (3, 4), "float32")
    with config.backend("numpy"):
        same(xp.concat([h.T, h.T.astype(np.int8)]), np.concatenate([h.T, h.T.astype(np.int8)]))
        same(xp.astype(h.astype(np.complex128), np.float16), h.astype(np.float16))
        same(xp.roll(h, (1, 2), axis=(0, 1)), np.roll(h, (1, 2), axis=(0, 1)))
        same(xp.rearrange(h, "a b -> b a"), h.T)
    assert not launches and not cast_launches


# --- the package's exports -------------------------------------------------------------------


def test_package_exports():
    public = set(xp.__all__)
    assert len(xp.__all__) == len(public), "duplicates in infini_cupy.__all__"
    for name in ["rearrange", "rearrange_", "ascontiguousarray", "to_device", "backend",
                 "get_backend", "concat", "asarray", "astype", "__array_api_version__"]:
        assert name in public and name in dir(xp), name
    private = [n for n in public if n.startswith("_") and not n.startswith("__")]
    assert not private, private
    for name in public:
        assert hasattr(xp, name), name
    listed = set(dir(xp))
    assert not [n for n in listed if n.startswith("_") and not n.startswith("__")], "private modules in dir()"
    # our data movement, not the delegated one, behind the public function
    from infini_cupy.namespace import boundary

    assert boundary._implementation("asarray") is data_movement.asarray
    assert xp.asarray.__module__ == "infini_cupy"


def test_strings_refused_by_the_library_its_way_still_give_our_type_error(monkeypatch):
    """CuPy 14.2 refuses a list of strings with ``ValueError: Unsupported dtype <U3`` (seen on
    an H200, 2026-12-04, where the emulator's NumPy gave our TypeError): the answer is the same
    TypeError on every device."""
    from infini_cupy.namespace import delegated

    def refuses(obj, **kwargs):
        raise ValueError("Unsupported dtype <U3")

    monkeypatch.setattr(delegated, "asarray", refuses)
    with pytest.raises(TypeError, match=r"^asarray: list input gives dtype <U3"):
        xp.asarray(["yes", "no"])
    with pytest.raises(ValueError, match=r"^asarray: Unsupported dtype"):  # numeric: theirs
        xp.asarray([1.0, 2.0])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_concat_and_stack_on_cpu_are_those_of_the_emulator(data):
    """On the cpu device NumPy joins arrays of one dtype itself (into a C-contiguous result,
    as ours); any layout, axis and dtype mix gives the emulator's dtype, strides and bits."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    ndim = data.draw(st.integers(1, 3))
    shape = random_shape(rng, ndim)
    n = data.draw(st.integers(1, 3))
    kinds = data.draw(st.lists(st.sampled_from(DTYPES), min_size=1, max_size=2))
    with config.backend("numpy"):  # NumPy layouts, whatever backend the run has in force
        hosts = [make(rng, shape, kinds[k % len(kinds)], data.draw(st.sampled_from(LAYOUTS)),
                      lambda h: h)[1] for k in range(n)]
    axis = data.draw(st.sampled_from([None, *range(-ndim, ndim)]))
    stack_axis = data.draw(st.integers(-ndim - 1, ndim))
    results = []
    for device in ("cpu", "emulator"):
        xs = [xp.asarray(h, device=device) for h in hosts]
        results.append([np.asarray(r) for r in (xp.concat(xs, axis=axis),
                                                xp.stack(xs, axis=stack_axis))])
    for cpu, emulated in zip(*results):
        assert (cpu.dtype, cpu.shape, cpu.strides, cpu.tobytes()) == (
            emulated.dtype, emulated.shape, emulated.strides, emulated.tobytes())


def test_concat_of_f_ordered_arrays_on_cpu_is_c_ordered():
    """NumPy's concatenate would keep F order for F-ordered inputs; the devices give C order."""
    h = np.arange(12.0).reshape(3, 4)
    x = xp.asarray(np.asfortranarray(h), device="cpu")
    for joined, expected in ((xp.concat([x, x], axis=1), np.concatenate([h, h], axis=1)),
                             (xp.stack([x, x], axis=0), np.stack([h, h]))):
        assert np.asarray(joined).flags.c_contiguous
        np.testing.assert_array_equal(np.asarray(joined), expected)
