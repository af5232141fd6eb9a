"""The bench's performance model columns: for each case, the H100 limits of
:mod:`infini_cupy.perf.limits` from the emulated launches' sector and bank counts, the
launched kernels' SASS (:mod:`infini_cupy.readers.sass`) and the launch the case gets at its full size.

A rearrange case is planned again at its full shape on layout-only stand-ins (no memory);
an elementwise launch's grid is the emulated one scaled to the full element count, capped as
the elementwise planner caps it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math

import numpy as np

from ...elementwise.plan import MAX_GRID as ELEMENTWISE_MAX_GRID
from ...perf import limits
from ...perf.devices import H100, Device
from ...perf.limits import tile_bytes
from ...readers import coalescing
from ...readers.sampled_launches import profile_plan
from ...readers import sass
from ...readers.sass import NVDISASM_HINT, kernel_sass
from ...elementwise.plan import staged_copies_only
from ...strided.plan_cache import pack, plan_for
from ...strided.tile_planner import TilePlan
from .. import cases as bench_cases
from .gbps import moved_bytes


def as_ran(plan, ran=None):
    """``plan`` as a GPU record ran it: ``ran`` is ``(kernel, block threads)`` of a measured
    case (``tests/tools/DEVICE_measured.json``), None for the plan itself. A staged copy the
    planner now gives another block size, or the variant that spreads short rows
    (``tiled_copy<..., 1>``), is priced with the record's kernel and threads, its rows
    unspread (the plain variant walks them consecutively); any other difference raises
    ValueError (a plan the model cannot rebuild).

    >>> from infini_cupy.strided.planner import plan_rearrange
    >>> plan = plan_rearrange((2001, 2001), (2001, 1), (1, 2001), 1)   # odd int8 transpose
    >>> plan.kernel, plan.block_threads
    ('tiled_copy<1, 1, 1, 1, 0>', 256)
    >>> as_ran(plan, ("tiled_copy<1, 1, 1, 1, 0>", 512)).block_threads
    512
    """
    if ran is None or (plan.kernel, plan.block_threads) == tuple(ran):
        return plan
    kernel, threads = ran
    if not (isinstance(plan, TilePlan) and _variant(kernel) == _variant(plan.kernel)):
        raise ValueError(f"the planner gives {plan.kernel} x {plan.block_threads}: "
                         f"{kernel} x {threads} cannot be rebuilt from it")
    fields = {"kernel": kernel, "block_threads": threads}
    if kernel.count(",") < 5:  # the plain variant: rows walked consecutively
        fields.update(read_spread=1, write_spread=1, read_rows=1)
    return dataclasses.replace(plan, **fields)


def _variant(kernel: str) -> list[str]:
    """A staged copy's template arguments but the last, optional one (Grouped)."""
    return kernel.rstrip(">").split(",")[:5]


def _ran_plan(case, ran=None):
    y, x = case.build(bench_cases.layout_only, case.shape, case.dtype)
    return y, x, as_ran(plan_for(y, x).plan, ran)


def _as_ran_context(case, ran):
    """The planning an elementwise case ran under: staged copies first where the record's
    kernels are a ``rearrange_`` copy and ``ew_contig`` (before ``ew_tiled``)."""
    if case.elementwise and ran is not None and "tiled_copy<" in ran[0]:
        return staged_copies_only()
    return contextlib.nullcontext()


def _full_launches(case, launches, emulated_shape, ran=None):
    """(source, kernel, grid blocks, block threads, dynamic shared bytes, tile bytes) per
    traced launch, at the case's full shape."""
    if not case.elementwise:
        y, x, plan = _ran_plan(case, ran)
        if plan.empty:
            return []
        source, grid, block, _, shared = pack(plan)
        return [(source, plan.kernel, grid, block, shared, tile_bytes(plan, y.nbytes))] * len(launches)
    scale = math.prod(case.shape) / max(1, math.prod(emulated_shape))
    out = []
    for p in launches:
        grid = math.prod(p.grid)
        if grid < ELEMENTWISE_MAX_GRID:
            grid = min(ELEMENTWISE_MAX_GRID, math.ceil(grid * scale))
        out.append((p.source, p.kernel, grid, math.prod(p.block), 0, 0))
    return out


def _full_moved(case, profile, emulated_shape) -> int:
    """Bytes a launch reads and writes at the case's full size: a rearrange case's output
    twice, an elementwise launch's traced bytes scaled to the full element count."""
    if not case.elementwise:
        return 2 * math.prod(case.shape) * np.dtype(case.dtype).itemsize
    scale = math.prod(case.shape) / max(1, math.prod(emulated_shape))
    return round((profile.reads.bytes + profile.writes.bytes) * scale)


def model_record(case, launches, emulated_shape, device: Device = H100, ran=None,
                 calibrated: bool = False) -> dict:
    """The model's figures of one case on ``device``, JSON-ready (``ran``: :func:`as_ran`;
    ``calibrated``: with the calibrated terms of :mod:`infini_cupy.perf.limits`, what a GPU
    is predicted to measure, rather than the limits alone, the bound a kernel can reach)."""
    if not launches:
        return {}
    predictions, moved, figures = [], [], {}
    for p, (source, kernel, grid, block, shared, tile) in zip(
            launches, _full_launches(case, launches, emulated_shape, ran)):
        code = kernel_sass(source, kernel)
        predictions.append(limits.predict_profile(
            p, kernel=code, grid_blocks=grid, block_threads=block, dynamic_shared=shared,
            tile_bytes=tile, device=device, kernel_name=kernel,
            moved_bytes=_full_moved(case, p, emulated_shape), terms=calibrated))
        moved.append(p.reads.bytes + p.writes.bytes)
        if code is not None:
            figures[kernel] = sass_figures(code)
    wavefronts = sum(p.shared.wavefronts for p in launches)
    ideal = sum(p.shared.ideal for p in launches)
    # The figures of the launch furthest below a copy; the fraction of all of them.
    worst = min(predictions, key=lambda p: p.fraction)
    credited = _credited_bytes(case, emulated_shape) if len(launches) > 1 else None
    record = {"bank_conflicts": round(wavefronts / ideal, 3) if ideal else 1.0,
              **worst.record(),
              "predicted_fraction": limits.combined_fraction(predictions, moved, credited)}
    if record["predicted_fraction"] < round(worst.fraction, 3):  # a staging pass costs more
        record["limiter"] = "passes"
    if figures:
        record["sass"] = figures
    else:
        record["sass_missing"] = f"no SASS read (NVRTC or nvdisasm missing: {NVDISASM_HINT})"
    return record


def _credited_bytes(case, emulated_shape) -> int:
    """The bytes the case's call is credited with at the emulated shape (what the traced
    launches moved is counted there too): :func:`.gbps.moved_bytes`."""
    with bench_cases.unfilled():
        operands = case.build(bench_cases.aligned_alloc, emulated_shape, case.dtype)
    with np.errstate(all="ignore"):  # unfilled operands: the output's size is what counts
        return moved_bytes(case, operands)


def sass_figures(code) -> dict:
    """One kernel variant's SASS figures, JSON-ready."""
    return {"registers": code.registers, "shared_bytes": code.shared_bytes,
            "local_bytes": code.local_bytes, "spills": code.spills,
            "instructions_per_byte": (round(code.instructions_per_byte, 2)
                                      if math.isfinite(code.instructions_per_byte) else None),
            "per_tile_instructions": code.per_block_instructions,
            "bytes_in_flight_per_thread": code.bytes_in_flight,
            "widest_access": code.widest_access,
            "division_helper_calls": list(code.helper_calls),
            "hot_loops": len(code.loops)}


HEADER = f"{'banks':>5s} {'i/B':>5s} {'KiB/SM':>6s} {'waves':>5s} {'pred':>5s} {'limit':7s}"


def columns(r: dict) -> str:
    """The model's columns of a bench row."""
    if "predicted_fraction" not in r:
        return f"{'-':>5s} {'-':>5s} {'-':>6s} {'-':>5s} {'-':>5s} {'':7s}"
    ipb = r.get("instructions_per_byte")
    ipb = f"{ipb:5.1f}" if ipb else f"{'-':>5s}"
    return (f"{r['bank_conflicts']:5.2f} {ipb} {r['bytes_in_flight_per_sm'] / 1024:6.1f} "
            f"{r['waves']:5.1f} {r['predicted_fraction']:5.2f} {r['limiter'][:7]:7s}")


def why_no_sass() -> tuple[str, str]:
    """(what keeps the SASS from being read, the wheel that brings it): nvdisasm missing,
    NVRTC missing, or neither (a kernel that failed to compile or disassemble)."""
    try:
        sass.nvdisasm()
    except RuntimeError:
        return "nvdisasm not found", "nvidia-cuda-nvdisasm"
    try:
        sass.nvrtc_version()
    except Exception:  # no NVRTC library: whatever its loader raises
        return "NVRTC not found", "nvidia-cuda-nvrtc"
    return "SASS not read", "nvidia-cuda-nvdisasm and nvidia-cuda-nvrtc"


def sass_note(records) -> str | None:
    """One line where some case was predicted without its kernels' SASS, else None.

    Without SASS the model leaves out the limits the SASS sets (instructions per byte,
    registers and shared memory per block, bytes in flight), so its predictions differ from
    the figures of the docs, which were read with it.

    Parameters
    ----------
    records : list of dict
        The bench's records; a predicted case without SASS has ``"sass_missing"``.

    Returns
    -------
    str or None
        E.g. ``"predicted without SASS (nvdisasm not found) on 11 of 11 cases: install
        nvidia-cuda-nvdisasm for the docs' figures"``.
    """
    predicted = [r for r in records if "predicted_fraction" in r]
    missing = [r for r in predicted if "sass_missing" in r]
    if not missing:
        return None
    reason, wheel = why_no_sass()
    return (f"predicted without SASS ({reason}) on {len(missing)} of {len(predicted)} cases: "
            f"install {wheel} for the docs' figures")


def print_summary(records) -> None:
    """Per suite: cases the model predicts below 0.9 of a copy, and why; then
    :func:`sass_note`'s line where some prediction had no SASS."""
    by_suite: dict[str, list] = {}
    for r in records:
        if "predicted_fraction" in r:
            by_suite.setdefault(r["suite"], []).append(r)
    for suite, rows in by_suite.items():
        below = [r for r in rows if r["predicted_fraction"] < 0.9]
        line = (f"{suite}: predicted >= 0.9 of an H100 copy on {len(rows) - len(below)} of "
                f"{len(rows)} cases")
        if below:
            line += "; below: " + ", ".join(
                f"{r['case']} {r['predicted_fraction']:.2f} ({r['limiter']})" for r in below)
        print(line)
        measured = [r for r in rows if "measured_fraction" in r]
        if measured:  # on a GPU: the model against the measurement
            print(f"{suite}: measured / predicted fraction of a copy: " + ", ".join(
                f"{r['case']} {r['measured_fraction']:.2f} / {r['predicted_fraction']:.2f}"
                for r in measured))
    note = sass_note(records)
    if note:
        print(note)


def sampled_record(case, max_blocks: int = 16, elementwise_shape=None,
                   device: Device = H100, ran=None, calibrated: bool = False) -> dict:
    """:func:`model_record` of a case at a fraction of the bench's cost: a rearrange case is
    planned at its full shape and traced over its first ``max_blocks`` blocks (on buffers
    whose untouched pages are never committed); an elementwise case runs traced at its
    emulated shape (or ``elementwise_shape``). ``ran``: the ``(kernel, block threads)`` a
    GPU record ran, to price that plan rather than today's (:func:`as_ran`); ``calibrated``:
    :func:`model_record`'s."""
    with _as_ran_context(case, ran):
        return _sampled_record(case, max_blocks, elementwise_shape, device, ran, calibrated)


def _sampled_record(case, max_blocks, elementwise_shape, device, ran, calibrated):
    if case.elementwise:
        import infini_cupy as xp

        from ...arrays import outputs_from
        from ... import config

        shape = elementwise_shape or case.emulated_shape or case.shape
        operands = case.build(bench_cases.aligned_alloc, shape, case.dtype)
        op, inputs, keywords = bench_cases.call_parts(operands)
        with config.backend("emulate"), outputs_from(bench_cases.aligned_alloc):
            _, launches = coalescing.profile(getattr(xp, op), *inputs, **keywords)
        return model_record(case, launches, shape, device, calibrated=calibrated)
    y, x, plan = _ran_plan(case, ran)
    profile, _ = profile_plan(plan, y.shape, y.strides, x.strides, y.dtype,
                              dst_address=_address(y), src_address=_address(x),
                              max_blocks=max_blocks)
    return model_record(case, [profile], case.shape, device, ran, calibrated)


def _address(a) -> int:
    return a.__array_interface__["data"][0] % 32


def quick_record(case, device: Device = H100, ran=None, calibrated: bool = False) -> dict:
    """What CI checks and ``tests/tools/model_baseline.json`` records for a case:
    :func:`sampled_record` over 4 blocks, elementwise cases at a quarter of their emulated
    shape per dim (``ran``: price the plan a GPU record ran, :func:`as_ran`; ``calibrated``:
    with the calibrated terms, as the measured records are held to)."""
    shape = (tuple(max(1, n // 4) for n in case.emulated_shape)
             if case.elementwise and case.emulated_shape else None)
    return sampled_record(case, max_blocks=4, elementwise_shape=shape, device=device, ran=ran,
                          calibrated=calibrated)
