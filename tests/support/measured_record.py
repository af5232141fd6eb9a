"""``python -m tests.support.measured_record DEVICE BENCH.json [MACHINE [DATE]]``: rewrite
``tests/tools/DEVICE_measured.json`` (DEVICE: ``h100``, ``h200``, a key of
:data:`infini_cupy.perf.devices.DEVICES`) from a GPU run of ``python -m infini_cupy bench
--suite rearrange --suite elementwise --suite ttc --backend cuda --no-trace --no-compile --json
BENCH.json``, with today's agreement count of the model priced for that device, each case priced as it
ran (what ``tests/tools/test_measured_records.py`` ratchets), and the cases the model
predicts too high or too low listed for a reason to be written in. The held-out fits
(``leave_one_suite_out``) are kept from the previous record.

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


def main(argv) -> int:
    from infini_cupy.perf.devices import DEVICES
    from infini_cupy.runtime.nvrtc import nvrtc_version
    from infini_cupy.tools.bench import command as bench
    from infini_cupy.tools.bench import model_columns as bench_model

    device, bench_path, machine = argv[0], argv[1], (argv[2] if len(argv) > 2 else "")
    date = argv[3] if len(argv) > 3 else datetime.date.today().isoformat()  # of the run
    record_file = record_path(device)
    previous = json.loads(record_file.read_text()) if record_file.exists() else {}
    cases = cases_of(json.loads(Path(bench_path).read_text()))
    known = {c.name: c for suite in ("rearrange", "elementwise", "ttc")
             for c in bench.SUITES[suite]()}
    agree, off = 0, {"above_expected": {}, "below_expected": {}}
    for m in cases:  # priced as it ran: its kernel and block size
        predicted = bench_model.quick_record(known[m["case"]], DEVICES[device], ran=(
            m["kernel"], m["block_threads"]), calibrated=True)["predicted_fraction"]
        agree += abs(predicted - m["measured_fraction"]) <= AGREE
        side = ("below_expected" if m["measured_fraction"] - predicted > AGREE else
                "above_expected" if predicted - m["measured_fraction"] > AGREE else None)
        if side:
            off[side][m["case"]] = previous.get(side, {}).get(
                m["case"], f"TO EXPLAIN: predicted {predicted}, measured {m['measured_fraction']}")
    record = {"about": previous.get("about", ""), "machine": machine or previous.get("machine"),
              "nvrtc": ".".join(map(str, nvrtc_version())),
              "date": date, "agree_at_least": agree,
              "replanned_at_most": 0, "replanned": {}, **off,
              **({"leave_one_suite_out": previous["leave_one_suite_out"]}
                 if "leave_one_suite_out" in previous else {}), "cases": cases}
    record_file.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{record_file}: {len(cases)} cases, {agree} within {AGREE} of the model, "
          f"{len(off['above_expected'])} predicted too high, {len(off['below_expected'])} too low")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
