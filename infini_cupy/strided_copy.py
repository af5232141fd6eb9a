"""``rearrange_(y, x)`` and ``rearrange(x)``: strided copies on our kernels.

Host side of every copy: validate, look the layout up in the plan cache (planning, struct
packing and grid sizing happen once per layout), then launch one kernel. Overlapping source
and destination memory is handled by copying from a snapshot of the source.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import backends, variants
from .launch import launch, prepare
from .memory import data_pointer, empty_on_device_of, may_overlap, same_layout
from .planner import (
    GeneralRearrangePlan,
    RearrangePlan,
    alignment_class,
    all_kernel_names,
    plan_rearrange,
)
from .structs import CONSTRAINT, array_struct

SOURCE = "rearrange.cu"
MAX_THREADS = 1024  # every CUDA GPU since Fermi; the same plans run in emulation
MAX_GRID_X = 2**31 - 1  # CUDA's gridDim.x limit; kernels loop over blocks past it
GENERAL_MAX_DIMS = 64

variants.register(SOURCE, all_kernel_names)


@dataclass(frozen=True)
class PreparedCopy:
    """A plan with its launch configuration and by-value struct arguments packed once."""

    plan: RearrangePlan | GeneralRearrangePlan
    grid: int
    block: int
    struct_args: tuple  # everything after the (dst, src) pointers

    @property
    def kernel(self) -> str:
        return self.plan.kernel


def _pack(plan) -> PreparedCopy:
    if isinstance(plan, GeneralRearrangePlan):
        ndim = len(plan.shape)
        args = (
            array_struct(plan.shape, GENERAL_MAX_DIMS),
            array_struct(plan.src_strides, GENERAL_MAX_DIMS),
            array_struct(plan.dst_strides, GENERAL_MAX_DIMS),
            np.int32(ndim),
            np.int64(plan.total),
        )
        return PreparedCopy(plan, min(plan.grid_blocks, MAX_GRID_X), plan.block_threads, args)
    n_constraints = max(len(plan.constraints), 1)
    args = (
        array_struct(plan.block_len),
        array_struct(plan.src_block_stride),
        array_struct(plan.dst_block_stride),
        array_struct(plan.grid_len),
        array_struct(plan.src_grid_stride),
        array_struct(plan.dst_grid_stride),
        array_struct(
            [tuple(c) for c in plan.constraints] or [(0, 0, 0, 0)], n_constraints, CONSTRAINT
        ),
        np.int64(np.prod(plan.block_len, dtype=np.int64)),
        np.int64(plan.grid_blocks),
    )
    return PreparedCopy(plan, min(plan.grid_blocks, MAX_GRID_X), plan.block_threads, args)


@functools.lru_cache(maxsize=4096)
def prepared_copy(itemsize, shape, dst_strides, src_strides, dst_align, src_align,
                  max_threads=MAX_THREADS) -> PreparedCopy:
    """The cached plan + packed arguments for one layout (the plan cache).

    Keyed on hashables only: addresses enter through their alignment class, the one thing
    about them the plan depends on. ``functools.lru_cache`` is thread-safe.
    """
    plan = plan_rearrange(shape, dst_strides, src_strides, itemsize, max_threads=max_threads,
                          dst_address=dst_align, src_address=src_align)
    return _pack(plan)


def plan_for(y, x) -> PreparedCopy:
    """The prepared copy ``rearrange_(y, x)`` would launch (for inspection and tests)."""
    return prepared_copy(x.itemsize, tuple(x.shape), tuple(y.strides), tuple(x.strides),
                         alignment_class(data_pointer(y)), alignment_class(data_pointer(x)))


def _is_array(a) -> bool:
    return isinstance(a, np.ndarray) or backends.is_cupy_array(a)


def check_copyable_dtype(dtype, what: str) -> None:
    """Byte copies are meaningful for bool and numeric dtypes in native byte order only."""
    if dtype.kind not in "biufc" or not dtype.isnative:
        raise TypeError(
            f"{what} supports boolean and numeric dtypes in native byte order; got {dtype.str!r} "
            f"({dtype})"
        )


def _validate(y, x) -> str:
    if not _is_array(y) or not _is_array(x):
        raise TypeError(
            "rearrange_(y, x) takes arrays; got "
            f"y: {type(y).__name__}, x: {type(x).__name__}"
        )
    backend = backends.backend_for(y, x)
    if y.dtype != x.dtype:
        raise TypeError(f"rearrange_: dtypes differ: y is {y.dtype}, x is {x.dtype}")
    check_copyable_dtype(x.dtype, "rearrange_")
    if y.shape != x.shape:
        raise ValueError(f"rearrange_: shapes differ: y has {y.shape}, x has {x.shape}")
    if isinstance(y, np.ndarray) and not y.flags.writeable:
        raise ValueError("rearrange_: the destination y is read-only")
    return backend


def _launch(prepared: PreparedCopy, y, x, backend: str) -> None:
    launch(SOURCE, prepared.kernel, prepared.grid, prepared.block,
           (y, x, *prepared.struct_args), backend=backend)


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
    backend = _validate(y, x)
    if backend == "numpy":
        # Plan anyway: the same layout rules (self-overlapping y) hold on every backend.
        if x.size:
            plan_for(y, x)
        np.copyto(y, x, casting="no")  # NumPy buffers overlapping operands itself
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
    _launch(prepared, y, x, backend)
    return y


def rearrange_copy(x):
    """A new C-contiguous copy of ``x`` on ``x``'s device."""
    if not _is_array(x):
        raise TypeError(f"rearrange takes an array; got {type(x).__name__}")
    y = empty_on_device_of(x, x.shape, x.dtype)
    return rearrange_(y, x)


def warm(backend: str, names=None) -> None:
    """Compile rearrange variants ahead of use (all 456 by default)."""
    prepare(SOURCE, tuple(names or all_kernel_names()), backend=backend)


__all__ = ["rearrange_", "rearrange_copy", "plan_for", "prepared_copy"]
