"""The numpydoc "Parameters", "Returns" and "Raises" sections of the functions whose
docstrings :mod:`.docstrings` generates: the functions delegated to array-api-compat (those
of ``linalg`` and ``fft`` by their qualified names, ``"linalg.det"``) and the creation
functions made from ``device=``. :func:`.docstrings.install` puts each between the generated
prose and the function's "Examples" (:data:`.examples.EXAMPLES`); the delegated functions'
one-line summaries are :data:`SUMMARIES`, the standard's words.

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


def _reducing(what: str, x: str = _REAL_X, dtype: str = "", raises: Sequence[str] = (),
              more: Sequence[str] = ()) -> str:
    """A reduction's sections: ``x``, ``axis``, ``dtype`` (when given), ``keepdims``, then
    ``more``."""
    return _sections([x, _AXES, *([dtype] if dtype else []), _KEEPDIMS, *more],
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


def _matrices(kind: str = "", shape: str = "(..., M, N)", note: str = "") -> str:
    """``x``: a matrix (``kind``: ``"square "``, ...) or a stack of them, with ``note``."""
    return f"x : Array or array\n    A {kind}matrix or a stack of them, shape ``{shape}``{note}."


def _triangle(part: str, side: str) -> str:
    return _sections(
        [_matrices(note=" (a 1-d ``x``: NumPy's square matrix whose rows are ``x``)"),
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
             type_error: str = "", negative: str = "a negative length",
             after_device: Sequence[str] = ()) -> str:
    """A creation function's sections: ``parameters``, then ``device`` (then
    ``after_device``, in the signature's order); the refusals of every creation
    (``type_error``, ``negative``: the function's own), then ``raises``."""
    return _sections(
        [*parameters, _DEVICE, *after_device], f"Array\n    {what}, on ``device``.",
        ["TypeError\n    A dtype that arrays of every device do not hold (strings, objects)"
         + (f", or {type_error}." if type_error else "."),
         "ValueError\n    An unknown device" + (f", or {negative}." if negative else "."),
         *raises])


def _filled(what: str) -> str:
    return _created([_SHAPE, _FLOAT_DTYPE], f"A new Array of {what}")


_IN_FLOAT32 = "bfloat16 computed in float32 and rounded once"
_VECTOR_AXIS = "axis : int, default -1\n    The axis of the vectors (the standard's: negative)."


# linalg: the standard's inputs are of floating-point dtypes; integers compute in float64.
_FLOATING = " (the standard's: of a floating-point dtype; integers compute in float64)"
_SQUARE = _matrices("square ", "(..., M, M)", _FLOATING)
_GENERAL = _matrices(note=_FLOATING)
_HERMITIAN = _matrices("Hermitian (real: symmetric) ", "(..., M, M)",
                       _FLOATING + "; only its lower triangle is read")
# The dtypes of the results of a given precision (integers: float64's).
_COMPLEX_OF_X = ("complex64 for a complex64 ``x`` or a float32, float16 or bfloat16 one, else "
                 "complex128")
_REAL_OF_X = ("float32 for a complex64 ``x``, float64 for a complex128 one (a real floating-point "
              "``x`` keeps its dtype, an integer one gives float64)")
_OFFSET = ("offset : int, default 0\n    The diagonal: 0 the main one, positive above it, "
           "negative below.")
_RTOL = ("rtol : float or Array, optional\n    Singular values at most ``rtol`` times the "
         "largest count as zero; None (default): ``max(M, N)`` times the machine epsilon of "
         "``x``'s dtype.")


def _returned(what: str, where: str = _ON_X) -> str:
    """A Returns entry of one array: ``what``, on ``where``."""
    return f"Array or array\n    {what}, {where}."


def _failing(what: str) -> str:
    """The LinAlgError of a failed factorization, raised on every device (CuPy's solvers
    answer NaN silently unless asked: :func:`.delegated._cupy_linalg_raises`)."""
    return (f"numpy.linalg.LinAlgError\n    {what}, on every device, in NumPy's words.")


_NOT_CONVERGING = _failing("The algorithm does not converge")


def _eigen(values: str, vectors: str = "", nonsymmetric: bool = True) -> str:
    """The sections of ``eig``, ``eigh``, ``eigvals``, ``eigvalsh``."""
    returns = (f"eigenvalues : Array or array\n    Shape ``(..., M)``, {values}, {_ON_X}.\n"
               f"eigenvectors : Array or array\n    {vectors}, shape ``(..., M, M)``: column "
               "``i`` the eigenvector of eigenvalue ``i``, of unit norm." if vectors
               else _returned(f"The eigenvalues, shape ``(..., M)``, {values}"))
    raises = [_NOT_CONVERGING]
    if nonsymmetric:
        raises.append("NotImplementedError\n    On a GPU whose CuPy lacks ``linalg.eig`` "
                      "(older versions).")
    return _sections([_SQUARE if nonsymmetric else _HERMITIAN], returns, raises)


_SINGULAR = "A singular matrix"
_SVD_SHAPES = "``K = min(M, N)``"

# fft: the standard's transforms of complex inputs (real ones and integers are taken as
# complex), and of real ones for rfft and ihfft.
_FFT_X = ("x : Array or array\n    Input array (the standard's: of a complex floating-point "
          "dtype; real ones are taken as complex).")
_RFFT_X = "x : Array or array\n    Input array (the standard's: of a real floating-point dtype)."
_HALF_X = ("x : Array or array\n    The nonnegative-frequency terms of a Hermitian-symmetric "
           "signal (the standard's: of a complex floating-point dtype).")
_N = ("n : int, optional\n    The length of the transformed axis of the input: ``x`` cut or "
      "zero-padded to it; None (default): ``x``'s length.")
_N_OUT = ("n : int, optional\n    The length of the output along ``axis``: ``x`` cut or "
          "zero-padded to ``n // 2 + 1`` terms; None (default): ``2 * (m - 1)``, ``m`` "
          "``x``'s length.")
_S = ("s : sequence of ints, optional\n    The length of each transformed axis of the input "
      "(-1: the axis' own), ``x`` cut or zero-padded to it; None (default): their lengths.")
_S_OUT = ("s : sequence of ints, optional\n    The length of each transformed axis of the "
          "output (-1: as without ``s``); ``x`` cut or zero-padded to them, the last to "
          "``s[-1] // 2 + 1`` terms; None (default): ``x``'s lengths, the last ``2 * (m - 1)``.")
_FFT_AXES = ("axes : sequence of ints, optional\n    The axes to transform; None (default): "
             "every axis, or the last ``len(s)`` with ``s``.")
_NORM = ("norm : {'backward', 'ortho', 'forward'}, default 'backward'\n    The scaling: none "
         "on the forward transform and ``1/n`` on the inverse (``'backward'``), ``1/sqrt(n)`` "
         "on both (``'ortho'``), ``1/n`` on the forward (``'forward'``).")


def _transform(what: str, x: str = _FFT_X, n: str = _N, *, complex_out: bool = True,
               along: str = "``n``") -> str:
    """A 1-d transform's sections: ``x``, ``n``, ``axis``, ``norm``."""
    dtype = _COMPLEX_OF_X if complex_out else _REAL_OF_X
    return _sections(
        [x, n, "axis : int, default -1\n    The axis to transform.", _NORM],
        _returned(f"{what}, of ``x``'s shape but {along} along ``axis``, {dtype}"),
        ["numpy.exceptions.AxisError\n    An ``axis`` that ``x`` lacks (a 0-d ``x`` has "
         "none)."])


def _transform_n(what: str, x: str = _FFT_X, s: str = _S, *, complex_out: bool = True,
                 along: str = "``s[i]`` along ``axes[i]``", real: bool = False) -> str:
    """An n-d transform's sections: ``x``, ``s``, ``axes``, ``norm`` (``real``: rfftn's and
    irfftn's, which refuse to transform no axis)."""
    dtype = _COMPLEX_OF_X if complex_out else _REAL_OF_X
    none = ("; no axis to transform (a 0-d ``x``, ``axes=()``): the last one is the half "
            "spectrum" if real else "")
    return _sections([x, s, _FFT_AXES, _NORM],
                     _returned(f"{what}, of ``x``'s shape but {along}, {dtype}"),
                     ["numpy.exceptions.AxisError\n    An axis of ``axes`` that ``x`` lacks.",
                      "TypeError\n    ``axes`` that are no sequence of integers (an int).",
                      "ValueError\n    An axis named twice in ``axes``; more lengths in ``s`` "
                      f"than ``x`` has axes, without ``axes``{none}."])


def _shift(what: str) -> str:
    return _sections(
        [_X, "axes : int, sequence of ints or None, optional\n    The axes to shift; None "
             "(default): every axis."],
        _returned(f"``x`` rolled by {what} of each axis' length ``n``, of its shape and dtype"))


def _frequencies(what: str) -> str:
    """``fftfreq``'s and ``rfftfreq``'s sections (creation functions: on ``device``)."""
    return _created(
        ["n : int\n    The window length.",
         "d : float, default 1.0\n    The sample spacing (the inverse of the sampling rate).",
         "dtype : dtype, optional\n    The result's dtype, a real floating-point one; None "
         "(default): float64."],
        f"A new 1-d Array of {what}",
        type_error="an ``n`` that is not an integer (a float, a bool)",
        negative="an ``n`` below 1, a ``d`` of 0 or a ``dtype`` that is not real floating-point")


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
        type_error="a complex ``start``, ``stop`` or ``step``",
        negative="a ``step`` of 0, or an infinite or NaN ``start``, ``stop`` or ``step``"),
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
         "``start`` or ``stop`` is complex, else float64."],
        "A new 1-d Array of ``num`` evenly spaced values", negative="a negative ``num``",
        after_device=["endpoint : bool, default True\n    Whether ``stop`` is the last value."]),
    "matmul": _sections(
        ["x1, x2 : Array or array\n    Operands of at least one dimension (the standard's: of "
         "numeric dtypes): stacks of matrices, whose stacks broadcast; a 1-d ``x1`` is a "
         "row, a 1-d ``x2`` a column, dropped from the result."],
        "Array or array\n    The matrix product, of the promoted dtype "
        f"({_IN_FLOAT32}), {_ON_THEIRS}.",
        ["ValueError\n    A 0-d operand, inner lengths that differ, stacks that do not "
         "broadcast, or arrays on different devices."]),
    "matrix_transpose": _sections(
        [_matrices()],
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
         _VECTOR_AXIS],
        "Array or array\n    The dot products ``sum(conj(x1) * x2)`` along ``axis``, of the "
        f"promoted dtype ({_IN_FLOAT32}), {_ON_THEIRS}.",
        ["ValueError\n    Vectors of different lengths, other axes that do not broadcast, or "
         "arrays on different devices."]),
    "zeros": _filled("zeros"),
    "linalg.cholesky": _sections(
        [_matrices("symmetric (complex: Hermitian) positive-definite ", "(..., M, M)",
                   _FLOATING),
         "upper : bool, default False\n    Return the upper triangular factor ``U`` "
         "(``x = U^H U``) rather than the lower ``L`` (``x = L L^H``)."],
        _returned("The triangular factors, of ``x``'s shape and floating-point dtype"),
        [_failing("A matrix that is not positive definite")]),
    "linalg.cross": _sections(
        ["x1, x2 : Array or array\n    3-element vectors along ``axis``; the other axes "
         "broadcast (the standard's: of numeric dtypes).", _VECTOR_AXIS],
        _returned("The cross products, of the promoted dtype", _ON_THEIRS),
        ["ValueError\n    Vectors of other than 3 elements along ``axis``, or arrays on "
         "different devices."]),
    "linalg.det": _sections(
        [_SQUARE], _returned("The determinants, shape ``(...)``, of ``x``'s floating-point "
                             "dtype")),
    "linalg.diagonal": _sections(
        [_matrices(), _OFFSET],
        _returned("The diagonals, shape ``(..., K)``, of ``x``'s dtype")),
    "linalg.eig": _eigen(f"of {_COMPLEX_OF_X}", "Of the eigenvalues' dtype"),
    "linalg.eigh": _eigen(f"in ascending order, real ({_REAL_OF_X})", "Orthonormal, of "
                          "``x``'s floating-point dtype", nonsymmetric=False),
    "linalg.eigvals": _eigen(f"of {_COMPLEX_OF_X}"),
    "linalg.eigvalsh": _eigen(f"in ascending order, real ({_REAL_OF_X})", nonsymmetric=False),
    "linalg.inv": _sections(
        [_SQUARE], _returned("The inverses, of ``x``'s shape and floating-point dtype"),
        [_failing(_SINGULAR)]),
    "linalg.matrix_norm": _sections(
        [_GENERAL, _KEEPDIMS,
         "ord : {'fro', 'nuc', 1, -1, 2, -2, inf, -inf}, default 'fro'\n    The norm: "
         "Frobenius, nuclear (the sum of the singular values), the largest or smallest column "
         "sum of absolute values (1, -1), singular value (2, -2) or row sum (inf, -inf)."],
        _returned(f"The norms, shape ``(...)`` (``(..., 1, 1)`` with ``keepdims``), real "
                  f"({_REAL_OF_X})")),
    "linalg.matrix_power": _sections(
        [_matrices("square ", "(..., M, M)"),
         "n : int\n    The exponent: 0 gives identity matrices, a negative one powers of the "
         "inverse."],
        _returned("The powers, of ``x``'s shape and dtype")),
    "linalg.matrix_rank": _sections(
        [_GENERAL, _RTOL],
        _returned("The ranks (int64): the numbers of nonzero singular values, shape ``(...)`` "
                  "(0 for an empty matrix)")),
    "linalg.outer": _sections(
        ["x1 : Array or array\n    A vector of ``N`` elements (the standard's: of a numeric "
         "dtype).", "x2 : Array or array\n    A vector of ``M`` elements."],
        _returned("The outer product, shape ``(N, M)``, of the promoted dtype", _ON_THEIRS),
        ["ValueError\n    An ``x1`` or ``x2`` of other than one dimension, or arrays on "
         "different devices."]),
    "linalg.pinv": _sections(
        [_GENERAL, _RTOL],
        _returned("The pseudo-inverses, shape ``(..., N, M)``, of ``x``'s floating-point "
                  "dtype"),
        [_NOT_CONVERGING]),
    "linalg.qr": _sections(
        [_GENERAL,
         "mode : {'reduced', 'complete'}, default 'reduced'\n    ``'reduced'``: ``Q`` of shape "
         f"``(..., M, K)`` and ``R`` of ``(..., K, N)``, {_SVD_SHAPES}; ``'complete'``: ``Q`` "
         "of ``(..., M, M)`` and ``R`` of ``(..., M, N)``."],
        "Q : Array or array\n    Orthonormal columns, of ``x``'s floating-point dtype, "
        f"{_ON_X}.\nR : Array or array\n    Upper triangular, of the same dtype.",
        ["ValueError\n    Another ``mode``."]),
    "linalg.slogdet": _sections(
        [_SQUARE],
        "sign : Array or array\n    The signs of the determinants, shape ``(...)``: -1, 0 or "
        f"1 (a complex ``x``'s: of modulus 1, or 0), {_ON_X}.\nlogabsdet : Array or array\n"
        f"    The natural logarithms of their absolute values (-inf for 0), real ({_REAL_OF_X})."),
    "linalg.solve": _sections(
        ["x1 : Array or array\n    The coefficients: a square matrix or a stack of them, shape "
         f"``(..., M, M)``{_FLOATING}.",
         "x2 : Array or array\n    The ordinates: one vector of shape ``(M,)`` for every "
         "matrix, or matrices of shape ``(..., M, K)`` whose stack broadcasts with "
         "``x1``'s."],
        _returned("The solutions ``x`` of ``x1 @ x = x2``, of ``x2``'s shape in the broadcast "
                  "stack, of the promoted floating-point dtype", _ON_THEIRS),
        [_failing(_SINGULAR),
         "ValueError\n    Stacks that do not broadcast, or arrays on different devices."]),
    "linalg.svd": _sections(
        [_GENERAL,
         "full_matrices : bool, default True\n    ``U`` of shape ``(..., M, M)`` and ``Vh`` of "
         f"``(..., N, N)``; False: ``(..., M, K)`` and ``(..., K, N)``, {_SVD_SHAPES}."],
        "U : Array or array\n    The left singular vectors (columns), of ``x``'s "
        f"floating-point dtype, {_ON_X}.\nS : Array or array\n    The singular values, shape "
        f"``(..., K)``, in descending order, real ({_REAL_OF_X}).\nVh : Array or array\n"
        "    The right singular vectors (rows), of ``U``'s dtype.",
        [_NOT_CONVERGING]),
    "linalg.svdvals": _sections(
        [_GENERAL],
        _returned(f"The singular values, shape ``(..., K)``, {_SVD_SHAPES}, in descending "
                  f"order, real ({_REAL_OF_X})"),
        [_NOT_CONVERGING]),
    "linalg.trace": _sections(
        [_matrices(note=" (the standard's: of a numeric dtype)"), _OFFSET,
         _accumulated_dtype("sums")],
        _returned("The sums along the diagonal, shape ``(...)``")),
    "linalg.vector_norm": _reducing(
        f"The norms, real ({_REAL_OF_X})",
        "x : Array or array\n    Input array (the standard's: of a floating-point dtype; "
        "integers compute in float64).",
        more=["ord : int, float, inf or -inf, default 2\n    The norm: ``sum(abs(x)**ord)**"
              "(1/ord)``; inf the largest absolute value, -inf the smallest, 0 the number of "
              "nonzero elements."]),
    "fft.fft": _transform("The transform"),
    "fft.ifft": _transform("The inverse transform"),
    "fft.fftn": _transform_n("The transform"),
    "fft.ifftn": _transform_n("The inverse transform"),
    "fft.rfft": _transform("The transform's nonnegative-frequency terms", _RFFT_X,
                           along="``n // 2 + 1``"),
    "fft.irfft": _transform("The real signal", _HALF_X, _N_OUT, complex_out=False),
    "fft.rfftn": _transform_n("The transform's nonnegative-frequency terms", _RFFT_X,
                              along="``s[i]`` along ``axes[i]`` (``s[-1] // 2 + 1`` along "
                                    "the last)", real=True),
    "fft.irfftn": _transform_n("The real signal", _HALF_X, _S_OUT, complex_out=False,
                               real=True),
    "fft.hfft": _transform("The real spectrum", _HALF_X, _N_OUT, complex_out=False),
    "fft.ihfft": _transform("The inverse transform's nonnegative-frequency terms", _RFFT_X,
                            along="``n // 2 + 1``"),
    "fft.fftfreq": _frequencies(
        "the ``n`` sample frequencies ``k / (d * n)`` of the discrete Fourier transform, "
        "nonnegative ``k`` first"),
    "fft.rfftfreq": _frequencies(
        "the ``n // 2 + 1`` nonnegative sample frequencies ``k / (d * n)`` of ``rfft``"),
    "fft.fftshift": _shift("``n // 2``"),
    "fft.ifftshift": _shift("``-(n // 2)``"),
}

# The one-line summaries of the delegated functions' docstrings, the standard's words (keyed
# as PARAMETERS; linalg's matmul, matrix_transpose, tensordot and vecdot are the namespace's).
SUMMARIES: dict[str, str] = {
    "arange": "Evenly spaced values within the half-open interval ``[start, stop)``, as a 1-d "
              "Array.",
    "empty": "A new Array of shape ``shape``, its values not initialized.",
    "eye": "A 2-d Array with ones on the ``k``-th diagonal and zeros elsewhere.",
    "full": "A new Array of shape ``shape`` filled with ``fill_value``.",
    "linspace": "``num`` evenly spaced numbers over the interval from ``start`` to ``stop``.",
    "ones": "A new Array of shape ``shape`` filled with ones.",
    "zeros": "A new Array of shape ``shape`` filled with zeros.",
    "fft.fftfreq": "The discrete Fourier transform's sample frequencies.",
    "fft.rfftfreq": "The sample frequencies of ``rfft`` and ``irfft``: the nonnegative ones.",
    "argmax": "The indices of the maximum values of ``x`` along ``axis``.",
    "argmin": "The indices of the minimum values of ``x`` along ``axis``.",
    "argsort": "The indices that sort ``x`` along ``axis``.",
    "broadcast_arrays": "Broadcast one or more arrays against one another.",
    "broadcast_to": "Broadcast ``x`` to the shape ``shape``.",
    "count_nonzero": "The number of nonzero elements of ``x`` along ``axis``.",
    "cumulative_prod": "The cumulative product of the elements of ``x`` along ``axis``.",
    "cumulative_sum": "The cumulative sum of the elements of ``x`` along ``axis``.",
    "expand_dims": "Expand the shape of ``x`` with axes of length one at ``axis``.",
    "flip": "Reverse the order of the elements of ``x`` along ``axis``, keeping its shape.",
    "isin": "Whether each element of ``x1`` is among the elements of ``x2``.",
    "matmul": "The matrix product of ``x1`` and ``x2``.",
    "matrix_transpose": "Transpose a matrix (or a stack of matrices) ``x``.",
    "max": "The maximum value of ``x`` along ``axis``.",
    "meshgrid": "Coordinate matrices from coordinate vectors.",
    "min": "The minimum value of ``x`` along ``axis``.",
    "moveaxis": "Move the axes ``source`` of ``x`` to the positions ``destination``.",
    "nonzero": "The indices of the nonzero elements of ``x``.",
    "permute_dims": "Permute the axes of ``x``.",
    "prod": "Product of the elements of ``x`` along ``axis``.",
    "searchsorted": ("The indices into the sorted ``x1`` before which the elements of ``x2`` "
                     "keep it sorted."),
    "sort": "A sorted copy of ``x`` along ``axis``.",
    "sum": "Sum of the elements of ``x`` along ``axis``.",
    "take": "The elements of ``x`` at ``indices`` along ``axis``.",
    "tensordot": "The tensor contraction of ``x1`` and ``x2`` over ``axes``.",
    "tril": "The lower triangular part of a matrix (or a stack of matrices) ``x``.",
    "triu": "The upper triangular part of a matrix (or a stack of matrices) ``x``.",
    "unique_all": ("The unique elements of ``x``, the index of each one's first occurrence, "
                   "the inverse indices and the counts."),
    "unique_counts": "The unique elements of ``x`` and the number of times each occurs.",
    "unique_inverse": "The unique elements of ``x`` and the indices that reconstruct ``x``.",
    "unique_values": "The unique elements of ``x``.",
    "vecdot": "The (vector) dot product of ``x1`` and ``x2`` along ``axis``.",
    "linalg.cholesky": ("The lower (or upper) Cholesky decomposition of each symmetric or "
                        "Hermitian positive-definite matrix of ``x``."),
    "linalg.cross": "The cross product of the 3-element vectors ``x1`` and ``x2``.",
    "linalg.det": "The determinant of each square matrix of ``x``.",
    "linalg.diagonal": "The diagonal ``offset`` of each matrix of ``x``.",
    "linalg.eig": "The eigenvalues and eigenvectors of each square matrix of ``x``.",
    "linalg.eigh": ("The eigenvalues and eigenvectors of each Hermitian or real symmetric "
                    "matrix of ``x``."),
    "linalg.eigvals": "The eigenvalues of each square matrix of ``x``.",
    "linalg.eigvalsh": "The eigenvalues of each Hermitian or real symmetric matrix of ``x``.",
    "linalg.inv": "The inverse of each square matrix of ``x``.",
    "linalg.matrix_norm": "The matrix norm of each matrix of ``x``.",
    "linalg.matrix_power": "Each square matrix of ``x`` raised to the integer power ``n``.",
    "linalg.matrix_rank": ("The rank (the number of nonzero singular values) of each matrix "
                           "of ``x``."),
    "linalg.outer": "The outer product of the vectors ``x1`` and ``x2``.",
    "linalg.pinv": "The (Moore-Penrose) pseudo-inverse of each matrix of ``x``.",
    "linalg.qr": "The QR decomposition of each full-rank matrix of ``x``.",
    "linalg.slogdet": ("The sign and the natural logarithm of the absolute value of the "
                       "determinant of each square matrix of ``x``."),
    "linalg.solve": "The solution of the square system of linear equations ``x1 @ x = x2``.",
    "linalg.svd": "The singular value decomposition of each matrix of ``x``.",
    "linalg.svdvals": "The singular values of each matrix of ``x``.",
    "linalg.trace": "The sum along the diagonal ``offset`` of each matrix of ``x``.",
    "linalg.vector_norm": "The vector norm of ``x`` along ``axis``.",
    "fft.fft": "The one-dimensional discrete Fourier transform of ``x``.",
    "fft.ifft": "The one-dimensional inverse discrete Fourier transform of ``x``.",
    "fft.fftn": "The n-dimensional discrete Fourier transform of ``x``.",
    "fft.ifftn": "The n-dimensional inverse discrete Fourier transform of ``x``.",
    "fft.rfft": "The one-dimensional discrete Fourier transform of the real-valued ``x``.",
    "fft.irfft": "The one-dimensional inverse of ``rfft``, for complex-valued ``x``.",
    "fft.rfftn": "The n-dimensional discrete Fourier transform of the real-valued ``x``.",
    "fft.irfftn": "The n-dimensional inverse of ``rfftn``, for complex-valued ``x``.",
    "fft.hfft": ("The one-dimensional discrete Fourier transform of a signal with Hermitian "
                 "symmetry."),
    "fft.ihfft": ("The one-dimensional inverse discrete Fourier transform of a signal with "
                  "Hermitian symmetry."),
    "fft.fftshift": "Shift the zero-frequency component of ``x`` to the center of the spectrum.",
    "fft.ifftshift": "The inverse of ``fftshift``.",
}
