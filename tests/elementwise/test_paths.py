"""Which path an elementwise call takes, and that each path is right: staged copies for
operands laid out across the walk (transposed inputs, an ``out=`` unlike the inputs), the
16-byte strided path (rows, columns), and the short path of remembered signatures (pointer
alignment, scalars, backends). Coalescing is measured with the profiler in emulation."""

from __future__ import annotations

import numpy as np
import pytest

from infini_cupy import arrays, config
from infini_cupy.elementwise import plan as elementwise_plan
from infini_cupy.elementwise import short_path
from infini_cupy.namespace import elementwise_functions as F
from infini_cupy.runtime import recent
from infini_cupy.runtime.launch import recording
from infini_cupy.tools import profiler
from tests.support.elementwise_cases import prepare


@pytest.fixture
def stage_small(monkeypatch):
    """Stage operands of any size, so small arrays take the staged path."""
    monkeypatch.setattr(elementwise_plan, "STAGE_MIN_ELEMENTS", 0)
    recent.forget_all()
    yield
    recent.forget_all()


def _launched(fn):
    with recording() as launches:
        result = fn()
    return result, [r.name.split("<")[0] for r in launches]


def _floats(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_transposed_input_is_staged(stage_small, backend_name, to_device, to_host):
    prepare(backend_name, "add", "subtract")
    a, b = _floats((40, 24)), _floats((24, 40), 1)
    for _ in range(2):  # planned, then remembered
        r, names = _launched(lambda: F.add(to_device(a), to_device(b).T))
        assert names == ["tiled_copy", "ew_contig"]
        np.testing.assert_array_equal(to_host(r), a + b.T)
    r, names = _launched(lambda: F.subtract(2.5, to_device(b).T))
    assert names == ["tiled_copy", "ew_contig"]
    np.testing.assert_array_equal(to_host(r), np.float32(2.5) - b.T)


def test_inputs_alike_stage_the_output(stage_small, backend_name, to_device, to_host):
    """Both inputs transposed: compute in their order, copy the result once."""
    prepare(backend_name, "multiply")
    a, b = _floats((24, 40)), _floats((24, 40), 1)
    for _ in range(2):
        r, names = _launched(lambda: F.multiply(to_device(a).T, to_device(b).T))
        assert names == ["ew_contig", "tiled_copy"]
        assert to_host(r).flags.c_contiguous
        np.testing.assert_array_equal(to_host(r), a.T * b.T)


def test_out_unlike_the_inputs(stage_small, backend_name, to_device, to_host):
    prepare(backend_name, "add")
    a, b = _floats((24, 40)), _floats((24, 40), 1)
    out = to_device(np.zeros((40, 24), np.float32)).T
    r, names = _launched(lambda: F.add(to_device(a), to_device(b), out=out))
    assert r is out and names == ["ew_contig", "tiled_copy"]
    np.testing.assert_array_equal(to_host(out), a + b)


def test_permuted_3d_and_broadcast_views(stage_small, backend_name, to_device, to_host):
    prepare(backend_name, "add", "maximum")
    a = _floats((6, 8, 10))
    b = _floats((10, 6, 8), 1).transpose(1, 2, 0)
    r, names = _launched(lambda: F.add(to_device(a), to_device(b)))
    assert names == ["tiled_copy", "ew_contig"]
    np.testing.assert_array_equal(to_host(r), a + b)
    # A view repeating elements is read as it is (a copy would materialize the repeats).
    column = np.broadcast_to(_floats((6, 8, 1), 2), (6, 8, 10))
    r, names = _launched(lambda: F.maximum(to_device(column), to_device(b)))
    assert names == ["tiled_copy", "ew_strided"]
    np.testing.assert_array_equal(to_host(r), np.maximum(column, b))


def test_small_calls_are_not_staged(backend_name, to_device, to_host):
    prepare(backend_name, "add")
    a, b = _floats((40, 24)), _floats((24, 40), 1)
    r, names = _launched(lambda: F.add(to_device(a), to_device(b).T))
    assert names == ["ew_strided"]
    np.testing.assert_array_equal(to_host(r), a + b.T)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "float64", "complex128"])
def test_column_and_row_broadcasts_move_rows_in_vectors(dtype, backend_name, to_device, to_host):
    prepare(backend_name, "add")
    a = np.arange(12 * 64).reshape(12, 64).astype(dtype)
    column = (np.arange(12).reshape(12, 1) * 3).astype(dtype)
    row = np.arange(64).astype(dtype)
    for b in (column, row):
        for x, y in ((a, b), (b, a)):
            r, names = _launched(lambda: F.add(to_device(x), to_device(y)))
            assert names == ["ew_strided"]
            np.testing.assert_array_equal(to_host(r), x + y)


def test_short_path_checks_alignment_per_call(backend_name, to_device, to_host):
    """One signature (shape, strides), pointers aligned or not: the 16-byte path only when
    every pointer allows it (a misaligned vector access faults in emulation)."""
    prepare(backend_name, "add")
    buffer = to_device(np.arange(4 * 66, dtype=np.float32))
    for offset in (0, 1, 2, 4):
        x = buffer[offset:offset + 4 * 64].reshape(4, 64)
        column = buffer[offset:offset + 4].reshape(4, 1)
        for y in (x, column, 1.5):
            r = F.add(x, y)
            np.testing.assert_array_equal(to_host(r), to_host(x) + (to_host(y) if not isinstance(y, float) else y))
    assert short_path._known


def test_short_path_scalars_and_backends(backend_name, to_device, to_host):
    prepare(backend_name, "add", "less")
    x = to_device(np.array([1, 2, 100], np.int8))
    np.testing.assert_array_equal(to_host(F.add(x, 3)), [4, 5, 103])
    np.testing.assert_array_equal(to_host(F.add(x, -3)), [-2, -1, 97])  # remembered
    np.testing.assert_array_equal(to_host(F.add(x, 127)), [-128, -127, -29])  # wraps
    with pytest.raises(OverflowError):
        F.add(x, 128)
    f = to_device(np.array([1.0, 2.0], np.float16))
    F.add(f, 1.0)
    with np.errstate(over="ignore"):
        assert np.isinf(to_host(F.add(f, 1e300))).all()  # out of float16's range: inf
    assert np.isnan(to_host(F.add(f, float("nan")))).all()
    if backend_name == "emulate":
        with config.backend("numpy"), recording() as launches:
            assert F.add(np.asarray([1.0]), 1.0).tolist() == [2.0]
        assert launches == []


def _efficiency(fn):
    with config.backend("emulate"):
        _, launches = profiler.profile(fn)
    reads, writes = profiler.total(launches)
    return reads.efficiency, writes.efficiency, [p.kernel.split("<")[0] for p in launches]


def _aligned(shape, dtype=np.float32, seed=0):
    """Rows on 256-byte boundaries, as CuPy allocates."""
    a = _floats(shape, seed, dtype)
    raw = np.empty(a.nbytes + 256, np.uint8)
    start = -raw.ctypes.data % 256
    out = raw[start:start + a.nbytes].view(dtype).reshape(shape)
    out[...] = a
    return out


@pytest.mark.parametrize("layout", ["transposed", "both transposed", "column", "row", "scalar"])
def test_coalescing_of_every_layout_class(layout, backend_name, monkeypatch):
    """Warp-level sector efficiency >= 0.9 for reads and writes (the profiler in emulation)."""
    if backend_name != "emulate":
        pytest.skip("the profiler reads emulator traces")
    prepare("emulate", "add")

    n = 256  # 65536 elements: the smallest staged call
    a, b = _aligned((n, n)), _aligned((n, n), seed=1)
    second = {"transposed": b.T, "both transposed": b.T, "column": b[:, :1], "row": b[0],
              "scalar": 2.0}[layout]
    first = a.T if layout == "both transposed" else a
    # outputs and temporaries aligned like CuPy's
    with arrays.outputs_from(lambda shape, dtype: _aligned(shape, dtype)):
        reads, writes, kernels = _efficiency(lambda: F.add(first, second))
    assert reads >= 0.9 and writes >= 0.9, (layout, reads, writes, kernels)
