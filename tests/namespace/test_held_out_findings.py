"""Regressions of the held-out checks of issue 23: ``pow`` with a signaling NaN operand, and
bfloat16 with bool agreeing between ``result_type`` and the functions (as float32 does).
(Dask's broadcasting message and reductions on Array chunks are in ``tests/test_dask.py``.)

Runs on the suite's device (the emulator, or the GPU with ``--backend cuda``).
"""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import dtypes

rng = np.random.default_rng(23)

# (dtype, its unsigned integer view, exponent bits, mantissa bits)
_LAYOUTS = {"float16": (np.uint16, 5, 10), "float32": (np.uint32, 8, 23),
            "float64": (np.uint64, 11, 52), "bfloat16": (np.uint16, 8, 7)}


def _dtype(name):
    if name == "bfloat16":
        if dtypes.BFLOAT16 is None:
            pytest.skip("bfloat16 needs ml_dtypes")
        return dtypes.BFLOAT16
    return np.dtype(name)


def signaling_nans(name: str, n: int) -> np.ndarray:
    """``n`` signaling NaNs of ``name``: all-ones exponent, quiet bit clear, a random nonzero
    payload, random signs."""
    bits, exponent, mantissa = _LAYOUTS[name]
    payload = rng.integers(1, 1 << (mantissa - 1), size=n, dtype=np.uint64)
    sign = rng.integers(0, 2, size=n, dtype=np.uint64) << np.uint64(exponent + mantissa)
    ones = np.uint64(((1 << exponent) - 1) << mantissa)
    raw = (sign | ones | payload).astype(bits)
    values = raw.view(_dtype(name))
    with np.errstate(invalid="ignore"):  # narrowing a signaling NaN raises the invalid flag
        assert np.isnan(values.astype(np.float32)).all()
    return values


@pytest.mark.parametrize("name", list(_LAYOUTS))
def test_pow_with_a_signaling_nan_is_one_where_the_standard_says(name, to_device, to_host):
    dtype = _dtype(name)
    snan = signaling_nans(name, 64)
    zeros = np.where(rng.random(64) < 0.5, -0.0, 0.0).astype(dtype)
    ones = np.ones(64, dtype)
    x_snan, x_zero, x_one = (xp.asarray(to_device(a)) for a in (snan, zeros, ones))
    for result in (xp.pow(x_snan, x_zero), x_snan ** x_zero, xp.pow(x_snan, 0),
                   xp.pow(x_one, x_snan), x_one ** x_snan, xp.pow(1.0, x_snan)):
        assert result.dtype == dtype
        np.testing.assert_array_equal(to_host(result).astype(np.float32), 1.0)
    # anything else with a NaN stays NaN, signaling or not
    others = rng.uniform(0.5, 3.0, size=64).astype(dtype)
    x_other = xp.asarray(to_device(others))
    for result in (xp.pow(x_snan, x_other), xp.pow(x_other, x_snan)):
        assert np.isnan(to_host(result).astype(np.float32)).all()


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_bool_with_a_float_agrees_between_result_type_and_functions(name, to_device, to_host):
    """bfloat16 behaves as float32 does: ``result_type`` with bool keeps the float (NumPy's
    table), functions that take both kinds (``where``, ``equal``, ``concat``) give that dtype,
    and arithmetic takes the bool operand as NumPy does (xarray's weighted means multiply
    bool masks by floats), in the float's dtype."""
    dtype = _dtype(name)
    a = rng.standard_normal(6).astype(dtype)
    mask = rng.random(6) < 0.5
    x, m = xp.asarray(to_device(a)), xp.asarray(to_device(mask))
    assert xp.result_type(dtype, xp.bool) == dtype == xp.result_type(x, m)
    got = xp.where(m, x, m)
    assert got.dtype == dtype
    np.testing.assert_array_equal(to_host(got).astype(np.float32),
                                  np.where(mask, a.astype(np.float32), mask))
    assert xp.concat([x, m]).dtype == dtype
    np.testing.assert_array_equal(to_host(xp.equal(x, m)), a.astype(np.float32) == mask)
    for call, oracle in ((xp.add, np.add), (xp.multiply, np.multiply),
                         (xp.maximum, np.maximum)):
        got = call(x, m)
        assert got.dtype == dtype
        np.testing.assert_array_equal(to_host(got).astype(np.float32),
                                      oracle(a.astype(np.float32), mask).astype(dtype)
                                      .astype(np.float32))
