"""Fixtures of the namespace tests: Arrays on the suite's device, and back to NumPy."""

from __future__ import annotations

import pytest

import infini_cupy as xp


@pytest.fixture
def arr(to_device):
    """NumPy -> an Array on the suite's device (the emulator, or the GPU)."""
    return lambda h: xp.asarray(to_device(h))


@pytest.fixture(params=["cpu", "suite"])
def on(request, arr):
    """NumPy -> an Array on ``cpu``, then on the suite's device: a test of NumPy's forms and
    methods on both."""
    if request.param == "cpu":
        return lambda h: xp.asarray(h, device="cpu")
    return arr


@pytest.fixture
def host(to_host):
    """An Array (asserted to be one) -> NumPy."""

    def convert(a):
        assert type(a) is xp.Array, type(a)
        return to_host(a)

    return convert
