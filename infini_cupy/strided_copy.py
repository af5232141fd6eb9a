"""``rearrange_(y, x)`` and ``rearrange(x)``: strided copies on our kernels.

Host side of every copy: validate, look the layout up in the plan cache (planning, struct
packing and grid sizing happen once per layout), then launch one kernel. Overlapping source
and destination memory is handled by copying from a snapshot of the source.

A call whose layout was seen before takes a short path: one dict lookup keyed on what the
plan depends on (dtypes, shapes, strides, both addresses modulo 32), an overlap test on cached
byte extents, and the launch; a layout not yet seen goes through validation and planning.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

import numpy as np

from . import backends, variants
from .launch import launch, prepare
from .memory import data_pointer, empty_on_device_of, may_overlap, same_layout
from .planner import GeneralRearrangePlan, RearrangePlan, all_kernel_names, plan_rearrange
from .pointers import numpy_data_pointer
from .structs import CONSTRAINT, array_struct
from .tile_planner import MAX_BATCH_DIMS, TilePlan, all_tiled_kernel_names

SOURCE = "rearrange.cu"
TILED_SOURCE = "transpose.cu"
MAX_THREADS = 1024  # every CUDA GPU since Fermi; the same plans run in emulation
MAX_GRID_X = 2**31 - 1  # CUDA's gridDim.x limit; kernels loop over blocks past it
GENERAL_MAX_DIMS = 64
_RECENT_MAX = 4096  # layouts the short path remembers

variants.register(SOURCE, all_kernel_names)
variants.register(TILED_SOURCE, all_tiled_kernel_names)

# ic::TileLayout (transpose.cu): every field a long long, in declaration order.
TILE_LAYOUT = np.dtype([(name, "<i8") for name in (
    "len0", "len1", "src_stride0", "src_stride1", "dst_stride0", "dst_stride1", "src_offset",
    "dst_offset", "tile0", "tile1", "shift0", "shift1", "tiles0", "tiles1", "pitch", "tiles",
    "read_along", "read_chained", "write_chained", "read_uniform", "write_uniform")], align=True)


@dataclass(frozen=True)
class PreparedCopy:
    """A plan with its launch configuration and by-value struct arguments packed once."""

    plan: RearrangePlan | GeneralRearrangePlan | TilePlan
    source: str  # kernels_src file of the plan's kernel
    grid: int
    block: int
    struct_args: tuple  # everything after the (dst, src) pointers
    dst_extent: tuple[int, int]  # [lo, hi) bytes the copy touches, relative to dst's pointer
    src_extent: tuple[int, int]  # and to src's

    @property
    def kernel(self) -> str:
        return self.plan.kernel

    def overlaps(self, dst_pointer: int, src_pointer: int) -> bool:
        """The byte ranges of dst and src intersect (cheap; may say True for interleaved
        arrays that share no byte, which only costs a snapshot copy)."""
        return (dst_pointer + self.dst_extent[0] < src_pointer + self.src_extent[1]
                and src_pointer + self.src_extent[0] < dst_pointer + self.dst_extent[1])


def _extent(shape, strides, itemsize) -> tuple[int, int]:
    lo = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    hi = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0)
    return lo, hi + itemsize


def _tile_args(plan: TilePlan) -> tuple:
    layout = np.zeros((), TILE_LAYOUT)
    for name in TILE_LAYOUT.names:
        layout[name] = int(getattr(plan, name))
    pad = MAX_BATCH_DIMS - len(plan.batch_len)
    return (
        layout[()],
        array_struct((1,) * pad + plan.batch_len),
        array_struct((0,) * pad + plan.src_batch_stride),
        array_struct((0,) * pad + plan.dst_batch_stride),
    )


def _pack(plan) -> tuple[str, int, int, tuple]:
    """(source, grid, block, struct arguments) of a plan's launch."""
    grid = min(plan.grid_blocks, MAX_GRID_X)
    if isinstance(plan, TilePlan):
        return TILED_SOURCE, grid, plan.block_threads, _tile_args(plan)
    if isinstance(plan, GeneralRearrangePlan):
        ndim = len(plan.shape)
        args = (
            array_struct(plan.shape, GENERAL_MAX_DIMS),
            array_struct(plan.src_strides, GENERAL_MAX_DIMS),
            array_struct(plan.dst_strides, GENERAL_MAX_DIMS),
            np.int32(ndim),
            np.int64(plan.total),
        )
        return SOURCE, grid, plan.block_threads, args
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
    return SOURCE, grid, plan.block_threads, args


@functools.lru_cache(maxsize=4096)
def prepared_copy(itemsize, shape, dst_strides, src_strides, dst_residue, src_residue,
                  max_threads=MAX_THREADS) -> PreparedCopy:
    """The cached plan + packed arguments for one layout (the plan cache).

    Keyed on hashables only: addresses enter through their offset in a 32-byte sector
    (``address % 32``), the one thing about them the plan depends on. ``functools.lru_cache``
    is thread-safe.
    """
    plan = plan_rearrange(shape, dst_strides, src_strides, itemsize, max_threads=max_threads,
                          dst_address=dst_residue, src_address=src_residue)
    return PreparedCopy(plan, *_pack(plan), _extent(shape, dst_strides, itemsize),
                        _extent(shape, src_strides, itemsize))


def plan_for(y, x) -> PreparedCopy:
    """The prepared copy ``rearrange_(y, x)`` would launch (for inspection and tests)."""
    return prepared_copy(x.itemsize, tuple(x.shape), tuple(y.strides), tuple(x.strides),
                         data_pointer(y) % 32, data_pointer(x) % 32)


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
        raise ValueError(
            f"rearrange_: the destination y (shape {y.shape}, strides {y.strides}) is read-only"
        )
    return backend


def _launch(prepared: PreparedCopy, y, x, backend: str) -> None:
    launch(prepared.source, prepared.kernel, prepared.grid, prepared.block,
           (y, x, *prepared.struct_args), backend=backend)


# (y dtype, x dtype, y shape, x shape, y strides, x strides, y % 32, x % 32) -> PreparedCopy,
# for layouts a full call has validated and planned. Dict operations are atomic under the GIL.
_recent: dict[tuple, PreparedCopy] = {}


def _short_path_operands(y, x):
    """(backend, y pointer, x pointer) when the short path applies, else None: two arrays of
    one kind on one device, a writable NumPy y under the emulate backend or CuPy arrays."""
    kind = type(y)
    if kind is not type(x):
        return None
    if kind is np.ndarray:
        if backends.get_backend() != "emulate" or not y.flags.writeable:
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
    operands = _short_path_operands(y, x)
    if operands is not None:
        backend, y_pointer, x_pointer = operands
        prepared = _recent.get((y.dtype, x.dtype, y.shape, x.shape, y.strides, x.strides,
                                y_pointer & 31, x_pointer & 31))
        if prepared is not None and not prepared.overlaps(y_pointer, x_pointer):
            launch(prepared.source, prepared.plan.kernel, prepared.grid, prepared.block,
                   (y, x) + prepared.struct_args, backend=backend)
            return y
    return _rearrange_checked(y, x)


def _rearrange_checked(y, x):
    """``rearrange_`` with every check; remembers the layout for the short path."""
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
    elif _short_path_operands(y, x) is not None:
        if len(_recent) >= _RECENT_MAX:
            _recent.clear()
        _recent[(y.dtype, x.dtype, y.shape, x.shape, y.strides, x.strides,
                 data_pointer(y) % 32, data_pointer(x) % 32)] = prepared
    _launch(prepared, y, x, backend)
    return y


def clear_caches() -> None:
    """Forget planned layouts (tests that change planning or launch constants)."""
    _recent.clear()
    prepared_copy.cache_clear()


def rearrange_copy(x):
    """A new C-contiguous copy of ``x`` on ``x``'s device."""
    if not _is_array(x):
        raise TypeError(f"rearrange takes an array; got {type(x).__name__}")
    y = empty_on_device_of(x, x.shape, x.dtype)
    return rearrange_(y, x)


def warm(backend: str, names=None) -> None:
    """Compile rearrange variants ahead of use (by default all of both families: the 456 of
    the matrix and general kernels, the 22 staged-copy kernels)."""
    names = tuple(names) if names is not None else all_kernel_names() + all_tiled_kernel_names()
    tiled = tuple(n for n in names if n.startswith("tiled_copy<"))
    matrix = tuple(n for n in names if not n.startswith("tiled_copy<"))
    if matrix:
        prepare(SOURCE, matrix, backend=backend)
    if tiled:
        prepare(TILED_SOURCE, tiled, backend=backend)


__all__ = ["rearrange_", "rearrange_copy", "plan_for", "prepared_copy", "clear_caches"]
