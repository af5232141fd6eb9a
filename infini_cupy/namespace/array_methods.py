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
    """``x`` with a new shape: ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``.

    A view when the strides allow, else a copy by our strided kernel (``order="C"``);
    ``order="F"`` or ``"A"`` is the array library's.

    Parameters
    ----------
    *shape : int or tuple of ints
        The new shape, one length -1 at most (inferred).
    order : {"C", "F", "A"}, optional
        The order in which the elements are read and placed (default ``"C"``).
    copy : bool, optional
        The standard's ``copy``: True always copies, False never does (ValueError where a
        copy is needed); ``order="C"`` alone.

    Returns
    -------
    Array
        The reshaped Array, on this Array's device.

    Raises
    ------
    ValueError
        A shape of another size, or ``copy`` with ``order`` other than ``"C"``.

    Examples
    --------
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
    """``x`` as one contiguous dimension, as NumPy's ``ravel``.

    A view when the elements are contiguous in that order, else a copy (code such as zarr's
    views the result as bytes).

    Parameters
    ----------
    order : {"C", "F", "A", "K"}, optional
        The order of the elements (default ``"C"``; others are the array library's).

    Returns
    -------
    Array
        A 1-d Array with unit stride, on this Array's device.

    Examples
    --------
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

    Parameters
    ----------
    order : {"C", "F", "A", "K"}, optional
        The order of the elements (default ``"C"``: our strided copy; others are the array
        library's).

    Returns
    -------
    Array
        A new 1-d Array on this Array's device.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.ones((2, 1), device="cpu").flatten().shape
    (2,)
    """
    if order == "C":
        return _public["reshape"](self, -1, copy=True)
    return wrap(self._a.flatten(order), self._b)


def round(self, decimals=0, out=None) -> Array:
    """``x`` rounded to ``decimals`` decimal places: ``infini_cupy.round(x, decimals)``.

    Parameters
    ----------
    decimals : int, optional
        The decimal places (default 0); negative: to the left of the point.
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        The result in this Array's dtype (``out`` when given).

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([1.26, -0.5], device="cpu").round(1)
    Array([ 1.3, -0.5], device='cpu')
    """
    return _public["round"](self, decimals, out=out)


def copy(self, order="C") -> Array:
    """A C-contiguous copy of ``x`` on its device (our strided copy).

    Parameters
    ----------
    order : {"C", "K", "A"}, optional
        Accepted for NumPy's callers; the copy is C-contiguous.

    Returns
    -------
    Array
        A new Array on this Array's device.

    Raises
    ------
    ValueError
        ``order="F"`` or another order.

    Examples
    --------
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
    """``x`` cast to ``dtype``: ``infini_cupy.astype(x, dtype, copy=copy, device=device)``.

    NumPy's ``casting`` rule is checked first.

    Parameters
    ----------
    dtype : dtype or str
        The target dtype.
    order : {"K", "C", "A"}, optional
        NumPy's keyword; the result is C-contiguous.
    casting : {"unsafe", "same_kind", "safe", "equiv", "no"}, optional
        NumPy's rule for which casts are allowed (default ``"unsafe"``).
    subok : bool, optional
        NumPy's keyword, without effect.
    copy : bool, optional
        False: ``x`` itself when it already has ``dtype`` (default True: a new Array).
    device : Device or str, optional
        The result's device (the standard's keyword).

    Returns
    -------
    Array
        The cast Array.

    Raises
    ------
    TypeError
        A cast that ``casting`` forbids (``numpy.can_cast`` says no).

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([1.7, -1.7], device="cpu").astype("int8")
    Array([ 1, -1], dtype=int8, device='cpu')
    """
    dtypes.check_astype_method(self.dtype, dtype, order, casting)
    return _public["astype"](self, dtype, copy=copy, device=device)


def all(self, axis=None, out=None, keepdims=False) -> Array:
    """Whether every element along ``axis`` is true: ``infini_cupy.all``.

    NumPy's testing (``assert_allclose`` with an Array tolerance) calls it on the
    comparison's result.

    Parameters
    ----------
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    out : Array, optional
        An Array of the result's shape to write the result into (cast to its dtype).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The bool result (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> (xp.arange(3, device="cpu") >= 0).all()
    Array(True, device='cpu')
    """
    return _reduce_into("all", self, axis, out, keepdims)


def any(self, axis=None, out=None, keepdims=False) -> Array:
    """Whether any element along ``axis`` is true: ``infini_cupy.any``.

    NumPy's method; ``out`` is NumPy's keyword.

    Parameters
    ----------
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    out : Array, optional
        An Array of the result's shape to write the result into (cast to its dtype).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The bool result (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> (xp.arange(3, device="cpu") > 1).any()
    Array(True, device='cpu')
    """
    return _reduce_into("any", self, axis, out, keepdims)


def sum(self, axis=None, dtype=None, out=None, keepdims=False) -> Array:
    """The sum along ``axis``: ``infini_cupy.sum``.

    SciPy's ``integrate.nsum`` counts with ``mask.sum(axis=-1)``.

    Parameters
    ----------
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    dtype : dtype, optional
        The dtype to accumulate and return in.
    out : Array, optional
        An Array of the result's shape to write the result into (cast to its dtype).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The result, on this Array's device (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([[True, False], [True, True]], device="cpu").sum(axis=-1)
    Array([1, 2], device='cpu')
    """
    return _reduce_into("sum", self, axis, out, keepdims, dtype=dtype)


def max(self, axis=None, out=None, keepdims=False) -> Array:
    """The maximum along ``axis``: ``infini_cupy.max``.

    numpy_groupies checks the range of group indices with ``x.min()`` and ``x.max()``.

    Parameters
    ----------
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    out : Array, optional
        An Array of the result's shape to write the result into (cast to its dtype).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The result, on this Array's device (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([[3, 1], [2, 5]], device="cpu").max(axis=0)
    Array([3, 5], device='cpu')
    """
    return _reduce_into("max", self, axis, out, keepdims)


def min(self, axis=None, out=None, keepdims=False) -> Array:
    """The minimum along ``axis``: ``infini_cupy.min``.

    NumPy's method; ``out`` is NumPy's keyword.

    Parameters
    ----------
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    out : Array, optional
        An Array of the result's shape to write the result into (cast to its dtype).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The result, on this Array's device (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([[3, 1], [2, 5]], device="cpu").min()
    Array(1, device='cpu')
    """
    return _reduce_into("min", self, axis, out, keepdims)


def mean(self, axis=None, dtype=None, out=None, keepdims=False) -> Array:
    """The arithmetic mean along ``axis``: ``infini_cupy.mean``.

    scikit-learn's NumPy-written functions (``r_regression``) center with ``X.mean(axis=0)``.

    Parameters
    ----------
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    dtype : dtype, optional
        The dtype to accumulate and return in.
    out : Array, optional
        An Array of the result's shape to write the result into (cast to its dtype).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The result, on this Array's device (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([[1.0, 2.0], [3.0, 5.0]], device="cpu").mean(axis=0)
    Array([2. , 3.5], device='cpu')
    """
    return _reduce_into("mean", self, axis, out, keepdims, dtype=dtype)


def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False) -> Array:
    """The standard deviation along ``axis``: ``infini_cupy.std``.

    NumPy's method: ``ddof`` is the namespace's ``correction``.

    Parameters
    ----------
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    dtype : dtype, optional
        The dtype to compute and return in.
    out : Array, optional
        An Array of the result's shape to write the result into (cast to its dtype).
    ddof : int or float, optional
        Delta degrees of freedom: the divisor is ``N - ddof`` (the standard's ``correction``).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The result, on this Array's device (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.
    TypeError
        ``out`` of a dtype the result does not cast to (same_kind).

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([1.0, 2.0, 4.0, 5.0], device="cpu").std(ddof=1) ** 2
    Array(3.33333333, device='cpu')
    """
    return _reduce_into("std", self, axis, out, keepdims, correction=ddof, dtype=dtype)


def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False) -> Array:
    """The variance along ``axis``: ``infini_cupy.var``.

    NumPy's method: ``ddof`` is the namespace's ``correction``.

    Parameters
    ----------
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    dtype : dtype, optional
        The dtype to compute and return in.
    out : Array, optional
        An Array of the result's shape to write the result into (cast to its dtype).
    ddof : int or float, optional
        Delta degrees of freedom: the divisor is ``N - ddof`` (the standard's ``correction``).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The result, on this Array's device (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([1.0, 2.0, 4.0, 5.0], device="cpu").var()
    Array(2.5, device='cpu')
    """
    return _reduce_into("var", self, axis, out, keepdims, correction=ddof, dtype=dtype)


def prod(self, axis=None, dtype=None, out=None, keepdims=False) -> Array:
    """The product along ``axis``: ``infini_cupy.prod``.

    NumPy's method; ``out`` is NumPy's keyword.

    Parameters
    ----------
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    dtype : dtype, optional
        The dtype to accumulate and return in.
    out : Array, optional
        An Array of the result's shape to write the result into (cast to its dtype).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The result, on this Array's device (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([[1, 2], [3, 4]], device="cpu").prod(axis=1)
    Array([ 2, 12], device='cpu')
    """
    return _reduce_into("prod", self, axis, out, keepdims, dtype=dtype)


def argmax(self, axis=None, out=None, *, keepdims=False) -> Array:
    """The index of the first maximum along ``axis``: ``infini_cupy.argmax``.

    Of the flattened array where ``axis`` is None, as NumPy's.

    Parameters
    ----------
    axis : int or None, optional
        The axis to reduce; None (default): of the flattened array.
    out : Array, optional
        An Array of the result's shape and an integer dtype to write the indices into.
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The indices, on this Array's device (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.
    TypeError
        ``out`` of a dtype that does not hold an index.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([[3, 1], [2, 5]], device="cpu").argmax(axis=1)
    Array([0, 1], device='cpu')
    """
    return _reduce_into("argmax", self, axis, out, keepdims)


def argmin(self, axis=None, out=None, *, keepdims=False) -> Array:
    """The index of the first minimum along ``axis``: ``infini_cupy.argmin``.

    Of the flattened array where ``axis`` is None, as NumPy's.

    Parameters
    ----------
    axis : int or None, optional
        The axis to reduce; None (default): of the flattened array.
    out : Array, optional
        An Array of the result's shape and an integer dtype to write the indices into.
    keepdims : bool, optional
        Keep the reduced axes, of length 1.

    Returns
    -------
    Array
        The indices, on this Array's device (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.
    TypeError
        ``out`` of a dtype that does not hold an index.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([[3, 1], [2, 5]], device="cpu").argmin()
    Array(1, device='cpu')
    """
    return _reduce_into("argmin", self, axis, out, keepdims)


def cumsum(self, axis=None, dtype=None, out=None) -> Array:
    """The cumulative sum along ``axis``: ``infini_cupy.cumulative_sum``.

    With ``axis`` None, of the flattened array, as NumPy's.

    Parameters
    ----------
    axis : int or None, optional
        The axis to accumulate along; None (default): the flattened array.
    dtype : dtype, optional
        The dtype to accumulate and return in.
    out : Array, optional
        An Array of the result's shape to write the result into (cast to its dtype).

    Returns
    -------
    Array
        The result, on this Array's device (``out`` when given).

    Raises
    ------
    ValueError
        ``out`` of another shape than the result's.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([[1, 2], [3, 4]], device="cpu").cumsum()
    Array([ 1,  3,  6, 10], device='cpu')
    """
    x = self if axis is not None else reshape(self, -1)
    return _into("cumsum", out, _public["cumulative_sum"](
        x, axis=axis if axis is not None else 0, dtype=dtype))


def nonzero(self) -> tuple:
    """The indices of the nonzero elements: ``infini_cupy.nonzero(x)``.

    Returns
    -------
    tuple of Array
        One Array of indices per axis.

    Raises
    ------
    ValueError
        A 0-d Array.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([0, 3, 0, 4], device="cpu").nonzero()
    (Array([1, 3], device='cpu'),)
    """
    return _public["nonzero"](self)


def compress(self, condition, axis=None) -> Array:
    """The slices along ``axis`` where ``condition`` is true, as NumPy's ``compress``.

    The array library's (numpy_groupies selects groups so).

    Parameters
    ----------
    condition : Array or array
        A 1-d bool array on this Array's device, at most as long as the axis.
    axis : int, optional
        The axis to select along; None (default): the flattened array.

    Returns
    -------
    Array
        A new Array of the selected slices.

    Raises
    ------
    ValueError
        ``condition`` on another device.

    Examples
    --------
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
    """The complex conjugate: ``infini_cupy.conj(x)``, NumPy's ``x.conj()``.

    Also ``x.conjugate()``: xarray's ``cov`` and ``corr`` and SciPy's ``linalg.toeplitz``
    call it.

    Returns
    -------
    Array
        A new Array on this Array's device.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([1 + 2j, 3 - 1j], device="cpu").conj()
    Array([1.-2.j, 3.+1.j], device='cpu')
    """
    return _public["conj"](self)


def clip(self, min=None, max=None, out=None) -> Array:
    """``x`` clamped to [``min``, ``max``]: ``infini_cupy.clip(x, min, max)``.

    NumPy's ``x.clip()``: our kernel, under the namespace's rules for the bounds (an integer
    ``x`` takes integer bounds); ``out=`` is the elementwise functions' (NumPy's ufuncs':
    broadcast into, cast ``same_kind``).

    Parameters
    ----------
    min, max : Array, Python scalar or None, optional
        The bounds; None: none on that side.
    out : Array, optional
        Where to write the result.

    Returns
    -------
    Array
        The result, on this Array's device (``out`` when given).

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([-1.5, 0.5, 2.5], device="cpu").clip(0.0, 1.0)
    Array([0. , 0.5, 1. ], device='cpu')
    """
    return _public["clip"](self, min, max, out=out)


def argsort(self, axis=-1, kind=None, order=None, *, stable=None) -> Array:
    """The indices that sort ``x`` along ``axis``: ``infini_cupy.argsort``.

    NumPy's ``x.argsort()``, the standard's ``stable`` keyword beside NumPy's ``kind``.

    Parameters
    ----------
    axis : int or None, optional
        The axis to sort along (default -1); None: the flattened array.
    kind : {None, "quicksort", "heapsort", "stable", "mergesort"}, optional
        ``"stable"`` or ``"mergesort"`` keeps equal elements in order.
    order : None
        A structured dtype's fields; refused.
    stable : bool, optional
        True keeps equal elements in order (the standard's keyword).

    Returns
    -------
    Array
        The indices, on this Array's device.

    Raises
    ------
    ValueError
        ``order``, or an unknown ``kind``.

    Examples
    --------
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
    """One element as a Python scalar (from a GPU: a device-to-host copy of it).

    NumPy's forms: ``item()`` of a one-element array, ``item(i)`` by flat (C-order) index,
    ``item(i, j, ...)`` or ``item((i, j, ...))`` by position. Indexed here, as CuPy's
    ``item`` takes no index.

    Parameters
    ----------
    *args : int or tuple of ints
        None, a flat index, or one index per axis.

    Returns
    -------
    bool, int, float or complex
        The element.

    Raises
    ------
    IndexError
        An index out of bounds.
    ValueError
        ``item()`` of an Array of more than one element, or a number of indices that is
        neither 1 nor ``x.ndim``.
    TypeError
        An index that is not an integer (a bool included).

    Examples
    --------
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

    Returns
    -------
    list or scalar
        Nested lists of Python scalars, ``x.ndim`` deep (a scalar for a 0-d Array).

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.eye(2, dtype=xp.int8, device="cpu").tolist()
    [[1, 0], [0, 1]]
    """
    with device_context((self._a,)):  # read on the stream of its GPU (see get)
        return self._a.tolist()


def get(self) -> np.ndarray:
    """The data as a new NumPy array: CuPy's ``ndarray.get()``.

    From a GPU a device-to-host copy, which you asked for. Dask takes an Array for a CuPy
    array by its type's name and calls it (``dask.array.utils.assert_eq``).

    Returns
    -------
    numpy.ndarray
        A new C-contiguous NumPy array.

    Examples
    --------
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
    """A new Array over the same memory, its bytes read as ``dtype``.

    As NumPy's ``x.view(dtype)``: the same item size keeps the shape; another one rescales the
    last axis, which must then be contiguous.

    Parameters
    ----------
    dtype : dtype, optional
        The dtype to read the bytes as, one of the namespace's (None: this Array's).
    type : None
        NumPy's subclass to view as; refused.

    Returns
    -------
    Array
        A view on this Array's device.

    Raises
    ------
    TypeError
        A dtype that is not the namespace's, or ``type``.
    ValueError
        Another item size with a last axis that is not contiguous or does not divide.

    Examples
    --------
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
    """``x`` with its axes permuted: ``infini_cupy.permute_dims``; a view.

    NumPy's ``x.transpose()`` (axes reversed), ``x.transpose((1, 0))`` and
    ``x.transpose(1, 0)`` (zarr's buffers call it).

    Parameters
    ----------
    *axes : int, tuple of ints or None
        A permutation of the axes; none or None: reversed.

    Returns
    -------
    Array
        A view of this Array.

    Raises
    ------
    ValueError
        Axes that are not a permutation of this Array's.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.ones((2, 3, 4), device="cpu").transpose(2, 0, 1).shape
    (4, 2, 3)
    """
    if not axes or axes == (None,):
        axes = tuple(range(self.ndim))[::-1]
    return _public["permute_dims"](self, _shape_argument(axes))


def squeeze(self, axis=None) -> Array:
    """``x`` without its length-1 axes: ``infini_cupy.squeeze``; a view.

    Parameters
    ----------
    axis : int, tuple of ints or None, optional
        The axes to remove, each of length 1; None (default): every length-1 axis, as NumPy's.

    Returns
    -------
    Array
        A view of this Array.

    Raises
    ------
    ValueError
        An axis whose length is not 1.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.ones((1, 3, 1), device="cpu").squeeze().shape
    (3,)
    """
    if axis is None:
        axis = tuple(i for i, n in enumerate(self.shape) if n == 1)
    return _public["squeeze"](self, axis=axis)


def fill(self, value) -> None:
    """Set every element to the scalar ``value``: ``x[...] = value`` (one strided copy).

    Parameters
    ----------
    value : bool, int, float or complex
        The value, converted to this Array's dtype as ``x[...] = value`` converts it.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.zeros(3, device="cpu")
    >>> x.fill(2.5)
    >>> x
    Array([2.5, 2.5, 2.5], device='cpu')
    """
    self[...] = value


def _base(self):
    """NumPy's ``x.base``: the array whose memory ``x`` views.

    None where ``x`` owns its memory, else that array (an Array) or object.

    Examples
    --------
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

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.zeros((2, 3), dtype=xp.int16, device="cpu").nbytes
    12
    """
    return self._a.nbytes


def _itemsize(self) -> int:
    """Bytes of one element.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.zeros(3, dtype=xp.complex64, device="cpu").itemsize
    8
    """
    return self._a.itemsize


def _strides(self) -> tuple:
    """The bytes from one element to the next along each dim.

    NumPy's and CuPy's ``x.strides``; SciPy's ``linalg.circulant`` reads them.

    Examples
    --------
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
