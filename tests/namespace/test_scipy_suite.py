"""SciPy's own array-API tests (optimize, integrate, special) on emulator Arrays: SciPy's
``array_api_strict`` backend replaced by the stand-in (``tests/support/strict_standin``),
its markers naming array_api_strict dropped (``scipy_unskip``), so every test SciPy runs on
a non-NumPy backend runs on Arrays. Fails on any failure not in ``KNOWN``, and on an entry of
``KNOWN`` that passes now.

The whole run takes several minutes on 2 cores: marked slow (``pytest -m slow`` or
``--run-slow``). The default tier runs ``QUICK`` (seconds): the tests ``KNOWN`` names and a
few that pass, through the same known-failure check.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from pathlib import Path

import pytest

from tests.support import background
from tests.support.ci import skip_outside_ci
from tests.support.foreign_suites import check_known, failed_tests, run_on_arrays

MODULES = ["optimize", "integrate", "special"]

# test name (parameters dropped) -> why it fails on Arrays and passes on NumPy
KNOWN = {
    # ``x[key] = float64 value`` into a float32 x: NumPy casts; the 2025.12 standard's setitem
    # rule (the value promotes to x's dtype) refuses it, on every device
    "TestTanhSinh::test_dtype": "x[key] = float64 value into float32 x (2025.12 setitem rule)",
    "TestNSum::test_dtype": "x[key] = float64 value into float32 x (2025.12 setitem rule)",
    # SciPy's ``devices`` fixture: ``info.devices() + [None]``; 2025.12 says devices() is a tuple
    "TestLogSumExp::test_device": "devices() is a tuple (2025.12)",
}
# The default tier's run: every test KNOWN names and a few beside them that pass
QUICK = [
    "scipy.integrate.tests.test_tanhsinh::TestTanhSinh::test_dtype",
    "scipy.integrate.tests.test_tanhsinh::TestNSum::test_dtype",
    "scipy.special.tests.test_logsumexp::TestLogSumExp::test_device",
    "scipy.special.tests.test_logsumexp::TestLogSumExp::test_dtypes_a",
    "scipy.special.tests.test_logsumexp::TestLogSumExp::test_dtypes_ab",
    "scipy.optimize.tests.test_chandrupatla::TestChandrupatlaMinimize::test_dtype",
]


def _test_files() -> list[str]:
    """SciPy's test modules of MODULES that take the ``xp`` fixture, as module names."""
    import scipy

    root = Path(scipy.__file__).parent
    found = []
    for module in MODULES:
        for path in sorted((root / module / "tests").glob("test_*.py")):
            if re.search(r"\bxp\b", path.read_text(errors="ignore")):
                found.append(f"scipy.{module}.tests.{path.stem}")
    return found


def run_scipy_on_arrays(targets: list[str], lazy: bool = False, folder=None) -> list[str]:
    """Run SciPy's array-API tests ``targets`` (``--pyargs`` names) on emulator Arrays
    (``lazy``: inside ``xp.lazy()`` throughout, by its switch); the ids of those that fail."""
    done = run_on_arrays(["-m", "array_api_backends", "-rfE", "--tb=no", "--pyargs", *targets],
                         ("scipy_unskip",), timeout=3000,
                         env={"SCIPY_ARRAY_API": '["array_api_strict"]',
                              "INFINI_CUPY_LAZY": "1" if lazy else "0"})
    return failed_tests(done)


@pytest.fixture
def scipy_on_emulator(backend_name):
    """Skip unless SciPy is installed (fail in CI: the test extra installs it) and the
    session's backend is the emulator."""
    if importlib.util.find_spec("scipy") is None:
        skip_outside_ci("SciPy is not installed (pip install -e '.[test]')")
    if backend_name != "emulate":
        pytest.skip("runs on emulator Arrays")


def test_the_quick_run_holds_every_known_failure():
    for known in KNOWN:
        assert any(target.endswith(f"::{known}") for target in QUICK), known


def background_runs(config, items):
    """The quick runs selected start when collection ends, beside the rest of the session
    (tests/support/background.py)."""
    if config.getoption("--backend") != "emulate" or importlib.util.find_spec("scipy") is None:
        return {}
    modes = {item.callspec.params["lazy"] for item in items
             if item.originalname == "test_scipy_known_failures_on_emulator_arrays"}
    return {("scipy", lazy): functools.partial(run_scipy_on_arrays, QUICK, lazy)
            for lazy in modes}


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_scipy_known_failures_on_emulator_arrays(scipy_on_emulator, lazy, pytestconfig):
    check_known(background.result(pytestconfig, ("scipy", lazy),
                                  functools.partial(run_scipy_on_arrays, QUICK, lazy)), KNOWN)


@pytest.mark.slow
def test_scipy_array_api_tests_on_emulator_arrays(scipy_on_emulator):
    check_known(run_scipy_on_arrays(_test_files()), KNOWN)
