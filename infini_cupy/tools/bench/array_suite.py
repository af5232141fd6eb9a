"""The bench's Array rows: what the ``infini_cupy.Array`` wrapper costs per call over the bare
implementation on native arrays (launches skipped, outputs preallocated, as for ``host_us``).

Each row times one operation twice: the implementation the namespace calls, on NumPy (CuPy)
arrays, and the public call on Arrays (unwrap, switch to the Array's backend, call, wrap).
The difference is the wrapper's overhead; the target is under 1 us.
"""

from __future__ import annotations

import numpy as np

from ... import config


def _rows(backend: str):
    """(name, bare call, call on Arrays) for the operations the rows time."""
    import infini_cupy as xp
    from infini_cupy.namespace import delegated, elementwise_functions
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
