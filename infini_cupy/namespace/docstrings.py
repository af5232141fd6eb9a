"""numpydoc docstrings generated from the op table: the elementwise functions, the Array's
operators, and the delegated functions (what they delegate to, on which device, their
parameters from :data:`.parameters.PARAMETERS` and an example from :data:`.examples.EXAMPLES`).

Generated rather than written out 67 times: one template per kind, the op table's row for
what differs (dtype group, result dtype, the NumPy function of the same meaning), and an
example whose printed result is NumPy's answer for the same inputs, so the doctest (run by
``pytest --doctest-modules``) checks our function against NumPy.
"""

from __future__ import annotations

import inspect

import numpy as np

from ..elementwise.ops import OPS, ElementwiseOp
from ..elementwise.resolution import result_of_loop
from .array import Array, wrap
from .examples import EXAMPLES
from .operators import BINARY, COMPARISONS, UNARY
from .parameters import PARAMETERS, SUMMARIES

_GROUP_WORDS = {
    "all": "any dtype",
    "boolean": "bool",
    "integer": "integer dtypes",
    "integer or boolean": "integer or bool dtypes",
    "numeric": "numeric dtypes (integers, real and complex floating point)",
    "real numeric": "real numeric dtypes (integers and real floating point)",
    "floating-point": "floating-point dtypes (real and complex)",
    "real floating-point": "real floating-point dtypes",
    "complex floating-point": "complex floating-point dtypes",
}
_RESULT_WORDS = {
    "same": "the promoted dtype of the inputs",
    "bool": "bool",
    "real": "the promoted dtype, complex64 -> float32 and complex128 -> float64",
    "float": ("the promoted dtype; integer and bool inputs take NumPy's floating loop "
              "(int8/uint8/bool give float16, int16/uint16 float32, wider integers float64)"),
}


def _result_words(op: ElementwiseOp) -> str:
    if op.result == "same" and "floating" in op.group:
        return _RESULT_WORDS["float"]  # integers into a floating-point function: NumPy's loop
    return _RESULT_WORDS[op.result]


# Inputs that stay inside every function's domain (acos needs |x| <= 1, acosh x >= 1, ...).
_DOMAIN = {"acos": [-0.5, 0.0, 0.5], "asin": [-0.5, 0.0, 0.5], "atanh": [-0.5, 0.0, 0.5],
           "acosh": [1.0, 2.0, 4.0]}


def _example_inputs(op: ElementwiseOp) -> list[list]:
    if op.group == "boolean":
        return [[True, False, True], [True, True, False]][:op.arity]
    if op.name == "clip":
        return [[0.5, 1.0, 2.5]]
    if op.group.startswith("integer"):
        return [[12, 10, 7], [3, 6, 5]][:op.arity]
    if op.name in ("real", "imag", "conj"):
        return [[1 + 2j, 3j, 4.0]]
    if op.arity == 1:
        return [_DOMAIN.get(op.name, [0.5, 1.0, 2.5])]
    return [[1.5, -2.0, 4.0], [2.0, 3.0, 0.5]]


def _literal(values: list) -> str:
    return "[" + ", ".join(repr(v) for v in values) + "]"


def _shown(native) -> str:
    return repr(wrap(np.asarray(native), "numpy"))


def _example(op: ElementwiseOp) -> list[str]:
    inputs = _example_inputs(op)
    dtype = ', dtype=xp.int8' if op.group.startswith("integer") else ""
    names = ["x"] if op.arity == 1 else ["x1", "x2"]
    lines = [">>> import infini_cupy as xp"]
    natives = []
    for name, values in zip(names, inputs):
        lines.append(f'>>> {name} = xp.asarray({_literal(values)}{dtype}, device="cpu")')
        natives.append(np.asarray(values, dtype=np.int8 if dtype else None))
    expected = getattr(np, op.numpy_name)(*natives)
    lines += [f">>> xp.{op.name}({', '.join(names)})", _shown(expected)]
    if op.arity == 2 and op.group in ("numeric", "real numeric", "integer"):
        # a Python scalar is weak: it takes the array's dtype (int8 stays int8)
        lines += [">>> a = xp.asarray([1, 2], dtype=xp.int8)",
                  f">>> xp.{op.name}(a, 1).dtype",
                  repr(result_of_loop(op.name, np.dtype(np.int8)))]
    return lines


def elementwise_doc(op: ElementwiseOp) -> str:
    """The numpydoc docstring of the elementwise function ``op.name``."""
    if op.arity == 1:
        params = ["x : Array or array", f"    Input of {_GROUP_WORDS[op.group]}."]
    else:
        params = ["x1, x2 : Array, array or Python scalar",
                  f"    Inputs of {_GROUP_WORDS[op.group]}, broadcastable together; at most one "
                  "a Python scalar, which is weak (it takes the other operand's dtype)."]
    text = [
        op.summary,
        "",
        f"The array API's ``{op.name}``. The result's dtype is {_result_words(op)} "
        "(NumPy 2's promotion, as CuPy 14 follows it). Inputs may have any strides; the result "
        "is a new C-contiguous array, or ``out``.",
        "",
        "Arrays on the emulator and on a GPU run our kernel (one launch; an input of another "
        "dtype is first cast by our cast kernel); Arrays on ``cpu`` compute with NumPy "
        f"(``numpy.{op.numpy_name}``) under the same dtype rules. Plain NumPy or CuPy arrays "
        "in give the same kind of array out.",
        "",
        "Parameters",
        "----------",
        *params,
        "out : Array or array, optional",
        "    Where to write the result (an extension): the result's shape, its dtype or one "
        "the result casts to (same_kind), any writeable layout that does not overlap itself.",
        "",
        "Returns",
        "-------",
        "Array or array",
        "    The result, on the inputs' device (``out`` when given).",
        "",
        "Raises",
        "------",
        "TypeError",
        f"    An input whose dtype is not among the {_GROUP_WORDS[op.group]}.",
        "ValueError",
        "    Shapes that do not broadcast, or arrays on different devices (both named).",
        "",
        "Examples",
        "--------",
        *_example(op),
    ]
    return "\n".join(text) + "\n"


def dask_elementwise_doc(op: ElementwiseOp) -> str:
    """The numpydoc docstring of ``infini_cupy.dask.<op.name>``."""
    inputs = _example_inputs(op)
    ints = op.group.startswith("integer")
    names = ["x1", "x2"] if op.arity == 2 else ["x"]
    example = [">>> import numpy as np, dask.array as da", ">>> from infini_cupy import dask as xd"]
    natives = []
    for name, values in zip(names, inputs):
        dtype = ", dtype=np.int8" if ints else ""
        example.append(f">>> {name} = da.from_array(np.asarray({_literal(values)}{dtype}), "
                       "chunks=2)")
        natives.append(np.asarray(values, dtype=np.int8 if ints else None))
    if op.name == "clip":  # x and two bounds
        expected = np.clip(natives[0], 1.0, 2.0)
        example += [">>> xd.clip(x, 1.0, 2.0).compute()", repr(expected)]
        operands = ("min, max : dask.array.Array, Python scalar or None\n    The bounds.\n"
                    "x : dask.array.Array")
    else:
        expected = np.asarray(getattr(np, op.numpy_name)(*natives))
        example += [f">>> xd.{op.name}({', '.join(names)}).compute()", repr(expected)]
        operands = "x : dask.array.Array" if op.arity == 1 else (
            "x1, x2 : dask.array.Array or Python scalar")
    return "\n".join([
        f"``infini_cupy.{op.name}`` chunk by chunk over Dask arrays: {op.summary[0].lower()}"
        f"{op.summary[1:]}",
        "",
        "One blockwise layer, one task per output chunk, each running "
        f":func:`infini_cupy.{op.name}` on its chunks (our kernel for CuPy chunks and, under "
        "``backend(\"emulate\")``, NumPy chunks; NumPy otherwise). Broadcasting is NumPy's; "
        "the result dtype is ours, found when the graph is built.",
        "",
        "Parameters", "----------", operands,
        f"    Inputs of {_GROUP_WORDS[op.group]} (NumPy, CuPy or infini_cupy.Array chunks).",
        "",
        "Returns", "-------", "dask.array.Array", "    The lazy result; ``compute()`` runs it.",
        "",
        "Raises", "------", "TypeError",
        f"    A dtype outside the {_GROUP_WORDS[op.group]}, or an input that is not a Dask "
        "array; when the graph is built.",
        "ValueError", "    Shapes that do not broadcast; when the graph is built.",
        "",
        "Examples", "--------", *example]) + "\n"


def _operator_example(dunder: str, function: str, symbol: str, kind: str) -> list[str]:
    op = OPS.get(function)
    ints = op is not None and op.group.startswith("integer")
    a, b = ([12, 10, 7], [3, 6, 5]) if ints else ([1.5, -2.0, 4.0], [2.0, 3.0, 0.5])
    dtype = ", dtype=xp.int8" if ints else ""
    lines = [">>> import infini_cupy as xp",
             f'>>> x = xp.asarray({_literal(a)}{dtype}, device="cpu")']
    native = np.asarray(a, dtype=np.int8 if ints else None)
    if kind == "unary":
        expression = f"{symbol}x" if symbol != "abs" else "abs(x)"
        expected = getattr(np, op.numpy_name)(native)
    elif kind == "reflected":
        expression = f"2 {symbol} x"
        expected = getattr(np, op.numpy_name)(np.asarray(2, native.dtype), native)
    elif kind == "inplace":
        lines.append(f'>>> y = xp.asarray({_literal(b)}{dtype}, device="cpu")')
        expression = f"x {symbol}= y"
        lines.append(f">>> {expression}")
        expected = getattr(np, op.numpy_name)(native, np.asarray(b, native.dtype))
        return lines + [">>> x", _shown(expected)]
    else:
        lines.append(f'>>> y = xp.asarray({_literal(b)}{dtype}, device="cpu")')
        expression = f"x {symbol} y"
        expected = getattr(np, OPS[function].numpy_name if function in OPS else function)(
            native, np.asarray(b, native.dtype))
    return lines + [f">>> {expression}", _shown(expected)]


_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
            "pow": "**", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
            "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=",
            "neg": "-", "pos": "+", "abs": "abs", "invert": "~"}


def operator_doc(dunder: str, function: str, kind: str) -> str:
    """The numpydoc docstring of the Array operator ``dunder`` (the namespace's ``function``)."""
    symbol = _SYMBOLS[dunder.strip("_").removeprefix("r").removeprefix("i")
                      if kind in ("reflected", "inplace") else dunder.strip("_")]
    what = {"forward": f"``self {symbol} other``", "reflected": f"``other {symbol} self``",
            "inplace": f"``self {symbol}= other``",
            "unary": f"``{symbol}self``" if symbol != "abs" else "``abs(self)``"}[kind]
    text = [f"{what}: :func:`infini_cupy.{function}`.", ""]
    if kind == "inplace":
        text += ["Writes into this Array's memory (``out=self``): the result keeps this "
                 "Array's dtype and shape; one that would need another raises.", ""]
    text += ["Parameters", "----------"]
    if kind != "unary":
        text += ["other : Array, array of the same device, Python or NumPy scalar",
                 "    The other operand (a Python scalar is weak)."]
    else:
        text += ["self : Array", "    The operand."]
    text += ["", "Returns", "-------", "Array",
             "    " + ("This Array." if kind == "inplace" else "A new Array on this Array's device."),
             "", "Raises", "------", "TypeError",
             f"    A dtype :func:`infini_cupy.{function}` does not take, or an operand that is "
             "neither an array nor a scalar.",
             "ValueError", "    Shapes that do not broadcast, or another device.", "",
             "Examples", "--------", *_operator_example(dunder, function, symbol, kind)]
    return "\n".join(text) + "\n"


def examples_section(name: str) -> str:
    """The numpydoc "Examples" section of ``name`` (``"sum"``, ``"linalg.det"``) from
    :data:`.examples.EXAMPLES`; "" for a name without one."""
    example = EXAMPLES.get(name)
    if example is None:
        return ""
    return f"\nExamples\n--------\n>>> import infini_cupy as xp\n{example}"


def parameters_section(name: str) -> str:
    """The numpydoc "Parameters", "Returns" and "Raises" sections of ``name`` from
    :data:`.parameters.PARAMETERS`; "" for a name without them."""
    sections = PARAMETERS.get(name)
    return "" if sections is None else f"\n{sections}"


def delegated_doc(name: str, summary: str) -> str:
    """A delegated function's docstring: the standard's function, whose library runs it."""
    return (f"{summary}\n\nDelegated: the array API's ``{name}`` from array-api-compat, run by "
            f"the array's own library: ``array_api_compat.numpy.{name}`` (NumPy, on the host) "
            "for Arrays on ``cpu`` and on the emulator, ``array_api_compat.cupy."
            f"{name}`` (CuPy's kernels, on the array's GPU) for Arrays on a GPU. Arrays in give "
            "Arrays out; plain NumPy or CuPy arrays give the same kind back.\n"
            + parameters_section(name) + examples_section(name))


def _operators() -> list[tuple[str, str, str]]:
    """(dunder, namespace function, kind) of every operator ``operators.install`` sets."""
    found = []
    for op, name in BINARY.items():
        found += [(f"__{op}__", name, "forward"), (f"__r{op}__", name, "reflected"),
                  (f"__i{op}__", name, "inplace")]
    found += [(f"__{op}__", name, "forward") for op, name in COMPARISONS.items()]
    found += [(f"__{op}__", name, "unary") for op, name in UNARY.items()]
    return found


ELEMENTWISE_DOCS = {name: elementwise_doc(op) for name, op in OPS.items() if name != "clip"}
OPERATOR_DOCS = {dunder: operator_doc(dunder, function, kind)
                 for dunder, function, kind in _operators()}

# The elementwise functions' doctests run from ``infini_cupy`` (their ``__module__``); the
# Array's methods and operators (a class of ``infini_cupy`` defined in array.py, which
# doctest's finder skips in both modules) are collected here, and so are the examples of
# ``linalg`` and ``fft`` (modules without a file: ``install`` adds them).
__test__ = {f"Array.{k}": v for k, v in OPERATOR_DOCS.items()}
__test__.update({f"Array.{name}": member.__doc__ for name, member in vars(Array).items()
                 if callable(member) and ">>>" in (member.__doc__ or "")
                 and name not in OPERATOR_DOCS})


def install(public: dict, delegated_names) -> None:
    """Set the generated docstrings on the public functions and the Array's operators (the
    delegated functions' summaries from :data:`.parameters.SUMMARIES`), and the examples of
    :data:`.examples.EXAMPLES` on the functions whose docstrings have none (after the
    parameters of :data:`.parameters.PARAMETERS` where the docstring is generated: the
    creation functions')."""
    for name, doc in ELEMENTWISE_DOCS.items():
        public[name].__doc__ = doc
    for dunder, doc in OPERATOR_DOCS.items():
        getattr(Array, dunder).__doc__ = doc
    functions = [(name, public.get(name)) for name in delegated_names]
    for module in ("linalg", "fft"):
        functions += [(f"{module}.{name}", getattr(public[module], name))
                      for name in public[module].__all__]
    for name, function in functions:
        if callable(function) and "of the arrays' library" in (function.__doc__ or ""):
            summary = SUMMARIES.get(name, f"The array API's ``{name}``.")  # (tests/test_docs.py)
            function.__doc__ = delegated_doc(name, summary)
        elif callable(function) and (function.__doc__ or "").startswith(f"``{name}`` on "):
            # the creation functions ("``eye`` on ``device`` (None: ...)", delegated.py's
            # _delegate_from_device): what they make first, then where
            where = function.__doc__.split(" on ", 1)[1]
            function.__doc__ = f"{SUMMARIES[name]}\n\nOn {where}"
    for name in EXAMPLES:  # written docstrings (finfo, arange, clip, ...): examples appended
        module, _, short = name.rpartition(".")
        function = getattr(public[module], short) if module else public[name]
        if ">>>" not in (function.__doc__ or ""):
            written = inspect.cleandoc(function.__doc__ or "")
            function.__doc__ = f"{written}\n{parameters_section(name)}{examples_section(name)}"
        if module and function is not public.get(short):
            # not a name of the module infini_cupy, whose doctests pytest collects: here
            __test__[name] = function.__doc__
