"""The ``numpy`` backend of the elementwise functions (the ``cpu`` device): NumPy computes the
loop :mod:`.resolution` chose, under the rules every device obeys.

What it adds to the bare ufunc call, so that ``cpu`` answers as the kernels do:

- the call is resolved first: what the kernels refuse, ``cpu`` refuses with the same
  TypeError; array operands of another dtype are cast to the loop dtype (as the cast kernel
  does), Python scalars stay weak;
- floating-point warnings are silent (``np.errstate(all="ignore")``), as on the GPU and in
  CuPy;
- the standard's special-case values where NumPy deviates: ``floor_divide`` with one
  infinite operand (``inf // 2`` is ``inf``, ``-1 // inf`` is ``-0``; bfloat16 too),
  ``nextafter(x, x)`` is ``x2`` (float16: signed zeros), bfloat16's ``sign(-0)`` is ``+0``,
  ``maximum``/``minimum`` order ``-0`` below ``+0`` (the standard leaves it open; the kernels'
  order), complex ``expm1``
  with an infinite real part or a zero imaginary part, complex ``tanh`` at infinite real
  parts, complex ``sign`` with a NaN part, ``pow(x, 0.5)`` at ``-inf`` and ``-0`` (NumPy's
  square root for a scalar 0.5 gives NaN and ``-0``);
- where the standard leaves a sign open, or NumPy's complex loops round otherwise, the
  kernels' answer (``_SPECIAL_LOOPS``): complex ``exp``, ``sin``, ``sinh``, ``tan``, ``asin``
  and ``atan`` at infinite parts, complex ``square`` (its real part as ``(re - im)(re +
  im)``) and ``reciprocal`` (as ``divide(1, x)``);
- integer ``pow`` with a negative exponent gives what the kernels give (0, or 1 and -1 for
  bases 1 and -1) rather than NumPy's ValueError: a GPU cannot raise per element without a
  host synchronization; integer ``reciprocal`` of 0 is 0, as every integer division by zero
  in the kernels (NumPy's 32- and 64-bit loops give the minimum integer);
- ``out=``: read-only refused naming the function; another dtype takes the result by
  NumPy's ``same_kind`` casting, as on the other devices.

>>> import numpy as np
>>> call("sqrt", (np.arange(3, dtype=np.int8),), None)
array([0.   , 1.   , 1.414], dtype=float16)
>>> call("pow", (np.array([2, 1, -1]), -1), None)
array([ 0,  1, -1])
"""

from __future__ import annotations

import math
import numpy as np

from ..arrays import is_writeable
from ..dtypes import is_bfloat16, scalar_value
from ..strided.layout import overlaps_itself
from .resolution import operand_type, resolve
from .ops import OPS
from .plan import broadcast_shapes

_PYTHON_SCALARS = (bool, int, float, complex)

try:  # np.errstate(all="ignore") without its cost per call (about 1 us): NumPy 2's context
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj

    _IGNORE_ALL = _make_extobj(all="ignore")
    ERRSTATE = (_extobj_contextvar, _IGNORE_ALL)  # what runtime/cpu_calls.c sets, as silence

    def silence():
        return _extobj_contextvar.set(_IGNORE_ALL)

    restore = _extobj_contextvar.reset
except ImportError:  # pragma: no cover - another NumPy's layout: the public context manager
    ERRSTATE = None  # and no compiled repeats

    def silence():
        state = np.errstate(all="ignore")
        state.__enter__()
        return state

    def restore(state):
        state.__exit__(None, None, None)


def check_out(name: str, out, result_dtype) -> None:
    """ValueError for a read-only ``out=`` or one whose elements share memory, TypeError for
    one the result cannot be cast into (``same_kind``, NumPy's default for ``out=``): the rule
    of every device (NumPy would write an overlapping ``out`` in its own order; a kernel's
    threads would race)."""
    if not is_writeable(out):
        raise ValueError(f"{name}(): out (shape {tuple(out.shape)}, strides {out.strides}) is "
                         "read-only (a broadcast_to view or a read-only buffer): give a "
                         "writeable array")
    if overlaps_itself(out):
        raise ValueError(f"{name}(): out overlaps itself (shape {tuple(out.shape)}, strides "
                         f"{out.strides}): elements share memory; give an array whose "
                         "elements are distinct")
    if out.dtype != result_dtype and not np.can_cast(result_dtype, out.dtype, "same_kind"):
        raise TypeError(f"{name}(): the result of dtype {result_dtype} cannot be cast into out "
                        f"of dtype {out.dtype} (same_kind casting)")


def check_out_shape(name: str, args, out) -> None:
    """ValueError unless ``out`` has the result's shape: NumPy would broadcast the operands
    up to a bigger ``out=`` (``add(x, 1, out=o)`` of ``x`` (3,) and ``o`` (2, 3)), which the
    kernels of every other device refuse."""
    shapes = [a.shape for a in args if type(a) not in _PYTHON_SCALARS]
    if all(s == out.shape for s in shapes):
        return
    shape = broadcast_shapes(name, *shapes)
    if shape != out.shape:
        raise ValueError(f"{name}(): out has shape {out.shape}, the result has shape {shape}")


def _types(args) -> tuple:
    """``resolve``'s key of ``args``, spelled out for one and two operands (a comprehension
    costs a frame: about 0.5 us of a 3 us call)."""
    if len(args) == 2:
        a, b = args
        return (a.dtype if type(a) is np.ndarray else operand_type(a),
                b.dtype if type(b) is np.ndarray else operand_type(b))
    if len(args) == 1:
        a = args[0]
        return (a.dtype if type(a) is np.ndarray else operand_type(a),)
    return tuple(map(operand_type, args))


# The cpu device's repeats, learnt by `call`: under (name, each operand's dtype, or a Python
# scalar's type), what answers as `call` does for those types: NumPy's bare ufunc where it
# gives the loop's dtype with no cast of ours, else `call`'s own computation for that loop
# (`_computed`: the standard's special cases, the result's dtype fixed). `plain_calls_into`
# adds out's dtype last, for `out=`. Types alone decide `call`'s way (values never do), so a
# repeat of the same types may skip resolving: namespace/boundary.py's hot path does, and
# runtime/cpu_calls.c. Operands cast first (bfloat16, 64-bit integers beside a float loop)
# are not learnt.
plain_calls: dict = {}
plain_calls_into: dict = {}


def _plain_key(name: str, args, out) -> tuple | None:
    """The key `call` learns ``args`` under, or None for operands no repeat takes (NumPy
    scalars, array subclasses)."""
    key = [name]
    for a in (*args, *(() if out is None else (out,))):
        kind = type(a)
        if kind is np.ndarray:
            key.append(a.dtype)
        elif kind in _PYTHON_SCALARS:
            key.append(kind)
        else:
            return None
    return tuple(key)


def call(name: str, args, out):
    """``name(*args, out=out)`` on NumPy arrays and scalars, by the rules of every device."""
    loop = resolve(name, _types(args))
    dtype = loop.dtype
    repeatable = name != "clip"  # clip: bounds by keyword (elementwise_functions.clip)
    for a in args:
        # Operands of another dtype: NumPy casts them to the same loop itself, except where
        # its loop is not ours (bfloat16, which NumPy does not promote; int64 with uint64,
        # compared exactly by NumPy, in float64 by the kernels): cast here as they are.
        if type(a) not in _PYTHON_SCALARS and a.dtype != dtype and (
                "V" in (dtype.kind, a.dtype.kind)
                or (dtype.kind == "f" and a.dtype.kind in "iu" and a.dtype.itemsize == 8)):
            args = tuple(a if type(a) in _PYTHON_SCALARS or a.dtype == dtype
                         else a.astype(dtype) for a in args)
            repeatable = False  # a cast of our own: `call` itself at every repeat
            break
    if out is not None:
        # A Python int out of the loop's range is NumPy's (and the kernels') OverflowError
        # before out is looked at: `x += 300` of int8 x into itself, out of another dtype
        _check_python_ints(args, dtype)
        check_out_shape(name, args, out)
        check_out(name, out, loop.result)
    elif len(args) > 1:
        check_broadcast(name, [a.shape for a in args if type(a) not in _PYTHON_SCALARS])
    # None: a special case (_SPECIAL, _SPECIAL_LOOPS) or clip
    ufunc = _UFUNCS.get(name) if _special(name, loop) is None else None
    token = silence()
    try:
        if out is not None:
            if ufunc is not None:  # NumPy writes into out itself (same_kind, as checked)
                ufunc(*args, out=out)
            else:
                np.copyto(out, _compute(name, args, loop), casting="same_kind")
            if repeatable:
                _learn(plain_calls_into, _plain_key(name, args, out),
                       lambda: ufunc or _computed(name, loop))
            return out
        result = _compute(name, args, loop)
    except OverflowError:
        # NumPy's "Python int too large to convert to C long" for an int past 64 bits: the
        # kernels' message, naming the value and the dtype
        _check_python_ints(args, dtype)
        raise
    finally:
        restore(token)
    if type(result) is not np.ndarray:
        result = np.asarray(result)
    bare = ufunc is not None and result.dtype == loop.result
    if result.dtype != loop.result:
        result = result.astype(loop.result)
    if repeatable:
        _learn(plain_calls, _plain_key(name, args, None),
               lambda: ufunc if bare else _computed(name, loop))
    return result


def _check_python_ints(args, dtype) -> None:
    """The kernels' OverflowError for a Python int operand out of ``dtype``'s range."""
    for a in args:
        if type(a) is int:
            scalar_value(a, dtype)


def check_broadcast(name: str, shapes: list) -> None:
    """Shapes that do not broadcast: the kernels' ValueError (``plan.broadcast_shapes``),
    not NumPy's own message."""
    if any(s != shapes[0] for s in shapes):
        broadcast_shapes(name, *shapes)


def _learn(table: dict, key, answer) -> None:
    """``table[key] = answer()`` for a key not yet there (None: nothing to learn)."""
    if key is not None and key not in table:
        table[key] = answer()


def _computed(name: str, loop):
    """`call`'s computation of ``loop`` (no resolving): what a repeat calls where NumPy's bare
    ufunc is not the answer (a special case, or NumPy's result dtype not the loop's)."""

    def computed(*args, out=None):
        result = _compute(name, args, loop)
        if out is not None:
            np.copyto(out, result, casting="same_kind")
            return out
        if type(result) is not np.ndarray:
            result = np.asarray(result)
        return result if result.dtype == loop.result else result.astype(loop.result)

    computed.__name__ = computed.__qualname__ = f"{name}_computed"
    return computed


def repeat(key: tuple, args):
    """What `call` gives for ``args`` (no ``out=``) when `plain_calls` holds ``key``, their
    types (:func:`_plain_key`'s); None when it does not.

    >>> a = np.arange(3.0)
    >>> _ = call("negative", (a,), None)  # learnt: float64 negative is NumPy's own
    >>> repeat(("negative", a.dtype), (a,))
    array([-0., -1., -2.])
    """
    answer = plain_calls.get(key)
    if answer is None:
        return None
    token = silence()
    try:
        result = answer(*args)
    except (ValueError, OverflowError):  # shapes, a Python int out of range: `call` raises
        return None  # it in the kernels' words, as runtime/cpu_calls.c leaves it to `call`
    finally:
        restore(token)
    return result if type(result) is np.ndarray else np.asarray(result)


def repeat_into(key: tuple, args, out) -> bool:
    """`call` into ``out`` (a writeable NumPy array; ``key`` ends with its dtype) when
    `plain_calls_into` holds ``key``: True, written; False, nothing done."""
    answer = plain_calls_into.get(key)
    if answer is None or not is_writeable(out) or overlaps_itself(out):
        return False  # call raises, naming the function
    try:
        check_out_shape("", args, out)
    except ValueError:
        return False  # call raises, naming the function
    token = silence()
    try:
        answer(*args, out=out)
    except (ValueError, OverflowError):  # a Python int out of range: NumPy checks it before
        return False  # writing; `call` raises it in the kernels' words, as `repeat` leaves it
    finally:
        restore(token)
    return True


def _compute(name, args, loop):
    special = _special(name, loop)
    if special is not None:
        return special(args, loop)
    return _UFUNCS[name](*args)


def _real(args, loop):
    (x,) = args
    return np.real(x).copy() if x.dtype.kind == "c" else x.copy()


def _imag(args, loop):
    (x,) = args
    return np.imag(x).copy() if x.dtype.kind == "c" else np.zeros_like(x)


def _round(args, loop):
    (x,) = args
    return x.copy() if x.dtype.kind in "iu" else np.rint(x)


def _pow(args, loop):
    try:
        result = np.power(*args)
    except ValueError:  # an integer to a negative integer power: the kernels' answer
        base, exponent = (np.asarray(a, loop.dtype) for a in args)
        negative = exponent < 0
        result = np.power(base, np.where(negative, 0, exponent))
        odd = (exponent & 1).astype(bool)
        at_negative = np.where(base == 1, 1, np.where(base == -1, np.where(odd, -1, 1), 0))
        return np.where(negative, at_negative, result).astype(loop.dtype)
    base, exponent = args
    if loop.dtype.kind == "f" and np.ndim(exponent) == 0 and exponent == 0.5:
        # NumPy takes the square root for a scalar 0.5: NaN at -inf and -0 at -0, where the
        # standard's pow (and the kernels') gives +inf and +0
        at_minus_inf = np.isneginf(base)
        if at_minus_inf.any() or not result.all():
            result = np.where(at_minus_inf, np.inf, result + 0.0).astype(result.dtype)
    return result


def _reciprocal(args, loop):
    """Integer ``1 / x`` truncated, 0 at ``x == 0`` as every integer division by zero in the
    kernels (NumPy's 32- and 64-bit loops give the minimum integer there, its 8-bit loop 0);
    complex ``1 / x`` as ``divide`` computes it, as the kernels do (NumPy's reciprocal
    differs in signed zeros, and gives NaN for ``1 / 0``: the division gives ``inf + nan j``)."""
    (x,) = args
    if x.dtype.kind == "c":
        return np.divide(1, x)
    result = np.reciprocal(x)
    if result.dtype.kind not in "iu":
        return result
    zero = x == 0
    return np.where(zero, np.zeros((), result.dtype), result) if zero.any() else result


def _square(args, loop):
    """Complex ``x * x`` as the kernels compute it: the real part ``(re - im)(re + im)``,
    exact where ``re = +-im`` (NumPy's fused ``re*re - im*im`` leaves a rounding error, or
    ``-inf`` once ``im*im`` overflows), the imaginary part ``(re + re) im``; where a sum
    overflows for finite parts, the kernels' limits (``(re im) 2``, a real part of 0)."""
    (x,) = args
    re, im = x.real, x.imag
    big = np.abs(re) > np.finfo(re.dtype).max / 2  # re + re would overflow: (re im) 2
    imag = np.where(big, np.multiply(np.multiply(re, im), 2), np.multiply(np.add(re, re), im))
    d, s = np.subtract(re, im), np.add(re, im)
    finite = np.isfinite(re) & np.isfinite(im)  # re = +-im finite: the real part is 0
    s = np.where(finite & (d == 0) & np.isinf(s), np.copysign(1, s), s)
    d = np.where(finite & (s == 0) & np.isinf(d), np.copysign(1, d), d)
    return _complex(np.multiply(d, s), imag, x.dtype)


def _where_complex(result, mask, re, im):
    """``result`` with ``re + im j`` where ``mask`` holds (parts as given: signed zeros and
    infinities kept), ``result`` itself where it holds nowhere."""
    if not mask.any():
        return result
    return np.where(mask, _complex(re, im, result.dtype), result)


def _exp(args, loop):
    """Complex ``exp(-inf + y j)`` with ``y`` infinite or NaN is ``+0 + 0j`` (the standard
    leaves the signs open; the kernels'; NumPy: ``+0 - 0j`` for ``y = -inf``)."""
    (x,) = args
    result = np.exp(x)
    return _where_complex(result, np.isneginf(x.real) & ~np.isfinite(x.imag), 0.0, 0.0)


def _tan(args, loop):
    """Complex ``tan(x +- inf j)`` is ``+-0 +- 1j``, the zero with the sign of ``x`` (``-i
    tanh(i z)`` with the standard's ``tanh(+inf + y j) = 1 + 0j``, odd; NumPy: ``+0``)."""
    (x,) = args
    result = np.tan(x)
    return _where_complex(result, np.isinf(x.imag), np.copysign(0.0, x.real),
                          np.copysign(1.0, x.imag))


def _atan(args, loop):
    """Complex ``atan(+-inf + nan j)`` is ``+-pi/2 - 0j`` (``-i atanh(i z)``, atanh's real
    part ``+0`` where the standard leaves its sign open; NumPy: ``+0j``)."""
    (x,) = args
    result = np.arctan(x)
    return _where_complex(result, np.isinf(x.real) & np.isnan(x.imag), result.real, -0.0)


def _sinh(args, loop):
    """Complex ``sinh(+-inf + y j)`` with ``y`` infinite or NaN is ``+-inf + nan j``, the sign
    of the real part kept (the standard leaves it open; the kernels', sinh being odd; NumPy:
    ``+inf``)."""
    (x,) = args
    result = np.sinh(x)
    return _where_complex(result, np.isinf(x.real) & ~np.isfinite(x.imag), x.real, np.nan)


def _sin(args, loop):
    """Complex ``sin(x +- inf j)`` with ``x`` infinite or NaN is ``nan +- inf j`` (``-i
    sinh(i z)`` with the kernels' sinh; NumPy: ``+inf j``)."""
    (x,) = args
    result = np.sin(x)
    return _where_complex(result, np.isinf(x.imag) & ~np.isfinite(x.real), np.nan, x.imag)


def _asin(args, loop):
    """Complex ``asin(+-inf + nan j)`` is ``nan - inf j`` (``-i asinh(i z)``, asinh's real
    part ``+inf`` where the standard leaves its sign open; NumPy: ``+inf j``)."""
    (x,) = args
    result = np.arcsin(x)
    return _where_complex(result, np.isinf(x.real) & np.isnan(x.imag), np.nan, -np.inf)


def _floor_divide(args, loop):
    result = np.floor_divide(*args)
    if result.dtype.kind != "f" and not is_bfloat16(result.dtype):
        return result
    a, b = (np.asarray(v, result.dtype) for v in args)
    one_infinite = np.isinf(a) != np.isinf(b)  # the standard's +-inf and +-0 (NumPy: nan, -1)
    if one_infinite.any():
        result = np.where(one_infinite, np.true_divide(a, b), result)
    return result


def _sign(args, loop):
    """bfloat16's sign of -0 is +0, as every other dtype's and the kernels' (ml_dtypes: -0);
    complex ``x`` with a NaN part is ``nan + nan j``, the standard's (NumPy 2: ``1 + 0j`` for
    ``inf + nan j``)."""
    (x,) = args
    result = np.sign(x)
    if is_bfloat16(result.dtype):
        result = np.where(x == 0, np.zeros((), result.dtype), result)
    elif x.dtype.kind == "c":
        # |x| past the largest finite value with finite parts: x / 4 first, as the kernels
        huge = np.isinf(np.abs(x)) & np.isfinite(x.real) & np.isfinite(x.imag)
        if huge.any():
            quarter = x.real.dtype.type(0.25)
            re, im = x.real * quarter, x.imag * quarter
            m = np.hypot(re, im)
            result = np.where(huge, _complex(re / m, im / m, x.dtype), result)
        result = _where_complex(result, np.isnan(x.real) | np.isnan(x.imag), np.nan, np.nan)
    return result


def _nextafter(args, loop):
    """Where ``x1 == x2`` the result is ``x2`` (the standard; NumPy's float16 gives ``x1``:
    ``nextafter(0, -0)`` is +0 there, -0 here and in the kernels)."""
    a, b = (np.asarray(v, loop.dtype) for v in args)
    result = np.nextafter(a, b)
    equal = a == b
    return np.where(equal, b, result) if equal.any() else result


def _extremum(ufunc, negative_wins: bool):
    """``maximum``/``minimum`` with +0 larger than -0 (the kernels' order, IEEE 754-2019's;
    the standard leaves it to the library). NumPy's answer is right but where both operands
    are zeros (it may return either): there the sum of the two is, for ``maximum`` (+0 unless
    both are -0), and the negated sum of the negated ones for ``minimum``. ``maximum`` with a
    Python ``+0`` (a ReLU) adds ``+0`` to NumPy's answer; otherwise zeros are looked for among
    the operands, and paid for only where each has some."""

    def extremum(args, loop):
        result = ufunc(*args)
        if result.dtype.kind != "f" and not is_bfloat16(result.dtype):
            return result
        if not negative_wins and result.dtype.kind == "f":
            for v in args:  # maximum(x, +0.0), a ReLU: where both are zeros the sum is +0,
                # and +0 added leaves any other value as it is
                if type(v) in _PYTHON_SCALARS and v == 0 and math.copysign(1.0, v) > 0:
                    return np.add(result, 0.0, out=result if type(result) is np.ndarray else None)
        for v in args:  # an operand without zeros: no place where both are
            # (a Python scalar as the result dtype holds it: -1e-300 is a zero in float32)
            if (result.dtype.type(v) != 0 if type(v) in _PYTHON_SCALARS
                    else np.count_nonzero(v) == v.size):
                return result
        a, b = (np.asarray(v, result.dtype) for v in args)  # a bool operand: no negative
        both = np.logical_and(np.equal(a, 0), np.equal(b, 0))
        if negative_wins:
            zeros = np.negative(np.add(np.negative(a), np.negative(b)))
        else:
            zeros = np.add(a, b)
        return np.where(both, zeros.astype(result.dtype, copy=False), result)

    return extremum


def _complex(re, im, dtype):
    """A complex array from its parts, signed zeros kept (complex arithmetic loses them)."""
    out = np.empty(np.broadcast(re, im).shape, dtype)
    out.real, out.imag = re, im
    return out


def _expm1(args, loop):
    """The kernels' cases (complex_math.cuh ``cexpm1``) where NumPy's differ: a zero
    imaginary part (``expm1`` of the real part, ``+0`` at zero), an infinite real part."""
    (x,) = args
    result = np.expm1(x)
    if x.dtype.kind != "c":
        return result
    re, im = x.real, x.imag
    zero_im, inf_re = im == 0, np.isinf(re)
    if not (zero_im.any() or inf_re.any()):
        return result
    finite_im = np.isfinite(im)
    # -inf real part: -1 + (+0 cis y); +inf with a non-finite y: inf + nan j
    inf_re_part = np.where(re > 0, re, -1)
    inf_im_part = np.where(re > 0, np.nan, np.where(finite_im, np.copysign(0, np.sin(im)), 0))
    at_inf = np.where((re > 0) & finite_im, result,
                      _complex(inf_re_part, inf_im_part, x.dtype))
    at_zero_im = _complex(np.where(re == 0, 0, np.expm1(re)), im, x.dtype)
    return np.where(zero_im, at_zero_im, np.where(inf_re, at_inf, result))


def _tanh(args, loop):
    """tanh(+-inf + yj), y finite: +-1 with the sign of y on the zero (the standard's
    ``1 + 0j``; NumPy gives the sign of sin(2y))."""
    (x,) = args
    result = np.tanh(x)
    if x.dtype.kind == "c":
        at_inf = np.isinf(x.real) & np.isfinite(x.imag)
        if at_inf.any():
            limit = _complex(np.copysign(1, x.real), np.copysign(0, x.imag), x.dtype)
            result = np.where(at_inf, limit, result)
    return result


_SPECIAL = {"real": _real, "tanh": _tanh, "imag": _imag, "round": _round, "pow": _pow,
            "floor_divide": _floor_divide, "expm1": _expm1, "sign": _sign,
            "nextafter": _nextafter, "maximum": _extremum(np.maximum, False),
            "minimum": _extremum(np.minimum, True)}
_MAXIMUM, _MINIMUM = _SPECIAL["maximum"], _SPECIAL["minimum"]


def clip_by_extrema(x, lo, hi):
    """The kernels' clip (``OpClip``): ``minimum(maximum(x, lo), hi)``, +0 above -0. NumPy's
    clip keeps either zero where a zero meets a zero bound (``clip(-0.0, 0.0, 1.0)`` is -0.0
    there, +0.0 in the kernels); elsewhere the two agree."""
    return _MINIMUM((_MAXIMUM((x, lo), None), hi), None)


# special cases of some loops alone (by the loop dtype's kind): the others are NumPy's ufunc
_SPECIAL_LOOPS = {"reciprocal": ("iuc", _reciprocal), "square": ("c", _square),
                  "exp": ("c", _exp), "sin": ("c", _sin), "sinh": ("c", _sinh),
                  "tan": ("c", _tan), "asin": ("c", _asin), "atan": ("c", _atan)}
_UFUNCS = {name: getattr(np, op.numpy_name) for name, op in OPS.items()
           if name not in _SPECIAL and name != "clip"}


def _special(name: str, loop):
    """The special case computing ``loop`` of ``name``, or None where NumPy's ufunc does."""
    special = _SPECIAL.get(name)
    if special is None and name in _SPECIAL_LOOPS:
        kinds, special_loop = _SPECIAL_LOOPS[name]
        return special_loop if loop.dtype.kind in kinds else None
    return special
