"""infini_cupy.Array against NumPy: discovery through ``__array_namespace__``, operators on
our kernels (launches counted), 0-d results, indexing views, ``x[key] = v`` as one strided
copy, devices, conversions, DLPack, and plain arrays that keep working as before.

Runs in emulation (Arrays on the emulator) and, with ``pytest --backend cuda``, on the GPU.
"""

from __future__ import annotations

import operator
import pickle

import array_api_compat
import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import config
from infini_cupy.runtime.launch import recording

rng = np.random.default_rng(7)




def test_discovered_from_the_array(arr):
    x = arr(np.arange(3.0))
    assert type(x) is xp.Array
    assert x.__array_namespace__() is xp
    assert array_api_compat.array_namespace(x) is xp
    assert array_api_compat.is_array_api_obj(x)
    with pytest.raises(ValueError, match="unsupported array API version"):
        x.__array_namespace__(api_version="2019.01")


def test_device_follows_the_backend(backend_name, arr):
    x = arr(np.arange(3.0))
    expected = "emulator" if backend_name == "emulate" else "cuda:0"
    assert x.device == expected and str(x.device) == expected
    assert xp.zeros(2).device == x.device  # creation: the backend in force
    with config.backend("numpy"):
        assert xp.zeros(2).device == "cpu"
        assert (x + 1).device == x.device  # calls run where the Array is, not where we are
    info = xp.__array_namespace_info__()
    assert info.default_device() == x.device
    assert x.device in info.devices()


BINARY_OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
              operator.mod, operator.pow, operator.lt, operator.le, operator.gt, operator.ge,
              operator.eq, operator.ne]
INT_OPS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


@pytest.mark.parametrize("op", BINARY_OPS + INT_OPS, ids=lambda op: op.__name__)
def test_operators_run_our_kernels(backend_name, arr, host, op):
    integer = op in INT_OPS
    dtype = np.int32 if integer else np.float64
    a = rng.integers(1, 5, (3, 4)).astype(dtype) if integer else rng.uniform(0.5, 2, (3, 4))
    b = rng.integers(0, 3, (4,)).astype(dtype) if integer else rng.uniform(0.5, 2, (4,))
    x, y = arr(a), arr(b)
    with recording() as launches:
        got = op(x, y)
    np.testing.assert_allclose(host(got), op(a, b))
    assert len(launches) >= 1  # ours, not the library's
    np.testing.assert_allclose(host(op(x, 2)), op(a, dtype(2)))  # Python scalars are weak
    np.testing.assert_allclose(host(op(2, x)), op(dtype(2), a))  # reflected


def test_in_place_operators_write_into_the_array(arr, host):
    a = rng.standard_normal((3, 4))
    x = arr(a.copy())
    view = x[1]
    x += arr(np.ones(4))
    x *= 2
    x -= x
    assert x.dtype == np.float64 and x.shape == (3, 4)
    np.testing.assert_array_equal(host(x), np.zeros((3, 4)))
    np.testing.assert_array_equal(host(view), np.zeros(4))  # the same memory
    i = arr(np.arange(6, dtype=np.int8))
    i //= 2
    i <<= 1
    np.testing.assert_array_equal(host(i), (np.arange(6, dtype=np.int8) // 2) << 1)
    with pytest.raises(TypeError):  # the result's dtype (float64) is not int8's
        i /= 2


def test_unary_operators_and_matmul(arr, host):
    a = rng.standard_normal((3, 3))
    x = arr(a)
    np.testing.assert_allclose(host(-x), -a)
    np.testing.assert_allclose(host(+x), a)
    np.testing.assert_allclose(host(abs(x)), abs(a))
    np.testing.assert_allclose(host(x @ x), a @ a)
    np.testing.assert_array_equal(host(~arr(np.arange(4))), ~np.arange(4))
    y = arr(a.copy())
    y @= x
    np.testing.assert_allclose(host(y), a @ a)


def test_imatmul_follows_the_other_in_place_operators(on, host):
    """``x @= y`` casts the product into x by ``same_kind`` and refuses with the classes of
    ``x += y`` (the standard's in-place rule; NumPy's ``matmul(x, y, out=x)``), on every
    device: it refused float32 @= float64 and raised ValueError where ``+=`` raises
    TypeError."""
    a, b = rng.standard_normal((2, 2)), rng.standard_normal((2, 2))
    x = on(a.astype(np.float32))
    x @= on(b)
    assert x.dtype == np.float32
    np.testing.assert_allclose(host(x), a.astype(np.float32) @ b, rtol=1e-6)
    for in_place in (operator.iadd, operator.imatmul):
        y = on(np.ones((2, 2), np.int8))
        with pytest.raises(TypeError, match="cannot be cast into out of dtype int8"):
            in_place(y, on(b))
        with pytest.raises(ValueError, match="out has shape"):
            in_place(y, on(np.ones((3, 2, 2), np.int8)))
        np.testing.assert_array_equal(host(y), np.ones((2, 2), np.int8))  # left as it was


def test_numpy_arrays_defer_to_the_array(backend_name, arr, host):
    if backend_name != "emulate":
        pytest.skip("NumPy arrays live on the CPU")
    a = rng.standard_normal(4)
    got = np.ones(4) - arr(a)  # NumPy's operator returns NotImplemented: Array.__rsub__
    assert type(got) is xp.Array
    np.testing.assert_allclose(host(got), 1 - a)


class _Answers:
    """An object whose == and != take Arrays (as Dask's and xarray's do): it is asked."""

    def __eq__(self, other):
        return ("eq", type(other).__name__)

    def __ne__(self, other):
        return ("ne", type(other).__name__)


@pytest.mark.parametrize("other", [[1.0, 2.0], (1.0, 2.0), None, "a", b"a", object()],
                         ids=["list", "tuple", "None", "str", "bytes", "object"])
def test_equality_with_what_is_no_array_raises(arr, other):
    """``x == [1.0, 2.0]``: TypeError naming the type, as ``xp.equal`` and the other
    comparisons (Python's identity answer, False, would pass for elementwise)."""
    x = arr(rng.standard_normal(2))
    name = type(other).__name__
    for compare in (operator.eq, operator.ne):
        for call in (lambda: compare(x, other), lambda: compare(other, x)):
            with pytest.raises(TypeError, match=f"compares an Array.*got {name}"):
                call()
    with pytest.raises(TypeError):
        xp.equal(x, other)


def test_equality_asks_the_other_operand(arr):
    x = arr(rng.standard_normal(3))
    assert (x == _Answers()) == ("eq", "Array") and (_Answers() == x) == ("eq", "Array")
    assert (x != _Answers()) == ("ne", "Array")


def test_a_call_that_gives_its_input_back_gives_the_array_itself(arr):
    """``astype(x, x.dtype, copy=False)`` is ``x`` (the standard), as are ``asarray(x)`` and
    ``ascontiguousarray`` of a C-contiguous ``x``; a copy or another device is another."""
    x = arr(rng.standard_normal((3, 4)).astype(np.float32))
    assert xp.astype(x, xp.float32, copy=False) is x
    assert xp.asarray(x) is x and xp.asarray(x, copy=False) is x
    assert xp.ascontiguousarray(x) is x
    for other in (xp.astype(x, xp.float32), xp.asarray(x, copy=True), xp.ascontiguousarray(x.T),
                  xp.astype(x, xp.float64, copy=False)):
        assert other is not x
    assert xp.reshape(x, (4, 3)) is not x


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_pickle_round_trips_with_every_protocol(arr, host, protocol):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    for x in (arr(a), arr(a).T, arr(a)[::-1, 1:], arr(a)[0, 0]):
        y = pickle.loads(pickle.dumps(x, protocol=protocol))
        assert type(y) is xp.Array and y.device == x.device
        assert y.shape == x.shape and y.dtype == x.dtype
        np.testing.assert_array_equal(host(y), host(x))


def test_zero_d_results_stay_arrays(arr, host):
    x = arr(np.arange(6.0).reshape(2, 3))
    for result in (x[0, 1], xp.sum(x), xp.max(x), x[0][1] + 1, xp.sqrt(x[1, 2]), x[..., 0][0]):
        assert type(result) is xp.Array and result.ndim == 0
    assert float(x[1, 2]) == 5.0 and int(x[1, 1]) == 4 and complex(x[0, 1]) == 1
    assert bool(x[0, 1]) and not bool(x[0, 0])
    assert operator.index(arr(np.arange(3))[2]) == 2
    assert [0, 10, 20][arr(np.arange(3))[1]] == 10
    for not_an_index in (x[0, 0], arr(np.arange(3) > 0)[1], arr(np.arange(3))[1:]):
        with pytest.raises(TypeError):  # floats, bools, arrays of more than one element
            operator.index(not_an_index)


def test_numpy_scalars_are_0d_arrays(arr, host):
    z = np.asarray(2.0)
    assert type(z - z) is np.float64  # what NumPy gives generic code
    # NumPy scalars alone are host values (the cuda backend refuses them as NumPy arrays):
    # computed in emulation on every suite backend
    with xp.backend("emulate"):
        for got in (xp.sqrt(z - z), xp.add(np.float32(1), np.float32(2)), xp.sum(z * z)):
            assert isinstance(got, np.ndarray) and got.ndim == 0
        assert xp.add(np.float32(1), np.float32(2)).dtype == np.float32  # typed, not weak
        assert xp.stack([np.float32(1), np.float32(2)]).shape == (2,)
    x = arr(np.ones(3, np.float32))
    assert (x + np.float64(1)).dtype == np.float64  # a 0-d float64 array: promotes


def test_getitem_views_and_advanced(arr, host):
    a = rng.standard_normal((4, 5))
    x = arr(a)
    for key in [(1,), (slice(1, 3), slice(None, None, -2)), (Ellipsis, None, 2), (-1, Ellipsis)]:
        got = x[key]
        np.testing.assert_array_equal(host(got), a[key])
    mask = a > 0
    np.testing.assert_array_equal(host(x[arr(mask)]), a[mask])
    idx = np.array([3, 0, 0])
    np.testing.assert_array_equal(host(x[arr(idx)]), a[idx])
    with pytest.raises(IndexError):
        x[4]


@pytest.mark.parametrize("device", ["cpu", "suite"])
def test_integer_array_indexing_as_numpy(device, arr, host):
    """The standard's integer-array indexing (2024.12: integers and integer arrays, broadcast
    together; negative indices), NumPy's mix with slices (xarray's outer indexing, one axis at
    a time), ``x[i, j] = v``, ``take`` and ``take_along_axis``: NumPy's answers, Arrays kept."""
    make = (lambda h: xp.asarray(h, device="cpu")) if device == "cpu" else arr
    to_np = (lambda a: np.asarray(a)) if device == "cpu" else host
    h = rng.standard_normal((3, 4, 5))
    x = make(h)
    i, j, k = np.array([2, -1, 0]), np.array([[1], [3]]), np.array([4, 0])
    keys = [(i,), (i, j), (1, i), (i[:, None, None], j[None], k), (np.array(2), np.array([1])),
            (slice(None), i), (Ellipsis, k), (i, slice(1, 3)), (np.array([[0, 2], [1, 1]]),)]
    for key in keys:
        for dtype in (xp.int64, xp.int32, xp.uint8):
            if dtype == xp.uint8 and any(isinstance(a, np.ndarray) and (a < 0).any() for a in key):
                continue
            got = x[tuple(make(a.astype(dtype)) if isinstance(a, np.ndarray) else a for a in key)]
            assert type(got) is xp.Array
            np.testing.assert_array_equal(to_np(got), h[key], err_msg=str(key))
    y, g = make(h.copy()), h.copy()
    values = rng.standard_normal((2, 3, 5))
    y[make(i), make(j)] = make(values)
    g[i, j] = values
    np.testing.assert_array_equal(to_np(y), g)
    np.testing.assert_array_equal(to_np(xp.take(x, make(k), axis=2)), np.take(h, k, axis=2))
    order = np.argsort(h, axis=1)
    np.testing.assert_array_equal(to_np(xp.take_along_axis(x, make(order), axis=1)),
                                  np.take_along_axis(h, order, axis=1))
    if device == "cpu":  # out of bounds: unspecified by the standard; CuPy wraps around
        with pytest.raises(IndexError):
            x[make(np.array([3]))]


def test_a_list_of_arrays_is_an_index_on_every_device(on, host, backend_name):
    """A list holding Arrays (0-d ones, nested, beside Python ints) indexes as the index
    array NumPy makes of it, in ``x[key]`` and ``x[key] = v``, on every device: on a GPU it
    raised TypeError (CuPy converts a list through NumPy, which a GPU array refuses); an Array
    of another device in it is a ValueError naming both."""
    h = rng.standard_normal((4, 3))
    x = on(h)
    zero_d = lambda i: on(np.asarray(i))  # noqa: E731
    for key, expected in (([zero_d(2), zero_d(0)], [2, 0]), ([1, zero_d(3)], [1, 3]),
                          ([[zero_d(0)], [zero_d(1)]], [[0], [1]]),
                          ((zero_d(1), [zero_d(0), 2]), (1, [0, 2]))):
        np.testing.assert_array_equal(host(x[key]), h[expected], err_msg=str(expected))
        y, g = on(h.copy()), h.copy()
        y[key] = 7.0
        g[expected] = 7.0
        np.testing.assert_array_equal(host(y), g, err_msg=str(expected))
    other = xp.asarray(0, device="cpu" if x.device != xp.Device("cpu") else "emulator")
    with pytest.raises(ValueError, match="different devices"):
        x[[other, zero_d(1)]]


def test_setitem_is_one_strided_copy(backend_name, arr, host):
    a = rng.standard_normal((4, 6)).astype(np.float32)
    x = arr(a.copy())
    expected = a.copy()
    row = rng.standard_normal(3).astype(np.float32)
    with recording() as launches:
        x[1:, ::2] = arr(row)  # broadcast over rows, strided destination
    expected[1:, ::2] = row
    np.testing.assert_array_equal(host(x), expected)
    assert len(launches) == 1, [r.name for r in launches]  # one strided copy
    x[0] = 7  # a Python scalar
    expected[0] = 7
    x[:, 0] = arr(np.arange(4))  # int64 into float32 (no promotion defined): our cast kernel
    expected[:, 0] = np.arange(4)
    x[1:, 1:] = x[:-1, :-1]  # overlapping source: snapshotted
    expected[1:, 1:] = expected[:-1, :-1].copy()
    np.testing.assert_array_equal(host(x), expected)
    mask = expected > 1
    x[arr(mask)] = 0  # boolean mask: the library's
    expected[mask] = 0
    np.testing.assert_array_equal(host(x), expected)
    with pytest.raises(ValueError):
        x[0] = arr(np.ones(5, np.float32))  # does not broadcast


def test_setitem_into_a_broadcast_view_is_refused(arr, host):
    """``broadcast_to``'s Array shares its elements (NumPy marks it read-only, CuPy does not):
    ``x[key] = v`` through it is a ValueError on every device, for every key kind, and
    writes nothing (a GPU's threads would race to the shared elements)."""
    parent = arr(np.array([1.0, 2.0]))
    x = xp.broadcast_to(parent, (3, 2))
    for key in (Ellipsis, 0, (0, 1), (slice(None), 0), slice(0, 0), [0],
                arr(np.array([True, False, False]))):
        with pytest.raises(ValueError, match="read-only"):
            x[key] = 5.0
    assert host(parent).tolist() == [1.0, 2.0]


def test_setitem_of_a_native_array_of_another_device_is_refused(backend_name, arr, host):
    """A NumPy array into a GPU Array is a ValueError naming both devices whatever the key
    and the value's shape (CuPy would upload it for an index array, and a broadcast one
    failed in CuPy's broadcast_to), writing nothing, as an Array of another device is."""
    if backend_name != "cuda":
        pytest.skip("a NumPy array is on the CPU and the emulator both")
    x = arr(np.zeros(3))
    for key, value in ((slice(None), np.ones(3)), (slice(None), np.ones(1)), (0, np.ones(())),
                       ([0, 1], np.ones(2)), (arr(np.array([True, False, True])), np.ones(1))):
        with pytest.raises(ValueError, match="different devices"):
            x[key] = value
    assert host(x).tolist() == [0.0, 0.0, 0.0]


def test_shape_attributes_and_transposes(arr, host):
    a = rng.standard_normal((2, 3, 4))
    x = arr(a)
    assert x.shape == (2, 3, 4) and x.ndim == 3 and x.size == 24 and x.dtype == np.float64
    np.testing.assert_array_equal(host(x.mT), np.swapaxes(a, -1, -2))
    np.testing.assert_array_equal(host(x[0].T), a[0].T)
    with pytest.raises(ValueError, match="2-d"):
        x.T
    assert [host(r).tolist() for r in x[0, 0]] == a[0, 0].tolist()
    assert "Array(" in repr(x) and str(x.device) in repr(x)


def test_functions_wrap_and_unwrap(arr, host):
    a = rng.standard_normal((3, 4))
    x = arr(a)
    for got, expected in [
        (xp.concat([x, x], axis=1), np.concatenate([a, a], axis=1)),
        (xp.rearrange(x, "h w -> w h"), a.T),
        (xp.sort(x, axis=0), np.sort(a, axis=0)),
        (xp.linalg.matrix_norm(x), np.linalg.norm(a)),
        (xp.fft.fft(x), np.fft.fft(a)),
        (xp.where(x > 0, x, 0.0), np.where(a > 0, a, 0.0)),
        (xp.clip(x, max=arr(np.zeros(4))), np.clip(a, None, 0)),
    ]:
        np.testing.assert_allclose(host(got), expected)
    values, counts = xp.unique_counts(arr(np.array([1, 1, 2])))
    assert type(values) is xp.Array and host(counts).tolist() == [2, 1]
    assert type(xp.broadcast_arrays(x, x[0])) is tuple  # the standard (2025.12) says Tuple
    assert xp.result_type(x, xp.float32) == np.float64 and xp.can_cast(x, xp.complex128)
    y = xp.empty_like(x)
    assert xp.rearrange_(y, x) is y
    np.testing.assert_array_equal(host(y), a)
    out = xp.empty_like(x)
    assert xp.exp(x, out=out) is out
    np.testing.assert_allclose(host(out), np.exp(a))


def test_plain_arrays_stay_plain(to_device, to_host):
    a = rng.standard_normal((3, 4))
    x = to_device(a)
    for got in (xp.add(x, 1), xp.sum(x, axis=0), xp.concat([x, x]), xp.rearrange(x, "a b -> b a"),
                xp.linalg.inv(x[:, :3]), xp.zeros_like(x)):
        assert type(got) is type(x)
    assert type(xp.asarray(x)) is xp.Array  # asarray makes the namespace's array


def test_mixed_devices_raise(backend_name, arr):
    if backend_name != "emulate":
        pytest.skip("the CPU and the emulator are two devices of one machine")
    x = arr(np.ones(3))
    y = x.to_device("cpu")
    assert y.device == "cpu" and y.to_device("emulator").device == "emulator"
    for call in (lambda: x + y, lambda: xp.concat([x, y]), lambda: xp.matmul(x, y)):
        with pytest.raises(ValueError, match="different devices: (emulator and cpu|cpu and emulator)"):
            call()


def test_array_policy_and_dlpack(backend_name, arr):
    a = rng.standard_normal(5)
    x = arr(a)
    assert x.__dlpack_device__()[0] == (1 if backend_name == "emulate" else 2)
    if backend_name == "emulate":
        np.testing.assert_array_equal(np.asarray(x), a)  # __array__: no copy on the CPU
        np.testing.assert_array_equal(np.from_dlpack(x), a)
        assert not hasattr(x, "__cuda_array_interface__")
        back = xp.from_dlpack(np.from_dlpack(x))
        assert type(back) is xp.Array
    else:
        with pytest.raises(TypeError, match="to_device"):
            np.asarray(x)  # no silent device-to-host copy
        assert "data" in x.__cuda_array_interface__
        np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), a)


@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_from_dlpack_of_an_array_stays_on_its_device(device):
    """``xp.from_dlpack(x)`` of an Array is on x's device (the standard: the producer's,
    when ``device`` is None), whatever backend is in force; ``device=`` moves it."""
    h = rng.standard_normal((3, 4)).astype(np.float32)
    x = xp.asarray(h, device=device)[:, ::-2]
    other = "cpu" if device == "emulator" else "emulator"
    for backend in ("numpy", "emulate"):
        with xp.backend(backend):
            for copy in (None, True, False):
                y = xp.from_dlpack(x, copy=copy)
                assert type(y) is xp.Array and y.device == device
                np.testing.assert_array_equal(np.asarray(y.to_device("cpu")), h[:, ::-2])
                assert xp.from_dlpack(x, device=other, copy=copy).device == other
    assert xp.from_dlpack(np.from_dlpack(x), device=device).device == device


def test_constructor_is_not_public():
    with pytest.raises(TypeError, match="asarray"):
        xp.Array(np.ones(3))
