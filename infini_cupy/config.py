"""Every setting the package reads from the environment, and the backend switch.

| variable                              | what it sets                                              | default                  |
| ------------------------------------- | --------------------------------------------------------- | ------------------------ |
| ``INFINI_CUPY_BACKEND``               | backend for NumPy arrays: numpy, emulate, cuda            | ``numpy``                |
| ``INFINI_CUPY_CACHE_DIR``             | compiled kernels: cubins, emulator libraries              | ``~/.cache/infini_cupy`` |
| ``INFINI_CUPY_EMULATOR_THREADS``      | worker threads of the emulator                            | the CPUs available       |
| ``INFINI_CUPY_EMULATOR_THREAD_ORDER`` | emulator's thread order: forward, reverse, shuffle[:SEED] | ``forward``              |
| ``INFINI_CUPY_LAZY``                  | ``1``: elementwise calls deferred everywhere (read at import) | ``0`` (off)            |
| ``INFINI_CUPY_LAUNCH``                | how the cuda backend launches: cupy, driver (read at import) | ``cupy``                 |
| ``INFINI_CUPY_NATIVE``                | ``0``: no compiled hot path, the Python one alone (read once) | ``1`` (built with g++) |

Backends:

| backend   | arrays          | what runs                                              |
| --------- | --------------- | ------------------------------------------------------ |
| ``cuda``    | ``cupy.ndarray``  | our kernels, compiled by NVRTC, launched through CuPy |
| ``emulate`` | ``numpy.ndarray`` | the same kernel sources compiled by g++, run on the CPU |
| ``numpy``   | ``numpy.ndarray`` | plain NumPy                                            |

CuPy arrays always take ``cuda``. NumPy arrays take ``numpy`` unless ``INFINI_CUPY_BACKEND``
says otherwise or the code runs inside ``backend(name)``.

>>> from infini_cupy import config
>>> with config.backend("emulate"):
...     config.get_backend()
'emulate'
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from pathlib import Path

BACKENDS = ("cuda", "emulate", "numpy")
BACKEND_VAR = "INFINI_CUPY_BACKEND"
CACHE_DIR_VAR = "INFINI_CUPY_CACHE_DIR"
EMULATOR_THREADS_VAR = "INFINI_CUPY_EMULATOR_THREADS"
THREAD_ORDER_VAR = "INFINI_CUPY_EMULATOR_THREAD_ORDER"
EMULATOR_OPTIMIZE_VAR = "INFINI_CUPY_EMULATOR_OPTIMIZE"
THREAD_ORDERS = ("forward", "reverse", "shuffle")
LAZY_VAR = "INFINI_CUPY_LAZY"
LAUNCH_VAR = "INFINI_CUPY_LAUNCH"
NATIVE_VAR = "INFINI_CUPY_NATIVE"  # runtime/native.py: the compiled hot path
# cupy: CuPy's Function object packs the arguments per call; driver: cuda.bindings'
# cuLaunchKernel with a buffer packed once per launch record (runtime/cuda_driver.py);
# compiled: libcuda's cuLaunchKernel called from runtime/compiled_launch.c (runtime/cuda_compiled.py)
LAUNCH_MECHANISMS = ("cupy", "driver", "compiled")

# None: no override in force, fall back to the environment variable.
_override: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "infini_cupy_backend", default=None
)


def env_switch(var: str, default: bool) -> bool:
    """The on/off environment variable ``var``: ``1``/``true``/``on`` or ``0``/``false``/
    ``off`` (any case); unset or empty, ``default``; ValueError for anything else."""
    env = os.environ.get(var, "").strip().lower()
    if env not in ("", "0", "1", "false", "true", "off", "on"):
        raise ValueError(f"{var}={env!r}: expected 1 (on) or 0 (off)")
    return default if env == "" else env in ("1", "true", "on")


def _lazy_default() -> bool:
    return env_switch(LAZY_VAR, False)


# Deferred elementwise calls (infini_cupy.lazy): off unless $INFINI_CUPY_LAZY says on; read
# once, at import, since every Array call asks.
_lazy: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "infini_cupy_lazy", default=_lazy_default()
)
lazy_enabled = _lazy.get  # () -> bool: are elementwise calls on Arrays deferred here?


def enter_lazy(enabled: bool):
    """Defer (or not) elementwise calls until :func:`exit_lazy` with the returned token."""
    return _lazy.set(bool(enabled))


def exit_lazy(token) -> None:
    _lazy.reset(token)


def launch_mechanism() -> str:
    """``$INFINI_CUPY_LAUNCH``: how the cuda backend launches a kernel, ``cupy`` (CuPy's
    function object, the default), ``driver`` (``cuda.bindings``' ``cuLaunchKernel`` on a
    pre-packed argument buffer) or ``compiled`` (libcuda's ``cuLaunchKernel`` called from the
    compiled hot path, which also runs repeated elementwise calls of Arrays in C).

    >>> launch_mechanism()                                       # doctest: +SKIP
    'cupy'
    """
    name = os.environ.get(LAUNCH_VAR, "").strip().lower() or LAUNCH_MECHANISMS[0]
    if name not in LAUNCH_MECHANISMS:
        raise ValueError(f"{LAUNCH_VAR}={name!r}: expected one of {', '.join(LAUNCH_MECHANISMS)}")
    return name


# The mechanism the cuda launcher uses now: $INFINI_CUPY_LAUNCH, switched by
# runtime.cuda.launch_mechanism(); runtime/hot_calls.c reads it per call (a list it holds).
launch_in_force: list = [launch_mechanism()]


def _check_name(name: str) -> str:
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")
    return name


# $INFINI_CUPY_BACKEND read per call from os.environ's own mapping: os.environ.get encodes the
# key and decodes the value each time (0.6 us of a 0.75 us get_backend); the mapping is what
# os.environ reads and writes, so a change made through os.environ is seen at the next call.
try:
    _ENVIRON, _BACKEND_KEY = os.environ._data, os.environ.encodekey(BACKEND_VAR)
except AttributeError:  # pragma: no cover - an os.environ without them: the public way
    _ENVIRON, _BACKEND_KEY = None, None


@functools.lru_cache(maxsize=16)
def _backend_named(raw) -> str:
    """The backend ``$INFINI_CUPY_BACKEND``'s value ``raw`` (as the mapping holds it) names."""
    name = (os.environ.decodevalue(raw) if _ENVIRON is not None else raw).strip() or "numpy"
    if name not in BACKENDS:
        raise ValueError(
            f"{BACKEND_VAR}={name!r} is not a backend; expected one of {', '.join(BACKENDS)}"
        )
    return name


def get_backend() -> str:
    """The backend asked for: the innermost ``backend()`` block's, else
    ``$INFINI_CUPY_BACKEND``, else ``numpy``.

    It decides where calls on plain NumPy arrays run; CuPy arrays run on ``cuda`` whatever
    it says, and asking for ``cuda`` here makes NumPy inputs an error rather than a silent
    CPU computation. Arrays carry their own device and ignore it.

    Parameters
    ----------
    None

    Returns
    -------
    str
        ``"numpy"``, ``"emulate"`` or ``"cuda"``.

    Raises
    ------
    ValueError
        A ``$INFINI_CUPY_BACKEND`` that names no backend.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> with xp.backend("emulate"):
    ...     xp.get_backend()
    'emulate'
    """
    name = _override.get()
    if name is None:
        raw = (_ENVIRON.get(_BACKEND_KEY) if _ENVIRON is not None
               else os.environ.get(BACKEND_VAR))
        return "numpy" if raw is None else _backend_named(raw)
    return name


@contextlib.contextmanager
def backend(name: str):
    """Run NumPy arrays through ``name`` inside the ``with`` block.

    A context manager that sets :func:`get_backend` inside it (innermost block first): where
    calls on plain NumPy arrays run. CuPy arrays run on ``cuda`` whatever it says; Arrays
    carry their own device and ignore it.

    Parameters
    ----------
    name : {"numpy", "emulate", "cuda"}
        ``"numpy"``: NumPy computes; ``"emulate"``: our kernels, compiled for the host;
        ``"cuda"``: NumPy inputs are an error rather than a silent CPU computation.

    Yields
    ------
    str
        ``name``.

    Raises
    ------
    ValueError
        An unknown backend name.

    Examples
    --------
    >>> import numpy as np, infini_cupy as xp
    >>> with xp.backend("emulate"):
    ...     y = xp.rearrange(np.arange(6).reshape(2, 3).T)
    ...     xp.get_backend()
    'emulate'
    >>> y
    array([[0, 3],
           [1, 4],
           [2, 5]])
    """
    token = _override.set(_check_name(name))
    try:
        yield name
    finally:
        _override.reset(token)


def enter_backend(name: str):
    """``backend(name)`` without the context manager, for the Array's per-call switch (a few
    tens of ns): returns the token that :func:`exit_backend` takes. ``name`` is not checked."""
    return _override.set(name)


def exit_backend(token) -> None:
    _override.reset(token)


def cache_dir() -> Path:
    """``$INFINI_CUPY_CACHE_DIR``, by default ``~/.cache/infini_cupy``."""
    env = os.environ.get(CACHE_DIR_VAR, "").strip()
    return Path(env) if env else Path.home() / ".cache" / "infini_cupy"


def emulator_threads(default: int) -> int:
    """``$INFINI_CUPY_EMULATOR_THREADS`` (a positive integer), else ``default``."""
    env = os.environ.get(EMULATOR_THREADS_VAR, "").strip()
    if not env:
        return default
    try:
        threads = int(env)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ValueError(f"{EMULATOR_THREADS_VAR}={env!r}: expected a positive number of threads")
    return threads


# g++'s optimization level for the emulator's kernel libraries: -O1 has most of -O2's speed
# at about half its compile time; -O0 compiles big batches of kernels 2.5 times faster and
# runs them about 2.5 times slower (for a batch of many kernels run on small arrays)
EMULATOR_OPTIMIZE_LEVELS = ("1", "0", "2")
_optimize_override: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "infini_cupy_emulator_optimize", default=None)


def emulator_optimization() -> str:
    """g++'s optimization level for the emulator's kernels compiled now: that of an enclosing
    :func:`emulator_optimized` block, else ``$INFINI_CUPY_EMULATOR_OPTIMIZE``: ``"1"``
    (default), ``"0"`` or ``"2"``. The results are the same bits at every level (ISO C++
    without fast-math or contraction); a library's cache key holds it.

    >>> emulator_optimization()                                  # doctest: +SKIP
    '1'
    """
    level = _optimize_override.get()
    if level is not None:
        return level
    env = os.environ.get(EMULATOR_OPTIMIZE_VAR, "").strip()
    if env and env not in EMULATOR_OPTIMIZE_LEVELS:
        raise ValueError(f"{EMULATOR_OPTIMIZE_VAR}={env!r}: expected one of "
                         f"{', '.join(EMULATOR_OPTIMIZE_LEVELS)} (g++'s -O level)")
    return env or EMULATOR_OPTIMIZE_LEVELS[0]


@contextlib.contextmanager
def emulator_optimized(level: str):
    """The emulator's kernels compiled in this block (this thread or task) at g++'s ``-O``
    ``level``, whatever ``$INFINI_CUPY_EMULATOR_OPTIMIZE`` says: the test suite builds its
    batches of kernels at ``"0"``."""
    if level not in EMULATOR_OPTIMIZE_LEVELS:
        raise ValueError(f"emulator optimization level {level!r}: expected one of "
                         f"{', '.join(EMULATOR_OPTIMIZE_LEVELS)}")
    token = _optimize_override.set(level)
    try:
        yield
    finally:
        _optimize_override.reset(token)


def emulator_thread_order() -> tuple[str, int | None]:
    """``$INFINI_CUPY_EMULATOR_THREAD_ORDER``: (``forward``, ``reverse`` or ``shuffle``, the
    shuffle's seed or None), read at every launch. The emulator runs a block's threads one at
    a time between barriers, starting and resuming them in this order; a kernel whose result
    changes with it misses a barrier.

    >>> emulator_thread_order()                                  # doctest: +SKIP
    ('forward', None)
    """
    env = os.environ.get(THREAD_ORDER_VAR, "").strip().lower()
    order, _, seed = (env or "forward").partition(":")
    if order not in THREAD_ORDERS or (seed and (order != "shuffle" or not seed.isdigit())):
        raise ValueError(
            f"{THREAD_ORDER_VAR}={env!r}: expected one of {', '.join(THREAD_ORDERS)}, "
            "or shuffle:SEED (a non-negative integer)"
        )
    return order, int(seed) if seed else None
