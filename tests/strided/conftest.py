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
    """Every pass with short rows the Grouped kernels could spread takes rows 4 apart, and
    every other pass that could take several rows per warp step takes the most it may, 2
    apart (the planner groups rows only where that removes bank conflicts): every Grouped
    variant within reach of small layouts, both of its walks."""
    from infini_cupy.runtime import recent
    from infini_cupy.strided import tile_banks

    def spread_all(unit, passes, pitch, capacity, rows_of_pitch, least_pitch=None,
                   row_groups=True):
        chosen = []
        for p in passes:
            groups = [g for g in p.row_groups(unit) if g.fixed_spread == 2] or p.row_groups(unit)
            groups = groups if row_groups else []
            chosen.append((p, 4) if p.can_spread(unit) else (groups[-1], 1) if groups else (p, 1))
        return (pitch, *(s for _, s in chosen), *(q for q, _ in chosen))

    monkeypatch.setattr(tile_banks, "spread_layout", spread_all)
    recent.forget_all()
    yield
    recent.forget_all()
