"""What a fused function takes, against the unfused calls of the same function: every mix of
operand kinds (Arrays, NumPy arrays, 0-d arrays, NumPy scalars, Python scalars), the errors
(devices, shapes, dtypes), the cpu device, ``out=``, keyword arguments, ``where`` of two
scalars and ``prepare``."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.runtime.emulate import launcher as emulator
from infini_cupy.runtime.launch import prepare, recording

RNG = np.random.default_rng(30)
X = RNG.standard_normal((3, 4)).astype(np.float32)
Y = RNG.standard_normal(4)  # float64


def axpy(x, y):
    # namespace functions only: the unfused call is ours whatever the operands' kinds
    # (every call has x or y: an array among them is enough for the unfused calls)
    return xp.add(xp.multiply(x, y), xp.multiply(xp.subtract(x, y), 2.5))


def _kind(value, kind):
    """``value`` (an ndarray) as an operand of ``kind``."""
    return {
        "Array": lambda: xp.asarray(value, device="emulator"),
        "ndarray": lambda: value,
        "0-d": lambda: np.asarray(value.ravel()[0]),
        "0-d Array": lambda: xp.asarray(np.asarray(value.ravel()[0]), device="emulator"),
        "numpy scalar": lambda: value.ravel()[0],
        "python": lambda: float(value.ravel()[0]),
    }[kind]()


KINDS = ["Array", "ndarray", "0-d", "0-d Array", "numpy scalar", "python"]
MIXES = [(a, b) for a, b in itertools.product(KINDS, KINDS)
         if a not in ("numpy scalar", "python") or b not in ("numpy scalar", "python")]


def _same(a, b):
    assert type(a) is type(b)
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


@pytest.fixture(scope="module", autouse=True)
def _built():
    """The kernels of this file in one emulator library (one g++ run, cached on disk)."""
    names = {xp.fuse(axpy).kernel_name(_kind(X, a), _kind(Y, b)) for a, b in MIXES}
    names.add(xp.fuse(axpy).kernel_name(np.zeros((4, 3), np.float32).T, Y))
    names |= {xp.fuse(lambda c, k: xp.where(xp.greater(c, 0), k, 2)).kernel_name(X, s)
              for s in (1.0, 1, True)}
    prepare("elementwise.cu", sorted(names), backend="emulate")


@pytest.mark.parametrize("kinds", MIXES, ids=["-".join(m) for m in MIXES])
def test_every_operand_mix_is_one_launch_equal_to_the_unfused_call(kinds):
    x, y = _kind(X, kinds[0]), _kind(Y, kinds[1])
    fused = xp.fuse(axpy, strict=True)
    expected = axpy(x, y)
    for _ in range(2):  # the first call, then the cached path
        with recording() as launches:
            got = fused(x, y)
        assert [r.name for r in launches] == [fused.kernel_name(x, y)]
        _same(got, expected)
    assert (type(got) is xp.Array) == (xp.Array in (type(x), type(y)))


def test_the_mix_that_crashed():
    f = xp.fuse(lambda x, y: x * 2 + y)
    x = xp.asarray(np.ones((3, 4), np.float32), device="emulator")
    _same(f(x, np.ones(4, np.float32)), x * 2 + np.ones(4, np.float32))


def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", ["devices", "shapes", "dtypes", "scalar range"])
def test_errors_are_the_unfused_calls(case):
    def bits(x, y):
        return xp.bitwise_and(x, y)

    function, args = {
        "devices": (axpy, (xp.asarray(X, device="emulator"), xp.asarray(Y, device="cpu"))),
        "shapes": (axpy, (xp.asarray(X, device="emulator"), xp.asarray(np.ones(3)))),
        "dtypes": (bits, (xp.asarray(X, device="emulator"), np.ones(4, np.float32))),
        "scalar range": (lambda x, k: xp.add(x, k), (np.zeros(3, np.int8), 300)),
    }[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the unfused call's error, not a FusionWarning
        assert _error(lambda: xp.fuse(function)(*args)) == _error(lambda: function(*args))
        assert _error(lambda: xp.fuse(function, strict=True)(*args)) == _error(
            lambda: function(*args))


def test_the_cpu_device_runs_unfused():
    fused = xp.fuse(axpy, strict=True)
    for x, y in [(xp.asarray(X, device="cpu"), Y), (X, Y), (X, xp.asarray(Y, device="cpu"))]:
        with xp.backend("numpy"), recording() as launches:
            _same(fused(x, y), axpy(x, y))
        assert launches == []
    with xp.backend("numpy"):
        cpu = xp.asarray(X, device="cpu")
        assert _error(lambda: fused(cpu, np.ones(3))) == _error(lambda: axpy(cpu, np.ones(3)))
        out = np.empty((4, 3), np.float32).T
        assert fused(X, Y.astype(np.float32), out=out) is out
        np.testing.assert_array_equal(out, axpy(X, Y.astype(np.float32)))


def _layouts():
    """out= arrays of shape (3, 4): C, F, reversed, every other element, an Array."""
    yield "C", np.empty((3, 4))
    yield "F", np.empty((4, 3)).T
    yield "reversed", np.empty((3, 4))[::-1, ::-1]
    yield "step", np.empty((3, 8))[:, ::2]
    yield "Array", xp.asarray(np.empty((3, 4)), device="emulator")


@pytest.mark.parametrize("name, out", list(_layouts()), ids=[n for n, _ in _layouts()])
def test_out_takes_any_layout(name, out):
    fused = xp.fuse(axpy, strict=True)
    x = xp.asarray(X, device="emulator") if name == "Array" else X
    for _ in range(2):
        with recording() as launches:
            assert fused(x, Y, out=out) is out
        assert len(launches) == 1
        _same(np.asarray(out) + 0, np.asarray(axpy(x, Y)) + 0)


def test_out_overlapping_an_input_gives_numpys_answer():
    def shift(x, y):
        return xp.add(x, y)

    fused = xp.fuse(shift, strict=True)
    for view in (lambda a: a, lambda a: a[::-1], lambda a: a[1:]):
        a = np.arange(8.0)
        b = np.arange(8.0)
        np.add(view(b), view(b)[::-1], out=view(b))
        fused(view(a), view(a)[::-1], out=view(a))
        np.testing.assert_array_equal(a, b)


def _axpy_into(x, y, out):
    """axpy unfused, its last call writing into ``out``."""
    return xp.add(xp.multiply(x, y), xp.multiply(xp.subtract(x, y), 2.5), out=out)


def test_out_is_checked_as_the_unfused_calls_check_it():
    fused = xp.fuse(axpy)
    x = xp.asarray(X, device="emulator")
    for out, error in [(np.empty((4, 3)), ValueError), (np.empty((3, 4), np.int32), TypeError),
                       (np.broadcast_to(np.empty(4), (3, 4)), ValueError),
                       (xp.asarray(np.empty((3, 4)), device="cpu"), ValueError)]:
        with pytest.raises(error) as fused_error:
            fused(x, Y, out=out)
        with pytest.raises(error) as unfused_error:
            _axpy_into(x, Y, out)
        assert type(fused_error.value) is type(unfused_error.value)
    # float64 into float32 is a same_kind cast: accepted, as by the unfused calls
    out, expected = np.empty((3, 4), np.float32), np.empty((3, 4), np.float32)
    fused(x, Y, out=out)
    _axpy_into(x, Y, expected)
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(TypeError, match="one output"):
        xp.fuse(lambda x: (x + 1, x * 2))(X, out=np.empty((3, 4), np.float32))


def test_keyword_arguments_are_traced_like_positional_ones():
    def scaled(x, *, y, scale=2.5):
        return xp.add(xp.multiply(x, scale), xp.subtract(y, 1))

    fused = xp.fuse(scaled, strict=True)
    for _ in range(2):
        with recording() as launches:
            got = fused(X, y=Y)
        assert len(launches) == 1
        _same(got, scaled(X, y=Y))
    _same(fused(X, scale=2.5, y=Y), scaled(X, y=Y))  # another order: the same kernel
    _same(fused(X, y=Y, scale=-1.0), scaled(X, y=Y, scale=-1.0))
    _same(fused(x=X, y=np.float64(3.0)), scaled(X, y=np.float64(3.0)))


@pytest.mark.parametrize("k", [1.0, 1, True])
def test_where_of_two_scalars(k):
    def select(c, k):
        return xp.where(xp.greater(c, 0), k, 2)

    fused = xp.fuse(select, strict=True)
    with recording() as launches:
        got = fused(X, k)
    assert len(launches) == 1
    _same(got, select(X, k))


def test_prepare_compiles_ahead_of_the_first_call(monkeypatch):
    fused = xp.fuse(lambda x, y: xp.maximum(xp.multiply(x, y), -1.0))
    name = fused.prepare(((3, 4), "float32"), float)
    assert name == fused.kernel_name(X, 2.0) == fused.kernel_name(((3, 4), np.float32), 2.0)
    assert fused.prepare(xp.asarray(X, device="cpu"), 2.0) is None  # NumPy computes on cpu

    def no_build(*args):
        raise AssertionError("the first call built a kernel")

    monkeypatch.setattr(emulator.emulator_build, "kernel_library", no_build)
    with recording() as launches:
        fused(X, 2.0)
    assert [r.name for r in launches] == [name]


def test_arguments_the_results_do_not_read_take_no_part():
    def first(x, unused):
        return xp.negative(x)

    unused = xp.asarray(np.ones(2), device="cpu")  # another device, unread: as unfused
    _same(xp.fuse(first, strict=True)(X, unused), first(X, unused))


def test_python_arithmetic_of_scalar_arguments_is_computed_per_call():
    def lerp(x, y, a):
        return xp.add(xp.multiply(x, 1 - a), xp.multiply(y, a))

    fused = xp.fuse(lerp, strict=True)
    for a in (0.25, -3.0, 2):  # an int: another signature
        with recording() as launches:
            got = fused(X, Y, a)
        assert len(launches) == 1
        _same(got, lerp(X, Y, a))

    def power(x, k):
        return xp.add(x, 2 ** k)  # int ** negative int is a float: runs unfused

    fused = xp.fuse(power, strict=True)
    _same(fused(X, 3), power(X, 3))
    _same(fused(X, -1), power(X, -1))


def test_an_array_out_does_not_make_later_results_arrays():
    fused = xp.fuse(axpy, strict=True)
    out = xp.asarray(np.empty((3, 4)), device="emulator")
    assert fused(X, Y, out=out) is out
    _same(fused(X, Y), axpy(X, Y))  # the same signature without out: a NumPy array


def test_out_of_a_function_that_runs_unfused():
    def centered(x):
        return xp.subtract(x, xp.mean(x))  # mean: not elementwise

    out = np.empty((4, 3)).T
    with pytest.warns(xp.FusionWarning, match="mean"):
        assert xp.fuse(centered)(X.astype(np.float64), out=out) is out
    np.testing.assert_array_equal(out, centered(X.astype(np.float64)))
    with pytest.warns(xp.FusionWarning), pytest.raises(ValueError, match="shape"):
        xp.fuse(centered)(X.astype(np.float64), out=np.empty((4, 3)))


def test_none_and_string_options_are_part_of_the_trace():
    def activation(x, mode="relu", bias=None):
        y = x if bias is None else xp.add(x, bias)
        return xp.maximum(y, 0) if mode == "relu" else xp.negative(y)

    fused = xp.fuse(activation, strict=True)
    for kwargs in ({}, {"mode": "neg"}, {"bias": 1.5}, {"mode": "neg", "bias": None}):
        for _ in range(2):
            with recording() as launches:
                got = fused(X, **kwargs)
            assert len(launches) == 1
            _same(got, activation(X, **kwargs))
    _same(fused(X, "neg", None), activation(X, "neg", None))
