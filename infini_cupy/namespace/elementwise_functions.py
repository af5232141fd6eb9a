"""The array API elementwise functions, generated from the op table (``elementwise.ops.OPS``).

Each function dispatches on its arrays' backend, after :mod:`..elementwise.resolution` has
decided the loop (the same rules on every device): ``numpy`` calls NumPy
(``elementwise.numpy_backend``); ``emulate`` and ``cuda`` run our kernels
(``elementwise.launcher.apply``), a call of a signature seen before through
``elementwise.short_path.short_call`` first (a few microseconds of Python before the launch).
Extension: every function takes ``out=`` (any writeable, non-self-overlapping layout of the
result's shape, of its dtype or one it casts to by ``same_kind``; overlapping an input gives
NumPy's answer).

>>> import numpy as np, infini_cupy as xp
>>> xp.add(np.asarray([1, 2], dtype=np.int8), 1)
array([2, 3], dtype=int8)
"""

from __future__ import annotations

import builtins  # clip's parameters are min and max

import numpy as np

from .. import config, dtypes
from ..arrays import backend_for, require_cupy, type_name
from ..elementwise import numpy_backend
from ..elementwise.launcher import (apply, check_clip_bounds, check_operand_types,
                                     scalar_clip_bound)
from ..elementwise.ops import OPS, ElementwiseOp
from ..elementwise.short_path import short_call
from ..elementwise import trace


def _dispatch(op: ElementwiseOp, args, out):
    if trace.is_traced(*args):  # inside infini_cupy.fuse's trace: a node, no kernel
        if out is not None:
            raise trace.Untraceable(f"{op.name}(out=...): writing into an array")
        return trace.op_node(op.name, args)
    if all(dtypes.is_python_scalar(a) or isinstance(a, np.generic) for a in args):
        if not any(isinstance(a, np.generic) for a in args):
            raise TypeError(f"{op.name}() needs at least one array argument, got only scalars")
        # NumPy scalars alone: 0-d arrays of the backend in force (the CPU's memory, or the
        # GPU's under cuda, where CuPy's ufuncs take NumPy scalars as values too)
        to_array = require_cupy().asarray if config.get_backend() == "cuda" else np.asarray
        args = tuple(to_array(a) if isinstance(a, np.generic) else a for a in args)
    try:  # masked, unit-carrying arrays: arrays.check_plain_buffer refuses them
        backend = backend_for(*args, *(() if out is None else (out,)))
    except TypeError as e:
        raise TypeError(f"{op.name}(): {e}") from None
    if backend == "numpy":
        check_operand_types(op.name, args, out)  # apply() checks them for the kernels
        return numpy_backend.call(op.name, args, out)
    return apply(op, *args, out=out)


def _make(op: ElementwiseOp):
    name = op.name
    if op.arity == 1:
        def function(x, /, *, out=None):
            result = short_call(name, (x,), out)
            if result is not None:
                return result
            return _dispatch(op, (x,), out)
    else:
        def function(x1, x2, /, *, out=None):
            result = short_call(name, (x1, x2), out)
            if result is not None:
                return result
            return _dispatch(op, (x1, x2), out)
    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = (f"{op.summary}\n\nArray API ``{op.name}``: the standard's inputs are of "
                        f"{op.group} dtypes" + (" or Python scalars" if op.arity > 1 else "")
                        + "; every dtype NumPy's ufunc takes is accepted, with NumPy's "
                        "result dtype (see ``elementwise.resolution``).")
    return function


def _clip_bound(x, bound, is_min: bool):
    """A bound of ``clip`` made exact for x's dtype (see ``clip``): a value of x's range for
    a scalar (None: x's dtype's limit), or an array whose cast to x's dtype loses nothing."""
    dt = x.dtype
    if isinstance(bound, np.generic):
        bound = bound.item()  # its value (its kind was checked): no 0-d array to copy
    if bound is None or dtypes.is_python_scalar(bound):
        return scalar_clip_bound(dt, bound, is_min)
    if bound.dtype == dt or dt.kind not in "iu" or np.can_cast(bound.dtype, dt):
        return bound  # cast to x's dtype by apply: exact, or monotone rounding (floating x)
    # An integer array of a range x's dtype does not hold: saturated in its own dtype first
    # (a cast would wrap: int8 -1 is uint8 255).
    info, own = np.iinfo(dt), np.iinfo(bound.dtype)
    return apply(OPS["clip"], bound, int(max(info.min, own.min)), int(min(info.max, own.max)))


def clip(x, /, min=None, max=None, *, out=None):
    """x clamped to [min, max] elementwise (NaN propagates); the result has x's dtype.

    Bounds of another dtype than x (the standard leaves them to the implementation; NumPy
    would promote the result): the result is the exact clip of x's values, brought into
    x's dtype by saturation (integers) or rounding (floating point). So a bound beyond x's
    integer range acts as that end of the range (``clip(uint8, -1)`` clips nothing,
    ``clip(uint8, 300)`` gives 255 everywhere, where NumPy raises OverflowError), an
    integer bound array never wraps (``clip(uint8 [200], int8 [-1])`` is 200), and a NaN
    bound gives NaN. A floating bound with integer x, or a complex bound, is a TypeError.
    The ``numpy`` backend calls NumPy's clip, by the kernels' order of signed zeros (+0
    above -0) where a bound is a zero.

    Parameters
    ----------
    x : Array or array
        Input array of a real numeric dtype (integers and real floating point).
    min, max : Array, array, Python or NumPy scalar, or None, optional
        The bounds: arrays broadcastable to ``x``, Python or NumPy scalars, or None
        (default: no bound).
    out : Array or array, optional
        Where to write the result (an extension): of the result's shape, and its dtype or
        one it casts to (same_kind).

    Returns
    -------
    Array or array
        The clipped values, of ``x``'s dtype, on the arrays' device (``out`` when given).

    Raises
    ------
    TypeError
        An ``x`` of bool or complex dtype, a complex bound, or a floating bound of integer
        ``x``.
    ValueError
        Shapes that do not broadcast, or arrays on different devices.
    """
    if (out is None and type(x) is np.ndarray and type(min) in _SCALAR_BOUND_TYPES
            and type(max) in _SCALAR_BOUND_TYPES):  # the cpu device's hot path
        bounds = _cpu_scalar_bounds.get(_bounds_key(x.dtype, min, max))
        if bounds is not None and config.get_backend() == "numpy":
            return _numpy_clip_by(x, bounds)
    op = OPS["clip"]
    if trace.is_traced(x, min, max):  # inside infini_cupy.fuse's trace
        if out is not None:
            raise trace.Untraceable("clip(out=...): writing into an array")
        return trace.clip_node(x, min, max)
    if dtypes.is_python_scalar(x) or not hasattr(x, "dtype"):
        raise TypeError(f"clip() needs x to be an array; got {type_name(x)}")
    # a str bound or out= (AttributeError on cpu below, TypeError in apply): refused on every device
    check_operand_types("clip", [a for a in (min, max) if a is not None], out)
    backend = backend_for(x, *(a for a in (min, max, out)
                                        if a is not None and not dtypes.is_python_scalar(a)))
    dtypes.check_group("clip", op.group, x.dtype,
                       *(a.dtype for a in (min, max) if a is not None and not dtypes.is_python_scalar(a)))
    check_clip_bounds(x.dtype, (min, max))
    if backend == "numpy":
        return _numpy_clip(x, min, max, out)
    return apply(op, x, _clip_bound(x, min, True), _clip_bound(x, max, False), out=out)


# clip of a NumPy array by Python scalars or None on the cpu device: (x's dtype, each bound's
# type, value and sign) -> the bounds as scalars of x's dtype, checked and made by a first call
_cpu_scalar_bounds: dict = {}
_CPU_SCALAR_BOUNDS_KEPT = 256  # then forgotten all at once: a loop over many bounds
_SCALAR_BOUND_TYPES = frozenset({type(None), bool, int, float})


def _bounds_key(dtype, lo, hi) -> tuple:
    # -0.0 == 0.0 (one key but for the signs): a zero bound keeps its sign in x's dtype
    return (dtype, type(lo), lo, lo == 0 and str(lo), type(hi), hi, hi == 0 and str(hi))


def _numpy_clip(x, lo, hi, out):
    """clip on the ``cpu`` device by the kernels' rules (the result in x's dtype, bounds made
    exact for it): NumPy's ``clip`` of x and bounds brought into x's dtype."""
    dt = x.dtype
    if out is None and type(lo) in _SCALAR_BOUND_TYPES and type(hi) in _SCALAR_BOUND_TYPES:
        if len(_cpu_scalar_bounds) >= _CPU_SCALAR_BOUNDS_KEPT:
            _cpu_scalar_bounds.clear()
        bounds = tuple(dt.type(scalar_clip_bound(dt, bound, is_min))
                       for bound, is_min in ((lo, True), (hi, False)))
        _cpu_scalar_bounds[_bounds_key(dt, lo, hi)] = bounds
        return _numpy_clip_by(x, bounds)
    bounds = []
    for bound, is_min in ((lo, True), (hi, False)):
        if isinstance(bound, np.generic):
            bound = bound.item()
        if bound is None or dtypes.is_python_scalar(bound):
            bounds.append(dt.type(scalar_clip_bound(dt, bound, is_min)))  # a scalar of dt
            continue
        if bound.dtype != dt and dt.kind in "iu" and not np.can_cast(bound.dtype, dt):
            info, own = np.iinfo(dt), np.iinfo(bound.dtype)  # saturated, never wrapped
            bound = np.clip(bound, max(info.min, own.min), min(info.max, own.max))
        bounds.append(np.asarray(bound).astype(dt, copy=False))
    numpy_backend.check_broadcast("clip", [a.shape for a in (x, *bounds) if a.shape])
    if out is not None:
        numpy_backend.check_out("clip", out, dt)
    result = _numpy_clip_by(x, bounds)
    if out is not None:
        if out.shape != result.shape:  # as the kernels: never broadcast into a bigger out
            raise ValueError(f"clip(): out has shape {tuple(out.shape)}, the result has "
                             f"shape {tuple(result.shape)}")
        np.copyto(out, result, casting="same_kind")
        return out
    return result


try:  # the ufunc numpy.clip calls, without numpy.clip's 2.5 us of Python around it
    from numpy._core.umath import clip as _numpy_clip_ufunc
except ImportError:  # pragma: no cover - another NumPy's layout
    _numpy_clip_ufunc = np.clip


def _numpy_clip_by(x, bounds):
    """NumPy's clip of x by bounds of x's dtype, silent, in x's dtype; by the kernels' order
    of signed zeros where a floating bound holds a zero."""
    token = numpy_backend.silence()
    try:
        if x.dtype.kind in "iub" or not builtins.any(
                b == 0 if type(b) is not np.ndarray else np.count_nonzero(b) != b.size
                for b in bounds):
            result = _numpy_clip_ufunc(x, *bounds)
        else:
            result = numpy_backend.clip_by_extrema(x, *bounds)
        if result.dtype != x.dtype:  # bfloat16: ml_dtypes' clip computes in float32, exact
            result = result.astype(x.dtype)
    finally:
        numpy_backend.restore(token)
    return result


_FUNCTIONS = {name: (clip if name == "clip" else _make(op)) for name, op in OPS.items()}
globals().update(_FUNCTIONS)

__all__ = sorted(_FUNCTIONS)
