"""The elementwise launcher: broadcasting, dim coalescing across operands, the choice of
kernel (contiguous vectorized, or strided on NDIM dims with 32- or 64-bit indices), output
allocation and argument packing. Shared by the ``cuda`` and ``emulate`` backends.

>>> import numpy as np
>>> from infini_cupy import backend, elementwise
>>> with backend("emulate"):
...     elementwise.apply("add", np.arange(3.0), 1)
array([1., 2., 3.])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import backends, dtypes, structs
from . import elementwise_kernels as ek
from .elementwise_ops import CAST_FUNCTOR, OPS, ElementwiseOp
from .launch import launch

BLOCK = 256
MAX_GRID = 4096  # blocks; grid-stride loops cover the rest (CUDA allows 2**31 - 1 in x)
_INT32_MAX = 2**31 - 1


# ---------------------------------------------------------------- layout planning (pure)
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


def _fits_int32(shape, strides_per_operand, threads: int) -> bool:
    n = 1
    for s in shape:
        n *= s
    if n + threads > _INT32_MAX:
        return False
    for strides in strides_per_operand:
        if sum((s - 1) * abs(st) for s, st in zip(shape, strides)) > _INT32_MAX:
            return False
    return True


@dataclass(frozen=True)
class ElementwisePlan:
    """How one call runs: the kernel, its launch shape and its layout arguments."""

    kernel: str  # name expression in elementwise.cu
    grid: int  # blocks (1-D)
    block: int  # threads per block
    contiguous: bool  # ew_contig (else ew_strided)
    vectorized: bool  # ew_contig's 16-byte path (every pointer aligned)
    shape: tuple  # coalesced shape (strided), padded to the kernel's NDIM
    strides: tuple  # per operand (out, in0, in1, in2) byte strides, padded like shape
    index_bits: int  # 32: offsets fit the int kernels; 64: see split
    size: int  # number of elements
    split: tuple | None = None  # (dim, chunk length): host launches over chunks of that dim


def _grid(items: int) -> int:
    return max(1, min(-(-items // BLOCK), MAX_GRID))


@functools.lru_cache(maxsize=4096)
def plan(functor: str, out_ctype: str, in_ctype: str, out_itemsize: int, in_itemsize: int,
         shape: tuple, strides: tuple, aligned16: bool, cast: bool) -> ElementwisePlan:
    """Plan a launch over ``shape`` for operands with byte ``strides`` (out first; None for a
    scalar input). ``aligned16``: every array pointer is aligned to its vector access."""
    arrays = [s for s in strides if s is not None]
    cshape, cstrides = coalesce(shape, arrays)
    size = 1
    for n in shape:
        size *= n
    itemsizes = [out_itemsize] + [in_itemsize] * (len(arrays) - 1)
    contiguous = len(cshape) <= 1 and all(
        len(cshape) == 0 or st[0] == isz for st, isz in zip(cstrides, itemsizes))
    if contiguous:
        vec = max(1, 16 // max(out_itemsize, in_itemsize))
        vectorized = aligned16 and vec > 1
        grid = _grid(-(-size // vec) if vectorized else size)
        return ElementwisePlan(ek.contig_name(functor, out_ctype, in_ctype), grid, BLOCK, True,
                               vectorized, cshape, (), 64, size)
    grid = _grid(size)
    if not _fits_int32(cshape, cstrides, grid * BLOCK):
        return ElementwisePlan("", grid, BLOCK, False, False, (), (), 64, size,
                               _int32_split(shape, arrays))
    ndim = len(cshape)
    bucket = ek.MAX_STRIDED_NDIM if cast else ek.strided_bucket(min(ndim, ek.MAX_STRIDED_NDIM))
    pad = bucket - ndim  # negative: the caller loops over the leading -pad dims
    full = iter(cstrides)
    per_operand = [next(full) if s is not None else (0,) * ndim for s in strides]
    per_operand += [(0,) * ndim] * (4 - len(per_operand))
    if pad >= 0:
        shape_p = (1,) * pad + cshape
        strides_p = tuple((0,) * pad + st for st in per_operand)
    else:
        shape_p, strides_p = cshape, tuple(per_operand)
    name = ek.strided_name(functor, out_ctype, in_ctype, bucket, ek.INDEX_CTYPE)
    return ElementwisePlan(name, grid, BLOCK, False, False, shape_p, strides_p, 32, size)


def _int32_split(shape, strides_per_operand) -> tuple[int, int]:
    """(dim j, chunk length k): launching over ``[i0, ..., c:c+k]`` chunks of dim j (every
    index of the dims before it) keeps every offset and count of a launch within 32 bits."""
    threads = MAX_GRID * BLOCK
    for j in range(len(shape)):
        inner_n = 1
        for n in shape[j + 1:]:
            inner_n *= n
        k = min(shape[j], (_INT32_MAX - threads) // max(1, inner_n))
        for strides in strides_per_operand:
            inner = sum((n - 1) * abs(st) for n, st in zip(shape[j + 1:], strides[j + 1:]))
            if abs(strides[j]):
                k = min(k, (_INT32_MAX - inner) // abs(strides[j]) + 1)
            elif inner > _INT32_MAX:
                k = 0
        if k >= 1:
            return j, k
    raise AssertionError("a single element always fits")  # pragma: no cover


def _struct(values, bits: int):
    return structs.array_struct(values, element=np.dtype(np.int32 if bits == 32 else np.int64))


# ---------------------------------------------------------------- array helpers per backend
def _xp(backend: str):
    return backends.require_cupy() if backend == "cuda" else np


def _data_ptr(a) -> int:
    return a.data.ptr if backends.is_cupy_array(a) else a.ctypes.data


def _as_strided(a, shape, strides):
    if backends.is_cupy_array(a):
        import cupy

        return cupy.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)
    return np.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


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


def _broadcast_strides(a, shape) -> tuple:
    pad = len(shape) - a.ndim
    return tuple(0 if (i < pad or a.shape[i - pad] == 1) else a.strides[i - pad]
                 for i in range(len(shape)))


def _self_overlapping(a) -> bool:
    dims = sorted((abs(st), n) for n, st in zip(a.shape, a.strides) if n > 1)
    extent = a.itemsize
    for st, n in dims:
        if st < extent:
            return True
        extent = st * (n - 1) + extent
    return False


def _overlap(a, b) -> bool:
    if backends.is_cupy_array(a):
        import cupy

        return bool(cupy.may_share_memory(a, b))
    return bool(np.may_share_memory(a, b))


# ---------------------------------------------------------------- launching
def _launch(functor, out, inputs, dtype_in, backend, cast=False):
    """Run ``functor`` elementwise: ``out`` (any non-self-overlapping layout) from ``inputs``
    (arrays of dtype ``dtype_in`` broadcastable to ``out.shape``, or NumPy scalars)."""
    shape = out.shape
    if out.size == 0:
        return out
    out_ct, in_ct = dtypes.ctype(out.dtype), dtypes.ctype(dtype_in)
    strides = [tuple(out.strides)]
    for x in inputs:
        strides.append(None if isinstance(x, np.generic) else _broadcast_strides(x, shape))
    # Every array in a vector access of 16 bytes (or what the wider type allows) is aligned.
    vec = max(1, 16 // max(out.itemsize, np.dtype(dtype_in).itemsize))
    arrays = [out] + [x for x, s in zip(inputs, strides[1:]) if s is not None]
    aligned = all(_data_ptr(a) % (vec * a.itemsize) == 0 for a in arrays)
    p = plan(functor, out_ct, in_ct, out.itemsize, np.dtype(dtype_in).itemsize, tuple(shape),
             tuple(strides), aligned, cast)
    scalar_mask = 0
    values = []
    pointers = []
    zero = np.dtype(dtype_in).type(0)
    for k in range(3):
        if k < len(inputs) and strides[k + 1] is not None:
            pointers.append(inputs[k])
            values.append(zero)
        else:
            scalar_mask |= 1 << k
            pointers.append(out)  # never read: the kernel takes the value
            values.append(inputs[k] if k < len(inputs) else zero)
    head = [out, *pointers, *values, np.int32(scalar_mask)]
    if p.contiguous:
        args = head + [np.int64(p.size), np.int32(p.vectorized)]
        launch(ek.SOURCE, p.kernel, p.grid, p.block, args, backend=backend)
        return out
    if p.split is not None:
        return _launch_split(functor, out, inputs, strides, dtype_in, backend, cast, p.split)
    bits = p.index_bits
    index_t = np.int32
    bucket = int(p.kernel.rsplit(",", 2)[-2])
    outer = len(p.shape) - bucket  # dims beyond the widest kernel: a host loop
    inner_shape = p.shape[outer:]
    inner_size = int(np.prod(inner_shape))
    shape_arg = _struct(inner_shape, bits)
    strides_arg = _struct([p.strides[k][d] for d in range(outer, len(p.shape)) for k in range(4)], bits)
    grid = _grid(inner_size)
    if outer == 0:
        launch(ek.SOURCE, p.kernel, grid, p.block, head + [shape_arg, strides_arg, index_t(inner_size)],
               backend=backend)
        return out
    # Views with the coalesced layout, indexed by the outer coordinates.
    n_ops = 1 + len(pointers)
    views = []
    for k, a in enumerate([out] + pointers):
        if k > 0 and scalar_mask >> (k - 1) & 1:
            views.append(None)
        else:
            views.append(_as_strided(a, p.shape, p.strides[k]))
    for idx in np.ndindex(*p.shape[:outer]):
        sub = [v[idx] if v is not None else out for v in views]
        args = [sub[0], *sub[1:n_ops], *values, np.int32(scalar_mask),
                shape_arg, strides_arg, index_t(inner_size)]
        launch(ek.SOURCE, p.kernel, grid, p.block, args, backend=backend)
    return out


def _launch_split(functor, out, inputs, strides, dtype_in, backend, cast, split):
    """Offsets past 32 bits: one launch per chunk of dim ``split[0]``, each within 32 bits."""
    dim, chunk = split
    shape = out.shape
    views = [_as_strided(x, shape, st) if st is not None else x for x, st in zip(inputs, strides[1:])]
    for idx in np.ndindex(*shape[:dim]):
        for start in range(0, shape[dim], chunk):
            sl = idx + (slice(start, start + chunk),)
            sub = [v[sl] if st is not None else v for v, st in zip(views, strides[1:])]
            _launch(functor, out[sl], sub, dtype_in, backend, cast)
    return out


def cast(x, dtype, backend: str | None = None, out=None):
    """``x`` converted to ``dtype`` as a new C-contiguous array (NumPy's casting: complex to
    real drops the imaginary part), or written into ``out``."""
    dtype = dtypes.as_dtype(dtype)
    backend = backend or backends.backend_for(x)
    if out is None:
        out = _xp(backend).empty(x.shape, dtype)
    return _launch(CAST_FUNCTOR, out, [x], x.dtype, backend, cast=True)


def _prepare_out(func, out, shape, dtype, inputs, backend):
    """A validated ``out=``; returns (array to compute into, array to copy back into or None)."""
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"{func}(): out has shape {tuple(out.shape)}, the result has shape {tuple(shape)}")
    if out.dtype != dtype:
        raise TypeError(f"{func}(): out has dtype {out.dtype}, the result has dtype {dtype}")
    if backends.backend_for(out) != backend:
        raise ValueError(f"{func}(): out is on a different device than the inputs")
    if _self_overlapping(out):
        raise ValueError(f"{func}(): out overlaps itself (strides {out.strides})")
    for x in inputs:
        if not hasattr(x, "shape") or isinstance(x, np.generic):
            continue
        same_view = (_data_ptr(x) == _data_ptr(out) and x.shape == out.shape
                     and x.strides == out.strides and x.dtype.itemsize == out.dtype.itemsize)
        if not same_view and _overlap(x, out):
            # Each element is read and written by one thread, so only an identical view is
            # safe in place; anything else computes into a temporary (NumPy's answer).
            return _xp(backend).empty(shape, dtype), out
    return out, None


def apply(op: ElementwiseOp | str, *args, out=None):
    """Apply elementwise function ``op`` (a row of the op table, or its name) with our kernels.

    ``args``: arrays (NumPy in emulation, CuPy on cuda) or Python scalars, at least one array.
    """
    op = OPS[op] if isinstance(op, str) else op
    if all(dtypes.is_python_scalar(a) or isinstance(a, np.generic) for a in args):
        raise TypeError(f"{op.name}() needs at least one array argument")
    backend = backends.backend_for(*args, *(() if out is None else (out,)))
    # NumPy scalars are typed: they take part as 0-d arrays of their dtype.
    args = tuple(_xp(backend).asarray(a) if isinstance(a, np.generic) else a for a in args)
    arrays = [a for a in args if not dtypes.is_python_scalar(a)]
    if backend == "numpy":
        raise ValueError("elementwise.apply runs kernels; the numpy backend calls NumPy")
    for a in arrays:
        dtypes.as_dtype(a.dtype)
    dtypes.check_group(op.name, op.group, *(a.dtype for a in arrays))
    if op.name == "clip":
        dtype_in = arrays[0].dtype if not dtypes.is_python_scalar(args[0]) else None
        if dtype_in is None:
            raise TypeError("clip() needs x to be an array")
    else:
        dtype_in = dtypes.result_type(*args)
        dtypes.check_group(op.name, op.group, dtype_in)
    shape = broadcast_shapes(op.name, *(a.shape for a in arrays))
    dtype_out = op.result_dtype(dtype_in)
    inputs = []
    for a in args:
        if dtypes.is_python_scalar(a):
            inputs.append(dtypes.scalar_value(a, dtype_in))
        elif a.dtype != dtype_in:
            inputs.append(cast(a, dtype_in, backend))
        else:
            inputs.append(a)
    if out is None:
        target, copy_back = _xp(backend).empty(shape, dtype_out), None
    else:
        target, copy_back = _prepare_out(op.name, out, shape, dtype_out, inputs, backend)
    _launch(op.functor, target, inputs, dtype_in, backend)
    if copy_back is not None:
        cast(target, dtype_out, backend, out=copy_back)
        return copy_back
    return target
