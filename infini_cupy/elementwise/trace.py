"""Tracing a function of arrays into one fused expression (``infini_cupy.fuse``): stand-ins
for the arguments record every elementwise function, operator, ``where``, ``astype`` and
``clip`` applied to them, with the standard's promotion at every node, as the C++ type of
``kernels_src/fusion.cuh``.

A node is exactly one unfused call: ``ic::Expr<Op, Tout, Tin, Arg...>`` computes what
``ew_contig<Op, Tout, Tin>`` computes, on arguments cast to ``Tin`` as the cast kernel casts
them (:func:`.launcher.resolve` decides ``Tin`` and ``Tout`` as for the call itself). Scalars,
the function's own and the constants it uses, go by value in slots. What cannot be fused
(a reduction, indexing, ``bool(x)``, reading ``x.shape``) raises :class:`Untraceable`
naming the call.

>>> import numpy as np
>>> fx = trace_function(lambda x, m: (x - m) * 2.0, (("array", np.dtype("float32"), 2),
...                                                  ("array", np.dtype("float32"), 1)))
>>> fx.fused_type
'ic::Fused<ic::Expr<ic::OpMultiply, float, float, ic::Expr<ic::OpSubtract, float, float, ic::In<0>, ic::In<1>>, ic::Scalar<0, float>>>'
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass

import numpy as np

from .. import dtypes
from .launcher import check_clip_bounds, fold_out_of_range_comparison, resolve, scalar_clip_bound
from .numpy_casts import warn_if_complex_to_real
from .ops import CAST_FUNCTOR, OPS
from .trace_scalars import (REPRESENTATIVE, ReadsNoArray, ScalarArg, Untraceable, argument_slot,
                            host_scalar)

MAX_NODES = 256  # a tree larger than this (reused subexpressions are copied) is not fused


class _Builder:
    """What one trace collects: scalar slots (constants and per-call arguments)."""

    def __init__(self):
        self.slots: list[tuple] = []  # (dtype, constant value or None, arg index, converter)

    def constant(self, value, dtype) -> tuple:
        self.slots.append((dtype, value, None, None))
        return ("scalar", len(self.slots) - 1, dtypes.ctype(dtype))

    def argument(self, index, dtype, converter) -> tuple:
        self.slots.append((dtype, None, index, converter))
        return ("scalar", len(self.slots) - 1, dtypes.ctype(dtype))


class _Stand:
    """What :func:`.launcher.resolve` reads of an array: dtype and shape."""

    def __init__(self, dtype, ndim):
        self.dtype, self.shape = dtype, (1,) * ndim


class Traced:
    """An array argument, or an expression of them, while the function is traced."""

    __slots__ = ("builder", "dtype", "ndim", "node")
    # NumPy's ufuncs: namespace/numpy_protocols.py's traced_ufunc once the namespace is
    # imported (our functions, in NumPy's loop); None until then (ndarray + Traced: __radd__)
    __array_ufunc__ = None
    __hash__ = None

    def __init__(self, builder, dtype, ndim, node):
        self.builder, self.dtype, self.ndim, self.node = builder, dtype, ndim, node

    def __array_namespace__(self, api_version=None):
        import infini_cupy

        return infini_cupy

    @property
    def shape(self):
        raise Untraceable("x.shape: shapes are not known to the trace (only ndim)")

    @property
    def size(self):
        raise Untraceable("x.size: shapes are not known to the trace (only ndim)")

    @property
    def device(self):
        raise Untraceable("x.device is not traced")

    @property
    def T(self):
        raise Untraceable("x.T: a transpose is not elementwise")

    mT = T

    def __getitem__(self, key):
        raise Untraceable("x[...]: indexing is not elementwise")

    def __setitem__(self, key, value):
        raise Untraceable("x[...] = v: assignment is not elementwise")

    def __bool__(self):
        raise Untraceable("bool(x): control flow on array values")

    def __float__(self):
        raise Untraceable("float(x): a value of the array")

    __int__ = __index__ = __complex__ = __float__

    def __len__(self):
        raise Untraceable("len(x): shapes are not known to the trace")

    def __iter__(self):
        raise Untraceable("iter(x): iterating is not elementwise")

    def __matmul__(self, other):
        raise Untraceable("x @ y: matmul is not elementwise")

    __rmatmul__ = __matmul__

    def __iadd__(self, other):  # (without it Python would rebind x to x + y, and x's
        # memory, an argument's, would never be written)
        raise Untraceable("x += y (and the other in-place operators): a write into x's memory")

    __isub__ = __imul__ = __itruediv__ = __ifloordiv__ = __imod__ = __ipow__ = __iadd__
    __iand__ = __ior__ = __ixor__ = __ilshift__ = __irshift__ = __imatmul__ = __iadd__

    def __abs__(self):
        return op_node("abs", (self,))

    def __neg__(self):
        return op_node("negative", (self,))

    def __pos__(self):
        return op_node("positive", (self,))

    def __invert__(self):
        return op_node("bitwise_invert", (self,))

    # Arrays (and ndarrays) have these methods, so code written for them calls them: traced
    # as Array.astype / Array.round compute them (the casting check first, as the method's).
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True, *,
               device=None):
        dtypes.check_astype_method(self.dtype, dtype, order, casting)
        return astype_node(self, dtype, copy, device)

    def round(self, decimals=0, out=None):
        if operator.index(decimals) != 0 or out is not None:
            raise Untraceable("x.round(decimals) or out=: not one elementwise call")
        return op_node("round", (self,))


def _operator(name, reflected=False):
    if reflected:
        return lambda self, other: op_node(name, (other, self))
    return lambda self, other: op_node(name, (self, other))


def _scalar_operator(name, python, reflected=False):
    """An operator of :class:`ScalarArg`: Python's arithmetic with another scalar argument or
    a Python scalar (as unfused), a node with an array."""
    def method(self, other):
        args = (other, self) if reflected else (self, other)
        if type(other) is ScalarArg or type(other) in REPRESENTATIVE:
            return host_scalar(python, args)
        return op_node(name, args)

    return method


for _dunder, _name in (("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                       ("truediv", "divide"), ("floordiv", "floor_divide"), ("mod", "remainder"),
                       ("pow", "pow"), ("and", "bitwise_and"), ("or", "bitwise_or"),
                       ("xor", "bitwise_xor"), ("lshift", "bitwise_left_shift"),
                       ("rshift", "bitwise_right_shift")):
    setattr(Traced, f"__{_dunder}__", _operator(_name))
    setattr(Traced, f"__r{_dunder}__", _operator(_name, reflected=True))
    _python = getattr(operator, f"{_dunder}_" if _dunder in ("and", "or") else _dunder)
    setattr(ScalarArg, f"__{_dunder}__", _scalar_operator(_name, _python))
    setattr(ScalarArg, f"__r{_dunder}__", _scalar_operator(_name, _python, reflected=True))
for _dunder, _name in (("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                       ("ge", "greater_equal"), ("eq", "equal"), ("ne", "not_equal")):
    setattr(Traced, f"__{_dunder}__", _operator(_name))
del _dunder, _name, _python

TRACED_TYPES = (Traced, ScalarArg)


def is_traced(*values) -> bool:
    return any(type(v) in TRACED_TYPES for v in values)


# ---------------------------------------------------------------- nodes
def _builder_of(name, args):
    builders = {a.builder for a in args if type(a) in TRACED_TYPES}
    if len(builders) != 1:
        raise Untraceable(f"{name}(): arguments of two traces")
    if not any(type(a) is Traced for a in args):
        raise Untraceable(f"{name}(): only scalar arguments (computed on the host, per call)")
    for a in args:
        if type(a) not in TRACED_TYPES and not (dtypes.is_python_scalar(a) or isinstance(a, np.generic)):
            raise Untraceable(f"{name}(): an operand of type {type(a).__name__} that is not an "
                              "argument of the fused function (pass arrays as arguments to "
                              "fuse them)")
    return builders.pop()


def _stand_in(a):
    if type(a) is Traced:
        return _Stand(a.dtype, a.ndim)
    if type(a) is ScalarArg:
        return REPRESENTATIVE[a.kind]
    return a


def _scalar_converter(dtype):
    """Per call: a scalar argument's value for a node computing in ``dtype``, as the unfused
    call converts it (the common case, a value inside the dtype's range, without checks)."""
    make, bounds = dtypes.kernel_scalar(dtype), dtypes.plain_scalar_bounds(dtype)

    def convert(value):
        if bounds is not None and type(value) is not complex and bounds[0] <= value <= bounds[1]:
            return make(value)
        return dtypes.scalar_value(value, dtype)

    return convert


def _leaf(builder, a, dtype, converter=None) -> tuple:
    """The node of argument ``a`` of a node computing in ``dtype``."""
    if type(a) is Traced:
        return a.node
    if type(a) is ScalarArg:
        return argument_slot(builder, a, dtype, converter or _scalar_converter(dtype))
    if isinstance(a, np.generic):
        with np.errstate(all="ignore"):  # NumPy's cast, as the unfused call's
            return builder.constant(a.astype(dtype), dtype)
    return builder.constant(dtypes.scalar_value(a, dtype), dtype)


def _ndim(args) -> int:
    return max(a.ndim for a in args if type(a) is Traced)


def op_node(name: str, args) -> Traced:
    """``name(*args)`` (an op-table function) as a node, promoted as the unfused call."""
    op = OPS[name]
    builder = _builder_of(name, args)
    folded = fold_out_of_range_comparison(name, args, is_operand=_is_traced)
    if folded is not None:  # ``uint8_x > -1``: NumPy 2's answer, as the unfused call's
        op, args = folded
    dtype_in, dtype_out, _ = resolve(op, tuple(_stand_in(a) for a in args))
    children = tuple(_leaf(builder, a, dtype_in) for a in args)
    node = ("op", op.functor, dtypes.ctype(dtype_out), dtypes.ctype(dtype_in), children)
    return Traced(builder, dtype_out, _ndim(args), node)


def _is_traced(value) -> bool:
    return type(value) is Traced


def where_node(condition, x1, x2) -> Traced:
    builder = _builder_of("where", (condition, x1, x2))
    if type(condition) is not Traced or condition.dtype != np.bool_:
        raise Untraceable("where(): the condition must be a traced bool array")
    # x1 and x2 both scalars: the dtype is theirs alone (where(c, 1.0, 2) is float64), the
    # shape the condition's
    dtype = dtypes.result_type(*(_stand_in(a) for a in (x1, x2)))
    node = ("where", dtypes.ctype(dtype), condition.node, _leaf(builder, x1, dtype),
            _leaf(builder, x2, dtype))
    return Traced(builder, dtype, _ndim((condition, x1, x2)), node)


def traced_call(name: str, args, kwargs) -> Traced:
    """A delegated function of the namespace called on traced arrays: ``where`` is a node;
    the others (reductions, linear algebra, creation, manipulation) are not elementwise."""
    if name == "where" and not kwargs:
        return where_node(*args)
    raise Untraceable(f"{name}(): not an elementwise function")


def astype_node(x, dtype, copy=True, device=None) -> Traced:
    if type(x) is not Traced:
        raise Untraceable("astype(): x must be a traced array")
    if device is not None:
        raise Untraceable("astype(device=...): a move between devices")
    dtype = dtypes.as_dtype(dtype)
    if dtype == x.dtype:
        return x
    warn_if_complex_to_real(x.dtype, dtype)  # once, at the trace (unfused: every call)
    node = ("op", CAST_FUNCTOR, dtypes.ctype(dtype), dtypes.ctype(x.dtype), (x.node,))
    return Traced(x.builder, dtype, x.ndim, node)


def clip_node(x, lo=None, hi=None) -> Traced:
    """``clip`` as the unfused call clamps: bounds exact for x's dtype (see ``xp.clip``)."""
    if type(x) is not Traced:
        raise Untraceable("clip(): x must be a traced array")
    op = OPS["clip"]
    dt = x.dtype
    dtypes.check_group("clip", op.group, dt, *(b.dtype for b in (lo, hi) if type(b) is Traced))
    check_clip_bounds(dt, tuple(_stand_in(b) if type(b) is ScalarArg else b for b in (lo, hi)))
    children = [x.node]
    for bound, is_min in ((lo, True), (hi, False)):
        if type(bound) is Traced:
            if bound.dtype != dt and dt.kind in "iu" and not np.can_cast(bound.dtype, dt):
                raise Untraceable(f"clip(): a bound of dtype {bound.dtype} wider than x's {dt}")
            children.append(bound.node)
        elif type(bound) is ScalarArg:
            children.append(argument_slot(x.builder, bound, dt, functools.partial(
                _clip_argument, dt, is_min)))
        else:
            if isinstance(bound, np.generic):
                bound = bound.item()
            children.append(x.builder.constant(
                dtypes.scalar_value(scalar_clip_bound(dt, bound, is_min), dt), dt))
    ndim = _ndim([x] + [b for b in (lo, hi) if type(b) is Traced])
    node = ("op", op.functor, dtypes.ctype(dt), dtypes.ctype(dt), tuple(children))
    return Traced(x.builder, dt, ndim, node)


def _clip_argument(dt, is_min, value):
    return dtypes.scalar_value(scalar_clip_bound(dt, value, is_min), dt)


# ---------------------------------------------------------------- the traced function
@dataclass(frozen=True)
class FusedExpression:
    """A traced function: one kernel's expression type and how to fill its operands.

    inputs: the function's argument index of each kernel input ``ic::In<K>``.
    output_inputs: per output, the kernel inputs it reads (its broadcast shape).
    slots: (dtype, constant value or None, argument index, converter) per ``ic::Scalar<J>``,
        the ``kernel_slots`` the kernel reads first, then those of calls no output reads (their
        arguments still converted per call: a value the unfused call refuses is refused).
    returns: "one", "tuple" or "list": how the function returned its arrays.
    """

    fused_type: str
    inputs: tuple
    input_dtypes: tuple
    output_dtypes: tuple
    output_inputs: tuple
    slots: tuple
    returns: str
    kernel_slots: int

    @property
    def operand_ctypes(self) -> tuple:
        return tuple(dtypes.ctype(d) for d in self.output_dtypes + self.input_dtypes)


def _cpp(node, inputs, slots) -> str:
    kind = node[0]
    if kind == "in":
        return f"ic::In<{inputs[node[1]]}>"
    if kind == "scalar":
        return f"ic::Scalar<{slots[node[1]]}, {node[2]}>"
    if kind == "where":
        return f"ic::Where<{node[1]}, {', '.join(_cpp(n, inputs, slots) for n in node[2:])}>"
    _, functor, out_ctype, in_ctype, children = node
    return (f"ic::Expr<{functor}, {out_ctype}, {in_ctype}, "
            f"{', '.join(_cpp(n, inputs, slots) for n in children)}>")


def _children(node) -> tuple:
    return node[4] if node[0] == "op" else node[2:] if node[0] == "where" else ()


def _walk(node):
    yield node
    for child in _children(node):
        yield from _walk(child)


def _within_nodes(roots, limit: int) -> bool:
    """Whether the trees of ``roots`` (subexpressions reused counted each time) have at most
    ``limit`` nodes, found by counting no further than that: ``a = a + a`` twenty times over
    is a tree of two million nodes in a trace of twenty."""
    stack, count = list(roots), 0
    while stack:
        count += 1
        if count > limit:
            return False
        stack.extend(_children(stack.pop()))
    return True


def trace_function(function, signature, keywords=()) -> FusedExpression:
    """Trace ``function`` for ``signature``: per argument ("array", dtype, ndim),
    ("python", type), ("numpy", dtype) or ("static", None or a string); the last ``len(keywords)`` arguments are passed by
    those keywords. Raises :class:`Untraceable`, or what the function raised."""
    builder = _Builder()
    args = []
    for k, spec in enumerate(signature):
        if spec[0] == "array":
            args.append(Traced(builder, spec[1], spec[2], ("in", k)))
        elif spec[0] == "python":
            args.append(ScalarArg(builder, k, spec[1]))
        elif spec[0] == "static":  # None or a string: the same in every call of the trace
            args.append(spec[1])
        else:  # a NumPy scalar: typed like a 0-d array, passed by value
            args.append(Traced(builder, spec[1], 0, builder.argument(k, spec[1], _as_bytes)))
    positional = len(args) - len(keywords)
    result = function(*args[:positional], **dict(zip(keywords, args[positional:])))
    returns = "tuple" if type(result) is tuple else "list" if type(result) is list else "one"
    outputs = list(result) if returns != "one" else [result]
    if outputs and all(type(r) is ScalarArg or dtypes.is_python_scalar(r) for r in outputs):
        raise ReadsNoArray("the outputs are scalars")  # ``return alpha * 2``: unfused, silently
    for r in outputs:
        if type(r) is not Traced:
            raise Untraceable(f"the function returns a {type(r).__name__}, not arrays")
        if r.node[0] == "in":  # the argument itself, as the function called gives it
            raise Untraceable("the function returns an array argument as it is")
    if not _within_nodes([r.node for r in outputs], MAX_NODES):
        raise Untraceable(f"the expression has more than {MAX_NODES} nodes (reused "
                          "subexpressions are copied)")
    nodes = [list(_walk(r.node)) for r in outputs]
    used = sorted({n[1] for tree in nodes for n in tree if n[0] == "in"})
    if not used:
        raise ReadsNoArray("the outputs read no array argument")
    position = {k: i for i, k in enumerate(used)}
    # the kernel's ic::Scalars holds the slots the outputs read (1 + its highest J), numbered
    # first: a call no output reads (``xp.where(c, s, s)`` left unused) has slots too
    read = sorted({n[1] for tree in nodes for n in tree if n[0] == "scalar"})
    order = read + [j for j in range(len(builder.slots)) if j not in set(read)]
    slot_of = {j: i for i, j in enumerate(order)}
    fused = f"ic::Fused<{', '.join(_cpp(r.node, position, slot_of) for r in outputs)}>"
    output_inputs = tuple(tuple(sorted({position[n[1]] for n in tree if n[0] == "in"}))
                          for tree in nodes)
    return FusedExpression(fused, tuple(used), tuple(signature[k][1] for k in used),
                           tuple(r.dtype for r in outputs), output_inputs,
                           tuple(builder.slots[j] for j in order), returns, len(read))


def stopping_call(error: BaseException, function) -> str:
    """The call in ``function`` whose error stopped the trace, with its line, and the error."""
    tb, called, where = error.__traceback__, None, None
    code = getattr(function, "__code__", None)  # None: a ufunc, a partial, a callable object
    while tb is not None:
        if code is not None and tb.tb_frame.f_code is code and tb.tb_next is not None:
            where = f"line {tb.tb_lineno}"
            called = tb.tb_next.tb_frame.f_code.co_name
        tb = tb.tb_next
    what = f"{type(error).__name__}: {error}"
    return f"{called}() at {where} raised {what}" if called else what


def _as_bytes(value):
    return value  # a NumPy scalar of its own dtype: its bytes are the kernel's value


def scalar_bytes(value) -> bytes:
    return np.asarray(value).tobytes()


__all__ = ["Traced", "ScalarArg", "Untraceable", "ReadsNoArray", "trace_function", "op_node",
           "where_node", "astype_node", "clip_node", "is_traced", "traced_call", "stopping_call"]
