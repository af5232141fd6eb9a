"""infini_cupy.fuse in emulation: every case is one launch, bit-identical to the unfused calls
(and to NumPy where our kernels follow it); the kernels are the NVRTC-compiled ones; what
cannot be fused runs unfused with a warning naming the call, or raises when strict."""

from __future__ import annotations

import functools
import gc
import warnings

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.runtime import recent
from infini_cupy.runtime.launch import prepare, recording
from tests.support import fusion_cases

CASES = fusion_cases.cases()


@pytest.fixture(scope="module", autouse=True)
def _built():
    """Every case's kernel in one emulator library (one g++ run, cached on disk)."""
    prepare("elementwise.cu", fusion_cases.kernel_names(), backend="emulate")


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("case_id, function, args", CASES, ids=[c[0] for c in CASES])
def test_fused_is_one_launch_bit_identical_to_unfused(case_id, function, args):
    fused = xp.fuse(function, strict=True)
    # operators of plain NumPy arrays are NumPy's: the unfused calls run on Arrays (ours)
    arrays = [xp.asarray(a, device="emulator") if isinstance(a, np.ndarray) else a for a in args]
    unfused = [np.asarray(r) for r in _outputs(function(*arrays))]
    with xp.backend("emulate"):
        with recording() as launches:
            first = _outputs(fused(*args))
        with recording() as again:
            second = _outputs(fused(*args))  # the cached path
        name = fused.kernel_name(*args)
    assert [r.name for r in launches] == [r.name for r in again] == [name]
    assert name in fusion_cases.kernel_names()  # compiled by NVRTC in test_fusion_nvrtc
    for a, b, c in zip(first, second, unfused):
        _same_bits(a, c)
        _same_bits(b, c)


def test_numpy_oracle_on_standardize_and_where():
    rng = np.random.default_rng(1)
    x, m = rng.standard_normal((6, 5)), rng.standard_normal(5)
    c = x > 0
    with xp.backend("emulate"):
        got = xp.fuse(lambda x, m, s: (x - m) / s)(x, m, 2.0)
        sel = xp.fuse(lambda c, x, m: xp.where(c, x, m * 3))(c, x, m)
    np.testing.assert_array_equal(got, (x - m) / 2.0)
    np.testing.assert_array_equal(sel, np.where(c, x, m * 3))


def test_scalar_arguments_change_per_call():
    fused = xp.fuse(lambda x, k: x * k)
    x = np.arange(5, dtype=np.int8)
    with xp.backend("emulate"):
        assert fused(x, 3).tolist() == [0, 3, 6, 9, 12]
        assert fused(x, -2).tolist() == [0, -2, -4, -6, -8]
        with pytest.raises(OverflowError):
            fused(x, 1000)  # as xp.multiply(x, 1000)


def test_arrays_in_arrays_out_and_the_numpy_backend():
    fused = xp.fuse(lambda x, y: xp.sqrt(x * x + y * y))
    x = xp.asarray([3.0, 5.0], device="emulator")
    r = fused(x, xp.asarray([4.0, 12.0], device="emulator"))
    assert type(r) is xp.Array and r.device == "emulator"
    assert np.asarray(r).tolist() == [5.0, 13.0]
    with xp.backend("numpy"):  # NumPy arrays on the cpu device: NumPy runs it
        plain = fused(np.asarray([3.0]), np.asarray([4.0]))
    assert plain.tolist() == [5.0]


def test_empty_and_mismatched_shapes():
    fused = xp.fuse(lambda x, y: x + y)
    with xp.backend("emulate"):
        assert fused(np.zeros((0, 3)), np.ones(3)).shape == (0, 3)
        with pytest.raises(ValueError, match="broadcast"):  # the unfused call's error
            fused(np.zeros(3), np.zeros(4))


CAPTURED = np.asarray([3.0])  # an array the function closes over: no argument of the trace


@pytest.mark.parametrize("body, call", [
    (lambda x: x - xp.mean(x), "mean()"),
    (lambda x: x[0] + x, "indexing"),
    (lambda x: x if x > 0 else -x, "bool(x)"),
    (lambda x: x * x.shape[0], "x.shape"),
    (lambda x: x * CAPTURED, "an operand of type ndarray that is not an argument"),
    (np.add.reduce, "NotImplemented"),  # a function without Python code: a ufunc's method
    (functools.partial(np.add.reduce, axis=0), "NotImplemented"),
])
def test_untraceable_functions_run_unfused_with_a_warning(body, call):
    x = np.asarray([2.0])  # one element: bool(x) has a meaning unfused
    with xp.backend("emulate"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = xp.fuse(body)(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_array_equal(result, body(x))
        assert any(call in str(w.message) and issubclass(w.category, xp.FusionWarning)
                   for w in caught)
        with pytest.raises(TypeError, match="cannot fuse"):
            xp.fuse(body, strict=True)(x)


@pytest.mark.parametrize("body", [lambda x, a: a * 2 - 1, lambda x, a: ((a == a) | a, 0.5),
                                  lambda x, a: 1.5])
def test_results_of_scalars_alone_run_unfused_without_a_warning(body):
    """Results that read no array argument (Python arithmetic of a scalar argument) are the
    unfused call's, silently, as the guide says: they warned that they were not arrays."""
    x = xp.asarray(np.asarray([2.0]), device="emulator")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for a in (-1, 3):
            assert xp.fuse(body)(x, a) == body(x, a)


@pytest.mark.parametrize("dtypes", [(np.float32, np.int8), (np.float64, np.uint8),
                                    (np.float16, np.int16)], ids=str)
def test_numpy_ufuncs_fuse_as_the_namespace_s_functions(dtypes):
    """NumPy's ufuncs on traced values are the namespace's functions in NumPy's loop (as on
    Arrays): one launch, bit-identical to the unfused calls (``np.rint(int8)`` computes in
    float16, ``np.sqrt(uint8)`` too, Python scalars weak)."""
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((3, 4)) * 4).astype(dtypes[0])
    b = rng.integers(0, 100, (4,)).astype(dtypes[1])

    def body(x, y):
        return np.maximum(np.exp(np.negative(np.abs(x))) + np.sqrt(y) * np.rint(y), 0.5) - x

    x, y = xp.asarray(a, device="emulator"), xp.asarray(b, device="emulator")
    expected = body(x, y)
    with recording() as launches, warnings.catch_warnings():
        warnings.simplefilter("error")  # no FusionWarning: fused
        got = xp.fuse(body)(x, y)
    assert len(launches) == 1 and got.dtype == expected.dtype
    assert np.asarray(got).tobytes() == np.asarray(expected).tobytes()
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), body(a, b), rtol=2e-3)


def test_fuse_takes_a_function():
    with pytest.raises(TypeError, match="fuse takes a function, got int"):
        xp.fuse(3)
    with pytest.raises(TypeError, match="fuse takes a function, got NoneType"):
        xp.fuse(strict=True)(None)


def test_the_stopping_call_is_named_for_other_failures():
    def uses_reshape(x):
        return xp.reshape(x, (3,)) + 1

    with xp.backend("emulate"), pytest.raises(TypeError, match="reshape"):
        xp.fuse(uses_reshape, strict=True)(np.zeros(3))


def test_astype_and_round_methods_fuse_as_on_arrays():
    # x.astype(...) and x.round() are Array (and ndarray) methods: the trace fuses them
    rng = np.random.default_rng(12)
    a = rng.standard_normal((5, 7)).astype(np.float32) * 40
    x = xp.asarray(a, device="emulator")

    def body(x):
        return x.astype(xp.int16) + x.round().astype("float16", casting="same_kind") * 2

    fused = xp.fuse(body, strict=True)
    _same_bits(np.asarray(fused(x)), np.asarray(body(x)))
    with pytest.raises(TypeError, match="cannot fuse"):  # decimals: not one elementwise call
        xp.fuse(lambda x: x.round(2), strict=True)(x)
    with pytest.raises(TypeError, match="same_kind"):  # the Array method's casting check
        xp.fuse(lambda x: x.astype(xp.int8, casting="same_kind"), strict=True)(x)


def _increment_in_place(a, b):
    a += b
    return a


def _doubled(a, times=60):
    for _ in range(times):
        a = a + a
    return a


@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_functions_that_eager_code_would_see_apart_run_as_eager_code(device):
    """Found by a user's probe: ``a += b`` on an argument writes into its memory (the trace
    would have rebound ``a``), a function giving an argument back gives it itself, a fused
    method binds its instance, ``a = a + a`` sixty times over (a tree of 2**61 nodes) stops
    the trace at once, a function of scalars into ``out=`` raises as ``xp.add`` does."""
    rng = np.random.default_rng(17)
    h = rng.standard_normal(5).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", xp.FusionWarning)
        x, y = xp.asarray(h.copy(), device=device), xp.asarray(h[::-1].copy(), device=device)
        assert xp.fuse(_increment_in_place)(x, y) is x
        np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), h + h[::-1])
        n = xp.asarray(np.arange(5, dtype=np.int32), device=device)
        for call in (_increment_in_place, xp.fuse(_increment_in_place)):  # same_kind, as eager
            with pytest.raises(TypeError, match="cannot be cast into out of dtype int32"):
                call(n, 1.5)
        assert xp.fuse(lambda a: a)(x) is x
        assert xp.fuse(lambda a: xp.astype(a, a.dtype, copy=False))(x) is x

        class Scaled:
            factor = 3.0

            @xp.fuse
            def times(self, a):
                return a * self.factor

        np.testing.assert_array_equal(np.asarray(Scaled().times(y).to_device("cpu")),
                                      h[::-1] * np.float32(3))
        doubled = xp.fuse(_doubled)(y)
        np.testing.assert_array_equal(np.asarray(doubled.to_device("cpu")),
                                      np.asarray(_doubled(y).to_device("cpu")))
        with pytest.raises(TypeError, match="out= takes an array result; the function "
                                            "returned int 6"):
            xp.fuse(lambda u, v: u * v)(2, 3, out=xp.zeros((), device=device))


def test_a_tree_of_reused_subexpressions_is_measured_no_further_than_its_limit():
    with pytest.raises(TypeError, match=r"more than 256 nodes"):
        xp.fuse(_doubled, strict=True)(xp.asarray(np.ones(3), device="emulator"))


def test_a_fused_function_that_is_gone_leaves_no_memo_behind():
    """A fused function made at every call of a function (its memos of planned calls with
    it) is freed with everything it planned: the registry of memos that ``forget_all``
    empties holds them weakly, and still empties the live ones."""
    def live_memos():
        gc.collect()
        return sum(type(o) is recent.RecentCalls for o in gc.get_objects())

    x = xp.asarray(np.ones((4, 5), np.float32), device="emulator")
    before = live_memos()
    for i in range(40):
        np.testing.assert_array_equal(np.asarray(xp.fuse(lambda a: a * 2 + i)(x)), 2.0 + i)
    assert live_memos() == before
    kept = xp.fuse(lambda a: a - 1)
    kept(x)
    memos = [ref() for ref in recent._memos.values()]
    assert any(memo for memo in memos if memo is not None)  # the call kept planned
    recent.forget_all()
    assert not any(memo for memo in (ref() for ref in recent._memos.values())
                   if memo is not None)
    np.testing.assert_array_equal(np.asarray(kept(x)), 0.0)
