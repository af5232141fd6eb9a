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
import functools
import itertools

import numpy as np

from .. import config, dtypes
from ..elementwise.launcher import check_clip_bounds, resolve, scalar_clip_bound
from ..elementwise.ops import OPS
from . import pending
from .array import Array, check_same_device, settle

_PYTHON_SCALARS = frozenset({bool, int, float, complex})
_NUMPY_SCALARS = frozenset(dt.type for dt in dtypes.ALL_DTYPES)
# casts the trace makes exactly as the cast kernel (bfloat16 goes through ml_dtypes eagerly)
_CAST_DTYPES = frozenset(dt for dt in dtypes.ALL_DTYPES if not dtypes.is_bfloat16(dt))
_CLIP_BOUNDS = frozenset({type(None), bool, int, float})  # complex: the eager TypeError
_WHERE_SCALARS = frozenset({bool, int, float})
_COMPARISONS = frozenset({"less", "less_equal", "greater", "greater_equal", "equal", "not_equal"})
_KERNEL_BACKENDS = ("emulate", "cuda")
# (name, per operand: an Array's layout id, a pending result's kind, or a scalar's type) ->
# what _resolve kept: a signature seen before skips the resolution (its checks passed then)
_resolved: dict = {}
_MAX_RESOLVED = 4096
_kinds: dict = {}  # (dtype, shape, backend) of a pending result -> its kind (_kind)
_next_kind = itertools.count(1).__next__
_new = object.__new__


@contextlib.contextmanager
def lazy(enabled: bool = True):
    """Defer elementwise calls on Arrays inside the ``with`` block; one kernel per chain.

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

    Yields
    ------
    None

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
    token = config.enter_lazy(enabled)
    try:
        yield
    finally:
        config.exit_lazy(token)
    if pending.expressions:  # not on an exception: what is pending runs when read
        pending.evaluate_all("end of lazy()")


def defer(name: str, args) -> Array | None:
    """A deferred Array for ``name(*args)`` (an op-table function; Arrays, Python and NumPy
    scalars, an Array among them), after every check of the eager call; None where the
    call runs now (the cpu device, a native array among the arguments, a comparison whose
    answer NumPy decides from a scalar out of range)."""
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
        elif kind in _PYTHON_SCALARS or kind in _NUMPY_SCALARS:
            key.append(kind)
            scalars += 1
        else:
            return None
        operands.append(a)
        nodes += 1
    if backend not in _KERNEL_BACKENDS:
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
    operands, nodes, inputs, scalars = _within_limits(name, args, operands, nodes, inputs,
                                                      scalars)
    return _deferred(pending.PendingExpression(name, operands, dtype_out, shape, backend,
                                               device, nodes, inputs, scalars, kind))


def _within_limits(name, args, operands, nodes, inputs, scalars) -> tuple:
    """(operands, nodes, inputs, scalars) of a call: as given, or past the kernel's limits
    the arguments themselves once everything pending is evaluated (a new chain starts)."""
    if (nodes > pending.MAX_NODES or inputs > pending.MAX_INPUTS
            or scalars > pending.MAX_SCALARS):
        pending.evaluate_all(f"{name}(): expression past the kernel's limits")
        return (tuple(args),
                *_size([a._a if type(a) is Array else a for a in args]))
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
    known = (dtype_out, shape, _kind(dtype_out, shape, backend), bounds, ints, compared,
             dtype_in)
    if len(_resolved) >= _MAX_RESOLVED:
        _resolved.clear()
    _resolved[key] = known
    return known


def _kind(dtype, shape, backend) -> int:
    """The interned id of a pending result's dtype, shape and backend: negative, so that a
    signature's key never takes it for an Array's layout id."""
    key = (dtype, shape, backend)
    kind = _kinds.get(key)
    if kind is None:
        if len(_kinds) >= _MAX_RESOLVED:
            _kinds.clear()  # ids are never reused: a signature keyed by an old one stays right
        kind = _kinds[key] = -_next_kind()
    return kind


def deferring_astype(astype):
    """The public ``astype``, deferred inside ``lazy()`` for a cast between two of the
    kernels' dtypes (the eager call refuses none of them); else the call itself."""
    @functools.wraps(astype)
    def deferred(x, dtype, /, *, copy=True, device=None):
        if type(x) is Array and device is None and config.lazy_enabled():
            result = _defer_cast(x, dtype)
            if result is not None:
                return result
        return astype(x, dtype, copy=copy, device=device)

    return deferred


def _defer_cast(x, dtype) -> Array | None:
    backend = x._b
    if backend not in _KERNEL_BACKENDS:
        return None
    try:
        dtype = np.dtype(dtype)  # as the eager call reads it
    except TypeError:
        return None  # the eager call raises
    p = x._p
    stand = p if p is not None else x._a
    if dtype not in _CAST_DTYPES or stand.dtype not in _CAST_DTYPES or dtype == stand.dtype:
        return None  # the same dtype is a copy (or x itself): now
    device = None
    if backend == "cuda":
        device = p.device if p is not None else stand.device.id
    nodes, inputs, scalars = _size([stand])
    if nodes > pending.MAX_NODES:
        pending.evaluate_all("astype(): expression past the kernel's limits")
        p, nodes, inputs, scalars = None, 2, 1, 0
    return _deferred(pending.PendingExpression("astype", (p if p is not None else x,), dtype,
                                               stand.shape, backend, device, nodes, inputs,
                                               scalars, _kind(dtype, stand.shape, backend),
                                               constants=(dtype,)))


def deferring_clip(clip):
    """The public ``clip``, deferred inside ``lazy()`` for an Array clipped by Python scalars
    or None (array bounds, out=: the call itself)."""
    @functools.wraps(clip)
    def deferred(x, /, min=None, max=None, *, out=None):  # noqa: A002  the standard's names
        if (type(x) is Array and out is None and config.lazy_enabled()
                and type(min) in _CLIP_BOUNDS and type(max) in _CLIP_BOUNDS):
            result = _defer_clip(x, min, max)
            if result is not None:
                return result
        return clip(x, min, max, out=out)

    return deferred


def _defer_clip(x, lo, hi) -> Array | None:
    backend = x._b
    if backend not in _KERNEL_BACKENDS:
        return None
    p = x._p
    stand = p if p is not None else x._a
    dtype = stand.dtype
    if dtypes.is_bfloat16(dtype):
        return None
    # the eager call's checks, in its order; then its conversion of each bound
    dtypes.check_group("clip", OPS["clip"].group, dtype)
    check_clip_bounds(dtype, (lo, hi))
    for bound, is_min in ((lo, True), (hi, False)):
        dtypes.scalar_value(scalar_clip_bound(dtype, bound, is_min), dtype)
    device = None
    if backend == "cuda":
        device = p.device if p is not None else stand.device.id
    operands = [p if p is not None else x, lo, hi]
    nodes, inputs, scalars = _size([stand, lo, hi])
    if nodes > pending.MAX_NODES or scalars > pending.MAX_SCALARS:
        pending.evaluate_all("clip(): expression past the kernel's limits")
        operands[0], (nodes, inputs, scalars) = x, _size([x._a, lo, hi])
    return _deferred(pending.PendingExpression("clip", tuple(operands), dtype, stand.shape,
                                               backend, device, nodes, inputs, scalars,
                                               _kind(dtype, stand.shape, backend)))


def deferring_where(where):
    """The public ``where``, deferred inside ``lazy()`` for a bool Array condition and Array
    or Python scalar values of one device (a select node of the kernel); else the call
    itself, which evaluates what it reads and raises what ``where`` raises."""
    @functools.wraps(where)
    def deferred(condition, x1=None, x2=None, /):
        if type(condition) is Array and x1 is not None and x2 is not None \
                and config.lazy_enabled():
            result = _defer_where(condition, x1, x2)
            if result is not None:
                return result
        return where(condition, x1, x2)

    return deferred


def _defer_where(condition, x1, x2) -> Array | None:
    backend, device, stands, dry = condition._b, None, [], []
    if backend not in _KERNEL_BACKENDS:
        return None
    for a in (condition, x1, x2):
        kind = type(a)
        if kind is Array:
            if a._b != backend:
                return None  # the eager call's ValueError, from the eager call
            p = a._p
            stand = p if p is not None else a._a
            if dtypes.is_bfloat16(stand.dtype):
                return None
            if backend == "cuda":
                on = p.device if p is not None else stand.data.device_id
                if device is not None and on != device:
                    return None
                device = on
            dry.append(np.empty((), stand.dtype))
        elif kind in _WHERE_SCALARS:
            stand = a
            dry.append(a)
        else:
            return None
        stands.append(stand)
    if stands[0].dtype != np.bool_ or type(x1) is not Array and type(x2) is not Array:
        return None  # a condition of another dtype, or scalars alone: the eager call's rules
    try:  # the eager call's dtype (NumPy 2's rules, which CuPy 14 follows) and shape
        dtype = np.where(*dry).dtype
        shape = np.broadcast_shapes(*(s.shape for s in stands if type(s) not in _WHERE_SCALARS))
    except (TypeError, ValueError, OverflowError):
        return None  # the eager call raises it
    if dtype not in _CAST_DTYPES:
        return None
    bounds = dtypes.plain_scalar_bounds(dtype) or (0, -1)
    for v in stands:  # a value the kernel's conversion refuses: NumPy's where converts it
        if type(v) in _WHERE_SCALARS and type(v) is not bool and not bounds[0] <= v <= bounds[1]:
            return None
    args = (condition, x1, x2)
    operands, nodes, inputs, scalars = _within_limits(
        "where", args, [a._p if type(a) is Array and a._p is not None else a for a in args],
        *_size(stands))
    return _deferred(pending.PendingExpression("where", operands, dtype, shape, backend,
                                               device, nodes, inputs, scalars,
                                               _kind(dtype, shape, backend)))


def _deferred(expression) -> Array:
    """A deferred Array holding ``expression``: its ``_a`` unset until evaluated."""
    result = _new(Array)
    result._b = expression.backend
    result._p = expression
    result._k = None  # settled on the hot path once evaluated
    pending.register(expression, result)
    return result


def _size(stands) -> tuple:
    """(nodes, inputs, scalars) of a call on these operands, uses counted each."""
    nodes, inputs, scalars = 1, 0, 0
    for s in stands:
        if type(s) is pending.PendingExpression:
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
    without the comparison (``launcher._out_of_range_comparison``)."""
    for k in (0, 1):
        value, array = stands[1 - k], stands[k]
        if (type(value) is int and type(array) not in _PYTHON_SCALARS
                and array.dtype.kind in "iu" and not dtypes.scalar_fits(value, array.dtype)):
            return True
    return False


def call(name: str, eager, args, out):
    """An elementwise call on Arrays while lazy: deferred, or ``eager()`` now (after
    evaluating everything pending when it writes into ``out``)."""
    if out is None:
        result = defer(name, args)
        if result is not None:
            return result
    elif pending.expressions:
        pending.evaluate_all(f"{name}(out=...)")
    return eager()
