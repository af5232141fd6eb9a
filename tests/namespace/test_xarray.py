"""xarray on Arrays: ordinary xarray code (arithmetic, reductions with ``skipna``, ``shift``,
``pad``, ``rolling``, ``cumsum``, ``weighted``, ``xr.dot``, ``round``, ...) on DataArrays
holding Arrays of the ``cpu`` device and of the suite's device gives what the same code gives
on NumPy, and the data stays Arrays; xarray's own array-API tests (written against
array_api_strict) pass on Arrays through a stand-in (``tests/support/strict_standin``).

xarray creates arrays without ``device=`` (``xp.asarray(fill_value)``): the backend in force
decides where, so each device's code runs inside ``infini_cupy.backend`` of that device.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import config
from tests.support.foreign_suites import run_on_arrays

xr = pytest.importorskip("xarray")

rng = np.random.default_rng(30)


@pytest.fixture(params=["cpu", "suite"])
def device_data(request, arr, backend_name):
    """(NumPy -> an Array on the device, the backend whose default device that is)."""
    if request.param == "cpu":
        return (lambda h: xp.asarray(h, device="cpu")), "numpy"
    return arr, backend_name


def data_array(data):
    return xr.DataArray(data, dims=("x", "y"), coords={"x": np.arange(5), "y": np.arange(6) * 10})


WEIGHTS = np.arange(5.0) + 1
def _like(d, values):
    """``values`` on the device of ``d``'s data (NumPy for NumPy data)."""
    if type(d.data) is np.ndarray:
        return values
    return xp.asarray(values, device=d.data.device)


# xarray code, run on a DataArray of NumPy data and of Arrays
WORKLOAD = [
    ("add", lambda d: d + 1.5),
    ("multiply", lambda d: d * d - d / 3),
    ("sum-skipna", lambda d: d.sum("x", skipna=True)),
    ("sum-no-skipna", lambda d: d.sum("x", skipna=False)),
    ("mean-skipna", lambda d: d.mean("y")),
    ("max-skipna", lambda d: d.max("x")),
    ("min", lambda d: d.min()),
    ("std-ddof", lambda d: d.std("x", ddof=1)),
    ("var", lambda d: d.var("y")),
    ("prod", lambda d: d.prod("x")),
    ("median", lambda d: d.median("x")),
    ("argmax", lambda d: d.fillna(0).argmax("x")),
    ("count", lambda d: d.count("y")),
    ("shift", lambda d: d.shift(x=2)),
    ("pad", lambda d: d.pad(x=(1, 2))),
    ("pad-edge", lambda d: d.pad(y=1, mode="edge")),
    ("rolling-mean", lambda d: d.rolling(x=3).mean()),
    ("rolling-sum-center", lambda d: d.rolling(y=3, center=True).sum()),
    ("cumsum", lambda d: d.cumsum("x")),
    ("cumprod", lambda d: d.cumprod("y", skipna=False)),
    # the weights on the data's device, as they must be on a GPU (NumPy weights: mixed devices)
    ("weighted", lambda d: d.weighted(xr.DataArray(_like(d, WEIGHTS), dims="x")).mean("x")),
    ("dot", lambda d: xr.dot(d, d, dim="y")),
    ("round", lambda d: d.round(2)),
    ("transpose", lambda d: d.transpose()),
    ("where", lambda d: d.where(d > 0)),
    ("fillna", lambda d: d.fillna(-1)),
    ("diff", lambda d: d.diff("x")),
    ("concat", lambda d: xr.concat([d, d], "x")),
    ("coarsen", lambda d: d.coarsen(x=5).mean()),
    ("quantile", lambda d: d.quantile(0.25, dim="x")),
    ("clip", lambda d: d.clip(-1, 1)),
    ("astype", lambda d: d.astype("float32")),
    # outer (orthogonal) indexing: xarray indexes one axis at a time with integer arrays
    ("isel-list", lambda d: d.isel(x=[4, 0, 2])),
    ("isel-outer", lambda d: d.isel(x=[4, 0, 2], y=[5, -1, 1])),
    ("isel-same-dim-indexer", lambda d: d.isel(x=xr.DataArray([3, 1], dims="x"))),
    ("sel-list", lambda d: d.sel(y=[10, 50])),
    ("loc", lambda d: d.loc[[1, 3], 20:40]),
]


@pytest.mark.parametrize("name, code", WORKLOAD, ids=[w[0] for w in WORKLOAD])
def test_xarray_code_on_arrays_as_on_numpy(device_data, to_host, name, code):
    make, backend = device_data
    _check_as_on_numpy(make, backend, to_host, code, contextlib.nullcontext())


@pytest.mark.parametrize("name, code", WORKLOAD, ids=[w[0] for w in WORKLOAD])
def test_xarray_code_inside_lazy_as_on_numpy(arr, backend_name, to_host, name, code):
    """The same code inside ``xp.lazy()``: elementwise chains deferred, everything else
    forcing them, the results NumPy's."""
    _check_as_on_numpy(arr, backend_name, to_host, code, xp.lazy())


def _check_as_on_numpy(make, backend, to_host, code, context):
    h = rng.standard_normal((5, 6))
    h[rng.random((5, 6)) < 0.2] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's all-NaN slice warnings
        expected = code(data_array(h))
        with config.backend(backend), context:
            got = code(data_array(make(h)))
    assert type(got.data) is xp.Array, type(got.data)
    assert got.dims == expected.dims and got.shape == expected.shape
    np.testing.assert_allclose(to_host(got.data), expected.data, rtol=1e-12, atol=1e-14,
                               equal_nan=True)
    assert to_host(got.data).dtype == expected.dtype


def test_xarray_array_api_tests_on_arrays(backend_name):
    """xarray's own array-API tests, their array_api_strict arrays replaced by Arrays on the
    suite's device (a subprocess: the stand-in is found on ``sys.path`` first)."""
    if backend_name != "emulate":
        pytest.skip("runs on emulator Arrays")
    done = run_on_arrays(["--pyargs", "xarray.tests.test_array_api",
                          "xarray.tests.test_namedarray", "-k", "test_array_api or strict"])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr


VECTORIZED = [  # indexers sharing a new dimension: xarray's vectorized (point) indexing,
    # and the same points by position
    (lambda d: d.isel(x=xr.DataArray([0, 1, 4], dims="p"), y=xr.DataArray([2, 3, 5], dims="p")),
     [0, 1, 4], [2, 3, 5]),
    (lambda d: d.sel(x=xr.DataArray([0, 1], dims="p"), y=xr.DataArray([20, 30], dims="p")),
     [0, 1], [2, 3]),
]


@pytest.mark.parametrize("code, rows, cols", VECTORIZED)
def test_xarray_refuses_vectorized_indexing_of_array_api_arrays(arr, code, rows, cols):
    """xarray wraps every array with ``__array_namespace__`` (not NumPy, pandas or Dask) in
    its ``ArrayApiIndexingAdapter``, whose ``_vindex_get`` raises (xarray/core/indexing.py):
    nothing an array can offer changes that. The same points by the standard's integer-array
    indexing on ``.data`` (docs/user/interop.md) give NumPy's answer."""
    h = rng.standard_normal((5, 6))
    expected = code(data_array(h))
    d = data_array(arr(h))
    with pytest.raises(TypeError, match="Vectorized indexing is not supported"):
        code(d)
    index = [xp.asarray(np.array(i), device=d.data.device) for i in (rows, cols)]
    points = xr.DataArray(d.data[index[0], index[1]], dims="p")
    assert type(points.data) is xp.Array
    np.testing.assert_array_equal(np.asarray(points.data.to_device("cpu")), expected.data)
