"""The short paths' memo: call signatures already validated and planned, mapped to what a
repeat of the call needs to launch at once (the strided copy's and the elementwise engine's).

A plain ``dict`` subclass, so a lookup stays one C call; bounded by clearing when full (a
program cycling through more signatures than the limit loses only the short path).
"""

from __future__ import annotations

import contextlib
import weakref

# What forget_all() empties besides the live memos (_memos below): the planners' lru_caches.
_clear_functions: list = []


def register_cache(clear) -> None:
    """Have :func:`forget_all` call ``clear()`` (a planner's ``lru_cache.cache_clear``)."""
    _clear_functions.append(clear)


# Every live RecentCalls, held weakly, so that a memo goes with what holds it (seven per
# xp.fuse object: a fused function made inside a function is made at every call). Keyed by
# id, as a dict subclass is unhashable; each entry removed when its memo goes.
_memos: dict = {}


class RecentCalls(dict):
    """``signature -> prepared call``, at most ``limit`` entries."""

    def __init__(self, limit: int = 4096):
        super().__init__()
        self.limit = limit
        key = id(self)
        _memos[key] = weakref.ref(self, lambda _, key=key: _memos.pop(key, None))

    def remember(self, key, value) -> None:
        if len(self) >= self.limit:
            self.clear()
        self[key] = value


def forget_all() -> None:
    """Forget every planned call and layout (tests and tools that change planning)."""
    for clear in _clear_functions:
        clear()
    for ref in list(_memos.values()):
        memo = ref()
        if memo is not None:
            memo.clear()


@contextlib.contextmanager
def planning_switched(setting: list, value):
    """``setting[0] = value`` inside the ``with`` block (a planner's one-element switch),
    every planned call forgotten on the way in and out: no plan made under one value is
    reused under the other."""
    previous, setting[0] = setting[0], value
    forget_all()
    try:
        yield
    finally:
        setting[0] = previous
        forget_all()
