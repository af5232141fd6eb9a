"""Planning and launching a fused expression (:mod:`.trace`) over actual arrays: the broadcast
shape, dims coalesced across every operand, the kernel variant of ``kernels_src/fusion.cuh``
(contiguous, or strided on NDIM dims with 32- or 64-bit index math) and its packed layout
arguments; one launch whatever the number of operands, outputs new and C-contiguous.

A transposed or broadcast input is read in place through its strides (no staged copy: one
launch is the point of fusing). Plans are cached per layout, like the short path's.

>>> from infini_cupy.elementwise.fused_plan import contig_name
>>> contig_name("ic::Fused<ic::In<0>>", ("float", "float"))
'ew_fused_contig<ic::Fused<ic::In<0>>, float, float>'
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .. import dtypes
from ..runtime import recent, structs
from . import kernels as ek
from .plan import BLOCK, _fits_int32, _grid, broadcast_shapes, broadcast_strides, coalesce, contiguous_strides

MAX_NDIM = 8  # coalesced dims of a strided fused kernel; beyond, the call runs unfused
FLAG_ON, FLAG_OFF = np.int32(1), np.int32(0)


def contig_name(fused_type: str, ctypes) -> str:
    return f"ew_fused_contig<{fused_type}, {', '.join(ctypes)}>"


def strided_name(fused_type: str, ndim: int, index_ctype: str, ctypes) -> str:
    return f"ew_fused_strided<{fused_type}, {ndim}, {index_ctype}, {', '.join(ctypes)}>"


@functools.lru_cache(maxsize=64)
def scalars_dtype(slots: int) -> np.dtype:
    """``ic::Scalars<slots>``: 16 bytes a slot, 16-byte aligned."""
    return np.dtype({"names": ["b"], "formats": [("u1", (max(1, slots) * 16,))], "align": True,
                     "itemsize": max(1, slots) * 16})


@dataclass(frozen=True)
class FusedLaunch:
    """One launch of a fused kernel over arrays of one layout.

    Kernel arguments: (scalars, *layout_args, vectorized, *outputs, *inputs).
    """

    kernel: str  # name expression in elementwise.cu
    grid: int
    block: int
    layout_args: tuple  # contiguous: (n,); strided: (shape struct, strides struct, n)
    vector_masks: tuple | None  # per operand: the 16-byte path runs when no pointer & mask
    shape: tuple  # the outputs' shape
    bytes_moved: int  # each input read once, each output written once (broadcasts once)


def _vector_masks(cshape, strides, itemsizes, nout, vec, contiguous):
    if vec == 1:
        return None
    masks = []
    for k, (st, isz) in enumerate(zip(strides, itemsizes)):
        width = vec * isz
        if contiguous:
            masks.append(width - 1)
        elif k >= nout and st[-1] == 0:
            masks.append(0)  # broadcast along the inner dim: one element per pack
        elif st[-1] == isz and cshape[-1] % vec == 0 and all(s % width == 0 for s in st[:-1]):
            masks.append(width - 1)
        else:
            return None
    return tuple(masks)


@functools.lru_cache(maxsize=4096)
def plan_fused(fused_type: str, ctypes: tuple, itemsizes: tuple, nout: int, output_inputs: tuple,
               inputs: tuple, outputs: tuple | None = None) -> FusedLaunch | None:
    """The launch of ``fused_type`` for inputs of (shape, byte strides) ``inputs`` into
    outputs of byte strides ``outputs`` (None: new C-contiguous arrays); None when one
    kernel cannot compute it (outputs of different shapes, more than MAX_NDIM dims that do
    not coalesce). ValueError naming the shapes when they do not broadcast."""
    shape = broadcast_shapes("fuse", *(s for s, _ in inputs))
    for used in output_inputs:
        if broadcast_shapes("fuse", *(inputs[k][0] for k in used)) != shape:
            return None  # an output of another shape than the others: not one kernel
    out_strides = ([contiguous_strides(shape, range(len(shape)), isz) for isz in itemsizes[:nout]]
                   if outputs is None else list(outputs))
    in_strides = [broadcast_strides(s, st, shape) for s, st in inputs]
    cshape, cstrides = coalesce(shape, out_strides + in_strides)
    size = int(np.prod(shape, dtype=np.int64))
    read = sum(int(np.prod(s, dtype=np.int64)) * isz for (s, _), isz in zip(inputs, itemsizes[nout:]))
    moved = read + size * sum(itemsizes[:nout])
    vec = max(1, 16 // max(itemsizes))
    if len(cshape) <= 1 and all(len(cshape) == 0 or st[0] == isz for st, isz in zip(cstrides, itemsizes)):
        masks = _vector_masks(cshape, cstrides, itemsizes, nout, vec, True)
        items = -(-size // vec) if masks else size
        return FusedLaunch(contig_name(fused_type, ctypes), _grid(items), BLOCK, (np.int64(size),),
                           masks, shape, moved)
    ndim = len(cshape)
    if ndim > MAX_NDIM:
        return None
    bits = 32 if _fits_int32(cshape, cstrides, _grid(size) * BLOCK) else 64
    element = np.dtype(np.int32 if bits == 32 else np.int64)
    masks = _vector_masks(cshape, cstrides, itemsizes, nout, vec, False) if ndim == 2 else None
    layout = (structs.array_struct(cshape, element=element),
              structs.array_struct([st[d] for d in range(ndim) for st in cstrides], element=element),
              element.type(size))
    name = strided_name(fused_type, ndim, "int" if bits == 32 else "long long", ctypes)
    return FusedLaunch(name, _grid(-(-size // vec) if masks else size), BLOCK, layout, masks, shape,
                       moved)


class ArraySpec:
    """An array given by shape and dtype alone, C-contiguous: what planning reads of an
    array (a fused function's ``prepare`` and ``kernel_name`` take these)."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(int(n) for n in shape), dtypes.as_dtype(dtype)
        self.ndim = len(self.shape)
        stride, strides = self.dtype.itemsize, []
        for n in reversed(self.shape):
            strides.append(stride)
            stride *= max(n, 1)
        self.strides = tuple(reversed(strides))


def plan_arguments(fx, inputs) -> tuple:
    """``plan_fused``'s arguments (but the outputs' layout) for kernel inputs ``inputs``."""
    itemsizes = tuple(d.itemsize for d in fx.output_dtypes + fx.input_dtypes)
    layouts = tuple((tuple(x.shape), tuple(x.strides)) for x in inputs)
    return (fx.fused_type, fx.operand_ctypes, itemsizes, len(fx.output_dtypes),
            fx.output_inputs, layouts)


def scalar_slots(fx):
    """(``ic::Scalars`` with the constants, per-call slots (byte offset, argument,
    converter)); a slot the kernel does not read has offset None (only converted)."""
    record = np.zeros((), scalars_dtype(fx.kernel_slots))
    buffer = bytearray(record.tobytes())
    arg_slots = []
    for j, (dtype, value, index, convert) in enumerate(fx.slots):
        read = j < fx.kernel_slots
        if index is None:
            if read:
                data = value.tobytes()
                buffer[16 * j:16 * j + len(data)] = data
        else:
            arg_slots.append((16 * j if read else None, index, convert))
    return np.frombuffer(buffer, record.dtype)[0], tuple(arg_slots)


recent.register_cache(plan_fused.cache_clear)
