"""Sampled launches: a plan run in the emulator under tracing, over all its blocks or its
first few (the kernels loop over blocks up to a count passed by value, which is cut), on
uninitialised buffers whose untouched pages are never committed, and read as a coalescing
profile (:mod:`.coalescing`). The plan command, the bench's model columns and the tests
profile plans through it.
"""

from __future__ import annotations

import numpy as np

from ..runtime.emulate import launcher as emulator
from ..runtime.launch import launch
from ..strided.packed_planner import PackedPlan
from ..strided.plan_cache import pack
from ..strided.seed_planner import GeneralRearrangePlan
from ..strided.tile_planner import TilePlan
from . import coalescing

PROFILE_BLOCKS = 64  # blocks a profile runs by default


def _strided_buffer(shape, strides, dtype, residue: int) -> np.ndarray:
    """An uninitialised array of ``shape``/byte ``strides`` whose element 0 sits ``residue``
    bytes past a 32-byte boundary. Pages the kernel never touches are never committed, so a
    large layout profiled over a few blocks costs little memory."""
    lo = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
    hi = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0) + dtype.itemsize
    base = np.empty(hi - lo + 64, np.uint8)
    offset = -lo + (residue - (base.ctypes.data - lo)) % 32
    return np.ndarray(shape, dtype, buffer=base, offset=offset, strides=strides)


def sampled_args(plan, struct_args, blocks: int) -> tuple:
    """The launch's struct arguments with the work cut to its first ``blocks`` blocks (the
    kernels loop over blocks up to a count passed by value: the last argument, or the tile
    layout's ``tiles``, or the packed plan's outer ``tiles``)."""
    args = list(struct_args)
    if isinstance(plan, TilePlan):
        layout = np.array(args[0])
        layout["tiles"] = blocks
        args[0] = layout[()]
    elif isinstance(plan, PackedPlan):
        outer = np.array(args[-1])
        outer["tiles"] = blocks
        args[-1] = outer[()]
    elif isinstance(plan, GeneralRearrangePlan):
        args[-1] = np.int64(min(plan.total, blocks * plan.block_threads))
    else:
        args[-1] = np.int64(blocks)
    return tuple(args)


def launch_plan(plan, dst, src, *, max_blocks=None):
    """Run ``plan`` in the emulator, copying NumPy array ``src`` into ``dst`` (the layout it was
    planned for) under tracing, over all its blocks or its first ``max_blocks``; returns
    ``(emulator.LaunchTrace, blocks run)``. The way to see a plan ``rearrange_`` would not
    choose (``tiles=False``) at work."""
    source, _, block, struct_args, shared_mem = pack(plan)
    blocks = plan.grid_blocks if max_blocks is None else max(1, min(plan.grid_blocks, max_blocks))
    if blocks < plan.grid_blocks:
        struct_args = sampled_args(plan, struct_args, blocks)
    with emulator.tracing() as trace:
        launch(source, plan.kernel, blocks, block, (dst, src, *struct_args), backend="emulate",
               shared_mem=shared_mem)
    return trace.launches[0], blocks


def profile_plan(plan, shape, dst_strides, src_strides, dtype, *, dst_address=0, src_address=0,
                 max_blocks=PROFILE_BLOCKS):
    """The coalescing of ``plan`` (for byte strides ``dst_strides``/``src_strides``, element 0
    at the given addresses modulo 32) over its first ``max_blocks`` blocks, on uninitialised
    buffers; returns ``(coalescing.LaunchProfile, blocks run)``."""
    dtype = np.dtype(dtype)
    dst = _strided_buffer(shape, dst_strides, dtype, dst_address)
    src = _strided_buffer(shape, src_strides, dtype, src_address)
    launch_trace, blocks = launch_plan(plan, dst, src, max_blocks=max_blocks)
    return coalescing.profile_launch(launch_trace), blocks
