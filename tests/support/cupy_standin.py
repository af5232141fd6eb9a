"""A stand-in for CuPy, as strict as CuPy 14.2 where the library meets it, so that the
``cuda`` backend runs without a GPU: under ``pytest --backend cuda-standin`` it is ``cupy``
(:func:`as_cupy`), Arrays hold its device arrays and every launch goes through
``infini_cupy/runtime/cuda.py`` to it, and then runs in the emulator.

What it models (read from CuPy's ``cupy/_core/raw.pyx``, ``cupy/cuda/function.pyx``,
``cupy/_core/_scalar.pyx`` and ``cupy_backends/cuda/api/runtime.pyx``):

- devices with ids and compute capabilities, the current device of each thread
  (``runtime.getDevice``/``setDevice``, ``with Device(i)``), the opt-in shared memory limit;
- a CUDA context per thread and device: the driver-level calls (``driver.*``) fail with
  ``CUDA_ERROR_INVALID_CONTEXT`` on a thread that has none current, as a thread whose memory
  came from CuPy's pool does; ``RawModule`` loads and ``RawKernel`` launches make one current
  first, as CuPy's ``_ensure_context`` does;
- ``ndarray`` (``cupy/_core/core.pyx``): host memory in a block of a stand-in memory pool
  (``cupy/cuda/memory.pyx``: 512-byte units, 256-byte aligned blocks), ``.data`` a
  ``MemoryPointer`` to element 0, ``.device``, shape, strides, ``__cuda_array_interface__``
  (version 3, the current stream), ``.get()``; no implicit conversion to NumPy, NumPy operands
  refused (``Unsupported type``); routines CuPy has run NumPy's on the host views;
  ``ndarray(shape, dtype, memptr, strides, order)``, ``astype``, ``copy``, ``asarray``/
  ``array`` (a NumPy array byte-swapped to little-endian), ``asnumpy``, ``__dlpack__`` and
  ``from_dlpack`` with the checks of CuPy 14.2's ``core.pyx``, ``_dtype.pyx``, ``dlpack.pyx``
  (tests/runtime/test_standin_cupy14.py names each);
- streams (``cupy/cuda/stream.pyx``): ``Stream``, ``Stream.null``, ``get_current_stream``;
- ``RawModule(path=...)``: keyword arguments only, one of ``code``/``path``; the file is a
  cubin or PTX; ``get_function(name)`` takes a ``str`` only (Cython's ``str name``), finds
  the symbol in the binary and loads the module on the current device, refusing (as a driver
  may) a cubin whose ELF tables run past its end or that was built for another architecture;
- ``RawKernel.max_dynamic_shared_size_bytes`` and ``shared_size_bytes``: as CuPy's
  properties, they load the module on the current device when it is not loaded there yet
  (making a context current, as the load does) and otherwise call the driver with no context
  made current, which fails on a thread that has none (``CUDA_ERROR_INVALID_CONTEXT``);
- ``RawKernel(grid, block, args, shared_mem=)``: grid and block tuples; each argument by
  CuPy's ``_pointer`` rules (``None``, a ``cupy.ndarray`` or a ``MemoryPointer`` (on the
  current device: a GPU would fault on another's memory), a NumPy array of size one, Python
  and NumPy scalars (a Python int from 2**63 up a uint64: ``_scalar.pyx``);
  anything else TypeError), their number and byte sizes against the kernel's parameters
  (a cubin's .nv.info, as the driver reads them; a PTX module's ``.param`` list), dynamic shared memory above 48 KiB only after the kernel was opted in on
  that device, never above the device's limit.

The launch runs in the emulator: the launcher's cache entry beside the binary
(``<key>.json``) names the source and name expression. A cubin's parameters are its
.nv.info's (``runtime/elf.py parameter_sizes``); its static shared memory, where asked,
its PTX's (compiled by NVRTC for the device's architecture).
"""

from __future__ import annotations

import collections
import contextlib
import functools
import inspect
import itertools
import json
import math
import mmap
import numbers
import operator
import sys
import threading
import time
import types
import warnings
import weakref
from pathlib import Path

import numpy as np

from infini_cupy.arrays import numpy_data_pointer
from infini_cupy.namespace.dlpack_bfloat16 import to_dlpack
from infini_cupy.runtime import cuda, elf, nvrtc
from infini_cupy.runtime.emulate import launcher as emulator
from tests.support.ptx import ptx_parameters, static_shared_bytes

STATIC_SHARED_LIMIT = 49152
# A device newer than any architecture NVRTC knows: the launcher hands it PTX (which the
# stand-in reads its parameters from, no second compile). The suite's stand-in run uses it.
NEWER_THAN_NVRTC = 990
OPTIN_LIMIT = 232448  # an H100's cudaDevAttrMaxSharedMemoryPerBlockOptin
DEVICE_BYTES = 80 << 30  # an H100's totalGlobalMem
# Blocks from this size up are lazily mapped host pages (only the pages a kernel touches are
# ever made), so that views with strides past 2**32 need no such host memory.
LAZY_BLOCK_BYTES = 1 << 30
MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000)  # Linux's value; Python < 3.13 lacks it
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_INVALID_IMAGE = 200
CUDA_ERROR_INVALID_CONTEXT = 201
CUDA_ERROR_NO_BINARY_FOR_GPU = 209
CUDA_ERROR_INVALID_HANDLE = 400
CUDA_ERROR_ILLEGAL_ADDRESS = 700


class CUDADriverError(RuntimeError):
    def __init__(self, status: int, what: str):
        super().__init__(f"{what}: CUDA driver error {status}")
        self.status = status


class _ThreadState(threading.local):
    device = 0
    contexts: frozenset = frozenset()  # devices with a context current on this thread
    capturing = False  # stream capture (tests/support/capture.py): loads and syncs fail
    in_kernel = False  # the emulator runs a launch (its own files are not the launcher's)
    streams: dict = {}  # device -> the stream made current there (else the null stream)

    def __init__(self):
        # device.pyx _ThreadLocalStack: the devices that Device.__enter__ left, this thread's
        self.device_stack = []
        # stream.pyx _ThreadLocal: per device the streams `with` made current (the default
        # stream below them), and the device of each `with` (what its exit pops)
        self.stream_stacks, self.stream_devices = {}, []

    def stream_of(self, device: int) -> Stream:
        return self.streams.get(device, Stream.null)

    def set_stream(self, stream: Stream) -> None:
        """``_ThreadLocal.set_current_stream``: current on its device (the null stream's:
        the current device)."""
        device = self.device if stream.device_id == -1 else stream.device_id
        self.streams = {**self.streams, device: stream}


CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900
CUDA_ERROR_UNKNOWN = 999
c_failures: list = []  # what failed inside a C entry point's model (an emulator error)


def refuse_in_capture(what: str) -> None:
    """What a capturing stream refuses (a module load, an allocation, a synchronization)."""
    if _thread.capturing:
        raise CUDADriverError(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, f"{what} during capture")


_thread = _ThreadState()


def _check_ordinal(device: int, what: str) -> int:
    if not 0 <= device < len(_side.capabilities):
        raise CUDADriverError(101, f"{what}({device})")  # cudaErrorInvalidDevice
    return device


class Device:
    """``cupy.cuda.Device`` (``cupy/cuda/device.pyx``): ``int(device)`` (the current device
    if None), not checked until used: entering it, ``use()`` or ``compute_capability`` on a
    device that does not exist fail as ``cudaSetDevice``/``cudaDeviceGetAttribute`` do."""

    def __init__(self, device=None):
        self.id = _thread.device if device is None else int(device)

    @property
    def compute_capability(self) -> str:
        return str(_side.capabilities[_check_ordinal(self.id, "cudaDeviceGetAttribute")])

    def __enter__(self):
        """The device left is pushed on this thread's stack (``_ThreadLocalStack``), not on
        this object: one Device may be entered by several threads at once."""
        _thread.device_stack.append(_thread.device)
        _thread.device = _check_ordinal(self.id, "cudaSetDevice")
        return self

    def use(self) -> Device:
        _thread.device = _check_ordinal(self.id, "cudaSetDevice")
        return self

    def __exit__(self, *exc):
        _thread.device = _thread.device_stack.pop()

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    __hash__ = None  # device.pyx: __richcmp__ and no __hash__: CuPy's Device is unhashable

    def __int__(self):
        return self.id

    def synchronize(self) -> None:
        """``cudaDeviceSynchronize`` on this device (refused during capture)."""
        refuse_in_capture("cudaDeviceSynchronize")
        _refuse_device_sync(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id} (stand-in)>"


class _Runtime:
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97

    @staticmethod
    def getDevice() -> int:
        return _thread.device

    @staticmethod
    def setDevice(device: int) -> None:
        _thread.device = _check_ordinal(int(device), "cudaSetDevice")

    @staticmethod
    def getDeviceCount() -> int:
        return len(_side.capabilities)

    @staticmethod
    def deviceSynchronize() -> None:
        refuse_in_capture("cudaDeviceSynchronize")
        _refuse_device_sync(_thread.device)

    @staticmethod
    def streamSynchronize(stream: int) -> None:
        refuse_in_capture("cudaStreamSynchronize")
        if stream in streams:
            _refuse_while_captured(streams[stream], "cudaStreamSynchronize")

    @staticmethod
    def getDeviceProperties(device: int) -> dict:
        return {"name": f"stand-in sm_{_side.capabilities[device]}".encode(),
                "totalGlobalMem": DEVICE_BYTES}

    @staticmethod
    def memcpyAsync(dst: int, src: int, size: int, kind: int, stream: int) -> None:
        """``cudaMemcpyAsync`` between device addresses (the stand-in's blocks); the copy is
        done when it returns."""
        if kind not in (MEMCPY_DEVICE_TO_DEVICE, MEMCPY_DEFAULT):
            raise NotImplementedError(f"stand-in cudaMemcpyAsync kind {kind}")
        _bytes_at(dst, size)[...] = _bytes_at(src, size).copy()

    @staticmethod
    def memGetInfo() -> tuple[int, int]:
        """``cudaMemGetInfo``: (free, total) bytes of the current device; what the pool holds,
        in use or cached, is not free (the driver sees the pool's blocks as allocated). A
        runtime call, so it makes the device's context current (what CuPy's
        ``_ensure_context`` calls it for)."""
        _ensure_context()
        return DEVICE_BYTES - _side.pool.total_bytes(), DEVICE_BYTES

    @staticmethod
    def driverGetVersion() -> int:
        return 13000

    @staticmethod
    def runtimeGetVersion() -> int:
        return 13000

    @staticmethod
    def deviceGetAttribute(attribute: int, device: int) -> int:
        if attribute != _Runtime.cudaDevAttrMaxSharedMemoryPerBlockOptin:
            raise NotImplementedError(f"stand-in device attribute {attribute}")
        return OPTIN_LIMIT


def _refuse_device_sync(device: int) -> None:
    """A device-wide synchronization while one of its streams captures fails (it would
    wait for work that is only recorded) and invalidates that capture."""
    for stream in list(capturing_streams):
        if stream.device_id == device:
            _refuse_while_captured(stream, "cudaDeviceSynchronize")


def _ensure_context() -> None:
    """CuPy's ``runtime._ensure_context``: make the current device's context current here."""
    _thread.contexts = _thread.contexts | {_thread.device}


def _require_context(what: str) -> None:
    if _thread.device not in _thread.contexts:
        raise CUDADriverError(CUDA_ERROR_INVALID_CONTEXT, what)


class _Driver:
    """The driver calls CuPy exposes, as its typed Cython signatures take them."""

    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
    CUDADriverError = CUDADriverError

    @staticmethod
    def moduleLoadData(image: bytes) -> int:
        _require_context("cuModuleLoadData")
        return id(image)

    @staticmethod
    def moduleGetFunction(module: int, funcname: str) -> int:
        if type(funcname) is not str:
            raise TypeError(f"Argument 'funcname' has incorrect type (expected str, got "
                            f"{type(funcname).__name__})")
        _require_context("cuModuleGetFunction")
        return hash((module, funcname))

    @staticmethod
    def check_status(status: int) -> None:
        """CuPy's ``check_status``: a CUresult other than success as CuPy's error (the
        stand-in's own failure behind a ``CUDA_ERROR_UNKNOWN`` of a C entry point chained to
        it: ``driver_standin.c_entry_points``)."""
        if status != 0:
            cause = c_failures.pop() if status == CUDA_ERROR_UNKNOWN and c_failures else None
            raise CUDADriverError(status, "CUDA driver call") from cause

    @staticmethod
    def launchKernel(*args) -> None:
        _require_context("cuLaunchKernel")
        raise NotImplementedError("the stand-in launches through RawKernel only")


# ---------------------------------------------------------------- device memory and arrays
# _dtype.pyx all_type_chars: the builtin dtypes CuPy computes with, by type char (a kind test
# would take long doubles, and ml_dtypes' float8_e5m2, whose kind is 'f')
ALL_TYPE_CHARS = "?bhilqBHILQefdFD"
NPY_VOID = np.dtype("V1").num  # a structured or void dtype's type number (ml_dtypes' differ)
# CuPy's pool (cupy/cuda/memory.pyx): sizes rounded up to ALLOCATION_UNIT_SIZE, blocks
# aligned to 256 bytes (cudaMalloc's granule, what tests/support/device.py keeps).
ALLOCATION_UNIT_SIZE = 512
DEVICE_ALIGN = 256
MEMCPY_DEVICE_TO_DEVICE, MEMCPY_DEFAULT = 3, 4  # cudaMemcpyKind
DLPACK_CPU, DLPACK_CUDA = 1, 2  # dlpack.h's kDLCPU, kDLCUDA
CUDA_STREAM_LEGACY = 1  # cupy/cuda/stream.pyx get_default_stream_ptr: cudaStreamLegacy
CUDA_STREAM_PER_THREAD = 2  # cudaStreamPerThread, Stream.ptds's pointer


class _Memory:
    """``cupy.cuda.memory.PooledMemory``: one block of a device's memory (host bytes here,
    256-byte aligned); given back to its pool when nothing holds it. Every live block is in
    ``memories`` (the driver stand-in finds a pointer's block there)."""

    def __init__(self, size: int, device: int, pool: MemoryPool):
        if size >= LAZY_BLOCK_BYTES and sys.platform.startswith("linux"):
            # page-aligned, and nothing is committed until a kernel writes there
            raw = np.frombuffer(mmap.mmap(-1, size + DEVICE_ALIGN, flags=mmap.MAP_PRIVATE
                                          | mmap.MAP_ANONYMOUS | MAP_NORESERVE), np.uint8)
        else:
            raw = np.empty(size + DEVICE_ALIGN, np.uint8)
        start = -numpy_data_pointer(raw) % DEVICE_ALIGN
        self.buffer = raw[start:start + size]
        self.ptr, self.size, self.device_id = numpy_data_pointer(self.buffer), size, device
        pool._taken(self)
        memories.add(self)

    @classmethod
    def zero(cls, device: int) -> _Memory:
        """``Memory(0)``: what the pool gives for 0 bytes (``SingleDeviceMemoryPool._malloc``:
        ``if size == 0: return MemoryPointer(Memory(0), 0)``), at address 0, in no pool."""
        self = cls.__new__(cls)
        self.buffer, self.ptr, self.size, self.device_id = np.empty(0, np.uint8), 0, 0, device
        return self

    @classmethod
    def borrowed(cls, host: np.ndarray, device: int) -> _Memory:
        """Memory that is not the pool's: a host array's bytes, seen as ``device``'s."""
        self = cls.__new__(cls)
        self.buffer, self.ptr, self.size = host, numpy_data_pointer(host), host.nbytes
        self.device_id = device
        memories.add(self)
        return self


memories: weakref.WeakSet = weakref.WeakSet()  # every live block: what a pointer points into


def _bytes_at(pointer: int, size: int) -> np.ndarray:
    """The ``size`` bytes at device address ``pointer``, which must lie in one live block."""
    for mem in list(memories):
        if mem.ptr <= pointer and pointer + size <= mem.ptr + mem.size \
                and mem.buffer.flags.c_contiguous:
            start = pointer - mem.ptr
            return mem.buffer.view(np.uint8).reshape(-1)[start:start + size]
    raise CUDADriverError(CUDA_ERROR_INVALID_VALUE, f"{size} bytes at {pointer:#x}")


def _from_cuda_array_interface(x) -> ndarray:
    """``_convert_object_with_cuda_array_interface``: a device array over the memory that
    ``x.__cuda_array_interface__`` describes (it must lie in a live block)."""
    face = x.__cuda_array_interface__
    pointer = face["data"][0]
    if np.dtype(face["typestr"]).byteorder == ">":
        raise ValueError("CuPy does not support the big-endian byte-order")
    if 0 in face["shape"]:  # core.pyx: nbytes 0, on the current device (v2+: pointer 0)
        return ndarray(face["shape"], np.dtype(face["typestr"]),
                       memptr=MemoryPointer(_Memory.zero(_thread.device), 0),
                       strides=face.get("strides"))
    for mem in list(memories):
        if mem.ptr <= pointer < mem.ptr + max(mem.size, 1) and mem.buffer.flags.c_contiguous:
            host = np.ndarray(face["shape"], np.dtype(face["typestr"]),
                              buffer=mem.buffer, offset=pointer - mem.ptr,
                              strides=face.get("strides"))
            return ndarray._over(host, mem)
    raise ValueError(f"the stand-in has no device memory at {pointer:#x}")


class MemoryPointer:
    """``cupy.cuda.MemoryPointer``: an address in a block of device memory. ``_array``: a weak
    reference to the array whose ``.data`` it is (the emulator reads that array's extent),
    else None. Weak, so that an array and its pointer form no cycle: CuPy frees an array's
    memory when its last reference goes, not at the next cyclic collection."""

    __slots__ = ("mem", "ptr", "device_id", "_array")

    def __init__(self, mem: _Memory, offset: int, _array=None):
        # memory.pyx _init: no offset from a 0-byte allocation (address 0)
        assert mem.ptr != 0 or offset == 0
        self.mem, self.ptr = mem, mem.ptr + offset
        self._array = None if _array is None else weakref.ref(_array)
        self.device_id = mem.device_id

    @property
    def device(self) -> Device:
        return Device(self.device_id)

    def __add__(self, offset: int) -> MemoryPointer:
        """``memory.pyx`` ``MemoryPointer.__add__``: an integer offset (``<ptrdiff_t?>``: a
        float is a TypeError), on either side; ``-`` subtracts one."""
        return MemoryPointer(self.mem, self.ptr - self.mem.ptr + operator.index(offset))

    __radd__ = __add__

    def __sub__(self, offset: int) -> MemoryPointer:
        return self + -operator.index(offset)

    def __int__(self) -> int:
        return self.ptr

    def _host(self) -> np.ndarray:
        """The bytes the emulator may reach through this pointer."""
        array = None if self._array is None else self._array()
        if array is not None:
            return array._host
        return self.mem.buffer[self.ptr - self.mem.ptr:]


class _Capsule:
    """What the stand-in's ``ndarray.__dlpack__`` exports for its device: the array, which
    only the stand-in's ``from_dlpack`` takes back (a zero-copy view, as CuPy's
    ``_dlpack_to_cupy_array``)."""

    __slots__ = ("array",)

    def __init__(self, array: ndarray):
        self.array = array


class MemoryPool:
    """``cupy.get_default_memory_pool()``: every allocation goes through it; a block comes
    back to it (``free_bytes``) when nothing holds it (``MemoryPool.used_bytes`` and
    ``total_bytes`` in ``cupy/cuda/memory.pyx``). As CuPy's, one pool per device
    (``SingleDeviceMemoryPool``): the counts are the current device's."""

    def __init__(self):
        self._used, self._total = collections.Counter(), collections.Counter()

    def malloc(self, size: int) -> MemoryPointer:
        refuse_in_capture("an allocation")
        size = -(-int(size) // ALLOCATION_UNIT_SIZE) * ALLOCATION_UNIT_SIZE
        if size == 0:  # an empty array's .data.ptr is 0, as CuPy's
            return MemoryPointer(_Memory.zero(_thread.device), 0)
        return MemoryPointer(_Memory(size, _thread.device, self), 0)

    def _taken(self, mem: _Memory) -> None:
        device = mem.device_id
        self._used[device] += mem.size
        self._total[device] = max(self._total[device], self._used[device])
        weakref.finalize(mem, self._given_back, device, mem.size)

    def _given_back(self, device: int, size: int) -> None:
        self._used[device] -= size

    def used_bytes(self) -> int:
        return self._used[_thread.device]

    def total_bytes(self) -> int:
        return self._total[_thread.device]

    def free_bytes(self) -> int:
        return self._total[_thread.device] - self._used[_thread.device]

    def free_all_blocks(self, stream=None) -> None:
        self._total[_thread.device] = self._used[_thread.device]


streams: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # ptr -> Stream


def stream_of_current_device(ptr: int) -> bool:
    """A kernel may be launched on the stream ``ptr`` here: a default stream (the null, the
    legacy, the per-thread one: the current device's), or one made on the current device (a
    launch on another device's stream fails, where a copy would not)."""
    if ptr in (0, CUDA_STREAM_LEGACY, CUDA_STREAM_PER_THREAD):
        return True
    known = streams.get(ptr)
    return known is not None and known.device_id == _thread.device


class Stream:
    """``cupy.cuda.Stream`` (``cupy/cuda/stream.pyx``): made on the current device, or on
    none (``device_id`` -1) for the null stream (``Stream.null``, pointer 0) and the
    per-thread default stream (``Stream.ptds``, ``cudaStreamPerThread``), which apply to
    whichever device is current; ``with stream:`` and ``use()`` make it current there,
    refusing a stream of another device (``check_stream_device_match``: RuntimeError), with
    CuPy's per-thread stacks: a ``with`` block's exit makes current the stream below it on
    that thread's stack of that device, which a ``use()`` never pushed; streams compare by
    pointer (``_BaseStream.__eq__``)."""

    null: Stream
    ptds: Stream

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
        self.device_id = -1 if null or ptds else _thread.device
        # an address no other stream has; the null stream's is 0, the per-thread one's 2
        self.ptr = 0 if null else CUDA_STREAM_PER_THREAD if ptds else id(self)
        self.non_blocking = bool(non_blocking) and not (null or ptds)
        self._capture = None  # the launches recorded since begin_capture, while capturing
        if not (null or ptds):
            streams[self.ptr] = self  # the driver stand-in checks a CUstream's context

    def _device(self, current: int | None = None) -> int:
        """``check_stream_device_match``: the device it is made current on, ``current`` (the
        current device by default), which must be its own."""
        current = _thread.device if current is None else current
        device = current if self.device_id == -1 else self.device_id
        if device != current:
            raise RuntimeError(f"The device that the stream is created on ({device}) does "
                               f"not match with the current device ({current})")
        return device

    def __enter__(self):
        device = self._device()  # stream.pyx push_stream
        _thread.stream_stacks.setdefault(device, []).append(self)
        _thread.stream_devices.append(device)
        _thread.set_stream(self)
        return self

    def __exit__(self, *exc):
        device = _thread.stream_devices.pop()  # stream.pyx pop_stream
        stack = _thread.stream_stacks[device]
        stack.pop()
        _thread.set_stream(stack[-1] if stack else Stream.null)

    def use(self) -> Stream:
        self._device()
        _thread.set_stream(self)
        return self

    def synchronize(self) -> None:
        refuse_in_capture("cudaStreamSynchronize")
        _refuse_while_captured(self, "cudaStreamSynchronize")

    def begin_capture(self, mode=None) -> None:
        """``stream.pyx`` ``begin_capture``: not on the null or legacy stream (RuntimeError);
        from now on a kernel launched on this stream is recorded, not run, until
        :meth:`end_capture` gives the graph (relaxed mode: allocations, loads and other
        streams' work go on as usual)."""
        if self.ptr in (0, CUDA_STREAM_LEGACY):
            raise RuntimeError("cannot capture on the default (legacy) stream")
        if self.ptr == CUDA_STREAM_PER_THREAD:
            raise NotImplementedError("the stand-in captures on streams made with Stream()")
        if self._capture is not None:
            raise CUDADriverError(CUDA_ERROR_ILLEGAL_STATE, "cudaStreamBeginCapture")
        self._capture = _Capture(self.device_id)
        capturing_streams.add(self)

    def end_capture(self) -> Graph:
        """``cudaStreamEndCapture``: the graph of the launches recorded; a capture that an
        operation refused during it invalidated fails (cudaErrorStreamCaptureInvalidated)."""
        capture, self._capture = self._capture, None
        capturing_streams.discard(self)
        if capture is None:
            raise CUDADriverError(CUDA_ERROR_ILLEGAL_STATE, "cudaStreamEndCapture")
        if capture.invalidated:
            raise CUDADriverError(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
                                  f"cudaStreamEndCapture: {capture.invalidated}")
        return Graph(capture)

    def is_capturing(self) -> bool:
        return self._capture is not None

    def __eq__(self, other):
        return isinstance(other, Stream) and other.ptr == self.ptr

    def __hash__(self):
        return self.ptr

    def __repr__(self):
        return f"<Stream {self.ptr} (device {self.device_id})>"


CUDA_ERROR_ILLEGAL_STATE = 401  # cudaErrorIllegalState
CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901
CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906  # the legacy stream while a blocking one captures
capturing_streams: weakref.WeakSet = weakref.WeakSet()  # streams between begin and end


class _Capture:
    """A stream's capture: its device, the launches recorded, why it was invalidated."""

    def __init__(self, device: int):
        self.device, self.launches, self.invalidated = device, [], None


class _Recorded:
    """One launch in a graph: the kernel and the values of its parameters as they were at
    the capture (the driver copies them then), the device memory its pointers reach."""

    def __init__(self, raw, grid, block, args, shared_mem):
        self.raw, self.grid, self.block, self.shared_mem = raw, grid, block, shared_mem
        self.args = [a if isinstance(a, np.ndarray) else np.array(a).copy()[()] for a in args]
        self.blocks = [weakref.ref(_block_holding(numpy_data_pointer(a)))
                       for a in args if isinstance(a, np.ndarray) and a.size]

    def run(self, device: int) -> None:
        if any(block() is None for block in self.blocks):
            # the pool reuses a freed block: the replay would write into another array
            raise CUDADriverError(CUDA_ERROR_ILLEGAL_ADDRESS,
                                  f"graph launch: {self.raw.name} reaches memory freed "
                                  "since the capture")
        _run_kernel(self.raw, device, self.grid, self.block, self.args, self.shared_mem)


class Graph:
    """``cupy.cuda.Graph`` (``graph.pyx``): what a capture recorded; ``launch(stream=None)``
    runs it on the current stream, or records it into a capturing one."""

    def __init__(self, capture: _Capture):
        self._device, self._launches = capture.device, tuple(capture.launches)

    def launch(self, stream=None) -> None:
        ptr = _thread.stream_of(_thread.device).ptr if stream is None else stream.ptr
        if not stream_of_current_device(ptr) or self._device != _thread.device:
            raise CUDADriverError(CUDA_ERROR_INVALID_HANDLE, "cudaGraphLaunch")
        capture = _capture_of(ptr)
        for recorded in self._launches:
            if capture is not None:
                capture.launches.append(recorded)
            else:
                recorded.run(self._device)


def _block_holding(pointer: int):
    """The live block of device memory ``pointer`` lies in."""
    for mem in list(memories):
        if mem.ptr <= pointer < mem.ptr + max(mem.size, 1):
            return mem
    raise CUDADriverError(CUDA_ERROR_INVALID_VALUE, f"no device memory at {pointer:#x}")


def _capture_of(ptr: int):
    """The capture a launch on stream ``ptr`` of the current device joins, or None. The
    legacy stream synchronizes with every blocking stream of the device: used while one
    captures, it invalidates that capture and fails (cudaErrorStreamCaptureImplicit)."""
    if ptr in (0, CUDA_STREAM_LEGACY):
        for stream in list(capturing_streams):
            if stream.device_id == _thread.device and not stream.non_blocking:
                stream._capture.invalidated = "the legacy stream was used during the capture"
                raise CUDADriverError(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
                                      "a launch on the legacy stream while a blocking stream "
                                      "captures")
        return None
    stream = streams.get(ptr)
    return None if stream is None else stream._capture


def _refuse_while_captured(stream: Stream, what: str) -> None:
    """Synchronizing with a capturing stream fails and invalidates its capture."""
    if stream._capture is not None:
        stream._capture.invalidated = f"{what} during the capture"
        raise CUDADriverError(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, f"{what} during capture")


def launch_on(ptr: int, raw, grid, block, args, shared_mem) -> None:
    """A kernel launch on stream ``ptr`` of the current device: recorded into the stream's
    graph while it captures, else run now (the stand-in's kernels finish when launched)."""
    capture = _capture_of(ptr)
    if capture is not None:
        capture.launches.append(_Recorded(raw, grid, block, args, shared_mem))
        return
    _run_kernel(raw, _thread.device, grid, block, args, shared_mem)


def _run_kernel(raw, device: int, grid, block, args, shared_mem) -> None:
    _side.launches.append((raw.name, device))
    _thread.in_kernel = True
    try:
        emulator.launch(raw.module.about["source"], raw.module.about["name"], grid, block,
                        args, shared_mem)
    finally:
        _thread.in_kernel = False


def _refuse_d2h_on(stream: Stream) -> None:
    """``memory.pyx`` ``copy_to_host_async``: not on a capturing stream."""
    if stream._capture is not None:
        raise RuntimeError("the current stream is capturing, so D2H transfers are disallowed")


def _host_of(x, function: str):
    """What a CuPy routine computes on: a stand-in array's host view; NumPy arrays and
    anything holding one refused, as CuPy's ``_preprocess_args`` refuses them."""
    if isinstance(x, ndarray):
        return x._host
    if isinstance(x, np.ndarray):
        raise TypeError(f"Unsupported type {type(x)}")  # cupy/_core/_kernel.pyx, {function}
    if hasattr(x, "__cuda_array_interface__"):  # _kernel.pyx _preprocess_args converts them
        return _from_cuda_array_interface(x)._host
    if isinstance(x, (list, tuple)):
        return type(x)(_host_of(v, function) for v in x)
    if isinstance(x, dict):
        return {k: _host_of(v, function) for k, v in x.items()}
    return x


def _index_key(key) -> tuple:
    """An index as CuPy's ``_prepare_slice_list`` takes it (``_routines_indexing.pyx``): a
    tuple whose lists, NumPy arrays and device arrays are index arrays (host ones copied to
    the device there), on the host views here."""
    key = key if isinstance(key, tuple) else (key,)
    return tuple(k._host if isinstance(k, ndarray) else _listed_index(k)
                 if isinstance(k, list) else k for k in key)


def _listed_index(k: list) -> np.ndarray:
    """A list in a key: an array, int32 when empty (``_prepare_slice_list``'s
    ``fix_empty_dtype``: an empty list is no mask nor float64 index)."""
    k = np.asarray(k)
    return k.astype(np.int32) if k.size == 0 else k


_EMPTY_TAKE = "cannot do a non-empty take from an empty axes."


def _normalize_axis_index(axis, ndim: int) -> int:
    """``cupy/_core/internal.pyx`` ``_normalize_axis_index``: NumPy's AxisError."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis + ndim if axis < 0 else axis


def _wrapped_key(shape: tuple, key: tuple) -> tuple:
    """``key`` as CuPy 14.2's advanced indexing reads it (``_routines_indexing.pyx``), for
    NumPy on the host view: ``_view_getitem``'s too-many-indices and mask-shape IndexErrors
    (its messages), and every integer index array wrapped modulo the size of its axis, never
    refused: ``_take_kernel_core``'s ``indices % index_range`` for one array,
    ``_prepare_array_indexing``'s floor modulo for several, the scatter kernels'
    ``indices % adim`` for assignments. An integer array on an axis of size 0 gives the
    second item, the shape of a result that ``_take`` (``a.size == 0 and out.size != 0``)
    and the scatter would reach through an empty axis; else None."""
    widths = []
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, (bool, np.bool_)):
            widths.append(0)  # a bool: _prepare_slice_list's 0-d mask, which takes no axis
        elif isinstance(k, np.ndarray) and k.dtype.kind == "b":
            widths.append(k.ndim)
        else:
            widths.append(1)
    consumed = sum(widths)
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, "
                         f"but {consumed} were indexed")
    if sum(k is Ellipsis for k in key) > 1:
        return key, None  # NumPy's IndexError, CuPy's words
    out, axis, empty_axes = [], 0, []
    for k, width in zip(key, widths):
        if k is Ellipsis:
            axis += len(shape) - consumed
        elif isinstance(k, np.ndarray) and k.dtype.kind == "b":
            for i, m in enumerate(k.shape):  # _check_mask_shape
                if m not in (0, shape[axis + i]):
                    raise IndexError(
                        "boolean index did not match indexed array along dimension "
                        f"{axis + i}; dimension is {shape[axis + i]} but corresponding "
                        f"boolean dimension is {m}")
        elif isinstance(k, np.ndarray) and k.dtype.kind in "iu":
            if shape[axis]:
                k = np.mod(k, shape[axis])
            else:
                empty_axes.append(axis)
                k = np.zeros_like(k)
        out.append(k)
        axis += width
    if not empty_axes:
        return tuple(out), None
    probe_shape = [1 if i in empty_axes else n for i, n in enumerate(shape)]
    return tuple(out), np.broadcast_to(np.zeros((), np.int8), probe_shape)[tuple(out)].shape


def _advanced(key: tuple) -> bool:
    """Whether ``key`` indexes with arrays (CuPy's scatter path) rather than views."""
    return any(isinstance(k, (np.ndarray, bool, np.bool_)) for k in key)


def _device_result(result, base: ndarray | list | None = None):
    """A NumPy result as CuPy gives it: a view of ``base``'s memory stays one, any other array
    or NumPy scalar is a new device array (CuPy's reductions return 0-d arrays)."""
    if isinstance(result, tuple):
        return tuple(_device_result(r, base) for r in result)
    if isinstance(result, list):
        return [_device_result(r, base) for r in result]
    if isinstance(result, np.generic):
        result = np.asarray(result)
    if not isinstance(result, np.ndarray):
        return result
    bases = [one for one in (base if isinstance(base, list) else [base]) if one is not None]
    for one in bases:
        if np.may_share_memory(result, one._host) or (
                result.size == 0 and _root(result) is _root(one._host)):  # an empty view
            return ndarray._over(result, one.data.mem, one)
    _check_peer_access(bases)  # not a view: a kernel made it, on the current device
    out = ndarray(result.shape, result.dtype)
    out._host[...] = result
    return out


def _root(host: np.ndarray) -> np.ndarray:
    """The NumPy array at the end of ``host``'s chain of bases (a block's bytes)."""
    while isinstance(host.base, np.ndarray):
        host = host.base
    return host


# Routines whose CuPy code converts one operand with ``cupy.asarray`` (host arrays taken):
# name -> (position, keyword). ``cupy/_statistics/order.py``: ``q = cupy.asarray(q)``.
_HOST_OPERAND = {"quantile": (1, "q"), "percentile": (1, "q")}


def _check_peer_access(arrays) -> None:
    """``_kernel.pyx`` ``_check_peer_access``: a routine's device arrays must be on the current
    device; the stand-in's devices have no peer access (a machine without P2P), so another
    device's array is CuPy's ValueError."""
    for a in arrays:
        if a.data.device_id != _thread.device:
            raise ValueError(
                f"The device where the array resides ({a.data.device_id}) is different from "
                f"the current device ({_thread.device}). Peer access is unavailable between "
                "these devices.")


def _cupy_signature(path: str, name: str) -> inspect.Signature | None:
    """The signature of CuPy's own ``path.name``: arguments it does not take are its
    TypeError, though NumPy's function takes them (``cupy.sort`` has no ``stable``,
    ``cupy.sum`` no ``where``). None where CuPy is not installed or gives none."""
    return None if _real_cupy is None else _signature_in(_real_cupy, path, name)


@functools.lru_cache(maxsize=None)
def _signature_in(module, path: str, name: str) -> inspect.Signature | None:
    for part in path.split(".")[1:]:
        module = getattr(module, part)
    try:
        return inspect.signature(getattr(module, name))
    except (TypeError, ValueError):  # a ufunc, a Cython function without one
        return None


def _routine(name: str, function, signature: inspect.Signature | None = None):
    def routine(*args, **kwargs):
        if signature is not None:
            signature.bind(*args, **kwargs)  # CuPy's TypeError for what it does not take
        if name in _HOST_OPERAND:
            position, keyword = _HOST_OPERAND[name]
            if keyword in kwargs:
                kwargs = {**kwargs, keyword: _side.asarray(kwargs[keyword])}
            elif len(args) > position:
                args = (*args[:position], _side.asarray(args[position]), *args[position + 1:])
        out = kwargs.get("out")
        inputs = [a for a in (*args, *kwargs.values()) if isinstance(a, ndarray)]
        _check_peer_access(inputs)
        result = function(*_host_of(args, name), **_host_of(kwargs, name))
        # views of an operand stay views (cupy.transpose, reshape, ...)
        return out if out is not None else _device_result(result, inputs)

    routine.__name__ = name
    return routine


class _Ufunc:
    """``cupy._core._kernel.ufunc`` (``cupy.add``): ``name`` is ``cupy_<NumPy's name>``; a call
    with an argument that has ``__cupy_override_elementwise_kernel__`` is handed to it
    (``ufunc.__call__`` in ``_kernel.pyx``), else NumPy's ufunc on the host views."""

    def __init__(self, numpy_ufunc: np.ufunc):
        self._numpy = numpy_ufunc
        self.__name__ = self.name = f"cupy_{numpy_ufunc.__name__}"  # as CuPy's
        self.nin, self.nout = numpy_ufunc.nin, numpy_ufunc.nout
        self._call = _routine(numpy_ufunc.__name__, numpy_ufunc)

    def __call__(self, *args, **kwargs):
        for arg in args:
            if hasattr(arg, "__cupy_override_elementwise_kernel__"):
                return arg.__cupy_override_elementwise_kernel__(self, *args, **kwargs)
        return self._call(*args, **kwargs)

    def __getattr__(self, method: str):
        """``reduce``, ``accumulate``, ``outer``: NumPy's on the host views."""
        if method.startswith("_"):
            raise AttributeError(method)
        return _routine(f"{self.__name__}.{method}", getattr(self._numpy, method))



class Flags:
    """``cupy/_core/flags.pyx`` ``Flags``: ``c_contiguous``, ``f_contiguous``, ``owndata``
    (``base is None``), ``fnc``, ``forc`` and those three by name; no ``writeable``, ``num``
    or other flag of NumPy's (CuPy arrays are always writeable)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")
    _NAMES = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA")

    def __init__(self, c_contiguous: bool, f_contiguous: bool, owndata: bool):
        self.c_contiguous, self.f_contiguous, self.owndata = c_contiguous, f_contiguous, owndata

    @property
    def fnc(self) -> bool:
        return self.f_contiguous and not self.c_contiguous

    @property
    def forc(self) -> bool:
        return self.f_contiguous or self.c_contiguous

    def __getitem__(self, name: str) -> bool:
        if name not in self._NAMES:
            raise KeyError(f"{name} is not defined for cupy.ndarray.flags")
        return getattr(self, name.lower())

    def __repr__(self):
        return "\n".join(f"  {name} : {self[name]}" for name in self._NAMES)


def _normalize_order(order) -> str:
    """``cupy/_core/internal.pyx`` ``_normalize_order``: the first letter, any case; an empty
    string is 'C'; any other letter ValueError."""
    char = "C" if len(order) == 0 else order[0].upper()
    if char not in "KACF":
        raise ValueError("order not understood")
    return char


def _f_strides(shape: tuple, itemsize: int) -> tuple:
    """``_set_contiguous_strides(itemsize, is_c_contiguous=False)``."""
    strides, step = [], itemsize
    for n in shape:
        strides.append(step)
        step *= max(n, 1)
    return tuple(strides)


def _memory_range(shape: tuple, strides, itemsize: int) -> tuple[int, int]:
    """``cupy/_core/_memory_range.pyx`` ``get_range``: the byte range (left, right) that an
    array of these shape and strides reaches from its pointer."""
    if any(n == 0 for n in shape):
        return 0, 0
    left = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    right = itemsize + sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0)
    return left, right


def _check_supported_dtype(dtype: np.dtype) -> None:
    """``cupy/_core/_dtype.pyx`` ``check_supported_dtype(error=True)``: no big-endian dtype;
    booleans, numbers, structured/void dtypes (``NPY_VOID``) without references and bfloat16
    (the one dtype of its own that ``_scalar.get_typename`` knows); nothing else (objects,
    strings, datetimes, long doubles; ml_dtypes' float8, int4, float4, of kind 'V' or 'f'
    but neither a builtin type char nor ``NPY_VOID``)."""
    if dtype.byteorder == ">":
        raise ValueError(f"Unsupported dtype {dtype} with big-endian byte-order")
    if dtype.char in ALL_TYPE_CHARS:
        return
    if dtype.num == NPY_VOID and dtype.subdtype is None and dtype.itemsize != 0:
        if dtype.hasobject:
            raise ValueError(f"Unsupported dtype {dtype} because it contains references "
                             "which cannot be supported by CuPy.")
        return
    if dtype.name == "bfloat16":
        return
    raise ValueError(f"Unsupported dtype {dtype}")



def _concat_info(obj):
    """``core.pyx`` ``_compute_concat_info_impl``: (shape, NumPy's or CuPy's array type,
    promoted dtype) of a nested list or tuple of arrays of one shape and library, else
    None."""
    if isinstance(obj, np.ndarray):
        return obj.shape, np.ndarray, obj.dtype
    if isinstance(obj, ndarray):
        return obj.shape, ndarray, obj.dtype
    face = getattr(obj, "__cuda_array_interface__", None)
    if face is not None:
        return tuple(face["shape"]), ndarray, np.dtype(face["typestr"])
    if not isinstance(obj, (list, tuple)) or not obj:
        return None
    first = _concat_info(obj[0])
    if first is None:
        return None
    shape, kind, dtype = first
    for elem in obj[1:]:
        info = _concat_info(elem)
        if info is None or info[0] != shape or info[1] is not kind:
            return None
        dtype = np.promote_types(dtype, info[2])
    return (len(obj), *shape), kind, dtype


def _leaves(obj) -> list:
    if isinstance(obj, (list, tuple)):
        return [leaf for elem in obj for leaf in _leaves(elem)]
    return [obj if isinstance(obj, ndarray) else _from_cuda_array_interface(obj)]


def _nested_hosts(obj):
    if isinstance(obj, (list, tuple)):
        return [_nested_hosts(elem) for elem in obj]
    return (obj if isinstance(obj, ndarray) else _from_cuda_array_interface(obj))._host


class ndarray:
    """``cupy.ndarray`` over host memory: its bytes in a block of the stand-in pool, ``.data``
    a ``MemoryPointer`` to element 0, ``.device`` the block's device. Operations run on the
    host view (``_host``) with CuPy's rules: no implicit conversion to NumPy (``__array__``
    raises, ``cupy/_core/core.pyx``), NumPy operands refused, results on the device."""

    __slots__ = ("_host", "data", "base", "__weakref__")
    __array_priority__ = 100  # core.pyx: what _should_use_rop weighs against another operand's

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        # core.pyx ``_ndarray_base._init``: the order checked (``internal._normalize_order``)
        # and any but 'C' lays the array out in Fortran order, also over a given memptr; the
        # dtype checked (``get_dtype_with_itemsize(check_support=memptr is None)``); strides
        # of a new allocation must stay within its contiguous size, none negative
        order_char = "C" if order is None else _normalize_order(order)
        dtype = np.dtype(dtype)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if any(n < 0 for n in shape):
            raise ValueError("Negative dimensions are not allowed")
        if memptr is None:
            _check_supported_dtype(dtype)
        size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        if strides is None and order_char != "C":
            strides = _f_strides(shape, dtype.itemsize)
        elif strides is not None and memptr is None:
            left, right = _memory_range(shape, strides, dtype.itemsize)
            if left != 0:
                raise ValueError("ndarray() with strides currently does not allow negative "
                                 "strides")
            if right > size:
                raise ValueError(f"ndarray() with strides must stay withing a contiguous size "
                                 f"of {size} but got {right}.")
        if memptr is None:
            memptr = _side.pool.malloc(size)
        mem = memptr.mem
        offset = memptr.ptr - mem.ptr
        self._host = np.ndarray(shape, dtype, buffer=mem.buffer, offset=offset, strides=strides)
        self.data = MemoryPointer(mem, offset, self)
        self.base = None  # an array made over a MemoryPointer owns no base (core.pyx)

    @classmethod
    def _over(cls, host: np.ndarray, mem: _Memory, base: ndarray | None = None) -> ndarray:
        """A device array of ``host``, which lies in ``mem``; a view of ``base`` if given
        (CuPy's ``_view``: ``base`` is the base's own base when it has one)."""
        self = cls.__new__(cls)
        self._host = host
        offset = numpy_data_pointer(host) - mem.ptr if mem.size else 0  # Memory(0): at 0
        self.data = MemoryPointer(mem, offset, self)
        self.base = None if base is None else base if base.base is None else base.base
        return self

    shape = property(lambda self: self._host.shape)
    strides = property(lambda self: self._host.strides)
    dtype = property(lambda self: self._host.dtype)
    size = property(lambda self: self._host.size)
    nbytes = property(lambda self: self._host.nbytes)
    ndim = property(lambda self: self._host.ndim)
    itemsize = property(lambda self: self._host.itemsize)
    flags = property(lambda self: Flags(self._host.flags.c_contiguous,
                                        self._host.flags.f_contiguous, self.base is None))
    T = property(lambda self: _device_result(self._host.T, self))
    mT = property(lambda self: _device_result(self._host.mT, self))
    real = property(lambda self: _device_result(self._host.real, self))
    imag = property(lambda self: _device_result(self._host.imag, self))

    @property
    def device(self) -> Device:
        return self.data.device

    @property
    def __cuda_array_interface__(self) -> dict:
        """``cupy/_core/core.pyx``: version 3, the current stream (``get_current_stream_ptr``:
        the current device's, whichever device the array is on; never 0: the legacy default
        stream is 1), strides None when C-contiguous, data 0 when empty."""
        stream = _thread.stream_of(_thread.device).ptr or CUDA_STREAM_LEGACY
        return {"shape": self.shape, "typestr": self.dtype.str, "descr": self.dtype.descr,
                "stream": stream, "version": 3,
                "strides": None if self._host.flags.c_contiguous else self.strides,
                "data": (self.data.ptr if self.size else 0, False)}

    def copy(self, order="C") -> ndarray:
        """core.pyx ``copy``: on the current device, also from another one (contiguous arrays
        only: "CuPy cannot copy non-contiguous array between devices")."""
        if self.data.device_id != _thread.device and self.size and not (
                self.flags.c_contiguous or self.flags.f_contiguous):
            raise NotImplementedError("CuPy cannot copy non-contiguous array between devices.")
        return self._astype(self.dtype, order=order, copy=True)

    def _astype(self, dtype, order="K", casting=None, subok=None, copy=True) -> ndarray:
        """core.pyx ``_astype``: ``casting`` and ``subok`` refused; the array itself when the
        dtype and layout already are the asked ones and ``copy`` is not True; ``copy=False``
        where a copy is needed: ValueError; else a new array (order 'K' keeps the axis order of
        the layout, as ``_get_strides_for_order_K``)."""
        if casting is not None:
            raise TypeError("casting is not supported yet")
        if subok is not None:
            raise TypeError("subok is not supported yet")
        order_char = _normalize_order("K" if order is None else order)
        dtype = np.dtype(dtype)
        flags = self._host.flags
        if dtype == self.dtype and not copy and (
                order_char == "K" or order_char == "A" and (flags.c_contiguous
                                                            or flags.f_contiguous)
                or order_char == "C" and flags.c_contiguous
                or order_char == "F" and flags.f_contiguous):
            return self
        if not copy and copy is not None:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        if order_char == "A" or order_char == "K" and (flags.c_contiguous
                                                      or flags.f_contiguous):
            # internal._update_order_char
            order_char = "F" if flags.f_contiguous and not flags.c_contiguous else "C"
        if order_char == "K":  # _get_strides_for_order_K: the layout's axis order, as NumPy's
            out = ndarray(self.shape, dtype,
                          strides=np.empty_like(self._host, dtype, order="K").strides)
        else:
            out = ndarray(self.shape, dtype, order=order_char)
        out._host[...] = self._host.astype(dtype)  # NumPy's ComplexWarning as CuPy's
        return out

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True) -> ndarray:
        """core.pyx ``astype``: ``_astype`` with ``copy=False`` meaning "if needed" (never
        refused: ``copy_ = True if copy else None``)."""
        return self._astype(dtype, order, casting, subok, True if copy else None)

    def __reduce__(self):
        """core.pyx: pickled (and copied by ``copy``) as ``array`` of the values on the host."""
        return _array_of_host, (self.get(order="A"),)

    def __dlpack_device__(self) -> tuple[int, int]:
        """(kDLCUDA, device id): the pool's memory is device memory (``dlpack.pyx``)."""
        return DLPACK_CUDA, self.data.device_id

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """core.pyx ``__dlpack__``: keyword-only, ``max_version`` a tuple (Cython-typed);
        ``dl_device`` None or this array's device (``copy=True`` then BufferError: "only
        supported for copy to CPU"), or (kDLCPU, 0) (a host copy; ``copy=False``
        ValueError), any other BufferError; on CUDA ``stream`` None (the legacy default
        stream) or an int from -1 up (0 warns, taken as legacy), anything else ValueError.
        A device export is a :class:`_Capsule` that this stand-in's ``from_dlpack`` takes
        (its bytes are host bytes: no other consumer may read them); the CPU export is
        NumPy's capsule of the host copy, as CuPy's ``_toDlpack(to_cpu=True)`` (bfloat16 as
        CuPy's: dtype code ``kDLBfloat``, which NumPy's own export refuses)."""
        if max_version is not None and not isinstance(max_version, tuple):
            raise TypeError(f"Argument 'max_version' has incorrect type (expected tuple, got "
                            f"{type(max_version).__name__})")
        to_cpu = False
        if dl_device is None or dl_device == self.__dlpack_device__():
            if copy is True:
                raise BufferError("copy=True only supported for copy to CPU.")
        elif dl_device == (DLPACK_CPU, 0):
            if copy is False:
                raise ValueError("GPU memory cannot be exported to CPU without copy.")
            to_cpu = True
        else:
            raise BufferError("unsupported device requested.")
        if not to_cpu:
            consumer = CUDA_STREAM_LEGACY if stream is None else stream if isinstance(
                stream, int) else -2
            if consumer < -1:
                raise ValueError(f"On CUDA, the valid stream for the DLPack protocol is -1, 1, "
                                 f"2, or any larger value, but {stream} was provided")
            if consumer == 0:
                warnings.warn("Stream 0 is passed from a library that you are converting to; "
                              "CuPy assumes 0 as a legacy default stream. Please report this "
                              "problem to the library as this violates the DLPack protocol.")
            return _Capsule(self)
        host = self.get()
        # CuPy builds the host copy's capsule itself, bfloat16 included (dlpack.pyx
        # get_dlpack_dtype_code_itemsize: kDLBfloat), where NumPy's __dlpack__ refuses it
        export = to_dlpack if host.dtype.name == "bfloat16" else type(host).__dlpack__
        return export(host) if max_version is None else export(host, max_version=max_version)

    def __array__(self, dtype=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    def get(self, stream=None, order="C", out=None, blocking=True) -> np.ndarray:
        """core.pyx ``get``: ``out`` a NumPy array of this dtype and shape, C or F contiguous
        (else TypeError, ValueError, RuntimeError); ``order`` 'C', 'F' or 'A' (any case),
        other orders ValueError (for a non-empty array without ``out``). ``stream`` (by
        default the current device's current stream, read before this array's device is
        made current) is entered on this array's device where a contiguous copy is made
        first: a stream of another device is then CuPy's RuntimeError."""
        if stream is None:
            stream = _thread.stream_of(_thread.device)
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError("Only numpy.ndarray can be obtained fromcupy.ndarray")
            if self.dtype != out.dtype:
                raise TypeError(f"{out.dtype} array cannot be obtained from {self.dtype} array")
            if self.shape != out.shape:
                raise ValueError(f"Shape mismatch. Expected shape: {self.shape}, actual shape: "
                                 f"{out.shape}")
            if not (out.flags.c_contiguous and self.flags.c_contiguous
                    or out.flags.f_contiguous and self.flags.f_contiguous):
                stream._device(self.data.device_id)  # `with stream:` on this array's device
                if not (out.flags.c_contiguous or out.flags.f_contiguous):
                    raise RuntimeError("`out` cannot be specified when copying to "
                                       "non-contiguous ndarray")
            refuse_in_capture("a device-to-host copy")
            _refuse_d2h_on(stream)
            out[...] = self._host
            return out
        if self.size == 0:
            return np.ndarray(self.shape, dtype=self.dtype)
        order = order.upper()
        if order == "A":
            order = "F" if self.flags.f_contiguous else "C"
        if not (order == "C" and self.flags.c_contiguous
                or order == "F" and self.flags.f_contiguous):
            stream._device(self.data.device_id)  # `with stream:` on this array's device
            if order not in ("C", "F"):
                raise ValueError(f"unsupported order: {order}")
        refuse_in_capture("a device-to-host copy")
        _refuse_d2h_on(stream)
        return np.array(self._host, order=order)

    def set(self, arr: np.ndarray, stream=None) -> None:
        """core.pyx ``set``: a NumPy array of this dtype (TypeError) and shape (ValueError)
        into a C or F contiguous array (RuntimeError)."""
        if not isinstance(arr, np.ndarray):
            raise TypeError("Only numpy.ndarray can be set to cupy.ndarray")
        if self.dtype != arr.dtype:
            raise TypeError(f"{arr.dtype} array cannot be set to {self.dtype} array")
        if self.shape != arr.shape:
            raise ValueError(f"Shape mismatch. Old shape: {self.shape}, new shape: {arr.shape}")
        if not (self.flags.c_contiguous or self.flags.f_contiguous):
            raise RuntimeError("Cannot set to non-contiguous array")
        self._host[...] = arr

    def __getitem__(self, key):
        key = _index_key(key)
        if _advanced(key):  # out-of-range integer indices wrap (_wrapped_key)
            key, through_empty = _wrapped_key(self.shape, key)
            if through_empty is not None:
                if math.prod(through_empty):
                    raise IndexError(_EMPTY_TAKE)
                return ndarray(through_empty, self.dtype)
        if not any(k is Ellipsis for k in key):  # a 0-d view, never a NumPy scalar: CuPy returns arrays
            key = (*key, Ellipsis)
        return _device_result(self._host[key], self)

    def take(self, indices, axis=None, out=None):
        """``ndarray.take`` (``_ndarray_take``, ``_take``): indices wrapped modulo the axis
        (the flattened array's size for ``axis=None``), never refused; no ``mode``."""
        host = self._host
        if axis is None or host.ndim == 0:
            if axis is not None:
                _normalize_axis_index(axis, 1)
            host, axis = host.reshape(-1), 0
        else:
            axis = _normalize_axis_index(axis, host.ndim)
        if isinstance(indices, ndarray):
            indices = indices._host
        elif not np.isscalar(indices):
            indices = np.array(indices, dtype=int)  # core.array(indices, dtype=int)
        shape = host.shape[:axis] + np.shape(indices) + host.shape[axis + 1:]
        if out is not None:
            if out.dtype != self.dtype:
                raise TypeError("Output dtype mismatch")
            if out.shape != shape:
                raise ValueError("Output shape mismatch")
        else:
            out = ndarray(shape, self.dtype)
        if self.size == 0 and out.size != 0:
            raise IndexError(_EMPTY_TAKE)
        if out.size:
            out._host[...] = np.take(host, indices, axis=axis, mode="wrap")
        return out

    def __setitem__(self, key, value):
        key = _index_key(key)
        if isinstance(value, np.ndarray) and not _advanced(key):
            # basic indexing copies device arrays only, else ``fill``s (core.pyx: fill takes
            # a NumPy array of shape () alone); advanced indexing takes host values
            if value.shape != ():
                raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        elif isinstance(value, np.ndarray):
            value = np.asarray(value)
        else:
            value = _host_of(value, "__setitem__")
        if _advanced(key):  # the scatter kernels wrap out-of-range indices (_wrapped_key)
            key, through_empty = _wrapped_key(self.shape, key)
            if through_empty is not None:
                if math.prod(through_empty):  # ``indices % adim`` with adim == 0, then a
                    # write past a 0-byte allocation: undefined on a GPU, a fault here
                    raise CUDADriverError(CUDA_ERROR_ILLEGAL_ADDRESS, "cupy_scatter_update: "
                                          "an index into an axis of size 0")
                return
        self._host[key] = value

    def __len__(self):
        return len(self._host)

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self):
        if self.size == 0:  # core.pyx __nonzero__: a DeprecationWarning and False
            warnings.warn("The truth value of an empty array is ambiguous. Returning False, "
                          "but in future this will result in an error. Use `array.size > 0` "
                          "to check that an array is not empty.", DeprecationWarning)
            return False
        return bool(self._host) if self.size > 1 else bool(self.get())

    # core.pyx __int__, __float__, __complex__, item, tolist: through get() (its stream)
    def __int__(self):
        return int(self.get())

    def __float__(self):
        return float(self.get())

    def __complex__(self):
        return complex(self.get())

    def item(self):
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.get().item()

    def tolist(self):
        return self.get().tolist()

    # core.pyx: repr, str and format of the values copied to the host
    def __repr__(self):
        return repr(self.get())

    def __str__(self):
        return str(self.get())

    def __format__(self, format_spec):
        return format(self.get(), format_spec)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """CuPy's dispatch of a NumPy ufunc to ``cupy.<name>`` (core.pyx): NotImplemented
        where an operand is none of a scalar, a device or NumPy array, an object with
        ``__cuda_array_interface__``; NumPy operands then refused by the routine."""
        if method != "__call__" or not _cupy_has("cupy", ufunc.__name__):
            return NotImplemented  # core.pyx: getattr(cupy, name) (or cupyx.scipy.special)
        out = kwargs.get("out")
        for x in (*inputs, *(out if isinstance(out, tuple) else ())):
            if not (type(x) in _SCALAR_TYPES or isinstance(x, (ndarray, np.ndarray))
                    or hasattr(x, "__cuda_array_interface__")):
                return NotImplemented
        if isinstance(out, tuple):
            if len(out) != 1:
                raise ValueError("The 'out' parameter must have exactly one array value")
            kwargs = {**kwargs, "out": out[0]}
        return _Ufunc(ufunc)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        """CuPy's ``__array_function__``: ``cupy.<module>.<name>`` for the NumPy function,
        NotImplemented where CuPy has none or an argument's type is neither a device nor a
        NumPy array (``_HANDLED_TYPES``)."""
        path = ".".join(["cupy", *func.__module__.split(".")[1:]])
        if not _cupy_has(path, func.__name__) or not all(
                issubclass(t, (ndarray, np.ndarray)) for t in types):
            return NotImplemented
        module = _side
        for part in path.split(".")[1:]:
            module = getattr(module, part)
        return getattr(module, func.__name__)(*args, **kwargs)

    def __getattr__(self, name):
        """The array methods (``astype``, ``reshape``, ``sum``, ``copy``, ...): NumPy's on the
        host view, results as CuPy gives them (views stay views of this memory); only those
        CuPy's ndarray has (``to_device``, ``resize``, ``setflags``: NumPy's alone)."""
        if name.startswith("_") or not _cupy_has("cupy.ndarray", name):
            raise AttributeError(f"'cupy.ndarray' object has no attribute '{name}'")
        method = getattr(self._host, name)
        if not callable(method):
            raise AttributeError(name)

        def call(*args, **kwargs):
            return _device_result(method(*_host_of(args, name), **_host_of(kwargs, name)), self)

        return call


def _should_use_rop(x, y) -> bool:
    """core.pyx ``_should_use_rop``: leave ``x op y`` to ``y`` when ``y`` opts out of ufuncs
    (``__array_ufunc__ = None``) or, without ``__array_ufunc__``, has a higher priority."""
    y_ufunc = getattr(y, "__array_ufunc__", _MISSING)
    if y_ufunc is not _MISSING:
        return y_ufunc is None
    return getattr(x, "__array_priority__", 0) < getattr(y, "__array_priority__", 0)


def _operator(name: str):
    """core.pyx's operators: another device array computes here; an operand that
    ``_should_use_rop`` names gets NotImplemented; anything else goes through NumPy's ufunc
    (``numpy.add(x, y)``), whose dispatch asks each operand's ``__array_ufunc__``; a
    reflected or in-place operator is CuPy's kernel on the operands as they are."""
    reflected = name.startswith("__r") and name[3:-2] in _BINARY
    ufunc = None if reflected or name in _IN_PLACE else _OPERATOR_UFUNCS.get(name)

    def apply(self, *others):
        if ufunc is not None and others:
            (other,) = others
            if not isinstance(other, ndarray):
                if _should_use_rop(self, other):
                    return NotImplemented
                return ufunc(self, other)
        result = getattr(self._host, name)(*_host_of(others, name))
        if result is NotImplemented:
            return result
        return self if name in _IN_PLACE else _device_result(result)

    apply.__name__ = name
    return apply


_BINARY = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
           "xor", "lshift", "rshift")
# (``__invert__`` is not one; CuPy has no ``__imatmul__``: ``x @= y`` makes a new array)
_IN_PLACE = {f"__i{name}__" for name in _BINARY if name != "matmul"}
_OPERATOR_UFUNCS = {
    f"__{name}__": getattr(np, ufunc) for name, ufunc in zip(
        (*_BINARY, "lt", "le", "eq", "ne", "gt", "ge"),
        ("add", "subtract", "multiply", "true_divide", "floor_divide", "remainder", "power",
         "matmul", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift",
         "less", "less_equal", "equal", "not_equal", "greater", "greater_equal"))}
for _name in _BINARY:
    for _form in ("__{}__", "__r{}__", "__i{}__"):
        if _form.format(_name) in _IN_PLACE or not _form.startswith("__i"):
            setattr(ndarray, _form.format(_name), _operator(_form.format(_name)))
for _name in ("__lt__", "__le__", "__eq__", "__ne__", "__gt__", "__ge__", "__neg__", "__pos__",
              "__abs__", "__invert__"):
    setattr(ndarray, _name, _operator(_name))
ndarray.__hash__ = None


# ---------------------------------------------------------------- modules and kernels
def _cython_typed(name: str, value, expected: type) -> None:
    """A Cython-typed argument (``str path=None``): None or exactly that type, else the
    TypeError Cython raises (a ``pathlib.Path`` is not a ``str``, a list is not a tuple)."""
    if value is not None and not isinstance(value, expected):
        raise TypeError(f"Argument '{name}' has incorrect type (expected {expected.__name__}, "
                        f"got {type(value).__name__})")


class RawModule:
    """``cupy.RawModule``, for binaries our launcher compiled (``path=``) only. The signature
    is CuPy 14's (``cupy/_core/raw.pyx``): keyword-only, Cython-typed (``str code``, ``str
    path``, ``tuple options``), nothing else taken."""

    def __init__(self, *, code=None, path=None, options=(), backend="nvrtc",
                 translate_cucomplex=False, enable_cooperative_groups=False,
                 name_expressions=None, jitify=False):
        for name, value, expected in (("code", code, str), ("path", path, str),
                                      ("options", options, tuple), ("backend", backend, str)):
            _cython_typed(name, value, expected)
        if (code is None) == (path is None):
            raise TypeError("Exactly one of `code` and `path` keyword arguments must be given.")
        if name_expressions is not None and code is None:
            raise ValueError("need CUDA C++ code for the requested kernels")
        if jitify and code is None:
            raise ValueError("Jitify does not support precompiled objects")
        if code is not None:
            raise NotImplementedError("the stand-in loads binaries (path=) only")
        refuse_in_capture(f"RawModule(path={path!r})")
        self.path = Path(path)
        self.binary = self.path.read_bytes()
        self.about = json.loads(self.path.with_suffix(".json").read_text())
        _side.loaded_paths.append(str(path))

    def _ptx(self) -> str:
        if not hasattr(self, "_ptx_text"):
            if self.binary.startswith(b"\x7fELF"):  # a cubin: its parameters from its source
                arch = "compute_" + self.about["arch"].split("_")[1]
                self._ptx_text = nvrtc.compile_program(self.about["source"], [self.about["name"]],
                                                       arch).ptx
            else:
                self._ptx_text = self.binary.decode()
        return self._ptx_text

    def _parameters(self) -> dict[str, tuple[int, ...]]:
        """Each kernel's parameter sizes: a cubin's as the driver reads them (its .nv.info,
        no compile), PTX's from its ``.entry`` declarations."""
        if self.binary.startswith(b"\x7fELF"):
            return elf.parameter_sizes(self.binary)
        return ptx_parameters(self._ptx())

    def get_function(self, name: str) -> RawKernel:
        if type(name) is not str:
            raise TypeError(f"Argument 'name' has incorrect type (expected str, got "
                            f"{type(name).__name__})")
        params = self._parameters()
        if name not in params or name.encode() not in self.binary:
            raise CUDADriverError(500, f"cuModuleGetFunction({name!r})")  # NOT_FOUND
        kernel = RawKernel(self, name, params[name])
        kernel.kernel  # CuPy loads on the current device at get_function
        return kernel

    def _check_image(self) -> None:
        """``cuModuleLoad``: a cubin must be whole and for the device's architecture."""
        if not self.binary.startswith(b"\x7fELF"):
            return
        wrong = elf.problem(self.binary)
        if wrong:
            raise CUDADriverError(CUDA_ERROR_INVALID_IMAGE, f"cuModuleLoad({self.path}): {wrong}")
        wrong = elf.problem(self.binary, "sm_" + Device().compute_capability)
        if wrong:
            raise CUDADriverError(CUDA_ERROR_NO_BINARY_FOR_GPU,
                                  f"cuModuleLoad({self.path}): {wrong}")

    def static_shared_bytes(self) -> int:
        return static_shared_bytes(self._ptx())


class RawKernel:
    # CuPy's RawKernel is a Cython class: no attribute can be added to it
    __slots__ = ("module", "name", "param_sizes", "_max_dynamic")

    def __init__(self, module: RawModule, name: str, param_sizes: tuple[int, ...]):
        self.module, self.name, self.param_sizes = module, name, param_sizes
        self._max_dynamic = {}  # device -> the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES there

    @property
    def kernel(self):
        """CuPy's ``RawKernel.kernel``: the ``Function`` of the current device, loaded there
        when it is not yet (the load makes a context current on this thread); otherwise no
        driver call at all."""
        if _thread.device not in self._max_dynamic:
            refuse_in_capture(f"cuModuleLoad of {self.name}")
            _ensure_context()
            self.module._check_image()
            self._max_dynamic[_thread.device] = STATIC_SHARED_LIMIT
            _side.module_loads.append((self.name, _thread.device))
        return Function(self, _thread.device)

    @property
    def shared_size_bytes(self) -> int:
        self.kernel
        _require_context("cuFuncGetAttribute")
        return self.module.static_shared_bytes()

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        self.kernel
        _require_context("cuFuncGetAttribute")
        return self._max_dynamic[_thread.device]

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, value: int) -> None:
        self.kernel
        _require_context("cuFuncSetAttribute")
        if not 0 <= value <= OPTIN_LIMIT - self.module.static_shared_bytes():
            raise CUDADriverError(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute")
        self._max_dynamic[_thread.device] = value

    def __call__(self, grid, block, args, **kwargs):
        self.kernel(grid, block, args, **kwargs)  # CuPy's RawKernel.__call__

    def _argument(self, index: int, x):
        """CuPy's ``_pointer`` rules: (what the emulator receives, bytes passed)."""
        if x is None:
            return np.uint64(0), 8
        if isinstance(x, ndarray):
            if x.device.id != _thread.device:
                raise CUDADriverError(700, f"argument {index} of {self.name} lives on device "
                                           f"{x.device.id}, the launch is on {_thread.device}")
            return x._host, 8
        if isinstance(x, MemoryPointer):  # CIntptr(x.ptr)
            if x.device_id != _thread.device:
                raise CUDADriverError(700, f"argument {index} of {self.name} points to device "
                                           f"{x.device_id}, the launch is on {_thread.device}")
            return x._host(), 8
        if isinstance(x, np.ndarray):  # CNumpyArray: its bytes, by value
            if x.size != 1:
                raise TypeError(f"You are trying to pass a numpy.ndarray of shape {x.shape} as "
                                "a kernel parameter. Only numpy.ndarrays of size one can be "
                                "passed by value.")
            return x.reshape(())[()], x.dtype.itemsize
        if type(x) in _PYTHON_SCALARS:
            # _scalar.pyx numpy_dtype_from_pyscalar: an int from 2**63 up is a uint64, and
            # PyArray_Pack refuses one out of the dtype's range (OverflowError)
            kind = np.uint64 if type(x) is int and x >= 0x8000000000000000 \
                else _PYTHON_SCALARS[type(x)]
            value = kind(x)
            return value, value.dtype.itemsize
        if isinstance(x, np.generic):
            return x, x.dtype.itemsize
        raise TypeError(f"Unsupported type {type(x)}")


class Function:
    """CuPy's ``cupy.cuda.function.Function``: one kernel loaded on one device. Its
    ``__call__`` types ``grid`` and ``block`` as tuples (Cython refuses anything else) and
    launches in the current context, which must be its device's (else the driver refuses the
    handle)."""

    __slots__ = ("raw", "device")

    def __init__(self, raw: RawKernel, device: int):
        self.raw, self.device = raw, device

    @property
    def ptr(self) -> int:
        """``Function.ptr``: its ``CUfunction`` handle, one per kernel and device (the
        driver stand-in looks the kernel up by it in ``handles``)."""
        handle = id(self.raw) + self.device  # ids are 16-byte aligned, devices fewer
        handles[handle] = self
        return handle

    def __call__(self, grid, block, args, shared_mem: int = 0, stream=None,
                 enable_cooperative_groups: bool = False):
        raw = self.raw
        if type(grid) is not tuple or type(block) is not tuple:
            raise TypeError("Argument 'grid' and 'block' must be tuples")
        if operator.index(shared_mem) < 0:  # ``size_t shared_mem``: a float a TypeError too
            raise OverflowError("can't convert negative value to size_t")
        # function.pyx Function.__call__: padded with 1s to three dimensions (further ones
        # dropped), each at least 1 (CuPy launches one block where a dimension is 0), then
        # _launch's C integers (a float a TypeError)
        grid = tuple(max(1, operator.index(n)) for n in (grid + (1, 1))[:3])
        block = tuple(max(1, operator.index(n)) for n in (block + (1, 1))[:3])
        _ensure_context()  # CuPy's _launch makes one current before cuLaunchKernel
        if _thread.device != self.device:
            raise CUDADriverError(CUDA_ERROR_INVALID_HANDLE,
                                  f"cuLaunchKernel of {raw.name} loaded on device {self.device} "
                                  f"in device {_thread.device}'s context")
        # function.pyx _get_stream: the current stream's pointer, else the given stream's
        stream_ptr = _thread.stream_of(_thread.device).ptr if stream is None else stream.ptr
        if not stream_of_current_device(stream_ptr):
            raise CUDADriverError(CUDA_ERROR_INVALID_HANDLE,
                                  f"cuLaunchKernel of {raw.name} on a stream of another device "
                                  f"than the current one ({_thread.device})")
        host = [raw._argument(i, a) for i, a in enumerate(args)]
        sizes = tuple(size for _, size in host)
        if sizes != raw.param_sizes:
            raise TypeError(f"kernel {raw.name}: the PTX takes parameters of {raw.param_sizes} "
                            f"bytes, the launch passes {sizes}")
        if shared_mem > raw._max_dynamic[self.device]:
            raise CUDADriverError(CUDA_ERROR_INVALID_VALUE,
                                  f"cuLaunchKernel with {shared_mem} bytes of dynamic shared "
                                  f"memory, {raw._max_dynamic[self.device]} allowed")
        launch_on(stream_ptr, raw, grid, block, [value for value, _ in host], shared_mem)


handles: dict[int, Function] = {}  # CUfunction handle -> the Function it names
_PYTHON_SCALARS = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}
# _scalar.pyx scalar_type_set: Python's and NumPy's scalar types
_SCALAR_TYPES = {*_PYTHON_SCALARS, *(np.dtype(c).type for c in "?bBhHiIlLqQefdgFDG")}


# ---------------------------------------------------------------- the module itself
Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)


class Event:
    """``cupy.cuda.Event`` (``stream.pyx``): ``record`` on a stream, ``synchronize``,
    ``get_elapsed_time`` in milliseconds. The stand-in's kernels run when launched, so the
    host's clock at ``record`` is the event's time. Timing of an event made with
    ``disable_timing``, or of one never recorded, fails as cudaEventElapsedTime does."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        if interprocess and not disable_timing:
            raise ValueError("Timing must be disabled for interprocess events")
        self.ptr, self._timing, self._at = id(self), not disable_timing, None

    @property
    def done(self) -> bool:
        return True

    def record(self, stream=None) -> None:
        self._at = time.perf_counter()

    def synchronize(self) -> None:
        refuse_in_capture("cudaEventSynchronize")


def _get_elapsed_time(start: Event, end: Event) -> float:
    if not (start._timing and end._timing) or start._at is None or end._at is None:
        raise CUDADriverError(CUDA_ERROR_INVALID_HANDLE, "cudaEventElapsedTime")
    return (end._at - start._at) * 1e3


def _array_of_host(host: np.ndarray) -> ndarray:
    """``cupy.array(host)`` on the current device: what a pickled array comes back as."""
    return _side.array(host)


def _alloc(size: int) -> MemoryPointer:
    """``cupy.cuda.alloc``: from the current allocator, the default pool."""
    return _side.pool.malloc(size)


class _Cuda:
    Device = Device
    runtime = _Runtime
    driver = _Driver
    Stream = Stream
    MemoryPointer = MemoryPointer
    MemoryPool = MemoryPool
    Graph = Graph
    alloc = staticmethod(_alloc)
    Event = Event
    get_elapsed_time = staticmethod(_get_elapsed_time)

    @staticmethod
    def get_current_stream(device_id: int = -1) -> Stream:
        """``stream.pyx`` ``get_current_stream(int device_id=-1)``: of the current device by
        default; else ``current_stream[device_id]`` of a list of one per device, so an id
        past the devices is an IndexError and one below -1 counts from the end."""
        device_id = operator.index(device_id)
        if device_id == -1:
            device_id = _thread.device
        count = len(_side.capabilities)
        if not -count <= device_id < count:
            raise IndexError("list index out of range")
        return _thread.stream_of(device_id % count)


def _as_strided(x, shape=None, strides=None):
    """``cupy.lib.stride_tricks.as_strided``: a view of ``x``'s memory (no bounds check)."""
    if not isinstance(x, ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    view = np.lib.stride_tricks.as_strided(x._host, shape=shape, strides=strides)
    return ndarray._over(view, x.data.mem)


def _sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """``cupy.lib.stride_tricks.sliding_window_view``: a read-only view of ``x``'s memory."""
    if not isinstance(x, ndarray):
        raise TypeError(f"Unsupported type {type(x)}")
    view = np.lib.stride_tricks.sliding_window_view(x._host, window_shape, axis,
                                                    subok=subok, writeable=writeable)
    return ndarray._over(view, x.data.mem, x)


class _Lib:
    class stride_tricks:
        as_strided = staticmethod(_as_strided)
        sliding_window_view = staticmethod(_sliding_window_view)


class CupyStandin:
    """What the library sees as ``cupy``: ``runtime/cuda.py``'s device side always (records
    loads and launches for the tests), and under ``pytest --backend cuda-standin`` the whole
    ``cupy`` module (:func:`as_cupy`). Array routines CuPy has and this does not define run
    NumPy's on the host views of stand-in arrays (NumPy operands refused, results on the
    device): NumPy's signatures, CuPy's argument rule."""

    ndarray = ndarray
    RawModule = RawModule
    RawKernel = RawKernel
    cuda = _Cuda
    lib = _Lib
    __version__ = "14.2.0"  # the CuPy the stand-in models

    @property
    def __all__(self) -> list[str]:
        """What ``from cupy import *`` takes: NumPy's public names that CuPy has too."""
        return [name for name in np.__all__ if not name.startswith("_")
                and _cupy_has("cupy", name)]

    def __init__(self, capabilities=(90,)):
        self.capabilities = tuple(capabilities)
        self.loaded_paths: list[str] = []
        self.module_loads: list[tuple[str, int]] = []
        self.launches: list[tuple[str, int]] = []
        self.pool = MemoryPool()

    def get_default_memory_pool(self) -> MemoryPool:
        return self.pool

    @staticmethod
    def take(a, indices, axis=None, out=None):
        """``cupy.take`` (``cupy/_indexing/indexing.py``): ``a.take``, which wraps."""
        return a.take(indices, axis, out)

    def arange(self, start, stop=None, step=1, dtype=None) -> ndarray:
        """``cupy.arange`` (``cupy/_creation/ranges.py``), line for line: float64 where a
        value's type is a float one, else int64; ``ceil((stop - start) / step)`` elements;
        ``start + i * step`` in the dtype (``_arange_ufunc``: ``typ(start)``, ``typ(step)``,
        an integer product in ``ptrdiff_t``), not NumPy's ``start + i * delta``. Not modelled:
        NVRTC's contraction of the float loops into an FMA, and CuPy's float16 arithmetic
        (here in float32)."""
        if dtype is None:
            if any(np.dtype(type(val)).kind == "f" for val in (start, stop, step)):
                dtype = float
            else:
                dtype = int
        if stop is None:
            stop = start
            start = 0
        if step is None:
            step = 1
        size = int(np.ceil((stop - start) / step))
        if size <= 0:
            return self.empty((0,), dtype=dtype)
        if np.dtype(dtype).type == np.bool_:
            if size > 2:
                raise TypeError("arange() is only supported for booleans when the result has "
                                "at most length 2.")
            return self.array([start, start - step][:size], dtype=np.bool_)
        ret = self.empty((size,), dtype=dtype)
        typ = np.dtype(dtype).type
        first, by, i = typ(start), typ(step), np.arange(size)
        with np.errstate(all="ignore"):
            if ret.dtype.kind in "iu":
                wide = np.uint64 if ret.dtype == np.uint64 else np.int64
                ret._host[...] = (wide(first) + i.astype(wide) * wide(by)).astype(ret.dtype)
            elif ret.dtype == np.float16:
                ret._host[...] = np.float32(first) + i.astype(np.float32) * np.float32(by)
            else:
                ret._host[...] = first + i.astype(ret.dtype) * by
        return ret

    def linspace(self, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
        """``cupy.linspace`` (``cupy/_creation/ranges.py``) of scalar ends, line for line
        (``_linspace_scalar``): ``float(stop - start) / div`` for the step (a TypeError for
        complex ends), ``start + i * step`` in float64, the last value ``float(stop)``;
        array ends: NumPy's."""
        if num < 0:
            raise ValueError("linspace with num<0 is not supported")
        if not (np.isscalar(start) and np.isscalar(stop)):
            return _numpy_name("cupy", np, "linspace")(
                start, stop, num, endpoint=endpoint, retstep=retstep, dtype=dtype, axis=axis)
        dt = np.result_type(start, stop, float(num))
        dtype = dt if dtype is None else dtype
        ret = self.empty((num,), dtype=dt)
        div = (num - 1) if endpoint else num
        with np.errstate(all="ignore"):
            if div <= 0:
                if num > 0:
                    ret._host[...] = start
                step = float("nan")
            else:
                step = float(stop - start) / div
                stop = float(stop)
                i = np.arange(num, dtype=np.float64)
                if step == 0.0:  # _linspace_ufunc_underflow: in0 + i * in1 / in2
                    ret._host[...] = start + i * (stop - start) / div
                else:
                    ret._host[...] = np.float64(start) + i * step
                if endpoint:
                    ret._host[-1] = stop
            if np.issubdtype(dtype, np.integer):
                np.floor(ret._host, out=ret._host)
        ret = ret.astype(dtype, copy=False)
        return (ret, step) if retstep else ret

    def take_along_axis(self, a, indices, axis):
        """``cupy.take_along_axis`` (``cupy/_indexing/indexing.py``), line for line: an index
        array per axis, ``a[tuple(fancy_index)]``, whose indices wrap."""
        if indices.dtype.kind not in ("i", "u"):
            raise IndexError("`indices` must be an integer array")
        if axis is None:
            a = a.ravel()
            axis = 0
        ndim = a.ndim
        axis = _normalize_axis_index(axis, ndim)
        if ndim != indices.ndim:
            raise ValueError("`indices` and `a` must have the same number of dimensions")
        fancy_index = []
        for i, n in enumerate(a.shape):
            if i == axis:
                fancy_index.append(indices)
            else:
                ind_shape = (1,) * i + (-1,) + (1,) * (ndim - i - 1)
                fancy_index.append(self.arange(n).reshape(ind_shape))
        return a[tuple(fancy_index)]

    @staticmethod
    def empty(shape, dtype=float, order="C") -> ndarray:
        return ndarray(shape, dtype, order=order)

    def zeros(self, shape, dtype=float, order="C") -> ndarray:
        out = ndarray(shape, dtype, order=order)
        out._host[...] = 0
        return out

    def asarray(self, a, dtype=None, order=None, *, copy=None, blocking=False) -> ndarray:
        """``cupy.asarray``: ``_core.array(a, dtype, copy, order)``."""
        return self.array(a, dtype, copy, order, blocking=blocking)

    def array(self, obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *,
              blocking=False) -> ndarray:
        """``cupy.array`` (``core.pyx`` ``array``): a device array (or an object with
        ``__cuda_array_interface__``) on the current device by ``_astype(dtype, order, copy)``
        (``copy=False`` refuses a cast or relayout: ValueError), on another device
        ``copy(order)`` then cast; anything else (``_array_default``) through
        ``numpy.array``, its dtype made little-endian (``_dtype.normalize_dtype``: a
        big-endian NumPy array arrives byte-swapped) and checked (no objects, strings),
        copied to the current device in order 'F' for a Fortran-only NumPy array with order
        'K'/'A', else 'C'; ``copy=False`` does not refuse this copy, as CuPy's does not."""
        if subok:
            raise NotImplementedError
        order = "K" if order is None else order
        if isinstance(obj, ndarray) or hasattr(obj, "__cuda_array_interface__"):
            src = obj if isinstance(obj, ndarray) else _from_cuda_array_interface(obj)
            dtype = src.dtype if dtype is None else dtype
            if src.data.device_id == _thread.device:
                out = src._astype(dtype, order=order, copy=copy)
            else:
                out = src.copy(order=order)._astype(dtype, copy=None)
        elif isinstance(obj, (list, tuple)) and _concat_info(obj) is not None:
            # _array_from_nested_sequence: NumPy arrays of one shape joined on the host, device
            # arrays (or interface objects) on the device; the dtype their promotion, made
            # little-endian (normalize_dtype) and checked; C order unless 'F' is asked
            shape, kind, joined = _concat_info(obj)
            dtype = joined.newbyteorder("<") if dtype is None else np.dtype(dtype)
            _check_supported_dtype(dtype)
            order_char = "F" if order[:1] in ("F", "f") else "C"
            if kind is ndarray:
                leaves = _leaves(obj)
                _check_peer_access(leaves)
                obj = _nested_hosts(obj)
            host = np.array(obj, dtype=dtype, order=order_char)
            out = ndarray(host.shape, dtype, order=order_char)
            out._host[...] = host
        else:
            order_char = _normalize_order(order)
            if order_char in "KA":
                order_char = "F" if isinstance(obj, np.ndarray) and obj.flags.fnc else "C"
            host = np.array(obj, dtype=dtype, copy=None, order=order_char)
            host = host.astype(host.dtype.newbyteorder("<"), copy=False)
            out = ndarray(host.shape, host.dtype, order=order_char)
            out._host[...] = host
        if out.ndim >= ndmin:
            return out
        if out is obj:
            out = out.view()
        return out.reshape((1,) * (ndmin - out.ndim) + out.shape)

    def asnumpy(self, a, stream=None, order="C", out=None, *, blocking=True) -> np.ndarray:
        """``cupy/__init__.py`` ``asnumpy``: a device array's ``get``; an object with
        ``__cuda_array_interface__`` as a device array first; anything else
        ``numpy.asarray`` (into ``out`` if given)."""
        if isinstance(a, ndarray):
            return a.get(stream=stream, order=order, out=out, blocking=blocking)
        if hasattr(a, "__cuda_array_interface__"):
            return self.array(a, copy=False).get(stream=stream, order=order, out=out,
                                                 blocking=blocking)
        temp = np.asarray(a, order=order)
        if out is None:
            return temp
        out[...] = temp
        return out

    @staticmethod
    def copyto(dst, src, casting="same_kind", where=None) -> None:
        """``cupy/_manipulation/basic.py`` ``copyto``: a Python scalar checked by
        ``numpy.copyto`` into a 0-d array of ``dst``'s dtype; a NumPy array of size one taken
        as its scalar (``numpy.can_cast`` of the array), a larger one refused (ValueError);
        a NumPy scalar by ``can_cast`` of the value; a device array by its dtype; shapes by
        the broadcast rule (ValueError naming both)."""
        src_is_scalar = True
        if type(src) in (bool, int, float, complex):
            np.copyto(np.empty((), dst.dtype), src, casting=casting)
            can_cast, src_dtype = True, None
        elif isinstance(src, np.ndarray):
            if src.size != 1:
                raise ValueError("non-scalar numpy.ndarray cannot be used for copyto")
            src_dtype = src.dtype
            can_cast = np.can_cast(src, dst.dtype, casting)
            src = src.squeeze()[()]
        elif np.isscalar(src):
            src_dtype = src
            can_cast = np.can_cast(src, dst.dtype, casting)
        else:
            src = src if isinstance(src, ndarray) else _from_cuda_array_interface(src)
            src_dtype, src_is_scalar = src.dtype, False
            can_cast = np.can_cast(src_dtype, dst.dtype, casting)
        if not can_cast:
            raise TypeError(f"Cannot cast {src_dtype} to {dst.dtype} in {casting} casting mode")
        if not src_is_scalar:
            if not all(s in (d, 1) for s, d in itertools.zip_longest(
                    reversed(src.shape), reversed(dst.shape), fillvalue=1)):
                raise ValueError(f"could not broadcast input array from shape {src.shape} "
                                 f"into shape {dst.shape}")
            _check_peer_access([a for a in (dst, src, where) if isinstance(a, ndarray)])
            src = src._host
        where = where._host if isinstance(where, ndarray) else where
        np.copyto(dst._host, src, casting="unsafe", where=True if where is None else where)

    @staticmethod
    def from_dlpack(array, *, device=None, copy=None) -> ndarray:
        """``cupy/_core/dlpack.pyx`` ``from_dlpack``: ``device`` not supported
        (NotImplementedError); the producer's ``__dlpack__(stream=, max_version=(1, 0),
        copy=)`` called with its device current (a TypeError retried with ``stream`` alone
        when ``copy`` is None); CPU producers refused (TypeError)."""
        if not hasattr(array, "__dlpack_device__"):
            capsule = array
        else:
            dev_type, dev_id = array.__dlpack_device__()
            if device is not None:
                raise NotImplementedError("from_dlpack() does not support device yet.")
            if dev_type in (DLPACK_CUDA, 13):  # kDLCUDA, kDLCUDAManaged
                previous = _thread.device
                try:
                    _thread.device = _check_ordinal(dev_id, "cudaSetDevice")
                    stream = _thread.stream_of(dev_id).ptr or CUDA_STREAM_LEGACY
                    try:
                        capsule = array.__dlpack__(stream=stream, max_version=(1, 0),
                                                   copy=copy)
                    except TypeError:
                        if copy is not None:
                            raise
                        capsule = array.__dlpack__(stream=stream)
                finally:
                    _thread.device = previous
            elif dev_type == DLPACK_CPU:
                raise TypeError("CPU arrays cannot be directly imported to CuPy. Use "
                                "`cupy.array(numpy.from_dlpack(input))` instead.")
            else:
                raise TypeError(f"Unsupported array type: {dev_type}")
        if not isinstance(capsule, _Capsule):
            raise TypeError("the CuPy stand-in takes back its own DLPack exports only")
        return capsule.array.view()

    @staticmethod
    def may_share_memory(a, b, max_work=None) -> bool:
        return bool(np.may_share_memory(_host_of(a, "may_share_memory"),
                                        _host_of(b, "may_share_memory")))

    @staticmethod
    def device_view(host: np.ndarray, device: int | None = None) -> ndarray:
        """Host memory seen as a stand-in array on ``device`` (no copy): what the launcher's
        tests and the emulated suite's launches (:class:`ThroughCudaLauncher`) hand over."""
        device = _check_ordinal(Device(device).id, "cudaSetDevice")
        return ndarray._over(host, _Memory.borrowed(host, device))

    def __getattr__(self, name):
        return _numpy_name("cupy", np, name)


class _Routines:
    """A submodule of CuPy (``cupy.linalg``, ``cupy.fft``): NumPy's routines, as above."""

    def __init__(self, path: str, module):
        self._path, self._module = path, module
        self.__name__ = path

    def __getattr__(self, name):
        return _numpy_name(self._path, self._module, name)

    @property
    def __all__(self) -> list[str]:
        """What ``from cupy.linalg import *`` takes: NumPy's names there that CuPy has too."""
        return [name for name in dir(self._module) if not name.startswith("_")
                and _cupy_has(self._path, name)]


# ---------------------------------------------------------------- routines CuPy answers apart
# from NumPy: what CuPy 14.2 computes, on the host views (refusing where CuPy would read
# outside an array)

class _LinalgConfig(threading.local):
    linalg = "ignore"  # cupyx/_ufunc_config.py get_config_linalg: 'ignore' by default


_ufunc_config = _LinalgConfig()


def _seterr(*, divide=None, over=None, under=None, invalid=None, linalg=None) -> dict:
    """``cupyx/_ufunc_config.py`` ``seterr``: only ``linalg``, 'ignore' or 'raise'."""
    old = _geterr()
    if any(v is not None for v in (divide, over, under, invalid)):
        raise NotImplementedError()
    if linalg is not None:
        if linalg not in ("ignore", "raise"):
            raise NotImplementedError()
        _ufunc_config.linalg = linalg
    return old


def _geterr() -> dict:
    return dict(divide=None, over=None, under=None, invalid=None, linalg=_ufunc_config.linalg)


@contextlib.contextmanager
def _errstate(*, divide=None, over=None, under=None, invalid=None, linalg=None):
    old = _seterr(divide=divide, over=over, under=under, invalid=invalid, linalg=linalg)
    try:
        yield
    finally:
        _seterr(linalg=old["linalg"])


cupyx = types.ModuleType("cupyx", "The stand-in's cupyx: errstate/seterr/geterr only.")
cupyx.errstate, cupyx.seterr, cupyx.geterr = _errstate, _seterr, _geterr
cupyx._ufunc_config = types.SimpleNamespace(get_config_linalg=lambda: _ufunc_config.linalg)

# cupy.linalg's routines that check their solver's status (devInfo) only under
# cupyx.errstate(linalg='raise') (linalg/_util.py _check_cusolver_dev_info_if_synchronization_
# allowed, called from _solve.py, _decomposition.py, _eigenvalue.py, cupyx/lapack.py): name ->
# the solver CuPy names. By default a failed factorization's output comes back (here NaN).
_CHECKED_LINALG = {
    **dict.fromkeys(("inv", "solve", "tensorinv", "tensorsolve"), "getrf"),
    "cholesky": "potrf", "eigh": "syevd", "eigvalsh": "syevd", "eig": "geev", "eigvals": "geev",
    **dict.fromkeys(("svd", "pinv", "matrix_rank", "lstsq"), "gesvd"),
}
_NUMPY_FAILURES = ("Singular matrix", "Matrix is not positive definite",
                   "Eigenvalues did not converge", "SVD did not converge")


def _checked_linalg(name: str, function):
    def checked(a, *args, **kwargs):
        try:
            return function(a, *args, **kwargs)
        except np.linalg.LinAlgError as error:
            if not str(error).startswith(_NUMPY_FAILURES):
                raise  # an argument's check: CuPy's too
            if _ufunc_config.linalg == "raise":
                raise np.linalg.LinAlgError(
                    f"Error reported by {_CHECKED_LINALG[name]} in cuSOLVER. devInfo = [1]. "
                    "Please refer to the cuSOLVER documentation.") from None
        # 'ignore': the shapes and dtypes of a regular matrix's answer, every value NaN
        regular = np.broadcast_to(np.eye(*a.shape[-2:], dtype=a.dtype), a.shape)
        result = function(regular, *args, **kwargs)
        parts = result if isinstance(result, tuple) else (result,)
        parts = [np.full_like(r, np.nan) if isinstance(r, np.ndarray) and r.dtype.kind in "fc"
                 else r for r in parts]
        if not isinstance(result, tuple):
            return parts[0]
        return type(result)._make(parts) if hasattr(result, "_make") else tuple(parts)

    return checked


_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _cupy_quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False, *, interpolation=None, _percent=False):
    """``cupy/_statistics/order.py`` ``quantile``/``percentile`` and ``_quantile_unchecked``:
    ``q`` valid if one value is >= 0 and one <= 1 (``_quantile_is_valid``), of at most one
    dim; 5 methods; the sorted data (NaN last) read by index, never NaN-checked; the linear
    kernel reads ``a`` flat, its next element clamped to the whole array's last (q = 1 reads
    the next slice's first). An index outside the data: refused here (CuPy reads garbage)."""
    if interpolation is not None:
        warnings.warn("the `interpolation=` argument was renamed to `method=`",
                      DeprecationWarning, stacklevel=3)
        method = interpolation
    if isinstance(q, (tuple, list)):
        q = np.asarray(q)
    if _percent:
        q = q / 100
    if not (np.count_nonzero(0.0 <= q) and np.count_nonzero(q <= 1.0)):
        raise ValueError("Percentiles must be in the range [0, 100]" if _percent else
                         "Quantiles must be in the range [0, 1]")
    dtype = np.result_type(a, q)
    q = np.asarray(q)
    zerod = q.ndim == 0
    q = q[None] if zerod else q
    if q.ndim > 1:
        raise ValueError(f"Expected q to have a dimension of 1.\nActual: {q.ndim} != 1")
    axis = (axis,) if isinstance(axis, int) else axis
    if keepdims:
        keepdim = (1,) * a.ndim if axis is None else tuple(
            1 if i in {ax % a.ndim for ax in axis} else n for i, n in enumerate(a.shape))
    if axis is None:
        ap = a.flatten()
    else:
        axis = tuple(ax % a.ndim for ax in axis)
        keep = sorted(set(range(a.ndim)) - set(axis))
        for i, s in enumerate(keep):
            a = a.swapaxes(i, s)
        ap = a.reshape(a.shape[:len(keep)] + (-1,)).copy()
    ap.sort(axis=-1)
    nx = ap.shape[-1]
    indices = q * (nx - 1.0)
    if method not in _QUANTILE_METHODS:
        if method in ("inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                      "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
                      "normal_unbiased"):
            raise ValueError(f"'{method}' method is not yet supported. Please use any "
                             "other method.")
        raise ValueError("Unexpected interpolation method.\nActual: '{}' not in ('linear', "
                         "'lower', 'higher', 'midpoint')".format(method))
    if method in ("lower", "higher", "nearest"):
        indices = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}[method](
            indices).astype(np.int32)
        if ((indices < 0) | (indices >= nx)).any():
            raise AssertionError("the stand-in: CuPy 14.2 takes outside the data here "
                                 "(cupy/_statistics/order.py, q outside [0, 1])")
        ret = np.moveaxis(ap, -1, 0).take(indices, axis=0)
    else:
        if method == "midpoint":
            indices = 0.5 * (np.floor(indices) + np.ceil(indices))
        flat, size = ap.ravel(), ap.size
        offset = ap.shape[-1] if ap.ndim > 1 else 0
        rows = np.arange(int(np.prod(ap.shape[:-1])))[:, None]
        below = np.floor(indices).astype(np.intp)
        bottom = rows * offset + below
        if ((bottom < 0) | (bottom >= size)).any():
            raise AssertionError("the stand-in: CuPy 14.2 reads outside the data here "
                                 "(cupy/_statistics/order.py, q outside [0, 1])")
        top = np.minimum(bottom + 1, size - 1)
        weight = (indices - below).astype(dtype)
        lo, hi = flat[bottom].astype(dtype), flat[top].astype(dtype)
        diff = hi - lo
        with np.errstate(invalid="ignore"):
            ret = np.where(weight < 0.5, lo + diff * weight, hi - diff * (1 - weight))
        ret = np.moveaxis(ret.reshape(ap.shape[:-1] + q.shape).astype(dtype, copy=False),
                          -1, 0)
    if zerod:
        ret = ret.squeeze(0)
    if keepdims:
        ret = ret.reshape(((-1,) if q.size > 1 else ()) + keepdim)
    if out is not None:
        out[...] = ret
        return out
    return np.ascontiguousarray(ret)


def _cupy_percentile(a, q, *args, **kwargs):
    return _cupy_quantile(a, q, *args, _percent=True, **kwargs)


def _cupy_nanarg(numpy_function):
    """``cupy/_sorting/search.py`` ``nanargmax``/``nanargmin``: NaN passed over (its index
    -1, ``_routines_statistics.pyx`` ``min_max_st(in0, isnan(in0) ? -1 : _J)``), an all-NaN
    slice -1, no error; integers as ``argmax``/``argmin``."""
    def nanarg(a, axis=None, dtype=None, out=None, keepdims=False):
        if a.dtype.kind not in "fc":
            result = getattr(np, numpy_function.__name__[3:])(a, axis=axis, keepdims=keepdims)
        else:
            nan = np.isnan(a)
            along = 0 if axis is None else axis
            values, present = (a.reshape(-1), ~nan.reshape(-1)) if axis is None else (a, ~nan)
            first = np.argmax(present, axis=along, keepdims=True)
            fill = np.take_along_axis(values, first, axis=along)  # NaN never wins over it
            result = getattr(np, numpy_function.__name__[3:])(
                np.where(nan, fill, a), axis=axis, keepdims=True)
            result = np.maximum(result, first)  # the NaN before the first value tie with it
            result = result.reshape(()) if axis is None and not keepdims else (
                result if keepdims else result.squeeze(axis))
            result = np.where(nan.all(axis=axis, keepdims=keepdims), -1, result)
        if out is not None:
            out[...] = result
            return out
        return np.asarray(result, np.int64)

    return nanarg


def _cupy_as_pairs(x, ndim, as_index=False):
    """``cupy/_padding/pad.py`` ``_as_pairs``: a Number as it is (rounded; no negative
    check), an array of other than 1 or 2 values reshaped to (ndim, 2), not broadcast."""
    if x is None:
        return ((None, None),) * ndim
    if isinstance(x, numbers.Number):
        return ((round(x), round(x)) if as_index else (x, x),) * ndim
    x = np.array(x)
    if as_index:
        x = np.asarray(np.round(x), dtype=np.intp)
    if x.ndim < 3 and (x.size == 1 or (x.size == 2 and x.shape != (2, 1))):
        x = x.ravel()
        if as_index and (x < 0).any():
            raise ValueError("index can't contain negative values")
        return ((x[0], x[-1]),) * ndim
    if as_index and x.min() < 0:
        raise ValueError("index can't contain negative values")
    return x.reshape(ndim, 2).tolist()


_PAD_KWARGS = {"empty": (), "edge": (), "wrap": (), "constant": ("constant_values",),
               "linear_ramp": ("end_values",), "maximum": ("stat_length",),
               "mean": ("stat_length",), "minimum": ("stat_length",),
               "reflect": ("reflect_type",), "symmetric": ("reflect_type",)}


def _cupy_pad(array, pad_width, mode="constant", **kwargs):
    """``cupy/_padding/pad.py`` ``pad``: no ``median`` mode (ValueError), pairs by
    :func:`_cupy_as_pairs`, and ``reflect``/``symmetric``/``wrap`` as NumPy 1 had them (a
    pad longer than the axis mirrors or wraps the pad made so far too: NumPy 2's helpers with
    the original period 1, or 2 for ``reflect``, which leaves them as they were)."""
    from numpy.lib import _arraypad_impl as impl

    if isinstance(pad_width, numbers.Integral):
        pairs = ((pad_width, pad_width),) * array.ndim
    else:
        pad_width = np.asarray(pad_width)
        if pad_width.dtype.kind != "i":
            raise TypeError("`pad_width` must be of integral type.")
        pairs = _cupy_as_pairs(pad_width, array.ndim, as_index=True)
    if (np.asarray(pairs) < 0).any():
        raise AssertionError("the stand-in: CuPy 14.2 pads negative widths as garbage")
    if callable(mode):
        return np.pad(array, pairs, mode, **kwargs)
    if mode not in _PAD_KWARGS:
        raise ValueError("mode '{}' is not supported".format(mode))
    unsupported = set(kwargs) - set(_PAD_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    for key in ("stat_length", "end_values", "constant_values"):
        if key in kwargs and kwargs[key] is not None:
            kwargs[key] = _cupy_as_pairs(kwargs[key], array.ndim, key == "stat_length")
            if key == "stat_length" and (np.asarray(kwargs[key]) < 0).any():
                raise AssertionError("the stand-in: CuPy 14.2 takes a negative stat_length")
    if mode not in ("reflect", "symmetric", "wrap") or array.size == 0:
        return np.pad(array, pairs, mode, **kwargs)
    padded, interior = impl._pad_simple(array, pairs)
    for axis, (left, right) in enumerate(pairs):
        if mode != "wrap" and array.shape[axis] == 1 and (left > 0 or right > 0):
            impl._set_pad_area(padded, axis, (left, right),
                               impl._get_edges(padded, axis, (left, right)))
            continue
        roi = impl._view_roi(padded, interior, axis)
        while left > 0 or right > 0:
            if mode == "wrap":
                left, right = impl._set_wrap_both(roi, axis, (left, right), 1)
            else:
                left, right = impl._set_reflect_both(
                    roi, axis, (left, right), kwargs.get("reflect_type", "even"),
                    1 if mode == "symmetric" else 2, mode == "symmetric")
    return padded


def _cupy_fftfreq(n, d=1.0):
    """``cupy.fft.fftfreq`` (``cupy/fft/_fft.py``): the integers divided by ``n * d``, where
    NumPy multiplies them by ``1.0 / (n * d)`` (other roundings)."""
    return np.hstack((np.arange(0, (n - 1) // 2 + 1, dtype=np.float64),
                      np.arange(-(n // 2), 0, dtype=np.float64))) / (n * d)


def _cupy_rfftfreq(n, d=1.0):
    """``cupy.fft.rfftfreq`` (``cupy/fft/_fft.py``): divided, as ``fftfreq``."""
    return np.arange(0, n // 2 + 1, dtype=np.float64) / (n * d)


# (path, name) -> CuPy's answer where it is not NumPy's
_AS_CUPY = {
    ("cupy.fft", "fftfreq"): _cupy_fftfreq, ("cupy.fft", "rfftfreq"): _cupy_rfftfreq,
    ("cupy", "quantile"): _cupy_quantile, ("cupy", "percentile"): _cupy_percentile,
    ("cupy", "nanargmax"): _cupy_nanarg(np.nanargmax),
    ("cupy", "nanargmin"): _cupy_nanarg(np.nanargmin),
    ("cupy", "pad"): _cupy_pad,
    **{("cupy.linalg", name): None for name in _CHECKED_LINALG},
}


_MISSING = object()
# CuPy's submodules of NumPy's routines that ``import cupy.<name>`` may ask for
_SUBMODULES = ("linalg", "fft")


def _numpy_name(path: str, module, name: str):
    """What CuPy has under ``name`` where the stand-in defines nothing: NumPy's scalar types,
    ``dtype`` and constants as they are (CuPy re-exports them), routines on device arrays
    (:func:`_routine`), submodules as :class:`_Routines`."""
    found = getattr(module, name, _MISSING) if not name.startswith("_") else _MISSING
    if found is _MISSING or not _cupy_has(path, name):
        raise AttributeError(f"the CuPy stand-in has no {path}.{name}")
    if isinstance(found, types.ModuleType):
        return _Routines(f"{path}.{name}", found)
    if isinstance(found, type) or not callable(found):
        return found
    if isinstance(found, np.ufunc):
        return _Ufunc(found)
    if (path, name) in _AS_CUPY:
        found = _AS_CUPY[path, name] or _checked_linalg(name, found)
    return _routine(name, found, _cupy_signature(path, name))


def _cupy_has(path: str, name: str) -> bool:
    """Whether CuPy itself has ``path.name`` (``cupy.nanquantile`` it has not): a name NumPy
    has and CuPy lacks is missing from the stand-in too. True where CuPy is not installed."""
    module = _real_cupy
    if module is None:
        return True
    for part in path.split(".")[1:]:
        module = getattr(module, part, None)
        if module is None:
            return False
    return hasattr(module, name)


_side = CupyStandin()


_real_cupy = None  # the CuPy module ``as_cupy`` stands in for


def real_cupy():
    """CuPy itself (the tests that compare the stand-in with it), also while the stand-in is
    ``cupy``."""
    if sys.modules.get("cupy") is _side and _real_cupy is not None:
        return _real_cupy
    import cupy

    return cupy


def _bound_to_cupy(module_name: str) -> bool:
    """A module that binds ``cupy`` when imported: cupyx, array_api_compat's CuPy namespace;
    and CuPy's submodules of routines (``cupy.linalg``: the stand-in's own in the block)."""
    return module_name in {f"cupy.{name}" for name in _SUBMODULES} or any(
        module_name == m or module_name.startswith(m + ".")
        for m in ("cupyx", "array_api_compat.cupy"))


@contextlib.contextmanager
def as_cupy():
    """The stand-in is ``cupy`` for every ``import cupy`` inside the block (the library's
    ``cuda`` backend then allocates, holds and launches stand-in arrays). NVRTC stays CuPy's
    bindings (``runtime/nvrtc.py`` compiles with them, as on a GPU): imported first."""
    with contextlib.suppress(RuntimeError):  # without NVRTC, compiles say what to install
        nvrtc.load_nvrtc()  # CuPy loads the library on first use, through ``cupy`` itself
    global _real_cupy
    if "cupy" not in sys.modules:
        with contextlib.suppress(ImportError):
            import cupy  # noqa: F401  (CuPy itself: which names the stand-in has)
    previous = sys.modules.get("cupy")
    if not isinstance(previous, CupyStandin):
        _real_cupy = previous
    # CuPy's lazily loaded cupyx would load against the stand-in when anything walks
    # sys.modules (hypothesis does): out of sight while the stand-in is cupy; and
    # array_api_compat.cupy, imported earlier in the session, holds CuPy itself as its `cp`:
    # hidden, so that the block imports it afresh against the stand-in
    hidden = {name: sys.modules.pop(name) for name in list(sys.modules)
              if _bound_to_cupy(name)}
    sys.modules["cupy"] = _side
    sys.modules["cupyx"] = cupyx  # errstate for cupy.linalg (CuPy's own binds CuPy: hidden)
    for name in _SUBMODULES:  # ``import cupy.linalg`` finds the stand-in's
        sys.modules[f"cupy.{name}"] = getattr(_side, name)
    try:
        yield _side
    finally:
        for name in [n for n in sys.modules if _bound_to_cupy(n)]:
            del sys.modules[name]  # imported against the stand-in inside the block
        sys.modules.update(hidden)
        compat = sys.modules.get("array_api_compat")
        if compat is not None and "array_api_compat.cupy" in hidden:
            compat.cupy = hidden["array_api_compat.cupy"]
        if previous is None:
            del sys.modules["cupy"]
        else:
            sys.modules["cupy"] = previous


@contextlib.contextmanager
def driver_present():
    """The machine the stand-in models has NVIDIA's driver: ``runtime/availability.py``,
    which looks for ``libcuda.so.1`` beside CuPy, finds it (``demo``/``gpu-check --backend
    cuda`` then run on the stand-in)."""
    from infini_cupy.runtime import availability

    previous = availability._driver_library
    availability._driver_library = lambda: None
    try:
        yield
    finally:
        availability._driver_library = previous


@contextlib.contextmanager
def installed(capabilities=(90,)):
    """A fresh stand-in with devices of these compute capabilities, installed for the cuda
    launcher (every thread), with the stand-in for ``cuda.bindings.driver`` (the driver launch
    never hands the real driver a stand-in's handle); threads start on device 0 without
    contexts."""
    from tests.support import driver_standin  # the driver launch's bindings: a stand-in too

    global _side
    previous, _side = _side, CupyStandin(capabilities)
    _thread.device, _thread.contexts = 0, frozenset()
    try:
        with cuda.device_side(_side), driver_standin.installed():
            yield _side
    finally:
        _side = previous


@contextlib.contextmanager
def as_gpu_machine():
    """What ``pytest --backend cuda-standin`` installs: a stand-in device newer than NVRTC
    knows, as ``cupy``, on a machine with NVIDIA's driver (the notebooks' GPU branches run
    on it too, ``tests/support/notebooks.py``)."""
    with installed(capabilities=(NEWER_THAN_NVRTC,)), as_cupy(), driver_present():
        yield


class ThroughCudaLauncher:
    """The ``emulate`` backend's launches sent through the cuda launcher: NumPy arrays become
    stand-in arrays on the current device, and the stand-in runs them in the emulator."""

    def launch(self, source, name, grid, block, args, shared_mem=0):
        args = [_side.device_view(a) if isinstance(a, np.ndarray) else a for a in args]
        cuda.launch(source, name, grid, block, args, shared_mem)

    def prepare(self, source, names):
        """The emulator's batch build only: the cuda launcher compiles what is launched, at
        its first launch (a prepared batch is mostly variants a test never launches, and
        each costs an NVRTC compile; ``cuda.prepare`` has its own test)."""
        emulator.prepare(source, names)
