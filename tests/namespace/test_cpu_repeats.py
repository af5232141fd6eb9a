"""Repeated elementwise calls on the ``cpu`` device: ``numpy_backend.call`` learns, per name and
operand types, where NumPy's bare ufunc answers as it does (``plain_calls``); a repeat of those
types is that ufunc alone, in Python (``numpy_backend.repeat``, boundary's hot path) or in C
(``runtime/cpu_calls.c``). Every repeat must answer as the first call: the same bits, dtype
and shape, the same exception and message, no warning; a special case never goes bare."""

from __future__ import annotations

import gc
import sys
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import infini_cupy as xp
from infini_cupy import dtypes
from infini_cupy.elementwise import numpy_backend
from infini_cupy.elementwise.ops import OPS
from infini_cupy.namespace import boundary
from tests.runtime.test_native_hot_path import CAN_BUILD
from tests.support.ci import skip_outside_ci

_NAMES = sorted(name for name, op in OPS.items() if op.arity in (1, 2))
_DTYPES = ["bool", "int8", "uint8", "int16", "int64", "uint64", "float16", "float32",
           "float64", "complex64", "complex128"] + (["bfloat16"] if dtypes.BFLOAT16 else [])
_SCALARS = [0, 3, -1, 2.5, -0.0, True, 1j, float("inf")]


@pytest.fixture(autouse=True)
def _unlearnt():
    """Each test learns from nothing: a key learnt elsewhere would hide a first call."""
    saved = dict(numpy_backend.plain_calls), dict(numpy_backend.plain_calls_into)
    numpy_backend.plain_calls.clear()
    numpy_backend.plain_calls_into.clear()
    yield
    for table, kept in zip((numpy_backend.plain_calls, numpy_backend.plain_calls_into), saved):
        table.clear()
        table.update(kept)


def cpu(h):
    return xp.asarray(h, device="cpu")


def _values(rng, dtype, shape):
    if dtype == "bfloat16":
        return rng.standard_normal(shape).astype(np.float32).astype(dtypes.BFLOAT16)
    h = rng.standard_normal(shape) * 40
    h.ravel()[:3] = [0.0, -0.0, np.inf][:h.size]  # signed zeros and an infinity among them
    if np.dtype(dtype).kind == "c":
        h = h + 1j * rng.standard_normal(shape)
    with np.errstate(all="ignore"):
        return h.astype(dtype)


def _outcome(call):
    """(dtype, shape, bytes) of a call's Array, or (exception type, message)."""
    try:
        r = call()
    except (TypeError, ValueError, OverflowError, ZeroDivisionError) as e:
        return type(e), str(e)
    assert type(r) is xp.Array and r.device == "cpu"
    h = np.asarray(r)
    return h.dtype, h.shape, h.strides, h.tobytes()


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), name=st.sampled_from(_NAMES),
       types=st.tuples(st.sampled_from(_DTYPES), st.sampled_from(_DTYPES)),
       shape=st.sampled_from([(), (1,), (5,), (3, 4)]),
       layout=st.sampled_from(["contiguous", "transposed", "strided", "broadcast"]),
       second=st.sampled_from(["array", "scalar", "scalar first"]),
       scalar=st.sampled_from(_SCALARS), into=st.booleans())
def test_every_repeat_answers_as_the_first_call(seed, name, types, shape, layout, second,
                                                scalar, into):
    rng = np.random.default_rng(seed)
    h1 = _values(rng, types[0], shape)
    h2 = _values(rng, types[1], shape)
    if layout == "transposed":
        h1 = np.ascontiguousarray(h1.T).T
    elif layout == "strided" and h1.ndim:
        h1 = np.repeat(h1, 2, axis=-1)[..., ::2]
    elif layout == "broadcast" and h2.ndim:
        h2 = h2[..., :1]
    x, y = cpu(h1), cpu(h2)
    function = getattr(xp, name)
    if OPS[name].arity == 1:
        operands = (x,)
    else:
        operands = {"array": (x, y), "scalar": (x, scalar), "scalar first": (scalar, x)}[second]
    outs = []

    def call():
        if not into:
            return function(*operands)
        with np.errstate(all="ignore"):  # out= of the first call's dtype, fresh each time
            outs.append(xp.empty_like(first_result))
        return function(*operands, out=outs[-1])

    first_result = None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no call warns, first or repeat
        if into:
            try:
                first_result = function(*operands)
            except (TypeError, ValueError, OverflowError, ZeroDivisionError):
                return  # no result: nothing to write into
        first = _outcome(call)
        repeats = [_outcome(call) for _ in range(2)]  # learnt, then compiled where built
        with boundary.python_hot_path():
            repeats.append(_outcome(call))
    for r in repeats:
        assert r == first, (name, types, second, scalar)


def _repeated(monkeypatch, calls):
    """Each call's repeats with `call` and the Python repeats refused: only C serves them."""
    expected = []
    for call in calls:
        call()
        expected.append(np.asarray(call()).tobytes())

    def refused(*args):
        raise AssertionError("the Python way ran")

    monkeypatch.setattr(numpy_backend, "call", refused)
    monkeypatch.setattr(boundary, "_cpu_repeat", refused)
    monkeypatch.setattr(boundary, "_cpu_repeat_into", refused)
    return [np.asarray(call()).tobytes() for call in calls], expected


def test_repeats_are_served_compiled(monkeypatch):
    if not CAN_BUILD:
        skip_outside_ci("no g++ or Python.h here: no compiled hot path")
    h = np.linspace(-3, 3, 48 * 64, dtype=np.float32).reshape(48, 64)
    x, y, z = cpu(h), cpu(h[::-1].copy()), cpu(np.zeros_like(h))
    i, j = cpu(np.arange(12, dtype=np.int16).reshape(3, 4)), cpu(np.ones(4, np.int16))
    calls = [lambda: xp.add(x, y), lambda: x * 2.0, lambda: 2.0 - x, lambda: xp.exp(x),
             lambda: x < y, lambda: -i, lambda: i & 6, lambda: xp.add(x, y, out=z),
             lambda: j.__ior__(6), lambda: xp.sin(x, out=z), lambda: xp.multiply(3, x, out=z),
             lambda: x[0, 0] + 1.0]  # (in place: calls whose repeat writes the same bits)
    got, expected = _repeated(monkeypatch, calls)
    assert got == expected


def test_errors_and_read_only_out_raise_at_every_repeat():
    x8 = cpu(np.arange(4, dtype=np.int8))
    for _ in range(3):
        x8 + 3
    with pytest.raises(OverflowError, match="out of bounds for int8"):
        x8 + 300
    with pytest.raises(OverflowError):
        x8 + 2**70
    z = cpu(np.zeros(4, np.int8))
    for _ in range(3):
        xp.add(x8, x8, out=z)
    read_only = np.zeros(4, np.int8)
    read_only.flags.writeable = False
    for _ in range(2):
        with pytest.raises(ValueError, match=r"add\(\): out .* is read-only"):
            xp.add(x8, x8, out=cpu(read_only))
    with pytest.raises(ValueError):  # out of another shape: NumPy's error, nothing written
        xp.add(x8, x8, out=cpu(np.zeros(5, np.int8)))
    wide = cpu(np.zeros(4, np.int16))  # same_kind into a wider out: NumPy writes it
    for _ in range(3):
        xp.add(x8, x8, out=wide)
    assert np.array_equal(np.asarray(wide), 2 * np.arange(4))
    with pytest.raises(TypeError, match="cannot be cast into out of dtype int8"):
        xp.add(cpu(np.ones(4)), x8, out=z)


def test_special_cases_never_go_bare():
    """The functions whose NumPy answer differs from the standard's repeat `call`'s own
    computation (`_computed`), never the bare ufunc."""
    z = cpu(np.array([0.0, -0.0, np.inf, -1.0]))
    i = cpu(np.array([2, -1, 1], dtype=np.int16))
    for _ in range(3):
        assert np.signbit(np.asarray(xp.maximum(z, -z)))[:2].tolist() == [False, False]
        assert np.signbit(np.asarray(xp.minimum(z, -z)))[:2].tolist() == [True, True]
        assert np.signbit(np.asarray(xp.maximum(-0.0, z)))[:2].tolist() == [False, True]
        assert np.asarray(z // 2).tolist()[2] == np.inf
        assert np.asarray(i ** -1).tolist() == [0, -1, 1]  # no ValueError: the kernels' answer
    specials = [key for key in numpy_backend.plain_calls
                if key[0] in ("maximum", "minimum", "floor_divide", "pow")]
    assert len(specials) == 5
    assert not any(isinstance(numpy_backend.plain_calls[key], np.ufunc) for key in specials)


def test_operands_cast_first_never_go_bare():
    """int64 with float: the kernels' loop casts the int64 operand first, as `call` does."""
    big = cpu(np.array([2**53 + 1, 3], dtype=np.int64))
    f = cpu(np.array([0.5, 0.5], dtype=np.float32))
    for _ in range(3):
        r = big + f
    assert r.dtype == xp.float64
    assert ("add", np.dtype(np.int64), np.dtype(np.float32)) not in numpy_backend.plain_calls


def test_a_0d_repeat_is_a_0d_array():
    x = cpu(np.float32(2.0))
    for _ in range(3):
        r = x * x
        assert type(r) is xp.Array and r.shape == () and r.dtype == xp.float32


def test_repeats_keep_no_reference():
    x = cpu(np.ones((8, 8), np.float32))
    z = cpu(np.zeros((8, 8), np.float32))
    for _ in range(3):
        x * x, x + 2.0, xp.exp(x), xp.add(x, x, out=z), x + 300
    gc.collect()
    before = (sys.getrefcount(x), sys.getrefcount(x._a), sys.getrefcount(z._a),
              len(gc.get_objects()))
    for k in range(1000):
        x * x, x + k / 2, xp.exp(x), xp.add(x, x, out=z), z.__imul__(1.0)
    gc.collect()
    after = (sys.getrefcount(x), sys.getrefcount(x._a), sys.getrefcount(z._a),
             len(gc.get_objects()))
    assert after[:3] == before[:3]
    assert after[3] - before[3] < 100
