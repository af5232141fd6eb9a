"""Fixtures of the tools' tests."""

from __future__ import annotations

import pytest

from infini_cupy.tools import cubin


@pytest.fixture(scope="module")
def sass_tools():
    """Skip unless NVRTC and nvdisasm are at hand (the test extra installs both)."""
    try:
        cubin.nvdisasm()
        from infini_cupy.runtime.nvrtc import load_nvrtc

        load_nvrtc()
    except RuntimeError as e:  # pragma: no cover - the test extra installs both
        pytest.skip(str(e))
