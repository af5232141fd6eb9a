"""``arange``, ``linspace`` and ``fft.fftfreq``/``rfftfreq`` on the suite's device give
NumPy's values bit for bit (the kernels do NumPy's arithmetic: ``namespace/evenly_spaced.py``),
and refuse what NumPy refuses, with its exception types."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import infini_cupy as xp
from infini_cupy import dtypes

DTYPES = [None, np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
          np.uint8, np.uint16, np.uint32, np.uint64]
if dtypes.BFLOAT16 is not None:
    DTYPES.append(dtypes.BFLOAT16)

numbers = st.one_of(
    st.integers(-60, 60),
    st.floats(-60, 60, allow_nan=False, width=64),
    st.sampled_from([0.1, 0.3, -0.7, 1 / 3, 2.5]).flatmap(
        lambda f: st.integers(-20, 20).map(lambda k: k * f)),  # steps that round
    st.floats(-60, 60, allow_nan=False, width=32).map(np.float32),
    st.integers(-60, 60).map(np.int8),
)


@pytest.fixture(scope="module")
def device(backend_name) -> str:
    return {"emulate": "emulator", "cuda": "cuda"}[backend_name]


def _same_or_same_error(ours, numpy_call):
    """``ours()`` against ``numpy_call()``: the same bytes and dtype, or both raise the same
    exception type. Returns NumPy's array (None where it raised)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = numpy_call()
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            with pytest.raises(type(e)):
                ours()
            return None
        got = ours().to_device("cpu")
    got = np.asarray(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes(), (got, expected)
    return expected


@settings(deadline=None)
@given(start=numbers, stop=st.one_of(st.none(), numbers), step=numbers,
       dtype=st.sampled_from(DTYPES))
def test_arange_is_numpy_s_bit_for_bit(device, start, stop, step, dtype):
    if step == 0 or abs((start if stop is None else stop - start) / step) > 2000:
        return  # refused alike (a test of its own); no long arrays
    args = (start,) if stop is None else (start, stop)
    _same_or_same_error(lambda: xp.arange(*args, step=step, dtype=dtype, device=device),
                        lambda: np.arange(*args, step=step, dtype=dtype))


@settings(deadline=None)
@given(start=numbers, stop=numbers, num=st.integers(0, 40), endpoint=st.booleans(),
       dtype=st.sampled_from(DTYPES), imaginary=st.sampled_from([None, 1.5, -0.25]))
def test_linspace_is_numpy_s_bit_for_bit(device, start, stop, num, endpoint, dtype, imaginary):
    if imaginary is not None:
        start, dtype = complex(float(start), imaginary), None
    elif dtype is not None and np.dtype(dtype).kind == "u" and min(start, stop) < 0:
        return  # a negative float cast to an unsigned dtype: each library's own answer
    _same_or_same_error(
        lambda: xp.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, device=device),
        lambda: np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype))


@pytest.mark.parametrize("call", [
    lambda xp_, d: xp_.arange(1.0, 2.0, 0.1, dtype=np.float32, **d),  # steps the libraries
    lambda xp_, d: xp_.arange(0.5, 100.0, 0.3, dtype=np.float16, **d),  # round apart
    lambda xp_, d: xp_.arange(-3.3, 7.1, 0.37, **d),
    lambda xp_, d: xp_.arange(0.5, 3, 0.7, dtype=np.int64, **d),  # start and step truncated
    lambda xp_, d: xp_.arange(-0.0, 3.0, **d),  # the sign of the first zero kept
    lambda xp_, d: xp_.arange(120, 100, -7, dtype=np.int8, **d),
    lambda xp_, d: xp_.linspace(-3.3, 7.1, 37, **d),
    lambda xp_, d: xp_.linspace(0, 1 + 2j, 7, **d),  # complex ends
    lambda xp_, d: xp_.linspace(0.0, np.inf, 3, **d),
    lambda xp_, d: xp_.linspace(np.float32(0.1), 2, 9, endpoint=False, **d),
    lambda xp_, d: xp_.linspace(0, 1e-320, 4, **d),  # a step of 0: NumPy divides, then scales
], ids=["f32", "f16", "f64", "int-of-float", "-0", "int8-down", "linspace", "complex", "inf",
        "f32-open", "subnormal"])
def test_the_libraries_own_roundings_are_not_taken(device, call):
    """The cases where CuPy's formula (``start + i * step``, contracted into an FMA) gives
    other bits than NumPy's, and its ``linspace`` of complex ends raises."""
    _same_or_same_error(lambda: call(xp, {"device": device}), lambda: call(np, {}))


def test_linspace_of_0d_arrays_reads_their_dtype(device, arr):
    """0-d Arrays as ends count with their dtype, as NumPy counts 0-d arrays (no Python
    number's weak promotion): float32 ends give float32."""
    h = np.asarray([0.1, 2.9], np.float32)
    start, stop = arr(h[0].reshape(())), arr(h[1].reshape(()))
    got = xp.linspace(start, stop, 11)
    assert got.device == start.device
    np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), np.linspace(h[0], h[1], 11))
    assert got.dtype == np.float32


@settings(deadline=None)
@given(n=st.integers(1, 300), d=st.one_of(
    st.floats(1e-3, 1e3), st.sampled_from([0.1, 1 / 3, -0.7]),
    st.floats(0.125, 1e3, width=32).map(np.float32)), dtype=st.sampled_from([None, np.float32]))
def test_fft_frequencies_are_numpy_s_bit_for_bit(device, n, d, dtype):
    """NumPy multiplies the integers by ``1.0 / (n * d)``, CuPy divides them by ``n * d``:
    other bits for most ``n`` and ``d``."""
    for name in ("fftfreq", "rfftfreq"):
        ours = getattr(xp.fft, name)
        numpy_s = getattr(np.fft, name)
        _same_or_same_error(
            lambda: ours(n, d=d, dtype=dtype, device=device),
            lambda: numpy_s(n, d).astype(np.float64 if dtype is None else dtype))


def test_fft_frequencies_of_a_0d_array_spacing(device, arr):
    d = np.float32(0.3)
    spacing = arr(np.asarray(d))
    got = xp.fft.fftfreq(10, d=spacing)
    assert got.device == spacing.device
    np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), np.fft.fftfreq(10, d))


@pytest.mark.parametrize("call, error", [
    (lambda d: xp.arange(3, dtype=xp.bool, device=d), TypeError),
    (lambda d: xp.arange(300, 310, dtype=xp.int8, device=d), OverflowError),
    (lambda d: xp.arange(-1e308, 1e308, 1e-300, device=d), ValueError),
    (lambda d: xp.linspace(0, 1, -1, device=d), ValueError),
    (lambda d: xp.linspace(0, 1, 2.0, device=d), TypeError),
])
def test_refused_as_numpy_refuses(device, call, error):
    with pytest.raises(error):
        call(device)
