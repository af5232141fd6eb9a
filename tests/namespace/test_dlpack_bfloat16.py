"""bfloat16 across DLPack on ``cpu`` and the emulator (``namespace/dlpack_bfloat16.py``), both
ways and bit for bit: torch tensors in (``from_dlpack``, ``asarray``) and Arrays out
(``torch.from_dlpack``), every layout torch makes and NumPy's negative strides through our own
import, memory shared unless a copy is asked for, read-only honoured, the producer's deleter
called once, NumPy's checks of the export's arguments, and dtypes no Array holds refused
naming DLPack's code, bits and lanes. A producer made here with ctypes (:class:`Producer`)
counts its deleter's calls. Other dtypes with torch: tests/namespace/test_torch_interop.py."""

from __future__ import annotations

import ctypes
import gc
import re
import weakref

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.namespace import dlpack_bfloat16 as dl
from tests.support.torch_cpu import import_torch

ml_dtypes = pytest.importorskip("ml_dtypes")

DEVICES = ("cpu", "emulator")


@pytest.fixture(scope="module")
def torch():
    return import_torch()


def _bits(shape, rng) -> np.ndarray:
    """Random bfloat16 values, every bit pattern (NaN payloads, infinities, subnormals, -0)."""
    return rng.integers(0, 1 << 16, size=shape, dtype=np.uint16).view(xp.bfloat16)


def _host_bits(a) -> np.ndarray:
    """An Array's or a tensor's values as their uint16 bits (NumPy)."""
    if hasattr(a, "numel"):  # a tensor: torch's numpy() has no bfloat16
        import torch
        return a.view(torch.int16).numpy().view(np.uint16)
    return np.asarray(xp.to_device(a, "cpu")).view(np.uint16)


def _tensor(torch, h: np.ndarray):
    return torch.from_numpy(h.view(np.int16).copy()).view(torch.bfloat16)


def _torch_layouts(base):
    """Views of a 4x6 (or bigger) tensor, as ``(label, view)``."""
    return [("contiguous", base), ("transposed", base.T), ("stepped", base[1:, ::2]),
            ("column", base[:, 2]), ("0-d", base[1, 3]), ("0-size", base[:0]),
            ("expanded", base[:, :1].expand(base.shape[0], 4))]


def _array_layouts(base):
    return [("contiguous", base), ("transposed", base.T), ("stepped", base[1:, ::2]),
            ("column", base[:, 2]), ("0-d", base[1, 3]), ("0-size", base[:0]),
            ("broadcast", xp.broadcast_to(base[:, :1], (base.shape[0], 4)))]


@pytest.mark.parametrize("device", DEVICES)
def test_a_bfloat16_tensor_comes_in_bit_for_bit_over_its_memory(torch, device):
    rng = np.random.default_rng(1 + len(device))
    base = _tensor(torch, _bits((5, 6), rng))
    for label, t in _torch_layouts(base):
        expected = _host_bits(t).copy()
        a, b = xp.from_dlpack(t, device=device), xp.asarray(t, device=device)
        for y in (a, b):
            assert y.device == device and y.dtype == xp.bfloat16, label
            assert y.shape == tuple(t.shape), label
            np.testing.assert_array_equal(_host_bits(y), expected, err_msg=label)
            assert [s // 2 for s in np.asarray(y).strides] == list(t.stride()), label
        copied = xp.from_dlpack(t, device=device, copy=True)
        np.testing.assert_array_equal(_host_bits(copied), expected, err_msg=label)
        if label == "expanded" or t.numel() == 0:
            continue
        new = _bits(t.shape, rng)
        copied[...] = xp.asarray(new, device=device)  # the copy alone changes
        np.testing.assert_array_equal(_host_bits(t), expected, err_msg=label)
        a[...] = xp.asarray(new, device=device)  # written through: torch sees it
        np.testing.assert_array_equal(_host_bits(t), new.view(np.uint16), err_msg=label)
        t.copy_(_tensor(torch, expected.view(xp.bfloat16)))  # and the Arrays see torch's
        np.testing.assert_array_equal(_host_bits(a), expected, err_msg=label)
        np.testing.assert_array_equal(_host_bits(b), expected, err_msg=label)


@pytest.mark.parametrize("device", DEVICES)
def test_a_bfloat16_array_goes_out_as_a_tensor_of_its_memory(torch, device):
    rng = np.random.default_rng(11 + len(device))
    base = xp.asarray(_bits((5, 6), rng), device=device)
    for label, a in _array_layouts(base):
        expected = _host_bits(a).copy()
        t = torch.from_dlpack(a)
        assert t.dtype == torch.bfloat16 and tuple(t.shape) == a.shape, label
        np.testing.assert_array_equal(_host_bits(t), expected, err_msg=label)
        assert tuple(t.stride()) == tuple(s // 2 for s in np.asarray(a).strides), label
        back = xp.from_dlpack(t, device=device)  # the round trip: the same memory
        np.testing.assert_array_equal(_host_bits(back), expected, err_msg=label)
        copied = torch.from_dlpack(a, copy=True)
        if label == "broadcast" or a.size == 0:
            continue
        assert np.shares_memory(np.asarray(back), np.asarray(a)), label
        new = _bits(a.shape, rng)
        t.copy_(_tensor(torch, new))  # written through: the Array sees it
        np.testing.assert_array_equal(_host_bits(a), new.view(np.uint16), err_msg=label)
        np.testing.assert_array_equal(_host_bits(copied), expected, err_msg=label)


@pytest.mark.parametrize("device", DEVICES)
def test_negative_strides_pass_through_our_own_import(device):
    """torch takes no negative strides (test_torch_interop.py); NumPy exports no bfloat16:
    our own from_dlpack is the consumer that takes an Array's reversed views."""
    h = _bits((4, 6), np.random.default_rng(3))
    x = xp.asarray(h, device=device)
    for view, expected in ((x[::-1, ::-2], h[::-1, ::-2]), (x.T[::-1], h.T[::-1])):
        y = xp.from_dlpack(view)
        assert y.device == device and y.dtype == xp.bfloat16
        assert np.asarray(y).strides == expected.strides
        np.testing.assert_array_equal(_host_bits(y), expected.view(np.uint16))
        assert np.shares_memory(np.asarray(y), h)
        z = xp.from_dlpack(view, copy=True)
        np.testing.assert_array_equal(_host_bits(z), expected.view(np.uint16))
        assert not np.shares_memory(np.asarray(z), h)
    other = "cpu" if device == "emulator" else "emulator"
    assert xp.from_dlpack(x, device=other).device == other


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_the_export_checks_its_arguments_as_numpy_does(dtype):
    """bfloat16 Arrays export with NumPy's checks: the same errors as a float16 Array's."""
    h = np.arange(6.0).astype(xp.bfloat16 if dtype == "bfloat16" else np.float16)
    x = xp.asarray(h, device="cpu")
    with pytest.raises(RuntimeError, match="stream=None"):
        x.__dlpack__(stream=1)
    with pytest.raises(BufferError, match="unsupported device"):
        x.__dlpack__(dl_device=(2, 0))
    with pytest.raises(TypeError, match="max_version"):
        x.__dlpack__(max_version=1)
    h.flags.writeable = False  # legacy capsules cannot say read-only: refused, as NumPy does
    with pytest.raises(BufferError, match="readonly"):
        xp.asarray(h, device="cpu").__dlpack__()
    managed, versioned = dl._managed(xp.asarray(h, device="cpu").__dlpack__(max_version=(1, 0)))
    assert versioned and managed.flags & dl.READ_ONLY
    assert managed.dl_tensor.dtype.code == (dl.KDL_BFLOAT if dtype == "bfloat16" else 2)


@pytest.mark.parametrize("device", DEVICES)
def test_read_only_arrays_export_and_import_read_only(torch, device):
    h = _bits((3, 4), np.random.default_rng(5))
    h.flags.writeable = False
    x = xp.asarray(h, device=device)
    y = xp.from_dlpack(x)
    assert not np.asarray(y).flags.writeable and np.shares_memory(np.asarray(y), h)
    with pytest.raises(ValueError, match="read-only"):
        y[0, 0] = 1.0
    assert np.asarray(xp.from_dlpack(x, copy=True)).flags.writeable
    np.testing.assert_array_equal(_host_bits(torch.from_dlpack(x)), h.view(np.uint16))


def test_the_export_holds_the_array_until_its_capsule_is_freed_or_consumed(torch):
    h = np.arange(4.0).astype(xp.bfloat16)
    held = weakref.ref(h)
    x = xp.asarray(h, device="cpu")
    capsule = x.__dlpack__(max_version=(1, 0))  # never consumed: its destructor lets go
    del h, x
    gc.collect()
    assert held() is not None
    del capsule
    gc.collect()
    assert held() is None
    h = np.arange(4.0).astype(xp.bfloat16)
    held = weakref.ref(h)
    t = torch.from_dlpack(xp.asarray(h, device="cpu"))  # consumed: the tensor holds it
    del h
    gc.collect()
    assert held() is not None and t.sum().item() == 6.0
    del t
    gc.collect()
    assert held() is None


# ------------------------------------------------------------ a producer of our own: ctypes
_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)  # PyCapsule_Destructor
_capsule_new = ctypes.pythonapi["PyCapsule_New"]
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _DESTRUCTOR]
_capsule_new.restype = ctypes.py_object
_capsule_name = ctypes.pythonapi["PyCapsule_GetName"]
_capsule_name.argtypes, _capsule_name.restype = [ctypes.c_void_p], ctypes.c_char_p
_capsule_pointer = ctypes.pythonapi["PyCapsule_GetPointer"]
_capsule_pointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_capsule_pointer.restype = ctypes.c_void_p


class Producer:
    """A DLPack producer of ``data``'s memory under any DLPack dtype, as dlpack.h has it:
    each export a fresh DLManagedTensor(Versioned) whose deleter counts its calls
    (``deleted``), the capsule's destructor calling it only while the capsule is unused."""

    def __init__(self, data, dtype=(dl.KDL_BFLOAT, 16, 1), *, versioned=True,
                 read_only=False):
        self.data, self.dtype, self.versioned, self.read_only = data, dtype, versioned, read_only
        self.deleted, self.live = 0, {}
        self._deleter = dl.DELETER(self._delete)  # kept: C holds only its address
        self._destructor = _DESTRUCTOR(self._capsule_freed)

    def __dlpack_device__(self):
        return dl.KDL_CPU, 0

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        versioned = self.versioned and max_version is not None and max_version[0] >= 1
        managed = (dl.DLManagedTensorVersioned if versioned else dl.DLManagedTensor)()
        ndim = self.data.ndim
        shape = (ctypes.c_int64 * ndim)(*self.data.shape)
        strides = (ctypes.c_int64 * ndim)(*(s // self.data.itemsize for s in self.data.strides))
        tensor = managed.dl_tensor
        tensor.data, tensor.device, tensor.ndim = self.data.ctypes.data, dl.DLDevice(1, 0), ndim
        tensor.dtype = dl.DLDataType(*self.dtype)
        tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        tensor.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        managed.deleter = ctypes.cast(self._deleter, ctypes.c_void_p).value
        if versioned:
            managed.version = dl.DLPackVersion(1, 0)
            managed.flags = dl.READ_ONLY if self.read_only else 0
        self.live[ctypes.addressof(managed)] = (managed, shape, strides)
        name = b"dltensor_versioned" if versioned else b"dltensor"
        return _capsule_new(ctypes.addressof(managed), name, self._destructor)

    def _delete(self, address):
        self.deleted += 1
        del self.live[address]

    def _capsule_freed(self, capsule):
        name = _capsule_name(capsule)
        if name in (b"dltensor", b"dltensor_versioned"):  # never consumed
            self._delete(_capsule_pointer(capsule, name))


@pytest.mark.parametrize("versioned", [True, False])
@pytest.mark.parametrize("device", DEVICES)
def test_the_producers_deleter_runs_once_when_the_last_view_is_freed(device, versioned):
    h = _bits((3, 4), np.random.default_rng(8))
    producer = Producer(h, versioned=versioned)
    a = xp.from_dlpack(producer, device=device)
    view = a[1:, ::2]
    del a
    gc.collect()
    assert producer.deleted == 0 and len(producer.live) == 1
    np.testing.assert_array_equal(_host_bits(view), h[1:, ::2].view(np.uint16))
    assert np.shares_memory(np.asarray(view), h)
    # a legacy capsule cannot say writable: read-only, as NumPy takes every legacy capsule
    assert np.asarray(view).flags.writeable is versioned
    del view
    gc.collect()
    assert producer.deleted == 1 and not producer.live
    copied = xp.from_dlpack(producer, device=device, copy=True)
    assert producer.deleted == 2 and not np.shares_memory(np.asarray(copied), h)


def test_the_read_only_flag_of_a_versioned_capsule_is_honoured():
    h = _bits(5, np.random.default_rng(9))
    producer = Producer(h, read_only=True)
    a = xp.from_dlpack(producer, device="cpu")
    assert not np.asarray(a).flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 2.0
    np.testing.assert_array_equal(_host_bits(a), h.view(np.uint16))


@pytest.mark.parametrize("dtype, words", [
    ((dl.KDL_BFLOAT, 32, 1), "bfloat (code 4, bits 32, lanes 1)"),
    ((dl.KDL_BFLOAT, 16, 2), "bfloat (code 4, bits 16, lanes 2)"),
    ((2, 8, 1), "float (code 2, bits 8, lanes 1)"),
    ((10, 8, 1), "float8_e4m3fn (code 10, bits 8, lanes 1)"),
])
@pytest.mark.parametrize("device", DEVICES)
def test_dtypes_no_array_holds_are_buffer_errors_naming_them(device, dtype, words):
    itemsize = dtype[1] * dtype[2] // 8
    producer = Producer(np.zeros((2, 3), f"u{itemsize}"), dtype)
    with pytest.raises(BufferError, match=re.escape(f"from_dlpack: DLPack dtype {words} is ")):
        xp.from_dlpack(producer, device=device)
    gc.collect()
    assert producer.deleted == 1 and not producer.live  # the unused capsule let go


@pytest.mark.parametrize("device", DEVICES)
def test_torch_dtypes_no_array_holds_are_named(torch, device):
    with pytest.raises(BufferError, match=r"float8_e5m2 \(code 12, bits 8, lanes 1\)"):
        xp.from_dlpack(torch.zeros(3, dtype=torch.float8_e5m2), device=device)
    with pytest.raises(TypeError, match=r"asarray: Tensor input: .*float8_e5m2 \(code 12"):
        xp.asarray(torch.zeros(3, dtype=torch.float8_e5m2), device=device)


@pytest.mark.parametrize("device", DEVICES)
def test_asarray_of_a_bfloat16_tensor(torch, device):
    h = _bits((2, 3), np.random.default_rng(10))
    t = _tensor(torch, h)
    shared = xp.asarray(t, device=device)
    assert shared.device == device and shared.dtype == xp.bfloat16
    np.testing.assert_array_equal(_host_bits(shared), h.view(np.uint16))
    copied = xp.asarray(t, device=device, copy=True)
    copied[...] = 0.0
    np.testing.assert_array_equal(_host_bits(t), h.view(np.uint16))
    shared[...] = 0.0
    assert not t.any()
    wide = xp.asarray(_tensor(torch, h), dtype=xp.float32, device=device)
    assert wide.dtype == xp.float32
    np.testing.assert_array_equal(np.asarray(wide.to_device("cpu")), h.astype(np.float32))


def test_the_suite_device_takes_and_gives_bfloat16_through_the_host(arr):
    """On the GPU (``--backend cuda``, or the stand-in) a host tensor is uploaded, and a GPU
    Array comes to the host as CuPy exports it (kDLBfloat: ``dlpack.pyx``); in emulation the
    same calls on emulator Arrays."""
    h = _bits((3, 5), np.random.default_rng(12))
    x = arr(h)
    back = xp.from_dlpack(x, device="cpu")
    assert back.device == "cpu" and back.dtype == xp.bfloat16
    np.testing.assert_array_equal(_host_bits(back), h.view(np.uint16))
    producer = Producer(h.T)
    for copy in (None, True):
        y = xp.from_dlpack(producer, device=x.device, copy=copy)
        assert y.device == x.device and y.dtype == xp.bfloat16
        np.testing.assert_array_equal(_host_bits(y), h.T.view(np.uint16))
    del y
    gc.collect()
    assert producer.deleted == 2 and not producer.live
