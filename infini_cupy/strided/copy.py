"""``rearrange_(y, x)`` and ``rearrange(x)``: strided copies on our kernels.

Host side of every copy: validate, look the layout up in the plan cache (planning, struct
packing and grid sizing happen once per layout), then launch one kernel. Overlapping source
and destination memory is handled by copying from a snapshot of the source.

A call whose layout was seen before takes a short path: one dict lookup keyed on what the
plan depends on (dtypes, shapes, strides, both addresses modulo 32), an overlap test on cached
byte extents, and the launch; a layout not yet seen goes through validation and planning.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import config, dtypes
from ..arrays import (
    DATA_FIELD_OFFSET,
    FIELD_POINTERS,
    NPY_ARRAY_WRITEABLE,
    backend_for,
    data_pointer,
    empty_on_device_of,
    is_array,
    is_writeable,
    may_overlap,
    numpy_data_pointer,
    read_address,
    same_layout,
    type_name,
)
from ..runtime import cuda, cuda_compiled
from ..runtime.launch import launch
from ..runtime.recent import RecentCalls
from ..runtime.structs import dim3
from .plan_cache import PreparedCopy, plan_for


def check_copyable_dtype(dtype, what: str) -> None:
    """Byte copies are meaningful for bool and numeric dtypes in native byte order only
    (bfloat16 included: ml_dtypes gives it NumPy kind 'V')."""
    if (dtype.kind not in "biufc" and not dtypes.is_bfloat16(dtype)) or not dtype.isnative:
        raise TypeError(
            f"{what} supports boolean and numeric dtypes in native byte order; got {dtype.str!r} "
            f"({dtype})"
        )


def _validate(y, x) -> str:
    if not is_array(y) or not is_array(x):  # (named alone: an Array comes here unwrapped)
        got = "; ".join(f"{name} is a {type(v).__name__}" for name, v in (("y", y), ("x", x))
                        if not is_array(v))
        raise TypeError(f"rearrange_(y, x) takes arrays; {got}")
    backend = backend_for(y, x)
    if y.dtype != x.dtype:
        raise TypeError(f"rearrange_: dtypes differ: y is {y.dtype}, x is {x.dtype}")
    check_copyable_dtype(x.dtype, "rearrange_")
    if y.shape != x.shape:
        raise ValueError(f"rearrange_: shapes differ: y has {y.shape}, x has {x.shape}")
    if not is_writeable(y):
        raise ValueError(
            f"rearrange_: the destination y (shape {y.shape}, strides {y.strides}) is read-only"
        )
    return backend


def _launch(prepared: PreparedCopy, y, x, backend: str) -> None:
    launch(prepared.source, prepared.kernel, prepared.grid, prepared.block,
           (y, x, *prepared.struct_args), backend=backend, shared_mem=prepared.shared_mem)


# (y dtype, x dtype, y shape, x shape, y strides, x strides, y % 32, x % 32) -> PreparedCopy,
# for layouts a full call has validated and planned. Dict operations are atomic under the GIL.
_recent = RecentCalls()


def _short_path_operands(y, x, backend=None):
    """(backend, y pointer, x pointer) when the short path applies, else None: two arrays of
    one kind on one device, a writable NumPy y under the emulate backend (``backend``: the
    Arrays' backend, None: the one in force) or CuPy arrays."""
    kind = type(y)
    if kind is not type(x):
        return None
    if kind is np.ndarray:
        if (backend or config.get_backend()) != "emulate" or not is_writeable(y):
            return None
        return "emulate", numpy_data_pointer(y), numpy_data_pointer(x)
    cupy = sys.modules.get("cupy")
    if cupy is not None and kind is cupy.ndarray:
        y_memory, x_memory = y.data, x.data
        if y_memory.device_id != x_memory.device_id:
            return None
        return "cuda", y_memory.ptr, x_memory.ptr
    return None


def rearrange_(y, x):
    """Copy ``x`` into ``y`` (same shape and dtype, any strides) and return ``y``.

    ``x`` may have negative or zero (broadcast) strides and may share memory with ``y``:
    the result is that of copying from a snapshot of ``x``. ``y`` must not overlap itself.

    >>> import numpy as np, infini_cupy as xp
    >>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> y = np.empty((3, 2), dtype=np.float32).T
    >>> with xp.backend("emulate"):
    ...     _ = xp.rearrange_(y, x)
    >>> bool((y == x).all())
    True
    """
    if short_rearrange_(y, x):
        return y
    return _rearrange_checked(y, x)


def short_rearrange_(y, x, backend=None) -> bool:
    """``rearrange_(y, x)`` when its layouts (and addresses mod 32) were planned by a full
    call and the two do not overlap: True, launched; else False, nothing done. ``backend``:
    the Arrays' backend, for the namespace's hot path (None: the one in force)."""
    if (backend == "emulate" and FIELD_POINTERS and type(y) is np.ndarray
            and type(x) is np.ndarray):  # the Arrays' hot path: _short_path_operands inlined
        if not y.flags.num & NPY_ARRAY_WRITEABLE:
            return False
        y_pointer = read_address(id(y) + DATA_FIELD_OFFSET).value or 0
        x_pointer = read_address(id(x) + DATA_FIELD_OFFSET).value or 0
    else:
        operands = _short_path_operands(y, x, backend)
        if operands is None:
            return False
        backend, y_pointer, x_pointer = operands
    prepared = _recent.get((y.dtype, x.dtype, y.shape, x.shape, y.strides, x.strides,
                            y_pointer & 31, x_pointer & 31))
    if prepared is None:
        return False
    dst_lo, dst_hi = prepared.dst_extent
    src_lo, src_hi = prepared.src_extent
    if y_pointer + dst_lo < x_pointer + src_hi and x_pointer + src_lo < y_pointer + dst_hi:
        return False  # overlapping (PreparedCopy.overlaps): the full call takes a snapshot
    launch(prepared.source, prepared.plan.kernel, prepared.grid, prepared.block,
           (y, x) + prepared.struct_args, backend=backend, shared_mem=prepared.shared_mem)
    return True


# (y's layout id, x's, their addresses mod 32) -> the PreparedCopy of _recent: the Arrays'
# hot path on the emulator, whose Arrays hold their layout ids and pointers
_by_ids = RecentCalls()


def short_rearrange_ids(y, x, y_id: int, x_id: int, y_pointer: int, x_pointer: int) -> bool:
    """:func:`short_rearrange_` of the NumPy arrays of two emulator Arrays, given their layout
    ids (:func:`~infini_cupy.elementwise.short_path.layout_id`: type, dtype, shape, strides
    and backend) and data pointers, which the Arrays read once: the same checks per call
    (a writeable ``y``, the two byte ranges apart) under a key of small ints."""
    if not y.flags.num & NPY_ARRAY_WRITEABLE:
        return False
    key = (y_id, x_id, y_pointer & 31, x_pointer & 31)
    prepared = _by_ids.get(key)
    if prepared is None:  # learnt from the full key's memo
        if type(y) is not np.ndarray or type(x) is not np.ndarray:
            return False
        prepared = _recent.get((y.dtype, x.dtype, y.shape, x.shape, y.strides, x.strides,
                                key[2], key[3]))
        if prepared is None:
            return False
        _by_ids.remember(key, prepared)
    dst_lo, dst_hi = prepared.dst_extent
    src_lo, src_hi = prepared.src_extent
    if y_pointer + dst_lo < x_pointer + src_hi and x_pointer + src_lo < y_pointer + dst_hi:
        return False  # overlapping (PreparedCopy.overlaps): the full call takes a snapshot
    launch(prepared.source, prepared.plan.kernel, prepared.grid, prepared.block,
           (y, x) + prepared.struct_args, backend="emulate", shared_mem=prepared.shared_mem)
    return True


def learn_compiled_copy(y, x, y_id: int, x_id: int, y_pointer: int, x_pointer: int) -> None:
    """After ``short_rearrange_`` launched ``rearrange_(y, x)`` of two GPU Arrays' CuPy arrays
    under the compiled launch: the copy's launch record for this thread's current context in
    ``cuda_compiled.copy_records``, under the Arrays' layout ids and pointers mod 32, where
    runtime/compiled_launch.c's ``rearrange`` finds it (kept while it is this context's)."""
    key = (y_id, x_id, y_pointer & 31, x_pointer & 31)
    prepared = _recent.get((y.dtype, x.dtype, y.shape, x.shape, y.strides, x.strides,
                            key[2], key[3]))
    if prepared is None:
        return
    module = cuda_compiled.driver(cuda.device_side_module())
    context, record = module.current_context(), cuda_compiled.copy_records.get(key)
    if record is not None and record[:2] == (cuda_compiled.generation(), context):
        return
    record = compiled_copy_record(prepared, module, context)
    if record is not None:
        cuda_compiled.copy_records.remember(key, record)


def compiled_copy_record(prepared: PreparedCopy, module, context):
    """The launch record of ``prepared`` on ``context`` (the current one) for compiled_launch.c:
    (the driver's generation, the context, the device, the kernel's ``CUfunction`` there,
    (grid, block, dynamic shared memory) as 7 ints, the struct arguments packed after two
    zero pointer slots, their offsets, and the byte extents dst_lo, dst_hi, src_lo, src_hi
    relative to the pointers); None without a context or where the parameters do not fit."""
    offsets, packed = cuda_compiled.packed_parameters(prepared.struct_args, 2)
    if context is None or not cuda_compiled.fits(module, offsets, packed):
        return None
    device = cuda.device_side_module().cuda.runtime.getDevice()
    record = (cuda_compiled.generation(), context, device,
              cuda.function_handle(device, prepared.source, prepared.kernel),
              (*dim3(prepared.grid), *dim3(prepared.block), prepared.shared_mem), packed,
              offsets, *prepared.dst_extent, *prepared.src_extent)
    assert len(record) == module.COPY_RECORD_FIELDS
    return record


def _rearrange_checked(y, x):
    """``rearrange_`` with every check; remembers the layout for the short path."""
    backend = _validate(y, x)
    if backend == "numpy":
        # Plan anyway: the same layout rules (self-overlapping y) hold on every backend; a
        # contiguous y cannot overlap itself (every new array, and views of one as a whole).
        if x.size and not (y.flags.c_contiguous or y.flags.f_contiguous):
            plan_for(y, x)
        np.copyto(y, apart_from(y, x), casting="no")
        return y
    if x.size == 0:
        return y
    prepared = plan_for(y, x)  # raises on a self-overlapping y, before anything is written
    if may_overlap(y, x):
        if same_layout(y, x):
            return y  # copying onto itself changes nothing
        snapshot = empty_on_device_of(x, x.shape, x.dtype)
        _launch(plan_for(snapshot, x), snapshot, x, backend)
        x = snapshot
        prepared = plan_for(y, x)
    elif _short_path_operands(y, x) is not None:
        _recent.remember((y.dtype, x.dtype, y.shape, x.shape, y.strides, x.strides,
                          data_pointer(y) % 32, data_pointer(x) % 32), prepared)
    _launch(prepared, y, x, backend)
    return y


def apart_from(y, x):
    """``x``, or a snapshot of it where NumPy's copy into ``y`` would read bytes it has
    already written. NumPy copies overlapping operands through a temporary, but for a 1-d
    ``y`` whose stride points the way of ``x``'s last one, where its loop is right only for
    equal strides (``a[0:5:2] = a[0:3]`` reads ``a[2]`` after writing it)."""
    if y.ndim == 1 and x.ndim and x.strides[-1] != y.strides[0] and np.may_share_memory(y, x):
        return x.copy()
    return x


def rearrange_copy(x):
    """A new C-contiguous copy of ``x`` on ``x``'s device."""
    if not is_array(x):
        raise TypeError(f"rearrange takes an array; got {type_name(x)}")
    y = empty_on_device_of(x, x.shape, x.dtype)
    return rearrange_(y, x)


__all__ = ["apart_from", "learn_compiled_copy", "rearrange_", "rearrange_copy", "short_rearrange_",
           "short_rearrange_ids"]
