"""One entry point for launching a kernel, whatever the backend.

Everything above this call (planning, caching, argument packing, grid sizes) is shared by
the ``cuda`` and ``emulate`` backends: only the launcher below differs.

Arguments, in kernel parameter order:
- an array (``cupy.ndarray`` for cuda, ``numpy.ndarray`` for emulate): passed as a pointer to
  its element 0 (``a.data.ptr`` / ``a.ctypes.data``), which with negative strides is not the
  lowest address; the emulator bounds-checks accesses against each array's byte extent;
- a NumPy scalar (``np.int64(3)``, ``np.float32(2)``): passed by value;
- a NumPy structured scalar (``np.void``, built with ``align=True``): a struct passed by value.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

_recorders = threading.local()


@dataclass(frozen=True)
class LaunchRecord:
    """One kernel launch, as :func:`recording` saw it."""

    source: str
    name: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    backend: str


@contextlib.contextmanager
def recording():
    """Collect a :class:`LaunchRecord` for every launch this thread makes in the block.

    >>> import numpy as np, infini_cupy as xp
    >>> from infini_cupy.launch import recording
    >>> with xp.backend("emulate"), recording() as launches:
    ...     _ = xp.rearrange(np.zeros((4, 3)).T)
    >>> [r.name for r in launches]  # doctest: +SKIP
    ['rearrange<8, 1, 1, 0>']
    """
    stack = getattr(_recorders, "stack", None)
    if stack is None:
        stack = _recorders.stack = []
    records: list[LaunchRecord] = []
    stack.append(records)
    try:
        yield records
    finally:
        stack.remove(records)


def _dim3(d) -> tuple[int, int, int]:
    if isinstance(d, int):
        return (d, 1, 1)
    d = tuple(int(v) for v in d)
    return d + (1,) * (3 - len(d))


def launch(source: str, name: str, grid, block, args, *, backend: str, shared_mem: int = 0):
    """Launch kernel ``name`` (a name expression) of ``kernels_src/<source>``."""
    grid, block = _dim3(grid), _dim3(block)
    stack = getattr(_recorders, "stack", None)
    if stack:
        for records in stack:
            records.append(LaunchRecord(source, name, grid, block, backend))
    if backend == "cuda":
        from . import runtime

        runtime.launch(source, name, grid, block, args, shared_mem)
    elif backend == "emulate":
        from . import emulator

        emulator.launch(source, name, grid, block, args, shared_mem)
    else:
        raise ValueError(f"backend {backend!r} does not launch kernels")


def prepare(source: str, names, *, backend: str) -> None:
    """Compile ``names`` ahead of their first launch (emulate: in one shared library)."""
    if backend == "cuda":
        from . import runtime

        for name in names:
            runtime.get_function(source, name)
    elif backend == "emulate":
        from . import emulator

        emulator.prepare(source, tuple(names))
