"""The cuda backend runs in CI without a GPU: the parts of the suite that launch kernels, run
again against the stand-in for CuPy (which checks each launch against the kernel's PTX and
then runs it in the emulator), under coverage. :data:`END_TO_END` (all of :data:`PARTS`) runs
with ``--backend cuda-standin``: the stand-in is ``cupy``, Arrays hold its device arrays,
outputs come from its pool, launches go through ``runtime/cuda.py``; :data:`LAUNCHES_ONLY`
with ``--backend cuda-standin-launches`` (NumPy arrays, each launch through
``runtime/cuda.py``); and :data:`DRIVER_RUN` with ``--backend cuda-standin`` and
``INFINI_CUPY_LAUNCH=driver`` (launches through ``runtime/cuda_driver.py`` and the stand-in
for ``cuda.bindings.driver``); and :data:`COMPILED_RUN` with ``INFINI_CUPY_LAUNCH=compiled``
(launches from ``runtime/compiled_launch.c`` through the stand-in's C entry points). Fails on any failed test, on any line of :data:`LAUNCHERS` no
run executed, and on any line of the library's cuda branches (:func:`cuda_branch_files`: the
bodies of ``if``s that test for the cuda backend or a CuPy array, :func:`cuda_branch_lines`)
the end-to-end run did not execute.

A subprocess, like the conformance suite: the stand-in is installed for a whole session. It
starts when collection ends and runs beside the rest of the session (tests/support/background.py).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import sys
from pathlib import Path

import pytest

from infini_cupy.config import LAUNCH_VAR
from tests.support import background

REPO = Path(__file__).resolve().parents[2]
background_first = True  # the longest of the session's background runs (background.py)
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
           "--ignore=tests/tools/test_measured_records.py",
           "--deselect=tests/elementwise/test_kernels.py::test_nvrtc_compiles_every_variant",
           "--deselect=tests/elementwise/test_kernels.py::test_nvrtc_compiles_every_bfloat16_variant"]
# What the stand-in run would repeat bit for bit: the emulator's own tests (they take no
# backend), and the kernels' numerics against their oracles (special cases, ulps, the
# accuracy table), whose kernels run in the emulator in both runs: the same compiled code,
# the same answers. (A GPU runs them for real with --backend cuda; the stand-in run's
# test_ops, test_bfloat16 and the others take every kernel family through the launcher.)
SAME_EITHER_WAY = ["--ignore=tests/runtime/test_emulate.py",
                   "--ignore=tests/runtime/test_emulate_cache.py",
                   "--ignore=tests/elementwise/test_numerics.py",
                   "--ignore=tests/elementwise/test_standard_special_cases.py",
                   "--ignore=tests/elementwise/test_accuracy.py",
                   # and the tests marked so: test_ops' (function, dtype) pairs beyond each
                   # function once and one function per dtype signature, every staged-copy
                   # variant (one parameter list for all), the rearrange matrix beyond one
                   # unit: their kernels' parameter lists are those of kernels the rest launch
                   "-m", "not same_either_way"]
# The main session runs gpu-check's whole sequence: its steps are shares of a time budget, and
# beside the main session (both cores busy) the sample's share passes too few tests to judge;
# its launches run in gpu-check's own subprocesses, which this run's coverage does not see.
TIMED = ["--deselect=tests/tools/test_gpu_check.py::test_the_whole_sequence_runs_within_its_budget"]
LAUNCHER = "infini_cupy/runtime/cuda.py"
# The launcher's files whose every line the runs together must execute: CuPy's launch, the
# driver's (INFINI_CUPY_LAUNCH=driver, runtime/cuda_driver.py) and the compiled one's
# (INFINI_CUPY_LAUNCH=compiled, runtime/cuda_compiled.py)
LAUNCHERS = [LAUNCHER, "infini_cupy/runtime/cuda_driver.py",
             "infini_cupy/runtime/cuda_compiled.py"]
# What runs end to end with the driver launch selected: a few files, for CI's time (the
# driver's own tests, tests/runtime/test_driver_launch.py, run in the end-to-end run)
DRIVER_RUN = ["tests/runtime/test_cuda_launcher.py", "tests/runtime/test_standin_arrays.py",
              "tests/elementwise/test_ops.py"]
# What runs end to end with the compiled launch selected: the driver run's files, the hot
# path's and the fused calls', whose repeats run in hot_calls.c (its own tests,
# tests/runtime/test_compiled_launch.py, run in the end-to-end run)
COMPILED_RUN = [*DRIVER_RUN, "tests/namespace/test_hot_path.py",
                "tests/elementwise/test_fusion.py", "tests/elementwise/test_fusion_operands.py"]
# What runs on the cuda backend end to end: all of it.
END_TO_END = PARTS
# The emulated suite's launches through the launcher (``--backend cuda-standin-launches``, a
# developer's quicker mode): a sample, so that the mode keeps working.
LAUNCHES_ONLY = ["tests/strided/test_copy.py"]
# What an ``if`` tests when its body is a cuda branch: the backend's name, a CuPy array.
CUDA_TESTS = ('"cuda"', "is_cupy_array", "on_gpu", "cupy")


def cuda_branch_lines(path: Path) -> set[int]:
    """The statement lines of ``path``'s cuda branches: the body of an ``if`` whose test names
    the cuda backend or CuPy (:data:`CUDA_TESTS`) and says it is there (``backend ==
    "cuda"``, ``is_cupy_array(x)``); and after an ``if`` that says it is not (``!=``,
    ``not``) and leaves (``return``, ``raise``), the rest of its block."""
    source = path.read_text()
    lines = set()

    def statements(nodes):
        return {n.lineno for node in nodes for n in ast.walk(node) if isinstance(n, ast.stmt)}

    for block in ast.walk(ast.parse(source)):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(block, field, None)
            if not isinstance(body, list):
                continue
            for index, node in enumerate(body):
                if not isinstance(node, ast.If):
                    continue
                test = ast.get_source_segment(source, node.test)
                if not any(word in test for word in CUDA_TESTS) or " is None" in test:
                    continue
                if "!=" not in test and not isinstance(node.test, ast.UnaryOp):
                    lines |= statements(node.body)
                elif isinstance(node.body[-1], (ast.Return, ast.Raise)) and not node.orelse:
                    lines |= statements(body[index + 1:])
    return lines


# The commands that measure on a GPU (bench, gpu-check, demo): their cuda paths time CUDA
# events and load modules by hand, which gpu-check runs on a GPU; the stand-in runs their rows.
MEASURING = "infini_cupy/tools/"


def cuda_branch_files() -> list[str]:
    """The library's files with a cuda branch (:func:`cuda_branch_lines`), which the
    end-to-end run must execute line by line (all but :data:`MEASURING`)."""
    return sorted(str(path.relative_to(REPO)) for path in (REPO / "infini_cupy").rglob("*.py")
                  if cuda_branch_lines(path)
                  and not str(path.relative_to(REPO)).startswith(MEASURING))


def _run(folder: Path, branch_files: list[str]):
    """(the runs' results: end to end, launches only, end to end with the driver launch and
    with the compiled launch; the coverage report of the launchers; the end-to-end run's
    coverage as ``coverage json``). ``branch_files`` is :func:`cuda_branch_files`, read by the
    caller: this runs on the background thread, and Python 3.11's ``ast.parse`` is not safe
    beside another thread's (its AST constructor keeps one recursion count per interpreter,
    CPython gh-106905: "AST constructor recursion depth mismatch" in CI, while the main
    thread ran tests)."""
    env = dict(background.environ(), COVERAGE_FILE=str(folder / ".coverage"))
    include = ",".join(f"*/{path}" for path in (*LAUNCHERS, *branch_files))
    launchers = ",".join(f"*/{path}" for path in LAUNCHERS)
    pytest_args = ["-q", "-p", "no:cacheprovider", "-o", "addopts=-ra",
                   f"--ignore={Path(__file__).relative_to(REPO)}", *SKIPPED, *SAME_EITHER_WAY,
                   *TIMED]
    coverage = [sys.executable, "-m", "coverage"]
    end_to_end = background.run(
        [*coverage, "run", f"--include={include}", "-m", "pytest", "--backend",
         "cuda-standin", *pytest_args, *END_TO_END], cwd=REPO, env=env, timeout=3600)
    json_report = background.run([*coverage, "json", "-o", "-", f"--include={include}"],
                                 cwd=REPO, env=env, timeout=600)
    launches = background.run(
        [*coverage, "run", "--append", f"--include={launchers}", "-m", "pytest", "--backend",
         "cuda-standin-launches", *pytest_args, *LAUNCHES_ONLY], cwd=REPO, env=env,
        timeout=3600)
    driver = background.run(
        [*coverage, "run", "--append", f"--include={launchers}", "-m", "pytest", "--backend",
         "cuda-standin", *pytest_args, *DRIVER_RUN], cwd=REPO,
        env=dict(env, **{LAUNCH_VAR: "driver"}), timeout=3600)
    compiled = background.run(
        [*coverage, "run", "--append", f"--include={launchers}", "-m", "pytest", "--backend",
         "cuda-standin", *pytest_args, *COMPILED_RUN], cwd=REPO,
        env=dict(env, **{LAUNCH_VAR: "compiled"}), timeout=3600)
    report = background.run([*coverage, "report", "--show-missing", f"--include={launchers}"],
                            cwd=REPO, env=env, timeout=600)
    return (end_to_end, launches, driver, compiled), report, json_report


def _runs_here(config) -> bool:
    return (config.getoption("--backend") == "emulate"
            and importlib.util.find_spec("coverage") is not None)


def background_runs(config, items):
    """The stand-in run starts when collection ends, beside the rest of the session."""
    reads = any("standin_run" in getattr(item, "fixturenames", ()) for item in items)
    return {"standin": _standin_function()} if reads and _runs_here(config) else {}


def _standin_function():
    """:func:`_run` with the files read here, on the calling (main) thread."""
    return functools.partial(_run, branch_files=cuda_branch_files())


@pytest.fixture(scope="module")
def standin_run(pytestconfig):
    if pytestconfig.getoption("--backend") != "emulate":
        pytest.skip("the stand-in run starts from the emulated suite")
    pytest.importorskip("coverage")
    return background.result(pytestconfig, "standin", _standin_function())


RUNS = ["cuda-standin", "cuda-standin-launches", "cuda-standin with INFINI_CUPY_LAUNCH=driver",
        "cuda-standin with INFINI_CUPY_LAUNCH=compiled"]


@pytest.mark.parametrize("which", RUNS)
def test_the_suite_passes_through_the_cuda_launcher(standin_run, which):
    run = standin_run[0][RUNS.index(which)]
    assert run.returncode == 0, (f"pytest --backend {which} failed:\n{run.stdout[-6000:]}\n"
                                 f"{run.stderr[-3000:]}")
    assert " passed" in run.stdout.splitlines()[-1]


def test_every_line_of_the_library_s_cuda_branches_ran(standin_run):
    """Allocation on the device, Arrays holding CuPy arrays, host arrays refused: each line
    of those branches ran on the stand-in's arrays."""
    report = standin_run[2]
    files = json.loads(report.stdout)["files"]
    missed = {}
    for path in cuda_branch_files():
        ran = next((set(f["executed_lines"]) for name, f in files.items()
                    if name.endswith(path)), set())
        branch = cuda_branch_lines(REPO / path)
        assert branch, f"{path}: no cuda branch found"
        if branch - ran:
            missed[path] = sorted(branch - ran)
    assert not missed, f"lines of cuda branches the end-to-end run did not execute: {missed}"


def test_cuda_branches_are_the_ifs_that_test_for_cuda(tmp_path):
    source = tmp_path / "m.py"
    source.write_text('if backend == "cuda":\n    a = 1\n    if x:\n        b = 2\n'
                      'if backend != "cuda":\n    c = 3\nif not is_cupy_array(x):\n    d = 4\n'
                      'if is_cupy_array(x):\n    e = 5\nelse:\n    f = 6\n'
                      'def g(backend):\n    if backend != "cuda":\n        return 0\n'
                      '    return cupy.empty(1)\n')
    assert cuda_branch_lines(source) == {2, 3, 4, 10, 16}


@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_every_line_of_the_cuda_launcher_ran(standin_run, launcher):
    report = standin_run[1]
    rows = [line for line in report.stdout.splitlines() if launcher in line]
    assert rows, f"no coverage of {launcher}:\n{report.stdout}\n{report.stderr}"
    statements, missed = (int(v) for v in rows[0].split()[1:3])
    assert statements > 0 and missed == 0, f"lines of {launcher} not run:\n{report.stdout}"
