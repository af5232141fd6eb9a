"""Numerics regressions (issue 14, items 5 and 7) and the neighbouring precision fixes, with
NumPy (or an exact / extra-precision oracle where NumPy itself is inaccurate) as the oracle.

- Casts to float16 round once, to nearest even, like NumPy's ``astype``: exactly the same
  bits (NaN compared as NaN), from float64 / complex128 (through float32 it rounded twice),
  float32, int64, uint64; and float64 -> float32.
- Complex ``pow`` follows NumPy's npy_cpow (0 ** b, b == 0, 1, 2, 3, small integers by
  repeated multiplication), ``atanh`` / ``atan`` keep the small part of huge arguments,
  ``exp`` / ``sinh`` / ``cosh`` / ``expm1`` do not overflow where the result fits, ``log`` and
  ``log1p`` keep their digits near |z| = 1 and |1 + z| = 1, ``expm1``'s real part keeps its
  digits where e^x cos y is close to 1.

Each property runs twice, as in ``test_properties_long.py``: ``*_short`` in every run (50
examples) and ``*_long`` marked ``slow`` (deselected by default; the ``long`` hypothesis
profile: ``INFINI_CUPY_LONG_EXAMPLES`` examples, 2000 by default):

    pytest tests/test_numerics_regressions.py                 # short
    pytest -m slow tests/test_numerics_regressions.py         # long
    pytest --backend cuda tests/test_numerics_regressions.py  # the same on a GPU

Arrays reach the kernels through the ``to_device`` / ``to_host`` fixtures of conftest.py, so the
same tests run on CuPy arrays with ``--backend cuda``.
"""

from __future__ import annotations

import cmath
import contextlib
import decimal
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import infini_cupy as xp

SHORT = settings(max_examples=50, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# the 38 function/dtype cases of complex math: 25 arrays each by default (3 minutes of the
# suite at 50), the long run's many more with -m slow
MATH_SHORT = settings(SHORT, max_examples=25)
# max_examples from the profile in force ("long" when the slow tests are selected)
LONG = settings(deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@contextlib.contextmanager
def _quiet():
    """NumPy's oracle warns casting complex to real and on overflow / invalid values."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        yield


def _uint_of(dtype):
    return {2: np.uint16, 4: np.uint32, 8: np.uint64}[np.dtype(dtype).itemsize]


def assert_same_values(got, expected):
    """Equal dtype, shape and bits, except that any NaN matches any NaN."""
    got, expected = np.asarray(got), np.asarray(expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if expected.dtype.kind == "c":
        assert_same_values(got.real.copy(), expected.real.copy())
        assert_same_values(got.imag.copy(), expected.imag.copy())
        return
    nan_got, nan_expected = np.isnan(got), np.isnan(expected)
    bad = (nan_got != nan_expected) | (~nan_expected & (got.view(_uint_of(got.dtype))
                                                        != expected.view(_uint_of(got.dtype))))
    if bad.any():
        i = np.flatnonzero(bad.reshape(-1))[:8]
        src = "; ".join(f"got {got.reshape(-1)[k]!r} expected {expected.reshape(-1)[k]!r}" for k in i)
        raise AssertionError(f"{bad.sum()} of {bad.size} differ: {src}")


def cast(x_host, dtype, to_device, to_host):
    return to_host(xp.astype(to_device(x_host), dtype))


def call(name, to_device, to_host, *host_args):
    return to_host(getattr(xp, name)(*(to_device(np.asarray(a)) for a in host_args)))


# ================================================================ item 5: casts to float16
def _bits(value: float) -> int:
    return int(np.array(value, np.float64).view(np.uint64))


@st.composite
def float64_bits(draw):
    """float64 bit patterns: raw, float16's range, float16 ties (and one ulp off), specials."""
    kind = draw(st.sampled_from(["raw", "range", "tie", "tie", "special"]))
    sign = draw(st.integers(0, 1)) << 63
    if kind == "raw":
        return draw(st.integers(0, 2**64 - 1))
    if kind == "special":
        return sign | draw(st.sampled_from([
            0, 1, 0x000FFFFFFFFFFFFF, 0x7FF0000000000000, 0x7FF8000000000000, 0x7FF0000000000001,
            0x7FFFFFFFFFFFFFFF, 0x7FEFFFFFFFFFFFFF, _bits(65504.0), _bits(65520.0),
            _bits(65520.0) - 1, _bits(65519.99999), _bits(2.0**-24), _bits(2.0**-25),
            _bits(2.0**-25) + 1, _bits(2.0**-14), _bits(2.0**-14) - 1, _bits(3 * 2.0**-26),
            _bits(1 + 2.0**-11 + 2.0**-40), _bits(1 + 2.0**-11)]))
    exponent = draw(st.integers(1023 - 27, 1023 + 16))  # below half the least subnormal .. inf
    mantissa = draw(st.integers(0, 2**52 - 1))
    if kind == "tie":  # the bits float16 drops (more for its subnormals) exactly a half
        cut = draw(st.integers(41, 52))
        mantissa = (mantissa >> (cut + 1) << (cut + 1)) | (1 << cut)
        mantissa = (mantissa + draw(st.sampled_from([-1, 0, 0, 1]))) % 2**52
    return sign | exponent << 52 | mantissa


@st.composite
def float32_bits(draw):
    kind = draw(st.sampled_from(["raw", "range", "tie", "tie", "special"]))
    sign = draw(st.integers(0, 1)) << 31
    if kind == "raw":
        return draw(st.integers(0, 2**32 - 1))
    if kind == "special":
        return sign | draw(st.sampled_from([
            0, 1, 0x007FFFFF, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0x7F7FFFFF,
            0x477FE000, 0x477FF000, 0x477FEFFF, 0x33800000, 0x33000000, 0x33000001, 0x38800000,
            0x387FFFFF]))
    exponent = draw(st.integers(127 - 27, 127 + 16))
    mantissa = draw(st.integers(0, 2**23 - 1))
    if kind == "tie":
        cut = draw(st.integers(12, 23))
        mantissa = (mantissa >> (cut + 1) << (cut + 1)) | (1 << cut)
        mantissa = (mantissa + draw(st.sampled_from([-1, 0, 0, 1]))) % 2**23
    return sign | exponent << 23 | mantissa


def _integers(lo, hi):
    """Integers in [lo, hi]: anywhere, near float16's largest finite values, and float16 ties
    (2m + 1) 2^e in [2^(11+e), 2^(12+e)), where float16's ulp is 2^(e+1), or one off."""
    near = st.integers(max(lo, -70000), min(hi, 70000))
    ties = st.builds(lambda m, e, d, neg: max(lo, min(hi, (-1 if neg else 1) * ((2 * m + 1) << e) + d)),
                     st.integers(1024, 2047), st.integers(0, 4), st.integers(-1, 1), st.booleans())
    return st.one_of(st.integers(lo, hi), near, ties, st.sampled_from([lo, hi, 0, 65504, 65519, 65520]))


def _float64_array(bits):
    return np.array(bits, dtype=np.uint64).view(np.float64)


CAST_SOURCES = {  # name: (strategy of a 1-d host array, target dtypes)
    "float64": (st.lists(float64_bits(), min_size=1, max_size=64).map(_float64_array),
                (np.float16, np.float32)),
    "complex128": (st.lists(st.tuples(float64_bits(), float64_bits()), min_size=1, max_size=64).map(
        lambda pairs: _float64_array([b for pair in pairs for b in pair]).view(np.complex128)),
        (np.float16, np.float32)),
    "float32": (st.lists(float32_bits(), min_size=1, max_size=64).map(
        lambda bits: np.array(bits, dtype=np.uint32).view(np.float32)), (np.float16,)),
    "int64": (st.lists(_integers(-2**63, 2**63 - 1), min_size=1, max_size=64).map(
        lambda v: np.array(v, dtype=np.int64)), (np.float16,)),
    "uint64": (st.lists(_integers(0, 2**64 - 1), min_size=1, max_size=64).map(
        lambda v: np.array(v, dtype=np.uint64)), (np.float16,)),
}


def check_casts(source, data, to_device, to_host):
    strategy, targets = CAST_SOURCES[source]
    x = data.draw(strategy, label=source)
    for dtype in targets:
        with _quiet():
            expected = x.astype(dtype)
        assert_same_values(cast(x, dtype, to_device, to_host), expected)


@pytest.mark.parametrize("source", sorted(CAST_SOURCES))
@SHORT
@given(data=st.data())
def test_casts_match_numpy_short(source, data, to_device, to_host):
    check_casts(source, data, to_device, to_host)


@pytest.mark.slow
@pytest.mark.parametrize("source", sorted(CAST_SOURCES))
@LONG
@given(data=st.data())
def test_casts_match_numpy_long(source, data, to_device, to_host):
    check_casts(source, data, to_device, to_host)


def test_float64_to_float16_rounds_once(to_device, to_host):
    """Issue 14 item 5: through float32, 1 + 2^-11 + 2^-40 became a float16 tie (-> 1.0) and
    -65519.99999 became -65520 (-> -inf)."""
    x = np.array([1 + 2.0**-11 + 2.0**-40, -65519.99999, 65520.0, 65504.0 + 7.999, 2.0**-25,
                  2.0**-25 * (1 + 2.0**-52), 3 * 2.0**-25, 2.0**-24 * (1.5 - 2.0**-40), -0.0,
                  np.inf, np.nan, 1e-310])
    expected = np.array([1.0009765625, -65504.0, np.inf, 65504.0, 0.0, 2.0**-24, 2.0**-23,
                         2.0**-24, -0.0, np.inf, np.nan, 0.0], np.float16)
    with _quiet():
        assert_same_values(x.astype(np.float16), expected)  # the oracle agrees
    assert_same_values(cast(x, np.float16, to_device, to_host), expected)
    z = np.empty(x.shape, np.complex128)
    z.real, z.imag = x, [1e300, np.nan, 0.0, -1.0] * 3
    assert_same_values(cast(z, np.float16, to_device, to_host), expected)


def test_integers_to_float16_match_numpy(to_device, to_host):
    ints = np.array([2049, 2051, 4097, 4098, 4099, 65504, 65519, 65520, -65520, 2**24 + 1,
                     2**53 + 1, 2**62 + 2**51, -(2**63), 2**63 - 1], np.int64)
    uints = np.array([2049, 65519, 65520, 2**64 - 1, 2**63], np.uint64)
    for x in (ints, uints):
        with _quiet():
            expected = x.astype(np.float16)
        assert_same_values(cast(x, np.float16, to_device, to_host), expected)


# ================================================================ item 7: complex math
def _ulp_distance(got, ref, real_dtype):
    """Componentwise |got - ref| in units of the last place of ref (of the smallest normal for
    smaller ref); 0 where both are the same non-finite value, inf where only one is."""
    got, ref = np.asarray(got), np.asarray(ref)
    out = np.zeros(ref.shape + (2,))
    tiny = np.finfo(real_dtype).tiny
    with np.errstate(all="ignore"):
        for k, part in enumerate((np.real, np.imag)):
            g = part(got).astype(np.float64)
            r = part(ref).astype(np.float64)
            finite = np.isfinite(r) & np.isfinite(g)
            unit = np.spacing(np.maximum(np.abs(r), tiny).astype(real_dtype)).astype(np.float64)
            d = np.where(finite, np.abs(g - r) / unit, 0.0)
            same = (np.isnan(r) & np.isnan(g)) | (r == g)
            out[..., k] = np.where(finite, d, np.where(same, 0.0, np.inf))
    return out


def assert_ulps(got, ref, real_dtype, ulps, what=""):
    d = _ulp_distance(got, ref, real_dtype)
    worst = np.unravel_index(np.argmax(d), d.shape) if d.size else None
    if d.size and d[worst] > ulps:
        i = worst[:-1]
        raise AssertionError(f"{what}: {d[worst]:.3g} ulps > {ulps} at element {i}: got "
                             f"{np.asarray(got)[i]!r}, expected {np.asarray(ref)[i]!r}")


def test_pow_of_zero_base(to_device, to_host):
    """Issue 14 item 7: 0j ** (1 + 1j) was nan + nanj; NumPy gives 0 (|0^b| = 0^Re b)."""
    base = np.zeros(6, np.complex128)
    exponent = np.array([1 + 1j, 0.5 - 3j, 2, -1 + 1j, 1j, 0], np.complex128)
    with _quiet():
        expected = base ** exponent
    nan = complex(np.nan, np.nan)
    assert_same_values(expected, np.array([0, 0, 0, nan, nan, 1], np.complex128))
    assert_same_values(call("pow", to_device, to_host, base, exponent), expected)


_INF, _NAN = math.inf, math.nan
POW_BASES = np.array([complex(_INF, 0), complex(_INF, _INF), complex(-_INF, 0), complex(0, _INF),
                      complex(-_INF, 1), complex(_NAN, 1), complex(1, _NAN), complex(_INF, _NAN),
                      0j, complex(-0.0, 0), 1 + 2j, -3 + 0.5j, 1e300 + 1e300j, 1e-300 - 1e-300j],
                     np.complex128)
POW_EXPONENTS = [0, 1, 2, 3, 4, 5, -1, -2, -3, 7, 99, -99, 100, 0.5, 1 + 1j, 2 + 1e-300j, -0.5 + 0.5j]


@pytest.mark.parametrize("exponent", POW_EXPONENTS)
def test_pow_special_bases_match_numpy(exponent, backend_name, to_device, to_host):
    """Issue 14 item 7: complex infinities raised to powers gave NaN where NumPy does not
    (inf + 0j squared is inf + nanj there: its complex product, repeated for |n| < 100)."""
    b = np.full(POW_BASES.shape, exponent, np.complex128)
    with _quiet():
        expected = POW_BASES ** b
    got = call("pow", to_device, to_host, POW_BASES, b)
    if backend_name == "emulate":  # the same products in the same order, no fma contraction
        assert_same_values(got, expected)
    else:  # a GPU may fuse the products: the same infinities and NaNs, nearly the same values
        for part in (np.real, np.imag):
            assert np.array_equal(np.isnan(part(got)), np.isnan(part(expected)))
            assert np.array_equal(np.isinf(part(got)), np.isinf(part(expected)))
        finite = np.isfinite(expected)
        assert (np.abs(got[finite] - expected[finite]) <= 1e-12 * np.abs(expected[finite])).all()


def test_pow_zero_and_one_exponent_exact(to_device, to_host):
    a = np.concatenate([POW_BASES, np.array([complex(_NAN, _NAN), complex(-0.0, -0.0)])])
    for b in (np.zeros_like(a), np.ones_like(a)):  # 1 and a itself (0 for the zeros: NumPy's 0 ** b)
        with _quiet():
            expected = a**b
        assert_same_values(call("pow", to_device, to_host, a, b), expected)


def _cmath_ref(fn, z):
    return np.array([fn(complex(v)) for v in np.asarray(z).reshape(-1)]).reshape(np.shape(z))


def test_atanh_atan_of_huge_arguments(to_device, to_host):
    """Issue 14 item 7: atanh(1e30 + 1e-10j) and atan(1e-10 + 1e30j) lost their small part
    (log1p(z) - log1p(-z) cancels to 0)."""
    z = np.array([complex(1e30, 1e-10), complex(-1e30, 1e-10), complex(1e-10, 1e30),
                  complex(1.56e15, -1.19), complex(3.2e-12, 199.86), complex(6e94, 0.0),
                  complex(3.8e140, 7.5e28), complex(1e300, 1e300), complex(2.0**53, 1.0),
                  complex(1.0, 1e-300), complex(1.0, 0.0), complex(0.5, 1e-20)], np.complex128)
    got = call("atanh", to_device, to_host, z)
    finite = z != 1  # a pole: cmath raises
    assert_ulps(got[finite], _cmath_ref(cmath.atanh, z[finite]), np.float64, 4, "atanh vs cmath")
    with _quiet():
        assert_ulps(got, np.arctanh(z), np.float64, 4, "atanh vs numpy")
    w = z * 1j  # atan(z) = -i atanh(iz): the same values turned a quarter
    got = call("atan", to_device, to_host, w)
    assert_ulps(got[finite], _cmath_ref(cmath.atan, w[finite]), np.float64, 4, "atan vs cmath")
    with _quiet():
        assert_ulps(got, np.arctan(w), np.float64, 4, "atan vs numpy")
    z64 = np.array([complex(1e30, 1e-10), complex(1e-10, 1e30), complex(3e7, -2.0)], np.complex64)
    with _quiet():
        assert_ulps(call("atanh", to_device, to_host, z64), np.arctanh(z64), np.float32, 4, "atanh c64")
        assert_ulps(call("atan", to_device, to_host, z64), np.arctan(z64), np.float32, 4, "atan c64")


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_square_and_sign_of_huge_complex_values(dtype, to_device, to_host):
    """``square`` and ``sign`` of complex values whose parts are finite but whose sums or
    modulus overflow (``re + re``, ``re + im``, ``|z|``): no NaN and no spurious zero
    (``square(3.4e38+0j)`` was ``inf+nanj``, ``sign(1e308+1e308j)`` ``0+0j`` on the kernels);
    the imaginary part of ``square`` is ``2 re im`` correctly rounded, the real part 0 where
    ``|re| == |im|``, ``sign`` the unit ``z/|z|`` within 2 ulps; the kernels and ``cpu`` bit for
    bit. Random parts near the largest finite value, with small and equal ones among them."""
    rng = np.random.default_rng(61)
    real = np.dtype(dtype).type(0).real.dtype
    top = float(np.finfo(real).max)
    parts = np.concatenate([rng.uniform(0.25, 1.0, 40) * top, rng.uniform(-1, 1, 10),
                            [top, top / 2, np.nextafter(real.type(top / 2), real.type(top))]])
    parts = np.concatenate([parts, -parts]).astype(real)
    re = rng.choice(parts, 400)
    im = np.where(rng.random(400) < 0.2, re, rng.choice(parts, 400))
    im = np.where(rng.random(400) < 0.1, -re, im).astype(real)
    z = (re + 1j * im.astype(np.float64)).astype(dtype)
    assert np.array_equal(z.real, re) and np.array_equal(z.imag, im)
    for name in ("square", "sign"):
        got = call(name, to_device, to_host, z)
        on_cpu = np.asarray(getattr(xp, name)(xp.asarray(z, device="cpu")).to_device("cpu"))
        assert got.tobytes() == on_cpu.tobytes(), name
        assert not np.isnan(got).any(), (name, z[np.isnan(got)][:3])
    square = call("square", to_device, to_host, z)
    with _quiet():
        twice = np.array([_rounded(2 * Fraction(float(a)) * Fraction(float(b)))
                          for a, b in zip(re, im)])
        np.testing.assert_array_equal(square.imag, twice.astype(real))
    assert (square.real[np.abs(re) == np.abs(im)] == 0).all()
    sign = call("sign", to_device, to_host, z)
    with _quiet():
        unit = np.array([complex(Fraction(float(a)) / _exact_abs(a, b),
                                 Fraction(float(b)) / _exact_abs(a, b)) for a, b in zip(re, im)])
    assert_ulps(sign, unit.astype(dtype), real, 2, "sign vs z/|z|")


def _rounded(v: Fraction) -> float:
    """``v`` correctly rounded to float64, infinite past its range."""
    try:
        return float(v)
    except OverflowError:
        return math.inf if v > 0 else -math.inf


def _exact_abs(a, b) -> Fraction:
    """|a + bj| to 60 digits, as a Fraction."""
    with decimal.localcontext() as context:
        context.prec = 60
        return Fraction((decimal.Decimal(float(a)) ** 2 + decimal.Decimal(float(b)) ** 2).sqrt())


def test_exp_family_does_not_overflow_where_the_result_fits(to_device, to_host):
    """exp(709.9 + 1e-300j) is 1.8e308 + 1.8e8j, not inf + infj (glibc scales, so does NumPy)."""
    z = np.array([complex(709.9, 1e-300), complex(1000.0, 1e-300), complex(1200.0, -2e-250),
                  complex(-710.3, 3e-200), complex(745.0, 1.0), complex(710.0, 1.5707963267948966)],
                 np.complex128)
    for name, oracle in (("exp", np.exp), ("sinh", np.sinh), ("cosh", np.cosh)):
        with _quiet():
            assert_ulps(call(name, to_device, to_host, z), oracle(z), np.float64, 4, name)
    with _quiet():  # e^x cis(y) - 1 == e^x cis(y) there (NumPy's expm1 overflows: not the oracle)
        assert_ulps(call("expm1", to_device, to_host, z[z.real > 0]), np.exp(z[z.real > 0]),
                    np.float64, 4, "expm1")
    z64 = np.array([complex(88.5, 1e-30), complex(100.0, 1e-40)], np.complex64)
    with _quiet():
        assert_ulps(call("exp", to_device, to_host, z64), np.exp(z64), np.float32, 4, "exp c64")


# ---------------------------------------------------------------- exact / extra-precision oracles
def _log_of_fraction(q: Fraction) -> float:
    """log(q) for an exact positive rational, to about an ulp."""
    k = q.numerator.bit_length() - q.denominator.bit_length()
    m = q / Fraction(2) ** k  # in [1/2, 2]
    return math.log1p(float(m - 1)) + k * math.log(2) if abs(m - 1) < 0.5 else (
        math.log(float(m)) + k * math.log(2))


def log1p_oracle(z):
    """log(1 + z): the real part from |1 + z|^2 summed exactly (NumPy's log(hypot(1 + x, y))
    loses tiny and near-circle arguments), the angle from the correctly rounded 1 + x."""
    out = []
    for v in np.asarray(z, np.complex128).reshape(-1):
        x, y = float(v.real), float(v.imag)
        if not (math.isfinite(x) and math.isfinite(y)):
            out.append(complex(math.nan, math.nan))
            continue
        u = 2 * Fraction(x) + Fraction(x) ** 2 + Fraction(y) ** 2  # |1 + z|^2 - 1
        if u == -1:
            out.append(complex(-math.inf, math.atan2(y, float(1 + Fraction(x)))))
            continue
        re = 0.5 * math.log1p(float(u)) if abs(u) < 0.5 else 0.5 * _log_of_fraction(1 + u)
        out.append(complex(re, math.atan2(y, float(1 + Fraction(x)))))
    return np.array(out).reshape(np.shape(z))


def log_oracle(z):
    """log z: log|z| from |z|^2 summed exactly (near |z| = 1: log1p(|z|^2 - 1) / 2)."""
    out = []
    for v in np.asarray(z, np.complex128).reshape(-1):
        x, y = float(v.real), float(v.imag)
        if not (math.isfinite(x) and math.isfinite(y)) or x == y == 0:
            out.append(complex(np.log(v)))
            continue
        u = Fraction(x) ** 2 + Fraction(y) ** 2
        re = 0.5 * math.log1p(float(u - 1)) if abs(u - 1) < 0.5 else 0.5 * _log_of_fraction(u)
        out.append(complex(re, math.atan2(y, x)))
    return np.array(out).reshape(np.shape(z))


_DEC = decimal.Context(prec=70)


def _dec_series(v: decimal.Decimal, first: int, step: int, sign: int) -> decimal.Decimal:
    """sum over k of sign^k v^(first + step k) / (first + step k)!, to 70 digits of itself."""
    term = _DEC.divide(_DEC.power(v, first), math.factorial(first))
    total, n = term, first
    while not term.is_zero() and abs(term) >= _DEC.create_decimal("1e-75") * abs(total):
        term = _DEC.divide(_DEC.multiply(term, _DEC.power(v, step)), math.prod(range(n + 1, n + step + 1)))
        term = _DEC.multiply(term, sign)
        n += step
        total = _DEC.add(total, term)
    return total


def expm1_re_oracle(x: float, y: float) -> float:
    """e^x cos y - 1 = (e^x - 1) + (cos y - 1) + (e^x - 1)(cos y - 1), each part to 70 digits
    of itself (Taylor series; |x| < 12, |y| < 1.6), rounded once."""
    dx, dy = _DEC.create_decimal(x), _DEC.create_decimal(y)
    em1 = _dec_series(dx, 1, 1, 1) if abs(x) < 1 else _DEC.subtract(_DEC.exp(dx), 1)
    cm1 = _dec_series(dy, 2, 2, -1) if y else _DEC.create_decimal(0)
    cm1 = _DEC.minus(cm1)  # the series above is y^2/2! - y^4/4! + ...: cos y - 1 is its negative
    return float(_DEC.add(_DEC.add(em1, cm1), _DEC.multiply(em1, cm1)))


def test_log1p_keeps_tiny_and_near_circle_digits(to_device, to_host):
    """NumPy's complex log1p returns 0 + 1e-20j for log1p(1e-20 + 1e-20j); the kernel keeps the
    real part, and the digits of |1 + z|^2 - 1 where 2x ~ -y^2."""
    z = np.array([1e-20 + 1e-20j, -9.4e-93 + 0j, 8.7e-96 + 1.4e-204j, -1e-10 + 1.4142135623e-5j,
                  -0.2 + 0.6j, -1.6 + 0.8j, -1.8206636 - 0.57141167j, 1e-300 + 1e-300j,
                  -1 + 1e-10j, 3.0 + 4.0j, -0.5 + 0.0j, 1e20 - 1e20j], np.complex128)
    assert_ulps(call("log1p", to_device, to_host, z), log1p_oracle(z), np.float64, 4, "log1p")
    z64 = z.astype(np.complex64)
    assert_ulps(call("log1p", to_device, to_host, z64), log1p_oracle(z64).astype(np.complex64),
                np.float32, 4, "log1p c64")


def test_log_near_the_unit_circle(to_device, to_host):
    t = np.linspace(0.1, 3.0, 12)
    z = np.concatenate([np.cos(t) + 1j * np.sin(t), [0.6 + 0.8j, 0.98733133 + 0.15867212j,
                                                     0.35292235 + 0.9356526j, 1 + 1e-300j]])
    assert_ulps(call("log", to_device, to_host, z), log_oracle(z), np.float64, 4, "log")
    z64 = z.astype(np.complex64)
    assert_ulps(call("log", to_device, to_host, z64), log_oracle(z64).astype(np.complex64),
                np.float32, 4, "log c64")


def test_subnormal_and_huge_moduli(to_device, to_host):
    """|z| subnormal was rounded to a few bits (log2(5e-324 + 5e-324j) gave -1074, not
    -1073.5; acos(1 + 1.2e-43j) in complex64 was 1% off through sqrt(|z| / 2)), |z| beyond the
    largest float overflowed in log."""
    z = np.array([5e-324 + 5e-324j, 1e-310 + 3e-311j, 3e-320 - 1e-321j, 1.7e308 + 1.7e308j,
                  -1e308 - 1.5e308j], np.complex128)
    for name, oracle in (("log", np.log), ("log2", np.log2), ("log10", np.log10), ("sqrt", np.sqrt),
                         ("acos", np.arccos), ("asinh", np.arcsinh)):
        with _quiet():
            assert_ulps(call(name, to_device, to_host, z), oracle(z), np.float64, 4, name)
    z64 = np.array([1 + 1.16e-43j, 1e-45 + 1e-45j, 3e-41 - 2e-42j, 3e38 + 3e38j], np.complex64)
    for name, oracle in (("log", np.log), ("sqrt", np.sqrt), ("acos", np.arccos), ("asin", np.arcsin)):
        with _quiet():
            assert_ulps(call(name, to_device, to_host, z64), oracle(z64), np.float32, 4, name + " c64")


def test_expm1_real_part_where_it_cancels(to_device, to_host):
    """expm1(x + iy) for x near -log cos y: NumPy's expm1(x) cos y - 2 sin^2(y/2) gives 8.3e-17
    for 6.7e-17 at 0.09698 - 0.43332j, and 0 for -4.5e-19 at 0.0092189 - 0.13558j."""
    y = np.array([1e-6, -3e-4, 0.01, 0.13557708162766238, -0.43332001541684345, 0.9, 1.06114331781299,
                  1.4, 1.55])
    x = -np.log(np.cos(y)) * (1 + np.array([1e-12, -3e-9, 1e-14, 0, 0, 2e-13, -1e-15, 5e-14, 1e-12]))
    x[3], x[4] = 0.009218866855480262, 0.09697717075015971
    z = (x + 1j * y).astype(np.complex128)
    got = call("expm1", to_device, to_host, z)
    ref = np.array([complex(expm1_re_oracle(a, b), math.exp(a) * math.sin(b)) for a, b in zip(x, y)])
    assert_ulps(got, ref, np.float64, 4, "expm1")
    z64 = z.astype(np.complex64)
    ref64 = np.array([complex(expm1_re_oracle(float(v.real), float(v.imag)),
                              math.exp(float(v.real)) * math.sin(float(v.imag))) for v in z64])
    assert_ulps(call("expm1", to_device, to_host, z64), ref64.astype(np.complex64), np.float32, 4,
                "expm1 c64")


# ---------------------------------------------------------------- fuzzers
def _parts(max_exp: int):
    """Real values: signed magnitudes 10^(-max_exp .. max_exp), moderate values, 0, +-1."""
    magnitude = st.floats(-max_exp, max_exp).map(lambda e: 10.0**e)
    moderate = st.floats(0, 3)
    near_one = st.floats(-1e-6, 1e-6).map(lambda d: 1 + d)
    unsigned = st.one_of(magnitude, magnitude, moderate, near_one, st.sampled_from([0.0, 1.0]))
    return st.builds(lambda v, s: -v if s else v, unsigned, st.booleans())


@st.composite
def complex_arrays(draw, dtype):
    """1-d arrays of dtype: independent parts over the whole range, points near the unit
    circle, near |1 + z| = 1, and near the curve e^x cos y = 1."""
    max_exp = 300 if dtype == np.complex128 else 37
    n = draw(st.integers(1, 16))
    values = []
    for _ in range(n):
        kind = draw(st.sampled_from(["parts", "parts", "parts", "circle", "circle1", "expm1"]))
        if kind == "parts":
            values.append(complex(draw(_parts(max_exp)), draw(_parts(max_exp))))
            continue
        t = draw(st.floats(-math.pi, math.pi))
        r = 1 + draw(st.floats(-1, 1)) * 10.0 ** draw(st.floats(-17, -3))
        if kind == "circle":
            values.append(complex(r * math.cos(t), r * math.sin(t)))
        elif kind == "circle1":
            values.append(complex(r * math.cos(t) - 1, r * math.sin(t)))
        else:
            y = draw(st.floats(-1.55, 1.55))
            values.append(complex(-math.log(math.cos(y)) * (1 + draw(st.floats(-1e-6, 1e-6))), y))
    with _quiet():
        return np.array(values, np.complex128).astype(dtype)


# Oracle and tolerance (ulps of each part) per function. NumPy's functions are glibc's, within
# 2-4 ulps of the true values (checked against mpmath); the kernels' within 1-3 on the CPU.
MATH_ORACLES = {
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh,
    "atan": np.arctan, "atanh": np.arctanh, "cos": np.cos, "cosh": np.cosh, "exp": np.exp,
    "log": None, "log1p": None, "log10": np.log10, "log2": np.log2, "sin": np.sin,
    "sinh": np.sinh, "sqrt": np.sqrt, "tan": np.tan, "tanh": np.tanh, "expm1": None,
}
ULPS = 8


def _skip_poles(name, z):
    """Poles and branch points where the value is +-inf or NaN by convention: compared only as
    non-finite (the parts' infinities and NaNs may be placed differently)."""
    if name in ("atanh",):
        return (z.imag == 0) & (np.abs(z.real) == 1)
    if name in ("atan",):
        return (z.real == 0) & (np.abs(z.imag) == 1)
    return np.zeros(z.shape, bool)


def check_math(name, dtype, z, to_device, to_host):
    real = np.float64 if dtype == np.complex128 else np.float32
    got = call(name, to_device, to_host, z)
    with _quiet():
        if name == "log1p":
            ref = log1p_oracle(z).astype(dtype)
        elif name == "log":
            ref = log_oracle(z).astype(dtype)
        elif name == "expm1":
            check_expm1(z, got, real)
            return
        else:
            ref = MATH_ORACLES[name](z)
    poles = _skip_poles(name, z)
    assert not np.isfinite(got[poles]).any()
    assert_ulps(got[~poles], ref[~poles], real, ULPS, f"{name} {np.dtype(dtype).name}")


def check_expm1(z, got, real):
    """Where |x| < 12 and |y| < 1.6 (where e^x cos y - 1 can cancel): the 70-digit oracle, to
    ULPS ulps plus the working precision at the scale of the terms that cancel,
    S = |e^x - 1| + |cos y - 1| + |(e^x - 1)(cos y - 1)| (the kernel sums them in double-double
    for complex128, in double for complex64: 16 eps_double^2 S, 16 eps_double S). Elsewhere the
    real part at the scale of its terms, e^x |cos y| + 1 (NumPy's formula, which the kernel
    keeps there), and the imaginary part, e^x sin y, against exp (NumPy's expm1 overflows
    where exp and the kernel scale)."""
    zz = z.astype(np.complex128)
    with _quiet():
        exp_z = np.exp(zz)
    near = (np.abs(zz.real) < 12) & (np.abs(zz.imag) < 1.6)
    ref_re = np.where(near, 0.0, exp_z.real - 1)
    ref_re[near] = [expm1_re_oracle(float(v.real), float(v.imag)) for v in zz[near]]
    ref = (ref_re + 1j * exp_z.imag).astype(z.dtype)
    assert_ulps(got.imag, ref.imag, real, ULPS, f"expm1 {z.dtype.name} imaginary part")
    eps = np.finfo(np.float64).eps
    work = 16 * (eps * eps if z.dtype == np.complex128 else eps)
    with _quiet():
        em1, cm1 = np.abs(np.expm1(zz.real)), 2 * np.sin(zz.imag / 2) ** 2
        terms = em1 + cm1 + em1 * cm1
        err = np.abs(got.real.astype(np.float64) - ref.real.astype(np.float64))
        tiny = np.finfo(real).tiny
        allowed = ULPS * np.spacing(np.maximum(np.abs(ref.real), tiny)).astype(np.float64) + work * terms
        bad = near & ~(err <= allowed)
        assert not bad.any(), ("expm1 (|x| < 12, |y| < 1.6)", z[bad], got[bad], ref[bad])
        scale = (np.exp(zz.real) * np.abs(np.cos(zz.imag)) + 1).astype(real)
        far = ~near & np.isfinite(scale) & np.isfinite(ref.real)
        err = np.abs(got.real[far].astype(np.float64) - ref.real[far].astype(np.float64))
    assert (err <= ULPS * np.spacing(scale[far]).astype(np.float64)).all(), (z[far], got[far], ref[far])


MATH_CASES = [(name, dtype) for name in sorted(MATH_ORACLES) for dtype in (np.complex64, np.complex128)]


@pytest.mark.parametrize(("name", "dtype"), MATH_CASES)
@MATH_SHORT
@given(data=st.data())
def test_complex_math_matches_oracle_short(name, dtype, data, to_device, to_host):
    check_math(name, dtype, data.draw(complex_arrays(dtype), label="z"), to_device, to_host)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "dtype"), MATH_CASES)
@LONG
@given(data=st.data())
def test_complex_math_matches_oracle_long(name, dtype, data, to_device, to_host):
    check_math(name, dtype, data.draw(complex_arrays(dtype), label="z"), to_device, to_host)


@st.composite
def pow_cases(draw, dtype):
    a = draw(complex_arrays(dtype))
    kind = draw(st.sampled_from(["int", "real", "complex", "tiny"]))
    if kind == "int":
        b = complex(draw(st.integers(-99, 99)), 0)
    elif kind == "real":
        b = complex(draw(st.floats(-40, 40)), 0)
    elif kind == "complex":
        b = complex(draw(st.floats(-20, 20)), draw(st.floats(-20, 20)))
    else:
        b = complex(draw(_parts(5)), draw(_parts(5)))
    return a, np.full(a.shape, b, dtype)


def check_pow(dtype, case, to_device, to_host):
    """Normwise against NumPy, the tolerance scaled by the conditioning of exp(b log a):
    |w| = |b log a| ulps of the result, plus the |n| roundings of repeated multiplication."""
    a, b = case
    real = np.float64 if dtype == np.complex128 else np.float32
    eps = np.finfo(real).eps
    got = call("pow", to_device, to_host, a, b)
    with _quiet():
        expected = a ** b
        w = b.astype(np.complex128) * np.log(a.astype(np.complex128))
        limit = 690 if dtype == np.complex128 else 80  # far from overflow and underflow
        check = np.isfinite(w) & (np.abs(w.real) < limit) & (a != 0)
        bound = 16 * eps * (1 + np.abs(w) + np.abs(b)) * np.abs(expected) + 8 * np.finfo(real).tiny
        err = np.abs(got.astype(np.complex128) - expected)
        bad = check & ~(err <= bound)
    assert not bad.any(), (a[bad], b[bad], got[bad], expected[bad])


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@SHORT
@given(data=st.data())
def test_complex_pow_matches_numpy_short(dtype, data, to_device, to_host):
    check_pow(dtype, data.draw(pow_cases(dtype), label="a, b"), to_device, to_host)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@LONG
@given(data=st.data())
def test_complex_pow_matches_numpy_long(dtype, data, to_device, to_host):
    check_pow(dtype, data.draw(pow_cases(dtype), label="a, b"), to_device, to_host)
