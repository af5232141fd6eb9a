"""``astype``, ``clip`` and ``where`` inside :func:`infini_cupy.lazy`: deferred as a cast, a
clamp or a select node of the chain's kernel where the kernel computes what the eager call
computes; else the eager call itself, which evaluates what it reads and raises what it
raises.
"""

from __future__ import annotations

import functools

import numpy as np

from .. import config, dtypes
from ..elementwise.launcher import check_clip_bounds, scalar_clip_bound
from ..elementwise.numpy_casts import warn_if_complex_to_real
from ..elementwise.ops import OPS
from . import pending
from .array import Array
from .lazy import (KERNEL_BACKENDS, defer_seen, deferred_array, expression_size, fixed_by_key,
                   result_kind, within_limits)
from .lazy_tape import MAX_NODES, MAX_SCALARS, PendingExpression

# casts the trace makes exactly as the cast kernel (bfloat16 goes through ml_dtypes eagerly)
_CAST_DTYPES = frozenset(dt for dt in dtypes.ALL_DTYPES if not dtypes.is_bfloat16(dt))
_CLIP_BOUNDS = frozenset({type(None), bool, int, float})  # complex: the eager TypeError
_WHERE_SCALARS = frozenset({bool, int, float})


def deferring_astype(astype):
    """The public ``astype``, deferred inside ``lazy()`` for a cast between two of the
    kernels' dtypes (the eager call refuses none of them); else the call itself."""
    @functools.wraps(astype)
    def deferred(x, dtype, /, *, copy=True, device=None):
        if type(x) is Array and device is None and config.lazy_enabled():
            source = x.dtype
            result = _defer_cast(x, dtype)
            if result is not None:
                warn_if_complex_to_real(source, result.dtype)  # as the eager call
                return result
        return astype(x, dtype, copy=copy, device=device)

    return deferred


def _defer_cast(x, dtype) -> Array | None:
    backend = x._b
    if backend not in KERNEL_BACKENDS:
        return None
    try:
        dtype = np.dtype(dtype)  # as the eager call reads it
    except TypeError:
        return None  # the eager call raises
    result = defer_seen("astype", (x,), (dtype,))  # a chain seen before
    if result is not None:
        return result
    p = x._p
    stand = p if p is not None else x._a
    if dtype not in _CAST_DTYPES or stand.dtype not in _CAST_DTYPES or dtype == stand.dtype:
        return None  # the same dtype is a copy (or x itself): now
    device = None
    if backend == "cuda":
        device = p.device if p is not None else stand.device.id
    nodes, inputs, scalars = expression_size([stand])
    if nodes > MAX_NODES:
        pending.evaluate_all("astype(): expression past the kernel's limits")
        p, nodes, inputs, scalars = None, 2, 1, 0
    return deferred_array(PendingExpression("astype", (p if p is not None else x,), dtype,
                                            stand.shape, backend, device, nodes, inputs,
                                            scalars, result_kind(dtype, stand.shape, backend),
                                            constants=(dtype,)),
                          fixed_by_key(dtype, stand.shape, backend))


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
    if backend not in KERNEL_BACKENDS:
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
    nodes, inputs, scalars = expression_size([stand, lo, hi])
    if nodes > MAX_NODES or scalars > MAX_SCALARS:
        pending.evaluate_all("clip(): expression past the kernel's limits")
        operands[0], (nodes, inputs, scalars) = x, expression_size([x._a, lo, hi])
    return deferred_array(PendingExpression("clip", tuple(operands), dtype, stand.shape,
                                            backend, device, nodes, inputs, scalars,
                                            result_kind(dtype, stand.shape, backend)))


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
    if backend not in KERNEL_BACKENDS:
        return None
    result = defer_seen("where", (condition, x1, x2))  # a chain seen before
    if result is not None:
        return result
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
        with np.errstate(all="ignore"):  # a value's cast warns, if at all, from the call
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
    operands, nodes, inputs, scalars = within_limits(
        "where", args, [a._p if type(a) is Array and a._p is not None else a for a in args],
        *expression_size(stands))
    # Its repeats skip this resolution where no scalar's value matters (bools, or none)
    by_key = all(type(a) in (Array, bool) for a in args)
    return deferred_array(PendingExpression("where", operands, dtype, shape, backend,
                                            device, nodes, inputs, scalars,
                                            result_kind(dtype, shape, backend)),
                          fixed_by_key(dtype, shape, backend) if by_key else None)
