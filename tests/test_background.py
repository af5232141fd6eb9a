"""The order of the session's background runs (tests/support/background.py)."""

from __future__ import annotations

import sys
import types

from tests.support import background


def _module(name: str, first: bool = False):
    module = types.ModuleType(name)
    module.background_runs = lambda config, items: {}
    if first:
        module.background_first = True
    return module


def test_the_thread_takes_the_longest_first_then_the_modules_from_the_last():
    a, b, c, d = _module("a"), _module("b"), _module("c", first=True), _module("d")
    items = [types.SimpleNamespace(module=m) for m in (a, b, c, d, a)]
    found = background.modules_with_runs(items)
    assert list(found) == [a, b, c, d]  # the session reaches them in this order
    assert [m for m, _ in background.in_thread_order(found)] == [c, d, b, a]
    assert [len(selected) for _, selected in background.in_thread_order(found)] == [1, 1, 1, 2]


def test_a_run_the_thread_has_not_reached_runs_in_the_session(tmp_path):
    runs = background.Runs()
    try:
        assert runs.result("key", lambda folder: folder.is_dir()) is True
    finally:
        runs.stop()


def test_a_runs_of_its_own_stopped_leaves_the_sessions_subprocesses_alone(tmp_path):
    # A test's Runs once stopped the session's subprocesses too: the foreign suites that
    # started after it failed with "the session is ending".
    runs = background.Runs()
    runs.stop()
    done = background.run([sys.executable, "-c", "print(6 * 7)"], timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "42"


def test_a_run_gets_the_environment_the_session_began_with(monkeypatch):
    """A test's ``monkeypatch.setenv`` while a run starts on the background thread is not the
    run's: the runs' subprocesses get the environment as the session's runs were queued."""
    monkeypatch.setitem(background._session_environ, "INFINI_CUPY_SEEN", "as the session began")
    monkeypatch.setenv("INFINI_CUPY_SEEN", "a test's own")
    done = background.run([sys.executable, "-c",
                           "import os; print(os.environ['INFINI_CUPY_SEEN'])"], timeout=60)
    assert done.stdout.strip() == "as the session began"
