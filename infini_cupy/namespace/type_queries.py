"""The data-type functions (``result_type``, ``isdtype``, ``can_cast``, ``finfo``) remembered by
what decides their answers: each argument's dtype (an Array's, an array's, or a dtype itself)
or a Python scalar's type, never a value, a shape or a device.

Generic array-API code asks them at nearly every call: SciPy's and scikit-learn's helpers
check and promote dtypes before they compute. Through the boundary each costs 2-6 us; a
remembered answer costs a few tenths of one. A key seen for the first time goes the full way,
and so does any argument that is not one of those kinds (a NumPy scalar type, a string, a
list of kinds; ``isdtype``'s kinds may be names or dtypes, alone or in a tuple). An error is
never remembered: the full way raises it again at every call. The answers are immutable
(dtypes, bools, ``finfo``'s named tuple), so they can be shared.

>>> import infini_cupy as xp
>>> x = xp.asarray([1, 2], dtype=xp.int8)
>>> xp.result_type(x, 1.0), xp.result_type(x, 1.0) is xp.result_type(x, 1.0)
(dtype('float64'), True)
"""

from __future__ import annotations

import numpy as np

from ..arrays import is_array
from .array import Array

MEMO_LIMIT = 4096  # keys per function: dtypes and kinds are few, this only bounds the odd use


class _PythonScalar:
    """A Python scalar type's part of a key, equal to itself alone: a dtype compares equal to
    ``float`` (and to ``"float"``), which would let a weak scalar and a dtype share a key."""

    __slots__ = ("kind",)

    def __init__(self, kind):
        self.kind = kind

    def __repr__(self):
        return f"<Python {self.kind.__name__}>"


_WEAK = {kind: _PythonScalar(kind) for kind in (bool, int, float, complex)}


def _part(value):
    """``value``'s part of a key: a dtype, or a Python scalar's (``_WEAK``); None for
    anything else."""
    kind = type(value)
    if kind is Array:
        return value.dtype
    weak = _WEAK.get(kind)
    if weak is not None:
        return weak
    if isinstance(value, np.dtype):
        return value
    if is_array(value):
        return value.dtype
    return None


def _remember(memo: dict, key, answer):
    if len(memo) >= MEMO_LIMIT:
        memo.clear()
    memo[key] = answer
    return answer


def _result_type(full):
    memo = {}

    def result_type(*arrays_and_dtypes):
        key = tuple(map(_part, arrays_and_dtypes))
        for part in key:  # by identity: float64 == None is True (NumPy reads None as float64)
            if part is None:
                return full(*arrays_and_dtypes)
        answer = memo.get(key)
        return answer if answer is not None else _remember(memo, key,
                                                           full(*arrays_and_dtypes))

    return result_type


def _isdtype(full):
    memo = {}

    def isdtype(dtype, kind):
        # kinds by name ("real floating") or by dtype, alone or in a tuple; a dtype compares
        # equal to its name ("float32"), so where dtypes are among the kinds the key holds
        # the kinds' types too
        if not isinstance(dtype, np.dtype):
            return full(dtype, kind)
        kind_type = type(kind)
        if kind_type is str or (kind_type is tuple and all(type(k) is str for k in kind)):
            key = (dtype, kind)
        elif isinstance(kind, np.dtype):
            key = (dtype, kind, kind_type)
        elif kind_type is tuple and all(type(k) is str or isinstance(k, np.dtype)
                                        for k in kind):
            key = (dtype, kind, tuple(map(type, kind)))
        else:
            return full(dtype, kind)
        answer = memo.get(key)
        return answer if answer is not None else _remember(memo, key, full(dtype, kind))

    return isdtype


def _can_cast(full):
    memo = {}

    def can_cast(from_, to, /):
        key = (_part(from_), to)
        if key[0] is None or not isinstance(to, np.dtype):
            return full(from_, to)
        answer = memo.get(key)
        return answer if answer is not None else _remember(memo, key, full(from_, to))

    return can_cast


def _finfo(full):
    memo = {}

    def finfo(type, /):  # noqa: A002  the standard's parameter name
        key = _part(type)
        if not isinstance(key, np.dtype):
            return full(type)
        answer = memo.get(key)
        return answer if answer is not None else _remember(memo, key, full(type))

    return finfo


_REMEMBERING = {"result_type": _result_type, "isdtype": _isdtype, "can_cast": _can_cast,
                "finfo": _finfo}


def remembering(name: str, full):
    """The public ``name`` answering from its memo, the boundary's ``full`` function behind it
    (its name, docstring and signature kept)."""
    function = _REMEMBERING[name](full)
    function.__name__ = function.__qualname__ = name
    function.__module__ = full.__module__
    function.__doc__ = full.__doc__
    function.__wrapped__ = full  # inspect.signature reports the standard's
    return function


REMEMBERED = tuple(_REMEMBERING)
