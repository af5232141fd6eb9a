"""cubed on Arrays. cubed picks its code path by the name of its array module
(``CUBED_BACKEND_ARRAY_API_MODULE``): "infini_cupy" contains "cupy", so cubed takes its CuPy
path and hands our Arrays to zarr as they are, where NumPy arrays are converted first. zarr's
CPU buffers then call NumPy's methods on them: ``ravel().view("B")`` to write a chunk's bytes,
``base``, ``astype(dtype, order=)``, ``reshape``, ``transpose``, ``squeeze``, ``fill``,
``copy``, ``numpy.asanyarray``. Those calls are checked against NumPy on every run; cubed itself, a
heavy dependency (zarr, networkx) kept out of the test extra, runs a small workload when it is
installed (its own suite: docs/user/interop.md).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import infini_cupy as xp

REPO = Path(__file__).resolve().parents[2]
rng = np.random.default_rng(49)


def _host(a) -> np.ndarray:
    assert type(a) is xp.Array, type(a)
    return np.asarray(a.to_device("cpu"))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "uint8", "complex64", "bool"])
def test_the_calls_zarr_makes_on_arrays_under_cubed(on, dtype):
    """A chunk's bytes (``ravel().view("B")``) of contiguous, flipped, transposed and strided
    Arrays are NumPy's; ``base`` says whether the Array owns its memory; the rest of zarr's
    buffer calls give NumPy's answers and stay Arrays."""
    h = (rng.standard_normal((4, 6, 5)) * 50).astype(dtype)
    x = on(h)
    views = [(x, h), (x[:, ::-1], h[:, ::-1]), (xp.permute_dims(x, (2, 0, 1)), h.transpose(2, 0, 1)),
             (x[..., ::2], h[..., ::2]), (x[1], h[1])]
    for view, expected in views:
        chunk = view.ravel().view(dtype="B")
        np.testing.assert_array_equal(_host(chunk), expected.ravel().view("B"))
        np.testing.assert_array_equal(_host(view.reshape(-1)), expected.reshape(-1))
    assert x.base is None or type(x.base) is xp.Array
    assert type(x[1:].base) is xp.Array
    assert _host(x[1:].base).shape == h.shape
    copied = x.copy()
    assert copied.base is None and not np.shares_memory(_host(copied), h)
    np.testing.assert_array_equal(_host(x.transpose((2, 0, 1))), h.transpose(2, 0, 1))
    np.testing.assert_array_equal(_host(x.transpose()), h.transpose())
    np.testing.assert_array_equal(_host(x[:, :1].squeeze(axis=(1,))), h[:, :1].squeeze(axis=1))
    np.testing.assert_array_equal(_host(x[:1, :, :1].squeeze()), h[:1, :, :1].squeeze())
    filled, expected = x.copy(), h.copy()
    filled.fill(1)
    expected.fill(1)
    np.testing.assert_array_equal(_host(filled), expected)
    wide = np.result_type(h.dtype, np.float64)
    np.testing.assert_array_equal(_host(x.astype(wide, order="K")), h.astype(wide))
    np.testing.assert_array_equal(_host(x.view(h.dtype)), h)
    assert x.nbytes == h.nbytes
    if x.device == "cpu":  # zarr's NDBuffer.as_numpy_array
        np.testing.assert_array_equal(np.asanyarray(x), h)


WORKLOAD = '''
import tempfile
import numpy as np
import cubed
import cubed.array_api as cxp
import infini_cupy as xp
from cubed.backend_array_api import namespace
assert namespace is xp, namespace
h = np.random.default_rng(0).standard_normal((7, 9))
spec = cubed.Spec(work_dir=tempfile.mkdtemp(), allowed_mem="200MB")
a = cxp.asarray(h, chunks=(3, 4), spec=spec)
cases = {
    "add": (lambda a: a + 1.5 * a, lambda h: h + 1.5 * h),
    "sum": (lambda a: cxp.sum(a, axis=0), lambda h: h.sum(axis=0)),
    "mean": (lambda a: cxp.mean(a), lambda h: h.mean()),
    "matmul": (lambda a: cxp.matmul(a, cxp.permute_dims(a, (1, 0))), lambda h: h @ h.T),
    "flip": (lambda a: cxp.flip(a, axis=1), lambda h: h[:, ::-1]),
    "astype": (lambda a: cxp.astype(a * 100, cxp.int16), lambda h: (h * 100).astype(np.int16)),
    "index": (lambda a: a[1:6:2, 2:], lambda h: h[1:6:2, 2:]),
    "rechunk": (lambda a: a.rechunk((7, 2)), lambda h: h),
    "where": (lambda a: cxp.where(a > 0, a, 0.0), lambda h: np.where(h > 0, h, 0.0)),
    "concat": (lambda a: cxp.concat([a, a], axis=0), lambda h: np.concatenate([h, h])),
}
for name, (ours, numpys) in cases.items():
    got = ours(a).compute()
    assert type(got) is xp.Array, (name, type(got))
    np.testing.assert_allclose(np.asarray(got.to_device("cpu")), numpys(h), rtol=1e-12,
                               err_msg=name)
print("cubed on infini_cupy:", len(cases), "cases as on NumPy, on", got.device)
'''


def test_cubed_on_arrays_as_on_numpy(backend_name, tmp_path):
    """cubed's array API on Arrays (chunks of Arrays through zarr, our kernels for the
    elementwise parts): NumPy's answers. A subprocess: cubed reads its module at import."""
    pytest.importorskip("cubed", reason="cubed is not in the test extra (zarr, networkx)")
    if backend_name != "emulate":
        pytest.skip("runs on emulator Arrays")
    env = dict(os.environ, CUBED_BACKEND_ARRAY_API_MODULE="infini_cupy",
               INFINI_CUPY_BACKEND="emulate",
               PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", WORKLOAD], env=env, capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert "10 cases as on NumPy, on emulator" in done.stdout, done.stdout
