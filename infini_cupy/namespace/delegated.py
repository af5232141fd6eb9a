"""The rest of the array API namespace (standard 2025.12), delegated to ``array_api_compat``.

Our kernels provide the elementwise functions and data movement; every other function of the
standard comes from ``array_api_compat.numpy`` or ``array_api_compat.cupy``, picked per call:

* from the array arguments (NumPy -> ``array_api_compat.numpy``, CuPy -> ``array_api_compat.cupy``);
  arrays on different devices raise ValueError naming both;
* for creation functions without array arguments, from ``device=``: ``None`` is the current
  backend's default device (``cuda``: CuPy's current device; ``numpy``/``emulate``: the CPU),
  ``"cpu"`` is NumPy, a ``cupy.cuda.Device`` is CuPy on that device.

Functions take and return native arrays (no wrapper class). Copying data movement
(``concat``, ``reshape``, ``astype``, ...) is ours, in :mod:`.data_movement`.

>>> import numpy as np
>>> from infini_cupy.namespace import delegated as xp
>>> xp.sort(np.array([3, 1, 2]))
array([1, 2, 3])
>>> xp.zeros(2, device="cpu").dtype == xp.float64
True
"""

from __future__ import annotations

import builtins  # this module defines all, any, bool, max, min, sum: use builtins.X
import contextlib
import functools
import math
import sys
import types
import warnings
from typing import NamedTuple

import array_api_compat
import array_api_compat.numpy as _compat_numpy
import numpy as np

from .. import config, dtypes
from ..arrays import backend_for, device_of, is_array, is_cupy_array, require_cupy, type_name
from ..elementwise.numpy_casts import float_to_int, restore, silence
from ..elementwise.trace import is_traced, traced_call
from . import dlpack_bfloat16, evenly_spaced, index_bounds, standard_extensions
from .info import __array_namespace_info__


def _unique_kwargs_once_per_namespace() -> None:
    """array_api_compat's ``unique_*`` ask ``inspect.signature(xp.unique)`` at every call
    (whether it takes ``equal_nan``): 20-30 us a call, six times the work on 100 elements.
    The answer is the namespace's, fixed for a process: asked once per namespace. A release
    without that helper is left as it is."""
    try:
        from array_api_compat.common import _aliases
    except ImportError:  # pragma: no cover - depends on array_api_compat's release
        return
    helper = getattr(_aliases, "_unique_kwargs", None)
    if callable(helper) and not hasattr(helper, "cache_info"):
        _aliases._unique_kwargs = functools.lru_cache(maxsize=8)(helper)


_unique_kwargs_once_per_namespace()

__array_api_version__ = "2025.12"

# Functions whose namespace comes from their array arguments, by family of the standard.
_FROM_ARRAYS = {
    "creation": ["meshgrid", "tril", "triu"],
    "data_type": ["can_cast", "isdtype", "result_type"],  # finfo, iinfo: below
    "indexing": ["take", "take_along_axis"],
    "linear_algebra": ["matmul", "matrix_transpose", "tensordot", "vecdot"],
    # views; the copying ones (concat, stack, tile, repeat, roll, reshape) are _data_movement's
    "manipulation": [
        "broadcast_arrays", "broadcast_to", "expand_dims", "flip", "moveaxis", "permute_dims",
        "squeeze",
    ],
    "searching": ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"],
    "set": ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"],
    "sorting": ["argsort", "sort"],
    "statistical": [
        "cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var",
    ],
    "utility": ["all", "any"],  # diff: below
}
# Creation functions with no array argument: the namespace comes from ``device=``.
_FROM_DEVICE = ["arange", "empty", "eye", "full", "linspace", "ones", "zeros"]
_LIKE = ["empty_like", "full_like", "ones_like", "zeros_like"]

LINALG_NAMES = [
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]
FFT_NAMES = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]
CONSTANT_NAMES = ["e", "inf", "nan", "newaxis", "pi"]
DTYPE_NAMES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
]


def _compat_cupy():
    require_cupy()
    import array_api_compat.cupy as compat_cupy

    return compat_cupy


def _arrays_in(args, kwargs) -> list:
    """The arrays among the arguments, looking one level into lists and tuples (concat, stack)."""
    found = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            found.extend(b for b in a if is_array(b))
        elif is_array(a):
            found.append(a)
    return found


def namespace_for_device(device):
    """The compat namespace that creates arrays on ``device`` (None: the backend's default)."""
    if device is None:
        return _compat_cupy() if config.get_backend() == "cuda" else _compat_numpy
    if isinstance(device, str) and device == "cpu":
        return _compat_numpy
    cp = sys.modules.get("cupy")
    if cp is not None and isinstance(device, cp.cuda.Device):
        return _compat_cupy()
    raise ValueError(f"unknown device {device!r}: expected None, 'cpu' or a cupy.cuda.Device")


def namespace_of(*arrays):
    """The compat namespace of ``arrays``; ValueError naming both devices when they differ.

    With no arrays (``result_type(float32, int8)``, ...): the default device's namespace.
    """
    if not arrays:
        return namespace_for_device(None)
    # backend_for raises on mixed devices, naming both, and answers cuda exactly for CuPy
    # arrays: what array_api_compat.array_namespace would say, without its 1.7 us per call
    return _compat_cupy() if backend_for(*arrays) == "cuda" else _compat_numpy


def _named(function, name: str, doc: str):
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


def _zero_d(result):
    """NumPy reductions return NumPy scalars, compat keeps them: the standard wants 0-d arrays."""
    if type(result) is np.ndarray:  # the common answer, at one comparison
        return result
    if isinstance(result, np.generic):
        return np.asarray(result)
    if isinstance(result, tuple) and builtins.any(isinstance(r, np.generic) for r in result):
        values = [np.asarray(r) if isinstance(r, np.generic) else r for r in result]
        return type(result)._make(values) if hasattr(result, "_make") else tuple(values)
    return result


# Standard 2025.12 returns tuples here (2024.12 lists: see :mod:`.versions`).
_RETURNS_TUPLE = ("broadcast_arrays", "meshgrid")


def _function_of(xp, name: str, submodule: str | None, arrays: list):
    """``xp``'s (or its ``submodule``'s) ``name``; NotImplementedError naming the function
    and the device where the array library has none (``linalg.eig`` of an older CuPy)."""
    where = getattr(xp, submodule) if submodule else xp
    function = getattr(where, name, None)
    if function is None:
        device = device_of(arrays[0]) if arrays else config.get_backend()
        qualified = f"{submodule}.{name}" if submodule else name
        raise NotImplementedError(f"{qualified} is not available on {device}: the array library "
                                  f"there ({xp.__name__}) has no {qualified}")
    return function


# Values that are no array and hold none (axes, shapes, flags, dtypes given as classes; and
# dtypes, by _plain): a call whose first argument is a plain NumPy or CuPy array and whose
# others are these, or arrays of its type on its device, has that array's library (what
# namespace_of would find) and nothing traced.
_PLAIN_VALUES = frozenset({int, float, bool, str, type(None), type})
_PLAIN_ARRAYS = {np.ndarray}  # and cupy.ndarray once CuPy is imported (_plain_arrays)


def _plain_arrays() -> set:
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        _PLAIN_ARRAYS.add(cupy.ndarray)
    return _PLAIN_ARRAYS


def _plain(values, like=None) -> bool:
    """Every value one of :data:`_PLAIN_VALUES`, a dtype, a tuple of those values, or an
    array of the type of ``like`` (a plain array) on its device."""
    for v in values:
        kind = type(v)
        if kind not in _PLAIN_VALUES:
            if kind is not tuple:
                if isinstance(v, np.dtype):  # xp.float64 (NumPy's dtypes, and CuPy's)
                    continue
                if kind is type(like) and (kind is np.ndarray or v.device == like.device):
                    continue  # (NumPy's arrays: one device)
                return False
            for w in v:
                if type(w) not in _PLAIN_VALUES:
                    return False
    return True


# NumPy's words for the LinAlgError of a failed factorization (a singular matrix, ...)
_LINALG_FAILURES = {
    "inv": "Singular matrix", "solve": "Singular matrix",
    "cholesky": "Matrix is not positive definite",
    **dict.fromkeys(("eig", "eigvals", "eigh", "eigvalsh"), "Eigenvalues did not converge"),
    **dict.fromkeys(("svd", "svdvals", "pinv", "matrix_rank"), "SVD did not converge"),
}


@contextlib.contextmanager
def _cupy_linalg_raises(name: str):
    """CuPy's linalg reads its solvers' status only under ``cupyx.errstate(linalg="raise")``
    (``cupyx/_ufunc_config.py``: 'ignore' by default, a singular matrix's inverse NaN/inf
    silently; ``cupy/linalg/_util.py``): raised here as NumPy raises it, in NumPy's words."""
    import cupyx

    try:
        with cupyx.errstate(linalg="raise"):
            yield
    except np.linalg.LinAlgError as error:
        if not str(error).startswith("Error reported by"):  # CuPy's argument checks
            raise
        raise np.linalg.LinAlgError(_LINALG_FAILURES.get(name, str(error))) from error


def _delegate(name: str, submodule: str | None = None):
    """``name`` (of ``submodule``) from the compat namespace of the array arguments."""
    as_tuple = name in _RETURNS_TUPLE
    checked = (lambda: _cupy_linalg_raises(name)) if submodule == "linalg" else (
        lambda: _NO_CONTEXT)
    by_type = {}  # a plain array's type -> (its library's namespace, whether CuPy's)

    def delegated(*args, **kwargs):
        if args:  # one plain array, plain values: the namespace of its type, found once
            found = by_type.get(type(args[0]))  # (NumPy's refused under the cuda backend)
            if (found is not None and _plain(args[1:], args[0])
                    and _plain(kwargs.values(), args[0])
                    and (found[1] or config.get_backend() != "cuda")):
                function = getattr(found[0], name, None)
                if function is not None:
                    if found[1]:  # CuPy's: run on the current GPU, the array's one
                        with args[0].device, checked():
                            result = function(*args, **kwargs)
                    else:
                        result = function(*args, **kwargs)
                    return tuple(result) if as_tuple else _zero_d(result)
        if is_traced(*args, *kwargs.values()):  # inside infini_cupy.fuse's trace
            return traced_call(name, args, kwargs)
        arrays = _arrays_in(args, kwargs)
        namespace = namespace_of(*arrays)
        function = _function_of(namespace, name, submodule, arrays)
        if arrays and arrays[0] is args[0] and type(args[0]) in _plain_arrays():
            # the library of a plain first array's type, whatever the other arguments
            where = getattr(namespace, submodule) if submodule else namespace
            by_type[type(args[0])] = (where, is_cupy_array(args[0]))  # the next: above
        if arrays and is_cupy_array(arrays[0]):
            with arrays[0].device, checked():  # CuPy runs on the current GPU: the arrays' one
                result = function(*args, **kwargs)
        else:
            result = function(*args, **kwargs)
        return tuple(result) if as_tuple else _zero_d(result)

    where = f"{submodule}.{name}" if submodule else name
    return _named(delegated, name, f"``{where}`` of the arrays' library, through array_api_compat.")


_NO_CONTEXT = contextlib.nullcontext()  # reusable: it holds nothing


def _current(device):
    """The context a creation on ``device`` runs in: that GPU made current (array_api_compat's
    CuPy functions take ``device=`` but create on the current GPU), else none."""
    if device is None or (type(device) is str and device == "cpu"):
        return _NO_CONTEXT
    from .device import parse  # device imports this module's neighbours: imported at use

    native = parse(device).native()
    return _NO_CONTEXT if isinstance(native, str) else native


def _delegate_from_device(name: str, submodule: str | None = None):
    # no array argument: the device picks the library. On the CPU, NumPy's own function:
    # array_api_compat's NumPy creation functions only check and drop ``device`` (1 us more);
    # its fftfreq and rfftfreq also take ``dtype``, which NumPy's do not.
    on_cpu = (getattr(getattr(_compat_numpy, submodule), name) if submodule
              else _numpy_eye if name == "eye" else getattr(np, name))

    def created(*args, device=None, **kwargs):
        dtype = kwargs.get("dtype")
        if dtype is not None:
            dtypes.check_held(name, dtype)
        if device is None:
            # 0-d GPU arrays among the values (linspace's ends, full's fill_value): their
            # GPU, where CuPy's kernels on them run (on another one they are refused)
            device = next((a.device for a in (*args, *kwargs.values()) if is_cupy_array(a)),
                          None)
        if device is None:
            if config.get_backend() != "cuda":
                return on_cpu(*args, **kwargs)
        elif type(device) is str and device == "cpu":
            return on_cpu(*args, **kwargs)
        xp = namespace_for_device(device)
        # array_api_compat's fft.fftfreq and rfftfreq take no GPU for device ("Unsupported
        # device"): the context makes it current, where CuPy creates
        given = None if submodule == "fft" else device
        try:
            with _current(device):
                return getattr(getattr(xp, submodule) if submodule else xp, name)(
                    *args, device=given, **kwargs)
        except Exception as e:
            check_gpu_found(name, e)
            raise

    where = f"{submodule}.{name}" if submodule else name
    return _named(created, name, f"``{where}`` on ``device`` (None: the backend's default device).")


def check_gpu_found(what: str, error: Exception) -> None:
    """ValueError naming the cause when CuPy raised ``error`` for want of a usable GPU under
    the ``cuda`` backend (its own words name a driver: ``cudaErrorInsufficientDriver``, or
    ``cudaErrorNoDevice``), as ``device="cuda"`` says it; nothing otherwise."""
    from ..arrays import gpu_available
    from ..runtime.availability import cuda_unavailable

    if config.get_backend() == "cuda" and not gpu_available():
        cause = cuda_unavailable() or f"{type(error).__name__}: {error}"
        raise ValueError(f"{what}: the cuda backend is in force and cannot run here: {cause}; "
                         "choose the 'emulate' or 'numpy' backend, or a device ('cpu', "
                         "'emulator')") from error


def _numpy_eye(n_rows, n_cols=None, /, *, k=0, dtype=None):
    return np.eye(n_rows, n_cols, k=k, dtype=dtype)


def _delegate_like(name: str):
    # *_like on another device than x's: compat's *_like cannot cross devices, so create anew
    def like(x, /, *args, dtype=None, device=None, **kwargs):
        if dtype is not None:
            dtypes.check_held(name, dtype)
        if device is None and type(x) is np.ndarray:  # one device, none to make current
            return getattr(_compat_numpy, name)(x, *args, dtype=dtype, **kwargs)
        if device is None or array_api_compat.device(x) == device:
            with _current(array_api_compat.device(x)):  # x's GPU, not the current one
                return getattr(namespace_of(x), name)(x, *args, dtype=dtype, device=device,
                                                      **kwargs)
        fresh = getattr(namespace_for_device(device), name.removesuffix("_like"))
        with _current(device):
            return fresh(x.shape, *args, dtype=x.dtype if dtype is None else dtype,
                         device=device, **kwargs)

    return _named(like, name, f"``{name}`` of x's library, or a new array on ``device``.")


class finfo_object(NamedTuple):
    """``finfo``'s answer, the standard's fields as Python numbers (NumPy's are NumPy scalars
    of the dtype)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


def _check_info_kind(name: str, type, kinds: str, what: str):  # noqa: A002
    """``type`` (a dtype's name as the dtype); ValueError naming its dtype unless its kind is
    one of ``kinds``: the library's own refusal is caught by array_api_compat, which then asks
    the dtype for its ``.dtype`` (an AttributeError). TypeError for what is no dtype, name or
    array (NumPy reads None as float64 and an int as int64)."""
    if type is None or builtins.isinstance(
            type, (builtins.bool, builtins.int, builtins.float, builtins.complex, list, tuple)):
        raise TypeError(f"{name}: takes a dtype or an array, got {builtins.type(type).__name__}")
    if builtins.isinstance(type, str):
        type = dtypes.check_held(name, type)
    dt = type if isinstance(type, np.dtype) else getattr(type, "dtype", None)
    if isinstance(dt, np.dtype) and dt.kind not in kinds:
        raise ValueError(f"{name}: {dt} is not {what} dtype")
    return type


def finfo(type, /):
    """Machine limits of a floating dtype (or an array's), fields as Python floats; for a
    complex dtype, those of its real dtype."""
    type = _check_info_kind("finfo", type, "fc", "a floating-point")
    info = namespace_of(*([type] if is_array(type) else [])).finfo(type)
    return finfo_object(int(info.bits), float(info.eps), float(info.max), float(info.min),
                        float(info.smallest_normal), np.dtype(info.dtype))


def iinfo(type, /):
    """Machine limits of an integer dtype (or an array's).

    Parameters
    ----------
    type : dtype, Array or array
        An integer dtype (or its name), or an array of one.

    Returns
    -------
    iinfo
        The library's ``iinfo``: ``bits``, ``min``, ``max`` (Python ints) and ``dtype``.

    Raises
    ------
    TypeError
        None, a Python scalar or a sequence.
    ValueError
        A dtype that is not an integer dtype (bool included).
    """
    type = _check_info_kind("iinfo", type, "iu", "an integer")
    return namespace_of(*([type] if is_array(type) else [])).iinfo(type)


def diff(x, /, n=1, axis=-1, *, prepend=None, append=None):
    """``n``-th differences along ``axis``; None for ``prepend``/``append`` is no array (NumPy
    would take None as a value).

    Parameters
    ----------
    x : Array or array
        Input array of at least one dimension (the standard's: of a numeric dtype).
    n : int, default 1
        How many times to take differences; 0 gives ``x``. ``n`` and ``axis`` may also be
        given by position, in NumPy's order (an extension: the standard's are keyword-only).
    axis : int, default -1
        The axis to take differences along.
    prepend, append : Array, array or Python scalar, optional
        Values put before (after) ``x`` along ``axis`` first: ``x``'s shape but along
        ``axis``, or a scalar (one value); None (default): none.

    Returns
    -------
    Array or array
        The differences, of ``x``'s dtype, on ``x``'s device: ``x``'s shape but along
        ``axis``, ``n`` shorter than ``x``, ``prepend`` and ``append`` together (at least 0).

    Raises
    ------
    ValueError
        A 0-d ``x``, a negative ``n``, or arrays on different devices.
    """
    extra = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    xp = namespace_of(*(a for a in (x, *extra.values()) if is_array(a)))
    if type(n) is int and is_array(x) and x.ndim and type(axis) is int and -x.ndim <= axis < x.ndim:
        # past the length along axis every difference is of nothing: NumPy loops n times
        # (hours for n=2**40); a bound of that length (an array's size: at least its length)
        length = x.shape[axis] + builtins.sum(v.size if is_array(v) else 1 for v in extra.values())
        n = builtins.min(n, length + 1)
    return _zero_d(xp.diff(x, axis=axis, n=n, **extra))


def to_device(x, device, /, *, stream=None):
    """``x`` on ``device``: ``x`` itself when already there, else a copy.

    An extension: the standard's ``x.to_device`` method as a function, for CuPy arrays,
    which lack the method.

    Parameters
    ----------
    x : Array or array
        Input array.
    device : Device, str or cupy.cuda.Device
        ``"cpu"``, ``"emulator"``, ``"cuda:N"``.
    stream : cupy.cuda.Stream, optional
        The CuPy stream of a copy to or from a GPU.

    Returns
    -------
    Array or array
        ``x`` itself when already on ``device``, else a copy there.

    Raises
    ------
    ValueError
        An unknown device.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.asarray([1, 2], device="emulator")
    >>> xp.to_device(x, "cpu")
    Array([1, 2], device='cpu')
    >>> xp.to_device(x, "emulator") is x
    True
    """
    namespace_for_device(device)  # rejects unknown devices
    if array_api_compat.device(x) == device:
        return x
    if stream is not None:
        _check_stream(stream, x.device if isinstance(device, str) else device)
    if isinstance(device, str):  # "cpu": x is a CuPy array
        with x.device:  # by default on the stream of x's GPU that our kernels wrote x on
            return x.get(stream=stream)
    cp = require_cupy()
    if is_cupy_array(x) and not (x.flags.c_contiguous or x.flags.f_contiguous):
        with x.device:  # CuPy copies between GPUs contiguous arrays only
            x = cp.ascontiguousarray(x)
    # no `with` of the current stream: its exit would make the stream below it on CuPy's
    # stack current, undoing a stream.use()
    with device, (stream if stream is not None else contextlib.nullcontext()):
        # copy() lands on the current device, reading from any other; asarray uploads NumPy
        return x.copy() if is_cupy_array(x) else cp.asarray(x)


def _check_stream(stream, gpu) -> None:
    """TypeError unless ``stream`` is a CuPy stream, ValueError unless it is one of ``gpu``
    (the GPU the copy runs on: the target's, or for a copy to the host the source's): CuPy
    refuses another GPU's stream with a RuntimeError, or reads ``.ptr`` of anything else."""
    stream_gpu = getattr(stream, "device_id", None)
    if stream_gpu is None or not hasattr(stream, "ptr"):
        raise TypeError(f"to_device: stream must be a cupy.cuda.Stream (or ExternalStream), "
                        f"got {type_name(stream)}")
    if stream_gpu not in (-1, gpu.id):  # -1: the null stream, of whichever GPU is current
        raise ValueError(f"to_device: the copy runs on cuda:{gpu.id}, and the stream given "
                         f"is of cuda:{stream_gpu}")


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """``asarray`` on ``device`` (None: obj's device if it is an array, else the default)."""
    if device is None:
        xp = namespace_of(obj) if is_array(obj) else namespace_for_device(None)
    else:
        xp = namespace_for_device(device)
        if is_array(obj) and array_api_compat.device(obj) != device:
            # compat's asarray does not move CuPy arrays between devices: to_device does
            if copy is False:
                raise ValueError(
                    f"asarray(copy=False) cannot move an array from {device_of(obj)} "
                    f"to {device}"
                )
            obj, copy = to_device(obj, device), None  # already a fresh array
    try:
        return xp.asarray(obj, dtype=dtype, device=device, copy=copy)
    except Exception as e:
        if xp is not _compat_numpy:
            check_gpu_found("asarray", e)
        raise


_DLPACK_CUDA_DEVICE_TYPES = (2, 3, 13)  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged


def from_dlpack(x, /, *, device=None, copy=None):
    """``from_dlpack`` into the library of ``device``, or of the producer's device if None;
    on the host, bfloat16 too (:mod:`.dlpack_bfloat16`: NumPy's ``from_dlpack`` has none).

    Parameters
    ----------
    x : object
        A DLPack producer, with ``__dlpack__`` and ``__dlpack_device__``: an Array, a NumPy
        or CuPy array, a tensor of another library.
    device : Device, str or cupy.cuda.Device, optional
        ``"cpu"``, ``"emulator"``, ``"cuda"``/``"cuda:N"``; None: the producer's (an Array's
        own; other host data: the emulator under the ``emulate`` backend, else ``cpu``).
    copy : bool, optional
        True: always copy; False: never (ValueError where the data must move); None
        (default): where needed.

    Returns
    -------
    Array
        The producer's data (shared where no copy is made), on that device.

    Raises
    ------
    AttributeError
        An ``x`` without ``__dlpack__``.
    BufferError
        Data the producer cannot export.
    ValueError
        ``copy=False`` where the data must move, or an unknown device.
    """
    # the producer is not necessarily a NumPy or CuPy array: ask it where its data lives
    if device is None and hasattr(x, "__dlpack_device__"):
        on_cuda = x.__dlpack_device__()[0] in _DLPACK_CUDA_DEVICE_TYPES
        xp = _compat_cupy() if on_cuda else _compat_numpy
    else:
        xp = namespace_for_device(device)
    if xp is not _compat_numpy and hasattr(x, "__dlpack_device__"):
        return _cupy_from_dlpack(x, device, copy)
    if hasattr(x, "__dlpack__"):  # NumPy's from_dlpack, and bfloat16, which it lacks
        return dlpack_bfloat16.host_from_dlpack(x, device, copy)
    kwargs = {k: v for k, v in (("device", device), ("copy", copy)) if v is not None}
    return xp.from_dlpack(x, **kwargs)


def _cupy_from_dlpack(x, device, copy):
    """``from_dlpack`` onto a GPU. CuPy's (``cupy/_core/dlpack.pyx``, 14.2) takes no
    ``device`` (NotImplementedError) and no CPU producer (TypeError), and a CuPy array's
    ``__dlpack__`` refuses ``copy=True`` for its own device (BufferError: ``core.pyx``): the
    producer hands its data as it is, and the copy or the move to ``device`` is made here."""
    on_cuda = x.__dlpack_device__()[0] in _DLPACK_CUDA_DEVICE_TYPES
    if on_cuda:
        y = _compat_cupy().from_dlpack(x, **({"copy": False} if copy is False else {}))
    elif copy is False:
        raise ValueError(f"from_dlpack(copy=False) cannot move host data to {device}")
    else:
        y = dlpack_bfloat16.host_from_dlpack(x)  # then uploaded: a copy
    if device is not None and array_api_compat.device(y) != device:
        if copy is False:
            raise ValueError(f"from_dlpack(copy=False) cannot move an array from "
                             f"{device_of(y)} to {device}")
        return to_device(y, device)
    if copy:
        with y.device:  # copy() lands on the current device
            return y.copy()
    return y


def _submodule(name: str, names: list, from_device: tuple = ()) -> types.ModuleType:
    package = __name__.split(".")[0]  # infini_cupy.linalg, as the namespace's own submodule
    module = types.ModuleType(f"{package}.{name}", f"The array API ``{name}`` extension, delegated.")
    for function in names:
        if function in _FROM_ARRAYS["linear_algebra"]:
            setattr(module, function, globals()[function])  # the same function as the namespace's
        elif function in from_device:
            setattr(module, function, _delegate_from_device(function, name))
        else:
            setattr(module, function, _delegate(name=function, submodule=name))
    module.__all__ = list(names)
    # registered so that ``import infini_cupy.linalg`` works as for a real submodule
    sys.modules.setdefault(module.__name__, module)
    return module


for _name in [n for family in _FROM_ARRAYS.values() for n in family]:
    globals()[_name] = _delegate(_name)


def _bounds_checked(delegated, check, default_axis):
    """``take``/``take_along_axis``: on a GPU, indices out of range refused first as NumPy
    refuses them (CuPy's kernels wrap them: :mod:`.index_bounds`), whatever holds them."""

    def checked(*args, **kwargs):
        if args and is_cupy_array(args[0]) and (len(args) > 1 or "indices" in kwargs):
            x = args[0]
            indices = args[1] if len(args) > 1 else kwargs["indices"]
            axis = args[2] if len(args) > 2 else kwargs.get("axis", default_axis)
            with x.device:  # the reductions of GPU-held indices, on x's GPU
                check(x, indices, axis)
        return delegated(*args, **kwargs)

    return _named(checked, delegated.__name__, delegated.__doc__)


take = _bounds_checked(take, index_bounds.check_take, None)  # noqa: F821 - made above
take_along_axis = _bounds_checked(take_along_axis, index_bounds.check_take_along_axis, -1)  # noqa: F821
_take_along_axis_of_arrays = take_along_axis


def take_along_axis(x, indices, /, *, axis=-1):
    """``take_along_axis``; TypeError for ``indices`` that are no array (a list: the
    libraries read its ``.dtype``, an AttributeError).

    Parameters
    ----------
    x : Array or array
        Input array.
    indices : Array or array
        Integer indices along ``axis`` (negative ones count from the end), of as many
        dimensions as ``x``, with whose other axes they broadcast.
    axis : int, default -1
        The axis to take along.

    Returns
    -------
    Array or array
        The elements of ``x`` at ``indices``, of ``x``'s dtype, on ``x``'s device.

    Raises
    ------
    TypeError
        ``indices`` that are no array.
    IndexError
        An index out of range, on every device (CuPy's kernel would wrap it).
    """
    if not is_array(indices) and not is_traced(indices):
        raise TypeError(f"take_along_axis: indices must be an array of integers, got "
                        f"{type_name(indices)}")
    return _take_along_axis_of_arrays(x, indices, axis=axis)


for _name in _FROM_DEVICE:
    globals()[_name] = _delegate_from_device(_name)
for _name in _LIKE:
    globals()[_name] = _delegate_like(_name)


def _integer_fill(fill_value, dtype):
    """A float ``fill_value`` of an integer array converted as the kernels convert floats
    (NaN, infinities and out-of-range values: the GPU's answers, silently), not the host's."""
    if (isinstance(fill_value, (float, np.floating)) and dtype is not None
            and np.dtype(dtype).kind in "iu"):
        return float_to_int(np.asarray(fill_value), np.dtype(dtype)).item()
    return fill_value


_full, _full_like = full, full_like  # noqa: F821 - made by the loops above


def full(shape, fill_value, *, dtype=None, device=None):
    dtypes.check_fill_value("full", fill_value)
    if dtype is None and type(fill_value) is int and not dtypes.int_in_64_bits(fill_value):
        # NumPy would make an object array, which no device holds
        raise OverflowError(f"full: fill_value {fill_value} fits no integer dtype (int64, "
                            "uint64); give a dtype or a float")
    return _full(shape, _integer_fill(fill_value, dtype), dtype=dtype, device=device)


def full_like(x, /, fill_value, *, dtype=None, device=None):
    dtypes.check_fill_value("full_like", fill_value)
    fill_value = _integer_fill(fill_value, x.dtype if dtype is None else dtype)
    return _full_like(x, fill_value, dtype=dtype, device=device)


full.__doc__, full_like.__doc__ = _full.__doc__, _full_like.__doc__

_arange = arange  # noqa: F821 - made by the loops above


def arange(start, /, stop=None, step=1, *, dtype=None, device=None):
    for value in (start, stop, step):
        if isinstance(value, (complex, np.complexfloating)):  # NumPy: an empty complex array
            raise TypeError(f"arange: start, stop and step are real numbers, got {value!r}")
        # (numbers only: a 0-d array's value is read where it is used)
        if isinstance(value, (float, np.floating)) and not math.isfinite(value):
            # NumPy: "Maximum allowed size exceeded" or "cannot compute length"; CuPy:
            # OverflowError for an infinity
            raise ValueError(f"arange: start, stop and step must be finite, got start={start!r}"
                             f", stop={stop!r}, step={step!r}")
    if isinstance(step, (int, float, np.number)) and step == 0:  # (the libraries divide by 0)
        raise ValueError(f"arange: step must not be 0, got {step!r}")
    on_kernels = _on_kernels("arange", dtype, device, (start, stop, step))
    if on_kernels is not None:
        start, stop = (0, start) if stop is None else (start, stop)
        return evenly_spaced.arange(*_host_values(start, stop, step), dtype, on_kernels)
    return _arange(start, stop, step, dtype=dtype, device=device)


def _on_kernels(name, dtype, device, values) -> evenly_spaced.OnDevice | None:
    """Where ``arange``, ``linspace`` or ``fft.fftfreq``/``rfftfreq`` (``name``) makes its
    values with our kernels (the ``emulate`` and ``cuda`` backends, numbers or 0-d arrays for
    ``values``): how they reach the device; None where the library's own function makes them
    (``cpu``, other values, 0-d arrays of two devices)."""
    if not builtins.all(_is_number(v) or v is None or _is_0d_array(v) for v in values):
        return None
    held_on = {str(v.device) for v in values if _is_0d_array(v)}
    if len(held_on) > 1:  # refused by the library's own function, naming the devices
        return None
    if dtype is not None:
        dtypes.check_held(name, dtype)
    if device is None:
        device = next((v.device for v in values if _is_0d_array(v)), None)
    if device is None:
        backend = config.get_backend()
    elif type(device) is str and device == "cpu":  # NumPy's name of the host's memory: the
        backend = "emulate" if config.get_backend() == "emulate" else "numpy"  # emulator's too
    else:
        from .device import parse  # device imports this module's neighbours: imported at use

        backend = parse(device).backend
    if backend == "emulate":
        return _EMULATOR_VALUES
    if backend != "cuda":
        return None
    return evenly_spaced.OnDevice(_on_gpu(_cupy_arange, name, device),
                                  _on_gpu(_cupy_asarray, name, device))


def _on_gpu(make, name, device):
    """``make`` run with ``device`` current; where CuPy finds no usable GPU, the ValueError
    of :func:`check_gpu_found` naming ``name``."""

    def made(*args):
        try:
            with _current(device):
                return make(*args)
        except Exception as e:
            check_gpu_found(name, e)
            raise

    return made


def _cupy_arange(start, stop, step, dtype):
    return require_cupy().arange(start, stop, step, dtype)


def _cupy_asarray(host):
    return require_cupy().asarray(host)


_EMULATOR_VALUES = evenly_spaced.OnDevice(
    lambda start, stop, step, dtype: np.arange(start, stop, step, dtype=dtype),
    lambda host: host.copy())


def _is_number(value) -> bool:
    return isinstance(value, (int, float, complex, np.generic))


def _is_0d_array(value) -> bool:
    """A 0-d array of a library or an Array (generic code's computed ends and spacings)."""
    return (not _is_number(value) and getattr(value, "shape", None) == ()
            and hasattr(value, "device"))


def _host_values(*values):
    """Numbers as they are; a 0-d array as a NumPy scalar of its dtype (what NumPy reads
    of it: no Python number's weak promotion), read from its device."""
    def read(v):
        if not _is_0d_array(v):
            return v
        if is_cupy_array(v):
            return v.get()[()]
        return np.asarray(v.to_device("cpu") if hasattr(v, "to_device") else v)[()]

    return tuple(read(v) for v in values)


arange.__doc__ = _arange.__doc__

_linspace = linspace  # noqa: F821 - made by the loops above


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    on_kernels = _on_kernels("linspace", dtype, device, (start, stop))
    if on_kernels is not None:
        return evenly_spaced.linspace(*_host_values(start, stop), num, dtype, endpoint,
                                      on_kernels)
    token = silence()  # linspace(0, inf, 3): NaN silently, as on every device
    try:
        return _linspace(start, stop, num, dtype=dtype, device=device, endpoint=endpoint)
    finally:
        restore(token)


linspace.__doc__ = _linspace.__doc__


def _of_a_matrix(delegated):
    def triangle(x, /, *, k=0):
        if getattr(x, "ndim", None) == 0:  # NumPy's tri() missing 'N'
            raise ValueError(f"{delegated.__name__}: x of shape () holds no matrix (a 1-d x "
                             "is NumPy's square of it)")
        return delegated(x, k=k)

    return _named(triangle, delegated.__name__, delegated.__doc__)


tril, triu = _of_a_matrix(tril), _of_a_matrix(triu)  # noqa: F821

_searchsorted = searchsorted  # noqa: F821 - made by the loops above


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    ndim = getattr(x1, "ndim", None)
    if ndim is not None and ndim != 1:  # NumPy's words: "object too deep for desired array"
        raise ValueError(f"searchsorted(): x1 must be one-dimensional (the sorted values), got "
                         f"shape {tuple(x1.shape)}")
    return _searchsorted(x1, x2, side=side, sorter=sorter)


searchsorted.__doc__ = _searchsorted.__doc__


_sort = sort  # noqa: F821 - made by the loops above


def stable_sort_needless(dtype) -> bool:
    """Whether a stable ``sort`` of ``dtype`` gives the very array the library's default sort
    gives, which is the faster: integers of two bytes or more (equal integers cannot be told
    apart; NumPy's SIMD quicksort is 2-8 times its stable one on 48x64). Bools and bytes keep
    the stable one: a radix sort, faster for them."""
    return dtype.kind in "iu" and dtype.itemsize > 1


def sort(x, /, *, axis=-1, descending=False, stable=True):
    dtype = getattr(x, "dtype", None)
    if stable and dtype is not None and stable_sort_needless(dtype):
        stable = False
    if not descending:
        return _sort(x, axis=axis, stable=stable)
    # array_api_compat flips an ascending sort, which reverses equal keys (-0.0 and 0.0, NaNs
    # of different payloads): the standard's stable descending order keeps them in x's order,
    # as argsort(descending=True) does; flip, sort ascending, flip back
    return flip(_sort(flip(x, axis=axis), axis=axis, stable=stable), axis=axis)  # noqa: F821


sort.__doc__ = _sort.__doc__


def _cumulative(delegated):
    def cumulative(x, /, *, axis=None, dtype=None, include_initial=False):
        if getattr(x, "ndim", None) == 0 and not is_traced(x):
            # NumPy's cumulative_sum: a 0-d x as one element, along axis None, 0 or -1
            # (array_api_compat's include_initial assumed an axis of x: IndexError)
            x = x.reshape((1,))
        return delegated(x, axis=axis, dtype=dtype, include_initial=include_initial)

    return _named(cumulative, delegated.__name__, delegated.__doc__)


cumulative_sum = _cumulative(cumulative_sum)  # noqa: F821 - made by the loops above
cumulative_prod = _cumulative(cumulative_prod)  # noqa: F821

def spread_or_nan(compute, shape, axis, correction):
    """``compute(correction)`` (a ``var`` or ``std``), or the standard's NaN where
    ``N - correction <= 0`` or ``N`` is 0 (NumPy gives inf or NaN with warnings, CuPy NaN
    silently): NaN, silent, on every device, of the shape and dtype ``compute(0)`` has."""
    if axis is None:
        n = math.prod(shape)
    else:
        axes = axis if isinstance(axis, tuple) else (axis,)
        n = math.prod(shape[a] for a in axes if isinstance(a, int) and -len(shape) <= a
                      < len(shape))
    if n - correction > 0 and n:
        return compute(correction)
    with warnings.catch_warnings():  # a shape and dtype for the NaN only
        warnings.simplefilter("ignore", RuntimeWarning)
        result = compute(0.0)
    if is_cupy_array(result):
        with result.device:  # CuPy fills on the current GPU: the result's one
            result.fill(math.nan)
    else:
        result[...] = math.nan
    return result


def _spread(delegated):
    def spread(x, /, *, axis=None, correction=0.0, keepdims=False):
        shape = getattr(x, "shape", None)
        if shape is None or is_traced(x):
            return delegated(x, axis=axis, correction=correction, keepdims=keepdims)
        return spread_or_nan(lambda c: delegated(x, axis=axis, correction=c, keepdims=keepdims),
                             shape, axis, correction)

    return _named(spread, delegated.__name__, delegated.__doc__)


var = _spread(var)  # noqa: F821 - made by the loops above
std = _spread(std)  # noqa: F821

linalg = _submodule("linalg", LINALG_NAMES)
fft = _submodule("fft", FFT_NAMES, from_device=("fftfreq", "rfftfreq"))


def _frequencies_on_kernels(delegated, real: bool):
    """``fft.fftfreq``/``rfftfreq`` with NumPy's values on the kernels' devices too
    (:func:`.evenly_spaced.frequencies`; CuPy's divide where NumPy multiplies)."""

    def frequencies(n, /, *, d=1.0, dtype=None, device=None):
        on_kernels = _on_kernels(f"fft.{delegated.__name__}", dtype, device, (d,))
        if on_kernels is not None:
            return evenly_spaced.frequencies(n, *_host_values(d), dtype, real, on_kernels)
        return delegated(n, d=d, dtype=dtype, device=device)

    return _named(frequencies, delegated.__name__, delegated.__doc__)


fft.fftfreq = _frequencies_on_kernels(fft.fftfreq, real=False)
fft.rfftfreq = _frequencies_on_kernels(fft.rfftfreq, real=True)
tensordot = _named(standard_extensions.tensordot_of_the_standard(tensordot),  # noqa: F821
                   "tensordot", tensordot.__doc__)  # noqa: F821
standard_extensions.hold_to_the_standard(
    linalg, fft, named=_named,
    count_nonzero=count_nonzero, broadcast_to=broadcast_to)  # noqa: F821 - made by the loops

e, inf, nan, newaxis, pi = math.e, math.inf, math.nan, None, math.pi
# NumPy dtype objects: CuPy uses NumPy's dtypes too, so one set serves both libraries.
globals().update({_name: np.dtype(_name) for _name in DTYPE_NAMES})
del _name

FUNCTION_NAMES = sorted(
    [n for family in _FROM_ARRAYS.values() for n in family]
    + _FROM_DEVICE + _LIKE + ["asarray", "diff", "finfo", "from_dlpack", "iinfo"]
)
DELEGATED_NAMES = (
    FUNCTION_NAMES
    + ["linalg", "fft"]
    + CONSTANT_NAMES
    + DTYPE_NAMES
    + ["__array_api_version__", "__array_namespace_info__"]
)
# Not in the standard, used by our data movement too.
EXTENSION_NAMES = ["to_device"]
__all__ = DELEGATED_NAMES + EXTENSION_NAMES
