"""What ``lazy()`` learns per chain shape (``namespace/lazy_tape.py``): a chain repeated with
other dtypes, shapes, layouts, scalar types, devices, operand identities or outputs computes
what the eager calls compute, and a repeat keeps every check of a first call (ints out of
range, writes between chains, pending values read, ``out=`` overlapping an input). Each test
runs twice: with the compiled hot path (``runtime/lazy_calls.c`` defers a unary or binary
call of a chain seen before) and with the Python one alone (``lazy.defer_seen``)."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.namespace import boundary, fusion, lazy, lazy_kernels, pending

SHAPES = [(3, 4), (4,), (1, 4), (3, 1)]
DTYPES = ["float32", "float64", "int16", "int64", "uint8"]
SCALARS = [2, 0.5, True, np.float32(1.5), np.int16(3), -1]
ERRORS = (TypeError, ValueError, OverflowError)


@pytest.fixture(autouse=True, params=["compiled", "python"])
def hot_path(request):
    """The compiled hot path (where this machine builds it) or the Python one alone."""
    with boundary.python_hot_path() if request.param == "python" else contextlib.nullcontext():
        yield request.param


def _array(rng, dtype, shape, device="emulator", transposed=False):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        values = rng.integers(0, 6, shape[::-1] if transposed else shape).astype(dt)
    else:
        values = rng.standard_normal(shape[::-1] if transposed else shape).astype(dt)
    values = values.T if transposed else values
    return xp.asarray(values, device=device)


def _chain(x, y, s):
    """One shape of chain: five calls, an intermediate read twice, a scalar."""
    t = x * y + x
    return xp.abs(t - s) * t


def _outcome(call):
    """(dtype, shape, values) of ``call()``, or (type, message) of its error."""
    try:
        result = call()
    except ERRORS as error:
        return type(error), str(error)
    host = np.asarray(result)
    return host.dtype, host.shape, host.tobytes()


def _lazily(chain, *args):
    def run():
        called = False
        try:
            with xp.lazy():
                result = chain(*args)
                called = True
        except ERRORS as error:
            if called:  # an eager call raises at the call: a deferred one must too
                raise AssertionError(f"raised at the evaluation: {error!r}") from error
            raise
        return result
    return run


def _eagerly(chain, *args):
    def run():
        with xp.lazy(enabled=False):
            return chain(*args)
    return run


@pytest.mark.parametrize("seed", range(6))
def test_a_repeated_chain_with_other_operands_computes_the_eager_answer(seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):  # each chain after the first finds learnt states where keys agree
        dtype_x, dtype_y = rng.choice(DTYPES, 2)
        shape_x, shape_y = (SHAPES[k] for k in rng.integers(0, len(SHAPES), 2))
        x = _array(rng, dtype_x, shape_x, transposed=bool(rng.integers(2)) and len(shape_x) == 2)
        y = x if rng.integers(3) == 0 else _array(rng, dtype_y, shape_y)
        s = SCALARS[rng.integers(len(SCALARS))]
        assert _outcome(_lazily(_chain, x, y, s)) == _outcome(_eagerly(_chain, x, y, s))


def _select_chain(x, y, s, dtype):
    """``where`` and ``astype`` in a chain: their repeats are keyed as the others' are."""
    t = xp.astype(x * y, dtype)
    return xp.where(t > 1, t, s) + xp.where(y < x, True, t)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")  # NumPy's
@pytest.mark.parametrize("seed", range(4))
def test_a_repeated_chain_of_where_and_astype_computes_the_eager_answer(seed):
    rng = np.random.default_rng(20 + seed)
    for _ in range(5):
        dtype_x, dtype_y = rng.choice(["float32", "int16", "uint8", "float64"], 2)
        shape = SHAPES[rng.integers(len(SHAPES))]
        x, y = _array(rng, dtype_x, shape), _array(rng, dtype_y, shape)
        dtype = ["float16", "int8", "float64", "int32"][rng.integers(4)]
        # each value after one of its type: a repeat (300: past int8, 1e10: past float16,
        # 2**70: past every integer, an OverflowError at the call)
        for s in (2, 300, -1, 2**70, 0.5, 1e10, -0.0, True, False, 2, 0.5):
            assert _outcome(_lazily(_select_chain, x, y, s, dtype)) == \
                _outcome(_eagerly(_select_chain, x, y, s, dtype))


def test_the_same_layouts_as_one_array_or_two_are_two_chains():
    rng = np.random.default_rng(1)
    x, y = _array(rng, "float32", (3, 4)), _array(rng, "float32", (3, 4))
    for first, second in ((x, y), (x, x), (y, x), (y, y), (x, y)):
        assert _outcome(_lazily(_chain, first, second, 2.0)) == \
            _outcome(_eagerly(_chain, first, second, 2.0))
    for step in (lambda a, b: (a + b) * a, lambda a, b: (a + b) * b):  # which leaf is read
        for first, second in ((x, y), (y, x), (x, x)):
            assert _outcome(_lazily(step, first, second)) == _outcome(_eagerly(step, first,
                                                                                second))


def test_a_repeat_keeps_the_checks_of_scalar_values():
    rng = np.random.default_rng(2)
    small = _array(rng, "uint8", (4,))
    for value in (3, 3, 300, -1, 3, 2**70):  # learnt on 3: the others are checked per call
        eager = _outcome(_eagerly(lambda a: (a + 1) + value, small))
        with xp.lazy():
            t = small + 1
            if isinstance(eager[0], type):  # raised at the call, as the eager call raises it
                with pytest.raises(eager[0]) as raised:
                    t + value
                assert str(raised.value) == eager[1]
            else:
                r = t + value
        if not isinstance(eager[0], type):
            assert _outcome(lambda: r) == eager
        with xp.lazy():
            compared = (small * 2) < value
            # an int past uint8's range: the eager call's answer, computed at the call
            assert (compared._p is None) == (not 0 <= value <= 255)
        assert _outcome(lambda: compared) == \
            _outcome(_eagerly(lambda a: (a * 2) < value, small))


def test_a_repeat_on_the_cpu_device_or_across_devices_runs_or_raises_as_eager():
    rng = np.random.default_rng(3)
    on_emulator = _array(rng, "float32", (3, 4))
    on_cpu = _array(rng, "float32", (3, 4), device="cpu")
    for x, y in ((on_emulator, on_emulator), (on_cpu, on_cpu), (on_emulator, on_cpu),
                 (on_emulator, on_emulator)):
        assert _outcome(_lazily(_chain, x, y, 1.0)) == _outcome(_eagerly(_chain, x, y, 1.0))


def test_the_outputs_evaluated_are_those_still_referenced():
    rng = np.random.default_rng(4)
    x, y = _array(rng, "float64", (3, 4)), _array(rng, "float64", (3, 4))
    product = np.asarray(x) * np.asarray(y)
    expected = {"first": product, "second": product + np.asarray(x)}
    for kept in (("second",), ("first",), ("first", "second"), ("second",), ("first",)):
        with xp.lazy():
            results = {"first": x * y}
            results["second"] = results["first"] + x
            results = {name: results[name] for name in kept}  # the others are intermediates
        for name in kept:
            np.testing.assert_array_equal(np.asarray(results[name]), expected[name])


def test_a_write_between_repeated_chains_is_read_by_the_next():
    rng = np.random.default_rng(5)
    x, y = _array(rng, "float32", (3, 4)), _array(rng, "float32", (3, 4))
    for k in range(4):
        before = np.asarray(x).copy()
        with xp.lazy():
            r = _chain(x, y, 2.0)
            x[...] = float(k)  # a write: r read x as it was
            again = _chain(x, y, 2.0)
        with xp.lazy(enabled=False):
            expected = _chain(xp.asarray(before, device="emulator"), y, 2.0)
            expected_again = _chain(x, y, 2.0)
        np.testing.assert_array_equal(np.asarray(r), np.asarray(expected))
        np.testing.assert_array_equal(np.asarray(again), np.asarray(expected_again))


def test_a_pending_value_read_in_a_repeated_chain_evaluates_it():
    rng = np.random.default_rng(6)
    x, y = _array(rng, "float32", (3, 4)), _array(rng, "float32", (3, 4))
    for _ in range(3):
        with xp.lazy():
            t = x * y + x
            seen = float(t[0, 0])  # evaluates t: the chain goes on from it
            r = xp.abs(t - 1.0) * t
            assert t._p is None and r._p is not None
        with xp.lazy(enabled=False):
            expected_t = x * y + x
        assert seen == float(np.asarray(expected_t)[0, 0])
        np.testing.assert_array_equal(np.asarray(r),
                                      np.asarray(_eagerly(_chain, x, y, 1.0)()))


def test_out_overlapping_an_input_of_a_repeated_chain():
    rng = np.random.default_rng(7)
    for _ in range(3):
        x, y = _array(rng, "float32", (3, 4)), _array(rng, "float32", (3, 4))
        before = np.asarray(x).copy()
        with xp.lazy():
            r = _chain(x, y, 2.0)
            xp.multiply(y, 3.0, out=x)  # r read x before this write
            s = _chain(x, y, 2.0)
        xb = xp.asarray(before, device="emulator")
        np.testing.assert_array_equal(np.asarray(r), np.asarray(_eagerly(_chain, xb, y, 2.0)()))
        np.testing.assert_array_equal(np.asarray(x), before * 0 + np.asarray(y) * 3)
        np.testing.assert_array_equal(np.asarray(s), np.asarray(_eagerly(_chain, x, y, 2.0)()))


def test_chain_states_are_followed_once_learnt():
    rng = np.random.default_rng(8)
    x, y = _array(rng, "float32", (3, 4)), _array(rng, "float32", (3, 4))
    for _ in range(2):
        with xp.lazy():
            r = _chain(x, y, 2.0)
            state = pending.current_tape().state
            assert state is not None and len(state.steps) == 5
        assert r._p is None
    assert state.fused  # the second evaluation found its fused function there


def _learnt_by_the_compiled_path(hot_path, seed):
    """Two Arrays whose chain (``_chain`` by 2.0) was deferred once; compiled paths alone."""
    if hot_path == "python" or boundary.compiled_hot_calls() is None:
        pytest.skip("the compiled hot path alone")
    rng = np.random.default_rng(seed)
    x, y = _array(rng, "float32", (3, 4)), _array(rng, "float32", (3, 4))
    _lazily(_chain, x, y, 2.0)()
    return x, y


def test_the_compiled_path_defers_a_chain_seen_before_without_python(hot_path, monkeypatch):
    x, y = _learnt_by_the_compiled_path(hot_path, 9)
    seen = []
    python_way = lazy.defer_seen
    monkeypatch.setattr(lazy, "defer_seen", lambda *a: seen.append(a[0]) or python_way(*a))
    for s in (2.0, 0.5):
        r = _lazily(_chain, x, y, s)()
        assert seen == []
        np.testing.assert_array_equal(np.asarray(r), np.asarray(_eagerly(_chain, x, y, s)()))
    _lazily(_chain, x, y, 3)()  # an int: another chain, learnt by the Python way
    seen.clear()
    for s in (3, -7):  # its value checked in C against the dtype's range
        r = _lazily(_chain, x, y, s)()
        assert seen == []
        np.testing.assert_array_equal(np.asarray(r), np.asarray(_eagerly(_chain, x, y, s)()))


def test_the_compiled_path_evaluates_a_chain_seen_before_without_python(hot_path,
                                                                         monkeypatch):
    x, y = _learnt_by_the_compiled_path(hot_path, 12)
    walked = []
    python_way = pending._evaluate
    monkeypatch.setattr(pending, "_evaluate", lambda *a: walked.append(a) or python_way(*a))
    for s in (2.0, -0.5):
        r = _lazily(_chain, x, y, s)()
        assert walked == [] and r._p is None
        np.testing.assert_array_equal(np.asarray(r), np.asarray(_eagerly(_chain, x, y, s)()))
    with xp.lazy():  # two outputs, not seen together before: the Python way learns them
        t = x * y + x
        r = xp.abs(t - 1.0) * t
    assert len(walked) == 1 and t._p is None and r._p is None


def _broken_call(self, *args, **kwargs):
    raise RuntimeError("kernel failed")


def test_a_failed_evaluation_of_a_repeated_chain_leaves_it_pending(monkeypatch):
    rng = np.random.default_rng(13)
    x, y = _array(rng, "float32", (3, 4)), _array(rng, "float32", (3, 4))
    expected = np.asarray(_eagerly(_chain, x, y, 2.0)())
    _lazily(_chain, x, y, 2.0)()  # learnt
    with xp.lazy():
        r = _chain(x, y, 2.0)
        with monkeypatch.context() as patched:
            patched.setattr(fusion.FusedFunction, "__call__", _broken_call)
            with pytest.raises(RuntimeError, match="kernel failed"):
                np.asarray(r)
        assert r._p is not None  # still pending: computed at the next evaluation
        doubled = r * 2.0
    np.testing.assert_array_equal(np.asarray(r), expected)
    np.testing.assert_array_equal(np.asarray(doubled), expected * np.float32(2))


def test_threads_deferring_at_once_compute_the_eager_answers_each_on_its_tape():
    rng = np.random.default_rng(10)
    operands = [(_array(rng, "float32", (3, 4)), _array(rng, "float32", (3, 4)), s)
                for s in (2.0, -1.5, 3.0, 0.25)]
    expected = [np.asarray(_eagerly(_chain, *args)()) for args in operands]
    _lazily(_chain, *operands[0])()
    programs = len(lazy_kernels._fused)
    failures, start = [], threading.Barrier(len(operands))

    def run(k):
        start.wait()
        for _ in range(40):  # the tape and its lock shared: each chain its own answer
            r = _lazily(_chain, *operands[k])()
            if not np.array_equal(np.asarray(r), expected[k]):
                failures.append(k)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(len(operands))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    # A thread's chain is on its own tape: the chains never mix into programs of their own
    # (one tape for all made about 80 here). A read evaluates the other threads' chains so
    # far: their prefixes, and what follows them, are programs too.
    assert len(lazy_kernels._fused) - programs <= 30
