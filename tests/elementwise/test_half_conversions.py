"""float16 and bfloat16 conversions bit for bit, over all 65,536 values of each type, on the
suite's backend.

On the GPU the kernels convert with the hardware (``cvt``; bfloat16 rounding on sm_80 and
newer) and the emulator with bit-level code: both must give NumPy's (float16) and ml_dtypes'
(bfloat16) bits for every non-NaN value. NaNs take one explicit path on both: float16 ->
float32 keeps the payload (shifted, as NumPy), float32 -> float16 keeps it and sets the quiet
bit (NumPy leaves a signalling payload signalling), float32 -> bfloat16 gives 0x7fc0 with the
sign (ml_dtypes). The payload of a NaN that arithmetic produces is the hardware's (the GPU's
float units return 0x7fffffff, x86 propagates an input's), so sums compare NaN-ness only.
"""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from tests.support.dtype_cases import require_bfloat16

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
ALL_BITS = np.arange(2**16, dtype=np.uint32).astype(np.uint16)


def _bits(a) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.itemsize}")


def _float16_deciding_floats() -> np.ndarray:
    """float32 values where rounding to float16 is decided: every float16 value, every tie
    between neighbours (exact in float32) and the float32s just either side of it, around the
    overflow threshold 65520, and NaNs with quiet and signalling payloads."""
    finite = ALL_BITS.view(np.float16)
    finite = np.sort(finite[np.isfinite(finite) & (finite >= 0)].astype(np.float32))
    ties = (finite[:-1].astype(np.float64) + finite[1:]) / 2  # exact: 11 + 1 bits
    ties = ties.astype(np.float32)
    near = np.concatenate([ties, np.nextafter(ties, np.float32(0)), np.nextafter(ties, np.float32(np.inf)),
                           np.float32([65504, 65519.996, 65520, 65536, 1e30, np.inf,
                                       2.0**-25, 2.0**-26, 1e-45])])
    values = np.concatenate([finite, near])
    values = np.concatenate([values, -values])
    nans = np.array([0x7FC00000, 0x7FC02000, 0x7FFFFFFF, 0x7F800001, 0x7F802000, 0x7FA00000,
                     0xFFC00000, 0xFF800001, 0xFFFFE000], np.uint32).view(np.float32)
    return np.concatenate([values, nans])


def test_float16_to_float32_every_value(to_device, to_host):
    x = ALL_BITS.view(np.float16)
    got = to_host(xp.astype(to_device(x), xp.float32))
    np.testing.assert_array_equal(_bits(got), _bits(x.astype(np.float32)))  # NaN payloads too


def test_float32_to_float16_at_every_rounding_decision(to_device, to_host):
    x = _float16_deciding_floats()
    got = to_host(xp.astype(to_device(x), xp.float16))
    with np.errstate(all="ignore"):
        expected = x.astype(np.float16)
    u = _bits(x)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    np.testing.assert_array_equal(_bits(got)[~nan], _bits(expected)[~nan])
    # NaN: the sign, the quiet bit, the payload's top 10 bits; NumPy's bits for quiet NaNs
    # (a signalling payload NumPy keeps signalling, and turns 0 into 1)
    rule = ((u >> 16) & 0x8000 | 0x7E00 | (u >> 13) & 0x3FF).astype(np.uint16)
    np.testing.assert_array_equal(_bits(got)[nan], rule[nan])
    quiet = nan & ((u & 0x00400000) != 0)
    np.testing.assert_array_equal(rule[quiet], _bits(expected)[quiet])


@pytest.mark.parametrize("dtype", [np.float16, BF16], ids=["float16", "bfloat16"])
def test_add_and_multiply_every_value(dtype, to_device, to_host):
    """Every value of the type through add and multiply (the kernels compute in float32 and
    round once, as NumPy's float16 loops and ml_dtypes do), against a permutation of itself."""
    if dtype == BF16:
        require_bfloat16()
    x = ALL_BITS.view(dtype)
    y = np.random.default_rng(16).permutation(x)
    for name in ("add", "multiply"):
        got = to_host(getattr(xp, name)(to_device(x), to_device(y)))
        with np.errstate(all="ignore"):
            expected = getattr(np, name)(x.astype(np.float32), y.astype(np.float32)).astype(dtype)
        nan = np.isnan(expected.astype(np.float32))
        np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan, err_msg=name)
        np.testing.assert_array_equal(_bits(got)[~nan], _bits(expected)[~nan], err_msg=name)

