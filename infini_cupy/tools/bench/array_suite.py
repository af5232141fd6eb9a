"""The bench's Array rows: what the ``infini_cupy.Array`` wrapper costs per call over the bare
implementation on native arrays (launches skipped, outputs preallocated, as for ``host_us``).

Each row times one operation twice: the implementation the namespace calls, on NumPy (CuPy)
arrays, and the public call on Arrays (unwrap, switch to the Array's backend, call, wrap).
The difference is the wrapper's overhead; the target is under 1 us.

The ratio rows (:func:`ratio_records`) time the calls a user makes on a 48x64 float32 Array
(a 64x48 transpose for ``rearrange_``) against ``np.add`` of two NumPy arrays of that shape
in the same process, rounds of the two interleaved, launches skipped and outputs allocated
as every call allocates them: the host side of a call as a multiple of NumPy's cheapest
ufunc call, a figure the machine's load cancels out of. The goal is 1.5.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ... import config
from ...namespace.boundary import compiled_hot_calls, python_hot_path


def _rows(backend: str):
    """(name, bare call, call on Arrays) for the operations the rows time."""
    import infini_cupy as xp
    from infini_cupy.namespace import data_movement, delegated, elementwise_functions
    from infini_cupy.strided.copy import rearrange_

    library = np if backend != "cuda" else __import__("cupy")
    a = library.asarray(np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32))
    b = library.asarray(np.random.default_rng(1).standard_normal((64, 64)).astype(np.float32))
    row = library.asarray(np.arange(64, dtype=np.float32))
    with config.backend(backend):
        x, y, r = xp.asarray(a), xp.asarray(b), xp.asarray(row)
    add, exp = elementwise_functions.add, elementwise_functions.exp

    def bare_setitem():
        rearrange_(a[1:], library.broadcast_to(row, (63, 64)))

    def array_setitem():
        x[1:] = r

    return [
        ("add(x, y)", lambda: add(a, b), lambda: xp.add(x, y)),
        ("x + y", lambda: add(a, b), lambda: x + y),
        ("x * 2.0", lambda: elementwise_functions.multiply(a, 2.0), lambda: x * 2.0),
        ("exp(x)", lambda: exp(a), lambda: xp.exp(x)),
        ("sum(x) (delegated)", lambda: delegated.sum(a), lambda: xp.sum(x)),
        ("permute_dims(x) (delegated)", lambda: delegated.permute_dims(a, (1, 0)),
         lambda: xp.permute_dims(x, (1, 0))),
        ("reshape(x) (a view)", lambda: data_movement.reshape(a, (32, 128)),
         lambda: xp.reshape(x, (32, 128))),
        ("x[1:] = row (rearrange_)", bare_setitem, array_setitem),
        ("x[1:] (a view)", lambda: a[1:], lambda: x[1:]),
    ]


def _wrapper_only_rows(backend: str):
    """The wrapper around implementations that do nothing: its cost alone, free of the
    implementation's (and of a loaded machine's) noise."""
    import infini_cupy as xp
    from infini_cupy.namespace import boundary

    def unary(x, /, *, out=None):
        return x

    def binary(x1, x2, /, *, out=None):
        return x1

    def reduction(x, /, *, axis=None, dtype=None, keepdims=False):
        return x

    public_unary = boundary._elementwise("unary", unary)
    public_binary = boundary._elementwise("binary", binary)
    public_reduction = boundary.compile_function(
        "reduction", "x, /, *, axis=None, dtype=None, keepdims=False", "x", reduction)
    a = np.ones(4, np.float32) if backend != "cuda" else __import__("cupy").ones(4, np.float32)
    with config.backend(backend):
        x = xp.asarray(a)
    return [
        ("no-op unary template", lambda: unary(a), lambda: public_unary(x)),
        ("no-op binary template", lambda: binary(a, a), lambda: public_binary(x, x)),
        ("no-op binary, a scalar", lambda: binary(a, 2.0), lambda: public_binary(x, 2.0)),
        ("no-op compiled (sum's sig.)", lambda: reduction(a), lambda: public_reduction(x)),
        ("no-op compiled, axis=0", lambda: reduction(a, axis=0),
         lambda: public_reduction(x, axis=0)),
    ]


RATIO_SHAPE = (48, 64)  # the launch-bound calls of the H100 page's "Launch overhead" table


def _ratio_rows(backend: str):
    """(name, call) for the ratio rows: Arrays on ``backend``'s device, plans cached."""
    import infini_cupy as xp

    library = np if backend != "cuda" else __import__("cupy")
    rng = np.random.default_rng(0)
    a, b = (library.asarray(rng.standard_normal(RATIO_SHAPE).astype(np.float32))
            for _ in range(2))
    with config.backend(backend):
        x, y = xp.asarray(a), xp.asarray(b)
        transposed = xp.empty(RATIO_SHAPE[::-1], dtype=xp.float32, device=x.device)
        z = xp.empty(RATIO_SHAPE, dtype=xp.float32, device=x.device)
    x_t = x.T
    fused = xp.fuse(lambda p, q: xp.exp(p * q + p) - q)  # four ops, one kernel

    def lazy_block():  # the same four calls deferred, then evaluated at the block's end
        with xp.lazy():
            result = xp.exp(x * y + x) - y
        return result

    return [
        ("xp.add(x, x)", lambda: xp.add(x, x)),
        ("x + y", lambda: x + y),
        ("x * 2.0", lambda: x * 2.0),
        ("xp.exp(x)", lambda: xp.exp(x)),
        ("rearrange_(y, x.T) (cached)", lambda: xp.rearrange_(transposed, x_t)),
        ("fused exp(x*y+x)-y", lambda: fused(x, y)),
        ("lazy() exp(x*y+x)-y", lazy_block),
        ("xp.add(x, y, out=z)", lambda: xp.add(x, y, out=z)),
        ("fused exp(x*y+x)-y, out=z", lambda: fused(x, y, out=z)),
        ("z += x", lambda: z.__iadd__(x)),
        ("z *= 2.0", lambda: z.__imul__(2.0)),
    ]


def _cpu_rows():
    """(name, call on ``cpu`` Arrays, the same call of NumPy on NumPy arrays): what generic
    array-API code pays on the ``cpu`` device over NumPy itself, call by call."""
    import infini_cupy as xp

    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(RATIO_SHAPE).astype(np.float32) for _ in range(2))
    c, m = np.empty_like(a), a > 0
    x, y, z, mask = (xp.asarray(v, device="cpu") for v in (a, b, c, m))
    a3 = a.reshape(RATIO_SHAPE[0], 1, RATIO_SHAPE[1])
    x3 = xp.asarray(a3, device="cpu")
    ints = rng.integers(0, 20, 100)
    v = xp.asarray(ints, device="cpu")
    rows = rng.integers(0, RATIO_SHAPE[0], 10)
    picks = xp.asarray(rows, device="cpu")
    shape = RATIO_SHAPE
    return [
        ("xp.add(x, y)", lambda: xp.add(x, y), lambda: np.add(a, b)),
        ("x * 2.0", lambda: x * 2.0, lambda: a * 2.0),
        ("x > 0", lambda: x > 0, lambda: a > 0),
        ("xp.exp(x)", lambda: xp.exp(x), lambda: np.exp(a)),
        ("xp.add(x, y, out=z)", lambda: xp.add(x, y, out=z), lambda: np.add(a, b, out=c)),
        ("np.add(x, y) (NumPy's ufunc)", lambda: np.add(x, y), lambda: np.add(a, b)),
        ("np.sum(x) (NumPy's function)", lambda: np.sum(x), lambda: np.sum(a)),
        ("np.concatenate([x, y])", lambda: np.concatenate([x, y]),
         lambda: np.concatenate([a, b])),
        ("xp.maximum(x, 0.0)", lambda: xp.maximum(x, 0.0), lambda: np.maximum(a, 0.0)),
        ("xp.where(m, x, y)", lambda: xp.where(mask, x, y), lambda: np.where(m, a, b)),
        ("xp.count_nonzero(x)", lambda: xp.count_nonzero(x), lambda: np.count_nonzero(a)),
        ("xp.zeros(shape, dtype)", lambda: xp.zeros(shape, dtype=xp.float32),
         lambda: np.zeros(shape, dtype=np.float32)),
        ("xp.empty(shape)", lambda: xp.empty(shape), lambda: np.empty(shape)),
        ("xp.zeros_like(x)", lambda: xp.zeros_like(x), lambda: np.zeros_like(a)),
        ("xp.asarray(x)", lambda: xp.asarray(x), lambda: np.asarray(a)),
        ("xp.asarray(a) (a NumPy array)", lambda: xp.asarray(a, device="cpu"),
         lambda: np.asarray(a)),
        ("xp.asarray(1.5) (a Python float)", lambda: xp.asarray(1.5), lambda: np.asarray(1.5)),
        ("x[0:4] = 1.0", lambda: x.__setitem__(slice(0, 4), 1.0),
         lambda: a.__setitem__(slice(0, 4), 1.0)),
        ("x[3, 5] = 1.0", lambda: x.__setitem__((3, 5), 1.0),
         lambda: a.__setitem__((3, 5), 1.0)),
        ("x[m] (a mask)", lambda: x[mask], lambda: a[m]),
        ("x[m] = 0.5", lambda: x.__setitem__(mask, 0.5), lambda: a.__setitem__(m, 0.5)),
        ("x.copy()", lambda: x.copy(), lambda: a.copy()),
        ("xp.astype(x, xp.float32) (its dtype)", lambda: xp.astype(x, xp.float32),
         lambda: a.astype(np.float32)),
        ("xp.clip(x, -1.0, 1.0)", lambda: xp.clip(x, -1.0, 1.0), lambda: np.clip(a, -1.0, 1.0)),
        ("xp.astype(x, xp.float64)", lambda: xp.astype(x, xp.float64),
         lambda: a.astype(np.float64)),
        ("xp.astype(x, xp.int32)", lambda: xp.astype(x, xp.int32), lambda: a.astype(np.int32)),
        ("xp.permute_dims(x, (1, 0))", lambda: xp.permute_dims(x, (1, 0)),
         lambda: np.permute_dims(a, (1, 0))),
        ("xp.squeeze(x3, axis=1)", lambda: xp.squeeze(x3, axis=1), lambda: np.squeeze(a3, axis=1)),
        ("xp.flip(x)", lambda: xp.flip(x), lambda: np.flip(a)),
        ("xp.flip(x, axis=0)", lambda: xp.flip(x, axis=0), lambda: np.flip(a, axis=0)),
        ("xp.reshape(x, (64, 48))", lambda: xp.reshape(x, (64, 48)), lambda: np.reshape(a, (64, 48))),
        ("xp.expand_dims(x, axis=0)", lambda: xp.expand_dims(x, axis=0),
         lambda: np.expand_dims(a, axis=0)),
        ("xp.moveaxis(x, 0, 1)", lambda: xp.moveaxis(x, 0, 1), lambda: np.moveaxis(a, 0, 1)),
        ("x.T", lambda: x.T, lambda: a.T),
        ("xp.concat([x, y])", lambda: xp.concat([x, y]), lambda: np.concat([a, b])),
        ("xp.concat([x, y], axis=1)", lambda: xp.concat([x, y], axis=1),
         lambda: np.concat([a, b], axis=1)),
        ("xp.stack([x, y])", lambda: xp.stack([x, y]), lambda: np.stack([a, b])),
        ("xp.tile(x, (2, 1))", lambda: xp.tile(x, (2, 1)), lambda: np.tile(a, (2, 1))),
        ("xp.repeat(x, 2, axis=0)", lambda: xp.repeat(x, 2, axis=0), lambda: np.repeat(a, 2, axis=0)),
        ("xp.roll(x, 3)", lambda: xp.roll(x, 3), lambda: np.roll(a, 3)),
        ("xp.roll(x, (1, 2), axis=(0, 1))", lambda: xp.roll(x, (1, 2), axis=(0, 1)),
         lambda: np.roll(a, (1, 2), axis=(0, 1))),
        ("x @ y.T", lambda: x @ y.T, lambda: a @ b.T),
        ("xp.result_type(x, 1.0)", lambda: xp.result_type(x, 1.0),
         lambda: np.result_type(a, 1.0)),
        ("xp.isdtype(x.dtype, kind)", lambda: xp.isdtype(x.dtype, "real floating"),
         lambda: np.isdtype(a.dtype, "real floating")),
        ("xp.finfo(x.dtype)", lambda: xp.finfo(x.dtype), lambda: np.finfo(a.dtype)),
        ("xp.sum(x, axis=1)", lambda: xp.sum(x, axis=1), lambda: np.sum(a, axis=1)),
        ("xp.max(x)", lambda: xp.max(x), lambda: np.max(a)),
        ("xp.argmax(x, axis=1)", lambda: xp.argmax(x, axis=1), lambda: np.argmax(a, axis=1)),
        ("xp.mean(x, axis=0)", lambda: xp.mean(x, axis=0), lambda: np.mean(a, axis=0)),
        ("xp.any(m)", lambda: xp.any(mask), lambda: np.any(m)),
        ("xp.take(x, i, axis=0) (10 ints)", lambda: xp.take(x, picks, axis=0),
         lambda: np.take(a, rows, axis=0)),
        ("xp.cumulative_sum(v) (100 ints)", lambda: xp.cumulative_sum(v),
         lambda: np.cumulative_sum(ints)),
        ("xp.isdtype(x.dtype, (dtypes))", lambda: xp.isdtype(x.dtype, (xp.float32, xp.float64)),
         lambda: np.isdtype(a.dtype, (np.float32, np.float64))),
        ("xp.unique_values(v) (100 ints)", lambda: xp.unique_values(v),
         lambda: np.unique_values(ints)),
        ("xp.sort(v) (100 ints)", lambda: xp.sort(v), lambda: np.sort(ints)),
        ("a softmax (generic code)", lambda: _softmax(x), lambda: _softmax(a)),
        ("a standardization (generic code)", lambda: _standardize(x), lambda: _standardize(a)),
    ]


def _softmax(v):
    """Generic array-API code, as a library writes it: the namespace from the array."""
    ns = v.__array_namespace__()
    e = ns.exp(v - ns.max(v, axis=-1, keepdims=True))
    return e / ns.sum(e, axis=-1, keepdims=True)


def _standardize(v):
    ns = v.__array_namespace__()
    return (v - ns.mean(v, axis=0)) / ns.std(v, axis=0)


def cpu_records(time_ratio) -> list[dict]:
    """One record per :func:`_cpu_rows` row: ``ratio`` to NumPy's own call, ``host_us``."""
    records = []
    for name, call, numpy_call in _cpu_rows():
        ratio, host_us = time_ratio(call, numpy_call)
        records.append({"case": f"cpu: {name}", "suite": "array", "backend": "numpy",
                        "ratio": round(ratio, 2), "host_us": round(host_us, 3),
                        "numpy_us": round(host_us / ratio, 3)})
    return records


def print_cpu(records) -> None:
    print(f"\n{'cpu Arrays against NumPy, per call':36s} {'us':>7s} {'NumPy us':>9s} "
          f"{'ratio':>6s}")
    for r in records:
        print(f"{r['case'][5:][:36]:36s} {r['host_us']:7.2f} {r['numpy_us']:9.2f} "
              f"{r['ratio']:6.2f}")


def _layer_rows(backend: str):
    """(name, call) for the layers of a cached ``xp.add(x, x)`` on ``backend``'s device, each
    row the one below and more: what each layer of the hot path costs."""
    import infini_cupy as xp
    from infini_cupy.arrays import current_allocator, empty, pointer_reader
    from infini_cupy.elementwise import kernels, short_path
    from infini_cupy.runtime.launch import launch

    library = np if backend != "cuda" else __import__("cupy")
    a = library.asarray(np.random.default_rng(0).standard_normal(RATIO_SHAPE).astype(np.float32))
    with config.backend(backend):
        x = xp.asarray(a)
    for _ in range(2):
        xp.add(x, x)  # planned, remembered, then found by the Arrays' layout ids
    known = short_path.by_ids.get(("add", x._k, x._k))
    if known is None:  # pragma: no cover - the numpy backend: no kernel
        return []
    out = empty(backend, known.shape, known.dtype_out)
    kernel_launch, pointer = known.launch, pointer_reader(backend)
    packed = (out, a, a) + (out,) * known.pad + known.tail + (short_path.FLAG_ON,)
    natives, addresses = (a, a), (x._d, x._d)

    def launch_packed():
        launch(kernels.SOURCE, kernel_launch.kernel, kernel_launch.grid, kernel_launch.block,
               packed, backend=backend)

    def with_output():
        current_allocator()
        pointer(empty(backend, known.shape, known.dtype_out))
        launch_packed()

    if known.fast is not None:
        def checked():  # the emulator's specialised call
            known.fast(natives, addresses)
    else:
        def checked():  # a GPU's: short_path.run
            short_path.run(known, natives, None, backend)
    return [
        ("layer: launch(), arguments packed", launch_packed),
        ("layer: + the output and its pointer", with_output),
        ("layer: + checks, packing (known.fast)", checked),
        ("layer: + the key's lookup (by_ids)", lambda: (
            short_path.by_ids.get(("add", x._k or 0, x._k or 0)), checked())),
        ("layer: + Arrays in, Array out (Python)", lambda: xp.add(x, x)),
        ("layer: all compiled (hot_calls.c)" if compiled_hot_calls() is not None
         else "layer: as it runs (no compiled path here)", lambda: xp.add(x, x)),
    ]


def ratio_records(backend: str, time_ratio) -> list[dict]:
    """One record per ratio row: ``ratio`` to ``np.add`` of two NumPy arrays of
    :data:`RATIO_SHAPE`, and ``host_us``; ``time_ratio(call, reference)`` gives both."""
    a = np.ones(RATIO_SHAPE, np.float32)
    b = np.ones(RATIO_SHAPE, np.float32)

    def reference():
        np.add(a, b)

    records = []
    for name, call in _ratio_rows(backend) + _layer_rows(backend):
        # the Python layers with the compiled hot path set aside; every other row as it runs
        with python_hot_path() if "layer: +" in name else contextlib.nullcontext():
            ratio, host_us = time_ratio(call, reference)
        records.append({"case": f"Array: {name}", "suite": "array", "backend": backend,
                        "ratio": round(ratio, 2), "host_us": round(host_us, 3)})
    return records


def print_ratios(records) -> None:
    print(f"\n{'Host side per call (launch skipped)':36s} {'us':>7s} {'x np.add':>9s}")
    for r in records:
        print(f"{r['case'][7:][:36]:36s} {r['host_us']:7.2f} {r['ratio']:9.2f}")


def overhead_records(backend: str, time_call) -> list[dict]:
    """One record per operation: ``bare_us``, ``array_us`` and ``overhead_us``;
    ``time_call(call)`` gives microseconds per call with launches skipped."""
    records = []
    for name, bare, wrapped in _wrapper_only_rows(backend) + _rows(backend):
        with config.backend(backend):
            bare_us, array_us = time_call(bare), time_call(wrapped)
        records.append({"case": f"Array: {name}", "suite": "array", "backend": backend,
                        "bare_us": round(bare_us, 3), "array_us": round(array_us, 3),
                        "overhead_us": round(array_us - bare_us, 3)})
    return records


def print_records(records) -> None:
    print(f"\n{'Array wrapper, per call':30s} {'bare us':>8s} {'Array us':>9s} {'overhead':>9s}")
    for r in records:
        print(f"{r['case'][7:][:30]:30s} {r['bare_us']:8.2f} {r['array_us']:9.2f} "
              f"{r['overhead_us']:+9.2f}")
