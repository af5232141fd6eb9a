"""Every elementwise function against NumPy, per dtype it accepts, on every layout class:
contiguous (vectorized and misaligned), 0-d, zero-size, broadcast, transposed, sliced,
negative strides, more dims than the widest strided kernel, scalars on either side, and
``out=`` (strided, overlapping an input).

In emulation each function's variants are built into one library first (one g++ run per
function), so a cold run costs about a minute or two of compiling on two cores.
"""

from __future__ import annotations

import numpy as np
import pytest

from infini_cupy import dtypes
from infini_cupy.elementwise.ops import OPS
from infini_cupy.elementwise.resolution import loop_dtypes, result_of_loop
from infini_cupy.namespace import elementwise_functions as F
from tests.support.elementwise_cases import (
    assert_matches,
    oracle,
    prepare,
    python_scalar,
    random_array,
)

OP_DTYPES = [(name, str(dt)) for name, op in OPS.items() for dt in loop_dtypes(op.name)]


def _launcher_sample(pairs) -> set:
    """What the stand-in's end-to-end run keeps of ``pairs`` (op, dtype): every op on its first
    loop, and one op of each (arity, loop dtype, result dtype). A kernel's parameters depend
    on its dtypes and its path, not on its functor; the rest of the pairs would only check the
    kernels' numerics again, in the same emulator (``same_either_way``)."""
    kept, functions, signatures = set(), set(), set()
    for name, dtype in pairs:
        signature = (OPS[name].arity, dtype, result_of_loop(OPS[name].name, np.dtype(dtype)))
        if name not in functions or signature not in signatures:
            kept.add((name, dtype))
            functions.add(name)
            signatures.add(signature)
    return kept


_SAMPLE = _launcher_sample(OP_DTYPES)


def _unary_layouts(op_name, dtype, rng):
    """(description, input array) covering every layout class."""
    gen = lambda shape: random_array(op_name, dtype, shape, rng)  # noqa: E731
    yield "contiguous", gen((37,))
    yield "0-d", gen(())
    yield "zero-size", gen((0, 3))
    yield "transposed", gen((4, 5)).T
    yield "sliced negative", gen((6, 7))[::-2, 1::2]
    yield "broadcast view", np.broadcast_to(gen((5,)), (3, 5))
    yield "offset contiguous", gen((34,))[1:]
    yield "4-d permuted", gen((3, 4, 2, 5)).transpose(2, 0, 3, 1)[..., ::2]


def _binary_layouts(op_name, dtype, rng):
    gen = lambda shape, pos: random_array(op_name, dtype, shape, rng, pos)  # noqa: E731
    s = python_scalar(op_name, dtype)
    yield "contiguous", gen((37,), 0), gen((37,), 1)
    yield "broadcast", gen((3, 1), 0), gen((1, 5), 1)
    yield "transposed/negative", gen((5, 4), 0).T, gen((4, 10), 1)[::-1, ::2]
    yield "0-d with 1-d", gen((), 0), gen((6,), 1)
    yield "zero-size", gen((0, 3), 0), gen((3,), 1)
    yield "scalar right", gen((2, 9), 0), s
    yield "scalar left", s, gen((2, 9), 1)
    yield "offset contiguous", gen((20,), 0)[1:], gen((20,), 1)[:-1]
    yield "4-d", gen((2, 3, 4, 5), 0).transpose(3, 2, 0, 1), gen((4, 1, 3), 1)


def _ternary_layouts(op_name, dtype, rng):
    gen = lambda shape: random_array(op_name, dtype, shape, rng)  # noqa: E731
    lo, hi = sorted([python_scalar(op_name, dtype), -python_scalar(op_name, dtype)]) \
        if np.dtype(dtype).kind != "u" else (1, 3)
    with np.errstate(invalid="ignore"):  # NaN bounds are part of the draw
        bounds = np.minimum(gen((4, 1)), gen((1, 6))), np.maximum(gen((6,)), gen((6,)))
    yield "arrays", gen((4, 6)), *bounds
    yield "scalars", gen((5, 3)).T, lo, hi
    yield "min only", gen((7,)), lo, None
    yield "max only", gen((7,))[::-1], None, hi


def _call(op_name, args, to_device, out=None):
    dev = [to_device(a) if isinstance(a, np.ndarray) else a for a in args]
    fn = getattr(F, op_name)
    if op_name == "clip":
        return fn(dev[0], dev[1], dev[2], out=out)
    return fn(*dev, out=out)


@pytest.mark.parametrize("op_name,dtype", [
    pytest.param(*pair, marks=() if pair in _SAMPLE else pytest.mark.same_either_way)
    for pair in OP_DTYPES])
def test_matches_numpy(op_name, dtype, backend_name, to_device, to_host):
    prepare(backend_name, op_name)
    rng = np.random.default_rng(abs(hash((op_name, dtype))) % 2**32)
    arity = OPS[op_name].arity
    layouts = {1: _unary_layouts, 2: _binary_layouts, 3: _ternary_layouts}[arity]
    for what, *args in layouts(op_name, dtype, rng):
        if op_name == "clip":
            x, lo, hi = args
            np_args = (x, -np.inf if lo is None and x.dtype.kind == "f" else lo,
                       np.inf if hi is None and x.dtype.kind == "f" else hi)
            expected = oracle(op_name, *np_args)
        else:
            expected = oracle(op_name, *args)
        actual = to_host(_call(op_name, args, to_device))
        assert_matches(op_name, actual, expected, dtype, what)


@pytest.mark.parametrize("op_name", [n for n, op in OPS.items() if op.arity == 2])
def test_out_layouts(op_name, backend_name, to_device, to_host):
    """out= C-contiguous, transposed, and overlapping an input (NumPy's answer)."""
    prepare(backend_name, op_name, "cast")
    dtype = loop_dtypes(OPS[op_name].name)[-1 if op_name.startswith(("bitwise", "logical")) else 0]
    if OPS[op_name].group in ("real floating-point", "floating-point"):
        dtype = np.dtype(np.float32)
    rng = np.random.default_rng(7)
    a = random_array(op_name, dtype, (6, 5), rng, 0)
    b = random_array(op_name, dtype, (6, 5), rng, 1)
    expected = oracle(op_name, a, b)
    out = to_device(np.zeros((5, 6), expected.dtype)).T  # transposed out
    r = getattr(F, op_name)(to_device(a), to_device(b), out=out)
    assert r is out
    assert_matches(op_name, to_host(out), expected, dtype, "out transposed")
    if expected.dtype == dtype:
        # out= is the first input read backwards: the result must not see partial writes.
        buf = to_device(a[::-1].copy())
        r = getattr(F, op_name)(buf[::-1], to_device(b), out=buf)
        assert r is buf
        assert_matches(op_name, to_host(r), expected, dtype, "out overlaps an input")


MIXED = [("int8", "int16"), ("uint8", "int8"), ("int32", "float32"), ("float16", "float64"),
         ("float32", "complex64"), ("uint64", "int64"), ("int16", "float16")]


@pytest.mark.parametrize("op_name,d1,d2", [
    (name, d1, d2) for name in ("add", "multiply", "less", "maximum", "divide", "equal")
    for d1, d2 in MIXED if dtypes.is_in(d1, OPS[name].group) and dtypes.is_in(d2, OPS[name].group)])
def test_mixed_dtypes_promote(op_name, d1, d2, backend_name, to_device, to_host):
    prepare(backend_name, op_name, "cast")
    rng = np.random.default_rng(3)
    a = random_array(op_name, d1, (3, 4), rng)
    b = random_array(op_name, d2, (4,), rng)
    expected = oracle(op_name, a, b)
    actual = to_host(getattr(F, op_name)(to_device(a), to_device(b)))
    assert_matches(op_name, actual, expected, dtypes.result_type(a, b), f"{d1} with {d2}")


def test_every_standard_function_exists():
    expected = {
        "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
        "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift",
        "bitwise_xor", "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal",
        "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag",
        "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2", "log10",
        "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "maximum",
        "minimum", "multiply", "negative", "nextafter", "not_equal", "positive", "pow", "real",
        "reciprocal", "remainder", "round", "sign", "signbit", "sin", "sinh", "square", "sqrt",
        "subtract", "tan", "tanh", "trunc",
    }
    assert set(F.__all__) == expected == set(OPS)
    for name in expected:
        assert getattr(F, name).__name__ == name and getattr(F, name).__doc__


def test_type_errors_name_function_and_dtypes(to_device):
    with pytest.raises(TypeError, match=r"subtract\(\) does not take bool and bool: .*bitwise_xor"):
        F.subtract(to_device(np.zeros(2, bool)), to_device(np.zeros(2, bool)))
    with pytest.raises(TypeError, match=r"bitwise_and\(\) does not take float32 and int8"):
        F.bitwise_and(to_device(np.zeros(2, np.float32)), to_device(np.zeros(2, np.int8)))
    with pytest.raises(TypeError, match=r"sign\(\) does not take bool"):
        F.sign(to_device(np.zeros(2, bool)))
    with pytest.raises(TypeError):
        F.add(1, 2)


def test_broadcast_error_names_shapes(to_device):
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4,\)"):
        F.add(to_device(np.zeros((2, 3))), to_device(np.zeros(4)))


def test_out_errors(backend_name, to_device):
    prepare(backend_name, "add")
    x = to_device(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="overlaps itself"):
        F.add(x[:, :1], 1.0, out=_self_overlapping_view(to_device))
    with pytest.raises(ValueError, match="shape"):
        F.add(x, x, out=to_device(np.zeros((3, 2), np.float32)))
    with pytest.raises(TypeError, match="float32 cannot be cast into out of dtype int32"):
        F.add(x, x, out=to_device(np.zeros((2, 3), np.int32)))


def _self_overlapping_view(to_device):
    base = to_device(np.zeros(3, np.float32))
    if hasattr(base, "get"):
        import cupy

        return cupy.lib.stride_tricks.as_strided(base, shape=(2, 1), strides=(0, 4))
    return np.lib.stride_tricks.as_strided(base, shape=(2, 1), strides=(0, 4))


def test_scalar_overflow_raises(backend_name, to_device):
    with pytest.raises(OverflowError):
        F.add(to_device(np.zeros(2, np.int8)), 1000)


def test_layouts_past_32_bit_offsets_split_on_host(monkeypatch, backend_name, to_device, to_host):
    """Pretend 32-bit offsets end at 4000 bytes: every launch must then stay within them."""
    from infini_cupy.elementwise import plan as elementwise_plan
    from infini_cupy.runtime import recent

    prepare(backend_name, "add", "cast")
    monkeypatch.setattr(elementwise_plan, "INT32_MAX", 4000)
    monkeypatch.setattr(elementwise_plan, "MAX_GRID", 2)
    monkeypatch.setattr(elementwise_plan, "BLOCK", 32)
    recent.forget_all()
    try:
        rng = np.random.default_rng(5)
        a = rng.standard_normal((40, 30)).astype(np.float32)
        b = rng.standard_normal((30, 1)).astype(np.float32)
        for x, y in ((a.T, b), (a[::-1, ::2], b[:15].T), (a, a[::-1])):
            got = to_host(F.add(to_device(x), to_device(y)))
            np.testing.assert_array_equal(got, x + y)
        p = elementwise_plan.plan_call("ic::OpAdd", "float", "float", 4, 4, (40, 30), (120, 4),
                                       (((30, 40), (4, 120)),))
        assert p.split is not None and p.launch is None
    finally:
        recent.forget_all()


def _plan(out_strides, *inputs, shape=(8, 5)):
    from infini_cupy.elementwise import plan as elementwise_plan

    return elementwise_plan.plan_call("ic::OpAdd", "float", "float", 4, 4, shape, out_strides,
                                      tuple(inputs))


def test_plan_paths():
    c = _plan((20, 4), ((8, 5), (20, 4)), ((8, 5), (20, 4))).launch
    assert c.contiguous and c.vector_masks == (15, 15, 15, 0)
    assert c.kernel == "ew_contig<ic::OpAdd, float, float>"
    s = _plan((20, 4), ((8, 5), (20, 4)), ((5, 8), (32, 4))).launch  # small: read as it is
    assert s.kernel == "ew_strided<ic::OpAdd, float, float, 2, int>" and s.vector_masks is None
    b = _plan((20, 4), ((8, 1), (4, 4)), ((5,), (4,))).launch
    assert b.kernel.startswith("ew_strided") and b.shape == (8, 5)
    one = _plan((8,), ((4,), (8,)), None, shape=(4,)).launch  # 1-d strided: padded to 2 dims
    assert one.kernel == "ew_strided<ic::OpAdd, float, float, 2, int>" and one.shape == (1, 4)


def test_strided_vector_path_plans():
    """Rows moved 16 bytes at a time when every row starts aligned and is whole packs long;
    an input broadcast along the rows (a column) reads one element per pack."""
    column = _plan((32, 4), ((8, 8), (32, 4)), ((8, 1), (4, 4)), shape=(8, 8)).launch
    assert not column.contiguous and column.vector_masks == (15, 15, 0, 0)
    row = _plan((32, 4), ((8, 8), (32, 4)), ((8,), (4,)), shape=(8, 8)).launch
    assert row.vector_masks == (15, 15, 15, 0)
    assert _plan((24, 4), ((8, 6), (24, 4)), ((6,), (4,)), shape=(8, 6)).launch.vector_masks is None
    padded = _plan((40, 4), ((8, 8), (32, 4)), ((8, 1), (4, 4)), shape=(8, 8)).launch
    assert padded.vector_masks is None  # output rows 40 bytes apart do not stay aligned
    scalar = _plan((32, 4), ((8, 8), (64, 8)), None, shape=(8, 8)).launch
    assert scalar.vector_masks is None  # an input strided along the row


def test_numpy_backend_calls_numpy():
    """The numpy backend: plain NumPy through array_api_compat, same signatures."""
    from infini_cupy import config

    with config.backend("numpy"):
        x = np.arange(5, dtype=np.int8)
        assert F.add(x, 1).dtype == np.int8
        np.testing.assert_array_equal(F.clip(x, 1, 3), [1, 1, 2, 3, 3])
        assert F.clip(x, None, 3).dtype == np.int8
        r = F.sin(np.asarray(0.0))
        assert isinstance(r, np.ndarray) and r.ndim == 0
        out = np.empty(5, np.int8)
        assert F.negative(x, out=out) is out and out[1] == -1
