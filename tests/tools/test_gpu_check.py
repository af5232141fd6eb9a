"""``gpu-check`` without a GPU: its whole sequence of steps runs here against the stand-in for
CuPy (smoke cases, bench rows and pytest through the cuda launcher), within a budget, the
report complete after every step; a short budget skips later steps with the reason; without
a driver it says so in one line at once."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("cupy")  # NVRTC compiles what the stand-in loads

import infini_cupy as xp  # noqa: E402
from infini_cupy.__main__ import main  # noqa: E402
from infini_cupy.runtime import availability, launch  # noqa: E402
from infini_cupy.tools.gpu_check import bench_step as gpu_bench  # noqa: E402
from infini_cupy.tools.gpu_check import command as gpu_check  # noqa: E402
from infini_cupy.tools.gpu_check import launch_costs  # noqa: E402
from infini_cupy.tools.gpu_check import smoke as gpu_smoke  # noqa: E402
from tests.support import cupy_standin  # noqa: E402

STEP_NAMES = list(gpu_check.STEPS)


def test_smoke_cases_pass_through_the_cuda_launcher():
    with cupy_standin.installed() as side, xp.backend("emulate"), \
            launch.launcher_replaced("emulate", cupy_standin.ThroughCudaLauncher()):
        records = gpu_smoke.run_cases(lambda a: a, np.asarray, device_count=1)
    assert [r for r in records if not r["ok"]] == []
    assert len(records) >= 8 and side.launches
    for record in records:
        if "float16 transpose" in record["case"]:  # in dynamic shared memory, fresh thread too
            assert any(k.startswith("packed_copy<") and k.endswith(", 2>")
                       for k in record["kernels"]), record


def test_a_smoke_case_that_differs_from_numpy_fails(monkeypatch):
    """The oracle is real: a kernel result altered after the fact is reported."""
    real = gpu_smoke._matches
    monkeypatch.setattr(gpu_smoke, "_matches", lambda got, expected, exact:
                        real(got + np.ones_like(got), expected, exact))
    with xp.backend("emulate"):
        records = gpu_smoke.run_cases(lambda a: a, np.asarray)
    assert records and not any(r["ok"] for r in records)
    assert {r["error"] for r in records} == {"differs from NumPy"}



def test_without_bfloat16_its_case_is_not_run_rather_than_failed(monkeypatch):
    """A GPU image with ml_dtypes 0.6 (an H200's, 2026-12-04) has no bfloat16 in infini_cupy:
    the case says why it did not run, and the smoke passes on the cases that did."""
    from infini_cupy import dtypes

    monkeypatch.setattr(dtypes, "BFLOAT16", None)
    with xp.backend("emulate"):
        records = gpu_smoke.run_cases(lambda a: a, np.asarray, only=["bfloat16", "add float32"])
    by_case = {r["case"]: r for r in records}
    assert by_case["astype float32 -> bfloat16"]["ok"] is None
    assert "ml_dtypes" in by_case["astype float32 -> bfloat16"]["not_run"]
    assert by_case["add float32 broadcast"]["ok"] is True


FAKE_SANITIZER = """#!/bin/sh
# compute-sanitizer --tool TOOL --error-exitcode 3 COMMAND...: refuses the device for synccheck;
# racecheck ends with its own summary line, as on an H100
tool=$2; shift 4
if [ "$tool" = synccheck ]; then
  echo "========= Error: Device not supported (stand-in)"; exit 1
fi
"$@"; code=$?
if [ "$tool" = racecheck ]; then
  echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"; exit $code
fi
echo "========= ERROR SUMMARY: 0 errors"; exit $code
"""


# ncu --csv --page details ... COMMAND...: runs the command (its own lines first, as ncu
# prints them), then one launch's details per kernel the profiled program reported, in ncu's
# CSV columns: DRAM at 90% for tiled copies and 40% for the others.
FAKE_NCU = """#!{python}
import json, subprocess, sys
argv = sys.argv[1:]
run = subprocess.run(argv[argv.index({python!r}):], capture_output=True, text=True)
sys.stdout.write(run.stdout)
names = [k for line in run.stdout.splitlines() if line.startswith('{{"profile_case"')
         for k in json.loads(line)["kernels"]]
head = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
        "Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit",
        "Metric Value"]
print(",".join(f'"{{h}}"' for h in head))
for i, name in enumerate(names):
    dram = "90.12" if name.startswith("tiled_copy") else "40.00"
    for section, metric, unit, value in (
            ("GPU Speed Of Light Throughput", "DRAM Throughput", "%", dram),
            ("GPU Speed Of Light Throughput", "Duration", "usecond", "1,234.50"),
            ("Occupancy", "Achieved Occupancy", "%", "61.5"),
            ("Launch Statistics", "Registers Per Thread", "register/thread", "48")):
        row = [str(i), "1", "python3", "127.0.0.1", name, "1", "7", "(256, 1, 1)", "(132, 1, 1)",
               "0", "9.0", section, metric, unit, value]
        print(",".join(f'"{{v}}"' for v in row))
sys.exit(run.returncode)
"""


def test_ncu_details_are_read_per_launch_and_matched_to_their_cases():
    from infini_cupy.tools.gpu_check import nsight_profile as gpu_profile

    csv_text = ('ran a case\n"ID","Kernel Name","Block Size","Grid Size","Metric Name",'
                '"Metric Unit","Metric Value"\n'
                '"0","tiled_copy<4, 4, 4, 0, 0>","(256, 1, 1)","(9, 1, 1)","Duration","msecond","1.5"\n'
                '"0","tiled_copy<4, 4, 4, 0, 0>","(256, 1, 1)","(9, 1, 1)","DRAM Throughput","%","91.3"\n'
                # the Memory Throughput of two sections: SpeedOfLight's %, MemoryWorkloadAnalysis's
                # byte/s (ncu 2025.3, H200): the percentage is kept
                '"0","tiled_copy<4, 4, 4, 0, 0>","(256, 1, 1)","(9, 1, 1)","Memory Throughput","%","82.4"\n'
                '"0","tiled_copy<4, 4, 4, 0, 0>","(256, 1, 1)","(9, 1, 1)","Memory Throughput",'
                '"byte/s","3,964,649,183,572.49"\n'
                '"1","ew_contig<ic::OpAdd, float, float>","(256, 1, 1)","(3, 1, 1)",'
                '"L2 Hit Rate","%","12.25"\n'
                '"1","ew_contig<ic::OpAdd, float, float>","(256, 1, 1)","(3, 1, 1)",'
                '"Block Limit Registers","block","n/a"\n')
    launches = gpu_profile.parse(csv_text)
    assert launches == [
        {"kernel": "tiled_copy<4, 4, 4, 0, 0>", "block": "(256, 1, 1)", "grid": "(9, 1, 1)",
         "duration_us": 1500.0, "dram_pct": 91.3, "memory_pct": 82.4},
        {"kernel": "ew_contig<ic::OpAdd, float, float>", "block": "(256, 1, 1)",
         "grid": "(3, 1, 1)", "l2_hit_pct": 12.25}]
    cases = gpu_profile.assign([{"profile_case": "a", "kernels": ["k0", "k1"]},
                                {"profile_case": "b", "kernels": ["k2"]}], launches)
    assert [[launch["name"] for launch in c["launches"]] for c in cases] == [["k0", "k1"], ["k2"]]
    assert cases[0]["launches"][1]["l2_hit_pct"] == 12.25 and "dram_pct" not in cases[1]["launches"][0]
    assert gpu_profile.summary(cases).startswith("a: DRAM 91.3%, occupancy ?%; b: DRAM ?%")
    assert gpu_profile.parse("no details at all") == []


def test_the_profile_step_is_skipped_without_ncu_or_its_counters(monkeypatch, tmp_path):
    from infini_cupy.tools.gpu_check import nsight_profile as gpu_profile

    monkeypatch.setattr(gpu_profile, "ncu_path", lambda: None)
    result = gpu_check._profile(None, tmp_path / "r.json", 10)
    assert result["skipped"] and result["summary"] == "Nsight Compute (ncu) not found"
    refusing = tmp_path / "ncu"
    refusing.write_text("#!/bin/sh\necho '==ERROR== ERR_NVGPUCTRPERM - The user does not have "
                        "permission to access NVIDIA GPU Performance Counters'\nexit 1\n")
    refusing.chmod(refusing.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(gpu_profile, "ncu_path", lambda: str(refusing))
    result = gpu_check._profile(None, tmp_path / "r.json", 10)
    assert result["skipped"] and result["ok"] and "ERR_NVGPUCTRPERM" in result["summary"]


@pytest.fixture
def standin_steps(tmp_path, monkeypatch, backend_name):
    """gpu-check's subprocesses run against the stand-in, on a small sample and rest."""
    if backend_name != "emulate":
        pytest.skip("the stand-in sequence starts from the emulated suite (once)")
    sanitizer = tmp_path / "compute-sanitizer"
    sanitizer.write_text(FAKE_SANITIZER)
    sanitizer.chmod(sanitizer.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(gpu_check, "sanitizer", lambda: str(sanitizer))
    ncu = tmp_path / "ncu"
    ncu.write_text(FAKE_NCU.format(python=sys.executable))
    ncu.chmod(ncu.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(gpu_check.gpu_profile, "ncu_path", lambda: str(ncu))
    monkeypatch.setattr(gpu_check, "PYTHON", [sys.executable, "-m", "tests.support.standin_python"])
    # quick tests of few variants each: on the stand-in every variant is an NVRTC compile, and
    # the matrix of test_rearrange_kernels.py passed too few tests in the sample's share
    monkeypatch.setattr(gpu_check, "SAMPLE", ["tests/strided/test_copy.py"])
    monkeypatch.setattr(gpu_check, "REST", ["tests/runtime/test_launch.py"])
    monkeypatch.setattr(gpu_check, "COMPILED_SAMPLE", ["tests/namespace/test_hot_path.py"])
    monkeypatch.setattr(gpu_check, "cuda_unavailable", lambda: None)
    written = []
    real_write = gpu_check._write
    monkeypatch.setattr(gpu_check, "_write", lambda path, report: (
        written.append(json.loads(json.dumps(report))), real_write(path, report))[1])
    with cupy_standin.installed():
        yield written


def _microseconds(us) -> list:
    """A row's microseconds per call: one figure, or one per launch mechanism."""
    return list(us.values()) if isinstance(us, dict) else [0 if us is None else us]


def test_the_whole_sequence_runs_within_its_budget(standin_steps, tmp_path):
    report = tmp_path / "out" / "gpu-check.json"
    start = time.monotonic()
    assert main(["gpu-check", "--budget", "400", "--report", str(report)]) == 0
    assert time.monotonic() - start < 400
    assert [list(r["steps"]) for r in standin_steps] == [
        STEP_NAMES[:k] for k in range(1, len(STEP_NAMES) + 1)]  # written after every step
    steps = json.loads(report.read_text())["steps"]
    assert steps == standin_steps[-1]["steps"]
    for name, result in steps.items():
        assert {"summary", "finished", "kernel_cache"} <= set(result), name
    assert steps["env"]["environment"]["gpus"][0]["name"] == "stand-in sm_90"
    assert "cases match NumPy" in steps["smoke"]["summary"] and steps["smoke"]["ok"]
    assert len(steps["smoke"]["cases"]) >= 8
    tools = steps["sanitizer"]["tools"]
    assert tools["synccheck"]["skipped"] and "Device not supported" in tools["synccheck"]["summary"]
    assert tools["memcheck"]["ok"] and tools["racecheck"]["ok"]
    assert tools["racecheck"]["summary"].startswith("========= RACECHECK SUMMARY: 0 hazards")
    assert len(gpu_check._records(tools["memcheck"]["output_tail"], '{"case"')) == 2
    assert steps["sample"]["outcomes"]["passed"] >= 10 and "failed" not in steps["sample"]["outcomes"]
    assert steps["rest"]["outcomes"]["passed"] >= 3
    compiled = steps["compiled"]  # the compiled launch, through the stand-in's C entry points
    assert compiled["outcomes"]["passed"] >= 10 and "failed" not in compiled["outcomes"]
    rows = steps["bench"]["rows"]
    assert [r["case"] for r in rows][:2] == ["device-to-device copy", "transpose fp32"]
    assert all(r["ok"] and (r.get("fraction") is not None or r.get("plans")
                            or min(_microseconds(r.get("us_per_call"))) > 0)
               for r in rows), rows
    assert any(r["case"].startswith("fused") for r in rows)
    names = [r["case"] for r in rows]
    launch_bound = names.index("launch-bound transpose 64x48 fp32")
    assert names[launch_bound + 1] == "launch-bound add 48x64 fp32"
    rivals = rows[launch_bound + 2:launch_bound + 2 + len(gpu_bench.RIVAL_CASES)]
    # then each launch mechanism's host time per call (no layers: they need device arrays),
    # one row per launch-bound call (their names: tests/tools/test_launch_costs.py)
    assert [r["case"] for r in rows[launch_bound + 2 + len(rivals):]] == [
        f"host us per call: {name}" for name, *_ in launch_costs.calls(np, "emulate")]
    assert [r["case"] for r in rivals] == [f"planners: {n}" for n in gpu_bench.RIVAL_CASES]
    for row in rivals:  # each rule's plan, checked against the source, and its figures
        assert [p["planner"] for p in row["plans"]] == ["default", "seed", "coalescing"]
        assert all(p["kernels"] and p["fraction"] > 0 for p in row["plans"]), row
    seed_plans = [k for row in rivals for p in row["plans"] if p["planner"] == "seed"
                  for k in p["kernels"]]
    assert seed_plans and all(k.startswith("rearrange") for k in seed_plans), seed_plans
    profiled = steps["profile"]["cases"]
    assert [c["case"] for c in profiled] == list(gpu_check.gpu_profile.CASES)
    for case in profiled:  # every launch of every case, with ncu's figures for it
        assert case["launches"], case
        for launch_ in case["launches"]:
            assert launch_["kernel"] == launch_["name"] and launch_["duration_us"] == 1234.5
            assert launch_["dram_pct"] == (90.12 if launch_["name"].startswith("tiled") else 40.0)
    assert steps["profile"]["summary"].startswith("heads split fp16: DRAM 40.0%, occupancy 61.5%")
    smoke_cache = steps["smoke"]["kernel_cache"]
    assert smoke_cache["hits"] + smoke_cache["compiles"] >= 8  # every kernel counted once


def test_a_short_budget_skips_the_later_steps_with_the_reason(standin_steps, tmp_path):
    report = tmp_path / "gpu-check.json"
    assert main(["gpu-check", "--budget", "10", "--report", str(report)]) == 0
    steps = json.loads(report.read_text())["steps"]
    assert list(steps) == STEP_NAMES and steps["env"]["ok"]
    for name in STEP_NAMES[1:]:
        assert steps[name]["skipped"] and steps[name]["ok"] is None
        assert "of the 10 s budget left, the step needs at least" in steps[name]["summary"]
    assert len(standin_steps) == len(STEP_NAMES)


@pytest.mark.skipif(availability.cuda_unavailable() is None, reason="a GPU is present")
@pytest.mark.parametrize("command", [["gpu-check", "--report", "{tmp}/r.json"],
                                     ["demo", "--backend", "cuda"]])
def test_without_a_gpu_one_line_names_the_cause(command, tmp_path):
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "infini_cupy",
                           *(c.format(tmp=tmp_path) for c in command)],
                          capture_output=True, text=True, timeout=60)
    assert time.monotonic() - start < 30
    assert done.returncode == 2
    lines = (done.stdout + done.stderr).strip().splitlines()
    assert len(lines) == 1 and availability.cuda_unavailable() in lines[0]


def test_each_cause_is_named(monkeypatch):
    class Refused(Exception):
        def __init__(self, status):
            super().__init__(f"status {status}")
            self.status = status

    class Runtime:
        status = availability.CUDA_ERROR_NO_DEVICE

        @classmethod
        def getDeviceCount(cls):
            raise Refused(cls.status)

        @staticmethod
        def runtimeGetVersion():
            return 13050

    fake = type("cupy", (), {"cuda": type("cuda", (), {"runtime": Runtime})})
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert availability.cuda_unavailable().startswith("CuPy is missing")
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(availability, "_driver_library", lambda: "libcuda.so.1: cannot open")
    assert availability.cuda_unavailable() == "no NVIDIA driver: libcuda.so.1: cannot open"
    monkeypatch.setattr(availability, "_driver_library", lambda: None)
    assert availability.cuda_unavailable().startswith("no GPU visible")
    Runtime.status = availability.CUDA_ERROR_INSUFFICIENT_DRIVER
    assert "driver is older than CuPy's CUDA runtime (13050)" in availability.cuda_unavailable()


def test_test_outcomes_are_counted_once_with_and_without_xdist():
    log = ("tests/a.py::test_x[1] PASSED [ 10%]\ntests/a.py::test_y FAILED [ 20%]\n"
           "[gw0] [ 30%] PASSED tests/a.py::test_z\n[gw1] [ 40%] SKIPPED tests/a.py::test_w\n"
           "ERROR root: a captured log line\nFAILED tests/a.py::test_y - AssertionError\n")
    assert [a or b for a, b in gpu_check._OUTCOME.findall(log)] == [
        "PASSED", "FAILED", "PASSED", "SKIPPED"]


def test_failures_are_written_as_they_happen(tmp_path):
    # gpu-check's pytest steps may be stopped at their limit before pytest prints any
    # traceback: the plugin writes each failure's report the moment it comes in.
    (tmp_path / "test_some.py").write_text(
        "def test_fine():\n    pass\n\n"
        "def test_broken():\n    assert 1 + 1 == 3, 'arithmetic'\n")
    failures = tmp_path / "failures.log"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "infini_cupy.tools.gpu_check.failures", str(tmp_path / "test_some.py")],
        cwd=tmp_path, capture_output=True, text=True,
        env=dict(os.environ, INFINI_CUPY_FAILURES=str(failures),
                 PYTHONPATH=os.pathsep.join([str(gpu_check.REPO), os.environ.get("PYTHONPATH", "")])))
    assert done.returncode == 1, done.stdout[-2000:]
    text = failures.read_text()
    assert text.startswith("FAILED test_some.py::test_broken (call)")
    assert "AssertionError: arithmetic" in text and "test_fine" not in text


@pytest.mark.parametrize("budget", ["nan", "inf", "-inf", "0", "-5", "soon"])
def test_a_budget_that_is_no_finite_positive_number_is_refused(budget, capsys):
    """argparse's error on the preparing machine: a NaN or infinite budget ran the steps and
    then failed at ``rest`` with a report of invalid JSON; 0 or less skipped every step."""
    with pytest.raises(SystemExit) as done:
        main(["gpu-check", "--budget", budget])
    assert done.value.code == 2
    assert "--budget" in capsys.readouterr().err


def test_a_cache_dir_that_is_not_there_or_no_archive_is_refused(standin_steps, tmp_path, capsys):
    """Refused before the GPU is looked for (a typo would spend the budget compiling every
    variant); a file that is no archive of ``warmup --archive``: one line, no traceback."""
    missing = tmp_path / "warm.tar.xz"
    assert main(["gpu-check", "--cache-dir", str(missing), "--report",
                 str(tmp_path / "r.json")]) == 2
    assert f"--cache-dir {missing}: no such file or folder" in capsys.readouterr().out
    missing.write_bytes(b"not an archive")
    assert main(["gpu-check", "--cache-dir", str(missing), "--report",
                 str(tmp_path / "r.json")]) == 2
    assert "not an archive of warmup --archive" in capsys.readouterr().out


def test_an_archive_is_unpacked_for_the_steps_and_removed_after(tmp_path, monkeypatch):
    """warmup --archive's file is the steps' cache in a temporary folder, gone afterwards
    with the cache folder of before in force again (one was left in /tmp per run)."""
    from pathlib import Path

    from infini_cupy.config import CACHE_DIR_VAR
    from infini_cupy.tools.warmup import warm_cache

    (tmp_path / "warm" / "cubin").mkdir(parents=True)
    (tmp_path / "warm" / "cubin" / "k.cubin").write_bytes(b"a cubin")
    packed = tmp_path / "warm.tar.xz"
    warm_cache.archive(tmp_path / "warm", packed)
    monkeypatch.setenv(CACHE_DIR_VAR, str(tmp_path / "mine"))
    with gpu_check._cache_folder(str(packed)) as problem:
        assert problem is None
        during = Path(os.environ[CACHE_DIR_VAR])
        assert (during / "cubin" / "k.cubin").read_bytes() == b"a cubin"
    assert not during.exists() and os.environ[CACHE_DIR_VAR] == str(tmp_path / "mine")


@pytest.mark.parametrize("overhead", [0, 1, 2])
def test_with_the_default_budget_every_step_up_to_bench_starts(overhead):
    """Each step taking all the time it is given, and ``overhead`` seconds more: every step
    up to ``bench`` still starts, with at least its minimum (their shares add up to more
    than 360 s: the earlier ones leave the later ones' minimums)."""
    names, left = list(gpu_check.STEPS), 360.0
    for name in names[:names.index(gpu_check.ALWAYS_STARTS) + 1]:
        limit = gpu_check.step_limit(name, names, left)
        assert limit is not None and limit >= min(gpu_check.STEPS[name].minimum, left - 2), name
        left -= limit + overhead
    only = ["smoke", "bench"]  # --step: what is left out holds nothing back
    assert gpu_check.step_limit("smoke", only, 360.0) == gpu_check.STEPS["smoke"].share
