"""The dtype table and promotion: the standard's lattice, NumPy for mixed kinds, weak scalars."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from infini_cupy import dtypes

ALL = dtypes.ALL_DTYPES
# NumPy promotes these itself; bfloat16 (ml_dtypes, which promotes it with some dtypes only and
# takes Python floats as float64) follows float16's rules: tests/elementwise/test_bfloat16.py.
NUMPY_PROMOTED = tuple(d for d in ALL if not dtypes.is_bfloat16(d))


def test_table_covers_the_standard_dtypes():
    assert [str(d) for d in NUMPY_PROMOTED] == [
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128"]
    # with ml_dtypes, bfloat16 beside float16
    assert [str(d) for d in ALL if d.kind not in "biuc"] == (
        ["float16", "float32", "float64"] if dtypes.BFLOAT16 is None
        else ["float16", "bfloat16", "float32", "float64"])
    assert dtypes.ctype("float16") == "ic::half_t"
    assert dtypes.ctype(np.complex128) == "ic::complex<double>"
    assert dtypes.category("uint8") == "unsigned"
    assert dtypes.dtypes_in("real floating-point") == tuple(
        d for d in ALL if d.kind == "f" or dtypes.is_bfloat16(d))
    assert len(dtypes.dtypes_in("real floating-point")) == 3 + (dtypes.BFLOAT16 is not None)


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(NUMPY_PROMOTED, 2)))
def test_array_promotion_is_numpys(a, b):
    assert dtypes.result_type(a, b) == np.result_type(a, b) == dtypes.result_type(b, a)


@pytest.mark.parametrize("dt", NUMPY_PROMOTED)
@pytest.mark.parametrize("scalar", [True, 1, 1.0, 1j])
def test_python_scalars_are_weak(dt, scalar):
    expected = np.result_type(dt, scalar)  # NumPy 2 (NEP 50) treats Python scalars weakly
    assert dtypes.result_type(dt, scalar) == expected
    assert dtypes.result_type(scalar, np.zeros(1, dt)) == expected


def test_standard_examples():
    assert dtypes.result_type(np.dtype("int8"), 1) == np.int8
    assert dtypes.result_type(np.dtype("float32"), 1.0) == np.float32
    assert dtypes.result_type(np.dtype("float32"), 1j) == np.complex64
    assert dtypes.result_type(np.dtype("int8"), np.dtype("uint8")) == np.int16
    assert dtypes.result_type(np.dtype("int64"), np.dtype("uint64")) == np.float64
    assert dtypes.result_type(1, 2.0) == np.float64


def test_check_group_message():
    with pytest.raises(TypeError, match=r"^Only numeric dtypes are allowed in add\(\.\.\.\)\. Got bool and int8\.$"):
        dtypes.check_group("add", "numeric", np.dtype(bool), np.dtype(np.int8))
    dtypes.check_group("sin", "floating-point", np.dtype(np.complex64))


def test_unsupported_dtype():
    with pytest.raises(TypeError, match="not supported"):
        dtypes.as_dtype("datetime64[s]")


def test_scalar_values():
    assert dtypes.scalar_value(3, "int8") == np.int8(3) and type(dtypes.scalar_value(3, "int8")) is np.int8
    assert type(dtypes.scalar_value(1.5, "float16")) is np.float16
    with pytest.raises(OverflowError):
        dtypes.scalar_value(300, "uint8")
    assert not dtypes.is_python_scalar(np.float64(1.0))
    assert dtypes.is_python_scalar(1.0) and dtypes.is_python_scalar(True)
