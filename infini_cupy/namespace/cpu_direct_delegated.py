"""Delegated functions whose answer on the ``cpu`` device is one NumPy call, made directly.

On ``cpu`` the full call of a function delegated to array_api_compat (the boundary's
wrapper, :mod:`.delegated`'s function, array_api_compat's, then NumPy's function) ends in one
method of the NumPy array: the reductions ``max``, ``min``, ``sum``, ``prod``, ``mean``,
``std``, ``var``, ``any``, ``all``, ``argmax``, ``argmin``; ``cumulative_sum`` and
``cumulative_prod`` (``cumsum``, ``cumprod``), ``sort`` and ``argsort`` ascending,
``nonzero``, ``take`` and ``searchsorted``; ``take_along_axis`` and ``diff`` end in NumPy's
function of that name. For ``cpu`` Arrays and arguments of the common kinds (an int, a tuple
of ints or None for an axis, a bool for ``keepdims``, None or a NumPy dtype for ``dtype``,
``cpu`` Arrays for indices and the values searched, an int or float ``correction``), each
function here makes that call itself with the arguments the full call passes (NumPy's
default ``dtype``, NumPy 2's: a ``sum`` of bools or of small integers in the default integer
of their kind, a ``mean`` of integers in float64) and wraps the result: 2-4 us less a call.

What the full call decides before NumPy's call is decided here alike, or left to it: an axis
of ``cumulative_*`` where ``x`` is 0-d or 1-d (None is 0), a stable ``sort`` of integers of
two bytes or more by NumPy's default sort (:func:`.delegated.sort`: the same array). Anything
else goes the full way and raises what it always raised: another device, a NumPy array, an
argument of another kind (NumPy's ``ddof``/``dtype`` of ``mean``, ``std`` and ``var``,
``out=``, ``include_initial``, a descending sort, ``prepend``/``append``, ``n`` < 1), a
``std``/``var`` with ``N - correction <= 0`` (the standard's NaN), ``cumulative_*`` of a
``x`` of more than one dimension without an axis, ``nonzero`` of a 0-d ``x``,
``searchsorted`` of an ``x1`` that is not 1-d. NumPy's own refusals (an axis out of range, a
tuple axis of ``argmax``, indices out of range or not integers) are the same call's either
way.

>>> import infini_cupy as xp
>>> x = xp.asarray([[3.0, 1.0], [2.0, 5.0]], device="cpu")
>>> xp.argmax(x, axis=1), xp.sum(x, axis=0)
(Array([0, 1], device='cpu'), Array([5., 6.], device='cpu'))
"""

from __future__ import annotations

import numpy as np

from .array import Array, wrap, wrap_result
from .cpu_direct import _CPU, _ints
from .delegated import stable_sort_needless


def _axis(axis) -> bool:
    """Whether ``axis`` is None, an int or a tuple of ints (a bool is none of them here)."""
    return axis is None or type(axis) is int or _ints(axis)


def _reducing(method):
    """The direct form of ``max``, ``min``, ``argmax`` or ``argmin`` (``method``, NumPy's
    array method that NumPy's function of the same name calls)."""

    def direct(full):
        def reduction(x, /, *, axis=None, keepdims=False):
            if type(x) is Array and x._b == _CPU and _axis(axis):
                if keepdims is False:
                    return wrap_result(method(x._a, axis), _CPU)
                if keepdims is True:
                    return wrap_result(method(x._a, axis, keepdims=True), _CPU)
            return full(x, axis=axis, keepdims=keepdims)

        return reduction

    return direct


max, min = _reducing(np.ndarray.max), _reducing(np.ndarray.min)  # noqa: A001
argmax, argmin = _reducing(np.ndarray.argmax), _reducing(np.ndarray.argmin)


def _truth(method):
    """The direct form of ``any`` or ``all`` (NumPy's method; ``out=``: the full way)."""

    def direct(full):
        def reduction(x, /, *, axis=None, keepdims=False, out=None):
            if type(x) is Array and x._b == _CPU and out is None and _axis(axis):
                if keepdims is False:
                    return wrap_result(method(x._a, axis), _CPU)
                if keepdims is True:
                    return wrap_result(method(x._a, axis, keepdims=True), _CPU)
            return full(x, axis=axis, keepdims=keepdims, out=out)

        return reduction

    return direct


any, all = _truth(np.ndarray.any), _truth(np.ndarray.all)  # noqa: A001


def _accumulating(method):
    """The direct form of ``sum`` or ``prod``: NumPy's method with ``dtype`` (None: NumPy's
    default, which array_api_compat keeps)."""

    def direct(full):
        def reduction(x, /, *, axis=None, dtype=None, keepdims=False):
            if type(x) is Array and x._b == _CPU and _axis(axis) and (
                    dtype is None or isinstance(dtype, np.dtype)):
                if keepdims is False:
                    return wrap_result(method(x._a, axis, dtype), _CPU)
                if keepdims is True:
                    return wrap_result(method(x._a, axis, dtype, keepdims=True), _CPU)
            return full(x, axis=axis, dtype=dtype, keepdims=keepdims)

        return reduction

    return direct


sum, prod = _accumulating(np.ndarray.sum), _accumulating(np.ndarray.prod)  # noqa: A001


def mean(full):
    def mean(x, /, *, axis=None, keepdims=False, dtype=None):
        if type(x) is Array and x._b == _CPU and dtype is None and _axis(axis):
            if keepdims is False:
                return wrap_result(x._a.mean(axis), _CPU)
            if keepdims is True:
                return wrap_result(x._a.mean(axis, keepdims=True), _CPU)
        return full(x, axis=axis, keepdims=keepdims, dtype=dtype)

    return mean


def _count(shape, axis):
    """N of a ``std``/``var`` along ``axis`` (None or an int in range), else None."""
    if axis is None:
        n = 1
        for length in shape:
            n *= length
        return n
    ndim = len(shape)
    return shape[axis] if type(axis) is int and -ndim <= axis < ndim else None


def _spreading(method):
    """The direct form of ``std`` or ``var``: NumPy's method with ``ddof=correction`` (what
    array_api_compat passes) where ``N - correction > 0``; the standard's NaN (delegated's
    ``spread_or_nan``), NumPy's keywords and other axes the full way."""

    def direct(full):
        def spread(x, /, *, axis=None, correction=0.0, keepdims=False, ddof=None, dtype=None):
            if type(x) is Array and x._b == _CPU and ddof is None and dtype is None and (
                    type(correction) is float or type(correction) is int) and (
                    keepdims is False or keepdims is True):
                a = x._a
                n = _count(a.shape, axis)
                if n and n - correction > 0:
                    if keepdims is False:
                        return wrap_result(method(a, axis, ddof=correction), _CPU)
                    return wrap_result(method(a, axis, ddof=correction, keepdims=True), _CPU)
            return full(x, axis=axis, correction=correction, keepdims=keepdims, ddof=ddof,
                        dtype=dtype)

        return spread

    return direct


std, var = _spreading(np.ndarray.std), _spreading(np.ndarray.var)


def _cumulative(method):
    """The direct form of ``cumulative_sum`` or ``cumulative_prod`` (NumPy's ``cumsum`` or
    ``cumprod`` method, as array_api_compat calls it): no axis is axis 0 of a 1-d ``x``, and
    of a 0-d one taken as one element (delegated's ``_cumulative``)."""

    def direct(full):
        def cumulative(x, /, *, axis=None, dtype=None, include_initial=False):
            if type(x) is Array and x._b == _CPU and include_initial is False and (
                    dtype is None or isinstance(dtype, np.dtype)):
                a = x._a
                if axis is None and a.ndim <= 1:
                    return wrap(method(a.reshape((1,)) if a.ndim == 0 else a, 0, dtype), _CPU)
                if type(axis) is int:
                    return wrap(method(a, axis, dtype), _CPU)
            return full(x, axis=axis, dtype=dtype, include_initial=include_initial)

        return cumulative

    return direct


cumulative_sum = _cumulative(np.ndarray.cumsum)
cumulative_prod = _cumulative(np.ndarray.cumprod)


def sort(full):
    def sort(x, /, *, axis=-1, descending=False, stable=True):
        if type(x) is Array and x._b == _CPU and descending is False and type(axis) is int \
                and (stable is True or stable is False):
            a = x._a
            # array_api_compat's kind; delegated's sort: NumPy's default where it gives the
            # stable sort's array
            kind = "stable" if stable and not stable_sort_needless(a.dtype) else None
            r = a.copy(order="K")  # np.sort: a copy in the array's order, sorted in place
            r.sort(axis, kind)
            return wrap(r, _CPU)
        return full(x, axis=axis, descending=descending, stable=stable)

    return sort


def argsort(full):
    def argsort(x, /, *, axis=-1, descending=False, stable=True):
        if type(x) is Array and x._b == _CPU and descending is False and type(axis) is int \
                and (stable is True or stable is False):
            return wrap(x._a.argsort(axis, "stable" if stable else None), _CPU)
        return full(x, axis=axis, descending=descending, stable=stable)

    return argsort


def nonzero(full):
    def nonzero(x, /):
        if type(x) is Array and x._b == _CPU and x._a.ndim:  # 0-d: compat's ValueError
            return tuple([wrap(r, _CPU) for r in x._a.nonzero()])
        return full(x)

    return nonzero


def _cpu_native(value):
    """The NumPy array of a ``cpu`` Array, else None."""
    return value._a if type(value) is Array and value._b == _CPU else None


def take(full):
    def take(x, indices, /, *, axis=None):
        if type(x) is Array and x._b == _CPU and (axis is None or type(axis) is int):
            i = _cpu_native(indices)
            if i is not None:
                return wrap_result(x._a.take(i, axis), _CPU)
        return full(x, indices, axis=axis)

    return take


def take_along_axis(full):
    def take_along_axis(x, indices, /, *, axis=-1):
        if type(x) is Array and x._b == _CPU and type(axis) is int:
            i = _cpu_native(indices)
            if i is not None:
                return wrap_result(np.take_along_axis(x._a, i, axis=axis), _CPU)
        return full(x, indices, axis=axis)

    return take_along_axis


def searchsorted(full):
    def searchsorted(x1, x2, /, *, side="left", sorter=None):
        if type(x1) is Array and x1._b == _CPU and sorter is None and type(side) is str:
            a = x1._a
            v = _cpu_native(x2)
            if v is not None and a.ndim == 1:  # (another ndim: delegated's ValueError)
                return wrap_result(a.searchsorted(v, side), _CPU)
        return full(x1, x2, side=side, sorter=sorter)

    return searchsorted


def diff(full):
    def diff(x, /, n=1, axis=-1, *, prepend=None, append=None):
        if type(x) is Array and x._b == _CPU and type(n) is int and 1 <= n <= x._a.size \
                and type(axis) is int and prepend is None and append is None:
            # (n=0 gives x itself back: the full way's Array; a larger n, the full way's
            # bound of it: NumPy loops n times)
            return wrap_result(np.diff(x._a, n, axis), _CPU)
        return full(x, n, axis, prepend=prepend, append=append)

    return diff


DIRECT = {"max": max, "min": min, "argmax": argmax, "argmin": argmin, "any": any, "all": all,
          "sum": sum, "prod": prod, "mean": mean, "std": std, "var": var,
          "cumulative_sum": cumulative_sum, "cumulative_prod": cumulative_prod, "sort": sort,
          "argsort": argsort, "nonzero": nonzero, "take": take,
          "take_along_axis": take_along_axis, "searchsorted": searchsorted, "diff": diff}

__all__ = ["DIRECT"]
