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
    """NumPy's ``transpose``: the axes reversed, or permuted by ``axes``; a view.

    >>> import numpy as np
    >>> transpose(np.zeros((2, 3, 4))).shape
    (4, 3, 2)
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

    >>> import numpy as np
    >>> pad(np.ones((1, 2), np.int8), ((0, 1), (1, 0)))
    array([[0, 1, 1],
           [0, 0, 0]], dtype=int8)
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
    """NumPy's ``einsum`` (subscripts form), computed by the array library.

    >>> import numpy as np
    >>> einsum("ij,j->i", np.eye(2), np.array([3.0, 4.0]))
    array([3., 4.])
    """
    if not isinstance(subscripts, str):
        # an Array there went to NumPy's einsum, which dispatched back here without end
        raise TypeError("einsum() takes the subscripts form, a str first (\"ij,jk->ik\"); got "
                        f"{type_name(subscripts)}")
    return _zero_d(_library_of(operands).einsum(subscripts, *operands, **kwargs))


def sliding_window_view(x, /, window_shape, axis=None, **kwargs):
    """NumPy's ``lib.stride_tricks.sliding_window_view``: every window of ``window_shape``
    along ``axis`` as a new trailing axis; a read-only view (the array library's).

    >>> import numpy as np
    >>> sliding_window_view(np.arange(4), 2)
    array([[0, 1],
           [1, 2],
           [2, 3]])
    """
    return _library(x).lib.stride_tricks.sliding_window_view(x, window_shape, axis, **kwargs)


def _numpy_function(name: str, doc: str, example: str):
    """A function of the array library (``numpy.<name>``, ``cupy.<name>``) on ``x``, its
    NumPy scalars returned as 0-d arrays."""
    def function(x, /, *args, **kwargs):
        return _zero_d(getattr(_library(x), name)(x, *args, **kwargs))

    call, result = example.split(" -> ")
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"{doc}\n\nNumPy's ``{name}``, computed by the array library.\n\n"
                        f">>> import numpy as np\n>>> a = np.array([[1.0, np.nan], [3.0, 4.0]])\n"
                        f">>> {call}\n{result}\n")
    return function


# name -> parameters: NumPy's, the array first (the standard's name ``x``)
_REDUCTION = "x, /, axis=None, dtype=None, keepdims=False"
_EXTREMUM = "x, /, axis=None, keepdims=False"
_CUMULATIVE = "x, /, axis=None, dtype=None"
_SPREAD = "x, /, axis=None, dtype=None, ddof=0, keepdims=False"
_QUANTILE = "x, /, q, axis=None, method='linear', keepdims=False"
_LIBRARY_FUNCTIONS = {  # name -> (parameters, summary, example -> its result)
    "cumsum": (_CUMULATIVE, "Cumulative sum along ``axis`` (None: of the flattened array).",
               "cumsum(np.array([1.0, 2.0, 4.0])) -> array([1., 3., 7.])"),
    "cumprod": (_CUMULATIVE, "Cumulative product along ``axis`` (None: of the flattened array).",
                "cumprod(np.array([1.0, 2.0, 4.0])) -> array([1., 2., 8.])"),
    "nansum": (_REDUCTION, "Sum treating NaN as zero.", "nansum(a, axis=0) -> array([4., 4.])"),
    "nanprod": (_REDUCTION, "Product treating NaN as one.",
                "nanprod(a, axis=0) -> array([3., 4.])"),
    "nanmean": (_REDUCTION, "Mean ignoring NaN (NaN where a slice is all NaN).",
                "nanmean(a, axis=0) -> array([2., 4.])"),
    "nanmax": (_EXTREMUM, "Maximum ignoring NaN (NaN where a slice is all NaN).",
               "nanmax(a, axis=0) -> array([3., 4.])"),
    "nanmin": (_EXTREMUM, "Minimum ignoring NaN (NaN where a slice is all NaN).",
               "nanmin(a, axis=0) -> array([1., 4.])"),
    "nanstd": (_SPREAD, "Standard deviation ignoring NaN, ``ddof`` degrees of freedom off.",
               "nanstd(a, axis=0) -> array([1., 0.])"),
    "nanvar": (_SPREAD, "Variance ignoring NaN, ``ddof`` degrees of freedom off.",
               "nanvar(a, axis=0) -> array([1., 0.])"),
    "nanargmax": (_EXTREMUM, "Index of the maximum ignoring NaN (ValueError for an all-NaN "
                  "slice).", "nanargmax(a, axis=0) -> array([1, 1])"),
    "nanargmin": (_EXTREMUM, "Index of the minimum ignoring NaN (ValueError for an all-NaN "
                  "slice).", "nanargmin(a, axis=0) -> array([0, 1])"),
    "nancumsum": (_CUMULATIVE, "Cumulative sum treating NaN as zero.",
                  "nancumsum(a, axis=0)[1] -> array([4., 4.])"),
    "nancumprod": (_CUMULATIVE, "Cumulative product treating NaN as one.",
                   "nancumprod(a, axis=0)[1] -> array([3., 4.])"),
    "median": (_EXTREMUM, "Median along ``axis``.",
               "median(np.array([1.0, 2.0, 4.0])) -> array(2.)"),
    "nanmedian": (_EXTREMUM, "Median ignoring NaN.", "nanmedian(a, axis=0) -> array([2., 4.])"),
    "quantile": (_QUANTILE, "The ``q``-th quantiles along ``axis`` (``q`` in [0, 1]; "
                 "``method=`` as NumPy's).", "quantile(np.array([1.0, 2.0, 4.0]), 0.5) -> array(2.)"),
    "nanquantile": (_QUANTILE, "The ``q``-th quantiles along ``axis``, ignoring NaN.",
                    "nanquantile(a, 0.5, axis=0) -> array([2., 4.])"),
}
for _name, (_params, _doc, _example) in _LIBRARY_FUNCTIONS.items():
    globals()[_name] = _numpy_function(_name, _doc, _example)
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
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
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


def quantile(x, /, q, axis=None, method="linear", keepdims=False):
    if is_cupy_array(x):
        return _quantile_as_numpy(require_cupy(), x, q, axis, method, keepdims)
    return _zero_d(np.quantile(x, q, axis=axis, method=method, keepdims=keepdims))


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
    function.__doc__ = numpy_function.__doc__
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
    """Arithmetic mean; ``dtype`` (NumPy's keyword) is the dtype it accumulates and returns in.

    >>> import numpy as np
    >>> mean(np.array([1, 2], np.int8), dtype=np.float32)
    array(1.5, dtype=float32)
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
    """Standard deviation; ``ddof`` is NumPy's name for ``correction``, ``dtype`` the dtype
    it computes in.

    >>> import numpy as np
    >>> std(np.array([1.0, 3.0]), ddof=1)
    array(1.41421356)
    """
    return _spread("std", x, correction, ddof, dtype, kwargs)


def var(x, /, *, correction=0.0, ddof=None, dtype=None, **kwargs):
    """Variance; ``ddof`` is NumPy's name for ``correction``, ``dtype`` the dtype it
    computes in.

    >>> import numpy as np
    >>> var(np.array([1.0, 3.0]), ddof=1)
    array(2.)
    """
    return _spread("var", x, correction, ddof, dtype, kwargs)


def squeeze(x, /, axis=None):
    """``x`` without the length-1 ``axis`` (an int or tuple); ``axis=None`` (NumPy's
    default) removes every length-1 axis. A view.

    >>> import numpy as np
    >>> squeeze(np.zeros((1, 3, 1))).shape
    (3,)
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
for _function, _what in ((empty_like, "uninitialized"), (zeros_like, "zeros"),
                         (ones_like, "ones"), (full_like, "``fill_value``")):
    _function.__doc__ = (f"An array of {_what} like ``x`` (its shape, dtype and device); "
                         "``shape`` (NumPy's keyword) gives another shape.")
del _function, _what
full_like.__doc__ += """

>>> import numpy as np
>>> full_like(np.zeros(2, np.int8), 7, shape=(1, 3))
array([[7, 7, 7]], dtype=int8)
"""


def round(x, /, decimals=0, *, out=None):
    """``x`` rounded to ``decimals`` decimal places, half to even (NumPy's ``round``);
    ``decimals=0`` is the standard's ``round``.

    Real floating ``x`` computes as NumPy does (``rint(x * 10**decimals) / 10**decimals``,
    in x's dtype) on our elementwise kernels; integers with ``decimals >= 0`` are a copy;
    other cases (negative decimals of integers, complex) are the array library's.

    >>> import numpy as np
    >>> round(np.array([0.125, -2.5, 1234.0], np.float32), -2)
    array([   0.,   -0., 1200.], dtype=float32)
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
    """NumPy's ``gradient``: central differences inside, one-sided at the ends, of ``f``
    along ``axis`` (None: every axis, a tuple of arrays), spacings ``varargs``; computed by
    the array library (xarray's ``differentiate`` calls it).

    >>> import numpy as np
    >>> gradient(np.array([1.0, 2.0, 4.0, 7.0]))
    array([1. , 1.5, 2.5, 3. ])
    """
    result = _library(f).gradient(f, *varargs, axis=axis, edge_order=edge_order)
    return tuple(result) if isinstance(result, (list, tuple)) else _zero_d(result)


def cross(x1, x2, /, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """NumPy's ``cross``: the cross product of vectors of 2 or 3 components along the given
    axes, computed by the array library (xarray's ``cross`` calls it; the standard's is
    ``linalg.cross``, 3 components along ``axis``).

    >>> import numpy as np
    >>> cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    array([0., 0., 1.])
    """
    return _library(x1).cross(x1, x2, axisa=axisa, axisb=axisb, axisc=axisc, axis=axis)


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
    reduction.__doc__ = (
        f"The array API's ``{name}``, run by the array's own library (NumPy for Arrays on "
        "``cpu`` and the emulator, CuPy on a GPU); ``out`` (NumPy's keyword, as xarray "
        "passes it): an array of the result's shape to write the result into, and return."
        f"\n\n>>> import numpy as np\n>>> {name}(np.array([[True, False], [True, True]]), "
        f"axis=1)\n{getattr(np, name)(np.array([[True, False], [True, True]]), axis=1)!r}\n")
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
