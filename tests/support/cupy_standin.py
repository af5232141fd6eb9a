"""A stand-in for CuPy's device side, as strict as CuPy 14.2 where our cuda launcher meets it,
so that ``infini_cupy/runtime/cuda.py`` runs without a GPU: ``pytest --backend cuda-standin``
sends every launch of the suite through it, and the launch then runs in the emulator.

What it models (read from CuPy's ``cupy/_core/raw.pyx``, ``cupy/cuda/function.pyx``,
``cupy/_core/_scalar.pyx`` and ``cupy_backends/cuda/api/runtime.pyx``):

- devices with ids and compute capabilities, the current device of each thread
  (``runtime.getDevice``/``setDevice``, ``with Device(i)``), the opt-in shared memory limit;
- a CUDA context per thread and device: the driver-level calls (``driver.*``) fail with
  ``CUDA_ERROR_INVALID_CONTEXT`` on a thread that has none current, as a thread whose memory
  came from CuPy's pool does; ``RawModule`` loads and ``RawKernel`` launches make one current
  first, as CuPy's ``_ensure_context`` does;
- ``ndarray``: host memory (a NumPy view) carrying ``.data.ptr`` (element 0), ``.device``,
  shape, strides and dtype;
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
  and NumPy scalars;
  anything else TypeError), their number and byte sizes against the ``.param`` list of the
  kernel's PTX, dynamic shared memory above 48 KiB only after the kernel was opted in on
  that device, never above the device's limit.

The launch runs in the emulator: the launcher's cache entry beside the binary
(``<key>.json``) names the source and name expression; the kernel's PTX (the binary itself
for a PTX device, else compiled by NVRTC for the device's architecture) gives the
parameters.
"""

from __future__ import annotations

import contextlib
import json
import threading
from pathlib import Path

import numpy as np

from infini_cupy.arrays import numpy_data_pointer
from infini_cupy.runtime import cuda, elf, nvrtc
from infini_cupy.runtime.emulate import launcher as emulator
from tests.support.ptx import ptx_parameters, static_shared_bytes

STATIC_SHARED_LIMIT = 49152
# A device newer than any architecture NVRTC knows: the launcher hands it PTX (which the
# stand-in reads its parameters from, no second compile). The suite's stand-in run uses it.
NEWER_THAN_NVRTC = 990
OPTIN_LIMIT = 232448  # an H100's cudaDevAttrMaxSharedMemoryPerBlockOptin
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_INVALID_IMAGE = 200
CUDA_ERROR_INVALID_CONTEXT = 201
CUDA_ERROR_NO_BINARY_FOR_GPU = 209
CUDA_ERROR_INVALID_HANDLE = 400


class CUDADriverError(RuntimeError):
    def __init__(self, status: int, what: str):
        super().__init__(f"{what}: CUDA driver error {status}")
        self.status = status


class _ThreadState(threading.local):
    device = 0
    contexts: frozenset = frozenset()  # devices with a context current on this thread
    capturing = False  # stream capture (tests/support/capture.py): loads and syncs fail
    in_kernel = False  # the emulator runs a launch (its own files are not the launcher's)


CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900


def refuse_in_capture(what: str) -> None:
    """What a capturing stream refuses (a module load, an allocation, a synchronization)."""
    if _thread.capturing:
        raise CUDADriverError(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, f"{what} during capture")


_thread = _ThreadState()


class Stream:
    def __init__(self, device: int):
        self.device, self.ptr = device, 0  # the legacy default stream of that device


class Device:
    """``cupy.cuda.Device``: a context manager that makes it current on this thread."""

    def __init__(self, device=None):
        self.id = _thread.device if device is None else int(device)
        if not 0 <= self.id < len(_side.capabilities):
            raise CUDADriverError(101, f"cudaSetDevice({self.id})")  # invalid device ordinal
        self._previous = []

    @property
    def compute_capability(self) -> str:
        return str(_side.capabilities[self.id])

    def __enter__(self):
        self._previous.append(_thread.device)
        _thread.device = self.id
        return self

    def __exit__(self, *exc):
        _thread.device = self._previous.pop()

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(self.id)

    def __repr__(self):
        return f"<CUDA Device {self.id} (stand-in)>"


class _Runtime:
    cudaDevAttrMaxSharedMemoryPerBlockOptin = 97

    @staticmethod
    def getDevice() -> int:
        return _thread.device

    @staticmethod
    def setDevice(device: int) -> None:
        _thread.device = Device(device).id

    @staticmethod
    def getDeviceCount() -> int:
        return len(_side.capabilities)

    @staticmethod
    def deviceSynchronize() -> None:
        refuse_in_capture("cudaDeviceSynchronize")

    @staticmethod
    def streamSynchronize(stream: int) -> None:
        refuse_in_capture("cudaStreamSynchronize")

    @staticmethod
    def getDeviceProperties(device: int) -> dict:
        return {"name": f"stand-in sm_{_side.capabilities[device]}".encode(),
                "totalGlobalMem": 80 << 30}

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
    def launchKernel(*args) -> None:
        _require_context("cuLaunchKernel")
        raise NotImplementedError("the stand-in launches through RawKernel only")


class ndarray:
    """A CuPy array in host memory: a NumPy view and the device it belongs to."""

    def __init__(self, host: np.ndarray, device: int | None = None):
        self.host = host
        self.device = Device(device)
        self.data = _MemoryPointer(numpy_data_pointer(host), self)

    shape = property(lambda self: self.host.shape)
    strides = property(lambda self: self.host.strides)
    dtype = property(lambda self: self.host.dtype)
    size = property(lambda self: self.host.size)
    nbytes = property(lambda self: self.host.nbytes)
    ndim = property(lambda self: self.host.ndim)

    def get(self) -> np.ndarray:
        return self.host.copy()


class _MemoryPointer:
    """``cupy.cuda.MemoryPointer``: an address on a device (here, the array it came from)."""

    def __init__(self, ptr: int, owner: ndarray):
        self.ptr, self.owner, self.device_id = ptr, owner, owner.device.id


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

    def get_function(self, name: str) -> RawKernel:
        if type(name) is not str:
            raise TypeError(f"Argument 'name' has incorrect type (expected str, got "
                            f"{type(name).__name__})")
        params = ptx_parameters(self._ptx())
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
            return x.host, 8
        if isinstance(x, _MemoryPointer):  # CIntptr(x.ptr)
            if x.device_id != _thread.device:
                raise CUDADriverError(700, f"argument {index} of {self.name} points to device "
                                           f"{x.device_id}, the launch is on {_thread.device}")
            return x.owner.host, 8
        if isinstance(x, np.ndarray):
            if x.size != 1:
                raise TypeError(f"You are trying to pass a numpy.ndarray of shape {x.shape} as "
                                "a kernel parameter. Only numpy.ndarrays of size one can be "
                                "passed by value.")
            return x.reshape(())[()], x.dtype.itemsize
        if type(x) in _PYTHON_SCALARS:
            value = _PYTHON_SCALARS[type(x)](x)
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

    def __call__(self, grid, block, args, shared_mem: int = 0, stream=None,
                 enable_cooperative_groups: bool = False):
        raw = self.raw
        if type(grid) is not tuple or type(block) is not tuple:
            raise TypeError("Argument 'grid' and 'block' must be tuples")
        if shared_mem < 0:
            raise OverflowError("can't convert negative value to size_t")
        _ensure_context()  # CuPy's _launch makes one current before cuLaunchKernel
        if _thread.device != self.device:
            raise CUDADriverError(CUDA_ERROR_INVALID_HANDLE,
                                  f"cuLaunchKernel of {raw.name} loaded on device {self.device} "
                                  f"in device {_thread.device}'s context")
        host = [raw._argument(i, a) for i, a in enumerate(args)]
        sizes = tuple(size for _, size in host)
        if sizes != raw.param_sizes:
            raise TypeError(f"kernel {raw.name}: the PTX takes parameters of {raw.param_sizes} "
                            f"bytes, the launch passes {sizes}")
        if shared_mem > raw._max_dynamic[self.device]:
            raise CUDADriverError(CUDA_ERROR_INVALID_VALUE,
                                  f"cuLaunchKernel with {shared_mem} bytes of dynamic shared "
                                  f"memory, {raw._max_dynamic[self.device]} allowed")
        _side.launches.append((raw.name, self.device))
        _thread.in_kernel = True
        try:
            emulator.launch(raw.module.about["source"], raw.module.about["name"], grid,
                            block, [value for value, _ in host], shared_mem)
        finally:
            _thread.in_kernel = False


_PYTHON_SCALARS = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}


# ---------------------------------------------------------------- the module itself
class _Cuda:
    Device = Device
    runtime = _Runtime
    driver = _Driver

    @staticmethod
    def get_current_stream() -> Stream:
        return Stream(_thread.device)


class CupyStandin:
    """What ``runtime/cuda.py`` sees as ``cupy``; records loads and launches for the tests."""

    ndarray = ndarray
    RawModule = RawModule
    RawKernel = RawKernel
    cuda = _Cuda

    def __init__(self, capabilities=(90,)):
        self.capabilities = tuple(capabilities)
        self.loaded_paths: list[str] = []
        self.module_loads: list[tuple[str, int]] = []
        self.launches: list[tuple[str, int]] = []

    def asarray(self, host: np.ndarray, device: int | None = None) -> ndarray:
        refuse_in_capture("an allocation (asarray)")
        return ndarray(host, device)


_side = CupyStandin()


@contextlib.contextmanager
def installed(capabilities=(90,)):
    """A fresh stand-in with devices of these compute capabilities, installed for the cuda
    launcher (every thread); threads start on device 0 without contexts."""
    global _side
    previous, _side = _side, CupyStandin(capabilities)
    _thread.device, _thread.contexts = 0, frozenset()
    try:
        with cuda.device_side(_side):
            yield _side
    finally:
        _side = previous


class ThroughCudaLauncher:
    """The ``emulate`` backend's launches sent through the cuda launcher: NumPy arrays become
    stand-in arrays on the current device, and the stand-in runs them in the emulator."""

    def launch(self, source, name, grid, block, args, shared_mem=0):
        args = [ndarray(a) if isinstance(a, np.ndarray) else a for a in args]
        cuda.launch(source, name, grid, block, args, shared_mem)

    def prepare(self, source, names):
        """The emulator's batch build only: the cuda launcher compiles what is launched, at
        its first launch (a prepared batch is mostly variants a test never launches, and
        each costs an NVRTC compile; ``cuda.prepare`` has its own test)."""
        emulator.prepare(source, names)
