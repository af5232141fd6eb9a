"""The short path of elementwise calls: a call whose signature was seen before skips
validation, promotion and planning.

One dict lookup keyed on what the plan depends on (function, array types, dtypes, shapes and
strides, the types of scalar arguments: Python's, or NumPy's, whose type names the dtype)
finds the plan with its packed arguments, the output dtype and shape and how to convert the
scalars (all go by value); what is left per call is reading the
pointers (their alignment picks the 16-byte path), converting scalars, allocating the output
and the launch. :func:`remember` is called by the launcher after a full call.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import config, dtypes
from ..arrays import cupy_data_pointer, empty, numpy_data_pointer
from ..runtime.launch import launch
from ..runtime.recent import RecentCalls
from ..strided.plan_cache import prepared_copy
from . import kernels as ek
from .plan import broadcast_strides

# The kernels' last argument: 1 when every operand allows the 16-byte vector path.
FLAG_ON, FLAG_OFF = np.int32(1), np.int32(0)
_SCALAR_TYPES = frozenset({bool, int, float, complex})
# NumPy scalars of the supported dtypes: typed, but passed by value like Python scalars.
_SCALAR_TYPES |= frozenset(dt.type for dt in dtypes.ALL_DTYPES)


class _Known:
    """What a remembered signature needs per call (see ``short_call``)."""

    __slots__ = ("plan", "launch", "staged", "shape", "dtype_out", "dtype_in", "make", "values",
                 "bounds", "mask_arg", "arrays", "scalars", "pad", "on_gpu", "copies",
                 "align_mask")


# key (see _key) -> _Known; dict operations are atomic under the GIL
_known = RecentCalls()
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


def remember(op, args, backend, plan, shape, dtype_out, dtype_in, scalar_mask):
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
    known.make = dtypes.kernel_scalar(dtype_in)  # dtype_in.type; bfloat16: its bits
    known.values = [known.make(0)] * 3  # s0, s1, s2; scalars replace theirs per call
    known.mask_arg = np.int32(scalar_mask)
    known.arrays = tuple(k for k in range(len(args)) if not scalar_mask >> k & 1)
    known.scalars = tuple(k for k in range(len(args)) if scalar_mask >> k & 1)
    known.pad = 3 - len(args)
    # Strides are in the key; an address off the C++ type's alignment goes through apply,
    # which copies that operand aligned first.
    known.align_mask = dtypes.alignment(dtype_in) - 1
    known.on_gpu = backend == "cuda"
    known.copies = {}
    known.bounds = None  # scalars inside these bounds convert without overflow or rounding to inf
    if dtype_in.kind in "iub":
        info = np.iinfo(dtype_in) if dtype_in.kind != "b" else None
        known.bounds = (info.min, info.max) if info else (False, True)
    elif dtype_in.kind == "f" or dtypes.is_bfloat16(dtype_in):
        fmax = dtypes.float_max(dtype_in)
        known.bounds = (-fmax, fmax)
    _known.remember(key, known)


def _value(known, v):
    if isinstance(v, np.generic):  # promotion made dtype_in hold it: NumPy's cast, exact
        return v.astype(known.dtype_in)
    bounds = known.bounds
    if bounds is not None and bounds[0] <= v <= bounds[1]:
        return known.make(v)
    return dtypes.scalar_value(v, known.dtype_in)


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
        backend, pointer = "cuda", cupy_data_pointer
    elif config.get_backend() == "emulate":
        backend, pointer = "emulate", numpy_data_pointer
    else:
        return None  # the numpy backend asked for: apply says what happens
    # Each array's pointer, read once: off its C++ type's alignment, the call goes through
    # apply (which copies that operand aligned first); else its bits the 16-byte path needs.
    align_mask = known.align_mask
    masks = None if known.staged else known.launch.vector_masks
    misaligned = 0
    for k in known.arrays:
        address = pointer(args[k])
        if address & align_mask:
            return None
        if masks is not None:
            misaligned |= address & masks[k + 1]
    values = known.values[:]
    for k in known.scalars:
        values[k] = _value(known, args[k])
    out = empty(backend, known.shape, known.dtype_out)
    if known.staged:
        return _short_staged(known, backend, pointer, out, list(args), values)
    kernel_launch = known.launch
    operands = list(args)
    for k in known.scalars:
        operands[k] = out
    flag = FLAG_OFF
    if masks is not None:
        misaligned |= pointer(out) & masks[0]
        flag = FLAG_OFF if misaligned else FLAG_ON
    launch(ek.SOURCE, kernel_launch.kernel, kernel_launch.grid, kernel_launch.block,
           (out, *operands) + (out,) * known.pad + (*values, known.mask_arg,
                                                    *kernel_launch.layout_args, flag),
           backend=backend)
    return out


def _short_staged(known, backend, pointer, out, operands, values):
    """``short_call`` of a call with staged copies: temporaries in walk order. Kernels take
    only their pointers (layouts are packed in the arguments), so the transposed views of
    the temporaries are made once, to plan the copies (one per address residue)."""
    staging = known.plan.staging
    for k, temp_shape, axes in staging.inputs:
        temp = empty(backend, temp_shape, known.dtype_in)
        _launch_copy(known, backend, k, temp, pointer(temp), axes, operands[k], pointer(operands[k]))
        operands[k] = temp
    target = out if staging.output is None else empty(backend, staging.output[0], known.dtype_out)
    for k in known.scalars:
        operands[k] = target
    kernel_launch = known.launch
    masks = kernel_launch.vector_masks
    flag = FLAG_OFF
    if masks is not None and not any(pointer(a) & m for a, m in zip([target, *operands], masks)):
        flag = FLAG_ON
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
        prepared = known.copies[key] = prepared_copy(  # src broadcast (a dense temporary)
            src_view.itemsize, tuple(dst_view.shape), tuple(dst_view.strides),
            broadcast_strides(src_view.shape, src_view.strides, dst_view.shape), key[1], key[2])
    launch(prepared.source, prepared.kernel, prepared.grid, prepared.block,
           (dst, src) + prepared.struct_args, backend=backend)
