"""``infini_cupy.rearrange(x, pattern, **axes)`` end to end against ``einops.rearrange``.

The pattern logic alone (``patterns.apply_pattern`` with a stub copy) is tested in
test_patterns.py; here the namespace function runs our kernel on random shapes, layouts and
dtypes, launches it exactly when einops (NumPy) has to copy and never more than once, and
reports malformed patterns as ValueErrors quoting the pattern. Runs on the suite's backend.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import infini_cupy as xp
from tests.support.layout_cases import DTYPES, LAYOUTS, launches, make, same, shares  # noqa: F401  fixtures

einops = pytest.importorskip("einops")

NAMES = ("b", "c", "h", "w", "t", "k")


def _text(groups) -> str:
    return " ".join("()" if not g else g[0] if len(g) == 1 else "(" + " ".join(g) + ")" for g in groups)


@st.composite
def patterns(draw):
    """A valid pattern, an input shape for it and the axis lengths to pass (all but one
    length of every composed input axis, sometimes all of them)."""
    names = list(draw(st.permutations(NAMES)))[: draw(st.integers(0, len(NAMES)))]
    length = {n: draw(st.integers(1, 4)) for n in names}
    ellipsis = draw(st.none() | st.lists(st.integers(0, 3), max_size=3).map(tuple))

    def grouping(order):
        groups = []
        for name in order:
            if groups and draw(st.integers(0, 2)) == 0:
                groups[-1].append(name)  # compose with the previous axis
            else:
                groups.append([name])
        for _ in range(draw(st.integers(0, 2))):  # anonymous length-1 axes: "1" or "()"
            groups.insert(draw(st.integers(0, len(groups))), draw(st.sampled_from([["1"], []])))
        return groups

    left = grouping(names)
    right = grouping(draw(st.permutations(names)))
    if ellipsis is not None:
        left.insert(draw(st.integers(0, len(left))), ["..."])
        named = [g for g in right if g and g != ["1"]]
        where = draw(st.sampled_from(["bare", "composed"] + (["inside"] if named else [])))
        if where == "inside":  # "(... h)": the ellipsis axes composed with named ones
            draw(st.sampled_from(named)).insert(0, "...")
        else:
            right.insert(draw(st.integers(0, len(right))), ["..."] if where == "bare" else ["(...)"])
    shape, axes_lengths = [], {}
    for group in left:
        if group == ["..."]:
            shape.extend(ellipsis)
            continue
        named = [n for n in group if n != "1"]
        shape.append(math.prod(length[n] for n in named))
        given_names = named if draw(st.integers(0, 3)) == 0 else named[:-1]
        axes_lengths.update({n: length[n] for n in given_names})
    return f"{_text(left)} -> {_text(right)}", tuple(shape), axes_lengths


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=patterns(), dtype=st.sampled_from(DTYPES), layout=st.sampled_from(LAYOUTS),
       seed=st.integers(0, 2**32 - 1))
def test_random_patterns_match_einops(to_device, same, launches, case, dtype, layout, seed):
    pattern, shape, axes_lengths = case
    x, h = make(np.random.default_rng(seed), shape, dtype, layout, to_device)
    expected = einops.rearrange(h, pattern, **axes_lengths)
    copied = h.size > 0 and not np.shares_memory(expected, h)  # NumPy copies only when it must
    launches.clear()
    got = xp.rearrange(x, pattern, **axes_lengths)
    same(got, np.asarray(expected))
    assert len(launches) == copied, (pattern, h.shape, h.strides)
    if h.size:
        assert shares(got, x) != copied
    if copied:
        assert got.flags.c_contiguous


@pytest.mark.parametrize(
    "pattern, shape, axes_lengths, launched",
    [
        ("b h w -> b (w h)", (2, 3, 4), {}, 1),
        ("b h w -> b w h", (2, 3, 4), {}, 0),
        ("b h w -> (b h) w", (2, 3, 4), {}, 0),
        ("b (h w) c -> b h w c", (2, 12, 3), {"h": 3}, 0),
        ("b c h w -> b h w c", (2, 3, 4, 5), {}, 0),
        ("b c h w -> b (h w c)", (2, 3, 4, 5), {}, 1),
        ("(b1 b2) (h1 h2) c -> (b1 h1) (b2 h2 c)", (4, 6, 2), {"b1": 2, "h1": 3}, 1),
        ("... h w -> ... (w h)", (2, 3, 4, 5), {}, 1),
        ("b ... -> (...) b", (2, 3, 4), {}, 0),
        ("b ... -> b (...)", (2, 3, 4), {}, 0),
        ("b ... -> (... b)", (2, 3, 4), {}, 1),
        ("b h w -> b 1 h w ()", (2, 3, 4), {}, 0),
        ("b h w -> b h w", (0, 3, 4), {}, 0),
        ("b h w -> b (w h)", (0, 3, 4), {}, 0),  # a copy of nothing launches nothing
    ],
)
@pytest.mark.parametrize("dtype", ["bool", "float16", "complex128"])
def test_named_patterns_launch_counts(pattern, shape, axes_lengths, launched, dtype, to_device, same,
                                      launches):
    h = np.arange(math.prod(shape)).reshape(shape).astype(dtype)
    x = to_device(h)
    got = xp.rearrange(x, pattern, **axes_lengths)
    same(got, np.asarray(einops.rearrange(h, pattern, **axes_lengths)))
    assert len(launches) == launched
    if h.size:
        assert shares(got, x) == (launched == 0)


def test_a_merge_of_a_transposed_input_copies_once(to_device, same, launches):
    h = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    x = to_device(h).transpose(2, 1, 0)
    same(xp.rearrange(x, "b h w -> (b h) w"), np.asarray(einops.rearrange(h.transpose(2, 1, 0), "b h w -> (b h) w")))
    assert len(launches) == 1
    launches.clear()
    same(xp.rearrange(x, "b h w -> w h b"), h)  # undoing the transpose: a view
    assert not launches


def test_without_a_pattern_a_c_contiguous_copy(to_device, same, launches):
    h = np.arange(12, dtype=np.int8).reshape(3, 4)
    for x, expected in ((to_device(h), h), (to_device(h).T, h.T), (to_device(h)[:, ::-2], h[:, ::-2])):
        launches.clear()
        y = xp.rearrange(x)
        same(y, np.array(expected, order="C"))
        assert y.flags.c_contiguous and len(launches) == 1 and not shares(y, x)


MALFORMED = [
    ("b c h w", (1, 2, 3, 4), {}, "exactly one '->'"),
    ("a -> b -> c", (1,), {}, "exactly one '->'"),
    ("b (c h -> b c h", (1, 2), {}, r"'\(' not closed"),
    ("b c) h -> b c h", (1, 2), {}, r"'\)' without '\('"),
    ("b ((c h)) -> b c h", (1, 2), {}, "nested parentheses"),
    ("b b -> b", (1, 1), {}, "appears twice"),
    ("b c -> b", (1, 2), {}, "c only on the left"),
    ("b -> b c", (1,), {}, "c only on the right"),
    ("... b ... -> b", (1,), {}, "more than one ellipsis"),
    ("b .. -> b", (1,), {}, "dots outside an ellipsis"),
    ("... b -> b", (1,), {}, "left side only"),
    ("(... b) -> ... b", (2,), {}, "only allowed on the right"),
    ("b 2 -> b", (6, 2), {}, "anonymous axis 2"),
    ("b 1x -> b 1x", (6, 2), {}, "not a valid axis name"),
    ("b _x -> b _x", (6, 2), {}, "start or end with '_'"),
    ("b c-d -> b", (6, 2), {}, "unexpected character '-'"),
    ("b ...c -> b ...c", (6, 2), {}, "must stand apart"),
    # patterns that do not fit the input or the axis lengths
    ("b c h -> b c h", (2, 3), {}, r"needs 3 dimensions, got shape \(2, 3\)"),
    ("(b h w) -> b h w", (24,), {"h": 2}, "cannot infer the lengths of b and w"),
    ("(b h) w -> b h w", (6, 5), {"h": 4}, "not divisible by 4"),
    ("b w -> w b", (6, 5), {"w": 4}, r"length 5 in shape \(6, 5\)"),
    ("b w -> w b", (6, 5), {"q": 4}, "'q', which is not in the pattern"),
    ("b w -> w b", (6, 5), {"w": -5}, "must not be negative"),
    ("1 w -> w", (6, 5), {}, "length 6 in shape"),
]


@pytest.mark.parametrize("pattern, shape, axes_lengths, message", MALFORMED)
def test_malformed_patterns_are_value_errors_quoting_the_pattern(pattern, shape, axes_lengths, message,
                                                                 to_device, launches):
    with pytest.raises(Exception):  # einops rejects them too
        einops.rearrange(np.zeros(shape), pattern, **axes_lengths)
    with pytest.raises(ValueError, match=message) as info:
        xp.rearrange(to_device(np.zeros(shape)), pattern, **axes_lengths)
    assert re.search(re.escape(repr(pattern)), str(info.value))
    assert isinstance(info.value, einops.EinopsError)  # what code written for einops catches
    assert not launches


def test_wrong_argument_types():
    x = np.zeros((2, 3))
    with pytest.raises(TypeError, match="pattern must be a str"):
        xp.rearrange(x, 3)
    with pytest.raises(TypeError, match="without a pattern"):
        xp.rearrange(x, h=2)
    with pytest.raises(TypeError, match="list"):
        xp.rearrange([[1, 2], [3, 4]], "a b -> b a")  # einops would stack a list: we take arrays
    with pytest.raises(TypeError, match="list"):
        xp.rearrange([1, 2])
    with pytest.raises(ValueError, match="must be integers"):
        xp.rearrange(x, "b w -> w b", w=2.5)


@pytest.mark.parametrize("name", ["x", "copy_fn", "pattern"])
def test_an_axis_may_be_named_like_a_parameter(name, to_device, same):
    """Axis lengths are keywords: ``x=2`` is the length of an axis named x."""
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    same(xp.rearrange(to_device(h), f"a (b {name}) -> a b {name}", **{name: 2}), h.reshape(3, 2, 2))


def test_rearrange_into_stays_as_is(to_device, same, launches):
    """``rearrange_(y, x)``: the destination-passing form, one launch."""
    h = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = to_device(np.zeros((3, 2), np.float32))
    assert xp.rearrange_(y, to_device(h).T) is y
    same(y, h.T)
    assert len(launches) == 1
