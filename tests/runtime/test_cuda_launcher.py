"""The cuda launcher (``runtime/cuda.py``) against the stand-in for CuPy's device side
(``tests/support/cupy_standin.py``): loads through ``RawModule(path=...)``, launches through
``RawKernel`` with CuPy's argument rules, per device, per thread; and a regression test for
each defect found in review before its first GPU launch.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cupy")  # NVRTC compiles what the stand-in loads

from infini_cupy import config, dtypes  # noqa: E402
from infini_cupy.runtime import cuda  # noqa: E402
from infini_cupy.runtime.structs import CONSTRAINT, array_struct  # noqa: E402
from infini_cupy.strided.plan_cache import coalescing_plans  # noqa: E402
from tests.support import cupy_standin  # noqa: E402
from tests.support.device import ALIGN, same_layout_on_gpu  # noqa: E402
from tests.support.dtype_cases import require_bfloat16  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
COPY = "rearrange<4, 1, 1, 0>"  # 4-byte units, one block dim, one grid dim, no constraint


@pytest.fixture
def side(tmp_path, monkeypatch):
    """A stand-in with two devices (an H100-like sm_90 and a GPU newer than NVRTC knows, which
    gets PTX) and a fresh binary cache."""
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
    with cupy_standin.installed(capabilities=(90, 990)) as side:
        yield side


def _copy_arguments(side, dst, src, device=None):
    """The arguments of ``rearrange<4, 1, 1, 0>`` copying a 1-d float32 ``src`` (at most 32
    elements) into ``dst`` with one block (see plan_cache.py for the planned ones)."""
    n = src.size
    return (side.device_view(dst, device), side.device_view(src, device),
            array_struct([n]), array_struct([4]), array_struct([4]),
            array_struct([1]), array_struct([0]), array_struct([0]),
            array_struct([(0, 0, 0, 0)], 1, CONSTRAINT), np.int64(n), np.int64(1))


def _launch_copy(side, n=20, device=None):
    src = np.arange(n, dtype=np.float32)
    dst = np.zeros_like(src)
    cuda.launch("rearrange.cu", COPY, 1, 32, _copy_arguments(side, dst, src, device))
    return src, dst


def test_plan_and_launch_match_the_ptx():
    """The launcher's argument packing for a planned copy passes the stand-in's PTX check
    (count and byte size of every parameter) and copies exactly."""
    import infini_cupy as xp
    from infini_cupy.runtime import launch

    x = np.random.default_rng(0).standard_normal((37, 5, 9)).astype(np.float32)
    with cupy_standin.installed() as side, xp.backend("emulate"), \
            launch.launcher_replaced("emulate", cupy_standin.ThroughCudaLauncher()):
        y = xp.rearrange(x.transpose(2, 0, 1))
        z = xp.add(x[:, ::-1], x[::2].repeat(2, axis=0)[:37])
    np.testing.assert_array_equal(y, x.transpose(2, 0, 1))
    np.testing.assert_array_equal(z, x[:, ::-1] + x[::2].repeat(2, axis=0)[:37])
    assert len(side.launches) >= 2


def test_functions_are_taken_by_their_lowered_name_as_str(side):
    """Defect 1: ``moduleGetFunction(module, lowered.encode())`` raised TypeError on every
    first launch (CuPy 13/14 take the name as str). The stand-in refuses bytes as CuPy does,
    so this launch fails if the launcher passes the name as bytes anywhere."""
    src, dst = _launch_copy(side)
    np.testing.assert_array_equal(dst, src)
    module = side.RawModule(path=side.loaded_paths[0])
    lowered = side.module_loads[0][0]
    with pytest.raises(TypeError, match="expected str, got bytes"):
        module.get_function(lowered.encode())
    with pytest.raises(TypeError, match="expected str, got bytes"):
        side.cuda.driver.moduleGetFunction(1, lowered.encode())


def test_a_fresh_thread_launches_without_making_a_context_itself(side):
    """Defect 2: nothing made a context current before ``moduleLoadData``/``launchKernel``,
    so a thread that never touched CUDA failed. CuPy's RawModule/RawKernel make it current
    (the stand-in's driver calls refuse a thread without one, as CUDA does)."""
    _launch_copy(side)  # loaded on this thread
    results = []

    def worker():
        with pytest.raises(cupy_standin.CUDADriverError, match="201"):  # INVALID_CONTEXT
            side.cuda.driver.moduleLoadData(b"")
        results.append(_launch_copy(side, n=29))

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert len(results) == 1
    np.testing.assert_array_equal(results[0][1], results[0][0])


def test_bfloat16_inputs_reach_the_gpu_in_their_layout():
    """Defect 3: ``to_device`` sent bfloat16 (dtype kind 'V') through ``cupy.asarray``, which
    makes a C-contiguous copy: bfloat16 layout tests tested contiguous inputs on a GPU. Now it
    keeps shape, strides and the address modulo 256 (checked here with NumPy as the array
    module: a plain asarray would return the input itself)."""
    require_bfloat16()
    rng = np.random.default_rng(1)
    base = rng.standard_normal((9, 14)).astype(dtypes.BFLOAT16)
    for view in (base.T, base[1::2, ::-3], base[:, 3:]):
        moved = same_layout_on_gpu(view, xp=np)
        assert moved is not view and not np.shares_memory(moved, view)
        assert moved.dtype == view.dtype and moved.strides == view.strides
        assert moved.ctypes.data % ALIGN == view.ctypes.data % ALIGN
        np.testing.assert_array_equal(moved.astype(np.float32), view.astype(np.float32))


def test_the_cuda_extras_bring_the_runtime_headers_cupy_compiles_with():
    """Defect 4: CuPy's own kernels (our tests, the bench, ``.get()`` of views) need the CUDA
    runtime headers, which the extras did not install. Each extra names the runtime wheel of
    its CUDA major version, and CuPy's search (cuda.pathfinder) finds them here."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("nvidia-cuda-runtime>=13") for r in extras["cuda13"])
    assert any(r.startswith("nvidia-cuda-runtime-cu12") for r in extras["cuda12"])
    assert any(r.startswith("nvidia-cuda-runtime>=13") for r in extras["test"])
    from cuda.pathfinder import find_nvidia_header_directory

    include = find_nvidia_header_directory("cudart")
    assert include is not None and (Path(include) / "cuda_runtime.h").is_file()


def test_modules_load_on_every_device_that_launches_them(side):
    """Arrays on device 1 while device 0 is current: the launch runs on device 1 (the
    stand-in refuses another device's memory), the module is loaded there too, and the
    current device is restored."""
    _launch_copy(side, device=0)
    src, dst = _launch_copy(side, device=1)
    np.testing.assert_array_equal(dst, src)
    assert [d for _, d in side.launches] == [0, 1]
    assert sorted(d for _, d in side.module_loads) == [0, 1]
    assert side.cuda.runtime.getDevice() == 0
    # sm_90: a cubin; sm_990 (newer than NVRTC knows): PTX for compute_XX
    binaries = [Path(p).read_bytes()[:4] for p in side.loaded_paths]
    assert binaries[0] == b"\x7fELF" and binaries[1] != b"\x7fELF"


def test_each_device_launches_its_own_function(side):
    """The launcher keeps a CuPy ``Function`` per device: back on device 0 after device 1,
    the launch takes device 0's again (the stand-in, like the driver, refuses a function
    loaded on one device in another's context), and nothing is loaded twice."""
    for device in (0, 1, 0):
        src, dst = _launch_copy(side, device=device)
        np.testing.assert_array_equal(dst, src)
    assert [d for _, d in side.launches] == [0, 1, 0]
    assert sorted(d for _, d in side.module_loads) == [0, 1]
    on_device_0 = next(iter(cuda._functions.values()))
    with side.cuda.Device(1), pytest.raises(cupy_standin.CUDADriverError, match="device 0"):
        on_device_0((1, 1, 1), (32, 1, 1), ())


def test_a_launch_on_a_stream_of_another_device_fails(side):
    """CuPy's ``Function`` launches on the stream it is given (``function.pyx``
    ``_get_stream``), and the driver refuses a kernel launch on a stream of another device
    than the current one (a copy on it would be taken): so does the stand-in."""
    src, dst = _launch_copy(side)
    function = next(iter(cuda._functions.values()))
    with side.cuda.Device(1):
        elsewhere = side.cuda.Stream()
    with pytest.raises(cupy_standin.CUDADriverError, match="another device"):
        function((1,), (32,), _copy_arguments(side, dst, src), stream=elsewhere)
    dst[...] = 0
    function((1,), (32,), _copy_arguments(side, dst, src), stream=side.cuda.Stream())
    np.testing.assert_array_equal(dst, src)


def test_arrays_on_the_current_device_launch_there(side):
    with side.cuda.Device(1):
        src, dst = _launch_copy(side, device=1)
        assert side.cuda.runtime.getDevice() == 1
    np.testing.assert_array_equal(dst, src)
    assert [d for _, d in side.launches] == [1]


def test_structs_pass_by_value_as_numpy_structured_scalars(side):
    """Structs reach CuPy as NumPy structured scalars, which CuPy 14 packs by value like any
    NumPy scalar (its ``CScalar``: checked here against CuPy's own class, no GPU needed), any
    structured scalar, an element of a larger array too."""
    import ctypes

    from cupy._core._scalar import CScalar

    records = np.zeros(3, array_struct([0]).dtype)
    records["a"][1] = 20
    packed = CScalar(records[1])
    assert ctypes.string_at(packed.ptr, records.dtype.itemsize) == records[1].tobytes()
    src = np.arange(20, dtype=np.float32)
    dst = np.zeros_like(src)
    args = list(_copy_arguments(side, dst, src))
    args[2] = records[1]  # block_len, from a structured array of three
    cuda.launch("rearrange.cu", COPY, 1, 32, args)
    np.testing.assert_array_equal(dst, src)


def test_arguments_the_launcher_cannot_pass_are_a_clear_error(side):
    args = list(_copy_arguments(side, np.zeros(4, np.float32), np.ones(4, np.float32)))
    args[1] = np.ones(4, np.float32)  # a host array where a device pointer belongs
    with pytest.raises(TypeError, match=r"argument 1 of kernel rearrange<4, 1, 1, 0>: expected "
                                        r"a CuPy array or a NumPy scalar, got ndarray"):
        cuda.launch("rearrange.cu", COPY, 1, 32, args)
    assert side.launches == []


def test_the_stand_in_checks_arguments_against_the_ptx(side):
    """What makes the stand-in worth running: a wrong count or size fails as on a GPU it
    would corrupt parameters silently."""
    kernel = cuda.get_kernel("rearrange.cu", COPY)
    args = _copy_arguments(side, np.zeros(4, np.float32), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="the PTX takes parameters of"):
        kernel((1, 1, 1), (32, 1, 1), args[:-1])
    with pytest.raises(TypeError, match="the PTX takes parameters of"):
        kernel((1, 1, 1), (32, 1, 1), args[:-1] + (np.int32(0),))
    with pytest.raises(TypeError, match="numpy.ndarray of shape"):
        kernel((1, 1, 1), (32, 1, 1), args[:1] + (np.ones(4, np.float32),) + args[2:])
    with pytest.raises(TypeError, match="must be tuples"):
        kernel([1, 1, 1], (32, 1, 1), args)


PACKED_DYNAMIC = "packed_copy<2, 4, 2>"  # its tile in dynamic shared memory


def test_dynamic_shared_memory_is_opted_in_at_load_per_device(side):
    """Beyond 48 KiB a launch needs the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES raised on its
    device (the stand-in refuses it otherwise). A kernel that takes dynamic shared memory is
    opted in to the device's whole limit where it is loaded (a context is current there);
    past what it was allowed, a launch is a ValueError before any driver call."""
    packed = cuda.get_kernel("packed.cu", PACKED_DYNAMIC)
    assert packed.max_dynamic_shared_size_bytes == cupy_standin.OPTIN_LIMIT
    with side.cuda.Device(1):
        assert cuda.get_kernel("packed.cu", PACKED_DYNAMIC).max_dynamic_shared_size_bytes == \
            cupy_standin.OPTIN_LIMIT
    copy = cuda.get_kernel("rearrange.cu", COPY)  # no dynamic shared memory: left alone
    assert copy.max_dynamic_shared_size_bytes == cupy_standin.STATIC_SHARED_LIMIT
    args = _copy_arguments(side, np.zeros(4, np.float32), np.ones(4, np.float32))
    with pytest.raises(cupy_standin.CUDADriverError, match="60000 bytes of dynamic shared"):
        copy((1, 1, 1), (32, 1, 1), args, shared_mem=60000)
    with pytest.raises(ValueError, match="60000 bytes of dynamic shared memory; this device "
                                         "allows it 49152"):
        cuda.launch("rearrange.cu", COPY, 1, 32, args, shared_mem=60000)
    with pytest.raises(ValueError, match="240000 bytes of dynamic shared memory; this device "
                                         "allows it 232448"):
        cuda.launch("packed.cu", PACKED_DYNAMIC, 1, 32, args, shared_mem=240000)
    assert side.launches == []


def test_a_fresh_thread_launches_a_packed_copy_a_loaded_kernel_opted_in(side):
    """The opt-in's getter and setter call the driver without making a context current
    (CuPy 14.2's ``RawKernel``; so does the stand-in): read at launch, they failed on a thread
    whose first CUDA call is a packed copy of a kernel loaded by another thread."""
    import infini_cupy as xp
    from infini_cupy.runtime import launch

    x = np.random.default_rng(2).standard_normal((501, 501)).astype(np.float16)
    results = {}

    def transpose(where):
        try:
            with xp.backend("emulate"), launch.recording() as launches:
                results[where] = xp.rearrange(x.T), [r.name for r in launches]
        except BaseException as e:  # the thread's failure, for the assertion below
            results[where] = e

    # packed tiles: planned by coalescing (the model gives this transpose to a staged one)
    with launch.launcher_replaced("emulate", cupy_standin.ThroughCudaLauncher()), \
            coalescing_plans():
        transpose("main")
        worker = threading.Thread(target=transpose, args=("fresh",))
        worker.start()
        worker.join()
    for where in ("main", "fresh"):
        assert not isinstance(results[where], BaseException), results[where]
        y, kernels = results[where]
        np.testing.assert_array_equal(y, x.T)
        assert any(k.startswith("packed_copy<") and k.endswith(", 2>") for k in kernels), kernels


def test_binaries_and_their_lowered_names_are_cached_on_disk(side, tmp_path, monkeypatch):
    cuda.prepare("rearrange.cu", [COPY])
    entries = sorted(p.suffix for p in (tmp_path / "cubin").iterdir())
    assert entries == [".bin", ".json"]
    about = json.loads(next((tmp_path / "cubin").glob("*.json")).read_text())
    assert about["name"] == COPY and about["arch"] == "sm_90" and about["lowered"].startswith("_Z")

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled again instead of loading the cached binary")

    cuda.forget_kernels()
    monkeypatch.setattr(cuda, "compile_program", no_compile)
    src, dst = _launch_copy(side)  # a new process would find it the same way
    np.testing.assert_array_equal(dst, src)


def test_an_unwritable_cache_costs_a_compile_not_an_error(side, tmp_path, monkeypatch):
    _launch_copy(side)  # the emulator's build of the kernel (it needs its cache folder), then
    cuda.forget_kernels()  # the launcher's binaries alone without one
    first = len(side.loaded_paths)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(blocker))
    monkeypatch.setattr(cuda, "_fallback_dir", [])
    at_exit = []
    monkeypatch.setattr(cuda.atexit, "register", lambda f, *a, **k: at_exit.append((f, a, k)))
    src, dst = _launch_copy(side)
    np.testing.assert_array_equal(dst, src)
    assert Path(side.loaded_paths[first]).parent == cuda._fallback_dir[0]
    cuda.forget_kernels()
    _launch_copy(side)  # the same process finds it in its own folder
    assert side.loaded_paths[first + 1] == side.loaded_paths[first]
    for f, a, k in at_exit:  # what the process runs when it ends: the folder removed
        f(*a, **k)
    assert len(at_exit) == 1 and not cuda._fallback_dir[0].exists()


def test_the_opt_in_limit_is_read_once_per_device(side):
    assert cuda.max_dynamic_shared() == cupy_standin.OPTIN_LIMIT
    assert cuda._optin_limits == {0: cupy_standin.OPTIN_LIMIT}


def test_without_a_stand_in_the_launcher_asks_cupy(monkeypatch):
    """No GPU on this machine: CuPy itself says so, and plans fall back to the planner's own
    shared-memory limit (asked once). CuPy itself, also where the stand-in is ``cupy``
    (``--backend cuda-standin``)."""
    real = cupy_standin.real_cupy()
    try:
        if real.cuda.runtime.getDeviceCount() > 0:
            pytest.skip("a GPU is present")
    except Exception:  # noqa: BLE001 - CuPy's way of saying there is no GPU or driver
        pass
    monkeypatch.setitem(sys.modules, "cupy", real)
    monkeypatch.setattr(cuda, "_without_gpu", [])
    with cuda.device_side(None):
        assert cuda.max_dynamic_shared() is None and cuda._without_gpu
        assert cuda.max_dynamic_shared() is None
        with pytest.raises(Exception):
            cuda.device_arch()


def test_the_stand_in_has_cupy_s_interface_where_the_launcher_uses_it():
    """What the launcher touches exists in the installed CuPy with the stand-in's meaning
    (checked without a GPU: nothing here loads or launches), so the stand-in cannot drift
    into an API CuPy does not have."""
    cupy = cupy_standin.real_cupy()

    assert type(cupy.RawModule(path="/no/such.cubin")).__name__ == "RawModule"  # loads lazily
    with pytest.raises(TypeError, match="Exactly one of `code` and `path`"):
        cupy.RawModule(code="", path="x")
    assert callable(cupy.RawModule.get_function)
    setter = cupy.RawKernel.__dict__["max_dynamic_shared_size_bytes"]
    assert hasattr(setter, "__set__")  # settable, as the opt-in needs
    for name in ("kernel", "shared_size_bytes"):  # the load and the static shared memory
        assert name in cupy.RawKernel.__dict__, name
    kernel = cupy.RawKernel('extern "C" __global__ void k() {}', "k")  # compiles lazily
    with pytest.raises(AttributeError):  # a Cython class: nothing can be attached to it
        kernel.note = 1
    with pytest.raises(AttributeError):  # nor to the stand-in's
        cupy_standin.RawKernel(None, "k", ()).note = 1
    assert issubclass(cupy.cuda.driver.CUDADriverError, Exception)
    standin = cupy_standin.CupyStandin()
    assert (cupy.cuda.runtime.cudaDevAttrMaxSharedMemoryPerBlockOptin
            == standin.cuda.runtime.cudaDevAttrMaxSharedMemoryPerBlockOptin)
    for name in ("getDevice", "deviceGetAttribute", "getDeviceCount"):
        assert callable(getattr(cupy.cuda.runtime, name))
    assert (cupy.cuda.driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            == standin.cuda.driver.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
    for name in ("__enter__", "__exit__", "compute_capability", "id"):
        assert hasattr(cupy.cuda.Device, name), name


def test_arrays_reach_cupy_as_memory_pointers(side, monkeypatch):
    """``a.data`` (a ``MemoryPointer``), which CuPy 14.2 packs as a bare ``CIntptr``: the
    cheapest of its argument kinds (a ``cupy.ndarray`` becomes a ``CArray`` per launch), and
    it holds the memory for the launch. The pointer is the view's first element."""
    cupy = cupy_standin.real_cupy()

    assert hasattr(cupy.ndarray, "data")
    assert hasattr(cupy.cuda, "MemoryPointer") and hasattr(cupy.cuda.MemoryPointer, "ptr")
    seen = []
    real = cupy_standin.Function.__call__
    monkeypatch.setattr(cupy_standin.Function, "__call__", lambda self, grid, block, args, **k:
                        (seen.append(args), real(self, grid, block, args, **k))[1])
    src = np.arange(40, dtype=np.float32)
    dst = np.zeros(20, np.float32)
    args = list(_copy_arguments(side, dst, src[::2].copy()))
    view = side.device_view(src[10:30])
    args[1] = view
    with cuda.launch_mechanism("cupy"):  # what CuPy's Function is handed
        cuda.launch("rearrange.cu", COPY, 1, 32, args)
    np.testing.assert_array_equal(dst, src[10:30])
    assert [type(a).__name__ for a in seen[0][:2]] == ["MemoryPointer", "MemoryPointer"]
    assert seen[0][1].ptr == view.data.ptr


def test_a_second_gpu_of_one_architecture_loads_the_same_binary_and_opts_in(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))
    with cupy_standin.installed(capabilities=(90, 90)) as side:
        first = cuda.get_kernel("packed.cu", PACKED_DYNAMIC)
        with side.cuda.Device(1):
            second = cuda.get_kernel("packed.cu", PACKED_DYNAMIC)
            assert second.max_dynamic_shared_size_bytes == cupy_standin.OPTIN_LIMIT
        assert first is second and len(side.loaded_paths) == 1
        assert sorted(d for _, d in side.module_loads) == [0, 1]


@pytest.mark.parametrize("kwargs", [
    {"path": Path("/no/such.cubin")},  # a Path is not a str to CuPy's Cython signature
    {"path": "/no/such.cubin", "options": ["-O3"]},  # a list is not a tuple
    {"path": "/no/such.cubin", "flags": 1},  # no **kwargs
    {"path": "/no/such.cubin", "name_expressions": ["k"]},  # names need code
    {"code": "", "path": "x"},
    {},
], ids=["Path", "options-list", "unknown-keyword", "names-without-code", "both", "neither"])
def test_the_stand_in_s_raw_module_refuses_what_cupy_refuses(kwargs):
    """The stand-in's RawModule takes exactly what CuPy 14's does: a launcher change to
    ``RawModule(path=Path(...))`` fails here as it would on every GPU."""
    cupy = cupy_standin.real_cupy()

    ends = []
    for module in (cupy.RawModule, cupy_standin.RawModule):
        with pytest.raises((TypeError, ValueError)) as refused:
            module(**kwargs)
        # Python names the method by its qualified name, Cython by its own: the same words
        ends.append((refused.type, str(refused.value).replace("RawModule.__init__", "__init__")))
    assert ends[0] == ends[1]
