"""Beyond the standard: the NumPy-compatible functions and keywords that generic code written
for NumPy and CuPy (xarray, SciPy, cubed, numpy_groupies) calls on an array's namespace.

Two tables, both compiled by :mod:`.boundary` like the standard's functions (Arrays in,
Arrays out, on the Arrays' device):

* ``FUNCTIONS``: names the standard does not have (``transpose``, ``pad``, ``einsum``,
  ``cumsum``, the ``nan*`` reductions, ...);
* ``KEYWORDS``: standard functions with NumPy's extra keywords (``mean(dtype=)``,
  ``std(ddof=)``, ``squeeze`` without ``axis``, ``full_like(shape=)``, ``round(decimals)``);
  each takes the standard's path when the extra keywords are left at their defaults.

Who computes: ``transpose`` is a view; ``pad`` with a constant and ``round`` with decimals
of a real floating array run on our kernels (strided copy, elementwise); the rest is the
array's library on its native arrays (NumPy for ``cpu`` and ``emulator``, CuPy on a GPU).
Every function here takes and returns native arrays.

>>> import numpy as np
>>> pad(np.arange(3), 1, constant_values=9)
array([9, 0, 1, 2, 9])
>>> round(np.array([1.234, 5.678]), 1)
array([1.2, 5.7])
"""

from __future__ import annotations

import builtins
import functools
import math
import operator
import sys

import numpy as np

from .. import dtypes
from ..arrays import empty_on_device_of, is_cupy_array, require_cupy, type_name
from ..elementwise import numpy_backend
from ..strided.copy import rearrange_
from . import data_movement, delegated, elementwise_functions
from .data_movement import _library  # numpy or cupy: the native array's library
from .delegated import _zero_d


def _library_of(arrays):
    for a in arrays:
        if is_cupy_array(a):
            return require_cupy()
    return np


# ---- functions the standard does not have

def transpose(x, /, axes=None):
    """NumPy's ``transpose``: ``x`` with its axes reversed, or permuted by ``axes``.

    The standard's ``permute_dims`` with NumPy's default order; a view, no copy.

    Parameters
    ----------
    x : Array or array
        Input array.
    axes : tuple of ints, optional
        A permutation of ``range(x.ndim)``; None (default): the axes reversed.

    Returns
    -------
    Array or array
        A view of ``x``.

    Raises
    ------
    ValueError
        ``axes`` that is not a permutation of ``x``'s axes.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.zeros((2, 3, 4), device="cpu")
    >>> xp.transpose(x).shape
    (4, 3, 2)
    >>> xp.transpose(x, (1, 0, 2)).shape
    (3, 2, 4)
    """
    if axes is None:
        axes = tuple(range(x.ndim - 1, -1, -1))
    return delegated.permute_dims(x, axes)


def _pad_widths(pad_width, ndim: int) -> list:
    """``pad_width`` as NumPy takes it (an int, a pair, or a pair per axis) as a pair per axis."""
    widths = np.asarray(pad_width)
    if widths.dtype.kind not in "iu":
        raise TypeError(f"pad: pad_width must be integers, got {pad_width!r}")
    try:
        pairs = np.broadcast_to(widths, (ndim, 2))
    except ValueError:
        raise ValueError(f"pad: pad_width {pad_width!r} does not fit an array of {ndim} dims "
                         "(an int, a (before, after) pair, or one pair per axis)") from None
    if (pairs < 0).any():
        raise ValueError(f"pad: pad widths must not be negative, got {pad_width!r}")
    return [(int(before), int(after)) for before, after in pairs]


def pad(x, /, pad_width, mode="constant", **kwargs):
    """NumPy's ``pad``: ``x`` with ``pad_width`` elements added before and after each axis.

    ``mode="constant"`` with a single ``constant_values`` (default 0) is our strided copy:
    the value broadcast into a new array, then ``x`` into its interior. Other modes and
    per-axis constants are the array library's ``pad`` (``numpy.pad``, ``cupy.pad``; on
    a GPU with NumPy's arguments, and NumPy's steps where CuPy's differ: :func:`_pad_as_numpy`).

    Parameters
    ----------
    x : Array or array
        Input array.
    pad_width : int, pair of ints, or one pair per axis
        The elements added before and after each axis, as NumPy's.
    mode : str or callable, optional
        NumPy's ``mode`` (default ``"constant"``).
    **kwargs
        NumPy's keywords of that mode (``constant_values``, ``stat_length``, ...).

    Returns
    -------
    Array or array
        A new array of ``x``'s dtype on ``x``'s device.

    Raises
    ------
    TypeError
        ``pad_width`` that is not integers.
    ValueError
        ``pad_width`` that does not fit ``x``'s dims, or a negative width.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.ones((1, 2), dtype=xp.int8, device="cpu")
    >>> xp.pad(x, ((0, 1), (1, 0)))
    Array([[0, 1, 1],
           [0, 0, 0]], dtype=int8, device='cpu')
    >>> xp.pad(xp.arange(3, device="cpu"), 1, constant_values=9)
    Array([9, 0, 1, 2, 9], device='cpu')
    """
    value = kwargs.get("constant_values", 0)
    if mode != "constant" or set(kwargs) - {"constant_values"} or np.ndim(value) != 0:
        if is_cupy_array(x):
            return _pad_as_numpy(require_cupy(), x, pad_width, mode, kwargs)
        return np.pad(x, pad_width, mode=mode, **kwargs)
    pairs = _pad_widths(pad_width, x.ndim)
    shape = tuple(n + before + after for n, (before, after) in zip(x.shape, pairs))
    out = empty_on_device_of(x, shape, x.dtype)
    # the value in x's dtype as NumPy's assignment converts it (1.5 -> 1, NaN into int raises)
    fill = _library(x).asarray(np.asarray(value, dtype=x.dtype)).reshape((1,) * x.ndim)
    rearrange_(out, _library(x).broadcast_to(fill, shape))
    if x.size:
        interior = tuple(slice(before, before + n) for n, (before, _) in zip(x.shape, pairs))
        rearrange_(out[(*interior, ...)], x)  # "...": a 0-d x's out[()] would be a scalar
    return out


# CuPy 14.2's pad (cupy/_padding/pad.py) refuses mode="median", reflects and wraps pads longer
# than the axis as NumPy 1 did, and reshapes where NumPy broadcasts (pad_width, stat_length,
# end_values, constant_values): these modes run NumPy 2's own helpers (slicing and the
# library's reductions, any array type) on the GPU, the rest CuPy's pad with NumPy's pairs.
_PAD_AS_NUMPY = {"median": {"stat_length"}, "reflect": {"reflect_type"},
                 "symmetric": {"reflect_type"}, "wrap": set()}


def _pad_as_numpy(lib, x, pad_width, mode, kwargs):
    """NumPy 2's ``pad`` of a GPU array: the arguments checked and broadcast as NumPy's,
    then CuPy's ``pad`` or, for the modes in :data:`_PAD_AS_NUMPY`, NumPy's own steps."""
    from numpy.lib import _arraypad_impl as impl  # NumPy's helpers: slicing, any array type

    if isinstance(pad_width, dict):  # NumPy 2.3's {axis: width}
        seq = [(0, 0)] * x.ndim
        for axis, width in pad_width.items():
            seq[axis] = (width, width) if isinstance(width, int) else tuple(width)
        pad_width = seq
    widths = np.asarray(pad_width)
    if widths.dtype.kind != "i":
        raise TypeError("`pad_width` must be of integral type.")
    pairs = impl._as_pairs(widths, x.ndim, as_index=True)
    kwargs = {key: (impl._as_pairs(value, x.ndim, as_index=key == "stat_length")
                    if key in ("stat_length", "end_values", "constant_values")
                    and value is not None and not callable(mode) else value)
              for key, value in kwargs.items()}
    if callable(mode) or mode not in _PAD_AS_NUMPY:
        return lib.pad(x, pairs, mode=mode, **kwargs)
    unsupported = set(kwargs) - _PAD_AS_NUMPY[mode]
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    padded = lib.pad(x, pairs, mode="empty")
    if x.size == 0:
        for axis, pair in enumerate(pairs):
            if x.shape[axis] == 0 and builtins.any(pair):
                raise ValueError(f"can't extend empty axis {axis} using modes other than "
                                 "'constant' or 'empty'")
        return padded
    interior = tuple(slice(before, before + n) for n, (before, _) in zip(x.shape, pairs))
    lengths = impl._as_pairs(kwargs.get("stat_length"), x.ndim, as_index=True)
    for axis, (left, right) in enumerate(pairs):
        roi = impl._view_roi(padded, interior, axis)
        if mode == "median":
            stats = impl._get_stats(roi, axis, (left, right), lengths[axis], lib.median)
            impl._set_pad_area(roi, axis, (left, right), stats)
        elif mode == "wrap":
            while left > 0 or right > 0:
                left, right = impl._set_wrap_both(roi, axis, (left, right), x.shape[axis])
        elif x.shape[axis] == 1 and (left > 0 or right > 0):  # NumPy: the edge, repeated
            edges = impl._get_edges(padded, axis, (left, right))
            impl._set_pad_area(padded, axis, (left, right), edges)
        else:
            while left > 0 or right > 0:
                left, right = impl._set_reflect_both(
                    roi, axis, (left, right), kwargs.get("reflect_type", "even"),
                    x.shape[axis], mode == "symmetric")
    return padded


def einsum(subscripts, /, *operands, **kwargs):
    """NumPy's ``einsum`` (subscripts form): Einstein summation over ``operands``.

    Computed by the array library (``numpy.einsum``, ``cupy.einsum``).

    Parameters
    ----------
    subscripts : str
        The subscripts (``"ij,jk->ik"``).
    *operands : Array or array
        The arrays, on one device.
    **kwargs
        NumPy's keywords (``dtype``, ``optimize``, ...).

    Returns
    -------
    Array or array
        The result on the operands' device (a 0-d array for a full contraction).

    Raises
    ------
    TypeError
        ``subscripts`` that is not a str (NumPy's operand-list form).

    Examples
    --------
    >>> import infini_cupy as xp
    >>> a = xp.eye(2, device="cpu")
    >>> b = xp.asarray([3.0, 4.0], device="cpu")
    >>> xp.einsum("ij,j->i", a, b)
    Array([3., 4.], device='cpu')
    >>> xp.einsum("i,i", b, b)
    Array(25., device='cpu')
    """
    if not isinstance(subscripts, str):
        # an Array there went to NumPy's einsum, which dispatched back here without end
        raise TypeError("einsum() takes the subscripts form, a str first (\"ij,jk->ik\"); got "
                        f"{type_name(subscripts)}")
    return _zero_d(_library_of(operands).einsum(subscripts, *operands, **kwargs))


def sliding_window_view(x, /, window_shape, axis=None, **kwargs):
    """NumPy's ``lib.stride_tricks.sliding_window_view``: every window of ``window_shape``
    along ``axis`` as a new trailing axis.

    A read-only view, the array library's (``xp.lib.stride_tricks.sliding_window_view``).

    Parameters
    ----------
    x : Array or array
        Input array.
    window_shape : int or tuple of ints
        The window's length along each axis of ``axis``.
    axis : int, tuple of ints or None, optional
        The axes to slide along; None (default): every axis.
    **kwargs
        NumPy's keywords (``subok``, ``writeable``).

    Returns
    -------
    Array or array
        A view of ``x`` with the window's axes last.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.arange(4, device="cpu")
    >>> xp.lib.stride_tricks.sliding_window_view(x, 2)
    Array([[0, 1],
           [1, 2],
           [2, 3]], device='cpu')
    """
    return _library(x).lib.stride_tricks.sliding_window_view(x, window_shape, axis, **kwargs)


# the numpydoc entries of the parameters of _LIBRARY_FUNCTIONS
_PARAMETER_DOCS = {
    "x": "x : Array or array\n    Input array.",
    "q": "q : float, sequence of floats, or Array\n    The quantiles, in [0, 1].",
    "axis": "axis : int, tuple of ints or None, optional\n    The axes to reduce; None "
            "(default): every axis.",
    "dtype": "dtype : dtype, optional\n    The dtype to accumulate and return in (None: "
             "NumPy's for ``x``'s dtype).",
    "ddof": "ddof : int or float, optional\n    Delta degrees of freedom: the divisor is "
            "``N - ddof``.",
    "method": "method : str, optional\n    NumPy's ``method`` of estimating a quantile "
              "(default ``'linear'``).",
    "keepdims": "keepdims : bool, optional\n    Keep the reduced axes, of length 1.",
}
_OUTSIDE = "\nRaises\n------\nValueError\n    A quantile outside [0, 1].\n"
_RAISES_DOCS = {"nanarg": "\nRaises\n------\nValueError\n    A slice that is all NaN.\n",
                # (the first key in the name: nanquantile's NaN over no values, quantile's error)
                "nanquantile": _OUTSIDE,
                "quantile": _OUTSIDE + "IndexError\n    No values along ``axis`` (NumPy's "
                                       "error, naming the shape).\n"}
_ONE_AXIS_DOC = ("axis : int or None, optional\n    The axis {}; None (default): of the "
                 "flattened array.")


def _numpy_function(name: str, parameters: str, doc: str, example: str):
    """A function of the array library (``numpy.<name>``, ``cupy.<name>``) on ``x``, its
    NumPy scalars returned as 0-d arrays; its numpydoc docstring from ``parameters`` (the
    notation of :mod:`.signatures`) and ``example`` (``"call -> result"`` lines, ``a`` the
    array below)."""
    def function(x, /, *args, **kwargs):
        return _zero_d(getattr(_library(x), name)(x, *args, **kwargs))

    entries = []
    for parameter in parameters.split(", "):
        key = parameter.split("=")[0]
        if key == "axis" and parameters == _CUMULATIVE:
            entries.append(_ONE_AXIS_DOC.format("to accumulate along"))
        elif key == "axis" and name.startswith("nanarg"):
            entries.append(_ONE_AXIS_DOC.format("to search along"))
        elif key in _PARAMETER_DOCS:
            entries.append(_PARAMETER_DOCS[key])
    returns = ("The indices, on ``x``'s device." if name.startswith("nanarg") else
               "The quantiles, on ``x``'s device, ``q``'s axes first." if "quantile" in name
               else "The result, on ``x``'s device (0-d where every axis is reduced).")
    shown = []
    for line in example.splitlines():  # "call -> result", then a result's further lines
        call, arrow, result = line.partition(" -> ")
        shown += [f">>> {call}", result] if arrow else [line]
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (
        f"{doc}\n\nNumPy's ``{name}``, computed by the array library.\n\n"
        f"Parameters\n----------\n" + "\n".join(entries) + "\n\n"
        f"Returns\n-------\nArray or array\n    {returns}\n"
        + next((text for key, text in _RAISES_DOCS.items() if key in name), "")
        + "\nExamples\n--------\n>>> import infini_cupy as xp\n"
        ">>> a = xp.asarray([[1.0, xp.nan], [3.0, 4.0]], device=\"cpu\")\n"
        + "\n".join(shown) + "\n")
    return function


# name -> parameters: NumPy's, the array first (the standard's name ``x``)
_REDUCTION = "x, /, axis=None, dtype=None, keepdims=False"
_EXTREMUM = "x, /, axis=None, keepdims=False"
_CUMULATIVE = "x, /, axis=None, dtype=None"
_SPREAD = "x, /, axis=None, dtype=None, ddof=0, keepdims=False"
_QUANTILE = "x, /, q, axis=None, method='linear', keepdims=False"
_LIBRARY_FUNCTIONS = {  # name -> (parameters, summary, example -> its result)
    "cumsum": (_CUMULATIVE, "Cumulative sum along ``axis`` (None: of the flattened array).",
               "xp.cumsum(a[1]) -> Array([3., 7.], device='cpu')\n"
               "xp.cumsum(a, axis=1) -> Array([[ 1., nan],\n       [ 3.,  7.]], device='cpu')"),
    "cumprod": (_CUMULATIVE, "Cumulative product along ``axis`` (None: of the flattened array).",
                "xp.cumprod(a, axis=0) -> Array([[ 1., nan],\n       [ 3., nan]], device='cpu')"),
    "nansum": (_REDUCTION, "Sum treating NaN as zero.",
               "xp.nansum(a, axis=0) -> Array([4., 4.], device='cpu')"),
    "nanprod": (_REDUCTION, "Product treating NaN as one.",
                "xp.nanprod(a, axis=0) -> Array([3., 4.], device='cpu')"),
    "nanmean": (_REDUCTION, "Mean ignoring NaN (NaN where a slice is all NaN).",
                "xp.nanmean(a, axis=0) -> Array([2., 4.], device='cpu')"),
    "nanmax": (_EXTREMUM, "Maximum ignoring NaN (NaN where a slice is all NaN).",
               "xp.nanmax(a, axis=0) -> Array([3., 4.], device='cpu')"),
    "nanmin": (_EXTREMUM, "Minimum ignoring NaN (NaN where a slice is all NaN).",
               "xp.nanmin(a, axis=0) -> Array([1., 4.], device='cpu')"),
    "nanstd": (_SPREAD, "Standard deviation ignoring NaN, ``ddof`` degrees of freedom off.",
               "xp.nanstd(a, axis=0) -> Array([1., 0.], device='cpu')"),
    "nanvar": (_SPREAD, "Variance ignoring NaN, ``ddof`` degrees of freedom off.",
               "xp.nanvar(a, axis=0) -> Array([1., 0.], device='cpu')"),
    "nanargmax": (_EXTREMUM, "Index of the maximum ignoring NaN.",
                  "xp.nanargmax(a, axis=0) -> Array([1, 1], device='cpu')"),
    "nanargmin": (_EXTREMUM, "Index of the minimum ignoring NaN.",
                  "xp.nanargmin(a, axis=0) -> Array([0, 1], device='cpu')"),
    "nancumsum": (_CUMULATIVE, "Cumulative sum treating NaN as zero.",
                  "xp.nancumsum(a, axis=0) -> Array([[1., 0.],\n       [4., 4.]], device='cpu')"),
    "nancumprod": (_CUMULATIVE, "Cumulative product treating NaN as one.",
                   "xp.nancumprod(a, axis=0) -> "
                   "Array([[1., 1.],\n       [3., 4.]], device='cpu')"),
    "median": (_EXTREMUM, "Median along ``axis``.",
               "xp.median(a[1]) -> Array(3.5, device='cpu')\n"
               "xp.median(a, axis=0) -> Array([ 2., nan], device='cpu')"),
    "nanmedian": (_EXTREMUM, "Median ignoring NaN.",
                  "xp.nanmedian(a, axis=0) -> Array([2., 4.], device='cpu')"),
    "quantile": (_QUANTILE, "The ``q``-th quantiles along ``axis`` (``q`` in [0, 1]; "
                 "``method=`` as NumPy's).",
                 "xp.quantile(a[1], 0.5) -> Array(3.5, device='cpu')\n"
                 "xp.quantile(a[1], [0.0, 0.25], method='lower') -> "
                 "Array([3., 3.], device='cpu')"),
    "nanquantile": (_QUANTILE, "The ``q``-th quantiles along ``axis``, ignoring NaN.",
                    "xp.nanquantile(a, 0.5, axis=0) -> Array([2., 4.], device='cpu')"),
}
for _name, (_params, _doc, _example) in _LIBRARY_FUNCTIONS.items():
    globals()[_name] = _numpy_function(_name, _params, _doc, _example)
del _name, _params, _doc, _example
_NANQUANTILE_DOC = globals()["nanquantile"].__doc__.replace(
    "computed by the array library.", "computed by the array library (on CuPy, which has no "
    "``nanquantile``, by slices as NumPy computes it).")
_QUANTILE_DOC = globals()["quantile"].__doc__.replace(
    "computed by the array library.", "computed by the array library (on CuPy, NumPy's "
    "steps on CuPy's sort, take and arithmetic).")


def _checked_quantiles(x, q):
    """``q`` on the host, refused as NumPy's ``quantile`` refuses it (and a complex ``x``)."""
    from numpy.lib import _function_base_impl as impl

    if x.dtype.kind == "c":
        raise TypeError("a must be an array of real numbers")
    q = np.asanyarray(q.get() if is_cupy_array(q) else q)
    if not impl._quantile_is_valid(q):
        raise ValueError("Quantiles must be in the range [0, 1]")
    if q.ndim > 2:
        raise ValueError("q must be a scalar or 1d")
    return q


def _quantile_as_numpy(lib, x, q, axis=None, method="linear", keepdims=False):
    """NumPy 2's ``quantile`` on a GPU array, from the library's sort, take and arithmetic
    (one kernel each: NumPy's roundings, no fused multiply-add); NumPy's index and weight
    rules run on the host, on ``q`` alone. CuPy 14.2's own (``cupy/_statistics/order.py``)
    has 5 of NumPy's 13 methods, answers a number where a slice holds NaN, takes ``q``
    outside [0, 1] beside one inside (reading past the slice) and ``q`` of one dim at most.

    >>> import numpy as np
    >>> _quantile_as_numpy(np, np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]]), 0.5, axis=1)
    array([nan,  5.])
    """
    from numpy.lib import _function_base_impl as impl  # NumPy's quantile rules

    weak_q = type(q) in (int, float)  # NumPy: a Python number promotes weakly
    q = _checked_quantiles(x, q)
    props = impl._QuantileMethods.get(method)
    if props is None:
        raise ValueError(f"{method!r} is not a valid method. Use one of: "
                         f"{impl._QuantileMethods.keys()}")
    axes = (tuple(range(x.ndim)) if axis is None
            else np.lib.array_utils.normalize_axis_tuple(axis, x.ndim))
    kept = tuple(x.shape[a] for a in range(x.ndim) if a not in axes)
    n = math.prod(x.shape[a] for a in axes)
    if n == 0:
        _refuse_no_values(x, axis)
    arr = lib.moveaxis(x, axes, tuple(range(len(axes)))).reshape((n, *kept))
    arr = lib.sort(arr, axis=0)  # NaN last, as NumPy's partition leaves it
    virtual = np.asanyarray(props["get_virtual_index"](n, q))
    if props["fix_gamma"] is None or (method == "linear" and virtual.dtype.kind in "iu"):
        result = lib.take(arr, lib.asarray(virtual), axis=0)
    else:
        below, above = impl._get_indexes(np.empty(0, x.dtype), virtual, n)
        gamma = impl._get_gamma(virtual, below, props)
        gamma = (float(gamma) if weak_q else
                 lib.asarray(gamma.reshape(virtual.shape + (1,) * len(kept))))
        below = lib.take(arr, lib.asarray(below % n), axis=0)  # NumPy's -1: the last
        above = lib.take(arr, lib.asarray(above % n), axis=0)
        diff = above - below
        lerp, from_above = below + diff * gamma, above - diff * (1 - gamma)  # NumPy's _lerp
        result = lib.where(lib.asarray(gamma >= 0.5), from_above, lerp)
    if x.dtype.kind == "f":  # NumPy: NaN where the slice holds one (the last, sorted)
        result = lib.where(lib.isnan(arr[-1]), result.dtype.type("nan"), result)
    if keepdims:
        result = result.reshape(virtual.shape + tuple(
            1 if a in axes else x.shape[a] for a in range(x.ndim)))
    return result


def _refuse_no_values(x, axis) -> None:
    """NumPy's IndexError for quantiles over no values, saying so (NumPy's own words are
    "index -1 is out of bounds for axis 0 with size 0")."""
    raise IndexError(f"quantile over no values: x of shape {tuple(x.shape)}, axis={axis!r} "
                     "(NumPy: index -1 is out of bounds for axis 0 with size 0)")


def quantile(x, /, q, axis=None, method="linear", keepdims=False):
    if is_cupy_array(x):
        return _quantile_as_numpy(require_cupy(), x, q, axis, method, keepdims)
    try:
        return _zero_d(np.quantile(x, q, axis=axis, method=method, keepdims=keepdims))
    except np.exceptions.AxisError:
        raise
    except IndexError:
        if 0 in getattr(x, "shape", ()):
            _refuse_no_values(x, axis)
        raise


quantile.__doc__ = _QUANTILE_DOC


def _nanarg(name: str):
    """``nanargmax``/``nanargmin`` on a GPU array as NumPy computes them: NaN as -inf (inf),
    ValueError for an all-NaN slice. CuPy 14.2's (``cupy/_sorting/search.py``) answer -1
    there and pass NaN over (NumPy's ``nanargmax([nan, -inf])`` is 0)."""
    numpy_function = globals()[name]

    def function(x, /, axis=None, keepdims=False):
        if not is_cupy_array(x) or x.dtype.kind not in "fc":
            return numpy_function(x, axis=axis, keepdims=keepdims)
        lib = require_cupy()
        nan = lib.isnan(x)
        if nan.size and bool(nan.all(axis=axis).any()):
            raise ValueError("All-NaN slice encountered")
        fill = -np.inf if name == "nanargmax" else np.inf
        return getattr(lib, name[3:])(lib.where(nan, fill, x), axis=axis, keepdims=keepdims)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = numpy_function.__doc__.replace(
        "computed by the array library.", "computed by the array library (on CuPy, its "
        f"``{name[3:]}`` with NaN as {'-inf' if name == 'nanargmax' else 'inf'}, as NumPy "
        "computes it).")
    return function


nanargmax, nanargmin = _nanarg("nanargmax"), _nanarg("nanargmin")


def _nanquantile_by_slices(lib, x, q, axis=None, method="linear", keepdims=False):
    """NumPy's ``nanquantile`` for an array library that has none (CuPy 14.2), NumPy's own
    way: the library's ``quantile`` of each 1-d slice along ``axis`` without its NaNs (NaN
    where a slice is all NaN); the whole array at once where it holds no NaN.

    >>> import numpy as np
    >>> a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]])
    >>> _nanquantile_by_slices(np, a, 0.5, axis=1)
    array([2., 5.])
    """
    quantile = lib.quantile if lib is np else functools.partial(_quantile_as_numpy, lib)
    if x.dtype.kind not in "fc" or not bool(lib.isnan(x).any()):
        return quantile(x, q, axis=axis, method=method, keepdims=keepdims)
    axes = tuple(range(x.ndim)) if axis is None else tuple(
        operator.index(a) % x.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))
    kept_axes = [a for a in range(x.ndim) if a not in axes]
    rows = lib.moveaxis(x, axes, tuple(range(x.ndim - len(axes), x.ndim)))
    rows = rows.reshape(-1, builtins.max(1, int(np.prod([x.shape[a] for a in axes]))))
    q_shape = tuple(getattr(q, "shape", np.shape(q)))
    results = []
    for row in rows:
        present = row[~lib.isnan(row)]
        results.append(quantile(present, q, method=method) if present.size else
                       lib.full(q_shape, np.nan, x.dtype))
    # the first slice's dtype, as NumPy's apply_along_axis gives (an all-NaN slice: x's)
    out = lib.stack(results, axis=-1).astype(results[0].dtype, copy=False).reshape(q_shape + tuple(x.shape[a] for a in kept_axes))
    if keepdims:
        out = out.reshape(q_shape + tuple(1 if a in axes else x.shape[a] for a in range(x.ndim)))
    return out


def nanquantile(x, /, q, axis=None, method="linear", keepdims=False):
    lib = _library(x)
    if hasattr(lib, "nanquantile"):
        return _zero_d(lib.nanquantile(x, q, axis=axis, method=method, keepdims=keepdims))
    _checked_quantiles(x, q)  # NumPy's checks, also where no slice reaches quantile
    return _zero_d(_nanquantile_by_slices(lib, x, q, axis, method, keepdims))


nanquantile.__doc__ = _NANQUANTILE_DOC


# ---- the standard's functions with NumPy's extra keywords

def mean(x, /, *, dtype=None, **kwargs):
    """Arithmetic mean of ``x`` along ``axis``.

    The array API's ``mean`` (delegated to the array's library), with NumPy's ``dtype``
    keyword: given, the library's ``mean`` (``numpy.mean``, ``cupy.mean``) accumulates and
    returns in ``dtype``.

    Parameters
    ----------
    x : Array or array
        Input array.
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    keepdims : bool, optional
        Keep the reduced axes, of length 1.
    dtype : dtype, optional
        The dtype to accumulate and return in (NumPy's keyword).

    Returns
    -------
    Array or array
        The means, on ``x``'s device (0-d where every axis is reduced).

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.asarray([[1.0, 2.0], [3.0, 5.0]], device="cpu")
    >>> xp.mean(x, axis=0)
    Array([2. , 3.5], device='cpu')
    >>> xp.mean(xp.asarray([1, 2], dtype=xp.int8, device="cpu"), dtype=xp.float32)
    Array(1.5, dtype=float32, device='cpu')
    """
    # only the keywords given go on (the boundary leaves defaults out): NumPy is slower
    # given explicit defaults
    if dtype is None:
        return delegated.mean(x, **kwargs)
    return _zero_d(_library(x).mean(x, dtype=dtype, **kwargs))


def _correction(what: str, correction, ddof):
    if ddof is None:
        return correction
    if correction != 0 and correction != ddof:
        raise ValueError(f"{what}: correction={correction!r} and ddof={ddof!r} disagree; "
                         "give one of them (ddof is NumPy's name for correction)")
    return ddof


def _spread(name, x, correction, ddof, dtype, kwargs):
    """std or var: the standard's call (delegated) unless ``dtype`` is NumPy's keyword."""
    correction = _correction(name, correction, ddof)
    if dtype is None:
        return getattr(delegated, name)(x, correction=correction, **kwargs)
    function = getattr(_library(x), name)
    return _zero_d(delegated.spread_or_nan(
        lambda c: _zero_d(function(x, ddof=c, dtype=dtype, **kwargs)), x.shape,
        kwargs.get("axis"), correction))


def std(x, /, *, correction=0.0, ddof=None, dtype=None, **kwargs):
    """Standard deviation of ``x`` along ``axis``, ``correction`` degrees of freedom off.

    The array API's ``std`` (delegated to the array's library), with NumPy's keywords:
    ``ddof``, NumPy's name for ``correction``, and ``dtype``, given which the library's
    ``std`` (``numpy.std``, ``cupy.std``) computes in that dtype.

    Parameters
    ----------
    x : Array or array
        Input array of a floating-point dtype (or any with ``dtype``).
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    correction : int or float, optional
        Delta degrees of freedom: the divisor is ``N - correction`` (default 0).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.
    ddof : int or float, optional
        NumPy's name for ``correction``.
    dtype : dtype, optional
        The dtype to compute and return in (NumPy's keyword).

    Returns
    -------
    Array or array
        The result, on ``x``'s device (NaN where ``N - correction <= 0``).

    Raises
    ------
    ValueError
        ``correction`` and ``ddof`` that disagree.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.asarray([1.0, 3.0], device="cpu")
    >>> xp.std(x)
    Array(1., device='cpu')
    >>> xp.std(x, ddof=1)
    Array(1.41421356, device='cpu')
    """
    return _spread("std", x, correction, ddof, dtype, kwargs)


def var(x, /, *, correction=0.0, ddof=None, dtype=None, **kwargs):
    """Variance of ``x`` along ``axis``, ``correction`` degrees of freedom off.

    The array API's ``var`` (delegated to the array's library), with NumPy's keywords:
    ``ddof``, NumPy's name for ``correction``, and ``dtype``, given which the library's
    ``var`` (``numpy.var``, ``cupy.var``) computes in that dtype.

    Parameters
    ----------
    x : Array or array
        Input array of a floating-point dtype (or any with ``dtype``).
    axis : int, tuple of ints or None, optional
        The axes to reduce; None (default): every axis.
    correction : int or float, optional
        Delta degrees of freedom: the divisor is ``N - correction`` (default 0).
    keepdims : bool, optional
        Keep the reduced axes, of length 1.
    ddof : int or float, optional
        NumPy's name for ``correction``.
    dtype : dtype, optional
        The dtype to compute and return in (NumPy's keyword).

    Returns
    -------
    Array or array
        The result, on ``x``'s device (NaN where ``N - correction <= 0``).

    Raises
    ------
    ValueError
        ``correction`` and ``ddof`` that disagree.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.asarray([1.0, 3.0], device="cpu")
    >>> xp.var(x)
    Array(1., device='cpu')
    >>> xp.var(x, ddof=1)
    Array(2., device='cpu')
    """
    return _spread("var", x, correction, ddof, dtype, kwargs)


def squeeze(x, /, axis=None):
    """``x`` without its length-1 axes ``axis``; a view.

    The array API's ``squeeze``, with NumPy's default ``axis=None``: every length-1 axis.

    Parameters
    ----------
    x : Array or array
        Input array.
    axis : int, tuple of ints or None, optional
        The axes to remove, each of length 1; None (default): every length-1 axis.

    Returns
    -------
    Array or array
        A view of ``x``.

    Raises
    ------
    ValueError
        An axis of ``axis`` whose length is not 1.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.zeros((1, 3, 1), device="cpu")
    >>> xp.squeeze(x).shape
    (3,)
    >>> xp.squeeze(x, axis=0).shape
    (3, 1)
    """
    if axis is None:
        axis = tuple(i for i, n in enumerate(x.shape) if n == 1)
    return delegated.squeeze(x, axis)


def _like(name: str):
    standard = getattr(delegated, name)
    fresh = getattr(delegated, name.removesuffix("_like"))

    def like(x, /, *args, dtype=None, device=None, shape=None, **kwargs):
        if shape is None:
            return standard(x, *args, dtype=dtype, device=device, **kwargs)
        # a new array of another shape on x's device (or ``device``), x's dtype by default
        where = device if device is not None else delegated.array_api_compat.device(x)
        return fresh(shape, *args, dtype=x.dtype if dtype is None else dtype, device=where,
                     **kwargs)

    like.__name__ = like.__qualname__ = name
    return like


empty_like, zeros_like, ones_like, full_like = (
    _like(n) for n in ("empty_like", "zeros_like", "ones_like", "full_like"))
_FILL_VALUE_DOC = "fill_value : bool, int, float or complex\n    The value of every element.\n"
for _function, _what in ((empty_like, "uninitialized"), (zeros_like, "zeros"),
                         (ones_like, "ones"), (full_like, "``fill_value``")):
    _function.__doc__ = f"""An array of {_what} like ``x``: its shape, dtype and device.

The array API's ``{_function.__name__}``, with NumPy's ``shape`` keyword for another shape.

Parameters
----------
x : Array or array
    The array whose shape, dtype and device the result takes.
{_FILL_VALUE_DOC if _function is full_like else ""}dtype : dtype, optional
    The result's dtype (None: ``x``'s).
device : Device or str, optional
    The result's device (None: ``x``'s).
shape : int or tuple of ints, optional
    The result's shape (None: ``x``'s).

Returns
-------
Array or array
    A new array of the same kind as ``x``.
"""
del _function, _what, _FILL_VALUE_DOC
full_like.__doc__ += """
Examples
--------
>>> import infini_cupy as xp
>>> x = xp.zeros(2, dtype=xp.int8, device="cpu")
>>> xp.full_like(x, 7)
Array([7, 7], dtype=int8, device='cpu')
>>> xp.full_like(x, 7, shape=(1, 3))
Array([[7, 7, 7]], dtype=int8, device='cpu')
"""


def round(x, /, decimals=0, *, out=None):
    """``x`` rounded to ``decimals`` decimal places, half to even (NumPy's ``round``).

    ``decimals=0`` is the standard's ``round``. Real floating ``x`` computes as NumPy does
    (``rint(x * 10**decimals) / 10**decimals``, in x's dtype) on our elementwise kernels;
    integers with ``decimals >= 0`` are a copy; other cases (negative decimals of integers,
    complex) are the array library's.

    Parameters
    ----------
    x : Array or array
        Input array.
    decimals : int, optional
        The decimal places (default 0); negative: to the left of the point.
    out : Array or array, optional
        Where to write the result: ``x``'s shape, a dtype ``x``'s casts to (same_kind).

    Returns
    -------
    Array or array
        The result in ``x``'s dtype, on ``x``'s device (``out`` when given).

    Raises
    ------
    OverflowError
        ``|decimals|`` beyond float64's exponent range, for a floating ``x``.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.asarray([0.125, -2.5, 1234.0], dtype=xp.float32, device="cpu")
    >>> xp.round(x, -2)
    Array([   0.,   -0., 1200.], dtype=float32, device='cpu')
    >>> xp.round(xp.asarray([1.25, -0.35], device="cpu"), 1)
    Array([ 1.2, -0.4], device='cpu')
    """
    decimals = operator.index(decimals)
    if decimals == 0:
        return elementwise_functions.round(x, out=out)
    if out is not None:
        # out= of every elementwise function, checked here in round()'s name: the steps
        # below would broadcast into a bigger out, cast into any dtype, or name divide()
        numpy_backend.check_out_shape("round", (x,), out)
        numpy_backend.check_out("round", out, x.dtype)
    kind = x.dtype.kind
    if kind in "iu" and decimals > 0:
        result = data_movement.astype(x, x.dtype, copy=True)
    elif kind == "f" or dtypes.is_bfloat16(x.dtype):
        if builtins.abs(decimals) > sys.float_info.max_10_exp:
            # refused before 10**decimals, a Python int that 2**70 digits never finish making
            raise OverflowError(f"round(): decimals={decimals} of {x.dtype} x: 10**decimals is "
                                f"beyond float64 (|decimals| <= {sys.float_info.max_10_exp})")
        scale = float(10 ** builtins.abs(decimals))
        scaled = (elementwise_functions.multiply(x, scale) if decimals > 0
                  else elementwise_functions.divide(x, scale))
        rounded = elementwise_functions.round(scaled, out=scaled)
        undo = elementwise_functions.divide if decimals > 0 else elementwise_functions.multiply
        return undo(rounded, scale, out=out)
    else:
        return _library(x).round(x, decimals, out=out)
    if out is None:
        return result
    out[...] = result
    return out


def gradient(f, /, *varargs, axis=None, edge_order=1):
    """NumPy's ``gradient``: central differences of ``f`` inside, one-sided at the ends.

    Computed by the array library (``numpy.gradient``, ``cupy.gradient``); xarray's
    ``differentiate`` calls it.

    Parameters
    ----------
    f : Array or array
        The sampled values.
    *varargs : scalar or Array, optional
        The spacings, one for every axis or one per axis of ``axis`` (default 1).
    axis : int, tuple of ints or None, optional
        The axes to differentiate along; None (default): every axis.
    edge_order : {1, 2}, optional
        The order of the one-sided differences at the ends.

    Returns
    -------
    Array or array, or tuple of them
        The derivative along one axis, or a tuple of them, one per axis.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> f = xp.asarray([1.0, 2.0, 4.0, 7.0], device="cpu")
    >>> xp.gradient(f)
    Array([1. , 1.5, 2.5, 3. ], device='cpu')
    >>> xp.gradient(f, 2.0)
    Array([0.5 , 0.75, 1.25, 1.5 ], device='cpu')
    """
    result = _library(f).gradient(f, *varargs, axis=axis, edge_order=edge_order)
    return tuple(result) if isinstance(result, (list, tuple)) else _zero_d(result)


def cross(x1, x2, /, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """NumPy's ``cross``: the cross product of vectors of 2 or 3 components.

    Computed by the array library (``numpy.cross``, ``cupy.cross``); xarray's ``cross`` calls
    it. The standard's is ``linalg.cross``, 3 components along ``axis``.

    Parameters
    ----------
    x1, x2 : Array or array
        The vectors, along ``axisa`` and ``axisb``; the other axes broadcast.
    axisa, axisb : int, optional
        The axis of the vectors of ``x1`` and ``x2`` (default -1).
    axisc : int, optional
        The axis of the result's vectors (default -1).
    axis : int, optional
        Overrides the three axes.

    Returns
    -------
    Array or array
        The cross products (for 2-component vectors, their z components).

    Raises
    ------
    ValueError
        Vectors of other than 2 or 3 components.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x1 = xp.asarray([1.0, 0.0, 0.0], device="cpu")
    >>> x2 = xp.asarray([0.0, 1.0, 0.0], device="cpu")
    >>> xp.cross(x1, x2)
    Array([0., 0., 1.], device='cpu')
    """
    return _library(x1).cross(x1, x2, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


_TRUTH_WORDS = {"all": "every element", "any": "any element"}
_TRUTH_EXAMPLES = {"all": ("[False,  True]", "False"),  # of x below: along axis 1, in all
                   "any": ("[ True,  True]", "True")}


def _truth_reduction(name: str):
    """``all``/``any`` with NumPy's ``out=`` (xarray passes ``out=None``; ``np.any`` of a
    DataArray): the standard's reduction, written into ``out`` of its shape."""
    standard = getattr(delegated, name)

    def reduction(x, /, *, axis=None, keepdims=False, out=None):
        result = standard(x, axis=axis, keepdims=keepdims)
        if out is None:
            return result
        if tuple(out.shape) != tuple(result.shape):
            raise ValueError(f"{name}(out=...): out has shape {tuple(out.shape)}, the result "
                             f"has shape {tuple(result.shape)}")
        out[...] = result
        return out

    reduction.__name__ = reduction.__qualname__ = name
    reduction.__doc__ = f"""Whether {_TRUTH_WORDS[name]} of ``x`` along ``axis`` is true.

The array API's ``{name}``, run by the array's own library (NumPy for Arrays on ``cpu`` and
the emulator, CuPy on a GPU), with NumPy's ``out`` keyword, as xarray passes it.

Parameters
----------
x : Array or array
    Input array; nonzero elements (and NaN) are true.
axis : int, tuple of ints or None, optional
    The axes to reduce; None (default): every axis.
keepdims : bool, optional
    Keep the reduced axes, of length 1.
out : Array or array, optional
    An array of the result's shape to write the result into.

Returns
-------
Array or array
    The bool result, on ``x``'s device (``out`` when given).

Raises
------
ValueError
    ``out`` of another shape than the result's.

Examples
--------
>>> import infini_cupy as xp
>>> x = xp.asarray([[True, False], [True, True]], device="cpu")
>>> xp.{name}(x, axis=1)
Array({_TRUTH_EXAMPLES[name][0]}, device='cpu')
>>> xp.{name}(x)
Array({_TRUTH_EXAMPLES[name][1]}, device='cpu')
"""
    return reduction


all, any = _truth_reduction("all"), _truth_reduction("any")  # noqa: A001 - the standard's names


# name -> (parameter list, array parameters), in the notation of :mod:`.signatures`
FUNCTIONS = {
    "transpose": ("x, /, axes=None", "x"),
    "pad": ("x, /, pad_width, mode='constant', **kwargs", "x"),
    "einsum": ("subscripts, /, *operands, **kwargs", "*operands"),
    "sliding_window_view": ("x, /, window_shape, axis=None, **kwargs", "x"),
    "gradient": ("f, /, *varargs, axis=None, edge_order=1", "f *varargs"),
    "cross": ("x1, x2, /, axisa=-1, axisb=-1, axisc=-1, axis=None", "x1 x2"),
    **{name: (entry[0], "x q" if entry[0] == _QUANTILE else "x")  # q may be an Array
       for name, entry in _LIBRARY_FUNCTIONS.items()},
}
KEYWORDS = {
    "mean": ("x, /, *, axis=None, keepdims=False, dtype=None", "x"),
    "std": ("x, /, *, axis=None, correction=0.0, keepdims=False, ddof=None, dtype=None", "x"),
    "var": ("x, /, *, axis=None, correction=0.0, keepdims=False, ddof=None, dtype=None", "x"),
    "squeeze": ("x, /, axis=None", "x"),
    "empty_like": ("x, /, *, dtype=None, device=None, shape=None", "x"),
    "zeros_like": ("x, /, *, dtype=None, device=None, shape=None", "x"),
    "ones_like": ("x, /, *, dtype=None, device=None, shape=None", "x"),
    "full_like": ("x, /, fill_value, *, dtype=None, device=None, shape=None", "x"),
    "round": ("x, /, decimals=0, *, out=None", "x out"),
    "all": ("x, /, *, axis=None, keepdims=False, out=None", "x out"),
    "any": ("x, /, *, axis=None, keepdims=False, out=None", "x out"),
}

# in the submodule lib.stride_tricks, as NumPy and CuPy have them (xarray's rolling windows)
STRIDE_TRICKS = ["sliding_window_view"]

__all__ = sorted([*(n for n in FUNCTIONS if n not in STRIDE_TRICKS), "lib"])
