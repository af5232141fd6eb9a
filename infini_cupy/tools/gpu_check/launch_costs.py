"""What a launch-bound call costs on the host with each launch mechanism of the cuda backend
(``cupy``: CuPy's function object; ``driver``: ``cuda.bindings``' ``cuLaunchKernel`` on a
buffer packed once, :mod:`infini_cupy.runtime.cuda_driver`; ``compiled``: libcuda's
``cuLaunchKernel`` from C, a repeated call of Arrays run in C end to end,
:mod:`infini_cupy.runtime.cuda_compiled`), and where the microseconds go, layer by layer.

Every figure is host clock around :data:`CALLS` calls after :data:`WARMUP`, then a
synchronize: on a GPU, the time per call of a call whose kernel is shorter than its launch.
``gpu-check``'s bench step reports :func:`mechanism_rows` and :func:`breakdown_rows`; without a
GPU, ``python -m tests.support.standin_python -m infini_cupy.tools.gpu_check.launch_costs``
runs the breakdown (``--mechanisms``: the rows per mechanism) against the stand-ins for CuPy
and ``cuda.bindings.driver`` with their kernels not run (host side only: the innermost layer
is then the stand-in's Python, not a driver).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from ... import config
from ...config import LAUNCH_MECHANISMS
from ..bench.gbps import torch_module

CALLS, WARMUP = 3000, 300
ADD_SHAPE = (48, 64)  # small enough that the host, not the GPU, sets the time per call
# The calls whose host time a measured record takes (tests/support/measured_record.py): the
# elementwise suite's and the copies' (of CuPy arrays, the model's host floor).
ADD_CALL, COPY_CALL = "add 48x64 fp32 Array", "rearrange_ 64x48 fp32 (cached)"


def host_us_per_call(fn, synchronize, calls: int = CALLS, warmup: int = WARMUP) -> float:
    """Microseconds per call of ``fn``: host clock around ``calls`` calls after ``warmup``,
    then ``synchronize()`` (the queue drained: a launch-bound call's true rate)."""
    for _ in range(warmup):
        fn()
    synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    synchronize()
    return (time.perf_counter() - start) / calls * 1e6


class _Captured:
    """A launcher that keeps the arguments of the last launch and hands it on."""

    def __init__(self, inner):
        self.inner, self.last = inner, None

    def launch(self, source, name, grid, block, args, shared_mem=0):
        self.last = (source, name, grid, block, tuple(args), shared_mem)
        self.inner.launch(source, name, grid, block, args, shared_mem)

    def prepare(self, source, names):  # pragma: no cover - the bench prepares nothing
        self.inner.prepare(source, names)


def calls(library, backend: str):
    """(name, call, CuPy's call, torch's call or None) of the launch-bound calls of a 48x64
    float32 Array: ``xp.add``, a Python scalar (``x * 2.0``), ``xp.exp``, a fused 4-op call
    (``xp.fuse``; CuPy's ``cupy.fuse``; torch's four ops), a fused call with a scalar
    argument (``x * s + x``, ``s = 2.5``), ``out=`` (``xp.add(x, x,
    out=z)``; the fused 4-op call into ``z``, beside CuPy's four calls, the last into ``z``),
    the 4-op expression's plain calls inside ``xp.lazy()`` (beside CuPy's and torch's four
    calls), and a cached 64x48 ``rearrange_`` (a transpose) of ``library``'s arrays and of
    Arrays (the compiled launch takes a repeated one of Arrays into C); ours return their
    result (the operand: :data:`ADD_SHAPE` float32 normals of seed 1). Torch's where torch
    imports and ``library`` is CuPy."""
    import infini_cupy as xp
    from infini_cupy.namespace.array import wrap

    rng = np.random.default_rng(1)
    x = library.asarray(rng.standard_normal(ADD_SHAPE, np.float32))
    y = library.empty(ADD_SHAPE[::-1], np.float32)
    z = library.empty(ADD_SHAPE, np.float32)
    array, y_array, z_array = wrap(x, backend), wrap(y, backend), wrap(z, backend)
    # torch beside CuPy's own arrays (not the stand-in's, whose memory torch cannot read)
    torch = torch_module() if backend == "cuda" and type(x).__module__.startswith("cupy") else None
    if torch is not None:
        tx, ty, tz = torch.from_dlpack(x), torch.from_dlpack(y), torch.from_dlpack(z)
    fused = xp.fuse(lambda a, b: xp.exp(a * b + a) - b)
    scaled = xp.fuse(lambda a, b, s: a * s + b)
    library_fused = (lambda a, b: library.exp(a * b + a) - b)
    library_scaled = (lambda a, b, s: a * s + b)
    if hasattr(library, "fuse"):  # CuPy's own fusion (NumPy and the stand-in have none)
        library_fused, library_scaled = library.fuse(library_fused), library.fuse(library_scaled)
    return [(ADD_CALL, lambda: xp.add(array, array),
             lambda: library.add(x, x), torch and (lambda: torch.add(tx, tx))),
            ("multiply 48x64 fp32 Array by 2.0", lambda: array * 2.0,
             lambda: x * 2.0, torch and (lambda: tx * 2.0)),
            ("exp 48x64 fp32 Array", lambda: xp.exp(array),
             lambda: library.exp(x), torch and (lambda: torch.exp(tx))),
            ("fused exp(x*y+x)-y 48x64 fp32 Arrays", lambda: fused(array, array),
             lambda: library_fused(x, x), torch and (lambda: torch.exp(tx * tx + tx) - tx)),
            ("fused x*s+y 48x64 fp32 Arrays, s=2.5", lambda: scaled(array, array, 2.5),
             lambda: library_scaled(x, x, 2.5), torch and (lambda: tx * 2.5 + tx)),
            ("add 48x64 fp32 Array, out=", lambda: xp.add(array, array, out=z_array),
             lambda: library.add(x, x, out=z), torch and (lambda: torch.add(tx, tx, out=tz))),
            ("fused exp(x*y+x)-y 48x64 fp32 Arrays, out=", lambda: fused(array, array,
                                                                     out=z_array),
             lambda: library.subtract(library.exp(x * x + x), x, out=z),
             torch and (lambda: torch.sub(torch.exp(tx * tx + tx), tx, out=tz))),
            ("lazy() exp(x*y+x)-y 48x64 fp32 Arrays", lambda: _lazy_block(xp, array),
             lambda: library.exp(x * x + x) - x, torch and (lambda: torch.exp(tx * tx + tx) - tx)),
            (COPY_CALL, lambda: (xp.rearrange_(y, x.T), y)[1],
             lambda: library.ascontiguousarray(x.T), torch and (lambda: ty.copy_(tx.T))),
            ("rearrange_ 64x48 fp32 Array (cached)",
             lambda: xp.rearrange_(y_array, array.T)._a,
             lambda: library.ascontiguousarray(x.T), torch and (lambda: ty.copy_(tx.T)))]


def _lazy_block(xp, array):
    """The fused 4-op expression as plain calls inside ``xp.lazy()``: deferred, then one
    kernel at the block's end (a chain seen before: deferred and evaluated in C)."""
    with xp.lazy():
        result = xp.exp(array * array + array) - array
    return result


def mechanism_rows(library, backend: str, synchronize, repeat=(CALLS, WARMUP)):
    """Per launch-bound call, microseconds per call with each mechanism (``None`` with the
    error where one cannot launch, e.g. without cuda-bindings), beside CuPy's (``library``'s)
    call and torch's."""
    from ...runtime import cuda

    for name, call, reference, torch_call in calls(library, backend):
        row = {"case": f"host us per call: {name}", "ok": True, "us_per_call": {},
               "cupy_us_per_call": round(host_us_per_call(reference, synchronize, *repeat), 2),
               "torch_us_per_call": None if torch_call is None
               else round(host_us_per_call(torch_call, synchronize, *repeat), 2)}
        for mechanism in LAUNCH_MECHANISMS:
            try:
                with cuda.launch_mechanism(mechanism):
                    row["us_per_call"][mechanism] = round(
                        host_us_per_call(call, synchronize, *repeat), 2)
            except Exception as e:
                row["us_per_call"][mechanism] = None
                row.setdefault("errors", {})[mechanism] = f"{type(e).__name__}: {e}"
                row["ok"] = False
        yield row


def _layers(cupy, mechanism: str):
    """(what, call) from the innermost layer of ``xp.add(X, X)`` (a 48x64 float32 Array on
    the cuda backend) out to the call itself."""
    import infini_cupy as xp
    from infini_cupy.namespace.array import wrap

    from ...runtime import cuda, cuda_driver, launch
    from ...runtime.structs import dim3

    x = cupy.asarray(np.random.default_rng(2).standard_normal(ADD_SHAPE, np.float32))
    array = wrap(x, "cuda")
    captured = _Captured(launch.LAUNCHERS["cuda"])
    with launch.launcher_replaced("cuda", captured):
        xp.add(array, array)
    source, name, grid, block, args, shared_mem = captured.last
    device = cupy.cuda.runtime.getDevice()
    function = cuda._function_on(device, source, name)
    passed = tuple(a.data if isinstance(a, cupy.ndarray) else a for a in args)
    grid3, block3 = dim3(grid), dim3(block)
    if mechanism != "cupy":  # driver, compiled: a record packed once, then cuLaunchKernel
        key = (mechanism, device, source, name, grid3, block3, shared_mem)
        record = cuda_driver._record(cupy, device, function, key, grid3, block3, shared_mem,
                                     passed, mechanism)
        record.write(passed)  # the captured arrays' pointers: held alive by `captured`
        stream = cupy.cuda.get_current_stream().ptr
        innermost = [
            ("cuLaunchKernel on a packed record", lambda: record.run(
                record.function, *grid3, *block3, shared_mem, stream, record.address, 0)),
            ("driver launch: pointers written, then cuLaunchKernel", lambda: cuda_driver.launch(
                cupy, device, function, key, grid3, block3, passed, shared_mem, mechanism))]
    else:
        innermost = [("CuPy's Function: arguments packed, launched", lambda: function(
            grid3, block3, passed, shared_mem=shared_mem))]
    return innermost + [
        ("runtime.cuda.launch: arguments checked, device", lambda: cuda.launch(
            source, name, grid, block, args, shared_mem)),
        ("runtime.launch.launch: hooks, backend", lambda: launch.launch(
            source, name, grid, block, args, backend="cuda", shared_mem=shared_mem)),
        ("xp.add of CuPy arrays: short path, output allocated", lambda: xp.add(x, x)),
        ("xp.add of Arrays", lambda: xp.add(array, array)),
        ("cupy.add (for comparison)", lambda: cupy.add(x, x))]


def breakdown_rows(cupy, synchronize, repeat=(CALLS, WARMUP)):
    """One row per layer and mechanism: microseconds per call of ``xp.add(X, X)`` cut at that
    layer (each row includes the layers listed before it)."""
    from ...runtime import cuda

    for mechanism in LAUNCH_MECHANISMS:
        try:
            with cuda.launch_mechanism(mechanism):
                layers = _layers(cupy, mechanism)
                for _, call in layers:  # every layer warm before any is timed: the first
                    host_us_per_call(call, synchronize, *repeat)  # timed alone read 1.8x
                for what, call in layers:
                    yield {"case": f"layer: {what}", "launch": mechanism, "ok": True,
                           "us_per_call": round(host_us_per_call(call, synchronize, *repeat),
                                                2)}
        except Exception as e:
            yield {"case": "layers", "launch": mechanism, "ok": False,
                   "error": f"{type(e).__name__}: {e}"}


def main(argv=None, cupy=None) -> int:
    """Print the breakdown, one JSON row per line (on a GPU unless ``cupy`` is given);
    ``--calls N --warmup M`` time fewer calls; ``--mechanisms`` prints the launch-bound
    calls' rows per mechanism (:func:`mechanism_rows`, on the cuda backend) instead."""
    parser = argparse.ArgumentParser(prog="launch_costs")
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--warmup", type=int, default=WARMUP)
    parser.add_argument("--mechanisms", action="store_true")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if cupy is None:  # pragma: no cover - on a GPU
        import cupy
    repeat, synchronize = (args.calls, args.warmup), cupy.cuda.runtime.deviceSynchronize
    if args.mechanisms:
        with config.backend("cuda"):
            rows = list(mechanism_rows(cupy, "cuda", synchronize, repeat))
    else:
        rows = list(breakdown_rows(cupy, synchronize, repeat))
    for row in rows:
        print(json.dumps(row), flush=True)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":  # pragma: no cover - run on a GPU
    sys.exit(main(sys.argv[1:]))
