"""``python -m infini_cupy gpu-check``: everything a GPU can show, in one call of a given length
(``--budget`` seconds, 360 by default), the most valuable steps first, into one report.

Steps, in order (``--step`` picks some):

- ``env``: GPU(s), driver and runtime, CuPy, NVRTC, the CUDA headers, compute-sanitizer, our
  binary cache (:mod:`.gpu_environment`);
- ``smoke``: :mod:`.smoke` under ``CUDA_LAUNCH_BLOCKING=1``: one case per kernel family
  against NumPy, the packed float16 transpose from a fresh thread, bfloat16;
- ``sanitizer``: the tiled and packed smoke cases under compute-sanitizer's memcheck,
  racecheck and synccheck (shared-memory races show nowhere else); ``skipped``, with the
  tool's words, where it is absent or refuses the device;
- ``sample``: ``pytest --backend cuda`` on :data:`SAMPLE` (every kernel family, every dtype
  group, fusion, bfloat16, threads and streams), with pytest-xdist where installed;
- ``bench``: the bench's key rows (:mod:`.bench_step`), GB/s and fractions of a copy;
- ``compiled``: ``pytest --backend cuda`` with ``INFINI_CUPY_LAUNCH=compiled`` on
  :data:`COMPILED_SAMPLE` (repeated calls of Arrays, fused calls, threads and streams: what
  runs from C through libcuda);
- ``profile``: Nsight Compute on the bench cases the model misjudges most
  (:mod:`.gpu_profile`): DRAM and SM throughput, occupancy, cycles per issued instruction,
  cache hit rates per launch; ``skipped``, with the tool's words, where ncu is absent or may
  not read the GPU's counters;
- ``rest``: the rest of the suite, for whatever time remains.

A step starts only when the budget still holds its minimum (:data:`STEPS`), and runs at most
its share; a step that cannot start is ``skipped`` with the reason. The report (``--report``,
JSON) is rewritten after every step, so a call cut short still leaves what it did; each
step's entry counts the binaries it read from our disk cache and those it compiled. Without
a GPU, a driver or CuPy, one line says which and the exit status is 2, within seconds.

>>> main(["gpu-check", "--budget", "300", "--report", "out/gpu-check.json"])  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...config import CACHE_DIR_VAR, LAUNCH_VAR
from ...runtime import cuda
from ...runtime.cuda_compiled import MECHANISM as COMPILED_LAUNCH
from ...runtime.availability import cuda_unavailable
from . import nsight_profile as gpu_profile
from .environment import environment, sanitizer
from .failures import FILE_VAR as FAILURES_VAR

HELP = "on a GPU machine: environment, smoke, compute-sanitizer, a sample of the suite, the " \
       "bench's key rows, Nsight Compute on the cases the model misjudges and the rest of the " \
       "suite, within --budget seconds"
REPO = Path(__file__).resolve().parents[3]
# The GPU sample of the suite: every kernel family (flat-index, tiled, packed staged copies,
# elementwise contiguous and strided paths), every dtype group (test_ops), fusion, bfloat16,
# threads and streams (test_concurrency).
SAMPLE = ["tests/strided/test_rearrange_kernels.py", "tests/strided/test_transpose_kernels.py",
          "tests/strided/test_packed_kernels.py", "tests/strided/test_copy.py",
          "tests/strided/test_bfloat16_copies.py", "tests/elementwise/test_ops.py",
          "tests/elementwise/test_paths.py", "tests/elementwise/test_fusion.py",
          "tests/elementwise/test_bfloat16.py", "tests/runtime/test_concurrency.py"]
REST = ["tests"]  # less the sample
# The compiled launch mechanism's sample (INFINI_CUPY_LAUNCH=compiled): repeated calls of Arrays
# (scalars, out=, copies), fused calls (into out= too), threads and streams, each repeat
# launched from C.
COMPILED_SAMPLE = ["tests/namespace/test_hot_path.py", "tests/elementwise/test_fusion.py",
                   "tests/elementwise/test_fusion_operands.py",
                   "tests/runtime/test_concurrency.py"]
# What warmup records to warm the cache with (beside the smoke and the bench): both samples.
WARMED_TESTS = list(dict.fromkeys([*SAMPLE, *COMPILED_SAMPLE]))
SANITIZER_TOOLS = ("memcheck", "racecheck", "synccheck")
SANITIZER_CASES = ["copy .T float32", "float16 transpose, tile"]  # tiled and packed smoke cases
PYTHON = [sys.executable]  # how steps start Python (the tests run them against a stand-in)


@dataclass(frozen=True)
class Step:
    run: Callable
    minimum: int  # seconds the step needs to say anything useful
    share: int | None  # at most this many seconds (None: whatever is left)


def _budget(text: str) -> float:
    """``--budget``: a finite number of seconds above zero (argparse's error otherwise)."""
    import argparse
    import math

    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds above 0, got {text!r}")
    return seconds


def add_arguments(parser) -> None:
    parser.add_argument("--budget", type=_budget, default=360,
                        help="seconds this call may take in all (default 360): steps that "
                             "would not fit are skipped, with the reason, in the report")
    parser.add_argument("--report", default="gpu-check.json",
                        help="the report file (JSON, rewritten after every step; on a lent "
                             "machine, a path in the folder that comes back)")
    parser.add_argument("--step", action="append", choices=tuple(STEPS), metavar="STEP",
                        help="run only these steps, in the usual order (repeatable): "
                             + ", ".join(STEPS))
    parser.add_argument("--cache-dir", help="our binary cache for the steps "
                                            "($INFINI_CUPY_CACHE_DIR): a folder, or the .tar.xz "
                                            "file of warmup --archive (unpacked first)")


def run(args) -> int:
    if args.cache_dir and not Path(args.cache_dir).exists():  # checked before the GPU: a
        print(f"gpu-check: --cache-dir {args.cache_dir}: no such file or folder")  # typo here
        return 2  # would spend the budget compiling every variant
    cause = cuda_unavailable()
    if cause is not None:
        print(f"gpu-check: {cause}")
        return 2
    return run_steps(args)


@contextlib.contextmanager
def _cache_folder(cache_dir):
    """``--cache-dir`` in force as ``INFINI_CUPY_CACHE_DIR`` while the steps run: a folder as
    it is, warmup --archive's file unpacked into a temporary folder removed afterwards.
    Yields None, or why the archive cannot be read."""
    if not cache_dir:
        yield None
        return
    import tarfile

    from ..warmup.warm_cache import unpacked

    before = os.environ.get(CACHE_DIR_VAR)
    with tempfile.TemporaryDirectory(prefix="infini_cupy-warm-") as temporary:
        folder = Path(cache_dir)
        if folder.is_file():
            try:
                folder = unpacked(folder, Path(temporary))
            except (tarfile.TarError, OSError) as e:
                yield f"--cache-dir {cache_dir}: not an archive of warmup --archive ({e})"
                return
        os.environ[CACHE_DIR_VAR] = str(folder.resolve())
        try:
            yield None
        finally:
            if before is None:
                os.environ.pop(CACHE_DIR_VAR, None)
            else:
                os.environ[CACHE_DIR_VAR] = before


def run_steps(args) -> int:
    """Every selected step within the budget, the report rewritten after each."""
    with _cache_folder(args.cache_dir) as problem:
        if problem is not None:
            print(f"gpu-check: {problem}")
            return 2
        return _run_selected(args)


def _run_selected(args) -> int:
    start = time.monotonic()
    report_path = Path(args.report)
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report = {"budget_s": args.budget, "started": _now(), "steps": {}}
    failed = 0
    names = [name for name in STEPS if not args.step or name in args.step]
    for name in names:
        step = STEPS[name]
        left = args.budget - (time.monotonic() - start)
        limit = step_limit(name, names, left)
        if limit is None:
            result = {"ok": None, "skipped": True,
                      "summary": f"skipped: {left:.0f} s of the {args.budget:.0f} s budget left, "
                                 f"the step needs at least {step.minimum} s"}
        else:
            began = time.monotonic()
            result = _counted(step.run, args, report_path, limit)
            result["seconds"] = round(time.monotonic() - began, 1)
        result["finished"] = _now()
        report["steps"][name] = result
        report["elapsed_s"] = round(time.monotonic() - start, 1)
        _write(report_path, report)
        failed += result.get("ok") is False
        status = "skipped" if result.get("skipped") else "ok" if result.get("ok") else "FAILED"
        print(f"{name}: {status} {result.get('summary', '')}", flush=True)
    print(f"report: {report_path}")
    return 1 if failed else 0


def step_limit(name: str, names: list, left: float) -> int | None:
    """Seconds step ``name`` may run with ``left`` of the budget, or None when it cannot
    start (less than its minimum left). A step before ``bench`` leaves the minimums of the
    chosen steps after it up to ``bench``, and runs at least its own minimum: with the
    default budget every step up to ``bench`` starts, whatever the ones before it take."""
    step = STEPS[name]
    if left < step.minimum:
        return None
    kept = 0
    if ALWAYS_STARTS in names and names.index(name) < names.index(ALWAYS_STARTS):
        later = names[names.index(name) + 1:names.index(ALWAYS_STARTS) + 1]
        kept = sum(STEPS[n].minimum + 2 for n in later)  # (2: each step's own slack)
    limit = left - 2 - kept if step.share is None else min(step.share, left - 2 - kept)
    return max(1, int(min(left - 2, max(step.minimum, limit))))


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _write(path: Path, report: dict) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(report, indent=1))
    os.replace(temporary, path)


def _counted(function, args, report_path: Path, limit: int) -> dict:
    """Run a step with the processes it starts counting our disk-cache hits and compiles."""
    with tempfile.NamedTemporaryFile("r", suffix=".counts") as counts:
        os.environ[cuda.COUNTS_VAR] = counts.name
        before = dict(cuda.counts)
        try:
            result = function(args, report_path, limit)
        finally:
            del os.environ[cuda.COUNTS_VAR]
        totals = {key: cuda.counts[key] - before[key] for key in before}
        for line in Path(counts.name).read_text().splitlines():
            for key, value in json.loads(line).items():
                totals[key] = totals.get(key, 0) + value
    result["kernel_cache"] = totals
    return result


def run_command(command, limit: int, log: Path | None = None, env=None) -> dict:
    """A subprocess (and its children) for at most ``limit`` seconds: exit status, the tail
    of its output; all of it in ``log`` when given."""
    with tempfile.TemporaryFile("w+") as out:
        process = subprocess.Popen(command, cwd=REPO, env=dict(os.environ, **(env or {})),
                                   stdout=out, stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
        try:
            code = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # pytest-xdist workers too
            process.wait()
            code = "timeout"
        out.seek(0)
        text = out.read()
    if log is not None:
        log.write_text(text)
    return {"command": " ".join(map(str, command)), "exit": code, "ok": code == 0,
            "timed_out": code == "timeout", "output_tail": text[-6000:]}


def _env(args, report_path, limit) -> dict:
    env = environment()
    ok = isinstance(env["gpus"], list) and bool(env["gpus"])
    names = ", ".join(g["name"] for g in env["gpus"]) if ok else env["gpus"]
    return {"ok": ok, "summary": names, "environment": env}


SMOKE = ["-m", "infini_cupy.tools.gpu_check.smoke"]


def _records(output: str, start: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith(start)]


def _smoke(args, report_path, limit) -> dict:
    result = run_command([*PYTHON, *SMOKE], limit, env={"CUDA_LAUNCH_BLOCKING": "1"})
    result["cases"] = _records(result["output_tail"], '{"case"')
    passed = sum(r["ok"] is True for r in result["cases"])
    not_run = [r for r in result["cases"] if r["ok"] is None]
    ran = len(result["cases"]) - len(not_run)
    result["summary"] = f"{passed} of {ran} cases match NumPy" + "".join(
        f"; not run: {r['case']} ({r['not_run']})" for r in not_run)
    return result


def _sanitizer(args, report_path, limit) -> dict:
    tool = sanitizer()
    if tool is None:
        return {"ok": True, "skipped": True, "summary": "compute-sanitizer not found"}
    runs, share = {}, max(1, limit // len(SANITIZER_TOOLS))
    for name in SANITIZER_TOOLS:
        result = run_command([tool, "--tool", name, "--error-exitcode", "3", *PYTHON, *SMOKE,
                              *SANITIZER_CASES], share, env={"CUDA_LAUNCH_BLOCKING": "1"})
        refused = [line for line in result["output_tail"].splitlines()
                   if "not supported" in line.lower()]
        # memcheck and synccheck end with "ERROR SUMMARY", racecheck with "RACECHECK SUMMARY"
        errors = [line for line in result["output_tail"].splitlines()
                  if "ERROR SUMMARY" in line or "RACECHECK SUMMARY" in line]
        if refused:
            result.update(ok=True, skipped=True, summary=refused[0].strip())
        else:
            result["summary"] = errors[-1].strip() if errors else f"exit {result['exit']}"
        runs[name] = result
    ran = {k: r for k, r in runs.items() if not r.get("skipped")}
    summary = "; ".join(f"{k}: {'skipped' if r.get('skipped') else ''} {r['summary']}".strip()
                        for k, r in runs.items())
    return {"ok": all(r["ok"] for r in ran.values()), "skipped": not ran, "summary": summary,
            "tools": runs}


# One line per test of ``pytest -v``: "[gw0] [ 10%] PASSED tests/..." with pytest-xdist,
# "tests/...::test_x PASSED [ 10%]" without (the short summary's "FAILED tests/..." is not one).
_OUTCOME = re.compile(r"^(?:\[gw\d+\] \[\s*\d+%\] (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b"
                      r"|\S+::.*? (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b)", re.M)


def _pytest(paths, limit, log: Path, env=None) -> dict:
    """``pytest --backend cuda`` on ``paths`` (``env``: variables set for it), with
    pytest-xdist (where installed) one worker per CPU core but two, at most 14 (each holds a
    CUDA context); each failure's traceback written as it happens beside the log
    (:mod:`.gpu_failures`)."""
    try:
        import xdist  # noqa: F401

        workers = ["-n", str(max(1, min(14, (os.cpu_count() or 4) - 2)))]
    except ImportError:
        workers = []
    failures = log.with_suffix(".failures.log")
    failures.unlink(missing_ok=True)
    result = run_command([*PYTHON, "-m", "pytest", "--backend", "cuda", "-v", "-p",
                          "no:cacheprovider", "-p", "infini_cupy.tools.gpu_check.failures", "-o",
                          "addopts=-rfE", *workers, *paths], limit, log,
                         env={**(env or {}), FAILURES_VAR: str(failures.resolve())})
    outcomes = [a or b for a, b in _OUTCOME.findall(log.read_text())]
    result["outcomes"] = {k.lower(): outcomes.count(k) for k in sorted(set(outcomes))}
    result["log"] = str(log)
    if failures.exists():
        result["failures_log"] = str(failures)
    counted = ", ".join(f"{n} {k}" for k, n in result["outcomes"].items()) or "no test ran"
    result["summary"] = counted + (" (stopped at the step's time limit)"
                                   if result["timed_out"] else "")
    if result["timed_out"]:  # what ran is the result; the rest was out of time
        result["ok"] = not ({"failed", "error"} & set(result["outcomes"]))
    return result


def _sample(args, report_path, limit) -> dict:
    return _pytest(SAMPLE, limit, report_path.with_suffix(".sample.log"))


def _bench(args, report_path, limit) -> dict:
    rows_path = report_path.with_suffix(".bench.json")
    result = run_command([*PYTHON, "-m", "infini_cupy.tools.gpu_check.bench_step", str(rows_path)], limit)
    result["rows"] = json.loads(rows_path.read_text()) if rows_path.exists() else []
    result["summary"] = "; ".join(
        f"{r['case']} {r.get('fraction', 'error')}" for r in result["rows"][1:4]) or "no rows"
    return result


def _compiled(args, report_path, limit) -> dict:
    return _pytest(COMPILED_SAMPLE, limit, report_path.with_suffix(".compiled.log"),
                   {LAUNCH_VAR: COMPILED_LAUNCH})


def _profile(args, report_path, limit) -> dict:
    ncu = gpu_profile.ncu_path()
    if ncu is None:
        return {"ok": True, "skipped": True, "summary": "Nsight Compute (ncu) not found"}
    log = report_path.with_suffix(".profile.csv")
    result = run_command(gpu_profile.command(ncu, PYTHON), limit, log)
    text = log.read_text()
    launches = gpu_profile.parse(text)
    refused = [line.strip() for line in text.splitlines()
               if "ERR_NVGPUCTRPERM" in line or "not supported" in line.lower()]
    if refused and not launches:  # no access to the counters, say, in a VM
        return {**result, "ok": True, "skipped": True, "summary": refused[0]}
    result["cases"] = gpu_profile.assign(_records(text, gpu_profile.CASE_LINE), launches)
    result["log"] = str(log)
    result["summary"] = gpu_profile.summary(result["cases"])
    return result


def _rest(args, report_path, limit) -> dict:
    ignored = [f"--ignore={path}" for path in SAMPLE]
    return _pytest([*REST, *ignored], limit, report_path.with_suffix(".rest.log"))


STEPS = {"env": Step(_env, 2, 30), "smoke": Step(_smoke, 15, 90),
         "sanitizer": Step(_sanitizer, 30, 150), "sample": Step(_sample, 45, 180),
         "bench": Step(_bench, 20, 90), "compiled": Step(_compiled, 20, 60),
         "profile": Step(_profile, 30, 120),
         "rest": Step(_rest, 30, None)}
ALWAYS_STARTS = "bench"  # with the default budget, the last step sure to start
