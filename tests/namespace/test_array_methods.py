"""NumPy's methods on ``infini_cupy.Array`` (``infini_cupy/namespace/array_methods.py``), on the
``cpu`` device and the suite's device, against the same methods of NumPy arrays."""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.runtime.launch import recording
from tests.support.dtype_cases import assert_library_close

rng = np.random.default_rng(29)


def same(got, expected, to_host, rounded=False):
    """``rounded``: a float sum the array library computes (its order of additions)."""
    assert type(got) is xp.Array, type(got)
    host = to_host(got)
    assert host.dtype == expected.dtype and host.shape == expected.shape
    if rounded:
        assert_library_close(host, expected)
    else:
        np.testing.assert_array_equal(host, expected)


CALLS = [
    ("reshape-args", lambda a: a.reshape(4, -1)),
    ("reshape-tuple", lambda a: a.reshape((2, 12))),
    ("reshape-F", lambda a: a.reshape(6, 4, order="F")),
    ("ravel", lambda a: a.ravel()),
    ("ravel-strided", lambda a: a[:, ::2].ravel()),
    ("flatten", lambda a: a.T.flatten()),
    ("flatten-F", lambda a: a.flatten("F")),
    ("round", lambda a: a.round()),
    ("round-2", lambda a: a.round(2)),
    ("copy", lambda a: a.T.copy()),
    ("astype", lambda a: a.astype(np.int16)),
    ("all", lambda a: (a > -15).all()),
    ("any-axis", lambda a: (a > 5).any(axis=1, keepdims=True)),
    ("sum-bool", lambda a: (a > 0).sum(axis=-1)),
    ("sum-dtype", lambda a: a.sum(axis=0, dtype=np.float32, keepdims=True)),
    ("max", lambda a: a.max()),
    ("min-axis", lambda a: a.min(axis=1, keepdims=True)),
    ("compress", lambda a: a.compress(a[:, 0] > 0, axis=0)),
    ("astype-same-kind", lambda a: a.astype(np.float32, casting="same_kind")),
    ("mean", lambda a: a.mean()),
    ("mean-axis", lambda a: a.mean(axis=0, keepdims=True)),
    ("mean-dtype", lambda a: a.mean(axis=1, dtype=np.float32)),
    ("mean-int", lambda a: a.astype(np.int32).mean(axis=1)),
    ("std-ddof", lambda a: a.std(axis=0, ddof=1)),
    ("var", lambda a: a.var(keepdims=True)),
    ("prod", lambda a: a.astype(np.int64).prod(axis=0)),
    ("prod-dtype", lambda a: (a > 0).prod(axis=1, dtype=np.int16)),
    ("argmax", lambda a: a.argmax()),
    ("argmin-axis", lambda a: a.argmin(axis=1, keepdims=True)),
    ("cumsum", lambda a: a.astype(np.int32).cumsum()),
    ("cumsum-axis", lambda a: a.cumsum(axis=1, dtype=np.float32)),
    ("conj", lambda a: (a + 1j * a[::-1]).conj()),
    ("conjugate-real", lambda a: a.conjugate()),
    ("clip", lambda a: a.clip(-3.0, 4.5)),
    ("clip-min", lambda a: a.clip(min=0.5)),
    ("clip-max-int", lambda a: a.astype(np.int16).clip(max=3)),
    ("argsort", lambda a: a.argsort()),
    ("argsort-axis0-stable", lambda a: a.round().argsort(axis=0, kind="stable")),
    ("argsort-none", lambda a: a.argsort(axis=None, kind="mergesort")),
]
# float results the array library sums in its own order
ROUNDED = {"sum-dtype", "mean", "mean-axis", "mean-dtype", "mean-int", "std-ddof", "var",
           "cumsum-axis"}


@pytest.mark.parametrize("name, call", CALLS, ids=[c[0] for c in CALLS])
def test_methods_against_numpy(on, to_host, name, call):
    h = rng.standard_normal((3, 8)) * 10
    got = call(on(h))
    same(got, call(h), to_host, rounded=name in ROUNDED)


def test_scalars_lists_and_sizes(on):
    h = rng.integers(-5, 5, size=(2, 3)).astype(np.int16)
    x = on(h)
    assert x.item(1, 2) == h.item(1, 2) and type(x.item(0)) is int
    assert x.item((1, 2)) == h.item((1, 2)) and x.item(-1) == h.item(-1)
    for bad, error in [((6,), IndexError), ((0, 3), IndexError), ((1, 2, 3), ValueError),
                       ((1.5,), TypeError), ((True,), TypeError)]:
        for a in (x, h):  # refused as NumPy refuses, on every device
            with pytest.raises(error):
                a.item(*bad)
    assert x[0, 0].item() == h[0, 0]
    assert x.tolist() == h.tolist()
    for got, expected in zip(x.nonzero(), h.nonzero()):
        assert type(got) is xp.Array and got.tolist() == expected.tolist()
    assert x.nbytes == h.nbytes == 12 and x.itemsize == 2



def test_get_is_a_new_numpy_array_as_cupys(on):
    """``x.get()``, CuPy's host copy: Dask calls it on what it takes for CuPy arrays by their
    type's name (``dask.array.utils.assert_eq``); it raised AttributeError."""
    h = np.arange(6.0).reshape(2, 3)
    x = on(h)
    got = x.T.get()
    assert type(got) is np.ndarray and got.flags.c_contiguous
    np.testing.assert_array_equal(got, h.T)
    got[0, 0] = 9.0  # new memory
    assert x[0, 0].item() == 0.0

def test_copy_is_independent_and_ravel_is_a_view_when_it_can(on, to_host):
    h = np.arange(6.0).reshape(2, 3)
    x = on(h)
    y = x.copy()
    y[0, 0] = 9.0
    assert to_host(x)[0, 0] == 0.0
    flat = x.ravel()
    flat[1] = 7.0  # a view of x's memory
    assert to_host(x)[0, 1] == 7.0


@pytest.mark.parametrize("how", ["copy", "deepcopy"])
def test_copy_module_gives_independent_arrays(on, to_host, how):
    """``copy.copy(x)`` and ``copy.deepcopy(x)`` are new memory, as for NumPy and CuPy
    arrays: writing into the copy leaves ``x`` as it was."""
    import copy

    h = rng.standard_normal((3, 4)).astype(np.float32)
    expected = h[:, ::-2].copy()
    x = on(h.copy())[:, ::-2]
    y = getattr(copy, how)(x)
    assert type(y) is xp.Array and y.device == x.device
    same(y, expected, to_host)
    y[...] = 0.0
    np.testing.assert_array_equal(to_host(x), expected)



@pytest.mark.parametrize("dtype", [None, np.int32, np.uint32, np.int16, np.float64, np.uint8])
def test_view_reinterprets_as_numpy_does(on, to_host, dtype):
    h = rng.standard_normal((3, 8)).astype(np.float32)
    x = on(h)
    got, expected = (x.view(), h.view()) if dtype is None else (x.view(dtype), h.view(dtype))
    same(got, expected, to_host)
    got[0, 0] = 1  # the same memory
    expected[0, 0] = 1
    np.testing.assert_array_equal(to_host(x), h)
    with pytest.raises(ValueError):  # as NumPy: the last axis must be contiguous to rescale
        x.T.view(np.float64)
    with pytest.raises(TypeError, match="not one of the namespace's dtypes"):
        x.view(np.dtype("U1"))
    with pytest.raises(TypeError, match="subclass"):
        x.view(type=np.ndarray)


def test_base_is_what_the_memory_belongs_to(on, to_host):
    h = np.arange(12.0).reshape(3, 4)
    x = on(h)
    v = x[1:, ::2]
    assert type(v.base) is xp.Array and v.base.shape == to_host(v.base).shape
    owner = xp.asarray(np.arange(4.0), device=x.device, copy=True)
    assert owner.base is None

def test_copies_run_our_kernels(backend_name, arr, to_host):
    if backend_name == "numpy":
        pytest.skip("our kernels run on emulator and GPU Arrays")
    h = rng.standard_normal((4, 5))
    with recording() as launches:
        same(arr(h).T.ravel(), h.T.ravel(), to_host)
        same(arr(h).astype(np.float32), h.astype(np.float32), to_host)
    assert len(launches) == 2


def test_bad_arguments(on):
    x = on(np.ones((2, 3)))
    with pytest.raises(TypeError, match="cannot cast float64 to int8 under casting='safe'"):
        x.astype(np.int8, casting="safe")
    with pytest.raises(ValueError, match="cannot reshape"):
        x.reshape(4, 2)
    with pytest.raises(ValueError, match="copy= is only taken with order='C'"):
        x.reshape(3, 2, order="F", copy=True)
    with pytest.raises(ValueError, match="order='F'"):
        x.copy(order="F")
    with pytest.raises(ValueError, match="order="):
        x.argsort(order="f0")
    with pytest.raises(ValueError, match="unknown kind 'bubble'"):
        x.argsort(kind="bubble")
    with pytest.raises(TypeError, match="bounds of integer x must be integers"):
        x.astype(np.int8).clip(0, 2.5)  # the namespace's rule (NumPy gives float64)


def test_clip_method_out_as_numpy(on, to_host):
    """``x.clip(lo, hi, out=o)`` writes as NumPy's (a ufunc's ``out``): into ``o`` of another
    dtype cast ``same_kind`` (TypeError past it, ``o`` untouched); a bigger ``o`` is the
    elementwise functions' ValueError on every device (NumPy broadcasts into it)."""
    h = rng.standard_normal((4, 5)) * 10
    with pytest.raises(ValueError, match=r"clip\(\): out has shape \(3, 4, 5\)"):
        on(h).clip(-3.0, 4.5, out=on(np.zeros((3, 4, 5))))
    for dtype, shape in [("float32", (4, 5)), ("complex64", (4, 5)), ("int32", (4, 5)),
                         ("bool", (4, 5))]:
        o = np.full(shape, 7, dtype)
        out = on(o.copy())
        try:
            np.clip(h, -3.0, 4.5, out=o)
        except TypeError:
            with pytest.raises(TypeError, match=f"{dtype}"):
                on(h).clip(-3.0, 4.5, out=out)
            np.testing.assert_array_equal(to_host(out), np.full(shape, 7, dtype))
            continue
        assert on(h).clip(-3.0, 4.5, out=out) is out
        np.testing.assert_array_equal(to_host(out), o)


@pytest.mark.parametrize("name, call", [
    ("sum", lambda a, o: a.sum(axis=0, out=o)),
    ("max", lambda a, o: a.max(axis=0, out=o)),
    ("mean", lambda a, o: a.mean(axis=0, out=o)),
    ("std", lambda a, o: a.std(axis=0, out=o)),
    ("argmax", lambda a, o: a.argmax(axis=0, out=o)),
    ("cumsum", lambda a, o: a.cumsum(axis=1, out=o)),
])
def test_reduction_methods_out_as_numpy(on, to_host, name, call):
    """NumPy's reduction methods write into out= of the result's shape, cast as NumPy casts
    (float64 into float32 or int32, int64 indices into int32), refuse what NumPy refuses
    (std into an integer, argmax into a float), and refuse a bigger out (they never broadcast
    into it); out is left as it was."""
    rng = np.random.default_rng(46)
    h = rng.standard_normal((4, 5)) * 10
    expected = call(h, None)
    for dtype in ("float32", "float16", "complex64", "int32", "int8", "uint8", "bool"):
        o = np.zeros(expected.shape, dtype)
        out = on(np.full(expected.shape, 7, dtype))
        try:
            with np.errstate(all="ignore"):
                call(h, o)  # NumPy's answer
        except TypeError:  # NumPy refuses: so do we, out untouched
            with pytest.raises(TypeError, match=f"{name}.*{dtype}"):
                call(on(h), out)
            np.testing.assert_array_equal(to_host(out), np.full(expected.shape, 7, dtype))
            continue
        with np.errstate(all="ignore"):
            assert call(on(h), out) is out
        if dtype not in ("int8", "uint8"):  # (values past the type: cast as the platform does)
            np.testing.assert_allclose(to_host(out), o, rtol=1e-3)  # NumPy's float32 steps
        assert to_host(out).dtype == o.dtype
    bigger = (2, *expected.shape)
    with pytest.raises(ValueError):
        call(h, np.zeros(bigger))
    out = on(np.full(bigger, 7.0))
    with pytest.raises(ValueError, match="shape"):
        call(on(h), out)
    np.testing.assert_array_equal(to_host(out), np.full(bigger, 7.0))


@pytest.mark.parametrize("out", ["abc", 3, [1.0], {}], ids=["str", "int", "list", "dict"])
def test_out_of_no_array_kind_is_a_type_error(on, out):
    """NumPy's TypeError for an ``out=`` that is no array, from the methods (``x.sum``) and
    the functions (``all``, ``any``): they raised AttributeError reading its shape."""
    x = on(np.ones((3, 4)))
    for call in (lambda: x.sum(out=out), lambda: x.argmax(out=out), lambda: x.cumsum(out=out),
                 lambda: xp.all(x, out=out), lambda: xp.any(x, axis=0, out=out)):
        with pytest.raises(TypeError, match=r"(out must be an array|takes an array for out); "
                                            r"got (str|int|list|dict)$"):
            call()
