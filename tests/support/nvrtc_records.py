"""Figures recorded from one NVRTC's code (``kernel_costs.json``, ``model_baseline.json``)
compared with the code of the NVRTC at hand: only the same version's."""

from __future__ import annotations

import pytest


def skip_unless_recorded_by_this_nvrtc(recorded: str, what: str) -> None:
    """Skip a comparison with figures read from the code of NVRTC ``recorded`` when another
    NVRTC compiles here: its code differs by more than the figures' tolerance."""
    from infini_cupy.runtime.nvrtc import nvrtc_version

    here = ".".join(map(str, nvrtc_version()))
    if here != recorded:
        pytest.skip(f"{what} was recorded from NVRTC {recorded}'s code; this is NVRTC {here}")


def skip_without_nvdisasm() -> None:
    """Skip where nvdisasm is missing: the figures compared are read from SASS."""
    from infini_cupy.readers import sass

    try:
        sass.nvdisasm()
    except RuntimeError as e:  # pragma: no cover - the test extra installs it
        pytest.skip(str(e))
