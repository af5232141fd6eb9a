"""The dtypes the namespace has beyond the standard: ``float16`` and ``bfloat16`` as namespace
attributes, and the data-type functions (``result_type``, ``isdtype``, ``finfo``) answering
for bfloat16, which array_api_compat does not know, ``where`` promoting it as they do, and
the products (``matmul``, ``vecdot``, ``tensordot``) and ``linalg`` functions of bfloat16
computed in float32 and rounded once to it.

Both are extensions: the standard has neither, and ``__array_namespace_info__().dtypes()``
lists them only when asked (``kind="extended"``, or by name). Our kernels take them wherever
they take float32 and compute in float32. bfloat16 is ml_dtypes' (an optional dependency,
``pip install 'infini_cupy[bfloat16]'``); without ml_dtypes ``xp.bfloat16`` raises an
AttributeError saying what to install (``infini_cupy.__getattr__``).

>>> import infini_cupy as xp
>>> xp.float16
dtype('float16')
>>> xp.result_type(xp.bfloat16, xp.float16)  # doctest: +SKIP
dtype('float32')
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..arrays import is_array, is_operand, type_name
from ..elementwise.trace import is_traced
from . import data_movement, delegated

float16 = np.dtype(np.float16)
if dtypes.BFLOAT16 is not None:
    bfloat16 = dtypes.BFLOAT16

EXTENSION_DTYPE_NAMES = [d.name for d in dtypes.EXTENSION_DTYPES]  # float16, bfloat16


def _dtype_of(a):
    """``a``'s dtype for a dtype, a scalar type (``ml_dtypes.bfloat16``) or an array; None for
    anything else (Python scalars)."""
    if isinstance(a, np.dtype):
        return a
    if isinstance(a, type) and issubclass(a, np.generic):
        return np.dtype(a)
    dt = getattr(a, "dtype", None)
    return dt if isinstance(dt, np.dtype) else None


def _involves_bfloat16(args) -> bool:
    return dtypes.BFLOAT16 is not None and any(dtypes.is_bfloat16(_dtype_of(a)) for a in args)


def _holds_bfloat16(value) -> bool:
    """Whether ``value`` (an array, a NumPy or Python scalar) is of bfloat16: a dtype of
    kind 'V' first, so arrays of the other dtypes pay one attribute read."""
    dt = getattr(value, "dtype", None)
    return dt is not None and dt.kind == "V" and dtypes.is_bfloat16(dt)


def result_type(*arrays_and_dtypes):
    """The standard's ``result_type`` (array_api_compat's), and with bfloat16 the promotion
    our elementwise functions apply: as float16's, bfloat16 with float16 giving float32.

    Arrays count by their dtypes alone, on any device: a NumPy scalar (a 0-d array once
    through the boundary) beside GPU arrays is a dtype, as CuPy's ``result_type`` takes it.

    Parameters
    ----------
    *arrays_and_dtypes : Array, array, dtype or Python scalar
        At least one. A dtype may be given by its name; Python scalars (bool, int, float,
        complex) are weak: beside an array or a dtype of their kind they take its dtype.

    Returns
    -------
    dtype
        The promoted dtype.

    Raises
    ------
    TypeError
        An argument of another kind (None, a list), or a dtype that arrays of every device
        do not hold.
    ValueError
        No argument.
    """
    dtypes_and_scalars = [_checked_part("result_type", a) for a in arrays_and_dtypes]
    if _involves_bfloat16(dtypes_and_scalars):
        return dtypes.result_type(*dtypes_and_scalars)
    return delegated.result_type(*dtypes_and_scalars)


def _checked_part(what: str, value):
    """A dtype of ``value`` (an array, a dtype, a scalar type: one that arrays of every
    device hold), or a Python scalar or scalar type as it is; TypeError naming ``what`` for
    anything else (NumPy reads None as float64 and a str as a dtype, ``"U1"`` included)."""
    dt = value if isinstance(value, str) else _dtype_of(value)  # a str: a dtype's name
    if dt is not None:
        return dtypes.check_held(what, dt)
    if type(value) in dtypes.PYTHON_SCALAR_TYPES or value in dtypes.PYTHON_SCALAR_TYPES:
        return value
    raise TypeError(f"{what}: takes arrays, dtypes and Python scalars, got "
                    f"{type(value).__name__} {value!r}")


def can_cast(from_, to, /):
    """The standard's ``can_cast``, of dtypes (or an array's) that arrays of every device hold
    (TypeError for others: NumPy answers for strings and objects).

    Parameters
    ----------
    from_ : dtype, Array or array
        The dtype to cast from (or its name), or an array of it.
    to : dtype
        The dtype to cast to (or its name).

    Returns
    -------
    bool
        Whether ``from_`` casts to ``to`` by the promotion rules: NumPy's "safe" casting,
        which also lets integers and bools cast to floating point.

    Raises
    ------
    TypeError
        A dtype that arrays of every device do not hold, or a ``from_`` of another kind.
    """
    return delegated.can_cast(_checked_part("can_cast", from_), dtypes.check_held("can_cast", to))


def where(condition, x1=None, x2=None, /):
    """The standard's ``where``; with bfloat16, ``result_type``'s promotion on every device:
    CuPy's ``where`` has no bfloat16 loop (it would select in float32), so bfloat16 values
    are selected as their bits (uint16). ``where(condition)`` alone is ``nonzero(condition)``,
    as NumPy's.

    Parameters
    ----------
    condition : Array or array
        True (nonzero) where to take ``x1``'s value, false where ``x2``'s.
    x1, x2 : Array, array, Python or NumPy scalar, optional
        The values where ``condition`` is true, and where it is false; ``condition``, ``x1``
        and ``x2`` broadcast together. Neither given (an extension): ``nonzero(condition)``.

    Returns
    -------
    Array or array
        The values chosen, of ``result_type(x1, x2)``, on the arrays' device (without
        ``x1`` and ``x2``: ``nonzero``'s tuple).

    Raises
    ------
    TypeError
        A ``condition`` that is no array, or an ``x1`` or ``x2`` neither an array nor a
        scalar.
    ValueError
        One of ``x1`` and ``x2`` without the other, shapes that do not broadcast, or arrays
        on different devices.
    """
    if x1 is None or x2 is None:
        if x1 is not None or x2 is not None:
            raise ValueError("where: give both x1 and x2, or neither (where(condition) is "
                             "nonzero(condition))")
        return delegated.nonzero(condition)
    if is_traced(condition, x1, x2):
        return delegated.where(condition, x1, x2)
    _check_where_operands(condition, x1, x2)
    if not (_holds_bfloat16(x1) or _holds_bfloat16(x2)):
        return delegated.where(condition, x1, x2)
    dtype = result_type(x1, x2)
    arrays = [v for v in (condition, x1, x2) if is_array(v)]
    library = data_movement._library(arrays[0]) if arrays else np
    as_bits = dtypes.is_bfloat16(dtype)

    def operand(v):
        if not is_array(v):  # a scalar: a 0-d array of the dtype, on the arrays' device
            v = np.asarray(v, dtype=dtype)
            return library.asarray(v.view(np.uint16) if as_bits else v)
        if v.dtype != dtype:
            v = data_movement.astype(v, dtype)
        return v.view(np.uint16) if as_bits else v

    selected = delegated.where(condition, operand(x1), operand(x2))
    return selected.view(dtype) if as_bits else selected


def _check_where_operands(condition, x1, x2) -> None:
    """TypeError unless ``condition`` is an array and ``x1``, ``x2`` arrays or scalars (the
    standard's signature): NumPy would make a string or object array of a ``str`` or an
    object and take a list, where CuPy refuses both, so no device takes them."""
    if not (is_array(condition) or isinstance(condition, np.generic)):
        raise TypeError(f"where(): condition must be an array, got {type_name(condition)}")
    for name, value in (("x1", x1), ("x2", x2)):
        if not is_operand(value):
            raise TypeError(f"where(): {name} must be an array or a Python scalar (bool, int, "
                            f"float, complex), got {type_name(value)}")


_BFLOAT16_KINDS = frozenset({"real floating", "numeric"})


def isdtype(dtype, kind):
    """The standard's ``isdtype``; bfloat16 is of kinds ``"real floating"`` and ``"numeric"``.

    Parameters
    ----------
    dtype : dtype
        The dtype to test (of an array: its ``.dtype``).
    kind : str, dtype or tuple of them
        A dtype, a kind (``"bool"``, ``"signed integer"``, ``"unsigned integer"``,
        ``"integral"``, ``"real floating"``, ``"complex floating"``, ``"numeric"``), or a
        tuple of them, any of which may match.

    Returns
    -------
    bool
        Whether ``dtype`` is ``kind`` or of it.

    Raises
    ------
    TypeError
        A ``dtype`` that is no dtype (an array, a name).
    ValueError
        An unknown kind.
    """
    if _involves_bfloat16((dtype,)):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        others = tuple(k for k in kinds if not dtypes.is_bfloat16(_dtype_of(k)))
        if others:  # the kinds checked as for any dtype (NumPy's own refuses bfloat16)
            delegated.isdtype(np.dtype(np.float16), others if isinstance(kind, tuple) else kind)
        return any(k in _BFLOAT16_KINDS if isinstance(k, str) else dtypes.is_bfloat16(k)
                   for k in kinds)
    return delegated.isdtype(dtype, kind)


def finfo(type, /):  # noqa: A002  the standard's parameter name
    """The standard's ``finfo``; for bfloat16 (a dtype or an array of it), ml_dtypes'.

    Parameters
    ----------
    type : dtype, Array or array
        A floating-point dtype (or its name), or an array of one; a complex dtype stands for
        its real dtype.

    Returns
    -------
    finfo_object
        A named tuple of ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal`` (Python
        numbers) and ``dtype`` (the real dtype).

    Raises
    ------
    TypeError
        None, a Python scalar or a sequence.
    ValueError
        A dtype that is not floating-point.
    """
    if _involves_bfloat16((type,)):
        info = dtypes.ml_dtypes.finfo(dtypes.BFLOAT16)  # its fields bfloat16 scalars
        return delegated.finfo_object(int(info.bits), float(info.eps), float(info.max),
                                      float(info.min), float(info.smallest_normal),
                                      dtypes.BFLOAT16)
    return delegated.finfo(type)


def _in_float32(function):
    """``function`` (a product of matrices or vectors, a ``linalg`` function) with bfloat16
    among its array arguments: ``result_type``'s dtype on every device, computed by the
    library in float32 (bfloat16 -> float32 is exact) and rounded once to bfloat16 by our
    cast, as CuPy's cuBLAS path computes products (``gemmEx`` with ``CUBLAS_COMPUTE_32F``).
    NumPy's loop from ml_dtypes returned float32 for products, NumPy's and CuPy's ``linalg``
    float64 (a dtype of kind 'V' is no float to them), and CuPy 14.2 has no bfloat16 batched
    matmul (its integer kernel); with a dtype other than bfloat16 for result (float16:
    float32), the operands in that dtype. Results of another dtype than the one computed in
    (``eig``'s complex64, ``matrix_rank``'s integers) are returned as they are. Other dtypes:
    ``function`` itself."""

    def in_float32(*args, **kwargs):
        arrays = [a for a in args if is_array(a)]
        if not any(_holds_bfloat16(a) for a in arrays) or is_traced(*args):
            return function(*args, **kwargs)
        dtype = result_type(*arrays)
        computed = np.dtype(np.float32) if dtypes.is_bfloat16(dtype) else dtype
        args = [data_movement.astype(a, computed, copy=False) if is_array(a) else a
                for a in args]
        result = function(*args, **kwargs)

        def rounded(r):
            return data_movement.astype(r, dtype, copy=False) if r.dtype == computed else r

        if isinstance(result, tuple):  # eigh, qr, slogdet, svd: their named tuples kept
            values = [rounded(r) for r in result]
            return type(result)._make(values) if hasattr(result, "_make") else tuple(values)
        return rounded(result)

    in_float32.__name__ = in_float32.__qualname__ = function.__name__
    in_float32.__doc__ = function.__doc__
    return in_float32


matmul = _in_float32(delegated.matmul)
vecdot = _in_float32(delegated.vecdot)
tensordot = _in_float32(delegated.tensordot)
# the linalg functions that compute in floating point (the others, diagonal, trace, cross,
# outer, take bfloat16 as any dtype)
LINALG = {name: _in_float32(getattr(delegated.linalg, name)) for name in (
    "cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matrix_norm",
    "matrix_power", "matrix_rank", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
    "vector_norm")}

__all__ = EXTENSION_DTYPE_NAMES + ["can_cast", "finfo", "isdtype", "matmul", "result_type",
                                   "tensordot", "vecdot", "where"]
