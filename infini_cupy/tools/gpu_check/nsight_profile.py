"""Nsight Compute's view of the kernels the model misjudges most: ``gpu-check``'s ``profile``
step runs this module under ``ncu`` (one call of each named bench case; ncu profiles our
kernels only) and reads ncu's CSV back into a few figures per launch, each with the case that
made it.

The figures (``ncu --page details``, sections :data:`SECTIONS`): duration (µs), DRAM and
memory throughput (% of peak), SM throughput (%), achieved occupancy (%), warp cycles per
issued instruction, L1 and L2 hit rates (%). They say which limit a kernel meets on the GPU
(DRAM saturated, or neither DRAM nor issue: latency, barriers) where the model
(:mod:`infini_cupy.perf.limits`) predicted another.

``python -m infini_cupy.tools.gpu_check.nsight_profile CASE ...`` is the profiled program: it prints one
JSON line per case, ``{"profile_case": name, "kernels": [...]}``, the launches in order.
"""

from __future__ import annotations

import csv
import glob
import json
import shutil
import sys

# Where the model and the H100 part most (tests/tools/h100_measured.json), and a control.
CASES = ("heads split fp16", "ttc 5,4,3,2,1,0 balanced", "ttc 5,4,3,2,1,0 long first",
         "transpose odd int8", "NHWC->NCHW RGB int8", "transpose odd fp16", "transpose int8",
         "transpose fp32")
SECTIONS = ("SpeedOfLight", "Occupancy", "WarpStateStats", "MemoryWorkloadAnalysis")
KERNELS = "regex:tiled_copy|packed_copy|rearrange|ew_"  # ours: not CuPy's operand fills
METRICS = {"Duration": "duration_us", "DRAM Throughput": "dram_pct",
           "Memory Throughput": "memory_pct", "Compute (SM) Throughput": "sm_pct",
           "Achieved Occupancy": "occupancy_pct",
           "Warp Cycles Per Issued Instruction": "cycles_per_issue",
           "L1/TEX Hit Rate": "l1_hit_pct", "L2 Hit Rate": "l2_hit_pct"}
_TO_US = {"nsecond": 1e-3, "usecond": 1.0, "msecond": 1e3, "second": 1e6,  # ncu 2022-2025
          "ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
CASE_LINE = '{"profile_case"'


def ncu_path() -> str | None:
    """Nsight Compute's command line: on the PATH, or where the CUDA toolkit puts it."""
    return shutil.which("ncu") or next(iter(sorted(
        glob.glob("/usr/local/cuda/bin/ncu") + glob.glob("/opt/nvidia/nsight-compute/*/ncu"))),
        None)


def command(ncu: str, python: list[str], cases=CASES) -> list[str]:
    """ncu over one call of each case, our kernels only, the CSV of its details page."""
    sections = [arg for section in SECTIONS for arg in ("--section", section)]
    return [ncu, "--csv", "--page", "details", "--clock-control", "none", "--target-processes",
            "all", "-k", KERNELS, *sections, *python, "-m", "infini_cupy.tools.gpu_check.nsight_profile",
            *cases]


def _number(value: str) -> float | None:
    try:
        return float(value.replace(",", ""))
    except ValueError:
        return None


def parse(text: str) -> list[dict]:
    """The profiled launches in order, each ``{"kernel", "block", "grid", <figures>}``, from
    ncu's ``--csv --page details`` output (the program's own lines before it are skipped)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    rows = [line for line in lines[start:] if line.startswith('"')]
    launches: dict[str, dict] = {}
    for row in csv.DictReader(rows):
        launch = launches.setdefault(row["ID"], {"kernel": row["Kernel Name"],
                                                 "block": row["Block Size"],
                                                 "grid": row["Grid Size"]})
        key = METRICS.get(row["Metric Name"])
        value = _number(row["Metric Value"])
        if key is None or value is None:
            continue
        if key.endswith("_pct") and row["Metric Unit"] != "%":
            continue  # MemoryWorkloadAnalysis's "Memory Throughput" in byte/s, beside the %
        if key == "duration_us":
            value *= _TO_US.get(row["Metric Unit"], 1.0)
        launch[key] = round(value, 2)
    return list(launches.values())


def assign(cases: list[dict], launches: list[dict]) -> list[dict]:
    """Each case with its launches' figures: ncu's launches in order against the kernels each
    case reported (a case ncu did not reach gets none)."""
    out, rest = [], iter(launches)
    for case in cases:
        out.append({"case": case["profile_case"],
                    "launches": [dict(next(rest, {}), name=name) for name in case["kernels"]]})
    return out


def summary(cases: list[dict]) -> str:
    """One phrase per case: its first launch's DRAM throughput and occupancy."""
    parts = []
    for case in cases:
        first = case["launches"][0] if case["launches"] else {}
        parts.append(f"{case['case']}: DRAM {first.get('dram_pct', '?')}%, "
                     f"occupancy {first.get('occupancy_pct', '?')}%")
    return "; ".join(parts) or "no case profiled"


def run_cases(names, alloc, shape_of, sync) -> list[dict]:
    """One call of each named bench case (operands from ``alloc(shape, dtype)`` at
    ``shape_of(case)``), checked against NumPy, with the kernels it launched."""
    from ...runtime import launch
    from ..bench import command as bench

    known = {c.name: c for suite in ("rearrange", "elementwise", "ttc")
             for c in bench.SUITES[suite]()}
    records = []
    for name in names:
        case = known[name]
        operands = case.build(alloc, shape_of(case), case.dtype)
        call, check = bench.call_and_check(case, operands)
        with launch.recording() as launches:
            call()
        sync()
        check()
        records.append({"profile_case": name, "kernels": [r.name for r in launches]})
        print(json.dumps(records[-1]), flush=True)
        del operands, call, check
    return records


def main(argv=None) -> int:
    import cupy

    from ..bench import command as bench

    def sync():
        cupy.cuda.Device().synchronize()

    run_cases(list(sys.argv[1:] if argv is None else argv) or CASES, bench.cupy_alloc,
              lambda case: case.shape, sync)
    return 0


if __name__ == "__main__":
    sys.exit(main())
