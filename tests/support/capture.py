"""CUDA stream capture as the stand-in for CuPy meets it (``capturing()``): inside the block,
on this thread, the cuda launcher may only launch. A compile, a file access, a module load,
an allocation of an output or temporary, or a host synchronization raises, as each would
fail (or be wrong) while a stream is being captured into a CUDA graph.

What it watches: NVRTC compiles (``cuda.compile_program``), every ``open`` of a file outside
the emulator's run of a launch (Python's audit hook), the stand-in's module loads,
allocations and synchronizations, and the package's allocations of outputs and temporaries
(``arrays.outputs_from``).
"""

from __future__ import annotations

import contextlib
import sys

from infini_cupy import arrays
from infini_cupy.runtime import cuda
from tests.support import cupy_standin

_FILE_EVENTS = {"open", "os.listdir", "os.scandir", "os.mkdir", "os.rename", "os.remove"}


def _audit(event: str, args) -> None:
    thread = cupy_standin._thread
    if thread.capturing and not thread.in_kernel and event in _FILE_EVENTS:
        thread.capturing = False  # the error's own formatting may read files
        raise cupy_standin.CUDADriverError(
            cupy_standin.CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
            f"file access during capture: {event} {args[0]!r}")


sys.addaudithook(_audit)  # audit hooks stay for the process; it acts only while capturing


def _refused(what):
    def refuse(*args, **kwargs):
        cupy_standin.refuse_in_capture(what)
        raise AssertionError("unreachable")

    return refuse


@contextlib.contextmanager
def capturing():
    """Capture mode on this thread (the stand-in must be installed)."""
    thread = cupy_standin._thread
    real_compile = cuda.compile_program
    cuda.compile_program = _refused("an NVRTC compile")
    thread.capturing = True
    try:
        with arrays.outputs_from(_refused("an allocation of an output or temporary")):
            yield
    finally:
        thread.capturing = False
        cuda.compile_program = real_compile
