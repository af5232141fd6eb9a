"""The elementwise launcher, shared by the ``cuda`` and ``emulate`` backends: validation, type
promotion, output allocation, staged copies and the kernel launch of a planned call
(:mod:`.plan`). A new signature goes through here (``apply``) and is remembered for the
short path (:mod:`.short_path`) unless an operand had to be realigned.

>>> import numpy as np
>>> from infini_cupy import backend
>>> from infini_cupy.elementwise.launcher import apply
>>> with backend("emulate"):
...     apply("add", np.arange(3.0), 1)
array([1., 2., 3.])
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes
from ..arrays import (
    as_strided,
    backend_for,
    device_context,
    empty,
    is_array,
    is_cupy_array,
    is_operand,
    pointer_reader,
    type_name,
)
from ..runtime.launch import launch
from ..strided.plan_cache import prepared_copy
from . import kernels as ek
from .ops import CAST_FUNCTOR, OPS, ElementwiseOp
from .numpy_backend import check_out
from .resolution import resolve_call
from .plan import broadcast_shapes, broadcast_strides, plan_call
from .short_path import FLAG_OFF, FLAG_ON, remember, short_call

# ---------------------------------------------------------------- array helpers per backend


def _overlap(a, b) -> bool:
    if is_cupy_array(a):
        import cupy

        return bool(cupy.may_share_memory(a, b))
    return bool(np.may_share_memory(a, b))


def _misaligned(a, pointer) -> bool:
    """``a``'s address or a stride (of a dim longer than 1) is off the alignment of its C++
    type (:func:`infini_cupy.dtypes.alignment`, the itemsize): a kernel must not dereference
    it as that type. NumPy calls ``np.arange(21.0)[1:].view(np.complex128)`` aligned; C++
    does not."""
    mask = a.itemsize - 1
    if not mask or a.size == 0:
        return False  # 1-byte types are always aligned; nothing is dereferenced
    if pointer(a) & mask:
        return True
    for st in a.strides:  # a stride off the alignment matters only on a dim longer than 1
        if st & mask:
            return any(s & mask for n, s in zip(a.shape, a.strides) if n > 1)
    return False


def _aligned(a, backend):
    """``a`` itself when aligned for its C++ type, else a copy into a new C-contiguous array
    (the strided copy picks its access width from the actual addresses and strides, down to
    bytes, so it reads any layout)."""
    if not _misaligned(a, pointer_reader(backend)):
        return a
    temp = empty(backend, a.shape, a.dtype)
    _copy(temp, a, backend)
    return temp


# ---------------------------------------------------------------- running a plan
def _copy(dst, src, backend):
    """``rearrange_(dst, src)`` for a fresh temporary on either side (no overlap, no checks);
    ``src`` is broadcast to ``dst``'s shape (one launch however many dims)."""
    pointer = pointer_reader(backend)
    prepared = prepared_copy(src.itemsize, tuple(dst.shape), tuple(dst.strides),
                             broadcast_strides(src.shape, src.strides, dst.shape),
                             pointer(dst) % 32, pointer(src) % 32)
    launch(prepared.source, prepared.kernel, prepared.grid, prepared.block,
           (dst, src) + prepared.struct_args, backend=backend, shared_mem=prepared.shared_mem)


def _launch_kernel(kernel_launch, target, inputs, values, scalar_mask, backend):
    operands = [target] + [target if x is None else x for x in inputs]
    operands += [target] * (4 - len(operands))
    masks = kernel_launch.vector_masks
    flag = FLAG_OFF
    if masks is not None:
        pointer = pointer_reader(backend)
        if not any(pointer(a) & m for a, m in zip(operands, masks)):
            flag = FLAG_ON
    tail = (np.int32(scalar_mask),) + kernel_launch.layout_args + (flag,)
    if kernel_launch.outer == 0:
        launch(ek.SOURCE, kernel_launch.kernel, kernel_launch.grid, kernel_launch.block,
               (*operands, *values, *tail), backend=backend)
        return
    # More dims than the widest kernel: views with the coalesced layout, one launch per
    # index of the leading dims.
    views = [as_strided(a, kernel_launch.shape, kernel_launch.strides[k])
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
            temp = empty(backend, temp_shape, x.dtype).transpose(axes)
            _copy(temp, x, backend)
            inputs[k] = temp
    target = out
    if staging.output is not None:
        temp_shape, axes = staging.output
        target = empty(backend, temp_shape, out.dtype).transpose(axes)
    _launch_kernel(plan.launch, target, inputs, values, scalar_mask, backend)
    if target is not out:
        _copy(out, target, backend)
    return out


def _run_split(signature, split, out, inputs, values, scalar_mask, backend):
    """Offsets past 32 bits: the call on chunks of dim ``split[0]``, each within 32 bits."""
    dim, chunk = split
    shape = out.shape
    views = [None if x is None else as_strided(x, shape, broadcast_strides(x.shape, x.strides, shape))
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
    real drops the imaginary part), or written into ``out``. A new array's cast of a layout
    seen before takes the short path."""
    dtype = dtypes.as_dtype(dtype)
    name = ("astype", dtype)  # the short path's name of this cast
    if out is None:
        result = short_call(name, (x,))
        if result is not None:
            return result
    backend = backend or backend_for(x)
    with device_context([x]):
        new = out is None
        if new:
            out = empty(backend, x.shape, dtype)
        if out.size == 0:
            return out
        source = _aligned(x, backend)
        target = out
        if _misaligned(out, pointer_reader(backend)):  # cast into a temporary, copy bytewise
            target = empty(backend, out.shape, dtype)
        plan = _cast_into(target, source, backend)
        if target is not out:
            _copy(out, target, backend)
        elif new and source is x:
            remember(name, (x,), backend, plan, tuple(x.shape), dtype, x.dtype, 0)
    return out


def _cast_into(target, x, backend):
    """Run the cast of aligned ``x`` into aligned ``target``; returns its plan."""
    signature = _signature(CAST_FUNCTOR, target.dtype, x.dtype)
    zero = dtypes.kernel_scalar(x.dtype)(0)
    plan = _plan(signature, target, [x])
    _run(signature, plan, target, [x], (zero, zero, zero), 0, backend)
    return plan


def _prepare_out(func, out, shape, dtype, inputs, backend):
    """A validated ``out=``; returns (array to compute into, array to copy back into or None)."""
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{func}(): out has shape {tuple(out.shape)}, the result has shape {tuple(shape)}")
    if backend_for(out) != backend:
        raise ValueError(f"{func}(): out is on a different device than the inputs")
    # read-only, overlapping itself, then TypeError unless a same_kind cast, as on every device
    check_out(func, out, dtype)
    if out.dtype != dtype:
        return empty(backend, shape, dtype), out  # computed in the result dtype, then cast
    pointer = pointer_reader(backend)
    if _misaligned(out, pointer):
        return empty(backend, shape, dtype), out  # computed aligned, then copied bytewise
    for x in inputs:
        if x is None:
            continue
        same_view = (pointer(x) == pointer(out) and x.shape == out.shape
                     and x.strides == out.strides and x.dtype.itemsize == out.dtype.itemsize)
        if not same_view and _overlap(x, out):
            # Each element is read and written by one thread, so only an identical view is
            # safe in place; anything else computes into a temporary (NumPy's answer).
            return empty(backend, shape, dtype), out
    return out, None


def check_clip_bounds(dtype, bounds) -> None:
    """TypeError for a bound of ``clip`` that has no exact meaning for x of ``dtype``: a
    complex one, or a floating one with integer x (array-api-strict's answer too)."""
    for name, b in zip(("min", "max"), bounds):
        if b is None:
            continue
        if hasattr(b, "dtype"):
            kind, what = b.dtype.kind, f"of dtype {b.dtype}"
            kind = "f" if dtypes.is_bfloat16(b.dtype) else kind
        else:
            kind = "c" if isinstance(b, complex) else "f" if isinstance(b, float) else "i"
            what = f"{b!r}"
        if kind == "c" or (kind == "f" and dtype.kind in "iu"):
            raise TypeError(f"clip(): {name} {what} does not fit x of dtype {dtype}: bounds of "
                            f"{'integer x must be integers' if kind == 'f' else 'clip are real'}")


def scalar_clip_bound(dtype, bound, is_min: bool):
    """A scalar bound of ``clip`` (None: no bound) as a value of x's ``dtype`` range: integers
    saturated to it, floats as they are (a Python int past float64 rounds to infinity)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if bound is None:
            return int(info.min if is_min else info.max)
        return int(min(max(int(bound), info.min), info.max))
    if bound is None:
        return -math.inf if is_min else math.inf
    try:
        return float(bound)
    except OverflowError:
        return math.inf if bound > 0 else -math.inf


def resolve(op: ElementwiseOp, args) -> tuple[np.dtype, np.dtype, tuple]:
    """(dtype the kernel computes in, result dtype, result shape) of ``op(*args)`` (arrays and
    Python scalars), or the TypeError/ValueError the call raises; no kernel runs. The dtypes
    are :mod:`.resolution`'s, the rules of every device.

    >>> resolve(OPS["less"], (np.zeros(3, np.int8), 1))
    (dtype('int8'), dtype('bool'), (3,))
    >>> resolve(OPS["sqrt"], (np.zeros(2, np.int16),))
    (dtype('float32'), dtype('float32'), (2,))
    """
    loop = resolve_call(op.name, args)
    if op.name == "clip":
        check_clip_bounds(loop.dtype, args[1:])
    shape = broadcast_shapes(op.name, *(a.shape for a in args if not dtypes.is_python_scalar(a)))
    return loop.dtype, loop.result, shape


def check_operand_types(name: str, args, out) -> None:
    """TypeError for an operand that is none of an array, a NumPy scalar and a Python scalar
    (a str, a list: what CuPy refuses), or an ``out`` that is no array, on every device."""
    for a in args:
        if not is_operand(a):
            raise TypeError(f"{name}() takes arrays and Python scalars; got {type_name(a)}")
    if out is not None and not is_array(out):
        raise TypeError(f"{name}(): out must be an array; got {type_name(out)}")


def apply(op: ElementwiseOp | str, *args, out=None):
    """Apply elementwise function ``op`` (a row of the op table, or its name) with our kernels.

    ``args``: arrays (NumPy in emulation, CuPy on cuda) or Python scalars, at least one array.
    """
    op = OPS[op] if isinstance(op, str) else op
    check_operand_types(op.name, args, out)
    if all(dtypes.is_python_scalar(a) or isinstance(a, np.generic) for a in args):
        raise TypeError(f"{op.name}() needs at least one array argument")
    backend = backend_for(*args, *(() if out is None else (out,)))
    if backend == "numpy":
        raise ValueError("elementwise.apply runs kernels; the numpy backend calls NumPy")
    folded = fold_out_of_range_comparison(op.name, args)
    if folded is not None:
        op, args = folded
    with device_context([*args, out]):
        return _apply(op, args, out, backend)


_COMPARISONS = {"less": (True, False), "less_equal": (True, False),
                "greater": (False, True), "greater_equal": (False, True),
                "equal": (False, False), "not_equal": (True, True)}
_FLIPPED = {"less": "greater", "less_equal": "greater_equal", "greater": "less",
            "greater_equal": "less_equal", "equal": "equal", "not_equal": "not_equal"}


def fold_out_of_range_comparison(name, args, is_operand=is_array):
    """``(op, args)`` to call instead when ``name`` compares an integer operand (what
    ``is_operand`` holds: an array, or a traced value for ``fuse``) with a Python int outside
    its dtype's range: NumPy 2 answers it (``uint8 < -1`` is False everywhere), as
    ``x == x`` (True) or ``x != x`` (False) of the operand; None for any other call."""
    if name not in _COMPARISONS or len(args) != 2:
        return None
    constant = _out_of_range_comparison(name, args, is_operand)
    if constant is None:
        return None
    x = args[constant[1]]
    return OPS["equal" if constant[0] else "not_equal"], (x, x)


def _out_of_range_comparison(name, args, is_operand):
    """(answer, index of the array) when ``name`` compares an integer array with a Python
    int outside its dtype's range, else None. ``_COMPARISONS[name]``: the answers for a
    scalar above and below the range, the scalar on the right."""
    for k in (0, 1):
        value, array = args[1 - k], args[k]
        if type(value) is int and is_operand(array) and array.dtype.kind in "iu" \
                and not dtypes.scalar_fits(value, array.dtype):
            above = value > 0
            answers = _COMPARISONS[name if k == 0 else _FLIPPED[name]]
            return answers[0] if above else answers[1], k
    return None


def _apply(op, args, out, backend):
    # NumPy scalars are typed: they promote like 0-d arrays of their dtype (resolve reads
    # their dtype and shape), and go to the kernel by value like Python scalars (on cuda a
    # 0-d array would be a host-to-device copy per call).
    dtype_in, dtype_out, shape = resolve(op, args)
    zero = dtypes.kernel_scalar(dtype_in)(0)
    # copied: an input was realigned, so the plan is not that of args' own layouts (the
    # short path, keyed on those, must not remember it); casts: input -> its cast's plan
    # (into a C-contiguous temporary, which the short path repeats)
    inputs, values, scalar_mask, copied, casts = [], [zero, zero, zero], 0, False, {}
    pointer = pointer_reader(backend)
    for k, a in enumerate(args):
        if dtypes.is_python_scalar(a):
            inputs.append(None)
            values[k] = dtypes.scalar_value(a, dtype_in)
            scalar_mask |= 1 << k
        elif isinstance(a, np.generic):
            inputs.append(None)
            with np.errstate(all="ignore"):  # NumPy's cast, as the cast kernel would do
                values[k] = a.astype(dtype_in)
            scalar_mask |= 1 << k
        elif a.dtype != dtype_in:
            if a.size == 0 or _misaligned(a, pointer):
                inputs.append(cast(a, dtype_in, backend))
                copied = True
            else:
                inputs.append(empty(backend, a.shape, dtype_in))
                casts[k] = _cast_into(inputs[-1], a, backend)
        else:
            inputs.append(_aligned(a, backend))
            copied |= inputs[-1] is not a
    if out is None:
        target, copy_back = empty(backend, shape, dtype_out), None
    else:
        target, copy_back = _prepare_out(op.name, out, shape, dtype_out, inputs, backend)
    if target.size:
        signature = _signature(op.functor, dtype_out, dtype_in)
        plan = _plan(signature, target, inputs)
        _run(signature, plan, target, inputs, tuple(values), scalar_mask, backend)
        if not copied and copy_back is None and op.arity <= 2:
            remember(op.name, args, backend, plan, shape, dtype_out, dtype_in, scalar_mask,
                     out, casts)
    if copy_back is not None:
        if target.size and copy_back.dtype != target.dtype:
            cast(target, copy_back.dtype, backend, out=copy_back)  # out= of another dtype
        elif target.size:
            _copy(copy_back, target, backend)  # same dtype: a byte copy, any alignment of out
        return copy_back
    return target
