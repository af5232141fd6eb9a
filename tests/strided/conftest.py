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


@pytest.fixture
def spread_short_rows(monkeypatch):
    """Every pass with short rows the Grouped kernels could spread takes rows 4 apart (the
    planner spreads them only where that removes bank conflicts): every Grouped variant
    within reach of small layouts."""
    from infini_cupy.runtime import recent
    from infini_cupy.strided import tile_banks

    def spread_all(unit, passes, pitch, capacity, rows_of_pitch):
        return (pitch, *(4 if p.can_spread(unit) else 1 for p in passes), *passes)

    monkeypatch.setattr(tile_banks, "spread_layout", spread_all)
    recent.forget_all()
    yield
    recent.forget_all()
