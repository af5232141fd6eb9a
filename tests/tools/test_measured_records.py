"""The model against each GPU's measurements (tests/tools/DEVICE_measured.json: `bench --backend
cuda --no-trace` on the rearrange, elementwise and TTC cases; docs/performance/h100.md and
h200.md), the model priced for that device (:data:`infini_cupy.perf.devices.DEVICES`).

A measurement speaks for the plan that ran: each case is priced with the kernel and block size
it ran (``model_columns.as_ran``) and as its run measured it (``measured_record.Measurement``:
the host's time per call on that machine, the copy timed beside the case), and the cases the
planner now plans otherwise are named in the record with the reason. At least the recorded number must be predicted within AGREE of
their measured fraction (a ratchet: a model change that agrees with fewer cases fails; one
that agrees with more raises the number), and where the model is off by more, above or
below, the record says why. The calibrated constants fitted on two suites must predict the
third (leave one suite out, docs/performance/model.md). A new GPU run rewrites the
record: ``python -m tests.support.measured_record DEVICE BENCH.json MACHINE DATE``.

The figures are the model's as the code of the record's NVRTC gives them; under another
NVRTC 13.x the comparisons hold within stated tolerances instead of skipping
(``tests/support/nvrtc_records.py``): each agreement count to
``other_nvrtc_floor`` of its record, and a case needs a recorded reason when it is off by
more than ``AGREE + OTHER_NVRTC_SHIFT``."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from infini_cupy.perf.devices import DEVICES
from infini_cupy.strided.plan_cache import plan_for
from infini_cupy.tools.bench import command as bench
from infini_cupy.tools.bench import model_columns as bench_model
from infini_cupy.tools import cases as bench_cases
from tests.support.measured_record import AGREE, Measurement, record_path
from tests.support.nvrtc_records import (OTHER_NVRTC_SHIFT, OTHER_NVRTC_SHORT_MARGIN,
                                         other_nvrtc_floor, recorded_here,
                                         skip_without_nvdisasm)

RECORDED = sorted(p.name.removesuffix("_measured.json")
                  for p in Path(__file__).parent.glob("*_measured.json"))
CASES = {c.name: c for suite in ("rearrange", "elementwise", "ttc")
         for c in bench.SUITES[suite]()}


def _plan(case):
    """(kernels, block threads) the planner gives the case at its full size now; of an
    elementwise case, its kernels (", "-joined) at the quarter shape CI's model runs, which
    takes the same path (large enough to read a transposed operand through a tile)."""
    if case.elementwise:
        return _elementwise_kernels(case), None
    y, x = case.build(bench_cases.layout_only, case.shape, case.dtype)
    plan = plan_for(y, x).plan
    return plan.kernel, plan.block_threads


def _elementwise_kernels(case) -> str:
    import infini_cupy as xp
    from infini_cupy import config
    from infini_cupy.arrays import outputs_from
    from infini_cupy.runtime.launch import recording

    shape = tuple(max(1, n // 4) for n in case.emulated_shape or case.shape)
    operands = case.build(bench_cases.aligned_alloc, shape, case.dtype)
    op, inputs, keywords = bench_cases.call_parts(operands)
    with config.backend("emulate"), outputs_from(bench_cases.aligned_alloc), \
            recording() as launches:
        getattr(xp, op)(*inputs, **keywords)
    return ", ".join(r.name for r in launches)


def test_every_record_is_of_a_device_in_the_table():
    assert set(RECORDED) <= set(DEVICES) and {"h100", "h200"} <= set(RECORDED)


@pytest.fixture(scope="module", params=RECORDED)
def compared(request):
    """(record, [(case, predicted, measured)], [replanned cases]) of one device's record, each
    case priced as it ran (its kernel and block size, ``model_columns.as_ran``)."""
    device = request.param
    measured = json.loads(record_path(device).read_text())
    skip_without_nvdisasm()
    rows, replanned = [], []
    for m in measured["cases"]:
        case = CASES[m["case"]]
        plan = _plan(case)
        if plan != (m["kernel"], m["block_threads"] if plan[1] is not None else None):
            replanned.append(m["case"])
        predicted = _priced_as_ran(m, device)
        rows.append((m["case"], predicted, m["measured_fraction"]))
    return measured, rows, replanned


@functools.cache
def _measurement(device) -> Measurement:
    return Measurement(json.loads(record_path(device).read_text()), CASES)


def _priced_as_ran(m, device) -> float:
    """What the model predicts record case ``m`` measured: priced as it ran, then as its run
    measured it (the host floor, the measured copy: ``measured_record.Measurement``)."""
    return _measurement(device).fraction(m, bench_model.quick_record(
        CASES[m["case"]], DEVICES[device], ran=(m["kernel"], m["block_threads"]),
        calibrated=True)["predicted_fraction"])


def test_a_record_is_priced_as_its_run_measured_it():
    # The host floor and the measured copy (limits.as_measured) with the record's own figures:
    # bytes as the bench credits them, DRAM's pace from its large copies, its host times.
    import statistics

    import numpy as np

    record = json.loads(record_path("h100").read_text())
    measurement = _measurement("h100")
    by_name = {m["case"]: m for m in record["cases"]}
    transpose = CASES["transpose fp32"]
    assert measurement.moved["transpose fp32"] == 2 * np.prod(transpose.shape) * 4
    assert measurement.moved["add contiguous fp32"] == 3 * np.prod(
        CASES["add contiguous fp32"].shape) * 4
    paced = [m["copy_gbps"] for m in record["cases"] if measurement.moved[m["case"]] >= 256 << 20]
    assert len(paced) >= 50
    assert measurement.dram_bytes_per_s == pytest.approx(statistics.median_high(paced) * 1e9)
    # A 4 MiB copy's kernel is shorter than the host's 12.5 us per call: the call runs at the
    # host's pace whatever the kernel, and that is what the GPU measured (0.395).
    small = by_name["heads split d=4 fp16"]
    copy_s = measurement.moved[small["case"]] / (small["copy_gbps"] * 1e9)
    assert measurement.fraction(small, 1.0) == measurement.fraction(small, 0.6) == pytest.approx(
        copy_s / record["host_us_per_call"]["rearrange"] / 1e-6, abs=1e-3)
    assert abs(measurement.fraction(small, 1.0) - small["measured_fraction"]) <= AGREE
    # A 512 MB copy is at DRAM's pace: the model's fraction, scaled by its copy's own pace.
    large = by_name["transpose fp32"]
    assert measurement.fraction(large, 0.9) == pytest.approx(
        0.9 * measurement.dram_bytes_per_s / (large["copy_gbps"] * 1e9), abs=1e-3)


def test_a_record_takes_its_host_times_from_gpu_check_s_launch_costs(monkeypatch):
    # measured_record --host-us-from gpu-check.bench.json: the rows launch_costs writes (its
    # timings replaced by random figures: the calls are not what is tested), read by the
    # name of the call, with the launch mechanism asked for.
    import numpy as np

    from infini_cupy.tools.gpu_check import launch_costs
    from tests.support.measured_record import host_us_from_bench_step

    figures = iter(np.random.default_rng(5).uniform(1, 30, 100).round(2))
    monkeypatch.setattr(launch_costs, "host_us_per_call", lambda *args: next(figures))
    rows = list(launch_costs.mechanism_rows(np, "emulate", lambda: None, (2, 1)))
    assert all(r["ok"] for r in rows)
    rows.append({"case": "planners: transpose odd int8", "ok": True})
    by_case = {r["case"].removeprefix("host us per call: "): r for r in rows}
    for mechanism in ("cupy", "driver", "compiled"):  # the CuPy arrays' copy, not the Array's
        add, rearrange = (by_case[call]["us_per_call"][mechanism] for call in (
            "add 48x64 fp32 Array", "rearrange_ 64x48 fp32 (cached)"))
        assert host_us_from_bench_step(rows, mechanism) == {
            "rearrange": rearrange, "elementwise": add, "ttc": rearrange}
    rows[0]["us_per_call"]["cupy"] = None  # that mechanism could not launch
    with pytest.raises(SystemExit, match="add"):
        host_us_from_bench_step(rows, "cupy")


def test_the_measurements_are_of_the_plans_the_planner_makes(compared):
    # A case planned otherwise since the run is still priced as it ran; it is named, with
    # the reason, so that the planner's departures from what was timed stay in sight.
    measured, rows, replanned = compared
    unnamed = sorted(set(replanned) - set(measured["replanned"]))
    assert not unnamed, (
        f"planned otherwise since the {measured['machine']} run, with no reason recorded: "
        f"{unnamed}: measure them again (docs/user/gpu_check.md) or say why in 'replanned'")
    assert len(replanned) <= measured["replanned_at_most"]


def _floor(count: int, recorded_nvrtc: str) -> int:
    """A recorded agreement count as this NVRTC is held to it: the count itself under the
    record's NVRTC, :func:`other_nvrtc_floor` of it under another 13.x."""
    return count if recorded_here(recorded_nvrtc) else other_nvrtc_floor(count)


def _off_by(recorded_nvrtc: str) -> float:
    """How far a prediction may be from its measurement without a recorded reason."""
    return AGREE if recorded_here(recorded_nvrtc) else AGREE + OTHER_NVRTC_SHIFT


def test_the_model_agrees_with_the_gpu_on_the_recorded_number_of_cases(compared):
    measured, rows, _ = compared
    agree = [name for name, p, m in rows if abs(p - m) <= AGREE]
    off = sorted((round(p - m, 2), name) for name, p, m in rows if abs(p - m) > AGREE)
    floor = _floor(measured["agree_at_least"], measured["nvrtc"])
    assert len(agree) >= floor, (
        f"{len(agree)} of {len(rows)} cases predicted within {AGREE} (at least {floor}: "
        f"{measured['agree_at_least']} recorded under NVRTC {measured['nvrtc']}); off: {off}")


def test_where_the_model_is_too_high_the_record_says_why(compared):
    # A prediction above the measurement by more than AGREE is an effect the model misses:
    # it is named in the record with what is known of it, as one below is.
    measured, rows, _ = compared
    high = [(name, p, m) for name, p, m in rows if p - m > _off_by(measured["nvrtc"])]
    unexplained = [r for r in high if r[0] not in measured["above_expected"]]
    assert not unexplained, f"predicted above the {measured['machine']}'s measurement: {unexplained}"


def test_where_the_model_is_too_low_the_record_says_why(compared):
    # A prediction far below a measurement is a limit or term that does not hold there (the
    # recorded ones say which and why).
    measured, rows, _ = compared
    low = [(name, p, m) for name, p, m in rows if m - p > _off_by(measured["nvrtc"])]
    unexplained = [r for r in low if r[0] not in measured["below_expected"]]
    assert not unexplained, f"predicted below the {measured['machine']}'s measurement: {unexplained}"


@pytest.mark.parametrize("held_out", ["rearrange", "elementwise", "ttc"])
def test_constants_fitted_on_two_suites_predict_the_third(held_out, monkeypatch):
    # Leave one suite out: the calibrated constants fitted to the other two suites of the
    # H100 record (python -m tests.support.model_fit --write records them) predict the
    # held-out suite within AGREE on at least the recorded number of its cases (a ratchet,
    # as agree_at_least).
    from infini_cupy.perf import limits

    measured = json.loads(record_path("h100").read_text())
    skip_without_nvdisasm()
    fit = measured["leave_one_suite_out"][held_out]
    for name, value in fit["constants"].items():
        monkeypatch.setattr(limits, name, value)
    cases = [m for m in measured["cases"] if m["suite"] == held_out]
    agree = [m["case"] for m in cases
             if abs(_priced_as_ran(m, "h100") - m["measured_fraction"]) <= AGREE]
    floor = _floor(fit["agree_at_least"], measured["nvrtc"])
    assert len(agree) >= floor, (
        f"{held_out}: {len(agree)} of {len(cases)} within {AGREE} with {fit['constants']} "
        f"(at least {floor}: {fit['agree_at_least']} recorded under NVRTC {measured['nvrtc']})")


def test_the_record_keeps_what_the_model_can_be_held_to():
    from tests.support.measured_record import cases_of

    run = [{"case": "broadcast row fp32", "suite": "rearrange", "kernel": "k", "gbps": 9.0,
            "copy_gbps": 3.0, "block_threads": [256], "measured_fraction": 3.0},
           {"case": "add transposed fp32", "suite": "elementwise", "kernel": "a, b",
            "gbps": 1.0, "copy_gbps": 2.0, "block_threads": [256, 128],
            "measured_fraction": 0.5},
           {"case": "transpose fp32", "suite": "rearrange", "error": "CUDADriverError: ..."}]
    kept = cases_of(run)
    assert [c["case"] for c in kept] == ["add transposed fp32"]  # no broadcast, no error
    assert kept[0]["block_threads"] is None and kept[0]["measured_fraction"] == 0.5


MODEL_PAGE = Path(__file__).resolve().parents[2] / "docs" / "performance" / "model.md"


def _documented_short_table() -> str:
    text = MODEL_PAGE.read_text()
    return text.split("<!-- short-cases: begin -->\n")[1].split("\n<!-- short-cases: end -->")[0]


def test_the_docs_list_the_cases_the_model_shows_short():
    # docs/performance/model.md's table is `python -m tests.support.model_fit --short`: every
    # bench case the calibrated model, with the H100's host floor, predicts below 0.9 of a
    # copy, with what limits it. Under another NVRTC 13.x it holds within
    # OTHER_NVRTC_SHORT_MARGIN.
    from tests.support import model_fit

    skip_without_nvdisasm()
    rows = model_fit.short_cases()
    documented = _documented_short_table()
    if recorded_here(json.loads(record_path("h100").read_text())["nvrtc"]):
        assert documented == model_fit.short_table(rows), (
            "docs/performance/model.md's short list is not the model's: "
            "python -m tests.support.model_fit --short")
        return
    listed = {cells[0]: float(cells[3]) for cells in
              (line.strip("| ").split(" | ") for line in documented.splitlines()[2:])}
    predicted = {r["case"]: r["calibrated"] for r in rows}
    missing = [c for c, f in predicted.items()
               if f < model_fit.SHORT_OF - OTHER_NVRTC_SHORT_MARGIN and c not in listed]
    assert not missing, f"predicted far below {model_fit.SHORT_OF}, not in the docs: {missing}"
    moved = {c: (f, now) for c, f in listed.items() if abs(f - (now := predicted.get(c) or
             bench_model.quick_record(CASES[c], DEVICES["h100"], calibrated=True)[
                 "predicted_fraction"])) > OTHER_NVRTC_SHORT_MARGIN}
    assert not moved, (
        f"documented and predicted now, more than {OTHER_NVRTC_SHORT_MARGIN} apart: {moved}")
