"""The demo: realistic copies and elementwise ops through our kernels, checked against NumPy.

Runs on the GPU when CuPy finds one, else on the CPU emulator (the same kernel sources,
planning and launch code), and prints what it ran and whether each result matched.
"""

from __future__ import annotations

import contextlib
import logging
import time

import numpy as np

from .. import config
from ..arrays import gpu_available
from ..runtime.availability import cuda_unavailable
from ..runtime.launch import recording

HELP = "run copies and elementwise ops on the GPU (else in emulation) and check them"


def add_arguments(parser) -> None:
    parser.add_argument("--backend", choices=("auto", "cuda", "emulate"), default="auto",
                        help="where to run: cuda (a GPU; without one, the cause and exit "
                             "status 2), emulate (the kernels on the CPU), auto (cuda when a "
                             "GPU is present, else emulate)")


def run(args) -> int:
    return run_demo(args.backend)


def _cases(rng):
    """(description, function of the namespace and a to-device converter, NumPy oracle)."""
    import infini_cupy as xp

    nchw = rng.standard_normal((2, 16, 12, 12), dtype=np.float32)
    mat = rng.standard_normal((67, 45), dtype=np.float32)
    half = rng.standard_normal((8, 5, 33), dtype=np.float32).astype(np.float16)
    row = rng.integers(-100, 100, size=(1, 40), dtype=np.int8)
    yield ("transpose 67x45 float32", lambda d: xp.rearrange(d(mat).T), mat.T)
    yield ("NCHW -> NHWC float32", lambda d: xp.rearrange(d(nchw), "n c h w -> n (h w c)"),
           nchw.transpose(0, 2, 3, 1).reshape(2, -1))
    yield ("reversed, strided float16 (3-D)", lambda d: xp.rearrange(d(half)[::-1, :, ::2]),
           half[::-1, :, ::2])
    yield ("broadcast int8 row to 30x40", lambda d: xp.rearrange(xp.broadcast_to(d(row), (30, 40))),
           np.broadcast_to(row, (30, 40)))
    heads = rng.standard_normal((4, 8, 16, 10), dtype=np.float32)
    yield ("attention heads merge b h s d -> b s (h d)",
           lambda d: xp.rearrange(d(heads), "b h s d -> b s (h d)"),
           heads.transpose(0, 2, 1, 3).reshape(4, 16, 80))
    yield ("add, broadcast (67,45) + (45,)", lambda d: xp.add(d(mat), d(mat[0])), mat + mat[0])
    yield ("exp of a transposed view", lambda d: xp.exp(d(mat).T), np.exp(mat.T))
    yield ("multiply int8 by a Python scalar", lambda d: xp.multiply(d(row), 3), row * np.int8(3))


@contextlib.contextmanager
def _kernel_loads():
    """The ``infini_cupy`` logger's kernel-load records during the block (a list of them)."""
    records, logger = [], logging.getLogger("infini_cupy")
    handler = logging.Handler(logging.INFO)
    handler.emit = records.append
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False  # the demo prints its own summary of them
    try:
        yield records
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def _timing_note(records) -> str:
    """What the call's milliseconds include besides the call itself."""
    if any("compiled" in r.getMessage() for r in records):
        return "incl. compile"
    return "incl. load" if records else ""


def run_demo(which: str = "auto") -> int:
    if which == "auto":
        which = "cuda" if gpu_available() else "emulate"
    if which == "cuda":
        cause = cuda_unavailable()
        if cause is not None:
            print(f"demo --backend cuda: {cause}")
            return 2
        import cupy

        to_device, to_host = cupy.asarray, cupy.asnumpy
        where = f"GPU ({cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()})"
    else:
        to_device, to_host = (lambda a: a), np.asarray
        where = "CPU emulator (no GPU found: kernels compiled with g++, run with CUDA semantics)"
    print(f"infini_cupy demo on the {where}")
    failures = 0
    rng = np.random.default_rng(0)
    with config.backend(which):
        for description, run, expected in _cases(rng):
            start = time.perf_counter()
            with recording() as launches, _kernel_loads() as loads:
                got = run(to_device)
            got = to_host(got)
            ms = (time.perf_counter() - start) * 1e3
            kernels = ", ".join(r.name for r in launches) or "none (a view)"
            ok = got.shape == expected.shape and got.dtype == expected.dtype and np.allclose(
                got, expected, rtol=1e-6, atol=0, equal_nan=True)
            failures += not ok
            print(f"  {'ok  ' if ok else 'FAIL'} {description:46s} {str(got.shape):16s} "
                  f"{ms:7.1f} ms {_timing_note(loads):13s}  kernels: {kernels}"
                  f"{'' if ok else '  <- differs from NumPy'}")
    print("ms: the call's wall time; 'incl. compile': it compiled a kernel variant first (once "
          "per machine, then kept on disk); 'incl. load': it loaded one from the disk cache")
    print("all results matched NumPy" if not failures else f"{failures} result(s) differ from NumPy")
    return 1 if failures else 0
