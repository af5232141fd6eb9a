"""Test configuration: which backend the suite runs on, and the GPU marker.

By default every test runs in emulation (NumPy arrays, kernels compiled by g++). On a machine
with a GPU, ``pytest --backend cuda`` re-runs the same tests with CuPy arrays and NVRTC-
compiled kernels: the GPU test matrix. Tests marked ``gpu`` run only when CuPy sees a device.
Without a GPU, ``pytest --backend cuda-standin`` runs the suite on the ``cuda`` backend against
a strict stand-in for CuPy (``tests/support/cupy_standin.py``, installed as ``cupy``): device
arrays over host memory from its pool, every launch through the cuda launcher
(``runtime/cuda.py``), run in the emulator. ``--backend cuda-standin-launches`` keeps the
emulated suite's NumPy arrays and sends only its launches through the cuda launcher.

Tests marked ``slow`` (the long property runs) are deselected unless asked for:
``pytest -m slow`` runs only them, ``pytest --run-slow`` runs everything; either loads the
``long`` hypothesis profile (``INFINI_CUPY_LONG_EXAMPLES`` examples per test, 2000 by default).
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import infini_cupy
from infini_cupy import arrays, config
from tests.support import background, device, nvrtc_programs

# Hypothesis profiles. "ci" (the default): each test's own example count. "long": the long
# property runs (tests marked slow, tests/test_properties_long.py), many examples each.
# HYPOTHESIS_PROFILE=<name> or hypothesis's --hypothesis-profile=<name> picks one; a run that
# selects the slow tests (-m slow, --run-slow) gets "long" unless told otherwise.
LONG_EXAMPLES = int(os.environ.get("INFINI_CUPY_LONG_EXAMPLES", "2000"))
settings.register_profile("ci", deadline=None)
settings.register_profile(
    "long",
    max_examples=LONG_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    print_blob=True,  # a failure prints the line that reproduces it
)


# The stand-in for array_api_strict is a plugin of subprocesses (test_xarray, test_scipy_suite):
# imported for doctests here, it would shadow the real package in this process.
collect_ignore = ["support/strict_standin"]


# The stand-in for CuPy: the cuda backend end to end (its arrays are the stand-in's), or the
# emulated suite's launches only.
STANDIN_BACKENDS = ("cuda-standin", "cuda-standin-launches")


def pytest_addoption(parser):
    parser.addoption(
        "--backend",
        default="emulate",
        choices=("emulate", "cuda", *STANDIN_BACKENDS),
        help="launcher for kernel tests: emulate (CPU, default), cuda (needs a GPU), "
        "cuda-standin (the cuda backend against a stand-in for CuPy: "
        "tests/support/cupy_standin.py), or cuda-standin-launches (the emulated suite, "
        "every launch through the cuda launcher and the stand-in)",
    )
    parser.addoption(
        "--run-slow",
        action="store_true",
        default=False,
        help="also run the long property tests (marked slow, deselected by default); "
        "-m slow runs only them",
    )


def _slow_selected(config) -> bool:
    """True for --run-slow, or a -m expression that selects tests marked slow and not those
    without a mark (-m slow, not -m "not gpu")."""
    if config.getoption("--run-slow"):
        return True
    markexpr = config.getoption("markexpr", "") or ""
    if not markexpr:
        return False
    try:
        from _pytest.mark.expression import Expression

        expression = Expression.compile(markexpr)
        return bool(expression.evaluate(lambda name, **_: name == "slow")
                    and not expression.evaluate(lambda name, **_: False))
    except Exception:  # pragma: no cover - another pytest's private API
        return "slow" in markexpr and "not slow" not in markexpr


def pytest_report_header(config):
    """The versions installed, at the top of every run (CI installs the newest releases: a
    run turned red by a new release shows as one at a glance)."""
    from importlib import metadata

    found = sorted({(d.metadata["Name"] or "?").lower(): d.version
                    for d in metadata.distributions()}.items())
    listed = ", ".join(f"{name}=={version}" for name, version in found)
    return [f"installed ({len(found)}): {listed}"]


def pytest_configure(config):
    if config.getoption("--backend") == "cuda" and not arrays.gpu_available():
        raise pytest.UsageError("--backend cuda needs CuPy and a CUDA device; none was found")
    if config.getoption("--backend") in STANDIN_BACKENDS:
        from infini_cupy.runtime import launch
        from tests.support import cupy_standin

        config._standin = contextlib.ExitStack()
        if config.getoption("--backend") == "cuda-standin":
            config._standin.enter_context(cupy_standin.as_gpu_machine())
        else:
            config._standin.enter_context(
                cupy_standin.installed(capabilities=(cupy_standin.NEWER_THAN_NVRTC,)))
            config._standin.enter_context(
                launch.launcher_replaced("emulate", cupy_standin.ThroughCudaLauncher()))
    if config.getoption("--hypothesis-profile", None) is None:  # else hypothesis loads it
        default = "long" if _slow_selected(config) else "ci"
        settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "").strip() or default)


def pytest_unconfigure(config):
    background.stop(config)
    if hasattr(config, "_standin"):
        config._standin.close()


def pytest_collection_modifyitems(config, items):
    items[:] = background.last(items)  # their runs go on beside the rest meanwhile
    if not _slow_selected(config):  # the long runs: only when asked for
        slow = [item for item in items if item.get_closest_marker("slow") is not None]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if item.get_closest_marker("slow") is None]
    if config.getoption("--backend") in STANDIN_BACKENDS:
        skip = pytest.mark.skip(reason="needs a CUDA device (the CuPy stand-in has none)")
    elif arrays.gpu_available():
        return
    else:
        skip = pytest.mark.skip(reason="needs a CUDA device (CuPy found none)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def pytest_collection_finish(session):
    background.start(session.config, session.items)
    nvrtc_programs.start_for(session.config, session.items)


@pytest.fixture(scope="session")
def backend_name(pytestconfig) -> str:
    """The backend the tests run on: ``cuda`` for cuda-standin (the stand-in's arrays),
    ``emulate`` for cuda-standin-launches (NumPy arrays, plans and results of the emulator;
    only the launches take the cuda launcher's path)."""
    name = pytestconfig.getoption("--backend")
    return {"cuda-standin": "cuda", "cuda-standin-launches": "emulate"}.get(name, name)


@pytest.fixture(autouse=True)
def _run_on_backend(backend_name):
    """Every test body runs with the suite's backend in force (and nothing leaks out)."""
    with config.backend(backend_name):
        yield


@pytest.fixture
def to_device(backend_name):
    """Move a NumPy array to the suite's device (identity in emulation). On a GPU the copy
    keeps the shape, strides and address modulo 256 (tests/support/device.py): a transposed,
    offset or broadcast input stays one, and takes the kernel variant it takes in emulation."""
    if backend_name == "cuda":
        return device.same_layout_on_gpu
    return lambda a: a


@pytest.fixture
def to_host():
    """Bring an array (or an infini_cupy.Array) back as NumPy, whatever device it is on."""

    def convert(a):
        if isinstance(a, infini_cupy.Array):
            a = a.to_device("cpu")  # GPU Arrays refuse a silent copy to NumPy
        if arrays.is_cupy_array(a):
            return a.get()
        return np.asarray(a)

    return convert


@pytest.fixture(scope="module")
def sass_tools():
    """Skip unless NVRTC and nvdisasm are at hand (the test extra installs both; CI fails)."""
    from tests.support.nvrtc_records import skip_without_nvdisasm

    skip_without_nvdisasm()
