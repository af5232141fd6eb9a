"""The plan cache of strided copies: a layout's plan with its launch configuration and
by-value struct arguments, packed once per layout (dtype size, shape, strides, addresses
modulo 32) and looked up on every later copy of that layout.

>>> p = prepared_copy(4, (64, 48), (192, 4), (4, 256), 0, 0)    # an fp32 transpose
>>> p.kernel, p.source
('tiled_copy<4, 4, 4, 0, 0>', 'transpose.cu')
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass

import numpy as np

from ..arrays import data_pointer, layout_extent
from ..runtime import recent
from ..runtime.cuda import max_dynamic_shared
from ..runtime.launch import prepare
from ..runtime.structs import CONSTRAINT, array_struct
from .planner import plan_rearrange
from .seed_planner import GeneralRearrangePlan, RearrangePlan, all_kernel_names, fast_divisor
from .packed_planner import (
    LARGE_MAX_BYTES,
    OUTER_DIMS,
    TILE_DIMS,
    PackedPlan,
    all_packed_kernel_names,
)
from .tile_planner import MAX_BATCH_DIMS, TilePlan, all_tiled_kernel_names

SOURCE = "rearrange.cu"
TILED_SOURCE = "transpose.cu"
PACKED_SOURCE = "packed.cu"
MAX_THREADS = 1024  # every CUDA GPU since Fermi; the same plans run in emulation
MAX_GRID_X = 2**31 - 1  # CUDA's gridDim.x limit; kernels loop over blocks past it
GENERAL_MAX_DIMS = 64

# ic::TileLayout (transpose.cu): every field a long long, in declaration order.
TILE_LAYOUT = np.dtype([(name, "<i8") for name in (
    "len0", "len1", "src_stride0", "src_stride1", "dst_stride0", "dst_stride1", "src_offset",
    "dst_offset", "tile0", "tile1", "shift0", "shift1", "tiles0", "tiles1", "pitch", "tiles",
    "read_along", "read_chained", "write_chained", "read_uniform", "write_uniform",
    "tiles0_magic", "tiles1_magic", "read_len_magic", "write_len_magic", "stack", "stack_len",
    "stack_src_step", "stack_dst_step", "stack_slots", "src_lo", "src_hi", "read_spread",
    "write_spread", "read_rows")], align=True)
# ic::PackedSide and ic::PackedOuter (packed.cu): int64 arrays and fields, in declaration order.
PACKED_SIDE = np.dtype([(name, "<i8", (TILE_DIMS,)) for name in (
    "len", "full", "chunk_of", "stride", "slot", "magic", "group_shift", "group_pad")] + [
    (name, "<i8") for name in (
    "dims", "run", "aligned", "uniform", "rows_at", "run_at", "words", "contiguous")], align=True)
PACKED_OUTER = np.dtype([(name, "<i8", (OUTER_DIMS,)) for name in (
    "len", "src_stride", "dst_stride", "magic")] + [("split", "<i8", (2,))] + [
    (name, "<i8") for name in ("dims", "tiles", "src_offset", "dst_offset", "src_lo", "src_hi")],
    align=True)


def divisor_magic(n: int) -> int:
    """``ic::Divisor``'s multiplier for n (kernels_src/divisor.cuh): floor((2^32 - 1) / n)."""
    return 0xFFFFFFFF // n if 0 < n < 2**32 else 0


def small_divisor_magic(n: int) -> int:
    """``ic::SmallDivisor``'s multiplier for n: ceil(2^32 / n), 0 for n <= 1."""
    return 0xFFFFFFFF // n + 1 if 1 < n < 2**32 else 0


@dataclass(frozen=True)
class PreparedCopy:
    """A plan with its launch configuration and by-value struct arguments packed once."""

    plan: RearrangePlan | GeneralRearrangePlan | TilePlan | PackedPlan
    source: str  # kernels_src file of the plan's kernel
    grid: int
    block: int
    struct_args: tuple  # everything after the (dst, src) pointers
    shared_mem: int  # dynamic shared memory per block, bytes (the launch's shared_mem)
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


def _tile_args(plan: TilePlan) -> tuple:
    layout = np.zeros((), TILE_LAYOUT)
    batch_len, src_stride, dst_stride = plan.batch_len, plan.src_batch_stride, plan.dst_batch_stride
    inner = (batch_len[-1], src_stride[-1], dst_stride[-1]) if batch_len else (1, 0, 0)
    stacked = dict(zip(("stack_len", "stack_src_step", "stack_dst_step"), inner),
                   stack_slots=plan.tile0 * plan.pitch)
    if plan.stack > 1:  # the kernel counts the stacked dim in groups of `stack` tiles
        k = plan.stack
        batch_len = (*batch_len[:-1], -(-batch_len[-1] // k))
        src_stride = (*src_stride[:-1], src_stride[-1] * k)
        dst_stride = (*dst_stride[:-1], dst_stride[-1] * k)
    # The source's bytes, from src's pointer: phase 1 reads 4-byte words whole inside them.
    src_lo, src_hi = (plan.src_offset + end for end in layout_extent(
        (plan.len0, plan.len1, *plan.batch_len),
        (plan.src_stride0, plan.src_stride1, *plan.src_batch_stride), plan.unit))
    fields = {  # the kernel's divisions, precomputed (a chained phase's rows are whole dims)
        "tiles0_magic": divisor_magic(plan.tiles0), "tiles1_magic": divisor_magic(plan.tiles1),
        "read_len_magic": small_divisor_magic(plan.len0 if plan.read_along == 0 else plan.len1),
        "write_len_magic": small_divisor_magic(plan.len1), **stacked,
        "src_lo": src_lo, "src_hi": src_hi}
    for name in TILE_LAYOUT.names:
        layout[name] = fields[name] if name in fields else int(getattr(plan, name))
    pad = MAX_BATCH_DIMS - len(batch_len)
    batch_len = (1,) * pad + batch_len
    return (
        layout[()],
        array_struct(batch_len),
        array_struct(tuple(divisor_magic(n) for n in batch_len)),
        array_struct((0,) * pad + src_stride),
        array_struct((0,) * pad + dst_stride),
    )


def _packed_side(side) -> np.void:
    record = np.zeros((), PACKED_SIDE)
    for name, values in (("len", side.length), ("full", side.full), ("chunk_of", side.chunk_of),
                         ("stride", side.stride), ("slot", side.slot),
                         ("group_shift", side.group_shift), ("group_pad", side.group_pad)):
        record[name][: len(values)] = values
    record["len"][len(side.length):] = 1
    record["full"][len(side.length):] = 1
    record["magic"][:] = [divisor_magic(int(n)) for n in record["len"]]
    record["chunk_of"][len(side.length):] = -1
    record["dims"], record["run"] = len(side.length), side.run
    record["aligned"], record["uniform"] = int(side.aligned), int(side.uniform)
    record["rows_at"], record["run_at"] = side.rows_at, side.run_at
    record["words"], record["contiguous"] = int(side.words), int(side.contiguous)
    return record[()]


def _packed_args(plan: PackedPlan) -> tuple:
    outer = np.zeros((), PACKED_OUTER)
    dims = len(plan.outer_len)
    outer["len"][:] = 1
    outer["len"][:dims] = plan.outer_len
    outer["magic"][:] = [divisor_magic(int(n)) for n in outer["len"]]
    outer["src_stride"][:dims] = plan.outer_src_stride
    outer["dst_stride"][:dims] = plan.outer_dst_stride
    outer["split"][:] = -1
    outer["split"][: len(plan.split_outer)] = plan.split_outer
    outer["dims"], outer["tiles"] = dims, plan.tiles
    outer["src_offset"], outer["dst_offset"] = plan.src_offset, plan.dst_offset
    # The source's bytes, from src's pointer: phase 1 reads words cut by a run's end whole
    # inside them. A split dim's outer entry is its chunk index, whose span the tile dim's
    # full length already counts.
    rest = [k for k in range(dims) if k not in plan.split_outer]
    lo, hi = layout_extent(
        tuple(plan.read.full) + tuple(plan.outer_len[k] for k in rest),
        tuple(plan.read.stride) + tuple(plan.outer_src_stride[k] for k in rest), plan.unit)
    outer["src_lo"], outer["src_hi"] = plan.src_offset + lo, plan.src_offset + hi
    return _packed_side(plan.read), _packed_side(plan.write), outer[()]


def general_args(plan: GeneralRearrangePlan) -> tuple:
    """The struct arguments of ``rearrange_general``: shape, strides, and the magic numbers
    that divide by each dim's length (dims of length 1 dropped: they add no offset)."""
    index = "int" if plan.kernel.endswith(", int>") else "long long"
    dims = [d for d in zip(plan.shape, plan.src_strides, plan.dst_strides) if d[0] != 1]
    dims = dims or [(1, 0, 0)]
    shape, src_strides, dst_strides = zip(*dims)
    divisors = [fast_divisor(n, index) if n > 1 else (0, 0) for n in shape]
    magic = [m - (1 << 64) if m >= 1 << 63 else m for m, _ in divisors]  # int64 bit pattern
    return (
        array_struct(shape, GENERAL_MAX_DIMS),
        array_struct(src_strides, GENERAL_MAX_DIMS),
        array_struct(dst_strides, GENERAL_MAX_DIMS),
        array_struct(magic, GENERAL_MAX_DIMS),
        array_struct([shift for _, shift in divisors], GENERAL_MAX_DIMS),
        np.int32(len(shape)),
        np.int64(plan.total),
    )


def pack(plan) -> tuple[str, int, int, tuple, int]:
    """(source, grid, block, struct arguments, dynamic shared bytes) of a plan's launch."""
    grid = min(getattr(plan, "launch_blocks", plan.grid_blocks), MAX_GRID_X)
    if isinstance(plan, TilePlan):
        return TILED_SOURCE, grid, plan.block_threads, _tile_args(plan), 0
    if isinstance(plan, PackedPlan):
        return PACKED_SOURCE, grid, plan.block_threads, _packed_args(plan), plan.shared_bytes
    if isinstance(plan, GeneralRearrangePlan):
        return SOURCE, grid, plan.block_threads, general_args(plan), 0
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
    return SOURCE, grid, plan.block_threads, args, 0


def prepared_copy(itemsize, shape, dst_strides, src_strides, dst_residue, src_residue,
                  max_threads=MAX_THREADS) -> PreparedCopy:
    """The cached plan + packed arguments for one layout (the plan cache).

    Keyed on hashables only: addresses enter through their offset in a 32-byte sector
    (``address % 32``), the one thing about them the plan depends on; and on the dynamic
    shared memory the current GPU lets a block opt in to (without one, the planner's own
    limit, so that emulation runs the plans an H100 runs). ``functools.lru_cache`` is
    thread-safe.
    """
    return _prepared_copy(itemsize, shape, dst_strides, src_strides, dst_residue, src_residue,
                          max_threads, max_dynamic_shared() or LARGE_MAX_BYTES, _rule[0])


@functools.lru_cache(maxsize=4096)
def _prepared_copy(itemsize, shape, dst_strides, src_strides, dst_residue, src_residue,
                   max_threads, max_shared_bytes, rule) -> PreparedCopy:
    plan = plan_rearrange(shape, dst_strides, src_strides, itemsize, max_threads=max_threads,
                          dst_address=dst_residue, src_address=src_residue,
                          tiles=rule != "seed", max_shared_bytes=max_shared_bytes,
                          weigh_issue=rule == "model")
    return PreparedCopy(plan, *pack(plan), layout_extent(shape, dst_strides, itemsize),
                        layout_extent(shape, src_strides, itemsize))


def plan_for(y, x) -> PreparedCopy:
    """The prepared copy ``rearrange_(y, x)`` would launch (for inspection and tests)."""
    return prepared_copy(x.itemsize, tuple(x.shape), tuple(y.strides), tuple(x.strides),
                         data_pointer(y) % 32, data_pointer(x) % 32)


recent.register_cache(_prepared_copy.cache_clear)
# How plans are chosen: "model" (the planner's default), "coalescing" or "seed" (below).
_rule = ["model"]


def _planning_rule(rule: str):
    return recent.planning_switched(_rule, rule)


def seed_plans_only():
    """Plan copies with the seed planner's block/grid split only (no staged copies) inside
    the ``with`` block, for comparison; caches are cleared on the way in and out."""
    return _planning_rule("seed")


def coalescing_plans():
    """Choose plans by coalescing alone inside the ``with`` block: packed tiles wherever the
    sector model predicts they coalesce better, whatever instructions they issue
    (``plan_rearrange(weigh_issue=False)``). For comparison with the default rule, and how
    tests reach the packed kernels on layouts the model gives to other plans; caches are
    cleared on the way in and out."""
    return _planning_rule("coalescing")


# The planning rules by the names the command line gives them (``bench --planner``).
PLANNERS = ("default", "seed", "coalescing")


def planning_rule(name: str):
    """The ``with`` block of planner ``name``: ``default`` (the model's choice, nothing
    changed), ``coalescing`` (:func:`coalescing_plans`) or ``seed`` (:func:`seed_plans_only`)."""
    if name == "default":
        return contextlib.nullcontext()
    return {"coalescing": coalescing_plans, "seed": seed_plans_only}[name]()


def warm(backend: str, names=None) -> None:
    """Compile rearrange variants ahead of use (by default all three families: the 912 of
    the matrix and general kernels, the 72 staged-copy kernels, the 30 packed ones)."""
    if names is None:
        names = all_kernel_names() + all_tiled_kernel_names() + all_packed_kernel_names()
    names = tuple(names)
    tiled = tuple(n for n in names if n.startswith("tiled_copy<"))
    packed = tuple(n for n in names if n.startswith("packed_copy<"))
    matrix = tuple(n for n in names if n not in tiled and n not in packed)
    if matrix:
        prepare(SOURCE, matrix, backend=backend)
    if tiled:
        prepare(TILED_SOURCE, tiled, backend=backend)
    if packed:
        prepare(PACKED_SOURCE, packed, backend=backend)


