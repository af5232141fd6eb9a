"""``out=`` of a fused function (:mod:`.fusion`): the one result written into an array of any
layout, checked as the elementwise functions check ``out=`` (``launcher._prepare_out``:
shape, dtype, device, self-overlap, read-only); an overlap with an input other than the very
same view computes into a temporary first, then copies (NumPy's answer). A repeated call of
Arrays into an Array, on the emulator or a GPU, goes by its layout ids and checks per call
only what they do not fix (:func:`into_record`, :func:`run_into`; in C, runtime/hot_calls.c's
``fused_into``).

>>> import numpy as np, infini_cupy as xp
>>> out = np.zeros((3, 2)).T
>>> with xp.backend("emulate"):
...     _ = xp.fuse(lambda x: x * 2)(np.ones((2, 3)), out=out)
>>> out.tolist()
[[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]
"""

from __future__ import annotations

import numpy as np

from ..arrays import is_array
from ..config import enter_backend, exit_backend
from ..elementwise.fused_plan import FLAG_OFF, FLAG_ON, plan_fused
from ..elementwise.kernels import SOURCE
from ..elementwise.launcher import _copy as copy_into
from ..elementwise.launcher import _prepare_out as checked_out
from ..elementwise.launcher import cast
from ..elementwise.short_path import current_device, out_check, out_usable
from ..runtime.launch import launch
from ..strided.copy import apart_from
from ..strided.layout import overlaps_itself
from .array import Array
from .boundary import elementwise_operands, rearrange_


def launch_into(name, prepared, scalars, inputs, misaligned, out):
    """Launch a prepared call of one result into ``out``; returns ``out``. ``inputs``: the
    kernel's input arrays; ``misaligned``: their pointer bits off 16-byte packs."""
    native = out._a if type(out) is Array else out
    backend = prepared.backend
    t = enter_backend(backend)
    try:
        target, copy_back = checked_out(name, native, prepared.shape,
                                        prepared.fx.output_dtypes[0], inputs, backend)
    finally:
        exit_backend(t)
    plan = prepared.plan
    if plan is None:
        return out  # an empty result
    if target is native:
        plan = plan_fused(*prepared.layouts, (tuple(target.strides),))
    misaligned |= prepared.pointer(target) & (plan.vector_masks or (0,))[0]
    flag = FLAG_OFF if misaligned or plan.vector_masks is None else FLAG_ON
    launch(SOURCE, plan.kernel, plan.grid, plan.block,
           (scalars, *plan.layout_args, flag, target, *inputs), backend=backend)
    if copy_back is not None and copy_back.dtype != target.dtype:
        cast(target, copy_back.dtype, backend, out=copy_back)  # an out of another dtype
    elif copy_back is not None:
        copy_into(copy_back, target, backend)
    return out


def write_out(name, result, out):
    """An unfused call's ``result`` written into ``out``, checked as ``launch_into`` checks."""
    if isinstance(result, (tuple, list)):
        raise TypeError(f"{name}: out= takes a function of one output; this one returns a "
                        f"{type(result).__name__} of {len(result)}")
    if not (type(result) is Array or isinstance(result, np.generic) or is_array(result)):
        # (a function of scalars alone: as xp.add(2, 3, out=z), which needs an array)
        raise TypeError(f"{name}: out= takes an array result; the function returned "
                        f"{type(result).__name__} {result!r}")
    (result, native), backend, _ = elementwise_operands((result, out))
    result = np.asarray(result) if isinstance(result, np.generic) else result
    t = enter_backend(backend)
    try:
        checked_out(name, native, result.shape, result.dtype, (), backend)
        if native.dtype == result.dtype:
            rearrange_(native, result)
        elif backend == "numpy":
            np.copyto(native, result, casting="same_kind")
        else:
            cast(result, native.dtype, backend, out=native)
    finally:
        exit_backend(t)
    return out


def write_again(name, result, out):
    """``write_out`` for a repeat of a call whose first passed its checks (the cpu device's
    unfused calls, remembered by ``out``'s layout: its shape, dtype, device and
    self-overlap): a result of ``out``'s dtype and shape on the cpu is copied in by NumPy when
    ``out`` is writeable (what ``rearrange_`` does there); anything else goes
    ``write_out``'s way, which raises what it raised."""
    native = out._a if type(out) is Array else out
    source = result
    if type(source) is Array:
        source = source._a if source._b == "numpy" else None
    if (type(source) is np.ndarray and type(native) is np.ndarray
            and source.dtype == native.dtype and source.shape == native.shape
            and native.flags.writeable):
        np.copyto(native, apart_from(native, source))  # the result may be a view of out
        return out
    return write_out(name, result, out)


def into_record(prepared, args, out, scalar_args):
    """What a repeated call into ``out`` reads (:func:`run_into`): of Arrays into an Array,
    or of native arrays into a native array; made after a call that passed
    ``launch_into``'s checks, or None where every call goes that way (``out`` of another
    dtype or backend, Arrays into a native array, an empty result); Arrays and native arrays
    mixed into an Array are kept too: the backend and, on a
    GPU, ``out``'s device, the input checks, ``out``'s per-call checks as the elementwise
    functions' repeats make them (``short_path.out_check``) and its 16-byte mask, the plan
    for ``out``'s strides (the arguments before the flag, kernel, grid, block, the flag for
    misaligned and aligned pointers), and ``scalar_args`` (``fusion._scalar_arguments``: the
    scalar arguments' slots per call; None without), ``prepared`` and, on a GPU, ``[its
    launch record for runtime/hot_calls.c's fused_into]`` (``fusion.compiled_fused_record``,
    made after a repeat of Arrays under the compiled launch; None before)."""
    arrays = type(out) is Array
    native, backend = (out._a, out._b) if arrays else (out, prepared.backend)
    if (prepared.plan is None or backend != prepared.backend
            or (prepared.wrap is not None) != arrays
            or not (arrays or not any(unwrap for _, unwrap, _, _ in prepared.input_checks))
            or native.dtype != prepared.fx.output_dtypes[0] or overlaps_itself(native)):
        return None
    plan = plan_fused(*prepared.layouts, (tuple(native.strides),))
    if plan is None:
        return None
    checks = out_check(native, [(k, args[k]._a if unwrap else args[k])
                                for k, unwrap, _, _ in prepared.input_checks])
    masks = plan.vector_masks
    flags = (FLAG_OFF, FLAG_OFF if masks is None else FLAG_ON)
    device = native.data.device_id if backend == "cuda" else None
    return (backend, device, prepared.input_checks, checks, 0 if masks is None else masks[0],
            (prepared.scalars, *plan.layout_args), plan.kernel, plan.grid, plan.block, flags,
            scalar_args, prepared, [None])


def run_into(record, args, out, head_for):
    """A repeated call into ``out`` from :func:`into_record`: of settled Arrays into an Array
    (runtime/hot_calls.c's ``fused_into`` is its twin in C), of native arrays into a native
    array, or of both into an Array, the native arrays' pointers read per call. ``out``,
    written, or None (nothing written) for the full way (an input or ``out`` on another
    device than the current one, a check of ``out`` or an input failed:
    ``short_path.out_usable``). ``head_for``: ``fusion.head_for``, the arguments before the
    flag with the scalar arguments' slots."""
    (backend, device, checks, out_checks, out_mask, head, kernel, grid, block, flags,
     scalar_args, prepared, _) = record
    arrays = type(out) is Array
    native = out._a if arrays else out
    if backend == "cuda" and (current_device() != device or native.data.device_id != device):
        return None  # launched on the current GPU: arrays of another one go the full way
    head = head_for(head, scalar_args, args)
    if head is None:
        return None
    pointer = prepared.pointer
    addresses = [0] * len(args)
    inputs, misaligned = [], 0
    for k, unwrap, align_mask, vector_mask in checks:
        x = args[k]
        if unwrap:  # an Array, settled by the key
            address = addresses[k] = x._d
            x = x._a
        else:
            address = addresses[k] = pointer(x)
        if address & align_mask:
            return None
        if backend == "cuda" and x.data.device_id != device:
            return None
        misaligned |= address & vector_mask
        inputs.append(x)
    out_address = out._d if arrays else pointer(native)
    if not out_usable(out_checks, native, out_address, addresses):
        return None
    misaligned |= out_address & out_mask
    launch(SOURCE, kernel, grid, block, (*head, flags[not misaligned], native, *inputs),
           backend=backend)
    return out
