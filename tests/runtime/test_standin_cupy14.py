"""The CuPy stand-in (``tests/support/cupy_standin.py``) held to CuPy 14.2's source where it
once was more lenient or different: each test names the CuPy function it models (in
cupy/cupy at tag v14.2.0). And the library's ``cuda`` branches that the corrected stand-in
showed would fail on a GPU (``xp.from_dlpack``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("cupy")  # NVRTC compiles what the stand-in launches

import infini_cupy as xp  # noqa: E402
from infini_cupy import config  # noqa: E402
from tests.support import cupy_standin  # noqa: E402

rng = np.random.default_rng(14_2)


@pytest.fixture
def cupy():
    """The stand-in as ``cupy`` (two sm_90 devices), and the cuda backend in force."""
    with cupy_standin.installed(capabilities=(90, 90)), cupy_standin.as_cupy() as side, \
            config.backend("cuda"):
        yield side


# ---------------------------------------------------------------- asarray, array, ndarray()
@pytest.mark.parametrize("code", ["f4", "f8", "i2", "u8", "c8", "c16"])
def test_asarray_of_a_big_endian_array_is_byte_swapped_to_little_endian(cupy, code):
    # core.pyx _array_default: a_cpu.astype(_dtype.normalize_dtype(a_cpu.dtype)), and
    # _dtype.pxd normalize_dtype is dtype.newbyteorder("<")
    host = (rng.standard_normal(6) * 100).astype(code)
    big = host.astype(host.dtype.newbyteorder(">"))
    for made in (cupy.asarray(big), cupy.array(big), cupy.asarray(big, dtype=">" + code)):
        assert made.dtype == np.dtype("<" + code) and made.dtype.byteorder in "=<|"
        np.testing.assert_array_equal(made.get(), host)


def test_asarray_through_the_library_keeps_big_endian_values(cupy):
    big = np.arange(6, dtype=">i4").reshape(2, 3)
    x = xp.asarray(big, device="cuda:0")
    assert x.dtype == xp.int32
    np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), big)


def test_ndarray_refuses_unsupported_dtypes_of_new_memory_only(cupy):
    # core.pyx _ndarray_base._init: get_dtype_with_itemsize(check_support=memptr is None);
    # _dtype.pyx check_supported_dtype: big-endian, objects, strings, long doubles refused
    for dtype, message in ((">f4", "big-endian"), (object, "Unsupported dtype"),
                           ("U3", "Unsupported dtype"), ("M8[s]", "Unsupported dtype"),
                           (np.longdouble, "Unsupported dtype")):
        if np.dtype(dtype) == np.float64:
            continue  # a platform whose long double is a double
        with pytest.raises(ValueError, match=message):
            cupy.ndarray((3,), dtype)
    base = cupy.empty(4, np.float32)
    view = cupy.ndarray((4,), ">f4", memptr=base.data)  # over a memptr: not checked
    assert view.dtype == np.dtype(">f4")
    # a structured dtype without references is taken
    assert cupy.ndarray((2,), [("a", "<f4"), ("b", "<i4")]).dtype.itemsize == 8
    # and _convert_object_with_cuda_array_interface refuses big-endian data
    class Face:
        __cuda_array_interface__ = {**base.__cuda_array_interface__, "typestr": ">f4"}
    with pytest.raises(ValueError, match="big-endian"):
        cupy.asarray(Face())


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "int4", "float4_e2m1fn"])
def test_ndarray_refuses_ml_dtypes_other_than_bfloat16(cupy, name):
    # _dtype.pyx check_supported_dtype: NPY_VOID by type number (ml_dtypes' kind is 'V', their
    # type numbers their own), then _scalar.get_typename, which knows bfloat16 alone of them
    ml_dtypes = pytest.importorskip("ml_dtypes")
    dtype = np.dtype(getattr(ml_dtypes, name, ml_dtypes.int4))
    with pytest.raises(ValueError, match="Unsupported dtype"):
        cupy.ndarray((3,), dtype)
    with pytest.raises(ValueError, match="Unsupported dtype"):
        cupy.asarray(np.zeros(3, dtype))
    assert cupy.ndarray((3,), ml_dtypes.bfloat16).dtype == ml_dtypes.bfloat16


def test_ndarray_order_and_strides_as_cupy_s(cupy):
    # core.pyx _init: _normalize_order (first letter, any case); any order but 'C' is
    # Fortran (_set_contiguous_strides(itemsize, order_char == b'C')), also over a memptr
    assert cupy.ndarray((2, 3), np.float32, order="f").strides == (4, 8)
    assert cupy.ndarray((2, 3), np.float32, order="K").strides == (4, 8)
    assert cupy.ndarray((2, 3), np.float32, order=None).strides == (12, 4)
    base = cupy.empty(6, np.float32)
    assert cupy.ndarray((2, 3), np.float32, memptr=base.data, order="F").strides == (4, 8)
    with pytest.raises(ValueError, match="order not understood"):
        cupy.ndarray((2, 3), np.float32, order="X")
    with pytest.raises(ValueError, match="Negative dimensions"):
        cupy.ndarray((-1,), np.float32)
    # strides of new memory: none negative, within the contiguous size
    with pytest.raises(ValueError, match="negative strides"):
        cupy.ndarray((3,), np.float32, strides=(-4,))
    with pytest.raises(ValueError, match="contiguous size"):
        cupy.ndarray((3,), np.float32, strides=(8,))
    assert cupy.ndarray((3, 2), np.float32, strides=(4, 12)).strides == (4, 12)


def test_flags_are_cupy_s(cupy):
    # flags.pyx Flags: c_contiguous, f_contiguous, owndata (core.pyx: base is None), fnc,
    # forc, and those three by name; none of NumPy's others (writeable, num, aligned)
    a = cupy.empty((2, 3), np.float32)
    assert a.flags.owndata and a.flags.c_contiguous and a.flags.forc and not a.flags.fnc
    assert not a.T.flags.owndata and a.T.flags.fnc and a.T.flags["F_CONTIGUOUS"]
    assert not a[:, ::2].flags.forc and a.flags["OWNDATA"]
    for name in ("writeable", "num", "aligned", "writebackifcopy"):
        assert not hasattr(a.flags, name)
    with pytest.raises(KeyError, match="not defined for cupy.ndarray.flags"):
        a.flags["WRITEABLE"]


def test_array_attributes_and_operators_are_cupy_s(cupy):
    # core.pyx: no to_device, resize, setflags, getfield (NumPy's alone) and no __imatmul__
    # (x @= y binds a new array); __array_priority__ = 100, which _should_use_rop weighs
    # against an operand without __array_ufunc__: below it NumPy's ufunc decides (CuPy's
    # __array_ufunc__ declines the operand: TypeError), above it the operand's __radd__
    a = cupy.eye(3)
    for name in ("to_device", "resize", "setflags", "getfield", "setfield"):
        assert not hasattr(a, name)
    assert a.__array_priority__ == 100
    b = a
    b @= cupy.eye(3)
    assert b is not a

    class Operand:
        def __init__(self, priority):
            self.__array_priority__ = priority

        def __radd__(self, other):
            return "reflected"

    assert a + Operand(200) == "reflected"
    with pytest.raises(TypeError):
        a + Operand(50)


def test_asarray_of_a_device_array_as_cupy_s_astype(cupy):
    # core.pyx _array_from_cupy_ndarray: src._astype(dtype, order=order, copy=copy)
    a = cupy.asarray(rng.standard_normal((3, 4)))
    assert cupy.asarray(a) is a and cupy.asarray(a, copy=False) is a
    assert cupy.asarray(a, copy=True) is not a
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        cupy.asarray(a, dtype=np.float32, copy=False)
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        cupy.asarray(a.T, order="C", copy=False)
    assert cupy.asarray(a.T, order="K") is not None and cupy.asarray(a.T).flags.f_contiguous
    assert cupy.array(a, ndmin=3).shape == (1, 3, 4)
    # another device's array: copy(order), then cast (non-contiguous ones refused)
    with cupy.cuda.Device(1):
        assert cupy.asarray(a).device.id == 1
        with pytest.raises(NotImplementedError, match="non-contiguous"):
            cupy.asarray(a[:, ::2])


def test_astype_and_copy_as_cupy_s(cupy):
    # core.pyx astype: copy_ = True if copy else None (copy=False never refuses);
    # _astype: casting and subok refused
    a = cupy.asarray(rng.standard_normal((3, 4)))
    assert a.astype(a.dtype, copy=False) is a
    assert a.astype(np.float32, copy=False).dtype == np.float32
    with pytest.raises(TypeError, match="casting is not supported"):
        a.astype(np.float32, casting="unsafe")
    with pytest.raises(TypeError, match="subok is not supported"):
        a.astype(np.float32, subok=True)
    assert a.T.astype(np.float32).flags.f_contiguous  # order 'K' of an F array
    assert a.T.copy().flags.c_contiguous and a.T.copy(order="A").flags.f_contiguous
    with pytest.raises(ValueError, match="order not understood"):
        a.astype(np.float32, order="X")


# ---------------------------------------------------------------- get, asnumpy, __array__
def test_get_checks_out_and_order_as_cupy_s(cupy):
    # core.pyx get: out a NumPy array of the dtype and shape, C or F contiguous; order C/F/A
    h = rng.standard_normal((3, 4))
    a = cupy.asarray(h)
    with pytest.raises(TypeError, match="Only numpy.ndarray"):
        a.get(out=[0] * 12)
    with pytest.raises(TypeError, match="float32 array cannot be obtained from float64"):
        a.get(out=np.empty((3, 4), np.float32))
    with pytest.raises(ValueError, match="Shape mismatch"):
        a.get(out=np.empty((1, 4)))
    with pytest.raises(RuntimeError, match="non-contiguous"):
        a.get(out=np.empty((3, 8))[:, ::2])
    out = np.empty((3, 4), order="F")
    assert a.get(out=out) is out and np.array_equal(out, h)
    with pytest.raises(ValueError, match="unsupported order: K"):
        a.get(order="K")
    assert a.T.get(order="a").flags.f_contiguous and a.get(order="f").flags.f_contiguous
    assert cupy.empty((0, 2)).get(order="K").shape == (0, 2)  # empty: no order check


def test_asnumpy_takes_cuda_array_interface_objects(cupy):
    # cupy/__init__.py asnumpy: an object with __cuda_array_interface__ is
    # array(a, copy=False).get(...); blocking is keyword-only
    h = rng.standard_normal(5)
    x = xp.asarray(cupy.asarray(h))
    np.testing.assert_array_equal(cupy.asnumpy(x), h)
    with pytest.raises(TypeError):
        cupy.asnumpy(cupy.asarray(h), None, "C", None, True)


def test_array_protocol_takes_dtype_only(cupy):
    # core.pyx __array__(self, dtype=None): TypeError, whatever NumPy asks
    a = cupy.asarray(np.ones(3))
    with pytest.raises(TypeError, match="Implicit conversion"):
        a.__array__()
    with pytest.raises(TypeError):
        a.__array__(None, copy=True)


# ---------------------------------------------------------------- Device
def test_device_of_a_missing_ordinal_fails_when_used(cupy):
    # device.pyx Device.__init__: self.id = int(device), no check; __enter__ and use() call
    # cudaSetDevice, which fails (cudaErrorInvalidDevice)
    d = cupy.cuda.Device(7)
    assert d.id == 7
    for use in (lambda: d.__enter__(), d.use, lambda: d.compute_capability,
                lambda: cupy.cuda.runtime.setDevice(7)):
        with pytest.raises(cupy_standin.CUDADriverError):
            use()
    assert cupy.cuda.runtime.getDevice() == 0


# ---------------------------------------------------------------- kernel arguments
def test_kernel_arguments_pack_python_ints_as_cupy_s():
    # _scalar.pyx numpy_dtype_from_pyscalar: an int from 2**63 up is a uint64; CScalar's
    # PyArray_Pack refuses one out of range (OverflowError); other types: TypeError
    kernel = cupy_standin.RawKernel.__new__(cupy_standin.RawKernel)
    kernel.name = "k"
    value, size = kernel._argument(0, 2**63)
    assert value.dtype == np.uint64 and size == 8 and int(value) == 2**63
    value, _ = kernel._argument(0, -1)
    assert value.dtype == np.int64
    for big in (2**64, -2**63 - 1):
        with pytest.raises(OverflowError):
            kernel._argument(0, big)
    assert kernel._argument(0, True)[0].dtype == np.bool_
    assert kernel._argument(0, 1.5)[0].dtype == np.float64
    assert kernel._argument(0, np.float32(1))[1] == 4
    with pytest.raises(TypeError, match="Unsupported type"):
        kernel._argument(0, "1")


# ---------------------------------------------------------------- DLPack
def test_dlpack_export_arguments_as_cupy_s(cupy):
    # core.pyx __dlpack__: keyword-only; max_version a tuple; copy=True refused for the
    # array's own device; dl_device CPU copies (copy=False refused); another device
    # refused; CUDA streams from -1 up (0 warns)
    a = cupy.asarray(rng.standard_normal(4))
    with pytest.raises(TypeError):
        a.__dlpack__(None)
    with pytest.raises(TypeError, match="max_version"):
        a.__dlpack__(max_version=[1, 0])
    with pytest.raises(BufferError, match="copy=True only supported for copy to CPU"):
        a.__dlpack__(copy=True)
    with pytest.raises(BufferError, match="copy=True only supported for copy to CPU"):
        a.__dlpack__(dl_device=(2, 0), copy=True)
    with pytest.raises(BufferError, match="unsupported device"):
        a.__dlpack__(dl_device=(2, 1))
    with pytest.raises(ValueError, match="without copy"):
        a.__dlpack__(dl_device=(1, 0), copy=False)
    for stream in (-2, "1", 1.0):
        with pytest.raises(ValueError, match="valid stream"):
            a.__dlpack__(stream=stream)
    with pytest.warns(UserWarning, match="Stream 0"):
        a.__dlpack__(stream=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a.__dlpack__(stream=-1, max_version=(1, 0), copy=False)
    # the CPU export is a host copy NumPy takes
    np.testing.assert_array_equal(np.from_dlpack(a, device="cpu"), a.get())


def test_cupy_from_dlpack_as_cupy_s(cupy):
    # dlpack.pyx from_dlpack: device not supported; CPU producers refused; the producer's
    # __dlpack__ asked with stream, max_version=(1, 0) and copy; a zero-copy view
    a = cupy.asarray(rng.standard_normal(4))
    b = cupy.from_dlpack(a)
    assert b is not a and b.data.ptr == a.data.ptr
    with pytest.raises(NotImplementedError, match="does not support device"):
        cupy.from_dlpack(a, device=(2, 0))
    with pytest.raises(TypeError, match="CPU arrays cannot be directly imported"):
        cupy.from_dlpack(np.ones(3))
    with pytest.raises(BufferError):
        cupy.from_dlpack(a, copy=True)

    class OldProducer:  # a __dlpack__ without max_version/copy: retried with stream only
        def __init__(self):
            self.asked = []

        def __dlpack_device__(self):
            return a.__dlpack_device__()

        def __dlpack__(self, *, stream=None):
            self.asked.append(stream)
            return a.__dlpack__(stream=stream)

    old = OldProducer()
    assert cupy.from_dlpack(old).data.ptr == a.data.ptr and old.asked == [1]


def test_library_from_dlpack_on_cuda(cupy):
    """``xp.from_dlpack`` onto a GPU: CuPy 14.2's ``from_dlpack`` takes no ``device`` and no
    CPU producer, and CuPy arrays refuse ``__dlpack__(copy=True)``: the library copies and
    moves itself (these calls raised NotImplementedError, TypeError and BufferError on a
    GPU)."""
    h = rng.standard_normal((3, 4))
    x = xp.asarray(h, device="cuda:0")
    for copy in (None, True, False):
        y = xp.from_dlpack(x, copy=copy)
        assert type(y) is xp.Array and y.device == "cuda:0"
        np.testing.assert_array_equal(np.asarray(y.to_device("cpu")), h)
        assert (y.__cuda_array_interface__["data"][0]
                == x.__cuda_array_interface__["data"][0]) == (copy is not True)
        assert xp.from_dlpack(x, device=x.device, copy=copy).device == "cuda:0"
        if copy is not False:
            moved = xp.from_dlpack(x, device="cuda:1", copy=copy)
            assert moved.device == "cuda:1"
            np.testing.assert_array_equal(np.asarray(moved.to_device("cpu")), h)
            up = xp.from_dlpack(h, device="cuda:1", copy=copy)
            assert up.device == "cuda:1"
            np.testing.assert_array_equal(np.asarray(up.to_device("cpu")), h)
    with pytest.raises(ValueError, match="copy=False"):
        xp.from_dlpack(x, device="cuda:1", copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        xp.from_dlpack(h, device="cuda:0", copy=False)
    back = xp.from_dlpack(x, device="cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(np.asarray(back), h)


# ---------------------------------------------------------------- streams
def test_streams_belong_to_their_device_and_the_null_stream_to_any(cupy):
    # stream.pyx: Stream(null=True) has device_id -1 (the current device's), any other the
    # device current at its creation; __enter__ and use() check_stream_device_match
    # (RuntimeError); get_current_stream(device_id=-1); _BaseStream.__eq__ by pointer
    made_on_0 = cupy.cuda.Stream()
    assert cupy.cuda.Stream.null.device_id == -1 and made_on_0.device_id == 0
    with cupy.cuda.Device(1):
        with pytest.raises(RuntimeError, match="does not match with the current device"):
            made_on_0.__enter__()
        with pytest.raises(RuntimeError, match="does not match"):
            made_on_0.use()
        with cupy.cuda.Stream.null:
            assert cupy.cuda.get_current_stream() == cupy.cuda.Stream.null
        on_1 = cupy.cuda.Stream()
        with on_1:
            assert cupy.cuda.get_current_stream() is on_1
            assert cupy.cuda.get_current_stream(0) == cupy.cuda.Stream.null
        assert cupy.cuda.get_current_stream().ptr == 0
    with made_on_0:
        assert cupy.cuda.get_current_stream() is made_on_0
        assert cupy.cuda.get_current_stream(device_id=1).ptr == 0
    assert cupy.cuda.Stream(null=True) == cupy.cuda.Stream.null


def test_device_and_stream_stacks_are_the_thread_s_not_the_object_s(cupy):
    # device.pyx Device.__enter__/__exit__ push and pop _ThreadLocalStack (per thread);
    # stream.pyx _ThreadLocal: per thread and device a stack under the default stream, a
    # `with` block's exit making current the stream below it (a use() pushed nothing)
    import threading

    shared_device = cupy.cuda.Device(1)
    with shared_device:
        shared_stream = cupy.cuda.Stream()
    turns, seen = threading.Barrier(2, timeout=60), {}

    def first():  # enters both first, leaves them first
        turns.wait()
        shared_device.__enter__()
        shared_stream.__enter__()
        turns.wait()
        turns.wait()
        shared_stream.__exit__()
        shared_device.__exit__()
        seen["first"] = cupy.cuda.runtime.getDevice(), cupy.cuda.get_current_stream(1).ptr
        turns.wait()

    def second():  # on device 1 from the start: enters both after, leaves them last
        cupy.cuda.Device(1).use()
        turns.wait()
        turns.wait()
        shared_device.__enter__()
        shared_stream.__enter__()
        turns.wait()
        turns.wait()
        shared_stream.__exit__()
        shared_device.__exit__()
        seen["second"] = cupy.cuda.runtime.getDevice(), cupy.cuda.get_current_stream().ptr

    threads = [threading.Thread(target=f) for f in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"first": (0, 0), "second": (1, 0)}

    def fresh():  # a thread's own stack, empty at its start
        cupy.cuda.Device(1).__enter__()
        cupy.cuda.Device(0).__exit__()  # any Device pops this thread's stack
        seen["fresh"] = cupy.cuda.runtime.getDevice()
        with pytest.raises(IndexError):
            cupy.cuda.Device(0).__exit__()
        seen["emptied"] = True

    thread = threading.Thread(target=fresh)
    thread.start()
    thread.join()
    assert seen["fresh"] == 0 and seen["emptied"]
    used, entered = cupy.cuda.Stream(), cupy.cuda.Stream()
    used.use()
    with entered:
        assert cupy.cuda.get_current_stream() is entered
    assert cupy.cuda.get_current_stream() == cupy.cuda.Stream.null  # not `used`
    with pytest.raises(RuntimeError, match="does not match"):
        with cupy.cuda.Device(1):
            used.use()


def test_current_stream_of_a_device_by_index_and_the_per_thread_stream(cupy):
    # stream.pyx get_current_stream(int device_id=-1): current_stream[device_id] of a list
    # of one per device; Stream.ptds (ptds=True): cudaStreamPerThread, device_id -1
    with cupy.cuda.Device(1):
        on_1 = cupy.cuda.Stream()
        on_1.use()
    assert cupy.cuda.get_current_stream(1) is on_1 and cupy.cuda.get_current_stream(-1).ptr == 0
    assert cupy.cuda.get_current_stream(-2).ptr == 0 and cupy.cuda.get_current_stream(-1) != on_1
    for past in (2, 7, -3):
        with pytest.raises(IndexError):
            cupy.cuda.get_current_stream(past)
    assert cupy.cuda.Stream.ptds.ptr == cupy.cuda.Stream(ptds=True).ptr == 2
    assert cupy.cuda.Stream.ptds.device_id == -1


def test_the_memory_pool_counts_each_device_s_blocks(cupy):
    # memory.pyx MemoryPool: one SingleDeviceMemoryPool per device (device_pool()), whose
    # used_bytes, total_bytes and free_all_blocks are the current device's; cudaMemGetInfo
    # the current device's
    pool = cupy.get_default_memory_pool()
    used, free = pool.used_bytes(), cupy.cuda.runtime.memGetInfo()[0]
    with cupy.cuda.Device(1):
        used_there = pool.used_bytes()
        held = cupy.empty(1 << 20, np.uint8)
        assert pool.used_bytes() == used_there + (1 << 20)
    assert pool.used_bytes() == used and cupy.cuda.runtime.memGetInfo()[0] == free
    del held
    with cupy.cuda.Device(1):
        assert pool.used_bytes() == used_there


def test_memory_pointer_arithmetic_as_cupy_s(cupy):
    # memory.pyx MemoryPointer: __int__ is the address; __add__ takes a ptrdiff_t on
    # either side, __sub__ subtracts
    a = cupy.empty(8, np.float32)
    p = a.data
    assert int(p) == p.ptr and (p + 8).ptr == (8 + p).ptr == p.ptr + 8
    assert ((p + 8) - 4).ptr == p.ptr + 4 and (p + np.int64(4)).ptr == p.ptr + 4
    # (CuPy 14.2's ``<ptrdiff_t?>`` truncates a float: the stand-in refuses it, stricter)
    with pytest.raises(TypeError):
        p + 1.0
    # memory.pyx: no offset from a 0-byte allocation's address 0 (AssertionError)
    empty = cupy.empty(0, np.float32)
    assert empty.data.ptr == 0 and (empty.data + 0).ptr == 0
    with pytest.raises(AssertionError):
        empty.data + 4


def test_copyto_casting_and_operands_as_cupy_s(cupy):
    # cupy/_manipulation/basic.py copyto: Python scalars checked by numpy.copyto into a 0-d
    # array; a NumPy array of size one is a scalar, a larger one refused; device arrays
    # cast-checked by dtype ('same_kind' by default) and broadcast-checked
    dst = cupy.zeros((2, 3), np.float32)
    cupy.copyto(dst, 1.5)
    cupy.copyto(dst, np.array([2.5]))
    assert dst.get()[0, 0] == 2.5
    with pytest.raises(ValueError, match="non-scalar numpy.ndarray"):
        cupy.copyto(dst, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="Cannot cast"):
        cupy.copyto(dst, cupy.ones(3, np.complex64))
    with pytest.raises(TypeError, match="Cannot cast"):
        cupy.copyto(cupy.zeros(3, np.int32), cupy.ones(3, np.float32))
    cupy.copyto(dst, cupy.asarray(np.arange(3, dtype=np.float64)))  # same kind
    np.testing.assert_array_equal(dst.get(), np.tile(np.arange(3.0, dtype=np.float32), (2, 1)))
    with pytest.raises(ValueError, match="could not broadcast"):
        cupy.copyto(dst, cupy.ones(2, np.float32))
    ints = cupy.zeros(3, np.int32)
    cupy.copyto(ints, cupy.ones(3, np.float32), casting="unsafe")
    assert ints.get().tolist() == [1, 1, 1]


def test_empty_arrays_point_at_zero_and_convert(cupy):
    # memory.pyx SingleDeviceMemoryPool._malloc: size 0 is MemoryPointer(Memory(0), 0),
    # address 0, nothing of the pool; core.pyx _convert_object_with_cuda_array_interface:
    # an empty array's interface (data 0) converts, on the current device
    pool = cupy.get_default_memory_pool()
    before = pool.used_bytes()
    e = cupy.empty((0, 3), np.float32)
    assert e.data.ptr == 0 and pool.used_bytes() == before
    assert cupy.asarray(np.ones((2, 0))).data.ptr == 0
    a = cupy.empty(4, np.float32)
    assert a[2:2].data.ptr != 0  # a view, of memory at an address
    x = xp.asarray(e)
    back = cupy.asarray(x)
    assert back.shape == (0, 3) and back.dtype == np.float32 and back.data.ptr == 0
    assert cupy.asnumpy(x).shape == (0, 3)


def test_launch_dimensions_are_padded_and_at_least_one(cupy, monkeypatch):
    # function.pyx Function.__call__: grid = (grid + (1, 1))[:3], each max(1, .), the same
    # for block: a 0 in a dimension launches one block (or thread) there, not none
    seen = []
    monkeypatch.setattr(cupy_standin.emulator, "launch",
                        lambda source, name, grid, block, args, shared: seen.append(
                            (grid, block)))
    module = cupy_standin.RawModule.__new__(cupy_standin.RawModule)
    module.about = {"source": "", "name": "k"}
    module.binary = b""
    raw = cupy_standin.RawKernel(module, "k", ())
    raw._max_dynamic[0] = cupy_standin.STATIC_SHARED_LIMIT
    cupy_standin.Function(raw, 0)((0,), (32, 0, 1, 7), ())
    assert seen == [((1, 1, 1), (32, 1, 1))]
    # _launch's Py_ssize_t/int dimensions and size_t shared_mem: a float is a TypeError
    for grid, block, shared in (((1.0,), (32,), 0), ((1,), (32.0,), 0), ((1,), (32,), 0.0)):
        with pytest.raises(TypeError):
            cupy_standin.Function(raw, 0)(grid, block, (), shared_mem=shared)
    assert len(seen) == 1


def test_set_checks_as_cupy_s(cupy):
    # core.pyx set: a NumPy array (TypeError), its dtype (TypeError), its shape
    # (ValueError), into a contiguous array only (RuntimeError)
    a = cupy.zeros((2, 4), np.float32)
    with pytest.raises(TypeError, match="Only numpy.ndarray"):
        a.set([[0] * 4] * 2)
    with pytest.raises(TypeError, match="float64 array cannot be set to float32"):
        a.set(np.ones((2, 4)))
    with pytest.raises(ValueError, match="Shape mismatch"):
        a.set(np.ones(8, np.float32))
    with pytest.raises(RuntimeError, match="non-contiguous"):
        a[:, ::2].set(np.ones((2, 2), np.float32))
    a.T.set(np.ones((4, 2), np.float32))
    assert a.get().sum() == 8


def test_array_of_a_sequence_of_arrays_as_cupy_s(cupy):
    # core.pyx array -> _array_info_from_nested_sequence: a list of NumPy arrays of one
    # shape is joined on the host (dtype promoted, made little-endian), one of device arrays
    # (or interface objects) on the device; mixed or ragged ones go to numpy.array, which a
    # device array refuses (__array__)
    h = rng.standard_normal((2, 3)).astype(np.float32)
    big = h.astype(">f4")
    joined = cupy.asarray([big, h.astype(np.float64)])
    assert joined.dtype == np.float64 and joined.shape == (2, 2, 3)
    assert cupy.asarray([big, big]).dtype == np.dtype("<f4")
    on_device = cupy.asarray([cupy.asarray(h), xp.asarray(cupy.asarray(h))])
    assert on_device.shape == (2, 2, 3)
    np.testing.assert_array_equal(on_device.get()[1], h)
    with pytest.raises(TypeError, match="Implicit conversion"):
        cupy.asarray([cupy.asarray(h), h])
    with pytest.raises(ValueError, match="big-endian"):
        cupy.asarray([h, h], dtype=">f4")
    with cupy.cuda.Device(1), pytest.raises(ValueError, match="Peer access"):
        cupy.asarray([on_device, on_device])


def test_creation_from_0d_gpu_arrays_runs_on_their_gpu(cupy):
    """``xp.linspace`` with 0-d Array ends, no ``device``: on the arrays' GPU. CuPy's
    ``linspace`` (``cupy/_creation/ranges.py``) runs ``stop - start`` on the current
    device, which refuses another's arrays without peer access (``_kernel.pyx``
    ``_check_peer_access``): the call raised there for ends on a GPU other than the current
    one."""
    for dev in ("cuda:0", "cuda:1"):
        start, stop = xp.asarray(0.0, device=dev), xp.asarray(np.float32(1.0), device=dev)
        y = xp.linspace(start, stop, 5)
        assert y.device == dev and y.dtype == xp.float64
        np.testing.assert_allclose(np.asarray(y.to_device("cpu")), np.linspace(0, 1, 5))
        y32 = xp.linspace(stop - stop, stop, 3)
        assert y32.device == dev and y32.dtype == xp.float32
    assert cupy.cuda.runtime.getDevice() == 0


def test_astype_order_k_keeps_the_axis_order(cupy):
    # core.pyx _astype: order 'K' of a non-contiguous array lays out the copy in the order
    # of its strides (internal._get_strides_for_order_K), as NumPy's
    h = rng.standard_normal((4, 5, 6))
    a = cupy.asarray(h).transpose(2, 0, 1)[::2, :, ::-1]
    like = h.transpose(2, 0, 1)[::2, :, ::-1]
    host = a.get()
    for dtype in (np.float64, np.float32):
        copied = a.astype(dtype)
        assert copied.strides == np.empty_like(like, dtype, order="K").strides
        assert copied.strides == ((8, 120, 24) if dtype == np.float64 else (4, 60, 12))
        np.testing.assert_array_equal(copied.get(), host.astype(dtype))


# ------------------------------------------- routines whose answers are CuPy's, not NumPy's
def test_routines_take_the_arguments_of_cupy_s_signatures(cupy):
    # cupy/_sorting/sort.py sort(a, axis=-1, kind=None), cupy/_math/sumprod.py
    # sum(a, axis=None, dtype=None, out=None, keepdims=False): NumPy's stable= and where=
    # are CuPy's TypeError, though the stand-in computes with NumPy's functions
    a = cupy.asarray(rng.standard_normal((2, 3)))
    with pytest.raises(TypeError, match="stable"):
        cupy.sort(a, stable=True)
    with pytest.raises(TypeError, match="where"):
        cupy.sum(a, where=a > 0)
    with pytest.raises(TypeError, match="order"):
        cupy.argsort(a, order="x")
    assert cupy.sort(a, axis=0).shape == (2, 3) and cupy.sum(a, keepdims=True).shape == (1, 1)


def test_quantile_as_cupy_s(cupy):
    # cupy/_statistics/order.py: _quantile_unchecked's 5 methods, NaN not checked, and
    # _quantile_is_valid's "one q >= 0 and one <= 1"; q of one dim at most
    h = np.array([[3.0, 1.0, np.nan, 2.0], [4.0, 5.0, 6.0, 7.0]])
    a = cupy.asarray(h)
    np.testing.assert_array_equal(cupy.quantile(a, 0.25, axis=1).get(), [1.75, 4.75])
    with pytest.raises(ValueError, match="'hazen' method is not yet supported"):
        cupy.quantile(a, 0.5, method="hazen")
    with pytest.raises(ValueError, match="Expected q to have a dimension of 1"):
        cupy.quantile(a, np.full((2, 2), 0.5))
    with pytest.raises(AssertionError, match="outside the data"):  # CuPy: garbage, no error
        cupy.quantile(a, [-0.5, 0.5])
    with pytest.raises(ValueError, match=r"range \[0, 100\]"):
        cupy.percentile(a, 101)


def test_nanargmax_of_an_all_nan_slice_as_cupy_s(cupy):
    # _routines_statistics.pyx _nanargmax_func: NaN's index -1, passed over; all NaN: -1
    a = cupy.asarray(np.array([[1.0, np.nan, 3.0], [np.nan] * 3, [np.nan, -np.inf, -np.inf]]))
    np.testing.assert_array_equal(cupy.nanargmax(a, axis=1).get(), [2, -1, 1])
    np.testing.assert_array_equal(cupy.nanargmin(a, axis=1).get(), [0, -1, 1])


def test_pad_as_cupy_s(cupy):
    # cupy/_padding/pad.py: no median; wrap and reflect as NumPy 1; _as_pairs reshapes
    a = cupy.asarray(np.arange(3.0))
    with pytest.raises(ValueError, match="mode 'median' is not supported"):
        cupy.pad(a, 1, mode="median")
    np.testing.assert_array_equal(cupy.pad(a, (7, 1), mode="wrap").get(),
                                  [0, 1, 2, 0, 0, 1, 2, 0, 1, 2, 0])
    b = cupy.asarray(np.ones((2, 3)))
    with pytest.raises(ValueError, match="reshape"):
        cupy.pad(b, 1, mode="mean", stat_length=((2,), (1,)))


def test_linalg_raises_only_under_errstate_as_cupy_s(cupy):
    # linalg/_util.py _check_*_if_synchronization_allowed; cupyx/_ufunc_config.py 'ignore'
    import cupyx

    singular = cupy.asarray(np.ones((3, 3)))
    assert np.isnan(cupy.linalg.inv(singular).get()).all()
    with cupyx.errstate(linalg="raise"), pytest.raises(np.linalg.LinAlgError,
                                                        match="Error reported by getrf"):
        cupy.linalg.inv(singular)
    assert cupyx.geterr()["linalg"] == "ignore"
    with pytest.raises(NotImplementedError):
        cupyx.seterr(linalg="warn")


# ---------------------------------------------------------------- integer indices wrap
def test_integer_array_indices_wrap_as_cupy_s_kernels_take_them(cupy):
    # _routines_indexing.pyx: _take_kernel_core ``indices % index_range`` (one index array),
    # _prepare_array_indexing's floor modulo per axis (several), _create_scatter_kernel's
    # ``indices % adim`` (assignments): never an IndexError, where NumPy raises
    h = np.arange(12).reshape(3, 4)
    a = cupy.asarray(h)
    for key, wrapped in [
        (np.array([0, 7, -4]), np.array([0, 1, 2])),
        (([1], [2, 9, -8]), ([1], [2, 1, 0])),
        ((slice(None), [5, -5]), (slice(None), [1, 3])),
        ((np.array([[4], [-1]]), slice(1, None)), (np.array([[1], [2]]), slice(1, None))),
        ((Ellipsis, np.array(6)), (Ellipsis, np.array(2))),
    ]:
        np.testing.assert_array_equal(a[key].get(), h[wrapped])
        device_key = tuple(cupy.asarray(k) if isinstance(k, np.ndarray) else k
                           for k in (key if isinstance(key, tuple) else (key,)))
        np.testing.assert_array_equal(a[device_key].get(), h[wrapped])
        b, expected = cupy.asarray(h), h.copy()
        b[key] = -1
        expected[wrapped] = -1
        np.testing.assert_array_equal(b.get(), expected)
    assert a[[]].shape == (0, 4)  # _prepare_slice_list: an empty list is int32 indices


def test_take_and_take_along_axis_wrap_and_refuse_what_cupy_refuses(cupy):
    # cupy/_indexing/indexing.py take -> core.pyx ndarray.take -> _ndarray_take/_take (no
    # ``mode``: the kernel's modulo); take_along_axis builds aranges and indexes (wraps too)
    h = np.arange(12).reshape(3, 4)
    a = cupy.asarray(h)
    np.testing.assert_array_equal(cupy.take(a, [13, -1]).get(), [1, 11])
    np.testing.assert_array_equal(cupy.take(a, 5, axis=1).get(), h[:, 1])
    np.testing.assert_array_equal(a.take(cupy.asarray(np.array([3])), axis=0).get(), h[[0]])
    np.testing.assert_array_equal(
        cupy.take_along_axis(a, cupy.asarray(np.array([[5], [9], [-1]])), axis=1).get(),
        [[1], [5], [11]])
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        cupy.take(a, [0], axis=2)
    with pytest.raises(IndexError, match="non-empty take from an empty axes"):
        cupy.take(cupy.zeros((0, 3)), [0])  # _take: a.size == 0 and out.size != 0
    with pytest.raises(IndexError, match="non-empty take from an empty axes"):
        cupy.zeros((0, 3))[[0]]
    assert cupy.take(cupy.zeros((0, 0)), [0], axis=0).shape == (1, 0)  # out.size == 0
    assert cupy.zeros((3, 0))[[5]].shape == (1, 0)
    with pytest.raises(IndexError, match="must be an integer array"):
        cupy.take_along_axis(a, cupy.zeros((3, 1)), axis=1)
    with pytest.raises(TypeError, match="Output dtype mismatch"):
        cupy.take(a, [0], out=cupy.zeros(1, np.float32))
    with pytest.raises(ValueError, match="Output shape mismatch"):
        cupy.take(a, [0], out=cupy.zeros(2, a.dtype))


def test_masks_of_the_wrong_shape_are_cupy_s_index_error(cupy):
    # _routines_indexing.pyx _check_mask_shape (a mask dim of 0 passes, as in NumPy) and
    # _view_getitem's count of indexed dims
    a = cupy.zeros((2, 3))
    with pytest.raises(IndexError, match="along dimension 1; dimension is 3 but corresponding "
                                         "boolean dimension is 1"):
        a[np.ones((2, 1), bool)]
    with pytest.raises(IndexError, match="along dimension 0; dimension is 2"):
        a[np.ones(3, bool)] = 1
    with pytest.raises(IndexError, match="array is 2-dimensional, but 3 were indexed"):
        a[np.ones((2, 3), bool), 0]
    assert a[np.zeros((2, 0), bool)].shape == (0,)


def test_a_scatter_through_an_empty_axis_faults(cupy):
    # _scatter_op_single: ``indices % adim`` with adim == 0, then a write past a 0-byte
    # allocation (undefined on a GPU: the stand-in faults); an empty index writes nothing
    e = cupy.zeros(0)
    with pytest.raises(cupy_standin.CUDADriverError, match="error 700"):
        e[np.array([0])] = 1
    e[np.array([], np.int64)] = 1
