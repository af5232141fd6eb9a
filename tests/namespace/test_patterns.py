"""einops-style patterns: values against einops.rearrange, views vs copies, error messages."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infini_cupy.namespace.patterns import (
    PatternError,
    apply_pattern,
    parse_pattern,
    plan_pattern,
    reshape_strides,
)

einops = pytest.importorskip("einops")


class CountingCopy:
    """The ``copy_fn`` stub: a C-contiguous copy, counting its calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, view):
        self.calls += 1
        return np.ascontiguousarray(view)


def layout(rng: random.Random, shape: tuple) -> np.ndarray:
    """An array of ``shape`` with distinct values and a random layout (permuted, strided, flipped)."""
    ndim = len(shape)
    perm = list(range(ndim))
    rng.shuffle(perm)
    steps = [rng.choice((1, 1, 2, -1, -2)) for _ in range(ndim)]
    stored = [shape[p] * abs(steps[p]) for p in perm]
    base = np.arange(math.prod(stored), dtype=np.int32).reshape(stored)
    x = base.transpose(np.argsort(perm))
    if ndim:  # x[()] of a 0-d array would be a NumPy scalar
        x = x[tuple(slice(None, None, s) for s in steps)]
    assert x.shape == shape
    return x


def check(x, pattern, **axes_lengths):
    """Our result equals einops'; copy_fn runs at most once, and exactly when einops copied."""
    expected = einops.rearrange(x, pattern, **axes_lengths)
    copy = CountingCopy()
    got = apply_pattern(x, pattern, copy, **axes_lengths)
    assert got.shape == expected.shape, pattern
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, expected, err_msg=pattern)
    assert copy.calls <= 1
    if x.size:
        # NumPy's reshape (einops' backend) copies exactly when no view exists.
        assert copy.calls == (not np.shares_memory(expected, x)), (pattern, x.shape, x.strides)
        assert np.shares_memory(got, x) == (copy.calls == 0)
    return got, copy.calls


NAMES = ["b", "c", "h", "w", "t", "k"]


def random_case(rng: random.Random):
    """A random valid pattern, an input shape for it, and the axis lengths to pass."""
    names = NAMES[: rng.randint(0, len(NAMES))]
    length = {n: rng.randint(1, 4) for n in names}
    ellipsis = tuple(rng.randint(1, 3) for _ in range(rng.randint(0, 3))) if rng.random() < 0.3 else None

    def grouping(order):
        groups, current = [], []
        for name in order:
            if current and rng.random() < 0.6:
                groups.append(current)
                current = []
            current.append(name)
        if current:
            groups.append(current)
        for _ in range(rng.choice((0, 0, 1, 2))):  # anonymous length-1 axes
            groups.insert(rng.randint(0, len(groups)), rng.choice((["1"], [])))
        return groups

    left = grouping(rng.sample(names, len(names)))
    right = grouping(rng.sample(names, len(names)))
    if ellipsis is not None:
        left.insert(rng.randint(0, len(left)), ["..."])
        if rng.random() < 0.3:
            right.insert(rng.randint(0, len(right)), ["(...)"])  # composed ellipsis
        else:
            right.insert(rng.randint(0, len(right)), ["..."])

    def text(groups):
        return " ".join("()" if not g else g[0] if len(g) == 1 else "(" + " ".join(g) + ")" for g in groups)

    shape, axes_lengths = [], {}
    for group in left:
        if group == ["..."]:
            shape.extend(ellipsis)
            continue
        named = [n for n in group if n != "1"]
        shape.append(math.prod(length[n] for n in named))
        given_names = named if rng.random() < 0.3 else rng.sample(named, max(len(named) - 1, 0))
        axes_lengths.update({n: length[n] for n in given_names})
    return f"{text(left)} -> {text(right)}", tuple(shape), axes_lengths


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_random_patterns_match_einops(seed):
    rng = random.Random(seed)
    pattern, shape, axes_lengths = random_case(rng)
    check(layout(rng, shape), pattern, **axes_lengths)


def test_seeded_patterns_match_einops():
    rng = random.Random(0)
    copies = 0
    for _ in range(400):
        pattern, shape, axes_lengths = random_case(rng)
        copies += check(layout(rng, shape), pattern, **axes_lengths)[1]
    assert 0 < copies < 400  # both paths exercised


@pytest.mark.parametrize(
    "pattern, shape, axes_lengths",
    [
        ("b c h w -> b h w c", (2, 3, 4, 5), {}),
        ("(b h) w -> b h w", (6, 5), {"h": 3}),
        ("(b h) w -> b h w", (6, 5), {"b": 2}),
        ("(b h) w -> b h w", (6, 5), {"b": 2, "h": 3}),
        ("b h w c -> b (h w) c", (2, 3, 4, 5), {}),
        ("... h w -> ... w h", (2, 3, 4, 5), {}),
        ("... h w -> ... w h", (4, 5), {}),
        ("b ... -> (...) b", (2, 3, 4), {}),
        ("b ... c -> b c (...)", (2, 3), {}),
        ("b h w -> b 1 h w 1", (2, 3, 4), {}),
        ("b 1 h w -> b (h w)", (2, 1, 3, 4), {}),
        ("b () h -> h () b ()", (2, 1, 3), {}),
        ("b 01 h -> h (b 001) 01", (2, 1, 3), {}),  # einops reads any decimal 1 as 1
        ("b (h 1 w) -> (b 1) h w", (2, 12), {"w": 4}),
        ("b h w c -> (b h) (w c)", (2, 3, 4, 5), {}),
        ("b h w c -> (w b) (c h)", (2, 3, 4, 5), {}),
        ("(b1 b2) (h1 h2) c -> (b1 h1) (b2 h2 c)", (4, 6, 2), {"b1": 2, "h1": 3}),
        (" -> ", (), {}),
        (" -> 1 ()", (), {}),
        ("x -> x", (0,), {}),
        ("(b h) w -> w b h", (0, 3), {"h": 2}),
    ],
)
def test_named_patterns(pattern, shape, axes_lengths):
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    check(x, pattern, **axes_lengths)
    if x.ndim:  # asfortranarray makes a 0-d array 1-d
        check(np.asfortranarray(x), pattern, **axes_lengths)


@pytest.mark.parametrize("length", [np.int64(3), np.array(3)])
def test_any_integer_is_an_axis_length(length):
    """einops takes a 0-d integer array as a length: our plan's cache key must not hash it."""
    check(np.arange(30, dtype=np.float32).reshape(6, 5), "(b h) w -> b h w", h=length)


def test_views_and_copies():
    x = np.arange(24).reshape(2, 3, 4)
    copy = CountingCopy()
    assert apply_pattern(x, "b h w -> b h w", copy) is x
    assert np.shares_memory(apply_pattern(x, "b h w -> w h b", copy), x)  # a permutation: a view
    assert np.shares_memory(apply_pattern(x, "b h w -> (b h) w", copy), x)  # contiguous merge
    assert np.shares_memory(apply_pattern(x[:, :, ::2], "b h w -> (b h) w", copy), x)  # strides chain
    assert copy.calls == 0
    apply_pattern(x[:, ::2], "b h w -> (b h) w", copy)  # 96 != 2 * 64: strides do not chain
    assert copy.calls == 1
    copy.calls = 0
    y = apply_pattern(x, "b h w -> b (w h)", copy)
    assert copy.calls == 1 and y.flags.c_contiguous
    # the one copy must not depend on the library copying silently
    calls = []
    y = apply_pattern(x, "b h w -> (w b) h", lambda v: calls.append(v) or np.ascontiguousarray(v))
    assert len(calls) == 1 and calls[0].shape == (4, 2, 3)


@pytest.mark.parametrize(
    "shape, strides, new_shape",
    [
        ((2, 3, 4), (96, 32, 8), (6, 4)),
        ((2, 3, 4), (96, 32, 8), (24,)),
        ((2, 3, 4), (8, 16, 48), (6, 4)),  # Fortran order: only splits work
        ((2, 3, 4), (8, 16, 48), (2, 3, 2, 2)),
        ((4, 1, 6), (48, 7, 8), (2, 2, 1, 3, 2, 1)),
        ((3, 4), (-32, 8), (12,)),
        ((3, 4), (-32, 8), (3, 2, 2)),
        ((2, 1), (8, 8), (2,)),
        ((1,), (8,), ()),
        ((), (), (1, 1)),
    ],
)
@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0", reason="reshape(copy=False) is NumPy 2.1+")
def test_reshape_strides_matches_numpy(shape, strides, new_shape):
    base = np.zeros(4096, dtype=np.float64)
    offset = 2048
    x = np.lib.stride_tricks.as_strided(base[offset:], shape, strides)
    ours = reshape_strides(shape, strides, new_shape)
    try:
        view = x.reshape(new_shape, copy=False)
    except ValueError:
        assert ours is None
    else:
        assert ours is not None
        lengths_gt1 = [(s, n) for s, n in zip(ours, new_shape) if n > 1]
        assert lengths_gt1 == [(s, n) for s, n in zip(view.strides, view.shape) if n > 1]


def test_plan_is_cached_and_parsed_once():
    plan_pattern.cache_clear()
    x = np.zeros((6, 5))
    for _ in range(3):
        apply_pattern(x, "(b h) w -> b w h", np.ascontiguousarray, h=2)
    assert plan_pattern.cache_info().hits == 2
    recipe = plan_pattern("(b h) w -> b w h", (6, 5), (("h", 2),))
    assert recipe.elementary_shape == (3, 2, 5)
    assert recipe.permutation == (0, 2, 1)
    assert recipe.output_shape == (3, 5, 2)


def test_parsed_structure():
    parsed = parse_pattern("b (h w) 1 ... -> (...) () (b h w)")
    assert parsed.left == (("b",), ("h", "w"), (), "...")
    assert parsed.right == (("...",), (), ("b", "h", "w"))
    assert parsed.has_ellipsis


@pytest.mark.parametrize(
    "pattern, shape, axes_lengths, message",
    [
        ("b c h w", (1, 2, 3, 4), {}, "exactly one '->'"),
        ("a -> b -> c", (1,), {}, "exactly one '->'"),
        ("b (c h -> b c h", (1, 2), {}, r"unbalanced parentheses: '\(' not closed on the left"),
        ("b c) h -> b c h", (1, 2), {}, r"unbalanced parentheses: '\)' without '\('"),
        ("b ((c h)) -> b c h", (1, 2), {}, "nested parentheses"),
        ("b b -> b", (1, 1), {}, "axis 'b' appears twice on the left"),
        ("b c -> b b", (1, 1), {}, "axis 'b' appears twice on the right"),
        ("b c -> b", (1, 2), {}, "c only on the left"),
        ("b -> b c", (1,), {}, "c only on the right"),
        ("... b ... -> b", (1,), {}, "more than one ellipsis"),
        ("b .. -> b", (1,), {}, "dots outside an ellipsis"),
        ("... b -> b", (1,), {}, "on the left side only"),
        ("b -> ... b", (1,), {}, "on the right side only"),
        ("(... b) -> ... b", (2,), {}, "only allowed on the right side"),
        ("b c h -> b c h", (2, 3), {}, r"needs 3 dimensions, got shape \(2, 3\)"),
        ("b c ... h -> b c h ...", (2, 3), {}, r"at least 3 dimensions, got shape \(2, 3\)"),
        ("(b h w) -> b h w", (24,), {"h": 2}, "cannot infer the lengths of b and w"),
        ("(b h) w -> b h w", (6, 5), {"h": 4}, "not divisible by 4"),
        ("(b h) w -> b h w", (6, 5), {"b": 2, "h": 4}, r"length 6 in shape \(6, 5\), but b=2 \* h=4"),
        ("b w -> w b", (6, 5), {"w": 4}, "length 5 in shape"),
        ("1 w -> w", (6, 5), {}, r"axis 1 has length 6 in shape \(6, 5\), but 1"),
        ("(b h) w -> b h w", (6, 5), {"b": 0}, "h cannot be inferred beside b=0"),
        ("b w -> w b", (6, 5), {"q": 4}, "axis 'q', which is not in the pattern"),
        ("b ... -> ... b", (6, 5), {"...": 4}, r"length given for the ellipsis '\.\.\.'"),
        ("b 2 -> b", (6, 2), {}, "anonymous axis 2 is not supported"),
        ("b 1x -> b 1x", (6, 2), {}, "'1x' is not a valid axis name"),
        ("b _x -> b _x", (6, 2), {}, "should not start or end with '_'"),
        ("b c-d -> b", (6, 2), {}, "unexpected character '-'"),
        ("b c -> c\tb", (6, 2), {}, r"unexpected character '\\t'"),  # einops: no tab,
        ("b c ->\nc b", (6, 2), {}, r"unexpected character '\\n'"),  # no newline
        ("b ...c -> b ...c", (6, 2), {}, "must stand apart"),
        ("b w -> w b", (6, 5), {"w": -5}, "must not be negative"),
        ("b w -> w b", (6, 5), {"w": 2.5}, "must be integers"),
    ],
)
def test_malformed_patterns(pattern, shape, axes_lengths, message):
    with pytest.raises(ValueError, match=message) as info:
        apply_pattern(np.zeros(shape), pattern, np.ascontiguousarray, **axes_lengths)
    assert isinstance(info.value, PatternError)
    assert repr(pattern) in str(info.value)  # the message quotes the pattern
