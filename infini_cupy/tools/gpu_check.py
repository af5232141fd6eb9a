"""``python -m infini_cupy gpu-check``: everything a GPU can show, on a machine with no
network, in steps that each fit a 10-minute call, all into one report file (JSON, merged
across calls, so the steps may run in separate commands).

Steps (``--step``, repeatable; default all, in this order):

- ``env``: GPU(s), driver and runtime versions, CuPy, NVRTC (version and library), the CUDA
  headers CuPy compiles its own kernels with, our binary cache;
- ``smoke``: :mod:`.gpu_smoke` with ``CUDA_LAUNCH_BLOCKING=1``, one case per kernel family;
- ``sanitizer``: the smoke again under ``compute-sanitizer --tool memcheck`` (when found);
- ``suite:PART``: ``pytest --backend cuda`` on one part of the suite (see :data:`SUITE_PARTS`;
  ``suite`` alone runs them all), each with its own time limit;
- ``bench``: ``bench --backend cuda`` (GB/s against a device-to-device copy, CuPy and torch).

>>> main(["gpu-check", "--step", "env", "--report", "gpu-check.json"])  # doctest: +SKIP
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

HELP = "on a GPU machine: environment, smoke, compute-sanitizer, the suite on cuda, the bench"
REPO = Path(__file__).resolve().parents[2]
# Parts of the suite, each well under 9 minutes on an H100 machine; "rest" is the others.
SUITE_PARTS = {
    "strided": ["tests/strided"],
    "elementwise": ["tests/elementwise"],
    "namespace": ["tests/namespace"],
    "rest": ["tests", "--ignore=tests/strided", "--ignore=tests/elementwise",
             "--ignore=tests/namespace"],
}
STEPS = ("env", "smoke", "sanitizer", *(f"suite:{p}" for p in SUITE_PARTS), "bench")


def add_arguments(parser) -> None:
    parser.add_argument("--step", action="append", choices=(*STEPS, "suite"),
                        help="run only these steps (repeatable; default: all)")
    parser.add_argument("--report", default="gpu-check.json",
                        help="the report file: JSON, merged with what earlier calls wrote")
    parser.add_argument("--timeout", type=int, default=520,
                        help="seconds each subprocess step may take (default 520)")
    parser.add_argument("--bench-args", default="--suite rearrange --suite elementwise "
                        "--no-compile", help="arguments of the bench step")


def run(args) -> int:
    steps = []
    for step in args.step or STEPS:
        steps += [f"suite:{p}" for p in SUITE_PARTS] if step == "suite" else [step]
    report_path = Path(args.report)
    report = json.loads(report_path.read_text()) if report_path.exists() else {}
    failed = 0
    for step in steps:
        result = STEP_FUNCTIONS[step.split(":")[0]](step, args)
        result["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        report[step] = result
        report_path.write_text(json.dumps(report, indent=1))
        failed += not result.get("ok", True)
        print(f"{step}: {'ok' if result.get('ok', True) else 'FAILED'} {result.get('summary', '')}",
              flush=True)
    print(f"report: {report_path}")
    return 1 if failed else 0


def _probe(what):
    """``what()``, or the error it raised as text (an environment report never stops)."""
    try:
        return what()
    except Exception as e:
        return f"unavailable: {type(e).__name__}: {e}"


def environment() -> dict:
    """What this machine offers the cuda backend (each item, or why it is unavailable)."""
    import numpy

    from .. import config

    def gpus():
        import cupy

        runtime = cupy.cuda.runtime
        return [{"name": runtime.getDeviceProperties(i)["name"].decode(),
                 "compute_capability": cupy.cuda.Device(i).compute_capability,
                 "memory_gib": round(runtime.getDeviceProperties(i)["totalGlobalMem"] / 2**30, 1)}
                for i in range(runtime.getDeviceCount())]

    def cupy_version():
        import cupy

        return cupy.__version__

    def cuda_versions():
        import cupy

        return {"driver": cupy.cuda.runtime.driverGetVersion(),
                "runtime": cupy.cuda.runtime.runtimeGetVersion()}

    def nvrtc():
        from ..runtime.nvrtc import nvrtc_version

        from cuda.pathfinder import load_nvidia_dynamic_lib

        return {"version": ".".join(map(str, nvrtc_version())),
                "library": load_nvidia_dynamic_lib("nvrtc").abs_path}

    def headers():
        from cuda.pathfinder import find_nvidia_header_directory

        return find_nvidia_header_directory("cudart") or "not found: pip install nvidia-cuda-runtime"

    return {"python": platform.python_version(), "numpy": numpy.__version__,
            "cupy": _probe(cupy_version), "gpus": _probe(gpus), "cuda": _probe(cuda_versions),
            "nvrtc": _probe(nvrtc), "cuda_headers": _probe(headers),
            "compute_sanitizer": _sanitizer() or "not found",
            "cache_dir": str(config.cache_dir())}


def _env_step(step, args) -> dict:
    env = environment()
    ok = isinstance(env["gpus"], list) and bool(env["gpus"])
    names = ", ".join(g["name"] for g in env["gpus"]) if ok else env["gpus"]
    return {"ok": ok, "summary": names, "environment": env}


def _sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    for candidate in (found, "/usr/local/cuda/bin/compute-sanitizer"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _run(command, timeout: int, env=None) -> dict:
    """A subprocess step: exit code, seconds, the tail of its output."""
    start = datetime.datetime.now()
    try:
        done = subprocess.run(command, cwd=REPO, env=dict(os.environ, **(env or {})),
                              capture_output=True, text=True, timeout=timeout)
        code, out = done.returncode, done.stdout + done.stderr
    except subprocess.TimeoutExpired as e:
        code = "timeout"
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
    seconds = (datetime.datetime.now() - start).total_seconds()
    return {"command": " ".join(command), "exit": code, "seconds": round(seconds, 1),
            "ok": code == 0, "output_tail": out[-6000:]}


SMOKE = [sys.executable, "-m", "infini_cupy.tools.gpu_smoke"]


def _smoke_records(output: str) -> list[dict]:
    records = []
    for line in output.splitlines():
        if line.startswith('{"case"'):
            records.append(json.loads(line))
    return records


def _smoke_step(step, args) -> dict:
    result = _run(SMOKE, args.timeout, {"CUDA_LAUNCH_BLOCKING": "1"})
    result["cases"] = _smoke_records(result["output_tail"])
    passed = sum(r["ok"] for r in result["cases"])
    result["summary"] = f"{passed} of {len(result['cases'])} cases match NumPy"
    return result


def _sanitizer_step(step, args) -> dict:
    tool = _sanitizer()
    if tool is None:
        return {"ok": True, "skipped": True, "summary": "compute-sanitizer not found"}
    result = _run([tool, "--tool", "memcheck", "--error-exitcode", "3", *SMOKE], args.timeout,
                  {"CUDA_LAUNCH_BLOCKING": "1"})
    errors = [line for line in result["output_tail"].splitlines() if "ERROR SUMMARY" in line]
    result["summary"] = errors[-1] if errors else f"exit {result['exit']}"
    return result


def _suite_step(step, args) -> dict:
    part = step.split(":", 1)[1]
    result = _run([sys.executable, "-m", "pytest", "--backend", "cuda", "-q", "-p",
                   "no:cacheprovider", "-o", "addopts=-ra", *SUITE_PARTS[part]], args.timeout)
    lines = [line for line in result["output_tail"].splitlines() if " in " in line and
             ("passed" in line or "failed" in line or "error" in line)]
    result["summary"] = lines[-1].strip("= ") if lines else f"exit {result['exit']}"
    return result


def _bench_step(step, args) -> dict:
    json_path = Path(args.report).with_suffix(".bench.json").resolve()
    result = _run([sys.executable, "-m", "infini_cupy", "bench", "--backend", "cuda",
                   "--json", str(json_path), *args.bench_args.split()], args.timeout)
    if json_path.exists():
        result["records"] = json.loads(json_path.read_text())
    result["summary"] = f"{len(result.get('records', []))} cases"
    return result


STEP_FUNCTIONS = {"env": _env_step, "smoke": _smoke_step, "sanitizer": _sanitizer_step,
                  "suite": _suite_step, "bench": _bench_step}
