"""The dtypes tests draw from, in one place: every dtype the kernels take, and the smaller
sets that still cover each element size (1, 2, 4, 8, 16 bytes) with bool and float16."""

from __future__ import annotations

import numpy as np

from infini_cupy import dtypes
from tests.support.ci import skip_outside_ci

# Every dtype our kernels copy and compute with (the standard's and float16).
ALL = tuple(d.name for d in dtypes.ALL_DTYPES)
# One of each element size, plus bool and float16 (the cases a unit-size bug would show in).
EACH_SIZE = ("bool", "int8", "uint8", "float16", "float32", "float64", "complex128")
# The dtype whose itemsize is a copy's unit, for launching kernels of a given unit directly.
OF_UNIT = {1: np.int8, 2: np.float16, 4: np.float32, 8: np.float64, 16: np.complex128}


def require_bfloat16():
    """Skip the test where infini_cupy leaves bfloat16 out (no ml_dtypes, or one older than
    0.7, which rounds twice: a GPU image's ml_dtypes 0.6, say), naming why; in CI, which
    installs the test extra's ml_dtypes, fail instead."""
    if dtypes.BFLOAT16 is None:
        skip_outside_ci(dtypes.BFLOAT16_HINT)


def assert_library_close(got, expected):
    """``got`` as close to NumPy's ``expected`` as the array library's own reductions and scans
    promise (``sum``, ``mean``, ``var``, ``cumprod``: delegated, not our kernels). CuPy adds
    and multiplies in a parallel order (a tree, a scan; ``var`` takes its mean in the input's
    dtype), NumPy pairwise or in sequence: in float64 the results agree to 1e-12, in float32
    (and float16) within 16 ulps of the largest result, the partial sums' rounding."""
    expected = np.asarray(expected)
    if expected.dtype.kind in "fc" and np.finfo(expected.dtype).eps > 1e-10:
        scale = np.nanmax(np.abs(expected), initial=0.0)
        atol = 16 * float(np.finfo(expected.dtype).eps) * float(scale)
        np.testing.assert_allclose(got, expected, rtol=0, atol=atol, equal_nan=True)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, equal_nan=True)
