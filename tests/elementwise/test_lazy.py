"""``infini_cupy.lazy``: deferred elementwise calls on the emulator are bit-identical to the
eager calls, raise what they raise at the same call, run a chain as one launch, and change
nothing when off (the default)."""

from __future__ import annotations

import contextlib
import logging
import operator
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import infini_cupy as xp
from infini_cupy import config
from infini_cupy.namespace import fusion, pending
from infini_cupy.runtime.launch import recording

DTYPES = ["bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64"]
SHAPES = [(2, 3), (3,), (1, 3), (2, 1), ()]
UNARY = ["negative", "abs", "sqrt", "exp", "floor", "logical_not", "bitwise_invert", "square",
         "sign"]
BINARY = ["add", "subtract", "multiply", "divide", "maximum", "less", "equal", "floor_divide",
          "pow", "bitwise_and", "logical_or"]
OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
             "<": operator.lt, "**": operator.pow, "&": operator.and_}
UNARY_OPERATORS = {"-": operator.neg, "abs()": abs, "~": operator.invert}
# 300: past int8/uint8, an OverflowError at the call; NumPy scalars are typed
SCALARS = [2, -1, 0.5, True, 300, -1.5, np.float32(0.5), np.int16(3)]
ERRORS = (TypeError, ValueError, OverflowError)
CLIP_BOUNDS = [None, -1, 0.5, 2, True, 300, -1e300, 1j]  # 0.5 with integers, 1j: TypeError


def _values(dtype, shape, rng):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.integers(0, 2, shape).astype(dt)
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -5, 6, shape).astype(dt)
    values = (rng.standard_normal(shape) * 3).astype(dt)
    if values.size > 1:
        values.flat[0] = np.nan
    return values


def _step(draw):
    index = st.integers(0, 63)  # taken modulo the values existing at the step
    operand = st.one_of(index, index, st.sampled_from(SCALARS).map(lambda s: ("scalar", s)))
    return draw(st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(UNARY + list(UNARY_OPERATORS)), index,
                  st.booleans()),
        st.tuples(st.just("binary"), st.sampled_from(BINARY + list(OPERATORS)), index, operand,
                  st.booleans()),
        st.tuples(st.just("inplace"), st.sampled_from(["+=", "*="]), index, operand),
        st.tuples(st.just("setitem"), index, operand),
        st.tuples(st.just("view"), index),
        st.tuples(st.just("cast"), st.sampled_from(DTYPES + ["complex64"]), index,
                  st.booleans()),
        st.tuples(st.just("clip"), index, st.sampled_from(CLIP_BOUNDS),
                  st.sampled_from(CLIP_BOUNDS), st.booleans()),
        # eager inside lazy(): they evaluate what they read
        st.tuples(st.just("eager"), st.sampled_from(["where", "clip", "astype", "sum"]), index,
                  operand),
        st.tuples(st.just("out"), st.sampled_from(["add", "multiply"]), index, operand, index),
        st.tuples(st.just("rearrange_"), index, index)))


@st.composite
def programs(draw):
    """Base arrays (dtypes, broadcastable shapes) and steps over them and earlier results."""
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    bases = [_values(draw(st.sampled_from(DTYPES)), draw(st.sampled_from(SHAPES)), rng)
             for _ in range(draw(st.integers(1, 3)))]
    steps = [_step(draw) for _ in range(draw(st.integers(1, 6)))]
    return bases, steps


def _operand(pool, operand):
    if type(operand) is tuple:
        return operand[1]
    return pool[operand % len(pool)]


def _apply(step, pool):
    """One step of a program on the values so far; a result joins them (``keep``) or
    replaces its first operand, which nothing may reference any more (an intermediate)."""
    kind = step[0]
    if kind == "unary":
        _, name, i, keep = step
        x = pool[i % len(pool)]
        result = UNARY_OPERATORS[name](x) if name in UNARY_OPERATORS else getattr(xp, name)(x)
    elif kind == "binary":
        _, name, i, operand, keep = step
        x1, x2 = pool[i % len(pool)], _operand(pool, operand)
        result = OPERATORS[name](x1, x2) if name in OPERATORS else getattr(xp, name)(x1, x2)
    elif kind == "cast":  # deferred: a cast node of the kernel
        _, dtype, i, keep = step
        result = xp.astype(pool[i % len(pool)], dtype)
    elif kind == "clip":  # deferred with scalar bounds
        _, i, lo, hi, keep = step
        result = xp.clip(pool[i % len(pool)], lo, hi)
    elif kind == "inplace":
        _, name, i, operand = step
        target = pool[i % len(pool)]
        if name == "+=":
            target += _operand(pool, operand)
        else:
            target *= _operand(pool, operand)
        return
    elif kind == "setitem":
        _, i, operand = step
        pool[i % len(pool)][...] = _operand(pool, operand)
        return
    elif kind == "eager":
        _, name, i, operand = step
        x, other = pool[i % len(pool)], _operand(pool, operand)
        if name == "where":
            pool.append(xp.where(x > 0, x, other))
        elif name == "clip":
            pool.append(xp.clip(x, -1, 2))
        elif name == "astype":
            pool.append(xp.astype(x, getattr(other, "dtype", xp.float32)))
        else:
            pool.append(xp.sum(x))
        return
    elif kind == "out":
        _, name, i, operand, j = step
        getattr(xp, name)(pool[i % len(pool)], _operand(pool, operand), out=pool[j % len(pool)])
        return
    elif kind == "rearrange_":
        _, i, j = step
        xp.rearrange_(pool[j % len(pool)], pool[i % len(pool)])
        return
    else:  # a view of the value, kept: writes through it reach the value
        x = pool[step[1] % len(pool)]
        pool.append(x[..., ::-1] if x.ndim else x[...])
        return
    if keep:
        pool.append(result)
    else:
        pool[i % len(pool)] = result


def _run(bases, steps, lazy, to_device=lambda a: a, to_host=np.asarray):
    """(per step: None or the error raised, the values at the end, read after the block), on
    the suite's device (the emulator, or the GPU with ``--backend cuda``)."""
    pool = [xp.asarray(to_device(b.copy())) for b in bases]
    assert all(x.device != "cpu" for x in pool)  # devices whose calls lazy() defers
    outcomes = []
    with np.errstate(all="ignore"), (xp.lazy() if lazy else contextlib.nullcontext()):
        for step in steps:
            try:
                _apply(step, pool)
                outcomes.append(None)
            except ERRORS as e:
                outcomes.append((type(e), str(e)))
    return outcomes, [to_host(x) for x in pool]


def _same_bits(got, expected):
    """Bit for bit, NaNs equal to NaNs (a NaN's sign and payload are not compared)."""
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    if got.tobytes() == expected.tobytes():
        return
    assert got.dtype.kind == "f", (got, expected)
    nan = np.isnan(got)
    np.testing.assert_array_equal(nan, np.isnan(expected))
    bits = np.dtype(f"u{got.dtype.itemsize}")
    np.testing.assert_array_equal(got[~nan].view(bits), expected[~nan].view(bits))


_HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large,
           HealthCheck.function_scoped_fixture]  # to_device and to_host: the same each example


# derandomized: each new expression is a new kernel (g++), kept in the disk cache for reruns
@settings(max_examples=50, derandomize=True, database=None, deadline=None,
          suppress_health_check=_HEALTH)
@given(program=programs())
def test_random_programs_lazy_equal_eager_bit_for_bit(program, to_device, to_host):
    bases, steps = program
    eager_outcomes, eager_values = _run(bases, steps, False, to_device, to_host)
    lazy_outcomes, lazy_values = _run(bases, steps, True, to_device, to_host)
    assert lazy_outcomes == eager_outcomes  # the same error, raised by the same step
    assert len(lazy_values) == len(eager_values)
    for got, expected in zip(lazy_values, eager_values):
        _same_bits(got, expected)
    assert not pending.expressions


def _layer_norm_operands():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    arrays = [x, x.mean(axis=1, keepdims=True), x.var(axis=1, keepdims=True),
              rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32)]
    return [xp.asarray(a, device="emulator") for a in arrays]


def test_layer_norm_chain_is_one_launch_one_allocation(monkeypatch):
    x, mu, var, w, b = _layer_norm_operands()
    eps = 1e-5
    eager = np.asarray((x - mu) / xp.sqrt(var + eps) * w + b)
    allocations = []
    allocate = fusion.empty
    monkeypatch.setattr(fusion, "empty", lambda *a: allocations.append(a) or allocate(*a))
    with recording() as launches, xp.lazy():
        y = (x - mu) / xp.sqrt(var + eps) * w + b
        assert (y.shape, y.dtype, y.device) == ((4, 8), np.float32, "emulator")
        assert not launches  # nothing ran yet
    assert len(launches) == 1 and launches[0].name.startswith("ew_fused")
    assert len(allocations) == 1  # the result alone: no intermediate is allocated
    _same_bits(np.asarray(y), eager)


def test_referenced_intermediates_are_outputs_of_the_same_kernel():
    x, mu, var, w, b = _layer_norm_operands()
    with recording() as launches, xp.lazy():
        centered = x - mu
        y = centered / xp.sqrt(var + 1e-5) * w + b
    assert len(launches) == 1
    _same_bits(np.asarray(centered), np.asarray(x) - np.asarray(mu))
    _same_bits(np.asarray(y), np.asarray((x - mu) / xp.sqrt(var + 1e-5) * w + b))


def test_a_chain_of_one_shape_is_one_kernel_with_its_intermediates_unwritten():
    rng = np.random.default_rng(5)
    x, w = (xp.asarray(rng.standard_normal((3, 5)).astype(np.float32), device="emulator")
            for _ in range(2))
    for s in (0.5, float("-2.25"), np.float32(3)):  # the second round: the same kernel
        with recording() as launches, xp.lazy():
            unused = xp.exp(w) * s  # noqa: F841  referenced by nothing at the end
            t = xp.abs(x)
            y = xp.log1p(xp.exp(-t)) + xp.maximum(x, 0) * s
            kept = t * 3
            del unused
        assert len(launches) == 1 and launches[0].name.startswith("ew_fused")
        _same_bits(np.asarray(y),
                   np.asarray(xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0) * s))
        _same_bits(np.asarray(kept), np.asarray(xp.abs(x) * 3))


def test_calls_after_a_failed_evaluation_still_compute_what_was_pending(monkeypatch):
    x = xp.asarray(np.arange(4.0), device="emulator")
    with xp.lazy():
        y = x * 2
        z = y + 1
        with monkeypatch.context() as patched:
            patched.setattr(pending, "evaluate_group", _broken_kernel)
            with pytest.raises(RuntimeError, match="kernel failed"):
                np.asarray(z)
        assert z._p is not None  # still pending, as y
        w = z * 3 - y  # steps on the pending ones of before the failure
    np.testing.assert_array_equal(np.asarray(w), (np.arange(4.0) * 2 + 1) * 3 - np.arange(4.0) * 2)
    np.testing.assert_array_equal(np.asarray(y), np.arange(4.0) * 2)


def _broken_kernel(group, program, fused):
    raise RuntimeError("kernel failed")


WHERE_VALUES = ["int8", "uint8", "int64", "float16", "float32", "bool", 2, -1, 300, 0.5, True]


@pytest.mark.parametrize("second", WHERE_VALUES)
@pytest.mark.parametrize("first", WHERE_VALUES[:6])
def test_where_is_a_select_node_bit_for_bit(first, second, to_device, to_host):
    """``where`` of a bool condition and Array or scalar values: deferred, one kernel with
    what computes its operands, the eager call's dtype, shape and bits (or its error)."""
    rng = np.random.default_rng(len(str(first)) * 31 + len(str(second)))
    condition = xp.asarray(to_device(rng.integers(0, 2, (3, 4)).astype(bool)))

    def value(v, shape):
        if isinstance(v, str):
            return xp.asarray(to_device(_values(v, shape, rng)))
        return v

    x1, x2 = value(first, (3, 4)), value(second, (4,))

    def chain():
        return xp.where(condition & True, -x1 if x1.dtype != xp.bool else x1, x2)

    try:
        eager = chain()
    except ERRORS as error:
        with xp.lazy(), pytest.raises(type(error)):
            chain()
        return
    out_of_range = (type(second) is int and eager.dtype.kind in "iu"
                    and not np.iinfo(eager.dtype).min <= second <= np.iinfo(eager.dtype).max)
    with recording() as launches, xp.lazy():
        deferred = chain()
        # a scalar past the result's range: NumPy's where converts it, eagerly
        assert (deferred._p is None) == out_of_range
    assert len(launches) == 1  # (eagerly: its operands, then the library's where)
    got, expected = to_host(deferred), to_host(eager)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    _same_bits(got, expected)


@pytest.mark.parametrize("call", [
    lambda x, y: x + 300,                       # OverflowError: 300 is past int8
    lambda x, y: x + y[:2],                     # ValueError: shapes do not broadcast
    lambda x, y: xp.bitwise_and(y, 1),          # TypeError: bitwise on floating point
    lambda x, y: x + xp.asarray([1], dtype=xp.int8, device="cpu"),  # ValueError: devices
    lambda x, y: xp.add(x, "a"),                # TypeError: not an array or a scalar
])
def test_bad_input_raises_at_the_call_inside_lazy(call):
    x = xp.asarray([1, 2, 3], dtype=xp.int8, device="emulator")
    y = xp.asarray([1.0, 2.0, 3.0], device="emulator")
    with pytest.raises(ERRORS) as eager:
        call(x, y)
    with xp.lazy():
        z = x * 2  # pending while the bad call raises
        with pytest.raises(type(eager.value)) as deferred:
            call(z, y)
        assert str(deferred.value) == str(eager.value)
    np.testing.assert_array_equal(np.asarray(z), [2, 4, 6])


def test_lazy_is_off_by_default_and_changes_nothing():
    assert config.lazy_enabled() is False
    x = xp.asarray([1.0, 2.0], device="emulator")
    with pytest.raises(AttributeError, match="'Array' object has no attribute 'nope'"):
        x.nope  # a plain failed lookup, before or after any deferral (pending reads are on)
    with recording() as launches:
        y = x * 2 + 1
    assert y._p is None and len(launches) == 2
    with xp.lazy(), xp.lazy(enabled=False):
        z = x * 2 + 1
        assert z._p is None
    _same_bits(np.asarray(y), np.asarray(z))


def test_one_lazy_object_is_reusable_nested_and_a_decorator():
    rng = np.random.default_rng(11)
    h = rng.standard_normal((2, 3)).astype(np.float32)
    x = xp.asarray(h, device="emulator")
    deferring = xp.lazy()
    with deferring:
        with deferring:  # nested: the inner exit evaluates, the outer block still defers
            inner = x * 2.0
            assert inner._p is not None
        assert inner._p is None and config.lazy_enabled()
        outer = inner + x
        assert outer._p is not None
    assert not config.lazy_enabled() and outer._p is None
    np.testing.assert_array_equal(np.asarray(outer), h * np.float32(2) + h)

    @xp.lazy()
    def chain(a, depth):  # recursive: each call enters the same object again
        b = xp.exp(a) - a if depth == 0 else chain(a, depth - 1) * 0.5
        assert b._p is not None and config.lazy_enabled()
        return b

    result = chain(x, 2)
    assert result._p is None and not config.lazy_enabled()
    with xp.lazy(enabled=False):
        expected = (xp.exp(x) - x) * 0.5 * 0.5
    _same_bits(np.asarray(result), np.asarray(expected))
    with pytest.raises(ZeroDivisionError), deferring:  # an exception: the block's value
        kept = x - 1.0  # stays pending until read
        1 / 0
    assert not config.lazy_enabled() and kept._p is not None
    np.testing.assert_array_equal(np.asarray(kept), h - np.float32(1))


def test_cpu_arrays_run_eagerly():
    x = xp.asarray([1.0, 2.0], device="cpu")
    with xp.lazy():
        y = x + 1
        assert y._p is None
    np.testing.assert_array_equal(np.asarray(y), [2.0, 3.0])


@pytest.mark.parametrize("read", [
    repr, float, bool, lambda y: y.item(), lambda y: y.tolist(), np.asarray,
    lambda y: y.to_device("cpu"), lambda y: xp.sum(y), lambda y: y[...],
    lambda y: xp.reshape(y, (1,)),
])
def test_what_reads_a_value_evaluates(read):
    x = xp.asarray([3.0], device="emulator").reshape(())
    with xp.lazy():
        y = xp.sqrt(x) + 1
        assert y._p is not None
        read(y)
        assert y._p is None


def test_writes_evaluate_what_reads_the_memory_first():
    x = xp.asarray([1.0, 2.0, 3.0], device="emulator")
    view = x[::-1]
    with xp.lazy():
        doubled = x * 2
        view[...] = 0.0       # x[key] = v through a view of x
        tripled = x * 3 + 1   # reads the new x
        x += 10               # an in-place operator: out=x
        plus = xp.add(x, 1, out=xp.empty_like(x))
    np.testing.assert_array_equal(np.asarray(doubled), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(np.asarray(tripled), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(np.asarray(x), [10.0, 10.0, 10.0])
    np.testing.assert_array_equal(np.asarray(plus), [11.0, 11.0, 11.0])


def test_handing_a_buffer_out_evaluates_what_reads_it_first():
    x = xp.asarray([1.0, 2.0], device="emulator")
    y = xp.asarray([5.0, 6.0], device="emulator")
    with xp.lazy():
        doubled = x * 2
        np.asarray(x)[0] = 100.0      # written through NumPy: doubled read x before
        moved = y + 1
        xp.rearrange_(y[::-1], x)     # a strided copy into y, reversed
    np.testing.assert_array_equal(np.asarray(doubled), [2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(moved), [6.0, 7.0])
    np.testing.assert_array_equal(np.asarray(y), [2.0, 100.0])


@pytest.mark.parametrize("write", [
    lambda x: np.copyto(x, 0.0),
    lambda x: np.put(x, [0, 1], 0.0),
    lambda x: np.putmask(x, np.array([True, True]), 0.0),
    lambda x: np.add.at(x, [0, 0], 5.0),
], ids=["copyto", "put", "putmask", "add.at"])
def test_numpy_functions_writing_an_array_evaluate_what_reads_it_first(write):
    """NumPy's own functions given Arrays (not the namespace's) may write them: what a
    pending expression reads is computed before the native arrays are handed on."""
    x = xp.asarray([1.0, 2.0], device="emulator")
    with xp.lazy():
        doubled = x * 2
        write(x)
    np.testing.assert_array_equal(np.asarray(doubled), [2.0, 4.0])


def test_long_chains_split_at_the_kernel_limits():
    x = xp.asarray(np.linspace(0, 1, 5), device="emulator")
    eager = x
    for k in range(150):
        eager = eager * 1.001 + k
    with recording() as launches, xp.lazy():
        y = x
        for k in range(150):
            y = y * 1.001 + k
    assert 1 < len(launches) < 10
    _same_bits(np.asarray(y), np.asarray(eager))


def test_the_log_names_each_evaluation(caplog):
    x = xp.asarray([1.0], device="emulator")
    with caplog.at_level(logging.DEBUG, logger="infini_cupy"), xp.lazy():
        y = x + 1
        z = y * 2
    assert any("lazy: 2 pending array(s) evaluated by 1 fused kernel(s): end of lazy()"
               in r.getMessage() for r in caplog.records)
    np.testing.assert_array_equal(np.asarray(z), [4.0])


def test_deferring_in_a_loop_stays_bounded():
    x = xp.asarray([1.0, 2.0], device="emulator")
    with xp.lazy():
        kept = [x * k for k in range(pending.MAX_REGISTERED // 2 + 1)]  # all referenced
        assert len(pending.expressions) < pending.MAX_REGISTERED
        for k in range(2 * pending.MAX_REGISTERED):
            dropped = x + k  # noqa: F841  each one unreferenced at the next
        assert len(pending.expressions) < pending.MAX_REGISTERED
    np.testing.assert_array_equal(np.asarray(kept[3]), [3.0, 6.0])


def test_the_environment_variable_turns_it_on_everywhere():
    script = ("import infini_cupy as xp\n"
              "x = xp.asarray([1.0, 2.0], device='emulator')\n"
              "y = x * 2 + 1\n"
              "assert y._p is not None and y.shape == (2,)\n"
              "assert y.tolist() == [3.0, 5.0] and y._p is None\n")
    env = {**os.environ, config.LAZY_VAR: "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
