"""The standard's 2025.12 revision, and 2024.12 on request: ``__array_namespace__(api_version=)``
and the return types that differ, ``isin``, ``broadcast_shapes``, ``linalg.eig``/``eigvals``
(and the error where the array library has none), ``expand_dims`` with a tuple of axes,
``permute_dims`` with negative axes, ``searchsorted`` with a scalar, the device of outputs and
type promotion in ``x[key] = value``; where array_api_compat's functions fall short:
``cumulative_sum``/``cumulative_prod`` of a 0-d array with ``include_initial``, ``repeat`` with
counts of any integer dtype, ``linalg.pinv`` of integers, ``linalg.matrix_rank`` of empty
matrices, ``linalg.outer`` and ``linalg.cross`` of their vectors alone, ``linalg.qr``'s modes,
``linalg.solve``'s stacks broadcast; ``asarray`` of a list of Arrays on their device,
conversions out of range silent, bfloat16's ``finfo`` and ``isdtype`` as for the other dtypes.
NumPy is the oracle, on random data.

Runs on the suite's device (the emulator, or the GPU with ``--backend cuda``).
"""

from __future__ import annotations

import inspect
import warnings

import array_api_compat
import array_api_compat.numpy as compat_numpy
import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import config
from infini_cupy.namespace import delegated

rng = np.random.default_rng(2025)



# ---- versions
@pytest.mark.parametrize("version", ["2021.12", "2022.12", "2023.12", "2024.12"])
def test_earlier_versions_return_lists(arr, version):
    x = arr(rng.standard_normal(3))
    old = x.__array_namespace__(api_version=version)
    assert old is not xp and old.__array_api_version__ == version
    assert array_api_compat.array_namespace(x, api_version=version) is old
    grids = old.meshgrid(x, x[:2], indexing="ij")
    assert type(grids) is list and [g.shape for g in grids] == [(3, 2), (3, 2)]
    assert type(old.broadcast_arrays(x, x[0])) is list
    assert type(old.__array_namespace_info__().devices()) is list
    assert inspect.signature(old.meshgrid) == inspect.signature(xp.meshgrid)
    assert old.add is xp.add and old.linalg is xp.linalg  # the same functions otherwise
    np.testing.assert_array_equal(np.asarray(grids[0].to_device("cpu")),
                                  np.meshgrid(np.asarray(x.to_device("cpu")), np.zeros(2),
                                              indexing="ij")[0])


def test_latest_version_returns_tuples(arr):
    x = arr(rng.standard_normal(3))
    assert x.__array_namespace__() is xp is x.__array_namespace__(api_version="2025.12")
    assert xp.__array_api_version__ == "2025.12"
    assert type(xp.meshgrid(x, x)) is tuple and type(xp.broadcast_arrays(x, x[0])) is tuple
    assert type(xp.__array_namespace_info__().devices()) is tuple
    with pytest.raises(ValueError, match="'2026.12'.*2024.12, 2025.12"):
        x.__array_namespace__(api_version="2026.12")


# ---- new functions
def test_isin_against_numpy(arr, to_host):
    for dtype in (np.int8, np.int64, np.uint16, np.float32):
        a = rng.integers(0, 9, size=(4, 5)).astype(dtype)
        b = rng.integers(0, 9, size=6).astype(dtype)
        for invert in (False, True):
            got = xp.isin(arr(a), arr(b), invert=invert)
            assert type(got) is xp.Array and got.dtype == xp.bool
            np.testing.assert_array_equal(to_host(got), np.isin(a, b, invert=invert))
    b = rng.integers(0, 4, size=5)
    got = xp.isin(3, arr(b))  # a scalar x1: a 0-d result
    assert got.shape == () and bool(got) == (3 in b)
    np.testing.assert_array_equal(to_host(xp.isin(arr(b), 2)), b == 2)
    assert str(inspect.signature(xp.isin)) == "(x1, x2, /, *, invert=False)"


def test_broadcast_shapes_against_numpy():
    for _ in range(50):
        ndim = int(rng.integers(0, 5))
        target = tuple(int(n) for n in rng.integers(0, 4, size=ndim))
        shapes = [tuple(1 if rng.random() < 0.4 else n for n in target[int(rng.integers(0, ndim + 1)):])
                  for _ in range(int(rng.integers(1, 4)))]
        assert xp.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes), shapes
    assert xp.broadcast_shapes() == ()
    with pytest.raises(ValueError, match=r"\(2, 3\) and \(4,\)"):
        xp.broadcast_shapes((2, 3), (4,))


def test_eig_and_eigvals(arr, to_host):
    for dtype, complex_dtype in ((np.float64, np.complex128), (np.float32, np.complex64)):
        a = rng.standard_normal((3, 4, 4)).astype(dtype)
        values, vectors = xp.linalg.eig(arr(a))
        assert values.dtype == complex_dtype and vectors.dtype == complex_dtype
        values, vectors = to_host(values), to_host(vectors)
        # a v = lambda v, column by column
        tolerance = 1e-4 if dtype == np.float32 else 1e-10
        np.testing.assert_allclose(a @ vectors, vectors * values[..., None, :], atol=tolerance)
        got = np.sort_complex(to_host(xp.linalg.eigvals(arr(a))))
        np.testing.assert_allclose(got, np.sort_complex(np.linalg.eigvals(a)), atol=tolerance)


def test_eig_where_the_library_has_none(arr, monkeypatch, backend_name):
    if backend_name != "emulate":
        pytest.skip("simulates NumPy without eig")
    monkeypatch.delattr(compat_numpy.linalg, "eig")
    x = arr(np.eye(2))
    with pytest.raises(NotImplementedError, match=r"linalg\.eig is not available on cpu"):
        xp.linalg.eig(x)


# ---- changed functions
def test_expand_dims_with_a_tuple_of_axes(arr, to_host):
    a = rng.standard_normal((2, 3))
    for axis in [(0,), (0, 1), (-1, 0), (1, 3), (-4, -1), 2, -3]:
        got = xp.expand_dims(arr(a), axis=axis)
        np.testing.assert_array_equal(to_host(got), np.expand_dims(a, axis))
    for axis in [(0, 4), (-5,), 3]:
        with pytest.raises(IndexError):
            xp.expand_dims(arr(a), axis=axis)


def test_permute_dims_with_negative_axes(arr, to_host):
    a = rng.standard_normal((2, 3, 4))
    for axes in [(-1, 0, 1), (-1, -2, -3), (2, -3, -2)]:
        np.testing.assert_array_equal(to_host(xp.permute_dims(arr(a), axes)),
                                      np.transpose(a, axes))


def test_searchsorted_with_a_scalar(arr, to_host):
    sorted_ = np.sort(rng.standard_normal(20))
    for value in (float(sorted_[5]), -10.0, 10.0, 0.25):
        for side in ("left", "right"):
            got = xp.searchsorted(arr(sorted_), value, side=side)
            assert type(got) is xp.Array and got.shape == ()
            assert int(got) == np.searchsorted(sorted_, value, side=side)


# ---- device of outputs: the input arrays' device before the context's
def test_outputs_follow_the_input_device(backend_name):
    if backend_name != "emulate":
        pytest.skip("two devices of one machine: the CPU and the emulator")
    x = xp.asarray(rng.standard_normal(4), device="cpu")
    with config.backend("emulate"):
        for result in (xp.add(x, 1), x * 2.0, xp.sum(x), xp.asarray(x), xp.zeros_like(x),
                       xp.astype(x, xp.float32), xp.isin(x, 1.0), xp.clip(x, 0, 1)):
            assert result.device == "cpu", result
        assert xp.zeros(2).device == "emulator"  # no input array: the context's
        assert xp.zeros_like(x, device="emulator").device == "emulator"  # device= first


# ---- x[key] = value promotes value to x's dtype
@pytest.mark.parametrize("target, value, allowed", [
    (np.float32, np.float16, True), (np.float64, np.float32, True), (np.int16, np.int8, True),
    (np.int16, np.uint8, True), (np.complex64, np.float32, True), (np.int8, np.bool_, True),
    (np.float32, np.int64, True),  # across families: no promotion defined, NumPy's cast
    (np.float32, np.float64, False), (np.int8, np.int16, False), (np.uint8, np.int8, False),
    (np.float32, np.complex64, False),
])
def test_setitem_promotes_the_value(arr, to_host, target, value, allowed):
    a = rng.standard_normal((3, 4)).astype(target)
    v = (rng.standard_normal(4) * 3).astype(value)
    x = arr(a.copy())
    if allowed:
        x[1] = arr(v)
        x[arr(np.array([True, False, True]))] = arr(v)  # the library's path checks too
        expected = a.copy()
        expected[[0, 1, 2]] = v.astype(target)
        np.testing.assert_array_equal(to_host(x), expected)
    else:
        with pytest.raises(TypeError, match=f"{np.dtype(value)}.*{np.dtype(target)}"):
            x[1] = arr(v)
        with pytest.raises(TypeError, match=f"{np.dtype(value)}.*{np.dtype(target)}"):
            x[arr(np.array([True, False, True]))] = arr(v)
        np.testing.assert_array_equal(to_host(x), a)  # untouched


# ---- where array_api_compat's functions fall short
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("include_initial", [False, True])
@pytest.mark.parametrize("name", ["cumulative_sum", "cumulative_prod"])
def test_cumulative_of_a_0d_array_is_of_one_element(arr, to_host, name, include_initial, axis):
    h = np.asarray(rng.standard_normal())  # NumPy's: one element (compat's: IndexError)
    got = getattr(xp, name)(arr(h), axis=axis, include_initial=include_initial)
    expected = getattr(np, name)(h, axis=axis, include_initial=include_initial)
    assert type(got) is xp.Array and got.dtype == expected.dtype
    np.testing.assert_array_equal(to_host(got), expected)


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_and_std_are_nan_where_n_minus_correction_is_not_positive(arr, to_host, name):
    """The standard's ``var``/``std``: NaN where ``N - correction <= 0`` or N is 0 (NumPy: inf or
    NaN with a RuntimeWarning, CuPy NaN), silently, the shape and dtype of the reduction;
    NumPy's values elsewhere. Random shapes (0-length dims among them), axes, corrections."""
    rng = np.random.default_rng(59)
    for _ in range(40):
        shape = tuple(int(n) for n in rng.integers(0, 4, size=rng.integers(1, 4)))
        h = rng.standard_normal(shape).astype(rng.choice(["float32", "float64"]))
        axis = None if rng.random() < 0.3 else tuple(
            int(a) for a in rng.choice(len(shape), size=rng.integers(1, len(shape) + 1),
                                       replace=False))
        n = h.size if axis is None else int(np.prod([shape[a] for a in axis]))
        correction = float(rng.choice([0, 1, n, n + 1, n - 0.5]))
        keepdims = bool(rng.random() < 0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = to_host(getattr(xp, name)(arr(h), axis=axis, correction=correction,
                                            keepdims=keepdims))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = np.asarray(getattr(np, name)(h, axis=axis, ddof=correction,
                                                    keepdims=keepdims))
        assert got.shape == expected.shape and got.dtype == expected.dtype
        with warnings.catch_warnings():  # NumPy's dtype= keyword: the same rule
            warnings.simplefilter("error")
            in_float64 = to_host(getattr(xp, name)(arr(h), axis=axis, correction=correction,
                                                   keepdims=keepdims, dtype=np.float64))
        assert in_float64.shape == expected.shape and in_float64.dtype == np.float64
        if n - correction <= 0 or n == 0:
            assert np.isnan(got).all() and np.isnan(in_float64).all(), (shape, axis, correction)
        else:
            np.testing.assert_allclose(got, expected, rtol=1e-5)
            np.testing.assert_allclose(in_float64, expected, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
def test_repeat_takes_counts_of_every_integer_dtype(arr, to_host, dtype):
    h = rng.standard_normal((3, 4))
    counts = rng.integers(0, 4, size=4)
    got = xp.repeat(arr(h), arr(counts.astype(dtype)), axis=1)
    np.testing.assert_array_equal(to_host(got), np.repeat(h, counts, axis=1))


@pytest.mark.parametrize("dtype", ["bool", "int16", "int64", "uint8"])
def test_pinv_of_integers_is_in_float64(arr, to_host, dtype):
    h = rng.integers(0, 5, (2, 4, 3)).astype(dtype)
    got = xp.linalg.pinv(arr(h))  # compat's default rtol asked finfo(int): ValueError
    expected = np.linalg.pinv(h)
    assert got.dtype == expected.dtype == np.float64
    np.testing.assert_allclose(to_host(got), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0), (2, 0, 3), (0, 3, 3)])
def test_matrix_rank_of_empty_matrices_is_zero(arr, to_host, shape):
    h = np.ones(shape)
    got = xp.linalg.matrix_rank(arr(h))  # compat's tolerance took the max of no singular value
    expected = np.linalg.matrix_rank(h)
    assert type(got) is xp.Array and got.device == arr(h).device
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(to_host(got), expected)


@pytest.mark.parametrize("shapes", [((2, 2), (3,)), ((), (3,)), ((3,), (1, 2))])
def test_outer_takes_vectors_alone(arr, to_host, shapes):
    h1, h2 = (rng.standard_normal(s) for s in shapes)
    with pytest.raises(ValueError, match="one-dimensional"):  # the oracle
        np.linalg.outer(h1, h2)
    with pytest.raises(ValueError, match="one-dimensional"):  # compat's flattened them
        xp.linalg.outer(arr(h1), arr(h2))
    h1, h2 = rng.standard_normal(2), rng.standard_normal(0)
    np.testing.assert_array_equal(to_host(xp.linalg.outer(arr(h1), arr(h2))), np.outer(h1, h2))


@pytest.mark.parametrize("mode", ["r", "raw", "economic", "full"])
def test_qr_takes_the_standards_modes_alone(arr, mode):
    x = arr(rng.standard_normal((3, 2)))
    with pytest.raises(ValueError, match="'reduced' or 'complete'"):  # "raw": (h, tau) as (Q, R)
        xp.linalg.qr(x, mode=mode)
    q, r = xp.linalg.qr(x, mode="complete")
    assert (q.shape, r.shape) == ((3, 3), (3, 2))


@pytest.mark.parametrize("shapes, axis", [(((2,), (2,)), -1), (((4, 2), (4, 3)), -1),
                                          (((3, 4), (3, 4)), -1)])
def test_cross_takes_3_element_vectors_alone(arr, to_host, shapes, axis):
    h1, h2 = (rng.standard_normal(s) for s in shapes)
    with pytest.raises(ValueError):  # the oracle
        np.linalg.cross(h1, h2, axis=axis)
    with warnings.catch_warnings():  # compat's took 2-element ones, NumPy's deprecation
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="3-element vectors"):
            xp.linalg.cross(arr(h1), arr(h2), axis=axis)
    h1, h2 = rng.standard_normal((3, 4)), rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(to_host(xp.linalg.cross(arr(h1), arr(h2), axis=-2)),
                               np.linalg.cross(h1, h2, axis=-2))


@pytest.mark.parametrize("shapes", [((2, 1, 3, 3), (4, 3, 3)), ((3, 3), (2, 3, 2))])
def test_solve_broadcasts_the_stacks(arr, to_host, monkeypatch, shapes):
    """The stacks of x1 and x2 broadcast (the standard's, NumPy's): the library is given them
    broadcast, as CuPy 14.2's solve takes them (unequal stacks: ValueError)."""
    h1, h2 = (rng.standard_normal(s) for s in shapes)
    x1 = arr(h1)
    with config.backend(x1._b):  # the library of x1's device
        library = delegated.namespace_of(x1._a).linalg
    solve, asked = library.solve, []
    monkeypatch.setattr(library, "solve", lambda a, b: asked.append((a.shape, b.shape))
                        or solve(a, b))
    got = xp.linalg.solve(x1, arr(h2))
    expected = np.linalg.solve(h1, h2)
    assert [a[:-2] for a in asked[0]] == [expected.shape[:-2]] * 2
    np.testing.assert_allclose(to_host(got), expected, rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="do not broadcast"):
        xp.linalg.solve(arr(rng.standard_normal((3, 3, 3))), arr(rng.standard_normal((2, 3, 3))))


# ---- creation and type queries: one device for a list of Arrays, values as NumPy's, silent
@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_asarray_of_a_list_of_arrays_is_on_their_device(device):
    h = rng.standard_normal((3, 4)).astype(np.float32)
    rows = [xp.asarray(r, device=device) for r in h]
    for got in (xp.asarray(rows), xp.asarray(tuple(rows)), xp.asarray(rows, dtype=xp.float64)):
        assert type(got) is xp.Array and got.device == rows[0].device
        np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), h.astype(got.dtype))
    assert xp.asarray([rows[0][0], 2.5]).device == rows[0].device  # an Array and a scalar
    other = "emulator" if device == "cpu" else "cpu"
    with pytest.raises(ValueError, match="different devices"):
        xp.asarray([rows[0], xp.asarray(h[1], device=other)])


@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_conversions_out_of_range_are_silent_on_every_device(device):
    """A float too large for the dtype is infinity, without NumPy's RuntimeWarning, as our
    cast kernel gives it for an array (floating-point warnings are silent everywhere)."""
    values = [float(v) for v in rng.standard_normal(4) * 1e40]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = xp.asarray(values, dtype=xp.float32, device=device)
        spaced = xp.linspace(0.0, np.inf, 3, device=device)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(got.to_device("cpu")),
                                      np.asarray(values, dtype=np.float32))
        np.testing.assert_array_equal(np.asarray(spaced.to_device("cpu")),
                                      np.linspace(0.0, np.inf, 3))


def test_bfloat16_type_queries_answer_as_for_the_other_dtypes():
    if xp.__array_namespace_info__().dtypes(kind="bfloat16") == {}:
        pytest.skip("bfloat16 needs ml_dtypes")
    import ml_dtypes

    info, reference = xp.finfo(xp.bfloat16), ml_dtypes.finfo(ml_dtypes.bfloat16)
    for field in ("eps", "max", "min", "smallest_normal"):
        value = getattr(info, field)
        assert type(value) is float and value == float(getattr(reference, field))
    assert info.bits == 16 and info.dtype == xp.bfloat16
    assert type(xp.finfo(xp.float16).max) is float
    assert xp.isdtype(xp.bfloat16, ("integral", xp.bfloat16))
    assert xp.isdtype(xp.bfloat16, "real floating") and not xp.isdtype(xp.bfloat16, "integral")
    for kind in ("foo", "Bool", ("foo",)):
        with pytest.raises(ValueError):
            xp.isdtype(xp.bfloat16, kind)
        with pytest.raises(ValueError):
            xp.isdtype(xp.float16, kind)
