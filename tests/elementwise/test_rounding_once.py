"""Conversions to bfloat16 and float16 round once, to nearest even, on every device and path.

Sources: float64 and complex128 values at and beside every tie of the target over its whole
exponent range (subnormals, the top, overflow to infinity), 32- and 64-bit integers beside the
ties of every bit length past the target's significand, float32 values near the same ties.
Paths: contiguous, strided and tiled casts, a fused kernel, ``x[k] = value`` (Python floats
and ints, NumPy float64 scalars, masks), Python scalar operands; on the suite's backend and
on Arrays of the `cpu` and `emulator` devices. The oracle is the tests' own
(tests/support/rounding.py), exact on Python integers: no library release decides the answer.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import dtypes
from tests.support.elementwise_cases import kernels_launched, prepare
from tests.support.rounding import (BFLOAT16, FLOAT16, near_ties_float64, near_ties_int,
                                    round_once, round_once_array)

TARGETS = {"float16": (np.dtype(np.float16), FLOAT16)}
if dtypes.BFLOAT16 is not None:
    TARGETS["bfloat16"] = (dtypes.BFLOAT16, BFLOAT16)
SOURCES = ["float64", "complex128", "int64", "uint64", "int32", "uint32", "float32"]
DEVICES = ["cpu", "emulator"]
pytestmark = pytest.mark.filterwarnings("error")  # every device is silent, overflow included


def _near_ties(src: str, fmt) -> np.ndarray:
    rng = np.random.default_rng(len(src))
    dt = np.dtype(src)
    if dt.kind in "iu":
        return near_ties_int(dt, fmt)
    values = near_ties_float64(fmt, rng)
    if dt == np.float32:
        with np.errstate(over="ignore"):
            return values.astype(np.float32)
    if dt.kind == "c":
        out = np.empty(values.shape, dt)  # part by part: real + 1j * imag could make NaNs
        out.real, out.imag = values, rng.permutation(values)
        return out
    return values


def _bits(a) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint16)


def _complex_warned(src: str):
    """A cast from complex to these real targets warns as NumPy's does, and nothing else."""
    if src.startswith("complex"):
        return pytest.warns(np.exceptions.ComplexWarning)
    return contextlib.nullcontext()


@pytest.fixture(scope="module")
def _casts_prepared(backend_name):
    prepare(backend_name, "cast", "add")


@pytest.mark.parametrize("src", SOURCES)
@pytest.mark.parametrize("target", list(TARGETS))
def test_casts_round_once(target, src, backend_name, to_device, to_host, _casts_prepared):
    """Contiguous, reversed (strided) and on Arrays of both devices."""
    dt, fmt = TARGETS[target]
    x = _near_ties(src, fmt)
    expected = round_once_array(x, fmt)
    with _complex_warned(src):
        got = to_host(xp.astype(to_device(x), dt))
    np.testing.assert_array_equal(_bits(got), expected, err_msg=f"{src} -> {target}")
    with _complex_warned(src):
        got = to_host(xp.astype(to_device(x)[::-1], dt))
    np.testing.assert_array_equal(_bits(got), expected[::-1], err_msg="strided")
    for device in DEVICES:
        with _complex_warned(src):
            got = xp.astype(xp.asarray(x, device=device), dt).to_device("cpu")
        np.testing.assert_array_equal(_bits(got), expected, err_msg=f"{device}: {src} -> {target}")


@pytest.mark.parametrize("src", ["float64", "int64", "uint64", "complex128"])
@pytest.mark.parametrize("target", list(TARGETS))
def test_tiled_casts_round_once(target, src, stage_small, backend_name, to_device, to_host,
                                _casts_prepared):
    """A transposed source is read through the shared-memory tile (``ew_tiled``)."""
    dt, fmt = TARGETS[target]
    x = _near_ties(src, fmt)
    x = x[: x.size - x.size % 32].reshape(-1, 32)
    expected = round_once_array(x, fmt)
    with _complex_warned(src):
        got, names = kernels_launched(lambda: xp.astype(to_device(x).T, dt))
    assert names == ["ew_tiled"]
    np.testing.assert_array_equal(_bits(to_host(got)), expected.T)


@pytest.mark.parametrize("src", ["float64", "int64", "complex128"])
@pytest.mark.parametrize("target", list(TARGETS))
def test_fused_casts_round_once(target, src, backend_name, to_device, to_host, _casts_prepared):
    """The cast at the end of a fused expression: one kernel, the same bits."""
    dt, fmt = TARGETS[target]
    x = _near_ties(src, fmt)

    @xp.fuse
    def shifted_then_cast(a):
        with warnings.catch_warnings():  # complex to real: the trace's warning (tested apart)
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return xp.astype(a + 0, dt)

    expected = round_once_array(x + 0, fmt)
    for device in ("emulator",):
        got, names = kernels_launched(lambda: shifted_then_cast(xp.asarray(x, device=device)))
        assert len(names) == 1
        np.testing.assert_array_equal(_bits(got.to_device("cpu")), expected)
    with xp.backend(backend_name):
        got = to_host(shifted_then_cast(to_device(x)))
    np.testing.assert_array_equal(_bits(got), expected)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("target", list(TARGETS))
def test_assignment_rounds_once(target, device):
    """``x[k] = v`` of Python floats, NumPy float64 scalars and Python ints past 2**53, and
    ``x[mask] = v``, each rounded once."""
    dt, fmt = TARGETS[target]
    rng = np.random.default_rng(5)
    floats = rng.choice(near_ties_float64(fmt, rng), 60, replace=False).tolist()
    ints = rng.choice(near_ties_int(np.int64, fmt), 40, replace=False).tolist()
    ints += [2**60 + 2**52 + 1, -(2**70 + 2**62 + 1), 2**100 + 1]
    values = floats + [np.float64(v) for v in floats[:20]] + ints
    x = xp.zeros(len(values), dtype=dt, device=device)
    for k, v in enumerate(values):
        x[k] = v
    expected = [round_once(float(v) if isinstance(v, np.floating) else v, fmt) for v in values]
    np.testing.assert_array_equal(_bits(x.to_device("cpu")), np.array(expected, np.uint16))
    mask = xp.asarray(np.arange(len(values)) % 2 == 0, device=device)
    x[mask] = 1 + 2**-8 + 2**-30
    got = _bits(x.to_device("cpu"))
    assert set(got[::2].tolist()) == {round_once(1 + 2**-8 + 2**-30, fmt)}


@pytest.mark.parametrize("target", list(TARGETS))
def test_scalar_operands_round_once(target, backend_name, to_device, to_host, _casts_prepared):
    """A Python scalar operand becomes the target dtype, rounded once, before the kernel adds:
    adding it to zeros gives its bits."""
    dt, fmt = TARGETS[target]
    zeros = to_device(np.zeros(3, dt))
    for scalar in (1 + 2**-8 + 2**-30, 1 + 2**-11 + 2**-40, 2**60 + 2**52 + 1, -(2**40 + 2**31 + 1),
                   6.1e-5 * (1 + 2**-30), 1.1754944e-38 * (1 - 2**-30)):
        got = _bits(to_host(xp.add(zeros, scalar)))
        assert set(got.tolist()) == {round_once(scalar, fmt)}, scalar
