"""Which loop an elementwise call runs: the one set of rules every device obeys.

NumPy 2's ufunc type resolution decides (``numpy.ufunc.resolve_dtypes``, NEP 50: Python
scalars are weak), as CuPy 14 follows it: the dtypes the call accepts, the dtype its inputs
are cast to (the *loop* dtype), and the result dtype. ``cpu`` (NumPy), ``emulator`` and
``cuda`` ask here first and then only compute, so a call refused on one device is refused on
all, and a result has the same dtype everywhere. The kernels take every operand in one
dtype: inputs of another dtype go through the cast kernel first (``sqrt(int8)`` computes in
float16, as NumPy's loop does).

Deliberate differences from the bare ufunc (each also what the standard or CuPy asks):

- ``floor``/``ceil``/``trunc``/``round`` keep integer dtypes; ``round`` of bool gives
  float16 (NumPy's ``round``); ``real``/``imag`` of a real dtype keep it;
- ``logical_and``/``or``/``xor``/``not`` run on bool (NumPy's typed loops give the same
  answer: truth values only);
- bfloat16 (ml_dtypes) resolves as float16 does and stays bfloat16 where float16 would
  come out, or float32 where float16 itself took part (``dtypes.result_type``'s rule);
- a mixed int64/uint64 comparison runs in float64 (NumPy has an exact mixed loop; ours
  compare exactly below 2**53).

``resolve`` is cached on its hashable arguments, so a call pays one dict lookup.

>>> import numpy as np
>>> resolve("sqrt", (np.dtype("int8"),))
Loop(dtype=dtype('float16'), result=dtype('float16'))
>>> resolve("add", (np.dtype("bool"), "int"))        # a weak Python int with bool
Loop(dtype=dtype('int64'), result=dtype('int64'))
>>> resolve("less", (np.dtype("uint8"), "float"))
Loop(dtype=dtype('float64'), result=dtype('bool'))
>>> resolve("subtract", (np.dtype("bool"), np.dtype("bool")))
Traceback (most recent call last):
TypeError: subtract() does not take bool and bool: NumPy's subtract has no loop for them (bool - bool: use bitwise_xor or logical_xor)
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from .. import dtypes
from .ops import OPS

# Python scalar kinds, as operand types: what resolve takes for a weak scalar.
SCALAR_KINDS = ("bool", "int", "float", "complex")
_WEAK = {"bool": np.dtype(np.bool_), "int": int, "float": float, "complex": complex}
_HALF = np.dtype(np.float16)
_BOOL = np.dtype(np.bool_)
_LOGICAL = frozenset({"logical_and", "logical_or", "logical_xor", "logical_not"})
_KEEP_INTEGERS = frozenset({"floor", "ceil", "trunc", "round"})
_HINTS = {
    "subtract": " (bool - bool: use bitwise_xor or logical_xor)",
    "negative": " (-bool: use bitwise_invert or logical_not)",
}


class Loop(NamedTuple):
    """The loop of a call: every input is cast to ``dtype``; the result has ``result``."""

    dtype: np.dtype
    result: np.dtype


def operand_type(value):
    """What :func:`resolve` takes for one operand (an array, a NumPy scalar, a dtype or a
    Python scalar): its dtype, or a Python scalar's kind."""
    kind = type(value)
    if kind is bool:
        return "bool"
    if kind is int:
        return "int"
    if kind is float:
        return "float"
    if kind is complex:
        return "complex"
    return value if isinstance(value, np.dtype) else value.dtype


def _describe(types) -> str:
    return " and ".join(t if isinstance(t, str) else str(t) for t in types)


def _refuse(name, types, why=""):
    raise TypeError(f"{name}() does not take {_describe(types)}: NumPy's "
                    f"{OPS[name].numpy_name} has no loop for them{why}")


def _numpy_loop(name: str, types: tuple, shown: tuple) -> tuple[np.dtype, ...]:
    """NumPy's loop (input dtypes..., result dtype) for operand types without bfloat16
    (``shown``: the caller's types, for the error)."""
    ufunc = np.rint if name == "round" else getattr(np, OPS[name].numpy_name)
    try:
        return ufunc.resolve_dtypes(tuple(_WEAK.get(t, t) for t in types) + (None,))
    except TypeError:  # UFuncTypeError and NumPy's bool-subtract message alike
        _refuse(name, shown, _HINTS.get(name, ""))


@functools.lru_cache(maxsize=4096)
def resolve(name: str, types: tuple) -> Loop:
    """The loop of elementwise function ``name`` on operands of ``types`` (each a supported
    ``numpy.dtype`` or a Python scalar kind of :data:`SCALAR_KINDS`), or the TypeError every
    device raises for them.

    >>> resolve("divide", (np.dtype("int16"), np.dtype("int16")))
    Loop(dtype=dtype('float64'), result=dtype('float64'))
    """
    if all(isinstance(t, str) for t in types):
        raise TypeError(f"{name}() needs at least one array argument, got only scalars")
    for t in types:
        if not isinstance(t, str):
            dtypes.as_dtype(t)
    if name == "clip":
        return _clip_loop(types)
    bf16 = dtypes.BFLOAT16
    has_bf16 = bf16 is not None and any(t is bf16 or (not isinstance(t, str) and t == bf16)
                                        for t in types)
    plain = tuple(_HALF if has_bf16 and not isinstance(t, str) and t == bf16 else t
                  for t in types)
    if name in ("real", "imag"):
        (t,) = plain
        loop = Loop(t, dtypes.real_dtype(t))
    elif name == "round" and plain[0].kind in "iu":
        loop = Loop(plain[0], plain[0])
    else:
        *inputs, result = _numpy_loop(name, plain, types)
        dtype = inputs[0]
        if any(d != dtype for d in inputs):  # NumPy's exact mixed loops (int64 with uint64)
            dtype = dtypes.promote_types(*inputs)
        if name in _KEEP_INTEGERS and plain[0].kind in "iub" and name != "round":
            dtype = result = plain[0]
        if name in _LOGICAL:
            dtype = _BOOL
        loop = Loop(dtype, result)
    if has_bf16:
        half_in = any(not isinstance(t, str) and t == _HALF for t in types)
        swap = np.dtype(np.float32) if half_in else bf16
        loop = Loop(*(swap if d == _HALF else d for d in loop))
    return loop


def _clip_loop(types) -> Loop:
    """clip computes in x's dtype (its bounds are made exact for it: see ``clip``)."""
    x = types[0]
    if isinstance(x, str):
        raise TypeError("clip() needs x to be an array")
    dtypes.check_group("clip", "real numeric", x,
                       *(t for t in types[1:] if not isinstance(t, str)))
    return Loop(x, x)


def resolve_call(name: str, args) -> Loop:
    """:func:`resolve` for actual operands (arrays, NumPy scalars and Python scalars)."""
    return resolve(name, tuple(map(operand_type, args)))


@functools.lru_cache(maxsize=None)
def loop_dtypes(name: str) -> tuple[np.dtype, ...]:
    """Every loop dtype :func:`resolve` can give for ``name``: the kernel instantiations.

    NumPy's loops are homogeneous in the input dtype (mixed operands are promoted to one of
    them first), so the loops of operands of one dtype are all the loops there are.
    """
    arity = OPS[name].arity
    found = []
    for dt in dtypes.ALL_DTYPES:
        try:
            loop = resolve(name, (dt,) * (1 if name == "clip" else arity))
        except TypeError:
            continue
        if loop.dtype not in found:
            found.append(loop.dtype)
    return tuple(d for d in dtypes.ALL_DTYPES if d in found)


def result_of_loop(name: str, dtype: np.dtype) -> np.dtype:
    """The result dtype of ``name``'s loop on ``dtype``."""
    arity = 1 if name == "clip" else OPS[name].arity
    return resolve(name, (dtype,) * arity).result
