"""The dtypes tests draw from, in one place: every dtype the kernels take, and the smaller
sets that still cover each element size (1, 2, 4, 8, 16 bytes) with bool and float16."""

from __future__ import annotations

import numpy as np

from infini_cupy import dtypes

# Every dtype our kernels copy and compute with (the standard's and float16).
ALL = tuple(d.name for d in dtypes.ALL_DTYPES)
# One of each element size, plus bool and float16 (the cases a unit-size bug would show in).
EACH_SIZE = ("bool", "int8", "uint8", "float16", "float32", "float64", "complex128")
# The dtype whose itemsize is a copy's unit, for launching kernels of a given unit directly.
OF_UNIT = {1: np.int8, 2: np.float16, 4: np.float32, 8: np.float64, 16: np.complex128}
