"""bfloat16 across DLPack on the host (``cpu`` and the emulator), which NumPy neither exports
nor imports (DLPack's ``kDLBfloat``) and CuPy 14.2 does both ways (``cupy/_core/dlpack.pyx``).

Export (:func:`to_dlpack`): NumPy's capsule of the array's bits seen as uint16, its dtype then
marked bfloat16; NumPy checks ``stream``, ``max_version``, ``dl_device`` and ``copy`` and
owns the capsule's deleter. Import (:func:`host_from_dlpack`): the producer's capsule read
here (``dlpack.h`` 1.0/1.1 layouts, through ``ctypes``); a bfloat16 tensor becomes an array of
ml_dtypes' bfloat16 over its memory, any other dtype is NumPy's ``from_dlpack``'s to take.

>>> import numpy as np, ml_dtypes
>>> a = np.arange(3.0).astype(ml_dtypes.bfloat16)
>>> b = host_from_dlpack(a)
>>> b.dtype, np.shares_memory(a, b)
(dtype(bfloat16), True)
"""

from __future__ import annotations

import ctypes

import numpy as np

from .. import dtypes

KDL_CPU, KDL_BFLOAT = 1, 4
# device types whose memory the host reads, as NumPy's from_dlpack takes them: kDLCPU,
# kDLCUDAHost, kDLROCMHost, kDLCUDAManaged
HOST_DEVICE_TYPES = (1, 3, 11, 13)
READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY
# DLDataTypeCode's names (dlpack.h 1.1: the float8, float6 and float4 codes from 7)
_CODE_NAMES = dict(enumerate((
    "int", "uint", "float", "opaque handle", "bfloat", "complex", "bool", "float8_e3m4",
    "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn")))
# what NumPy's from_dlpack takes by itself: (code, bits), lanes 1
_NUMPY_TAKES = {(6, 8), *((c, b) for c in (0, 1) for b in (8, 16, 32, 64)),
                (2, 16), (2, 32), (2, 64), (5, 64), (5, 128)}
# capsule names as static bytes: a capsule keeps the pointer to its name, not a copy
_NAME, _USED = b"dltensor", b"used_dltensor"
_NAME_VERSIONED, _USED_VERSIONED = b"dltensor_versioned", b"used_dltensor_versioned"


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


# the deleter is called holding the GIL: a producer's deleter may touch Python objects
DELETER = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


def _capsule_api(name: str, restype):
    """The C API's ``name``, a function object of our own (``pythonapi[name]``, not the shared
    ``pythonapi.name`` whose argtypes other code may set)."""
    function = ctypes.pythonapi[name]
    function.argtypes, function.restype = [ctypes.py_object, ctypes.c_char_p], restype
    return function


_is_valid = _capsule_api("PyCapsule_IsValid", ctypes.c_int)
_get_pointer = _capsule_api("PyCapsule_GetPointer", ctypes.c_void_p)
_set_name = _capsule_api("PyCapsule_SetName", ctypes.c_int)


def _managed(capsule):
    """(the capsule's DLManagedTensor or DLManagedTensorVersioned, whether versioned);
    BufferError for a capsule already taken or not a DLPack one."""
    for name, kind in ((_NAME_VERSIONED, DLManagedTensorVersioned), (_NAME, DLManagedTensor)):
        if _is_valid(capsule, name):
            return kind.from_address(_get_pointer(capsule, name)), kind is not DLManagedTensor
    raise BufferError(f"from_dlpack: {capsule!r} is not an unused DLPack capsule "
                      "('dltensor' or 'dltensor_versioned')")


def dtype_name(dtype: DLDataType) -> str:
    """A DLPack dtype in words, its three numbers included."""
    kind = _CODE_NAMES.get(dtype.code, "unknown")
    return f"DLPack dtype {kind} (code {dtype.code}, bits {dtype.bits}, lanes {dtype.lanes})"


def to_dlpack(a: np.ndarray, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The DLPack capsule of NumPy array ``a`` of bfloat16: NumPy's own of the same bits as
    uint16 (its checks of the arguments; ``copy=True`` a copy, a read-only array read-only
    in a versioned capsule and refused in a legacy one), dtype code ``kDLBfloat``.

    >>> import numpy as np, ml_dtypes
    >>> capsule = to_dlpack(np.zeros(2, ml_dtypes.bfloat16), max_version=(1, 0))
    >>> tensor = _managed(capsule)[0].dl_tensor
    >>> (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)
    (4, 16, 1)
    """
    capsule = a.view(np.uint16).__dlpack__(stream=stream, max_version=max_version,
                                           dl_device=dl_device, copy=copy)
    _managed(capsule)[0].dl_tensor.dtype.code = KDL_BFLOAT  # no one has seen it yet
    return capsule


def _export(x, device, copy):
    """``x.__dlpack__`` as NumPy's ``from_dlpack`` calls it: DLPack 1.0 asked for, the CPU
    when a ``device`` is given, ``copy`` passed on; without keywords for an older producer
    that refuses them (TypeError) when neither ``device`` nor ``copy`` is asked for."""
    kwargs = {"dl_device": None if device is None else (KDL_CPU, 0), "copy": copy,
              "max_version": (1, 0)}
    if isinstance(x, np.ndarray) and dtypes.is_bfloat16(x.dtype):
        return to_dlpack(x, **kwargs)
    try:
        return x.__dlpack__(**kwargs)
    except TypeError:
        if device is not None or copy is not None:
            raise
        return x.__dlpack__()


class _Producer:
    """A capsule already exported, handed to NumPy's ``from_dlpack`` as its producer."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule  # asked for with NumPy's arguments already (_export)

    def __dlpack_device__(self):
        return KDL_CPU, 0


class _Owner:
    """The producer's tensor seen by NumPy (``__array_interface__``), until the last array over
    it is freed: then its deleter runs, once."""

    def __init__(self, interface: dict, address: int, deleter: int):
        self.__array_interface__ = interface
        self._delete = (DELETER(deleter), address) if deleter else None

    def __del__(self):
        if self._delete is not None:
            delete, address = self._delete
            self._delete = None
            delete(address)


def host_from_dlpack(x, device=None, copy=None) -> np.ndarray:
    """NumPy's ``from_dlpack(x, device=, copy=)``, bfloat16 tensors too: an array of
    ml_dtypes' bfloat16 over the producer's memory (read-only where the capsule says so, or
    where it is a legacy one, as NumPy takes those), its deleter called when the array is freed.

    Raises
    ------
    BufferError
        A dtype that no NumPy dtype holds, naming DLPack's code, bits and lanes; the
        producer's own errors as it raises them.

    Examples
    --------
    >>> import numpy as np, ml_dtypes
    >>> a = np.asarray([1.5, -2.0], ml_dtypes.bfloat16)
    >>> b = host_from_dlpack(a, copy=True)
    >>> b.dtype, np.shares_memory(a, b)
    (dtype(bfloat16), False)
    """
    capsule = _export(x, device, copy)
    managed, versioned = _managed(capsule)
    tensor = managed.dl_tensor
    if (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes) != (KDL_BFLOAT, 16, 1):
        known = tensor.dtype.lanes == 1 and (tensor.dtype.code, tensor.dtype.bits) in _NUMPY_TAKES
        try:
            return np.from_dlpack(_Producer(capsule))
        except (RuntimeError, BufferError) as e:  # NumPy 2.4 refuses a dtype in RuntimeError
            if known:
                raise
            raise BufferError(f"from_dlpack: {dtype_name(tensor.dtype)} is not one that "
                              f"Arrays hold (NumPy: {e})") from None
    if versioned and managed.version.major > 1:
        raise BufferError(f"from_dlpack: DLPack {managed.version.major}.{managed.version.minor} "
                          "is newer than the 1.x this reads")
    if tensor.device.device_type not in HOST_DEVICE_TYPES:
        raise BufferError(f"from_dlpack: DLPack device type {tensor.device.device_type} is not "
                          "memory the host reads")
    ndim = tensor.ndim
    shape = tuple(tensor.shape[i] for i in range(ndim))
    strides = None if not tensor.strides else tuple(2 * tensor.strides[i] for i in range(ndim))
    read_only = not versioned or bool(managed.flags & READ_ONLY)
    interface = {"version": 3, "shape": shape, "strides": strides, "typestr": "<u2",
                 "data": ((tensor.data or 0) + tensor.byte_offset, read_only)}
    # the capsule is taken: renamed, its destructor leaves the deleter to the owner
    _set_name(capsule, _USED_VERSIONED if versioned else _USED)
    owner = _Owner(interface, ctypes.addressof(managed), managed.deleter)
    result = np.asarray(owner).view(dtypes.BFLOAT16)
    return result.copy() if copy and not _copied(managed, versioned) else result


def _copied(managed, versioned) -> bool:
    """Whether the producer says it made a copy (DLPACK_FLAG_BITMASK_IS_COPIED)."""
    return versioned and bool(managed.flags & 2)
