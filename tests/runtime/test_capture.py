"""After a first call (or ``cuda.prepare``), launching into preallocated outputs
(``rearrange_``, elementwise ``out=``) does nothing a capturing CUDA stream refuses: no
compile, no file access, no module load, no allocation, no synchronization. Checked against
the stand-in's capture mode (tests/support/capture.py), which fails on any of them."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cupy")  # NVRTC compiles what the stand-in loads

import infini_cupy as xp  # noqa: E402
from infini_cupy import config  # noqa: E402
from infini_cupy.runtime import cuda, launch  # noqa: E402
from tests.support import cupy_standin  # noqa: E402
from tests.support.capture import capturing  # noqa: E402


@pytest.fixture
def side(tmp_path, monkeypatch, backend_name):
    if backend_name != "emulate":
        pytest.skip("the capture mode is the stand-in's")
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
    with cupy_standin.installed(capabilities=(90,)) as side, \
            launch.launcher_replaced("emulate", cupy_standin.ThroughCudaLauncher()):
        yield side


def _calls(rng):
    """Copies and elementwise calls into preallocated outputs, and what each must give."""
    square = rng.standard_normal((67, 45)).astype(np.float32)
    half = rng.standard_normal((501, 501)).astype(np.float16)  # packed, > 48 KiB shared
    row = rng.standard_normal(45).astype(np.float32)
    t, h = np.empty_like(square.T), np.empty_like(half.T)
    total, scaled = np.empty_like(square), np.empty_like(square)
    return [
        (lambda: xp.rearrange_(t, square.T), t, square.T),
        (lambda: xp.rearrange_(h, half.T), h, half.T),
        (lambda: xp.add(square, row, out=total), total, square + row),
        (lambda: xp.multiply(square.T.T, 2.0, out=scaled), scaled, square * np.float32(2)),
    ]


def test_launches_into_preallocated_outputs_capture(side):
    calls = _calls(np.random.default_rng(0))
    for call, _, _ in calls:  # the first call compiles, writes, loads, opts in
        call()
    loads, launches = len(side.module_loads), len(side.launches)
    for _, out, _ in calls:
        out[...] = 0
    with capturing():
        for call, _, _ in calls:
            call()
    assert len(side.module_loads) == loads and len(side.launches) == launches + len(calls)
    for _, out, expected in calls:
        np.testing.assert_array_equal(out, expected)


def test_after_prepare_the_first_launch_captures(side):
    """``cuda.prepare`` (what ``warmup`` does for a whole cache) is enough: compiled, loaded
    and opted in before the capture."""
    call, out, expected = _calls(np.random.default_rng(1))[1]
    with launch.recording() as launches, launch.launches_skipped():
        call()
    cuda.prepare(launches[0].source, [launches[0].name])
    with capturing():
        call()
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("what", ["compile", "allocation", "load", "sync"])
def test_the_capture_mode_fails_on_what_capture_refuses(side, what):
    x = np.random.default_rng(2).standard_normal((33, 17)).astype(np.float32)
    with pytest.raises(cupy_standin.CUDADriverError, match="during capture"), capturing():
        if what == "compile":  # a layout never launched before: its variant is compiled
            xp.rearrange_(np.empty_like(x.T), x.T)
        elif what == "allocation":  # no out=: the result is allocated
            xp.exp(x)
        elif what == "load":
            cuda.forget_kernels()
            xp.rearrange_(np.empty_like(x), x)
        else:
            side.cuda.runtime.deviceSynchronize()


# ---------------------------------------------------------------- CuPy's stream capture
@pytest.fixture(params=["cupy", "driver", "compiled"])
def graph_side(request):
    """Two stand-in devices as ``cupy``, the cuda backend, each launch mechanism: Arrays
    captured with ``Stream.begin_capture`` / ``end_capture`` and replayed with ``Graph``."""
    from infini_cupy.runtime import native, recent
    from tests.support.ci import skip_outside_ci

    if request.param == "compiled" and native.hot_calls() is None:
        skip_outside_ci("no compiled hot path here")
    recent.forget_all()
    with cupy_standin.installed(capabilities=(90, 90)), cupy_standin.as_cupy() as side, \
            config.backend("cuda"), cuda.launch_mechanism(request.param):
        yield side
    recent.forget_all()


def test_a_captured_sequence_of_calls_runs_at_each_replay(graph_side):
    """Copies, elementwise and fused calls into preallocated Arrays, captured on a stream:
    nothing runs at the capture, each replay runs them all on the inputs' data then (the
    docs' recipe, docs/user/cuda_graphs.md)."""
    rng = np.random.default_rng(3)
    h, row = rng.standard_normal((33, 17)).astype(np.float32), rng.standard_normal(17)
    x, r = xp.asarray(h, device="cuda"), xp.asarray(row.astype(np.float32), device="cuda")
    t = xp.empty((17, 33), dtype=xp.float32)
    total, doubled, shifted = (xp.empty_like(x) for _ in range(3))
    half_shift = xp.fuse(lambda a, b: (a - b) * 0.5)

    def step():
        xp.add(x, r, out=total)
        xp.multiply(total, 2.0, out=doubled)
        xp.rearrange_(t, doubled.T)
        half_shift(x, r, out=shifted)
        xp.add(shifted, 1.0, out=shifted)

    for _ in range(3):  # compiled, loaded, remembered (the C paths take the repeats)
        step()
    stream = graph_side.cuda.Stream(non_blocking=True)
    launches = len(graph_side.launches)
    with stream:
        stream.begin_capture()
        step()
        graph = stream.end_capture()
    assert len(graph_side.launches) == launches  # recorded, not run
    for values in (rng.standard_normal(h.shape), rng.standard_normal(h.shape)):
        x[...] = xp.asarray(values.astype(np.float32), device="cuda")  # in place
        graph.launch(stream)
        stream.synchronize()
        a = values.astype(np.float32) + row.astype(np.float32)
        for got, expected in ((total, a), (doubled, a * 2), (t, (a * 2).T),
                              (shifted, (values.astype(np.float32) - row.astype(np.float32))
                               * np.float32(0.5) + 1)):
            np.testing.assert_allclose(np.asarray(got.to_device("cpu")), expected, rtol=1e-6)
    assert graph_side.cuda.get_current_stream() == graph_side.cuda.Stream.null


def test_stream_capture_refuses_what_cuda_and_cupy_refuse(graph_side):
    # stream.pyx begin_capture (not on the null stream), memory.pyx copy_to_host_async
    # (no D2H on a capturing stream), CUDA: synchronizing a capturing stream or its device
    # invalidates the capture; the legacy stream while a blocking stream captures
    # (cudaErrorStreamCaptureImplicit); a replay into memory freed since (the pool reuses it)
    cuda_ = graph_side.cuda
    x = xp.asarray(np.arange(6, dtype=np.float32), device="cuda")
    out = xp.empty_like(x)
    xp.add(x, 1.0, out=out)
    with pytest.raises(RuntimeError, match="legacy"):
        cuda_.Stream.null.begin_capture()
    for sync in ("stream", "device"):
        stream = cuda_.Stream(non_blocking=True)
        with stream:
            stream.begin_capture()
            with pytest.raises(cupy_standin.CUDADriverError, match="during capture"):
                stream.synchronize() if sync == "stream" else cuda_.Device().synchronize()
            with pytest.raises(cupy_standin.CUDADriverError, match="invalidated|901"):
                stream.end_capture()
    stream = cuda_.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        with pytest.raises(RuntimeError, match="D2H"):
            x.to_device("cpu")
        stream.end_capture()
    blocking = cuda_.Stream()
    blocking.begin_capture()  # not current: our launch goes to the legacy stream
    with pytest.raises(cupy_standin.CUDADriverError, match="legacy|906"):
        xp.add(x, 1.0, out=out)
    with pytest.raises(cupy_standin.CUDADriverError):
        blocking.end_capture()
    with stream:
        stream.begin_capture()
        temporary = x * 2.0  # allocated during the capture, then freed
        graph = stream.end_capture()
    del temporary
    with pytest.raises(cupy_standin.CUDADriverError, match="freed since the capture"):
        graph.launch(stream)
