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
