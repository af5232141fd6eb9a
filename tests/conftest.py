"""Test configuration: which backend the suite runs on, and the GPU marker.

By default every test runs in emulation (NumPy arrays, kernels compiled by g++). On a machine
with a GPU, ``pytest --backend cuda`` re-runs the same tests with CuPy arrays and NVRTC-
compiled kernels: the GPU test matrix. Tests marked ``gpu`` run only when CuPy sees a device.
"""

from __future__ import annotations

import numpy as np
import pytest

from infini_cupy import backends


def pytest_addoption(parser):
    parser.addoption(
        "--backend",
        default="emulate",
        choices=("emulate", "cuda"),
        help="launcher for kernel tests: emulate (CPU, default) or cuda (needs a GPU)",
    )


def pytest_configure(config):
    if config.getoption("--backend") == "cuda" and not backends.gpu_available():
        raise pytest.UsageError("--backend cuda needs CuPy and a CUDA device; none was found")


def pytest_collection_modifyitems(config, items):
    if backends.gpu_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device (CuPy found none)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def backend_name(pytestconfig) -> str:
    return pytestconfig.getoption("--backend")


@pytest.fixture(autouse=True)
def _run_on_backend(backend_name):
    """Every test body runs with the suite's backend in force (and nothing leaks out)."""
    with backends.backend(backend_name):
        yield


@pytest.fixture
def to_device(backend_name):
    """Move a NumPy array to the suite's device (identity in emulation)."""
    if backend_name == "cuda":
        import cupy

        return cupy.asarray
    return lambda a: a


@pytest.fixture
def to_host():
    """Bring an array back as NumPy, whatever device it is on."""

    def convert(a):
        if backends.is_cupy_array(a):
            return a.get()
        return np.asarray(a)

    return convert
