"""The bench's fusion suite (``--suite fusion``): six expressions run fused (``xp.fuse``),
lazily (the plain calls inside ``xp.lazy()``) and unfused (one call per function, on Arrays
so operators are ours too), reporting launches per call, bytes moved and host microseconds
per cached call; on a GPU, time and GB/s against ``cupy.fuse`` and unfused CuPy on the same
expressions.

Bytes moved come from the emulator's traces: per launch, the distinct bytes read plus the
distinct bytes written (what DRAM moves when the caches catch reuse within a launch), summed
over the launches. A fused call should move each input once and each output once; the
unfused calls also write and re-read every intermediate. ``where`` is delegated (the array
library's), so the unfused mask-select counts only our launches.
"""

from __future__ import annotations

import numpy as np

from ... import config
from ...perf.distinct import distinct

SHAPE = (64, 256)  # emulated: traces of every access stay small


def _standardize(ns, x, mean, std):
    return (x - mean) / std


def _softplus(ns, x):
    return ns.log1p(ns.exp(-ns.abs(x))) + ns.maximum(x, 0)


def _gelu_tanh(ns, x):
    return 0.5 * x * (1.0 + ns.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def _polynomial(ns, x):  # Horner, degree 4: 8 unfused calls
    return (((0.5 * x - 1.5) * x + 2.0) * x - 0.25) * x + 3.0


def _mask_select(ns, mask, a, w, b, c):
    return ns.where(mask, a * w + b, c)


def _transposed(ns, xt, y, z):
    return xt * y + z


def expressions(library, rng):
    """(name, function of (namespace, *arrays), arrays) of the suite, on ``library``."""
    def normal(shape):
        return library.asarray(rng.standard_normal(shape).astype(np.float32))

    rows, cols = SHAPE
    return [
        ("standardize (x-m)/s", _standardize, (normal(SHAPE), normal(cols), normal(cols) + 2)),
        ("softplus", _softplus, (normal(SHAPE),)),
        ("GELU (tanh form)", _gelu_tanh, (normal(SHAPE),)),
        ("polynomial (deg 4)", _polynomial, (normal(SHAPE),)),
        ("mask-select (5 inputs)", _mask_select, (
            library.asarray(rng.random(SHAPE) > 0.5), normal(SHAPE), normal(cols), normal(SHAPE),
            normal(SHAPE))),
        ("transposed operand", _transposed, (normal((cols, rows)).T, normal(SHAPE), normal(SHAPE))),
    ]


def kernel_names() -> list[str]:
    """The fused kernels the suite launches (the same on the emulator and a GPU), for a cubin
    cache built ahead of time: ``("elementwise.cu", name)`` pairs for ``warmup``."""
    import infini_cupy as xp

    return [xp.fuse(lambda *a, body=body: body(xp, *a)).kernel_name(*args)
            for _, body, args in expressions(np, np.random.default_rng(0))]


def _traced_bytes(function, *args) -> tuple[int, int]:
    """(launches, bytes moved) of ``function(*args)`` in emulation, from its traces."""
    from ...runtime.emulate import launcher as emulator

    with emulator.tracing() as trace:
        function(*args)
    moved = 0
    for launch in trace.launches:
        for is_write in (False, True):
            records = launch.accesses[launch.accesses["is_write"] == is_write]
            if len(records):
                spans = records["address"][:, None] + np.arange(records["bytes"].max())
                valid = np.arange(records["bytes"].max()) < records["bytes"][:, None]
                moved += len(distinct(spans[valid]))
    return len(trace.launches), moved


def _lazily(body):
    """``body``'s plain calls inside ``xp.lazy()``: evaluated at the block's end."""
    import infini_cupy as xp

    def run(*arrays):
        with xp.lazy():
            result = body(xp, *arrays)
        return result

    return run


def records(backend: str, time_call) -> list[dict]:
    """One record per expression; ``time_call(call)``: host microseconds, launches skipped."""
    import infini_cupy as xp

    rng = np.random.default_rng(0)
    out = []
    with config.backend("emulate"):
        for name, body, args in expressions(np, rng):
            fused = xp.fuse(lambda *a, body=body: body(xp, *a))
            arrays = [xp.asarray(a, device="emulator") for a in args]
            fused(*arrays)  # traced, planned, compiled
            launches, moved = _traced_bytes(fused, *arrays)
            unfused_launches, unfused_moved = _traced_bytes(lambda *a: body(xp, *a), *arrays)
            lazy = _lazily(body)
            lazy_launches, lazy_moved = _traced_bytes(lazy, *arrays)
            model = sum(a.nbytes for a in args) + int(np.prod(SHAPE)) * 4
            out.append({
                "case": f"fusion: {name}", "suite": "fusion", "backend": "emulate",
                "kernel": fused.kernel_name(*args),
                "launches": launches, "unfused_launches": unfused_launches,
                "bytes": moved, "unfused_bytes": unfused_moved, "inputs_plus_outputs": model,
                "lazy_launches": lazy_launches, "lazy_bytes": lazy_moved,
                "fused_us": round(time_call(lambda: fused(*arrays)), 2),
                "lazy_us": round(time_call(lambda: lazy(*arrays)), 2),
                "unfused_us": round(time_call(lambda: body(xp, *arrays)), 2),
                "one_call_us": round(time_call(lambda: xp.add(arrays[-1], arrays[-1])), 2),
            })
    if backend == "cuda":
        for record, (_, body, args) in zip(out, expressions(__import__("cupy"), rng)):
            record.update(_gpu_times(body, args, record["inputs_plus_outputs"]))
    return out


def _gpu_times(body, args, nbytes) -> dict:
    """Milliseconds and GB/s: fused, unfused ours, ``cupy.fuse``, unfused CuPy (a GPU only)."""
    import cupy

    import infini_cupy as xp

    def timed(call):
        call()
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(20):
            call()
        stop.record()
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop) / 20

    ours = xp.fuse(lambda *a: body(xp, *a))

    def expression(*a):  # cupy.fuse names its kernel after the function: no <lambda>
        return body(cupy, *a)

    theirs = cupy.fuse(expression)
    arrays = [xp.asarray(a) for a in args]
    times = {"gpu_fused_ms": timed(lambda: ours(*args)),
             "gpu_lazy_ms": timed(lambda: _lazily(body)(*arrays)),
             "gpu_unfused_ms": timed(lambda: body(xp, *arrays)),
             "gpu_cupy_fuse_ms": timed(lambda: theirs(*args)),
             "gpu_cupy_ms": timed(lambda: body(cupy, *args))}
    times["gpu_fused_GBps"] = nbytes / times["gpu_fused_ms"] / 1e6
    return times


def print_records(rows) -> None:
    print(f"\n{'fusion (emulated ' + 'x'.join(map(str, SHAPE)) + ' float32)':32s} "
          f"{'launches':>9s} {'bytes moved':>19s} {'in+out':>7s} {'host us':>21s}")
    print(f"{'':32s} {'fused/unf.':>9s} {'fused / unfused':>19s} {'':>7s} "
          f"{'fused/unfused/1 call':>21s}")
    for r in rows:
        print(f"{r['case'][8:][:32]:32s} {r['launches']:>4d}/{r['unfused_launches']:<4d} "
              f"{r['bytes']:>9d}/{r['unfused_bytes']:<9d} {r['inputs_plus_outputs']:>7d} "
              f"{r['fused_us']:>6.2f}/{r['unfused_us']:>6.2f}/{r['one_call_us']:>5.2f}")
        print(f"{'':32s} lazy: {r['lazy_launches']} launch(es), {r['lazy_bytes']} bytes moved, "
              f"{r['lazy_us']:.2f} host us")
        if "gpu_fused_ms" in r:
            print(f"{'':32s} GPU ms: fused {r['gpu_fused_ms']:.3f}, "
                  f"lazy {r['gpu_lazy_ms']:.3f}, ours unfused "
                  f"{r['gpu_unfused_ms']:.3f}, cupy.fuse {r['gpu_cupy_fuse_ms']:.3f}, CuPy "
                  f"{r['gpu_cupy_ms']:.3f}; fused {r['gpu_fused_GBps']:.0f} GB/s")
