"""gpu-check's launch costs (``infini_cupy/tools/gpu_check/launch_costs.py``): microseconds per
launch-bound call with each launch mechanism, and the layer-by-layer breakdown, run here
against the stand-ins for CuPy and ``cuda.bindings.driver`` (figures of the stand-ins' Python,
not of a GPU: the rows, their results and their order are what is tested)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cupy")  # NVRTC compiles what the stand-in loads

import infini_cupy as xp  # noqa: E402
from infini_cupy import config  # noqa: E402
from infini_cupy.runtime import cuda, launch  # noqa: E402
from infini_cupy.tools.gpu_check import launch_costs  # noqa: E402
from tests.support import cupy_standin, driver_standin  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def test_host_time_is_taken_around_the_calls_after_the_warm_up():
    called, synced = [], []
    us = launch_costs.host_us_per_call(lambda: called.append(len(synced)),
                                       lambda: synced.append(len(called)), calls=7, warmup=3)
    assert us > 0
    assert called == [0] * 3 + [1] * 7 and synced == [3, 10]  # synchronized before and after


@pytest.fixture
def through_the_stand_ins(tmp_path, monkeypatch):
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
    with cupy_standin.installed(), driver_standin.installed(), xp.backend("emulate"), \
            launch.launcher_replaced("emulate", cupy_standin.ThroughCudaLauncher()):
        yield


def test_each_mechanism_gives_the_calls_answers_and_a_time(through_the_stand_ins):
    host = np.random.default_rng(1).standard_normal(launch_costs.ADD_SHAPE, np.float32)
    for mechanism in config.LAUNCH_MECHANISMS:
        with cuda.launch_mechanism(mechanism):
            (_, add, add_reference, torch_add), (_, scaled, scaled_reference, _), \
                (_, exp, exp_reference, _), (_, fused, fused_reference, _), \
                (_, fused_scalar, fused_scalar_reference, _), \
                (_, into, into_reference, _), (_, fused_into, fused_into_reference, _), \
                (_, lazy_block, lazy_reference, _), (_, transpose, *_), \
                (_, array_transpose, *_) = launch_costs.calls(np, "emulate")
            assert torch_add is None  # torch only beside CuPy
            four_ops = np.exp(host * host + host) - host
            for call, reference, expected in [(add, add_reference, host + host),
                                              (scaled, scaled_reference, host * 2.0),
                                              (exp, exp_reference, np.exp(host)),
                                              (fused, fused_reference, four_ops),
                                              (fused_scalar, fused_scalar_reference,
                                               host * np.float32(2.5) + host),
                                              (into, into_reference, host + host),
                                              (fused_into, fused_into_reference, four_ops),
                                              (lazy_block, lazy_reference, four_ops)]:
                np.testing.assert_allclose(reference(), expected, rtol=1e-6)
                result = call()
                assert isinstance(result, xp.Array)
                np.testing.assert_allclose(np.asarray(result), expected, rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(transpose(), host.T)
            np.testing.assert_array_equal(array_transpose(), host.T)
    rows = list(launch_costs.mechanism_rows(np, "emulate", lambda: None, (2, 1)))
    assert [r["case"] for r in rows] == [
        "host us per call: add 48x64 fp32 Array",
        "host us per call: multiply 48x64 fp32 Array by 2.0",
        "host us per call: exp 48x64 fp32 Array",
        "host us per call: fused exp(x*y+x)-y 48x64 fp32 Arrays",
        "host us per call: fused x*s+y 48x64 fp32 Arrays, s=2.5",
        "host us per call: add 48x64 fp32 Array, out=",
        "host us per call: fused exp(x*y+x)-y 48x64 fp32 Arrays, out=",
        "host us per call: lazy() exp(x*y+x)-y 48x64 fp32 Arrays",
        "host us per call: rearrange_ 64x48 fp32 (cached)",
        "host us per call: rearrange_ 64x48 fp32 Array (cached)"]
    for row in rows:
        assert row["ok"], row
        assert set(row["us_per_call"]) == set(config.LAUNCH_MECHANISMS)
        assert all(us > 0 for us in row["us_per_call"].values())
        assert row["cupy_us_per_call"] > 0 and row["torch_us_per_call"] is None


def test_a_mechanism_that_cannot_launch_is_a_failed_row(through_the_stand_ins, monkeypatch):
    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", None)  # no cuda-bindings
    rows = list(launch_costs.mechanism_rows(np, "emulate", lambda: None, (1, 1)))
    assert all(r["us_per_call"]["cupy"] > 0 and r["us_per_call"]["driver"] is None
               and not r["ok"] and "cuda-bindings" in r["errors"]["driver"] for r in rows)


def test_the_breakdown_runs_layer_by_layer_on_the_stand_ins():
    done = subprocess.run([sys.executable, "-m", "tests.support.standin_python", "-m",
                           "infini_cupy.tools.gpu_check.launch_costs", "--calls", "4",
                           "--warmup", "1"], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    by_mechanism = {m: [r["case"] for r in rows if r["launch"] == m]
                    for m in config.LAUNCH_MECHANISMS}
    outer = ["layer: runtime.cuda.launch: arguments checked, device",
             "layer: runtime.launch.launch: hooks, backend",
             "layer: xp.add of CuPy arrays: short path, output allocated",
             "layer: xp.add of Arrays", "layer: cupy.add (for comparison)"]
    assert by_mechanism["cupy"] == ["layer: CuPy's Function: arguments packed, launched",
                                    *outer]
    assert by_mechanism["driver"] == [
        "layer: cuLaunchKernel on a packed record",
        "layer: driver launch: pointers written, then cuLaunchKernel", *outer]
    assert all(r["ok"] and r["us_per_call"] > 0 for r in rows), rows


def test_a_failing_layer_is_reported_not_raised(monkeypatch):
    def broken(cupy, mechanism):
        raise RuntimeError("no device")

    monkeypatch.setattr(launch_costs, "_layers", broken)
    rows = list(launch_costs.breakdown_rows(None, lambda: None, (1, 1)))
    assert [(r["launch"], r["ok"], r["error"]) for r in rows] == [
        (m, False, "RuntimeError: no device") for m in config.LAUNCH_MECHANISMS]


def test_the_mechanisms_rows_run_on_the_stand_ins_arrays():
    """``--mechanisms``: each launch-bound call of the stand-in's device arrays and Arrays
    with every mechanism (the compiled one from C through the stand-in's entry points)."""
    done = subprocess.run([sys.executable, "-m", "tests.support.standin_python", "-m",
                           "infini_cupy.tools.gpu_check.launch_costs", "--mechanisms",
                           "--calls", "4", "--warmup", "2"], cwd=REPO, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [r["case"] for r in rows] == [f"host us per call: {name}" for name, *_ in
                                         launch_costs.calls(np, "emulate")]
    for row in rows:
        assert row["ok"], row
        assert all(row["us_per_call"][m] > 0 for m in config.LAUNCH_MECHANISMS)
        assert row["cupy_us_per_call"] > 0 and row["torch_us_per_call"] is None
