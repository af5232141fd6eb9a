"""The fused functions the tests run, with their arguments: every dtype group, mixed dtypes
(casts inside the expression), scalars, broadcasting and odd layouts. The NVRTC test compiles
the kernel of every case (``kernel_names``), the emulated tests run them."""

from __future__ import annotations

import numpy as np

import infini_cupy as xp
from infini_cupy import dtypes

_bf16 = [d for d in dtypes.ALL_DTYPES if dtypes.is_bfloat16(d)]
INTEGERS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOATS = ["float16", "float32", "float64"] + [d.name for d in _bf16]
COMPLEX = ["complex64", "complex128"]


def arith(a, b):
    return a * b + a - b


def softplus(x):
    return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + xp.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def standardize(x, mean, std):
    return (x - mean) / std


def logic(a, b):
    return xp.logical_xor(a, b) | ~a


def mask_select(c, a, b, lo, hi):
    return xp.where(c, xp.clip(a, lo, hi), b * 2), a < b


def casts(a, b, k):
    return xp.astype(a, xp.float32) * k + b, xp.astype(a > b, xp.int8)


def _random(dtype, shape, rng):
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(np.float32).astype(dt)


def cases():
    """(id, function, args) for every case; arrays NumPy, small, from a fixed seed."""
    rng = np.random.default_rng(24)
    out = []
    for dt in INTEGERS + FLOATS + COMPLEX:
        out.append((f"arith-{dt}", arith, (_random(dt, (3, 5), rng), _random(dt, (5,), rng))))
    out.append(("arith-mixed-int8-float32", arith, (_random("int8", (4, 6), rng),
                                                    _random("float32", (4, 6), rng))))
    out.append(("arith-mixed-uint8-int16", arith, (_random("uint8", (33,), rng),
                                                   _random("int16", (33,), rng))))
    out.append(("arith-mixed-float16-complex64", arith, (_random("float16", (2, 3), rng),
                                                         _random("complex64", (2, 3), rng))))
    if _bf16:
        out.append(("arith-mixed-bfloat16-float16", arith, (_random(_bf16[0], (7,), rng),
                                                            _random("float16", (7,), rng))))
    for dt in FLOATS:
        out.append((f"softplus-{dt}", softplus, (_random(dt, (37,), rng),)))
    out.append(("gelu-float32-transposed", gelu_tanh, (_random("float32", (9, 6), rng).T,)))
    out.append(("standardize-broadcast", standardize, (_random("float32", (8, 12), rng),
                                                       _random("float32", (12,), rng),
                                                       np.float32(2.0))))
    x = _random("float64", (6, 10), rng)
    out.append(("standardize-negative-strides", standardize, (x[::-1, ::2], x[0, ::2], 0.5)))
    out.append(("standardize-column", standardize, (_random("float32", (5, 8), rng),
                                                    _random("float32", (5, 1), rng), 3.0)))
    out.append(("logic-bool", logic, (_random("bool", (4, 4), rng), _random("bool", (4,), rng))))
    out.append(("mask-select-5-inputs", mask_select, (
        _random("bool", (6, 7), rng), _random("float32", (6, 7), rng),
        _random("float32", (7,), rng), _random("float32", (6, 1), rng), 1.0)))
    out.append(("casts-scalar-arg", casts, (_random("int16", (3, 4), rng),
                                            _random("float64", (4,), rng), 1.5)))
    out.append(("arith-0d", arith, (np.asarray(np.float32(3.0)), _random("float32", (5,), rng))))
    out.append(("arith-3d-strided", arith, (_random("float32", (4, 5, 6), rng)[:, ::2, 1:],
                                            _random("float32", (4, 1, 5), rng))))
    return out


def kernel_names() -> list[str]:
    """The name expression of every case's fused kernel."""
    with xp.backend("emulate"):
        return sorted({xp.fuse(f).kernel_name(*args) for _, f, args in cases()})
