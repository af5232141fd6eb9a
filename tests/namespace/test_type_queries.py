"""The data-type functions answer from a memo keyed by their arguments' dtypes and Python
scalar types (``namespace/type_queries.py``): each answer, first or remembered, is the full
function's (and NumPy's where NumPy knows the dtypes); errors are raised at every call; a
weak Python scalar and a dtype never share a key."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import infini_cupy as xp
from infini_cupy import dtypes
from infini_cupy.namespace import type_queries

_DTYPES = [np.dtype(d) for d in ("bool", "int8", "uint8", "int16", "uint32", "int64", "uint64",
                                 "float16", "float32", "float64", "complex64", "complex128")]
_DTYPES += [dtypes.BFLOAT16] if dtypes.BFLOAT16 else []
_KINDS = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
          "complex floating", "numeric"]


def _argument(draw_kind, dtype, device):
    if draw_kind == "dtype":
        return dtype
    if draw_kind == "Array":
        return xp.zeros((2,), dtype=dtype, device=device)
    return np.zeros((2,), dtype=dtype)  # a NumPy array


def _outcome(function, *args):
    try:
        return function(*args)
    except (TypeError, ValueError) as e:
        return type(e), str(e)


@settings(max_examples=150, deadline=None)
@given(parts=st.lists(st.tuples(st.sampled_from(["dtype", "Array", "ndarray", "scalar"]),
                                st.sampled_from(_DTYPES),
                                st.sampled_from([True, 3, -2.5, 1j])), min_size=1, max_size=3),
       device=st.sampled_from(["cpu", "emulator"]))
def test_result_type_answers_as_the_full_function(parts, device):
    args = [scalar if kind == "scalar" else _argument(kind, dtype, device)
            for kind, dtype, scalar in parts]
    full = _outcome(xp.result_type.__wrapped__, *args)
    assert [_outcome(xp.result_type, *args) for _ in range(3)] == [full] * 3
    plain = [a.dtype if hasattr(a, "dtype") and not isinstance(a, np.dtype) else a
             for a in args]
    if not any(dtypes.is_bfloat16(a) for a in plain if isinstance(a, np.dtype)):
        assert full == _outcome(np.result_type, *plain)  # NumPy 2's promotion (NEP 50)


def test_a_weak_scalar_and_a_dtype_never_share_a_key():
    f32 = xp.float32
    for order in ([(f32, 1.0), (f32, xp.float64)], [(f32, xp.float64), (f32, 1.0)]):
        assert [xp.result_type(*args) for args in order * 2] == (
            [np.result_type(*args) for args in order] * 2)
    assert xp.result_type(xp.int8, 1) == xp.int8 and xp.result_type(xp.int8, xp.int64) == xp.int64
    assert xp.result_type(True, xp.int8) == xp.int8


@settings(max_examples=100, deadline=None)
@given(dtype=st.sampled_from(_DTYPES),
       kind=st.one_of(st.sampled_from(_KINDS), st.sampled_from(_DTYPES),
                      st.lists(st.sampled_from(_KINDS), min_size=1, max_size=3).map(tuple),
                      st.lists(st.sampled_from(_KINDS + _DTYPES), min_size=1,
                               max_size=3).map(tuple),
                      st.just("floating point")))  # no such kind: ValueError each time
def test_isdtype_answers_as_the_full_function(dtype, kind):
    full = _outcome(xp.isdtype.__wrapped__, dtype, kind)
    assert [_outcome(xp.isdtype, dtype, kind) for _ in range(3)] == [full] * 3
    if not dtypes.is_bfloat16(dtype) and not any(
            isinstance(k, np.dtype) and dtypes.is_bfloat16(k)
            for k in (kind if type(kind) is tuple else (kind,))) \
            and not isinstance(full, tuple):
        assert full == np.isdtype(dtype, kind)


def test_a_kind_by_name_and_a_dtype_never_share_a_key():
    """A dtype compares equal to its name: isdtype(float32, "float32") is refused (no such
    kind), isdtype(float32, float32) is True, in either order, alone or in a tuple."""
    f32 = xp.float32
    for order in (["float32", f32], [f32, "float32"], [("float32",), (f32,)],
                  [(f32,), ("float32",)], [("integral", f32), ("integral", "float32")]):
        answers = [_outcome(xp.isdtype, f32, kind) for kind in order * 2]
        assert answers == [_outcome(xp.isdtype.__wrapped__, f32, kind) for kind in order * 2]
        assert answers[0] != answers[1], order


@pytest.mark.parametrize("dtype", _DTYPES)
def test_finfo_and_can_cast_answer_as_the_full_functions(dtype):
    x = xp.zeros((1,), dtype=dtype)
    for arg in (dtype, x):
        full = _outcome(xp.finfo.__wrapped__, arg)
        assert [_outcome(xp.finfo, arg) for _ in range(2)] == [full] * 2
        for to in _DTYPES:
            assert xp.can_cast(arg, to) == xp.can_cast.__wrapped__(arg, to)
            if not (dtypes.is_bfloat16(dtype) or dtypes.is_bfloat16(to)):
                assert xp.can_cast(arg, to) == np.can_cast(dtype, to)
    other = "finfo" if dtype.kind in "iu" else "iinfo"
    if dtype.kind in "iufc":  # the other function refuses this dtype, naming it, each time
        for _ in range(2):
            with pytest.raises(ValueError, match=f"{other}: {dtype} is not an? "):
                getattr(xp, other)(arg)
    else:  # bool, bfloat16: iinfo refuses
        with pytest.raises(ValueError, match=f"iinfo: {dtype} is not an integer dtype"):
            xp.iinfo(x)
    for value in (2.0, None):  # no dtype (NumPy's finfo reads both as float64): refused
        for finfo in (xp.finfo, xp.finfo.__wrapped__):
            with pytest.raises(TypeError, match="finfo: takes a dtype or an array"):
                finfo(value)


def test_the_memo_stays_bounded(monkeypatch):
    monkeypatch.setattr(type_queries, "MEMO_LIMIT", 8)
    result_type = type_queries.remembering("result_type", xp.result_type.__wrapped__)
    for a in _DTYPES:
        for b in _DTYPES:
            assert result_type(a, b) == xp.result_type.__wrapped__(a, b)
    memo = next(c.cell_contents for c in result_type.__closure__
                if isinstance(c.cell_contents, dict))
    assert 0 < len(memo) <= 8


@pytest.mark.parametrize("dtype", _DTYPES)
def test_every_dtype_is_remembered(dtype):
    """A key of any dtype is answered from the memo after its first call; float64, which
    NumPy finds equal to None, included."""
    calls = []

    def full(*args):
        calls.append(args)
        return np.result_type(*[a.dtype if type(a) is xp.Array else a for a in args])

    result_type = type_queries._result_type(full)
    x = xp.zeros((2,), dtype=dtype, device="cpu")
    for _ in range(3):
        assert result_type(x, dtype) == dtype
    assert len(calls) == 1
    assert result_type(x, "float32") is not None and len(calls) == 2  # a string: the full way
