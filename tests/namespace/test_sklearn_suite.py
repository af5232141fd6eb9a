"""scikit-learn's own array-API tests (every estimator's ``check_array_api_input``, the
metrics, the preprocessing, ``utils``) on Arrays: its ``array_api_strict`` parametrization
replaced by the stand-in (``tests/support/strict_standin``), the devices it names
(``"CPU_DEVICE"``, ``"device1"``) by our ``cpu`` and ``emulator`` (``sklearn_devices``), so
every estimator scikit-learn supports in array-API mode is fitted on both devices and compared
with its fit on NumPy. Fails on any failure not in ``KNOWN``, and on an entry of ``KNOWN`` that
passes now. About a minute on 2 cores (the emulator's kernels built cold).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from tests.support import background
from tests.support.ci import skip_outside_ci
from tests.support.foreign_suites import check_known, failed_tests, run_on_arrays

# test name (parameters dropped) -> why it fails on Arrays through the stand-in
KNOWN = {
    # the stand-in's namespace is infini_cupy, not the module named array_api_strict
    "test_convert_estimator_to_array_api_strict": "the namespace is infini_cupy",
    "test_custom_conversion_estimator_to_array_api_strict": "the namespace is infini_cupy",
    # array_api_strict has no float16; infini_cupy has it, as NumPy and CuPy
    "test_supported_float_types": "float16 is one of our floating dtypes",
}


def _test_modules() -> list[str]:
    """scikit-learn's test modules that parametrize over array namespaces, as module names,
    and its common estimator tests."""
    import sklearn

    root = Path(sklearn.__file__).parent
    found = sorted(
        ".".join(path.relative_to(root.parent).with_suffix("").parts)
        for path in root.rglob("test_*.py")
        if re.search(r"yield_namespace|_array_api_for_tests|array_api_strict",
                     path.read_text(errors="ignore")))
    return [*found, "sklearn.tests.test_common"]


def _run(folder=None):
    return run_on_arrays(["-k", "array_api_strict", "-rfE", "--tb=line", "--pyargs",
                          *_test_modules()], ("sklearn_devices",), timeout=1200,
                         env={"SCIPY_ARRAY_API": "1"})


def _runs_here(config) -> bool:
    return (config.getoption("--backend") == "emulate"
            and importlib.util.find_spec("sklearn") is not None)


def background_runs(config, items):
    """The run starts when collection ends, beside the rest of the session
    (tests/support/background.py)."""
    return {"sklearn": _run} if _runs_here(config) else {}


def test_sklearn_array_api_tests_on_arrays(backend_name, pytestconfig):
    if importlib.util.find_spec("sklearn") is None:
        skip_outside_ci("scikit-learn is not installed (pip install -e '.[test]')")
    if backend_name != "emulate":
        pytest.skip("runs on emulator Arrays")
    done = background.result(pytestconfig, "sklearn", _run)
    assert re.search(r"\b(\d{3,}) passed", done.stdout), done.stdout[-3000:]
    check_known(failed_tests(done), KNOWN)
