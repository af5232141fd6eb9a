"""Kernel struct arguments as NumPy structured scalars, laid out as CUDA lays out the structs;
the emulator's packed parameter buffer (``cuLaunchKernel``'s layout); launch shapes as CUDA's
``dim3``.

``align=True`` gives C struct alignment. A struct passes as a NumPy structured scalar
(``numpy.void``) of its dtype, whose bytes both CuPy and the emulator's ctypes launch copy
into the parameter buffer: CuPy 14 packs any NumPy scalar as a ``CScalar`` (its bytes, by
value), about 0.2 us per struct per launch, where a NumPy array of size one, as CuPy's
documentation shows for structs, costs about 3 us (``CNumpyArray`` reads
``__array_interface__`` on every launch).
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

INDEX = np.dtype("<i8")  # ic::index_t (long long)

# ic::Constraint<index_t>: grid_idx, block_idx, grid_div_block, total_len
CONSTRAINT = np.dtype(
    [("grid_idx", INDEX), ("block_idx", INDEX), ("grid_div_block", INDEX), ("total_len", INDEX)],
    align=True,
)


@functools.lru_cache(maxsize=None)
def array_struct_dtype(length: int, element: np.dtype = INDEX) -> np.dtype:
    """The dtype of ``ic::ArrayStruct<length, element>``."""
    return np.dtype([("a", element, (length,))], align=True)


def array_struct(values, length: int | None = None, element: np.dtype = INDEX) -> np.void:
    """``ic::ArrayStruct<length, element>`` holding ``values``, zero-padded to ``length``."""
    values = list(values)  # a tuple would read as one record of a structured dtype
    length = len(values) if length is None else length
    if len(values) > length:
        raise ValueError(f"{len(values)} values do not fit ArrayStruct<{length}>")
    record = np.zeros((), dtype=array_struct_dtype(length, element))
    if values:
        record["a"][: len(values)] = np.array(values, dtype=element)
    return record[()]


def dim3(d) -> tuple[int, int, int]:
    """A grid or block size as CUDA's ``dim3``: an int, or 1 to 3 ints padded with 1."""
    if type(d) is int:
        return (d, 1, 1)
    d = (int(d),) if isinstance(d, np.integer) else tuple(int(v) for v in d)
    if not 1 <= len(d) <= 3:
        raise ValueError(f"a grid or block has 1 to 3 dimensions, got {d}")
    return d + (1,) * (3 - len(d))


SLOT = 32  # bytes per packed value: a kernel may load a struct argument with vector moves


def argument_bytes(arg, pointer) -> bytes:
    """The bytes of one kernel argument: an array's data pointer (``pointer(arg)``, 8 bytes)
    or a NumPy scalar's value (structured scalars are structs passed by value)."""
    if isinstance(arg, np.generic):
        return arg.tobytes()
    return pointer(arg).to_bytes(8, "little")


def pack_arguments(values):
    """``cuLaunchKernel``'s ``kernelParams``: a ``void *`` to each value, every value in its
    own SLOT-aligned slot. Returns (storage to keep alive during the launch, the pointer
    array, its address)."""
    blob, offsets = bytearray(), []
    for value in values:
        offsets.append(len(blob))
        blob += value
        blob += bytes(-len(blob) % SLOT)
    storage = np.zeros(len(blob) + SLOT, np.uint8)
    base = storage.__array_interface__["data"][0]
    base += -base % SLOT
    ctypes.memmove(base, bytes(blob), len(blob))
    pointers = (ctypes.c_uint64 * max(1, len(offsets)))(*(base + o for o in offsets))
    return storage, pointers, ctypes.addressof(pointers)
