"""infini_cupy: an array-API namespace (standard 2024.12) for CuPy arrays whose data movement
and elementwise functions run on our own CUDA kernels; NumPy arrays run through NumPy or,
with the ``emulate`` backend, through the same kernels on a CPU emulator.

>>> import numpy as np, infini_cupy as xp
>>> x = np.arange(6.0).reshape(2, 3)
>>> xp.rearrange(x, "h w -> w h").shape
(3, 2)
"""

from . import _data_movement, _delegated
from ._delegated import *  # noqa: F403  standard functions we delegate, linalg, fft, dtypes, constants
from ._data_movement import *  # noqa: F403  copies on the rearrange kernel
from .backends import backend, get_backend
from .strided_copy import rearrange_

__all__ = [
    *_delegated.__all__,
    *_data_movement.__all__,
    "rearrange_",
    "backend",
    "get_backend",
]
