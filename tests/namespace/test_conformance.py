"""The official array API conformance suite (data-apis/array-api-tests, the pinned copy in
``../shared/array-api-tests``) against infini_cupy, on Arrays of the emulator and of
``cpu`` (NumPy computes, under the same rules): every test of the suite (it makes its
inputs with ``xp.asarray`` and the creation functions), at the standard's 2025.12
(``infini_cupy`` itself) and at 2024.12 (the namespace
``x.__array_namespace__(api_version="2024.12")`` gives).

Fails on any failure not listed in ``conformance_xfails.txt``, where each entry says why
(a deviation NumPy also has, or a documented choice). Runs the whole suite in a subprocess
(on 2 cores at the default 20 examples per test: about 1.5 to 3.5 minutes on the emulator,
1 to 2 on ``cpu``, per version; set
``INFINI_CUPY_CONFORMANCE_EXAMPLES`` for more), derandomized so that CI sees the same
examples every run. Hypothesis's example database goes to a temporary folder, not the suite's.
The runs start when collection ends and go on beside the rest of the session
(tests/support/background.py). Without the suite (or its plugins) the runs skip, and fail
under ``CI=true`` (tests/support/ci.py).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from tests.support import background
from tests.support.ci import skip_outside_ci

REPO = Path(__file__).resolve().parents[2]
SUITE = REPO.parent / "shared" / "array-api-tests"
XFAILS = Path(__file__).with_name("conformance_xfails.txt")
EXAMPLES = int(os.environ.get("INFINI_CUPY_CONFORMANCE_EXAMPLES", "20"))
VERSIONS = ("2025.12", "2024.12")


def suite_module(version: str) -> str:
    """``ARRAY_API_TESTS_MODULE`` for infini_cupy at ``version``: the package at the latest,
    else the suite's ``exec('...')`` form asking an Array for that version's namespace."""
    if version == VERSIONS[0]:
        return "infini_cupy"
    return ("exec('import infini_cupy; "
            f"xp = infini_cupy.asarray(0).__array_namespace__(api_version=\"{version}\")')")


def read_xfails(path: Path = XFAILS) -> dict[str, str]:
    """``test id -> why`` from ``path``: one ``test_id  # why`` per line; ``#`` lines are comments."""
    entries = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        test_id, _, why = line.partition("#")
        assert why.strip(), f"{path.name}:{number}: {test_id.strip()} needs a reason after '#'"
        entries[test_id.strip()] = why.strip()
    return entries


def test_xfails_file_is_well_formed():
    for test_id in read_xfails():
        assert test_id.startswith("array_api_tests/"), test_id


def run_suite(tmp_path: Path, version: str = VERSIONS[0], *extra: str,
              backend: str = "emulate") -> dict:
    """The suite's JSON report for infini_cupy at ``version``, its Arrays on ``backend``'s
    device (``emulate``: the emulator; ``numpy``: cpu)."""
    report = tmp_path / f"infini_cupy-{version}-{backend}.json"
    base = background.environ()
    env = dict(base, ARRAY_API_TESTS_MODULE=suite_module(version),
               ARRAY_API_TESTS_VERSION=version, INFINI_CUPY_BACKEND=backend,
               HYPOTHESIS_STORAGE_DIRECTORY=str(tmp_path / "hypothesis"),
               PYTHONPATH=os.pathsep.join([str(REPO), base.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "pytest", str(SUITE / "array_api_tests"),
               f"--rootdir={SUITE}", "-p", "no:cacheprovider", "-q", "--tb=line",
               f"--max-examples={EXAMPLES}", "--hypothesis-disable-deadline",
               "--hypothesis-derandomize", "--json-report", f"--json-report-file={report}",
               *extra]
    done = background.run(command, cwd=tmp_path, env=env, timeout=1800)
    if not report.exists():  # the suite did not even start: show why
        raise AssertionError(f"the conformance suite did not run:\n{done.stdout[-3000:]}\n"
                             f"{done.stderr[-3000:]}")
    return json.loads(report.read_text())


def failures(report: dict) -> dict[str, str]:
    """``test id -> first line of the error`` for every failed test of a report."""
    failed = {}
    for test in report["tests"]:
        if test["outcome"] in ("failed", "error"):
            stage = next((test[s] for s in ("call", "setup", "teardown")
                          if test.get(s, {}).get("outcome") == "failed"), {})
            message = stage.get("crash", {}).get("message", "") or stage.get("longrepr", "")
            failed[test["nodeid"]] = message.strip().splitlines()[0] if message.strip() else "?"
    return failed


def _missing() -> str | None:
    """Why the suite cannot run here, or None."""
    if not SUITE.exists():
        return f"the pinned conformance suite is not beside the repository ({SUITE})"
    for plugin, package in (("pytest_jsonreport", "pytest-json-report"), ("ndindex", "ndindex")):
        if importlib.util.find_spec(plugin) is None:
            return f"the conformance suite needs {package} (pip install -e '.[test]')"
    return None


def _backend(device: str) -> str:
    return "emulate" if device == "emulator" else "numpy"


def background_runs(config, items):
    """Each selected (version, device) run starts when collection ends, beside the rest of
    the session (tests/support/background.py)."""
    if _missing() is not None or config.getoption("--backend") != "emulate":
        return {}
    runs = {}
    for item in items:
        params = getattr(item, "callspec", None)
        if item.originalname == "test_conformance_suite" and params is not None:
            version, backend = params.params["version"], _backend(params.params["device"])
            runs[("conformance", version, backend)] = functools.partial(
                run_suite, version=version, backend=backend)
    return runs


@pytest.fixture(scope="module")
def suite_runner(pytestconfig):
    """``version, backend -> report``, each run made once per session."""
    missing = _missing()
    if missing is not None:  # CI fails: its checkout has the suite beside the repository
        skip_outside_ci(missing)

    def report(version, backend="emulate"):
        return background.result(pytestconfig, ("conformance", version, backend),
                                 functools.partial(run_suite, version=version, backend=backend))

    return report


def test_earlier_version_is_importable_by_the_suite():
    """The 2024.12 module string is what the suite execs: it gives that version's namespace."""
    namespace = {}
    exec(suite_module("2024.12")[6:-2], namespace)  # noqa: S102 - our own string
    assert namespace["xp"].__array_api_version__ == "2024.12"


@pytest.mark.parametrize("device", ("emulator", "cpu"))
@pytest.mark.parametrize("version", VERSIONS)
def test_conformance_suite(request, backend_name, version, device):
    """The whole suite on Arrays of the emulator (our kernels) and of ``cpu`` (NumPy
    computes, under the same rules and the standard's special cases)."""
    if backend_name != "emulate":
        pytest.skip("the conformance run is the emulator's and cpu's (the suite makes its "
                    "own arrays)")
    suite_report = request.getfixturevalue("suite_runner")(version, _backend(device))  # minutes
    summary = suite_report["summary"]
    assert summary.get("passed", 0) > 1000, summary  # the whole suite ran
    expected = read_xfails()
    unexpected = {t: m for t, m in failures(suite_report).items() if t not in expected}
    assert not unexpected, (
        f"{len(unexpected)} conformance failures not in {XFAILS.name}:\n"
        + "\n".join(f"  {t}\n      {m}" for t, m in sorted(unexpected.items())))
