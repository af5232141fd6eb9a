"""``python -m tests.support.measured_record DEVICE BENCH.json [MACHINE [DATE]]
[--host-us-from F]``: rewrite ``tests/tools/DEVICE_measured.json`` (DEVICE: ``h100``,
``h200``, a key of :data:`infini_cupy.perf.devices.DEVICES`) from a GPU run of ``python -m infini_cupy bench
--suite rearrange --suite elementwise --suite ttc --backend cuda --no-trace --no-compile --json
BENCH.json``. It writes today's agreement count of the model priced for that device (what
``tests/tools/test_measured_records.py`` ratchets), each case priced as it ran and as that run
measured it (:class:`Measurement`), and lists the cases the model predicts too high or too
low for a reason to be written in. ``--host-us-from gpu-check.bench.json``: the host's
microseconds per call of a cached ``rearrange_`` and of an ``add`` on the run's machine, from
gpu-check's launch costs (or ``--host-us R,E``, the two figures); without either, the
previous record's. The held-out fits (``leave_one_suite_out``) are kept from
the previous record.

Broadcast copies are left out: their source is re-read from cache, which the model does not
count (they measure above a copy).
"""

from __future__ import annotations

import datetime
import json
import sys
from pathlib import Path

RECORDS = Path(__file__).resolve().parents[1] / "tools"
AGREE = 0.1  # |predicted - measured|, fractions of a device-to-device copy
# A copy moving this many bytes or more runs at DRAM's pace: five times the 50 MB L2, and
# hundreds of microseconds against a few of launch (the record's TTC cases and the largest
# transpose).
DRAM_PACE_BYTES = 256 << 20


def record_path(device: str) -> Path:
    return RECORDS / f"{device}_measured.json"


def cases_of(bench_records) -> list[dict]:
    """The recorded fields of each measured case (single-kernel block sizes only)."""
    out = []
    for r in bench_records:
        if "measured_fraction" not in r or (r["suite"] == "rearrange" and "broadcast" in r["case"]):
            continue
        threads = r["block_threads"][0] if len(r["block_threads"]) == 1 else None
        out.append({"case": r["case"], "suite": r["suite"], "kernel": r["kernel"],
                    "block_threads": threads, "measured_fraction": r["measured_fraction"],
                    "gbps": r["gbps"], "copy_gbps": r["copy_gbps"]})
    return out


def moved_bytes(case) -> int:
    """Bytes a bench case's call is credited with at its full size (what its GB/s and its
    copy's are over: :func:`infini_cupy.tools.bench.gbps.moved_bytes`), from operands built
    without being filled."""
    import numpy as np

    from infini_cupy.tools import cases as bench_cases
    from infini_cupy.tools.bench.gbps import moved_bytes as credited

    with bench_cases.unfilled():
        operands = case.build(bench_cases.aligned_alloc, case.shape, case.dtype)
    with np.errstate(all="ignore"):  # unfilled operands: the output's size is what counts
        return credited(case, operands)


class Measurement:
    """What turns the model's fraction of a case into the one a record measured
    (:func:`infini_cupy.perf.limits.as_measured`): the record's host time per call of the
    case's suite (``host_us_per_call``, gpu-check's launch costs on that machine), the time
    of the copy measured beside the case, and the copy's at DRAM's pace (the median GB/s
    of the record's copies of :data:`DRAM_PACE_BYTES` or more)."""

    def __init__(self, record: dict, cases: dict):
        self.host_s = {suite: us * 1e-6 for suite, us in record["host_us_per_call"].items()}
        self.moved = {m["case"]: moved_bytes(cases[m["case"]]) for m in record["cases"]}
        paced = sorted(m["copy_gbps"] for m in record["cases"]
                       if self.moved[m["case"]] >= DRAM_PACE_BYTES)
        self.dram_bytes_per_s = paced[len(paced) // 2] * 1e9

    def fraction(self, m: dict, predicted: float) -> float:
        """The fraction record case ``m`` is predicted to measure, the model's ``predicted``
        fraction of a copy at DRAM's pace."""
        from infini_cupy.perf.limits import as_measured

        moved = self.moved[m["case"]]
        return round(as_measured(predicted, copy_seconds=moved / (m["copy_gbps"] * 1e9),
                                 dram_copy_seconds=moved / self.dram_bytes_per_s,
                                 host_seconds=self.host_s[m["suite"]]), 3)


def host_us_from_bench_step(rows, mechanism: str | None = None) -> dict:
    """The host's microseconds per call by suite from gpu-check's bench rows
    (``gpu-check.bench.json``, ``launch_costs.mechanism_rows``: ours with ``mechanism``, by
    default the launch mechanism in force, ``INFINI_CUPY_LAUNCH``): the cached ``rearrange_``
    of CuPy arrays for the rearrange and TTC suites, the ``add`` of Arrays for the elementwise
    one (``launch_costs.COPY_CALL``, ``ADD_CALL``)."""
    from infini_cupy import config
    from infini_cupy.tools.gpu_check.launch_costs import ADD_CALL, COPY_CALL

    mechanism = mechanism or config.launch_mechanism()
    found = {}
    for row in rows:
        call = row.get("case", "").removeprefix("host us per call: ")
        us = row.get("us_per_call", {}).get(mechanism)
        if call in (ADD_CALL, COPY_CALL) and us:
            found[call] = us
    missing = {ADD_CALL, COPY_CALL} - set(found)
    if missing:
        raise SystemExit(f"no host us per call of {sorted(missing)} with the {mechanism} launch "
                         "in the gpu-check bench rows")
    return {"rearrange": found[COPY_CALL], "elementwise": found[ADD_CALL],
            "ttc": found[COPY_CALL]}


def host_us_per_call(argv, previous: dict) -> dict:
    """The record's host time per call by suite: ``--host-us-from gpu-check.bench.json`` (the
    run's launch costs, :func:`host_us_from_bench_step`), ``--host-us REARRANGE,ELEMENTWISE``
    (microseconds), else the previous record's."""
    if "--host-us-from" in argv:
        rows = json.loads(Path(argv[argv.index("--host-us-from") + 1]).read_text())
        return host_us_from_bench_step(rows)
    if "--host-us" in argv:
        rearrange, elementwise = (float(x) for x in argv[argv.index("--host-us") + 1].split(","))
        return {"rearrange": rearrange, "elementwise": elementwise, "ttc": rearrange}
    if "host_us_per_call" not in previous:
        raise SystemExit("no host time per call: pass --host-us-from gpu-check.bench.json or "
                         "--host-us REARRANGE,ELEMENTWISE (microseconds)")
    return previous["host_us_per_call"]


def main(argv) -> int:
    from infini_cupy.perf.devices import DEVICES
    from infini_cupy.runtime.nvrtc import nvrtc_version
    from infini_cupy.tools.bench import command as bench
    from infini_cupy.tools.bench import model_columns as bench_model

    record_file = record_path(argv[0])
    previous = json.loads(record_file.read_text()) if record_file.exists() else {}
    host = host_us_per_call(argv, previous)
    for flag in ("--host-us-from", "--host-us"):
        if flag in argv:
            del argv[argv.index(flag):argv.index(flag) + 2]
    device, bench_path, machine = argv[0], argv[1], (argv[2] if len(argv) > 2 else "")
    date = argv[3] if len(argv) > 3 else datetime.date.today().isoformat()  # of the run
    cases = cases_of(json.loads(Path(bench_path).read_text()))
    known = {c.name: c for suite in ("rearrange", "elementwise", "ttc")
             for c in bench.SUITES[suite]()}
    measurement = Measurement({"host_us_per_call": host, "cases": cases}, known)
    agree, off = 0, {"above_expected": {}, "below_expected": {}}
    for m in cases:  # priced as it ran: its kernel and block size
        predicted = measurement.fraction(m, bench_model.quick_record(
            known[m["case"]], DEVICES[device], ran=(m["kernel"], m["block_threads"]),
            calibrated=True)["predicted_fraction"])
        agree += abs(predicted - m["measured_fraction"]) <= AGREE
        side = ("below_expected" if m["measured_fraction"] - predicted > AGREE else
                "above_expected" if predicted - m["measured_fraction"] > AGREE else None)
        if side:
            off[side][m["case"]] = previous.get(side, {}).get(
                m["case"], f"TO EXPLAIN: predicted {predicted}, measured {m['measured_fraction']}")
    record = {"about": previous.get("about", ""), "machine": machine or previous.get("machine"),
              "nvrtc": ".".join(map(str, nvrtc_version())),
              "date": date, "host_us_per_call": host, "agree_at_least": agree,
              "replanned_at_most": 0, "replanned": {}, **off,
              **({"leave_one_suite_out": previous["leave_one_suite_out"]}
                 if "leave_one_suite_out" in previous else {}), "cases": cases}
    record_file.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{record_file}: {len(cases)} cases, {agree} within {AGREE} of the model, "
          f"{len(off['above_expected'])} predicted too high, {len(off['below_expected'])} too low")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
