"""The layouts the tools work on: the two suites of realistic cases ``python -m infini_cupy bench``
measures, and the one parser of ad-hoc layouts (``--case "SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE"``
for bench and plan, ``--shape``/``--src-strides``/... for plan).

A case builds its operands with an allocator ``alloc(shape, dtype)`` (CuPy on a GPU; NumPy
aligned to 256 bytes, as CuPy's allocator aligns, in emulation), at its full size on a GPU or
at its emulated size (scaled so the emulated suite runs in minutes on 2 cores).

>>> case = parse_case("2001,2001:1,2001:C:float32")
>>> case.shape, case.dtype, case.name
((2001, 2001), 'float32', '2001,2001:1,2001:C:float32')
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..strided.copy import check_copyable_dtype


@dataclass(frozen=True)
class Case:
    """One layout to measure.

    suite: ``rearrange``, ``elementwise`` or ``signatures`` (elementwise calls, one per kind
        of signature: their host cost), or ``case`` for ``--case`` layouts.
    shape: the result's shape on a GPU; emulated_shape: in emulation (None: the same).
    build: ``build(alloc, shape, dtype)`` -> the operands: ``(y, x)`` for a rearrange (copy x
        into y), ``(op name, *inputs)`` for an elementwise call, then ``{"out": out}`` when it
        passes one (:func:`call_parts`).
    """

    suite: str
    name: str
    dtype: str
    shape: tuple[int, ...]
    emulated_shape: tuple[int, ...] | None
    build: Callable

    @property
    def elementwise(self) -> bool:
        """An elementwise call (else a rearrange copy)."""
        return self.suite in ("elementwise", "signatures")


def _xp(a):
    if isinstance(a, np.ndarray):
        return np
    import cupy

    return cupy


_filling = [True]


@contextlib.contextmanager
def unfilled():
    """Cases built inside the block keep their arrays as allocated (``warmup`` plans the
    bench's cases at their GPU sizes without writing gigabytes on the host)."""
    _filling[0] = False
    try:
        yield
    finally:
        _filling[0] = True


def _fill(a):
    """Deterministic values that survive every dtype (small integers); a read-only
    :func:`layout_only` stand-in, and arrays made inside :func:`unfilled`, are left as they
    are."""
    if not _filling[0] or (isinstance(a, np.ndarray) and not a.flags.writeable):
        return a
    values = _xp(a).arange(a.size, dtype=np.int64).reshape(a.shape) % 61 - 30
    a[...] = values.astype(a.dtype)
    return a


def aligned_alloc(shape, dtype, align=256):
    """NumPy memory aligned like CuPy's allocator (256 bytes), so plans match the GPU's: the
    allocator of the bench's emulated operands."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    raw = np.empty(nbytes + align, np.uint8)
    start = -raw.ctypes.data % align
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def layout_only(shape, dtype):
    """An allocator of read-only stand-ins: C-contiguous strides over one 256-byte aligned
    element, so ``case.build(layout_only, case.shape, ...)`` gives the layouts of a case at
    its full size (for planning) without their memory."""
    dtype = np.dtype(dtype)
    raw = np.zeros(256 + dtype.itemsize, np.uint8)
    start = -raw.ctypes.data % 256
    one = raw[start:start + dtype.itemsize].view(dtype)
    strides, step = [], dtype.itemsize
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(n, 1)
    return np.lib.stride_tricks.as_strided(one, tuple(shape), tuple(strides), writeable=False)


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


# ---- elementwise layouts: build(alloc, shape, dtype) -> (op, *inputs[, {"out": out}])


def binary(op, second, first_dtype=None, out=None):
    """``op(a, b)`` with a C-contiguous (of ``first_dtype``, default the case's) and b shaped
    by ``second``; ``out``: "same" (C-contiguous) or "transposed" passes ``out=``."""

    def build(alloc, shape, dtype):
        a = _fill(alloc(shape, first_dtype or dtype))
        if second == "same":
            b = _fill(alloc(shape, dtype))
        elif second == "row":
            b = _fill(alloc(shape[-1:], dtype))
        elif second == "column":
            b = _fill(alloc((shape[0], 1), dtype))
        elif second == "transposed":
            b = _fill(alloc(shape[::-1], dtype)).T
        elif second == "strided":  # every other column of an array twice as wide
            b = _fill(alloc((shape[0], 2 * shape[1]), dtype))[:, ::2]
        elif second == "scalar":
            b = 3
        elif second == "numpy scalar":
            b = np.dtype(dtype).type(3)
        if out is None:
            return op, a, b
        target = alloc(shape, dtype) if out == "same" else alloc(shape[::-1], dtype).T
        return op, a, b, {"out": target}

    return build


def unary(op):
    def build(alloc, shape, dtype):
        return op, _fill(alloc(shape, dtype))

    return build


def off_zero(build, offset):
    """``build`` with its first input moved by ``offset``: a zero base of ``pow`` gives NaN in
    NumPy and in our kernels and infinities in CuPy, which the GPU's comparison would flag."""

    def build_off_zero(alloc, shape, dtype):
        operands = build(alloc, shape, dtype)
        if _filling[0]:
            operands[1][...] += offset
        return operands

    return build_off_zero


def call_parts(operands) -> tuple[str, list, dict]:
    """(function name, positional inputs, keywords) of an elementwise case's operands."""
    op, *inputs = operands
    if inputs and isinstance(inputs[-1], dict):
        return op, inputs[:-1], inputs[-1]
    return op, inputs, {}


def _elementwise(name, build, dtype, shape, emulated=None, suite="elementwise"):
    return Case(suite, name, dtype, tuple(shape), emulated and tuple(emulated), build)


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
    # Double complex pow: dozens of FP64 operations per item. Its tiled kernels spill registers
    # (tests/runtime/test_ptx.py KNOWN_SPILLS: ew_tiled 60 bytes a thread, ew_tiled_out 472) and
    # its contiguous one does not; the three side by side measure what the spills cost. The
    # emulated shape is the smallest whose quarter (CI's model) still stages through a tile.
    _elementwise("pow contiguous complex128", off_zero(binary("pow", "same"), 0.5j), "complex128",
                 (2048, 2048), (1024, 1024)),
    _elementwise("pow transposed complex128", off_zero(binary("pow", "transposed"), 0.5j), "complex128",
                 (2048, 2048), (1024, 1024)),
    _elementwise("pow into transposed complex128", off_zero(binary("pow", "same", out="transposed"), 0.5j),
                 "complex128", (2048, 2048), (1024, 1024)),
)


def _signature(name, build, dtype="float32"):
    return _elementwise(name, build, dtype, (4096, 4096), (256, 256), suite="signatures")


# One elementwise call per kind of signature the short path remembers: their host cost.
SIGNATURE_SUITE = (
    _signature("same dtype, contiguous", binary("add", "same")),
    _signature("unary (exp)", unary("exp")),
    _signature("mixed dtypes: int8 + fp32", binary("add", "same", first_dtype="int8")),
    _signature("Python scalar", binary("add", "scalar")),
    _signature("NumPy scalar", binary("add", "numpy scalar")),
    _signature("out= contiguous", binary("add", "same", out="same")),
    _signature("out= transposed", binary("add", "same", out="transposed")),
    _signature("broadcast row", binary("add", "row")),
    _signature("broadcast column", binary("add", "column")),
    _signature("strided (every other column)", binary("add", "strided")),
    _signature("transposed input (staged)", binary("add", "transposed")),
)

SUITES = {"rearrange": REARRANGE_SUITE, "elementwise": ELEMENTWISE_SUITE,
          "signatures": SIGNATURE_SUITE}


# ---- ad-hoc layouts


class CaseSyntaxError(ValueError):
    """A layout (``--case`` string, ``--shape``, strides) that does not parse."""


def parse_ints(text: str, what: str) -> tuple[int, ...]:
    """``"2,3,4"`` (or ``"(2, 3, 4)"``, ``""`` for no dims) as a tuple of ints."""
    text = text.strip().strip("()").replace(" ", "")
    try:
        return tuple(int(v) for v in text.split(",") if v != "")
    except ValueError:
        raise CaseSyntaxError(f"{what} must be comma-separated integers, got {text!r}") from None


def parse_strides(text: str, shape, what: str) -> tuple[int, ...]:
    """Element strides from ``C``, ``F`` or ``s0,s1,...`` (one per dim of ``shape``).

    >>> parse_strides("C", (2, 3, 4), "src"), parse_strides("F", (2, 3, 4), "src")
    ((12, 4, 1), (1, 2, 6))
    """
    if text.strip().upper() in ("C", "F"):
        order = range(len(shape) - 1, -1, -1) if text.strip().upper() == "C" else range(len(shape))
        strides, step = [0] * len(shape), 1
        for d in order:
            strides[d] = step
            step *= max(shape[d], 1)
        return tuple(strides)
    strides = parse_ints(text, what)
    if len(strides) != len(shape):
        raise CaseSyntaxError(f"{what}: {len(strides)} strides for {len(shape)} dims (shape {shape})")
    return strides


CASE_FIELDS = ("SHAPE", "SRC_STRIDES", "DST_STRIDES", "DTYPE")


def parse_layout(shape_text: str, src_text: str, dst_text: str, dtype_text: str, *,
                 what: str = "", names=CASE_FIELDS):
    """``(shape, src strides, dst strides, dtype)`` from their texts (strides in elements,
    negative or, for the source, 0; ``C`` or ``F`` for a contiguous layout). Errors name
    the field (``names``), after ``what``.

    >>> parse_layout("4,6", "1,4", "C", "float16")
    ((4, 6), (1, 4), (6, 1), dtype('float16'))
    """
    prefix = f"{what}: " if what else ""
    shape_name, src_name, dst_name, dtype_name = (prefix + name for name in names)
    shape = parse_ints(shape_text, shape_name)
    if any(n < 0 for n in shape):
        raise CaseSyntaxError(f"{shape_name}: negative length in {shape}")
    src = parse_strides(src_text, shape, src_name)
    dst = parse_strides(dst_text, shape, dst_name)
    try:
        dtype = np.dtype(dtype_text.strip())
    except TypeError:
        raise CaseSyntaxError(f"{dtype_name}: unknown dtype {dtype_text!r}") from None
    try:  # what rearrange refuses (object, strings, byte-swapped) has no plan either
        check_copyable_dtype(dtype, "a copy")
    except TypeError as e:
        raise CaseSyntaxError(f"{dtype_name}: {e}") from None
    return shape, src, dst, dtype


def split_case(spec: str) -> tuple[str, str, str, str]:
    """The four fields of ``SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE``."""
    parts = spec.split(":")
    if len(parts) != 4:
        raise CaseSyntaxError(
            f"--case {spec!r}: expected SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE (4 fields), got {len(parts)}")
    return tuple(parts)


def parse_case(spec: str) -> Case:
    """A rearrange case from ``SHAPE:SRC_STRIDES:DST_STRIDES:DTYPE`` (see :func:`parse_layout`)."""
    shape, src, dst, dtype = parse_layout(*split_case(spec), what=f"--case {spec!r}")
    dtype = dtype.name

    def build(alloc, shape_, dtype_):
        x = _strided(alloc, shape, src, dtype, fill=True)
        y = _strided(alloc, shape, dst, dtype)
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
