"""The one entry point for launching a kernel, whatever the backend, and the Launcher
interface the ``cuda`` and ``emulate`` launchers implement.

Everything above this call (planning, caching, argument packing, grid sizes) is shared by
the ``cuda`` and ``emulate`` backends: only the launcher below differs.

Arguments, in kernel parameter order:
- an array (``cupy.ndarray`` for cuda, ``numpy.ndarray`` for emulate): passed as a pointer to
  its element 0 (``a.data.ptr`` / the NumPy data pointer), which with negative strides is not
  the lowest address; the emulator bounds-checks accesses against each array's byte extent;
- a NumPy scalar (``np.int64(3)``, ``np.float32(2)``): passed by value;
- a NumPy structured scalar (``np.void``, built with ``align=True``): a struct passed by value.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Protocol

from . import cuda
from .emulate import launcher as emulate
from .structs import dim3


class _Hooks(threading.local):
    """This thread's recorders and whether it skips launches (class attributes: defaults)."""

    recorders: tuple = ()
    skipping = False


_hooks = _Hooks()


class Launcher(Protocol):
    """What a backend provides to run kernels of ``kernels_src/<source>`` (the modules
    :mod:`infini_cupy.runtime.cuda` and :mod:`infini_cupy.runtime.emulate.launcher`)."""

    def launch(self, source: str, name: str, grid: tuple, block: tuple, args,
               shared_mem: int = 0) -> None:
        """Run name expression ``name``: ``grid`` blocks of ``block`` threads (each an int
        or up to 3 ints, as :func:`.structs.dim3` reads them)."""

    def prepare(self, source: str, names: tuple[str, ...]) -> None:
        """Compile ``names`` ahead of their first launch."""


LAUNCHERS: dict[str, Launcher] = {"cuda": cuda, "emulate": emulate}


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
    >>> from infini_cupy.runtime.launch import recording
    >>> with xp.backend("emulate"), recording() as launches:
    ...     _ = xp.rearrange(np.zeros((4, 3)).T)
    >>> [r.name for r in launches]  # doctest: +SKIP
    ['rearrange<8, 1, 1, 0>']
    """
    records: list[LaunchRecord] = []
    _hooks.recorders += (records,)
    try:
        yield records
    finally:
        _hooks.recorders = tuple(r for r in _hooks.recorders if r is not records)


@contextlib.contextmanager
def launches_skipped():
    """Record launches but run none inside the ``with`` block (this thread only): what is
    left of a call is its host side, which the bench times."""
    previous = _hooks.skipping
    _hooks.skipping = True
    try:
        yield
    finally:
        _hooks.skipping = previous


@contextlib.contextmanager
def launcher_replaced(backend: str, launcher: Launcher):
    """Send ``backend``'s launches to ``launcher`` inside the block (every thread): how the
    tests run the emulated suite through the cuda launcher and a stand-in for CuPy."""
    previous = LAUNCHERS[backend]
    LAUNCHERS[backend] = launcher
    try:
        yield launcher
    finally:
        LAUNCHERS[backend] = previous


def launch(source: str, name: str, grid, block, args, *, backend: str, shared_mem: int = 0):
    """Launch kernel ``name`` (a name expression) of ``kernels_src/<source>``: ``grid``
    blocks of ``block`` threads, each an int or up to 3 ints."""
    hooks = _hooks
    if hooks.recorders:
        record = LaunchRecord(source, name, dim3(grid), dim3(block), backend)
        for records in hooks.recorders:
            records.append(record)
    if hooks.skipping:
        return
    launcher = LAUNCHERS.get(backend)
    if launcher is None:
        raise ValueError(f"backend {backend!r} does not launch kernels")
    launcher.launch(source, name, grid, block, args, shared_mem)


def prepare(source: str, names, *, backend: str) -> None:
    """Compile ``names`` ahead of their first launch (emulate: in one shared library)."""
    LAUNCHERS[backend].prepare(source, tuple(names))
