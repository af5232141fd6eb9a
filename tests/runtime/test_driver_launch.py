"""The driver launch mechanism (``runtime/cuda_driver.py``, ``INFINI_CUPY_LAUNCH=driver``)
against the stand-ins for CuPy and for ``cuda.bindings.driver``
(``tests/support/driver_standin.py``): the same answers as NumPy, a launch record made once
per thread and signature whose pointers alone change, devices, streams, threads and capture;
and the stand-in's argument rules checked against the installed ``cuda-bindings``.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

pytest.importorskip("cupy")  # NVRTC compiles what the stand-in loads

import infini_cupy as xp  # noqa: E402
from infini_cupy import config  # noqa: E402
from infini_cupy.runtime import cuda, cuda_driver, launch  # noqa: E402
from tests.runtime.test_capture import _calls  # noqa: E402
from tests.runtime.test_cuda_launcher import COPY, _copy_arguments, _launch_copy  # noqa: E402
from tests.support import cupy_standin, driver_standin  # noqa: E402
from tests.support.capture import capturing  # noqa: E402


@pytest.fixture
def side(tmp_path, monkeypatch):
    """Two stand-in devices, the driver stand-in as ``cuda.bindings.driver``, the driver
    mechanism selected, and CuPy's own launch refused (every launch must go through the
    driver)."""
    monkeypatch.setenv(config.CACHE_DIR_VAR, str(tmp_path))

    def refused(self, *args, **kwargs):
        raise AssertionError("launched through CuPy's Function with the driver selected")

    with cupy_standin.installed(capabilities=(90, 990)) as side, driver_standin.installed(), \
            cuda.launch_mechanism("driver"):
        monkeypatch.setattr(cupy_standin.Function, "__call__", refused)
        yield side


@pytest.fixture
def through_cuda(side):
    """The emulated namespace's launches sent through the cuda launcher (and the driver)."""
    with xp.backend("emulate"), launch.launcher_replaced("emulate",
                                                         cupy_standin.ThroughCudaLauncher()):
        yield side


def test_calls_through_the_driver_give_numpy_s_answers(through_cuda):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((37, 5, 9)).astype(np.float32)
    half = rng.standard_normal((301, 257)).astype(np.float16)  # a tiled copy: shared memory
    np.testing.assert_array_equal(xp.rearrange(x.transpose(2, 0, 1)), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(xp.rearrange(half.T), half.T)
    np.testing.assert_array_equal(xp.add(x[:, ::-1], x[::2].repeat(2, axis=0)[:37]),
                                  x[:, ::-1] + x[::2].repeat(2, axis=0)[:37])
    np.testing.assert_array_equal(xp.multiply(x.T, 2.5), x.T * np.float32(2.5))
    ints = rng.integers(-100, 100, (48, 64), dtype=np.int64)
    np.testing.assert_array_equal(xp.subtract(ints, 7), ints - 7)  # 8-byte values by value
    assert len(through_cuda.launches) >= 5


def test_a_record_is_made_once_and_each_call_writes_its_pointers(side):
    results = [_launch_copy(side, n=n) for n in (20, 20, 20)]
    for src, dst in results:
        np.testing.assert_array_equal(dst, src)
    records = cuda_driver._local.records
    assert len(records) == 1
    record = next(iter(records.values()))
    src = np.arange(20, dtype=np.float32)
    dst = np.zeros_like(src)
    args = _copy_arguments(side, dst, src)
    cuda.launch("rearrange.cu", COPY, 1, 32, args)
    np.testing.assert_array_equal(dst, src)
    assert len(records) == 1
    assert [record.values[k].value for k in (0, 1)] == [args[0].data.ptr, args[1].data.ptr]
    assert record.values[-1].raw == np.int64(1).tobytes()  # the last scalar's bytes


def test_a_scalar_of_another_type_is_written_as_its_bytes(side):
    """A slot keeps its bytes whatever NumPy type says them (same size): no value cast."""
    record = cuda_driver.DriverLaunch((driver_standin.CUfunction, driver_standin.cuLaunchKernel),
                                      0, (1, 1, 1), (1, 1, 1), 0,
                                      (np.float64(1.5),))
    record.write((np.float64(1.5),))
    record.write((np.int64(-3),))
    assert record.values[0].raw == np.int64(-3).tobytes()


def test_threads_launch_with_records_of_their_own(side):
    _launch_copy(side)
    results, errors = [], []

    def worker(n):
        try:
            results.append(_launch_copy(side, n=n))
            results.append((cuda_driver._local.records is not None,))
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=worker, args=(17 + k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len(results) == 8
    for result in results:
        if len(result) == 2:
            np.testing.assert_array_equal(result[1], result[0])


def test_each_device_launches_its_own_function(side):
    for device in (0, 1, 0):
        src, dst = _launch_copy(side, device=device)
        np.testing.assert_array_equal(dst, src)
    assert [d for _, d in side.launches] == [0, 1, 0]
    assert sorted(d for _, d in side.module_loads) == [0, 1]


def test_the_launch_goes_on_cupy_s_current_stream(side, monkeypatch):
    seen = []
    real = driver_standin.cuLaunchKernel
    monkeypatch.setattr(driver_standin, "cuLaunchKernel",
                        lambda *args: (seen.append(args[8]), real(*args))[1])
    _launch_copy(side)
    stream = side.cuda.Stream()
    with stream:
        src, dst = _launch_copy(side)
    np.testing.assert_array_equal(dst, src)
    assert seen == [0, stream.ptr]


def test_a_refused_launch_raises_cupy_s_driver_error(side, monkeypatch):
    """A stream of device 1 handed to a launch on device 0: the driver answers
    CUDA_ERROR_INVALID_HANDLE, which the launcher raises as CuPy's ``CUDADriverError``."""
    with side.cuda.Device(1):
        other = side.cuda.Stream()
    monkeypatch.setattr(cupy_standin._Cuda, "get_current_stream", staticmethod(lambda: other))
    with pytest.raises(cupy_standin.CUDADriverError, match="error 400"):
        _launch_copy(side)


def test_launches_into_preallocated_outputs_capture(through_cuda):
    calls = _calls(np.random.default_rng(0))
    for call, _, _ in calls:
        call()
    launches = len(through_cuda.launches)
    for _, out, _ in calls:
        out[...] = 0
    with capturing():
        for call, _, _ in calls:
            call()
    assert len(through_cuda.launches) == launches + len(calls)
    for _, out, expected in calls:
        np.testing.assert_array_equal(out, expected)


def _handle(side):
    _launch_copy(side)
    return next(iter(cuda._functions.values())).ptr


def test_the_driver_stand_in_refuses_what_the_driver_refuses(side):
    handle = _handle(side)
    d, bad = driver_standin, driver_standin.CUresult
    ok = (1, 1, 1, 32, 1, 1, 0)
    with side.cuda.Device(1):  # a function loaded on device 0, in device 1's context
        cupy_standin._ensure_context()
        assert d.cuLaunchKernel(handle, *ok, 0, 0, 0) == (bad.CUDA_ERROR_INVALID_HANDLE,)
    assert d.cuLaunchKernel(handle + 16, *ok, 0, 0, 0) == (bad.CUDA_ERROR_INVALID_HANDLE,)
    assert d.cuLaunchKernel(handle, *ok, 12345, 0, 0) == (bad.CUDA_ERROR_INVALID_HANDLE,)
    assert d.cuLaunchKernel(handle, *ok, None, 0, 0) == (bad.CUDA_ERROR_INVALID_VALUE,)
    assert d.cuLaunchKernel(handle, *ok, 0, 8, 8) == (bad.CUDA_ERROR_INVALID_VALUE,)
    assert d.cuLaunchKernel(handle, 1, 1, 1, 32, 1, 1, 1 << 20, 0, 8, 0) \
        == (bad.CUDA_ERROR_INVALID_VALUE,)
    no_context = []
    worker = threading.Thread(target=lambda: no_context.append(
        d.cuLaunchKernel(handle, *ok, 0, 0, 0)))
    worker.start()
    worker.join()
    assert no_context == [(bad.CUDA_ERROR_INVALID_CONTEXT,)]
    with pytest.raises(NotImplementedError):
        d.cuLaunchKernel(handle, *ok, 0, ((1,), (None,)), 0)
    with pytest.raises(NotImplementedError):
        d.cuLaunchKernel(handle, *ok, 0, 0, 8)


def test_the_driver_stand_in_takes_the_buffer_forms(side):
    """``kernelParams`` as an int address or an object with the buffer protocol; a NULL
    entry is refused."""
    import ctypes

    handle = _handle(side)
    src = np.arange(20, dtype=np.float32)
    dst = np.zeros_like(src)
    args = _copy_arguments(side, dst, src)
    values = [a.data.ptr.to_bytes(8, "little") if hasattr(a, "data") and not isinstance(
        a, np.generic) else a.tobytes() for a in args]
    storage = [ctypes.create_string_buffer(v, len(v)) for v in values]
    params = (ctypes.c_void_p * len(storage))(*(ctypes.addressof(s) for s in storage))
    assert driver_standin.cuLaunchKernel(driver_standin.CUfunction(handle), 1, 1, 1, 32, 1, 1,
                                         0, driver_standin.CUstream(0), memoryview(params),
                                         0) == (driver_standin.CUresult.CUDA_SUCCESS,)
    np.testing.assert_array_equal(dst, src)
    params[3] = None
    with pytest.raises(cupy_standin.CUDADriverError, match="NULL"):
        driver_standin.cuLaunchKernel(handle, 1, 1, 1, 32, 1, 1, 0, 0,
                                      ctypes.addressof(params), 0)


BAD_ARGUMENTS = [  # (argument index, value): each refused before the driver is called
    (0, "x"), (0, None), (0, -1), (1, -1), (1, 1 << 32), (4, "x"), (7, -1), (8, -1),
    (8, "x"), (8, 1 << 64), (9, 1.5), (9, [1]), (9, ((1, 2), (None,))), (9, -1),
    (10, None), (10, -1),
]


@pytest.mark.parametrize("index, value", BAD_ARGUMENTS)
def test_the_stand_in_converts_arguments_as_cuda_bindings_does(index, value):
    """Same exception type and message as the installed ``cuda.bindings.driver`` for every
    argument the conversion refuses (no GPU needed: it fails before the driver)."""
    real = driver_standin.real_driver()
    args = [0, 1, 1, 1, 1, 1, 1, 0, 0, None, 0]
    if index == 0 and value is None:
        args[0] = None
        # None is a NULL function to both (reaches the driver): the handle class refuses it
        for module in (real, driver_standin):
            with pytest.raises(TypeError, match="an integer is required"):
                module.CUfunction(None)
        return
    args[index] = value
    answers = []
    for module in (real, driver_standin):
        with pytest.raises((TypeError, OverflowError)) as refused:
            module.cuLaunchKernel(*args)
        answers.append((refused.type, str(refused.value)))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("value", [5, np.uint64(5), 5.7, "cuda", -5, 1 << 64])
def test_handles_are_made_as_cuda_bindings_makes_them(value):
    real = driver_standin.real_driver()
    for cls in ("CUfunction", "CUstream"):
        answers = []
        for module in (real, driver_standin):
            try:
                answers.append(int(getattr(module, cls)(value)))
            except (TypeError, OverflowError) as error:
                answers.append(type(error))
        assert answers[0] == answers[1], (cls, value, answers)


def test_the_mechanism_is_chosen_by_configuration(monkeypatch):
    monkeypatch.setenv(config.LAUNCH_VAR, "driver")
    assert config.launch_mechanism() == "driver"
    monkeypatch.setenv(config.LAUNCH_VAR, "")
    assert config.launch_mechanism() == "cupy"
    monkeypatch.setenv(config.LAUNCH_VAR, "ctypes")
    with pytest.raises(ValueError, match="INFINI_CUPY_LAUNCH='ctypes'"):
        config.launch_mechanism()
    with pytest.raises(ValueError, match="unknown launch mechanism 'ctypes'"):
        with cuda.launch_mechanism("ctypes"):
            pass


def test_without_cuda_bindings_the_driver_launch_says_what_to_install(side, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "cuda.bindings.driver", None)  # an import that fails
    with pytest.raises(ImportError, match="pip install 'cuda-bindings>=13,<14'"):
        _launch_copy(side)


@pytest.mark.gpu
def test_the_driver_launch_on_a_gpu(backend_name):
    """What only a GPU shows: the real driver takes the packed buffer. Results against NumPy,
    on a stream, captured into a CUDA graph, and from a second thread."""
    import cupy

    from tests.runtime.test_concurrency import _calls as gpu_calls
    from tests.runtime.test_concurrency import captured

    driver_standin.real_driver()  # cuda-bindings installed
    with cuda.launch_mechanism("driver"):
        _, calls = gpu_calls(cupy)
        for call, result, expected in calls:
            call()
            np.testing.assert_array_equal(result.get(), expected)
            result[...] = 0
        graph, stream = captured(cupy, calls)
        assert not any(result.any() for _, result, _ in calls)  # captured, not run
        graph.launch(stream=stream)
        stream.synchronize()
        for _, result, expected in calls:
            np.testing.assert_array_equal(result.get(), expected)
        seen = []

        def worker():
            _, thread_calls = gpu_calls(cupy)
            for call, result, expected in thread_calls:
                call()
                seen.append(np.array_equal(result.get(), expected))

        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert seen == [True, True]
