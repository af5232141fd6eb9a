"""Property tests over layouts, dtypes and functions, NumPy (and einops) as the oracle, exact.

Each property runs twice: ``*_short`` in every run (CI's short version, a few dozen examples)
and ``*_long`` marked ``slow``, deselected by default, with the ``long`` hypothesis profile
(2000 examples each, ``INFINI_CUPY_LONG_EXAMPLES`` to change):

    pytest -m slow                      # the long runs only (emulation)
    pytest -m slow --backend cuda       # the same on a GPU
    INFINI_CUPY_LONG_EXAMPLES=20000 pytest -m slow -x

A failure prints the ``@reproduce_failure`` blob; hypothesis also keeps the failing example
in its database (``.hypothesis/``), so the next run of either version starts from it.
"""

from __future__ import annotations

import contextlib
import warnings

import array_api_compat.numpy as npx
import einops
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import infini_cupy as xp
from tests.support.view_cases import (
    DTYPES,
    buffer_length,
    carve,
    check_overlapping_views,
    overlapping_views,
    shapes,
    values,
    view_spec,
)

SHORT = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# max_examples from the profile in force ("long" when the slow tests are selected)
LONG = settings(deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@contextlib.contextmanager
def _quiet():
    """NumPy's oracle warns casting complex to real; the kernels silently do the same."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        yield


# ---------------------------------------------------------------- rearrange_ into any layout
@st.composite
def copies(draw):
    """(shape, source spec, destination spec, dtype, seed): separate buffers."""
    shape = draw(shapes(max_ndim=6, max_len=7, min_len=0))
    return (shape, view_spec(draw, len(shape), True), view_spec(draw, len(shape), False),
            draw(st.sampled_from(DTYPES)), draw(st.integers(0, 2**32 - 1)))


def check_copy(case, to_device, to_host):
    shape, x_spec, y_spec, dtype, seed = case
    x_host = values(buffer_length(shape, x_spec), dtype, seed)
    y_host = values(buffer_length(shape, y_spec), dtype, seed + 1)
    x_buffer, y_buffer = to_device(x_host), to_device(y_host.copy())
    expected = y_host.copy()
    carve(expected, shape, y_spec)[...] = carve(x_host, shape, x_spec)
    y = carve(y_buffer, shape, y_spec)
    assert xp.rearrange_(y, carve(x_buffer, shape, x_spec)) is y
    np.testing.assert_array_equal(to_host(y_buffer), expected)  # and nothing else written


@SHORT
@given(case=copies())
def test_rearrange_into_any_layout_short(case, to_device, to_host):
    check_copy(case, to_device, to_host)


@pytest.mark.slow
@LONG
@given(case=copies())
def test_rearrange_into_any_layout_long(case, to_device, to_host):
    check_copy(case, to_device, to_host)


# ---------------------------------------------------------------- overlapping views
@SHORT
@given(case=overlapping_views(max_ndim=5))
def test_overlapping_views_short(case, to_device, to_host):
    check_overlapping_views(case, to_device, to_host)


@pytest.mark.slow
@LONG
@given(case=overlapping_views(max_ndim=5))
def test_overlapping_views_long(case, to_device, to_host):
    check_overlapping_views(case, to_device, to_host)


# ---------------------------------------------------------------- einops patterns
@st.composite
def patterns(draw):
    """(input shape, pattern, axis lengths, source spec, dtype, seed): a random split of some
    input axes, a permutation, and a random grouping of the output axes."""
    n_axes = draw(st.integers(1, 5))
    lengths = draw(st.lists(st.integers(1, 4), min_size=n_axes, max_size=n_axes))
    names = [f"a{i}" for i in range(n_axes)]
    # input: consecutive names grouped into composed axes
    cuts = sorted(draw(st.sets(st.integers(1, n_axes - 1), max_size=n_axes - 1))) if n_axes > 1 else []
    groups = [names[i:j] for i, j in zip([0, *cuts], [*cuts, n_axes])]
    left = " ".join(g[0] if len(g) == 1 else f"({' '.join(g)})" for g in groups)
    order = draw(st.permutations(names))
    out_cuts = sorted(draw(st.sets(st.integers(1, n_axes - 1), max_size=n_axes - 1))) if n_axes > 1 else []
    out_groups = [order[i:j] for i, j in zip([0, *out_cuts], [*out_cuts, n_axes])]
    right = " ".join(g[0] if len(g) == 1 else f"({' '.join(g)})" for g in out_groups)
    shape = tuple(int(np.prod([lengths[names.index(n)] for n in g])) for g in groups)
    # every composed input axis but its first name is given, so the pattern is determined
    axes = {n: lengths[names.index(n)] for g in groups for n in g[1:]}
    return (shape, f"{left} -> {right}", axes, view_spec(draw, len(shape), True),
            draw(st.sampled_from(DTYPES)), draw(st.integers(0, 2**32 - 1)))


def check_pattern(case, to_device, to_host):
    shape, pattern, axes, spec, dtype, seed = case
    host = values(buffer_length(shape, spec), dtype, seed)
    x = carve(to_device(host), shape, spec)
    expected = einops.rearrange(np.array(carve(host, shape, spec)), pattern, **axes)
    np.testing.assert_array_equal(to_host(xp.rearrange(x, pattern, **axes)), expected)


@SHORT
@given(case=patterns())
def test_patterns_short(case, to_device, to_host):
    check_pattern(case, to_device, to_host)


@pytest.mark.slow
@LONG
@given(case=patterns())
def test_patterns_long(case, to_device, to_host):
    check_pattern(case, to_device, to_host)


# ---------------------------------------------------------------- elementwise
# Functions whose results on small integers are exact in every dtype they take, with the
# dtype groups they take.
UNARY = {"negative": "numeric", "positive": "numeric", "square": "numeric", "abs": "real",
         "logical_not": "bool", "bitwise_invert": "integer or bool", "sign": "real",
         "floor": "real", "isnan": "numeric", "conj": "numeric"}
BINARY = {"add": "numeric", "subtract": "numeric", "multiply": "numeric", "maximum": "real",
          "minimum": "real", "equal": "all", "not_equal": "all", "less": "real",
          "greater_equal": "real", "logical_and": "bool", "logical_xor": "bool",
          "bitwise_and": "integer or bool", "bitwise_xor": "integer or bool"}


def _takes(group: str, dtype: np.dtype) -> bool:
    kind = dtype.kind
    return {"numeric": kind in "iufc", "real": kind in "iuf", "bool": kind == "b",
            "all": True, "integer or bool": kind in "iub"}[group]


@st.composite
def elementwise_calls(draw):
    """(function, shape, operand specs, dtype, out spec or None, broadcast the second, seed)."""
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    table = draw(st.sampled_from([UNARY, BINARY]))
    names = [name for name, group in table.items() if _takes(group, dtype)]
    assume(names)
    name = draw(st.sampled_from(sorted(names)))
    shape = draw(shapes(max_ndim=4, max_len=6, min_len=0))
    specs = [view_spec(draw, len(shape), True) for _ in range(1 if table is UNARY else 2)]
    out = view_spec(draw, len(shape), False) if draw(st.booleans()) else None
    return name, shape, specs, dtype, out, draw(st.integers(0, 2**32 - 1))


def check_elementwise(case, to_device, to_host):
    name, shape, specs, dtype, out_spec, seed = case
    hosts = [values(buffer_length(shape, spec), dtype, seed + k, low=-10, high=10)
             for k, spec in enumerate(specs)]
    args = [carve(to_device(h), shape, spec) for h, spec in zip(hosts, specs)]
    host_args = [np.array(carve(h, shape, spec)) for h, spec in zip(hosts, specs)]
    with _quiet(), np.errstate(all="ignore"):
        expected = np.asarray(getattr(npx, name)(*host_args))  # the standard's dtypes
    function = getattr(xp, name)
    if out_spec is None:
        got = function(*args)
    else:
        out_buffer = to_device(np.zeros(buffer_length(shape, out_spec), expected.dtype))
        out = carve(out_buffer, shape, out_spec)
        assert function(*args, out=out) is out
        got = out
    got = to_host(got)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@SHORT
@given(case=elementwise_calls())
def test_elementwise_short(case, to_device, to_host):
    check_elementwise(case, to_device, to_host)


@pytest.mark.slow
@LONG
@given(case=elementwise_calls())
def test_elementwise_long(case, to_device, to_host):
    check_elementwise(case, to_device, to_host)


# ---------------------------------------------------------------- astype and data movement
@st.composite
def movements(draw):
    """(operation, shape, source spec, dtype, target dtype, seed)."""
    shape = draw(shapes(max_ndim=4, max_len=5, min_len=0))
    operation = draw(st.sampled_from(["astype", "concat", "stack", "tile", "repeat", "roll",
                                      "reshape", "flip_copy", "ascontiguousarray"]))
    assume(shape or operation in ("astype", "stack", "tile", "repeat", "reshape"))
    return (operation, shape, view_spec(draw, len(shape), True), draw(st.sampled_from(DTYPES)),
            draw(st.sampled_from(DTYPES)), draw(st.integers(0, 2**32 - 1)),
            draw(st.integers(-3, 3)))


def check_movement(case, to_device, to_host):
    operation, shape, spec, dtype, target, seed, k = case
    host = values(buffer_length(shape, spec), dtype, seed, low=0, high=100)
    x, h = carve(to_device(host), shape, spec), np.array(carve(host, shape, spec))
    axis = k % len(shape) if shape else None
    run = {
        "astype": (lambda a, m: m.astype(a, target) if m is xp else a.astype(target)),
        "concat": (lambda a, m: (xp.concat if m is xp else np.concatenate)([a, a[::-1]], axis=axis)),
        "stack": (lambda a, m: m.stack([a, a], axis=-1 if k < 0 else 0)),
        "tile": (lambda a, m: m.tile(a, (abs(k) % 3,) + (2,) * (len(shape) > 1))),
        "repeat": (lambda a, m: m.repeat(a, abs(k), axis=axis)),
        "roll": (lambda a, m: m.roll(a, k, axis=axis)),
        "reshape": (lambda a, m: m.reshape(a, (-1,))),
        "flip_copy": (lambda a, m: (xp.rearrange if m is xp else np.ascontiguousarray)(m.flip(a, axis=axis))),
        "ascontiguousarray": (lambda a, m: m.ascontiguousarray(a)),
    }[operation]
    with _quiet():
        expected = np.asarray(run(h, np))
        got = to_host(run(x, xp))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@SHORT
@given(case=movements())
def test_data_movement_short(case, to_device, to_host):
    check_movement(case, to_device, to_host)


@pytest.mark.slow
@LONG
@given(case=movements())
def test_data_movement_long(case, to_device, to_host):
    check_movement(case, to_device, to_host)
