"""The elementwise launcher, shared by the ``cuda`` and ``emulate`` backends: validation, type
promotion, output allocation, staged copies and the kernel launch of a planned call
(:mod:`infini_cupy.elementwise_plan`).

A call whose signature was seen before takes a short path: one dict lookup keyed on what the
plan depends on (function, array types, dtypes, shapes and strides, the Python types of scalar
arguments) finds the plan with its packed arguments, the output dtype and shape and how to
convert the scalars; what is left per call is reading the pointers (their alignment picks
the 16-byte path), converting scalars, allocating the output and the launch. A new signature
goes through validation, promotion and planning (``apply``), and is remembered when it
needs no cast of an input.

>>> import numpy as np
>>> from infini_cupy import backend, elementwise
>>> with backend("emulate"):
...     elementwise.apply("add", np.arange(3.0), 1)
array([1., 2., 3.])
"""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from . import backends, dtypes
from . import elementwise_kernels as ek
from .elementwise_ops import CAST_FUNCTOR, OPS, ElementwiseOp
from .elementwise_plan import broadcast_shapes, broadcast_strides, coalesce, plan_call  # noqa: F401
from .launch import launch
from .planner import _check_dst_not_self_overlapping
from .pointers import numpy_data_pointer
from .strided_copy import prepared_copy

_ONE, _ZERO = np.int32(1), np.int32(0)
_SCALAR_TYPES = frozenset({bool, int, float, complex})
_RECENT_MAX = 4096  # signatures the short path remembers


# ---------------------------------------------------------------- array helpers per backend
def _xp(backend: str):
    """The array module outputs and temporaries are allocated from (the bench swaps it)."""
    return backends.require_cupy() if backend == "cuda" else np


def _device_of(arrays):
    """A context that makes the CuPy arrays' GPU the current one while outputs and temporaries
    are allocated (runtime.launch runs kernels there); nothing for NumPy arrays."""
    for a in arrays:
        if backends.is_cupy_array(a):
            return a.device
    return contextlib.nullcontext()


def _pointer_of(backend: str):
    return _cupy_pointer if backend == "cuda" else numpy_data_pointer


def _as_strided(a, shape, strides):
    if backends.is_cupy_array(a):
        import cupy

        return cupy.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)
    return np.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def _self_overlapping(a) -> bool:
    """Two elements of ``a`` share a byte (the rearrange planner's check: exact for
    interleaved layouts of up to a million elements)."""
    try:
        _check_dst_not_self_overlapping(tuple(a.shape), tuple(a.strides), a.itemsize)
    except ValueError:
        return True
    return False


def _is_array(a) -> bool:
    return isinstance(a, np.ndarray) or backends.is_cupy_array(a)


def _overlap(a, b) -> bool:
    if backends.is_cupy_array(a):
        import cupy

        return bool(cupy.may_share_memory(a, b))
    return bool(np.may_share_memory(a, b))


# ---------------------------------------------------------------- running a plan
def _copy(dst, src, backend):
    """``rearrange_(dst, src)`` for a fresh temporary on either side (no overlap, no checks)."""
    pointer = _pointer_of(backend)
    prepared = prepared_copy(src.itemsize, tuple(src.shape), tuple(dst.strides), tuple(src.strides),
                             pointer(dst) % 32, pointer(src) % 32)
    launch(prepared.source, prepared.kernel, prepared.grid, prepared.block,
           (dst, src) + prepared.struct_args, backend=backend)


def _launch_kernel(kernel_launch, target, inputs, values, scalar_mask, backend):
    operands = [target] + [target if x is None else x for x in inputs]
    operands += [target] * (4 - len(operands))
    masks = kernel_launch.vector_masks
    flag = _ZERO
    if masks is not None:
        pointer = _pointer_of(backend)
        if not any(pointer(a) & m for a, m in zip(operands, masks)):
            flag = _ONE
    tail = (np.int32(scalar_mask),) + kernel_launch.layout_args + (flag,)
    if kernel_launch.outer == 0:
        launch(ek.SOURCE, kernel_launch.kernel, kernel_launch.grid, kernel_launch.block,
               (*operands, *values, *tail), backend=backend)
        return
    # More dims than the widest kernel: views with the coalesced layout, one launch per
    # index of the leading dims.
    views = [_as_strided(a, kernel_launch.shape, kernel_launch.strides[k])
             if k == 0 or inputs[k - 1] is not None else None
             for k, a in enumerate(operands[:1 + len(inputs)])]
    for idx in np.ndindex(*kernel_launch.shape[:kernel_launch.outer]):
        sub = [v[idx] if v is not None else None for v in views]
        sub = [s if s is not None else sub[0] for s in sub]
        sub += [sub[0]] * (4 - len(sub))
        launch(ek.SOURCE, kernel_launch.kernel, kernel_launch.grid, kernel_launch.block,
               (*sub, *values, *tail), backend=backend)


def _run(signature, plan, out, inputs, values, scalar_mask, backend):
    """Run a planned call: staged input copies, the kernel into ``out`` (or a staged
    temporary, then copied into ``out``). ``inputs``: arrays in their own layout, or None
    where ``values`` holds a scalar; ``values``: three NumPy scalars of the input dtype."""
    if plan.split is not None:
        return _run_split(signature, plan.split, out, inputs, values, scalar_mask, backend)
    staging = plan.staging
    if staging.inputs:
        inputs = list(inputs)
        for k, temp_shape, axes in staging.inputs:
            x = inputs[k]
            temp = _xp(backend).empty(temp_shape, x.dtype).transpose(axes)
            _copy(temp, x, backend)
            inputs[k] = temp
    target = out
    if staging.output is not None:
        temp_shape, axes = staging.output
        target = _xp(backend).empty(temp_shape, out.dtype).transpose(axes)
    _launch_kernel(plan.launch, target, inputs, values, scalar_mask, backend)
    if target is not out:
        _copy(out, target, backend)
    return out


def _run_split(signature, split, out, inputs, values, scalar_mask, backend):
    """Offsets past 32 bits: the call on chunks of dim ``split[0]``, each within 32 bits."""
    dim, chunk = split
    shape = out.shape
    views = [None if x is None else _as_strided(x, shape, broadcast_strides(x.shape, x.strides, shape))
             for x in inputs]
    for idx in np.ndindex(*shape[:dim]):
        for start in range(0, shape[dim], chunk):
            sl = idx + (slice(start, start + chunk),)
            sub_out = out[sl]
            sub = [None if v is None else v[sl] for v in views]
            plan = _plan(signature, sub_out, sub)
            _run(signature, plan, sub_out, sub, values, scalar_mask, backend)
    return out


def _plan(signature, out, inputs):
    return plan_call(*signature, tuple(out.shape), tuple(out.strides),
                     tuple(None if x is None else (tuple(x.shape), tuple(x.strides)) for x in inputs),
                     signature[0] == CAST_FUNCTOR)


def _signature(functor, dtype_out, dtype_in) -> tuple:
    return (functor, dtypes.ctype(dtype_out), dtypes.ctype(dtype_in), dtype_out.itemsize,
            dtype_in.itemsize)


# ---------------------------------------------------------------- public entry points
def cast(x, dtype, backend: str | None = None, out=None):
    """``x`` converted to ``dtype`` as a new C-contiguous array (NumPy's casting: complex to
    real drops the imaginary part), or written into ``out``."""
    dtype = dtypes.as_dtype(dtype)
    backend = backend or backends.backend_for(x)
    with _device_of([x]):
        if out is None:
            out = _xp(backend).empty(x.shape, dtype)
        if out.size == 0:
            return out
        signature = _signature(CAST_FUNCTOR, out.dtype, x.dtype)
        zero = x.dtype.type(0)
        _run(signature, _plan(signature, out, [x]), out, [x], (zero, zero, zero), 0, backend)
    return out


def _prepare_out(func, out, shape, dtype, inputs, backend):
    """A validated ``out=``; returns (array to compute into, array to copy back into or None)."""
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{func}(): out has shape {tuple(out.shape)}, the result has shape {tuple(shape)}")
    if out.dtype != dtype:
        raise TypeError(f"{func}(): out has dtype {out.dtype}, the result has dtype {dtype}")
    if backends.backend_for(out) != backend:
        raise ValueError(f"{func}(): out is on a different device than the inputs")
    if _self_overlapping(out):
        raise ValueError(f"{func}(): out overlaps itself (strides {out.strides})")
    if isinstance(out, np.ndarray) and not out.flags.writeable:
        raise ValueError(f"{func}(): out (shape {out.shape}, strides {out.strides}) is read-only")
    pointer = _pointer_of(backend)
    for x in inputs:
        if x is None:
            continue
        same_view = (pointer(x) == pointer(out) and x.shape == out.shape
                     and x.strides == out.strides and x.dtype.itemsize == out.dtype.itemsize)
        if not same_view and _overlap(x, out):
            # Each element is read and written by one thread, so only an identical view is
            # safe in place; anything else computes into a temporary (NumPy's answer).
            return _xp(backend).empty(shape, dtype), out
    return out, None


def resolve(op: ElementwiseOp, args) -> tuple[np.dtype, np.dtype, tuple]:
    """(dtype the kernel computes in, result dtype, result shape) of ``op(*args)`` (arrays and
    Python scalars), or the TypeError/ValueError the call raises; no kernel runs.

    >>> resolve(OPS["less"], (np.zeros(3, np.int8), 1))
    (dtype('int8'), dtype('bool'), (3,))
    """
    arrays = [a for a in args if not dtypes.is_python_scalar(a)]
    for a in arrays:
        dtypes.as_dtype(a.dtype)
    dtypes.check_group(op.name, op.group, *(a.dtype for a in arrays))
    if op.name == "clip":
        if dtypes.is_python_scalar(args[0]):
            raise TypeError("clip() needs x to be an array")
        dtype_in = arrays[0].dtype
    else:
        dtype_in = dtypes.result_type(*args)
        dtypes.check_group(op.name, op.group, dtype_in)
    if (op.name == "pow" and dtype_in.kind in "iu" and dtypes.is_python_scalar(args[1])
            and args[1] < 0):
        # NumPy's and array-api-strict's answer; an array exponent's negative elements give
        # the integer part of the true power (the standard leaves both unspecified).
        raise ValueError("Integers to negative integer powers are not allowed.")
    shape = broadcast_shapes(op.name, *(a.shape for a in arrays))
    return dtype_in, op.result_dtype(dtype_in), shape


def apply(op: ElementwiseOp | str, *args, out=None):
    """Apply elementwise function ``op`` (a row of the op table, or its name) with our kernels.

    ``args``: arrays (NumPy in emulation, CuPy on cuda) or Python scalars, at least one array.
    """
    op = OPS[op] if isinstance(op, str) else op
    for a in args:
        if not (_is_array(a) or dtypes.is_python_scalar(a) or isinstance(a, np.generic)):
            raise TypeError(f"{op.name}() takes arrays and Python scalars; got {type(a).__name__}")
    if out is not None and not _is_array(out):
        raise TypeError(f"{op.name}(): out must be an array; got {type(out).__name__}")
    if all(dtypes.is_python_scalar(a) or isinstance(a, np.generic) for a in args):
        raise TypeError(f"{op.name}() needs at least one array argument")
    backend = backends.backend_for(*args, *(() if out is None else (out,)))
    if backend == "numpy":
        raise ValueError("elementwise.apply runs kernels; the numpy backend calls NumPy")
    with _device_of([*args, out]):
        return _apply(op, args, out, backend)


def _apply(op, args, out, backend):
    # NumPy scalars are typed: they take part as 0-d arrays of their dtype.
    typed_scalars = any(isinstance(a, np.generic) for a in args)
    args = tuple(_xp(backend).asarray(a) if isinstance(a, np.generic) else a for a in args)
    dtype_in, dtype_out, shape = resolve(op, args)
    zero = dtype_in.type(0)
    inputs, values, scalar_mask, casts = [], [zero, zero, zero], 0, False
    for k, a in enumerate(args):
        if dtypes.is_python_scalar(a):
            inputs.append(None)
            values[k] = dtypes.scalar_value(a, dtype_in)
            scalar_mask |= 1 << k
        elif a.dtype != dtype_in:
            inputs.append(cast(a, dtype_in, backend))
            casts = True
        else:
            inputs.append(a)
    if out is None:
        target, copy_back = _xp(backend).empty(shape, dtype_out), None
    else:
        target, copy_back = _prepare_out(op.name, out, shape, dtype_out, inputs, backend)
    if target.size:
        signature = _signature(op.functor, dtype_out, dtype_in)
        plan = _plan(signature, target, inputs)
        _run(signature, plan, target, inputs, tuple(values), scalar_mask, backend)
        if out is None and not casts and op.arity <= 2 and not typed_scalars:
            _remember(op, args, backend, plan, shape, dtype_out, dtype_in, scalar_mask)
    if copy_back is not None:
        cast(target, dtype_out, backend, out=copy_back)
        return copy_back
    return target


# ---------------------------------------------------------------- the short path
class _Known:
    """What a remembered signature needs per call (see ``short_call``)."""

    __slots__ = ("plan", "launch", "staged", "shape", "dtype_out", "dtype_in", "values", "bounds",
                 "mask_arg", "arrays", "scalars", "pad", "on_gpu", "copies")


# key (see _key) -> _Known; dict operations are atomic under the GIL
_known: dict[tuple, _Known] = {}
_array_types: set = {np.ndarray}


def _key(name, args):
    """The short path's key, or None for arguments it does not take."""
    key = [name]
    for a in args:
        kind = type(a)
        if kind in _array_types:
            key += (kind, a.dtype, a.shape, a.strides)
        elif kind in _SCALAR_TYPES:
            key.append(kind)
        else:
            return None
    return tuple(key)


def clear_caches() -> None:
    """Forget remembered signatures and plans (tests that change planning constants)."""
    _known.clear()
    plan_call.cache_clear()


def _remember(op, args, backend, plan, shape, dtype_out, dtype_in, scalar_mask):
    if plan.split is not None or plan.launch.outer:
        return
    if op.name == "pow" and scalar_mask & 2 and dtype_in.kind in "iu":
        return  # each call checks the sign of the exponent (resolve)
    cupy = sys.modules.get("cupy")
    if backend == "cuda" and cupy is not None:
        _array_types.add(cupy.ndarray)
    key = _key(op.name, args)
    if key is None:
        return
    known = _Known()
    known.plan, known.launch, known.shape = plan, plan.launch, shape
    known.staged = bool(plan.staging.inputs) or plan.staging.output is not None
    known.dtype_out, known.dtype_in = dtype_out, dtype_in
    known.values = [dtype_in.type(0)] * 3  # s0, s1, s2; scalars replace theirs per call
    known.mask_arg = np.int32(scalar_mask)
    known.arrays = tuple(k for k in range(len(args)) if not scalar_mask >> k & 1)
    known.scalars = tuple(k for k in range(len(args)) if scalar_mask >> k & 1)
    known.pad = 3 - len(args)
    known.on_gpu = backend == "cuda"
    known.copies = {}
    known.bounds = None  # scalars inside these bounds convert without overflow or rounding to inf
    if dtype_in.kind in "iub":
        info = np.iinfo(dtype_in) if dtype_in.kind != "b" else None
        known.bounds = (info.min, info.max) if info else (False, True)
    elif dtype_in.kind == "f":
        fmax = float(np.finfo(dtype_in).max)
        known.bounds = (-fmax, fmax)
    if len(_known) >= _RECENT_MAX:
        _known.clear()
    _known[key] = known


def _value(known, v):
    bounds = known.bounds
    if bounds is not None and bounds[0] <= v <= bounds[1]:
        return known.dtype_in.type(v)
    return dtypes.scalar_value(v, known.dtype_in)


def _cupy_pointer(a) -> int:
    return a.data.ptr


def _current_device() -> int:
    return sys.modules["cupy"].cuda.runtime.getDevice()


def short_call(name: str, args):
    """``name(*args)`` (one or two arguments, no ``out=``) when its signature is remembered
    and the arrays' backend runs kernels; None otherwise (``apply`` then does the work)."""
    known = _known.get(_key(name, args))
    if known is None:
        return None
    if known.on_gpu:  # arrays on the current GPU (apply allocates on another one)
        device = _current_device()
        if any(args[k].data.device_id != device for k in known.arrays):
            return None
        backend, pointer = "cuda", _cupy_pointer
    elif backends.get_backend() == "emulate":
        backend, pointer = "emulate", numpy_data_pointer
    else:
        return None  # the numpy backend asked for: apply says what happens
    values = known.values[:]
    for k in known.scalars:
        values[k] = _value(known, args[k])
    xp = _xp(backend)
    out = xp.empty(known.shape, known.dtype_out)
    if known.staged:
        return _short_staged(known, backend, xp, pointer, out, list(args), values)
    kernel_launch = known.launch
    operands = list(args)
    for k in known.scalars:
        operands[k] = out
    masks = kernel_launch.vector_masks
    flag = _ZERO
    if masks is not None:
        misaligned = pointer(out) & masks[0]
        for k in known.arrays:
            misaligned |= pointer(operands[k]) & masks[k + 1]
        flag = _ZERO if misaligned else _ONE
    launch(ek.SOURCE, kernel_launch.kernel, kernel_launch.grid, kernel_launch.block,
           (out, *operands) + (out,) * known.pad + (*values, known.mask_arg,
                                                    *kernel_launch.layout_args, flag),
           backend=backend)
    return out


def _short_staged(known, backend, xp, pointer, out, operands, values):
    """``short_call`` of a call with staged copies: temporaries in walk order. Kernels take
    only their pointers (layouts are packed in the arguments), so the transposed views of
    the temporaries are made once, to plan the copies (one per address residue)."""
    staging = known.plan.staging
    for k, temp_shape, axes in staging.inputs:
        temp = xp.empty(temp_shape, known.dtype_in)
        _launch_copy(known, backend, k, temp, pointer(temp), axes, operands[k], pointer(operands[k]))
        operands[k] = temp
    target = out if staging.output is None else xp.empty(staging.output[0], known.dtype_out)
    for k in known.scalars:
        operands[k] = target
    kernel_launch = known.launch
    masks = kernel_launch.vector_masks
    flag = _ZERO
    if masks is not None and not any(pointer(a) & m for a, m in zip([target, *operands], masks)):
        flag = _ONE
    launch(ek.SOURCE, kernel_launch.kernel, kernel_launch.grid, kernel_launch.block,
           (target, *operands) + (target,) * known.pad + (*values, known.mask_arg,
                                                          *kernel_launch.layout_args, flag),
           backend=backend)
    if target is not out:
        _launch_copy(known, backend, -1, out, pointer(out), None, target, pointer(target),
                     staging.output[1])
    return out


def _launch_copy(known, backend, k, dst, dst_pointer, dst_axes, src, src_pointer, src_axes=None):
    """The staged copy of input ``k`` (-1: of the output) from ``src`` to ``dst``; the axes
    transpose a temporary into the view the copy plans with."""
    key = (k, dst_pointer & 31, src_pointer & 31)
    prepared = known.copies.get(key)
    if prepared is None:
        dst_view = dst if dst_axes is None else dst.transpose(dst_axes)
        src_view = src if src_axes is None else src.transpose(src_axes)
        prepared = known.copies[key] = prepared_copy(
            src_view.itemsize, tuple(src_view.shape), tuple(dst_view.strides),
            tuple(src_view.strides), key[1], key[2])
    launch(prepared.source, prepared.kernel, prepared.grid, prepared.block,
           (dst, src) + prepared.struct_args, backend=backend)
