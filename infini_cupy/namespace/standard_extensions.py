"""The standard's ``linalg``, ``fft`` and ``tensordot`` where the libraries answer otherwise.

array_api_compat hands most of the two extensions to NumPy's or CuPy's functions as they
are. Where those take what the standard refuses, answer what it does not, or differ between
NumPy and CuPy, the function of :mod:`.delegated`'s submodule is wrapped here, so that every
device gives the standard's (and NumPy 2's) answer or refusal:

- ``linalg.pinv`` of integers computes in float64, as every other ``linalg`` function does
  (array_api_compat's default ``rtol`` asked ``finfo`` of the integer dtype);
- ``linalg.matrix_rank`` of empty matrices is 0 (no singular value to take a tolerance from);
- ``linalg.outer`` takes vectors, ``linalg.cross`` 3-element ones (the libraries flatten,
  and take 2-element vectors);
- ``linalg.qr`` takes the standard's two modes (the libraries' others return other things);
- ``linalg.solve`` broadcasts the stacks (CuPy 14.2's asks for equal ones);
- ``fft``'s n-d transforms read ``s`` without ``axes`` as the last ``len(s)`` axes and an
  ``s[i]`` of -1 as the whole axis (NumPy 2 warns at the first, CuPy drops an element at the
  second);
- ``fft``'s 1-d transforms refuse an ``axis`` that ``x`` lacks (a 0-d ``x`` included) with
  NumPy's AxisError naming it (the libraries raised a bare IndexError);
- ``fft``'s n-d transforms refuse so an axis of ``axes`` that ``x`` lacks, and an axis named
  twice (the standard leaves it unspecified; with ``s`` NumPy and CuPy answer apart);
- ``fft.fftn`` and ``ifftn`` over no axis (a 0-d ``x``, ``axes=()``) give ``x`` as the
  complex dtype they give over an axis (the libraries gave it back real), and ``rfftn`` and
  ``irfftn``, whose last axis is the half spectrum, refuse it (ValueError, not IndexError);
- ``fft.fftfreq`` and ``rfftfreq`` take an integer ``n`` of at least 1, a ``d`` other than 0
  and a real floating-point ``dtype`` (NumPy divided by zero, CuPy answered an empty array or
  inf, a negative ``n`` gave ``rfftfreq`` an empty array, an integer dtype truncated);
- ``tensordot`` refuses ``axes`` that are no count or pairs of ``x1``'s and ``x2``'s axes
  (NumPy reads a negative count as a product over no axis and raises IndexError for a count
  past an array's dimensions).

>>> import infini_cupy as xp
>>> x = xp.zeros((2, 0, 3), device="cpu")
>>> xp.linalg.matrix_rank(x)
Array([0, 0], device='cpu')
"""

from __future__ import annotations

import contextlib
import operator

import numpy as np

from .. import dtypes
from ..elementwise.trace import is_traced


def _pinv_of_floats(pinv, **_):
    def of_floats(x, /, *, rtol=None):
        if getattr(x, "dtype", None) is not None and x.dtype.kind in "biu":
            # in float64, as NumPy's pinv and every other linalg function here (the default
            # rtol is of the dtype's eps: array_api_compat's finfo(int64) raised ValueError)
            x = x.astype(np.float64)
        return pinv(x, rtol=rtol)

    return of_floats


def _matrix_rank_of_empty(matrix_rank, *, count_nonzero, svdvals, **_):
    def of_empty(x, /, *, rtol=None):
        shape = getattr(x, "shape", None)
        if shape is not None and len(shape) >= 2 and 0 in shape[-2:] and not is_traced(x):
            # no singular value: rank 0, NumPy's answer (array_api_compat's tolerance takes
            # the largest one: ValueError for a reduction over none); count_nonzero's dtype
            # as for every other x
            return count_nonzero(svdvals(x), axis=-1)
        return matrix_rank(x, rtol=rtol)

    return of_empty


def _outer_of_vectors(outer, **_):
    def of_vectors(x1, x2, /):
        ndims = (getattr(x1, "ndim", None), getattr(x2, "ndim", None))
        if any(n not in (1, None) for n in ndims):
            # the standard's (and numpy.linalg.outer's) vectors: array_api_compat's is the
            # library's outer, which flattens any array
            raise ValueError(f"linalg.outer: x1 and x2 are one-dimensional, got shapes "
                             f"{getattr(x1, 'shape', None)} and {getattr(x2, 'shape', None)}")
        return outer(x1, x2)

    return of_vectors


def _cross_of_3_vectors(cross, **_):
    def of_3_vectors(x1, x2, /, *, axis=-1):
        shapes = (getattr(x1, "shape", None), getattr(x2, "shape", None))
        if any(s is not None and type(axis) is int and -len(s) <= axis < len(s)
               and s[axis] != 3 for s in shapes):
            # the standard's (and numpy.linalg.cross's) 3-element vectors: the library's
            # cross takes 2-element ones too (NumPy's with a DeprecationWarning)
            raise ValueError(f"linalg.cross: x1 and x2 hold 3-element vectors along axis "
                             f"{axis}, got shapes {shapes[0]} and {shapes[1]}")
        return cross(x1, x2, axis=axis)

    return of_3_vectors


def _qr_of_the_standard(qr, **_):
    def of_the_standard(x, /, *, mode="reduced"):
        if mode not in ("reduced", "complete"):
            # the library's other modes give R alone ("r": a TypeError making QRResult) or
            # (h, tau) ("raw": taken as (Q, R))
            raise ValueError(f"linalg.qr: mode is 'reduced' or 'complete', got {mode!r}")
        return qr(x, mode=mode)

    return of_the_standard


def _solve_of_broadcast_stacks(solve, *, broadcast_to, **_):
    def of_broadcast_stacks(x1, x2, /):
        shapes = (getattr(x1, "shape", None), getattr(x2, "shape", None))
        if (all(s is not None and len(s) >= 2 for s in shapes)
                and shapes[0][:-2] != shapes[1][:-2]):
            # the standard's (and NumPy's) stacks broadcast; CuPy 14.2's solve asks for
            # equal ones (ValueError): both given the broadcast stacks, as views
            try:
                stack = np.broadcast_shapes(shapes[0][:-2], shapes[1][:-2])
            except ValueError:
                raise ValueError(f"linalg.solve: the stacks of x1 {shapes[0]} and x2 "
                                 f"{shapes[1]} do not broadcast") from None
            x1 = broadcast_to(x1, stack + shapes[0][-2:])
            x2 = broadcast_to(x2, stack + shapes[1][-2:])
        return solve(x1, x2)

    return of_broadcast_stacks


def _axes_of_s(transform, **_):
    """An n-d transform given ``s`` and no ``axes`` runs over the last ``len(s)`` axes, as
    CuPy's does: NumPy 2 reads the call so too but warns (DeprecationWarning, an error to
    come), and SciPy's ``scipy.fft.rfftn(x, s=...)`` passes ``axes=None``. An ``s[i]`` of -1,
    the standard's whole axis, goes to the library as that axis' length, as NumPy reads it:
    CuPy's ``_cook_shape`` takes -1 for a length (a slice to -1, the last element dropped,
    silently). The axes are checked first (:func:`_fft_axes`); over none, ``fftn`` and
    ``ifftn`` are ``x`` itself, complex, and ``rfftn`` and ``irfftn`` have no last axis to
    halve or extend."""
    name = transform.__name__

    def with_axes(x, /, *, s=None, axes=None, norm="backward"):
        shape = getattr(x, "shape", None)
        if s is not None and axes is None:
            if shape is not None and len(s) > len(shape):
                raise ValueError(f"fft.{name}: s={tuple(s)} names {len(s)} axes, x of shape "
                                 f"{shape} has {len(shape)}")
            axes = tuple(range(-len(s), 0))
        elif axes is not None and not isinstance(axes, (str, bytes)):
            with contextlib.suppress(TypeError):  # any sequence (a range, an array), read once
                axes = tuple(axes)
        resolved = None if shape is None else _fft_axes(name, axes, shape)
        if resolved == () and not s:  # (lengths for no axis: the library's error)
            if name in ("rfftn", "irfftn"):
                raise ValueError(f"fft.{name}: no axis to transform (x of shape {shape}, "
                                 f"axes={axes!r}); its last axis is the half spectrum")
            # the transform over no axis is x, but complex (the libraries gave x back): over
            # an added axis of length 1, whose transform is the identity, in the library's
            # dtype for x's and with its check of norm
            return transform(x[..., None], axes=(-1,), norm=norm)[..., 0]
        if s is not None and -1 in s and resolved is not None and len(s) == len(resolved):
            # (other lengths: the library's error)
            s = tuple(shape[a] if n == -1 else n for n, a in zip(s, resolved))
        return transform(x, s=s, axes=axes, norm=norm)

    return with_axes


def _fft_axes(name: str, axes, shape: tuple) -> tuple:
    """The axes of ``x`` (of ``shape``) that ``axes`` names, from 0: every one for None; a
    TypeError for what is no tuple of integers (an int, a str). NumPy's AxisError naming the
    call for an axis ``x`` lacks (NumPy and CuPy raised a bare IndexError); ValueError for one
    named twice, which the standard leaves unspecified: NumPy transforms it again, CuPy pads or
    cuts it to every ``s[i]`` first (another shape), SciPy's ``scipy.fft`` refuses it."""
    ndim = len(shape)
    if axes is None:
        return tuple(range(ndim))
    if not isinstance(axes, tuple):  # (an int: NumPy's "object is not iterable")
        raise TypeError(f"fft.{name}: axes must be a sequence of integers, got "
                        f"{type(axes).__name__} {axes!r}")
    resolved = []
    for a in axes:
        a = _checked_axis(a, ndim, f"fft.{name}: the axes", f"fft.{name} of shape {shape}")
        if a % ndim in resolved:
            raise ValueError(f"fft.{name}: axes={tuple(axes)} names axis {a % ndim} of x of "
                             f"shape {shape} twice")
        resolved.append(a % ndim)
    return tuple(resolved)


def _axis_of_x(transform, **_):
    """A 1-d transform along an ``axis`` that ``x`` has; NumPy's AxisError naming the call
    otherwise (NumPy and CuPy raise ``IndexError: tuple index out of range``, a 0-d ``x``
    too)."""
    name = transform.__name__

    def along_axis(x, /, *, n=None, axis=-1, norm="backward"):
        shape = getattr(x, "shape", None)
        if shape is not None and type(axis) is int and not -len(shape) <= axis < len(shape):
            raise np.exceptions.AxisError(axis, len(shape), f"fft.{name} of shape {shape}")
        return transform(x, n=n, axis=axis, norm=norm)

    return along_axis


def _frequencies_checked(frequencies, **_):
    """``fftfreq``'s or ``rfftfreq``'s ``k / (d * n)`` for the standard's arguments alone,
    refused alike on every device: an integer ``n`` of at least 1 (NumPy divided by zero for
    0, its ``rfftfreq`` and CuPy gave an empty array for a negative one), a ``d`` other than
    0 (NumPy's ZeroDivisionError, CuPy's inf) and a real floating-point ``dtype`` (the
    libraries cast to any: int64 frequencies truncated to 0)."""
    name = frequencies.__name__

    def checked(n, /, *, d=1.0, dtype=None, device=None):
        try:
            count = None if type(n) is bool else operator.index(n)
        except TypeError:
            count = None
        if count is None:
            raise TypeError(f"fft.{name}: n must be an integer, got {type(n).__name__} {n!r}")
        if count < 1:
            raise ValueError(f"fft.{name}: n must be a positive integer, got {count}")
        spacing = d if isinstance(d, (int, float, np.number)) else (
            float(d) if getattr(d, "shape", None) == () and not is_traced(d) else None)
        if spacing is not None and spacing == 0:  # (a 0-d array's value read from its device)
            raise ValueError(f"fft.{name}: d must not be 0 (the frequencies are k / (d * n)), "
                             f"got {d!r}")
        held = None if dtype is None else dtypes.dtype_or_none(dtype)
        if held in dtypes.DTYPE_TABLE and not dtypes.is_in(held, "real floating-point"):
            raise ValueError(f"fft.{name}: dtype must be a real floating-point dtype, got "
                             f"{held}")
        return frequencies(count, d=d, dtype=dtype, device=device)

    return checked


def tensordot_of_the_standard(tensordot):
    """``tensordot`` given the standard's ``axes``: a count from 0 to the arrays' dimensions,
    or two sequences of as many axes of ``x1`` and of ``x2``. Others are refused naming the
    shapes, on every device (NumPy took ``axes=-1`` for a product over no axis, and raised
    a bare IndexError for a count past the dimensions or an axis out of range)."""

    def with_axes_checked(x1, x2, /, *, axes=2):
        shapes = (getattr(x1, "shape", None), getattr(x2, "shape", None))
        if None not in shapes and not is_traced(x1, x2):
            _check_tensordot_axes(axes, *shapes)
        return tensordot(x1, x2, axes=axes)

    return with_axes_checked


def _check_tensordot_axes(axes, shape1: tuple, shape2: tuple) -> None:
    try:
        count = operator.index(axes)
    except TypeError:
        count = None
    if count is not None:
        if not 0 <= count <= min(len(shape1), len(shape2)):
            raise ValueError(f"tensordot: axes={count} must be from 0 to the dimensions of x1 "
                             f"{shape1} and x2 {shape2}")
        return
    if not (isinstance(axes, (tuple, list)) and len(axes) == 2
            and all(isinstance(a, (tuple, list)) for a in axes)):
        return  # the library's own error (an int-like pair: NumPy's reading)
    if len(axes[0]) != len(axes[1]):
        raise ValueError(f"tensordot: axes={axes!r} names {len(axes[0])} axes of x1 "
                         f"{shape1} and {len(axes[1])} of x2 {shape2}")
    for which, named, shape in (("x1", axes[0], shape1), ("x2", axes[1], shape2)):
        for a in named:
            _checked_axis(a, len(shape), f"tensordot: the axes of {which}",
                          f"tensordot: {which} of shape {shape}")


def _checked_axis(axis, ndim: int, named: str, where: str) -> int:
    """``axis`` as an int, one of an array of ``ndim`` dimensions: a TypeError saying that
    ``named`` are integers, or NumPy's AxisError naming ``where``, otherwise."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"{named} are integers, got {type(axis).__name__} {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim, where)
    return axis


_LINALG_RULES = {"pinv": _pinv_of_floats, "matrix_rank": _matrix_rank_of_empty,
                 "outer": _outer_of_vectors, "cross": _cross_of_3_vectors,
                 "qr": _qr_of_the_standard, "solve": _solve_of_broadcast_stacks}
_FFT_RULES = {**dict.fromkeys(("fftn", "ifftn", "rfftn", "irfftn"), _axes_of_s),
              **dict.fromkeys(("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"), _axis_of_x),
              **dict.fromkeys(("fftfreq", "rfftfreq"), _frequencies_checked)}


def hold_to_the_standard(linalg, fft, *, named, count_nonzero, broadcast_to) -> None:
    """Wrap the functions of the ``linalg`` and ``fft`` submodules that answer otherwise
    than the standard, each under its own name and docstring (``named``); ``count_nonzero``
    and ``broadcast_to`` are the namespace's, for the wrappers that need them."""
    helpers = {"count_nonzero": count_nonzero, "broadcast_to": broadcast_to,
               "svdvals": linalg.svdvals}
    for module, rules in ((linalg, _LINALG_RULES), (fft, _FFT_RULES)):
        for name, rule in rules.items():
            library = getattr(module, name)
            setattr(module, name, named(rule(library, **helpers), name, library.__doc__))
