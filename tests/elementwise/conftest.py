"""Fixtures of the elementwise tests."""

from __future__ import annotations

import pytest

from infini_cupy.elementwise import plan as elementwise_plan
from infini_cupy.runtime import recent


@pytest.fixture
def stage_small(monkeypatch):
    """Stage operands of any size, so small arrays take the paths of large calls (a transposed
    input through the tile, other operands through a staged copy)."""
    monkeypatch.setattr(elementwise_plan, "STAGE_MIN_ELEMENTS", 0)
    recent.forget_all()
    yield
    recent.forget_all()
