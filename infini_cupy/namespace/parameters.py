"""The numpydoc "Parameters", "Returns" and "Raises" sections of the functions whose
docstrings :mod:`.docstrings` generates: the functions delegated to array-api-compat and the
creation functions made from ``device=``. :func:`.docstrings.install` puts each between the
generated prose and the function's "Examples" (:data:`.examples.EXAMPLES`).

The parameters are the standard's (2025.12): its names, defaults and kinds (positional-only
before ``/``, keyword-only after ``*``, as ``inspect.signature`` reports them:
:mod:`.signatures`). Where the arrays' library takes more than the standard or answers
otherwise, the entry says what this namespace does. ``x : Array or array``: an Array, or a
plain NumPy or CuPy array (which gives the same kind back).
"""

from __future__ import annotations

from collections.abc import Sequence


def _sections(parameters: Sequence[str], returns: str, raises: Sequence[str] = ()) -> str:
    """numpydoc's sections of ``parameters`` (entries: ``"name : type\\n    text"``),
    ``returns`` and ``raises`` (entries: ``"Error\\n    when"``)."""
    text = ["Parameters", "----------", *parameters, "", "Returns", "-------", returns]
    if raises:
        text += ["", "Raises", "------", *raises]
    return "\n".join(text) + "\n"


_X = "x : Array or array\n    Input array."
_REAL_X = "x : Array or array\n    Input array (the standard's: of a real-valued dtype)."
_NUMERIC_X = "x : Array or array\n    Input array (the standard's: of a numeric dtype)."
_AXES = ("axis : int, tuple of ints or None, optional\n"
         "    The axes to reduce; None (default): every axis.")
_KEEPDIMS = "keepdims : bool, optional\n    Keep the reduced axes, of length 1."
_ON_X = "on ``x``'s device"
_ON_THEIRS = "on the arrays' device"


def _reducing(what: str, x: str = _REAL_X, dtype: str = "", raises: Sequence[str] = ()) -> str:
    """A reduction's sections: ``x``, ``axis``, ``dtype`` (when given), ``keepdims``."""
    return _sections([x, _AXES, *([dtype] if dtype else []), _KEEPDIMS],
                     f"Array or array\n    {what}, {_ON_X} (0-d where every axis is reduced).",
                     raises)


def _accumulated_dtype(what: str) -> str:
    return ("dtype : dtype, optional\n"
            f"    The dtype to compute the {what} in and return; None (default): ``x``'s, "
            "bools and integers narrower than 64 bits widened as NumPy widens them (int64, "
            "uint64 for unsigned ones).")


def _extremum(which: str) -> str:
    return _reducing(f"The {which} values, of ``x``'s dtype (NaN where a NaN is among them)",
                     raises=["ValueError\n    A reduction over no element."])


def _index_of(which: str) -> str:
    return _sections(
        [_REAL_X, "axis : int or None, optional\n    The axis to search along; None "
                  "(default): the flattened ``x``.", _KEEPDIMS],
        f"Array or array\n    The indices (int64) of the first {which} values, {_ON_X} "
        "(0-d where ``axis`` is None).",
        ["ValueError\n    A search over no element."])


def _cumulative(what: str, initial: str) -> str:
    return _sections(
        [_NUMERIC_X,
         "axis : int or None, optional\n    The axis to accumulate along; None (default) "
         "only where ``x`` has at most one dimension (a 0-d ``x`` counts as one element).",
         _accumulated_dtype(what),
         f"include_initial : bool, default False\n    Start with {initial}: the result is "
         "one longer along ``axis``."],
        f"Array or array\n    The cumulative {what}, of ``x``'s shape (one longer along "
        f"``axis`` with ``include_initial``), {_ON_X}.",
        ["ValueError\n    No ``axis`` for an ``x`` of more than one dimension."])


_SORT_PARAMETERS = [
    _REAL_X,
    "axis : int, default -1\n    The axis to sort along.",
    "descending : bool, default False\n    Sort in descending order.",
    "stable : bool, default True\n    Keep elements that compare equal in their order in "
    "``x`` (descending too); False leaves it to the library.",
]


def _triangle(part: str, side: str) -> str:
    return _sections(
        ["x : Array or array\n    A matrix or a stack of them, shape ``(..., M, N)`` (a 1-d "
         "``x``: NumPy's square matrix whose rows are ``x``).",
         f"k : int, default 0\n    The diagonal {side} which elements become zero: 0 the "
         "main one, positive above it, negative below."],
        f"Array or array\n    A new array of ``x``'s shape and dtype, its {part} triangle "
        f"kept, {_ON_X}.",
        ["ValueError\n    A 0-d ``x``."])


_UNIQUE_X = ("x : Array or array\n    Input array; one of more than one dimension is "
             "flattened.")
_DISTINCT = ("The distinct elements of ``x``, sorted, 1-d, of ``x``'s dtype (each NaN "
             f"distinct), {_ON_X}.")
_VALUES = f"values : Array or array\n    {_DISTINCT}"
_INDICES = ("indices : Array or array\n    The index (int64) of each value's first occurrence "
            "in the flattened ``x``.")
_INVERSE = ("inverse_indices : Array or array\n    Of ``x``'s shape: the index (int64) of each "
            "element of ``x`` in ``values``.")
_COUNTS = "counts : Array or array\n    How many times (int64) each value occurs in ``x``."

# The creation functions: no array argument, so the result is an Array on ``device``.
_SHAPE = "shape : int or tuple of ints\n    The result's shape."
_FLOAT_DTYPE = ("dtype : dtype, optional\n    The result's dtype, any of the namespace's; "
                "None (default): float64.")
_DEVICE = ('device : Device, str or cupy.cuda.Device, optional\n    ``"cpu"``, ``"emulator"``, '
           '``"cuda"``/``"cuda:N"``; None: the backend in force.')


def _created(parameters: Sequence[str], what: str, raises: Sequence[str] = (), *,
             type_error: str = "", negative: str = "a negative length") -> str:
    """A creation function's sections: ``parameters``, then ``device``; the refusals of
    every creation (``type_error``, ``negative``: the function's own), then ``raises``."""
    return _sections(
        [*parameters, _DEVICE], f"Array\n    {what}, on ``device``.",
        ["TypeError\n    A dtype that arrays of every device do not hold (strings, objects)"
         + (f", or {type_error}." if type_error else "."),
         "ValueError\n    An unknown device" + (f", or {negative}." if negative else "."),
         *raises])


def _filled(what: str) -> str:
    return _created([_SHAPE, _FLOAT_DTYPE], f"A new Array of {what}")


_IN_FLOAT32 = "bfloat16 computed in float32 and rounded once"

PARAMETERS: dict[str, str] = {
    "arange": _created(
        ["start : int or float\n    The first value; without ``stop``, the end of the "
         "interval, which then starts at 0.",
         "stop : int or float, optional\n    The end of the interval, excluded.",
         "step : int or float, default 1\n    The difference between neighbouring values; "
         "not 0.",
         "dtype : dtype, optional\n    The result's dtype; None (default): int64 where "
         "``start``, ``stop`` and ``step`` are ints, else float64."],
        "A new 1-d Array of ``ceil((stop - start) / step)`` values (none where that is "
        "not positive)",
        type_error="a complex ``start``, ``stop`` or ``step``", negative=""),
    "argmax": _index_of("maximum"),
    "argmin": _index_of("minimum"),
    "argsort": _sections(
        _SORT_PARAMETERS,
        f"Array or array\n    The indices (int64) that sort ``x`` along ``axis``, of "
        f"``x``'s shape, {_ON_X}."),
    "broadcast_arrays": _sections(
        ["*arrays : Array or array\n    Arrays whose shapes broadcast together."],
        "tuple of Array or array\n    A view of each array in the broadcast shape, of its "
        f"dtype, {_ON_THEIRS}.",
        ["ValueError\n    Shapes that do not broadcast, or arrays on different devices."]),
    "broadcast_to": _sections(
        ["x : Array or array\n    The array to broadcast.",
         "shape : tuple of ints\n    The shape to broadcast it to."],
        f"Array or array\n    A view of ``x`` in ``shape``, of its dtype, {_ON_X}.",
        ["ValueError\n    A ``shape`` that ``x``'s shape does not broadcast to."]),
    "count_nonzero": _reducing("The counts (int64) of nonzero elements", x=_X),
    "cumulative_prod": _cumulative("products", "1, the product of no element"),
    "cumulative_sum": _cumulative("sums", "0, the sum of no element"),
    "empty": _filled("uninitialized values"),
    "expand_dims": _sections(
        [_X, "axis : int or tuple of ints\n    The positions of the new axes in the result "
             "(negative ones count from its end)."],
        f"Array or array\n    A view of ``x`` with axes of length 1 inserted, {_ON_X}.",
        ["IndexError\n    A position out of range (NumPy's AxisError, an IndexError and a "
         "ValueError).", "ValueError\n    A position given twice."]),
    "eye": _created(
        ["n_rows : int\n    The number of rows.",
         "n_cols : int, optional\n    The number of columns; None (default): ``n_rows``.",
         "k : int, default 0\n    The diagonal of ones: 0 the main one, positive above it, "
         "negative below.",
         _FLOAT_DTYPE],
        "A new 2-d Array of zeros, ones on diagonal ``k``"),
    "flip": _sections(
        [_X, "axis : int, tuple of ints or None, optional\n    The axes to reverse; None "
             "(default): every axis."],
        f"Array or array\n    A view of ``x``, its elements in reverse order along ``axis``, "
        f"{_ON_X}.",
        ["ValueError\n    An axis out of range (NumPy's AxisError)."]),
    "full": _created(
        [_SHAPE,
         "fill_value : bool, int, float or complex\n    The value of every element (a 0-d "
         "array too); a float for an integer ``dtype`` converts as our kernels convert (NaN "
         "and out-of-range values silently).",
         "dtype : dtype, optional\n    The result's dtype; None (default): bool, int64, "
         "float64 or complex128 by ``fill_value``'s kind (uint64 for an int beyond int64; a "
         "0-d array's own dtype)."],
        "A new Array of ``fill_value``",
        ["OverflowError\n    An int ``fill_value`` out of ``dtype``'s range, or without "
         "``dtype`` beyond uint64."],
        type_error="a ``fill_value`` of another kind (a str)"),
    "isin": _sections(
        ["x1 : Array, array or int\n    The elements to look for.",
         "x2 : Array, array or int\n    The elements to look among.",
         "invert : bool, default False\n    Whether each element is *not* among ``x2``'s."],
        "Array or array\n    Bool, of ``x1``'s shape (0-d for a scalar ``x1``), "
        f"{_ON_THEIRS}.",
        ["ValueError\n    Arrays on different devices."]),
    "linspace": _created(
        ["start : int, float or complex\n    The first value (a 0-d array too).",
         "stop : int, float or complex\n    The last value; with ``endpoint=False``, the end "
         "of the interval, excluded.",
         "num : int\n    The number of values, at least 0.",
         "dtype : dtype, optional\n    The result's dtype; None (default): complex128 where "
         "``start`` or ``stop`` is complex, else float64.",
         "endpoint : bool, default True\n    Whether ``stop`` is the last value."],
        "A new 1-d Array of ``num`` evenly spaced values", negative="a negative ``num``"),
    "matmul": _sections(
        ["x1, x2 : Array or array\n    Operands of at least one dimension (the standard's: of "
         "numeric dtypes): stacks of matrices, whose stacks broadcast; a 1-d ``x1`` is a "
         "row, a 1-d ``x2`` a column, dropped from the result."],
        "Array or array\n    The matrix product, of the promoted dtype "
        f"({_IN_FLOAT32}), {_ON_THEIRS}.",
        ["ValueError\n    A 0-d operand, inner lengths that differ, stacks that do not "
         "broadcast, or arrays on different devices."]),
    "matrix_transpose": _sections(
        ["x : Array or array\n    A matrix or a stack of them, shape ``(..., M, N)``."],
        f"Array or array\n    A view of ``x``, shape ``(..., N, M)``, {_ON_X}.",
        ["ValueError\n    An ``x`` of fewer than two dimensions."]),
    "max": _extremum("largest"),
    "meshgrid": _sections(
        ["*arrays : Array or array\n    One-dimensional arrays of coordinates (the standard's: "
         "of one numeric dtype).",
         "indexing : {'xy', 'ij'}, default 'xy'\n    Matrix indexing (``'ij'``), or Cartesian "
         "(``'xy'``): the first two axes swapped."],
        "tuple of Array or array\n    One array per input, of as many dimensions as there "
        "are inputs: shape ``(M1, M2, M3, ...)`` with ``'ij'``, ``(M2, M1, M3, ...)`` with "
        f"``'xy'``, {_ON_THEIRS}.",
        ["ValueError\n    Another ``indexing``, or arrays on different devices."]),
    "min": _extremum("smallest"),
    "moveaxis": _sections(
        [_X, "source : int or tuple of ints\n    The axes to move, each once.",
         "destination : int or tuple of ints\n    Their new positions, as many."],
        f"Array or array\n    A view of ``x`` with its axes in the new order, {_ON_X}.",
        ["ValueError\n    An axis out of range or repeated, or ``source`` and "
         "``destination`` of different lengths."]),
    "nonzero": _sections(
        ["x : Array or array\n    Input array of at least one dimension."],
        "tuple of Array or array\n    One array (int64) per dimension of ``x``: the indices "
        f"of the nonzero elements along it, in row-major order, {_ON_X}.",
        ["ValueError\n    A 0-d ``x``."]),
    "ones": _filled("ones"),
    "permute_dims": _sections(
        [_X, "axes : tuple of ints\n    A permutation of ``x``'s axes (negative ones count "
             "from the end)."],
        f"Array or array\n    A view of ``x`` with its axes in that order, {_ON_X}.",
        ["ValueError\n    ``axes`` that are not a permutation of ``x``'s axes."]),
    "prod": _reducing("The products", _NUMERIC_X, _accumulated_dtype("products")),
    "searchsorted": _sections(
        ["x1 : Array or array\n    One-dimensional, sorted in ascending order (or as "
         "``sorter`` sorts it).",
         "x2 : Array, array, int or float\n    The values to find places for.",
         "side : {'left', 'right'}, default 'left'\n    For a value equal to elements of "
         "``x1``: the index of the first of them (``'left'``) or past the last "
         "(``'right'``).",
         "sorter : Array or array, optional\n    The indices (integers) that sort ``x1`` in "
         "ascending order."],
        "Array or array\n    The indices (int64) where ``x2``'s values would go, of "
        f"``x2``'s shape, {_ON_THEIRS}.",
        ["ValueError\n    An ``x1`` of other than one dimension, another ``side``, or arrays "
         "on different devices."]),
    "sort": _sections(
        _SORT_PARAMETERS,
        f"Array or array\n    A sorted copy of ``x``, of its shape and dtype, {_ON_X}."),
    "sum": _reducing("The sums", _NUMERIC_X, _accumulated_dtype("sums")),
    "take": _sections(
        [_X,
         "indices : Array or array\n    Integer indices along ``axis`` (negative ones count "
         "from the end); the standard's are 1-d.",
         "axis : int, optional\n    The axis to take along; None (default): the flattened "
         "``x`` (the standard asks for an axis where ``x`` has more than one dimension)."],
        f"Array or array\n    The elements of ``x`` at ``indices``, of its dtype, {_ON_X}.",
        ["IndexError\n    An index out of range, on every device (CuPy's kernel would wrap "
         "it)."]),
    "tensordot": _sections(
        ["x1, x2 : Array or array\n    Operands (the standard's: of numeric dtypes).",
         "axes : int or pair of sequences of ints, default 2\n    A count N: the last N axes "
         "of ``x1`` with the first N of ``x2``, from 0 to the arrays' dimensions; or "
         "``(x1_axes, x2_axes)``, as many axes of each."],
        "Array or array\n    The contraction: ``x1``'s other axes, then ``x2``'s, of the "
        f"promoted dtype ({_IN_FLOAT32}), {_ON_THEIRS}.",
        ["ValueError\n    A count out of range, sequences of different lengths, an axis out "
         "of range, lengths that differ, or arrays on different devices.",
         "TypeError\n    An axis that is not an integer."]),
    "tril": _triangle("lower", "above"),
    "triu": _triangle("upper", "below"),
    "unique_all": _sections([_UNIQUE_X], "\n".join([_VALUES, _INDICES, _INVERSE, _COUNTS])),
    "unique_counts": _sections([_UNIQUE_X], "\n".join([_VALUES, _COUNTS])),
    "unique_inverse": _sections([_UNIQUE_X], "\n".join([_VALUES, _INVERSE])),
    "unique_values": _sections([_UNIQUE_X], f"Array or array\n    {_DISTINCT}"),
    "vecdot": _sections(
        ["x1, x2 : Array or array\n    Vectors along ``axis``, of one length there; the other "
         "axes broadcast (the standard's: of floating-point dtypes).",
         "axis : int, default -1\n    The axis of the vectors (the standard's: negative)."],
        "Array or array\n    The dot products ``sum(conj(x1) * x2)`` along ``axis``, of the "
        f"promoted dtype ({_IN_FLOAT32}), {_ON_THEIRS}.",
        ["ValueError\n    Vectors of different lengths, other axes that do not broadcast, or "
         "arrays on different devices."]),
    "zeros": _filled("zeros"),
}
