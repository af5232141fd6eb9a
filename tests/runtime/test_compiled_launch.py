"""The compiled launch mechanism (``runtime/cuda_compiled.py``, ``INFINI_CUPY_LAUNCH=compiled``)
against the stand-ins for CuPy and for libcuda's C entry points
(``tests/support/driver_standin.py`` ``c_entry_points``): a repeated elementwise call of
Arrays runs in C (``runtime/compiled_launch.c``) end to end (the Python way refused, one launch per call), with
the same answers as CuPy's launch and NumPy's, per context and device, per thread, on CuPy's
current stream; so does a repeated ``rearrange_`` of Arrays; what C declines goes the Python
way; the driver's refusals raise CuPy's error.
"""

from __future__ import annotations

import gc
import shutil
import sys
import sysconfig
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cupy")  # NVRTC compiles what the stand-in loads

import infini_cupy as xp  # noqa: E402
from infini_cupy import arrays, config  # noqa: E402
from infini_cupy.elementwise import short_path  # noqa: E402
from infini_cupy.namespace import boundary, fusion  # noqa: E402
from infini_cupy.runtime import cuda, cuda_compiled, launch, native, recent  # noqa: E402
from tests.support import cupy_standin, driver_standin  # noqa: E402
from tests.support.ci import skip_outside_ci  # noqa: E402

CAN_BUILD = (shutil.which("g++") is not None and sys.platform != "win32"
             and (Path(sysconfig.get_paths()["include"]) / "Python.h").exists()
             and not sysconfig.get_config_var("Py_GIL_DISABLED"))
SHAPE = (48, 64)


@pytest.fixture
def side(monkeypatch):
    """Two stand-in devices as ``cupy``, the cuda backend, the compiled launch selected, and
    CuPy's own launch and cuda-bindings' refused: every launch goes through libcuda's C entry
    point (the stand-in's)."""
    if not CAN_BUILD:
        skip_outside_ci("no g++ or Python.h here: no compiled hot path")

    def refused(*args, **kwargs):
        raise AssertionError("launched through CuPy's Function or cuda-bindings with the "
                             "compiled launch selected")

    recent.forget_all()
    with cupy_standin.installed(capabilities=(90, 90)), cupy_standin.as_cupy() as side, \
            config.backend("cuda"), cuda.launch_mechanism("compiled"):
        monkeypatch.setattr(cupy_standin.Function, "__call__", refused)
        monkeypatch.setattr(driver_standin, "cuLaunchKernel", _counted(side))
        yield side
    recent.forget_all()


def _counted(side):
    """The driver model, counting the launches that reach it (C's and Python's alike)."""
    real = driver_standin.__dict__["cuLaunchKernel"]
    side.driver_launches = []

    def counted(*args):
        side.driver_launches.append(args)
        return real(*args)

    return counted


def _python_way_refused(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("a repeat went the Python way")

    monkeypatch.setattr(boundary, "_run", refused)
    monkeypatch.setattr(boundary, "_finish", refused)


def _arrays(side, rng, dtype=np.float32, shape=SHAPE):
    if np.dtype(dtype).kind == "f":
        hosts = [rng.standard_normal(shape).astype(dtype) for _ in range(2)]
    else:
        hosts = [rng.integers(-100, 100, shape).astype(dtype) for _ in range(2)]
    return hosts, [xp.asarray(side.asarray(h)) for h in hosts]


def _host(a) -> np.ndarray:
    return a._a.get()


CALLS = [("add", lambda x, y: xp.add(x, y), np.add),
         ("x - y", lambda x, y: x - y, np.subtract),
         ("multiply", lambda x, y: xp.multiply(x, y), np.multiply),
         ("negative", lambda x, y: xp.negative(x), lambda a, b: np.negative(a)),
         ("x.T + y.T", lambda x, y: x.T + y.T, lambda a, b: a.T + b.T),
         ("odd views", lambda x, y: x[1:, 3:] + y[:-1, :-3], lambda a, b: a[1:, 3:] + b[:-1, :-3]),
         ("broadcast row", lambda x, y: x + y[0], lambda a, b: a + b[0])]


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int64, np.float16])
@pytest.mark.parametrize("what,call,reference", CALLS, ids=[c[0] for c in CALLS])
def test_repeats_run_in_c_with_numpy_s_answers(side, monkeypatch, dtype, what, call, reference):
    rng = np.random.default_rng(abs(hash((what, np.dtype(dtype).name))) % 2**32)
    (a, b), (x, y) = _arrays(side, rng, dtype)
    expected = reference(a, b)
    first = call(x, y)  # the full call, then the Python way that makes the launch record
    second = call(x, y)
    _python_way_refused(monkeypatch)
    before = len(side.driver_launches)
    for _ in range(3):
        result = call(x, y)
        assert isinstance(result, xp.Array) and result.device == first.device
        np.testing.assert_array_equal(_host(result), expected)
    assert len(side.driver_launches) - before == 3
    np.testing.assert_array_equal(_host(first), expected)
    np.testing.assert_array_equal(_host(second), expected)
    assert result._d == result._a.data.ptr and result._k  # settled as the Python way settles


SCALAR_CALLS = [("x * 2", lambda x, v: x * v, lambda a, v: a * v, 2),
                ("3 - x", lambda x, v: v - x, lambda a, v: v - a, 3),
                ("maximum(x, 5)", lambda x, v: xp.maximum(x, v), lambda a, v: np.maximum(a, v), 5),
                ("x + its dtype's scalar", lambda x, v: x + v, lambda a, v: a + v, np.int8(1))]


@pytest.mark.parametrize("dtype", [np.float32, np.int8, np.int64, np.float16])
@pytest.mark.parametrize("what,call,reference,scalar", SCALAR_CALLS,
                         ids=[c[0] for c in SCALAR_CALLS])
def test_repeats_with_a_scalar_run_in_c_with_numpy_s_answers(side, monkeypatch, dtype, what,
                                                             call, reference, scalar):
    """A Python or NumPy scalar goes by value: the record's parameters with its bytes in, made
    once per scalar object (a float for a float array, an int for an integer one)."""
    rng = np.random.default_rng(abs(hash((what, np.dtype(dtype).name))) % 2**32)
    (a, _), (x, _) = _arrays(side, rng, dtype)
    if isinstance(scalar, np.generic):
        scalar = np.dtype(dtype).type(scalar)  # a NumPy scalar of the array's dtype
    elif np.dtype(dtype).kind == "f":
        scalar = float(scalar)
    call(x, scalar)
    call(x, scalar)  # the Python way, which makes the launch record
    _python_way_refused(monkeypatch)
    values = [scalar] * 3 + [type(scalar)(v) for v in (1, 4, 1)]  # new objects: new bytes
    before = len(side.driver_launches)
    for v in values:
        result = call(x, v)
        expected = reference(a, v)
        assert isinstance(result, xp.Array) and result.dtype == expected.dtype
        np.testing.assert_array_equal(_host(result), expected)
    assert len(side.driver_launches) - before == len(values)


def test_a_scalar_out_of_its_dtype_s_range_still_raises(side):
    rng = np.random.default_rng(13)
    (a, _), (x, _) = _arrays(side, rng, np.int8)
    for _ in range(3):
        np.testing.assert_array_equal(_host(x + 100), a + 100)
    with pytest.raises(OverflowError):
        x + 1000  # noqa: B018 - NumPy 2 refuses a Python int out of int8's range
    np.testing.assert_array_equal(_host(x + 100), a + 100)


INTO_CALLS = [("add(x, y, out=z)", lambda x, y, z: xp.add(x, y, out=z), lambda a, b, c: a + b),
              ("z += x", lambda x, y, z: z.__iadd__(x), lambda a, b, c: c + a),
              ("z *= 2", lambda x, y, z: z.__imul__(2), lambda a, b, c: c * 2),
              ("subtract(3, y, out=z)", lambda x, y, z: xp.subtract(3, y, out=z),
               lambda a, b, c: 3 - b),
              ("negative(x.T, out=z.T)", lambda x, y, z: _returned_out(
                  lambda out: xp.negative(x.T, out=out), z.T, z), lambda a, b, c: -a)]


def _returned_out(call, out, base):
    """``call(out)`` returned ``out`` (a view of ``base``): ``base``, as the other calls."""
    assert call(out) is out
    return base


@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.float16])
@pytest.mark.parametrize("what,call,reference", INTO_CALLS, ids=[c[0] for c in INTO_CALLS])
def test_repeats_into_out_run_in_c_with_numpy_s_answers(side, monkeypatch, dtype, what, call,
                                                        reference):
    """``out=`` and the in-place operators: nothing allocated, the four pointers ``out``'s
    and the inputs', ``out`` itself returned."""
    rng = np.random.default_rng(abs(hash((what, np.dtype(dtype).name, "into"))) % 2**32)
    (a, b), (x, y) = _arrays(side, rng, dtype)
    c = rng.integers(-3, 3, SHAPE).astype(dtype)
    z = xp.asarray(side.asarray(c))
    expected = c
    for _ in range(2):  # the full call, then the Python way that makes the record
        call(x, y, z)
        expected = reference(a, b, expected)
    _python_way_refused(monkeypatch)
    pool = side.get_default_memory_pool()
    before, used = len(side.driver_launches), pool.used_bytes()
    for _ in range(3):
        result = call(x, y, z)
        expected = reference(a, b, expected)
        assert result is z
        np.testing.assert_array_equal(_host(z), expected)
    assert len(side.driver_launches) - before == 3 and pool.used_bytes() == used


def test_an_out_that_overlaps_an_input_goes_the_python_way(side, monkeypatch):
    """C writes into ``out`` only where the Python way would (no overlap but the same view);
    a shifted view of an input is computed into a temporary there, NumPy's answer."""
    rng = np.random.default_rng(14)
    (a, b), (x, y) = _arrays(side, rng)
    for _ in range(3):  # the same view as an input: in place, in C
        xp.add(x, y, out=x)
        a = a + b
    np.testing.assert_array_equal(_host(x), a)
    w = xp.asarray(side.zeros(SHAPE, np.float32))
    for _ in range(3):  # the plan and its record, out= another array of the same layout
        xp.multiply(x[:-1], 2.0, out=w[1:])
    np.testing.assert_array_equal(_host(w)[1:], a[:-1] * 2)
    calls = []
    real = boundary._run
    monkeypatch.setattr(boundary, "_run", lambda *args: (calls.append(1), real(*args))[1])
    for _ in range(3):  # the same layouts, out= overlapping the input shifted by a row
        xp.multiply(x[:-1], 2.0, out=x[1:])
        np.multiply(a[:-1], 2.0, out=a[1:])
        np.testing.assert_array_equal(_host(x), a)
    assert len(calls) >= 3  # each declined by C; the Python way computes into a temporary


def test_an_out_on_another_device_goes_the_python_way(side, monkeypatch):
    rng = np.random.default_rng(15)
    (a, b), (x, y) = _arrays(side, rng)
    z = xp.asarray(side.zeros(SHAPE, np.float32))
    for _ in range(3):
        xp.add(x, y, out=z)
    with side.cuda.Device(1):
        elsewhere = xp.asarray(side.zeros(SHAPE, np.float32))
    with pytest.raises(ValueError) as c_way:
        xp.add(x, y, out=elsewhere)
    recent.forget_all()
    with pytest.raises(ValueError) as first_call:
        xp.add(x, y, out=elsewhere)
    assert str(c_way.value) == str(first_call.value)
    np.testing.assert_array_equal(_host(elsewhere), np.zeros(SHAPE, np.float32))


FUSED = [("exp(x*y+x)-y", lambda x, y: xp.exp(x * y + x) - y,
          lambda a, b: np.exp(a * b + a) - b, lambda x, y: (x, y)),
         ("x * y + 1.5 of odd views", lambda x, y: x * y + 1.5,
          lambda a, b: a * b + np.float32(1.5), lambda x, y: (x.T, y[::-1].T)),
         ("where(x > y, x, 2 * y) in float16", lambda x, y: xp.where(x > y, x, 2 * y),
          lambda a, b: np.where(a > b, a, 2 * b), lambda x, y: (x, y))]


@pytest.mark.parametrize("what,function,reference,views", FUSED, ids=[c[0] for c in FUSED])
def test_repeated_fused_calls_run_in_c(side, monkeypatch, what, function, reference, views):
    """A fused call of Arrays with one output: its kernel's parameters packed once (the
    expression's constants, the layouts, the flag), the pointers written last."""
    dtype = np.float16 if "float16" in what else np.float32
    rng = np.random.default_rng(len(what))
    (a, b), (x, y) = _arrays(side, rng, dtype, (33, 41) if "odd" in what else SHAPE)
    (a, b), (x, y) = views(a, b), views(x, y)
    fused = xp.fuse(function)
    first = _host(fused(x, y))  # the full call; then the Python way, which makes the record
    tolerance = 2e-3 if dtype == np.float16 else 1e-5  # exp's ulps, cancelled by the "- y"
    np.testing.assert_allclose(first, reference(a, b), rtol=tolerance, atol=tolerance)
    fused(x, y)

    def refused(*args, **kwargs):
        raise AssertionError("a repeated fused call went the Python way")

    monkeypatch.setattr(type(fused), "_launch", refused)
    monkeypatch.setattr(type(fused), "_call", refused)
    before = len(side.driver_launches)
    for _ in range(3):
        result = fused(x, y)
        assert isinstance(result, xp.Array) and result._k and result._d == result._a.data.ptr
        assert _host(result).tobytes() == first.tobytes()  # the Python way's, bit for bit
    assert len(side.driver_launches) - before == 3


def test_fused_calls_of_several_outputs_run_in_c(side, monkeypatch):
    """A fused function of several outputs (a tuple, a list; dtypes of their own): one driver
    launch per repeat from C, each output allocated from CuPy's pool, returned as the
    function returns them, bit for bit the Python way's first launch."""
    rng = np.random.default_rng(19)
    (a, b), (x, y) = _arrays(side, rng)
    pair = xp.fuse(lambda x, y: (x * y - x, x < y))
    triple = xp.fuse(lambda x, y, s: [x + s, y * s, xp.astype(x, xp.float64)])
    calls = {"pair": lambda s: pair(x, y), "triple": lambda s: triple(x, y, s)}
    expected = {}
    for name, call in calls.items():  # the full call, then the Python way's (the record)
        call(1.5)
        expected[name] = [_host(r) for r in call(1.5)]
    np.testing.assert_allclose(expected["pair"][0], a * b - a, rtol=1e-6)
    np.testing.assert_array_equal(expected["pair"][1], a < b)
    np.testing.assert_array_equal(expected["triple"][2], a.astype(np.float64))

    def refused(*args, **kwargs):
        raise AssertionError("a repeated fused call went the Python way")

    monkeypatch.setattr(type(pair), "_launch", refused)
    monkeypatch.setattr(type(pair), "_call", refused)
    pool = side.get_default_memory_pool()
    before = len(side.driver_launches)
    for _ in range(2):
        for name, call in calls.items():
            result = call(float("1.5"))  # a new float each time: packed per object
            assert type(result) is (tuple if name == "pair" else list)
            assert [_host(r).tobytes() for r in result] == [e.tobytes() for e in expected[name]]
            assert all(isinstance(r, xp.Array) and r._a.data.device_id == 0 for r in result)
    assert len(side.driver_launches) - before == 4
    used = pool.used_bytes()
    del result
    assert pool.used_bytes() < used  # the outputs' memory is the pool's, given back


def test_fused_calls_with_scalar_arguments_run_in_c(side, monkeypatch):
    """Scalar arguments: the parameters packed per the scalars' objects (a literal's once, a
    new float's per call), bit for bit the Python way's; a computed scalar whose type
    changes (``2 ** -1``) goes the unfused way."""
    rng = np.random.default_rng(17)
    (a, b), (x, y) = _arrays(side, rng)
    scaled = xp.fuse(lambda x, y, s, n: x * s + y * 2 ** n)
    values = [(1.5, 3), (-2.25, 0), (np.float32(0.5), 1), (True, 2)]
    expected = {}
    for s, n in values:  # the full call, then the Python way's (which makes the record)
        expected[repr((s, n))] = _host(scaled(x, y, s, n))
        assert _host(scaled(x, y, s, n)).tobytes() == expected[repr((s, n))].tobytes()
        np.testing.assert_allclose(expected[repr((s, n))], a * np.float32(s) + b * 2 ** n,
                                   rtol=1e-6)

    def refused(*args, **kwargs):
        raise AssertionError("a repeated fused call went the Python way")

    before = len(side.driver_launches)
    with monkeypatch.context() as patched:
        patched.setattr(type(scaled), "_launch", refused)
        patched.setattr(type(scaled), "_call", refused)
        for _ in range(2):
            for s, n in values:
                fresh = type(s)(str(s)) if type(s) is float else s  # a new object, same value
                result = scaled(x, y, fresh, n)
                assert isinstance(result, xp.Array) and result._k
                assert _host(result).tobytes() == expected[repr((s, n))].tobytes()
    assert len(side.driver_launches) - before == 2 * len(values)
    result = scaled(x, y, 1.5, -1)  # 2 ** -1 is a float, traced for an int: the unfused calls
    np.testing.assert_allclose(_host(result), a * np.float32(1.5) + b * 0.5, rtol=1e-6)
    assert len(side.driver_launches) - before == 2 * len(values) + 3  # x * s, y * 0.5, a sum


def test_fused_calls_into_an_array_run_in_c(side, monkeypatch):
    """A fused call into an Array: after a repeat the Python way (fused_out.run_into, which
    makes the launch record), repeats are one driver launch from C each, bit for bit, into a
    transposed ``out`` with a new float per call, and in place into an input; ``out``
    shifted over an input, or on another device, goes the Python way: NumPy's answer, the
    full call's error."""
    rng = np.random.default_rng(18)
    (a, b), (x, y) = _arrays(side, rng)
    fused = xp.fuse(lambda x, y, s: xp.exp(x * s) - y)
    z = xp.asarray(side.zeros(SHAPE[::-1], np.float32)).T
    for _ in range(2):  # the full call, then the Python way's repeat (the record)
        assert fused(x, y, 0.5, out=z) is z
    expected = _host(z)
    np.testing.assert_allclose(expected, np.exp(a * np.float32(0.5)) - b, rtol=1e-5, atol=1e-5)
    for _ in range(2):
        assert fused(x, y, 0.5, out=x) is x  # in place: x's own layout

    def refused(*args, **kwargs):
        raise AssertionError("a repeated fused call went the Python way")

    before = len(side.driver_launches)
    with monkeypatch.context() as patched:
        patched.setattr(fusion, "run_into", refused)
        patched.setattr(type(fused), "_call", refused)
        for _ in range(2):
            assert fused(y, y, 0.5, out=z) is not None  # z dirtied, then written again
            assert fused(_a_copy(side, a), y, float("0.5"), out=z) is z
            assert _host(z).tobytes() == expected.tobytes()
        x_before = xp.asarray(side.asarray(_host(x)))
        assert fused(x, y, 0.5, out=x) is x
        assert _host(x).tobytes() == _host(fused(x_before, y, 0.5)).tobytes()
    assert len(side.driver_launches) - before == 6
    w = xp.asarray(side.zeros((SHAPE[0] + 1, SHAPE[1]), np.float32))
    for _ in range(3):  # the record for out= of x's layout, then w shifted over itself
        fused(x, y, 0.5, out=w[1:])
    for _ in range(2):
        w._a[...] = side.asarray(rng.standard_normal(w.shape).astype(np.float32))
        reference = np.exp(_host(w)[:-1] * np.float32(0.5)) - b
        assert fused(w[:-1], y, 0.5, out=w[1:]) is not None
        np.testing.assert_allclose(_host(w)[1:], reference, rtol=1e-5, atol=1e-5)
    with side.cuda.Device(1):
        elsewhere = xp.asarray(side.zeros(SHAPE[::-1], np.float32)).T
    with pytest.raises(ValueError, match="cuda:0 and cuda:1|cuda:1 and cuda:0"):
        fused(x, y, 0.5, out=elsewhere)
    np.testing.assert_array_equal(_host(elsewhere), np.zeros(SHAPE, np.float32))


def _a_copy(side, host):
    return xp.asarray(side.asarray(host))


def test_fused_calls_c_declines_go_the_python_way(side):
    rng = np.random.default_rng(16)
    (a, b), (x, y) = _arrays(side, rng)
    fused = xp.fuse(lambda x, y: x * y - x)
    for _ in range(3):
        fused(x, y)
    with side.cuda.Device(1):
        x1, y1 = xp.asarray(side.asarray(a)), xp.asarray(side.asarray(b))
        for _ in range(3):  # device 1's context: C declines device 0's record, Python remakes
            result = fused(x1, y1)
            assert result._a.device.id == 1
            np.testing.assert_allclose(_host(result), a * b - a, rtol=1e-6)
    with launch.recording() as launches:
        np.testing.assert_allclose(_host(fused(x, y)), a * b - a, rtol=1e-6)
    assert len(launches) == 1
    made = []
    with arrays.outputs_from(lambda shape, dtype: made.append(shape) or side.empty(shape, dtype)):
        np.testing.assert_allclose(_host(fused(x, y)), a * b - a, rtol=1e-6)
    assert made == [SHAPE]


def test_calls_into_preallocated_arrays_capture_from_c(side, monkeypatch):
    """``out=``, in-place operators and ``rearrange_`` of Arrays launched from C do nothing a
    capturing stream refuses (no compile, file access, load, allocation or synchronization:
    the stand-in's capture mode, tests/support/capture.py)."""
    from tests.support.capture import capturing

    rng = np.random.default_rng(17)
    (a, b), (x, y) = _arrays(side, rng)
    z, t = xp.asarray(side.zeros(SHAPE, np.float32)), xp.asarray(side.zeros(SHAPE[::-1], np.float32))
    calls = [lambda: xp.add(x, y, out=z), lambda: z.__imul__(2.0), lambda: xp.rearrange_(t, x.T)]
    for _ in range(2):  # the full call, then the Python way, which makes each record
        for call in calls:
            call()
    _python_way_refused(monkeypatch)
    _short_rearrange_refused(monkeypatch)
    before = len(side.driver_launches)
    with capturing():
        for call in calls:
            call()
    assert len(side.driver_launches) - before == len(calls)
    np.testing.assert_array_equal(_host(z), (a + b) * 2)
    np.testing.assert_array_equal(_host(t), a.T)


def test_the_answers_are_those_of_cupy_s_launch_bit_for_bit(side, monkeypatch):
    rng = np.random.default_rng(7)
    (a, b), (x, y) = _arrays(side, rng, np.float32, (33, 65))
    calls = [lambda: xp.exp(x), lambda: x / y, lambda: xp.sqrt(xp.abs(x)), lambda: x[:-1:2] * y[1::2]]
    compiled = [[_host(call()) for _ in range(3)] for call in calls]
    monkeypatch.undo()  # CuPy's own launch allowed again
    recent.forget_all()
    with cuda.launch_mechanism("cupy"):
        plain = [_host(call()) for call in calls]
    for runs, expected in zip(compiled, plain):
        for got in runs:
            assert got.tobytes() == expected.tobytes()


def test_each_context_has_its_record(side, monkeypatch):
    rng = np.random.default_rng(3)
    (a, b), (x0, y0) = _arrays(side, rng)
    with side.cuda.Device(1):
        x1, y1 = xp.asarray(side.asarray(a)), xp.asarray(side.asarray(b))
    for device, x, y in [(0, x0, y0), (1, x1, y1), (0, x0, y0), (1, x1, y1)]:
        with side.cuda.Device(device):
            for _ in range(3):
                result = xp.add(x, y)
                assert result._a.device.id == device
                np.testing.assert_array_equal(_host(result), a + b)
    known = short_path.by_ids.get(("add", x0._k, y0._k))
    assert known.compiled_launch is not None
    with side.cuda.Device(1):  # the record is device 1's now: device 0's call declines, once
        xp.add(x1, y1)
    _python_way_refused(monkeypatch)
    with side.cuda.Device(1):
        np.testing.assert_array_equal(_host(xp.add(x1, y1)), a + b)
        with pytest.raises(AssertionError, match="Python way"):
            xp.add(x0, y0)  # arrays of device 0 while device 1 is current: not C's call


def test_what_c_declines_goes_the_python_way(side):
    rng = np.random.default_rng(4)
    (a, b), (x, y) = _arrays(side, rng)
    for _ in range(3):
        xp.add(x, y)
    with launch.recording() as launches:
        result = xp.add(x, y)
    assert [r.name for r in launches] and launches[0].backend == "cuda"
    np.testing.assert_array_equal(_host(result), a + b)
    made = []

    def allocator(shape, dtype):
        made.append(shape)
        return side.empty(shape, dtype)

    with arrays.outputs_from(allocator):
        result = xp.add(x, y)
    assert made == [SHAPE]
    np.testing.assert_array_equal(_host(result), a + b)
    before = len(side.driver_launches)
    with launch.launches_skipped():
        result = xp.add(x, y)
    assert len(side.driver_launches) == before and result.shape == SHAPE
    finished = []
    real_run = boundary._run
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(boundary, "_run", lambda *args: (finished.append(1), real_run(*args))[1])
        xp.add(x, y)
        assert finished == []  # C's call
        with cuda.launch_mechanism("driver"):  # the record is not used under another mechanism
            np.testing.assert_array_equal(_host(xp.add(x, y)), a + b)
        assert finished == [1]


def test_the_launch_goes_on_cupy_s_current_stream(side):
    rng = np.random.default_rng(5)
    (a, b), (x, y) = _arrays(side, rng)
    for _ in range(3):
        xp.add(x, y)
    stream = side.cuda.Stream()
    with stream:
        result = xp.add(x, y)
    np.testing.assert_array_equal(_host(result), a + b)
    assert side.driver_launches[-1][8] == stream.ptr
    assert side.driver_launches[-2][8] == side.cuda.get_current_stream().ptr


def test_a_refused_launch_raises_cupy_s_driver_error(side, monkeypatch):
    rng = np.random.default_rng(6)
    (a, b), (x, y) = _arrays(side, rng)
    for _ in range(3):
        xp.add(x, y)
    monkeypatch.setattr(driver_standin, "cuLaunchKernel", lambda *args: (
        driver_standin.CUresult.CUDA_ERROR_INVALID_VALUE,))
    _python_way_refused(monkeypatch)
    with pytest.raises(cupy_standin.CUDADriverError, match="error 1"):
        xp.add(x, y)


def test_a_failure_inside_the_stand_in_s_entry_point_is_chained(side, monkeypatch):
    rng = np.random.default_rng(8)
    (a, b), (x, y) = _arrays(side, rng)
    for _ in range(3):
        xp.add(x, y)

    def broken(*args):
        raise IndexError("out of bounds in the emulator")

    monkeypatch.setattr(driver_standin, "cuLaunchKernel", broken)
    with pytest.raises(cupy_standin.CUDADriverError) as caught:
        xp.add(x, y)
    assert isinstance(caught.value.__cause__, IndexError)


def test_threads_make_their_contexts_and_share_records(side):
    rng = np.random.default_rng(9)
    (a, b), (x, y) = _arrays(side, rng)
    for _ in range(3):
        xp.add(x, y)
    errors = []

    def worker():
        try:
            with config.backend("cuda"):  # a context variable: each thread sets its own
                for _ in range(200):
                    np.testing.assert_array_equal(_host(xp.add(x, y)), a + b)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


def test_a_new_driver_makes_records_stale(side):
    rng = np.random.default_rng(10)
    (a, b), (x, y) = _arrays(side, rng)
    for _ in range(3):
        xp.add(x, y)
    known = short_path.by_ids.get(("add", x._k, y._k))
    old = known.compiled_launch
    cuda.forget_kernels()  # kernels unloaded: handles and the driver's generation change
    for _ in range(3):
        np.testing.assert_array_equal(_host(xp.add(x, y)), a + b)
    assert known.compiled_launch[8] == cuda_compiled.generation() != old[8]


def test_repeats_leak_nothing(side):
    rng = np.random.default_rng(11)
    (a, b), (x, y) = _arrays(side, rng)
    z = xp.asarray(side.zeros(SHAPE, np.float32))

    fused = xp.fuse(lambda p, q, s: p * s + q)

    def calls():  # arrays, a scalar, into out=, an in-place scalar (a new float each time),
        xp.add(x, y)  # fused into out= with a new float
        x * 2.0  # noqa: B018
        xp.add(x, y, out=z)
        z.__imul__(float(len(side.driver_launches) % 3))
        fused(x, y, float(len(side.driver_launches) % 5), out=z)

    for _ in range(50):
        calls()
    gc.collect()
    pool = side.get_default_memory_pool()
    used, refs, objects = pool.used_bytes(), (sys.getrefcount(x), sys.getrefcount(y)), \
        len(gc.get_objects())
    for _ in range(1000):
        calls()
    gc.collect()
    assert pool.used_bytes() == used
    assert (sys.getrefcount(x), sys.getrefcount(y)) == refs
    assert len(gc.get_objects()) - objects < 100


def test_without_the_compiled_hot_path_the_mechanism_says_why(side, monkeypatch):
    monkeypatch.setattr(native, "_loaded", [None])
    monkeypatch.setenv(config.NATIVE_VAR, "0")
    cuda_compiled.forget()
    with pytest.raises(ImportError, match="INFINI_CUPY_NATIVE=0"):
        cuda_compiled.driver(side)


def test_the_c_entry_points_model_the_driver_s_answers(side):
    rng = np.random.default_rng(12)
    (a, b), (x, y) = _arrays(side, rng)
    for _ in range(3):
        xp.add(x, y)
    module = cuda_compiled.driver(side)
    assert module.current_context() == driver_standin.CONTEXT_BASE
    answers = []

    def worker():  # a new thread has no context current
        answers.append(module.current_context())
        answers.append(module.launch_kernel(1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert answers == [None, (driver_standin.CUresult.CUDA_ERROR_INVALID_CONTEXT,)]
    assert module.launch_kernel(16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0) == (
        driver_standin.CUresult.CUDA_ERROR_INVALID_HANDLE,)
    with pytest.raises(OverflowError):
        module.launch_kernel(16, 1 << 32, 1, 1, 1, 1, 1, 0, 0, 0, 0)


def test_libcuda_s_entry_points_are_read_by_name(monkeypatch):
    """The addresses C calls: libcuda's symbols of ENTRY_POINTS, in that order (here a library
    whose symbols are the stand-in's C functions)."""
    launch_kernel, current_context = driver_standin._C_ENTRY_POINTS
    opened = []

    class Library:
        cuLaunchKernel, cuCtxGetCurrent = launch_kernel, current_context

    monkeypatch.setattr(cuda_compiled.ctypes, "CDLL", lambda name: opened.append(name) or Library)
    assert cuda_compiled.libcuda_entry_points() == driver_standin.c_entry_points()
    assert opened == ["libcuda.so.1"]


def _short_rearrange_refused(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("a repeated copy went the Python way")

    monkeypatch.setattr(boundary, "_short_rearrange_", refused)


COPIES = [("transpose fp32", np.float32, (48, 64), lambda x: x.T),
          ("odd transpose int8", np.int8, (37, 301), lambda x: x.T),
          ("staged fp16 tiles", np.float16, (256, 384), lambda x: x.T),
          ("reversed rows int64", np.int64, (40, 33), lambda x: x[::-1, 1:]),
          ("a 3-D permutation", np.float32, (6, 10, 14), lambda x: xp.permute_dims(x, (2, 0, 1)))]


@pytest.mark.parametrize("what,dtype,shape,view", COPIES, ids=[c[0] for c in COPIES])
def test_repeated_copies_run_in_c_with_numpy_s_answers(side, monkeypatch, what, dtype, shape,
                                                       view):
    host = np.random.default_rng(len(what)).integers(-100, 100, shape).astype(dtype)
    x = view(xp.asarray(side.asarray(host)))
    expected = np.asarray(view(xp.asarray(host, device=xp.Device("cpu")))._a)
    y = xp.asarray(side.zeros(expected.shape, dtype))
    xp.rearrange_(y, x)  # the full call
    xp.rearrange_(y, x)  # the Python way, which makes the launch record
    _short_rearrange_refused(monkeypatch)
    for _ in range(3):
        y._a[...] = 0
        before = len(side.driver_launches)
        assert xp.rearrange_(y, x) is y
        assert len(side.driver_launches) == before + 1
        np.testing.assert_array_equal(_host(y), expected)


def test_copies_c_declines_go_the_python_way(side, monkeypatch):
    host = np.arange(64 * 48, dtype=np.float32).reshape(64, 48)
    base = xp.asarray(side.asarray(host))
    x, y = base.T, xp.asarray(side.zeros((48, 64), np.float32))
    for _ in range(3):
        xp.rearrange_(y, x)
    taken = []
    real = boundary._short_rearrange_
    monkeypatch.setattr(boundary, "_short_rearrange_",
                        lambda *args: (taken.append(1), real(*args))[1])
    xp.rearrange_(y, x)
    assert taken == []  # C's
    with launch.recording() as launches:
        xp.rearrange_(y, x)
    assert len(launches) == 1 and taken == [1]
    with side.cuda.Device(1):  # another context current: the Python way decides
        xp.rearrange_(y, x)
    assert len(taken) == 2
    before = len(side.driver_launches)
    with launch.launches_skipped():
        assert xp.rearrange_(y, x) is y
    assert len(side.driver_launches) == before
    # a copy onto an overlapping view of its own source: the full call's snapshot
    square = xp.asarray(side.asarray(np.arange(32 * 32, dtype=np.float32).reshape(32, 32)))
    for _ in range(3):
        xp.rearrange_(xp.asarray(side.zeros((32, 32), np.float32)), square.T)
    xp.rearrange_(square, square.T)
    np.testing.assert_array_equal(_host(square), np.arange(32 * 32).reshape(32, 32).T)
