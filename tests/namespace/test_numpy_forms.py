"""NumPy's call forms that the namespace takes beside the standard's signatures, because NumPy,
CuPy and torch all take them and generic code calls them so (scikit-learn's ``roc_curve``):
``where(condition)`` as ``nonzero(condition)``, and ``diff(x, n, axis)`` by position. On the
``cpu`` device and the suite's, against NumPy, random data."""

from __future__ import annotations

import contextlib
import inspect

import numpy as np
import pytest

import infini_cupy as xp

rng = np.random.default_rng(41)


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4)])
@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_where_of_a_condition_alone_is_nonzero(on, host, shape, lazy):
    h = rng.standard_normal(shape) > 0.3
    with xp.lazy() if lazy else contextlib.nullcontext():
        got = xp.where(on(h))
    expected = np.where(h)
    assert type(got) is tuple and len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(host(g), e)


def test_where_wants_both_values_or_neither(on):
    c = on(rng.standard_normal((3, 4)) > 0)
    for args in [(c, 1.0), (c, None, on(np.ones((3, 4))))]:
        with pytest.raises(ValueError, match="both x1 and x2, or neither"):
            xp.where(*args)
    with pytest.raises(ValueError, match="zero-dimensional"):
        xp.where(on(np.asarray(True)))


@pytest.mark.parametrize("n, axis", [(1, -1), (2, -1), (2, 0), (3, 1)])
def test_diff_takes_n_and_axis_by_position_as_numpy_does(on, host, n, axis):
    h = rng.standard_normal((5, 6))
    expected = np.diff(h, n, axis)
    np.testing.assert_allclose(host(xp.diff(on(h), n, axis)), expected, rtol=1e-12)
    np.testing.assert_allclose(host(xp.diff(on(h), axis=axis, n=n)), expected, rtol=1e-12)


def test_the_standard_s_keywords_stay_keywords():
    where, diff = inspect.signature(xp.where), inspect.signature(xp.diff)
    assert all(p.kind is p.POSITIONAL_ONLY for p in where.parameters.values())
    assert [p.name for p in diff.parameters.values()] == ["x", "n", "axis", "prepend", "append"]
    assert diff.parameters["prepend"].kind is diff.parameters["append"].kind is \
        inspect.Parameter.KEYWORD_ONLY
