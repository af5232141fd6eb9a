"""Fixtures of the strided tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def stack_small_copies(monkeypatch):
    """Stacking for copies of any size (it normally waits for grids of thousands of tiles)."""
    from infini_cupy.runtime import recent
    from infini_cupy.strided import tile_planner

    monkeypatch.setattr(tile_planner, "STACK_MIN_BLOCKS", 1)
    recent.forget_all()
    yield
    recent.forget_all()
