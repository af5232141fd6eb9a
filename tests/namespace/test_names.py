"""The namespace defines every name of the array API standard 2025.12; the delegated part works.

The name lists are data copied from the standard's stubs (``array_api_stubs/_2025_12``). The
elementwise functions come from our kernels (``ELEMENTWISE``); copying data movement is ours
too (``OURS_DATA_MOVEMENT``, in ``_data_movement``); everything else is ``_delegated``.
"""

from __future__ import annotations

import importlib
import math
import re
import warnings

import array_api_compat
import numpy as np
import pytest

import infini_cupy
from infini_cupy import arrays, config
from infini_cupy.namespace import delegated as _delegated
from infini_cupy.namespace import info as _info

ELEMENTWISE = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1", "floor",
    "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite", "isinf", "isnan",
    "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round",
    "sign", "signbit", "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc",
]
STANDARD_FUNCTIONS = {
    "creation": [
        "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
        "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
    ],
    "data_type": ["astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type"],
    "elementwise": ELEMENTWISE,
    "indexing": ["take", "take_along_axis"],
    "linear_algebra": ["matmul", "matrix_transpose", "tensordot", "vecdot"],
    "manipulation": [
        "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
        "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    ],
    "searching": ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"],
    "set": ["isin", "unique_all", "unique_counts", "unique_inverse", "unique_values"],
    "sorting": ["argsort", "sort"],
    "statistical": [
        "cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var",
    ],
    "utility": ["all", "any", "diff"],
}
CONSTANTS = ["e", "inf", "nan", "newaxis", "pi"]
DTYPES = [
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
]
INSPECTION = ["__array_api_version__", "__array_namespace_info__"]
EXTENSIONS = ["linalg", "fft"]
LINALG = [
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
]
FFT = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]
STANDARD_NAMES = (
    [n for family in STANDARD_FUNCTIONS.values() for n in family]
    + CONSTANTS + DTYPES + INSPECTION + EXTENSIONS
)

# Copies on our rearrange kernel (_data_movement), not delegated.
OURS_DATA_MOVEMENT = ["astype", "broadcast_shapes", "concat", "repeat", "reshape", "roll", "stack",
                      "tile", "unstack"]
# Provided by our kernels, not by _delegated: elementwise and copying data movement.
PROVIDED_ELSEWHERE = ELEMENTWISE + OURS_DATA_MOVEMENT


def test_name_lists_are_the_standards():
    assert len(ELEMENTWISE) == len(set(ELEMENTWISE)) == 67
    assert len(STANDARD_NAMES) == len(set(STANDARD_NAMES))
    assert len(LINALG) == 25 and len(FFT) == 14
    assert set(OURS_DATA_MOVEMENT) <= set(STANDARD_NAMES)


def test_every_standard_name_is_in_infini_cupy():
    """The whole namespace: fails until the elementwise functions are wired into __init__."""
    missing = [n for n in STANDARD_NAMES if not hasattr(infini_cupy, n)]
    missing += [f"linalg.{n}" for n in LINALG if not hasattr(getattr(infini_cupy, "linalg", None), n)]
    missing += [f"fft.{n}" for n in FFT if not hasattr(getattr(infini_cupy, "fft", None), n)]
    elsewhere = [n for n in missing if n in PROVIDED_ELSEWHERE]
    delegated = [n for n in missing if n not in PROVIDED_ELSEWHERE]
    assert not missing, (
        f"{len(missing)} standard names missing from infini_cupy; "
        f"elementwise ({len(elsewhere)}): {', '.join(elsewhere) or '-'}; "
        f"others, from _delegated ({len(delegated)}): {', '.join(delegated) or '-'}"
    )
    assert infini_cupy.__array_api_version__ == "2025.12"


def test_delegated_defines_everything_but_elementwise():
    expected = [n for n in STANDARD_NAMES if n not in PROVIDED_ELSEWHERE]
    assert sorted(_delegated.DELEGATED_NAMES) == sorted(expected)
    assert sorted(_delegated.__all__) == sorted(expected + _delegated.EXTENSION_NAMES)
    for name in expected:
        assert hasattr(_delegated, name), name
    assert sorted(_delegated.linalg.__all__) == sorted(LINALG)
    assert sorted(_delegated.fft.__all__) == sorted(FFT)
    for name in LINALG:
        assert callable(getattr(_delegated.linalg, name)), name
    for name in FFT:
        assert callable(getattr(_delegated.fft, name)), name
    assert _delegated.__array_api_version__ == "2025.12"


def test_submodules_import_like_modules():
    assert importlib.import_module("infini_cupy.linalg") is infini_cupy.linalg
    assert importlib.import_module("infini_cupy.fft") is infini_cupy.fft
    assert infini_cupy.linalg.matmul is infini_cupy.matmul
    assert _delegated.linalg.matmul is _delegated.matmul


def test_constants_and_dtypes():
    assert _delegated.e == math.e and _delegated.pi == math.pi
    assert _delegated.inf == math.inf and math.isnan(_delegated.nan)
    assert _delegated.newaxis is None
    for name in DTYPES:
        dtype = getattr(_delegated, name)
        assert isinstance(dtype, np.dtype) and dtype == np.dtype(name)
    assert np.zeros(2, dtype=_delegated.float32).dtype == _delegated.float32


# --- the delegated functions, with NumPy as the oracle ------------------------------------

xp = infini_cupy
rng = np.random.default_rng(0)


@pytest.fixture
def same(to_device, to_host):
    """``same(got, expected, kind)``: ``got`` of type ``kind`` (by default the type of the
    native arrays given: NumPy in emulation, CuPy on a GPU; creation functions give Arrays)
    and, on the host, close to NumPy's ``expected``."""
    native = type(to_device(np.zeros(1)))

    def check(got, expected, kind=None):
        assert type(got) is (kind or native), type(got)
        got = to_host(got)
        assert got.dtype == np.asarray(expected).dtype
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)

    return check


def test_creation_on_the_default_and_cpu_devices(to_device, same):
    new = xp.Array
    for device in (None, "cpu"):
        same(xp.zeros((2, 3), device=device), np.zeros((2, 3)), new)
        same(xp.ones(4, dtype=xp.int32, device=device), np.ones(4, dtype=np.int32), new)
        same(xp.full((2,), 7, device=device), np.full((2,), 7), new)
        same(xp.arange(1, 10, 3, device=device), np.arange(1, 10, 3), new)
        same(xp.eye(3, 4, k=1, device=device), np.eye(3, 4, k=1), new)
        same(xp.linspace(0, 1, 5, device=device), np.linspace(0, 1, 5), new)
        assert xp.empty((2, 2), device=device).shape == (2, 2)
    h = rng.standard_normal((2, 3))
    x = to_device(h)
    same(xp.zeros_like(x), np.zeros_like(h))
    same(xp.ones_like(x, dtype=xp.float32, device="cpu"), np.ones_like(h, dtype=np.float32),
         np.ndarray)
    same(xp.full_like(x, 2.5), np.full_like(h, 2.5))
    assert xp.empty_like(x).shape == x.shape
    same(xp.asarray([[1, 2], [3, 4]], device="cpu"), np.array([[1, 2], [3, 4]]), new)
    same(xp.asarray(x, copy=True), h, new)
    assert xp.asarray(x)._a is x  # an Array over x's memory
    same(xp.from_dlpack(x), h, new)
    same(xp.tril(to_device(np.ones((3, 3)))), np.tril(np.ones((3, 3))))
    a, b = xp.meshgrid(to_device(np.arange(3)), to_device(np.arange(2)), indexing="ij")
    same(a, np.meshgrid(np.arange(3), np.arange(2), indexing="ij")[0])


@pytest.mark.parametrize("device", ["cpu", "suite"])
def test_linspace_of_0d_arrays(device, arr, to_host):
    """``linspace`` of 0-d Arrays (generic code's computed ends), directly and through
    ``np.linspace``: NumPy's values, on the Arrays' device (no device: theirs, as for every
    function); it recursed without end through NumPy's dispatch."""
    h = rng.standard_normal(2)
    on = arr if device == "suite" else (lambda v: xp.asarray(v, device="cpu"))
    start, stop = on(h[0].reshape(())), on(h[1].reshape(()))
    for got in (xp.linspace(start, stop, 5), np.linspace(start, stop, 5),
                xp.linspace(start, 1.5, 4, endpoint=False)):
        assert type(got) is xp.Array and got.device == start.device
    np.testing.assert_array_equal(to_host(xp.linspace(start, stop, 5)), np.linspace(h[0], h[1], 5))
    np.testing.assert_array_equal(to_host(np.linspace(start, stop, 5)), np.linspace(h[0], h[1], 5))
    assert xp.linspace(start, stop, 3, device="cpu").device == "cpu"
    if start.device != "cpu":
        with pytest.raises(ValueError, match="different devices"):
            xp.linspace(start, xp.asarray(1.0, device="cpu"), 3)


def test_to_device_on_the_cpu():
    x = np.arange(3)
    assert xp.to_device(x, "cpu") is x
    if not arrays.gpu_available():
        with pytest.raises(ValueError, match="device 'cuda': the cuda backend cannot run here: "):
            xp.to_device(x, "cuda")
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        xp.to_device(x, "gpu")


def test_device_argument_errors():
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        xp.zeros(3, device="gpu")
    with pytest.raises(ValueError, match="unknown device"):
        xp.__array_namespace_info__().dtypes(device=0)


def test_cuda_backend_defaults_to_cupy():
    pytest.importorskip("cupy")
    with config.backend("cuda"):
        import array_api_compat.cupy as compat_cupy

        assert _delegated.namespace_for_device(None) is compat_cupy
    with config.backend("numpy"):
        assert _delegated.namespace_for_device(None) is array_api_compat.numpy


def test_the_cuda_backend_without_a_gpu_says_so_when_creating():
    """Under ``backend("cuda")`` with no usable GPU, a creation function or ``asarray`` with
    no device raises ValueError naming the function and the cause (CuPy's own error names a
    driver), as ``device="cuda"`` does; a host producer's ``from_dlpack`` is a ``cpu`` Array,
    on the producer's device."""
    if arrays.gpu_available():
        pytest.skip("a GPU (or the stand-in's) is found: nothing to refuse")
    pytest.importorskip("cupy")
    calls = {"zeros": lambda: xp.zeros(3), "asarray": lambda: xp.asarray([1, 2]),
             "arange": lambda: xp.arange(3), "full": lambda: xp.full(2, 1.5),
             "eye": lambda: xp.eye(2), "linspace": lambda: xp.linspace(0, 1, 3)}
    with config.backend("cuda"):
        for name, call in calls.items():
            with pytest.raises(ValueError, match=rf"^{name}: the cuda backend is in force and "
                               "cannot run here: (no NVIDIA driver|the NVIDIA driver is older|no "
                               "GPU visible|CUDA does not start)"):
                call()


def test_from_dlpack_of_a_host_producer_is_on_its_device_under_any_backend():
    h = rng.standard_normal(5)
    for backend, device in (("cuda", "cpu"), ("numpy", "cpu"), ("emulate", "emulator")):
        with config.backend(backend):
            x = xp.from_dlpack(h)
        assert x.device == device, backend
        np.testing.assert_array_equal(np.asarray(xp.to_device(x + 1, "cpu")), h + 1)


def test_a_stable_descending_sort_keeps_equal_keys_in_order(to_device, to_host):
    """``sort(x, descending=True)`` is ``take_along_axis(x, argsort(x, descending=True))``
    bit for bit: equal keys (-0.0 beside 0.0, NaNs of different payloads) keep x's order,
    as the standard's stable sort; a flip of the ascending sort reverses them."""
    nans = np.array([0x7FF8000000000001, 0x7FF8000000000002, 0xFFF8000000000003],
                    np.uint64).view(np.float64)
    pool = np.concatenate([[0.0, -0.0, 1.0, -1.0], nans])
    for axis, shape in ((-1, (5, 9)), (0, (9, 4)), (1, (3, 8, 2))):
        h = rng.choice(pool, size=shape)
        x = to_device(h)
        got = to_host(xp.sort(x, axis=axis, descending=True))
        order = xp.argsort(x, axis=axis, descending=True)
        expected = np.take_along_axis(h, to_host(order), axis=axis)
        np.testing.assert_array_equal(got.view(np.uint64), expected.view(np.uint64))
        ascending = to_host(xp.sort(x, axis=axis))
        np.testing.assert_array_equal(
            ascending.view(np.uint64), np.sort(h, axis=axis, kind="stable").view(np.uint64))
    for dtype in ("bool", "uint8", "int16", "int32", "uint64"):  # integers: any sort's answer
        h = rng.integers(0, 50, size=(6, 40)).astype(dtype)
        for descending in (False, True):
            got = to_host(xp.sort(to_device(h), axis=-1, descending=descending))
            expected = np.sort(h, axis=-1, kind="stable")
            np.testing.assert_array_equal(got, expected[:, ::-1] if descending else expected)
            assert got.dtype == h.dtype


def test_sorting_searching_sets(to_device, same, to_host):
    h = rng.integers(0, 5, size=(4, 6))
    x = to_device(h)
    same(xp.sort(x, axis=0), np.sort(h, axis=0))
    same(xp.sort(x, descending=True), -np.sort(-h))
    same(xp.argsort(x, stable=True), np.argsort(h, kind="stable"))
    same(xp.unique_values(x), np.unique(h))
    values, counts = xp.unique_counts(x)
    expected = np.unique(h, return_counts=True)
    same(values, expected[0])
    same(counts, expected[1])
    values, inverse = xp.unique_inverse(x)
    same(values[inverse], h)
    result = xp.unique_all(x)
    same(result.values[result.inverse_indices], h)
    same(x.reshape(-1)[result.indices], to_host(result.values))
    same(xp.searchsorted(to_device(np.arange(10)), to_device(np.array([2.5, 7]))),
         np.searchsorted(np.arange(10), [2.5, 7]))
    same(xp.argmax(x, axis=1, keepdims=True), np.argmax(h, axis=1, keepdims=True))
    same(xp.count_nonzero(x, axis=0), np.count_nonzero(h, axis=0))
    same(xp.nonzero(x)[1], np.nonzero(h)[1])
    same(xp.where(x > 2, x, 0), np.where(h > 2, h, 0))
    same(xp.where(x > 2, np.int8(1), x), np.where(h > 2, np.int8(1), h))  # a value, any device


def test_statistics_and_utilities(to_device, same):
    h = rng.standard_normal((3, 4, 5))
    x = to_device(h)
    for axis in (None, 0, (1, 2), -1):
        for keepdims in (False, True):
            same(xp.sum(x, axis=axis, keepdims=keepdims), np.sum(h, axis=axis, keepdims=keepdims))
            same(xp.mean(x, axis=axis, keepdims=keepdims), np.mean(h, axis=axis, keepdims=keepdims))
            same(xp.std(x, axis=axis, keepdims=keepdims, correction=1),
                 np.std(h, axis=axis, keepdims=keepdims, ddof=1))
            same(xp.max(x, axis=axis, keepdims=keepdims), np.max(h, axis=axis, keepdims=keepdims))
    same(xp.cumulative_sum(x, axis=1, include_initial=True),
         np.concatenate([np.zeros((3, 1, 5)), np.cumsum(h, axis=1)], axis=1))
    same(xp.diff(x, axis=0), np.diff(h, axis=0))
    same(xp.any(x > 1, axis=0), np.any(h > 1, axis=0))


def test_indexing_and_linear_algebra(to_device, same):
    h = rng.standard_normal((4, 5))
    x = to_device(h)
    same(xp.take(x, to_device(np.array([3, 0, 0])), axis=0), h[[3, 0, 0]])
    idx = to_device(np.argsort(h, axis=1))
    same(xp.take_along_axis(x, idx, axis=1), np.sort(h, axis=1))
    g = rng.standard_normal((5, 3))
    y = to_device(g)
    same(xp.matmul(x, y), h @ g)
    same(xp.matrix_transpose(x), h.T)
    same(xp.tensordot(x, y, axes=1), np.tensordot(h, g, axes=1))
    same(xp.vecdot(x, x), np.sum(h * h, axis=-1))
    m = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    a = to_device(m)
    same(xp.linalg.inv(a), np.linalg.inv(m))
    same(xp.linalg.det(a), np.linalg.det(m))
    same(xp.linalg.solve(a, to_device(np.ones((3, 1)))), np.linalg.solve(m, np.ones((3, 1))))
    same(xp.linalg.svdvals(a), np.linalg.svd(m, compute_uv=False))
    same(xp.linalg.vector_norm(x, axis=1), np.linalg.norm(h, axis=1))
    same(xp.linalg.matrix_norm(a, ord="fro"), np.linalg.norm(m))
    same(xp.linalg.matmul(x, y), h @ g)
    sign, logabsdet = xp.linalg.slogdet(a)  # NumPy's scalars come back as 0-d arrays
    same(sign, np.asarray(np.linalg.slogdet(m).sign))
    same(logabsdet, np.asarray(np.linalg.slogdet(m).logabsdet))
    assert xp.linalg.slogdet(a)._fields == ("sign", "logabsdet")  # still the namedtuple


def test_fft(to_device, same):
    h = rng.standard_normal(16)
    x = to_device(h)
    same(xp.fft.fft(x), np.fft.fft(h))
    same(xp.fft.rfft(x, n=8), np.fft.rfft(h, n=8))
    same(xp.fft.irfft(to_device(np.fft.rfft(h))), np.fft.irfft(np.fft.rfft(h)))
    same(xp.fft.fftfreq(8, d=0.5, device="cpu"), np.fft.fftfreq(8, d=0.5), xp.Array)
    same(xp.fft.rfftfreq(8), np.fft.rfftfreq(8), xp.Array)
    same(xp.fft.fftshift(x), np.fft.fftshift(h))


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_fftn_s_without_axes_is_the_last_axes(name, on, host):
    """``s`` without ``axes`` transforms the last ``len(s)`` axes, as CuPy does, on every
    device and without NumPy 2's DeprecationWarning (``scipy.fft.rfftn(x, s=...)`` passes
    ``axes=None``)."""
    h = rng.standard_normal((2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = getattr(xp.fft, name)(on(h), s=(3, 5))
    expected = getattr(np.fft, name)(h, s=(3, 5), axes=(-2, -1))
    np.testing.assert_allclose(host(got), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_fftn_s_of_minus_one_is_the_whole_axis(name, on, host, monkeypatch):
    """An ``s[i]`` of -1 (the standard's whole axis) reaches the library as the axis'
    length, NumPy's reading: CuPy's ``_cook_shape`` took -1 for a length and dropped the
    axis' last element, silently."""
    h = rng.standard_normal((3, 4, 5))
    x = on(h)
    with config.backend(x._b):  # the library of x's device
        library = _delegated.namespace_of(x._a).fft
    transform, asked = getattr(library, name), []
    monkeypatch.setattr(library, name, lambda a, **kw: asked.append(kw["s"]) or transform(a, **kw))
    got = getattr(xp.fft, name)(x, s=(-1, 6), axes=(0, 2))
    assert asked == [(3, 6)]
    expected = getattr(np.fft, name)(h, s=(3, 6), axes=(0, 2))
    np.testing.assert_allclose(host(got), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["fftn", "ifftn"])
@pytest.mark.parametrize(("shape", "axes"), [((), None), ((2, 3), ())])
@pytest.mark.parametrize(("dtype", "complex_dtype"), [
    (np.float32, np.complex64), (np.float64, np.complex128),
    (np.complex64, np.complex64), (np.complex128, np.complex128)])
def test_fftn_over_no_axis_is_x_as_complex(name, shape, axes, dtype, complex_dtype, on, host):
    """Over no axis (a 0-d ``x``, ``axes=()``) the transform is ``x`` itself in the complex
    dtype of ``x``'s precision, the standard's result dtype: NumPy and CuPy gave ``x`` back
    (float64 stayed real), whatever ``norm``."""
    h = rng.standard_normal(shape).astype(dtype)
    if h.dtype.kind == "c":
        h += 1j * rng.standard_normal(shape)
    for norm in ("backward", "ortho", "forward"):
        got = host(getattr(xp.fft, name)(on(h), axes=axes, norm=norm))
        assert got.dtype == complex_dtype and got.shape == shape
        np.testing.assert_array_equal(got, getattr(np.fft, name)(h, axes=axes, norm=norm))


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("dtype", [None, np.float32, np.float64])
def test_fftfreq_of_the_standard_arguments_is_numpys(name, dtype, on, host):
    """The checks of ``n``, ``d`` and ``dtype`` pass the standard's arguments on as they
    are (an ``n`` of 1 included), on ``cpu`` and on the suite's device."""
    device = on(np.empty(0)).device
    for n in (1, 2, 7, np.int64(8)):
        d = float(rng.uniform(0.1, 2.0))
        got = host(getattr(xp.fft, name)(n, d=d, dtype=dtype, device=device))
        expected = getattr(np.fft, name)(int(n), d=d)
        assert got.dtype == (dtype or np.float64)
        np.testing.assert_allclose(got, expected, rtol=1e-6 if dtype is np.float32 else 1e-15)


def test_data_type_functions(to_device, to_host):
    assert xp.result_type(xp.int8, xp.float32) == np.float32
    assert xp.result_type(to_device(np.zeros(2, np.int16)),
                          to_device(np.zeros(2, np.uint8))) == np.int16
    assert xp.result_type(to_device(np.zeros(2, np.float32)), np.float64(1)) == np.float64
    assert xp.can_cast(xp.int8, xp.int64) and not xp.can_cast(xp.float64, xp.int8)
    assert xp.finfo(xp.float32).eps == np.finfo(np.float32).eps
    assert xp.iinfo(xp.uint8).max == 255
    assert xp.isdtype(xp.float32, "real floating") and not xp.isdtype(xp.int8, "bool")
    cast = xp.astype(to_device(np.arange(3)), xp.float32)
    np.testing.assert_array_equal(to_host(cast), np.arange(3, dtype=np.float32))
    assert to_host(cast).dtype == np.float32


def test_info():
    info = xp.__array_namespace_info__()
    assert info.capabilities() == {
        "boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64,
    }
    assert info.default_device() == xp.zeros(1).device  # the backend's: emulator, cuda:N
    with config.backend("numpy"):
        assert info.default_device() == "cpu"
    assert info.default_dtypes(device="cpu")["indexing"] == np.int64
    assert list(info.dtypes(kind="bool")) == ["bool"]
    assert set(info.dtypes(kind=("signed integer", "complex floating"))) == {
        "int8", "int16", "int32", "int64", "complex64", "complex128",
    }
    assert len(info.dtypes()) == 13 and len(info.dtypes(kind="numeric")) == 12
    assert info.devices()[0] == "cpu"
    with pytest.raises(ValueError, match="unknown dtype kind 'float'"):
        info.dtypes(kind="float")
    for kind in (3, ["bool"], ("bool", 3), np.dtype("int8")):  # not a name or a tuple of names
        with pytest.raises(TypeError, match=re.escape(f"got {kind!r}")):
            info.dtypes(kind=kind)
    assert isinstance(info, _info.Info)


class FakeGpuArray(np.ndarray):
    """Stands in for a CuPy array on cuda:1 (no GPU here): only device bookkeeping sees it."""


@pytest.fixture
def fake_gpu(monkeypatch):
    real_is_cupy = arrays.is_cupy_array
    monkeypatch.setattr(arrays, "is_cupy_array", lambda a: isinstance(a, FakeGpuArray) or real_is_cupy(a))
    monkeypatch.setattr(arrays, "device_of", lambda a: "cuda:1" if isinstance(a, FakeGpuArray) else "cpu")
    return np.ones((2, 2)).view(FakeGpuArray)


@pytest.mark.parametrize(
    "call",
    [
        lambda cpu, gpu: xp.matmul(cpu, gpu),
        lambda cpu, gpu: xp.concat([cpu, gpu]),
        lambda cpu, gpu: xp.stack((gpu, cpu), axis=1),
        lambda cpu, gpu: xp.where(cpu > 0, cpu, gpu),
        lambda cpu, gpu: xp.searchsorted(cpu[0], gpu),
        lambda cpu, gpu: xp.take(cpu, gpu),
        lambda cpu, gpu: xp.linalg.solve(gpu, cpu),
        lambda cpu, gpu: xp.broadcast_arrays(cpu, gpu),
    ],
)
def test_mixed_devices_name_both(fake_gpu, call):
    with pytest.raises(ValueError, match="different devices: (cpu and cuda:1|cuda:1 and cpu)"):
        call(np.ones((2, 2)), fake_gpu)


def test_numpy_arrays_under_the_cuda_backend_are_an_error():
    # as for our kernels: asking for cuda makes NumPy inputs an error, not a CPU computation
    with config.backend("cuda"), pytest.raises(ValueError, match="cuda backend needs CuPy arrays"):
        xp.sort(np.arange(3))


def test_reductions_return_0d_arrays_not_scalars(to_device):
    x = to_device(np.arange(6.0))
    for result in (xp.sum(x), xp.max(x), xp.all(x > -1), xp.linalg.vector_norm(x)):
        assert type(result) is type(x) and result.ndim == 0
    values = xp.unique_counts(x)  # tuples of arrays come back unchanged
    assert values._fields == ("values", "counts")
