"""``infini_cupy.lazy``: elementwise calls on Arrays deferred, and run as one fused kernel per
chain when their value is needed.

A call inside ``lazy()`` makes every check of the eager call (devices, dtypes, broadcasting,
scalar values), so it raises what the eager call raises, where it raises it; only the kernel
waits. The deferred Array knows its dtype, shape and device; its pending expression
(:mod:`.pending`) runs when the value is read. ``out=`` and in-place operators are writes:
they evaluate everything pending, then run at once.
"""

from __future__ import annotations

import contextlib
import itertools

import numpy as np

from .. import config, dtypes
from ..elementwise.launcher import resolve
from ..elementwise.ops import OPS
from . import pending
from .lazy_tape import (MAX_INPUTS, MAX_NODES, MAX_SCALARS, PendingExpression, leaf_ref,
                        step_ref)
from .array import Array, check_same_device, settle

_PYTHON_SCALARS = frozenset({bool, int, float, complex})
_NUMPY_SCALARS = frozenset(dt.type for dt in dtypes.ALL_DTYPES)
DEFERRED_SCALARS = _PYTHON_SCALARS | _NUMPY_SCALARS  # the scalars a deferred call takes
_COMPARISONS = frozenset({"less", "less_equal", "greater", "greater_equal", "equal", "not_equal"})
KERNEL_BACKENDS = ("emulate", "cuda")
# (name, per operand: an Array's layout id, a pending result's kind, or a scalar's type) ->
# what _resolve kept: a signature seen before skips the resolution (its checks passed then)
_resolved: dict = {}
_MAX_RESOLVED = 4096
_kinds: dict = {}  # (dtype, shape, backend) of a pending result -> its kind (result_kind)
_next_kind = itertools.count(1).__next__
_new = object.__new__


class lazy(contextlib.ContextDecorator):
    """Defer elementwise calls on Arrays inside the ``with`` block (or the function it
    decorates); one kernel per chain.

    Inside the block, the elementwise functions, operators, casts (``astype``), ``clip``
    by scalars and ``where`` by a bool condition on Arrays of the ``emulator`` and ``cuda``
    devices return deferred Arrays: every check runs at the call (an error is raised there,
    as the eager call raises it), the kernel later. A deferred Array is computed when its
    value is needed (its data read, a non-elementwise function, a write
    into any Array, the end of the block): every pending Array still referenced then runs
    in one fused kernel per device and shape (:func:`fuse`'s kernels, bit-identical to the
    eager calls), and intermediates nothing references are never allocated. Arrays on the
    ``cpu`` device run eagerly. ``$INFINI_CUPY_LAZY=1`` turns it on everywhere. See the
    user guide's page on lazy evaluation.

    Parameters
    ----------
    enabled : bool, default True
        False runs the block's calls eagerly (inside an enclosing ``lazy()`` block too).

    Raises
    ------
    TypeError, ValueError, OverflowError
        At a call in the block, what its eager call raises (dtypes, shapes, devices, scalar
        values), never later at the evaluation.

    See Also
    --------
    fuse : one kernel for a function of arrays, traced once per signature.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> from infini_cupy.runtime.launch import recording
    >>> x = xp.asarray([[1.0, 3.0], [2.0, 6.0]], device="emulator")
    >>> mu, var = xp.mean(x, axis=1, keepdims=True), xp.var(x, axis=1, keepdims=True)
    >>> with recording() as launches, xp.lazy():
    ...     y = (x - mu) / xp.sqrt(var) * 2.0 + 1.0  # deferred: no kernel yet
    ...     y.shape, len(launches)
    ((2, 2), 0)
    >>> len(launches), y  # the end of the block ran the chain: one kernel
    (1, Array([[-1.,  3.],
           [-1.,  3.]], device='emulator'))
    """

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self._tokens = []  # one per entry: a decorated function may recurse

    def __enter__(self) -> None:
        self._tokens.append(config.enter_lazy(self.enabled))

    def __exit__(self, kind, value, traceback) -> bool:
        config.exit_lazy(self._tokens.pop())
        if kind is None and pending.expressions:  # on an exception: it runs when read
            pending.evaluate_all("end of lazy()")
        return False


def defer(name: str, args) -> Array | None:
    """A deferred Array for ``name(*args)`` (an op-table function; Arrays, Python and NumPy
    scalars, an Array among them), after every check of the eager call; None where the
    call runs now (the cpu device, a native array among the arguments, a comparison whose
    answer NumPy decides from a scalar out of range)."""
    result = defer_seen(name, args)
    if result is not None:
        return result
    backend = device = None  # device: a GPU's index on cuda
    key = [name]
    operands = []  # a deferred Array's pending expression, else the argument
    nodes, inputs, scalars = 1, 0, 0
    for a in args:
        kind = type(a)
        if kind is Array:
            b = a._b
            if backend is None:
                backend = b
            elif b != backend:
                check_same_device(backend, b)  # the eager call's ValueError
            p = a._p
            if b == "cuda":
                on = p.device if p is not None else a._a.data.device_id
                if device is None:
                    device = on
                elif on != device:
                    return None  # arrays on several GPUs: the eager call says what happens
            if p is not None:
                key.append(p.kind)
                operands.append(p)
                nodes += p.nodes
                inputs += p.inputs
                scalars += p.scalars
                continue
            key.append(a._k or settle(a))
            inputs += 1
        elif kind in DEFERRED_SCALARS:
            key.append(kind)
            scalars += 1
        else:
            return None
        operands.append(a)
        nodes += 1
    if backend not in KERNEL_BACKENDS:
        return None
    key = tuple(key)
    known = _resolved.get(key)
    if known is None:
        stands = [_stand(a) for a in args]
        if name in _COMPARISONS and len(args) == 2 and _out_of_range(stands):
            return None
        known = _resolve(name, stands, key, backend)
    dtype_out, shape, kind, bounds, ints, compared, dtype_in = known
    for k, dtype in compared:  # an int out of the array's range: the eager call answers
        if not dtypes.scalar_fits(args[k], dtype):
            return None
    for k in ints:  # only an int can fail its conversion (OverflowError as eager)
        v = args[k]
        if not bounds[0] <= v <= bounds[1]:
            dtypes.scalar_value(v, dtype_in)
    operands, nodes, inputs, scalars = within_limits(name, args, operands, nodes, inputs,
                                                     scalars)
    return deferred_array(PendingExpression(name, operands, dtype_out, shape, backend, device,
                                            nodes, inputs, scalars, kind), known)


def defer_seen(name, args, constants=()) -> Array | None:
    """``defer``'s answer where the tape's chain state knows this call (the same call on
    operands of the same layouts, dtypes and scalar types, after the same steps): what its
    first call resolved, with the checks the key leaves open (an int's value, the GPU);
    None for the full way. ``constants``: the call's arguments that are part of the kernel
    (``astype``'s dtype). ``runtime/lazy_calls.c`` takes the same steps for unary and binary
    calls (the compiled ``hot_calls.unary``/``binary`` inside ``lazy()``)."""
    with pending.lock:
        tape = pending.current_tape()
        state = tape.state
        if state is None:
            return None
        leaf_of, n = tape.leaf_of, state.leaves
        key, operands, added, fresh = [name, *constants], [], [], []  # fresh: (new leaf, index)
        for a in args:
            kind = type(a)
            if kind is Array:
                p = a._p
                if p is not None:
                    if p.tape is not tape:
                        return None
                    key.append(step_ref(p.index))
                    operands.append(p)
                    continue
                k = leaf_of.get(id(a))
                if k is None:
                    for b, j in fresh:  # (x * x: one leaf)
                        if b is a:
                            k = j
                if k is None:
                    key.append(a._k or settle(a))
                    fresh.append((a, n))
                    added.append(a)
                    n += 1
                else:
                    key.append(leaf_ref(k))
            elif kind in DEFERRED_SCALARS:
                key.append(kind)
                added.append(a)
                n += 1
            else:
                return None
            operands.append(a)
        known = state.next.get(tuple(key))
        if known is None or known[1] is None:
            return None
        after, (dtype_out, shape, kind, bounds, ints, compared, dtype_in), *size = known
        for k, dtype in compared:
            if not dtypes.scalar_fits(args[k], dtype):
                return None
        for k in ints:
            v = args[k]
            if not bounds[0] <= v <= bounds[1]:
                dtypes.scalar_value(v, dtype_in)
        backend, device = after.backend, tape.device
        if backend == "cuda":  # the layout ids name no GPU
            for a, _ in fresh:
                on = a._a.data.device_id
                if device is None:
                    device = on
                elif on != device:
                    return None
        expression = PendingExpression(name, tuple(operands), dtype_out, shape, backend, device,
                                       *size, kind, constants)
        tape.write_seen(expression, state, after, added, fresh, device)
        result = _new(Array)
        result._b = backend
        result._p = expression
        result._k = None
        pending.register_seen(result)
        return result


def within_limits(name, args, operands, nodes, inputs, scalars) -> tuple:
    """(operands, nodes, inputs, scalars) of a call: as given, or past the kernel's limits
    the arguments themselves once everything pending is evaluated (a new chain starts)."""
    if (nodes > MAX_NODES or inputs > MAX_INPUTS
            or scalars > MAX_SCALARS):
        pending.evaluate_all(f"{name}(): expression past the kernel's limits")
        return (tuple(args),
                *expression_size([a._a if type(a) is Array else a for a in args]))
    return tuple(operands), nodes, inputs, scalars


def _stand(a):
    """What stands for an argument in the resolution: a deferred Array's pending
    expression, an Array's native array, a scalar itself."""
    if type(a) is Array:
        p = a._p
        return p if p is not None else a._a
    return a


def _resolve(name, stands, key, backend) -> tuple:
    """What ``defer`` keeps per signature (``key``: the name, per operand an Array's layout
    id, a pending expression's kind or a scalar's type), after the eager call's checks of
    dtypes and broadcasting (its errors raised here): the result's dtype, shape and kind,
    the dtype the kernel computes in's scalar bounds, the positions of Python ints (their
    values checked per call) and the (position, dtype) of ints a comparison may find out
    of the array's range."""
    dtype_in, dtype_out, shape = resolve(OPS[name], tuple(stands))
    ints = tuple(k for k, s in enumerate(stands) if type(s) is int)
    bounds = dtypes.plain_scalar_bounds(dtype_in) or (0, -1)  # complex: always converted
    compared = ()
    if name in _COMPARISONS and len(stands) == 2:
        compared = tuple((k, stands[1 - k].dtype) for k in ints
                         if type(stands[1 - k]) not in _PYTHON_SCALARS
                         and stands[1 - k].dtype.kind in "iu")
    known = (dtype_out, shape, result_kind(dtype_out, shape, backend), bounds, ints, compared,
             dtype_in)
    if len(_resolved) >= _MAX_RESOLVED:
        _resolved.clear()
    _resolved[key] = known
    return known


def fixed_by_key(dtype, shape, backend) -> tuple:
    """What ``defer_seen`` keeps of a call whose key fixes all its checks (operands of
    these layouts and dtypes, no scalar whose value matters): the result's dtype, shape and
    kind, and no value to check per call."""
    return dtype, shape, result_kind(dtype, shape, backend), (0, -1), (), (), dtype


def result_kind(dtype, shape, backend) -> int:
    """The interned id of a pending result's dtype, shape and backend: negative, so that a
    signature's key never takes it for an Array's layout id."""
    key = (dtype, shape, backend)
    kind = _kinds.get(key)
    if kind is None:
        if len(_kinds) >= _MAX_RESOLVED:
            _kinds.clear()  # ids are never reused: a signature keyed by an old one stays right
        kind = _kinds[key] = -_next_kind()
    return kind


def deferred_array(expression, resolved=None) -> Array:
    """A deferred Array holding ``expression``: its ``_a`` unset until evaluated
    (``resolved``: what ``defer`` resolved of its call, for its repeats)."""
    result = _new(Array)
    result._b = expression.backend
    result._p = expression
    result._k = None  # settled on the hot path once evaluated
    pending.register(expression, result, resolved)
    return result


def expression_size(stands) -> tuple:
    """(nodes, inputs, scalars) of a call on these operands, uses counted each."""
    nodes, inputs, scalars = 1, 0, 0
    for s in stands:
        if type(s) is PendingExpression:
            nodes += s.nodes
            inputs += s.inputs
            scalars += s.scalars
        elif type(s) in _PYTHON_SCALARS or isinstance(s, np.generic) or s is None:
            nodes += 1  # (a None bound of clip: a constant slot of the kernel)
            scalars += 1
        else:
            nodes += 1
            inputs += 1
    return nodes, inputs, scalars


def _out_of_range(stands) -> bool:
    """An integer array compared with a Python int outside its range: the eager call answers
    without the comparison (``launcher.fold_out_of_range_comparison``)."""
    for k in (0, 1):
        value, array = stands[1 - k], stands[k]
        if (type(value) is int and type(array) not in _PYTHON_SCALARS
                and array.dtype.kind in "iu" and not dtypes.scalar_fits(value, array.dtype)):
            return True
    return False
