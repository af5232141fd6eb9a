"""The namespace defines every name of the array API standard 2024.12; the delegated part works.

The name lists are data copied from the standard's stubs (``array_api_stubs/_2024_12``). The
elementwise functions come from our kernels (``ELEMENTWISE``); copying data movement is ours
too (``OURS_DATA_MOVEMENT``, in ``_data_movement``); everything else is ``_delegated``.
"""

from __future__ import annotations

import importlib
import math
import sys

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
        "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
        "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    ],
    "searching": ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where"],
    "set": ["unique_all", "unique_counts", "unique_inverse", "unique_values"],
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
    "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul", "matrix_norm",
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
OURS_DATA_MOVEMENT = ["astype", "concat", "repeat", "reshape", "roll", "stack", "tile", "unstack"]
# Provided by our kernels, not by _delegated: elementwise and copying data movement.
PROVIDED_ELSEWHERE = ELEMENTWISE + OURS_DATA_MOVEMENT
# Not in 2024.12 (added in 2025.12): must not be claimed.
LATER_THAN_2024_12 = ["broadcast_shapes", "isin"]


def test_name_lists_are_the_standards():
    assert len(ELEMENTWISE) == len(set(ELEMENTWISE)) == 67
    assert len(STANDARD_NAMES) == len(set(STANDARD_NAMES))
    assert len(LINALG) == 23 and len(FFT) == 14
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
    assert infini_cupy.__array_api_version__ == "2024.12"


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
    for name in LATER_THAN_2024_12:
        assert not hasattr(_delegated, name)
    assert _delegated.__array_api_version__ == "2024.12"


def test_submodules_import_like_modules():
    assert importlib.import_module("infini_cupy.linalg") is _delegated.linalg
    assert importlib.import_module("infini_cupy.fft") is _delegated.fft
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


def same(got, expected):
    assert type(got) is np.ndarray, type(got)  # native arrays, no wrapper
    assert got.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.fixture
def same_on_device(to_host):
    """``same`` for results of the suite's device arrays (CuPy under ``--backend cuda``)."""

    def check(got, expected):
        native = [np.ndarray] + ([sys.modules["cupy"].ndarray] if "cupy" in sys.modules else [])
        assert type(got) in native, type(got)  # native arrays, no wrapper
        same(to_host(got), expected)

    return check


def test_creation_on_the_default_and_cpu_devices(to_device, same_on_device):
    # device=None: the backend's default device (the GPU under --backend cuda)
    for device, check in ((None, same_on_device), ("cpu", same)):
        check(xp.zeros((2, 3), device=device), np.zeros((2, 3)))
        check(xp.ones(4, dtype=xp.int32, device=device), np.ones(4, dtype=np.int32))
        check(xp.full((2,), 7, device=device), np.full((2,), 7))
        check(xp.arange(1, 10, 3, device=device), np.arange(1, 10, 3))
        check(xp.eye(3, 4, k=1, device=device), np.eye(3, 4, k=1))
        check(xp.linspace(0, 1, 5, device=device), np.linspace(0, 1, 5))
        assert xp.empty((2, 2), device=device).shape == (2, 2)
    h = rng.standard_normal((2, 3))
    x, check = to_device(h), same_on_device
    check(xp.zeros_like(x), np.zeros_like(h))
    same(xp.ones_like(x, dtype=xp.float32, device="cpu"), np.ones_like(h, dtype=np.float32))
    check(xp.full_like(x, 2.5), np.full_like(h, 2.5))
    assert xp.empty_like(x).shape == x.shape
    same(xp.asarray([[1, 2], [3, 4]], device="cpu"), np.array([[1, 2], [3, 4]]))
    check(xp.asarray(x, copy=True), h)
    assert xp.asarray(x) is x
    check(xp.from_dlpack(x), h)
    check(xp.tril(to_device(np.ones((3, 3)))), np.tril(np.ones((3, 3))))
    a, b = xp.meshgrid(to_device(np.arange(3)), to_device(np.arange(2)), indexing="ij")
    check(a, np.meshgrid(np.arange(3), np.arange(2), indexing="ij")[0])


def test_to_device_on_the_cpu():
    x = np.arange(3)
    assert xp.to_device(x, "cpu") is x
    with pytest.raises(ValueError, match="unknown device 'cuda'"):
        xp.to_device(x, "cuda")


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


def test_sorting_searching_sets(to_device, same_on_device):
    h = rng.integers(0, 5, size=(4, 6))
    x, check = to_device(h), same_on_device
    check(xp.sort(x, axis=0), np.sort(h, axis=0))
    check(xp.sort(x, descending=True), -np.sort(-h))
    check(xp.argsort(x, stable=True), np.argsort(h, kind="stable"))
    check(xp.unique_values(x), np.unique(h))
    values, counts = xp.unique_counts(x)
    expected = np.unique(h, return_counts=True)
    check(values, expected[0])
    check(counts, expected[1])
    values, inverse = xp.unique_inverse(x)
    check(values[inverse], h)
    result = xp.unique_all(x)
    check(result.values[result.inverse_indices], h)
    check(x.reshape(-1)[result.indices], np.unique(h))
    check(xp.searchsorted(to_device(np.arange(10)), to_device(np.array([2.5, 7]))),
          np.searchsorted(np.arange(10), [2.5, 7]))
    check(xp.argmax(x, axis=1, keepdims=True), np.argmax(h, axis=1, keepdims=True))
    check(xp.count_nonzero(x, axis=0), np.count_nonzero(h, axis=0))
    check(xp.nonzero(x)[1], np.nonzero(h)[1])
    check(xp.where(x > 2, x, 0), np.where(h > 2, h, 0))


def test_statistics_and_utilities(to_device, same_on_device):
    h = rng.standard_normal((3, 4, 5))
    x, check = to_device(h), same_on_device
    for axis in (None, 0, (1, 2), -1):
        for keepdims in (False, True):
            check(xp.sum(x, axis=axis, keepdims=keepdims), np.sum(h, axis=axis, keepdims=keepdims))
            check(xp.mean(x, axis=axis, keepdims=keepdims), np.mean(h, axis=axis, keepdims=keepdims))
            check(xp.std(x, axis=axis, keepdims=keepdims, correction=1),
                  np.std(h, axis=axis, keepdims=keepdims, ddof=1))
            check(xp.max(x, axis=axis, keepdims=keepdims), np.max(h, axis=axis, keepdims=keepdims))
    check(xp.cumulative_sum(x, axis=1, include_initial=True),
          np.concatenate([np.zeros((3, 1, 5)), np.cumsum(h, axis=1)], axis=1))
    check(xp.diff(x, axis=0), np.diff(h, axis=0))
    check(xp.any(x > 1, axis=0), np.any(h > 1, axis=0))


def test_indexing_and_linear_algebra(to_device, same_on_device):
    h = rng.standard_normal((4, 5))
    x, check = to_device(h), same_on_device
    check(xp.take(x, to_device(np.array([3, 0, 0])), axis=0), h[[3, 0, 0]])
    idx = xp.argsort(x, axis=1)
    check(xp.take_along_axis(x, idx, axis=1), np.sort(h, axis=1))
    hy = rng.standard_normal((5, 3))
    y = to_device(hy)
    check(xp.matmul(x, y), h @ hy)
    check(xp.matrix_transpose(x), h.T)
    check(xp.tensordot(x, y, axes=1), np.tensordot(h, hy, axes=1))
    check(xp.vecdot(x, x), np.sum(h * h, axis=-1))
    ha = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    a = to_device(ha)
    check(xp.linalg.inv(a), np.linalg.inv(ha))
    check(xp.linalg.det(a), np.linalg.det(ha))
    check(xp.linalg.solve(a, to_device(np.ones((3, 1)))), np.linalg.solve(ha, np.ones((3, 1))))
    check(xp.linalg.svdvals(a), np.linalg.svd(ha, compute_uv=False))
    check(xp.linalg.vector_norm(x, axis=1), np.linalg.norm(h, axis=1))
    check(xp.linalg.matrix_norm(a, ord="fro"), np.linalg.norm(ha))
    check(xp.linalg.matmul(x, y), h @ hy)
    sign, logabsdet = xp.linalg.slogdet(a)  # NumPy's scalars come back as 0-d arrays
    check(sign, np.asarray(np.linalg.slogdet(ha).sign))
    check(logabsdet, np.asarray(np.linalg.slogdet(ha).logabsdet))
    assert xp.linalg.slogdet(a)._fields == ("sign", "logabsdet")  # still the namedtuple


def test_fft(to_device, same_on_device):
    h = rng.standard_normal(16)
    x, check = to_device(h), same_on_device
    check(xp.fft.fft(x), np.fft.fft(h))
    check(xp.fft.rfft(x, n=8), np.fft.rfft(h, n=8))
    check(xp.fft.irfft(to_device(np.fft.rfft(h))), np.fft.irfft(np.fft.rfft(h)))
    same(xp.fft.fftfreq(8, d=0.5, device="cpu"), np.fft.fftfreq(8, d=0.5))
    check(xp.fft.rfftfreq(8), np.fft.rfftfreq(8))
    check(xp.fft.fftshift(x), np.fft.fftshift(h))


def test_data_type_functions(to_device, same_on_device):
    assert xp.result_type(xp.int8, xp.float32) == np.float32
    assert xp.result_type(to_device(np.zeros(2, np.int16)), to_device(np.zeros(2, np.uint8))) == np.int16
    assert xp.can_cast(xp.int8, xp.int64) and not xp.can_cast(xp.float64, xp.int8)
    assert xp.finfo(xp.float32).eps == np.finfo(np.float32).eps
    assert xp.iinfo(xp.uint8).max == 255
    assert xp.isdtype(xp.float32, "real floating") and not xp.isdtype(xp.int8, "bool")
    same_on_device(xp.astype(to_device(np.arange(3)), xp.float32), np.arange(3, dtype=np.float32))


def test_info(backend_name):
    info = xp.__array_namespace_info__()
    assert info.capabilities() == {
        "boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64,
    }
    if backend_name == "cuda":  # the backend's default device: CuPy's current one
        assert info.default_device() == sys.modules["cupy"].cuda.Device()
    else:
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
        lambda cpu, gpu: xp.take(cpu, indices=gpu),
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
