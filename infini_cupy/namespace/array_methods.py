"""NumPy's array methods that generic code calls on an array, on ``infini_cupy.Array``
(beyond the standard, which has the functions and few methods): ``reshape``, ``ravel``,
``flatten``, ``round``, ``copy``, ``astype``, ``item``, ``tolist``, ``get``, ``all``, ``any``,
``sum``, ``max``, ``min``, ``mean``, ``std``, ``var``, ``prod``, ``argmax``, ``argmin``,
``cumsum``, ``nonzero``, ``compress``, ``view``, ``transpose``, ``squeeze``, ``fill``,
``conj``/``conjugate``, ``clip``, ``argsort``, ``base``, ``nbytes``, ``itemsize``,
``strides``. Each is the namespace's function where it has one (our
kernels where the function runs them), so a method and its function give the same answer on every device.

Clients: SciPy's array-API code calls ``x.reshape`` (optimize, integrate, special) and
``x.sum`` (``integrate.nsum``); numpy_groupies ``x.ravel``, ``x.min``, ``x.max``,
``x.nonzero``, ``x.compress``; xarray ``x.round``, ``x.astype``; scikit-learn's
NumPy-written functions ``x.mean`` (``r_regression``); cubed ``x.nbytes``, and, through
zarr's buffers, ``x.ravel().view("B")``, ``x.base``, ``x.transpose``, ``x.squeeze`` and
``x.fill``; xarray's ``cov``/``corr`` and SciPy's ``toeplitz`` ``x.conj()``, SciPy's
``spearmanr`` ``x.clip``, xarray's ``argsort`` ``x.argsort``; NumPy's testing ``x.all()``
(``assert_allclose`` given an Array tolerance, as SciPy's tests do); Dask's ``assert_eq``
``x.get()``.

>>> import infini_cupy as xp
>>> x = xp.asarray([[1.25, 2.5], [3.75, 4.0]], device="cpu")
>>> x.reshape(4).round(1), x.nbytes
(Array([1.2, 2.5, 3.8, 4. ], device='cpu'), 32)
"""

from __future__ import annotations

import operator

import numpy as np

from .. import dtypes
from ..arrays import device_context, is_array, type_name
from .array import Array, check_same_device, wrap
from .cpu_direct import _check_copyable

_public: dict = {}


def _shape_argument(shape: tuple):
    """NumPy's ``x.reshape(2, 3)`` and ``x.reshape((2, 3))`` as one shape."""
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        return shape[0]
    return shape


def reshape(self, *shape, order="C", copy=None) -> Array:
    """``x`` with a new shape (``x.reshape(2, 3)`` or ``x.reshape((2, 3))``): a view when the
    strides allow, else a copy by our strided kernel (``order="C"``); ``order="F"`` or
    ``"A"`` is the array library's.

    >>> import infini_cupy as xp
    >>> xp.arange(6, device="cpu").reshape(2, -1).shape
    (2, 3)
    """
    shape = _shape_argument(shape)
    if order == "C":
        return _public["reshape"](self, shape, copy=copy)
    if copy is not None:
        raise ValueError("x.reshape: copy= is only taken with order='C'")
    return wrap(self._a.reshape(shape, order=order), self._b)


def ravel(self, order="C") -> Array:
    """``x`` as one contiguous dimension, as NumPy's ``ravel``: a view when the elements are
    contiguous in that order, else a copy (code such as zarr's views the result as bytes).

    >>> import infini_cupy as xp
    >>> xp.ones((2, 2), device="cpu").ravel()
    Array([1., 1., 1., 1.], device='cpu')
    >>> xp.arange(4, device="cpu")[::-1].ravel().view(xp.uint8).shape
    (32,)
    """
    if order != "C":
        return wrap(self._a.ravel(order), self._b)
    if self._b == "numpy" and self._p is None and self._a.flags.c_contiguous:
        # cpu_direct.reshape's view of a C-contiguous array (its dtype check, memoized)
        native = self._a
        _check_copyable(native.dtype, "reshape")
        return wrap(native.reshape(-1), "numpy")
    flat = reshape(self, -1)
    if flat.size > 1 and flat._a.strides[0] != flat._a.itemsize:  # a strided view
        return _public["reshape"](self, -1, copy=True)
    return flat


def flatten(self, order="C") -> Array:
    """A new one-dimensional copy of ``x``.

    >>> import infini_cupy as xp
    >>> xp.ones((2, 1), device="cpu").flatten().shape
    (2,)
    """
    if order == "C":
        return _public["reshape"](self, -1, copy=True)
    return wrap(self._a.flatten(order), self._b)


def round(self, decimals=0, out=None) -> Array:
    """``infini_cupy.round(x, decimals)``.

    >>> import infini_cupy as xp
    >>> xp.asarray([1.26, -0.5], device="cpu").round(1)
    Array([ 1.3, -0.5], device='cpu')
    """
    return _public["round"](self, decimals, out=out)


def copy(self, order="C") -> Array:
    """A C-contiguous copy of ``x`` on its device (our strided copy).

    >>> import infini_cupy as xp
    >>> x = xp.zeros(2, device="cpu")
    >>> y = x.copy(); y[0] = 1.0; x
    Array([0., 0.], device='cpu')
    """
    if order not in ("C", "K", "A"):
        raise ValueError(f"x.copy: order={order!r}; Arrays copy to C order ('C', 'K', 'A')")
    return _public["asarray"](self, copy=True)


def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True, *,
           device=None) -> Array:
    """``infini_cupy.astype(x, dtype, copy=copy, device=device)``; NumPy's ``casting``
    rule is checked first (TypeError where ``numpy.can_cast`` says no).

    >>> import infini_cupy as xp
    >>> xp.asarray([1.7, -1.7], device="cpu").astype("int8")
    Array([ 1, -1], dtype=int8, device='cpu')
    """
    dtypes.check_astype_method(self.dtype, dtype, order, casting)
    return _public["astype"](self, dtype, copy=copy, device=device)


def all(self, axis=None, out=None, keepdims=False) -> Array:
    """``infini_cupy.all(x, axis=axis, keepdims=keepdims)``: NumPy's testing
    (``assert_allclose`` with an Array tolerance) calls it on the comparison's result.

    >>> import infini_cupy as xp
    >>> (xp.arange(3, device="cpu") >= 0).all()
    Array(True, device='cpu')
    """
    return _reduce_into("all", self, axis, out, keepdims)


def any(self, axis=None, out=None, keepdims=False) -> Array:
    """``infini_cupy.any(x, axis=axis, keepdims=keepdims)``.

    >>> import infini_cupy as xp
    >>> (xp.arange(3, device="cpu") > 1).any()
    Array(True, device='cpu')
    """
    return _reduce_into("any", self, axis, out, keepdims)


def sum(self, axis=None, dtype=None, out=None, keepdims=False) -> Array:
    """``infini_cupy.sum(x, axis=axis, dtype=dtype, keepdims=keepdims)``: SciPy's
    ``integrate.nsum`` counts with ``mask.sum(axis=-1)``.

    >>> import infini_cupy as xp
    >>> xp.asarray([[True, False], [True, True]], device="cpu").sum(axis=-1)
    Array([1, 2], device='cpu')
    """
    return _reduce_into("sum", self, axis, out, keepdims, dtype=dtype)


def max(self, axis=None, out=None, keepdims=False) -> Array:
    """``infini_cupy.max(x, axis=axis, keepdims=keepdims)``: numpy_groupies checks the range
    of group indices with ``x.min()`` and ``x.max()``.

    >>> import infini_cupy as xp
    >>> xp.asarray([[3, 1], [2, 5]], device="cpu").max(axis=0)
    Array([3, 5], device='cpu')
    """
    return _reduce_into("max", self, axis, out, keepdims)


def min(self, axis=None, out=None, keepdims=False) -> Array:
    """``infini_cupy.min(x, axis=axis, keepdims=keepdims)``.

    >>> import infini_cupy as xp
    >>> xp.asarray([[3, 1], [2, 5]], device="cpu").min()
    Array(1, device='cpu')
    """
    return _reduce_into("min", self, axis, out, keepdims)


def mean(self, axis=None, dtype=None, out=None, keepdims=False) -> Array:
    """``infini_cupy.mean(x, axis=axis, dtype=dtype, keepdims=keepdims)``: scikit-learn's
    NumPy-written functions (``r_regression``) center with ``X.mean(axis=0)``.

    >>> import infini_cupy as xp
    >>> xp.asarray([[1.0, 2.0], [3.0, 5.0]], device="cpu").mean(axis=0)
    Array([2. , 3.5], device='cpu')
    """
    return _reduce_into("mean", self, axis, out, keepdims, dtype=dtype)


def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False) -> Array:
    """``infini_cupy.std(x, axis=axis, correction=ddof, dtype=dtype, keepdims=keepdims)``.

    >>> import infini_cupy as xp
    >>> xp.asarray([1.0, 2.0, 4.0, 5.0], device="cpu").std(ddof=1) ** 2
    Array(3.33333333, device='cpu')
    """
    return _reduce_into("std", self, axis, out, keepdims, correction=ddof, dtype=dtype)


def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False) -> Array:
    """``infini_cupy.var(x, axis=axis, correction=ddof, dtype=dtype, keepdims=keepdims)``.

    >>> import infini_cupy as xp
    >>> xp.asarray([1.0, 2.0, 4.0, 5.0], device="cpu").var()
    Array(2.5, device='cpu')
    """
    return _reduce_into("var", self, axis, out, keepdims, correction=ddof, dtype=dtype)


def prod(self, axis=None, dtype=None, out=None, keepdims=False) -> Array:
    """``infini_cupy.prod(x, axis=axis, dtype=dtype, keepdims=keepdims)``.

    >>> import infini_cupy as xp
    >>> xp.asarray([[1, 2], [3, 4]], device="cpu").prod(axis=1)
    Array([ 2, 12], device='cpu')
    """
    return _reduce_into("prod", self, axis, out, keepdims, dtype=dtype)


def argmax(self, axis=None, out=None, *, keepdims=False) -> Array:
    """``infini_cupy.argmax(x, axis=axis, keepdims=keepdims)``: the index of the first
    maximum, of the flattened array where ``axis`` is None.

    >>> import infini_cupy as xp
    >>> xp.asarray([[3, 1], [2, 5]], device="cpu").argmax(axis=1)
    Array([0, 1], device='cpu')
    """
    return _reduce_into("argmax", self, axis, out, keepdims)


def argmin(self, axis=None, out=None, *, keepdims=False) -> Array:
    """``infini_cupy.argmin(x, axis=axis, keepdims=keepdims)``.

    >>> import infini_cupy as xp
    >>> xp.asarray([[3, 1], [2, 5]], device="cpu").argmin()
    Array(1, device='cpu')
    """
    return _reduce_into("argmin", self, axis, out, keepdims)


def cumsum(self, axis=None, dtype=None, out=None) -> Array:
    """``infini_cupy.cumulative_sum(x, axis=axis, dtype=dtype)``; with ``axis`` None, of the
    flattened array, as NumPy's.

    >>> import infini_cupy as xp
    >>> xp.asarray([[1, 2], [3, 4]], device="cpu").cumsum()
    Array([ 1,  3,  6, 10], device='cpu')
    """
    x = self if axis is not None else reshape(self, -1)
    return _into("cumsum", out, _public["cumulative_sum"](
        x, axis=axis if axis is not None else 0, dtype=dtype))


def nonzero(self) -> tuple:
    """``infini_cupy.nonzero(x)``: the indices of the nonzero elements, one Array per axis.

    >>> import infini_cupy as xp
    >>> xp.asarray([0, 3, 0, 4], device="cpu").nonzero()
    (Array([1, 3], device='cpu'),)
    """
    return _public["nonzero"](self)


def compress(self, condition, axis=None) -> Array:
    """The slices along ``axis`` (None: of the flattened array) where the 1-d ``condition``
    is true, NumPy's ``compress``: the array library's (numpy_groupies selects groups so).

    >>> import infini_cupy as xp
    >>> x = xp.asarray([[1, 2], [3, 4]], device="cpu")
    >>> x.compress(xp.asarray([False, True], device="cpu"), axis=0)
    Array([[3, 4]], device='cpu')
    """
    if type(condition) is Array:
        check_same_device(self._b, condition._b)
        condition = condition._a
    return wrap(self._a.compress(condition, axis=axis), self._b)


def conj(self) -> Array:
    """``infini_cupy.conj(x)``, NumPy's ``x.conj()`` (also ``x.conjugate()``): xarray's
    ``cov`` and ``corr`` and SciPy's ``linalg.toeplitz`` call it.

    >>> import infini_cupy as xp
    >>> xp.asarray([1 + 2j, 3 - 1j], device="cpu").conj()
    Array([1.-2.j, 3.+1.j], device='cpu')
    """
    return _public["conj"](self)


def clip(self, min=None, max=None, out=None) -> Array:
    """``infini_cupy.clip(x, min, max)``, NumPy's ``x.clip()``: our kernel, the namespace's
    rules for the bounds (an integer ``x`` takes integer bounds); ``out=`` the elementwise
    functions' (NumPy's ufuncs': broadcast into, cast ``same_kind``).

    >>> import infini_cupy as xp
    >>> xp.asarray([-1.5, 0.5, 2.5], device="cpu").clip(0.0, 1.0)
    Array([0. , 0.5, 1. ], device='cpu')
    """
    return _public["clip"](self, min, max, out=out)


def argsort(self, axis=-1, kind=None, order=None, *, stable=None) -> Array:
    """``infini_cupy.argsort(x, axis=axis)``, NumPy's ``x.argsort()``: ``axis=None`` sorts
    the flattened array; ``kind="stable"`` (or ``"mergesort"``) or ``stable=True`` keeps
    equal elements in order. ``order`` (a structured dtype's fields) is refused.

    >>> import infini_cupy as xp
    >>> xp.asarray([3, 1, 2], device="cpu").argsort()
    Array([1, 2, 0], device='cpu')
    """
    if order is not None:
        raise ValueError("x.argsort: order= sorts a structured dtype's fields; an Array has none")
    if kind not in (None, "quicksort", "heapsort", "stable", "mergesort"):
        raise ValueError(f"x.argsort: unknown kind {kind!r}")
    stable = bool(stable) or kind in ("stable", "mergesort")
    x = self if axis is not None else reshape(self, -1)
    return _public["argsort"](x, axis=axis if axis is not None else -1, stable=stable)


def _reduce_into(name: str, x, axis, out, keepdims: bool, **kwargs):
    return _into(name, out, _public[name](x, axis=axis, keepdims=keepdims, **kwargs))


def _into(name: str, out, result):
    """``result``, or NumPy's ``out=``: written into ``out``, which is returned."""
    if out is None:
        return result
    if type(out) is not Array and not is_array(out):  # NumPy's kind: a TypeError
        raise TypeError(f"x.{name}(out=...): out must be an array; got {type_name(out)}")
    # NumPy's out= of these methods: the result's shape (never broadcast into a bigger out),
    # the result cast to out's dtype as NumPy casts it (not x[...] = v's promotion rule,
    # which refuses float64 into float32)
    if tuple(out.shape) != tuple(result.shape):
        raise ValueError(f"x.{name}(out=...): out has shape {tuple(out.shape)}, the result "
                         f"has shape {tuple(result.shape)}")
    # NumPy casts unsafely into out, but for std (its last step, sqrt, casts same_kind) and
    # argmax/argmin (whose out must hold an index: cast safely to intp)
    if ((name == "std" and not np.can_cast(result.dtype, out.dtype, "same_kind"))
            or (name in ("argmax", "argmin") and not np.can_cast(out.dtype, np.intp, "safe"))):
        raise TypeError(f"x.{name}(out=...): cannot cast the {result.dtype} result into out "
                        f"of dtype {out.dtype}, as NumPy's {name} refuses")
    if out.dtype != result.dtype:
        result = _public["astype"](result, out.dtype)
    out[...] = result
    return out


def item(self, *args):
    """One element as a Python scalar (from a GPU: a device-to-host copy of it): NumPy's
    forms, ``item()`` of a one-element array, ``item(i)`` by flat (C-order) index,
    ``item(i, j, ...)`` or ``item((i, j, ...))`` by position. Indexed here, as CuPy's
    ``item`` takes no index.

    >>> import infini_cupy as xp
    >>> x = xp.asarray([[1, 2], [3, 4]], device="cpu")
    >>> x.item(1, 0), x.item(-1)
    (3, 4)
    """
    a = self._a
    if not args:
        with device_context((a,)):  # read on the stream of its GPU (see get)
            return a.item()
    if len(args) == 1 and type(args[0]) is tuple:
        args = args[0]
    index = [_item_index(i) for i in args]
    if len(index) == 1:  # a flat index
        (i,) = index
        if not -a.size <= i < a.size:
            raise IndexError(f"index {i} is out of bounds for size {a.size}")
        index = np.unravel_index(i % a.size, a.shape)
    elif len(index) != a.ndim:
        raise ValueError("incorrect number of indices for array")
    else:
        for axis, (i, n) in enumerate(zip(index, a.shape)):
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    with device_context((a,)):
        return a[tuple(int(i) for i in index)].item()


def _item_index(i) -> int:
    if isinstance(i, (bool, np.bool_)):  # NumPy refuses booleans as item's indices
        raise TypeError("an integer is required")
    return operator.index(i)


def tolist(self):
    """The elements as nested Python lists (from a GPU: a device-to-host copy).

    >>> import infini_cupy as xp
    >>> xp.eye(2, dtype=xp.int8, device="cpu").tolist()
    [[1, 0], [0, 1]]
    """
    with device_context((self._a,)):  # read on the stream of its GPU (see get)
        return self._a.tolist()


def get(self) -> np.ndarray:
    """The data as a new NumPy array: CuPy's ``ndarray.get()`` (from a GPU a device-to-host
    copy, which you asked for). Dask takes an Array for a CuPy array by its type's name and
    calls it (``dask.array.utils.assert_eq``).

    >>> import infini_cupy as xp
    >>> xp.asarray([1.5, 2.0], device="emulator").get()
    array([1.5, 2. ])
    """
    if self._b == "cuda":
        # CuPy's get reads the current GPU's current stream, then copies on it from this
        # array's GPU (unordered after our kernels on this GPU's stream; a strided array's
        # copy refuses the other GPU's stream): under this GPU, its stream
        with self._a.device:
            return self._a.get()
    return np.array(self._a, order="C")  # new memory in C order, as CuPy's


def view(self, dtype=None, type=None) -> Array:
    """A new Array over the same memory; ``dtype`` reinterprets its bytes as NumPy's
    ``x.view(dtype)`` does (the same item size keeps the shape; another one rescales the last
    axis, which must then be contiguous). NumPy's ``type=`` (a subclass) is not taken.

    >>> import infini_cupy as xp
    >>> x = xp.asarray([1.0, -2.0], dtype=xp.float32, device="cpu")
    >>> x.view(xp.int32)
    Array([ 1065353216, -1073741824], dtype=int32, device='cpu')
    """
    if type is not None:
        raise TypeError("x.view(type=...): an Array is viewed as an Array, not as a subclass")
    if dtype is None:
        return wrap(self._a.view(), self._b)
    dt = np.dtype(dtype)
    if dt not in dtypes.DTYPE_TABLE:
        raise TypeError(f"x.view({dt}): {dt} is not one of the namespace's dtypes")
    return wrap(self._a.view(dt), self._b)


def transpose(self, *axes) -> Array:
    """``infini_cupy.permute_dims``: NumPy's ``x.transpose()`` (axes reversed),
    ``x.transpose((1, 0))`` and ``x.transpose(1, 0)``; a view (zarr's buffers call it).

    >>> import infini_cupy as xp
    >>> xp.ones((2, 3, 4), device="cpu").transpose(2, 0, 1).shape
    (4, 2, 3)
    """
    if not axes or axes == (None,):
        axes = tuple(range(self.ndim))[::-1]
    return _public["permute_dims"](self, _shape_argument(axes))


def squeeze(self, axis=None) -> Array:
    """``infini_cupy.squeeze``; ``axis=None`` drops every axis of length one, as NumPy's.

    >>> import infini_cupy as xp
    >>> xp.ones((1, 3, 1), device="cpu").squeeze().shape
    (3,)
    """
    if axis is None:
        axis = tuple(i for i, n in enumerate(self.shape) if n == 1)
    return _public["squeeze"](self, axis=axis)


def fill(self, value) -> None:
    """``x[...] = value``: every element set to the scalar ``value`` (one strided copy).

    >>> import infini_cupy as xp
    >>> x = xp.zeros(3, device="cpu")
    >>> x.fill(2.5)
    >>> x
    Array([2.5, 2.5, 2.5], device='cpu')
    """
    self[...] = value


def _base(self):
    """NumPy's ``x.base``: None where ``x`` owns its memory, else the array (an Array) or
    object whose memory it views.

    >>> import infini_cupy as xp
    >>> x = xp.asarray([1, 2, 3], device="cpu")
    >>> x.base is None
    True
    >>> x[1:].base
    Array([1, 2, 3], device='cpu')
    """
    base = self._a.base
    return wrap(base, self._b) if isinstance(base, type(self._a)) else base


def _nbytes(self) -> int:
    """Bytes of the elements (``size * itemsize``).

    >>> import infini_cupy as xp
    >>> xp.zeros((2, 3), dtype=xp.int16, device="cpu").nbytes
    12
    """
    return self._a.nbytes


def _itemsize(self) -> int:
    """Bytes of one element.

    >>> import infini_cupy as xp
    >>> xp.zeros(3, dtype=xp.complex64, device="cpu").itemsize
    8
    """
    return self._a.itemsize


def _strides(self) -> tuple:
    """NumPy's and CuPy's ``x.strides``: the bytes from one element to the next along each
    dim (SciPy's ``linalg.circulant`` reads them).

    >>> import infini_cupy as xp
    >>> x = xp.zeros((2, 3), dtype=xp.int16, device="cpu")
    >>> x.strides, x.T.strides
    ((6, 2), (2, 6))
    """
    return self._a.strides


METHODS = {"reshape": reshape, "ravel": ravel, "flatten": flatten, "round": round,
           "copy": copy, "astype": astype, "item": item, "tolist": tolist, "get": get, "all": all,
           "any": any, "sum": sum, "max": max, "min": min, "mean": mean, "std": std,
           "var": var, "prod": prod, "argmax": argmax, "argmin": argmin, "cumsum": cumsum,
           "nonzero": nonzero,
           "compress": compress, "view": view, "transpose": transpose, "squeeze": squeeze,
           "fill": fill, "conj": conj, "conjugate": conj, "clip": clip, "argsort": argsort,
           # copy.copy(x): new memory, as NumPy's and CuPy's (the default would share _a)
           "__copy__": copy}
PROPERTIES = {"nbytes": _nbytes, "base": _base, "itemsize": _itemsize, "strides": _strides}


def install(public: dict) -> None:
    """Set the methods and properties on :class:`~.array.Array`, calling ``public``'s functions."""
    _public.update(public)
    for name, method in METHODS.items():
        setattr(Array, name, method)
    for name, getter in PROPERTIES.items():
        setattr(Array, name, property(getter))  # the getter's docstring


__all__ = ["install", "METHODS", "PROPERTIES"]
