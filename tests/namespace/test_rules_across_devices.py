"""One set of rules on every device: each elementwise function, over every dtype pair and each
Python scalar kind, ends the same way on ``cpu`` (NumPy computes) and on ``emulator`` (our
kernels; with ``--backend cuda-standin-launches`` every launch goes through the cuda launcher):
accepted or refused, the exception class, the result dtype, and the values on a sample
(bfloat16 included): their bits where a rule fixes them (integers, and real functions exact or
correctly rounded on both devices by the accuracy table), within a tolerance elsewhere.

Acceptance uses empty arrays, which decide it without compiling or launching a kernel. The
resolver (``elementwise.resolution``) is checked against NumPy's own answers for the same
signatures, apart from its documented choices.
"""

from __future__ import annotations

import contextlib
import warnings
import zlib

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import dtypes
from infini_cupy.elementwise import resolution
from infini_cupy.elementwise.ops import OPS
from infini_cupy.runtime.emulate import launcher as emulate_launcher
from tests.support.accuracy_table import column as accuracy_column
from tests.support.accuracy_table import table as accuracy_table

DEVICES = ("cpu", "emulator")
ACCURACY = accuracy_table()["functions"]
SCALARS = (True, 1, 1.0, 1j, -1, 300)  # -1 and 300: out of some integer ranges
NAMES = sorted(n for n in OPS if n != "clip")


def signatures(name, dts=dtypes.ALL_DTYPES, scalars=SCALARS):
    """Every operand combination: dtypes for arrays, Python scalars as themselves."""
    if OPS[name].arity == 1:
        return [(d,) for d in dts]
    return ([(a, b) for a in dts for b in dts] + [(a, s) for a in dts for s in scalars]
            + [(s, a) for a in dts for s in scalars])


def outcome(name, sig, device, make):
    args = [make(d, device) if isinstance(d, np.dtype) else d for d in sig]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # every device is silent
            result = getattr(xp, name)(*args)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e), None
    return "ok", result


def empty(dtype, device):
    return xp.asarray(np.empty(0, dtype), device=device)


def described(o):
    kind, result = o
    return (kind, None if result is None else str(result.dtype))


@pytest.mark.parametrize("name", NAMES)
def test_every_signature_ends_the_same_on_every_device(name):
    disagreements = []
    for sig in signatures(name):
        ends = [described(outcome(name, sig, device, empty)) for device in DEVICES]
        try:
            loop = resolution.resolve(name, tuple(map(resolution.operand_type, sig)))
            expected = ("ok", str(loop.result))
        except TypeError:
            expected = (TypeError, None)
        if ends[0] == (OverflowError, None) and expected[0] == "ok":
            expected = ends[0]  # a Python int out of the loop's integer range, as NumPy
            assert loop.dtype.kind in "iu" and set(sig) & {-1, 300}, (sig, ends)
        if any(e != expected for e in ends):
            disagreements.append((sig, expected, ends))
    assert not disagreements, f"{len(disagreements)} disagreements, e.g. {disagreements[:3]}"


def _numpy_answer(name, sig):
    """NumPy's own result dtype for the signature (None: NumPy refuses it)."""
    op = OPS[name]
    function = {"round": np.round, "real": np.real, "imag": np.imag}.get(
        name, getattr(np, op.numpy_name))
    args = [np.empty(0, d) if isinstance(d, np.dtype) else d for d in sig]
    try:
        with np.errstate(all="ignore"):
            return np.asarray(function(*args)).dtype
    except TypeError:
        return None
    except OverflowError:  # a value out of the loop's range: the types resolved
        return "overflow"


PLAIN = tuple(d for d in dtypes.ALL_DTYPES if not dtypes.is_bfloat16(d))


@pytest.mark.parametrize("name", NAMES)
def test_resolver_agrees_with_numpy(name):
    wrong = []
    for sig in signatures(name, PLAIN):
        numpy = _numpy_answer(name, sig)
        try:
            ours = resolution.resolve(name, tuple(map(resolution.operand_type, sig))).result
        except TypeError:
            ours = None
        if ours != numpy and not (numpy == "overflow" and ours is not None):
            wrong.append((sig, numpy, ours))
    if name == "round":  # np.round keeps bool for bool; the ufunc rint (CuPy's) gives float16
        wrong = [w for w in wrong if w[0] != (np.dtype(bool),)]
    assert not wrong, f"{len(wrong)} differ from NumPy, e.g. {wrong[:3]}"


def test_bfloat16_resolves_as_float16():
    bf16 = dtypes.BFLOAT16
    if bf16 is None:
        pytest.skip("needs ml_dtypes")
    half, f32 = np.dtype(np.float16), np.dtype(np.float32)
    assert resolution.resolve("sqrt", (bf16,)).result == bf16
    assert resolution.resolve("add", (bf16, np.dtype(np.int8))).result == bf16
    assert resolution.resolve("add", (bf16, np.dtype(np.bool_))).result == bf16
    assert resolution.resolve("add", (bf16, half)).result == f32
    assert resolution.resolve("add", (bf16, np.dtype(np.int16))).result == f32
    assert resolution.resolve("less", (bf16, "float")) == (bf16, np.dtype(np.bool_))
    # result_type answers from the same rules
    for other in PLAIN:
        try:
            loop = resolution.resolve("add", (bf16, other))
        except TypeError:
            continue
        assert xp.result_type(bf16, other) == loop.result, other


@pytest.mark.parametrize("a", PLAIN)
@pytest.mark.parametrize("b", PLAIN)
def test_result_type_is_the_functions_promotion(a, b):
    """``result_type`` promises what ``add``/``equal`` resolve their operands to."""
    assert xp.result_type(a, b) == resolution.resolve("equal", (a, b)).dtype


# ---- values on a sample: small arrays, the dtypes of each kind
SAMPLE = tuple(np.dtype(d) for d in ("bool", "int8", "uint8", "float16", "float32", "complex64")
               ) + ((dtypes.BFLOAT16,) if dtypes.BFLOAT16 is not None else ())


def _sample_array(dtype, device):
    rng = np.random.default_rng(zlib.crc32(dtype.str.encode()))
    values = rng.integers(-3, 4, 6) if dtype.kind in "iub" else rng.normal(0, 2, 6)
    if dtype.kind == "u":
        values = np.abs(values)
    host = values.astype(dtype)
    if dtype.kind == "c":
        host = host + 1j * rng.normal(0, 2, 6).astype(dtype)
    return xp.asarray(host, device=device)


def _rounded_once_on_both(name, dtype) -> bool:
    """Whether the accuracy table (docs/user/accuracy.json, measured by
    tests/elementwise/test_accuracy.py) has ``name`` exact or correctly rounded on both
    devices for the precision ``dtype`` computes in (``cpu``: the column of the loops NumPy
    runs on this CPU; none where the table has none): then both give the same bits."""
    entry = ACCURACY.get(name)
    width = "float64" if dtype == np.float64 else "float32"  # float16/bfloat16 via float32
    columns = [accuracy_column(d) for d in DEVICES]  # None: NumPy's loops here not measured
    return (entry is not None and None not in columns
            and all(entry[c][width] in ("exact", "cr") for c in columns))


def _close(a, b, dtype, name, real_inputs=True):
    """Bits where a rule fixes them (integers, bools, real results rounded once on both
    devices, signed zeros included); within a tolerance where the libraries' ulps differ."""
    a, b = np.asarray(a), np.asarray(b)
    if dtype.kind in "biu":
        return np.array_equal(a, b)
    if real_inputs and dtype.kind != "c" and _rounded_once_on_both(name, dtype):
        return bool(_same_bits(a, b).all())
    tol = 2e-3 if dtype.itemsize <= 2 or dtype == np.complex64 or dtype == np.float32 else 1e-9
    return np.allclose(a.astype(np.complex128), b.astype(np.complex128), rtol=tol, atol=tol,
                       equal_nan=True)


def _sample_names():
    """Every kernel the value checks launch, prepared in one emulator build."""
    from infini_cupy.elementwise import kernels

    names = set()
    for name in NAMES:
        for sig in signatures(name, SAMPLE):
            try:
                loop = resolution.resolve(name, tuple(map(resolution.operand_type, sig)))
            except TypeError:
                continue
            op = OPS[name]
            names.add(kernels.contig_name(op.functor, dtypes.ctype(loop.result),
                                          dtypes.ctype(loop.dtype)))
            for d in sig:
                if isinstance(d, np.dtype) and d != loop.dtype:
                    names.add(kernels.contig_name("ic::OpPositive", dtypes.ctype(loop.dtype),
                                                  dtypes.ctype(d)))
    return sorted(names)


@pytest.fixture(scope="module")
def sample_kernels():
    emulate_launcher.prepare("elementwise.cu", _sample_names())


@pytest.mark.parametrize("name", NAMES)
def test_values_agree_on_a_sample(name, sample_kernels, to_host):
    for sig in signatures(name, SAMPLE):
        ends = [outcome(name, sig, device, _sample_array) for device in DEVICES]
        (kind_cpu, cpu), (kind_emu, emu) = ends
        assert kind_cpu == kind_emu, (sig, ends)
        if cpu is None:
            continue
        assert cpu.dtype == emu.dtype, sig
        real = not any(isinstance(d, complex) or getattr(d, "kind", "") == "c" for d in sig)
        assert _close(to_host(cpu), to_host(emu), np.dtype(cpu.dtype), name, real), (
            sig, to_host(cpu), to_host(emu))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ("int8", "int64", "uint8"))
def test_integer_pow_with_negative_exponents_gives_the_kernels_answer(device, dtype, to_host):
    """0 (1 and -1 for bases 1 and -1), for array and scalar exponents: no error, so no
    host synchronization on a GPU."""
    base = np.array([-3, -2, -1, 0, 1, 2, 3, 5]).astype(dtype)
    exponent = np.array([-1, -2, -3, -1, -4, -1, 2, 0]).astype(np.int8)
    if dtype == "uint8":
        exponent = np.abs(exponent).astype(np.uint8)
    x, e = (xp.asarray(a, device=device) for a in (base, exponent))
    wide_b, wide_e = base.astype(np.int64), exponent.astype(np.int64)
    expected = np.where(wide_e >= 0, wide_b ** np.maximum(wide_e, 0),
                        np.where(wide_b == 1, 1, np.where(wide_b == -1, 1 - 2 * (wide_e & 1), 0)))
    got = to_host(xp.pow(x, e))
    assert got.dtype == np.result_type(base, exponent)
    assert np.array_equal(got, expected.astype(got.dtype))
    if dtype != "uint8":
        assert np.array_equal(to_host(xp.pow(x, -1)),
                              np.where(wide_b == 1, 1, np.where(wide_b == -1, -1, 0)))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
def test_pow_with_a_scalar_half_is_the_standard_s_pow(device, dtype, to_host):
    """``x ** 0.5`` at ``-inf`` is ``+inf`` and at ``-0`` is ``+0`` (the standard's pow;
    NumPy takes the square root for a scalar 0.5: NaN and -0), whatever form the exponent
    takes; the oracle is NumPy's pow with an array of exponents."""
    rng = np.random.default_rng(45)
    h = rng.choice(np.array([-np.inf, -0.0, 0.0, np.inf, np.nan, 2.25, -4.0], dtype), 40)
    with np.errstate(invalid="ignore"):  # -4 ** 0.5
        expected = np.power(h, np.full(h.shape, 0.5, dtype))
    x = xp.asarray(h, device=device)
    out = xp.empty_like(x)
    for got in (xp.pow(x, 0.5), x ** 0.5, xp.pow(x, xp.asarray(0.5, dtype=x.dtype, device=device)),
                xp.pow(x, 0.5, out=out)):
        got = to_host(got)
        assert got.dtype == h.dtype
        np.testing.assert_array_equal(got.view(f"u{h.itemsize}"), expected.view(f"u{h.itemsize}"))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ("maximum", "minimum"))
def test_extrema_of_floats_and_bools_with_zeros_in_both(device, name, to_host):
    """A bool operand beside floats: zeros of both (``-0.0`` and ``False``) ordered as the
    kernels order them, with no NumPy error for a negated bool on ``cpu``."""
    rng = np.random.default_rng(44)
    h = rng.choice(np.array([0.0, -0.0, 1.5, -2.0], np.float16), 30)
    mask = rng.random(30) > 0.5
    expected = getattr(np, name)(h, mask.astype(np.float16))
    if name == "maximum":  # -0 below +0: maximum(-0, False) is +0, minimum's -0
        expected = np.where((h == 0) & ~mask, np.float16(0.0), expected)
    else:
        expected = np.where((h == 0) & ~mask, h, expected)
    for args in ((h, mask), (mask, h)):
        got = to_host(getattr(xp, name)(*(xp.asarray(a, device=device) for a in args)))
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got.view(np.uint16), expected.view(np.uint16))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ("maximum", "minimum"))
@pytest.mark.parametrize("scalar", (-1e-300, 1e-300, -0.0))
def test_extrema_with_a_scalar_that_rounds_to_zero(device, name, scalar, to_host):
    """A Python float that is a zero in float32 (``-1e-300`` is ``-0``) orders against
    zeros as a zero does: ``maximum(+0, -0)`` is ``+0``, ``minimum`` gives ``-0``."""
    h = np.array([0.0, -0.0, 1.0, -1.0], np.float32)
    zero = np.float32(scalar)  # the scalar as the float32 loop holds it
    for args, host_args in (((xp.asarray(h, device=device), scalar), (h, zero)),
                            ((scalar, xp.asarray(h, device=device)), (zero, h))):
        got = to_host(getattr(xp, name)(*args))
        a, b = np.broadcast_arrays(*(np.asarray(v, np.float32) for v in host_args))
        both_zero = (a == 0) & (b == 0)
        pick = np.signbit(a) | np.signbit(b) if name == "minimum" else np.signbit(a) & np.signbit(b)
        expected = np.where(both_zero, np.where(pick, np.float32(-0.0), np.float32(0.0)),
                            getattr(np, name)(a, b))
        np.testing.assert_array_equal(got.view(np.uint32), expected.view(np.uint32))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
@pytest.mark.parametrize("scalar", (0.0, 0, False))
@pytest.mark.parametrize("shape", ((), (64,)))
def test_maximum_with_a_positive_zero_scalar(device, dtype, scalar, shape, to_host):
    """A ReLU, ``maximum(x, 0.0)`` either way round, on random values with both zeros, NaN
    and infinities: ``+0`` wherever ``x`` is a zero (``+0`` above ``-0``), NumPy's answer
    elsewhere; a 0-d ``x`` too."""
    rng = np.random.default_rng(45)
    values = rng.choice(np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.5, -2.5, 3e-5]), 64)
    h = (values * rng.random(64)).astype(dtype)[:shape[0] if shape else 1].reshape(shape)
    expected = np.maximum(h, np.zeros((), dtype))
    expected = np.where(h == 0, np.zeros((), dtype), expected)
    bits = f"u{h.itemsize}"
    for args in ((xp.asarray(h, device=device), scalar), (scalar, xp.asarray(h, device=device))):
        got = np.asarray(to_host(xp.maximum(*args)))
        assert got.dtype == h.dtype and got.shape == h.shape
        nan = np.isnan(expected)
        assert np.array_equal(np.isnan(got), nan)
        np.testing.assert_array_equal(got[~nan].view(bits), expected[~nan].view(bits))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ("int8", "int16", "int32", "int64", "uint32", "uint64"))
def test_integer_reciprocal_is_truncated_and_zero_at_zero(device, dtype, to_host):
    """``1 / x`` toward zero, 0 at 0 as every integer division by zero (NumPy's 32- and
    64-bit loops give the minimum integer there), random values around the edges."""
    rng = np.random.default_rng(43)
    values = np.concatenate([[0, 1, 2], rng.integers(-3, 4, 40)])
    h = values.astype(dtype)  # negative values wrap for the unsigned dtypes
    got = to_host(xp.reciprocal(xp.asarray(h, device=device)))
    minus_one = h.astype(np.int64) == -1 if h.dtype.kind == "i" else np.zeros(h.shape, bool)
    expected = np.where(h == 1, 1, np.where(minus_one, -1, 0))
    assert got.dtype == h.dtype and np.array_equal(got, expected.astype(h.dtype))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ("bool", "int8", "uint64", "float16", "complex64"))
@pytest.mark.parametrize("name", ("logical_and", "logical_or", "logical_xor"))
def test_logical_functions_read_python_ints_as_int64(device, dtype, name, to_host):
    """NumPy's logical functions read a Python int as a C long: one past int64's range is an
    OverflowError on every device and in every form (a repeat, ``out=``, fused, lazy); one
    inside it is its truth value."""
    h = np.random.default_rng(44).integers(-2, 3, 16).astype(dtype)
    x = xp.asarray(h, device=device)
    f = getattr(xp, name)
    fused = xp.fuse(lambda a, s: f(a, s))

    def lazy(a, s):
        with xp.lazy():
            r = f(a, s)
        return r

    forms = (lambda s: f(x, s), lambda s: f(s, x), fused, lambda s: lazy(x, s),
             lambda s: f(x, s, out=xp.empty(16, dtype=xp.bool, device=device)))
    for form in forms:
        for v in (0, 2**63 - 1, -(2**63), 2**63, 2**64, -(2**63) - 1, 10**30, 300):
            if -(2**63) <= v < 2**63:
                got = to_host(form(x, v) if form is fused else form(v))
                np.testing.assert_array_equal(got, getattr(np, name)(h, v))
            else:
                with pytest.raises(OverflowError):
                    getattr(np, name)(h, v)
                with pytest.raises(OverflowError):
                    form(x, v) if form is fused else form(v)


@pytest.mark.parametrize("hot_path", ["compiled", "python"])
@pytest.mark.parametrize("device", DEVICES)
def test_out_must_have_the_results_shape_on_every_device(device, hot_path, to_host):
    """``out=`` of another shape than the broadcast result's is a ValueError naming both
    shapes on every device, at the first call and at its repeats (NumPy alone would broadcast
    the operands up to a bigger ``out``); ``out`` of the result's shape takes NumPy's values."""
    from infini_cupy.namespace import boundary

    rng = np.random.default_rng(46)
    shapes = [(), (1,), (3,), (0,), (2, 1), (2, 3), (1, 3), (2, 0), (4, 2, 3)]
    hot = boundary.python_hot_path() if hot_path == "python" else contextlib.nullcontext()
    with hot:
        for _ in range(60):
            s1, s2, so = (shapes[i] for i in rng.integers(0, len(shapes), 3))
            a, b = rng.standard_normal(s1).astype(np.float32), rng.standard_normal(s2)
            try:
                result = np.broadcast_shapes(s1, s2)
            except ValueError:
                continue
            x, y = xp.asarray(a, device=device), xp.asarray(b.astype(np.float32), device=device)
            for _ in range(2):  # the first call, then its repeat
                for call, want in ((lambda o: xp.add(x, y, out=o), result),
                                   (lambda o: xp.multiply(x, 2.0, out=o), s1),
                                   (lambda o: xp.negative(x, out=o), s1)):
                    out = xp.zeros(so, dtype=xp.float32, device=device)
                    if so != want:
                        with pytest.raises(ValueError, match=r"out has shape.*result has shape"):
                            call(out)
                        assert not np.any(to_host(out)), "nothing written"
                    else:
                        call(out)
            if so == result:
                out = xp.zeros(so, dtype=xp.float32, device=device)
                xp.add(x, y, out=out)
                np.testing.assert_array_equal(to_host(out), a + b.astype(np.float32))


def _shares_bytes(shape, strides, itemsize) -> bool:
    """Whether two elements of the layout share a byte, by listing every element's bytes."""
    offsets = np.zeros(1, np.int64)
    for n, stride in zip(shape, strides):
        offsets = (offsets[:, None] + stride * np.arange(n)).ravel()
    taken = (offsets[:, None] + np.arange(itemsize)).ravel()
    return len(np.unique(taken)) < len(taken)


@pytest.mark.parametrize("hot_path", ["compiled", "python"])
@pytest.mark.parametrize("device", DEVICES)
def test_out_whose_elements_share_memory_is_refused_on_every_device(device, hot_path):
    """An ``out=`` two of whose elements share a byte (an ``as_strided`` view) is a ValueError
    on every device, at the first call and after a repeat of the same dtypes into a good
    ``out``, into the result's dtype or a wider one, nothing written (NumPy alone would write
    it in its own order; a kernel's threads would race); a layout whose elements are distinct
    takes NumPy's values, however its strides interleave."""
    from infini_cupy.namespace import boundary

    rng = np.random.default_rng(47)
    hot = boundary.python_hot_path() if hot_path == "python" else contextlib.nullcontext()
    refused = written = 0
    fused = xp.fuse(lambda u, v: u * v + u)
    with hot:
        for _ in range(40):
            ndim = int(rng.integers(1, 4))
            shape = tuple(int(n) for n in rng.integers(1, 4, ndim))
            dtype = np.dtype(rng.choice(["float32", "float64"]))
            # strides in elements, some 0 or small enough to interleave, some negative
            steps = rng.integers(-3, 4, ndim) * dtype.itemsize
            strides = tuple(int(s) for s in steps)
            if rng.random() < 0.3:  # a plain layout too: distinct, maybe not contiguous
                strides = tuple(int(s) for s in np.lib.stride_tricks.as_strided(
                    np.empty(0, dtype), shape, np.empty(shape, dtype)[..., ::-1].strides
                ).strides)
            span = sum(abs(s) * (n - 1) for s, n in zip(strides, shape))
            base = np.zeros(span // dtype.itemsize + 1, dtype)
            start = sum(-s * (n - 1) for s, n in zip(strides, shape) if s < 0)
            view = np.lib.stride_tricks.as_strided(base[start // dtype.itemsize:], shape,
                                                    strides)
            out = xp.asarray(view, device=device, copy=False)
            a = rng.standard_normal(shape).astype(np.float32)
            x = xp.asarray(a, device=device)
            good = xp.zeros(shape, dtype=view.dtype, device=device)
            calls = ((lambda o: xp.add(x, x, out=o), a + a),
                     (lambda o: xp.multiply(x, 2.0, out=o), a * np.float32(2.0)),
                     (lambda o: xp.negative(x, out=o), -a),
                     (lambda o: o.__iadd__(x), a),  # o += x: o holds zeros
                     (lambda o: fused(x, x, out=o), a * a + a),
                     (lambda o: xp.clip(x, -0.5, 0.5, out=o), np.clip(a, -0.5, 0.5)),
                     (lambda o: xp.round(x, decimals=1, out=o), None))
            for call, want in calls:
                for _ in range(2):
                    call(good)  # the same dtypes learnt into an out whose elements are distinct
                if _shares_bytes(shape, strides, dtype.itemsize):
                    with pytest.raises(ValueError, match=r"out overlaps itself.*strides"):
                        call(out)
                    assert not base.any(), "nothing written"
                    refused += 1
                else:
                    call(out)
                    if want is None:  # round: its own oracle, the same call into a new array
                        want = np.asarray(xp.round(x, decimals=1))
                    np.testing.assert_array_equal(view, want.astype(dtype))
                    base[:] = 0
                    written += 1
    assert refused > 60 and written > 60


NOT_OPERANDS = ("a", b"a", [1.0, 2.0], (1.0,), object(), {1: 2})


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("device", DEVICES)
def test_operands_of_no_array_kind_are_refused_on_every_device(device, lazy, to_host):
    """A str, bytes, list, tuple or other object among an elementwise function's or
    ``where``'s operands is a TypeError naming the function and the type on every device,
    deferred or not (NumPy would make a string or object array of it, or take a list; CuPy
    refuses them); arrays, NumPy scalars and Python scalars are taken with NumPy's values."""
    rng = np.random.default_rng(48)
    h = rng.standard_normal(5)
    x = xp.asarray(h, device=device)
    m_h = h > 0
    m = xp.asarray(m_h, device=device)
    block = xp.lazy() if lazy else contextlib.nullcontext()
    with block:
        for v in NOT_OPERANDS:
            kind = type(v).__name__
            for call, name in ((lambda: xp.add(x, v), "add"),
                               (lambda: xp.multiply(v, x), "multiply"),
                               (lambda: xp.exp(v), "exp"), (lambda: xp.add(x, x, out=v), "add"),
                               (lambda: xp.where(m, x, v), "where"),
                               (lambda: xp.where(m, v, x), "where"),
                               (lambda: xp.where(v, x, x), "where")):
                with pytest.raises(TypeError, match=rf"{name}\(\).*{kind}"):
                    call()
        for v in (True, 2, 2.5, 1j, np.float32(2), np.int8(3)):
            got = xp.where(m, x, v)
            want = np.where(m_h, h, v)
            assert to_host(got).dtype == want.dtype
            np.testing.assert_array_equal(to_host(got), want)
            np.testing.assert_array_equal(to_host(xp.add(x, v)), h + v)


def test_refusals_give_one_message_on_every_device():
    """Shapes that do not broadcast (functions, operators, ``clip``'s bounds and a bigger
    ``out=``) and a Python int past 64 bits (``x += v`` and ``out=`` too): the same exception and the same message, naming
    the function, shapes or value and dtype, on ``cpu`` (NumPy computes) as on the emulator,
    the calls' types seen before (the repeats' paths, compiled and Python) or not."""
    from infini_cupy.namespace.boundary import python_hot_path

    rng = np.random.default_rng(57)
    for i in range(12):
        rows, cols, other = (int(n) for n in rng.integers(2, 9, size=3))
        if other == cols:
            other += 1
        big = 2 ** 64 * int(rng.integers(1, 64)) + int(rng.integers(0, 2 ** 62))
        dtype = rng.choice(["int8", "int64", "uint32"])
        messages = []
        for device in DEVICES:
            x = xp.asarray(rng.standard_normal((rows, cols)), device=device)
            y = xp.asarray(rng.standard_normal((rows, other)), device=device)
            ints = xp.asarray(np.ones(3, dtype), device=device)
            if i % 3:  # the same types accepted first: the next calls are repeats
                x + x, xp.hypot(x, x), ints + 1, xp.multiply(1, ints)
                ints += 0
                xp.add(ints, 0, out=ints)
            seen = []
            hot_path = python_hot_path if i % 3 == 2 else contextlib.nullcontext
            for call in (lambda: x + y, lambda: xp.hypot(y, x), lambda: xp.where(x > 0, x, y),
                         lambda: xp.clip(x, y, 1.0), lambda: xp.clip(x, -1.0, 1.0, out=xp.zeros(
                             (2, rows, cols), device=device)), lambda: ints + big,
                         lambda: xp.multiply(big, ints), lambda: ints.__iadd__(big),
                         lambda: xp.add(ints, -big, out=ints)):
                try:
                    with hot_path():
                        call()
                except (ValueError, OverflowError) as e:
                    seen.append((type(e), str(e)))
                else:
                    seen.append(None)
            messages.append(seen)
        assert None not in messages[0]
        assert messages[0] == messages[1]


@pytest.mark.parametrize("device", DEVICES)
def test_floating_point_warnings_are_silent_on_every_device(device, to_host):
    x = xp.asarray(np.array([-1.0, 0.0, 1.0], np.float32), device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inf_nan = to_host(xp.divide(x, 0.0))
        assert np.isnan(inf_nan[1]) and np.isinf(inf_nan[0])
        assert np.isnan(to_host(xp.log(x))[0]) and np.isnan(to_host(xp.sqrt(x))[0])
        to_host(xp.multiply(xp.asarray(np.float32([3e38]), device=device), 10.0))
        to_host(xp.floor_divide(x, 0.0))
        to_host(xp.remainder(x, 0.0))
        to_host(xp.reciprocal(xp.asarray(np.int8([0, 1]), device=device)))
        specials = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 3.5])
        for source in FLOATS + (np.dtype(np.complex64),):
            with np.errstate(all="ignore"):
                x = xp.asarray(specials.astype(source), device=device)
            for target in dtypes.ALL_DTYPES:  # casts, NaN and overflow included
                if source.kind == "c" and target.kind not in "bc":  # NumPy's one warning
                    with pytest.warns(np.exceptions.ComplexWarning):
                        to_host(xp.astype(x, target))
                else:
                    to_host(xp.astype(x, target))
        y = xp.zeros(3, dtype=xp.float16, device=device)
        y[0] = 1e300  # x[k] = v rounds to inf, silently
        y[1:] = xp.asarray([10**6, -(10**6)], dtype=xp.int64, device=device)  # past float16


def _clip_outcome(device, x, lo, hi, size):
    def make(dtype, values):
        return xp.asarray(np.resize(values, size).astype(dtype), device=device)

    args = [make(x, [-2, -1, 0, 1, 2, 3]) if x.kind != "b" else make(x, [1])]
    args += [make(b, [1, 2]) if isinstance(b, np.dtype) else b for b in (lo, hi)]
    try:
        result = xp.clip(*args)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return (type(e),)
    return ("ok", str(result.dtype), tuple(np.asarray(result.to_device("cpu")).tolist()))


CLIP_BOUNDS = (None, 1, 1.5, -1, 300, True, 1j)


@pytest.mark.parametrize("x", dtypes.ALL_DTYPES, ids=str)
def test_clip_bounds_end_the_same_on_every_device(x):
    """clip's rules (result in x's dtype, bounds made exact for it) on cpu as on emulator:
    acceptance over every bound dtype and scalar, values on one sample of each."""
    for lo in dtypes.ALL_DTYPES + CLIP_BOUNDS:
        for hi in ((None, 2) if isinstance(lo, np.dtype) else (None, 2, 2.5)):
            size = 6 if x in SAMPLE and (lo is None or lo in SAMPLE or isinstance(lo, int)) else 0
            ends = [_clip_outcome(device, x, lo, hi, size) for device in DEVICES]
            assert ends[0] == ends[1], (x, lo, hi, ends)



CLIP_SPECIAL_BOUNDS = (None, 0.0, -0.0, 1.0, -1.0, float("nan"), float("-inf"), "zeros")


@pytest.mark.parametrize("x", [d for d in dtypes.ALL_DTYPES
                               if d.kind == "f" or dtypes.is_bfloat16(d)], ids=str)
def test_clip_special_values_are_the_same_bits_on_every_device(x):
    """clip at signed zeros, NaN and infinities (x's values and the bounds'): the kernels'
    ``minimum(maximum(x, lo), hi)`` with +0 above -0, bit for bit on cpu."""
    values = np.array([-0.0, 0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, -2.0])
    rng = np.random.default_rng(zlib.crc32(str(x).encode()))
    for lo in CLIP_SPECIAL_BOUNDS:
        for hi in CLIP_SPECIAL_BOUNDS:
            # "zeros": an array bound of signed zeros and ones, the same on every device
            host = [rng.permutation(np.resize([-0.0, 0.0, 1.0], values.size)).astype(x)
                    if b == "zeros" else b for b in (lo, hi)]
            bits = []
            for device in DEVICES:
                bounds = [xp.asarray(b, device=device) if isinstance(b, np.ndarray) else b
                          for b in host]
                result = xp.clip(xp.asarray(values.astype(x), device=device), *bounds)
                bits.append(np.asarray(result.to_device("cpu")).tobytes())
            assert bits[0] == bits[1], (x, lo, hi)

def _setitem_outcome(device, x, value):
    target = xp.asarray(np.zeros(0, x), device=device)
    if isinstance(value, np.dtype):
        value = xp.asarray(np.ones(1, value), device=device)
    try:
        target[...] = value
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    return "ok"


@pytest.mark.parametrize("x", dtypes.ALL_DTYPES, ids=str)
def test_setitem_promotion_ends_the_same_on_every_device(x):
    """``x[...] = v`` accepts and refuses the same values on every device (zero-size
    targets: the rule decides before any copy)."""
    outcomes = {}
    for value in dtypes.ALL_DTYPES + (True, 1, 1.5, 1j, 300):
        ends = [_setitem_outcome(device, x, value) for device in DEVICES]
        assert ends[0] == ends[1], (x, value, ends)
        outcomes[value] = ends[0]
    assert outcomes[x] == "ok"
    if x.kind in "fc":  # float64 into a smaller float promotes past it: refused
        assert outcomes[np.dtype(np.float64)] == (
            "ok" if np.promote_types(np.float64, x) == x else TypeError)



# Python scalars into every dtype: in range, out of integer ranges, past float16's and
# float32's largest finite values, non-finite, complex
SET_SCALARS = (0, 1, -1, 7, 300, -300, 2**40, True, 1.5, -2.75, 65504.0, 65520.0, 1e30, -1e39,
               1e300, float("inf"), float("-inf"), float("nan"), 1j, 2.5 - 1j)


def _stored(device, dtype, value, layout):
    """The bytes of a 3x4 array after ``x[1:, ::2] = value`` (``x`` its transpose's view
    for ``layout`` "F", whose parent is not C-contiguous), or the exception's class."""
    base = xp.asarray(np.arange(12).reshape(3, 4).astype(dtype), device=device)
    target = base if layout == "C" else xp.permute_dims(base, (1, 0))
    if isinstance(value, np.ndarray):
        value = xp.asarray(value, device=device)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # every device is silent
            target[1:, ::2] = value
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    return np.asarray(base.to_device("cpu")).tobytes()


@pytest.mark.parametrize("layout", ["C", "F"])
@pytest.mark.parametrize("dtype", dtypes.ALL_DTYPES, ids=str)
def test_setitem_values_end_the_same_on_every_device(dtype, layout):
    """``x[key] = v`` stores the same bits, or refuses with the same class, on every device:
    every Python scalar kind and range, and arrays of every dtype (cast, promoted, refused)."""
    rng = np.random.default_rng(zlib.crc32(f"{dtype}{layout}".encode()))
    arrays = [(rng.standard_normal(2) * 100).astype(d) for d in dtypes.ALL_DTYPES]
    for value in SET_SCALARS + tuple(arrays):
        ends = [_stored(device, dtype, value, layout) for device in DEVICES]
        assert ends[0] == ends[1], (dtype, layout, value, ends)
    assert isinstance(_stored("cpu", dtype, 1, layout), bytes)


@pytest.mark.parametrize("layout", ["C", "transposed", "strided"])
def test_setitem_from_an_overlapping_view_is_a_snapshot_on_every_device(layout):
    """``x[1:, 1:] = x[:-1, :-1]`` (and the other way) copies from the values as they were,
    on every device, into a C-contiguous array, a transposed view and a strided view."""
    host = np.arange(60.0).reshape(5, 12)
    for target, source in (((slice(1, None), slice(1, None)), (slice(None, -1), slice(None, -1))),
                           ((slice(None, -1), slice(None, -1)), (slice(1, None), slice(1, None)))):
        for device in DEVICES:
            parent = xp.asarray(host, device=device, copy=True)
            x = {"C": parent, "transposed": xp.permute_dims(parent, (1, 0)),
                 "strided": parent[:, ::2]}[layout]
            expected = np.asarray(x.to_device("cpu")).copy()
            expected[target] = expected[source].copy()
            x[target] = x[source]
            np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), expected)


@pytest.mark.parametrize("write", ["setitem", "rearrange_"])
def test_a_1d_overlapping_copy_is_a_snapshot_on_every_device(write):
    """``x[0:5:2] = x[0:3]``: 1-d views of one buffer whose steps differ but point the same
    way (NumPy's own copy reads x[2] after writing it), contiguous and reversed parents."""
    rng = np.random.default_rng(31)
    for _ in range(200):
        n = int(rng.integers(4, 40))
        step = int(rng.integers(1, 4)) * (1 if rng.random() < 0.5 else -1)
        host = rng.integers(-100, 100, n).astype(np.int32)[::step]
        count = int(rng.integers(1, max(2, len(host) // 2) + 1))
        picks = []
        for _ in range(2):  # target, then source: count elements each, random start and step
            k = int(rng.integers(1, max(1, (len(host) - 1) // max(count - 1, 1)) + 1))
            start = int(rng.integers(0, len(host) - k * (count - 1)))
            picks.append(slice(start, start + k * (count - 1) + 1, k))
        target, source = picks
        expected = host.copy()
        expected[target] = expected[source].copy()
        for device in DEVICES:
            x = xp.asarray(host, device=device, copy=True)
            if write == "setitem":
                x[target] = x[source]
            else:
                xp.rearrange_(x[target], x[source])
            np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), expected,
                                          err_msg=f"{device} {target} = {source}")


@pytest.mark.parametrize("index", ["mask", "indices"])
def test_setitem_through_an_index_array_from_an_overlapping_view_is_a_snapshot(index):
    """``x[mask] = x[2::-1]`` and ``x[idx] = x[::-1]`` copy from the values as they were on
    every device (NumPy's mask assignment reads the value while it writes, as CuPy's scatter
    kernels do), and so does an index array that is a view of ``x`` itself."""
    host = np.arange(6.0)
    mask = np.array([True, True, True, False, False, False])
    key = mask if index == "mask" else np.nonzero(mask)[0]
    expected = host.copy()
    expected[key] = host[2::-1].copy()
    for device in DEVICES:
        x = xp.asarray(host, device=device, copy=True)
        x[xp.asarray(key, device=device)] = x[2::-1]
        np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), expected, err_msg=device)
        own = xp.asarray(np.array([3, 1, 0, 2]), device=device)
        own[own] = own[::-1]  # own[[3, 1, 0, 2]] = [2, 0, 1, 3]
        np.testing.assert_array_equal(np.asarray(own.to_device("cpu")), [1, 0, 3, 2],
                                      err_msg=device)


def _set(device, dtype, key, value):
    """The bytes of ``x`` (4 elements of ``dtype``) after ``x[key] = value``, or the
    exception's class; a key or value given as a function of the device is made there."""
    x = xp.asarray(np.arange(4).astype(dtype), device=device)
    key, value = (v(device) if callable(v) else v for v in (key, value))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            x[key] = value
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    return np.asarray(x.to_device("cpu")).tobytes()


KEYS = {"int": 1, "slice": slice(1, 3),
        "mask": lambda d: xp.asarray([False, True, True, False], device=d),
        "indices": lambda d: xp.asarray([1, 2], device=d)}


@pytest.mark.parametrize("key", sorted(KEYS))
@pytest.mark.parametrize("target", ["int8", "uint8", "int32", "float32", "bool"])
def test_a_numpy_scalar_is_taken_as_the_python_scalar_of_its_value(target, key):
    """``x[key] = np.int16(v)`` stores what ``x[key] = v`` stores, or refuses as it does
    (OverflowError out of an integer range, NumPy's answer; ``astype`` would wrap it), for
    every key kind on every device; a complex NumPy scalar into a real x is refused as a
    complex Python scalar is."""
    rng = np.random.default_rng(zlib.crc32(f"{target}{key}".encode()))
    values = [int(v) for v in (*rng.integers(-2**40, 2**40, 3), *rng.integers(-300, 300, 3))]
    for v in values + [0, 1, 255, -128]:
        for kind in (np.int16, np.int64, np.uint64, np.bool_):
            if kind is np.bool_ and v not in (0, 1):
                continue
            try:
                scalar = kind(v)
            except OverflowError:
                continue
            as_python = bool(v) if kind is np.bool_ else v
            ends = [_set(d, target, KEYS[key], scalar) for d in DEVICES]
            assert ends[0] == ends[1] == _set("cpu", target, KEYS[key], as_python), (kind, v)
    for scalar in (np.complex64(3 + 4j), np.complex128(3 + 4j), 3 + 4j):
        assert [_set(d, target, KEYS[key], scalar) for d in DEVICES] == [TypeError] * 2


@pytest.mark.parametrize("key", ["mask", "indices"])
def test_a_failed_write_through_an_index_array_leaves_x_as_it_was(key):
    """Values are checked before any is written: a list with one value out of range, an
    Array of another device (NumPy writes a list's values up to the one that fails)."""
    for device in DEVICES:
        other = "emulator" if device == "cpu" else "cpu"
        before = _set(device, "int8", slice(0, 0), 0)
        for value in ([5, 300], [7.0, float("inf")],
                      lambda d, o=other: xp.asarray([1, 2], dtype=xp.int8, device=o)):
            end = _set(device, "int8", KEYS[key], value)
            assert end in (OverflowError, ValueError), (device, value, end)
        x = xp.asarray(np.arange(4).astype("int8"), device=device)
        with pytest.raises(OverflowError):
            x[KEYS[key](device)] = [5, 300]
        assert np.asarray(x.to_device("cpu")).tobytes() == before


def _moved(device, name, host, first, keywords):
    """The dtype, shape and bytes of ``name(x, first, **keywords)`` on ``device``, or the
    exception's class."""
    x = xp.asarray(host, device=device)
    try:
        result = getattr(xp, name)(x, first, **keywords)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e)
    a = np.asarray(result.to_device("cpu"))
    return a.dtype, a.shape, a.tobytes()


MOVES = {  # name -> (the second argument, keywords), some of them refused
    "tile": [((2,), {}), ((1, 2), {}), ((2, 1, 2), {}), ((0, 3), {}), ((-1,), {})],
    "repeat": [(2, {}), (0, {"axis": 1}), (3, {"axis": -1}), (2, {"axis": 0}), (-1, {}),
               (2, {"axis": 2})],
    "roll": [(1, {}), (-7, {"axis": 0}), ((1, 2), {"axis": (0, 1)}), ((1, 1), {"axis": (1, 1)}),
             ((1, 2), {}), (1, {"axis": 3})],
}


@pytest.mark.parametrize("name", sorted(MOVES))
@pytest.mark.parametrize("dtype", dtypes.ALL_DTYPES, ids=str)
def test_data_movement_ends_the_same_on_every_device(name, dtype):
    """tile, repeat and roll (NumPy's on ``cpu`` after our checks, our copies in the
    kernels): the same bits, dtype and shape, or the same exception class, on every device,
    from C-contiguous, transposed, strided and empty arrays."""
    rng = np.random.default_rng(zlib.crc32(f"{name}{dtype}".encode()))
    base = (rng.standard_normal((3, 8)) * 50).astype(dtype)
    for host in (base, base.T, base[:, ::3], base[:0]):
        for first, keywords in MOVES[name]:
            ends = [_moved(device, name, host, first, keywords) for device in DEVICES]
            assert ends[0] == ends[1], (name, first, keywords, host.strides)

# ---- special values, bit for bit: signed zeros, infinities, NaN, subnormals, the extremes
EXACT_UNARY = ("abs", "negative", "positive", "sign", "ceil", "floor", "trunc", "round",
               "sqrt", "signbit", "isnan", "isinf", "isfinite", "square")
EXACT_BINARY = ("add", "subtract", "multiply", "divide", "copysign", "maximum", "minimum",
                "nextafter", "floor_divide", "equal", "less", "greater_equal")
FLOATS = tuple(d for d in dtypes.ALL_DTYPES if d.kind == "f" or dtypes.is_bfloat16(d))


def _specials(dtype) -> np.ndarray:
    info = xp.finfo(dtype)
    tiny = float(info.smallest_normal)
    values = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.5, -3.5, float(info.max),
              -float(info.max), tiny, -tiny, tiny * 2.0**-3, -tiny * 2.0**-3, 1e-300, 1e300]
    with np.errstate(over="ignore", under="ignore"):
        return np.array(values, np.float64).astype(dtype)


def _same_bits(a, b) -> np.ndarray:
    """Elementwise: equal bit patterns, or both NaN (no rule names a NaN's payload here)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == np.bool_:
        return a == b
    nan = np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64))
    return (a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")) | nan


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_special_values_agree_bit_for_bit(dtype, to_host):
    """Functions whose results are exact or correctly rounded on every device give the same
    bits on ``cpu`` and ``emulator``: signed zeros and infinities included."""
    x = _specials(dtype)
    a, b = np.repeat(x, x.size), np.tile(x, x.size)
    differ = []
    for name in EXACT_UNARY + EXACT_BINARY:
        args = (x,) if name in EXACT_UNARY else (a, b)
        got = [to_host(getattr(xp, name)(*(xp.asarray(v, device=d) for v in args)).to_device("cpu"))
               for d in DEVICES]
        same = _same_bits(*got)
        if not same.all():
            k = np.flatnonzero(~same)[:3]
            differ.append((name, [tuple(v[k].tolist()) for v in args], got[0][k], got[1][k]))
    assert not differ, differ



# Python scalars at special values: NumPy takes shortcuts for some scalar operands (a square
# root for pow's 0.5), and a float may round to a zero or infinity in the loop dtype
SPECIAL_SCALARS = (0.0, -0.0, float("inf"), float("-inf"), float("nan"), 0.5, -0.5, 1.0, -1.0,
                   2.0, 3.0, 1 / 3, -1e-300, 1e300, 2, -1, 0, True)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_special_python_scalars_agree_bit_for_bit(dtype, to_host):
    """An Array of special values with a Python scalar of special value, on either side, gives
    the same bits on ``cpu`` and ``emulator`` for the exact functions; for ``pow`` (libm's
    last bits differ) the same zeros, infinities and NaNs, and values within a few ulps."""
    x = _specials(dtype)
    eps = float(xp.finfo(dtype).eps)
    differ = []
    for name in EXACT_BINARY + ("pow",):
        for scalar in SPECIAL_SCALARS:
            for scalar_first in (False, True):
                got = []
                for d in DEVICES:
                    a = xp.asarray(x, device=d)
                    args = (scalar, a) if scalar_first else (a, scalar)
                    got.append(to_host(getattr(xp, name)(*args)))
                if name == "pow":
                    same = _agree(*(g.astype(np.float64) for g in got), eps)
                else:
                    same = _same_bits(*got)
                if not same.all():
                    k = np.flatnonzero(~same)[:3]
                    differ.append((name, scalar, scalar_first, x[k].tolist(), got[0][k], got[1][k]))
    assert not differ, differ

COMPLEX_UNARY = tuple(name for name, op in sorted(OPS.items())
                      if op.arity == 1 and op.group in ("numeric", "floating-point", "all"))
_PARTS = (0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -2.0, 1e30)


def _agree(a: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """Elementwise, per part: both NaN; equal bits where either is infinite or zero (signed
    zeros and infinities are the rules'); else within a few ulps of the largest part of the
    two results (the libraries' last bits differ)."""
    scale = np.fmax.reduce([np.abs(a.real), np.abs(a.imag), np.abs(b.real), np.abs(b.imag)])
    agree = np.ones(a.shape, bool)
    for u, v in ((a.real, b.real), (a.imag, b.imag)):
        exact = ~np.isfinite(u) | ~np.isfinite(v) | (u == 0) | (v == 0)
        same_bits = (u == v) & (np.signbit(u) == np.signbit(v)) | np.isnan(u) & np.isnan(v)
        with np.errstate(invalid="ignore"):
            close = np.abs(u - v) <= 8 * eps * scale
        agree &= np.where(exact, same_bits, close)
    return agree


@pytest.mark.parametrize("dtype", ("complex64", "complex128"))
def test_complex_special_values_agree_on_every_device(dtype, to_host):
    """Every complex unary function at every pair of special parts (signed zeros,
    infinities, NaN, ordinary and huge values) gives the same answer on ``cpu`` and
    ``emulator``: the standard's special cases, and one choice where it leaves a sign open."""
    z = np.array([complex(re, im) for re in _PARTS for im in _PARTS], dtype)
    eps = float(np.finfo(dtype).eps)
    differ = []
    for name in COMPLEX_UNARY:
        got = [to_host(getattr(xp, name)(xp.asarray(z, device=d))) for d in DEVICES]
        if got[0].dtype.kind != "c":
            got = [g.astype(dtype) for g in got]
        agree = _agree(*got, eps)
        if not agree.all():
            k = np.flatnonzero(~agree)[:3]
            differ.append((name, z[k].tolist(), got[0][k].tolist(), got[1][k].tolist()))
    assert not differ, differ



@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ("add", "multiply", "bitwise_or", "pow"))
def test_a_python_int_out_of_range_is_checked_before_out(device, name):
    """``f(x, v, out=o)`` with a Python int out of the loop's range is NumPy's OverflowError
    on every device, whatever ``o`` is (another dtype, shape or a read-only view), ``x += v``
    included: the operand is refused before ``out`` is looked at."""
    rng = np.random.default_rng(45)
    f = getattr(xp, name)
    for dtype, v in (("bool", 2**63), ("int8", 300), ("uint8", -1), ("int64", 2**64)):
        h = rng.integers(0, 2, 6).astype(dtype)
        with pytest.raises(OverflowError):
            getattr(np, OPS[name].numpy_name)(h, v)  # NumPy's answer, out or not
        x = xp.asarray(h, device=device)
        outs = (xp.empty(6, dtype=xp.bool, device=device),
                xp.empty(7, dtype=x.dtype, device=device),
                xp.broadcast_to(xp.empty(1, dtype=x.dtype, device=device), (6,)), x)
        for out in outs:
            with pytest.raises(OverflowError, match=str(v)):
                f(x, v, out=out)
            with pytest.raises(OverflowError, match=str(v)):
                f(v, x, out=out)
        if name in ("add", "multiply"):
            with pytest.raises(OverflowError, match=str(v)):
                (x.__iadd__ if name == "add" else x.__imul__)(v)
        np.testing.assert_array_equal(np.asarray(xp.to_device(x, "cpu")), h)  # untouched


# ---- products of bfloat16: one dtype and one rounding on every device
BFLOAT16_PRODUCTS = {
    "matmul": (lambda a, b: xp.matmul(a, b), lambda a, b: a @ b, ((2, 3), (3, 2))),
    "@ of stacks": (lambda a, b: a @ b, lambda a, b: a @ b, ((2, 2, 3), (2, 3, 2))),
    "vecdot": (lambda a, b: xp.vecdot(a, b), lambda a, b: (a * b).sum(-1), ((3, 4), (3, 4))),
    "tensordot": (lambda a, b: xp.tensordot(a, b, axes=2), lambda a, b: np.tensordot(a, b, 2),
                  ((2, 3), (2, 3))),
    "matrix_power": (lambda a, b: xp.linalg.matrix_power(a, 3),
                     lambda a, b: a @ a @ a, ((3, 3), (3, 3))),
}


@pytest.mark.skipif(dtypes.BFLOAT16 is None, reason="bfloat16 needs ml_dtypes")
@pytest.mark.parametrize(("name", "other"), [
    (name, other) for name in sorted(BFLOAT16_PRODUCTS)
    for other in (["bfloat16"] if name == "matrix_power" else ["bfloat16", "int8", "float16"])])
def test_bfloat16_products_compute_in_float32_and_round_once(on, to_host, name, other):
    """matmul, ``@``, vecdot, tensordot and matrix_power of bfloat16 are of
    ``result_type``'s dtype on every device (bfloat16 with bfloat16 or int8: ml_dtypes' NumPy
    loop gave float32), the float32 product rounded once: integers whose float32 sums are
    exact and need more than bfloat16's 8 bits (a sum in bfloat16 would round each step)."""
    call, oracle, shapes = BFLOAT16_PRODUCTS[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    a, b = (rng.integers(1, 16, shape).astype(np.float32) for shape in shapes)
    other = np.dtype(dtypes.BFLOAT16 if other == "bfloat16" else other)
    got = call(on(a.astype(dtypes.BFLOAT16)), on(b.astype(other)))
    expected = xp.result_type(dtypes.BFLOAT16, other)
    assert got.dtype == expected, (name, other, got.dtype)
    want = oracle(a, b).astype(expected)  # float32 sums exact; one rounding
    np.testing.assert_array_equal(to_host(got).astype(np.float32), want.astype(np.float32))


# ---- linalg of bfloat16: computed in float32, each floating result rounded once
def _spd(rng, n=4):
    """A well-conditioned symmetric positive definite matrix of small integers."""
    a = rng.integers(-3, 4, (n, n)).astype(np.float32)
    return a @ a.T + n * np.eye(n, dtype=np.float32)


BFLOAT16_LINALG = {  # name: (call, inputs from rng)
    "inv": (lambda a: xp.linalg.inv(a), lambda r: [_spd(r)]),
    "solve": (lambda a, b: xp.linalg.solve(a, b), lambda r: [_spd(r), r.random((4, 2))]),
    "det": (lambda a: xp.linalg.det(a), lambda r: [_spd(r)]),
    "slogdet": (lambda a: xp.linalg.slogdet(a), lambda r: [_spd(r)]),
    "cholesky": (lambda a: xp.linalg.cholesky(a), lambda r: [_spd(r)]),
    "eigvalsh": (lambda a: xp.linalg.eigvalsh(a), lambda r: [_spd(r)]),
    "svdvals": (lambda a: xp.linalg.svdvals(a), lambda r: [_spd(r)]),
    "pinv": (lambda a: xp.linalg.pinv(a), lambda r: [_spd(r)]),
    "matrix_norm": (lambda a: xp.linalg.matrix_norm(a), lambda r: [r.random((3, 4))]),
    "vector_norm": (lambda a: xp.linalg.vector_norm(a), lambda r: [r.random(7)]),
    "matrix_rank": (lambda a: xp.linalg.matrix_rank(a), lambda r: [_spd(r)]),
    "eigh": (lambda a: xp.linalg.eigh(a), lambda r: [_spd(r)]),
    "qr": (lambda a: xp.linalg.qr(a), lambda r: [_spd(r)]),
    "svd": (lambda a: xp.linalg.svd(a), lambda r: [_spd(r)]),
}


@pytest.mark.skipif(dtypes.BFLOAT16 is None, reason="bfloat16 needs ml_dtypes")
@pytest.mark.parametrize("name", sorted(BFLOAT16_LINALG))
def test_bfloat16_linalg_computes_in_float32_and_rounds_once(on, to_host, name):
    """NumPy's and CuPy's linalg take bfloat16 for no float (dtype kind 'V') and gave
    float64; the standard's result is of x's floating dtype. Oracle: the same call on the
    float32 values (bfloat16 -> float32 is exact) rounded to bfloat16; the decompositions
    (eigh, qr, svd: signs free) are checked by their factors' product."""
    call, make = BFLOAT16_LINALG[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    values = [np.asarray(v, np.float32).astype(dtypes.BFLOAT16).astype(np.float32)
              for v in make(rng)]
    got = call(*(on(v.astype(dtypes.BFLOAT16)) for v in values))
    want = call(*(xp.asarray(v, device="cpu") for v in values))  # float32, the oracle's way
    got, want = (tuple(r) if isinstance(r, tuple) else (r,) for r in (got, want))
    for g, w in zip(got, want):
        w = np.asarray(w.to_device("cpu"))
        assert g.dtype == (dtypes.BFLOAT16 if w.dtype == np.float32 else w.dtype), (name, g.dtype)
        g = to_host(g).astype(np.float64)
        if name in ("eigh", "qr", "svd"):
            continue  # the factors' product below
        np.testing.assert_allclose(g, w.astype(dtypes.BFLOAT16).astype(np.float64),
                                   rtol=2**-7, atol=2**-7 * np.abs(w).max())
    if name in ("eigh", "qr", "svd"):
        f = [to_host(g).astype(np.float64) for g in got]
        product = {"eigh": lambda: (f[1] * f[0]) @ f[1].T, "qr": lambda: f[0] @ f[1],
                   "svd": lambda: (f[0] * f[1]) @ f[2]}[name]()
        np.testing.assert_allclose(product, values[0], rtol=0.05, atol=0.05 * 8)
