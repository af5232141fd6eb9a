"""The cuda backend's launches through the driver's ``cuLaunchKernel`` on an argument buffer
packed once: ``INFINI_CUPY_LAUNCH=driver`` calls NVIDIA's ``cuda.bindings.driver``;
``INFINI_CUPY_LAUNCH=compiled`` calls ``hot_calls.launch_kernel`` (:mod:`.cuda_compiled`:
``libcuda``'s entry point called from C), the same records serving both.

Per thread and (device, source, name expression, grid, block, dynamic shared memory) a
:class:`DriverLaunch` is made once: the ``CUfunction`` handle of CuPy's loaded ``Function``
(``Function.ptr``: modules stay loaded through ``cupy.RawModule``, per device, by
:mod:`.cuda`), the grid and block as ints, and ``kernelParams`` as ``cuLaunchKernel`` takes it
in its int form: the address of a ``void*[]`` whose entries point to one ctypes value per
parameter. A call writes only what changed: every pointer (CuPy hands a new
``MemoryPointer`` per call), a scalar only when it is not the object the last call passed (a
plan's structs are the same objects call after call). The driver copies the values at the
launch, so the next call may overwrite them; records are per thread, so two threads never
write one buffer. The first record of a thread on a device runs
``cupy.cuda.runtime.memGetInfo()``, what CuPy's ``_ensure_context`` runs once per thread and
device: the driver launches in the thread's current context, which a thread that only ever
launched has not made.

The launch goes on CuPy's current stream (``stream.ptr``, 0 for the legacy default stream,
as CuPy launches); a ``CUresult`` other than success goes to
``cupy.cuda.driver.check_status``, which raises the ``CUDADriverError`` CuPy's own launch
raises. Under stream capture the driver records the copied values in the graph node, as for
CuPy's launch.
"""

from __future__ import annotations

import ctypes
import importlib
import threading

import numpy as np

from .. import config
from . import cuda_compiled

# cuda-bindings of the CUDA major version CuPy runs on (CuPy itself does not need it)
INSTALL = "pip install 'cuda-bindings>=13,<14' (CUDA 13) or 'cuda-bindings>=12.8,<13' (CUDA 12)"


class DriverLaunch:
    """One kernel's launch on one device, ready but for its pointers: the function handle,
    grid and block, dynamic shared memory and the packed parameters (``values``, ctypes
    objects kept alive here; ``params``, the ``void*[]`` of their addresses). ``entry``:
    (the function handle's type, ``cuLaunchKernel``) of the mechanism."""

    __slots__ = ("function", "grid", "block", "shared_mem", "values", "views", "params",
                 "address", "last", "run")

    def __init__(self, entry, handle: int, grid, block, shared_mem: int, args):
        handle_type, self.run = entry
        self.function = handle_type(handle)
        self.grid, self.block, self.shared_mem = grid, block, shared_mem
        self.values, self.views = [], []
        for arg in args:
            if isinstance(arg, np.generic):
                value = (ctypes.c_char * arg.dtype.itemsize)()
                self.views.append(np.frombuffer(value, arg.dtype).reshape(()))
            else:  # a MemoryPointer: the device address alone
                value = ctypes.c_void_p(0)
                self.views.append(None)
            self.values.append(value)
        self.params = (ctypes.c_void_p * max(1, len(args)))(
            *(ctypes.addressof(v) for v in self.values))
        self.address = ctypes.addressof(self.params)
        self.last = [None] * len(args)

    def write(self, args) -> None:
        """Write this call's arguments into the buffer: pointers always, scalars when new."""
        last, values, views = self.last, self.values, self.views
        for index, arg in enumerate(args):
            view = views[index]
            if view is None:
                values[index].value = arg.ptr
            elif arg is not last[index]:
                if arg.dtype != view.dtype:  # same size, another type: its bytes as they are
                    view = views[index] = view.view(arg.dtype)
                view[()] = arg
                last[index] = arg


class _Records(threading.local):
    records: dict | None = None
    contexts: frozenset = frozenset()  # devices whose context this thread has made current


_local = _Records()


def forget() -> None:
    """Drop every thread's records (kernels were unloaded, or the device side changed)."""
    global _local
    _local = _Records()


def _bindings(cupy):
    """(``CUfunction``, ``cuLaunchKernel``) of NVIDIA's cuda-bindings."""
    try:
        driver = importlib.import_module("cuda.bindings.driver")
    except ImportError as error:
        raise ImportError(f"{config.LAUNCH_VAR}=driver launches through NVIDIA's "
                          f"cuda-bindings: {INSTALL}") from error
    return driver.CUfunction, driver.cuLaunchKernel


def _compiled(cupy):
    """(``int``, ``hot_calls.launch_kernel``): libcuda's ``cuLaunchKernel`` called from C."""
    return int, cuda_compiled.driver(cupy).launch_kernel


ENTRIES = {"driver": _bindings, "compiled": _compiled}  # mechanism -> its entry, given cupy


def ensure_context(cupy, device: int) -> None:
    """A context current on this thread for ``device`` (the current one), as CuPy's
    ``_ensure_context`` makes it once per thread and device: the driver launches in the
    thread's current context, which a thread that only ever launched has not made."""
    if device not in _local.contexts:
        cupy.cuda.runtime.memGetInfo()
        _local.contexts |= {device}


def _record(cupy, device: int, function, key, grid, block, shared_mem, args,
            mechanism: str) -> DriverLaunch:
    """This thread's record of ``key``, made on its first launch (the mechanism's entry
    found, a context made current on this thread and device)."""
    records = _local.records
    if records is None:
        records = _local.records = {}
    record = records.get(key)
    if record is None:
        entry = ENTRIES[mechanism](cupy)
        ensure_context(cupy, device)
        record = records[key] = DriverLaunch(entry, function.ptr, grid, block, shared_mem,
                                             args)
    return record


def launch(cupy, device: int, function, key, grid: tuple, block: tuple, args,
           shared_mem: int, mechanism: str = "driver") -> None:
    """Launch ``function`` (CuPy's ``Function`` on ``device``, the current one) with
    ``args`` (``MemoryPointer``s and NumPy scalars, in parameter order) on CuPy's current
    stream through ``mechanism``'s ``cuLaunchKernel`` (:data:`ENTRIES`). ``key`` names the
    launch record (mechanism, device, source, name expression, grid, block, shared memory)."""
    records = _local.records  # inline: a lookup and a write are all a repeat does here
    record = None if records is None else records.get(key)
    if record is None:
        record = _record(cupy, device, function, key, grid, block, shared_mem, args, mechanism)
    record.write(args)
    status, = record.run(record.function, grid[0], grid[1], grid[2], block[0], block[1],
                         block[2], shared_mem, cupy.cuda.get_current_stream().ptr,
                         record.address, 0)
    if status:
        cupy.cuda.driver.check_status(int(status))
