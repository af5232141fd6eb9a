"""Beyond the standard (``infini_cupy/namespace/extensions.py``): NumPy's functions and extra
keywords that generic code calls on the namespace, on Arrays of the ``cpu`` device and of the
suite's device (the emulator, or the GPU with ``--backend cuda``), against NumPy on the same
random data; constant ``pad`` and ``round(x, decimals)`` run our kernels off the ``cpu`` device.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy.runtime.launch import recording
from tests.support.dtype_cases import assert_library_close
from tests.support.layout_cases import shares

rng = np.random.default_rng(28)


def same(got, expected, to_host, device=None):
    assert type(got) is xp.Array, type(got)
    if device is not None:
        assert got.device == device
    host = to_host(got)
    expected = np.asarray(expected)
    assert host.dtype == expected.dtype and host.shape == expected.shape
    assert_library_close(host, expected)  # these are the array library's computations


def with_nans(shape):
    h = rng.standard_normal(shape)
    h[rng.random(shape) < 0.3] = np.nan
    h[:, 0] = rng.standard_normal(h[:, 0].shape)  # no all-NaN slice: nanargmax raises there
    return h


# (name, call with the namespace m ∈ {infini_cupy, numpy} and the input a)
CASES = [
    ("transpose", lambda m, a: m.transpose(a)),
    ("transpose-axes", lambda m, a: m.transpose(a, (1, 0, 2))),
    ("pad-int", lambda m, a: m.pad(a, 1)),
    ("pad-pairs", lambda m, a: m.pad(a, ((0, 1), (2, 0), (1, 1)), constant_values=-3.5)),
    ("pad-edge", lambda m, a: m.pad(a, (1, 2), mode="edge")),
    ("pad-reflect", lambda m, a: m.pad(a, 2, mode="reflect")),
    ("pad-per-axis-values", lambda m, a: m.pad(a, 1, constant_values=((1, 2), (3, 4), (5, 6)))),
    ("einsum", lambda m, a: m.einsum("ijk,ikl->ijl", a, m.transpose(a, (0, 2, 1)))),
    ("einsum-trace", lambda m, a: m.einsum("iij->j", a[:, :3, :3])),
    ("cumsum", lambda m, a: m.cumsum(a, axis=1)),
    ("cumsum-flat", lambda m, a: m.cumsum(a)),
    ("cumprod", lambda m, a: m.cumprod(a, axis=-1, dtype=np.float32)),
    ("round-2", lambda m, a: m.round(a, 2)),
    ("round-minus-1", lambda m, a: m.round(a * 100, -1)),
    ("round-0", lambda m, a: m.round(a)),
    ("squeeze-all", lambda m, a: m.squeeze(a[:1, :, 1:2])),
    ("mean-dtype", lambda m, a: m.mean(a, axis=0, dtype=np.float32)),
    ("std-ddof", lambda m, a: m.std(a, axis=(0, 2), ddof=1)),
    ("var-ddof", lambda m, a: m.var(a, ddof=2)),
    ("var-dtype", lambda m, a: m.var(a, axis=1, dtype=np.float32)),
    ("full_like-shape", lambda m, a: m.full_like(a, 2.5, shape=(2, 3))),
    ("zeros_like-shape", lambda m, a: m.zeros_like(a, shape=(4,), dtype=np.int16)),
    ("ones_like-shape", lambda m, a: m.ones_like(a, shape=5)),
    ("median", lambda m, a: m.median(a, axis=1)),
    ("quantile", lambda m, a: m.quantile(a, 0.25, axis=1)),
    ("quantile-q-array-keepdims", lambda m, a: m.quantile(
        a, xp.asarray([0.1, 0.5, 0.95], device=a.device) if m is xp else np.asarray([0.1, 0.5, 0.95]),
        axis=(0, 2), keepdims=True)),
    ("quantile-method", lambda m, a: m.quantile(a, 0.3, method="nearest")),
    ("gradient-axis", lambda m, a: m.gradient(a, axis=1)),
    ("gradient-spacing", lambda m, a: m.gradient(a, 0.5, axis=-1, edge_order=2)),
    ("cross", lambda m, a: m.cross(a[..., :3], a[..., 2:])),
    ("cross-axes", lambda m, a: m.cross(a[:, :3], a[:, 1:4], axisa=1, axisb=1, axisc=0)),
]
NAN_CASES = [
    (name, lambda m, a, name=name: getattr(m, name)(a, axis=1))
    for name in ("nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanstd", "nanvar",
                 "nanargmax", "nanargmin", "nancumsum", "nancumprod", "nanmedian")
] + [
    ("nanvar-ddof-keepdims", lambda m, a: m.nanvar(a, axis=0, ddof=1, keepdims=True)),
    ("nansum-all", lambda m, a: m.nansum(a)),
    ("nanquantile", lambda m, a: m.nanquantile(a, 0.75, axis=2)),
]


@pytest.mark.parametrize("name, call", CASES + NAN_CASES, ids=[c[0] for c in CASES + NAN_CASES])
def test_against_numpy(on, to_host, name, call):
    h = with_nans((3, 4, 5)) if name.startswith("nan") else rng.standard_normal((3, 4, 5))
    x = on(h)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's all-NaN slice warnings
        expected = call(np, h)
        got = call(xp, x)
    same(got, expected, to_host, device=x.device)


def test_integer_and_complex_round(on, to_host):
    ints = rng.integers(-10_000, 10_000, size=(4, 6)).astype(np.int32)
    same(xp.round(on(ints), 2), np.round(ints, 2), to_host)
    same(xp.round(on(ints), -2), np.round(ints, -2), to_host)
    z = rng.standard_normal(7) + 1j * rng.standard_normal(7)
    same(xp.round(on(z), 1), np.round(z, 1), to_host)
    for dtype in (np.float16, np.float32):
        h = (rng.standard_normal(50) * 30).astype(dtype)
        same(xp.round(on(h), 1), np.round(h, 1), to_host)
        same(xp.round(on(h), -1), np.round(h, -1), to_host)


def test_einsum_of_no_subscripts_str_is_a_type_error(on):
    """An Array first (NumPy's interleaved form) recursed through NumPy's dispatch until
    RecursionError."""
    x = on(np.eye(3))
    for first in (x, np.eye(3), None):
        with pytest.raises(TypeError, match=r"einsum\(\) takes the subscripts form, a str first"):
            xp.einsum(first, x)


@pytest.mark.parametrize("decimals", [2**70, -400])
def test_round_of_decimals_beyond_float64_is_an_overflow_error_not_a_hang(on, decimals):
    # 10**(2**70) as a Python int never finishes; NumPy's round refuses 2**70 too
    x = on(np.array([1.5, -2.25]))
    with pytest.raises(OverflowError, match=f"decimals={decimals} .*beyond float64"):
        xp.round(x, decimals)
    with pytest.raises(OverflowError, match="beyond float64"):
        x.round(decimals)


@pytest.mark.parametrize("dtype, decimals", [("int32", 2), ("int32", -1), ("float32", 1),
                                             ("float32", -1), ("complex64", 1)])
def test_round_with_decimals_refuses_the_out_elementwise_functions_refuse(on, to_host, dtype,
                                                                          decimals):
    """round(x, decimals, out=o) takes the out= of every elementwise function, in round()'s
    name: o of x's shape (NumPy refuses a bigger one too, never broadcasts into it), writeable
    and not overlapping itself, x's dtype cast same_kind; o is left as it was."""
    h = (rng.standard_normal((3, 4)) * 100).astype(dtype)
    x = on(h)

    def empty(shape, dt):
        return xp.asarray(np.full(shape, 7, dt), device=x.device)

    bad = [(empty((2, 3, 4), dtype), ValueError, "shape"),
           (empty((3, 4), "bool"), TypeError, "cast"),
           (xp.broadcast_to(empty((1, 4), dtype), (3, 4)), ValueError,
            "(read-only|overlaps itself)")]
    for out, error, words in bad:
        with pytest.raises(error, match=rf"round\(\).*{words}"):
            xp.round(x, decimals, out=out)
        kept = np.asarray(xp.to_device(out, "cpu"))
        np.testing.assert_array_equal(kept, np.full(kept.shape, 7, kept.dtype))
    out = empty((3, 4), "complex128")  # same_kind, the widening cast
    assert xp.round(x, decimals, out=out) is out
    same(out, np.round(h, decimals).astype("complex128"), to_host)


def test_round_and_pad_out_of_place_and_into_out(on, to_host):
    h = rng.standard_normal((3, 4))
    out = on(np.zeros((3, 4)))
    assert xp.round(on(h), 3, out=out) is out
    same(out, np.round(h, 3), to_host)
    padded = xp.pad(on(h.astype(np.int8)), 2, constant_values=1.5)  # cast as NumPy assigns
    same(padded, np.pad(h.astype(np.int8), 2, constant_values=1.5), to_host)
    same(xp.pad(on(np.zeros((0, 2))), 1), np.pad(np.zeros((0, 2)), 1), to_host)
    same(xp.pad(on(h[0, 0]), 1), np.pad(h[0, 0], 1), to_host)  # 0-d: nothing to pad


def test_constant_pad_and_round_run_our_kernels(backend_name, arr, to_host):
    if backend_name == "numpy":
        pytest.skip("our kernels run on emulator and GPU Arrays")
    h = rng.standard_normal((5, 6)).astype(np.float32).T  # a transposed input
    with recording() as launches:
        padded = xp.pad(arr(h), ((1, 0), (2, 3)), constant_values=7)
        rounded = xp.round(arr(h), 2)
    same(padded, np.pad(h, ((1, 0), (2, 3)), constant_values=7), to_host)
    same(rounded, np.round(h, 2), to_host)
    assert len(launches) == 5  # fill and interior copy; multiply, round, divide


def test_namespace_functions_take_native_arrays_too(to_device, to_host):
    h = rng.standard_normal((2, 3))
    native = to_device(h)  # NumPy in emulation, CuPy on a GPU
    assert type(xp.cumsum(native)) is type(native)
    assert type(xp.nanmax(native)) is type(native) and xp.nanmax(native).ndim == 0
    np.testing.assert_array_equal(to_host(xp.pad(native, 1)), np.pad(h, 1))
    assert shares(xp.transpose(native), native)  # a view


def test_sliding_window_view_is_a_read_only_view(on, to_host):
    h = rng.standard_normal((4, 5))
    windows = xp.lib.stride_tricks.sliding_window_view(on(h), 3, axis=1)
    same(windows, np.lib.stride_tricks.sliding_window_view(h, 3, axis=1), to_host)
    import infini_cupy.lib.stride_tricks as tricks  # a module, like linalg and fft

    assert tricks.sliding_window_view is xp.lib.stride_tricks.sliding_window_view


def test_numpy_calls_on_arrays_reach_the_extensions(on, to_host):
    h = rng.standard_normal((3, 4))
    same(np.round(on(h), 1), np.round(h, 1), to_host)
    same(np.std(on(h), axis=0, ddof=1), np.std(h, axis=0, ddof=1), to_host)
    same(np.squeeze(on(h[None])), h, to_host)


@pytest.mark.parametrize("call, error, match", [
    (lambda x: xp.std(x, correction=1, ddof=0), ValueError, "correction=1 and ddof=0 disagree"),
    (lambda x: xp.pad(x, -1), ValueError, "must not be negative"),
    (lambda x: xp.pad(x, 1.5), TypeError, "pad_width must be integers"),
    (lambda x: xp.pad(x, ((1, 1), (1, 1), (1, 1))), ValueError, "does not fit an array of 2 dims"),
    (lambda x: xp.pad(x.astype(xp.int8), 1, constant_values=np.nan), ValueError, "NaN"),
    (lambda x: xp.round(x, 1.5), TypeError, "integer"),
    (lambda x: xp.squeeze(x, axis=0), ValueError, "squeeze"),
])
def test_bad_input(on, call, error, match):
    with pytest.raises(error, match=match):
        call(on(rng.standard_normal((2, 3))))


def test_what_xarray_calls_beyond_the_standard(on, to_host):
    """xarray's ``differentiate`` calls ``xp.gradient`` (a tuple for every axis), ``cross``
    ``xp.cross``, ``np.any(d)`` and ``polyfit`` ``xp.any(..., out=None)``: NumPy's answers,
    on Arrays and through xarray; ``out=`` of ``all``/``any`` written and returned."""
    h = rng.standard_normal((4, 3))
    x = on(h)
    got = xp.gradient(x)
    assert type(got) is tuple and len(got) == 2
    for g, e in zip(got, np.gradient(h)):
        same(g, e, to_host, device=x.device)
    for name in ("all", "any"):
        out = on(np.zeros(3, bool))
        assert getattr(xp, name)(x > 0, axis=0, out=out) is out
        np.testing.assert_array_equal(to_host(out), getattr(np, name)(h > 0, axis=0))
        same(getattr(xp, name)(x > 0, axis=1, out=None), getattr(np, name)(h > 0, axis=1),
             to_host, device=x.device)
        with pytest.raises(ValueError, match=r"out has shape \(4,\)"):
            getattr(xp, name)(x > 0, axis=0, out=on(np.zeros(4, bool)))
    if str(x.device).startswith("cuda"):
        return  # xarray's polyfit and friends take NumPy's functions to the host: CuPy's too
    xr = pytest.importorskip("xarray")
    d, e = (xr.DataArray(v, dims=("n", "v")) for v in (x, h))
    with xp.backend("emulate" if x.device == "emulator" else "numpy"):
        assert bool(np.any(d > 0.5)) == bool(np.any(e > 0.5))
        np.testing.assert_allclose(to_host(d.differentiate("n").data), e.differentiate("n").data)
        np.testing.assert_allclose(to_host(xr.cross(d, d[::-1], dim="v").data),
                                   xr.cross(e, e[::-1], dim="v").data)
        np.testing.assert_allclose(
            to_host(d.polyfit("n", 1).polyfit_coefficients.data),
            e.polyfit("n", 1).polyfit_coefficients.data, rtol=1e-10)


def test_extensions_are_listed_apart_from_the_standard():
    from infini_cupy.namespace import extensions

    from .test_names import STANDARD_NAMES

    assert set(extensions.__all__) <= set(xp.__all__)
    assert not set(extensions.__all__) & set(STANDARD_NAMES)
    assert set(extensions.KEYWORDS) <= set(STANDARD_NAMES)  # keywords on the standard's own
    for name in extensions.__all__:
        assert name == "lib" or getattr(xp, name).__doc__, name


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
@pytest.mark.parametrize("shape", [(7,), (4, 5), (3, 4, 5)])
def test_nanquantile_by_slices_is_numpys(dtype, shape):
    """CuPy 14.2 has no ``nanquantile`` (seen on an H200, 2026-12-04): ours takes the library's
    ``quantile`` slice by slice, as NumPy does. Against NumPy's own, NumPy as the library:
    values, shape and dtype (which NumPy takes from the first slice: an all-NaN first slice
    gives the input's dtype), every method family, axes and keepdims."""
    import itertools

    from infini_cupy.namespace.extensions import _nanquantile_by_slices

    rng = np.random.default_rng(len(shape) * 10 + np.dtype(dtype).itemsize)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
        x[rng.random(shape) < 0.3] = np.nan
        if len(shape) > 1:
            x[0] = np.nan  # an all-NaN slice
    else:
        x = rng.integers(-9, 9, shape).astype(dtype)
    axes = [None, *range(len(shape))] + ([(0, 2), (-1, 0)] if len(shape) == 3 else [])
    for axis, method, keepdims, q in itertools.product(
            axes, ["linear", "lower", "nearest", "median_unbiased", "inverted_cdf"],
            [False, True], [0.3, [0.1, 0.9]]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # All-NaN slice
            expected = np.nanquantile(x, q, axis=axis, method=method, keepdims=keepdims)
            got = _nanquantile_by_slices(np, x, q, axis, method, keepdims)
        assert (got.shape, got.dtype) == (expected.shape, expected.dtype), (axis, method, q)
        np.testing.assert_array_equal(got, expected)


# ---- routines CuPy 14.2 answers apart from NumPy: the GPU computes or refuses as NumPy does
QUANTILE_METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                    "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
                    "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16])
def test_quantile_every_method_and_nan_as_numpy(on, to_host, dtype):
    """CuPy 14.2's quantile has 5 methods, answers a number for a slice holding NaN and takes
    q of one dim at most (cupy/_statistics/order.py): every device gives NumPy's answer."""
    h = (rng.standard_normal((4, 5, 6)) * 10).astype(dtype)
    if h.dtype.kind == "f":
        h[rng.random(h.shape) < 0.1] = np.nan
        h[1, :, 2] = np.inf
    x = on(h)
    qs = [0.3, 1, [0.0, 0.45, 1.0], np.array([[0.2, 0.5], [0.9, 1.0]])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for method in QUANTILE_METHODS:
            for axis, keepdims, q in [(None, False, qs[0]), (1, True, qs[2]), ((0, 2), False, qs[3]),
                                      (-1, False, qs[1])]:
                expected = np.quantile(h, q, axis=axis, method=method, keepdims=keepdims)
                got = xp.quantile(x, q, axis=axis, method=method, keepdims=keepdims)
                assert to_host(got).dtype == expected.dtype, (method, axis, q)
                np.testing.assert_array_equal(to_host(got), expected, err_msg=f"{method} {axis} {q}")
            if h.dtype.kind == "f":
                expected = np.nanquantile(h, [0.25, 0.8], axis=1, method=method)
                got = xp.nanquantile(x, [0.25, 0.8], axis=1, method=method)
                np.testing.assert_array_equal(to_host(got), expected, err_msg=method)


@pytest.mark.parametrize("call, error, match", [
    (lambda x: xp.quantile(x, [-0.5, 0.5]), ValueError, "range"),  # CuPy: one q inside is enough
    (lambda x: xp.quantile(x, [0.5, 1.5], method="lower"), ValueError, "range"),
    (lambda x: xp.quantile(x, np.nan), ValueError, "range"),
    (lambda x: xp.quantile(x, 0.5, method="bogus"), ValueError, "not a valid method"),
    (lambda x: xp.nanquantile(x, 2.0), ValueError, "range"),
    # NumPy's IndexError over no values ("index -1 is out of bounds"), saying so
    (lambda x: xp.quantile(x[:, :0], 0.5, axis=1), IndexError,
     r"quantile over no values: x of shape \(3, 0\), axis=1"),
    (lambda x: xp.quantile(x[:0], [0.2, 0.5]), IndexError,
     r"quantile over no values: x of shape \(0, 4\), axis=None"),
    (lambda x: xp.quantile(x.astype(xp.complex64), 0.5), TypeError, "real numbers"),
])
def test_quantile_refuses_as_numpy(on, call, error, match):
    h = rng.standard_normal((3, 4))
    with pytest.raises(error, match=match):
        call(on(h))
    with pytest.raises(error, match=match):  # NumPy's own refusal
        call(xp.asarray(h, device="cpu"))


def test_nanargmax_nanargmin_as_numpy(on, to_host):
    """CuPy 14.2 answers -1 for an all-NaN slice and passes NaN over where NumPy reads it as
    -inf (inf): NumPy's index and ValueError on every device."""
    h = rng.standard_normal((4, 5))
    h[rng.random(h.shape) < 0.3] = np.nan
    h[:, 0] = [np.nan, -np.inf, np.inf, 1.0]
    h[0, 1:] = -np.inf
    h[2, 1:] = np.inf
    for name in ("nanargmax", "nanargmin"):
        for axis, keepdims in [(1, False), (1, True), (None, False)]:
            expected = getattr(np, name)(h, axis=axis, keepdims=keepdims)
            same(getattr(xp, name)(on(h), axis=axis, keepdims=keepdims), expected, to_host)
        all_nan = np.where(np.eye(4, 5) > 0, h, np.nan)  # its last column all NaN
        with pytest.raises(ValueError, match="All-NaN slice encountered"):
            getattr(xp, name)(on(all_nan), axis=0)
        same(getattr(xp, name)(on(np.array([np.nan, -np.inf, np.inf]))),
             getattr(np, name)(np.array([np.nan, -np.inf, np.inf])), to_host)
        same(getattr(xp, name)(on(np.array([3, 1, 3], np.int8))),
             getattr(np, name)(np.array([3, 1, 3], np.int8)), to_host)


PAD_CASES = [
    ((7, 1), "wrap", {}), (((2, 9), (5, 0)), "wrap", {}),
    ((6, 2), "reflect", {}), ((8, 3), "reflect", {"reflect_type": "odd"}),
    (((9, 1), (3, 7)), "symmetric", {"reflect_type": "odd"}), ((5, 5), "symmetric", {}),
    (2, "median", {}), (((1, 3), (2, 0)), "median", {"stat_length": 2}),
    ((3, 1), "median", {"stat_length": ((1,), (3,))}),
    ((2, 3), "mean", {"stat_length": ((2,), (1,))}),  # CuPy reshapes (2, 1): ValueError
    (1, "linear_ramp", {"end_values": ((5,), (-4,))}),
    ({1: (1, 2)}, "edge", {}),  # NumPy 2's {axis: width}
    (((1, 0), (0, 4)), "maximum", {"stat_length": 1}),
]


@pytest.mark.parametrize("pad_width, mode, kwargs", PAD_CASES,
                         ids=[f"{c[1]}-{i}" for i, c in enumerate(PAD_CASES)])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_pad_modes_as_numpy(on, to_host, pad_width, mode, kwargs, dtype):
    """CuPy 14.2's pad refuses mode="median", wraps and reflects pads longer than the axis as
    NumPy 1 did and reshapes per-axis arguments NumPy broadcasts (cupy/_padding/pad.py)."""
    h = (rng.standard_normal((3, 4)) * 10).astype(dtype)
    expected = np.pad(h, pad_width, mode=mode, **kwargs)
    same(xp.pad(on(h), pad_width, mode=mode, **kwargs), expected, to_host)
    np.testing.assert_array_equal(to_host(xp.pad(on(h), pad_width, mode=mode, **kwargs)),
                                  expected)


@pytest.mark.parametrize("call, error, match", [
    (lambda x: xp.pad(x, 1, mode="median", end_values=1), ValueError, "unsupported keyword"),
    (lambda x: xp.pad(x[:0], 1, mode="wrap"), ValueError, "can't extend empty axis 0"),
    (lambda x: xp.pad(x, 1, mode="median", stat_length=-1), ValueError, "negative"),
    (lambda x: xp.pad(x, 1.0, mode="edge"), TypeError, "integral type"),
    (lambda x: xp.pad(x, 1, mode="bogus"), ValueError, "not supported"),
])
def test_pad_refuses_as_numpy(on, call, error, match):
    h = rng.standard_normal((3, 4))
    with pytest.raises(error, match=match):
        call(on(h))
    with pytest.raises(error, match=match):
        call(xp.asarray(h, device="cpu"))
    assert xp.pad(on(h[:0]), ((0, 0), (1, 1)), mode="wrap").shape == (0, 6)


@pytest.mark.parametrize("call, match", [
    (lambda a, b: xp.linalg.inv(a), "Singular matrix"),
    (lambda a, b: xp.linalg.solve(a, b), "Singular matrix"),
    (lambda a, b: xp.linalg.inv(xp.stack([a, a])), "Singular matrix"),  # CuPy's batched path
    (lambda a, b: xp.linalg.cholesky(-(xp.linalg.matrix_transpose(a) @ a)
                                     - xp.eye(4, device=a.device)), "not positive definite"),
])
def test_linalg_of_a_singular_matrix_raises_as_numpy(on, to_host, call, match):
    """CuPy 14.2 answers NaN/inf for a singular matrix unless cupyx.errstate(linalg='raise')
    (cupy/linalg/_util.py): LinAlgError, in NumPy's words, on every device."""
    h = rng.standard_normal((4, 4))
    h[2] = h[0] + h[1] * 0  # a repeated row: exactly singular
    h[3] = 0
    a, b = on(h), on(rng.standard_normal(4))
    with pytest.raises(np.linalg.LinAlgError, match=match):
        call(a, b)
    same(xp.linalg.det(a), np.linalg.det(h), to_host)  # no error: NumPy's 0
    regular = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    same(xp.linalg.inv(on(regular)), np.linalg.inv(regular), to_host)
    with pytest.raises(np.linalg.LinAlgError, match="square"):  # an argument's check as it is
        xp.linalg.inv(on(rng.standard_normal((2, 3))))
