"""The seed planner: the InfiniCore Moore rearrange algorithm that splits a layout's dims
between a block's threads and the grid, and the kernel matrix it launches.

Pure Python (no CuPy, no NumPy): every input is an int or a tuple of ints, every output a
frozen, hashable dataclass, so the caller can cache plans and the tests run on any machine.
Strides are in BYTES, as NumPy/CuPy ``.strides`` report them; they may be negative, and
source strides may be 0 (broadcast). The planner re-creates the InfiniCore Moore rearrange
planner (seed 000) with two changes: the vector width checks every stride and both base
addresses, and layouts outside the kernel matrix get a flat-index plan (seed 001).

Kernel semantics of a :class:`RearrangePlan` (kernel ``rearrange<Unit, B, G, C, Index>``):
``grid_blocks`` logical blocks of ``block_threads`` threads, run by ``launch_blocks`` launched
blocks (each a contiguous range of logical blocks). Logical block ``b`` is decomposed over
``grid_len`` and thread ``t`` over ``block_len``, last index fastest. A thread with
``t >= block_elements``, or for which some constraint has
``grid_index[grid_idx] * grid_div_block + block_index[block_idx] >= total_len``, copies
nothing. Every other thread copies ``unit`` bytes from ``src + src_offset`` to
``dst + dst_offset``, each offset being ``sum(index * stride)`` over the grid and block dims.

Kernel semantics of a :class:`GeneralRearrangePlan` (kernel ``rearrange_general<Unit, Index>``):
every element ``i < total`` of the C-order enumeration of ``shape`` is copied once (``unit``
bytes at ``sum(index * stride)``), consecutive elements by consecutive threads.

``Index`` is ``int`` when every byte offset of both layouts and the element count fit in 31
bits with room to spare (:func:`fits_32_bits`), else ``long long``: the kernels then do all
their index arithmetic in 32 bits.

Steps 1-2 (normalizing the layout, the vector width) are :mod:`.layout`'s; steps 3-4 (the
block/grid split, the constraints) are :func:`seed_plan`'s. Which plan a layout gets (this
one, a staged or a packed copy) is :mod:`.planner`'s choice.

>>> from infini_cupy.strided.layout import normalize_layout
>>> plan = seed_plan(normalize_layout((2001, 2001), (8004, 4), (4, 8004), 4), 1024)
>>> plan.kernel, plan.block_len, plan.grid_len, len(plan.constraints)
('rearrange<4, 2, 2, 2, int>', (32, 32), (63, 63), 2)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

from ..perf.devices import H100, WARP_SIZE
from .layout import UNIT_SIZES, LaunchPlan, NormalizedLayout, columns

MAX_BLOCK_DIMS = 5
MAX_GRID_DIMS = 5
MAX_CONSTRAINTS = 2
GENERAL_BLOCK_THREADS = 256
# Launch grids are sized for an H100 (SXM): its SMs, the threads one SM holds, and a few waves
# of resident blocks, so that every SM stays busy to the end. Correct on any GPU: the kernels
# loop over whatever work their block is given.
LAUNCH_WAVES = 4
INDEX_32_LIMIT = 2**31 - 2**26  # offsets below this leave room for the kernels' loop steps


class Constraint(NamedTuple):
    """A dim split between grid and block whose length is not a multiple of the block part.

    A thread is out of range when
    ``grid_index[grid_idx] * grid_div_block + block_index[block_idx] >= total_len``.
    """

    grid_idx: int  # position of the split dim's grid part in ``grid_len``
    block_idx: int  # position of its block part in ``block_len``
    grid_div_block: int  # indices of the dim covered by one block (the block part's length)
    total_len: int  # the dim's full length


@dataclass(frozen=True)
class RearrangePlan(LaunchPlan):
    """A launch of ``rearrange<unit, len(block_len), len(grid_len), len(constraints)>``.

    unit: bytes each thread copies (1, 2, 4, 8, 16 or 32).
    block_len: lengths of the dims walked by the threads of a block, outer -> inner; the last
        (fastest-varying thread index) walks the smallest dst stride. At least one dim.
    dst_block_stride, src_block_stride: byte strides of those dims.
    grid_len: lengths of the dims walked by the blocks, outer -> inner. At least one dim.
    dst_grid_stride, src_grid_stride: byte strides of the grid dims.
    constraints: :class:`Constraint` tuples ``(grid_idx, block_idx, grid_div_block,
        total_len)`` for split dims whose length the block part does not divide; at most 2.
    block_elements: product of ``block_len``; threads ``t >= block_elements`` copy nothing.
    block_threads: threads per block, ``block_elements`` rounded up to a multiple of 32.
    grid_blocks: logical blocks, the product of ``grid_len``; 0 when there is nothing to
        copy (zero-size arrays: launch nothing).
    kernel: the name expression, ``rearrange_kernel_name(unit, B, G, C, index)``.
    launch_blocks: blocks to launch (1-D grid), :func:`launch_blocks`; each runs a contiguous
        range of logical blocks.
    """

    unit: int
    block_len: tuple[int, ...]
    dst_block_stride: tuple[int, ...]
    src_block_stride: tuple[int, ...]
    grid_len: tuple[int, ...]
    dst_grid_stride: tuple[int, ...]
    src_grid_stride: tuple[int, ...]
    constraints: tuple[Constraint, ...]
    block_elements: int
    block_threads: int
    grid_blocks: int
    kernel: str
    launch_blocks: int


@dataclass(frozen=True)
class GeneralRearrangePlan(LaunchPlan):
    """A launch of the flat-index kernel ``rearrange_general<unit>`` (any number of dims).

    unit: bytes each thread copies (1, 2, 4, 8, 16 or 32).
    shape: normalized dims, outer -> inner; thread ``i`` copies element ``i`` of its C-order
        enumeration, so consecutive threads walk the smallest dst stride.
    dst_strides, src_strides: byte strides of the dims of ``shape``.
    total: elements to copy, the product of ``shape``.
    block_threads: threads per block (a multiple of 32).
    grid_blocks: ``ceil(total / block_threads)``, the blocks one element per thread would take.
    kernel: the name expression, ``general_kernel_name(unit, index)``.
    launch_blocks: blocks to launch (1-D grid, a grid-stride loop), :func:`launch_blocks` of
        the ``grid_blocks``.
    """

    unit: int
    shape: tuple[int, ...]
    dst_strides: tuple[int, ...]
    src_strides: tuple[int, ...]
    total: int
    block_threads: int
    grid_blocks: int
    kernel: str
    launch_blocks: int


INDEX_TYPES = ("int", "long long")  # the kernels' Index: 32-bit when the layout allows


def rearrange_kernel_name(unit: int, block_dims: int, grid_dims: int, constraints: int,
                          index: str = "long long") -> str:
    """Name expression of a kernel of the matrix: ``rearrange<Unit, B, G, C, Index>``."""
    return f"rearrange<{unit}, {block_dims}, {grid_dims}, {constraints}, {index}>"


def general_kernel_name(unit: int, index: str = "long long") -> str:
    """Name expression of the flat-index kernel: ``rearrange_general<Unit, Index>``."""
    return f"rearrange_general<{unit}, {index}>"


def all_kernel_names() -> tuple[str, ...]:
    """Every rearrange name expression the planner can return: 900 matrix + 12 general."""
    matrix = tuple(
        rearrange_kernel_name(unit, b, g, c, index)
        for index in INDEX_TYPES
        for unit in UNIT_SIZES
        for b in range(1, MAX_BLOCK_DIMS + 1)
        for g in range(1, MAX_GRID_DIMS + 1)
        for c in range(MAX_CONSTRAINTS + 1)
    )
    return matrix + tuple(general_kernel_name(unit, index)
                          for index in INDEX_TYPES for unit in UNIT_SIZES)


def units_per_thread(unit: int) -> int:
    """Units each thread copies per trip of the rearrange kernels' copy loop (every load
    before any store): ``ic::UnitsPerThread`` in rearrange.cu."""
    return 8 if unit <= 2 else (4 if unit <= 16 else 2)


def launch_blocks(logical_blocks: int, unit: int, block_threads: int) -> int:
    """Blocks to launch for ``logical_blocks`` blocks of work whose threads copy
    ``units_per_thread(unit)`` units per trip: one block per trip, but at least one wave of
    the blocks an H100 holds at once (short copies fill the SMs before they batch units), and
    at most ``LAUNCH_WAVES`` waves (the kernels loop over the rest).

    >>> launch_blocks(100, 4, 1024), launch_blocks(448, 4, 1024), launch_blocks(10**6, 4, 1024)
    (100, 264, 1056)
    """
    resident = min(H100.blocks_per_sm, max(1, H100.threads_per_sm // max(1, block_threads)))
    wave = H100.sms * resident
    trips = -(-logical_blocks // units_per_thread(unit))
    return max(0, min(logical_blocks, max(trips, wave), wave * LAUNCH_WAVES))


def fits_32_bits(shape, *strides) -> bool:
    """Every byte offset of each layout (one step past each dim included) and the element
    count stay below ``INDEX_32_LIMIT``: the kernels may index in 32 bits.

    >>> fits_32_bits((1024, 1024), (4096, 4), (4, 4096)), fits_32_bits((2**16, 2**16), (2**16, 1))
    (True, False)
    """
    if math.prod(shape) >= INDEX_32_LIMIT:
        return False
    return all(sum(n * abs(s) for n, s in zip(shape, side)) < INDEX_32_LIMIT for side in strides)


def index_type(shape, *strides) -> str:
    """The kernels' Index for dims ``shape`` with these byte strides: ``int`` when they
    :func:`fits_32_bits`, else ``long long``."""
    return "int" if fits_32_bits(shape, *strides) else "long long"


def fast_divisor(divisor: int, index: str) -> tuple[int, int]:
    """(magic, shift) with ``n // divisor == mulhi(n, magic) >> shift`` for every
    ``0 <= n < 2**31`` (index ``int``: 32-bit multiply-high) or ``n < 2**63`` (``long long``:
    64-bit): round-up division by an invariant integer, ``divisor >= 2``.

    >>> magic, shift = fast_divisor(7, "int")
    >>> [(n * magic >> 32) >> shift for n in (6, 7, 2**31 - 1)] == [0, 1, (2**31 - 1) // 7]
    True
    """
    if divisor < 2:
        raise ValueError(f"fast_divisor needs a divisor >= 2, got {divisor}")
    numerator_bits = 31 if index == "int" else 63
    log2 = (divisor - 1).bit_length()  # ceil(log2(divisor)) >= 1
    magic = -(-(1 << (numerator_bits + log2)) // divisor)
    return magic, numerator_bits + log2 - (numerator_bits + 1)


def thread_budget(max_threads: int) -> int:
    """Threads a block may have, from ``max_threads``."""
    # Rounded down to whole warps so that rounding block_elements up to a multiple of 32
    # never exceeds max_threads; below one warp the block still launches 32 threads.
    if max_threads < 1:
        raise ValueError(f"rearrange needs max_threads >= 1, got {max_threads}")
    return max_threads - max_threads % WARP_SIZE if max_threads >= WARP_SIZE else max_threads


def _choose_block_parts(shape, dst_strides, src_strides, budget) -> dict[int, int]:
    """Step 3, the greedy sqrt-balanced splitter: dim -> indices of it one block covers.

    Dims absent from the result lie entirely in the grid. Two cursors walk the dims, one by
    ascending |dst stride| (the normalized order reversed), one by ascending |src stride|, so
    a block covers a tile contiguous-ish in both memories, as square as the budget allows.
    """
    ndim = len(shape)
    dst_order = list(range(ndim - 1, -1, -1))
    src_order = sorted(range(ndim), key=lambda i: (abs(src_strides[i]), -i))
    per_block: dict[int, int] = {}
    elements = src_taken = dst_taken = 1
    dst_cursor = src_cursor = 0
    while True:
        while dst_cursor < ndim and dst_order[dst_cursor] in per_block:
            dst_cursor += 1
        while src_cursor < ndim and src_order[src_cursor] in per_block:
            src_cursor += 1
        available = budget // elements
        if dst_cursor == ndim or src_cursor == ndim or available < 2:
            return per_block
        dst_dim, src_dim = dst_order[dst_cursor], src_order[src_cursor]
        if dst_dim == src_dim:  # innermost in both memories: as much of it as fits
            length = shape[dst_dim]
            per_block[dst_dim] = min(length, available)
            if length > available:
                return per_block
            elements *= length
            src_taken *= length
            dst_taken *= length
            continue
        # Balance so that both sides end with about as many elements: the src side may take
        # sqrt(budget / elements / ratio), the dst side ratio times that.
        ratio = src_taken / dst_taken
        src_quota = math.sqrt(budget / elements / ratio)
        dst_quota = src_quota * ratio
        src_len, dst_len = shape[src_dim], shape[dst_dim]
        if src_len <= src_quota and src_len <= available:
            per_block[src_dim] = src_len
            elements *= src_len
            src_taken *= src_len
        elif dst_len <= dst_quota and dst_len <= available:
            per_block[dst_dim] = dst_len
            elements *= dst_len
            dst_taken *= dst_len
        else:
            src_part = max(1, min(int(src_quota), available, src_len))
            dst_part = max(1, min(int(dst_quota), available // src_part, dst_len))
            per_block[src_dim] = src_part
            per_block[dst_dim] = dst_part
            return per_block


def seed_plan(layout: NormalizedLayout, budget: int) -> RearrangePlan | GeneralRearrangePlan:
    """Steps 3-4: the seed planner's block/grid split of a normalized ``layout`` for
    ``budget`` threads per block (:func:`thread_budget`), or the flat-index plan beyond it."""
    unit, dims = layout.unit, list(zip(layout.shape, layout.dst_strides, layout.src_strides))
    per_block = _choose_block_parts(*columns(dims), budget) if layout.total else {}

    # Step 4: both lists in normalized order, so the fastest thread index walks the smallest
    # dst stride. A split dim's grid part strides over whole block parts.
    block: list[tuple[int, int, int]] = []
    grid: list[tuple[int, int, int]] = []
    constraints: list[Constraint] = []
    for dim, (length, dst, src) in enumerate(dims):
        part = per_block.get(dim, 1)
        if part > 1:
            block.append((part, dst, src))
        if part < length or length == 0:  # zero-size: grid_blocks == 0, nothing launched
            grid.append((-(-length // part), dst * part, src * part))
            if part > 1 and length % part:
                constraints.append(Constraint(len(grid) - 1, len(block) - 1, part, length))

    if len(block) > MAX_BLOCK_DIMS or len(grid) > MAX_GRID_DIMS:
        index = index_type(layout.shape, layout.dst_strides, layout.src_strides)
        threads = min(GENERAL_BLOCK_THREADS, max(WARP_SIZE, budget))  # budget: whole warps
        return GeneralRearrangePlan(
            unit=unit,
            shape=layout.shape,
            dst_strides=layout.dst_strides,
            src_strides=layout.src_strides,
            total=layout.total,
            block_threads=threads,
            grid_blocks=-(-layout.total // threads),
            kernel=general_kernel_name(unit, index),
            launch_blocks=launch_blocks(-(-layout.total // threads), unit, threads),
        )
    # Every launch has at least one block dim and one grid dim.
    block_len, dst_block_stride, src_block_stride = columns(block or [(1, 0, 0)])
    grid_len, dst_grid_stride, src_grid_stride = columns(grid or [(1, 0, 0)])
    # Offsets as the kernel sums them: a split dim counts once per part.
    index = index_type(block_len + grid_len, dst_block_stride + dst_grid_stride,
                       src_block_stride + src_grid_stride)
    block_elements = math.prod(block_len)
    block_threads = -(-block_elements // WARP_SIZE) * WARP_SIZE
    grid_blocks = math.prod(grid_len)
    return RearrangePlan(
        unit, block_len, dst_block_stride, src_block_stride,
        grid_len, dst_grid_stride, src_grid_stride, tuple(constraints),
        block_elements=block_elements,
        block_threads=block_threads,
        grid_blocks=grid_blocks,
        kernel=rearrange_kernel_name(unit, len(block_len), len(grid_len), len(constraints), index),
        launch_blocks=launch_blocks(grid_blocks, unit, block_threads),
    )  # fmt: skip
