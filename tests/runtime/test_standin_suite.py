"""The cuda launcher runs in CI without a GPU: the parts of the suite that launch kernels, run
again with ``--backend cuda-standin`` (every launch through ``runtime/cuda.py`` and the
stand-in for CuPy's device side, which checks each launch against the kernel's PTX and then
runs it in the emulator), under coverage. Fails on any failed test, and on any line of
``runtime/cuda.py`` that run did not execute.

A subprocess, like the conformance suite: the stand-in is installed for a whole session. It
starts when collection ends and runs beside the rest of the session (tests/support/background.py).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from tests.support import background

REPO = Path(__file__).resolve().parents[2]
# What reaches the launcher; the notebooks, Dask and conformance runs use the same paths.
PARTS = ["tests/runtime", "tests/strided", "tests/elementwise", "tests/namespace", "tests/tools"]
# What launches nothing through the launcher: NVRTC compile checks of every variant (minutes),
# the pinned suite, the performance model (its launches are emulated on purpose).
SKIPPED = ["--ignore=tests/runtime/test_nvrtc.py", "--ignore=tests/runtime/test_ptx.py",
           "--ignore=tests/elementwise/test_fusion_nvrtc.py",
           "--ignore=tests/namespace/test_conformance.py",
           # the performance model: SASS reading and emulator traces only
           "--ignore=tests/readers/test_sass.py", "--ignore=tests/runtime/test_elf.py",
           "--ignore=tests/perf/test_limits.py", "--ignore=tests/tools/test_bench_model.py",
           "--ignore=tests/readers/test_bank_conflicts.py",
           "--deselect=tests/elementwise/test_kernels.py::test_nvrtc_compiles_every_variant",
           "--deselect=tests/elementwise/test_kernels.py::test_nvrtc_compiles_every_bfloat16_variant"]
LAUNCHER = "infini_cupy/runtime/cuda.py"


def _run(folder: Path):
    """(the run's result, its coverage report)."""
    env = dict(os.environ, COVERAGE_FILE=str(folder / ".coverage"))
    command = [sys.executable, "-m", "coverage", "run", f"--include=*/{LAUNCHER}", "-m",
               "pytest", "--backend", "cuda-standin", "-q", "-p", "no:cacheprovider",
               "-o", "addopts=-ra", f"--ignore={Path(__file__).relative_to(REPO)}", *SKIPPED,
               *PARTS]
    run = background.run(command, cwd=REPO, env=env, timeout=3600)
    report = background.run([sys.executable, "-m", "coverage", "report", "--show-missing",
                             f"--include=*/{LAUNCHER}"], cwd=REPO, env=env, timeout=600)
    return run, report


def _runs_here(config) -> bool:
    return (config.getoption("--backend") == "emulate"
            and importlib.util.find_spec("coverage") is not None)


def background_runs(config, items):
    """The stand-in run starts when collection ends, beside the rest of the session."""
    return {"standin": _run} if _runs_here(config) else {}


@pytest.fixture(scope="module")
def standin_run(pytestconfig):
    if pytestconfig.getoption("--backend") != "emulate":
        pytest.skip("the stand-in run starts from the emulated suite")
    pytest.importorskip("coverage")
    return background.result(pytestconfig, "standin", _run)


def test_the_suite_passes_through_the_cuda_launcher(standin_run):
    run, _ = standin_run
    assert run.returncode == 0, f"pytest --backend cuda-standin failed:\n{run.stdout[-6000:]}\n{run.stderr[-3000:]}"
    assert " passed" in run.stdout.splitlines()[-1]


def test_every_line_of_the_cuda_launcher_ran(standin_run):
    _, report = standin_run
    rows = [line for line in report.stdout.splitlines() if LAUNCHER in line]
    assert rows, f"no coverage of {LAUNCHER}:\n{report.stdout}\n{report.stderr}"
    statements, missed = (int(v) for v in rows[0].split()[1:3])
    assert statements > 0 and missed == 0, f"lines of {LAUNCHER} not run:\n{report.stdout}"
