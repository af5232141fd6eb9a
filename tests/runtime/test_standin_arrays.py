"""The CuPy stand-in's device arrays (``tests/support/cupy_standin.py``): CuPy's pool, views,
``__cuda_array_interface__`` and refusals, held to NumPy on random data and to the installed
CuPy's constants; and the library's ``cuda`` backend end to end on them, in the suite's
``--backend cuda-standin`` run (tests/runtime/test_standin_suite.py), which takes all of
tests/runtime and tests/elementwise through them."""

from __future__ import annotations

import gc

import numpy as np
import pytest

pytest.importorskip("cupy")  # NVRTC compiles what the stand-in launches

import infini_cupy as xp  # noqa: E402
from infini_cupy import arrays, config  # noqa: E402
from tests.support import cupy_standin  # noqa: E402


@pytest.fixture
def cupy():
    """The stand-in as ``cupy`` (one sm_90 device), and the cuda backend in force."""
    with cupy_standin.installed(capabilities=(90,)), cupy_standin.as_cupy() as side, \
            config.backend("cuda"):
        yield side


def test_the_pool_rounds_and_aligns_as_cupy_s(cupy):
    real = cupy_standin.real_cupy()
    assert cupy_standin.ALLOCATION_UNIT_SIZE == real.cuda.memory._allocation_unit_size
    pool = cupy.get_default_memory_pool()
    before = pool.used_bytes()
    a = cupy.empty((3, 7), np.float32)  # 84 bytes: one unit
    b = cupy.empty(600, np.uint8)  # two units
    assert pool.used_bytes() - before == 3 * cupy_standin.ALLOCATION_UNIT_SIZE
    assert a.data.ptr % cupy_standin.DEVICE_ALIGN == b.data.ptr % cupy_standin.DEVICE_ALIGN == 0
    del a, b
    gc.collect()
    assert pool.used_bytes() == before and pool.free_bytes() >= 0


def test_arrays_hold_values_views_and_interfaces_as_numpy_says(cupy):
    rng = np.random.default_rng(48)
    host = rng.standard_normal((5, 6)).astype(np.float32)
    a = cupy.asarray(host)
    assert isinstance(a, cupy.ndarray) and a.device.id == 0
    np.testing.assert_array_equal(a.get(), host)
    view = a[1:, ::-2]  # a view of the same memory, element 0 where NumPy puts it
    oracle = host[1:, ::-2]
    assert view.shape == oracle.shape and view.strides == oracle.strides
    offset = arrays.data_pointer(oracle) - arrays.data_pointer(host)
    assert view.data.ptr - a.data.ptr == offset
    np.testing.assert_array_equal(view.get(), oracle)
    cai = view.__cuda_array_interface__
    assert cai["version"] == 3 and cai["strides"] == oracle.strides
    assert cai["data"] == (view.data.ptr, False) and cai["typestr"] == "<f4"
    assert cai["stream"] == cupy_standin.CUDA_STREAM_LEGACY  # never 0 (CAI v3)
    assert a.__cuda_array_interface__["strides"] is None  # C-contiguous
    with cupy.cuda.Stream() as stream:
        assert cupy.cuda.get_current_stream() is stream
        assert a.__cuda_array_interface__["stream"] == stream.ptr != 0
    assert cupy.cuda.get_current_stream() is cupy.cuda.Stream.null
    np.testing.assert_allclose((a * 2 + 1).get(), host * 2 + 1)
    np.testing.assert_allclose(cupy.sum(a).get(), host.sum(), rtol=1e-5)
    assert cupy.sum(a).shape == ()  # CuPy's reductions give 0-d arrays


def test_host_arrays_are_refused_where_cupy_refuses_them(cupy):
    a = cupy.zeros(4, np.float32)
    host = np.ones(4, np.float32)
    with pytest.raises(TypeError, match="Unsupported type <class 'numpy.ndarray'>"):
        a + host
    with pytest.raises(TypeError, match="Unsupported type"):
        cupy.add(a, host)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(a)
    with pytest.raises(TypeError, match="Unsupported type"):
        cupy.lib.stride_tricks.as_strided(host, (2,), (4,))


def test_the_cuda_backend_holds_and_computes_on_device_arrays(cupy, pytestconfig):
    if pytestconfig.getoption("--backend") != "cuda-standin":
        # modules a whole session imported before (array_api_compat's and the library's
        # views of CuPy) hold CuPy itself: the stand-in run, where it is cupy from the start
        pytest.skip("runs in the --backend cuda-standin run (tests/runtime/test_standin_suite.py)")
    rng = np.random.default_rng(5)
    x_host = rng.standard_normal((48, 64)).astype(np.float32)
    x = xp.asarray(cupy.asarray(x_host))
    assert x.device == "cuda:0"
    for _ in range(2):  # the first call plans, the second takes the short path
        y = xp.add(x, x)
        assert y.device == "cuda:0"
        native = y._a
        assert isinstance(native, cupy.ndarray)
        np.testing.assert_array_equal(y.to_device("cpu")._a, x_host + x_host)
    t = xp.rearrange(x, "h w -> w h")
    np.testing.assert_array_equal(t.to_device("cpu")._a, x_host.T)
    with pytest.raises(ValueError, match="cpu"):
        xp.add(x, xp.asarray(x_host, device="cpu"))
    with pytest.raises(ValueError, match="the cuda backend needs CuPy arrays"):
        arrays.backend_for(x_host)


def test_a_remembered_call_refuses_out_on_another_gpu():
    """The short path of a remembered signature checks ``out=``'s device per call: on another
    GPU it falls back to the full call, which names both devices."""
    from infini_cupy.namespace import elementwise_functions as F

    rng = np.random.default_rng(7)
    host = rng.standard_normal((16, 8)).astype(np.float32)
    with cupy_standin.installed(capabilities=(90, 90)), cupy_standin.as_cupy() as cupy, \
            config.backend("cuda"):
        x = cupy.asarray(host)
        out = cupy.empty(host.shape, host.dtype)
        for _ in range(2):  # remembered, then the short path
            F.add(x, x, out=out)
            np.testing.assert_array_equal(out.get(), host + host)
        with cupy.cuda.Device(1):
            elsewhere = cupy.empty(host.shape, host.dtype)
        with pytest.raises(ValueError, match="cuda:0 and cuda:1|cuda:1 and cuda:0"):
            F.add(x, x, out=elsewhere)
