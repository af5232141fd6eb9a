"""The ``emulate`` launcher: our CUDA sources compiled by g++ and run on the CPU.

The same ``kernels_src`` text NVRTC compiles is built with ``INFINI_EMULATION`` defined
(``kernels_src/emulation/cuda_emulation.h`` supplies the CUDA built-ins). Blocks run in
parallel on worker threads; the threads of a block are fibers with a real ``__syncthreads``.
Every ``ic::ld``/``ic::st`` is checked against the arrays passed to the launch before it
happens, so a bad access raises :class:`~infini_cupy.errors.KernelFault` instead of
corrupting memory, and can be traced for the coalescing profiler.

>>> import numpy as np
>>> from infini_cupy.runtime.emulate import launcher as emulator
>>> x = np.arange(100, dtype=np.float32); y = np.zeros_like(x)
>>> emulator.launch("/abs/path/kernels.cu", "copy<float>", (1, 1, 1), (128, 1, 1),
...                 (y, x, np.int64(x.size)))  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import itertools
import os
import signal
import threading
import weakref
from dataclasses import dataclass, field

import numpy as np

from ... import config
from ...arrays import byte_extent, is_writeable, numpy_data_pointer
from ...errors import KernelFault
from ...perf.devices import MAX_DYNAMIC_SHARED  # the H100's cudaDevAttrMaxSharedMemoryPerBlockOptin
from ..structs import argument_bytes, dim3, pack_arguments
from . import build as emulator_build

MAX_BLOCK_THREADS = 1024

# One record per checked global access or traced shared-memory access (``shared``); the
# runtime's TraceRecord has this layout.
TRACE_DTYPE = np.dtype({
    "names": ["address", "block", "bytes", "thread", "access", "is_write", "shared"],
    "formats": ["<u8", "<u8", "<u4", "<u4", "<u4", "?", "?"],
    "offsets": [0, 8, 16, 20, 24, 28, 29],
    "itemsize": 32,
})

_FAULT_KINDS = {1: "out-of-bounds", 2: "misaligned", 3: "read-only", 4: "barrier deadlock",
                5: "shared-memory overrun"}
_INTERRUPTED = 6  # runtime.cpp: INTERRUPTED, a launch stopped by Ctrl-C
_THREAD_ORDERS = {"forward": 0, "reverse": 1, "shuffle": 2}  # runtime.cpp: ThreadOrder
# Launches of at least this many threads (milliseconds of work) stop at Ctrl-C: the
# interpreter runs its SIGINT handler only once the call into the runtime returns
_INTERRUPTIBLE_THREADS = 1 << 20
_launch_count = itertools.count()  # seeds shuffles: each launch its own permutations


class _Fault(ctypes.Structure):  # runtime.cpp: emu::Fault
    _fields_ = [
        ("kind", ctypes.c_int32), ("block", ctypes.c_uint32 * 3), ("thread", ctypes.c_uint32 * 3),
        ("bytes", ctypes.c_uint32), ("address", ctypes.c_uint64), ("is_write", ctypes.c_int32),
        ("pad", ctypes.c_int32),
    ]


@dataclass(frozen=True)
class _Kernel:
    source: str
    name: str
    entry: int  # address of emu_entry_<i>(void **args)
    param_sizes: tuple[int, ...]
    library: object  # keeps the ctypes library (and so the entry) alive


# (resolved source path, name expression) -> kernel, for every library loaded in this process
_kernels: dict[tuple[str, str], _Kernel] = {}
_kernels_lock = threading.Lock()


def prepare(source: str, names) -> None:
    """Build (or load from the disk cache) one library holding exactly ``names``.

    Nothing happens when every name is already loaded in this process.
    """
    names = tuple(dict.fromkeys(names))
    path = str(emulator_build.source_path(source))
    if all((path, name) in _kernels for name in names):
        return
    loaded = emulator_build.kernel_library(source, tuple(sorted(names)))
    with _kernels_lock:
        for name, (entry, sizes, library) in loaded.items():
            _kernels[(path, name)] = _Kernel(source, name, entry, sizes, library)


def forget_loaded() -> None:
    """Forget this process's loaded kernels (they stay mapped): the next ``prepare`` goes
    back to the disk cache. For tests of the cache."""
    with _kernels_lock:
        _kernels.clear()


def _kernel(source: str, name: str) -> _Kernel:
    key = (str(emulator_build.source_path(source)), name)
    kernel = _kernels.get(key)
    if kernel is None:
        prepare(source, (name,))
        kernel = _kernels[key]
    return kernel


def _check_config(grid, block) -> None:
    """CUDA's launch limits, so emulation rejects what a GPU rejects."""
    threads = block[0] * block[1] * block[2]
    if min(grid) < 1 or min(block) < 1:
        raise ValueError(f"invalid launch configuration: grid {grid}, block {block} (0 in a dim)")
    if threads > MAX_BLOCK_THREADS or block[0] > 1024 or block[1] > 1024 or block[2] > 64:
        raise ValueError(
            f"invalid launch configuration: block {block} ({threads} threads); CUDA allows "
            f"at most {MAX_BLOCK_THREADS} threads, block dims up to (1024, 1024, 64)"
        )
    if grid[0] >= 2**31 or grid[1] > 65535 or grid[2] > 65535:
        raise ValueError(
            f"invalid launch configuration: grid {grid}; CUDA allows up to (2**31-1, 65535, 65535)"
        )


def _pack(kernel: _Kernel, args):
    """cuLaunchKernel-style packed arguments: ``void **`` to each value, plus the buffers.

    Returns (storage to keep alive, pointer array, buffers as flat (lo, hi, writable) rows).
    """
    args = tuple(args)
    if len(args) != len(kernel.param_sizes):
        raise TypeError(
            f"kernel {kernel.name} takes {len(kernel.param_sizes)} arguments, got {len(args)}"
        )
    values, buffers = [], []
    for index, (arg, size) in enumerate(zip(args, kernel.param_sizes)):
        if isinstance(arg, np.ndarray):
            lo, hi = byte_extent(arg)
            buffers += (lo, hi, int(is_writeable(arg)))
        elif not isinstance(arg, np.generic):
            raise TypeError(
                f"argument {index} of kernel {kernel.name}: expected a NumPy array or NumPy "
                f"scalar, got {type(arg).__name__}"
            )
        value = argument_bytes(arg, numpy_data_pointer)
        if len(value) != size:
            what = (f"a {arg.dtype} array (passed as an 8-byte pointer)"
                    if isinstance(arg, np.ndarray)
                    else f"a {type(arg).__name__} scalar of {len(value)} bytes")
            raise TypeError(
                f"argument {index} of kernel {kernel.name}: the parameter has {size} bytes, "
                f"got {what}"
            )
        values.append(value)
    storage, pointers, _ = pack_arguments(values)
    return storage, pointers, (ctypes.c_uint64 * max(1, len(buffers)))(*buffers)


_CPU_COUNT = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def _worker_count(n_blocks: int) -> int:
    return max(1, min(config.emulator_threads(_CPU_COUNT or 1), n_blocks))


def launch(source: str, name: str, grid, block, args, shared_mem: int = 0) -> None:
    """Run kernel ``name`` (a name expression of ``kernels_src/<source>``) to completion.

    Raises KernelFault naming kernel, block, thread and address for an out-of-bounds,
    misaligned or read-only access (which never happens), a barrier deadlock, or a write
    outside the ``shared_mem`` bytes of dynamic shared memory (which each block gets poisoned,
    as a GPU leaves it undefined). The threads of a block run in the order
    ``config.emulator_thread_order()`` names.
    """
    grid, block = dim3(grid), dim3(block)
    _check_config(grid, block)
    if not 0 <= shared_mem <= MAX_DYNAMIC_SHARED:
        raise ValueError(f"kernel {name}: {shared_mem} bytes of dynamic shared memory; the "
                         f"emulated device allows 0 to {MAX_DYNAMIC_SHARED}")
    order, seed = config.emulator_thread_order()
    kernel = _kernel(source, name)
    storage, pointers, buffers = _pack(kernel, args)
    traces = _active_traces.get()
    lib = emulator_build.runtime_library()
    fault = _Fault()
    trace_ptr, trace_len = ctypes.c_void_p(), ctypes.c_uint64()
    n_blocks = grid[0] * grid[1] * grid[2]
    lib.emu_launch(
        kernel.entry, pointers, (ctypes.c_uint32 * 3)(*grid), (ctypes.c_uint32 * 3)(*block),
        buffers, len(buffers) // 3, _worker_count(n_blocks), int(bool(traces)),
        ctypes.byref(fault), ctypes.byref(trace_ptr), ctypes.byref(trace_len),
        _THREAD_ORDERS[order], next(_launch_count) if seed is None else seed, shared_mem,
        _interruptible(n_blocks * block[0] * block[1] * block[2]),
    )
    del storage  # the launch is over: the argument values may go
    records = _take_records(lib, trace_ptr, trace_len.value) if traces else None
    if fault.kind == _INTERRUPTED:
        raise KeyboardInterrupt(f"kernel {name} stopped: the blocks not yet run were left")
    if fault.kind:
        raise _fault_error(kernel, fault, args)
    if records is not None:
        shared = records["shared"]
        if shared.any():
            launch_trace = LaunchTrace(source, name, grid, block, records[~shared], records[shared])
        else:
            launch_trace = LaunchTrace(source, name, grid, block, records)
        for trace in traces:
            trace.launches.append(launch_trace)


def _interruptible(threads: int) -> bool:
    """Whether a launch of ``threads`` threads stops at Ctrl-C: a long one, from the main
    thread (where Python raises KeyboardInterrupt), while SIGINT has Python's own handler (a
    handler of the program's is left to run as it would)."""
    return (threads >= _INTERRUPTIBLE_THREADS
            and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler)


def _take_records(lib, pointer: ctypes.c_void_p, count: int) -> np.ndarray:
    """The runtime's malloc'ed records as an array that frees them when collected (no copy:
    traces are large)."""
    if count == 0:
        lib.emu_free(pointer)
        return np.zeros(0, TRACE_DTYPE)
    raw = (ctypes.c_char * (count * TRACE_DTYPE.itemsize)).from_address(pointer.value)
    weakref.finalize(raw, lib.emu_free, pointer.value)
    return np.frombuffer(raw, TRACE_DTYPE)


def _nearest_buffer(address: int, size: int, args) -> str:
    """Which array argument the access was closest to, and how far outside it lies."""
    best = None
    for index, arg in enumerate(args):
        if not isinstance(arg, np.ndarray):
            continue
        lo, hi = byte_extent(arg)
        distance = max(lo - address, address + size - hi, 0)
        if best is None or distance < best[0]:
            best = (distance, index, arg, lo, hi)
    if best is None:
        return "no array arguments"
    distance, index, arg, lo, hi = best
    if address + size > hi:
        where = f"the access ends {address + size - hi} bytes past its end"
    elif address < lo:
        where = f"the access starts {lo - address} bytes before its start"
    else:
        where = "the access lies inside it"
    return (
        f"nearest buffer: argument {index} ({arg.dtype} array, shape {arg.shape}) "
        f"at [{lo:#x}, {hi:#x}) ({hi - lo} bytes); {where}"
    )


def _fault_error(kernel: _Kernel, fault: _Fault, args) -> KernelFault:
    kind = _FAULT_KINDS.get(fault.kind, f"fault {fault.kind}")
    block, thread = tuple(fault.block), tuple(fault.thread)
    where = f"in kernel {kernel.name} ({kernel.source}), block {block}, thread {thread}"
    if fault.kind == 5:
        message = (
            f"shared-memory overrun {where}: a write at {fault.address:#x} lies outside the "
            "launch's dynamic shared memory (found after the block ran)"
        )
    elif fault.kind == 4:
        message = (
            f"barrier deadlock {where}: the threads still running wait at different "
            "barriers (__syncthreads and __syncwarp), which hangs or is undefined on a GPU"
        )
    else:
        access = "write" if fault.is_write else "read"
        message = f"{kind} {access} of {fault.bytes} bytes at {fault.address:#x} {where}"
        if fault.kind == 2:
            align = min(fault.bytes & -fault.bytes, 32)
            message += f": a {fault.bytes}-byte access needs {align}-byte alignment"
        elif fault.kind == 3:
            message += ": every array covering it is read-only"
        message += "; " + _nearest_buffer(fault.address, fault.bytes, args)
    error = KernelFault(message)
    error.kind, error.kernel, error.block, error.thread = kind, kernel.name, block, thread
    error.address, error.bytes, error.is_write = fault.address, fault.bytes, bool(fault.is_write)
    return error


# ---- tracing


def direction_ranks(records: np.ndarray) -> np.ndarray:
    """The k of "the k-th read (write) of its thread" for every record: reads and writes are
    numbered apart, so a thread's reads line up with its warp's even when lanes differ in how
    many reads precede their writes. Records come grouped by (block, thread), in program order."""
    n = records.size
    thread_start = np.r_[True, (records["thread"][1:] != records["thread"][:-1])
                         | (records["block"][1:] != records["block"][:-1])]
    starts = np.flatnonzero(thread_start)
    run = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, n]))
    rank = np.empty(n, np.int64)
    for is_write in (False, True):
        mine = records["is_write"] == is_write
        count = np.cumsum(mine)  # this direction's records up to and including each one
        before_run = (count - mine)[starts]  # ...before each thread's first record
        rank[mine] = (count - 1 - before_run[run])[mine]
    return rank


@dataclass(frozen=True)
class LaunchTrace:
    """Every checked global access of one launch, and its shared-memory accesses."""

    source: str
    name: str  # name expression
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    accesses: np.ndarray  # TRACE_DTYPE records, sorted by (block, thread, access)
    # lds/sts records likewise; addresses are the emulator's, with the GPU's offsets mod 128
    shared: np.ndarray = field(default_factory=lambda: np.zeros(0, TRACE_DTYPE))


@dataclass
class Trace:
    """What ``tracing()`` collects: one LaunchTrace per launch, in launch order."""

    launches: list[LaunchTrace] = field(default_factory=list)


# The traces collecting launches in this context (nested tracing() blocks each get them).
_active_traces: contextvars.ContextVar[tuple[Trace, ...]] = contextvars.ContextVar(
    "infini_cupy_emulator_traces", default=()
)


@contextlib.contextmanager
def tracing():
    """Record every checked access of the launches inside the ``with`` block.

    Fields of each record: ``address``, ``bytes``, ``block`` (linear block index),
    ``thread`` (linear thread index in the block), ``access`` (the k-th global access of that
    thread), ``is_write``; shared-memory accesses (``ic::lds``/``ic::sts``) likewise in
    ``LaunchTrace.shared``, numbered apart.

    >>> with emulator.tracing() as trace:  # doctest: +SKIP
    ...     emulator.launch(source, "copy<float>", 1, 32, (y, x, np.int64(32)))
    >>> trace.launches[0].accesses["address"]  # doctest: +SKIP
    """
    trace = Trace()
    token = _active_traces.set(_active_traces.get() + (trace,))
    try:
        yield trace
    finally:
        _active_traces.reset(token)
