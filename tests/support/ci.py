"""CI runs what a missing tool skips elsewhere. Under ``CI=true`` (``.ci/run`` sets it, as CI
services do) a test that cannot run for want of something the test extra or the checkout
provides (NVRTC, nvdisasm, the pinned conformance suite) fails, saying what is missing,
where a developer's machine skips it."""

from __future__ import annotations

import os

import pytest


def in_ci() -> bool:
    """Whether ``$CI`` is ``true`` (or ``1``)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1")


def skip_outside_ci(reason: str):
    """Skip the test with ``reason``; in CI fail it with ``reason``: CI installs what it needs."""
    if in_ci():
        pytest.fail(f"{reason}; under CI=true this fails instead of skipping: CI provides "
                    "it (pip install -e '.[test]', ../shared beside the checkout)", pytrace=False)
    pytest.skip(reason)
