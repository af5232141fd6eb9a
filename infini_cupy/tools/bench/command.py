"""``python -m infini_cupy bench``: coalescing, host overhead and compile latency of our kernels
on realistic layouts (and GB/s against copies, CuPy and torch on a GPU).

For every case (see :mod:`infini_cupy.tools.cases`):

- **coalescing**: the case runs once in emulation under the emulator's tracing, and
  :mod:`infini_cupy.readers.coalescing` counts 32-byte sectors per warp access: ``read_efficiency`` and
  ``write_efficiency`` (bytes asked for / 32 x sectors touched), and per block;
- **model** (:mod:`.model_columns`): shared-memory bank conflicts (``bank_conflicts``: wavefronts
  over the conflict-free ideal), the launched kernels' SASS figures (``sass``), and the
  predicted fraction of an H100 device-to-device copy (``predicted_fraction``, its
  ``limiter`` and each ``*_limit``) at the case's full shape (:mod:`infini_cupy.perf.limits`);
- **host_us**: median microseconds per call on a cached plan with the launch replaced by a
  no-op and, for elementwise calls, the output allocation too: what Python does before a launch;
- **compile**: for each kernel variant the case launches, a cold NVRTC compile of that one
  name expression (``nvrtc_ms``) and a warm load from the on-disk cache (``warm_ms``: CuPy's
  kernel cache on a GPU, the emulator's library cache without one);
- **Array rows** (``--suite array``, in ``all``): the ``infini_cupy.Array`` wrapper's cost
  per call over the bare implementation on native arrays (:mod:`.bench_array`);
- on a GPU, ``gbps`` (bytes read and written per second), ``copy_gbps`` (a device-to-device
  copy of as many bytes), ``measured_fraction`` (their ratio, beside the model's prediction),
  ``cupy_gbps`` (``cupy.ascontiguousarray`` / the CuPy ufunc) and ``torch_gbps`` when torch
  is installed.

Emulated cases run at their ``emulated_shape`` (scaled so the suites take minutes on 2 cores);
``--case`` layouts run as given.

>>> main(["bench", "--case", "64,64:1,64:C:float32", "--backend", "emulate"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time

import numpy as np

from ... import config
from ...arrays import (
    gpu_available,
    is_cupy_array,
    outputs_from,
    require_cupy,
)
from ...runtime.emulate import launcher as emulator
from ...runtime import launch
from ...runtime.launch import launches_skipped
from ...runtime import cuda
from ...runtime.nvrtc import compile_ptx
from ...strided.plan_cache import PLANNERS, plan_for, planning_rule
from ...readers import coalescing
from ...readers.sampled_launches import launch_plan
from .. import cases as bench_cases
from . import array_suite as bench_array
from . import fusion_suite as bench_fusion
from . import model_columns as bench_model
from .permutation_cases import random_cases, ttc_cases

HELP = "measure coalescing, host overhead and compile latency (and GB/s on a GPU) on layouts"
SUITES = {
    "rearrange": lambda: bench_cases.REARRANGE_SUITE,
    "elementwise": lambda: bench_cases.ELEMENTWISE_SUITE,
    "ttc": ttc_cases,
    "random": random_cases,
    "signatures": lambda: bench_cases.SIGNATURE_SUITE,
}
PROFILE_MAX_ELEMENTS = 1 << 23  # beyond, only the first blocks' accesses are traced (memory)
HOST_REPEATS = 7
HOST_SECONDS = 0.02  # per repeat
HOST_RATIO_ROUNDS = 20  # interleaved rounds of a ratio row, HOST_SECONDS of calls in each
NVRTC_ARCH = "sm_90"  # without a GPU; on one, the device's
# How long each suite takes with --backend emulate on 2 CPU cores, caches warm (the emulator's
# libraries and the SASS read; cold, signatures took 18 s instead of 9). Measured 2026-12.
EPILOG = """\
quick suites, with --backend emulate on 2 CPU cores and warm caches (a first run
compiles and takes about twice as long):
  --suite array         about 5 s   the Array wrapper's cost per call
  --suite fusion        about 5 s   xp.fuse against unfused calls
  --suite signatures    about 10 s  host cost of each kind of elementwise signature
  --suite elementwise   about 25 s  elementwise layouts
  --suite rearrange     about 2 min deep-learning layouts
ttc, random and all (the default without --case) take longer. One line says when the
model predicted without SASS (nvdisasm missing): its figures then differ from the docs'.
"""


def add_arguments(parser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter  # EPILOG's columns
    parser.epilog = EPILOG
    parser.add_argument("--suite", action="append", choices=(*SUITES, "array", "fusion", "all"),
                        metavar="SUITE", help="suites to run, repeatable: rearrange (deep-learning layouts), "
                             "elementwise, ttc (the 57 TTC/HPTT/cuTT transpositions), random "
                             "(random permutations of rank 2-8), signatures (host cost of "
                             "each kind of elementwise signature), array (the Array wrapper's "
                             "cost per call), fusion (xp.fuse against unfused calls); default: all, or none when --case is given")
    parser.add_argument("--case", action="append", default=[],
                        metavar="SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE",
                        help='an ad-hoc rearrange layout, strides in elements, DST_STRIDES "C" '
                             'for C-contiguous; e.g. "2001,2001:1,2001:C:float32" (repeatable)')
    parser.add_argument("--backend", choices=("auto", "emulate", "cuda"), default="auto",
                        help="where host overhead and GB/s are measured (coalescing is always "
                             "measured in emulation); auto: cuda when a GPU is present")
    parser.add_argument("--json", metavar="PATH", help="write one JSON record per case to PATH")
    parser.add_argument("--no-compile", action="store_true", help="skip compile measurements")
    parser.add_argument("--no-trace", action="store_true",
                        help="with --backend cuda: GB/s alone, without the emulated trace "
                             "(coalescing and the model's columns) that takes most of the "
                             "time on a machine whose emulator cache is cold")
    parser.add_argument("--planner", choices=PLANNERS,
                        default="default",
                        help="for comparison: coalescing chooses plans by their sectors alone "
                             "(packed tiles wherever they coalesce better, whatever they "
                             "issue); seed rearranges with the seed-style plans only (no "
                             "staged copies)")


def run(args) -> int:
    backend = args.backend
    if backend == "auto":
        backend = "cuda" if gpu_available() else "emulate"
    try:
        cases = [bench_cases.parse_case(spec) for spec in args.case]
    except bench_cases.CaseSyntaxError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    suites = args.suite or (["all"] if not cases else [])
    for name, suite in SUITES.items():
        if name in suites or "all" in suites:
            cases += list(suite())
    if args.no_trace and backend != "cuda":
        print("bench: --no-trace measures GB/s on a GPU: it needs --backend cuda",
              file=sys.stderr)
        return 2
    compiler = _CompileTimes(backend, enabled=not args.no_compile)
    records, failures = [], 0
    if cases and not args.no_trace:
        print(_HEADER)
    with planning_rule(args.planner):
        for case in cases:
            try:
                record = (measure_gpu(case) if args.no_trace
                          else measure(case, backend, compiler))
            except Exception as e:  # a case that cannot run is reported, the others still run
                record = {"case": case.name, "suite": case.suite,
                          "error": f"{type(e).__name__}: {e}"}
                failures += 1
            record["planner"] = args.planner
            records.append(record)
            print(_row(record), flush=True)
    compiler.print_summary()
    _print_ratios(records)
    bench_model.print_summary(records)
    if "array" in suites or "all" in suites:  # the Array wrapper's cost per call
        array_records = bench_array.overhead_records(
            backend, lambda call: host_overhead_us(None, None, call))
        bench_array.print_records(array_records)
        ratio_records = bench_array.ratio_records(backend, host_ratio)
        bench_array.print_ratios(ratio_records)
        cpu_records = bench_array.cpu_records(host_ratio)
        bench_array.print_cpu(cpu_records)
        records += array_records + ratio_records + cpu_records
    if "fusion" in suites or "all" in suites:  # fused against unfused expressions
        fusion_records = bench_fusion.records(
            backend, lambda call: host_overhead_us(None, None, call))
        bench_fusion.print_records(fusion_records)
        records += fusion_records
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
        print(f"wrote {len(records)} records to {args.json}")
    return 1 if failures else 0


# ---- one case


def measure(case: bench_cases.Case, backend: str, compiler=None) -> dict:
    """Every measurement of one case, as a JSON-ready record."""
    shape = case.emulated_shape or case.shape
    operands = case.build(bench_cases.aligned_alloc, shape, case.dtype)
    call, check = call_and_check(case, operands)
    sampled = not case.elementwise and int(np.prod(shape)) > PROFILE_MAX_ELEMENTS
    with config.backend("emulate"), outputs_from(bench_cases.aligned_alloc):
        if sampled:
            launches, blocks = _profile_first_blocks(*operands)
        else:
            call()  # compiles and plans
            check()
            _, launches = coalescing.profile(call)
    reads, writes = coalescing.total(launches)
    kernels = list(dict.fromkeys((p.source, p.kernel) for p in launches))
    record = {
        "case": case.name,
        "suite": case.suite,
        "shape": list(case.shape),
        "dtype": case.dtype,
        "kernel": ", ".join(name for _, name in kernels),
        "read_efficiency": round(reads.efficiency, 4),
        "write_efficiency": round(writes.efficiency, 4),
        "read_block_efficiency": round(reads.block_efficiency, 4),
        "write_block_efficiency": round(writes.block_efficiency, 4),
        "profiled_shape": list(shape),
        "launches": len(launches),
        "backend": backend,
    }
    if sampled:
        record["profiled_blocks"] = list(blocks)  # (traced, of the launch's)
    record.update(bench_model.model_record(case, launches, shape))
    if not case.elementwise:  # what any kernel could reach on these two layouts
        y, x = operands
        for side, array, stats in (("read", x, reads), ("write", y, writes)):
            limit = coalescing.best_efficiency(array)
            record[f"{side}_limit"] = round(limit, 4)
            record[f"{side}_ratio"] = round(stats.efficiency / limit, 4)
    if backend == "cuda":
        operands = case.build(cupy_alloc, case.shape, case.dtype)
        call, check = call_and_check(case, operands)
        call()
        check()
    with config.backend(backend):
        record["host_us"] = round(host_overhead_us(case, operands, call), 3)
    if compiler is not None:
        record.update(compiler.times(kernels))
    if backend == "cuda":
        from .gbps import throughput

        record.update(throughput(case, operands, call))
        if record.get("copy_gbps"):  # what the model predicts, measured
            record["measured_fraction"] = round(record["gbps"] / record["copy_gbps"], 3)
    return record


def measure_gpu(case: bench_cases.Case) -> dict:
    """GB/s of one case on the GPU, without the emulated trace: the kernels it launched and
    :func:`.gbps.throughput`'s figures."""
    from .gbps import throughput

    operands = case.build(cupy_alloc, case.shape, case.dtype)
    call, check = call_and_check(case, operands)
    with launch.recording() as launched:
        call()
    check()
    record = {"case": case.name, "suite": case.suite, "shape": list(case.shape),
              "dtype": case.dtype, "backend": "cuda",
              "kernel": ", ".join(dict.fromkeys(r.name for r in launched)),
              "launches": len(launched),
              "block_threads": [r.block[0] * r.block[1] * r.block[2] for r in launched]}
    record.update(throughput(case, operands, call))
    record["measured_fraction"] = round(record["gbps"] / record["copy_gbps"], 3)
    return record


def _profile_first_blocks(y, x):
    """The coalescing of ``rearrange_(y, x)`` over the first blocks of its launch, enough for
    PROFILE_MAX_ELEMENTS elements: ([profile], (blocks traced, blocks in the launch))."""
    plan = plan_for(y, x).plan
    blocks = max(1, plan.grid_blocks * PROFILE_MAX_ELEMENTS // max(1, y.size))
    launch_trace, blocks = launch_plan(plan, y, x, max_blocks=blocks)
    return [coalescing.profile_launch(launch_trace)], (blocks, plan.grid_blocks)


def cupy_alloc(shape, dtype):
    """An uninitialised CuPy array: the operands of the cases measured on a GPU (here and in
    gpu-check's profile step)."""
    import cupy

    return cupy.empty(shape, dtype)


def call_and_check(case, operands):
    """(the call the case measures, a check of its result against NumPy)."""
    import infini_cupy as xp

    if not case.elementwise:
        y, x = operands
        return (lambda: xp.rearrange_(y, x)), (lambda: _assert_equal(y, x))
    op, inputs, keywords = bench_cases.call_parts(operands)
    function = getattr(xp, op)
    result = []

    def call():
        result[:] = [function(*inputs, **keywords)]

    def check():
        expected = getattr(np, op)(*(_host(a) for a in inputs))
        np.testing.assert_allclose(_host(result[0]), expected, rtol=1e-3)

    return call, check


def _host(a):
    return a.get() if is_cupy_array(a) else a


def _assert_equal(y, x):
    if not np.array_equal(_host(y), _host(x)):
        raise AssertionError("the copy differs from NumPy's")


# ---- host overhead


@contextlib.contextmanager
def _launches_skipped():
    """Launches become no-ops, and an elementwise call's output is allocated beforehand."""
    preallocated = {}

    def alloc_once(shape, dtype):
        if (shape, dtype) not in preallocated:
            xp = np if config.get_backend() != "cuda" else require_cupy()
            preallocated[shape, dtype] = xp.empty(shape, dtype)
        return preallocated[shape, dtype]

    with launches_skipped(), outputs_from(alloc_once):
        yield


def host_overhead_us(case, operands, call) -> float:
    """Median microseconds per call on a cached plan, launches skipped."""
    with _launches_skipped():
        call()
        start = time.perf_counter()
        call()
        once = max(time.perf_counter() - start, 1e-7)
        number = max(20, int(HOST_SECONDS / once))
        samples = []
        for _ in range(HOST_REPEATS):
            start = time.perf_counter()
            for _ in range(number):
                call()
            samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples) * 1e6


def host_ratio(call, reference) -> tuple[float, float]:
    """(host time of ``call`` / that of ``reference``, microseconds per ``call``), launches
    skipped: HOST_RATIO_ROUNDS rounds of the two interleaved, each a block of calls; the
    ratio of the fastest blocks (a loaded machine only adds time, to either side)."""
    with launches_skipped():
        call()
        reference()
        start = time.perf_counter()
        call()
        number = max(20, int(HOST_SECONDS / HOST_RATIO_ROUNDS
                             / max(time.perf_counter() - start, 1e-7)))
        best_call = best_reference = float("inf")
        for _ in range(HOST_RATIO_ROUNDS):
            start = time.perf_counter()
            for _ in range(number):
                reference()
            middle = time.perf_counter()
            for _ in range(number):
                call()
            end = time.perf_counter()
            best_reference = min(best_reference, middle - start)
            best_call = min(best_call, end - middle)
    return best_call / best_reference, best_call / number * 1e6


# ---- compile latency


class _CompileTimes:
    """Cold NVRTC and warm cached-load milliseconds per kernel variant, measured once each."""

    def __init__(self, backend: str, enabled: bool):
        self.backend, self.enabled = backend, enabled
        self.measured: dict[tuple[str, str], dict] = {}
        self.nvrtc_init_ms = None

    def times(self, kernels) -> dict:
        if not self.enabled:
            return {}
        rows = [self._measure(source, name) for source, name in kernels]
        return {
            "nvrtc_ms": round(max(r["nvrtc_ms"] for r in rows), 1) if rows else None,
            "warm_ms": round(max(r["warm_ms"] for r in rows), 2) if rows else None,
        }

    def _arch(self) -> str:
        return cuda.device_arch() if self.backend == "cuda" else NVRTC_ARCH

    def _measure(self, source: str, name: str) -> dict:
        key = (source, name)
        if key not in self.measured:
            if self.nvrtc_init_ms is None:  # library loading, once per process: not a variant's
                start = time.perf_counter()
                compile_ptx("transpose.cu", ["tiled_copy<4, 1, 1, 0, 0>"], self._arch())
                self.nvrtc_init_ms = (time.perf_counter() - start) * 1e3
            start = time.perf_counter()
            compile_ptx(source, [name], self._arch())
            nvrtc_ms = (time.perf_counter() - start) * 1e3
            self.measured[key] = {"nvrtc_ms": nvrtc_ms, "warm_ms": self._warm_ms(source, name)}
        return self.measured[key]

    def _warm_ms(self, source: str, name: str) -> float:
        start = time.perf_counter()
        if self.backend == "cuda":  # the binary from the cuda launcher's disk cache
            import cupy

            cuda.get_kernel(source, name)  # compiled and cached once
            start = time.perf_counter()
            about, path = cuda.module_file(source, name, cuda.device_arch())
            module = cupy.cuda.function.Module()  # not RawModule: it memoizes the path
            module.load_file(str(path))
            module.get_function(about["lowered"])
        else:  # the emulator maps the library from its disk cache
            emulator.forget_loaded()
            start = time.perf_counter()
            emulator.prepare(source, [name])
        return (time.perf_counter() - start) * 1e3

    def print_summary(self) -> None:
        if not self.measured:
            return
        cold = [m["nvrtc_ms"] for m in self.measured.values()]
        warm = [m["warm_ms"] for m in self.measured.values()]
        where = "cubin disk cache" if self.backend == "cuda" else "emulator disk cache"
        print(f"compile: {len(cold)} variants; cold NVRTC ({self._arch()}) median "
              f"{statistics.median(cold):.0f} ms, max {max(cold):.0f} ms (library load once: "
              f"{self.nvrtc_init_ms:.0f} ms); warm load ({where}) median "
              f"{statistics.median(warm):.2f} ms, max {max(warm):.2f} ms")


# ---- printing


_HEADER = (f"{'case':26s} {'kernel':28s} {'read':>5s} {'write':>5s} {'ratio':>5s} "
           f"{bench_model.HEADER} {'host us':>7s} {'nvrtc':>5s} {'GB/s':>6s}")


def _row(r: dict) -> str:
    if "error" in r:
        return f"{r['case'][:26]:26s} ERROR {r['error']}"
    if "read_efficiency" not in r:  # --no-trace: GB/s alone
        kernel = r["kernel"].replace("ic::Op", "").replace("ic::", "")
        torch = r.get("torch_gbps")
        return (f"{r['case'][:26]:26s} {kernel[:28]:28s} {r['gbps']:6.0f} GB/s "
                f"{r['measured_fraction']:5.3f} of a copy; CuPy {r['cupy_gbps']:6.0f}, torch "
                + (f"{torch:6.0f}" if torch is not None else "     -"))
    gbps = f"{r['gbps']:6.0f}" if r.get("gbps") is not None else f"{'-':>6s}"
    nvrtc = f"{r['nvrtc_ms']:5.0f}" if r.get("nvrtc_ms") is not None else f"{'-':>5s}"
    ratio = (f"{min(r['read_ratio'], r['write_ratio']):5.3f}" if "read_ratio" in r
             else f"{'-':>5s}")
    kernel = r["kernel"].replace("ic::Op", "").replace("ic::", "")  # ew_contig<Add, float, ...
    return (f"{r['case'][:26]:26s} {kernel[:28]:28s} {r['read_efficiency']:5.3f} "
            f"{r['write_efficiency']:5.3f} {ratio} {bench_model.columns(r)} "
            f"{r['host_us']:7.2f} {nvrtc} {gbps}")


def _print_ratios(records) -> None:
    """Per suite: the lowest efficiency / sector limit of reads and writes (1.0: each side
    as coalesced as its layout allows)."""
    by_suite: dict[str, list] = {}
    for r in records:
        if "read_ratio" in r:
            by_suite.setdefault(r["suite"], []).append(r)
    for suite, rows in by_suite.items():
        worst = min(rows, key=lambda r: min(r["read_ratio"], r["write_ratio"]))
        below = sum(min(r["read_ratio"], r["write_ratio"]) < 0.9 for r in rows)
        print(f"{suite}: {len(rows)} cases, {below} below 0.9 of their sector limit; lowest "
              f"{min(worst['read_ratio'], worst['write_ratio']):.3f} ({worst['case']}: reads "
              f"{worst['read_ratio']:.3f}, writes {worst['write_ratio']:.3f})")
