"""The cases ``python -m infini_cupy bench`` measures: two suites of realistic layouts and the
ad-hoc ``--case "SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE"`` layouts.

A case builds its operands with an allocator ``alloc(shape, dtype)`` (CuPy on a GPU; NumPy
aligned to 256 bytes, as CuPy's allocator aligns, in emulation), at its full size on a GPU or
at its emulated size (scaled so the emulated suite runs in minutes on 2 cores).

>>> case = parse_case("2001,2001:1,2001:C:float32")
>>> case.shape, case.dtype, case.name
((2001, 2001), 'float32', '2001,2001:1,2001:C:float32')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Case:
    """One layout to measure.

    suite: ``rearrange`` or ``elementwise``.
    shape: the result's shape on a GPU; emulated_shape: in emulation (None: the same).
    build: ``build(alloc, shape, dtype)`` -> the operands: ``(y, x)`` for a rearrange (copy x
        into y), ``(op name, *inputs)`` for an elementwise call.
    """

    suite: str
    name: str
    dtype: str
    shape: tuple[int, ...]
    emulated_shape: tuple[int, ...] | None
    build: Callable


def _xp(a):
    if isinstance(a, np.ndarray):
        return np
    import cupy

    return cupy


def _fill(a):
    """Deterministic values that survive every dtype (small integers)."""
    values = _xp(a).arange(a.size, dtype=np.int64).reshape(a.shape) % 61 - 30
    a[...] = values.astype(a.dtype)
    return a


# ---- rearrange layouts: build(alloc, shape, dtype) -> (y, x), y of `shape`


def transpose(alloc, shape, dtype):
    x = _fill(alloc(shape[::-1], dtype))
    return alloc(shape, dtype), x.T


def permute(perm):
    """y (C-contiguous, of `shape`) from a C-contiguous x permuted by `perm`."""
    inverse = tuple(int(i) for i in np.argsort(perm))

    def build(alloc, shape, dtype):
        x = _fill(alloc(tuple(shape[i] for i in inverse), dtype))
        return alloc(shape, dtype), x.transpose(perm)

    return build


def head_split(alloc, shape, dtype):
    """(b, s, h*d) -> (b, h, s, d): shape is (b, h, s, d)."""
    b, h, s, d = shape
    x = _fill(alloc((b, s, h * d), dtype))
    return alloc(shape, dtype), x.reshape(b, s, h, d).transpose(0, 2, 1, 3)


def head_merge(alloc, shape, dtype):
    """(b, h, s, d) -> (b, s, h, d), i.e. (b, s, h*d): shape is (b, s, h, d)."""
    b, s, h, d = shape
    x = _fill(alloc((b, h, s, d), dtype))
    return alloc(shape, dtype), x.transpose(0, 2, 1, 3)


def reversal(alloc, shape, dtype):
    x = _fill(alloc(shape, dtype))
    return alloc(shape, dtype), x[(slice(None, None, -1),) * len(shape)]


def interior_slice(alloc, shape, dtype):
    """x[1:-1, 3:-2] of a larger array: rows start off their sectors."""
    x = _fill(alloc((shape[0] + 2, shape[1] + 5), dtype))
    return alloc(shape, dtype), x[1:-1, 3:-2]


def reversed_transpose(alloc, shape, dtype):
    x = _fill(alloc(shape[::-1], dtype))
    return alloc(shape, dtype), x.T[::-1, ::-1]


def broadcast_row(alloc, shape, dtype):
    x = _fill(alloc((shape[1],), dtype))
    return alloc(shape, dtype), _broadcast_to(x, shape)


def broadcast_column(alloc, shape, dtype):
    x = _fill(alloc((shape[0], 1), dtype))
    return alloc(shape, dtype), _broadcast_to(x, shape)


def _broadcast_to(x, shape):
    return _xp(x).broadcast_to(x, shape)


def _rearrange(name, build, dtype, shape, emulated=None):
    return Case("rearrange", name, dtype, tuple(shape), emulated and tuple(emulated), build)


REARRANGE_SUITE = (
    _rearrange("transpose fp32", transpose, "float32", (8192, 8192), (1024, 1024)),
    _rearrange("transpose odd fp32", transpose, "float32", (2001, 2001), (1001, 999)),
    _rearrange("transpose fp16", transpose, "float16", (8192, 8192), (1024, 1024)),
    _rearrange("transpose odd fp16", transpose, "float16", (4001, 4003), (1001, 1003)),
    _rearrange("transpose int8", transpose, "int8", (8192, 8192), (1024, 1024)),
    _rearrange("transpose odd int8", transpose, "int8", (4001, 3999), (1001, 999)),
    _rearrange("transpose fp64", transpose, "float64", (4096, 4096), (512, 512)),
    _rearrange("NCHW->NHWC fp32", permute((0, 2, 3, 1)), "float32", (32, 56, 56, 256), (2, 56, 56, 64)),
    _rearrange("NHWC->NCHW fp16", permute((0, 3, 1, 2)), "float16", (32, 256, 56, 56), (2, 64, 56, 56)),
    _rearrange("NCHW->NHWC RGB fp32", permute((0, 2, 3, 1)), "float32", (32, 224, 224, 3), (4, 224, 224, 3)),
    _rearrange("NHWC->NCHW RGB int8", permute((0, 3, 1, 2)), "int8", (32, 3, 224, 224), (4, 3, 224, 224)),
    _rearrange("heads split fp16", head_split, "float16", (8, 16, 1024, 64), (1, 16, 256, 64)),
    _rearrange("heads merge fp16", head_merge, "float16", (8, 1024, 16, 64), (1, 256, 16, 64)),
    _rearrange("heads split d=4 fp16", head_split, "float16", (8, 64, 1024, 4), (1, 64, 256, 4)),
    _rearrange("3-D reversal fp32", reversal, "float32", (256, 256, 257), (64, 128, 131)),
    _rearrange("thin transpose fp32", transpose, "float32", (3, 4_000_000), (3, 300_000)),
    _rearrange("thin transpose back fp32", transpose, "float32", (4_000_000, 3), (300_000, 3)),
    _rearrange("interior slice fp32", interior_slice, "float32", (4094, 4091), (1022, 1019)),
    _rearrange("interior slice fp16", interior_slice, "float16", (4094, 4091), (1022, 1019)),
    _rearrange("reversed transpose fp16", reversed_transpose, "float16", (4096, 4096), (1024, 768)),
    _rearrange("broadcast row fp32", broadcast_row, "float32", (8192, 4096), (1024, 1000)),
    _rearrange("broadcast column fp32", broadcast_column, "float32", (8192, 4096), (1000, 1024)),
)


# ---- elementwise layouts: build(alloc, shape, dtype) -> (op, *inputs)


def binary(op, second):
    """``op(a, b)`` with a C-contiguous and b shaped by ``second``."""

    def build(alloc, shape, dtype):
        a = _fill(alloc(shape, dtype))
        if second == "same":
            b = _fill(alloc(shape, dtype))
        elif second == "row":
            b = _fill(alloc(shape[-1:], dtype))
        elif second == "column":
            b = _fill(alloc((shape[0], 1), dtype))
        elif second == "transposed":
            b = _fill(alloc(shape[::-1], dtype)).T
        elif second == "scalar":
            b = 3
        return op, a, b

    return build


def unary(op):
    def build(alloc, shape, dtype):
        return op, _fill(alloc(shape, dtype))

    return build


def _elementwise(name, build, dtype, shape, emulated=None):
    return Case("elementwise", name, dtype, tuple(shape), emulated and tuple(emulated), build)


ELEMENTWISE_SUITE = (
    _elementwise("add contiguous fp32", binary("add", "same"), "float32", (4096, 4096), (1024, 1024)),
    _elementwise("add contiguous fp16", binary("add", "same"), "float16", (4096, 4096), (1024, 1024)),
    _elementwise("add contiguous int8", binary("add", "same"), "int8", (4096, 4096), (1024, 1024)),
    _elementwise("multiply by scalar fp32", binary("multiply", "scalar"), "float32", (4096, 4096), (1024, 1024)),
    _elementwise("exp contiguous fp32", unary("exp"), "float32", (4096, 4096), (1024, 1024)),
    _elementwise("add broadcast row fp32", binary("add", "row"), "float32", (4096, 4096), (1024, 1000)),
    _elementwise("add broadcast column fp32", binary("add", "column"), "float32", (4096, 4096), (1000, 1024)),
    _elementwise("add transposed fp32", binary("add", "transposed"), "float32", (4096, 4096), (1024, 1024)),
    _elementwise("add transposed fp16", binary("add", "transposed"), "float16", (4096, 4096), (1024, 1024)),
)

SUITES = {"rearrange": REARRANGE_SUITE, "elementwise": ELEMENTWISE_SUITE}


# ---- ad-hoc layouts


class CaseSyntaxError(ValueError):
    """A --case string that does not read as SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE."""


def _ints(text: str, what: str, spec: str) -> tuple[int, ...]:
    text = text.strip()
    if text in ("", "()"):
        return ()
    try:
        return tuple(int(v) for v in text.strip("()").split(",") if v.strip() != "")
    except ValueError:
        raise CaseSyntaxError(f"--case {spec!r}: {what} must be comma-separated integers, got {text!r}") from None


def parse_case(spec: str) -> Case:
    """A rearrange case from ``SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE`` (strides in elements,
    negative or, for the source, 0; DST_STRIDES ``C`` for a C-contiguous destination)."""
    parts = spec.split(":")
    if len(parts) != 4:
        raise CaseSyntaxError(
            f"--case {spec!r}: expected SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE (4 fields), got {len(parts)}")
    shape = _ints(parts[0], "SHAPE", spec)
    src = _ints(parts[1], "SRC_STRIDES", spec)
    dst = None if parts[2].strip().upper() == "C" else _ints(parts[2], "DST_STRIDES", spec)
    try:
        dtype = np.dtype(parts[3].strip()).name
    except TypeError:
        raise CaseSyntaxError(f"--case {spec!r}: unknown dtype {parts[3]!r}") from None
    if any(n < 0 for n in shape):
        raise CaseSyntaxError(f"--case {spec!r}: negative length in SHAPE {shape}")
    for what, strides in (("SRC_STRIDES", src), ("DST_STRIDES", dst)):
        if strides is not None and len(strides) != len(shape):
            raise CaseSyntaxError(
                f"--case {spec!r}: {what} has {len(strides)} values for {len(shape)} dims")

    def build(alloc, shape_, dtype_):
        x = _strided(alloc, shape, src, dtype, fill=True)
        y = alloc(shape, dtype) if dst is None else _strided(alloc, shape, dst, dtype)
        return y, x

    return Case("case", spec, dtype, shape, None, build)


def _strided(alloc, shape, strides, dtype, fill=False):
    """A view of ``shape`` with element ``strides`` into a buffer just large enough."""
    itemsize = np.dtype(dtype).itemsize
    lo = sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0 and n > 0)
    hi = sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0 and n > 0)
    size = 0 if 0 in shape else hi - lo + 1
    buffer = alloc((size,), dtype)
    if fill:
        _fill(buffer)
    base = buffer[-lo:] if size else buffer
    byte_strides = tuple(s * itemsize for s in strides)
    return _xp(buffer).lib.stride_tricks.as_strided(base, shape=shape, strides=byte_strides)
