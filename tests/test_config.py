"""``config.get_backend``: the ``backend()`` override, else ``$INFINI_CUPY_BACKEND`` as
``os.environ`` holds it at this call, else ``numpy``."""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import config
from infini_cupy.runtime.launch import recording


@pytest.fixture
def no_override():
    """No ``backend()`` in force (the suite's conftest sets one)."""
    token = config._override.set(None)
    yield
    config._override.reset(token)


def test_the_variable_is_read_at_each_call(monkeypatch, no_override):
    monkeypatch.delenv(config.BACKEND_VAR, raising=False)
    assert config.get_backend() == "numpy"
    monkeypatch.setenv(config.BACKEND_VAR, " emulate ")
    assert config.get_backend() == "emulate"
    with recording() as records:  # NumPy arrays now run through the kernels
        r = xp.add(np.arange(3.0), 1.0)
    assert [k.backend for k in records] == ["emulate"] and r.tolist() == [1.0, 2.0, 3.0]
    with config.backend("numpy"):  # the override wins
        assert config.get_backend() == "numpy"
    monkeypatch.setenv(config.BACKEND_VAR, "")
    assert config.get_backend() == "numpy"
    monkeypatch.setenv(config.BACKEND_VAR, "gpu")
    with pytest.raises(ValueError, match=r"INFINI_CUPY_BACKEND='gpu' is not a backend; "
                                         "expected one of cuda, emulate, numpy"):
        config.get_backend()
    monkeypatch.delenv(config.BACKEND_VAR)
    assert config.get_backend() == "numpy"
