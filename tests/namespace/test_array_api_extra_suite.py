"""array-api-extra's own tests (``array_api_extra.tests``, shipped in its wheel) on Arrays: its
``array_api_strict`` backend replaced by the stand-in (``tests/support/strict_standin``), its
second device by our other CPU device (``array_api_extra_backend``), warnings as errors as in
its own configuration; once on emulator Arrays, once on cpu Arrays. So every function of
array-api-extra (``at``, ``pad``, ``cov``, ``isclose``, ``nunique``, ``setdiff1d``, the
lazy-function helpers, ...) runs on both devices against array-api-extra's expected values. Fails on any failure not in ``KNOWN``, and on an
entry of ``KNOWN`` that passes now.
"""

from __future__ import annotations

import functools
import importlib.util
import re

import pytest

from tests.support import background
from tests.support.ci import skip_outside_ci
from tests.support.foreign_suites import check_known, failed_tests, run_on_arrays

# test name (parameters dropped) -> why it fails on Arrays through the stand-in
KNOWN = {
    # array_api_strict refuses int[...] = 1.1; Arrays store it truncated, as NumPy and CuPy do
    # (the standard leaves a float scalar into an integer array unspecified)
    "test_incompatible_dtype": "a float scalar stored into an integer Array truncates",
    # array_api_strict has no __array_ufunc__; Arrays take NumPy ufuncs as CuPy arrays do
    "test_lazy_xp_function_cython_ufuncs": "scipy.special's ufuncs return Arrays",
}


def _run(device: str, folder=None):
    return run_on_arrays(["-k", "array_api_strict and not strictest", "-W", "error", "-rfE",
                          "--tb=line", "--pyargs", "array_api_extra.tests.main"],
                         ("array_api_extra_backend",), device=device)


def background_runs(config, items):
    """Each selected device's run starts when collection ends, beside the rest of the
    session (tests/support/background.py)."""
    if (config.getoption("--backend") != "emulate"
            or importlib.util.find_spec("array_api_extra.tests") is None):
        return {}
    devices = {item.callspec.params["device"] for item in items if hasattr(item, "callspec")}
    return {("array-api-extra", device): functools.partial(_run, device) for device in devices}


@pytest.mark.parametrize("device", ["emulator", "cpu"])
def test_array_api_extra_tests_on_arrays(device, backend_name, pytestconfig):
    if importlib.util.find_spec("array_api_extra.tests") is None:
        skip_outside_ci("array-api-extra's tests are not installed (pip install -e '.[test]')")
    if backend_name != "emulate":
        pytest.skip("runs on emulator and cpu Arrays")
    done = background.result(pytestconfig, ("array-api-extra", device),
                             functools.partial(_run, device))
    assert re.search(r"\b(\d{4,}) passed", done.stdout), done.stdout[-3000:]
    check_known(failed_tests(done), KNOWN)
