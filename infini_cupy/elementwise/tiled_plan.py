"""One pass over a transposed operand: the launch of ``ew_tiled`` (kernels_src/
tiled_elementwise.cuh) for a call whose staging (:func:`.plan.choose_staging`) copies one
input and nothing else, or of ``ew_tiled_out`` for one that copies the output alone. Pure
Python, like :mod:`.plan`.

Staged, ``add(a, b.T)`` moves b twice more through DRAM (a copy reads it and writes a
temporary in walk order, the kernel reads that): 5 passes of its size where 3 do. ``ew_tiled``
reads b through a 32 x 32 shared-memory tile instead, each warp access along b's contiguous
dim, while the output and the other inputs are read and written along theirs, in one launch.

It takes the call when, in walk order and coalesced over every operand, the walk has 2 or 3
dims and the staged operand's stride is one element along one of them other than the
innermost (the tile's rows; the innermost are its cols, the third dim the batch). Else the
call stages. ``ew_tiled_out`` is the mirror image: the inputs are read along the cols, the
results go through the tile and are written along the output's rows.

>>> from infini_cupy.elementwise.plan import plan_call
>>> plan = plan_call("ic::OpAdd", "float", "float", 4, 4, (512, 256), (1024, 4),
...                  (((512, 256), (1024, 4)), ((512, 256), (4, 2048))))
>>> plan.launch.kernel, plan.staging.inputs, plan.launches
('ew_tiled<ic::OpAdd, float, float, 1>', (), 1)
"""

from __future__ import annotations

import numpy as np

from ..runtime.structs import INDEX
from ..strided.plan_cache import divisor_magic
from . import kernels as ek

TILE = 32  # EW_TILE: tile rows and cols
WARPS = 4  # EW_TILE_WARPS
BLOCK = TILE * WARPS
MAX_TILES = 2**32 - 1  # the kernel counts tiles in 32 bits
INT32_MAX = 2**31 - 1

# ic::TiledWalk
TILED_WALK = np.dtype(
    [(name, INDEX) for name in ("rows", "cols", "tiles_rows", "tiles_cols", "tiles_rows_magic",
                                "tiles_cols_magic", "tiles")]
    + [(name, INDEX, (4,)) for name in ("batch_stride", "row_stride", "col_stride")],
    align=True,
)


def tiled_walk(shape, strides, staged, itemsize):
    """(batch, rows, cols) dims of a coalesced walk ``shape`` (operand strides ``strides``,
    output first) whose input ``staged`` (-1: the output; elements of ``itemsize`` bytes)
    goes through the tile, or None: its rows are the dim it is contiguous along."""
    cols = len(shape) - 1
    along = strides[staged + 1]
    rows = [d for d in range(cols) if abs(along[d]) == itemsize]
    if len(shape) not in (2, 3) or not rows:
        return None
    row = rows[-1]
    batch = [d for d in range(cols) if d != row]
    return (batch[0] if batch else None), row, cols


def plan_tiled(functor, out_ctype, in_ctype, itemsize, shape, strides, staged, grid_cap):
    """(kernel name, grid blocks, packed walk, byte strides of the four operand slots) of
    ``ew_tiled`` over walk ``shape`` (coalesced, outermost first) for operand byte ``strides``
    (the output's, then one tuple per input, None for a scalar), input ``staged`` through the
    tile (-1: ``ew_tiled_out``, the output; ``itemsize``: of the staged operand); None where
    the walk does not fit it.
    :func:`.plan.plan_call` makes it the call's launch."""
    dims = tiled_walk(shape, strides, staged, itemsize)
    if dims is None:
        return None
    batch, row, col = dims
    rows, cols = shape[row], shape[col]
    tiles_rows, tiles_cols = -(-rows // TILE), -(-cols // TILE)
    tiles = tiles_rows * tiles_cols * (shape[batch] if batch is not None else 1)
    per_operand = [st if st is not None else (0,) * len(shape) for st in strides]
    per_operand += [(0,) * len(shape)] * (4 - len(per_operand))
    # the kernel's offsets inside a tile are 32-bit: (TILE - 1) steps along rows and cols
    reach = max((TILE - 1) * (abs(st[row]) + abs(st[col])) for st in per_operand)
    if tiles > MAX_TILES or reach > INT32_MAX:
        return None
    walk = np.zeros((), TILED_WALK)
    walk["rows"], walk["cols"], walk["tiles"] = rows, cols, tiles
    walk["tiles_rows"], walk["tiles_cols"] = tiles_rows, tiles_cols
    walk["tiles_rows_magic"] = divisor_magic(tiles_rows)
    walk["tiles_cols_magic"] = divisor_magic(tiles_cols)
    for k, st in enumerate(per_operand):
        walk["batch_stride"][k] = st[batch] if batch is not None else 0
        walk["row_stride"][k], walk["col_stride"][k] = st[row], st[col]
    return (ek.tiled_name(functor, out_ctype, in_ctype, staged), max(1, min(tiles, grid_cap)),
            walk[()], tuple(per_operand))
