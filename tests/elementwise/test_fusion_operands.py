"""What a fused function takes, against the unfused calls of the same function: every mix of
operand kinds (Arrays, native arrays, 0-d arrays, NumPy scalars, Python scalars), the errors
(devices, shapes, dtypes), the cpu device, ``out=``, keyword arguments, ``where`` of two
scalars and ``prepare``. On the suite's device (the emulator, or the GPU with
``--backend cuda``: native arrays are then CuPy's); the cpu device and ``prepare``'s
emulator build are the emulator's on every suite backend."""

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


def _kind(value, kind, to_device=None):
    """``value`` (an ndarray) as an operand of ``kind``, on the suite's device (``to_device``;
    None: the emulator)."""
    place = to_device or (lambda a: a)

    def array(a):
        return xp.asarray(place(a)) if to_device else xp.asarray(a, device="emulator")

    return {
        "Array": lambda: array(value),
        "ndarray": lambda: place(value),
        "0-d": lambda: place(np.asarray(value.ravel()[0])),
        "0-d Array": lambda: array(np.asarray(value.ravel()[0])),
        "numpy scalar": lambda: value.ravel()[0],
        "python": lambda: float(value.ravel()[0]),
    }[kind]()


KINDS = ["Array", "ndarray", "0-d", "0-d Array", "numpy scalar", "python"]
MIXES = [(a, b) for a, b in itertools.product(KINDS, KINDS)
         if a not in ("numpy scalar", "python") or b not in ("numpy scalar", "python")]


@pytest.fixture
def same(to_host):
    """Results of one type, bit-identical."""

    def check(a, b):
        assert type(a) is type(b)
        a, b = to_host(a), to_host(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()

    return check


@pytest.fixture(scope="module", autouse=True)
def _built(backend_name):
    """The kernels of this file in one emulator library (one g++ run, cached on disk)."""
    if backend_name != "emulate":
        return
    names = {xp.fuse(axpy).kernel_name(_kind(X, a), _kind(Y, b)) for a, b in MIXES}
    names.add(xp.fuse(axpy).kernel_name(np.zeros((4, 3), np.float32).T, Y))
    names |= {xp.fuse(lambda c, k: xp.where(xp.greater(c, 0), k, 2)).kernel_name(X, s)
              for s in (1.0, 1, True)}
    prepare("elementwise.cu", sorted(names), backend="emulate")


@pytest.mark.parametrize("kinds", MIXES, ids=["-".join(m) for m in MIXES])
def test_every_operand_mix_is_one_launch_equal_to_the_unfused_call(kinds, to_device, same):
    x, y = _kind(X, kinds[0], to_device), _kind(Y, kinds[1], to_device)
    fused = xp.fuse(axpy, strict=True)
    expected = axpy(x, y)
    for _ in range(2):  # the first call, then the cached path
        with recording() as launches:
            got = fused(x, y)
        assert [r.name for r in launches] == [fused.kernel_name(x, y)]
        same(got, expected)
    assert (type(got) is xp.Array) == (xp.Array in (type(x), type(y)))


def test_the_mix_that_crashed(same):
    f = xp.fuse(lambda x, y: x * 2 + y)
    x = xp.asarray(np.ones((3, 4), np.float32), device="emulator")
    same(f(x, np.ones(4, np.float32)), x * 2 + np.ones(4, np.float32))


def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", ["devices", "shapes", "dtypes", "scalar range"])
def test_errors_are_the_unfused_calls(case, to_device):
    def bits(x, y):
        return xp.bitwise_and(x, y)

    def array(a):
        return xp.asarray(to_device(a))

    function, args = {
        "devices": (axpy, (array(X), xp.asarray(Y, device="cpu"))),
        "shapes": (axpy, (array(X), array(np.ones(3)))),
        "dtypes": (bits, (array(X), to_device(np.ones(4, np.float32)))),
        "scalar range": (lambda x, k: xp.add(x, k), (to_device(np.zeros(3, np.int8)), 300)),
    }[case]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the unfused call's error, not a FusionWarning
        assert _error(lambda: xp.fuse(function)(*args)) == _error(lambda: function(*args))
        assert _error(lambda: xp.fuse(function, strict=True)(*args)) == _error(
            lambda: function(*args))


def test_the_cpu_device_runs_unfused(same):
    fused = xp.fuse(axpy, strict=True)
    for x, y in [(xp.asarray(X, device="cpu"), Y), (X, Y), (X, xp.asarray(Y, device="cpu"))]:
        with xp.backend("numpy"), recording() as launches:
            same(fused(x, y), axpy(x, y))
        assert launches == []
    with xp.backend("numpy"):
        cpu = xp.asarray(X, device="cpu")
        assert _error(lambda: fused(cpu, np.ones(3))) == _error(lambda: axpy(cpu, np.ones(3)))
        out = np.empty((4, 3), np.float32).T
        assert fused(X, Y.astype(np.float32), out=out) is out
        np.testing.assert_array_equal(out, axpy(X, Y.astype(np.float32)))


LAYOUTS = {  # out= arrays of shape (3, 4): C, F, reversed, every other element, an Array
    "C": lambda: np.empty((3, 4)),
    "F": lambda: np.empty((4, 3)).T,
    "reversed": lambda: np.empty((3, 4))[::-1, ::-1],
    "step": lambda: np.empty((3, 8))[:, ::2],
    "Array": lambda: np.empty((3, 4)),
}


@pytest.mark.parametrize("name", list(LAYOUTS))
def test_out_takes_any_layout(name, to_device, to_host, same):
    fused = xp.fuse(axpy, strict=True)
    out, x, y = to_device(LAYOUTS[name]()), to_device(X), to_device(Y)
    if name == "Array":
        out, x = xp.asarray(out), xp.asarray(x)
    for _ in range(2):
        with recording() as launches:
            assert fused(x, y, out=out) is out
        assert len(launches) == 1
        same(to_host(out) + 0, to_host(axpy(x, y)) + 0)


def test_out_overlapping_an_input_gives_numpys_answer(to_device, to_host):
    def shift(x, y):
        return xp.add(x, y)

    fused = xp.fuse(shift, strict=True)
    for view in (lambda a: a, lambda a: a[::-1], lambda a: a[1:]):
        a = to_device(np.arange(8.0))
        b = np.arange(8.0)
        np.add(view(b), view(b)[::-1], out=view(b))
        fused(view(a), view(a)[::-1], out=view(a))
        np.testing.assert_array_equal(to_host(a), b)


@pytest.mark.parametrize("kind", ["Array", "native"])
def test_repeated_calls_into_an_array_check_out_at_each_call(to_device, to_host, kind):
    """Repeats of a call into an array (of Arrays into an Array by layout ids, of native
    arrays into a native array by their layouts: fused_out.run_into) make every check of
    ``out=`` per call, as the first call makes them: in place into an input's own view,
    through a temporary into a shifted view of it (NumPy's answer), a new scalar per call,
    an ``out`` made read-only since."""
    fused = xp.fuse(lambda x, y, s: x * s + y, strict=True)
    held = xp.asarray if kind == "Array" else (lambda a: a)
    rng = np.random.default_rng(3)
    y_host = rng.standard_normal(8)
    y = held(to_device(y_host))
    for s in (2.0, float("-0.5"), 3.0, 2.0):
        for shift in (0, 1):  # out is x itself, then x shifted by one element
            host = rng.standard_normal(9)
            buffer = held(to_device(host.copy()))
            x, out = buffer[:8], buffer[shift:shift + 8]
            expected = host.copy()
            expected[shift:shift + 8] = host[:8] * s + y_host
            assert fused(x, y, s, out=out) is out
            np.testing.assert_array_equal(to_host(buffer), expected)
    out = np.zeros(8)  # on the emulator (a GPU's arrays are never read-only)
    x = np.ones(8)
    with xp.backend("emulate"):
        if kind == "Array":
            out, x = xp.asarray(out), xp.asarray(x)
        for _ in range(2):
            fused(x, x, 1.5, out=out)
        (out._a if kind == "Array" else out).flags.writeable = False
        with pytest.raises(ValueError) as repeat:
            fused(x, x, 1.5, out=out)
        with pytest.raises(ValueError) as unfused:
            xp.add(xp.multiply(x, 1.5), x, out=out)
    assert type(repeat.value) is type(unfused.value)
    np.testing.assert_array_equal(np.asarray(out), np.full(8, 2.5))


@pytest.mark.parametrize("kind", ["Array", "native"])
def test_repeats_into_an_array_skip_the_first_calls_way(to_device, to_host, monkeypatch, kind):
    """After a first call of Arrays into an Array (or of native arrays into a native array),
    its repeats (fused_out.run_into, on the emulator and a GPU alike) launch without the
    first call's way: with that way refused they still give the first call's bits, for new
    scalars, into a transposed ``out``."""
    from infini_cupy.namespace import fusion

    fused = xp.fuse(lambda x, y, s: xp.exp(x * s) - y, strict=True)
    held = xp.asarray if kind == "Array" else (lambda a: a)
    rng = np.random.default_rng(31)
    x_host, y_host = rng.standard_normal((2, 6, 5)).astype(np.float32)
    x, y = held(to_device(x_host)), held(to_device(y_host))
    out = held(to_device(np.zeros((5, 6), np.float32))).T  # a transposed layout
    expected = {}
    for s in (0.5, 2.0):  # the first call's way, for the bits the repeats must give
        fused(x, y, s, out=out)
        expected[s] = to_host(out).copy()
        np.testing.assert_allclose(expected[s], np.exp(x_host * s) - y_host, rtol=1e-5, atol=1e-5)

    def refused(*args, **kwargs):
        raise AssertionError("a repeat went the first call's way")

    monkeypatch.setattr(fusion.FusedFunction, "_call", refused)
    for s in (2.0, 0.5, 2.0):
        out_before = to_host(out).copy()
        out_before[:] = 0
        assert fused(x, y, s, out=out) is out
        np.testing.assert_array_equal(to_host(out), expected[s])


def test_a_scalar_argument_past_its_slot_is_the_unfused_calls_answer(to_device, to_host):
    """A value the traced slot cannot hold (300 for int8) runs the unfused calls: NumPy's
    ``where`` converts it, ``add`` raises OverflowError, as without fuse."""
    condition = xp.asarray(to_device(np.array([True, False, True])))
    x = xp.asarray(to_device(np.array([1, 2, 3], np.int8)))
    select = xp.fuse(lambda c, x, s: xp.where(c, x, s))
    added = xp.fuse(lambda x, s: x + s)
    out = xp.empty_like(x)
    for s in (2, 2, 300, -1, 300):  # a slot traced for an int, then values in and out of range
        np.testing.assert_array_equal(to_host(select(condition, x, s)),
                                      to_host(xp.where(condition, x, s)))
        assert select(condition, x, s, out=out) is out  # a repeat into an Array too
        np.testing.assert_array_equal(to_host(out), to_host(xp.where(condition, x, s)))
        if s == 300:
            with pytest.raises(OverflowError) as unfused:
                x + s
            with pytest.raises(OverflowError) as fused:
                added(x, s)
            assert str(fused.value) == str(unfused.value)
        else:
            np.testing.assert_array_equal(to_host(added(x, s)), to_host(x + s))


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


def test_keyword_arguments_are_traced_like_positional_ones(to_device, same):
    def scaled(x, *, y, scale=2.5):
        return xp.add(xp.multiply(x, scale), xp.subtract(y, 1))

    fused = xp.fuse(scaled, strict=True)
    x, y = to_device(X), to_device(Y)
    for _ in range(2):
        with recording() as launches:
            got = fused(x, y=y)
        assert len(launches) == 1
        same(got, scaled(x, y=y))
    same(fused(x, scale=2.5, y=y), scaled(x, y=y))  # another order: the same kernel
    same(fused(x, y=y, scale=-1.0), scaled(x, y=y, scale=-1.0))
    same(fused(x=x, y=np.float64(3.0)), scaled(x, y=np.float64(3.0)))


@pytest.mark.parametrize("k", [1.0, 1, True])
def test_where_of_two_scalars(k, to_device, same):
    def select(c, k):
        return xp.where(xp.greater(c, 0), k, 2)

    fused = xp.fuse(select, strict=True)
    x = to_device(X)
    with recording() as launches:
        got = fused(x, k)
    assert len(launches) == 1
    same(got, select(x, k))


def test_prepare_compiles_ahead_of_the_first_call(monkeypatch):
    with xp.backend("emulate"):  # the emulator's build cache is the subject
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


def test_arguments_the_results_do_not_read_take_no_part(to_device, same):
    def first(x, unused):
        return xp.negative(x)

    x = to_device(X)
    unused = xp.asarray(np.ones(2), device="cpu")  # another device, unread: as unfused
    same(xp.fuse(first, strict=True)(x, unused), first(x, unused))


def test_results_of_scalars_alone_beside_an_unread_array_of_another_device():
    """Results that read no array run unfused, silently, whatever the devices of the arrays
    they do not read (it warned that the arrays were on different devices)."""
    def f(x, unused, s):
        return (s > 1) * 2.5  # NumPy's arithmetic of a NumPy scalar: no array read

    x, unused = xp.asarray(X, device="emulator"), xp.asarray(np.ones(2), device="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for s in (np.uint8(3), np.uint8(0)):
            assert xp.fuse(f)(x, unused, s) == f(x, unused, s)


@pytest.mark.parametrize("s", [np.uint8(3), 3, 2.5])
def test_scalars_of_a_call_no_result_reads_are_not_passed(s, to_device, same):
    """A call left unused has scalar slots the kernel does not read: the kernel's scalars are
    those of the calls its results read (they were all passed: a parameter of the wrong size)."""
    def f(x, s):
        result = xp.where(x < 1, xp.exp(x), s)
        xp.where(x > 0, s, s)  # slots after the last one the result reads
        return result

    x = to_device(X)
    for _ in range(2):  # the first call, then the cached one
        same(xp.fuse(f, strict=True)(x, s), f(x, s))
    small = xp.asarray(to_device(np.ones(3, np.int8)))
    with pytest.raises(OverflowError) as unfused:  # an unused call's scalar still refused
        small + 300
    with pytest.raises(OverflowError) as fused:
        xp.fuse(lambda x, s: (x + s, -x)[1])(small, 300)
    assert str(fused.value) == str(unfused.value)


def test_python_arithmetic_of_scalar_arguments_is_computed_per_call(to_device, same):
    def lerp(x, y, a):
        return xp.add(xp.multiply(x, 1 - a), xp.multiply(y, a))

    fused = xp.fuse(lerp, strict=True)
    x, y = to_device(X), to_device(Y)
    for a in (0.25, -3.0, 2):  # an int: another signature
        with recording() as launches:
            got = fused(x, y, a)
        assert len(launches) == 1
        same(got, lerp(x, y, a))

    def power(x, k):
        return xp.add(x, 2 ** k)  # int ** negative int is a float: runs unfused

    fused = xp.fuse(power, strict=True)
    same(fused(x, 3), power(x, 3))
    same(fused(x, -1), power(x, -1))


def test_an_array_out_does_not_make_later_results_arrays(to_device, same):
    fused = xp.fuse(axpy, strict=True)
    out = xp.asarray(to_device(np.empty((3, 4))))
    x, y = to_device(X), to_device(Y)
    assert fused(x, y, out=out) is out
    same(fused(x, y), axpy(x, y))  # the same signature without out: a native array


def test_out_of_a_function_that_runs_unfused(to_device, to_host):
    def centered(x):
        return xp.subtract(x, xp.mean(x))  # mean: not elementwise

    x = to_device(X.astype(np.float64))
    out = to_device(np.empty((4, 3))).T
    with pytest.warns(xp.FusionWarning, match="mean"):
        assert xp.fuse(centered)(x, out=out) is out
    np.testing.assert_array_equal(to_host(out), to_host(centered(x)))
    with pytest.warns(xp.FusionWarning), pytest.raises(ValueError, match="shape"):
        xp.fuse(centered)(x, out=to_device(np.empty((4, 3))))


def test_none_and_string_options_are_part_of_the_trace(to_device, same):
    def activation(x, mode="relu", bias=None):
        y = x if bias is None else xp.add(x, bias)
        return xp.maximum(y, 0) if mode == "relu" else xp.negative(y)

    fused = xp.fuse(activation, strict=True)
    x = to_device(X)
    for kwargs in ({}, {"mode": "neg"}, {"bias": 1.5}, {"mode": "neg", "bias": None}):
        for _ in range(2):
            with recording() as launches:
                got = fused(x, **kwargs)
            assert len(launches) == 1
            same(got, activation(x, **kwargs))
    same(fused(x, "neg", None), activation(x, "neg", None))


def test_an_integer_compared_with_a_literal_past_its_range_fuses(to_device, to_host):
    """``x > -1`` of a uint8 ``x`` (a literal in the function, not an argument) is NumPy 2's
    answer for every element unfused; fused it traces as that answer, one kernel under
    ``strict=True``, the literal on either side and inside a chain."""
    rng = np.random.default_rng(31)
    comparisons = [lambda x: x > -1, lambda x: x <= -1, lambda x: -1 < x, lambda x: x == 300,
                   lambda x: 300 != x, lambda x: xp.less(x, 2**64), lambda x: x >= -2**70,
                   lambda x: xp.where(x < 300, x + 1, x) * (x != -5)]
    for dtype in ("uint8", "int8", "uint32", "uint64"):
        info = np.iinfo(dtype)
        x = xp.asarray(to_device(rng.integers(info.min, info.max, 9, dtype=dtype,
                                              endpoint=True)))
        for function in comparisons:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # no FusionWarning: nothing runs unfused
                fused = xp.fuse(function, strict=True)(x)
            expected = function(x)
            assert fused.dtype == expected.dtype
            np.testing.assert_array_equal(to_host(fused), to_host(expected))
