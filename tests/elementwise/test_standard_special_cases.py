"""Every special case the array API standard 2024.12 lists for the elementwise functions (the
rules of ``elementwise_standard``), on every floating dtype each function takes: NaN (of either
sign), infinities, signed zeros and ordinary values picked from a pool by each rule's
conditions. Known deviations are strict xfails with the reason, so fixing one shows.

Also type promotion against array-api-strict (the reference namespace), when it is installed.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from infini_cupy import dtypes
from infini_cupy.elementwise.ops import OPS
from infini_cupy.elementwise.resolution import loop_dtypes, result_of_loop
from infini_cupy.namespace import elementwise_functions as F
from tests.support.elementwise_cases import prepare
from tests.support.elementwise_standard import (
    ERRATA,
    Approx,
    Is,
    complex_rules,
    real_rules,
)

REAL_POOL = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0,
             2.5, -2.5, 3.0, -3.0, 1.5, 5.0, 7.0, -7.0, 0.25, 1e-3, -1e-3, 1e30, -1e30, 123.0]
COMPLEX_POOL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 2.5, -2.5]
APPROX_TOL = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12, "complex64": 1e-5, "complex128": 1e-12}
# Rules we do not follow, and why.
DEVIATIONS: dict[str, str] = dict(ERRATA)


def _pool(dtype):
    with np.errstate(over="ignore"):
        values = np.array(REAL_POOL, dtype)
    unique = {v.tobytes(): float(v) for v in values}
    return list(unique.values())


def _params(rules, kinds):
    params = []
    for rule in rules:
        name, conds = rule[0], rule[1]
        if kinds == "c":
            rule_id = f"{name}({conds[0]!r} + {conds[1]!r} j)"
            rule_id += "" if rule[3] == "listed" else f" [{rule[3]}]"
        else:
            rule_id = f"{name}({', '.join(map(repr, conds))})"
        for dt in loop_dtypes(OPS[name].name):
            if dt.kind != kinds:
                continue
            marks = ()
            base = rule[-1] if kinds == "c" else rule_id
            if base in DEVIATIONS:
                marks = (pytest.mark.xfail(strict=True, reason=DEVIATIONS[base]),)
            params.append(pytest.param(rule, str(dt), id=f"{rule_id}-{dt}", marks=marks))
    return params


def _matches(expected, got, inputs, dtype) -> bool:
    if expected is None:
        return True
    if isinstance(expected, Is):
        return expected.fn(got, *inputs)
    if isinstance(expected, Approx):
        tol = APPROX_TOL[dtype]
        return math.isclose(got, expected.value, rel_tol=tol, abs_tol=tol)
    if callable(expected):
        expected = float(np.asarray(expected(*inputs), dtypes.real_dtype(dtype)))
    if isinstance(expected, bool):
        return got is expected
    if math.isnan(expected):
        return math.isnan(got)
    return got == expected and math.copysign(1, got) == math.copysign(1, expected)


def _value(x):
    return bool(x) if isinstance(x, (bool, np.bool_)) else float(x)


@pytest.mark.parametrize("rule,dtype", _params(real_rules(), "f"))
def test_real_rule(rule, dtype, backend_name, to_device, to_host):
    name, conds, expected, joint = rule
    prepare(backend_name, name)
    pool = _pool(dtype)
    if len(conds) == 1:
        samples = [(x,) for x in pool if conds[0](x)]
    else:
        samples = [(a, b) for a in pool for b in pool
                   if conds[0](a) and conds[1](b) and (joint is None or joint(a, b))]
    assert samples, "no value of the pool meets the rule's conditions"
    args = [to_device(np.array(column, dtype)) for column in zip(*samples)]
    result = to_host(getattr(F, name)(*args))
    bad = [(s, _value(r)) for s, r in zip(samples, result.tolist())
           if not _matches(expected, _value(r), s, dtype)]
    assert not bad, f"{name}: expected {expected!r}; (inputs, result): {bad[:6]}"


@pytest.mark.parametrize("rule,dtype", _params(complex_rules(), "c"))
def test_complex_rule(rule, dtype, backend_name, to_device, to_host):
    name, (ca, cb), expected, _, _ = rule
    prepare(backend_name, name)
    samples = [(a, b) for a in COMPLEX_POOL for b in COMPLEX_POOL if ca(a) and cb(b)]
    assert samples, "no value of the pool meets the rule's conditions"
    z = np.array([complex(a, b) for a, b in samples], dtype)
    result = to_host(getattr(F, name)(to_device(z))).tolist()
    bad = []
    for (a, b), r in zip(samples, result):
        if not isinstance(r, complex):  # abs, isfinite, ...: one real result
            ok = _matches(expected, _value(r), (a, b), dtype)
        else:
            pair = expected(a, b) if callable(expected) else expected
            ok = all(_matches(e, g, (a, b), dtype) for e, g in zip(pair, (r.real, r.imag)))
        if not ok:
            bad.append((complex(a, b), r))
    assert not bad, f"{name}: expected {expected!r}; (input, result): {bad[:6]}"


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_two_argument_rules(dtype, backend_name, to_device, to_host):
    """equal / not_equal: a NaN part anywhere gives False / True, else both parts compared as
    reals; multiply / divide: NaN + NaN j when all four parts are NaN."""
    prepare(backend_name, "equal", "not_equal", "multiply", "divide")
    parts = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5]
    values = [complex(a, b) for a in parts for b in parts]
    z1 = np.array([u for u in values for _ in values], dtype)
    z2 = np.array([v for _ in values for v in values], dtype)
    eq = to_host(F.equal(to_device(z1), to_device(z2)))
    ne = to_host(F.not_equal(to_device(z1), to_device(z2)))
    for u, v, e, n in zip(z1.tolist(), z2.tolist(), eq.tolist(), ne.tolist()):
        has_nan = any(math.isnan(p) for p in (u.real, u.imag, v.real, v.imag))
        same = u.real == v.real and u.imag == v.imag
        assert e == (not has_nan and same) and n == (has_nan or not same), (u, v, e, n)
    all_nan = to_device(np.array([complex(math.nan, math.nan)], dtype))
    for name in ("multiply", "divide"):
        r = to_host(getattr(F, name)(all_nan, all_nan))[0]
        assert math.isnan(r.real) and math.isnan(r.imag), name


def test_clip_nan_rules(backend_name, to_device, to_host):
    """clip: NaN in x, min or max gives NaN."""
    prepare(backend_name, "clip")
    x = np.array([np.nan, 1.0, 1.0, 5.0], np.float32)
    lo = np.array([0.0, np.nan, 0.0, np.nan], np.float32)
    hi = np.array([2.0, 2.0, np.nan, 2.0], np.float32)
    got = to_host(F.clip(to_device(x), to_device(lo), to_device(hi)))
    assert np.isnan(got).all()


def test_rule_counts():
    """How much of the standard the tables above cover (kept in sync with the report)."""
    real, complex_ = real_rules(), complex_rules()
    listed = [r for r in complex_ if r[3] == "listed"]
    assert len({r[0] for r in real}) == 47 and len(real) >= 250
    assert len(listed) >= 150 and len(complex_) > 2 * len(listed)


# ---------------------------------------------------------------- promotion vs array-api-strict
SCALARS = {"bool": True, "int": 1, "float": 1.0, "complex": 1j}
STANDARD_DTYPES = dtypes.STANDARD_DTYPES  # float16: an extension
_KIND = {"bool": "b", "signed": "i", "unsigned": "i", "real floating": "f", "complex floating": "f"}


def _kind(a):
    return _KIND[dtypes.category(a)] if isinstance(a, np.dtype) else {
        bool: "b", int: "i", float: "f", complex: "c"}[type(a)]


def _implementation_defined(name, args) -> bool:
    """Where the standard leaves the result to the implementation, array-api-strict raises a
    TypeError and we give NumPy's answer: promotion across kinds (bool, integer, floating;
    uint64 with a signed integer), a Python scalar of a kind the array cannot hold, divide
    on integers (the standard lets it return floating point), imag of a real array."""
    arrays = [a for a in args if isinstance(a, np.dtype)]
    array_kinds = {_kind(a) for a in arrays}
    if len(array_kinds) > 1 or (np.dtype(np.uint64) in arrays
                                and any(dtypes.category(a) == "signed" for a in arrays)):
        return True
    scalar_kinds = {_kind(a) for a in args if not isinstance(a, np.dtype)}
    fits = {"b": {"b"}, "i": {"i"}, "f": {"i", "f", "c"}}[array_kinds.pop()]
    if name == "clip":  # a bound of another kind than x
        fits = {"b": set(), "i": {"i"}, "f": {"i", "f"}}[_kind(args[0])]
    if scalar_kinds - fits:
        return True
    return (name == "divide" and _kind(arrays[0]) == "i") or (
        name == "imag" and dtypes.category(arrays[0]) != "complex floating")


def _promotion_cases(name):
    arity = OPS[name].arity
    if arity == 1:
        return [(d,) for d in STANDARD_DTYPES]
    cases = [(a, b) for a in STANDARD_DTYPES for b in STANDARD_DTYPES]
    cases += [(a, s) for a in STANDARD_DTYPES for s in SCALARS.values()]
    if name != "clip":
        cases += [(s, a) for a in STANDARD_DTYPES for s in SCALARS.values()]
    return cases


def _outcome(fn, make, args):
    try:
        with np.errstate(all="ignore"):
            result = fn(*(make(a) if isinstance(a, np.dtype) else a for a in args))
        return str(result.dtype).split(".")[-1]
    except TypeError:
        return "TypeError"
    except (ValueError, OverflowError) as e:
        return type(e).__name__


@pytest.mark.parametrize("name", sorted(OPS))
def test_promotion_matches_array_api_strict(name):
    """Per function, every pair of the standard's dtypes and every array-scalar pair: the
    result dtype array-api-strict gives wherever it accepts the call. Where it refuses
    (dtypes outside the standard's signature), we take NumPy's answer: checked against NumPy
    in tests/namespace/test_rules_across_devices.py."""
    xs = pytest.importorskip("array_api_strict")
    assert "strict_standin" not in xs.__file__, "the stand-in shadows array_api_strict"
    xs.set_array_api_strict_flags(api_version="2024.12")
    from infini_cupy.elementwise import launcher as elementwise

    op = OPS[name]

    def ours(*args):
        if name == "clip":  # clip's bounds enter as arrays of x's dtype, or values
            args = (args[0], args[1]) + (None,)
        dtype_in, dtype_out, _ = elementwise.resolve(op, args if name != "clip" else args[:2])
        return np.empty(0, dtype_out)

    differences = []
    for args in _promotion_cases(name):
        theirs = _outcome(getattr(xs, name), lambda d: xs.asarray(np.zeros(1, d)), args)
        mine = _outcome(ours, lambda d: np.zeros(1, d), args)
        if theirs == mine or theirs == "TypeError":
            continue
        if _implementation_defined(name, args):
            with np.errstate(all="ignore"):
                numpy_args = [np.zeros(1, a) if isinstance(a, np.dtype) else a for a in args]
                expected = (args[0] if name == "clip" else
                            result_of_loop(op.name, np.result_type(*numpy_args)))
            if mine == str(expected):
                continue
        if (theirs == "bool" or theirs.startswith("complex")) and mine == "TypeError" and \
                complex in map(type, args) and op.group == "real numeric":
            continue  # array-api-strict takes a complex scalar where the standard's signature does not
        differences.append((args, theirs, mine))
    assert not differences, differences[:10]


@pytest.mark.parametrize("name", ["add", "less", "divide", "bitwise_and", "atan2", "imag", "pow"])
def test_calls_give_what_resolve_says(name, backend_name, to_device):
    """The dtype checks above read ``elementwise.resolve``; the functions give the same."""
    from infini_cupy.elementwise import launcher as elementwise

    prepare(backend_name, name, "cast")
    for args in _promotion_cases(name):
        host = [np.ones(1, a) if isinstance(a, np.dtype) else a for a in args]
        expected = _outcome(lambda *a: np.empty(0, elementwise.resolve(OPS[name], a)[1]),
                            lambda a: a, host)
        got = _outcome(getattr(F, name), lambda a: a, [to_device(a) if isinstance(a, np.ndarray)
                                                        else a for a in host])
        assert got == expected, (args, got, expected)
