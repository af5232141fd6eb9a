"""infini_cupy/perf/distinct.py gives ``np.unique``'s answers, on random keys of every
integer dtype and shape, empty ones included."""

from __future__ import annotations

import numpy as np
import pytest

from infini_cupy.perf.distinct import distinct, distinct_counts


def _keys(rng, dtype, shape, spread):
    info = np.iinfo(dtype)
    low = max(info.min, -spread)
    return rng.integers(low, min(info.max, low + spread), size=shape, dtype=dtype,
                        endpoint=True)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("shape", [(0,), (1,), (7,), (1000,), (13, 17), (0, 5), (3, 4, 5)])
@pytest.mark.parametrize("spread", [0, 3, 1 << 20])
def test_distinct_is_numpys_unique(dtype, shape, spread):
    rng = np.random.default_rng([np.dtype(dtype).num, len(shape), spread])
    keys = _keys(rng, dtype, shape, spread)
    got = distinct(keys)
    expected = np.unique(keys)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert np.array_equal(got, expected)
    values, counts = distinct_counts(keys)
    expected_values, expected_counts = np.unique(keys, return_counts=True)
    assert np.array_equal(values, expected_values) and values.dtype == expected_values.dtype
    assert np.array_equal(counts, expected_counts) and counts.sum() == keys.size


def test_the_keys_are_left_as_they_were():
    keys = np.random.default_rng(5).integers(0, 9, 50)
    before = keys.copy()
    distinct(keys), distinct_counts(keys)
    assert np.array_equal(keys, before)
