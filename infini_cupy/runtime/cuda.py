"""The ``cuda`` launcher: our kernels loaded and launched through ``cupy.RawModule`` /
``RawKernel``, on CuPy's current device and stream.

Why we compile ourselves: ``RawModule(code=...)`` appends ``-ftz=true`` to the caller's
options (NVRTC takes the last), flushing float32 subnormals that the emulator keeps. So NVRTC
runs here with exactly our options (:mod:`.nvrtc`), one binary per (source, name expression,
architecture), kept on disk under ``$INFINI_CUPY_CACHE_DIR/cubin`` (keyed by the expanded
source, options, NVRTC version and architecture), and ``RawModule(path=...)`` loads it.

Everything else is CuPy's: it loads the module on every device that launches it, makes a
context current on the calling thread, launches on the current stream (we call the
``RawKernel``'s ``Function`` for the device, kept per device: what ``RawKernel.__call__``
looks up per launch), and packs the arguments by its rules: a ``cupy.ndarray`` as a
``CArray`` (its data pointer first, then size, shape and strides; the kernel's 8-byte pointer
parameter reads the pointer), a ``MemoryPointer`` as the pointer alone, a NumPy scalar by
value. A kernel that takes dynamic shared memory is opted in to the device's whole
limit through ``RawKernel.max_dynamic_shared_size_bytes`` where it is loaded (CuPy's getter
and setter call the driver without making a context current; the load has just made one
current), never at a launch.

Structs pass as what our planners make, NumPy structured scalars (``numpy.void``), which
CuPy 14 packs like any NumPy scalar (``_scalar.CScalar``: the bytes, by value), not as the
NumPy arrays of size one that CuPy's documentation shows: measured with CuPy 14.2's own
classes, an array costs 3.1 us per struct per launch (``CNumpyArray`` reads
``__array_interface__``), a structured scalar 0.17 us, and a copy plan passes seven.

Three launch mechanisms, chosen by ``$INFINI_CUPY_LAUNCH`` (read at import) or
:func:`launch_mechanism`: ``cupy`` (the default until a GPU's measurement decides), CuPy's
``Function`` as above; ``driver``, ``cuda.bindings``' ``cuLaunchKernel`` on the same
``Function``'s handle with arguments packed once per launch record (:mod:`.cuda_driver`);
``compiled``, libcuda's ``cuLaunchKernel`` called from the compiled hot path, on the same
records, and a repeated one-launch elementwise call of Arrays run in C end to end
(:mod:`.cuda_compiled`).

Tests without a GPU run this module against a stand-in for CuPy's device side
(``tests/support/cupy_standin.py``, installed with :func:`device_side`) and, for the driver
mechanisms, one for ``cuda.bindings.driver`` and for libcuda's two entry points
(``tests/support/driver_standin.py``).
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from .. import config
from ..arrays import require_cupy
from ..perf.devices import STATIC_SHARED_BYTES as STATIC_SHARED_LIMIT  # without opting in
from . import cuda_compiled, cuda_driver, elf
from .nvrtc import NVRTC_OPTIONS, arch_for, compile_program, nvrtc_version
from .sources import expanded_source
from .structs import dim3

_kernels: dict[tuple[int, str, str], object] = {}  # (device id, source, name) -> RawKernel
_functions: dict[tuple[int, str, str], object] = {}  # ... -> its Function on that device
_by_arch: dict[tuple[str, str, str], object] = {}  # (arch, source, name) -> RawKernel
_dynamic_shared: dict[tuple[str, str, str], bool] = {}  # ... -> declares dynamic shared memory
_lock = threading.Lock()
_optin_limits: dict[int, int] = {}  # device id -> cudaDevAttrMaxSharedMemoryPerBlockOptin
_allowed_shared: dict[tuple[int, str, str], int] = {}  # the opt-in set at each load
counts = {"hits": 0, "compiles": 0}  # binaries read from the disk cache / compiled by NVRTC
COUNTS_VAR = "INFINI_CUPY_CACHE_COUNTS"  # a file: each process appends its counts at exit


@atexit.register
def append_counts() -> None:
    """At exit, add this process's :data:`counts` to ``$INFINI_CUPY_CACHE_COUNTS`` when set
    (gpu-check counts cache hits and compiles over the processes of a step)."""
    path = os.environ.get(COUNTS_VAR)
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(counts) + "\n")
_without_gpu: list = []  # non-empty once CuPy said it has no device
_device_side = None  # a stand-in for CuPy (tests), else None: CuPy itself
_fallback_dir: list = []  # a per-process folder when the cache folder cannot be written
_log = logging.getLogger("infini_cupy")  # one INFO record per kernel load, none per launch
_mechanism = config.launch_in_force  # how launches go: cupy, driver or compiled


@contextlib.contextmanager
def launch_mechanism(name: str):
    """Launch through ``name`` (``cupy`` or ``driver``, see :data:`.config.LAUNCH_MECHANISMS`)
    inside the block, every thread."""
    if name not in config.LAUNCH_MECHANISMS:
        raise ValueError(f"unknown launch mechanism {name!r}; expected one of "
                         f"{', '.join(config.LAUNCH_MECHANISMS)}")
    previous, _mechanism[0] = _mechanism[0], name
    try:
        yield name
    finally:
        _mechanism[0] = previous


@contextlib.contextmanager
def device_side(module):
    """Run this launcher against ``module`` in place of CuPy (every thread): a stand-in for
    CuPy's device side that runs launches without a GPU."""
    global _device_side
    previous, _device_side = _device_side, module
    forget_kernels()
    try:
        yield module
    finally:
        _device_side = previous
        forget_kernels()


def forget_kernels() -> None:
    """Drop the loaded kernels and device attributes (the next launch loads them again)."""
    with _lock:
        _kernels.clear()
        _functions.clear()
        _by_arch.clear()
        _dynamic_shared.clear()
        _optin_limits.clear()
        _allowed_shared.clear()
    cuda_driver.forget()
    cuda_compiled.forget()


def _cupy():
    return _device_side if _device_side is not None else require_cupy()


device_side_module = _cupy  # () -> CuPy, or the stand-in installed with device_side


def device_arch() -> str:
    """The NVRTC architecture of the current device (see :func:`.nvrtc.arch_for`)."""
    return arch_for(int(_cupy().cuda.Device().compute_capability))


# Format 2: whole cubins (format 1 wrote them one byte short; its entries are never read).
CACHE_FORMAT = 2


def cache_key(source: str, name: str, arch: str, version=None) -> tuple:
    """What a cached binary depends on. A cubin (``sm_XX``) names NVRTC's major version only:
    a cubin of a newer NVRTC of the same major loads on an older driver of that major (CUDA's
    minor-version compatibility), so a cache warmed elsewhere with NVRTC 13.5 serves a CUDA 13.0
    machine, and its load is checked (:func:`load_kernel`). PTX (``compute_XX``) names the
    full version: a driver refuses PTX newer than itself."""
    version = tuple(version or nvrtc_version())
    made_by = version[:1] if arch.startswith("sm_") else version
    return (CACHE_FORMAT, expanded_source(source), name, NVRTC_OPTIONS, made_by, arch)


def _cache_stem(source: str, name: str, arch: str) -> str:
    return hashlib.sha256(repr(cache_key(source, name, arch)).encode()).hexdigest()[:32]


def _write_atomically(path: Path, data: bytes) -> None:
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as f:
        f.write(data)
    os.replace(f.name, path)


def _write_entry(folder: Path, stem: str, binary: bytes, about: dict) -> Path:
    """``<stem>.bin``, then ``<stem>.json`` (its lowered name): the JSON marks it complete."""
    folder.mkdir(parents=True, exist_ok=True)
    _write_atomically(folder / f"{stem}.bin", binary)
    _write_atomically(folder / f"{stem}.json", json.dumps(about).encode())
    return folder / f"{stem}.bin"


def _store(stem: str, binary: bytes, about: dict) -> Path:
    """Keep a binary on disk (``RawModule`` loads from a path). An unwritable cache folder
    costs a compile per process, nothing else: the binary goes to a folder of this process."""
    try:
        return _write_entry(config.cache_dir() / "cubin", stem, binary, about)
    except OSError:
        if not _fallback_dir:
            folder = Path(tempfile.mkdtemp(prefix="infini_cupy-cubin-"))
            atexit.register(shutil.rmtree, folder, ignore_errors=True)  # none left behind
            _fallback_dir.append(folder)
        return _write_entry(_fallback_dir[0], stem, binary, about)


def _compile_entry(source: str, name: str, arch: str, folder: Path | None = None) -> Path:
    """Compile one name expression and keep it: in ``folder`` (warmup), else the cache."""
    program = compile_program(source, [name], arch)
    about = {"source": source, "name": name, "arch": arch,
             "lowered": program.lowered_names[name],
             "nvrtc": ".".join(map(str, nvrtc_version())),
             "dynamic_shared": ".extern .shared" in program.ptx}
    stem = _cache_stem(source, name, arch)
    counts["compiles"] += 1
    if folder is not None:
        return _write_entry(folder, stem, program.binary, about)
    return _store(stem, program.binary, about)


def _cached_entry(source: str, name: str, arch: str,
                  folder: Path | None = None) -> tuple[dict, Path] | None:
    """(about, path) of a complete entry in ``folder`` (warmup), else in the cache; or None."""
    stem = _cache_stem(source, name, arch)
    folders = [folder] if folder is not None else [config.cache_dir() / "cubin"] + _fallback_dir
    for folder in folders:
        try:
            about = json.loads((folder / f"{stem}.json").read_text())
            about["lowered"]
            binary = (folder / f"{stem}.bin").read_bytes()
        except (OSError, ValueError, KeyError):
            continue
        if arch.startswith("sm_") and elf.problem(binary, arch):
            continue  # damaged, or not for this architecture: compiled again
        return about, folder / f"{stem}.bin"
    return None


def module_file(source: str, name: str, arch: str) -> tuple[dict, Path]:
    """(what the cache says of it, path of the cubin or PTX) of one name expression: from the
    disk cache, else compiled by NVRTC and written there."""
    entry = _cached_entry(source, name, arch)
    if entry is not None:
        counts["hits"] += 1
        return entry
    path = _compile_entry(source, name, arch)
    return json.loads(path.with_suffix(".json").read_text()), path


def _load(cupy, source: str, name: str, arch: str):
    """The ``RawKernel`` of one name expression, loaded on the current device. A cached cubin
    the driver refuses (another NVRTC's, on a driver too old for it) is compiled again here
    and replaces the cached one."""
    about, path = module_file(source, name, arch)
    try:
        kernel = cupy.RawModule(path=str(path)).get_function(about["lowered"])
    except cupy.cuda.driver.CUDADriverError:
        if about.get("nvrtc") == ".".join(map(str, nvrtc_version())):
            raise  # our own NVRTC's binary: compiling again would give the same
        path = _compile_entry(source, name, arch)
        about = json.loads(path.with_suffix(".json").read_text())
        kernel = cupy.RawModule(path=str(path)).get_function(about["lowered"])
    _dynamic_shared[(arch, source, name)] = about.get("dynamic_shared", True)
    return kernel


def get_kernel(source: str, name: str):
    """The ``RawKernel`` of name expression ``name`` of ``kernels_src/<source>`` for the
    current device: compiled (or read from disk) once per architecture; loaded on each device
    that launches it, where a kernel that takes dynamic shared memory is opted in to the
    device's whole limit (the attribute calls need a context current, which the load has just
    made current on this thread; on a later thread it may not be)."""
    cupy = _cupy()
    device = cupy.cuda.runtime.getDevice()
    key = (device, source, name)
    kernel = _kernels.get(key)
    if kernel is not None:
        return kernel
    with _lock:  # one compile per variant even when threads race for it
        kernel = _kernels.get(key)
        if kernel is None:
            arch = device_arch()
            kernel = _by_arch.get((arch, source, name))
            if kernel is None:
                started, compiles = time.perf_counter(), counts["compiles"]
                kernel = _by_arch[(arch, source, name)] = _load(cupy, source, name, arch)
                _log.info("kernel %s (%s): cuda %s, %.1f ms, %s", name, source, arch,
                          (time.perf_counter() - started) * 1e3,
                          "compiled by NVRTC" if counts["compiles"] > compiles else "disk cache")
            else:
                kernel.kernel  # CuPy loads it on this device (and makes a context current)
            _opt_in(kernel, key, _dynamic_shared[(arch, source, name)])
            _kernels[key] = kernel
    return kernel


def _opt_in(kernel, key, dynamic_shared: bool) -> None:
    limit = max_dynamic_shared()
    allowed = STATIC_SHARED_LIMIT
    if dynamic_shared and limit is not None and limit > allowed:
        allowed = limit - kernel.shared_size_bytes  # static and dynamic share the limit
        kernel.max_dynamic_shared_size_bytes = allowed
    _allowed_shared[key] = allowed


_planned_limit: list = []  # planning_for's limit, innermost last


@contextlib.contextmanager
def planning_for(optin_limit: int):
    """Plan copies inside the block as for a GPU whose blocks may opt in to ``optin_limit``
    bytes of dynamic shared memory (``warmup --arch``: an H100's plans without one)."""
    _planned_limit.append(int(optin_limit))
    try:
        yield
    finally:
        _planned_limit.pop()


def max_dynamic_shared() -> int | None:
    """The dynamic shared memory a block may opt in to on the current device (227 KiB on an
    H100), or None without CuPy or a GPU."""
    if _planned_limit:
        return _planned_limit[-1]
    cupy = _device_side or sys.modules.get("cupy")  # no GPU arrays exist before CuPy's import
    if cupy is None or (_without_gpu and _device_side is None):
        return None
    try:
        device = cupy.cuda.runtime.getDevice()
    except Exception:  # CuPy without a GPU or driver: asked once (plans ask per layout)
        _without_gpu.append(True)
        return None
    limit = _optin_limits.get(device)
    if limit is None:
        runtime = cupy.cuda.runtime
        limit = _optin_limits[device] = int(runtime.deviceGetAttribute(
            runtime.cudaDevAttrMaxSharedMemoryPerBlockOptin, device))
    return limit


def _function_on(device: int, source: str, name: str):
    """The kernel's CuPy ``Function`` on ``device`` (the current one): what ``RawKernel``
    calls per launch after looking it up by device; launching it directly spares that
    lookup and a Python frame per launch."""
    function = _functions.get((device, source, name))
    if function is None:
        function = _functions[(device, source, name)] = get_kernel(source, name).kernel
    return function


def function_handle(device: int, source: str, name: str) -> int:
    """The ``CUfunction`` of a name expression loaded on ``device`` (the current one)."""
    return _function_on(device, source, name).ptr


def launch(source: str, name: str, grid, block, args, shared_mem: int = 0) -> None:
    """Launch on the arrays' device, on CuPy's current stream there; no synchronization.

    CuPy is handed an array's ``MemoryPointer`` (``.data``: CuPy packs the pointer alone, a
    ``CIntptr``, where an array would cost a ``CArray`` of its size, shape and strides per
    launch; the ``MemoryPointer`` holds the memory for the launch), a NumPy scalar as it is."""
    cupy = _cupy()
    ndarray, passed, on = cupy.ndarray, [], None
    for index, arg in enumerate(args):
        if isinstance(arg, ndarray):
            memory = arg.data
            if on is None:  # the first array's device (callers have checked that they agree)
                on = memory.device_id
            passed.append(memory)
        elif isinstance(arg, np.generic):
            passed.append(arg)
        else:
            raise TypeError(f"argument {index} of kernel {name}: expected a CuPy array or a "
                            f"NumPy scalar, got {type(arg).__name__}")
    device = cupy.cuda.runtime.getDevice()
    if on is not None and on != device:  # arrays on a GPU that is not the current one
        with cupy.cuda.Device(on):
            _launch_on(on, source, name, grid, block, tuple(passed), shared_mem)
        return
    _launch_on(device, source, name, grid, block, tuple(passed), shared_mem)


def _launch_on(device, source, name, grid, block, passed, shared_mem):
    function = _function_on(device, source, name)
    if shared_mem > STATIC_SHARED_LIMIT:
        allowed = _allowed_shared[(device, source, name)]
        if shared_mem > allowed:
            raise ValueError(f"kernel {name}: {shared_mem} bytes of dynamic shared memory; "
                             f"this device allows it {allowed}")
    grid = (grid, 1, 1) if type(grid) is int else dim3(grid)
    block = (block, 1, 1) if type(block) is int else dim3(block)
    mechanism = _mechanism[0]
    if mechanism != "cupy":  # driver, compiled: cuLaunchKernel on a record packed once
        cuda_driver.launch(_cupy(), device, function, (mechanism, device, source, name, grid,
                                                      block, shared_mem), grid, block, passed,
                           shared_mem, mechanism)
        return
    function(grid, block, passed, shared_mem=shared_mem)


def prepare(source: str, names) -> None:
    """Compile (or read from disk) and load ``names`` for the current device ahead of their
    first launch."""
    for name in names:
        get_kernel(source, name)
