"""Planning an elementwise call (pure Python, no CuPy): broadcasting, the order the kernel walks
the elements in, which operands go through a staged copy first, dim coalescing across
operands, the kernel variant and its packed layout arguments.

The walk order and staging. A kernel thread takes consecutive elements of the innermost dim of
the walk, so an operand whose memory runs along another dim (a transposed input; an ``out=``
laid out unlike the inputs) is read or written one 32-byte sector per lane: 1/8 of each
sector used for float32. Large enough calls (``STAGE_MIN_ELEMENTS``) move such an operand
through the tiled copy of ``rearrange_`` (``transpose.cu``, about 1.0 / 1.0 sector efficiency):
an input into a temporary laid out in walk order before the kernel, or the output from one
after it. The walk follows the output's memory order, or an input's when that stages fewer
elements (``add(a.T, b.T)`` computes in the inputs' order and stages the output once).

The trade-off, per staged operand of E elements: the call moves 2 x E x itemsize bytes more
through DRAM (the copy's read and write) and launches once more, but every warp access of both
launches uses whole sectors. Measured with the profiler on ``add(a, b.T)``, 1024 x 1024 float32
(12 MiB asked for): staged, 20 MiB of sectors (1.0 read and write efficiency); direct, 40 MiB
(reads 0.22: each 32-byte sector of b.T serves one 4-byte lane, and no block reads a sector
twice). The direct kernel costs less DRAM traffic only when L2 keeps b.T's sectors until the
blocks of the next 7 rows use them; float16 is worse (34 MiB read for 6). Small calls stay
direct: a second launch costs more than the wasted sectors.

One staged input and nothing else (``add(a, b.T)``, ``astype(x.T)``): the input is read in the
same launch through a shared-memory tile instead (``ew_tiled``, :mod:`.tiled_plan`), where the
coalesced walk has at most 3 dims: 3 passes of its size through DRAM instead of 5. A staged
output and nothing else (``add(a.T, b.T)`` into a new array, an ``out=`` unlike the inputs) is
likewise written through a tile (``ew_tiled_out``).

>>> plan = plan_call("ic::OpAdd", "float", "float", 4, 4, (3, 4), (16, 4),
...                   (((3, 4), (16, 4)), None))
>>> plan.launch.kernel, plan.launch.contiguous
('ew_contig<ic::OpAdd, float, float>', True)
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass

import numpy as np

from ..runtime import recent, structs
from ..perf.devices import H100
from . import kernels as ek
from .tiled_plan import BLOCK as TILED_BLOCK
from .tiled_plan import plan_tiled

BLOCK = 256
# Blocks at most; grid-stride loops cover the rest (CUDA allows 2**31 - 1 in x). Four waves of
# the blocks an H100 holds at once (132 SMs x 2048 / BLOCK threads): every SM busy to the end,
# each thread several iterations of the loop.
MAX_GRID = H100.sms * (H100.threads_per_sm // BLOCK) * 4
INT32_MAX = 2**31 - 1
STAGE_MIN_ELEMENTS = 1 << 16  # smaller calls never stage an operand (a launch costs more)
# A call whose host loop (more dims than the widest kernel) would launch more kernels than
# this, copies included, copies its operands into dense temporaries instead (dense_staging).
MAX_LAUNCHES = 4
_FIRST = float("inf")


# ---------------------------------------------------------------- layouts
def broadcast_shapes(func: str, *shapes) -> tuple:
    """The broadcast shape, or ValueError naming the function and every shape."""
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for d in range(ndim):
        n = 1
        for s in shapes:
            k = s[d - ndim] if d - ndim >= -len(s) else 1
            if k != 1:
                if n != 1 and n != k:
                    raise ValueError(f"{func}(): shapes {' and '.join(str(tuple(s)) for s in shapes)} "
                                     "cannot be broadcast together")
                n = k
        out.append(n)
    return tuple(out)


def broadcast_strides(own_shape, own_strides, shape) -> tuple:
    """Byte strides of an array of ``own_shape`` broadcast to ``shape`` (0 where it repeats)."""
    pad = len(shape) - len(own_shape)
    return tuple(0 if (i < pad or own_shape[i - pad] == 1) else own_strides[i - pad]
                 for i in range(len(shape)))


def coalesce(shape, strides_per_operand):
    """Drop length-1 dims and merge adjacent dims that are contiguous in every operand.

    ``strides_per_operand``: one tuple of byte strides per operand, same length as ``shape``.
    Returns (shape, strides_per_operand) with fewer or equal dims, outermost first.

    >>> coalesce((2, 3, 4), [(48, 16, 4), (0, 0, 4)])
    ((6, 4), [(16, 4), (0, 4)])
    """
    dims = [d for d, n in enumerate(shape) if n != 1]
    out_shape: list[int] = []
    out_strides: list[list[int]] = [[] for _ in strides_per_operand]
    for d in dims:
        n = shape[d]
        if out_shape and all(st[-1] == s[d] * n for st, s in zip(out_strides, strides_per_operand)):
            out_shape[-1] *= n
            for st, s in zip(out_strides, strides_per_operand):
                st[-1] = s[d]
        else:
            out_shape.append(n)
            for st, s in zip(out_strides, strides_per_operand):
                st.append(s[d])
    return tuple(out_shape), [tuple(st) for st in out_strides]


def memory_order(shape, strides, tie=None) -> tuple[int, ...]:
    """Dims outermost first by memory: |stride| descending; broadcast (0-stride) and length-1
    dims first; ties in ``tie`` order (a previous order's positions), else dim order."""
    rank = {d: i for i, d in enumerate(tie)} if tie is not None else {}
    return tuple(sorted(range(len(shape)), key=lambda d: (
        -(abs(strides[d]) if shape[d] > 1 and strides[d] else _FIRST), rank.get(d, d))))


def contiguous_strides(shape, order, itemsize) -> tuple:
    """Strides of a new array of ``shape`` whose memory runs in ``order`` (outermost first)."""
    strides = [0] * len(shape)
    step = itemsize
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def _misses_sectors(shape, strides, inner, itemsize) -> bool:
    """Walking dim ``inner`` fastest, this operand's lanes land a stride apart although its
    memory runs along another dim (so a staged copy could read or write it whole)."""
    step = strides[inner]
    if step == 0 or abs(step) == itemsize:
        return False
    return any(n > 1 and abs(st) == itemsize for n, st in zip(shape, strides))


@dataclass(frozen=True)
class Staging:
    """Which operands a call moves through a staged copy, and the walk order.

    order: dims of the result, outermost first, as the kernel walks them.
    inputs: (input index, temporary's shape, axes): input k is copied into
        ``empty(shape).transpose(axes)`` (its own shape, memory in walk order) first; a
        temporary of the result's shape takes the input broadcast to it (see dense_staging).
    output: (shape, axes) of the temporary the kernel writes and a copy then moves into the
        output; None when the kernel writes the output.
    """

    order: tuple[int, ...]
    inputs: tuple = ()
    output: tuple | None = None


def choose_staging(shape, out_strides, out_itemsize, inputs, in_itemsize) -> Staging:
    """The walk order and staged operands that leave no operand missing sectors, staging as
    few elements as possible; the output's memory order when nothing needs staging.

    ``inputs``: per input (own shape, own strides) of an array, or None for a scalar.
    """
    size = int(np.prod(shape, dtype=np.int64))
    out_order = memory_order(shape, out_strides)
    if len(shape) < 2 or size < STAGE_MIN_ELEMENTS:
        return Staging(out_order)
    full = [None if x is None else broadcast_strides(*x, shape) for x in inputs]
    # An input copied whole is its own shape; a view repeating elements (stride 0 on a dim of
    # length > 1) would be materialized, so it is read as it is.
    stageable = [x is not None and all(n == 1 or st for n, st in zip(*x)) for x in inputs]
    candidates = [out_order] + [memory_order(shape, st, out_order)
                                for st, ok in zip(full, stageable) if ok]
    best = None
    for order in dict.fromkeys(candidates):
        inner = next((d for d in reversed(order) if shape[d] > 1), order[-1])
        staged = [k for k, st in enumerate(full)
                  if stageable[k] and _misses_sectors(shape, st, inner, in_itemsize)]
        stage_out = _misses_sectors(shape, out_strides, inner, out_itemsize)
        missing = sum(1 for k, st in enumerate(full) if st is not None and k not in staged
                      and _misses_sectors(shape, st, inner, in_itemsize))
        cost = (missing, sum(int(np.prod(inputs[k][0], dtype=np.int64)) for k in staged)
                + (size if stage_out else 0))
        if best is None or cost < best[0]:
            best = (cost, order, staged, stage_out)
    _, order, staged, stage_out = best
    staged_inputs = []
    for k in staged:
        own_shape = inputs[k][0]
        pad = len(shape) - len(own_shape)
        own_order = [d - pad for d in order if d >= pad]
        staged_inputs.append((k, tuple(own_shape[d] for d in own_order),
                              tuple(int(i) for i in np.argsort(own_order))))
    output = None
    if stage_out:
        output = (tuple(shape[d] for d in order), tuple(int(i) for i in np.argsort(order)))
    return Staging(order, tuple(staged_inputs), output)


def _dense(shape, strides, order, itemsize) -> bool:
    """Whether an operand of byte ``strides`` is C-contiguous in walk ``order``."""
    want = contiguous_strides(shape, order, itemsize)
    return all(n == 1 or st == w for n, st, w in zip(shape, strides, want))


def dense_staging(shape, out_strides, out_itemsize, inputs, in_itemsize) -> Staging:
    """Every operand dense in the output's memory order: each input that is not is copied
    into a temporary of the result's shape (broadcast inputs materialized), and an output
    that is not is computed into a temporary and copied. The kernel is then ``ew_contig``;
    every copy is one launch of ``rearrange_``'s planner whatever the number of dims."""
    order = memory_order(shape, out_strides)
    temp_shape = tuple(shape[d] for d in order)
    axes = tuple(int(i) for i in np.argsort(order))
    staged = tuple((k, temp_shape, axes) for k, x in enumerate(inputs)
                   if x is not None and not _dense(shape, broadcast_strides(*x, shape), order,
                                                    in_itemsize))
    output = None if _dense(shape, out_strides, order, out_itemsize) else (temp_shape, axes)
    return Staging(order, staged, output)


# ---------------------------------------------------------------- the kernel launch
@dataclass(frozen=True)
class Launch:
    """One launch of ``ew_contig``, ``ew_strided``, ``ew_tiled`` or ``ew_tiled_out``, its layout
    arguments packed.

    Kernel arguments: (out, in0, in1, in2, s0, s1, s2, scalar_mask, *layout_args, vectorized).
    """

    kernel: str  # name expression in elementwise.cu
    grid: int  # blocks (1-D)
    block: int  # threads per block
    contiguous: bool  # ew_contig (else strided or tiled)
    layout_args: tuple  # contiguous: (n,); strided: (shape struct, strides struct, n);
    #   tiled: (TiledWalk,)
    vector_masks: tuple | None  # per operand (out, in0, in1, in2): the 16-byte path runs when
    #   every pointer & mask == 0; None: this layout has no vector path
    shape: tuple  # coalesced shape in walk order (strided), outermost first
    strides: tuple  # per operand (out, in0, in1, in2) byte strides, like shape; scalars 0
    outer: int = 0  # leading dims of shape the host loops over (more dims than NDIM)
    size: int = 0  # elements


@dataclass(frozen=True)
class CallPlan:
    """How one call runs: staged copies, then one kernel launch (or a host loop of them)."""

    staging: Staging
    launch: Launch | None  # None: offsets past 32 bits, see split
    split: tuple | None = None  # (dim, chunk): the host runs the call on chunks of that dim

    @property
    def launches(self) -> int:
        """Kernel launches of the call (copies included); 0 for a split call (per chunk)."""
        if self.launch is None:
            return 0
        host_loop = 1
        for n in self.launch.shape[:self.launch.outer]:
            host_loop *= n
        return len(self.staging.inputs) + (self.staging.output is not None) + host_loop


def _grid(items: int) -> int:
    return max(1, min(-(-items // BLOCK), MAX_GRID))


def _fits_int32(shape, strides_per_operand, threads: int) -> bool:
    n = 1
    for s in shape:
        n *= s
    if n + threads > INT32_MAX:
        return False
    return all(sum((s - 1) * abs(st) for s, st in zip(shape, strides)) <= INT32_MAX
               for strides in strides_per_operand)


def _struct(values, bits: int = 32):
    return structs.array_struct(values, element=np.dtype(np.int32 if bits == 32 else np.int64))


def _vector_masks(shape, strides, itemsizes, arrays, vec, contiguous):
    """Address masks of the 16-byte path, or None when the layout has none (see ew_strided)."""
    if vec == 1:
        return None
    masks = []
    for k, (st, isz) in enumerate(zip(strides, itemsizes)):
        if not arrays[k]:
            masks.append(0)
            continue
        width = vec * isz
        if contiguous:
            masks.append(width - 1)
            continue
        if st[-1] == 0 and k > 0:
            masks.append(0)  # broadcast along the inner dim: one element per pack
        elif st[-1] == isz and shape[-1] % vec == 0 and all(s % width == 0 for s in st[:-1]):
            masks.append(width - 1)
        else:
            return None
    return tuple(masks) + (0,) * (4 - len(masks))


def plan_launch(functor, out_ctype, in_ctype, out_itemsize, in_itemsize, shape, strides,
                cast=False) -> Launch | None:
    """The kernel launch over ``shape`` (walk order) for operands with byte ``strides`` (out
    first; None for a scalar input); None when some offset does not fit 32 bits."""
    arrays = [s for s in strides if s is not None]
    cshape, cstrides = coalesce(shape, arrays)
    size = int(np.prod(shape, dtype=np.int64))
    itemsizes = [out_itemsize] + [in_itemsize] * (len(strides) - 1)
    is_array = [s is not None for s in strides]
    full = iter(cstrides)
    per_operand = [next(full) if s is not None else (0,) * len(cshape) for s in strides]
    vec = max(1, 16 // max(out_itemsize, in_itemsize))
    contiguous = len(cshape) <= 1 and all(
        len(cshape) == 0 or st[0] == isz for st, isz in zip(cstrides, itemsizes))
    if contiguous:
        masks = _vector_masks(cshape, per_operand, itemsizes, is_array, vec, True)
        items = -(-size // vec) if masks else size
        return Launch(ek.contig_name(functor, out_ctype, in_ctype), _grid(items), BLOCK, True,
                      (np.int64(size),), masks, cshape, tuple(per_operand), 0, size)
    grid = _grid(size)
    if not _fits_int32(cshape, cstrides, grid * BLOCK):
        return None
    ndim = len(cshape)
    bucket = ek.MAX_STRIDED_NDIM if cast else ek.strided_bucket(min(ndim, ek.MAX_STRIDED_NDIM))
    pad = max(0, bucket - ndim)
    shape_p = (1,) * pad + cshape
    strides_p = [(0,) * pad + st for st in per_operand]
    strides_p += [(0,) * len(shape_p)] * (4 - len(strides_p))
    outer = len(shape_p) - bucket  # dims beyond the widest kernel: a host loop
    inner_shape = shape_p[outer:]
    inner_size = int(np.prod(inner_shape, dtype=np.int64))
    masks = None  # the 16-byte path of ew_strided exists for NDIM == 2 (see elementwise.cu)
    if bucket == 2:
        masks = _vector_masks(shape_p, strides_p[:len(strides)], itemsizes, is_array, vec, False)
    layout = (_struct(inner_shape),
              _struct([strides_p[k][d] for d in range(outer, len(shape_p)) for k in range(4)]),
              np.int32(inner_size))
    name = ek.strided_name(functor, out_ctype, in_ctype, bucket, ek.INDEX_CTYPE)
    return Launch(name, _grid(-(-inner_size // vec) if masks else inner_size), BLOCK, False,
                  layout, masks, shape_p, tuple(strides_p), outer, size)


def int32_split(shape, strides_per_operand) -> tuple[int, int]:
    """(dim j, chunk length k): launching over ``[i0, ..., c:c+k]`` chunks of dim j (every
    index of the dims before it) keeps every offset and count of a launch within 32 bits."""
    threads = MAX_GRID * BLOCK
    for j in range(len(shape)):
        inner_n = 1
        for n in shape[j + 1:]:
            inner_n *= n
        k = min(shape[j], (INT32_MAX - threads) // max(1, inner_n))
        for strides in strides_per_operand:
            inner = sum((n - 1) * abs(st) for n, st in zip(shape[j + 1:], strides[j + 1:]))
            if abs(strides[j]):
                k = min(k, (INT32_MAX - inner) // abs(strides[j]) + 1)
            elif inner > INT32_MAX:
                k = 0
        if k >= 1:
            return j, k
    raise AssertionError("a single element always fits")  # pragma: no cover


@functools.lru_cache(maxsize=4096)
def plan_call(functor: str, out_ctype: str, in_ctype: str, out_itemsize: int, in_itemsize: int,
              shape: tuple, out_strides: tuple, inputs: tuple, cast: bool = False) -> CallPlan:
    """Plan ``functor`` over ``shape`` into an output of byte strides ``out_strides``.

    ``inputs``: per input, (own shape, own byte strides) of an array broadcastable to
    ``shape``, or None for a scalar passed by value. Cached: keys are tuples of ints and str.
    """
    kernel = (functor, out_ctype, in_ctype, out_itemsize, in_itemsize)
    staging = choose_staging(shape, out_strides, out_itemsize, inputs, in_itemsize)
    one_input = len(staging.inputs) == 1 and staging.output is None
    if _through_tiles[0] and (one_input or (not staging.inputs and staging.output is not None)):
        staged = staging.inputs[0][0] if one_input else -1
        launch = _tiled_launch(kernel, staging.order, shape, out_strides, inputs, staged)
        if launch is not None:  # the staged operand read or written in place, through a tile
            return CallPlan(Staging(staging.order), launch)
    launch = _staged_launch(kernel, staging, shape, out_strides, inputs, cast)
    if launch is not None:
        plan = CallPlan(staging, launch)
        if launch.outer and plan.launches > MAX_LAUNCHES:
            # More dims than the widest kernel that do not coalesce: a host loop would
            # launch once per index of the leading dims (131072 launches for 20 alternating
            # broadcast dims). Copies into dense temporaries bound it by the operand count.
            staging = dense_staging(shape, out_strides, out_itemsize, inputs, in_itemsize)
            dense = CallPlan(staging, _staged_launch(kernel, staging, shape, out_strides,
                                                     inputs, cast))
            if dense.launches < plan.launches:
                return dense
        return plan
    arrays = [out_strides] + [broadcast_strides(*x, shape) for x in inputs if x is not None]
    return CallPlan(Staging(tuple(range(len(shape)))), None, int32_split(shape, arrays))


def _tiled_launch(kernel, order, shape, out_strides, inputs, staged) -> Launch | None:
    """The launch of ``ew_tiled`` (input ``staged`` through the tile) or ``ew_tiled_out``
    (``staged`` -1: the output) over walk ``order`` (:mod:`.tiled_plan`), or None."""
    functor, out_ctype, in_ctype, out_itemsize, in_itemsize = kernel
    strides = [out_strides] + [None if x is None else broadcast_strides(*x, shape) for x in inputs]
    walk_shape = tuple(shape[d] for d in order)
    arrays = [tuple(st[d] for d in order) for st in strides if st is not None]
    cshape, cstrides = coalesce(walk_shape, arrays)
    coalesced = iter(cstrides)
    per_operand = [None if st is None else next(coalesced) for st in strides]
    tiled = plan_tiled(functor, out_ctype, in_ctype, in_itemsize if staged >= 0 else out_itemsize,
                       cshape, per_operand, staged, MAX_GRID)
    if tiled is None:
        return None
    name, grid, walk, padded = tiled
    return Launch(name, grid, TILED_BLOCK, False, (walk,), None, cshape, padded, 0,
                  int(np.prod(shape, dtype=np.int64)))


def _staged_launch(kernel, staging, shape, out_strides, inputs, cast) -> Launch | None:
    """The kernel launch of a call whose staged operands are read from (written to) their
    temporaries: ``plan_launch`` over the walk order."""
    functor, out_ctype, in_ctype, out_itemsize, in_itemsize = kernel
    order = staging.order
    staged = {k: (temp_shape, axes) for k, temp_shape, axes in staging.inputs}
    strides = [out_strides if staging.output is None
               else contiguous_strides(shape, order, out_itemsize)]
    for k, x in enumerate(inputs):
        if x is None:
            strides.append(None)
        elif k in staged:
            temp_shape, axes = staged[k]
            temp_strides = contiguous_strides(temp_shape, range(len(temp_shape)), in_itemsize)
            # the temporary's transposed view: input k's own shape, or the result's
            view_shape = tuple(temp_shape[a] for a in axes)
            view_strides = tuple(temp_strides[a] for a in axes)
            strides.append(broadcast_strides(view_shape, view_strides, shape))
        else:
            strides.append(broadcast_strides(*x, shape))
    walk_shape = tuple(shape[d] for d in order)
    walk_strides = [None if st is None else tuple(st[d] for d in order) for st in strides]
    return plan_launch(functor, out_ctype, in_ctype, out_itemsize, in_itemsize, walk_shape,
                       tuple(walk_strides), cast)


recent.register_cache(plan_call.cache_clear)
# False inside staged_copies_only(): no operand is read or written through a tile.
_through_tiles = [True]


@contextlib.contextmanager
def staged_copies_only():
    """Plan calls with their staged operands copied by ``rearrange_`` first (the plans before
    ``ew_tiled``) inside the ``with`` block: how the performance model prices the plan a GPU
    record ran (``tests/tools/h100_measured.json``'s ``add transposed`` cases); caches are
    cleared on the way in and out.

    >>> shape, out, a = (512, 512), (2048, 4), ((512, 512), (4, 2048))   # add(a.T, b)
    >>> plan_call("ic::OpAdd", "float", "float", 4, 4, shape, out, (a, (shape, out))).launch.kernel
    'ew_tiled<ic::OpAdd, float, float, 0>'
    >>> with staged_copies_only():
    ...     plan_call("ic::OpAdd", "float", "float", 4, 4, shape, out, (a, (shape, out))).launch.kernel
    'ew_contig<ic::OpAdd, float, float>'
    """
    with recent.planning_switched(_through_tiles, False):
        yield
