"""The standard's special cases: NaN, infinities and signed zeros for every real floating
function (every pair of special values, sign of zero included), integer corner cases
(division by zero, MIN // -1, abs(MIN), shifts past the width), float16 steps, and a sample
of the complex special cases the standard lists."""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

from infini_cupy import dtypes
from infini_cupy.elementwise.ops import OPS
from infini_cupy.namespace import elementwise_functions as F
from tests.support.elementwise_cases import EXACT_REAL, RTOL, SPECIALS, oracle, prepare

REAL_FLOAT_OPS = [n for n, op in OPS.items()
                  if op.arity in (1, 2) and "real floating" in dtypes.CATEGORY_GROUPS[op.group]]
VALUES = np.concatenate([SPECIALS, [2.5, -2.5, 3.0, -7.0, 1e-3, 1e30, -1e30]])


def _same_including_sign(op_name, actual, expected, dtype):
    assert actual.dtype == expected.dtype
    if actual.dtype.kind != "f":
        np.testing.assert_array_equal(actual, expected, strict=True, err_msg=op_name)
        return
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    assert np.array_equal(np.isnan(a), np.isnan(e)), f"{op_name}: NaN positions differ\n{a}\n{e}"
    finite_or_inf = ~np.isnan(e)
    # A zero or an infinity must match in sign; other values exactly or within tolerance.
    signed = finite_or_inf & ((e == 0) | np.isinf(e))
    if op_name in ("maximum", "minimum", "clip"):
        # NumPy returns one of two zeros by position (x2 for float32/64, x1 for float16); the
        # standard leaves it unspecified. Ours order -0 < +0 (IEEE 754-2019 maximum/minimum),
        # checked in test_maximum_minimum_nan_and_zero_signs.
        signed &= e != 0
    assert np.array_equal(np.signbit(a[signed]), np.signbit(e[signed])), f"{op_name}: signs differ"
    assert np.array_equal(a[signed], e[signed]), f"{op_name}: zeros/infinities differ"
    rtol = 0 if op_name in EXACT_REAL else RTOL[str(np.dtype(dtype))]
    np.testing.assert_allclose(a[finite_or_inf], e[finite_or_inf], rtol=rtol, atol=rtol, err_msg=op_name)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("op_name", REAL_FLOAT_OPS)
def test_real_special_values_match_numpy(op_name, dtype, backend_name, to_device, to_host):
    prepare(backend_name, op_name)
    with np.errstate(over="ignore"):
        x = VALUES.astype(dtype)
    if OPS[op_name].arity == 1:
        args = (x,)
    else:
        args = (np.repeat(x, x.size), np.tile(x, x.size))  # every pair
    expected = oracle(op_name, *args)
    actual = to_host(getattr(F, op_name)(*(to_device(a) for a in args)))
    _same_including_sign(op_name, actual, expected, dtype)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint64"])
def test_integer_division_corners(dtype, backend_name, to_device, to_host):
    prepare(backend_name, "floor_divide", "remainder", "abs", "negative")
    info = np.iinfo(dtype)
    a = np.array([info.min, info.max, 7, -7 if info.min < 0 else 9, 0, 5], dtype)
    b = np.array([-1 if info.min < 0 else 1, 0, -2 if info.min < 0 else 2, 2, 0, 3], dtype)
    for op_name in ("floor_divide", "remainder"):
        actual = to_host(getattr(F, op_name)(to_device(a), to_device(b)))
        np.testing.assert_array_equal(actual, oracle(op_name, a, b), strict=True, err_msg=op_name)
    for op_name in ("abs", "negative"):
        actual = to_host(getattr(F, op_name)(to_device(a)))
        np.testing.assert_array_equal(actual, oracle(op_name, a), strict=True, err_msg=op_name)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8", "uint32"])
def test_shifts_past_width(dtype, backend_name, to_device, to_host):
    prepare(backend_name, "bitwise_left_shift", "bitwise_right_shift")
    bits = np.dtype(dtype).itemsize * 8
    a = np.array([1, 5, np.iinfo(dtype).max, np.iinfo(dtype).min, 3, 3], dtype)
    b = np.array([bits - 1, bits, bits + 5, bits, 0, 1], dtype)
    for op_name in ("bitwise_left_shift", "bitwise_right_shift"):
        actual = to_host(getattr(F, op_name)(to_device(a), to_device(b)))
        np.testing.assert_array_equal(actual, oracle(op_name, a, b), strict=True, err_msg=op_name)


def test_round_half_to_even_and_nextafter_float16(backend_name, to_device, to_host):
    prepare(backend_name, "round", "nextafter")
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 3.5], np.float64)
    np.testing.assert_array_equal(to_host(F.round(to_device(x))), [0.0, 2.0, 2.0, -0.0, -2.0, 4.0])
    h = np.array([1.0, 0.0, -0.0, 65504.0, -1.0], np.float16)
    t = np.array([2.0, -1.0, 1.0, np.inf, 0.0], np.float16)
    with np.errstate(over="ignore"):
        expected = np.nextafter(h, t)
    np.testing.assert_array_equal(to_host(F.nextafter(to_device(h), to_device(t))), expected, strict=True)


def _c(re, im):
    return complex(re, im)


INF, NAN, PI = math.inf, math.nan, math.pi
# (function, input, expected) from the standard's lists; None: that component is NaN.
COMPLEX_CASES = [
    ("exp", _c(0.0, 0.0), _c(1.0, 0.0)),
    ("exp", _c(-0.0, 0.0), _c(1.0, 0.0)),
    ("exp", _c(INF, 0.0), _c(INF, 0.0)),
    ("exp", _c(NAN, 0.0), _c(NAN, 0.0)),
    ("exp", _c(-INF, 1.0), _c(0.0 * math.cos(1.0), 0.0 * math.sin(1.0))),
    ("log", _c(-0.0, 0.0), _c(-INF, PI)),
    ("log", _c(0.0, 0.0), _c(-INF, 0.0)),
    ("log", _c(INF, NAN), _c(INF, NAN)),
    ("sqrt", _c(0.0, 0.0), _c(0.0, 0.0)),
    ("sqrt", _c(1.0, INF), _c(INF, INF)),
    ("sqrt", _c(-INF, 1.0), _c(0.0, INF)),
    ("sqrt", _c(INF, 1.0), _c(INF, 0.0)),
    ("sqrt", _c(-4.0, 0.0), _c(0.0, 2.0)),
    ("sqrt", _c(-4.0, -0.0), _c(0.0, -2.0)),
    ("abs", _c(INF, NAN), INF),
    ("abs", _c(NAN, -INF), INF),
    ("cosh", _c(0.0, 0.0), _c(1.0, 0.0)),
    ("sinh", _c(0.0, 0.0), _c(0.0, 0.0)),
    ("sinh", _c(INF, 0.0), _c(INF, 0.0)),
    ("tanh", _c(0.0, 0.0), _c(0.0, 0.0)),
    ("tanh", _c(INF, 1.0), _c(1.0, 0.0)),
    ("acosh", _c(0.0, 0.0), _c(0.0, PI / 2)),
    ("atanh", _c(1.0, 0.0), _c(INF, 0.0)),
    ("atanh", _c(0.0, 0.0), _c(0.0, 0.0)),
    ("atanh", _c(INF, 1.0), _c(0.0, PI / 2)),
    ("asinh", _c(0.0, 0.0), _c(0.0, 0.0)),
    ("acos", _c(1.0, 0.0), _c(0.0, -0.0)),
    ("expm1", _c(0.0, 0.0), _c(0.0, 0.0)),
    ("expm1", _c(INF, 0.0), _c(INF, 0.0)),
    ("log1p", _c(-1.0, 0.0), _c(-INF, 0.0)),
    ("sign", _c(0.0, 0.0), _c(0.0, 0.0)),
    ("sign", _c(3.0, -4.0), _c(0.6, -0.8)),
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_special_cases(dtype, backend_name, to_device, to_host):
    prepare(backend_name, *sorted({c[0] for c in COMPLEX_CASES}))
    for name, z, want in COMPLEX_CASES:
        got = to_host(getattr(F, name)(to_device(np.asarray([z], dtype))))[0]
        got, want = complex(got), complex(want)
        for g, w, part in ((got.real, want.real, "real"), (got.imag, want.imag, "imag")):
            where = f"{name}({z}) {part}: got {got}, want {want}"
            if math.isnan(w):
                assert math.isnan(g), where
            elif w == 0 or math.isinf(w):
                assert g == w and math.copysign(1, g) == math.copysign(1, w), where
            else:
                assert cmath.isclose(g, w, rel_tol=1e-6), where


def test_maximum_minimum_nan_and_zero_signs(backend_name, to_device, to_host):
    prepare(backend_name, "maximum", "minimum")
    a = np.array([np.nan, 1.0, -0.0, 0.0, np.nan], np.float32)
    b = np.array([1.0, np.nan, 0.0, -0.0, np.nan], np.float32)
    mx = to_host(F.maximum(to_device(a), to_device(b)))
    mn = to_host(F.minimum(to_device(a), to_device(b)))
    assert np.isnan(mx[[0, 1, 4]]).all() and np.isnan(mn[[0, 1, 4]]).all()
    assert not np.signbit(mx[2]) and not np.signbit(mx[3])
    assert np.signbit(mn[2]) and np.signbit(mn[3])
