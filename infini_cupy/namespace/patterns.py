"""einops-style rearrange patterns: ``"b (h w) c -> b h w c"``, as views plus at most one copy.

Work is split like einops: :func:`parse_pattern` (the text) -> :func:`plan_pattern` (a recipe
for one input shape, cached) -> :func:`apply_pattern` (views of the array, and one call of
``copy_fn`` only when the final reshape cannot be a view).

Every rearrange is three steps: reshape the input to its *elementary* axes (splitting composed
axes and dropping anonymous ``1`` axes: always a view), permute them into the output order
(a view), reshape to the output's composed axes. Only that last reshape may need a copy, and
whether it does is decided here from shape and strides (NumPy's ``_attempt_nocopy_reshape``),
never left to a library's silent copy.

>>> import numpy as np
>>> x = np.arange(24).reshape(2, 3, 4)
>>> apply_pattern(x, "b h w -> b w h", np.ascontiguousarray).shape
(2, 4, 3)
>>> apply_pattern(x, "(b1 b2) h w -> b1 (w h) b2", np.ascontiguousarray, b2=1).shape
(2, 12, 1)
"""

from __future__ import annotations

import functools
import math
import operator
from dataclasses import dataclass

ELLIPSIS = "..."


def _einops_error() -> tuple:
    """``(einops.EinopsError,)`` where einops is installed, else ``()``."""
    try:
        from einops import EinopsError
    except ImportError:
        return ()
    return (EinopsError,)


class PatternError(ValueError, *_einops_error()):
    """A malformed pattern, or a pattern that does not fit the input shape or axis lengths.

    Raised by :func:`infini_cupy.rearrange`; a ``ValueError``, so code that catches the
    standard's errors catches it too, and where einops is installed an ``EinopsError`` (a
    ``RuntimeError``), so code written for ``einops.rearrange`` catches it as well. The message
    names the pattern and what is wrong.

    Examples
    --------
    >>> import numpy as np, infini_cupy as xp
    >>> try:
    ...     xp.rearrange(np.zeros((2, 3)), "h w -> w")
    ... except xp.PatternError as e:
    ...     print(e)
    rearrange pattern 'h w -> w': every axis must appear on both sides: h only on the left
    """


@dataclass(frozen=True)
class ParsedPattern:
    """One pattern, parsed; independent of any shape."""

    pattern: str
    #: Left side, one entry per input axis: a tuple of names (a composed axis, ``()`` for an
    #: anonymous ``1`` or an empty group) or the string ``"..."`` for a bare ellipsis. A
    #: parenthesized ellipsis appears as ``"..."`` inside a tuple (right side only).
    left: tuple
    #: Right side, same form, one entry per output axis.
    right: tuple
    #: True when both sides have an ellipsis (it must be on both or neither).
    has_ellipsis: bool


@dataclass(frozen=True)
class PatternRecipe:
    """How to rearrange an input of one shape: reshape, permute, reshape."""

    #: Input shape the recipe was planned for.
    input_shape: tuple
    #: Lengths of the elementary axes, in input order (the first reshape; always a view).
    elementary_shape: tuple
    #: Permutation of the elementary axes into output order (``transpose`` argument).
    permutation: tuple
    #: Output shape (the final reshape: a view when strides allow, else one copy).
    output_shape: tuple
    #: Length of every named axis, including the ellipsis axes ``...0``, ``...1``, ...
    axis_lengths: tuple


def _error(pattern: str, message: str) -> PatternError:
    return PatternError(f"rearrange pattern {pattern!r}: {message}")


def _parse_side(pattern: str, side: str, which: str) -> tuple:
    if side.count(".") and (side.count(ELLIPSIS) != 1 or side.count(".") != 3):
        if side.count(ELLIPSIS) > 1:
            raise _error(pattern, f"{which} side has more than one ellipsis '...'")
        raise _error(pattern, f"{which} side has dots outside an ellipsis '...'")
    composition: list = []
    group: list | None = None
    seen: set = set()

    def add(token: str) -> None:
        if token.isdecimal() and int(token) == 1:  # an anonymous axis of length 1 (einops
            # reads "01" as 1 too): an empty group, or nothing inside one
            if group is None:
                composition.append(())
            return
        if token != ELLIPSIS:
            if "." in token:
                raise _error(pattern, f"{token!r}: an ellipsis '...' must stand apart from axis names")
            if token.isdecimal():
                raise _error(pattern, f"anonymous axis {token} is not supported (only 1 is)")
            if not token.isidentifier():
                raise _error(pattern, f"{token!r} is not a valid axis name (not an identifier)")
            if token.startswith("_") or token.endswith("_"):
                raise _error(pattern, f"axis name {token!r} should not start or end with '_'")
        if token in seen:
            raise _error(pattern, f"axis {token!r} appears twice on the {which} side")
        seen.add(token)
        if group is None:
            composition.append(token if token == ELLIPSIS else (token,))
        else:
            group.append(token)

    for token in side.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            if group is not None:
                raise _error(pattern, "nested parentheses (axis composition is one level)")
            group = []
        elif token == ")":
            if group is None:
                raise _error(pattern, f"unbalanced parentheses: ')' without '(' on the {which} side")
            composition.append(tuple(group))
            group = None
        else:
            add(token)
    if group is not None:
        raise _error(pattern, f"unbalanced parentheses: '(' not closed on the {which} side")
    return tuple(composition)


def _names(side: tuple) -> set:
    return {name for entry in side for name in ((entry,) if entry == ELLIPSIS else entry)}


@functools.lru_cache(maxsize=1024)
def parse_pattern(pattern: str) -> ParsedPattern:
    """Parse ``"left -> right"``; PatternError (a ValueError) says what is wrong.

    >>> parse_pattern("b (h w) -> b h w").left
    (('b',), ('h', 'w'))
    """
    if not isinstance(pattern, str):
        raise PatternError(f"rearrange pattern must be a string, got {type(pattern).__name__}")
    if pattern.count("->") != 1:
        raise _error(pattern, "expected exactly one '->' between input and output axes")
    left_text, right_text = pattern.split("->")
    for ch in pattern.replace("->", ""):
        if not (ch.isalnum() or ch in "_.() "):  # einops' characters: no tab, no newline
            raise _error(pattern, f"unexpected character {ch!r}")
    left = _parse_side(pattern, left_text, "left")
    right = _parse_side(pattern, right_text, "right")
    for entry in left:
        if entry != ELLIPSIS and ELLIPSIS in entry:
            raise _error(pattern, "an ellipsis inside parentheses is only allowed on the right side")
    left_names, right_names = _names(left), _names(right)
    if (ELLIPSIS in left_names) != (ELLIPSIS in right_names):
        where = "left" if ELLIPSIS in left_names else "right"
        raise _error(pattern, f"ellipsis '...' on the {where} side only (it must be on both)")
    only_left, only_right = sorted(left_names - right_names), sorted(right_names - left_names)
    if only_left or only_right:
        parts = [f"{', '.join(only_left)} only on the left"] if only_left else []
        parts += [f"{', '.join(only_right)} only on the right"] if only_right else []
        raise _error(pattern, f"every axis must appear on both sides: {'; '.join(parts)}")
    return ParsedPattern(pattern, left, right, ELLIPSIS in left_names)


def _expand(side: tuple, ellipsis_names: tuple) -> list:
    """Groups of names with the ellipsis replaced by its axes (bare: one group per axis)."""
    groups = []
    for entry in side:
        if entry == ELLIPSIS:
            groups.extend((name,) for name in ellipsis_names)
        else:
            groups.append(tuple(n for name in entry for n in (ellipsis_names if name == ELLIPSIS else (name,))))
    return groups


@functools.lru_cache(maxsize=4096)
def plan_pattern(pattern: str, shape: tuple, axes_lengths: tuple = ()) -> PatternRecipe:
    """The recipe for rearranging an input of ``shape``; ``axes_lengths`` as ``(name, len)`` pairs.

    >>> plan_pattern("(b h) w -> b w h", (6, 5), (("h", 2),)).output_shape
    (3, 5, 2)
    """
    parsed = parse_pattern(pattern)
    shape = tuple(int(n) for n in shape)
    known = {}
    for name, length in axes_lengths:
        if name == ELLIPSIS:  # its axes are the input's: a length for it would go unused
            raise _error(pattern, "length given for the ellipsis '...' (its axes take the "
                                  "input's lengths)")
        if name not in _names(parsed.left):
            raise _error(pattern, f"length given for axis {name!r}, which is not in the pattern")
        length = operator.index(length)
        if length < 0:
            raise _error(pattern, f"axis {name}={length} must not be negative")
        known[name] = length
    n_fixed = sum(1 for entry in parsed.left if entry != ELLIPSIS)
    if parsed.has_ellipsis:
        if len(shape) < n_fixed:
            raise _error(pattern, f"needs at least {n_fixed} dimensions, got shape {shape} ({len(shape)} dimensions)")
    elif len(shape) != n_fixed:
        raise _error(pattern, f"needs {n_fixed} dimensions, got shape {shape} ({len(shape)} dimensions)")
    ellipsis_names = tuple(f"...{i}" for i in range(len(shape) - n_fixed)) if parsed.has_ellipsis else ()
    left, right = _expand(parsed.left, ellipsis_names), _expand(parsed.right, ellipsis_names)

    for group, length in zip(left, shape):
        unknown = [name for name in group if name not in known]
        product = math.prod(known[name] for name in group if name in known)
        # (an anonymous 1 on the left is the empty group)
        shown = group[0] if len(group) == 1 else "(" + " ".join(group) + ")" if group else "1"
        if not unknown:
            if product != length:
                values = " * ".join(f"{n}={known[n]}" for n in group) or "1"
                raise _error(pattern, f"axis {shown} has length {length} in shape {shape}, but {values}")
        elif len(unknown) > 1:
            raise _error(pattern, f"cannot infer the lengths of {' and '.join(unknown)} in {shown} "
                                  f"(length {length}): give all but one of them as keywords")
        elif product == 0:
            given = " * ".join(f"{n}={known[n]}" for n in group if n in known)
            raise _error(pattern, f"axis {shown} has length {length} in shape {shape}: "
                                  f"{unknown[0]} cannot be inferred beside {given}")
        elif length % product:
            raise _error(pattern, f"axis {shown} has length {length} in shape {shape}, "
                                  f"not divisible by {product} for {unknown[0]}")
        else:
            known[unknown[0]] = length // product

    elementary = [name for group in left for name in group]
    output_order = [name for group in right for name in group]
    return PatternRecipe(
        input_shape=shape,
        elementary_shape=tuple(known[name] for name in elementary),
        permutation=tuple(elementary.index(name) for name in output_order),
        output_shape=tuple(math.prod(known[name] for name in group) for group in right),
        axis_lengths=tuple(sorted(known.items())),
    )


def lengths_key(pattern: str, axes_lengths: dict) -> tuple:
    """``axes_lengths`` as :func:`plan_pattern` takes them: sorted ``(name, int)`` pairs.

    Any integer counts (``numpy.int64``, a 0-d integer array, as einops takes them); the
    ints make the key hashable. PatternError for a length that is no integer.
    """
    try:
        return tuple(sorted((name, operator.index(n)) for name, n in axes_lengths.items()))
    except TypeError as e:
        raise _error(pattern, f"axis lengths must be integers, got {axes_lengths}") from e


@functools.lru_cache(maxsize=4096)  # a pure function of three small tuples: a repeat is a lookup
def reshape_strides(shape: tuple, strides: tuple, new_shape: tuple) -> tuple | None:
    """Strides of ``new_shape`` viewing the same elements in C order, or None if a copy is needed.

    NumPy's ``_attempt_nocopy_reshape``: match runs of old and new axes with equal products;
    a run of old axes can be merged only if each stride chains into the next.
    """
    if 0 in shape:
        return tuple(0 for _ in new_shape)  # no elements: any strides view them
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]  # length-1 axes: strides irrelevant
    new_strides = [0] * len(new_shape)
    oi = ni = 0
    while ni < len(new_shape) and oi < len(old):
        oj, nj = oi + 1, ni + 1
        new_len, old_len = new_shape[ni], old[oi][0]
        while new_len != old_len:
            if new_len < old_len:
                new_len *= new_shape[nj]
                nj += 1
            else:
                old_len *= old[oj][0]
                oj += 1
        for k in range(oi, oj - 1):
            if old[k][1] != old[k + 1][0] * old[k + 1][1]:
                return None
        new_strides[nj - 1] = old[oj - 1][1]
        for k in range(nj - 1, ni, -1):
            new_strides[k - 1] = new_strides[k] * new_shape[k]
        ni, oi = nj, oj
    last = new_strides[ni - 1] if ni else 0
    for k in range(ni, len(new_shape)):  # trailing length-1 axes of the new shape
        new_strides[k] = last
    return tuple(new_strides)


def _view_reshape(x, new_shape: tuple):
    """``x.reshape`` when it is a view; the assertion guards the one reshape that always is."""
    if tuple(x.shape) == new_shape:
        return x
    assert reshape_strides(tuple(x.shape), tuple(x.strides), new_shape) is not None
    return x.reshape(new_shape)


def apply_pattern(x, pattern: str, copy_fn, /, **axes_lengths):
    """``einops.rearrange(x, pattern, **axes_lengths)`` as views, plus ``copy_fn`` at most once.

    Positional-only, so that any axis name (``x=4``, ``copy_fn=2``) can be a keyword.

    ``copy_fn(view)`` must return a new C-contiguous copy of ``view``; it is called only when
    the output's composed axes cannot be a view of ``x``. Works on NumPy and CuPy arrays.

    >>> import numpy as np
    >>> x = np.zeros((2, 3, 4))
    >>> y = apply_pattern(x, "b h w -> b (w h)", np.ascontiguousarray)  # needs the copy
    >>> y.shape, np.shares_memory(x, apply_pattern(x, "b h w -> (b h) w", None))
    ((2, 12), True)
    """
    recipe = plan_pattern(pattern, tuple(x.shape), lengths_key(pattern, axes_lengths))
    view = _view_reshape(x, recipe.elementary_shape)
    if recipe.permutation != tuple(range(len(recipe.permutation))):
        view = view.transpose(recipe.permutation)
    if tuple(view.shape) == recipe.output_shape:
        return view
    if reshape_strides(tuple(view.shape), tuple(view.strides), recipe.output_shape) is not None:
        return view.reshape(recipe.output_shape)
    return copy_fn(view).reshape(recipe.output_shape)
