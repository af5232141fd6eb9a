"""NumPy's habits on infini_cupy.Array: NumPy ufuncs and array functions called on Arrays run
the namespace's functions (our kernels for the elementwise ones) and return Arrays; what the
namespace lacks runs in the array library on the native arrays (NumPy on the CPU's memory,
CuPy on a GPU, TypeError naming the device where CuPy lacks it too); the Python protocols
(``len``, iteration, ``format`` of a 0-d Array, ``str``, a NumPy-like ``repr``); consumers
that call NumPy (matplotlib's ``np.asarray`` of a CPU Array, SciPy when installed).

NumPy is the oracle, on random data. Runs on the suite's device (the emulator, or the GPU
with ``--backend cuda``).
"""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import dtypes
from infini_cupy.namespace import numpy_protocols
from infini_cupy.runtime.launch import recording
from tests.support.dtype_cases import require_bfloat16

rng = np.random.default_rng(31)




UFUNCS = [np.add, np.subtract, np.multiply, np.divide, np.power, np.arctan2, np.hypot,
          np.maximum, np.less, np.equal, np.isfinite, np.isnan, np.exp, np.log1p, np.sqrt,
          np.absolute, np.negative, np.arccos, np.tanh, np.floor, np.rint, np.sign]


@pytest.mark.parametrize("ufunc", UFUNCS, ids=lambda u: u.__name__)
def test_numpy_ufuncs_run_our_kernels(backend_name, arr, host, ufunc):
    a = rng.uniform(-0.9, 0.9, size=(3, 5))
    b = rng.uniform(0.1, 2.0, size=5)
    inputs = (a, b)[:ufunc.nin]
    with recording() as launches:
        got = ufunc(*(arr(v) for v in inputs))
    assert type(got) is xp.Array
    with np.errstate(invalid="ignore"):  # NaN where ours gives NaN too (sqrt of -0.5)
        expected = ufunc(*inputs)
    np.testing.assert_allclose(host(got), expected, rtol=1e-12, atol=1e-15)
    assert host(got).dtype == expected.dtype
    if backend_name == "emulate":
        assert any(r.name.startswith("ew_") for r in launches), [r.name for r in launches]


def test_mixed_operands_and_out(arr, host, to_device, to_host):
    a, b = rng.standard_normal((2, 4)), rng.standard_normal(4)
    x = arr(a)
    native = to_device(b)
    for got in (native + x, np.add(native, x), np.multiply(x, 2.0)):
        assert type(got) is xp.Array
    np.testing.assert_allclose(host(native + x), b + a)
    out = xp.empty_like(x)
    assert np.add(x, x, out=out) is out  # the Array given, written in place
    np.testing.assert_allclose(host(out), a + a)
    plain = to_device(b.copy())
    plain += arr(b)  # ndarray += Array: our add into the ndarray
    assert type(plain) is type(native)
    np.testing.assert_allclose(to_host(plain), 2 * b)


def test_lists_and_tuples_beside_arrays_are_arrays_as_numpy_converts_them(on, host):
    """``np.add(x, [1, 2])``, ``np.concatenate([x, [1.0]])``, ``np.where(c, x, (0, 1))``:
    a list or tuple operand of a NumPy ufunc or function on Arrays is an array on the
    Arrays' device, NumPy's dtype for it (a list of ints int64): values and dtypes NumPy's,
    on random data of four dtypes."""
    for dtype in ("int8", "uint16", "float32", "float64"):
        a = (rng.standard_normal(4) * 5).astype(dtype)
        b = (rng.standard_normal(4) * 5).astype(dtype)
        for as_sequence in (list, tuple):
            seq = as_sequence(b.tolist())
            x = on(a)
            for call in (
                lambda m, x, s: m.add(x, s), lambda m, x, s: m.multiply(s, x),
                lambda m, x, s: m.maximum(x, s), lambda m, x, s: m.less(s, x),
                lambda m, x, s: m.concatenate([x, s]), lambda m, x, s: m.stack((s, x)),
                lambda m, x, s: m.where(x > 0, x, s), lambda m, x, s: m.matmul(x, s),
            ):
                got = call(np, x, seq)
                expected = call(np, a, seq)
                assert type(got) is xp.Array
                assert host(got).dtype == expected.dtype, (dtype, call)
                np.testing.assert_array_equal(host(got), expected)


class ufunc:  # noqa: N801  CuPy's class name, which the hook reads
    """What CuPy's hook call hands the Array of a ufunc (``cupy.add``): its name and nin."""

    def __init__(self, name, nin):
        self.name, self.nin = name, nin


def test_cupy_ufuncs_hand_arrays_back_to_the_namespace(backend_name, arr, host, to_device,
                                                       to_host):
    """``cupy_array + x`` and ``np.add(cupy_array, x)`` reach CuPy's ufunc first (NumPy asks
    the leftmost operand), which calls the Array's ``__cupy_override_elementwise_kernel__``:
    called here as CuPy calls it, it runs our function and gives an Array."""
    assert hasattr(arr(np.ones(2)), "__cupy_override_elementwise_kernel__") == (
        backend_name == "cuda")  # CuPy takes only GPU Arrays to its kernels
    a, b = rng.standard_normal((2, 4)), rng.standard_normal(4)
    x, native = arr(a), to_device(b)
    with recording() as launches:
        got = numpy_protocols._cupy_kernel(ufunc("cupy_add", 2), native, x)
    assert type(got) is xp.Array
    np.testing.assert_allclose(host(got), b + a)
    assert backend_name != "emulate" or [r.name for r in launches if r.name.startswith("ew_")]
    plain = to_device(b.copy())  # cupy_array += x: into the CuPy array
    assert numpy_protocols._cupy_kernel(ufunc("cupy_add", 2), plain, x[0], plain) is plain
    np.testing.assert_allclose(to_host(plain), b + a[0])

    def kernel(u, v):  # an ElementwiseKernel: on the native arrays, an Array out
        assert type(u) is type(native) and type(v) is type(native)
        return u * v

    kernel.name, kernel.nin = "cupy_add", 2  # its author's name: not taken for cupy.add
    got = numpy_protocols._cupy_kernel(kernel, native, x)
    assert type(got) is xp.Array
    np.testing.assert_allclose(host(got), b * a)


@pytest.mark.parametrize("ufunc", [np.matmul, np.vecdot], ids=lambda u: u.__name__)
def test_ufuncs_with_out_whose_function_has_none(on, to_host, ufunc):
    """``np.matmul(x, y, out=z)`` (and ``vecdot``): the namespace's function takes no
    ``out=``, so the array library's writes into ``z``, as NumPy does."""
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    x, y = on(a), on(b)
    expected = ufunc(a, b)
    out = on(np.zeros_like(expected))
    assert ufunc(x, y, out=out) is out
    np.testing.assert_allclose(to_host(out), expected)
    plain = np.zeros_like(expected)  # a NumPy out: NumPy's own call
    if out.device in ("cpu", "emulator"):
        assert ufunc(x, y, out=plain) is plain
        np.testing.assert_allclose(plain, expected)


def test_ufunc_reductions(arr, host):
    a = rng.standard_normal((3, 4))
    x = arr(a)
    for ufunc in (np.add, np.multiply, np.maximum, np.minimum):
        for axis in (0, 1, None):
            np.testing.assert_allclose(host(ufunc.reduce(x, axis=axis)), ufunc.reduce(a, axis=axis))
    np.testing.assert_array_equal(host(np.logical_and.reduce(x > 0)), np.logical_and.reduce(a > 0))


def test_numpy_array_functions(arr, host):
    a = rng.standard_normal((4, 5))
    x = arr(a)
    cases = [  # ours where the namespace's signature takes the call, else the library's
        (lambda m: m.sum(x, axis=0, keepdims=True), lambda: np.sum(a, axis=0, keepdims=True)),
        (lambda m: m.mean(x), lambda: np.mean(a)),
        (lambda m: m.concatenate([x, x], axis=1), lambda: np.concatenate([a, a], axis=1)),
        (lambda m: m.stack([x, x]), lambda: np.stack([a, a])),
        (lambda m: m.clip(x, -0.5, 0.5), lambda: np.clip(a, -0.5, 0.5)),
        (lambda m: m.where(x > 0, x, 0.0), lambda: np.where(a > 0, a, 0.0)),
        (lambda m: m.round(x), lambda: np.round(a)),
        (lambda m: m.std(x, ddof=1), lambda: np.std(a, ddof=1)),  # no ddof: the library's
        (lambda m: m.cumsum(x, axis=1), lambda: np.cumsum(a, axis=1)),  # not in the namespace
        (lambda m: m.roll(x, 1, 0), lambda: np.roll(a, 1, 0)),  # positional axis: the library's
        (lambda m: m.linalg.norm(x, axis=1), lambda: np.linalg.norm(a, axis=1)),
        (lambda m: m.einsum("ij,ij->i", x, x), lambda: np.einsum("ij,ij->i", a, a)),
    ]
    for call, expected in cases:
        got = call(np)
        assert type(got) is xp.Array
        np.testing.assert_allclose(host(got), expected(), rtol=1e-12)
    assert np.shape(x) == a.shape and np.ndim(x) == 2  # Python values stay Python values
    with recording() as launches:
        np.concatenate([x, x])  # our concat: our strided copies
    assert launches or x.device == "cpu"


LIKE_CALLS = [  # NumPy's functions with like=: (call given like=, the same NumPy call)
    (lambda like: np.empty((2, 3), like=like), lambda: np.empty((2, 3))),  # C, ours
    (lambda like: np.zeros(4, dtype=np.int8, like=like), lambda: np.zeros(4, dtype=np.int8)),
    (lambda like: np.ones((2, 2), like=like), lambda: np.ones((2, 2))),  # order=: NumPy's
    (lambda like: np.full(3, 7, dtype=np.uint8, like=like), lambda: np.full(3, 7, np.uint8)),
    (lambda like: np.arange(1, 7, 2, like=like), lambda: np.arange(1, 7, 2)),
    (lambda like: np.asarray([1.5, 2.5], like=like), lambda: np.asarray([1.5, 2.5])),
    (lambda like: np.array([[1, 2]], dtype=np.float32, like=like),
     lambda: np.array([[1, 2]], dtype=np.float32)),
    (lambda like: np.eye(3, k=1, like=like), lambda: np.eye(3, k=1)),
    (lambda like: np.identity(2, like=like), lambda: np.identity(2)),
    (lambda like: np.tri(3, 4, k=-1, dtype=bool, like=like), lambda: np.tri(3, 4, k=-1, dtype=bool)),
    (lambda like: np.fromiter(range(4), dtype=np.int16, like=like),
     lambda: np.fromiter(range(4), dtype=np.int16)),
    (lambda like: np.frombuffer(b"\x01\x02", dtype=np.uint8, like=like),
     lambda: np.frombuffer(b"\x01\x02", dtype=np.uint8)),
]


@pytest.mark.parametrize("index", range(len(LIKE_CALLS)))
def test_like_an_array_makes_arrays_on_its_device(on, to_host, index):
    """``np.<creation>(..., like=x)`` (NumPy hands it to ``x.__array_function__`` without
    ``like``, no Array among the arguments): an Array on ``x``'s device, NumPy's values."""
    x = on(rng.standard_normal(3))
    call, numpy_call = LIKE_CALLS[index]
    got, expected = call(x), numpy_call()
    assert type(got) is xp.Array and got.device == x.device
    if index:  # np.empty's values are whatever memory held
        np.testing.assert_array_equal(to_host(got), expected)
    assert got.dtype == expected.dtype and got.shape == expected.shape


def test_like_an_array_with_arrays_among_the_arguments(on, to_host):
    x = on(rng.standard_normal(3))
    y = on(rng.standard_normal((2, 3)).astype(np.float32))
    for got in (np.array(y, like=x), np.asarray(y, like=x)):
        assert type(got) is xp.Array and got.device == x.device and got.dtype == np.float32
        np.testing.assert_array_equal(to_host(got), to_host(y))


def test_the_library_refuses_what_it_lacks_on_a_gpu():
    """A GPU Array never goes to NumPy: where CuPy has no such function either, TypeError."""
    with pytest.raises(TypeError, match="numpy.foo on an Array on a GPU.*to_device"):
        numpy_protocols._library_call("numpy.foo", "cuda", lambda: pytest.fail("NumPy ran"),
                                      lambda: NotImplemented)


def test_gpu_arrays_do_not_convert_silently(backend_name, arr):
    if backend_name != "cuda":
        pytest.skip("a GPU Array")
    x = arr(rng.standard_normal(4))
    with pytest.raises(TypeError, match="to_device"):
        np.asarray(x)
    assert type(np.std(x, ddof=1)) is xp.Array  # CuPy's std, on the GPU


# ---- Python protocols
def test_len_iter_format_str_repr(arr, host):
    a = rng.standard_normal((3, 2))
    x = arr(a)
    assert len(x) == 3 and len(x[0]) == 2
    rows = list(x)
    assert len(rows) == 3 and all(type(r) is xp.Array for r in rows)
    np.testing.assert_array_equal(host(rows[1]), a[1])
    with pytest.raises(TypeError, match="0-d"):
        len(x[0, 0])
    with pytest.raises(TypeError, match="0-d"):
        iter(x[0, 0])
    value = float(a[1, 1])
    assert f"{x[1, 1]:.3f}" == f"{value:.3f}" and format(x[1, 1]) == format(value)
    assert f"{arr(np.array(7, np.int8)):>4}" == "   7"
    assert f"{arr(np.array(True))}" == "True"
    with pytest.raises(TypeError, match=r"\(3, 2\)"):
        f"{x:.3f}"
    assert str(x) == str(a) and f"{x}" == str(a)
    device = str(x.device)
    for h in (a, np.arange(5, dtype=np.int8), np.array(2.5), np.zeros((2, 0))):
        expected = repr(h).replace("array(", "Array(", 1)[:-1] + f", device={device!r})"
        assert repr(arr(h)) == expected


def test_format_of_a_bfloat16_scalar(arr):
    require_bfloat16()
    bfloat16 = dtypes.BFLOAT16
    x = arr(np.array(1.5, dtype=bfloat16))
    assert f"{x:.2f}" == "1.50"


# ---- consumers that call NumPy
def test_matplotlib_plots_cpu_arrays():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = xp.linspace(0.0, 1.0, 20, device="cpu")
    y = xp.sin(t * 6.0)
    fig, ax = plt.subplots()
    try:
        (line,) = ax.plot(t, y)
        ax.hist(y, bins=4)
        fig.canvas.draw()
        np.testing.assert_array_equal(line.get_ydata(), np.asarray(y))
    finally:
        plt.close(fig)


def test_numpy_written_code_on_emulator_arrays(arr, host):
    """A function written for NumPy arrays (what SciPy's are): np calls, no methods."""

    def zscore(values, axis=0):
        mean = np.mean(values, axis=axis, keepdims=True)
        return np.divide(np.subtract(values, mean), np.std(values, axis=axis, keepdims=True))

    a = rng.standard_normal((5, 3))
    got = zscore(arr(a))
    assert type(got) is xp.Array
    np.testing.assert_allclose(host(got), (a - a.mean(0)) / a.std(0), rtol=1e-12)


def test_scipy_functions_on_cpu_arrays():
    special = pytest.importorskip("scipy.special")
    hierarchy = pytest.importorskip("scipy.cluster.hierarchy")
    a = rng.standard_normal(6)
    x = xp.asarray(a, device="cpu")
    np.testing.assert_allclose(np.asarray(special.expit(x)), special.expit(a))
    points = xp.asarray(rng.standard_normal((6, 2)), device="cpu")
    tree = hierarchy.linkage(points)
    assert hierarchy.dendrogram(tree, no_plot=True)["leaves"]


@pytest.mark.parametrize("device", ("cpu", "emulator"))
def test_numpy_written_scipy_functions_on_arrays(device):
    """SciPy's NumPy-written functions (no ``SCIPY_ARRAY_API``) on Arrays give NumPy's values:
    ``linalg.toeplitz`` reads ``x.conj()``, ``circulant`` ``x.strides``, ``stats.ecdf``
    concatenates an Array with a list (``np.concatenate([x, [v]])``)."""
    linalg = pytest.importorskip("scipy.linalg")
    stats = pytest.importorskip("scipy.stats")
    a = rng.standard_normal(7)
    x = xp.asarray(a, device=device)
    for layout in (lambda v: v, lambda v: v[::-2], lambda v: xp.reshape(v[:6], (2, 3)).mT):
        assert layout(x).strides == layout(xp.asarray(a, device="cpu"))._a.strides
    for name in ("toeplitz", "circulant"):
        got = getattr(linalg, name)(x[:4])
        host = np.asarray(got.to_device("cpu")) if type(got) is xp.Array else np.asarray(got)
        np.testing.assert_array_equal(host, getattr(linalg, name)(a[:4]))
    got = stats.ecdf(x).cdf
    expected = stats.ecdf(a).cdf
    for field in ("quantiles", "probabilities"):
        value = getattr(got, field)
        host = np.asarray(value.to_device("cpu")) if type(value) is xp.Array else value
        np.testing.assert_allclose(host, getattr(expected, field))


# ---- NumPy's API follows NumPy: its type resolution, then our kernels
NUMPY_UFUNCS_ON_ARRAYS = (np.sqrt, np.sin, np.exp, np.log1p, np.add, np.true_divide, np.rint,
                          np.logical_and)


@pytest.mark.parametrize("device", ("cpu", "emulator"))
@pytest.mark.parametrize("dtype", ("bool", "int8", "uint8", "int16", "int64", "float16",
                                   "float32", "float64"))
@pytest.mark.parametrize("ufunc", NUMPY_UFUNCS_ON_ARRAYS, ids=lambda u: u.__name__)
def test_numpy_ufuncs_on_arrays_resolve_as_numpy(ufunc, dtype, device):
    host = np.arange(1, 7).astype(dtype)
    x = xp.asarray(host, device=device)
    args = (x,) * ufunc.nin
    with np.errstate(all="ignore"):
        expected = ufunc(*(host,) * ufunc.nin)
    result = ufunc(*args)
    assert type(result) is xp.Array and result.device == device
    assert result.dtype == expected.dtype
    got = np.asarray(result.to_device("cpu"))
    tol = 1e-3 if expected.dtype.itemsize <= 2 else 1e-6
    assert np.allclose(got.astype(np.float64), expected.astype(np.float64), rtol=tol)


@pytest.mark.parametrize("device", ("cpu", "emulator"))
def test_numpy_ufunc_with_a_python_scalar_is_weak(device):
    x = xp.asarray(np.arange(3, dtype=np.int8), device=device)
    assert np.add(x, 1).dtype == np.int8
    assert np.add(x, 1.5).dtype == np.float64
    assert np.true_divide(x, 2).dtype == np.float64
