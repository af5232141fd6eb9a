"""``gpu-check``'s bench step: the bench's key rows on a GPU, each as GB/s and as a fraction of
a device-to-device copy of as many bytes, beside what CuPy does for the same call
(``cupy.ascontiguousarray``, its ufuncs, ``cupy.fuse``) and torch when it imports.

Rows: the device-to-device copy itself, the transposes (float32 and float16, even and odd
sizes), NCHW -> NHWC, elementwise add contiguous and broadcast, a fused expression (GELU,
tanh form), microseconds per call of a transpose and an add too small to keep the GPU busy
(the host's cost per call, launch included), and copies where the model may rank the plans
wrongly, each under every planning rule (``planners: CASE``: the default rule's choice, the
seed kernels alone, coalescing alone), so the GPU says which plan was fastest; then the
launch-bound calls with each launch mechanism (``host us per call: ...``) and their cost layer
by layer (``layer: ...``, :mod:`.launch_costs`), host clock around 3000 calls. Each row also
says whether our result equals CuPy's (or NumPy's). Run as
``python -m infini_cupy.tools.gpu_check.bench_step REPORT.json``; a row is written as soon as it is
measured, so a step cut short keeps what it measured.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from ..bench import gbps as bench_gpu
from . import launch_costs
from ..bench.permutation_cases import ttc_cases
from ..cases import ELEMENTWISE_SUITE, REARRANGE_SUITE, call_parts

KEY_CASES = ("transpose fp32", "transpose odd fp32", "transpose fp16", "transpose odd fp16",
             "NCHW->NHWC fp32", "add contiguous fp32", "add broadcast row fp32",
             # what the tiled kernels' register spills cost (their contiguous kernel has none)
             "pow contiguous complex128", "pow transposed complex128",
             "pow into transposed complex128")
FUSED_SHAPE = (4096, 4096)
COPY_BYTES = 1 << 28



def _fraction(gbps: float, copy_gbps: float) -> float:
    """GB/s as a fraction of a device-to-device copy's, to 3 significant digits (3 decimals
    would make a slow plan's 0.0004 a 0.0)."""
    return float(f"{gbps / copy_gbps:.3g}")

def gelu(ns, x):
    return 0.5 * x * (1.0 + ns.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


class GPU:
    """Where rows run: CuPy on the current GPU, full-size cases, CUDA-event times."""

    copy_bytes = COPY_BYTES
    fused_shape = FUSED_SHAPE
    backend = "cuda"
    host_repeat = (launch_costs.CALLS, launch_costs.WARMUP)  # host-clocked calls, warm-up

    def __init__(self):
        import cupy

        self.library = cupy
        self.to_host = cupy.asnumpy

    @property
    def calls_library(self):
        """The arrays of the launch-bound calls' rows (:func:`launch_costs.calls`)."""
        return self.library

    def alloc(self, shape, dtype):
        return self.library.empty(shape, dtype)

    def shape(self, case):
        return case.shape

    def seconds(self, fn) -> float:
        return bench_gpu.seconds_per_call(fn)

    def synchronize(self) -> None:
        self.library.cuda.runtime.deviceSynchronize()

    def copy_seconds(self, nbytes: int) -> float:
        """A device-to-device ``cudaMemcpyAsync`` moving ``nbytes`` (reads plus writes)."""
        cupy = self.library
        half = max(nbytes // 2, 1)
        a, b = cupy.empty(half, np.uint8), cupy.empty(half, np.uint8)
        return self.seconds(lambda: cupy.cuda.runtime.memcpyAsync(
            b.data.ptr, a.data.ptr, half, 3, cupy.cuda.get_current_stream().ptr))

    def torch_call(self, case, operands):
        return bench_gpu.torch_equivalent(case, operands)

    def torch_gelu(self, x):
        torch = bench_gpu.torch_module()
        if torch is None:
            return None
        tensor = torch.from_dlpack(x)
        return lambda: torch.nn.functional.gelu(tensor, approximate="tanh")


def _row(kit, name, moved, ours, reference, torch_call=None) -> dict:
    """GB/s of ``ours``, a copy, ``reference`` (CuPy's) and torch; fractions of the copy."""
    got, expected = kit.to_host(ours()), kit.to_host(reference())
    # complex compared as complex; pow's zeros to negative powers are NaN on both sides
    wide = np.complex128 if np.iscomplexobj(got) or np.iscomplexobj(expected) else np.float64
    equal = got.shape == expected.shape and np.allclose(
        got.astype(wide), expected.astype(wide), rtol=1e-5, atol=1e-6, equal_nan=True)
    copy = moved / kit.copy_seconds(moved) / 1e9
    row = {"case": name, "ok": bool(equal), "bytes": int(moved),
           "gbps": round(moved / kit.seconds(ours) / 1e9, 1), "copy_gbps": round(copy, 1),
           "cupy_gbps": round(moved / kit.seconds(reference) / 1e9, 1), "torch_gbps": None}
    if torch_call is not None:
        row["torch_gbps"] = round(moved / kit.seconds(torch_call) / 1e9, 1)
    for who in ("", "cupy_", "torch_"):
        gbps = row[f"{who}gbps"]
        row[f"{who}fraction"] = None if gbps is None else _fraction(gbps, copy)
    return row


def _case_row(kit, case) -> dict:
    import infini_cupy as xp

    shape = kit.shape(case)
    operands = case.build(kit.alloc, shape, case.dtype)
    library = kit.library
    if case.elementwise:
        op, inputs, keywords = call_parts(operands)
        arrays = [a for a in inputs if hasattr(a, "nbytes")]
        out = keywords.get("out")
        if out is None:  # not `or`: a CuPy array has no truth value
            out = kit.alloc(shape, case.dtype)
        moved = sum(a.nbytes for a in arrays) + out.nbytes
        return _row(kit, case.name, moved, lambda: getattr(xp, op)(*inputs, **keywords),
                    lambda: getattr(library, op)(*inputs, out=out),
                    kit.torch_call(case, operands))
    y, x = operands

    def ours():
        xp.rearrange_(y, x)
        return y

    return _row(kit, case.name, 2 * y.nbytes, ours, lambda: library.ascontiguousarray(x),
                kit.torch_call(case, operands))


def _fused_row(kit) -> dict:
    import infini_cupy as xp

    shape = kit.fused_shape
    x = kit.alloc(shape, np.float32)
    x[...] = kit.library.asarray(np.random.default_rng(0).standard_normal(shape, np.float32))
    ours = xp.fuse(lambda v: gelu(xp, v))

    def gelu_tanh(v):  # cupy.fuse names its kernel after the function: no <lambda>
        return gelu(kit.library, v)

    reference = kit.library.fuse(gelu_tanh) if hasattr(kit.library, "fuse") else gelu_tanh
    return _row(kit, "fused GELU (tanh form) fp32", 2 * x.nbytes, lambda: ours(x),
                lambda: reference(x), kit.torch_gelu(x))


LAUNCH_SHAPE = (64, 48)  # small enough that the host, not the GPU, sets the time per call


def _launch_rows(kit):
    """Microseconds per call where a call is too small to keep the GPU busy: what the host
    spends on each, its launch included (ours, CuPy's, torch's), for a transpose and an add."""
    import types

    import infini_cupy as xp

    library = kit.library
    x = kit.alloc(LAUNCH_SHAPE[::-1], np.float32)
    x[...] = library.asarray(np.random.default_rng(1).standard_normal(x.shape, np.float32))
    y = kit.alloc(LAUNCH_SHAPE, np.float32)
    copy, add = types.SimpleNamespace(elementwise=False), types.SimpleNamespace(elementwise=True)

    def transpose():
        xp.rearrange_(y, x.T)
        return y

    calls = [("launch-bound transpose 64x48 fp32", transpose,
              lambda: library.ascontiguousarray(x.T), kit.torch_call(copy, (y, x.T))),
             ("launch-bound add 48x64 fp32", lambda: xp.add(x, x), lambda: library.add(x, x),
              kit.torch_call(add, ("add", x, x)))]
    for name, ours, reference, torch_call in calls:
        got, expected = kit.to_host(ours()), kit.to_host(reference())
        row = {"case": name, "ok": bool(np.array_equal(got, expected)),
               "us_per_call": round(kit.seconds(ours) * 1e6, 2),
               "cupy_us_per_call": round(kit.seconds(reference) * 1e6, 2),
               "torch_us_per_call": None if torch_call is None
               else round(kit.seconds(torch_call) * 1e6, 2)}
        yield row


# Copies whose plans the GPU ranked otherwise than the model (tests/tools/h100_measured.json
# and the H100 page): a 6-D TTC layout of 2 KiB tiles, the seed kernel's heads split, the
# byte tiles.
RIVAL_CASES = ("ttc 5,4,3,2,1,0 balanced", "heads split fp16", "transpose odd int8",
               "NHWC->NCHW RGB int8")


def _rival_row(kit, case) -> dict:
    """One copy under each planning rule: the kernels each launches, GB/s and the fraction of
    a copy of as many bytes; ``ok`` when every rule's result equals the source."""
    import infini_cupy as xp
    from ...runtime import launch
    from ...strided.plan_cache import PLANNERS, planning_rule

    y, x = case.build(kit.alloc, kit.shape(case), case.dtype)
    expected = np.array(kit.to_host(x))
    moved = 2 * y.nbytes
    copy = moved / kit.copy_seconds(moved) / 1e9
    plans, ok = [], True
    for planner in PLANNERS:
        with planning_rule(planner):
            with launch.recording() as launches:
                xp.rearrange_(y, x)
            ok = ok and bool(np.array_equal(kit.to_host(y), expected))
            gbps = moved / kit.seconds(lambda: xp.rearrange_(y, x)) / 1e9
        plans.append({"planner": planner, "kernels": [r.name for r in launches],
                      "gbps": round(gbps, 1), "fraction": _fraction(gbps, copy)})
    return {"case": f"planners: {case.name}", "ok": ok, "bytes": int(moved),
            "copy_gbps": round(copy, 1), "plans": plans}


def rows(kit):
    """Every key row, measured on ``kit``, in order; a failing row is reported, not raised."""
    by_name = {case.name: case for case in (*REARRANGE_SUITE, *ELEMENTWISE_SUITE)}
    copy = kit.copy_bytes / kit.copy_seconds(kit.copy_bytes) / 1e9
    yield {"case": "device-to-device copy", "ok": True, "bytes": kit.copy_bytes,
           "gbps": round(copy, 1), "fraction": 1.0}
    makers = [(name, lambda name=name: _case_row(kit, by_name[name])) for name in KEY_CASES]
    for name, make in [*makers, ("fused GELU (tanh form) fp32", lambda: _fused_row(kit))]:
        try:
            yield make()
        except Exception as e:  # the next row still runs
            yield {"case": name, "ok": False, "error": f"{type(e).__name__}: {e}"}
    try:
        yield from _launch_rows(kit)
    except Exception as e:
        yield {"case": "launch-bound calls", "ok": False, "error": f"{type(e).__name__}: {e}"}
    cases = {case.name: case for case in (*REARRANGE_SUITE, *ttc_cases())}
    for name in RIVAL_CASES:
        try:
            yield _rival_row(kit, cases[name])
        except Exception as e:
            yield {"case": f"planners: {name}", "ok": False,
                   "error": f"{type(e).__name__}: {e}"}
    # each launch mechanism (CuPy's function object, the driver's cuLaunchKernel), host clock
    yield from launch_costs.mechanism_rows(kit.calls_library, kit.backend, kit.synchronize,
                                           kit.host_repeat)
    if kit.backend == "cuda":  # the layers of a call on device arrays
        yield from launch_costs.breakdown_rows(kit.library, kit.synchronize, kit.host_repeat)


def main(argv=None, kit=None) -> int:
    """Measure every row into the JSON file named by the first argument (rewritten after
    each row); one line per row on stdout. Exit 1 if a row failed or differs from CuPy."""
    argv = sys.argv[1:] if argv is None else argv
    path = Path(argv[0]) if argv else None
    kit = kit or GPU()
    measured = []
    for row in rows(kit):
        measured.append(row)
        print(json.dumps(row), flush=True)
        if path is not None:
            path.write_text(json.dumps(measured, indent=1))
    return 0 if all(r["ok"] for r in measured) else 1


if __name__ == "__main__":  # pragma: no cover - run by gpu-check on a GPU
    sys.exit(main())
