"""numpy_groupies (group-indexed aggregation, written for NumPy arrays) given Arrays of the
``cpu`` device and of the suite's device: the methods it calls on them (``ravel``, ``min``,
``max``, ``nonzero``, ``compress``, ``astype``) are NumPy's, so its answers are NumPy's."""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import config

npg = pytest.importorskip("numpy_groupies")
rng = np.random.default_rng(32)


@pytest.mark.parametrize("func", ["sum", "mean", "std", "max", "argmax", "nansum", "cumsum",
                                  "first", "len", "any", "sort"])
@pytest.mark.parametrize("device", ["cpu", "suite"])
def test_aggregate_on_arrays_as_on_numpy(arr, to_host, backend_name, device, func):
    if device == "suite" and backend_name == "cuda":
        pytest.skip("numpy_groupies allocates its results with NumPy: CPU Arrays only")
    group_idx = rng.integers(0, 5, size=40)
    values = rng.standard_normal(40)
    values[::7] = np.nan if func.startswith("nan") else values[::7]
    make = (lambda h: xp.asarray(h, device="cpu")) if device == "cpu" else arr
    with config.backend("numpy" if device == "cpu" else backend_name):
        got = npg.aggregate(make(group_idx), make(values), func=func)
    expected = npg.aggregate(group_idx, values, func=func)
    got = to_host(got) if type(got) is xp.Array else got  # numpy_groupies' own np.full, else ours
    np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)
