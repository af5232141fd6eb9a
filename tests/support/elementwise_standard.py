"""The special cases of the array API standard 2024.12 for the elementwise functions, as rules
the tests check (``test_elementwise_standard.py``), transcribed from the standard's "Special
cases" sections (``src/array_api_stubs/_2024_12/elementwise_functions.py`` of data-apis/array-api).

A real rule: (function, conditions on the arguments, expected[, joint condition]); a complex
rule: (function, (condition on the real part, on the imaginary part), (expected real part,
expected imaginary part)). An expected value is a float (equal, sign of zero and infinity
included; NaN: any NaN), ``Approx`` (an implementation-dependent approximation), ``Is`` (a
named check of the result and the inputs) or a function of the inputs.

Complex rules the standard states for ``b >= 0`` extend to ``b <= 0`` by ``f(conj(z)) ==
conj(f(z))``, and odd/even functions to ``-z``; functions the standard defines "as if"
implemented through another (``asin(z) = -1j * asinh(1j * z)``, ...) get that function's rules
moved through the identity. ``derived_complex_rules`` builds those.
"""

from __future__ import annotations

import math

NAN, INF, PI = math.nan, math.inf, math.pi


class Cond:
    """A condition on one real value."""

    def __init__(self, name, fn):
        self.name, self.fn = name, fn

    def __call__(self, x) -> bool:
        return bool(self.fn(x))

    def __repr__(self):
        return self.name

    def neg(self) -> Cond:  # the condition on -x
        name = _NEGATED.get(self.name)
        if name is None:
            name = self.name if self.name in _SYMMETRIC else f"-({self.name})"
        return Cond(name, lambda x: self.fn(-x))

    def __and__(self, other) -> Cond:
        return Cond(f"{self.name}&{other.name}", lambda x: self.fn(x) and other.fn(x))


_NEGATED = {"+0": "-0", "-0": "+0", "+inf": "-inf", "-inf": "+inf", "finite>0": "finite<0",
            "finite<0": "finite>0", "==1": "==-1", "==-1": "==1"}
_SYMMETRIC = {"NaN", "±0", "±inf", "finite", "finite!=0", "any", "notNaN", "!=0", "integer",
              "finite|NaN", "|x|>1", "|x|<1", "|x|==1"}


def _sign(x) -> bool:
    return math.copysign(1.0, x) < 0


def _finite(x):
    return math.isfinite(x)


def _int(x):
    return math.isfinite(x) and x == math.floor(x)


def gt(c):
    return Cond(f">{c}", lambda x: x > c)


def lt(c):
    return Cond(f"<{c}", lambda x: x < c)


def eq(c):
    return Cond(f"=={c}", lambda x: x == c)


nan = Cond("NaN", math.isnan)
nan_pos = Cond("NaN(sign 0)", lambda x: math.isnan(x) and not _sign(x))
nan_neg = Cond("NaN(sign 1)", lambda x: math.isnan(x) and _sign(x))
not_nan = Cond("notNaN", lambda x: not math.isnan(x))
pinf = Cond("+inf", lambda x: x == INF)
ninf = Cond("-inf", lambda x: x == -INF)
inf = Cond("±inf", math.isinf)
pzero = Cond("+0", lambda x: x == 0 and not _sign(x))
nzero = Cond("-0", lambda x: x == 0 and _sign(x))
zero = Cond("±0", lambda x: x == 0)
nonzero = Cond("!=0", lambda x: x != 0)
finite = Cond("finite", _finite)
pos_finite = Cond("finite>0", lambda x: _finite(x) and x > 0)
neg_finite = Cond("finite<0", lambda x: _finite(x) and x < 0)
nonzero_finite = Cond("finite!=0", lambda x: _finite(x) and x != 0)
finite_or_nan = Cond("finite|NaN", lambda x: not math.isinf(x))
integer = Cond("integer", _int)
odd = Cond("odd", lambda x: _int(x) and x % 2 == 1)
not_odd = Cond("notodd", lambda x: not (_int(x) and x % 2 == 1))
not_int = Cond("notinteger", lambda x: not _int(x))
half = Cond("k+0.5", lambda x: _finite(x) and x - math.floor(x) == 0.5)
abs_gt1 = Cond("|x|>1", lambda x: abs(x) > 1)
abs_lt1 = Cond("|x|<1", lambda x: abs(x) < 1)
abs_eq1 = Cond("|x|==1", lambda x: abs(x) == 1)
not_one = Cond("!=1", lambda x: x != 1)
any_ = Cond("any", lambda x: True)


class Approx:
    """An implementation-dependent approximation to ``value``."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"≈{self.value:.6g}"

    def __neg__(self):
        return Approx(-self.value)


class Is:
    """A named check: ``fn(result, *inputs) -> bool``."""

    def __init__(self, name, fn):
        self.name, self.fn = name, fn

    def __repr__(self):
        return self.name


same_as_x = lambda x: x  # noqa: E731
positive_sign = Is("positive sign", lambda r, *_: not _sign(r) and not math.isnan(r))
negative_sign = Is("negative sign", lambda r, *_: _sign(r) and not math.isnan(r))
nan_sign0 = Is("NaN sign 0", lambda r, *_: math.isnan(r) and not _sign(r))
nan_sign1 = Is("NaN sign 1", lambda r, *_: math.isnan(r) and _sign(r))
any_zero = Is("±0", lambda r, *_: r == 0)
any_inf = Is("±inf", lambda r, *_: math.isinf(r))
is_nan = Is("NaN", lambda r, *_: math.isnan(r))
signed_inf = Is("inf, sign of x1*x2", lambda r, a, b: math.isinf(r) and _sign(r) == (_sign(a) != _sign(b)))
even_neighbour = Is("even of the two nearest", lambda r, x: r % 2 == 0 and abs(r - x) == 0.5)
python_mod = Is("Python %", lambda r, a, b: math.isclose(r, a % b, rel_tol=1e-3, abs_tol=1e-3 * abs(b)))


def _same_sign(a, b):
    return _sign(a) == _sign(b)


# ---------------------------------------------------------------- real, one argument
_ROUNDING = [(integer, same_as_x), (pinf, INF), (ninf, -INF), (pzero, 0.0), (nzero, -0.0), (nan, NAN)]
_LOGS = [(nan, NAN), (lt(0), NAN), (zero, -INF), (eq(1), 0.0), (pinf, INF)]
_R1 = {
    "abs": [(nan, NAN), (nzero, 0.0), (ninf, INF)],
    "acos": [(nan, NAN), (gt(1), NAN), (lt(-1), NAN), (eq(1), 0.0)],
    "acosh": [(nan, NAN), (lt(1), NAN), (eq(1), 0.0), (pinf, INF)],
    "asin": [(nan, NAN), (gt(1), NAN), (lt(-1), NAN), (pzero, 0.0), (nzero, -0.0)],
    "asinh": [(nan, NAN), (pzero, 0.0), (nzero, -0.0), (pinf, INF), (ninf, -INF)],
    "atan": [(nan, NAN), (pzero, 0.0), (nzero, -0.0), (pinf, Approx(PI / 2)), (ninf, Approx(-PI / 2))],
    "atanh": [(nan, NAN), (lt(-1), NAN), (gt(1), NAN), (eq(-1), -INF), (eq(1), INF), (pzero, 0.0),
              (nzero, -0.0)],
    "ceil": _ROUNDING,
    "cos": [(nan, NAN), (pzero, 1.0), (nzero, 1.0), (pinf, NAN), (ninf, NAN)],
    "cosh": [(nan, NAN), (pzero, 1.0), (nzero, 1.0), (pinf, INF), (ninf, INF)],
    "exp": [(nan, NAN), (pzero, 1.0), (nzero, 1.0), (pinf, INF), (ninf, 0.0)],
    "expm1": [(nan, NAN), (pzero, 0.0), (nzero, -0.0), (pinf, INF), (ninf, -1.0)],
    "floor": _ROUNDING,
    "isfinite": [(inf, False), (nan, False), (finite, True)],
    "isinf": [(inf, True), (finite_or_nan, False)],
    "isnan": [(nan, True), (not_nan, False)],
    "log": _LOGS,
    "log1p": [(nan, NAN), (lt(-1), NAN), (eq(-1), -INF), (nzero, -0.0), (pzero, 0.0), (pinf, INF)],
    "log2": _LOGS,
    "log10": _LOGS,
    "reciprocal": [(nan, NAN), (pzero, INF), (nzero, -INF), (pinf, 0.0), (ninf, -0.0),  # as 1.0 / x
                   (pos_finite, positive_sign), (neg_finite, negative_sign)],
    "round": _ROUNDING + [(half, even_neighbour)],
    "sign": [(lt(0), -1.0), (zero, any_zero), (gt(0), 1.0), (nan, NAN)],
    "signbit": [(pzero, False), (nzero, True), (pinf, False), (ninf, True), (pos_finite, False),
                (neg_finite, True), (nan_pos, False), (nan_neg, True)],
    "sin": [(nan, NAN), (pzero, 0.0), (nzero, -0.0), (inf, NAN)],
    "sinh": [(nan, NAN), (pzero, 0.0), (nzero, -0.0), (pinf, INF), (ninf, -INF)],
    "sqrt": [(nan, NAN), (lt(0), NAN), (pzero, 0.0), (nzero, -0.0), (pinf, INF)],
    "square": [(nan, NAN), (inf, INF), (zero, 0.0)],  # as x * x
    "tan": [(nan, NAN), (pzero, 0.0), (nzero, -0.0), (inf, NAN)],
    "tanh": [(nan, NAN), (pzero, 0.0), (nzero, -0.0), (pinf, 1.0), (ninf, -1.0)],
    "trunc": _ROUNDING,
}

# ---------------------------------------------------------------- real, two arguments
_NAN_EITHER = [((nan, any_), NAN), ((any_, nan), NAN)]
_DIVISION = _NAN_EITHER + [
    ((inf, inf), NAN), ((zero, zero), NAN),
    ((pzero, gt(0)), 0.0), ((nzero, gt(0)), -0.0), ((pzero, lt(0)), -0.0), ((nzero, lt(0)), 0.0),
    ((gt(0), pzero), INF), ((gt(0), nzero), -INF), ((lt(0), pzero), -INF), ((lt(0), nzero), INF),
    ((pinf, pos_finite), INF), ((pinf, neg_finite), -INF), ((ninf, pos_finite), -INF),
    ((ninf, neg_finite), INF),
    ((pos_finite, pinf), 0.0), ((pos_finite, ninf), -0.0), ((neg_finite, pinf), -0.0),
    ((neg_finite, ninf), 0.0),
    ((nonzero_finite, nonzero_finite), positive_sign, _same_sign),
    ((nonzero_finite, nonzero_finite), negative_sign, lambda a, b: not _same_sign(a, b)),
]
_R2 = {
    "add": _NAN_EITHER + [
        ((pinf, ninf), NAN), ((ninf, pinf), NAN), ((pinf, pinf), INF), ((ninf, ninf), -INF),
        ((pinf, finite), INF), ((ninf, finite), -INF), ((finite, pinf), INF), ((finite, ninf), -INF),
        ((nzero, nzero), -0.0), ((nzero, pzero), 0.0), ((pzero, nzero), 0.0), ((pzero, pzero), 0.0),
        ((zero, nonzero_finite), lambda a, b: b), ((nonzero_finite, zero), lambda a, b: a),
        ((nonzero_finite, nonzero_finite), 0.0, lambda a, b: b == -a),
    ],
    "subtract": _NAN_EITHER + [  # as x1 + (-x2)
        ((pinf, pinf), NAN), ((ninf, ninf), NAN), ((pinf, ninf), INF), ((ninf, pinf), -INF),
        ((pinf, finite), INF), ((finite, pinf), -INF), ((nzero, pzero), -0.0), ((pzero, pzero), 0.0),
        ((nzero, nzero), 0.0), ((pzero, nzero), 0.0),
        ((nonzero_finite, nonzero_finite), 0.0, lambda a, b: a == b),
    ],
    "atan2": _NAN_EITHER + [
        ((gt(0), pzero), Approx(PI / 2)), ((gt(0), nzero), Approx(PI / 2)),
        ((pzero, gt(0)), 0.0), ((pzero, pzero), 0.0), ((pzero, nzero), Approx(PI)),
        ((pzero, lt(0)), Approx(PI)),
        ((nzero, gt(0)), -0.0), ((nzero, pzero), -0.0), ((nzero, nzero), Approx(-PI)),
        ((nzero, lt(0)), Approx(-PI)),
        ((lt(0), pzero), Approx(-PI / 2)), ((lt(0), nzero), Approx(-PI / 2)),
        ((pos_finite, pinf), 0.0), ((pos_finite, ninf), Approx(PI)), ((neg_finite, pinf), -0.0),
        ((neg_finite, ninf), Approx(-PI)),
        ((pinf, finite), Approx(PI / 2)), ((ninf, finite), Approx(-PI / 2)),
        ((pinf, pinf), Approx(PI / 4)), ((pinf, ninf), Approx(3 * PI / 4)),
        ((ninf, pinf), Approx(-PI / 4)), ((ninf, ninf), Approx(-3 * PI / 4)),
    ],
    "copysign": [
        ((not_nan, lt(0)), lambda a, b: -abs(a)), ((not_nan, nzero), lambda a, b: -abs(a)),
        ((not_nan, pzero), lambda a, b: abs(a)), ((not_nan, gt(0)), lambda a, b: abs(a)),
        ((not_nan, nan_neg), lambda a, b: -abs(a)), ((not_nan, nan_pos), lambda a, b: abs(a)),
        ((nan, lt(0)), nan_sign1), ((nan, nzero), nan_sign1), ((nan, pzero), nan_sign0),
        ((nan, gt(0)), nan_sign0), ((nan, nan_neg), nan_sign1), ((nan, nan_pos), nan_sign0),
    ],
    "divide": _DIVISION,
    "equal": [((nan, any_), False), ((any_, nan), False), ((pinf, pinf), True), ((ninf, ninf), True),
              ((nzero, zero), True), ((pzero, zero), True),
              ((finite, finite), True, lambda a, b: a == b),
              ((any_, any_), False, lambda a, b: not a == b)],
    "not_equal": [((nan, any_), True), ((any_, nan), True), ((pinf, ninf), True), ((ninf, pinf), True),
                  ((finite, finite), True, lambda a, b: a != b),
                  ((any_, any_), False, lambda a, b: a == b)],
    "floor_divide": _DIVISION,
    "hypot": [((inf, any_), INF), ((any_, inf), INF), ((zero, any_), lambda a, b: abs(b)),
              ((any_, zero), lambda a, b: abs(a)), ((finite_or_nan, nan), NAN),
              ((nan, finite_or_nan), NAN)],
    "logaddexp": _NAN_EITHER + [((pinf, not_nan), INF), ((not_nan, pinf), INF)],
    "maximum": _NAN_EITHER,
    "minimum": _NAN_EITHER,
    "multiply": _NAN_EITHER + [
        ((inf, zero), NAN), ((zero, inf), NAN),
        ((not_nan, not_nan), positive_sign,
         lambda a, b: _same_sign(a, b) and not (math.isinf(a) and b == 0 or a == 0 and math.isinf(b))),
        ((not_nan, not_nan), negative_sign,
         lambda a, b: not _same_sign(a, b) and not (math.isinf(a) and b == 0 or a == 0 and math.isinf(b))),
        ((inf, inf), signed_inf), ((inf, nonzero_finite), signed_inf), ((nonzero_finite, inf), signed_inf),
    ],
    "nextafter": _NAN_EITHER + [((nzero, pzero), 0.0), ((pzero, nzero), -0.0)],
    "pow": [
        ((not_one, nan), NAN), ((any_, pzero), 1.0), ((any_, nzero), 1.0), ((nan, nonzero), NAN),
        ((abs_gt1, pinf), INF), ((abs_gt1, ninf), 0.0), ((abs_eq1, pinf), 1.0), ((abs_eq1, ninf), 1.0),
        ((eq(1), not_nan), 1.0), ((abs_lt1, pinf), 0.0), ((abs_lt1, ninf), INF),
        ((pinf, gt(0)), INF), ((pinf, lt(0)), 0.0),
        ((ninf, gt(0) & odd), -INF), ((ninf, gt(0) & not_odd), INF), ((ninf, lt(0) & odd), -0.0),
        ((ninf, lt(0) & not_odd), 0.0),
        ((pzero, gt(0)), 0.0), ((pzero, lt(0)), INF),
        ((nzero, gt(0) & odd), -0.0), ((nzero, gt(0) & not_odd), 0.0), ((nzero, lt(0) & odd), -INF),
        ((nzero, lt(0) & not_odd), INF),
        ((neg_finite, finite & not_int), NAN),
    ],
    "remainder": _NAN_EITHER + [
        ((inf, inf), NAN), ((zero, zero), NAN),
        ((pzero, gt(0)), 0.0), ((nzero, gt(0)), 0.0), ((pzero, lt(0)), -0.0), ((nzero, lt(0)), -0.0),
        ((gt(0), pzero), NAN), ((gt(0), nzero), NAN), ((lt(0), pzero), NAN), ((lt(0), nzero), NAN),
        ((pinf, pos_finite), NAN), ((pinf, neg_finite), NAN), ((ninf, pos_finite), NAN),
        ((ninf, neg_finite), NAN),
        ((pos_finite, pinf), lambda a, b: a), ((pos_finite, ninf), lambda a, b: b),
        ((neg_finite, pinf), lambda a, b: b), ((neg_finite, ninf), lambda a, b: a),
        ((finite, nonzero_finite), python_mod),
    ],
}


def real_rules():
    """(function, conditions, expected, joint condition or None), one per rule."""
    rules = []
    for name, cases in _R1.items():
        rules += [(name, (cond,), expected, None) for cond, expected in cases]
    for name, cases in _R2.items():
        for case in cases:
            conds, expected, *joint = case
            rules.append((name, conds, expected, joint[0] if joint else None))
    return rules


# ---------------------------------------------------------------- complex
def cis(scale, shift=None):
    """``scale * cis(b) + shift``: (scale * cos(b) + shift, scale * sin(b))."""
    if shift is None:
        return lambda a, b: (scale * math.cos(b), scale * math.sin(b))
    return lambda a, b: (scale * math.cos(b) + shift, scale * math.sin(b))


_C = {  # the standard's lists (b >= 0)
    "abs": [((inf, any_), INF), ((any_, inf), INF), ((zero, any_), lambda a, b: abs(b)),
            ((any_, zero), lambda a, b: abs(a)), ((nan, finite), NAN), ((finite, nan), NAN),
            ((nan, nan), NAN)],
    "acos": [((zero, pzero), (Approx(PI / 2), -0.0)), ((zero, nan), (Approx(PI / 2), NAN)),
             ((finite, pinf), (Approx(PI / 2), -INF)), ((nonzero_finite, nan), (NAN, NAN)),
             ((ninf, pos_finite), (Approx(PI), -INF)), ((pinf, pos_finite), (0.0, -INF)),
             ((ninf, pinf), (Approx(3 * PI / 4), -INF)), ((pinf, pinf), (Approx(PI / 4), -INF)),
             ((inf, nan), (NAN, any_inf)), ((nan, finite), (NAN, NAN)), ((nan, pinf), (NAN, -INF)),
             ((nan, nan), (NAN, NAN))],
    "acosh": [((zero, pzero), (0.0, Approx(PI / 2))), ((finite, pinf), (INF, Approx(PI / 2))),
              ((nonzero_finite, nan), (NAN, NAN)), ((pzero, nan), (NAN, Is("±π/2", lambda r, *_: math.isclose(abs(r), PI / 2, rel_tol=1e-3)))),
              ((ninf, pos_finite), (INF, Approx(PI))), ((pinf, pos_finite), (INF, 0.0)),
              ((ninf, pinf), (INF, Approx(3 * PI / 4))), ((pinf, pinf), (INF, Approx(PI / 4))),
              ((inf, nan), (INF, NAN)), ((nan, finite), (NAN, NAN)), ((nan, pinf), (INF, NAN)),
              ((nan, nan), (NAN, NAN))],
    "asinh": [((pzero, pzero), (0.0, 0.0)), ((pos_finite, pinf), (INF, Approx(PI / 2))),
              ((finite, nan), (NAN, NAN)), ((pinf, pos_finite), (INF, 0.0)),
              ((pinf, pinf), (INF, Approx(PI / 4))), ((nan, pzero), (NAN, 0.0)),
              ((nan, nonzero_finite), (NAN, NAN)), ((nan, pinf), (any_inf, NAN)), ((nan, nan), (NAN, NAN))],
    "atanh": [((pzero, pzero), (0.0, 0.0)), ((pzero, nan), (0.0, NAN)), ((eq(1), pzero), (INF, 0.0)),
              ((pos_finite, pinf), (0.0, Approx(PI / 2))), ((nonzero_finite, nan), (NAN, NAN)),
              ((pinf, pos_finite), (0.0, Approx(PI / 2))), ((pinf, pinf), (0.0, Approx(PI / 2))),
              ((pinf, nan), (0.0, NAN)), ((nan, finite), (NAN, NAN)), ((nan, pinf), (any_zero, Approx(PI / 2))),
              ((nan, nan), (NAN, NAN))],
    "cosh": [((pzero, pzero), (1.0, 0.0)), ((pzero, pinf), (NAN, any_zero)), ((pzero, nan), (NAN, any_zero)),
             ((nonzero_finite, pinf), (NAN, NAN)), ((nonzero_finite, nan), (NAN, NAN)),
             ((pinf, pzero), (INF, 0.0)), ((pinf, nonzero_finite), cis(INF)), ((pinf, pinf), (any_inf, NAN)),
             ((pinf, nan), (INF, NAN)), ((nan, zero), (NAN, any_zero)), ((nan, nonzero_finite), (NAN, NAN)),
             ((nan, nan), (NAN, NAN))],
    "exp": [((zero, pzero), (1.0, 0.0)), ((finite, pinf), (NAN, NAN)), ((finite, nan), (NAN, NAN)),
            ((pinf, pzero), (INF, 0.0)), ((ninf, finite), cis(0.0)), ((pinf, nonzero_finite), cis(INF)),
            ((ninf, pinf), (any_zero, any_zero)), ((pinf, pinf), (any_inf, NAN)),
            ((ninf, nan), (any_zero, any_zero)), ((pinf, nan), (any_inf, NAN)), ((nan, pzero), (NAN, 0.0)),
            ((nan, nonzero), (NAN, NAN)), ((nan, nan), (NAN, NAN))],
    # "0 + 0j" for +-0 + 0j: +0, as NumPy's exp(z) - 1 and the conformance suite read it
    "expm1": [((zero, pzero), (0.0, 0.0)), ((finite, pinf), (NAN, NAN)), ((finite, nan), (NAN, NAN)),
              ((pinf, pzero), (INF, 0.0)), ((ninf, finite), cis(0.0, -1.0)),
              ((pinf, nonzero_finite), cis(INF, -1.0)), ((ninf, pinf), (-1.0, any_zero)),
              ((pinf, pinf), (any_inf, NAN)), ((ninf, nan), (-1.0, any_zero)), ((pinf, nan), (any_inf, NAN)),
              ((nan, pzero), (NAN, 0.0)), ((nan, nonzero), (NAN, NAN)), ((nan, nan), (NAN, NAN))],
    "log": [((nzero, pzero), (-INF, Approx(PI))), ((pzero, pzero), (-INF, 0.0)),
            ((finite, pinf), (INF, Approx(PI / 2))), ((finite, nan), (NAN, NAN)),
            ((ninf, pos_finite), (INF, Approx(PI))), ((pinf, pos_finite), (INF, 0.0)),
            ((ninf, pinf), (INF, Approx(3 * PI / 4))), ((pinf, pinf), (INF, Approx(PI / 4))),
            ((inf, nan), (INF, NAN)), ((nan, finite), (NAN, NAN)), ((nan, pinf), (INF, NAN)),
            ((nan, nan), (NAN, NAN))],
    "log1p": [((eq(-1), pzero), (-INF, 0.0)), ((finite, pinf), (INF, Approx(PI / 2))),
              ((finite, nan), (NAN, NAN)), ((ninf, pos_finite), (INF, Approx(PI))),
              ((pinf, pos_finite), (INF, 0.0)), ((ninf, pinf), (INF, Approx(3 * PI / 4))),
              ((pinf, pinf), (INF, Approx(PI / 4))), ((inf, nan), (INF, NAN)), ((nan, finite), (NAN, NAN)),
              ((nan, pinf), (INF, NAN)), ((nan, nan), (NAN, NAN))],
    "sinh": [((pzero, pzero), (0.0, 0.0)), ((pzero, pinf), (any_zero, NAN)), ((pzero, nan), (any_zero, NAN)),
             ((pos_finite, pinf), (NAN, NAN)), ((pos_finite, nan), (NAN, NAN)), ((pinf, pzero), (INF, 0.0)),
             ((pinf, pos_finite), cis(INF)), ((pinf, pinf), (any_inf, NAN)), ((pinf, nan), (any_inf, NAN)),
             ((nan, pzero), (NAN, 0.0)), ((nan, nonzero_finite), (NAN, NAN)), ((nan, nan), (NAN, NAN))],
    "sqrt": [((zero, pzero), (0.0, 0.0)), ((any_, pinf), (INF, INF)), ((finite, nan), (NAN, NAN)),
             ((ninf, pos_finite), (NAN, NAN)), ((pinf, pos_finite), (0.0, INF)),  # see ERRATA
             ((ninf, nan), (NAN, any_inf)), ((pinf, nan), (INF, NAN)), ((nan, finite), (NAN, NAN)),
             ((nan, nan), (NAN, NAN))],
    "tanh": [((pzero, pzero), (0.0, 0.0)), ((nonzero_finite, pinf), (NAN, NAN)), ((pzero, pinf), (0.0, NAN)),
             ((nonzero_finite, nan), (NAN, NAN)), ((pzero, nan), (0.0, NAN)), ((pinf, pos_finite), (1.0, 0.0)),
             ((pinf, pinf), (1.0, any_zero)), ((pinf, nan), (1.0, any_zero)), ((nan, pzero), (NAN, 0.0)),
             ((nan, nonzero), (NAN, NAN)), ((nan, nan), (NAN, NAN))],
    "sign": [((zero, zero), (any_zero, any_zero)), ((nan, any_), (NAN, NAN)), ((any_, nan), (NAN, NAN))],
    "isfinite": [((nan, any_), False), ((any_, nan), False), ((inf, any_), False), ((any_, inf), False),
                 ((finite, finite), True)],
    "isinf": [((inf, any_), True), ((finite_or_nan, inf), True), ((finite_or_nan, finite_or_nan), False)],
    "isnan": [((nan, any_), True), ((any_, nan), True), ((not_nan, not_nan), False)],
    "round": [((integer, integer), (lambda a, b: a, lambda a, b: b)), ((inf, any_), (lambda a, b: a, None)),
              ((any_, nan), (None, NAN)), ((nan, any_), (NAN, None)), ((pzero, any_), (0.0, None)),
              ((nzero, any_), (-0.0, None)), ((any_, nzero), (None, -0.0))],
}
# Rules of the standard's text that no library follows, with what we (and C99, NumPy, CuPy) do.
ERRATA = {
    "sqrt(-inf + finite>0 j)": "the text reads NaN + NaN j; C99 G.6.4.2 and the branch cut the "
                               "standard describes give +0 + inf j",
    "sqrt(+inf + finite>0 j)": "the text reads +0 + inf j; C99 G.6.4.2 gives +inf + 0 j "
                               "(the two lines look swapped with the -inf case)",
}

_CONJ = ("acos", "acosh", "asinh", "atanh", "cosh", "exp", "expm1", "log", "log1p", "sinh", "sqrt", "tanh")
_ODD = ("asinh", "atanh", "sinh", "tanh")  # f(-z) == -f(z)
_EVEN = ("cosh",)  # f(-z) == f(z)
# f(z) computed as g(1j * z) then multiplied by k (-1j or 1): the standard's "as if" rules.
_AS_IF = {"asin": ("asinh", -1j), "atan": ("atanh", -1j), "cos": ("cosh", 1), "sin": ("sinh", -1j),
          "tan": ("tanh", -1j)}


def _neg(e):
    if e is None or isinstance(e, Is):
        return e
    if callable(e):
        return lambda a, b: -e(a, b)
    return -e


def _map(expected, out, inputs):
    """The expectation of a derived rule: ``out((re, im))`` of the original rule's expectation
    at the original input ``inputs(a, b)``."""
    if callable(expected) and not isinstance(expected, tuple):
        return lambda a, b, e=expected: out(e(*inputs(a, b)))
    return out(expected)


def _rule_id(name, ca, cb):
    return f"{name}({ca!r} + {cb!r} j)"


def complex_rules():
    """(function, (cond a, cond b), expected, how it was derived, id of the listed rule it comes
    from), one per rule: the standard's lists, then the rules they imply."""
    rules = [(name, conds, expected, "listed", _rule_id(name, *conds))
             for name, cases in _C.items() for conds, expected in cases]
    for name in _CONJ:  # f(conj(z)) == conj(f(z))
        rules += [(name, (ca, cb.neg()), _map(expected, lambda p: (p[0], _neg(p[1])), lambda a, b: (a, -b)),
                   "conj", base) for n, (ca, cb), expected, _, base in list(rules) if n == name]
    for name, (ca, cb), expected, origin, base in [r for r in rules if r[0] in _ODD + _EVEN]:
        flip = (lambda p: (_neg(p[0]), _neg(p[1]))) if name in _ODD else (lambda p: p)
        rules.append((name, (ca.neg(), cb.neg()), _map(expected, flip, lambda a, b: (-a, -b)),
                      origin + "+odd/even", base))
    for name, (inner, k) in _AS_IF.items():  # z = -1j * w: (a, b) = (w.im, -w.re)
        for g, (ca, cb), expected, origin, base in list(rules):
            if g == inner:
                out = (lambda p: p) if k == 1 else (lambda p: (p[1], _neg(p[0])))  # -1j * w
                rules.append((name, (cb, ca.neg()), _map(expected, out, lambda a, b: (-b, a)),
                              f"as {inner} ({origin})", base))
    return rules
