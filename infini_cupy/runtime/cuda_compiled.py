"""The cuda backend's third launch mechanism (``INFINI_CUPY_LAUNCH=compiled``): the driver's
``cuLaunchKernel`` called from the compiled hot path (``runtime/compiled_launch.c``) through its
address in ``libcuda.so.1``, on parameters packed once.

What takes it:

- A repeated one-launch elementwise call of Arrays (``xp.add(x, y)``, ``x + y``,
  ``xp.exp(x)``; one array and a Python or NumPy scalar, ``x * 2.0``; into ``out=`` or in
  place, ``z += x``; not casts or staged copies) runs in C from the key's lookup to the
  launch. Its plan keeps a launch record per context
  (``short_path.compiled_launch_record``, as ``known.compiled_launch``): the kernel's
  ``CUfunction`` on that device, grid, block and every parameter packed as bytes (the vector
  flag off and on), the four pointer slots zero. Per call C checks that the record is this
  thread's current context's (``cuCtxGetCurrent``) and the inputs are on its device and aligned,
  allocates the output with ``cupy.ndarray`` (CuPy's pool, on CuPy's current device), reads
  CuPy's current stream, copies the bytes to a buffer on its stack, writes the four pointers
  and launches (a scalar's value in bytes made once per scalar object; ``out=`` checked for
  its device, alignment and overlap as the Python way checks it, nothing allocated).
  Anything else (another context, a recording thread, an allocator of
  ``arrays.outputs_from``, an overlap) goes the Python way, which makes the record for the
  new context.
- A repeated fused call of Arrays (and scalars) with one output (``namespace/fusion.py``
  ``compiled_fused_record``) runs in C the same way, its pointer slots after the other
  parameters, scalar arguments packed once per their objects.
- A repeated ``rearrange_(y, x)`` of two Arrays runs in C too (``hot_calls.rearrange``): the
  copy's launch record (``strided.copy.compiled_copy_record``, in :data:`copy_records` under
  the Arrays' layout ids and pointers mod 32) holds the kernel, grid, block, dynamic shared
  memory, the struct arguments packed and the byte extents; C checks context, devices and
  overlap and launches with the two pointers written in.
- Every other launch (casts, staged copies, first calls) goes through :mod:`.cuda_driver`'s
  per-thread records with ``hot_calls.launch_kernel`` in place of ``cuda.bindings``'
  ``cuLaunchKernel``: no cuda-bindings needed.

The driver copies the parameters at the launch, as for the other mechanisms; the stream is
CuPy's current one (``get_current_stream().ptr``, 0 for the legacy default stream), so capture,
streams and CuPy's stream-ordered pool work as with CuPy's launch. A ``CUresult`` other than
success goes to ``cupy.cuda.driver.check_status``, which raises CuPy's ``CUDADriverError``.

Tests without a GPU replace libcuda's two entry points with the driver stand-in's
(``tests/support/driver_standin.py``, :func:`entry_points_replaced`): C calls them through the
same addresses.
"""

from __future__ import annotations

import contextlib
import ctypes
import sys

from .. import config
from . import native
from .availability import LIBCUDA
from .recent import RecentCalls

ENTRY_POINTS = ("cuLaunchKernel", "cuCtxGetCurrent")  # what compiled_launch.c calls, in this order
MECHANISM = "compiled"  # its name in config.LAUNCH_MECHANISMS


def libcuda_entry_points() -> tuple[int, int]:
    """The addresses of :data:`ENTRY_POINTS` in the NVIDIA driver's library."""
    library = ctypes.CDLL(LIBCUDA)
    return tuple(ctypes.cast(getattr(library, name), ctypes.c_void_p).value
                 for name in ENTRY_POINTS)


_entry_points = [libcuda_entry_points]  # () -> the addresses; tests put the stand-in's
_configured: list = []  # [(cupy, the configured module, its generation)] once set
# (y's layout id, x's, their pointers mod 32) -> a copy's launch record (strided.copy's
# compiled_copy_record): what compiled_launch.c's rearrange(y, x) looks up
copy_records = RecentCalls()


@contextlib.contextmanager
def entry_points_replaced(provider):
    """C calls the entry points ``provider()`` gives (their addresses, in the order of
    :data:`ENTRY_POINTS`) inside the block: a stand-in for the driver's library."""
    previous, _entry_points[0] = _entry_points[0], provider
    forget()
    try:
        yield
    finally:
        _entry_points[0] = previous
        forget()


def forget() -> None:
    """Set the driver again at the next launch (kernels unloaded, the device side changed):
    C launches nothing until then, and launch records made before are stale from now on."""
    _configured.clear()
    module = native.loaded()
    if module is not None:
        module.forget_driver()


def driver(cupy):
    """``hot_calls`` with its driver set for ``cupy``'s device side (once per device side);
    ImportError where the compiled hot path is not available (the reason from
    :func:`.native.status`)."""
    configured = _configured[0] if _configured else None
    if configured is not None and configured[0] is cupy:
        return configured[1]
    module = native.hot_calls()
    if module is None:
        raise ImportError(f"{config.LAUNCH_VAR}={MECHANISM} launches from the compiled hot "
                          f"path, which this process does not have: {native.status()}")
    launch, context = _entry_points[0]()
    generation = module.set_driver(launch, context, config.launch_in_force, MECHANISM,
                                   cupy.cuda.driver.check_status, cupy.ndarray,
                                   cupy.cuda.get_current_stream, copy_records)
    _configured[:] = [(cupy, module, generation)]
    return module


def generation() -> int | None:
    """The generation of the driver set now (a launch record of another one is stale)."""
    return _configured[0][2] if _configured else None


def packed_parameters(values, pointers: int, pointers_last: bool = False) -> tuple[bytes, bytes]:
    """(each parameter's offset as uint32 bytes, the parameters' bytes) of ``pointers`` zero
    pointer slots followed by ``values`` (NumPy scalars and structs: their bytes, by value),
    or the slots after the values (``pointers_last``: a fused kernel's), each at a multiple
    of 8 bytes: a launch record's parameters, which compiled_launch.c copies per call with the
    pointers written in at their offsets."""
    raws = [value.tobytes() for value in values]
    slots = [bytes(8)] * pointers
    offsets, chunks, at = [], [], 0
    for raw in (raws + slots if pointers_last else slots + raws):
        at = -(-at // 8) * 8
        offsets.append(at)
        chunks.append((at, raw))
        at += len(raw)
    packed = bytearray(at)
    for at, raw in chunks:
        packed[at:at + len(raw)] = raw
    return b"".join(offset.to_bytes(4, sys.byteorder) for offset in offsets), bytes(packed)


def fits(module, offsets: bytes, packed: bytes) -> bool:
    """The parameters fit compiled_launch.c's stack buffer (else the Python way launches)."""
    return len(packed) <= module.PARAMS_BYTES and len(offsets) // 4 <= module.PARAMS_COUNT
