"""Threads sharing the plan and kernel caches: 8 threads x hundreds of calls mixing layouts,
dtypes and functions give NumPy's exact answers, and each kernel variant is compiled once
however many threads want it at the same moment. Caches start cold: plan caches cleared, and
in emulation a fresh kernel cache directory (every variant really compiles).

The backend choice is a context variable: a thread starts with the environment's, so each
worker enters ``backend(...)`` itself, as a user's thread pool must.

On a GPU: every launch goes to the current CuPy stream (a launch captured into a CUDA graph
on a capturing stream runs only when the graph does), and nothing synchronizes the device.
"""

from __future__ import annotations

import collections
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import config
from infini_cupy.namespace import patterns
from infini_cupy.runtime import cuda as runtime
from infini_cupy.runtime import recent
from infini_cupy.runtime.emulate import build as emulator_build
from infini_cupy.runtime.emulate import launcher as emulator
from tests.support import dtype_cases

THREADS = 8
CALLS = 400
DTYPES = dtype_cases.EACH_SIZE
PATTERNS = ("a b c -> c a b", "a b c -> (b a) c", "a b c -> c (a b)", "a b c -> b c a",
            "a (b1 b2) c -> b2 a c b1")


def _clear_plan_caches():
    recent.forget_all()
    patterns.plan_pattern.cache_clear()
    patterns.parse_pattern.cache_clear()


@pytest.fixture
def compiles(backend_name, tmp_path, monkeypatch):
    """Cold caches; yields the list of name-expression tuples compiled during the test."""
    seen = []
    if backend_name == "cuda":
        monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))  # no binary on disk yet
        real_compile = runtime.compile_program

        def counting_compile(source, names, arch, *args, **kwargs):
            seen.append(tuple(names))
            return real_compile(source, names, arch, *args, **kwargs)

        monkeypatch.setattr(runtime, "compile_program", counting_compile)
        runtime.forget_kernels()
    else:
        monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
        real_compile = emulator_build._compile

        def counting_compile(cpp_text, path, options, names, *rest):
            seen.append(tuple(names))
            return real_compile(cpp_text, path, options, names, *rest)

        monkeypatch.setattr(emulator_build, "_compile", counting_compile)
        emulator.forget_loaded()
    _clear_plan_caches()
    yield seen
    emulator.forget_loaded()  # later tests load from their own cache directory again
    _clear_plan_caches()


def _values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "c":
        return (rng.integers(-50, 50, shape) + 1j * rng.integers(-50, 50, shape)).astype(dtype)
    return rng.integers(0 if dtype.kind == "u" else -50, 50, shape).astype(dtype)


def _layout(rng, a):
    """A view of ``a`` (host or device alike, same indexing): one of five layouts."""
    kind = int(rng.integers(0, 5))
    if kind == 1:
        return a.transpose(tuple(range(a.ndim))[::-1])
    if kind == 2:
        return a[tuple(slice(None, None, -1) for _ in range(a.ndim))]
    if kind == 3:
        return a[tuple(slice(0, None, 2) if n > 2 else slice(None) for n in a.shape)]
    if kind == 4:
        return a[(slice(None),) * (a.ndim - 1) + (slice(1, None),)] if a.shape[-1] > 1 else a
    return a


def _job(i: int):
    """Call ``i``: ``(run(to_device, to_host) -> host result, expected)``, deterministic."""
    rng = np.random.default_rng(1000 + i)
    dtype = DTYPES[i % len(DTYPES)]
    shape = tuple(int(n) for n in rng.integers(1, 7, size=3))
    shape = shape[:2] + (2 * shape[2],)  # even last dim: the b1 b2 pattern splits it
    host = _values(rng, shape, dtype)
    layout_seed = int(rng.integers(0, 2**31))
    view = lambda a: _layout(np.random.default_rng(layout_seed), a)  # noqa: E731
    x_host = view(host)
    kind = i % 6
    if kind == 0:  # rearrange_ into a transposed destination
        def run(dev, get):
            x = view(dev(host))
            y = dev(np.zeros(x.shape[::-1], dtype)).T
            return get(xp.rearrange_(y, x))
        return run, np.array(x_host)
    if kind == 1:  # rearrange with a pattern
        import einops

        pattern = PATTERNS[int(rng.integers(0, len(PATTERNS)))]
        axes = {"b2": 2} if "b2" in pattern else {}
        if axes and x_host.shape[1] % 2:
            pattern, axes = PATTERNS[0], {}
        return (lambda dev, get: get(xp.rearrange(view(dev(host)), pattern, **axes)),
                einops.rearrange(x_host, pattern, **axes))
    if kind == 2:  # astype (of values every dtype holds: no out-of-range conversion)
        host = abs(host) if dtype != "bool" else host
        x_host = view(host)
        target = DTYPES[int(rng.integers(0, len(DTYPES)))]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            expected = x_host.astype(target)
        return (lambda dev, get: get(xp.astype(view(dev(host)), target)), expected)
    if kind == 3:  # elementwise: two operands of different layouts
        other = _values(rng, x_host.shape, dtype)
        if dtype == "bool":
            return (lambda dev, get: get(xp.logical_xor(view(dev(host)), dev(other))),
                    np.logical_xor(x_host, other))
        return (lambda dev, get: get(xp.add(view(dev(host)), dev(other).T.T)), x_host + other)
    if kind == 4:  # unary elementwise / comparison
        if dtype in ("bool", "uint16"):
            return (lambda dev, get: get(xp.equal(view(dev(host)), view(dev(host))[..., :1])),
                    np.equal(x_host, x_host[..., :1]))
        return (lambda dev, get: get(xp.negative(view(dev(host)))), np.negative(x_host))
    # data movement built on rearrange_
    return (lambda dev, get: get(xp.concat([view(dev(host)), xp.roll(view(dev(host)), 1, axis=0)],
                                           axis=1)),
            np.concatenate([x_host, np.roll(x_host, 1, axis=0)], axis=1))


def _run_jobs(indices, backend_name, to_device, to_host, barrier=None):
    def work(i):
        run, expected = _job(i)
        if barrier is not None:
            barrier.wait()
        with xp.backend(backend_name), warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            if backend_name == "cuda":
                import cupy

                with cupy.cuda.Stream(non_blocking=True) as stream:  # a stream per call
                    got = run(to_device, lambda a: a)
                    stream.synchronize()
                got = to_host(got)
            else:
                got = run(to_device, to_host)
        assert got.dtype == expected.dtype and got.shape == expected.shape, (i, got.dtype, got.shape)
        np.testing.assert_array_equal(got, expected, err_msg=f"call {i}")
        return i

    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(work, indices))


def _assert_each_variant_compiled_once(compiles):
    assert compiles, "the caches were not cold"
    per_name = collections.Counter(name for names in compiles for name in names)
    repeated = {name: n for name, n in per_name.items() if n > 1}
    assert not repeated, f"compiled more than once: {repeated}"


def test_threads_share_cold_caches(compiles, backend_name, to_device, to_host):
    before = emulator_build.cache_info()
    assert _run_jobs(range(CALLS), backend_name, to_device, to_host) == list(range(CALLS))
    _assert_each_variant_compiled_once(compiles)
    if backend_name == "emulate":
        after = emulator_build.cache_info()
        assert after.get("compiled", 0) - before.get("compiled", 0) == len(compiles)
        assert after.get("corrupt", 0) == before.get("corrupt", 0)
    # the same calls again: every plan and kernel is cached, nothing compiles
    compiled = len(compiles)
    _run_jobs(range(0, CALLS, 7), backend_name, to_device, to_host)
    assert len(compiles) == compiled


def test_threads_racing_for_one_new_variant(compiles, backend_name, to_device, to_host):
    """Eight threads released at once into the same never-seen layouts."""
    jobs = [3, 9, 15]  # kind 3 (elementwise with a cast input), for three dtypes
    for job in jobs:
        _run_jobs([job] * THREADS, backend_name, to_device, to_host,
                  barrier=threading.Barrier(THREADS))
    _assert_each_variant_compiled_once(compiles)


# ---------------------------------------------------------------- streams (GPU only)
def _no_device_sync(monkeypatch):
    import cupy

    def forbidden(*args, **kwargs):
        raise AssertionError("the device or a stream was synchronized")

    for name in ("deviceSynchronize", "streamSynchronize"):
        monkeypatch.setattr(cupy.cuda.runtime, name, forbidden)


def _calls(cupy):
    rng = np.random.default_rng(5)
    a = cupy.asarray(rng.standard_normal((300, 200)).astype(np.float32))
    y = cupy.zeros((200, 300), np.float32)
    out = cupy.zeros((300, 200), np.float32)
    return a, [
        (lambda: xp.rearrange_(y, a.T), y, cupy.asnumpy(a).T),
        (lambda: xp.add(a, 1, out=out), out, cupy.asnumpy(a) + 1),
    ]


@pytest.mark.gpu
def test_launches_use_the_current_stream_and_never_synchronize(backend_name, monkeypatch):
    import cupy

    a, calls = _calls(cupy)
    for call, _, _ in calls:  # compiled and planned before anything is watched
        call()
    cupy.cuda.Device().synchronize()
    streams = []
    real_launch = runtime.launch
    monkeypatch.setattr(runtime, "launch", lambda *args, **kwargs: (
        streams.append(cupy.cuda.get_current_stream().ptr), real_launch(*args, **kwargs))[1])
    _no_device_sync(monkeypatch)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        for call, _, _ in calls:
            call()
        xp.rearrange(a.T)
        xp.astype(a.T, np.float16)
    assert streams and set(streams) == {stream.ptr}
    monkeypatch.undo()
    stream.synchronize()
    for _, result, expected in calls:
        np.testing.assert_array_equal(result.get(), expected)


def captured(cupy, calls):
    """(the graph, its stream) of ``calls`` launched on a capturing stream, after the
    device is idle; nothing runs until the graph is launched."""
    cupy.cuda.Device().synchronize()
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        for call, _, _ in calls:
            call()
        graph = stream.end_capture()
    cupy.cuda.Device().synchronize()
    return graph, stream


@pytest.mark.gpu
def test_launches_are_captured_by_a_capturing_stream(backend_name):
    """A kernel launched on the capturing stream joins the graph instead of running; one on
    any other stream would run at once (or break the capture, as would a synchronization)."""
    import cupy

    a, calls = _calls(cupy)
    for call, result, _ in calls:
        call()  # warm: no compile or allocation during the capture
        result[...] = 0
    graph, stream = captured(cupy, calls)
    for _, result, _ in calls:
        assert not result.any()  # captured, not run
    graph.launch(stream=stream)
    stream.synchronize()
    for _, result, expected in calls:
        np.testing.assert_array_equal(result.get(), expected)
