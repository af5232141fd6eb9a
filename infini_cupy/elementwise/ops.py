"""The op table: every elementwise function of the array API standard (2024.12), one row each.

One table drives the namespace functions (``namespace.elementwise_functions``), the kernel
variants (``elementwise.kernels``) and the tests: a row names the function, its arity, the dtype group
its inputs must belong to, how the result dtype follows from the promoted input dtype, the
C++ functor in ``kernels_src/elementwise.cu`` and the NumPy function used as the oracle.
The dtypes a row's loops take and give are :mod:`.resolution`'s (``loop_dtypes``,
``result_of_loop``), which reads this table.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import dtypes


@dataclass(frozen=True)
class ElementwiseOp:
    """One elementwise function."""

    name: str  # the array API name
    arity: int  # number of array arguments (clip: x, min, max)
    group: str  # the standard's dtype group of its inputs (a dtypes.CATEGORY_GROUPS key);
    #             what a call accepts is NumPy's (elementwise.resolution), a wider set
    result: str  # the standard's result: "same" (the promoted dtype), "bool", "real"
    #              (complex -> its real dtype), "float" (true division)
    functor: str  # C++ functor in kernels_src/elementwise.cu
    numpy_name: str  # the NumPy function with the same meaning (oracle and numpy backend)
    summary: str  # one line for __doc__


def _op(name, arity, group, result, summary, numpy_name=None, functor=None):
    functor = functor or "ic::Op" + "".join(p.capitalize() for p in name.split("_"))
    return ElementwiseOp(name, arity, group, result, functor, numpy_name or name, summary)


_U, _B = 1, 2
OPS: dict[str, ElementwiseOp] = {op.name: op for op in (
    _op("abs", _U, "numeric", "real", "Absolute value of x."),
    _op("acos", _U, "floating-point", "same", "Inverse cosine.", "arccos"),
    _op("acosh", _U, "floating-point", "same", "Inverse hyperbolic cosine.", "arccosh"),
    _op("add", _B, "numeric", "same", "Sum x1 + x2."),
    _op("asin", _U, "floating-point", "same", "Inverse sine.", "arcsin"),
    _op("asinh", _U, "floating-point", "same", "Inverse hyperbolic sine.", "arcsinh"),
    _op("atan", _U, "floating-point", "same", "Inverse tangent.", "arctan"),
    _op("atan2", _B, "real floating-point", "same", "Angle of the point (x2, x1).", "arctan2"),
    _op("atanh", _U, "floating-point", "same", "Inverse hyperbolic tangent.", "arctanh"),
    _op("bitwise_and", _B, "integer or boolean", "same", "Bitwise AND."),
    _op("bitwise_left_shift", _B, "integer", "same", "Shift x1 left by x2 bits.", "left_shift"),
    _op("bitwise_invert", _U, "integer or boolean", "same", "Bitwise NOT.", "invert"),
    _op("bitwise_or", _B, "integer or boolean", "same", "Bitwise OR."),
    _op("bitwise_right_shift", _B, "integer", "same", "Shift x1 right by x2 bits.", "right_shift"),
    _op("bitwise_xor", _B, "integer or boolean", "same", "Bitwise XOR."),
    _op("ceil", _U, "real numeric", "same", "Smallest integer >= x."),
    _op("clip", 3, "real numeric", "same", "x clamped to [min, max]."),
    _op("conj", _U, "numeric", "same", "Complex conjugate."),
    _op("copysign", _B, "real floating-point", "same", "Magnitude of x1 with the sign of x2."),
    _op("cos", _U, "floating-point", "same", "Cosine."),
    _op("cosh", _U, "floating-point", "same", "Hyperbolic cosine."),
    _op("divide", _B, "numeric", "float", "True division x1 / x2."),
    _op("equal", _B, "all", "bool", "x1 == x2."),
    _op("exp", _U, "floating-point", "same", "e ** x."),
    _op("expm1", _U, "floating-point", "same", "e ** x - 1, accurate near 0."),
    _op("floor", _U, "real numeric", "same", "Largest integer <= x."),
    _op("floor_divide", _B, "real numeric", "same", "Division rounded toward -inf."),
    _op("greater", _B, "real numeric", "bool", "x1 > x2."),
    _op("greater_equal", _B, "real numeric", "bool", "x1 >= x2."),
    _op("hypot", _B, "real floating-point", "same", "sqrt(x1**2 + x2**2) without overflow."),
    _op("imag", _U, "numeric", "real", "Imaginary part."),
    _op("isfinite", _U, "numeric", "bool", "True where x is finite."),
    _op("isinf", _U, "numeric", "bool", "True where x is infinite."),
    _op("isnan", _U, "numeric", "bool", "True where x is NaN."),
    _op("less", _B, "real numeric", "bool", "x1 < x2."),
    _op("less_equal", _B, "real numeric", "bool", "x1 <= x2."),
    _op("log", _U, "floating-point", "same", "Natural logarithm."),
    _op("log1p", _U, "floating-point", "same", "log(1 + x), accurate near 0."),
    _op("log2", _U, "floating-point", "same", "Base-2 logarithm."),
    _op("log10", _U, "floating-point", "same", "Base-10 logarithm."),
    _op("logaddexp", _B, "real floating-point", "same", "log(exp(x1) + exp(x2))."),
    _op("logical_and", _B, "boolean", "bool", "Logical AND."),
    _op("logical_not", _U, "boolean", "bool", "Logical NOT."),
    _op("logical_or", _B, "boolean", "bool", "Logical OR."),
    _op("logical_xor", _B, "boolean", "bool", "Logical XOR."),
    _op("maximum", _B, "real numeric", "same", "Larger of x1 and x2 (NaN propagates)."),
    _op("minimum", _B, "real numeric", "same", "Smaller of x1 and x2 (NaN propagates)."),
    _op("multiply", _B, "numeric", "same", "Product x1 * x2."),
    _op("negative", _U, "numeric", "same", "-x."),
    _op("nextafter", _B, "real floating-point", "same", "Next representable value after x1 toward x2."),
    _op("not_equal", _B, "all", "bool", "x1 != x2."),
    _op("positive", _U, "numeric", "same", "+x."),
    _op("pow", _B, "numeric", "same", "x1 ** x2.", "power"),
    _op("real", _U, "numeric", "real", "Real part."),
    _op("reciprocal", _U, "floating-point", "same", "1 / x."),
    _op("remainder", _B, "real numeric", "same", "Remainder with the sign of x2."),
    _op("round", _U, "numeric", "same", "Round half to even."),
    _op("sign", _U, "numeric", "same", "Sign of x (x divided by its magnitude for complex)."),
    _op("signbit", _U, "real floating-point", "bool", "True where the sign bit of x is set."),
    _op("sin", _U, "floating-point", "same", "Sine."),
    _op("sinh", _U, "floating-point", "same", "Hyperbolic sine."),
    _op("square", _U, "numeric", "same", "x * x."),
    _op("sqrt", _U, "floating-point", "same", "Square root."),
    _op("subtract", _B, "numeric", "same", "Difference x1 - x2."),
    _op("tan", _U, "floating-point", "same", "Tangent."),
    _op("tanh", _U, "floating-point", "same", "Hyperbolic tangent."),
    _op("trunc", _U, "real numeric", "same", "Integer part, rounded toward 0."),
)}

# The cast (astype, and inputs promoted before a kernel): OpPositive with Tout != Tin.
CAST_FUNCTOR = "ic::OpPositive"
