"""infini_cupy: an array-API namespace (standard 2024.12) for CuPy arrays whose data movement
and elementwise functions run on our own CUDA kernels; NumPy arrays run through NumPy or,
with the ``emulate`` backend, through the same kernels on a CPU emulator.

>>> import numpy as np, infini_cupy as xp
>>> x = np.arange(6.0).reshape(2, 3)
>>> xp.rearrange(x, "h w -> w h").shape
(3, 2)
"""

from .config import backend, get_backend
from .dtypes import BFLOAT16_HINT as _BFLOAT16_HINT
from .namespace import data_movement, delegated, elementwise_functions, extension_dtypes
# isort: off  (order matters: data movement's asarray replaces the delegated one)
from .namespace.delegated import *  # noqa: F403  standard functions we delegate, linalg, fft, dtypes, constants
from .namespace.extension_dtypes import *  # noqa: F403  float16, bfloat16; result_type etc. knowing bfloat16
from .namespace.elementwise_functions import *  # noqa: F403  the 67 elementwise functions, on our kernels
from .namespace.data_movement import *  # noqa: F403  copies on the rearrange kernel
# isort: on
from .strided.copy import rearrange_

# dict.fromkeys: asarray is in both lists (ours wraps the delegated one); list each name once
__all__ = list(dict.fromkeys([
    *delegated.__all__,
    *extension_dtypes.__all__,
    *data_movement.__all__,
    *elementwise_functions.__all__,
    "rearrange_",
    "backend",
    "get_backend",
]))
del data_movement, delegated, elementwise_functions, extension_dtypes


def __dir__():
    """The namespace's names, not the (private) modules it is built from."""
    return sorted(__all__)


def __getattr__(name):
    # bfloat16 is absent without ml_dtypes: say what to install rather than just "no attribute"
    if name == "bfloat16":
        raise AttributeError(f"module 'infini_cupy' has no attribute 'bfloat16': {_BFLOAT16_HINT}")
    raise AttributeError(f"module 'infini_cupy' has no attribute {name!r}")
