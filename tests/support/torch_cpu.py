"""PyTorch (its CPU build, pinned in the test extra) for the DLPack interop tests."""

from __future__ import annotations

import pytest

from tests.support.ci import skip_outside_ci


def import_torch():
    """The ``torch`` module; the test skips where it is not installed (fails under CI=true,
    whose test extra installs it) and in the ``--backend cuda-standin`` run, where torch's
    ``torch.cuda`` refuses the stand-in's ``cuda.bindings.driver`` ("CUstream size
    changed") as it imports."""
    try:
        import torch
    except ImportError:
        skip_outside_ci("torch is not installed (the test extra pins its CPU build)")
    except ValueError as e:
        pytest.skip(f"torch does not import beside the stand-in's cuda.bindings.driver: {e}")
    return torch
