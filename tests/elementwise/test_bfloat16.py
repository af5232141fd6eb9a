"""bfloat16 (ml_dtypes') through our kernels: casts to and from every dtype bit for bit (to
bfloat16 rounded once, against the tests' own oracle, tests/support/rounding.py), type
promotion, scalars, mixed dtypes, and the namespace's extension names.

Every elementwise function taking bfloat16 is checked on every layout class by
tests/elementwise/test_ops.py (its parametrization draws bfloat16 from the op table; the
oracle computes in float32 and rounds with ml_dtypes); ``test_every_float16_function_takes_
bfloat16`` below holds that list to float16's. Copies of bfloat16 layouts through every
rearrange plan are in tests/strided/test_bfloat16_copies.py; single rounding on every path
(tiled, fused, assignment, both devices) in tests/elementwise/test_rounding_once.py.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

import infini_cupy as xp  # noqa: E402
from infini_cupy import dtypes  # noqa: E402
from infini_cupy.elementwise import kernels as ek  # noqa: E402
from infini_cupy.elementwise.ops import CAST_FUNCTOR, OPS  # noqa: E402
from infini_cupy.namespace import elementwise_functions as F  # noqa: E402
from infini_cupy.runtime import launch  # noqa: E402
from tests.elementwise.test_ops import OP_DTYPES  # noqa: E402
from tests.support.elementwise_cases import assert_matches, oracle, prepare, random_array  # noqa: E402
from tests.support.rounding import BFLOAT16, round_once, round_once_array  # noqa: E402

if dtypes.BFLOAT16 is None:  # an ml_dtypes that rounds twice: infini_cupy leaves bfloat16 out
    pytest.skip(dtypes.BFLOAT16_HINT, allow_module_level=True)
BF16 = np.dtype(ml_dtypes.bfloat16)
OTHERS = [d for d in dtypes.ALL_DTYPES if d != BF16]
_prepared_casts = set()


def _prepare_casts(backend_name):
    """The casts to and from bfloat16 in one emulator library (one g++ run, not 58)."""
    if backend_name == "emulate" and not _prepared_casts:
        names = [n for n in ek.cast_variant_names() if "ic::bfloat16_t" in n]
        launch.prepare(ek.SOURCE, names, backend="emulate")
        _prepared_casts.add(True)


def _bits(a: np.ndarray) -> np.ndarray:
    """The raw bits of each element (complex: of each part), for exact comparisons."""
    a = np.ascontiguousarray(a)
    if a.dtype.kind == "c":
        a = a.view(np.float32 if a.dtype == np.complex64 else np.float64)
    if a.dtype == np.bool_:
        return a.view(np.uint8)
    return a.view(f"u{a.itemsize}")


# ---------------------------------------------------------------- casts
def _edge_floats32() -> np.ndarray:
    """float32 bit patterns where rounding to bfloat16 is decided: ties (even and odd), just
    above and below them, the top of the range, subnormals, infinities, NaN payloads."""
    highs = np.array([0x0000, 0x0001, 0x007f, 0x0080, 0x3f80, 0x3f81, 0x4049, 0x7f7e, 0x7f7f,
                      0x8000, 0x8001, 0xbf80, 0xff7f], np.uint32)
    lows = np.array([0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff], np.uint32)
    patterns = (highs[:, None] << 16 | lows[None, :]).ravel()
    specials = np.array([0x7f800000, 0xff800000, 0x7f800001, 0xff800001, 0x7fc00000, 0xffc00000,
                         0x7fffffff, 0xffffffff, 0x7fa00000, 0x00400000, 0x80000001], np.uint32)
    return np.concatenate([patterns, specials]).view(np.float32)


def _sources(dtype, rng) -> np.ndarray:
    """Values of ``dtype`` covering every way a cast to bfloat16 can round."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return np.array([False, True, True, False])
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if dt.itemsize <= 2:
            return np.arange(info.min, info.max + 1, dtype=dt)
        edges = [0, 1, 255, 256, 257, 258, 259, 2**24 + 1, 2**32 + 2**24 + 1, 2**32 + 2**24,
                 2**62 + 2**54 + 1, info.max, info.max - 1]
        edges = [v for v in edges if v <= info.max]
        edges += [-v for v in edges if dt.kind == "i"] + ([info.min] if dt.kind == "i" else [])
        return np.concatenate([np.array(edges, dt),
                               rng.integers(info.min, info.max, 4000, dtype=dt, endpoint=True)])
    if dt == np.float16:
        return np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    if dt == np.float32:
        return np.concatenate([_edge_floats32(),
                               rng.integers(0, 2**32, 4000, dtype=np.uint32).view(np.float32)])
    if dt == np.float64:
        # Exactly representable floats and ties between bfloat16 values, nudged by less than
        # float32 can hold: a detour through float32 would round these twice.
        with np.errstate(invalid="ignore"):
            f32 = _edge_floats32().astype(np.float64)
        nudges = np.array([2.0**-30, -(2.0**-30), 2.0**-40])
        twice = (f32[np.isfinite(f32)][:, None] * (1 + nudges[None, :])).ravel()
        rand_bits = rng.integers(0, 2**64, 2000, dtype=np.uint64).view(np.float64)
        rand_mid = rng.standard_normal(2000) * 10.0 ** rng.integers(-45, 39, 2000)
        return np.concatenate([f32, twice, [1 + 2**-8 + 2**-30, 3.4028235677973366e38,
                                            3.39e38, 1e-45, 1e-46],
                               rand_bits, rand_mid])
    if dt.kind == "c":
        real = _sources(np.float32 if dt == np.complex64 else np.float64, rng)
        imag = rng.permutation(real)
        return _complex(real, imag, dt)
    if dtypes.is_bfloat16(dt):
        return np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(BF16)
    raise AssertionError(dt)


def _complex(real, imag, dtype):
    out = np.empty(real.shape, dtype)  # set part by part: real + 1j * imag would make NaNs
    out.real, out.imag = real, imag
    return out


@pytest.mark.parametrize("src", [str(d) for d in OTHERS])
def test_cast_to_bfloat16_rounds_once(src, backend_name, to_device, to_host):
    """Every value rounds once, to nearest even (ties to even; NaN the quiet NaN with its
    sign), on a contiguous and a strided layout: the tests' own oracle decides, and ml_dtypes
    (>= 0.7, the first that rounds once) agrees."""
    _prepare_casts(backend_name)
    x = _sources(src, np.random.default_rng(len(src)))
    expected = round_once_array(x, BFLOAT16)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)  # complex: the real part
        np.testing.assert_array_equal(_bits(x.astype(BF16)), expected, err_msg="ml_dtypes")
    got = to_host(xp.astype(to_device(x), xp.bfloat16))
    assert got.dtype == BF16
    np.testing.assert_array_equal(_bits(got), expected, err_msg=f"{src} -> bfloat16")
    def reversed_transposed(a):
        return a[: a.size - a.size % 2].reshape(2, -1)[:, ::-1].T

    got = to_host(xp.astype(to_device(reversed_transposed(x)), xp.bfloat16))
    np.testing.assert_array_equal(_bits(got), reversed_transposed(expected))


def test_float64_and_64_bit_integers_round_once():
    """1 + 2**-8 + 2**-30 is above the tie between 1 and 1 + 2**-7, so it becomes 1 + 2**-7;
    through float32 it would become 1 + 2**-8, a tie, then 1.0. The same for an int64 above a
    tie by less than float32's step (2**32 + 2**24 + 1)."""
    x = np.array([1 + 2**-8 + 2**-30], np.float64)
    big = np.array([2**32 + 2**24 + 1], np.int64)
    assert round_once(float(x[0]), BFLOAT16) == 0x3F81
    assert round_once(int(big[0]), BFLOAT16) == 0x4F81
    with xp.backend("emulate"):
        _prepare_casts("emulate")
        assert xp.astype(x, xp.bfloat16).view(np.uint16)[0] == 0x3F81
        assert xp.astype(big, xp.bfloat16).view(np.uint16)[0] == 0x4F81
    for device in ("cpu", "emulator"):
        for source, bits in ((x, 0x3F81), (big, 0x4F81)):
            got = xp.astype(xp.asarray(source, device=device), xp.bfloat16).to_device("cpu")
            assert np.asarray(got).view(np.uint16)[0] == bits, device


@pytest.mark.parametrize("dst", [str(d) for d in OTHERS])
def test_cast_from_bfloat16_is_ml_dtypes(dst, backend_name, to_device, to_host):
    """All 65536 bfloat16 values: floats bit for bit (NaN payloads too: to float32 they are
    shifted bits, to float16 the quiet NaN 0x7e00 with its sign, as ml_dtypes; to float64 the
    payload is what the hardware's float32 -> float64 conversion keeps, so only NaN and sign
    are compared on a GPU); integers exact where the value fits, and elsewhere (NaN, inf, out
    of range: undefined in C++) the same as our cast of the equal float32."""
    _prepare_casts(backend_name)
    x = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(BF16)
    dt = np.dtype(dst)
    with np.errstate(all="ignore"):
        expected = x.astype(dt)
    got = to_host(xp.astype(to_device(x), dt))
    assert got.dtype == dt
    if dt.kind in "iu":
        f = x.astype(np.float32)
        info = np.iinfo(dt)
        fits = np.isfinite(f) & (f >= info.min) & (f < float(info.max) + 1)
        np.testing.assert_array_equal(got[fits], expected[fits])
        same_as_float32 = to_host(xp.astype(to_device(f), dt))
        np.testing.assert_array_equal(got, same_as_float32)
        return
    if dt in (np.float64, np.complex128) and backend_name != "emulate":
        nan = np.isnan(expected)
        np.testing.assert_array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(expected.real))
        np.testing.assert_array_equal(_bits(got[~nan]), _bits(expected[~nan]))
        return
    np.testing.assert_array_equal(_bits(got), _bits(expected), err_msg=f"bfloat16 -> {dst}")


def test_cast_bfloat16_to_itself_is_a_byte_copy(backend_name, to_device, to_host):
    x = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(BF16).reshape(256, 256)
    got = to_host(xp.astype(to_device(x.T), xp.bfloat16))  # NaN payloads survive
    np.testing.assert_array_equal(got.view(np.uint16), x.T.view(np.uint16))
    y = to_device(x)
    assert xp.astype(y, xp.bfloat16, copy=False) is y


# ---------------------------------------------------------------- promotion and scalars
PROMOTED = {  # bfloat16 with ... -> (float16's rules, float16 with bfloat16 -> float32)
    "bool": "bfloat16", "int8": "bfloat16", "uint8": "bfloat16", "int16": "float32",
    "uint16": "float32", "int32": "float64", "uint32": "float64", "int64": "float64",
    "uint64": "float64", "float16": "float32", "bfloat16": "bfloat16", "float32": "float32",
    "float64": "float64", "complex64": "complex64", "complex128": "complex128",
}


@pytest.mark.parametrize("other", list(PROMOTED))
def test_promotion_follows_float16(other):
    other_dt = np.dtype(other) if other != "bfloat16" else BF16
    expected = np.dtype(PROMOTED[other]) if PROMOTED[other] != "bfloat16" else BF16
    assert dtypes.result_type(BF16, other_dt) == dtypes.result_type(other_dt, BF16) == expected
    assert xp.result_type(xp.bfloat16, other_dt) == expected
    if other_dt.kind in "biu":  # as float16 does, but for the 16-bit type itself
        as_half = np.result_type(np.float16, other_dt)
        assert expected == (BF16 if as_half == np.float16 else as_half)


def test_python_scalars_are_weak():
    assert dtypes.result_type(BF16, 1) == dtypes.result_type(BF16, 1.5) == BF16
    assert dtypes.result_type(BF16, True) == BF16
    assert dtypes.result_type(BF16, 1j) == np.complex64
    assert dtypes.result_type(1.5, np.zeros(2, BF16)) == BF16


def test_scalar_operands_round_to_bfloat16_first(backend_name, to_device, to_host):
    """A Python scalar becomes a bfloat16 (rounded once) before the kernel computes: 0.1 is
    0.10009765625 there, 1 + 2**-8 + 2**-30 is 1 + 2**-7, an int past 2**53 rounds from all its
    bits. Twice: the short path's answer too."""
    prepare(backend_name, "add", "multiply")
    x = random_array("add", BF16, (3, 40), np.random.default_rng(2))
    for scalar in (0.1, 1 + 2**-8 + 2**-30, 3, -7.25e30, 1e39, 2**60 + 2**52 + 1):
        for op in ("add", "multiply"):
            with np.errstate(all="ignore"):
                s = np.uint16(round_once(scalar, BFLOAT16)).view(BF16).astype(np.float32)
                expected = getattr(np, op)(x.astype(np.float32), s).astype(BF16)
            for _ in range(2):
                got = to_host(getattr(F, op)(to_device(x), scalar))
                assert_matches(op, got, expected, BF16, f"with scalar {scalar}")
            got = to_host(getattr(F, op)(scalar, to_device(x)))
            assert_matches(op, got, expected, BF16, f"scalar {scalar} first")


MIXED = ["bool", "int8", "uint8", "int16", "int32", "uint64", "float16", "float32", "float64",
         "complex64"]


@pytest.mark.parametrize("op_name,other", [
    (name, other) for name in ("add", "multiply", "divide", "less", "maximum", "equal")
    for other in MIXED if dtypes.is_in(other, OPS[name].group)])
def test_mixed_dtypes_promote(op_name, other, backend_name, to_device, to_host):
    prepare(backend_name, op_name, "cast")
    rng = np.random.default_rng(11)
    a = random_array(op_name, BF16, (3, 4), rng)
    b = random_array(op_name, other, (4,), rng)
    for x, y in ((a, b), (b, a)):
        expected = oracle(op_name, x, y)
        got = to_host(getattr(F, op_name)(to_device(x), to_device(y)))
        assert_matches(op_name, got, expected, dtypes.result_type(x, y), f"bfloat16 with {other}")


def test_nextafter_steps_by_one_bfloat16():
    a = np.array([0.0, -0.0, 0.0, 1.0, 1.0, np.nan, -1.0, np.inf, 3.3895314e38, 0.0, 2.0], BF16)
    b = np.array([-0.0, 0.0, 1.0, 2.0, 1.0, 1.0, -2.0, 0.0, np.inf, -1.0, np.nan], BF16)
    with xp.backend("emulate"):
        prepare("emulate", "nextafter")
        got = xp.nextafter(a, b)
    assert [hex(v) for v in got.view(np.uint16)] == [
        "0x8000", "0x0", "0x1", "0x3f81", "0x3f80", "0x7fc0", "0xbf81", "0x7f7f", "0x7f80",
        "0x8001", "0x7fc0"]
    np.testing.assert_array_equal(got.view(np.uint16), np.nextafter(a, b).view(np.uint16))


def test_every_float16_function_takes_bfloat16():
    """bfloat16 goes wherever float16 goes, so test_ops checks it on every layout class."""
    half = {name for name, dt in OP_DTYPES if dt == "float16"}
    bf16 = {name for name, dt in OP_DTYPES if dt == "bfloat16"}
    assert half == bf16 and len(bf16) >= 45
    for name in bf16:
        variants = ek.op_variant_names(name)
        # contiguous, 2 and 3 dims, the tiled one per input and the tiled output's
        assert sum("ic::bfloat16_t" in v for v in variants) == 4 + OPS[name].arity, name
    casts = [n for n in ek.cast_variant_names() if "ic::bfloat16_t" in n]
    assert len(casts) == 4 * (2 * len(OTHERS) + 1)  # contiguous, 3 dims, tiled in and out
    assert f"ew_contig<{CAST_FUNCTOR}, double, ic::bfloat16_t>" in casts


def test_type_errors_for_bfloat16():
    x = np.zeros(3, BF16)
    with xp.backend("emulate"):
        with pytest.raises(TypeError, match=r"bitwise_and\(\) does not take bfloat16 and bfloat16"):
            xp.bitwise_and(x, x)
        with pytest.raises(TypeError, match="bfloat16"):
            xp.bitwise_invert(x)


# ---------------------------------------------------------------- namespace
def test_namespace_exposes_the_extensions():
    assert xp.bfloat16 == BF16 and xp.float16 == np.float16
    assert "bfloat16" in xp.__all__ and "float16" in xp.__all__
    info = xp.__array_namespace_info__()
    assert "bfloat16" not in info.dtypes() and "float16" not in info.dtypes()
    assert "bfloat16" not in info.dtypes(kind="real floating")
    assert info.dtypes(kind="extended") == {"float16": np.dtype(np.float16), "bfloat16": BF16}
    assert info.dtypes(kind="bfloat16") == {"bfloat16": BF16}
    assert set(info.dtypes(kind=("real floating", "extended"))) == {
        "float32", "float64", "float16", "bfloat16"}
    assert BF16 not in dtypes.STANDARD_DTYPES and dtypes.category(BF16) == "real floating"
    assert dtypes.ctype(BF16) == "ic::bfloat16_t"
    assert xp.isdtype(xp.bfloat16, "real floating") and xp.isdtype(xp.bfloat16, "numeric")
    assert not xp.isdtype(xp.bfloat16, "integral") and xp.isdtype(xp.bfloat16, xp.bfloat16)
    assert xp.finfo(xp.bfloat16).eps == 2.0**-7 and xp.finfo(np.zeros(1, BF16)).bits == 16
    assert xp.finfo(xp.float32).eps == np.finfo(np.float32).eps  # still delegated


def test_without_ml_dtypes_bfloat16_is_absent_with_a_hint():
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import numpy as np, infini_cupy as xp\n"
        "from infini_cupy import dtypes\n"
        "assert dtypes.BFLOAT16 is None and len(dtypes.ALL_DTYPES) == 14\n"
        "assert xp.float16 == np.float16 and 'bfloat16' not in xp.__all__\n"
        "assert list(xp.__array_namespace_info__().dtypes(kind='extended')) == ['float16']\n"
        "try:\n    xp.bfloat16\nexcept AttributeError as e:\n    print(e)\n"
        "with xp.backend('emulate'):\n"
        "    assert xp.rearrange(np.arange(6.0).reshape(2, 3).T).shape == (3, 2)\n"
    )
    assert "pip install 'ml_dtypes>=0.7'" in _printed_by(code)


def _printed_by(code: str) -> str:
    """What ``code`` prints in a fresh interpreter (which must exit cleanly)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_an_ml_dtypes_that_rounds_twice_leaves_bfloat16_out():
    """ml_dtypes before 0.7 rounds float64 to bfloat16 through float32: the `cpu` device would
    give other bits than the kernels, so bfloat16 is left out, the hint naming the version;
    every extra that lists ml_dtypes asks for 0.7 or later."""
    code = (
        "import ml_dtypes; ml_dtypes.__version__ = '0.6.0'\n"
        "import infini_cupy as xp\n"
        "from infini_cupy import dtypes\n"
        "assert dtypes.BFLOAT16 is None and 'bfloat16' not in xp.__all__\n"
        "try:\n    xp.bfloat16\nexcept AttributeError as e:\n    print(e)\n"
    )
    assert "ml_dtypes >= 0.7 (installed: 0.6.0" in _printed_by(code)
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    extras = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    listed = [req for reqs in extras["project"]["optional-dependencies"].values()
              for req in reqs if req.startswith("ml_dtypes")]
    assert listed and all(req == "ml_dtypes>=0.7" for req in listed), listed

def test_bfloat16_on_cupy_with_an_older_numpy_names_the_version(monkeypatch):
    """CuPy takes ml_dtypes' bfloat16 only with NumPy >= 2.1.2; before, it says "Unsupported
    dtype". Ours says which NumPy it found and what to install, before CuPy is asked; the
    bfloat16 extra requires that NumPy."""
    from infini_cupy import arrays

    monkeypatch.setattr(np, "__version__", "2.0.1")
    with pytest.raises(TypeError, match=r"NumPy >= 2\.1\.2 .*this NumPy is 2\.0\.1"):
        arrays.empty("cuda", (3,), xp.bfloat16)
    dtypes.check_bfloat16_on_cupy(np.dtype(np.float16))  # only bfloat16 is refused
    monkeypatch.setattr(np, "__version__", "2.1.2")
    dtypes.check_bfloat16_on_cupy(xp.bfloat16)
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    extras = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert "numpy>=2.1.2" in extras["project"]["optional-dependencies"]["bfloat16"]
