"""The short path of elementwise calls: a call whose signature was seen before skips
validation, promotion and planning.

One dict lookup keyed on what the plan depends on (function, array types, dtypes, shapes and
strides of the inputs and of ``out=``, the types of scalar arguments: Python's, or NumPy's,
whose type names the dtype) finds the plan with its packed arguments, the output dtype and
shape, how to convert the scalars (all go by value) and the casts of inputs of another dtype
(each into a new C-contiguous temporary, as the full call does). What is left per call is
reading the pointers (alignment: off its C++ type's alignment an operand goes the full way;
their bits pick the 16-byte path), for ``out=`` whether it is writeable and overlaps an input
(then the full call computes into a temporary), converting scalars, allocating and the
launches. :func:`remember` is called by the launcher after a full call.

Calls on Arrays come in one step earlier, in :mod:`infini_cupy.namespace.boundary`: the
same plans under a key of small ints (:data:`by_ids`: the name and each Array's
:func:`layout_id`, read once per Array), so the call needs no backend switch and reads no
dtype, shape or stride; on the emulator a one-launch call runs ``known.fast``, made once for
its operands, which fills the pointers and the vector flag into an argument tuple built once
(see ``docs/dev/hot_path.md``).
"""

from __future__ import annotations

import itertools
import sys

import numpy as np

from .. import config, dtypes
from ..arrays import (
    DATA_FIELD_OFFSET,
    FIELD_POINTERS,
    cupy_data_pointer,
    current_allocator,
    empty,
    is_writeable,
    layout_extent,
    numpy_data_pointer,
    read_address,
)
from ..runtime import cuda, cuda_compiled
from ..runtime.launch import launch
from ..runtime.structs import dim3
from ..runtime.recent import RecentCalls
from ..strided.plan_cache import prepared_copy
from . import kernels as ek
from .plan import broadcast_strides

# The kernels' last argument: 1 when every operand allows the 16-byte vector path.
FLAG_ON, FLAG_OFF = np.int32(1), np.int32(0)
NO_SCALARS = np.int32(0)  # the scalar-mask argument of a cast: its one input is an array
SCALAR_TYPES = frozenset({bool, int, float, complex})
# NumPy scalars of the supported dtypes: typed, but passed by value like Python scalars.
SCALAR_TYPES |= frozenset(dt.type for dt in dtypes.ALL_DTYPES)


class _Cast:
    """The cast of one input into a C-contiguous temporary of the computing dtype."""

    __slots__ = ("shape", "launch", "values")


class _Known:
    """What a remembered signature needs per call (see ``short_call``)."""

    __slots__ = ("plan", "launch", "staged", "shape", "dtype_out", "dtype_in", "make", "values",
                 "bounds", "mask_arg", "arrays", "array_indices", "scalars", "casts", "pad",
                 "tail", "after_values", "vector_masks", "on_gpu", "copies", "out_check", "fast",
                 "fast_arrays", "out_id", "native", "compiled_launch")


# key (see _key) -> _Known; dict operations are atomic under the GIL
_known = RecentCalls()
# the same _Known under the hot path's key (see _hot_key): calls without out=
_hot = RecentCalls()
_array_types: set = {np.ndarray}
# (name, the operands' layout ids or scalar types) -> the _Known of _hot: calls on Arrays,
# whose layouts are interned once per Array (see layout_id)
by_ids = RecentCalls()
# (name, the operands' layout ids or scalar types, out='s layout id) -> the _Known of _known:
# calls on Arrays into an Array (out=, the in-place operators)
into_by_ids = RecentCalls()

# (native type, dtype, shape, strides, backend) -> a small int never given to another layout
_layout_ids: dict = {}
_next_layout_id = itertools.count(1).__next__
LAYOUT_IDS_LIMIT = 1 << 16  # cleared when full: later Arrays of a layout get a new id


def layout_id(native, backend: str) -> int:
    """The interned id of ``native``'s layout on ``backend``: equal ids, equal native type,
    dtype, shape, strides and backend. An Array computes its own once (its native array's
    layout never changes), so a repeated call is keyed by small ints (:data:`by_ids`).

    >>> import numpy as np
    >>> a, b = np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)
    >>> layout_id(a, "emulate") == layout_id(b, "emulate") != layout_id(a.T, "emulate")
    True
    """
    key = (type(native), native.dtype, native.shape, native.strides, backend)
    found = _layout_ids.get(key)
    if found is None:
        if len(_layout_ids) >= LAYOUT_IDS_LIMIT:
            _layout_ids.clear()  # ids are never reused: a plan keyed by an old one stays right
        found = _layout_ids[key] = _next_layout_id()
    return found


def _operands_key(key: list, args):
    """``key`` extended with each operand's type, and an array's dtype, shape and strides;
    None for an operand the short path does not take."""
    for a in args:
        kind = type(a)
        if kind in _array_types:
            key += (kind, a.dtype, a.shape, a.strides)
        elif kind in SCALAR_TYPES:
            key.append(kind)
        else:
            return None
    return key


def _key(name, args, out=None):
    """The short path's key, or None for arguments it does not take."""
    key = _operands_key([name], args)
    if key is None:
        return None
    if out is not None:
        kind = type(out)
        if kind not in _array_types:
            return None
        key += ("out", kind, out.dtype, out.shape, out.strides)
    return tuple(key)


def _simple(plan) -> bool:
    """One launch of the planned kernel, nothing staged, no host loop."""
    return (plan.split is None and not plan.launch.outer and not plan.staging.inputs
            and plan.staging.output is None)


def remember(name, args, backend, plan, shape, dtype_out, dtype_in, scalar_mask, out=None,
             casts=None):
    """Remember the call ``name(*args, out=out)`` that ran ``plan`` (``name``: an op-table
    name, or ``("astype", dtype)`` for a cast). ``casts``: input index ->
    the plan of its cast into a C-contiguous temporary of ``dtype_in`` (inputs not listed
    were used in place); ``out``: given only when the kernel wrote into it directly."""
    casts = casts or {}
    if plan.split is not None or plan.launch.outer:
        return
    if not all(_simple(cast_plan) for cast_plan in casts.values()):
        return
    cupy = sys.modules.get("cupy")
    if backend == "cuda" and cupy is not None:
        _array_types.add(cupy.ndarray)
    key = _key(name, args, out)
    if key is None:
        return
    known = _Known()
    known.plan, known.launch, known.shape = plan, plan.launch, shape
    known.staged = bool(plan.staging.inputs) or plan.staging.output is not None
    known.dtype_out, known.dtype_in = dtype_out, dtype_in
    known.make = dtypes.kernel_scalar(dtype_in)  # dtype_in.type; bfloat16: its bits
    known.values = [known.make(0)] * 3  # s0, s1, s2; scalars replace theirs per call
    known.mask_arg = np.int32(scalar_mask)
    # Strides are in the key (checked aligned by the full call); an address off the C++
    # type's alignment goes through apply, which copies that operand aligned first.
    known.arrays = tuple((k, dtypes.alignment(args[k].dtype) - 1)
                         for k in range(len(args)) if not scalar_mask >> k & 1)
    known.array_indices = tuple(k for k, _ in known.arrays)
    known.scalars = tuple(k for k in range(len(args)) if scalar_mask >> k & 1)
    known.casts = tuple((k, _cast_step(args[k], cast_plan, dtype_in))
                        for k, cast_plan in sorted(casts.items()))
    known.out_check = None if out is None else _out_check(args, out, known, casts)
    known.pad = 3 - len(args)  # unused pointer arguments: out again
    known.after_values = (known.mask_arg, *plan.launch.layout_args)
    known.tail = (*known.values, *known.after_values)
    masks = None if known.staged else plan.launch.vector_masks
    known.vector_masks = None if masks is None else (
        masks[0], tuple((k, masks[k + 1]) for k in known.array_indices))
    known.on_gpu = backend == "cuda"
    known.copies = {}
    # A complex scalar of a loop that is not complex (logical functions take its truth
    # value) has no range to compare with: it takes the full conversion.
    known.bounds = None if any(type(args[k]) is complex for k in known.scalars) \
        else dtypes.plain_scalar_bounds(dtype_in)
    known.out_id = None  # the output's layout id, from the first output of the hot path
    known.native = None  # what runtime/hot_calls.c reads of known.fast's call, if it can
    known.compiled_launch = None  # a GPU's launch record for compiled_launch.c (compiled_launch_record)
    known.fast = None if (known.staged or known.casts or out is not None or known.on_gpu
                          or not FIELD_POINTERS) else _fast_function(known)
    if out is not None and not (known.staged or known.casts or known.on_gpu) and FIELD_POINTERS:
        known.native = _native_into(known)
    _known.remember(key, known)
    if out is None:
        hot_key = _hot_key(name, backend, args)
        if hot_key is not None:
            _hot.remember(hot_key, known)


def _fast_template(known) -> tuple:
    """What ``known.fast`` reads of a one-launch call on the emulator: per input array
    (index, alignment mask, 16-byte mask), the output's shape, dtype and 16-byte mask, the
    kernel, grid and block, the number of unused pointer slots (the output again) and the
    packed tail (scalar values, scalar mask, layouts, the flag) for the flag off and on.
    Without vector masks the masks are 0 and both tails carry the flag off."""
    masks = dict(known.vector_masks[1]) if known.vector_masks is not None else {}
    out_mask = known.vector_masks[0] if known.vector_masks is not None else 0
    arrays = tuple((k, align_mask, masks.get(k, 0)) for k, align_mask in known.arrays)
    off = (*known.tail, FLAG_OFF)
    tails = (off, off) if known.vector_masks is None else (off, (*known.tail, FLAG_ON))
    kernel_launch = known.launch
    return (arrays, known.shape, known.dtype_out, out_mask, kernel_launch.kernel,
            kernel_launch.grid, kernel_launch.block, known.pad, tails)


def _native_into(known) -> tuple | None:
    """``known.native`` of a call into ``out=`` on the emulator (what runtime/hot_calls.c's
    ``into`` reads): ``_fast_function``'s fields (no shape or dtype: nothing is allocated) and
    ``known.out_check``, the checks ``run`` makes of ``out``; for arrays alone, or one array
    and one scalar by value (``z *= 2.0``); None otherwise (the Python way)."""
    arrays, _, _, out_mask, kernel, grid, block, pad, (off, on) = _fast_template(known)
    if known.scalars:
        if not _scalar_by_value(known, arrays, pad):
            return None
        _, align1, vector1 = arrays[0]
        last, seen_for = _scalar_tails(known, off[3:], on[3:])
        return (1, None, None, out_mask, kernel, grid, block, off[3:], on[3:], align1,
                vector1, 0, 0, known.scalars[0], last, seen_for, known.out_check)
    (_, align1, vector1), (_, align2, vector2) = (arrays + ((1, 0, 0),))[:2]
    return (len(arrays), None, None, out_mask, kernel, grid, block, off, on, align1, vector1,
            align2, vector2, -1, None, None, known.out_check)


def compiled_launch_record(known):
    """``known.compiled_launch``: what runtime/compiled_launch.c reads to run a GPU's one-launch
    call (arrays, or one array and one scalar by value; into a new output or into ``out=``; no
    casts or staged copies) on this thread's current context, or None (the Python way takes
    every call). The fields, in order: the number of arrays, the output's shape, dtype and
    16-byte mask, each input's alignment and 16-byte masks, the driver's generation, the
    context, the device, the kernel's ``CUfunction`` there, (grid, block, dynamic shared
    memory) as 7 ints, the parameters packed as bytes with the vector flag off and on (the 4
    pointer slots zero; a scalar's value zero), each parameter's offset in them (uint32), the
    scalar's operand index (-1: none), ``[the last (scalar, bytes off, bytes on) seen]`` and
    the function that makes them for another scalar (:func:`_compiled_scalar_bytes`), and
    ``known.out_check`` (None: a new output). Made after a call of the plan ran the Python way
    on this context (its kernel loaded, the context current)."""
    if known.staged or known.casts:
        return None
    cupy = cuda.device_side_module()
    module = cuda_compiled.driver(cupy)
    context, record = module.current_context(), known.compiled_launch
    if record is not None and record[8:10] == (cuda_compiled.generation(), context):
        return record  # still this context's (C declined the call for another reason)
    arrays, shape, dtype_out, out_mask, kernel, grid, block, pad, (off, on) = \
        _fast_template(known)
    scalar_at, last, bytes_for = -1, None, None
    if known.scalars:
        if not _scalar_by_value(known, arrays, pad):
            return None
        scalar_at = known.scalars[0]
        last, bytes_for = _compiled_scalar_bytes(known, off, on, module.POINTER_SLOTS)
    if context is None or len(arrays) + len(known.scalars) + pad + 1 != module.POINTER_SLOTS:
        return None
    offsets, packed_off = cuda_compiled.packed_parameters(off, module.POINTER_SLOTS)
    packed_on = cuda_compiled.packed_parameters(on, module.POINTER_SLOTS)[1]
    if not cuda_compiled.fits(module, offsets, packed_off):
        return None
    device = cupy.cuda.runtime.getDevice()
    (_, align1, vector1), (_, align2, vector2) = (arrays + ((1, 0, 0),))[:2]
    record = (len(arrays), tuple(shape), dtype_out, out_mask, align1, vector1, align2, vector2,
              cuda_compiled.generation(), context, device,
              cuda.function_handle(device, ek.SOURCE, kernel),
              (*dim3(grid), *dim3(block), 0), packed_off, packed_on, offsets,
              scalar_at, last, bytes_for, known.out_check)
    assert len(record) == module.RECORD_FIELDS
    return record


def _compiled_scalar_bytes(known, off, on, pointers):
    """([the last (scalar, parameters off, parameters on) seen], bytes_for): a GPU launch
    record's parameters with the scalar's value in (``off``/``on``: the template's tails), made
    per scalar object from :func:`_scalar_tails`'s and kept for the next call with the same
    object, as compiled_launch.c reads them."""
    _, seen_for = _scalar_tails(known, off[3:], on[3:])
    last = [(None, b"", b"")]

    def bytes_for(v):
        """(v, the parameters flag off and on) for the scalar ``v``, kept as the last seen;
        None when its value goes the full way."""
        seen = seen_for(v)
        if seen is None:
            return None
        packed = last[0] = (v, cuda_compiled.packed_parameters(seen[1], pointers)[1],
                            cuda_compiled.packed_parameters(seen[2], pointers)[1])
        return packed

    return last, bytes_for


def _cast_step(x, cast_plan, dtype_in) -> _Cast:
    step = _Cast()
    step.shape = tuple(x.shape)
    step.launch = cast_plan.launch
    zero = dtypes.kernel_scalar(x.dtype)(0)
    step.values = (zero, zero, zero)
    return step


def _out_check(args, out, known, casts) -> tuple:
    """:func:`out_check` of the inputs the kernel reads in place (a cast one is read through
    its temporary)."""
    return out_check(out, [(k, args[k]) for k, _ in known.arrays if k not in casts])


def out_check(out, inputs) -> tuple:
    """What a repeated call checks of ``out=`` per call (:func:`out_usable`): (its alignment
    mask, its byte extent relative to its pointer, and per input ``(k, x)`` in ``inputs``:
    (k, the input's extent, whether it is out's very layout, so that only the same address
    is safe in place))."""
    lo, hi = layout_extent(out.shape, out.strides, out.itemsize)
    checks = tuple((k, *layout_extent(x.shape, x.strides, x.itemsize),
                    x.shape == out.shape and x.strides == out.strides
                    and x.itemsize == out.itemsize) for k, x in inputs)
    return dtypes.alignment(out.dtype) - 1, lo, hi, checks


def _value(known, v):
    if isinstance(v, np.generic):  # promotion made dtype_in hold it: NumPy's cast, exact
        return v.astype(known.dtype_in)
    bounds = known.bounds
    if bounds is not None and bounds[0] <= v <= bounds[1]:
        return known.make(v)
    if type(v) is int and known.dtype_in.kind in "iu":
        return None  # out of the integer range: the full call raises, or answers a comparison
    return dtypes.scalar_value(v, known.dtype_in)


def current_device() -> int:
    return sys.modules["cupy"].cuda.runtime.getDevice()


def out_usable(check, out, out_address, addresses) -> bool:
    """``out`` at ``out_address`` may take the kernel's writes directly (else the full call
    decides); ``check``: :func:`out_check`'s, ``addresses[k]``: input k's pointer."""
    align_mask, lo, hi, inputs = check
    if out_address & align_mask or not is_writeable(out):
        return False
    lo, hi = out_address + lo, out_address + hi
    for k, x_lo, x_hi, same in inputs:
        address = addresses[k]
        if address + x_lo < hi and lo < address + x_hi and not (same and address == out_address):
            return False
    return True


def short_call(name: str, args, out=None):
    """``name(*args, out=out)`` (one or two arguments) when its signature is remembered and
    the arrays' backend runs kernels; None otherwise (``apply`` then does the work, and has
    written nothing)."""
    known = _known.get(_key(name, args, out))
    if known is None:
        return None
    if known.on_gpu:
        return run(known, args, out, "cuda")
    if config.get_backend() != "emulate":
        return None  # the numpy backend asked for: apply says what happens
    if out is None and known.fast is not None:
        return _fast_call(known, args)
    return run(known, args, out, "emulate")


def known_into(name: str, args, out):
    """The remembered plan of ``name(*args, out=out)`` (natives and scalars of Arrays, a
    native ``out``), or None: what :data:`into_by_ids` learns on its first miss."""
    key = _key(name, args, out)
    return None if key is None else _known.get(key)


def hot_known(name: str, backend: str, args):
    """The remembered plan of ``name(*args)`` on ``backend`` (natives and scalars of Arrays,
    no ``out=``), or None: what :data:`by_ids` learns on its first miss."""
    key = _hot_key(name, backend, args)
    return None if key is None else _hot.get(key)


def _fast_call(known, args):
    """``run`` of a one-launch call on the emulator without ``out=`` (``known.fast``), the
    inputs' addresses read here."""
    addresses = [0, 0, 0]
    for k, _, _ in known.fast_arrays:
        addresses[k] = read_address(id(args[k]) + DATA_FIELD_OFFSET).value or 0
    result = known.fast(args, addresses)
    return None if result is None else result[0]


def _fast_function(known):
    """``known.fast(args, addresses)``: ``run`` of a one-launch call on the emulator without
    ``out=``, its checks unrolled (inputs aligned for their C++ type, scalars in range) and
    specialised once for its operands (two arrays, one, an array and a scalar); the argument
    tuple is the template's (:func:`_fast_template`) with the pointers and the vector flag
    filled in. ``addresses[k]``: the data pointer of array operand ``k`` (an Array reads its
    own once). Returns (the output, its address), or None, nothing written, when a check
    sends the call the full way. The output is ``numpy.empty``'s unless
    :func:`~infini_cupy.arrays.outputs_from` says otherwise."""
    template = _fast_template(known)
    arrays, shape, dtype_out, out_mask, kernel, grid, block, pad, (off, on) = template
    known.fast_arrays = arrays
    source, new_empty, allocator, read = ek.SOURCE, np.empty, current_allocator, read_address

    def output():
        """The output and its address (arrays.empty inlined)."""
        alloc = allocator()
        out = new_empty(shape, dtype_out) if alloc is None else alloc(tuple(shape),
                                                                      np.dtype(dtype_out))
        return out, read(id(out) + DATA_FIELD_OFFSET).value or 0

    scalars = known.scalars
    if not scalars and len(arrays) == 2:
        (_, align1, vector1), (_, align2, vector2) = arrays
        known.native = (2, tuple(shape), dtype_out, out_mask, kernel, grid, block, off, on,
                        align1, vector1, align2, vector2, -1, None, None)

        def fast(args, addresses):
            a1, a2 = addresses[0], addresses[1]
            if a1 & align1 or a2 & align2:
                return None
            alloc = allocator()
            if alloc is None:
                out = new_empty(shape, dtype_out)
                address = read(id(out) + DATA_FIELD_OFFSET).value or 0
            else:
                out, address = output()
            launch(source, kernel, grid, block, (out, args[0], args[1], out)
                   + (off if a1 & vector1 or a2 & vector2 or address & out_mask else on),
                   backend="emulate")
            return out, (address if alloc is None else None)
    elif not scalars and len(arrays) == 1:
        align1, vector1 = arrays[0][1:]
        known.native = (1, tuple(shape), dtype_out, out_mask, kernel, grid, block, off, on,
                        align1, vector1, 0, 0, -1, None, None)

        def fast(args, addresses):
            a1 = addresses[0]
            if a1 & align1:
                return None
            alloc = allocator()
            if alloc is None:
                out = new_empty(shape, dtype_out)
                address = read(id(out) + DATA_FIELD_OFFSET).value or 0
            else:
                out, address = output()
            launch(source, kernel, grid, block, (out, args[0], out, out)
                   + (off if a1 & vector1 or address & out_mask else on), backend="emulate")
            return out, (address if alloc is None else None)
    elif _scalar_by_value(known, arrays, pad):
        k, align1, vector1 = arrays[0]
        s = scalars[0]
        off, on = off[3:], on[3:]  # the scalar mask, the layouts, the flag
        last, seen_for = _scalar_tails(known, off, on)

        known.native = (1, tuple(shape), dtype_out, out_mask, kernel, grid, block, off, on,
                        align1, vector1, 0, 0, s, last, seen_for)

        def fast(args, addresses):  # an array and a Python scalar, by value
            a1 = addresses[k]
            if a1 & align1:
                return None
            v = args[s]
            seen = last[0]  # one read: another thread may replace it
            if seen[0] is not v:
                seen = seen_for(v)
                if seen is None:
                    return None
            alloc = allocator()
            if alloc is None:
                out = new_empty(shape, dtype_out)
                address = read(id(out) + DATA_FIELD_OFFSET).value or 0
            else:
                out, address = output()
            launch(source, kernel, grid, block,
                   ((out, args[0], out, out) if s == 1 else (out, out, args[1], out))
                   + seen[1 if a1 & vector1 or address & out_mask else 2], backend="emulate")
            return out, (address if alloc is None else None)
    else:
        def fast(args, addresses):  # scalars of another kind: the general filling
            misaligned = 0
            for k, align_mask, vector_mask in arrays:
                address = addresses[k]
                if address & align_mask:
                    return None
                misaligned |= address & vector_mask
            filled = _scalars_filled(known, args, None)
            if filled is None:
                return None
            out, address = output()
            operands, values = filled
            operands = [out if k in scalars else a for k, a in enumerate(operands)]
            tail = off if misaligned or address & out_mask else on
            launch(source, kernel, grid, block,
                   (out, *operands, *(out,) * pad, *values, *known.after_values, tail[-1]),
                   backend="emulate")
            return out, address

    return fast


def _scalar_by_value(known, arrays, pad) -> bool:
    """A call of one array and one scalar whose value goes by value into its kernel's tail
    (the scalar's seen tails, :func:`_scalar_tails`, serve it)."""
    return (len(known.scalars) == 1 and len(arrays) == 1 and pad == 1
            and known.bounds is not None)


def _scalar_tails(known, off, on):
    """([the last (scalar, tail off, tail on) seen], seen_for): the packed tails of a plan of
    one array and one scalar (``off``/``on``: the scalar mask, the layouts and the flag), made
    per scalar object and kept for the next call with the same object (hot_calls.c reads
    both, as ``known.native``'s last two scalar fields)."""
    s = known.scalars[0]
    low, high = known.bounds
    make, zero = known.make, known.values[2]
    last = [(None, off, on)]  # the last scalar (the very object, so its value) and its tails

    def seen_for(v):
        """(v, the tails flag off and on) for the scalar ``v``, kept as the last seen; None
        when its value goes the full way."""
        kind = type(v)
        if (kind is float or kind is int) and low <= v <= high:
            value = make(v)
        else:
            value = _value(known, v)
            if value is None:
                return None
        values = (zero, value, zero) if s == 1 else (value, zero, zero)
        seen = last[0] = (v, values + off, values + on)
        return seen

    return last, seen_for


def _scalars_filled(known, args, out):
    """(the operands with ``out`` in each scalar's pointer slot, a pointer the kernel does not
    read; the scalar values converted to the computing dtype), or None when a scalar is out
    of its dtype's range (the full call decides)."""
    values = known.values[:]
    operands = list(args)
    for k in known.scalars:
        value = values[k] = _value(known, args[k])
        if value is None:
            return None
        operands[k] = out
    return operands, values


def _hot_key(name, backend, args):
    """:func:`hot_known`'s key of a call ``name(*args)`` on ``backend``, or None."""
    key = _operands_key([name, backend], args)
    return None if key is None else tuple(key)


def run(known, args, out, backend, read=None):
    """The remembered call ``known`` of ``args`` on ``backend``: every per-call check (arrays
    on the current GPU, aligned for their C++ type; ``out=`` writeable, aligned, overlapping no
    input but in its very layout), then allocation, scalars, casts and the launches. None
    (nothing written) when a check sends the call the full way. ``read``: on the emulator,
    the data pointers already read, ``([per operand, 0 for a scalar], out's)`` (settled
    Arrays hold theirs)."""
    # Every check before the first launch: a call that falls back has written nothing.
    addresses, out_address = [0, 0, 0], None
    if read is not None and backend == "emulate":
        pointer = numpy_data_pointer
        addresses, out_address = read
        for k, align_mask in known.arrays:
            if addresses[k] & align_mask:
                return None
    elif backend == "cuda":  # arrays on the current GPU (apply allocates on another one)
        device = current_device()
        for k, align_mask in known.arrays:
            memory = args[k].data
            address = addresses[k] = memory.ptr
            if memory.device_id != device or address & align_mask:
                return None
        if out is not None and out.data.device_id != device:
            return None
        pointer = cupy_data_pointer
    else:
        pointer = numpy_data_pointer
        for k, align_mask in known.arrays:
            address = addresses[k] = pointer(args[k])
            if address & align_mask:
                return None
    if out is None:
        out = empty(backend, known.shape, known.dtype_out)
    else:
        if out_address is None:
            out_address = pointer(out)
        if not out_usable(known.out_check, out, out_address, addresses):
            return None
    operands = args
    tail = known.tail  # the scalar values, the scalar mask, the packed layouts
    if known.scalars:
        filled = _scalars_filled(known, args, out)
        if filled is None:
            return None
        operands, values = filled
        tail = (*values, *known.after_values)
    if known.casts:  # after the scalars' checks: a call that falls back has launched nothing
        operands = list(operands)
        for k, step in known.casts:
            temp = operands[k] = empty(backend, step.shape, known.dtype_in)
            temp_address = pointer(temp)
            _launch_cast(step, temp, temp_address, args[k], addresses[k], backend)
            addresses[k] = temp_address
    if known.staged:
        return _short_staged(known, backend, pointer, out, list(operands), tail[:3])
    flag = FLAG_OFF
    if known.vector_masks is not None:
        misaligned = (pointer(out) if out_address is None else out_address) & known.vector_masks[0]
        for k, mask in known.vector_masks[1]:
            misaligned |= addresses[k] & mask
        flag = FLAG_OFF if misaligned else FLAG_ON
    kernel_launch = known.launch
    launch(ek.SOURCE, kernel_launch.kernel, kernel_launch.grid, kernel_launch.block,
           (out, *operands) + (out,) * known.pad + tail + (flag,), backend=backend)
    return out


def _launch_cast(step, temp, temp_address, x, x_address, backend):
    cast_launch = step.launch
    masks = cast_launch.vector_masks
    flag = FLAG_OFF
    if masks is not None and not (temp_address & masks[0] or x_address & masks[1]):
        flag = FLAG_ON
    launch(ek.SOURCE, cast_launch.kernel, cast_launch.grid, cast_launch.block,
           (temp, x, temp, temp, *step.values, NO_SCALARS, *cast_launch.layout_args, flag),
           backend=backend)


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
           (dst, src) + prepared.struct_args, backend=backend, shared_mem=prepared.shared_mem)
