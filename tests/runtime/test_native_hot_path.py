"""The compiled hot path (``runtime/hot_calls.c``, built by ``runtime/native.py``): it serves
repeats of elementwise and fused calls on emulator Arrays with the Python hot path's bits and
settled outputs, declines (None, the Python way) whatever it does not handle, propagates a
launch's error, keeps no reference it should not, and its absence leaves the Python path."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import infini_cupy as xp
from infini_cupy import arrays, config
from infini_cupy.elementwise import short_path
from infini_cupy.namespace import boundary, fusion
from infini_cupy.runtime import launch as launches
from infini_cupy.runtime import native, recent
from infini_cupy.runtime.launch import recording
from tests.support.ci import skip_outside_ci

CAN_BUILD = (shutil.which("g++") is not None and sys.platform != "win32"
             and (Path(sysconfig.get_paths()["include"]) / "Python.h").exists()
             and not sysconfig.get_config_var("Py_GIL_DISABLED"))


@pytest.fixture(autouse=True)
def _cold():
    if not CAN_BUILD:  # CI's machine has both: there the compiled path must be tested
        skip_outside_ci("no g++ or Python.h here: no compiled hot path")
    recent.forget_all()
    yield
    recent.forget_all()


def emulated(h):
    with config.backend("emulate"):
        return xp.asarray(h)


def _settled(r):
    """An output Array holds its own native's pointer and layout id."""
    assert type(r) is xp.Array
    assert r._d == arrays.data_pointer(r._a)
    assert r._k == short_path.layout_id(r._a, r._b)


def test_it_is_built_where_g_plus_plus_and_python_h_are():
    module = boundary.compiled_hot_calls()
    assert module is not None
    assert native.library_path().exists()
    assert boundary.compiled_calls == [module.unary, module.binary, module.into, module.fused,
                                       module.rearrange, module.fused_into,
                                       module.evaluate_seen]


def test_it_is_off_under_the_variable_and_where_the_build_fails(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv(config.NATIVE_VAR, "0")
    assert native._try_load() is None
    assert native.status().startswith("off")
    monkeypatch.setenv(config.NATIVE_VAR, "1")
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))

    def failing(command, **kwargs):
        raise subprocess.CalledProcessError(1, command, "", "error: no Python.h")

    monkeypatch.setattr(subprocess, "run", failing)
    with caplog.at_level("INFO", logger="infini_cupy"):
        assert native._try_load() is None
    assert "Python hot path runs" in caplog.text
    assert not list(tmp_path.rglob("*.so")) and not list(tmp_path.rglob("*.tmp"))


def test_a_cached_build_loads_without_g_plus_plus(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
    assert native.status().startswith("compiled at the first repeated call")
    assert native._try_load() is not None  # built into the empty cache
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert native.status() == f"compiled ({native.library_path()})"
    assert native._try_load() is not None  # no g++: the cached build loads
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path / "empty"))
    with caplog.at_level("INFO", logger="infini_cupy"):
        assert native._try_load() is None  # nothing cached, nothing to build it with
    assert "no g++" in caplog.text and "no g++" in native.status()


def _calls(x, y):
    fused = xp.fuse(lambda p, q: xp.exp(p * q + p) - q)
    scaled = xp.fuse(lambda p, q, s, n: p * s + q * 2 ** n)
    return {"add": lambda: xp.add(x, y), "x + y": lambda: x + y, "x * 2.0": lambda: x * 2.0,
            "2.0 * x": lambda: 2.0 * x, "x - 3": lambda: x - 3, "exp": lambda: xp.exp(x),
            "fused": lambda: fused(x, y), "fused, a literal": lambda: scaled(x, y, 1.5, 2),
            "fused, a new float": lambda: scaled(x, y, float("-0.75"), 1)}


def test_repeats_are_served_compiled(monkeypatch):
    """With every plan's Python function refused, repeats still run: the compiled path took
    them (it reads known.native and prepared.one, never known.fast or _launch_ids)."""
    x = emulated(np.linspace(0, 1, 48 * 64, dtype=np.float32).reshape(48, 64))
    y = emulated(np.full((48, 64), 2, np.float32))
    calls = _calls(x, y)
    expected = {}
    for name, call in calls.items():
        call()
        expected[name] = np.asarray(call())

    def refused(*args):
        raise AssertionError("the Python hot path ran")

    for known in short_path.by_ids.values():
        known.fast = refused
    monkeypatch.setattr(fusion.FusedFunction, "_launch_ids", refused)
    for name, call in calls.items():
        r = call()
        _settled(r)
        assert np.asarray(r).tobytes() == expected[name].tobytes(), name


def test_fused_calls_of_several_outputs_are_served_compiled(monkeypatch):
    """A fused function returning a tuple or a list of outputs of several dtypes: with the
    Python way's launches refused, repeats still run (hot_calls.fused from the template),
    bit for bit the first call's, returned as the function returns them; each output an
    Array of its own, settled at its first use."""
    rng = np.random.default_rng(40)
    h = rng.standard_normal((33, 40)).astype(np.float32)
    x, y = emulated(h), emulated(np.ascontiguousarray(h[::-1]))
    pair = xp.fuse(lambda p, q: (xp.exp(p) - q, p < q))
    triple = xp.fuse(lambda p, q, s: [p * s, q + s, xp.astype(p, xp.float64)])
    calls = {"tuple": lambda: pair(x, y), "list": lambda: triple(x, y, 1.5),
             "list, a new float": lambda: triple(x, y, float("-0.5"))}
    expected = {}
    for name, call in calls.items():
        call()
        expected[name] = [np.asarray(r).copy() for r in call()]
    np.testing.assert_allclose(expected["tuple"][0], np.exp(h) - h[::-1], rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(expected["tuple"][1], h < h[::-1])
    np.testing.assert_array_equal(expected["list"][2], h.astype(np.float64))

    def refused(*args, **kwargs):
        raise AssertionError("the Python hot path ran")

    monkeypatch.setattr(fusion.FusedFunction, "_launch_ids", refused)
    monkeypatch.setattr(fusion.FusedFunction, "_launch", refused)
    for name, call in calls.items():
        for _ in range(2):
            r = call()
            assert type(r) is (tuple if name == "tuple" else list)
            assert [np.asarray(o).tobytes() for o in r] == [e.tobytes() for e in expected[name]]
            assert [o.dtype for o in r] == [e.dtype for e in expected[name]]
            assert len({id(o._a) for o in r}) == len(r)
            combined = r[0] + r[0]  # an output in a hot call: settled there
            _settled(r[0])
            np.testing.assert_array_equal(np.asarray(combined), expected[name][0] * 2)


def _layout(h, kind):
    if kind == "transposed":
        return np.ascontiguousarray(h.T).T
    if kind == "offset":  # off the 16-byte packs, aligned for its type: the flag-off tail
        flat = np.zeros(h.size + 1, h.dtype)
        flat[1:] = h.ravel()
        return flat[1:].reshape(h.shape)
    if kind == "misaligned":  # off its C++ type's alignment: declined, the full way
        raw = np.zeros(h.nbytes + 1, np.uint8)[1:]
        out = raw.view(h.dtype).reshape(h.shape)
        out[...] = h
        return out
    return h


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), shape=st.sampled_from([(1,), (7,), (3, 5), (16, 33)]),
       dtype=st.sampled_from(["float32", "int16", "float64", "uint8", "bool"]),
       layouts=st.tuples(*[st.sampled_from(["contiguous", "transposed", "offset",
                                            "misaligned"])] * 2),
       operation=st.sampled_from(["add", "multiply", "less", "negative", "abs", "scalar",
                                  "scalar first", "numpy scalar", "fused", "fused scalar",
                                  "fused pair"]),
       scalar=st.sampled_from([3, 2.5, True, -1]))
def test_compiled_and_python_paths_agree_bit_for_bit(seed, shape, dtype, layouts, operation,
                                                        scalar):
    rng = np.random.default_rng(seed)
    h1, h2 = ((rng.standard_normal(shape) * 50).astype(dtype) for _ in range(2))
    x, y = emulated(_layout(h1, layouts[0])), emulated(_layout(h2, layouts[1]))
    fused = xp.fuse(lambda p, q: p * q + p)
    scaled = xp.fuse(lambda p, q, s: p * s - q)
    pair = xp.fuse(lambda p, q: (p - q, p * q))
    call = {"add": lambda: xp.add(x, y), "multiply": lambda: x * y,
            "less": lambda: x < y, "negative": lambda: -x, "abs": lambda: abs(x),
            "scalar": lambda: x + scalar, "scalar first": lambda: scalar - x,
            "numpy scalar": lambda: x * np.int8(2), "fused": lambda: fused(x, y),
            "fused scalar": lambda: scaled(x, y, scalar),
            "fused pair": lambda: xp.stack(pair(x, y))}[operation]
    try:
        with np.errstate(all="ignore"):
            results = [call() for _ in range(3)]  # cold, learnt, compiled
            with boundary.python_hot_path():
                results.append(call())
    except (TypeError, ValueError, OverflowError) as e:  # the cold call's, on both paths
        with pytest.raises(type(e)), np.errstate(all="ignore"):
            call()
        return
    first = np.asarray(results[0])
    for r in results[1:]:
        assert type(r) is xp.Array
        got = np.asarray(r)
        assert (got.dtype, got.shape, got.tobytes()) == (first.dtype, first.shape,
                                                         first.tobytes())
        if r._k is not None:
            _settled(r)


def test_what_it_declines_goes_the_python_way():
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = emulated(h)
    for _ in range(3):
        x + x
    # another allocator (arrays.outputs_from): its output, computed, the Array unsettled
    made = []

    def alloc(shape, dtype):
        made.append(np.empty(shape, dtype))
        return made[-1]

    fused = xp.fuse(lambda p, q: p * q + p)
    for _ in range(3):
        fused(x, x)
    with arrays.outputs_from(alloc):
        r, f = x + x, fused(x, x)
    assert r._a is made[-2] and np.array_equal(np.asarray(r), 2 * h) and r._k is None
    assert f._a is made[-1] and np.array_equal(np.asarray(f), h * h + h) and f._k is None
    r + f  # settled when next read
    _settled(r), _settled(f)
    # xp.lazy(): deferred, not launched
    with xp.lazy():
        r = x + x
        assert np.array_equal(np.asarray(r), 2 * h)
    # a recording thread sees the compiled launch; a skipping one launches nothing
    with recording() as records:
        x + x
    assert [r.name for r in records] and records[0].backend == "emulate"
    with launches.launches_skipped(), recording() as records:
        x + x
    assert len(records) == 1


def test_a_launch_error_propagates_and_nothing_leaks(monkeypatch):
    x = emulated(np.ones((8, 8), np.float32))
    z = emulated(np.zeros((8, 8), np.float32))
    fused = xp.fuse(lambda p, q: p * q + p)
    scaled = xp.fuse(lambda p, s: p * s + p)
    for _ in range(3):
        x * x, x * 2.0, xp.exp(x), xp.add(x, x, out=z), fused(x, x), scaled(x, 2.0)
        fused(x, x, out=z), scaled(x, 2.0, out=z)
    gc.collect()
    before = (sys.getrefcount(x), sys.getrefcount(x._a), len(gc.get_objects()))
    z_refs = sys.getrefcount(z)

    class Broken(RuntimeError):
        pass

    def broken(*args, **kwargs):
        raise Broken("launch failed")

    monkeypatch.setitem(launches.LAUNCHERS, "emulate", type("L", (), {"launch": broken}))
    for _ in range(100):
        for call in (lambda: x * x, lambda: x * 2.0, lambda: xp.add(x, x, out=z),
                     lambda: fused(x, x), lambda: scaled(x, float("1.5")),
                     lambda: fused(x, x, out=z), lambda: scaled(x, float("1.5"), out=z)):
            with pytest.raises(Broken):
                call()
    monkeypatch.undo()
    for k in range(1000):
        x * x, x * 2.0, xp.exp(x), xp.add(x, x, out=z), fused(x, x), scaled(x, k / 2)
        fused(x, x, out=z), scaled(x, k / 2, out=z)
    gc.collect()
    after = (sys.getrefcount(x), sys.getrefcount(x._a), len(gc.get_objects()))
    assert sys.getrefcount(z) == z_refs
    assert after[:2] == before[:2]
    assert after[2] - before[2] < 100  # no Arrays, tuples or ints kept per call


def test_calls_into_an_array_are_served_compiled(monkeypatch):
    """``out=`` and the in-place operators: with short_path.run refused, repeats still run
    (the compiled ``into`` launches from known.native), into the very Array given; and fused
    calls into an Array with fused_out.run_into and the first call's way refused (the
    compiled ``fused_into``), in place too, with a literal and a new float per call."""
    h = np.linspace(-2, 2, 48 * 64, dtype=np.float32).reshape(48, 64)
    x, y, z = emulated(h), emulated(h[::-1].copy()), emulated(np.zeros_like(h))
    fused = xp.fuse(lambda p, q, s: xp.exp(p * s) - q)
    calls = [lambda: xp.add(x, y, out=z), lambda: z.__iadd__(x), lambda: xp.exp(x, out=z),
             lambda: z.__imul__(0.5), lambda: xp.subtract(3.0, z, out=z),
             lambda: z.__iadd__(np.float32(1.5)), lambda: xp.multiply(x, 2, out=z),
             lambda: fused(x, y, 0.5, out=z), lambda: fused(z, x, float("-0.25"), out=z)]
    firsts = []
    for call in calls:  # the full calls: each one's answer from what z held before it
        call()
        firsts.append(np.asarray(z).copy())
    monkeypatch.setattr(short_path, "run", None)  # the Python path would call it: TypeError
    monkeypatch.setattr(fusion, "run_into", None)
    monkeypatch.setattr(fusion.FusedFunction, "_call", None)
    z_before_iadd = firsts[0]
    for call, expected in zip(calls, firsts):
        assert call() is z
        assert np.asarray(z).tobytes() == expected.tobytes()
    np.testing.assert_array_equal(firsts[1], z_before_iadd + h)
    np.testing.assert_array_equal(firsts[4], np.float32(3) - firsts[3])
    np.testing.assert_allclose(firsts[8], np.exp(firsts[7] * np.float32(-0.25)) - h,
                               rtol=1e-6, atol=1e-6)
    monkeypatch.undo()  # a scalar out of range declines: the Python path decides
    small = emulated(np.arange(-5, 5, dtype=np.int8))
    for _ in range(3):
        small += 1
    with pytest.raises(OverflowError):  # out of int8's range: the full call's error
        small += 1000
    np.testing.assert_array_equal(np.asarray(small), np.arange(-2, 8, dtype=np.int8))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 40),
       shift=st.integers(-3, 3), reverse=st.booleans(), read_only=st.booleans(),
       unary=st.booleans(), scalar=st.booleans(), fused=st.booleans())
def test_into_checks_overlap_and_writeability_per_call(seed, n, shift, reverse, read_only,
                                                       unary, scalar, fused):
    """A plan warmed on separate arrays, then called with ``out`` overlapping an input (a
    shifted or reversed view of the same buffer) or read-only: NumPy's answer or its
    error, on the compiled path as on the Python one; ``fused``: the call under ``xp.fuse``
    (hot_calls.c's ``fused_into``)."""
    rng = np.random.default_rng(seed)
    buffer = rng.standard_normal(n + 8).astype(np.float32)
    x_view = buffer[4:4 + n]
    out_view = buffer[4 + shift:4 + shift + n]
    if reverse:
        x_view = x_view[::-1]
    warm_x, warm_out = x_view.copy(), out_view.copy()
    if reverse:
        warm_x = np.ascontiguousarray(warm_x[::-1])[::-1]
    call = (lambda a, o: xp.negative(a, out=o)) if unary else (
        (lambda a, o: xp.multiply(a, 2.0, out=o)) if scalar else (lambda a, o: xp.add(a, a, out=o)))
    if fused:  # the same call under xp.fuse, out= given to the fused function
        inner = (lambda a: xp.negative(a)) if unary else (
            (lambda a: xp.multiply(a, 2.0)) if scalar else (lambda a: xp.add(a, a)))
        fused_call = xp.fuse(inner)
        call = (lambda a, o: fused_call(a, out=o))  # noqa: E731
    reference = (lambda a: -a) if unary else (lambda a: a + a)  # a * 2.0 is a + a
    wx, wo = emulated(warm_x), emulated(warm_out)
    for _ in range(3):
        call(wx, wo)
    expected = reference(x_view.copy())
    if read_only:
        out_view.flags.writeable = False
    x, out = emulated(x_view), emulated(out_view)
    if read_only:
        with pytest.raises(ValueError):
            call(x, out)
        return
    assert call(x, out) is out
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_a_damaged_cached_build_is_built_again_not_loaded(monkeypatch, tmp_path):
    """A cached library cut short (an interrupted copy of a prepared cache) or changed is
    built again where g++ is, and left unloaded where it is not; dlopen of a truncated
    library kills the process (SIGBUS), so each load runs in a child process."""
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
    path = native.library_path()
    native._build(path)  # not loaded here: this process maps no file the test changes
    whole = path.read_bytes()
    load = ("from infini_cupy.runtime import native; import shutil, sys\n"
            "if sys.argv[1] == 'no g++': shutil.which = lambda name: None\n"
            "print(native._try_load() is not None)")
    for damage in (lambda b: b[:len(b) // 2], lambda b: b[:100] + bytes([b[100] ^ 1]) + b[101:]):
        for compiler in ("g++", "no g++"):
            damaged = path.with_name("damaged")
            damaged.write_bytes(damage(whole))
            os.replace(damaged, path)
            env = {**os.environ, config.CACHE_DIR_VAR: str(tmp_path)}
            done = subprocess.run([sys.executable, "-c", load, compiler], capture_output=True,
                                  text=True, env=env, timeout=300)
            assert done.returncode == 0, done.stderr
            assert done.stdout.strip() == ("True" if compiler == "g++" else "False")
            if compiler == "g++":
                assert native._sealed(path) and path.stat().st_size == len(whole)
            else:
                assert not path.exists()  # the damaged file is gone, the Python path runs


def test_the_switch_reads_as_lazy_s_does(monkeypatch):
    """INFINI_CUPY_NATIVE: 0/false/off (any case) turn it off, 1/true/on or unset leave it
    on, anything else is a ValueError naming the variable (``off`` left it on)."""
    for value, on in (("0", False), ("off", False), ("FALSE", False), (" Off ", False),
                      ("1", True), ("on", True), ("True", True), ("", True)):
        monkeypatch.setenv(config.NATIVE_VAR, value)
        assert native.enabled() is on, value
        assert native.status().startswith("off") is not on, value
    for value in ("abc", "2", "yes please"):
        monkeypatch.setenv(config.NATIVE_VAR, value)
        with pytest.raises(ValueError, match=f"{config.NATIVE_VAR}="):
            native.enabled()
