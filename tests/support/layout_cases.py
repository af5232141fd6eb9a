"""Shared by the data movement tests: random inputs in every layout, made on the suite's device
together with a NumPy twin of the same layout (the oracle's input), and launch counters.

Fixtures defined here are imported by the test modules that use them.
"""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import arrays
from infini_cupy.runtime.launch import LAUNCHERS
from tests.support import dtype_cases

DTYPES = dtype_cases.EACH_SIZE
LAYOUTS = ("contiguous", "transposed", "sliced", "reversed", "broadcast")


def values(rng, shape, dtype, nonnegative=False):
    """Random values exact in every dtype here: small integers, floats in quarters."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    low = 0 if nonnegative or dtype.kind == "u" else -100
    if dtype.kind in "iu":
        return rng.integers(low, 101, size=shape).astype(dtype)
    real = rng.integers(4 * low, 401, size=shape) / 4
    if dtype.kind == "c":
        real = real + 1j * rng.integers(-400, 401, size=shape) / 4
    return np.asarray(real).astype(dtype)  # arithmetic on 0-d arrays gives scalars


def make(rng, shape, dtype, layout, to_device, nonnegative=False):
    """``(x on the suite's device, the same layout in NumPy)``."""
    shape = tuple(shape)
    if not shape or layout == "contiguous":
        base = values(rng, shape, dtype, nonnegative)
        return to_device(base), base
    if layout == "transposed":
        base = values(rng, shape[::-1], dtype, nonnegative)
        return to_device(base).T, base.T
    if layout == "broadcast":
        small = tuple(1 if d % 2 == 0 else n for d, n in enumerate(shape))
        base = values(rng, small, dtype, nonnegative)
        return xp.broadcast_to(to_device(base), shape), np.broadcast_to(base, shape)
    if layout == "sliced":
        base = values(rng, tuple(2 * n + 1 for n in shape), dtype, nonnegative)
        index = tuple(slice(1, 1 + 2 * n, 2) for n in shape)
    else:  # reversed: negative strides
        base = values(rng, shape, dtype, nonnegative)
        index = tuple(slice(None, None, -1) for _ in shape)
    return to_device(base)[index], base[index]


def random_shape(rng, ndim=None, max_len=5):
    ndim = int(rng.integers(0, 5)) if ndim is None else ndim
    shape = rng.integers(1, max_len + 1, size=ndim)
    if ndim and rng.random() < 0.15:
        shape[rng.integers(0, ndim)] = 0  # zero-size now and then
    return tuple(int(n) for n in shape)


def cases(seed, n, ndim=None, dtypes=DTYPES, layouts=LAYOUTS):
    """``n`` random (shape, dtype, layout) triples."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield (random_shape(rng, ndim), str(rng.choice(dtypes)), str(rng.choice(layouts)), rng)


def shares(a, b) -> bool:
    """Whether ``a`` and ``b`` have a byte in common. CuPy arrays: counted here from their
    addresses and strides; ``cupy.shares_memory`` (14.2) takes element addresses in a kernel,
    which fails on 0-d complex arrays and gets other 0-d arrays wrong."""
    if arrays.is_cupy_array(a) or arrays.is_cupy_array(b):
        if not (arrays.is_cupy_array(a) and arrays.is_cupy_array(b)):
            return False  # host and device memory
        return np.intersect1d(_bytes(a), _bytes(b)).size > 0
    return bool(np.shares_memory(a, b))


def _bytes(a) -> np.ndarray:
    """The addresses of every byte of ``a``'s elements."""
    offsets = np.zeros(a.shape, np.int64)
    for axis, (n, stride) in enumerate(zip(a.shape, a.strides)):
        offsets = offsets + (np.arange(n, dtype=np.int64) * stride).reshape(
            (n,) + (1,) * (a.ndim - axis - 1))
    starts = arrays.data_pointer(a) + offsets.ravel()
    return (starts[:, None] + np.arange(a.itemsize)).ravel()


def viewable(h, shape) -> bool:
    """NumPy's answer: can ``h`` be reshaped to ``shape`` without a copy?"""
    try:
        np.reshape(h, shape, copy=False)
    except ValueError:
        return False
    return True


@pytest.fixture
def same(to_host):
    def check(got, expected):
        assert hasattr(got, "shape") and not isinstance(got, np.generic), type(got)  # arrays, not scalars
        got = to_host(got)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)

    return check


class _Counting:
    """A launcher that records the names of the kernels of ``sources`` it launches."""

    def __init__(self, inner, sources, calls):
        self.inner, self.sources, self.calls = inner, sources, calls

    def launch(self, source, name, *args, **kwargs):
        if source in self.sources:
            self.calls.append(name)
        return self.inner.launch(source, name, *args, **kwargs)

    def prepare(self, source, names):
        return self.inner.prepare(source, names)


def _counter(monkeypatch, sources):
    calls = []
    for backend, launcher in list(LAUNCHERS.items()):
        monkeypatch.setitem(LAUNCHERS, backend, _Counting(launcher, sources, calls))
    return calls


@pytest.fixture
def launches(monkeypatch):
    """Names of the rearrange kernels launched (``clear()`` between cases)."""
    return _counter(monkeypatch, {"rearrange.cu", "transpose.cu", "packed.cu"})


@pytest.fixture
def cast_launches(monkeypatch):
    """Names of the elementwise kernels launched (the cast kernel, for astype)."""
    return _counter(monkeypatch, {"elementwise.cu"})



