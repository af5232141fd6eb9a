"""Every variant of the rearrange kernel matrix (450, each with 32- and 64-bit Index) and the
general kernel, launched directly with hand-built arguments and checked against NumPy, on the
suite's backend (the buffers move to the device with their alignment: ``to_device``).

The planner tests prove plans follow the kernel semantics; these prove the kernels implement
those semantics, for every (unit, block dims, grid dims, constraints) combination.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from infini_cupy.runtime.launch import launch
from infini_cupy.runtime.structs import CONSTRAINT, array_struct
from infini_cupy.strided import plan_cache as rearrange_module
from infini_cupy.strided.plan_cache import general_args
from tests.support.batches import batch_built
from infini_cupy.strided.seed_planner import INDEX_TYPES, GeneralRearrangePlan, all_kernel_names, general_kernel_name, rearrange_kernel_name

UNITS = (1, 2, 4, 8, 16, 32)
MATRIX = [(u, b, g, c) for u in UNITS for b in range(1, 6) for g in range(1, 6) for c in range(3)]


def aligned_buffer(nbytes: int, rng, align: int = 64) -> np.ndarray:
    """Random bytes whose start is aligned to ``align`` (vector units need it)."""
    raw = rng.integers(0, 256, size=nbytes + align, dtype=np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start : start + nbytes]


def split_layout(unit, n_block, n_grid, n_constraints, rng):
    """A random copy described as kernel arguments, and the NumPy views it must equal.

    Logical dims are either block-only, grid-only, or split into a grid part and a block part
    (the split ones carry the constraints, their length not a multiple of the block part).
    """
    n_split = min(n_constraints, n_block, n_grid)
    lengths = [int(rng.integers(2, 5)) for _ in range(n_block - n_split)]  # block-only
    lengths += [int(rng.integers(1, 4)) for _ in range(n_grid - n_split)]  # grid-only
    split_parts = [(int(rng.integers(2, 5)), int(rng.integers(2, 4))) for _ in range(n_split)]
    # a split dim of block part p and grid part q holds p*(q-1) < L <= p*q elements
    split_lengths = [p * (q - 1) + int(rng.integers(1, p)) for p, q in split_parts]
    logical = lengths + split_lengths
    ndim = len(logical)
    # dst: a random permutation of a C-contiguous layout; src: another, with gaps
    dst_order, src_order = rng.permutation(ndim), rng.permutation(ndim)
    dst_strides, src_strides = [0] * ndim, [0] * ndim
    step = unit
    for d in reversed(dst_order):
        dst_strides[d] = step
        step *= logical[d]
    dst_bytes = step
    step = unit
    for d in reversed(src_order):
        src_strides[d] = step
        step *= logical[d] + int(rng.integers(0, 2))
    src_bytes = step

    block, grid, constraints = [], [], []
    for d in range(n_block - n_split):
        block.append((logical[d], src_strides[d], dst_strides[d]))
    for d in range(n_block - n_split, len(lengths)):
        grid.append((logical[d], src_strides[d], dst_strides[d]))
    for i, (p, q) in enumerate(split_parts):
        d = len(lengths) + i
        constraints.append((len(grid), len(block), p, logical[d]))
        block.append((p, src_strides[d], dst_strides[d]))
        grid.append((q, p * src_strides[d], p * dst_strides[d]))
    while len(constraints) < n_constraints:  # more constraints than splits: repeat one
        constraints.append(constraints[-1] if constraints else (0, 0, 1, 1 << 40))
    # shuffle the block and grid dims: order must not matter to correctness
    block = [block[i] for i in rng.permutation(len(block))] if n_constraints == 0 else block
    return logical, dst_strides, src_strides, dst_bytes, src_bytes, block, grid, constraints


def launch_matrix_variant(unit, n_block, n_grid, n_constraints, rng, backend, to_device, to_host,
                          index="long long"):
    logical, dst_strides, src_strides, dst_bytes, src_bytes, block, grid, constraints = (
        split_layout(unit, n_block, n_grid, n_constraints, rng)
    )
    src = aligned_buffer(src_bytes, rng)
    dst = aligned_buffer(dst_bytes, rng)
    expected = dst.copy()
    element = np.dtype(f"V{unit}")
    as_view = np.lib.stride_tricks.as_strided
    expected_view = as_view(expected.view(element), logical, dst_strides)
    expected_view[...] = as_view(src.view(element), logical, src_strides)

    block_elems = math.prod(b[0] for b in block)
    grid_blocks = math.prod(g[0] for g in grid)
    device_dst = to_device(dst)
    args = (
        device_dst,
        to_device(src),
        array_struct([b[0] for b in block]),
        array_struct([b[1] for b in block]),
        array_struct([b[2] for b in block]),
        array_struct([g[0] for g in grid]),
        array_struct([g[1] for g in grid]),
        array_struct([g[2] for g in grid]),
        array_struct(constraints or [(0, 0, 0, 0)], max(n_constraints, 1), CONSTRAINT),
        np.int64(block_elems),
        np.int64(grid_blocks),
    )
    name = rearrange_kernel_name(unit, n_block, n_grid, n_constraints, index)
    threads = -(-block_elems // 32) * 32
    # fewer blocks than grid_blocks: each block runs a range of logical blocks, rows of the
    # innermost grid dim in trips of several units and their ends one unit at a time
    launch("rearrange.cu", name, max(1, grid_blocks // 3), threads, args, backend=backend)
    np.testing.assert_array_equal(to_host(device_dst), expected, err_msg=name)


@pytest.fixture(scope="module")
def compiled_matrix(backend_name):
    """Emulation: all variants up front (one library, one g++ run instead of 456). On the
    cuda backend the launcher compiles one variant per program anyway: each when first
    launched."""
    if backend_name == "emulate":
        with batch_built():
            rearrange_module.warm(backend_name, all_kernel_names())


# The stand-in's run keeps one unit (same_either_way): a variant's parameters are its B, G
# and C arrays, the same for every unit and index type.
@pytest.mark.parametrize("unit", [pytest.param(u, marks=() if u == UNITS[0] else
                                               pytest.mark.same_either_way) for u in UNITS])
def test_every_matrix_variant_copies_exactly(unit, compiled_matrix, backend_name, to_device,
                                             to_host):
    rng = np.random.default_rng(unit)
    for u, b, g, c in MATRIX:
        if u == unit:
            for index in INDEX_TYPES:
                launch_matrix_variant(u, b, g, c, rng, backend_name, to_device, to_host, index)


@pytest.mark.parametrize("index", INDEX_TYPES)
@pytest.mark.parametrize("unit", UNITS)
def test_general_kernel_copies_exactly(unit, index, compiled_matrix, backend_name, to_device,
                                       to_host):
    rng = np.random.default_rng(100 + unit)
    ndim = 7
    shape = [int(rng.integers(1, 4)) for _ in range(ndim)]
    order = rng.permutation(ndim)
    src_strides, step = [0] * ndim, unit
    for d in reversed(order):
        src_strides[d] = step
        step *= shape[d]
    src = aligned_buffer(step, rng)
    dst = aligned_buffer(step, rng)
    element = np.dtype(f"V{unit}")
    dst_strides = list(np.empty(shape, element).strides)
    expected = np.lib.stride_tricks.as_strided(src.view(element), shape, src_strides).copy()
    total = math.prod(shape)
    device_dst = to_device(dst)
    plan = GeneralRearrangePlan(unit, tuple(shape), tuple(dst_strides), tuple(src_strides), total,
                                32, -(-total // 32), general_kernel_name(unit, index), 2)
    # two blocks of one warp: a grid-stride loop of trips of several units per thread
    launch("rearrange.cu", plan.kernel, 2, 32, (device_dst, to_device(src), *general_args(plan)),
           backend=backend_name)
    np.testing.assert_array_equal(to_host(device_dst).view(element).reshape(shape), expected)
