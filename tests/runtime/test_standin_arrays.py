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


def test_memory_returns_when_the_last_reference_goes_as_cupy_s(cupy):
    # CuPy's arrays hold their memory by reference count alone: no cyclic collection needed
    # (a cycle in the stand-in kept 20 GiB blocks of the huge-layout tests allocated)
    pool = cupy.get_default_memory_pool()
    before = pool.used_bytes()
    a = cupy.empty(1000, np.float64)
    view = a[::3]
    pointer = view.data
    del a, view
    assert pool.used_bytes() > before  # the pointer holds the block, as CuPy's does
    del pointer
    assert pool.used_bytes() == before


def test_mem_get_info_counts_the_pool_s_blocks_and_big_blocks_cost_no_host_memory(cupy):
    free, total = cupy.cuda.runtime.memGetInfo()
    assert total == cupy.cuda.runtime.getDeviceProperties(0)["totalGlobalMem"]
    held = cupy.get_default_memory_pool().total_bytes()
    assert free == total - held
    size = 20 << 30  # never made on the host: only the pages touched are
    block = cupy.cuda.alloc(size)
    assert cupy.cuda.runtime.memGetInfo()[0] <= free - size
    far = cupy.ndarray((2,), np.float32, memptr=block + (size - 1024), strides=(512,))
    values = np.random.default_rng(0).random(2).astype(np.float32)
    far[...] = cupy.asarray(values)  # (set() takes contiguous arrays only, as CuPy's)
    np.testing.assert_array_equal(far.get(), values)


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


def test_indices_and_values_from_the_host_as_cupy_takes_them(cupy):
    rng = np.random.default_rng(5)
    host = rng.standard_normal((6, 5))
    a = cupy.asarray(host)
    rows, mask = rng.integers(0, 6, 4), rng.random(5) > 0.5
    # lists and NumPy arrays are index arrays (_prepare_slice_list copies them over)
    np.testing.assert_array_equal(a[rows].get(), host[rows])
    np.testing.assert_array_equal(a[:, mask].get(), host[:, mask])
    np.testing.assert_array_equal(a[list(rows), ...].get(), host[list(rows), ...])
    values = rng.standard_normal((4, 5))
    a[rows] = values  # advanced: the host values taken (_scatter_op_single)
    expected = host.copy()
    expected[rows] = values
    np.testing.assert_array_equal(a.get(), expected)
    with pytest.raises(ValueError, match="non-scalar numpy.ndarray cannot be used for fill"):
        a[1:3] = values[:2]  # basic: CuPy's fill takes no host array
    a[0] = np.array(2.5)  # a 0-d one it takes
    np.testing.assert_array_equal(a[0].get(), np.full(5, 2.5))
    q = rng.random(3)  # cupy.quantile converts q itself
    np.testing.assert_allclose(cupy.quantile(a, q).get(), np.quantile(a.get(), q))


def test_a_bool_in_a_key_takes_no_axis_as_cupy_s(cupy):
    """A Python or NumPy bool in a key is ``_prepare_slice_list``'s 0-d mask: a new axis of
    length 1 or 0 that indexes no axis of the array (it was counted as one: too many
    indices for a key of one item per axis, or any item on a 0-d array)."""
    host = np.arange(6.0).reshape(2, 3)
    a = cupy.asarray(host)
    for key in (True, (True, 0, slice(None)), (0, np.False_, 1), (slice(None), 1, True)):
        np.testing.assert_array_equal(a[key].get(), host[key], err_msg=str(key))
    scalar = cupy.asarray(np.array(5.0))
    assert scalar[False].shape == (0,) and scalar[True].get().tolist() == [5.0]
    scalar[True] = 3.0
    assert float(scalar.get()) == 3.0


def test_names_dispatch_and_events_as_cupy_s(cupy):
    real = cupy_standin.real_cupy()
    for name in ("add", "exp", "nanquantile", "quantile", "longdouble", "float16"):
        assert hasattr(cupy, name) == hasattr(real, name), name
    assert cupy.add.name == real.add.name and cupy.add.nin == real.add.nin
    assert (cupy.add.nout, cupy.exp.nin) == (real.add.nout, real.exp.nin)
    assert set(cupy.__all__) <= set(dir(real)) and "longdouble" not in cupy.__all__
    assert hasattr(cupy.linalg, "inv") and not hasattr(cupy.linalg, "matrix_power_of_two")

    class Override:  # what an Array on the GPU has: CuPy's ufuncs hand the call to it
        __cuda_array_interface__ = property(lambda self: None)

        def __cupy_override_elementwise_kernel__(self, kernel, *args, **kwargs):
            return ("handed", kernel.name, len(args))

    a = cupy.ones(3)
    assert a + Override() == ("handed", "cupy_add", 2)  # a + x: NumPy's add, then CuPy's
    assert np.multiply(a, Override()) == ("handed", "cupy_multiply", 2)

    class Declines:
        __array_ufunc__ = None  # _should_use_rop: the other operand's turn

        def __radd__(self, other):
            return "reflected"

    assert a + Declines() == "reflected"
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    end.record()
    end.synchronize()
    assert cupy.cuda.get_elapsed_time(start, end) >= 0
    untimed = cupy.cuda.Event(disable_timing=True)
    untimed.record()
    with pytest.raises(cupy_standin.CUDADriverError):
        cupy.cuda.get_elapsed_time(start, untimed)
    source = cupy.asarray(np.random.default_rng(1).random(16))
    target = cupy.zeros(16)
    cupy.cuda.runtime.memcpyAsync(target.data.ptr, source.data.ptr, 64, 3, 0)
    np.testing.assert_array_equal(target.get()[:8], source.get()[:8])
    assert (target.get()[8:] == 0).all()
    assert int(cupy.cuda.Device(0)) == 0 and cupy.asarray(source, copy=True) is not source
    assert cupy.asarray(source) is source and source.T.base is source


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


@pytest.fixture
def two_gpus(pytestconfig):
    """The stand-in with two sm_90 devices as ``cupy``, device 0 current, the cuda backend;
    in the ``--backend cuda-standin`` run only, as the cuda backend's test above."""
    if pytestconfig.getoption("--backend") != "cuda-standin":
        pytest.skip("runs in the --backend cuda-standin run (tests/runtime/test_standin_suite.py)")
    with cupy_standin.installed(capabilities=(90, 90)), cupy_standin.as_cupy() as side, \
            config.backend("cuda"):
        yield side


def test_every_call_runs_on_its_arrays_gpu_not_the_current_one(two_gpus):
    # CuPy runs on the current GPU and refuses another's arrays without peer access; the
    # array API puts results on the arrays' device: each call makes that GPU current
    rng = np.random.default_rng(7)
    h = rng.standard_normal((6, 5)).astype(np.float32)
    x = xp.asarray(h, device="cuda:1")
    assert x.device == "cuda:1" and two_gpus.cuda.Device().id == 0
    made = {"empty_like": xp.empty_like(x), "zeros_like": xp.zeros_like(x),
            "full_like": xp.full_like(x, 2.0), "zeros": xp.zeros(3, device=x.device),
            "arange": xp.arange(4, device="cuda:1"), "eye": xp.eye(3, device="cuda:1"),
            "ones_like to 0": xp.ones_like(x, device="cuda:0")}
    for name, made_there in made.items():
        expected = 0 if name.endswith("to 0") else 1
        assert made_there._a.data.device_id == expected, name
    index = xp.asarray(rng.integers(0, 6, 4), device="cuda:1")
    checks = {"sum": (xp.sum(x), h.sum()), "sum, a repeat": (xp.sum(x), h.sum()),
              "flip, a repeat": ((xp.flip(x, axis=0), xp.flip(x, axis=0))[1],
                                 np.flip(h, axis=0)),
              "sort": (xp.sort(x, axis=0), np.sort(h, axis=0)),
              "take": (x[index], h[np.asarray(index.to_device("cpu"))]),
              "mask": (x[x > 0], h[h > 0]), "matmul": (x @ x.T, h @ h.T),
              "matmul, a repeat": ((x @ x.T, x @ x.T)[1], h @ h.T),
              "where, a repeat": ((xp.where(x > 0, x, -x), xp.where(x > 0, x, -x))[1],
                                  np.abs(h))}
    for name, (got, expected) in checks.items():
        assert got._a.data.device_id == 1, name
        np.testing.assert_allclose(np.asarray(got.to_device("cpu")), expected, rtol=1e-5)
    x[x < 0] = 0.0  # CuPy's scatter, on x's GPU
    np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), np.maximum(h, 0))
    # across GPUs CuPy copies contiguous arrays only: a strided view is made contiguous first
    moved = x[:, ::2].to_device("cuda:0")
    assert moved._a.data.device_id == 0
    np.testing.assert_array_equal(np.asarray(moved.to_device("cpu")), np.maximum(h, 0)[:, ::2])


def test_moves_and_host_reads_keep_the_stream_made_current_and_read_on_the_array_s_gpu(
        two_gpus):
    # CuPy's `with stream` exit makes current the stream below it on its stack (not one
    # use() made current); CuPy's get reads the current GPU's stream and enters it on the
    # array's GPU to copy a strided array (stream.pyx _ThreadLocal, core.pyx get)
    cuda = two_gpus.cuda
    h = np.arange(24, dtype=np.float32).reshape(4, 6)
    chosen = cuda.Stream(non_blocking=True)
    chosen.use()
    try:
        x = xp.asarray(h, device="cuda:0")
        y = x.to_device("cuda:1")
        back = y.to_device("cuda:0")
        assert cuda.get_current_stream() is chosen
        strided = y[:, ::2]  # on cuda:1, cuda:0 and `chosen` current
        np.testing.assert_array_equal(np.asarray(strided.to_device("cpu")), h[:, ::2])
        np.testing.assert_array_equal(strided.get(), h[:, ::2])
        assert strided.tolist() == h[:, ::2].tolist()
        assert float(y[1, 2]) == h[1, 2] and y[1:2, 2:3].item() == h[1, 2]
        assert cuda.get_current_stream() is chosen and back.device == "cuda:0"
        # core.pyx __cuda_array_interface__ names the current GPU's stream: the Array's
        # names its own GPU's, where our kernels wrote it (the legacy stream here)
        assert y.__cuda_array_interface__["stream"] == cupy_standin.CUDA_STREAM_LEGACY
        assert x.__cuda_array_interface__["stream"] == chosen.ptr
    finally:
        cuda.Stream.null.use()


def test_to_device_takes_a_stream_of_the_gpu_the_copy_runs_on(two_gpus):
    """The copy runs on the target GPU (to ``cpu``: on the Array's): a stream of another GPU
    is a ValueError naming both (CuPy's RuntimeError "The device that the stream is created
    on ..."), a stream that is no CuPy stream a TypeError (CuPy read its ``.ptr``)."""
    cuda = two_gpus.cuda
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = xp.asarray(h, device="cuda:0")
    with cuda.Device(1):
        on_1 = cuda.Stream()
    on_0 = cuda.Stream()
    y = x.to_device("cuda:1", stream=on_1)
    on_1.synchronize()
    np.testing.assert_array_equal(np.asarray(y.to_device("cpu", stream=on_1)), h)
    np.testing.assert_array_equal(np.asarray(x.to_device("cpu", stream=on_0)), h)
    assert x.to_device("cuda:0", stream=on_1) is x  # already there: no copy, no stream
    for array, target, stream, copy_on in ((x, "cuda:1", on_0, 1), (x, "cpu", on_1, 0),
                                           (y, "cuda:0", on_1, 0)):
        with pytest.raises(ValueError, match=rf"to_device: the copy runs on cuda:{copy_on}, "
                                             rf"and the stream given is of cuda:{1 - copy_on}"):
            array.to_device(target, stream=stream)
    with pytest.raises(TypeError, match="stream must be a cupy.cuda.Stream .* got str"):
        x.to_device("cuda:1", stream="fast")
    np.testing.assert_array_equal(np.asarray(x.to_device("cuda:1", stream=cuda.Stream.null)
                                             .to_device("cpu")), h)


def test_remembered_calls_across_gpus_go_the_full_way(two_gpus):
    rng = np.random.default_rng(8)
    h = rng.standard_normal((4, 8)).astype(np.float32)
    x0, x1 = xp.asarray(h, device="cuda:0"), xp.asarray(h, device="cuda:1")
    for _ in range(3):  # remembered from the second call on: arrays on a GPU not current
        np.testing.assert_array_equal(np.asarray(xp.add(x1, x1).to_device("cpu")), h + h)
    out = xp.empty_like(x1)  # on cuda:1, the call's arrays on cuda:0
    for _ in range(3):
        with pytest.raises(ValueError, match="devices"):
            xp.add(x0, x0, out=out)
    for _ in range(2):
        assert xp.add(x0, x0, out=xp.empty_like(x0)).device == "cuda:0"
    with pytest.raises(ValueError, match="different devices: cuda:0 and cuda:1"):
        xp.rearrange_(two_gpus.empty((8, 4), np.float32), x1._a.T)
    with pytest.raises(ValueError, match="different devices: cuda:0 and cuda:1"), xp.lazy():
        x0 + x1  # noqa: B018  (the eager call says what is wrong)
    y0 = xp.asarray(h, device="cuda:0")
    for _ in range(2):  # a chain seen before, on cuda:0
        with xp.lazy():
            seen = x0 * 2 + y0
        np.testing.assert_array_equal(np.asarray(seen.to_device("cpu")), h * 2 + h)
    with pytest.raises(ValueError, match="different devices: cuda:0 and cuda:1"), xp.lazy():
        x0 * 2 + x1  # noqa: B018  (the same chain, its second Array on cuda:1: the eager error)
    with pytest.raises(ValueError) as eager:
        xp.where(x0 > 0, x0, x1)
    with pytest.raises(ValueError) as deferred, xp.lazy():
        xp.where(x0 > 0, x0, x1)  # the condition pending on cuda:0: where runs eagerly
    assert str(deferred.value) == str(eager.value)
    with xp.lazy():  # one GPU (cuda:1, not current): deferred, computed there
        chosen = xp.where(x1 > 0, x1, 0.5)
        assert chosen._p is not None
    assert chosen.device == "cuda:1"
    np.testing.assert_array_equal(np.asarray(chosen.to_device("cpu")), np.where(h > 0, h, 0.5))
    with xp.lazy():
        y = x0 * 2
        interface = y.__cuda_array_interface__  # evaluated before it is read
    assert interface["shape"] == h.shape
    np.testing.assert_array_equal(np.asarray(y.to_device("cpu")), h * 2)
    fused = xp.fuse(lambda a, b: a * b + a)
    target = xp.empty_like(x0)
    for _ in range(2):
        assert fused(x0, x0, out=target) is target
    np.testing.assert_allclose(np.asarray(target.to_device("cpu")), h * h + h, rtol=1e-6)


def test_a_lazy_chain_seen_before_on_a_gpu_not_current_is_deferred_and_evaluated_in_c(
        two_gpus, monkeypatch):
    from infini_cupy.namespace import boundary, lazy, pending

    if boundary.compiled_hot_calls() is None:
        pytest.skip("the compiled hot path alone")
    rng = np.random.default_rng(9)
    h, k = (rng.standard_normal((4, 8)).astype(np.float32) for _ in range(2))
    x, y = xp.asarray(h, device="cuda:1"), xp.asarray(k, device="cuda:1")

    def chain(a, b):
        with xp.lazy():
            r = xp.exp(a * b + a) - b
        return r

    chain(x, y)  # learnt
    with xp.lazy(enabled=False):  # the eager calls: the same bits
        expected = np.asarray((xp.exp(x * y + x) - y).to_device("cpu"))
    python_ways = []
    for module, name in ((lazy, "defer_seen"), (pending, "_evaluate")):
        monkeypatch.setattr(module, name, lambda *a, f=getattr(module, name):
                            python_ways.append(f.__name__) or f(*a))
    for _ in range(2):  # new Arrays each time: their GPU read in C
        a, b = xp.asarray(h, device="cuda:1"), xp.asarray(k, device="cuda:1")
        r = chain(a, b)
        assert python_ways == [] and r.device == "cuda:1" and r._a.data.device_id == 1
        np.testing.assert_array_equal(np.asarray(r.to_device("cpu")), expected)
    other = xp.asarray(k, device="cuda:0")  # the same layout on another GPU
    with pytest.raises(ValueError, match="different devices: cuda:1 and cuda:0"), xp.lazy():
        x * other  # noqa: B018  (the chain's first call: the eager call's error, here)
        raise AssertionError("deferred across two GPUs")


def test_fused_repeats_into_an_array_across_gpus_go_the_full_way(two_gpus):
    """A fused call's repeats into an Array (fused_out.run_into) launch on the current GPU:
    arrays of another GPU, or an ``out`` on another GPU than the inputs', go the first
    call's way, which computes on the arrays' GPU or raises the unfused call's error."""
    rng = np.random.default_rng(10)
    h = rng.standard_normal((4, 8)).astype(np.float32)
    x0, x1 = xp.asarray(h, device="cuda:0"), xp.asarray(h, device="cuda:1")
    fused = xp.fuse(lambda a, b: a * b + a)
    target0, target1 = xp.empty_like(x0), xp.empty_like(x1)
    for x, target in [(x0, target0), (x0, target0), (x1, target1), (x1, target1)]:
        target1._a.fill(0)
        assert fused(x, x, out=target) is target  # cuda:1's repeats: the full way, there
        assert target._a.data.device_id == x._a.data.device_id
        np.testing.assert_allclose(np.asarray(target.to_device("cpu")), h * h + h, rtol=1e-6)
    for x, target in [(x0, target1), (x1, target0)]:  # the same layouts, the devices mixed
        for _ in range(2):  # the record of cuda:0 (current): then an input or out elsewhere
            fused(x0, x0, out=target0)
        with pytest.raises(ValueError) as fused_error:
            fused(x, x, out=target)
        with pytest.raises(ValueError) as unfused_error:
            xp.add(x * x, x, out=target)
        assert "cuda:0" in str(fused_error.value) and "cuda:1" in str(fused_error.value)
        assert type(fused_error.value) is type(unfused_error.value)
    with two_gpus.cuda.Device(1):  # cuda:1 current: its arrays are the repeat's, cuda:0's not
        target1._a.fill(0)
        for x, target in [(x1, target1), (x1, target1), (x0, target0)]:
            assert fused(x, x, out=target) is target
            np.testing.assert_allclose(np.asarray(target.to_device("cpu")), h * h + h,
                                       rtol=1e-6)


def test_a_fused_function_of_host_arrays_under_the_cuda_backend_plans_again(two_gpus):
    # a plan made for NumPy arrays under the emulator is not the cuda backend's to reuse
    rng = np.random.default_rng(9)
    a, b = rng.standard_normal((2, 3, 5))
    fused = xp.fuse(lambda u, v: u * v - u)
    with config.backend("emulate"):
        np.testing.assert_allclose(np.asarray(fused(a, b)), a * b - a)
    from infini_cupy.namespace.fusion import FusionWarning

    with pytest.warns(FusionWarning, match="the cuda backend needs CuPy arrays"):
        got = fused(a, b)  # the cuda backend in force: NumPy operands run unfused, warned
    np.testing.assert_allclose(np.asarray(got), a * b - a)


def test_gpu_device_names_need_a_gpu(two_gpus, monkeypatch):
    from infini_cupy.namespace import device

    assert xp.asarray(1.0, device="cuda").device == "cuda:0"
    monkeypatch.setattr(device, "gpu_available", lambda: False)
    for name in ("cuda", "cuda:1"):
        with pytest.raises(ValueError, match=f"device '{name}': the cuda backend cannot run here"):
            xp.asarray(1.0, device=name)


def test_a_delegated_repeat_of_arrays_refuses_what_the_first_call_refuses():
    """A delegated function found once by its first array's type (delegated._delegate) still
    searches a call with an array of another library or GPU among the others, and refuses
    NumPy arrays under the cuda backend."""
    from infini_cupy.namespace import delegated

    h = np.random.default_rng(3).standard_normal(6)
    m = h > 0
    with config.backend("numpy"):  # (the stand-in run has cuda in force)
        for _ in range(2):  # found, then by the first array's type
            np.testing.assert_array_equal(delegated.where(m, h, -h), np.where(m, h, -h))
    with cupy_standin.installed(capabilities=(90, 90)), cupy_standin.as_cupy() as cupy:
        on_gpu = cupy.asarray(h)
        with config.backend("numpy"), pytest.raises(ValueError,
                                                    match="cpu and cuda:0|cuda:0 and cpu"):
            delegated.where(m, h, on_gpu)
        with config.backend("cuda"), pytest.raises(ValueError, match="needs CuPy arrays"):
            delegated.where(m, h, -h)
        # CuPy arrays: found once too, for arrays of the first one's GPU only
        mask = cupy.asarray(m)
        for _ in range(2):
            np.testing.assert_array_equal(delegated.where(mask, on_gpu, -on_gpu).get(),
                                          np.abs(h))
        with cupy.cuda.Device(1):
            elsewhere = cupy.asarray(h)
        with pytest.raises(ValueError, match="cuda:0 and cuda:1|cuda:1 and cuda:0"):
            delegated.where(mask, on_gpu, elsewhere)


def test_the_cuda_backend_without_a_usable_gpu_names_the_cause(cupy, monkeypatch):
    """CuPy refusing to create for want of a GPU (its CUDARuntimeError names only the
    driver's status) under the cuda backend: a ValueError naming the function and the
    cause; with a GPU found, CuPy's own error as it is."""
    def refused(*args, **kwargs):
        raise RuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")

    monkeypatch.setattr(cupy, "zeros", refused)
    with pytest.raises(RuntimeError, match="^cudaErrorNoDevice"):
        xp.zeros(3)  # a GPU is found: not ours to explain
    monkeypatch.setattr(arrays, "gpu_available", lambda: False)
    # the cause show_config() names (no driver here), else CuPy's error
    with pytest.raises(ValueError, match="^zeros: the cuda backend is in force and cannot run "
                                         "here: (no NVIDIA driver|.*cudaErrorNoDevice)"):
        xp.zeros(3)
