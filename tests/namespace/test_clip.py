"""clip with bounds of another dtype than x, or out of x's range (the standard leaves them to
the implementation): the result has x's dtype and is the exact clip of x's values, saturated
(integers) or rounded (floating point) into it; NaN bounds give NaN; a floating bound of
integer x is a TypeError. NumPy (in exact arithmetic where it would promote) is the oracle."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import dtypes
from infini_cupy.runtime.launch import recording
from tests.support.elementwise_cases import prepare

INTEGERS = [d for d in dtypes.ALL_DTYPES if d.kind in "iu"]
FLOATS = [np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)]


def _exact_clip(x, lo, hi):
    """clip in Python integers, saturated to x's dtype."""
    info = np.iinfo(x.dtype)
    exact = np.asarray(x).astype(object)
    if lo is not None:
        exact = np.maximum(exact, np.asarray(lo).astype(object))
    if hi is not None:
        exact = np.minimum(exact, np.asarray(hi).astype(object))
    return np.minimum(np.maximum(exact, int(info.min)), int(info.max)).astype(x.dtype)


def _random_ints(rng, dtype, shape):
    info = np.iinfo(dtype)
    return rng.integers(int(info.min), int(info.max), shape, dtype=dtype, endpoint=True)


def test_the_reported_case(backend_name, to_device, to_host):
    """clip(uint8 [200], int8 [-1]) was 255: int8 -1 wrapped to uint8 255 before the clip."""
    prepare(backend_name, "clip", "cast")
    r = xp.clip(to_device(np.uint8([200, 3])), to_device(np.int8([-1])), None)
    assert r.dtype == np.uint8
    np.testing.assert_array_equal(to_host(r), [200, 3])
    np.testing.assert_array_equal(np.clip(np.uint8([200, 3]), np.int8([-1]), None), [200, 3])


@pytest.mark.parametrize("x_dtype", INTEGERS, ids=str)
def test_integer_bound_arrays_of_every_integer_dtype(x_dtype, backend_name, to_device, to_host):
    prepare(backend_name, "clip", "cast")
    rng = np.random.default_rng(int(x_dtype.num))
    x = _random_ints(rng, x_dtype, (4, 6))
    for lo_dtype, hi_dtype in itertools.product(INTEGERS, repeat=2):
        lo, hi = _random_ints(rng, lo_dtype, (4, 1)), _random_ints(rng, hi_dtype, (6,))
        for bounds in ((lo, hi), (lo, None), (None, hi)):
            r = xp.clip(to_device(x), *(None if b is None else to_device(b) for b in bounds))
            assert r.dtype == x_dtype
            expected = _exact_clip(x, *bounds)
            np.testing.assert_array_equal(to_host(r), expected, err_msg=str((lo_dtype, hi_dtype)))
            if bounds[1] is None and np.can_cast(lo_dtype, x_dtype):
                # where NumPy keeps x's dtype, it agrees
                np.testing.assert_array_equal(to_host(r), np.clip(x, lo, None))


@pytest.mark.parametrize("x_dtype", ["uint8", "int8", "int64", "uint64"])
def test_python_int_bounds_out_of_range(x_dtype, backend_name, to_device, to_host):
    """A bound beyond x's range acts as that end of it: no bound, or every value at it
    (NumPy raises OverflowError for the latter; where it answers, it agrees)."""
    prepare(backend_name, "clip")
    dt = np.dtype(x_dtype)
    info = np.iinfo(dt)
    x = _random_ints(np.random.default_rng(1), dt, (9,))
    big, small = int(info.max) + 1, int(info.min) - 1
    cases = [(small, None), (None, big), (small, big), (-10**30, 10**30), (big, None),
             (None, small), (10**30, None), (big, small), (np.int64(-1), None)]
    for lo, hi in cases:
        r = to_host(xp.clip(to_device(x), lo, hi))
        assert r.dtype == dt
        np.testing.assert_array_equal(r, _exact_clip(x, lo, hi), err_msg=str((lo, hi)))
        try:
            expected = np.clip(x, lo, hi)
        except OverflowError:
            continue
        if expected.dtype == dt:
            np.testing.assert_array_equal(r, expected, err_msg=str((lo, hi)))


@pytest.mark.parametrize("x_dtype", FLOATS, ids=str)
def test_floating_bounds_round_the_exact_clip(x_dtype, backend_name, to_device, to_host):
    """Bounds of any real dtype or any size: the exact clip, rounded once to x's dtype."""
    prepare(backend_name, "clip", "cast")
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((5, 7)) * 1e3).astype(x_dtype)
    x[0, 0], x[1, 1] = np.nan, np.inf
    for bound_dtype in FLOATS + INTEGERS:
        lo, hi = (_random_bound(rng, bound_dtype) for _ in range(2))
        r = xp.clip(to_device(x), to_device(lo), to_device(hi))
        assert r.dtype == x_dtype
        with np.errstate(all="ignore"):
            expected = np.clip(x.astype(np.float64), lo.astype(np.float64),
                               hi.astype(np.float64)).astype(x_dtype)
        np.testing.assert_array_equal(to_host(r), expected, err_msg=str(bound_dtype))
    big = 10**400  # past float64: an infinite bound
    for lo, hi in [(-big, big), (big, None), (None, -big), (-math.inf, math.inf),
                   (np.float64(-1e300), np.int64(2**62))]:
        got = to_host(xp.clip(to_device(x), lo, hi))
        with np.errstate(all="ignore"):
            expected = np.clip(x.astype(np.float64), _as_float(lo, -math.inf),
                               _as_float(hi, math.inf)).astype(x_dtype)
        np.testing.assert_array_equal(got, expected, err_msg=str((lo, hi)))


def _as_float(bound, default):
    """A bound as a float64 (a Python int past its range: infinity)."""
    if bound is None:
        return default
    try:
        return float(bound)
    except OverflowError:
        return math.inf if bound > 0 else -math.inf


def _random_bound(rng, dtype):
    """A (5, 1) bound of ``dtype`` with values around x's (about +-3000)."""
    raw = rng.standard_normal((5, 1)) * 1e3
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        raw = raw.clip(max(int(info.min), -4000), min(int(info.max), 4000))
    return raw.astype(dtype)


@pytest.mark.parametrize("x_dtype", FLOATS, ids=str)
def test_nan_bounds_give_nan(x_dtype, backend_name, to_device, to_host):
    """The standard: a NaN bound gives NaN (a Python, NumPy or array bound)."""
    prepare(backend_name, "clip", "cast")
    x = np.asarray([-2.0, 0.5, 3.0], x_dtype)
    for lo, hi in [(math.nan, None), (None, math.nan), (np.float32(np.nan), 1.0), (0, np.nan)]:
        r = to_host(xp.clip(to_device(x), lo, hi))
        assert r.dtype == x_dtype and np.isnan(r).all(), (lo, hi)
    lo = np.asarray([0.0, np.nan, 1.0])
    r = to_host(xp.clip(to_device(x), to_device(lo), None))
    np.testing.assert_array_equal(r, np.asarray([0.0, np.nan, 3.0], x_dtype))
    np.testing.assert_array_equal(r, np.clip(x, lo, None).astype(x_dtype))


@pytest.mark.parametrize("bound", [2.5, math.nan, -math.inf, math.inf, np.float32(1), 1j],
                         ids=["float", "nan", "-inf", "inf", "np.float32", "complex"])
def test_bounds_with_no_meaning_for_integer_x(bound, backend_name, to_device):
    """A floating (or complex) bound of integer x: a TypeError naming it and x's dtype, not
    NumPy's promotion to float or a raw ValueError/OverflowError from converting it."""
    x = to_device(np.arange(5, dtype=np.int16))
    for args, which in (((bound, None), "min"), ((None, bound), "max")):
        with pytest.raises(TypeError, match=rf"clip\(\): {which} .* x of dtype int16"):
            xp.clip(x, *args)
    with pytest.raises(TypeError, match=r"clip\(\): min of dtype float32 .* int16"):
        xp.clip(x, to_device(np.zeros(5, np.float32)))


def test_numpy_scalar_bounds_go_by_value(backend_name, to_device, to_host):
    """NumPy scalar bounds are values of their dtype: one launch, no 0-d arrays."""
    prepare(backend_name, "clip")
    x = to_device(np.arange(10, dtype=np.uint8) * 30)
    with recording() as launches:
        r = xp.clip(x, np.int16(-5), np.int64(1000))
    assert len(launches) == 1
    np.testing.assert_array_equal(to_host(r), to_host(x))
    np.testing.assert_array_equal(to_host(xp.clip(x, np.int16(300), None)), np.full(10, 255))
    np.testing.assert_array_equal(to_host(xp.clip(x, np.uint8(40), np.int8(100))),
                                  np.clip(to_host(x), 40, 100))


@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_scalar_bounds_again_are_checked_and_signed_as_the_first(device):
    """Scalar bounds seen before (the cpu device remembers them by dtype, type and value):
    an equal value of another type is checked anew (``1`` then ``1.0`` for integer x), and
    a zero bound keeps its sign (``0.0`` then ``-0.0``), as in the kernels."""
    ints = xp.asarray(np.arange(-3, 3, dtype=np.int32), device=device)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(xp.clip(ints, 1, True)), np.ones(6, np.int32))
        with pytest.raises(TypeError, match=r"clip\(\): min 1\.0 .* int32"):
            xp.clip(ints, 1.0, None)
    zeros = np.asarray([-0.0, 0.0, -1.0, 1.0])
    for _ in range(2):
        for lo in (0.0, -0.0):
            for hi in (0.0, -0.0):  # the kernels' answer, bit for bit
                r = xp.clip(xp.asarray(zeros, device=device), lo, hi)
                kernels = xp.clip(xp.asarray(zeros, device="emulator"), lo, hi)
                np.testing.assert_array_equal(np.signbit(np.asarray(r)),
                                              np.signbit(np.asarray(kernels)), (lo, hi))


@pytest.mark.parametrize("device", ["cpu", "emulator"])
@pytest.mark.parametrize("bound, out", [("abc", None), ({"a": 1}, None), (["a", "b"], None),
                                        (None, "abc"), (None, [1.0, 2.0])],
                         ids=["str", "dict", "list", "out-str", "out-list"])
def test_bounds_and_out_of_no_array_kind_are_a_type_error_on_every_device(device, bound, out):
    """A str/dict/list bound or out=: the TypeError naming its type on every device (the cpu
    device raised AttributeError reading its dtype or flags)."""
    x = xp.asarray(np.arange(5.0), device=device)
    with pytest.raises(TypeError, match=r"clip\(\).* (str|dict|list)$"):
        xp.clip(x, bound, None, out=out)
    with pytest.raises(TypeError, match=r"clip\(\).* (str|dict|list)$"):
        x.clip(None, bound, out=out)
