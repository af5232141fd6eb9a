"""The Array's operators: arithmetic, bitwise and comparison operators, their reflected and
in-place forms and ``@``, each the namespace function of the standard (our kernels for the
elementwise ones, ``matmul`` delegated).

In-place operators write into the Array's own memory (the elementwise functions' ``out=``),
so the result keeps the left operand's dtype and shape, as the standard requires: a result of
another shape raises ValueError, one that does not cast to the Array's dtype by ``same_kind``
TypeError (NumPy's rule for ``out=``); ``@=`` alike. Operands other than Arrays, native arrays of the same
device and Python or NumPy scalars give ``NotImplemented`` (Python then raises TypeError);
``==`` and ``!=``, where Python would answer by identity instead (``x == [1, 2]`` False),
ask the other operand as Python would and raise TypeError where it has no answer either.
"""

from __future__ import annotations

import numpy as np

from ..arrays import type_name
from ..elementwise.numpy_backend import check_out
from .array import Array, native_array_types

# operator -> the namespace function it is
BINARY = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "and": "bitwise_and",
    "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "bitwise_left_shift",
    "rshift": "bitwise_right_shift",
}
COMPARISONS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
               "eq": "equal", "ne": "not_equal"}
EQUALITY = {"eq": "==", "ne": "!="}  # the comparisons Python would answer by identity
UNARY = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}

_SCALARS = frozenset({bool, int, float, complex})


def _operand(other) -> bool:
    return (type(other) is Array or type(other) in _SCALARS
            or isinstance(other, (np.generic, *native_array_types())))


def _binary(function):
    def op(self, other):
        kind = type(other)  # _operand unrolled: the common operands first
        if kind is Array or kind in _SCALARS or _operand(other):
            return function(self, other)
        return NotImplemented

    def rop(self, other):
        kind = type(other)
        if kind in _SCALARS or _operand(other):
            return function(other, self)
        return NotImplemented

    def iop(self, other):
        if not _operand(other):
            return NotImplemented
        function(self, other, out=self)
        return self

    return op, rop, iop


def _equality(function, symbol: str, method: str):
    """``==`` or ``!=``: elementwise for the operands the other operators take; for others the
    other operand's own ``method`` (Dask's, xarray's), as Python asks it next, and TypeError
    where it has none: Python's last resort, identity, would make ``x == [1.0, 2.0]`` a
    plain False (array-api-strict raises TypeError too)."""

    def op(self, other):
        kind = type(other)
        if kind is Array or kind in _SCALARS or _operand(other):
            return function(self, other)
        answer = getattr(kind, method)(other, self)
        if answer is NotImplemented:
            raise TypeError(f"'{symbol}' compares an Array with arrays and Python scalars; got "
                            f"{type_name(other)} (infini_cupy.asarray makes it an array)")
        return answer

    return op


def _unary(function):
    def op(self):
        return function(self)

    return op


def install(public: dict) -> None:
    """Set the operators on :class:`~.array.Array` from the namespace's public functions."""
    for op, name in BINARY.items():
        forward, reflected, inplace = _binary(public[name])
        setattr(Array, f"__{op}__", forward)
        setattr(Array, f"__r{op}__", reflected)
        setattr(Array, f"__i{op}__", inplace)
    for op, name in COMPARISONS.items():
        if op in EQUALITY:
            forward = _equality(public[name], EQUALITY[op], f"__{op}__")
        else:
            forward = _binary(public[name])[0]
        setattr(Array, f"__{op}__", forward)
    for op, name in UNARY.items():
        setattr(Array, f"__{op}__", _unary(public[name]))
    matmul, astype = public["matmul"], public["astype"]
    forward, reflected, _ = _binary(matmul)

    def imatmul(self, other):
        # the other in-place operators' rules (their out=): the product's shape, then a
        # same_kind cast into x's dtype (float32 @= float64 computes in float64, as NumPy's)
        if not _operand(other):
            return NotImplemented
        result = matmul(self, other)
        if result.shape != self.shape:
            raise ValueError(f"matmul(): out has shape {self.shape}, the result has shape "
                             f"{result.shape}")
        check_out("matmul", self._a, result.dtype)
        self[...] = astype(result, self.dtype, copy=False)
        return self

    forward.__doc__ = _MATMUL_DOC.format(what="``self @ other``")
    reflected.__doc__ = _MATMUL_DOC.format(what="``other @ self``")
    imatmul.__doc__ = _MATMUL_DOC.format(what="``self @= other``") + (
        "\nThe product is written into this Array, as the other in-place operators write "
        "theirs: one of another shape raises ValueError, one of a dtype that does not cast "
        "to this Array's by ``same_kind`` TypeError.\n")
    Array.__matmul__, Array.__rmatmul__, Array.__imatmul__ = forward, reflected, imatmul
    Array.__hash__ = None  # __eq__ is elementwise


_MATMUL_DOC = """{what}: :func:`infini_cupy.matmul` (delegated to the array's library).

Examples
--------
>>> import infini_cupy as xp
>>> a = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="cpu")
>>> a @ a
Array([[ 7., 10.],
       [15., 22.]], device='cpu')
"""

# the Array's members are defined in array.py, which doctest's finder skips here
__test__ = {"Array.__matmul__": _MATMUL_DOC.format(what="``self @ other``")}
