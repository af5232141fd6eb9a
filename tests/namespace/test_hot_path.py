"""The namespace's hot path (``boundary`` -> ``short_path.by_ids`` and ``known.fast``,
``copy.short_rearrange_ids``, fused calls by layout ids):
a repeat of a call on Arrays gives the full call's bits, and its errors, whatever the cache
holds; the cache keys tell apart what changes the answer; the cache is bounded."""

from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import infini_cupy as xp
from infini_cupy.elementwise import launcher, short_path
from infini_cupy.namespace import boundary
from infini_cupy.runtime import recent
from infini_cupy.runtime.launch import recording
from tests.support.ci import skip_outside_ci

FUNCTIONS = {"add": np.add, "multiply": np.multiply, "subtract": np.subtract,
             "less": np.less, "maximum": np.maximum}
UNARY = {"exp": np.exp, "negative": np.negative, "sqrt": np.sqrt}


@pytest.fixture(autouse=True, params=["compiled", "python"])
def _cold(request):
    """Each test on a cold cache, once with the compiled hot path (runtime/hot_calls.c, where
    it can be built) and once with the Python one alone."""
    recent.forget_all()
    if request.param == "compiled" and boundary.compiled_hot_calls() is None:
        skip_outside_ci("no compiled hot path here (runtime/native.py logs why)")
    with boundary.python_hot_path() if request.param == "python" else contextlib.nullcontext():
        yield
    recent.forget_all()


def _bits(a):
    """The result's bytes with its dtype and shape: equal means bit-identical."""
    return a.dtype, a.shape, np.ascontiguousarray(a).tobytes()


def _layout(rng, h, kind):
    """A view of ``h`` (2-d) in one of several layouts."""
    if kind == "transposed":
        return np.ascontiguousarray(h.T).T
    if kind == "strided":
        wide = np.zeros((h.shape[0], 2 * h.shape[1]), h.dtype)
        wide[:, ::2] = h
        return wide[:, ::2]
    if kind == "reversed":
        return np.ascontiguousarray(h[::-1])[::-1]
    if kind == "offset":  # off the 16-byte packs (still aligned for its type)
        flat = np.zeros(h.size + 1, h.dtype)
        flat[1:] = h.ravel()
        return flat[1:].reshape(h.shape)
    return h


LAYOUTS = ("contiguous", "transposed", "strided", "reversed", "offset")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 9), cols=st.integers(1, 40),
       name=st.sampled_from(sorted(FUNCTIONS)), dtype=st.sampled_from(["float32", "int16",
                                                                         "float64", "uint8"]),
       layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
       scalar=st.sampled_from([None, 3, 2.5, True]), scalar_first=st.booleans())
def test_a_repeat_gives_the_first_calls_bits(arr, host, seed, rows, cols, name, dtype, layouts,
                                             scalar, scalar_first):
    rng = np.random.default_rng(seed)
    h1 = _layout(rng, (rng.standard_normal((rows, cols)) * 50).astype(dtype), layouts[0])
    h2 = _layout(rng, (rng.standard_normal((rows, cols)) * 50).astype(dtype), layouts[1])
    x1 = arr(h1)
    x2 = arr(h2) if scalar is None else scalar
    if scalar is not None and scalar_first:
        h1, h2, x1, x2 = scalar, h1, x2, x1
    public = getattr(xp, name)
    recent.forget_all()
    cold = host(public(x1, x2))
    with recording() as launches:
        warm = [host(public(x1, x2)) for _ in range(2)]
    assert all(_bits(w) == _bits(cold) for w in warm)
    with np.errstate(all="ignore"):
        expected = FUNCTIONS[name](h1, h2 if scalar is None or scalar_first else scalar)
    np.testing.assert_array_equal(cold, expected)
    if (x1 if scalar is None or not scalar_first else x2).device != "cpu":
        assert launches and short_path._hot  # our kernels, repeated by the hot path


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_unary_repeat_gives_the_first_calls_bits(arr, host, name, layout):
    rng = np.random.default_rng(len(name) + len(layout))
    h = _layout(rng, rng.uniform(0.5, 4, (7, 33)).astype(np.float32), layout)
    x = arr(h)
    cold = host(getattr(xp, name)(x))
    warm = host(getattr(xp, name)(x))
    assert _bits(warm) == _bits(cold)
    np.testing.assert_allclose(cold, UNARY[name](h), rtol=2e-6)


def test_the_repeat_is_served_by_the_hot_path(arr, monkeypatch):
    """After one full call, repeats of the same signature never reach ``apply``."""
    x = arr(np.ones((48, 64), np.float32))
    y = arr(np.full((48, 64), 2, np.float32))
    calls = [lambda: xp.add(x, y), lambda: x + y, lambda: x * 2.0, lambda: 2.0 * x,
             lambda: xp.exp(x)]
    for call in calls:
        call()
    if x.device == "cpu":
        assert not short_path._hot  # NumPy computes: nothing to remember
        return

    def refused(*args, **kwargs):
        raise AssertionError("a repeat went the full way")

    assert short_path._hot
    monkeypatch.setattr(launcher, "_apply", refused)
    for call in calls:
        assert type(call()) is xp.Array


INPLACE = {"add": "__iadd__", "multiply": "__imul__", "subtract": "__isub__",
           "maximum": None, "less": None}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), rows=st.integers(1, 9), cols=st.integers(1, 40),
       name=st.sampled_from(["add", "multiply", "subtract", "maximum"]),
       dtype=st.sampled_from(["float32", "int16", "float64"]),
       layouts=st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS),
                         st.sampled_from(LAYOUTS)),
       scalar=st.sampled_from([None, 3, 2.5]), in_place=st.booleans())
def test_a_repeat_into_an_array_gives_the_first_calls_bits(arr, host, seed, rows, cols, name,
                                                          dtype, layouts, scalar, in_place):
    """``out=`` and the in-place operators: each repeat writes the full call's bits into the
    very Array given, whatever the three layouts, and returns it."""
    rng = np.random.default_rng(seed)
    h1, h2, h_out = (_layout(rng, (rng.standard_normal((rows, cols)) * 50).astype(dtype), kind)
                     for kind in layouts)
    x2 = arr(h2) if scalar is None else scalar
    if scalar is not None and np.dtype(dtype).kind == "i" and scalar != int(scalar):
        x2 = int(scalar)  # an integer Array keeps its dtype: NumPy 2 refuses a float here
    expected = h_out.copy()
    results = []
    recent.forget_all()
    for _ in range(3):
        out = arr(h_out.copy())  # an Array on the emulator may share the NumPy array's memory
        if in_place and INPLACE[name]:
            got = getattr(out, INPLACE[name])(x2)
        else:
            got = getattr(xp, name)(arr(h1) if not in_place else out, x2, out=out)
        assert got is out
        results.append(np.array(host(out)))
    operand = h_out if in_place else h1
    with np.errstate(all="ignore"):
        getattr(np, name)(operand.copy(), h2 if scalar is None else x2, out=expected)
    np.testing.assert_array_equal(results[0], expected)
    assert all(_bits(r) == _bits(results[0]) for r in results[1:])
    if out.device != "cpu":
        assert short_path.into_by_ids  # repeated by the hot path into the Array


def test_a_repeat_into_an_array_is_served_by_the_hot_path(arr, host, monkeypatch):
    """After one full call, ``out=`` and in-place repeats neither reach ``apply`` nor the
    Arrays' boundary, and write into the Array given."""
    from infini_cupy.namespace import boundary

    x = arr(np.ones((48, 64), np.float32))
    z = arr(np.zeros((48, 64), np.float32))
    calls = [lambda: xp.add(x, x, out=z), lambda: z.__iadd__(x), lambda: z.__imul__(2.0),
             lambda: xp.exp(x, out=z)]
    for call in calls:
        call()
    if x.device == "cpu":
        assert not short_path.into_by_ids
        return

    def refused(*args, **kwargs):
        raise AssertionError("a repeat went the full way")

    monkeypatch.setattr(launcher, "_apply", refused)
    monkeypatch.setattr(boundary, "call_binary", refused)
    monkeypatch.setattr(boundary, "call_unary", refused)
    assert calls[0]() is z
    np.testing.assert_array_equal(host(z), 2)
    assert calls[1]() is z and calls[2]() is z
    np.testing.assert_array_equal(host(z), 6)
    assert calls[3]() is z
    np.testing.assert_allclose(host(z), np.e, rtol=1e-6)


def test_an_overlapping_out_is_checked_per_call_on_a_warm_cache(arr, host):
    """A signature warmed on separate arrays, repeated with ``out=`` overlapping its input
    in another layout (one row apart in one buffer, the same layout ids): NumPy's answer."""
    h = np.arange(50, dtype=np.float32).reshape(5, 10)
    buffer, other = arr(h.copy()), arr(h.copy())  # the emulator may share NumPy's memory
    for _ in range(2):  # warm: the same layouts, two buffers
        xp.add(buffer[:4], 1.0, out=other[1:])
    xp.add(buffer[:4], 1.0, out=buffer[1:])  # a row written before the next one is read
    expected = h.copy()
    np.add(expected[:4], 1.0, out=expected[1:])
    np.testing.assert_array_equal(host(buffer), expected)
    transposed = arr(h[:, :5].copy())  # the same Array in and out, transposed: full way
    square = np.array(host(transposed))
    for _ in range(2):
        transposed += transposed.T
    np.testing.assert_array_equal(host(transposed), _twice_plus_transpose(square))


def _twice_plus_transpose(a):
    a = a.copy()
    for _ in range(2):
        a += a.T.copy()  # NumPy reads the input as it was before the call writes
    return a


# ---------------------------------------------------------------- checks kept on a warm cache


def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


def _same_error_cold_and_warm(warm_up, bad):
    recent.forget_all()
    cold = _error(bad)
    warm_up()
    warm_up()
    assert _error(bad) == cold


def test_devices_are_checked_on_a_warm_cache(arr):
    x = arr(np.ones((4, 5), np.float32))
    other = xp.asarray(np.ones((4, 5), np.float32), device="cpu" if x.device != "cpu"
                       else "emulator")
    _same_error_cold_and_warm(lambda: xp.add(x, x), lambda: xp.add(x, other))
    _same_error_cold_and_warm(lambda: xp.add(x, x), lambda: xp.add(other, x))
    _same_error_cold_and_warm(lambda: xp.rearrange_(x, x + 1), lambda: xp.rearrange_(x, other))


def test_dtypes_and_shapes_are_checked_on_a_warm_cache(arr):
    x = arr(np.ones((4, 5), np.float32))
    _same_error_cold_and_warm(lambda: xp.bitwise_and(arr(np.ones((4, 5), np.int32)),
                                                     arr(np.ones((4, 5), np.int32))),
                              lambda: xp.bitwise_and(x, x))
    _same_error_cold_and_warm(lambda: xp.add(x, x), lambda: xp.add(x, arr(np.ones((3, 5)))))
    _same_error_cold_and_warm(lambda: xp.rearrange_(x, x + 1),
                              lambda: xp.rearrange_(x, arr(np.ones((4, 5), np.float64))))
    _same_error_cold_and_warm(lambda: xp.rearrange_(x, x + 1),
                              lambda: xp.rearrange_(x, arr(np.ones((5, 4), np.float32))))


def test_a_read_only_destination_is_checked_on_a_warm_cache(arr):
    """Warm with a writable destination, then one of the very layout that is read-only
    (NumPy-backed: a broadcast view, or a buffer made read-only)."""
    h = np.ones((4, 5), np.float32)
    x, y = arr(h), arr(h.copy())
    read_only = arr(h.copy())
    if not isinstance(read_only._a, np.ndarray):
        pytest.skip("device arrays are always writable")
    read_only._a.flags.writeable = False
    assert read_only._a.strides == y._a.strides
    _same_error_cold_and_warm(lambda: xp.add(x, y, out=y), lambda: xp.add(x, y, out=read_only))
    _same_error_cold_and_warm(lambda: xp.rearrange_(y, x), lambda: xp.rearrange_(read_only, x))
    broadcast = xp.broadcast_to(arr(np.ones((1, 5), np.float32)), (4, 5))
    _same_error_cold_and_warm(lambda: xp.rearrange_(y, x), lambda: xp.rearrange_(broadcast, x))


def test_integer_scalars_out_of_range_on_a_warm_cache(arr, host):
    """``int8 + 3`` warms the signature (array, int); ``int8 + 300`` is NumPy 2's error,
    ``int8 < 300`` its constant answer, whether the signature is warm or not."""
    x = arr(np.arange(-5, 5, dtype=np.int8).reshape(2, 5))
    _same_error_cold_and_warm(lambda: x + 3, lambda: x + 300)
    recent.forget_all()
    cold = host(x < 300)
    for _ in range(2):
        x < 3
    assert _bits(host(x < 300)) == _bits(cold)
    assert cold.all()


def test_overlap_is_checked_per_call_on_a_warm_cache(arr, host):
    """A layout planned for two separate arrays, repeated on an overlapping pair: the copy
    reads the source as it was (NumPy's answer), warm as cold."""
    h = np.arange(40, dtype=np.float32).reshape(4, 10)
    # two halves of one buffer, 160 bytes apart: the same addresses mod 32, so one key
    buffer = arr(np.zeros((8, 10), np.float32))
    base, other = buffer[:4], buffer[4:]
    xp.rearrange_(base, arr(h))
    for _ in range(2):  # warm: same layouts, no overlap
        xp.rearrange_(other[:, 1:], base[:, :-1])
    xp.rearrange_(base[:, 1:], base[:, :-1])  # same layouts, overlapping
    expected = h.copy()
    expected[:, 1:] = h[:, :-1]
    np.testing.assert_array_equal(host(base), expected)


def test_fused_calls_check_devices_on_a_warm_cache(arr):
    x = arr(np.ones((4, 5), np.float32))
    other = xp.asarray(np.ones((4, 5), np.float32), device="cpu" if x.device != "cpu"
                       else "emulator")
    fused = xp.fuse(lambda a, b: xp.exp(a * b + a) - b)
    _same_error_cold_and_warm(lambda: fused(x, x), lambda: fused(x, other))


# ---------------------------------------------------------------- what the keys tell apart


def test_keys_tell_apart_strides_dtypes_devices_and_scalar_types(arr, host):
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    contiguous, transposed = arr(h), arr(np.ascontiguousarray(h.T).T)
    wide = arr(h.astype(np.float64))
    cpu = xp.asarray(h, device="cpu")
    for _ in range(2):
        np.testing.assert_array_equal(host(contiguous + contiguous), h + h)
        np.testing.assert_array_equal(host(transposed + contiguous), h + h)
        assert (wide + contiguous).dtype == xp.float64
        assert (cpu + cpu).device == "cpu"
        h8 = np.arange(6, dtype=np.int8)
        int8 = arr(h8)
        for scalar in (1, 1.0, True, np.int16(1), np.float32(1)):  # weak Python, typed NumPy
            assert _bits(host(int8 + scalar)) == _bits(h8 + scalar), scalar
    keys = list(short_path._hot)
    assert len(keys) == len(set(keys))


def test_the_hot_cache_is_bounded(arr, monkeypatch):
    monkeypatch.setattr(short_path._hot, "limit", 3)
    for n in range(1, 9):
        x = arr(np.ones(n, np.float32))
        x + x
        assert len(short_path._hot) <= 3


# ---------------------------------------------------------------- layouts read once per Array


def test_layout_ids_tell_layouts_apart(arr):
    """Equal ids exactly for equal (type, dtype, shape, strides, backend)."""
    rng = np.random.default_rng(7)
    natives = []
    for dtype in ("float32", "int16", "float64"):
        h = rng.standard_normal((5, 6)).astype(dtype)
        natives += [arr(_layout(rng, h, kind))._a for kind in LAYOUTS]
        natives.append(arr(h.copy())._a)  # another buffer of a layout seen
    for a in natives:
        for b in natives:
            same = (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape
                    and a.strides == b.strides)
            ids = short_path.layout_id(a, "emulate"), short_path.layout_id(b, "emulate")
            assert (ids[0] == ids[1]) == same
    a = natives[0]
    assert short_path.layout_id(a, "emulate") != short_path.layout_id(a, "cuda")


def test_arrays_and_outputs_hold_their_own_layout_and_pointer(arr, host):
    """What an Array keeps (``_k``, ``_d``) is its native's layout id and data pointer: the
    inputs' once read, the hot path's outputs' from the plan and the allocation."""
    from infini_cupy.arrays import data_pointer

    rng = np.random.default_rng(3)
    h = rng.standard_normal((6, 7)).astype(np.float32)
    x, y = arr(h), arr(_layout(rng, h * 2, "transposed"))
    results = []
    for _ in range(3):
        results += [x + y, x * 1.5, xp.exp(y), 2.0 - y]
    if x.device == "cpu":
        return
    for r in results + [x, y]:
        if r._k is None:
            continue
        assert r._k == short_path.layout_id(r._a, r._b)
        assert r._d == data_pointer(r._a)
    # the repeats' outputs come back settled from the hot path, on every device
    assert all(r._k is not None for r in results[4:])
    np.testing.assert_array_equal(host(results[-4]), h + h * 2)
    np.testing.assert_array_equal(host(results[-1]), np.float32(2.0) - h * 2)


def test_a_numpy_view_of_an_array_does_not_change_it(arr, host):
    """``np.asarray(x)`` is a view: setting its shape leaves the Array (and its hot-path key)
    as it was."""
    x = arr(np.arange(12, dtype=np.float32).reshape(3, 4))
    if x.device not in ("cpu", "emulator"):
        pytest.skip("GPU Arrays do not convert implicitly")
    for _ in range(2):
        x + x
    view = np.asarray(x)
    view.shape = (4, 3)
    assert x.shape == (3, 4)
    np.testing.assert_array_equal(host(x + x), 2 * np.arange(12, dtype=np.float32).reshape(3, 4))


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.sampled_from([0.0, -0.0, 2.0, 2, -3, 1e300, float("nan"), True,
                                        np.float32(2.0), 70000, -1.5]), min_size=2, max_size=6))
def test_each_calls_scalar_is_its_own(arr, host, values):
    """The hot path keeps the last scalar's packed value: a scalar of another value (-0.0
    after 0.0, NaN after NaN) is never served the last one's."""
    h = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    x = arr(h)
    for v in values:
        with np.errstate(all="ignore"):
            expected, reflected = h * v, np.subtract(v, h)
        assert _bits(host(x * v)) == _bits(expected), v
        assert _bits(host(v - x)) == _bits(reflected), v


@pytest.mark.parametrize("dtype", ["float16", "bool", "int32"])
@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
def test_a_complex_scalar_repeats_where_the_loop_is_not_complex(arr, host, name, dtype):
    """Logical functions compute in bool whatever the scalar's kind: a repeat with a complex
    scalar (its truth value) gives NumPy's answer, as the first call does."""
    h = np.random.default_rng(7).integers(-2, 3, (3, 5)).astype(dtype)
    x = arr(h)
    for v in (1j, 0j, 2j, 0j, 2.5 + 0j):
        expected = getattr(np, name)(h, v)
        assert _bits(host(getattr(xp, name)(x, v))) == _bits(expected), v
        assert _bits(host(getattr(xp, name)(v, x))) == _bits(expected), v
        out = arr(np.zeros((3, 5), bool))
        getattr(xp, name)(x, v, out=out)
        assert _bits(host(out)) == _bits(expected), v


def test_outputs_of_another_allocator_on_a_warm_cache(arr, host):
    """Under ``arrays.outputs_from``, outputs off the 16-byte packs: the vector flag from
    their own address, the Array settled from its own layout."""
    from infini_cupy.arrays import outputs_from

    x = arr(np.arange(24, dtype=np.float32).reshape(4, 6))
    if x.device != "emulator":
        pytest.skip("the emulator's allocation")

    def off_the_packs(shape, dtype):
        flat = np.empty(int(np.prod(shape)) + 1, dtype)
        return flat[1:].reshape(shape)

    calls = [lambda: x + x, lambda: xp.exp(x), lambda: x * 3.0]
    expected = [host(call()) for call in calls]  # cold: planned and remembered
    for call in calls:
        call()
    with outputs_from(off_the_packs):
        results = [call() for call in calls]
    for r, e in zip(results, expected):
        assert r._a.ctypes.data % 16  # off the packs: the allocator's
        assert _bits(host(r)) == _bits(e)
        assert r._k is None or r._k == short_path.layout_id(r._a, r._b)


def test_forget_all_empties_the_layout_id_memos(arr):
    x = arr(np.ones((3, 4), np.float32))
    fused = xp.fuse(lambda a, b: a * b + a)
    for _ in range(2):
        x + x
        xp.rearrange_(x, x + 1)
        fused(x, x)
    if x.device == "cpu":
        return
    from infini_cupy.strided import copy

    assert short_path.by_ids and fused._by_ids is not None
    recent.forget_all()
    assert not short_path.by_ids and not copy._by_ids and not fused._by_ids


def test_fused_repeats_give_the_first_calls_bits(arr, host):
    rng = np.random.default_rng(11)
    fused = xp.fuse(lambda a, b: xp.exp(a * b + a) - b)
    for kind in LAYOUTS:
        h1 = rng.standard_normal((5, 9)).astype(np.float32)
        h2 = rng.standard_normal((5, 9)).astype(np.float32)
        x, y = arr(_layout(rng, h1, kind)), arr(h2)
        cold = host(fused(x, y))
        for _ in range(2):
            assert _bits(host(fused(x, y))) == _bits(cold)
        np.testing.assert_allclose(cold, np.exp(h1 * h2 + h1) - h2, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("how", ["pickle", "copy", "deepcopy"])
def test_a_copied_array_settles_its_own_layout(arr, host, how):
    """A pickled or copied Array is another native array (a transposed one may come back
    C-contiguous): it reads its own layout and pointer, never the original's."""
    import copy
    import pickle

    h = np.arange(20, dtype=np.float32).reshape(4, 5)
    x = arr(np.ascontiguousarray(h.T).T)  # transposed strides
    for _ in range(2):
        x + x
    if x.device == "cpu":
        return
    try:
        y = {"pickle": lambda: pickle.loads(pickle.dumps(x)), "copy": lambda: copy.copy(x),
             "deepcopy": lambda: copy.deepcopy(x)}[how]()
    except TypeError:
        pytest.skip("this device's arrays do not pickle")
    assert y._k is None
    for _ in range(2):
        np.testing.assert_array_equal(host(y + y), h + h)
    assert y._k == short_path.layout_id(y._a, y._b)
