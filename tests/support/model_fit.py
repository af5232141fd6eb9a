"""``python -m tests.support.model_fit [--write]``: fit the performance model's calibrated
constants (:mod:`infini_cupy.perf.limits`: ``PHASE_LATENCIES``, ``LAUNCH_GAP_S``,
``WIDE_ROW_WORK``, ``LOAD_REQUESTS``; ``ISSUE_EFFICIENCY`` is measured, not fitted) to the H100 record
(``tests/tools/h100_measured.json``) by a grid search, each case priced as it ran and as its
run measured it (``measured_record.Measurement``: the host floor, the measured copy); print the
in-sample agreement, the agreement of each suite predicted by the constants fitted on the
other two (leave one suite out), and the H200 record's agreement with the H100's constants.
``--write`` records the held-out fits and their agreement in the H100 record
(``leave_one_suite_out``, which ``tests/tools/test_measured_records.py`` holds as a floor).

``python -m tests.support.model_fit --short``: instead, the Markdown table of every bench case
(rearrange, elementwise, TTC) that the calibrated model, with the H100 record's host floor,
predicts below :data:`SHORT_OF` of an H100 copy at DRAM's pace, as the planner plans it
today, with the term that limits it (docs/performance/model.md, "Cases the model shows
short").

Each case is traced once (``model_columns.quick_record``); the grid re-prices the traced
launches with :func:`infini_cupy.perf.limits.predict_profile` under each set of constants.
The best set agrees within AGREE on the most cases, then has the least squared error.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sys

from tests.support.measured_record import AGREE, Measurement, moved_bytes, record_path

SUITES = ("rearrange", "elementwise", "ttc")
SHORT_OF = 0.9  # the fraction of a copy below which a case is listed
GRID = {
    "PHASE_LATENCIES": (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0),
    # the GPU's idle time between two launches: the host's own time per call is the measured
    # host floor (limits.as_measured), so a gap is a microsecond or two, not the host's ten
    "LAUNCH_GAP_S": (0.0, 0.5e-6, 1e-6, 1.5e-6, 2e-6),
    # 1 (none) or within what Nsight Compute counted over the SASS reader's hot loop
    "WIDE_ROW_WORK": (1.0, 1.5, 1.65, 1.8),
    "LOAD_REQUESTS": (0, 64, 72, 80, 88, 96),  # 0: no such limit
}


@contextlib.contextmanager
def constants(values: dict):
    """The calibrated constants of :mod:`infini_cupy.perf.limits` set to ``values`` inside the
    ``with`` block."""
    from infini_cupy.perf import limits

    previous = {name: getattr(limits, name) for name in values}
    for name, value in values.items():
        setattr(limits, name, value)
    try:
        yield
    finally:
        for name, value in previous.items():
            setattr(limits, name, value)


def traced(device: str) -> list[tuple[dict, list, tuple, Measurement]]:
    """Per measured case of a record: (the case's record entry, the ``predict_profile`` calls
    pricing it as it ran, the ``combined_fraction`` call's arguments, what the record's run
    measured it against)."""
    from infini_cupy.perf import limits
    from infini_cupy.perf.devices import DEVICES
    from infini_cupy.tools.bench import command as bench
    from infini_cupy.tools.bench import model_columns

    known = {c.name: c for suite in SUITES for c in bench.SUITES[suite]()}
    record = json.loads(record_path(device).read_text())
    measurement = Measurement(record, known)
    out = []
    predict_profile, combined_fraction = limits.predict_profile, limits.combined_fraction
    for m in record["cases"]:
        calls, combined = [], []

        def spy_predict(*args, **kwargs):
            calls.append((args, kwargs))
            return predict_profile(*args, **kwargs)

        def spy_combined(*args):
            combined.append(args[1:])
            return combined_fraction(*args)

        limits.predict_profile, limits.combined_fraction = spy_predict, spy_combined
        try:
            model_columns.quick_record(known[m["case"]], DEVICES[device],
                                       ran=(m["kernel"], m["block_threads"]), calibrated=True)
        finally:
            limits.predict_profile, limits.combined_fraction = predict_profile, combined_fraction
        out.append((m, calls, combined[-1], measurement))
    return out


def priced(case) -> float:
    """The fraction a :func:`traced` case is predicted to measure under the constants in
    force."""
    from infini_cupy.perf import limits

    m, calls, (moved, credited), measurement = case
    predictions = [limits.predict_profile(*args, **kwargs) for args, kwargs in calls]
    return measurement.fraction(m, limits.combined_fraction(predictions, moved, credited))


def agreement(cases) -> tuple[int, float]:
    """(cases within AGREE, squared error) of :func:`traced` cases."""
    errors = [priced(c) - c[0]["measured_fraction"] for c in cases]
    return sum(abs(e) <= AGREE for e in errors), sum(e * e for e in errors)


def fit(cases) -> dict:
    """The grid's constants that agree on the most ``cases``, then err least."""
    best, best_score = None, None
    for values in itertools.product(*GRID.values()):
        chosen = dict(zip(GRID, values))
        with constants(chosen):
            agree, error = agreement(cases)
        if best_score is None or (agree, -error) > best_score:
            best, best_score = chosen, (agree, -error)
    return best


def short_cases(device: str = "h100") -> list[dict]:
    """Every bench case of the rearrange, elementwise and TTC suites that the calibrated model
    predicts below :data:`SHORT_OF` of a copy at DRAM's pace on ``device``, planned as the
    planner plans it today, with the host floor of that device's record (its host time per
    call: a call shorter than it runs at the host's pace): name, MB moved (read and written,
    as the bench credits it), the limits' prediction, the calibrated one and its limiter (a
    limit of :func:`~infini_cupy.perf.limits.predict`, a calibrated term, or ``host``), lowest
    first."""
    from infini_cupy.perf.devices import DEVICES
    from infini_cupy.perf.limits import as_measured
    from infini_cupy.tools.bench import command as bench
    from infini_cupy.tools.bench import model_columns

    known = {c.name: (suite, c) for suite in SUITES for c in bench.SUITES[suite]()}
    measurement = Measurement(json.loads(record_path(device).read_text()),
                              {name: c for name, (_, c) in known.items()})
    out = []
    for suite, case in known.values():
        size = moved_bytes(case)
        calibrated = model_columns.quick_record(case, DEVICES[device], calibrated=True)
        paced = size / measurement.dram_bytes_per_s
        fraction = round(as_measured(calibrated["predicted_fraction"], copy_seconds=paced,
                                     dram_copy_seconds=paced,
                                     host_seconds=measurement.host_s[suite]), 3)
        if fraction >= SHORT_OF:
            continue
        bound = model_columns.quick_record(case, DEVICES[device])["predicted_fraction"]
        out.append({"case": case.name, "mb": round(size / 1e6), "limits": bound,
                    "calibrated": fraction,
                    "limiter": ("host" if fraction < calibrated["predicted_fraction"]
                                else calibrated["limiter"])})
    return sorted(out, key=lambda r: (r["calibrated"], r["case"]))


def short_table(rows) -> str:
    """:func:`short_cases` as a Markdown table."""
    lines = ["| case | MB moved | limits alone | calibrated | limited by |",
             "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['case']} | {r['mb']} | {r['limits']:.2f} | {r['calibrated']:.2f} | "
              f"{r['limiter']} |" for r in rows]
    return "\n".join(lines)


def main(argv) -> int:
    if "--short" in argv:
        print(short_table(short_cases()))
        return 0
    h100 = traced("h100")
    chosen = fit(h100)
    with constants(chosen):
        print(f"fitted to the H100 record: {chosen}; in-sample {agreement(h100)[0]} of "
              f"{len(h100)} within {AGREE}, " + ", ".join(
                  f"{s} {agreement([c for c in h100 if c[0]['suite'] == s])[0]}" for s in SUITES))
        h200 = traced("h200")
        print(f"the H200 record with these constants: {agreement(h200)[0]} of {len(h200)}, "
              + ", ".join(f"{s} {agreement([c for c in h200 if c[0]['suite'] == s])[0]}"
                          for s in SUITES))
    held_out = {}
    for suite in SUITES:
        others = fit([c for c in h100 if c[0]["suite"] != suite])
        with constants(others):
            agree = agreement([c for c in h100 if c[0]["suite"] == suite])[0]
        size = sum(c[0]["suite"] == suite for c in h100)
        print(f"{suite} held out: {agree} of {size} with {others}")
        held_out[suite] = {"constants": others, "agree_at_least": agree}
    if "--write" in argv:
        path = record_path("h100")
        record = json.loads(path.read_text())
        cases = record.pop("cases")
        record["leave_one_suite_out"] = held_out
        record["cases"] = cases
        path.write_text(json.dumps(record, indent=1) + "\n")
        print(f"{path}: leave_one_suite_out written")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
