"""Data movement of the namespace on the rearrange kernel: views stay views, and every needed
copy is one (or a few) ``rearrange_`` launches into a preallocated output.

All functions take and return native arrays (NumPy or CuPy); on the ``numpy`` backend the
same code runs with ``rearrange_`` falling back to ``numpy.copyto``.
"""

from __future__ import annotations

import math
import operator

import array_api_compat
import numpy as np

from . import backends
from .memory import empty_on_device_of
from .patterns import apply_pattern, reshape_strides
from .strided_copy import check_copyable_dtype, rearrange_, rearrange_copy


def _is_array(a) -> bool:
    return isinstance(a, np.ndarray) or backends.is_cupy_array(a)


def _namespace(*arrays):
    return array_api_compat.array_namespace(*arrays)


def _normalize_axis(axis: int, ndim: int, what: str) -> int:
    if not -ndim <= axis < ndim:
        raise IndexError(f"{what}: axis {axis} is out of bounds for an array of {ndim} dims")
    return axis % ndim


def rearrange(x, pattern: str | None = None, /, **axes_lengths):
    """A C-contiguous copy of ``x``, or einops' ``rearrange(x, pattern, **axes_lengths)``
    computed as views plus at most one kernel launch.

    >>> import numpy as np, infini_cupy as xp
    >>> x = np.arange(24).reshape(2, 3, 4)
    >>> xp.rearrange(x, "b h w -> b (w h)").shape
    (2, 12)
    """
    if pattern is None:
        if axes_lengths:
            raise TypeError("rearrange: axis lengths were given without a pattern")
        return rearrange_copy(x)
    if not isinstance(pattern, str):
        raise TypeError(f"rearrange: the pattern must be a str, got {type(pattern).__name__}")
    return apply_pattern(x, pattern, rearrange_copy, **axes_lengths)


def ascontiguousarray(x):
    """``x`` itself when already C-contiguous, else a C-contiguous copy (an extension)."""
    return x if x.flags.c_contiguous else rearrange_copy(x)


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """``asarray``; a copy of an array on its own device (``copy=True``) is our kernel's."""
    from . import _delegated

    if copy and _is_array(obj) and (device is None or device == _namespace(obj).device(obj)):
        return astype(obj, obj.dtype if dtype is None else dtype, copy=True)
    return _delegated.asarray(obj, dtype=dtype, device=device, copy=copy)


def astype(x, dtype, /, *, copy: bool = True, device=None):
    """``x`` as ``dtype``: same dtype copies through rearrange, other dtypes through the
    elementwise cast kernel."""
    if device is not None:
        from ._delegated import to_device

        x = to_device(x, device)
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return rearrange_copy(x) if copy else x
    from .elementwise import cast_into

    return cast_into(empty_on_device_of(x, x.shape, dtype), x)


def reshape(x, /, shape, *, copy: bool | None = None):
    """A view when strides allow; else a copy (``copy=False``: ValueError instead)."""
    shape = tuple(operator.index(n) for n in shape)
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: at most one -1 in the new shape, got {shape}")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"reshape: cannot reshape array of shape {x.shape} into {shape}")
        shape = tuple(x.size // known if n == -1 else n for n in shape)
    if math.prod(shape) != x.size or any(n < 0 for n in shape):
        raise ValueError(f"reshape: cannot reshape array of shape {x.shape} into {shape}")
    if copy:
        return rearrange_copy(x).reshape(shape)
    if reshape_strides(tuple(x.shape), tuple(x.strides), shape) is not None:
        return x.reshape(shape)
    if copy is False:
        raise ValueError(
            f"reshape: shape {x.shape} with strides {x.strides} cannot be viewed as {shape} "
            "without a copy, and copy=False"
        )
    return rearrange_copy(x).reshape(shape)


def _result_dtype(arrays, what: str):
    if not arrays:
        raise ValueError(f"{what}: needs at least one array")
    backends.backend_for(*arrays)  # mixed devices: a clear error before anything else
    return np.dtype(_namespace(*arrays).result_type(*arrays))


def _copy_into(out, x) -> None:
    if out.dtype == x.dtype:
        rearrange_(out, x)
    else:
        from .elementwise import cast_into

        cast_into(out, x)


def concat(arrays, /, *, axis: int | None = 0):
    """Join arrays along an existing axis (``axis=None``: flattened) into one new array."""
    arrays = tuple(arrays)
    dtype = _result_dtype(arrays, "concat")
    if axis is None:
        arrays = tuple(reshape(a, (-1,)) for a in arrays)
        axis = 0
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated")
    axis = _normalize_axis(axis, ndim, "concat")
    for a in arrays:
        if a.ndim != ndim or any(
            n != m for d, (n, m) in enumerate(zip(a.shape, arrays[0].shape)) if d != axis
        ):
            raise ValueError(
                f"concat: shapes {[tuple(a.shape) for a in arrays]} differ outside axis {axis}"
            )
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = empty_on_device_of(arrays[0], tuple(shape), dtype)
    start = 0
    for a in arrays:
        index = [slice(None)] * ndim
        index[axis] = slice(start, start + a.shape[axis])
        _copy_into(out[tuple(index)], a)
        start += a.shape[axis]
    return out


def stack(arrays, /, *, axis: int = 0):
    """Join arrays of one shape along a new axis."""
    arrays = tuple(arrays)
    dtype = _result_dtype(arrays, "stack")
    shape = tuple(arrays[0].shape)
    if any(tuple(a.shape) != shape for a in arrays):
        raise ValueError(f"stack: all shapes must agree, got {[tuple(a.shape) for a in arrays]}")
    axis = _normalize_axis(axis, len(shape) + 1, "stack")
    out = empty_on_device_of(arrays[0], shape[:axis] + (len(arrays),) + shape[axis:], dtype)
    for i, a in enumerate(arrays):
        _copy_into(out[(slice(None),) * axis + (i,)], a)
    return out


def tile(x, repetitions, /):
    """Repeat ``x`` along each axis: one launch from a broadcast view of ``x``."""
    reps = tuple(operator.index(r) for r in repetitions)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    ndim = max(x.ndim, len(reps))
    reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - x.ndim) + tuple(x.shape)
    out = empty_on_device_of(x, tuple(r * n for r, n in zip(reps, shape)), x.dtype)
    # out viewed as (r0, n0, r1, n1, ...) is C-contiguous: a view; x broadcast over the r's
    interleaved = tuple(v for pair in zip(reps, shape) for v in pair)
    source = x.reshape(tuple(v for n in shape for v in (1, n)))
    xp = _namespace(x)
    rearrange_(out.reshape(interleaved), xp.broadcast_to(source, interleaved))
    return out


def repeat(x, repeats, /, *, axis: int | None = None):
    """Repeat each element: an integer count is one launch from a broadcast view; per-element
    counts (an array) have a data-dependent shape and use the array library's repeat."""
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    axis = _normalize_axis(axis, x.ndim, "repeat")
    if not isinstance(repeats, int):
        return _namespace(x).repeat(x, repeats, axis=axis)  # counts per element: library's
    if repeats < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {repeats}")
    shape = tuple(x.shape)
    expanded = shape[: axis + 1] + (repeats,) + shape[axis + 1 :]
    out = empty_on_device_of(x, shape[:axis] + (shape[axis] * repeats,) + shape[axis + 1 :],
                             x.dtype)
    xp = _namespace(x)
    source = x.reshape(shape[: axis + 1] + (1,) + shape[axis + 1 :])
    rearrange_(out.reshape(expanded), xp.broadcast_to(source, expanded))
    return out


def roll(x, /, shift, *, axis=None):
    """Shift elements cyclically: for k rolled axes, 2**k block copies into a new array."""
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, axis=0), x.shape)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    shifts = (shift,) * len(axes) if isinstance(shift, int) else tuple(shift)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    total = {}
    for s, a in zip(shifts, axes):
        a = _normalize_axis(a, x.ndim, "roll")
        total[a] = total.get(a, 0) + s
    out = empty_on_device_of(x, tuple(x.shape), x.dtype)
    if x.size == 0:
        return out
    pieces = [((), ())]  # (destination slices, source slices) per axis so far
    for d in range(x.ndim):
        n = x.shape[d]
        s = total.get(d, 0) % n if n else 0
        parts = [(slice(None), slice(None))] if s == 0 else [
            (slice(s, None), slice(None, n - s)), (slice(None, s), slice(n - s, None))]
        pieces = [(dst + (pd,), src + (ps,)) for dst, src in pieces for pd, ps in parts]
    for dst, src in pieces:
        rearrange_(out[dst], x[src])
    return out


def unstack(x, /, *, axis: int = 0):
    """Views, one per index along ``axis``."""
    axis = _normalize_axis(axis, x.ndim, "unstack")
    return tuple(x[(slice(None),) * axis + (i,)] for i in range(x.shape[axis]))


__all__ = ["rearrange", "ascontiguousarray", "asarray", "astype", "reshape", "concat", "stack", "tile",
           "repeat", "roll", "unstack"]
