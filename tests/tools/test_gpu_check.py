"""``gpu-check`` without a GPU: its smoke cases run here through the cuda launcher and the
stand-in for CuPy (the same cases, oracles and kernel expectations a GPU runs), its report
merges the steps of separate calls, and its suite parts cover the whole suite."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("cupy")  # NVRTC compiles what the stand-in loads

import infini_cupy as xp  # noqa: E402
from infini_cupy.__main__ import main  # noqa: E402
from infini_cupy.runtime import launch  # noqa: E402
from infini_cupy.tools import gpu_check, gpu_smoke  # noqa: E402
from tests.support import cupy_standin  # noqa: E402


def test_smoke_cases_pass_through_the_cuda_launcher():
    with cupy_standin.installed() as side, xp.backend("emulate"), \
            launch.launcher_replaced("emulate", cupy_standin.ThroughCudaLauncher()):
        records = gpu_smoke.run_cases(lambda a: a, np.asarray, device_count=1)
    assert [r for r in records if not r["ok"]] == []
    assert len(records) >= 8 and side.launches
    packed = next(r for r in records if "48 KiB" in r["case"])
    assert any(k.startswith("packed_copy<") and k.endswith(", 2>") for k in packed["kernels"])


def test_a_smoke_case_that_differs_from_numpy_fails(monkeypatch):
    """The oracle is real: a kernel result altered after the fact is reported."""
    real = gpu_smoke._matches
    monkeypatch.setattr(gpu_smoke, "_matches", lambda got, expected, exact:
                        real(got + np.ones_like(got), expected, exact))
    with xp.backend("emulate"):
        records = gpu_smoke.run_cases(lambda a: a, np.asarray)
    assert records and not any(r["ok"] for r in records)
    assert {r["error"] for r in records} == {"differs from NumPy"}


def test_steps_of_separate_calls_merge_into_one_report(tmp_path, monkeypatch):
    report = tmp_path / "gpu-check.json"
    monkeypatch.setattr(gpu_check, "_sanitizer", lambda: None)
    assert main(["gpu-check", "--step", "sanitizer", "--report", str(report)]) == 0
    main(["gpu-check", "--step", "env", "--report", str(report)])
    content = json.loads(report.read_text())
    assert set(content) == {"sanitizer", "env"}
    env = content["env"]["environment"]
    assert env["python"] and env["cupy"] and env["nvrtc"]["version"].startswith("13")
    assert env["cuda_headers"].endswith("include")  # the runtime wheel of the test extra
    assert content["env"]["ok"] is False  # no GPU here: said, not hidden


def test_suite_parts_cover_every_test(monkeypatch, tmp_path):
    commands = []
    monkeypatch.setattr(gpu_check, "_run", lambda command, timeout, env=None:
                        commands.append(command) or {"ok": True, "output_tail": "3 passed in 1s"})
    assert main(["gpu-check", "--step", "suite", "--report", str(tmp_path / "r.json")]) == 0
    assert len(commands) == len(gpu_check.SUITE_PARTS)
    named = [p for c in commands for p in c if p.startswith("tests/")]
    ignored = [p.split("=", 1)[1] for c in commands for p in c if p.startswith("--ignore=")]
    assert sorted(ignored) == sorted(p for p in named if p != "tests")  # rest = the others
    assert all(c[c.index("--backend") + 1] == "cuda" for c in commands)
