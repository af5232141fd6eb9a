"""The order of the session's background runs (tests/support/background.py)."""

from __future__ import annotations

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
