"""Repeated fused calls that the layout keys serve: the cpu device's calls, computed with
the function's own calls and remembered without their planning (``FusedFunction.
_unfused_calls``, ``_unfused_into``), and calls into an Array mixing Arrays and NumPy
arrays (``_mixed_into``). Each repeat is held against a fresh fused function's first call
(results bit for bit, or the same exception and message) where a cache could go wrong: a
second call with another dtype, shape, layout or device, a NumPy array where an Array was,
an ``out`` overlapping an input, a read-only ``out``, a result the function makes
differently at a later call."""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.runtime.launch import recording

RNG = np.random.default_rng(61)
pytestmark = pytest.mark.filterwarnings("ignore::infini_cupy.FusionWarning")  # both devices


def gelu_ish(a, b):
    return xp.exp(a * b + a) - b


def _data(shape=(6, 8), dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def _bits(a):
    a = np.asarray(a.to_device("cpu") if isinstance(a, xp.Array) else a)
    return a.dtype, a.shape, np.ascontiguousarray(a).tobytes()


def _error(call):
    with pytest.raises(Exception) as info:
        call()
    return type(info.value), str(info.value)


def _cold(function, *args, out=None):
    """A first call: a new fused function, nothing remembered."""
    return xp.fuse(function)(*args, out=out)


def test_cpu_repeats_answer_as_first_calls():
    fused = xp.fuse(gelu_ish)
    for dtype, shape in [(np.float32, (6, 8)), (np.float64, (6, 8)), (np.float32, (3, 5)),
                         (np.float32, (6, 8))]:
        for _ in range(3):  # the first call, then repeats by the remembered key
            a, b = _data(shape, dtype), _data(shape, dtype)
            x, y = xp.asarray(a, device="cpu"), xp.asarray(b, device="cpu")
            for args in [(x, y), (x, b), (a, y), (x, 2.0)]:  # a NumPy array where an Array was
                with recording() as launches:
                    got = fused(*args)
                assert launches == []
                assert type(got) is type(gelu_ish(*args))
                assert _bits(got) == _bits(gelu_ish(*args))
                for out in [xp.empty(shape, dtype=dtype, device="cpu"),
                            xp.asarray(np.empty(shape[::-1], dtype).T, device="cpu"),
                            np.empty(shape, dtype)]:
                    assert fused(*args, out=out) is out
                    assert _bits(out) == _bits(gelu_ish(*args))


def test_cpu_repeats_keep_out_checks():
    fused = xp.fuse(gelu_ish)
    a, b = _data(), _data()
    x, y = xp.asarray(a, device="cpu"), xp.asarray(b, device="cpu")
    z = xp.empty((6, 8), dtype=xp.float32, device="cpu")
    for _ in range(2):
        fused(x, y, out=z)  # remembered for z's layout
    frozen = np.empty((6, 8), np.float32)
    frozen.flags.writeable = False
    read_only = xp.asarray(frozen, device="cpu")
    assert _error(lambda: fused(x, y, out=read_only)) == _error(
        lambda: _cold(gelu_ish, x, y, out=read_only))
    emulated = xp.empty((6, 8), dtype=xp.float32, device="emulator")
    assert _error(lambda: fused(x, y, out=emulated)) == _error(
        lambda: _cold(gelu_ish, x, y, out=emulated))
    # out overlapping an input, in another layout, on a key warmed on separate arrays:
    # computed first, then written (NumPy's answer)
    for _ in range(2):
        other = _data()
        fused(xp.asarray(other[::-1], device="cpu"), xp.asarray(other, device="cpu"),
              out=xp.asarray(np.empty((6, 8), np.float32), device="cpu"))
    buffer = _data()
    expected = gelu_ish(xp.asarray(buffer[::-1].copy(), device="cpu"),
                        xp.asarray(buffer.copy(), device="cpu"))
    whole = xp.asarray(buffer, device="cpu")
    fused(xp.asarray(buffer[::-1], device="cpu"), whole, out=whole)
    assert _bits(whole) == _bits(expected)


def test_cpu_repeats_check_what_the_function_returns_each_call():
    """On the cpu the function runs at every call: a result of another dtype or shape than
    at the first call is written, or refused, as a first call writes or refuses it."""
    made = {"dtype": None, "w": None}

    def varying(a):
        r = a * 2
        if made["w"] is not None:
            r = r * made["w"]
        return r if made["dtype"] is None else xp.astype(r, made["dtype"])

    fused = xp.fuse(varying)
    x = xp.asarray(_data(), device="cpu")
    z = xp.empty((6, 8), dtype=xp.float32, device="cpu")
    for _ in range(2):
        assert _bits(fused(x, out=z)) == _bits(varying(x))
    made["dtype"] = xp.complex64  # complex into float32: refused
    assert _error(lambda: fused(x, out=z)) == _error(lambda: _cold(varying, x, out=z))
    made["dtype"] = xp.float64  # a same_kind cast: written
    fused(x, out=z)
    assert _bits(z) == _bits(xp.astype(varying(x), xp.float32))
    made["dtype"], made["w"] = None, xp.ones((2, 6, 8), dtype=xp.float32, device="cpu")
    assert _error(lambda: fused(x, out=z)) == _error(lambda: _cold(varying, x, out=z))


@pytest.mark.parametrize("layout", ["C", "transposed", "reversed"])
def test_arrays_and_numpy_arrays_into_an_array(layout):
    """Arrays beside NumPy arrays (the Array's device) into an Array, on the emulator: one
    launch per call, the unfused calls' bits, for new data and layouts at each call."""
    fused = xp.fuse(gelu_ish)
    place = {"C": lambda v: v, "transposed": lambda v: v.T.copy().T,
             "reversed": lambda v: v[::-1].copy()[::-1]}[layout]
    z = xp.empty((6, 8), dtype=xp.float32, device="emulator")
    # int32 after float32: the same strides, another dtype
    for dtype in [np.float32, np.float32, np.float32, np.int32, np.int32, np.float64]:
        a, b = _data(), place(_data(dtype=dtype))
        x = xp.asarray(a, device="emulator")
        expected = gelu_ish(x, xp.asarray(b, device="emulator"))
        launched = 1 if expected.dtype == z.dtype else 2  # float64 into z: and a cast
        with recording() as launches:
            assert fused(x, b, out=z) is z
        assert len(launches) == launched
        assert _bits(z) == _bits(xp.astype(expected, xp.float32))
        expected = gelu_ish(xp.asarray(b, device="emulator"), x)
        with recording() as launches:
            assert fused(b, x, out=z) is z  # the NumPy array first
        assert len(launches) == launched
        assert _bits(z) == _bits(xp.astype(expected, xp.float32))


def test_mixed_repeats_keep_out_checks():
    fused = xp.fuse(gelu_ish)
    x = xp.asarray(_data(), device="emulator")
    b = _data()
    z = xp.empty((6, 8), dtype=xp.float32, device="emulator")
    for _ in range(2):
        fused(x, b, out=z)  # remembered for these layouts
    # a NumPy array over z's own memory, reversed: computed first, then written
    shared = np.asarray(z)
    shared[...] = _data()
    view = shared[::-1]
    expected = gelu_ish(x, xp.asarray(view.copy(), device="emulator"))
    fused(x, view, out=z)
    assert _bits(z) == _bits(expected)
    # the very layout of out, read-only: the first call's error
    frozen = np.empty((6, 8), np.float32)
    frozen.flags.writeable = False
    read_only = xp.asarray(frozen, device="emulator")
    assert _error(lambda: fused(x, b, out=read_only)) == _error(
        lambda: _cold(gelu_ish, x, b, out=read_only))
    # an Array of another device among them: the first call's error
    cpu = xp.asarray(_data(), device="cpu")
    assert _error(lambda: fused(cpu, b, out=z)) == _error(lambda: _cold(gelu_ish, cpu, b, out=z))
