"""infini_cupy: an array-API namespace (standard 2025.12; 2024.12 and earlier on request) whose
data movement and elementwise functions run on our own CUDA kernels. Its array, :class:`Array`, wraps a CuPy
array (GPU) or a NumPy array (the CPU, or the emulator that runs the same kernels); every
function also takes and returns plain NumPy and CuPy arrays.

>>> import numpy as np, infini_cupy as xp
>>> x = np.arange(6.0).reshape(2, 3)
>>> xp.rearrange(x, "h w -> w h").shape
(3, 2)
>>> y = xp.asarray([1.0, 4.0, 9.0], device="cpu")
>>> xp.sqrt(y) - 1
Array([0., 1., 2.], device='cpu')
"""

from . import about
from .about import show_config
from .config import backend, get_backend
from .dtypes import BFLOAT16_HINT as _BFLOAT16_HINT
from .namespace import (array_methods, boundary, data_movement, delegated, docstrings,
                        einops_backend, elementwise_functions, extension_dtypes, extensions,
                        lazy_kernels, numpy_protocols, operators)
from .namespace.array import Array
from .namespace.delegated import (  # noqa: F401  constants, dtypes, inspection
    __array_api_version__,
    __array_namespace_info__,
    e,
    inf,
    nan,
    newaxis,
    pi,
)
from .namespace.device import Device
from .namespace.fusion import FusionWarning, fuse
from .namespace.lazy import lazy
from .namespace.patterns import PatternError

# Every function, compiled around its implementation on native arrays: the standard's
# signatures, Arrays in -> Arrays out, NumPy and CuPy arrays in -> the same kind out.
_public = boundary.public_namespace()
globals().update(_public)
globals().update({_name: getattr(delegated, _name) for _name in delegated.DTYPE_NAMES})
# float16 and bfloat16 (when ml_dtypes is installed): extensions
globals().update({_name: getattr(extension_dtypes, _name)
                  for _name in extension_dtypes.EXTENSION_DTYPE_NAMES})
operators.install(_public)
lazy_kernels.install(_public)  # lazy()'s pending expressions replayed with these functions
numpy_protocols.install(_public)  # np.add(x, y), np.sum(x) on Arrays: the functions above
array_methods.install(_public)  # x.reshape, x.ravel, x.round, ...: NumPy's methods, ours
docstrings.install(_public, delegated.__all__)  # numpydoc docstrings from the op table
einops_backend.install(_public)  # einops.rearrange(x, ...) of Arrays: these functions

# dict.fromkeys: asarray is in several lists (ours wraps the delegated one); list each name once
__all__ = list(dict.fromkeys([
    *delegated.__all__,
    *extension_dtypes.__all__,
    *data_movement.__all__,
    *elementwise_functions.__all__,
    # beyond the standard: NumPy's functions that generic code calls (namespace/extensions.py)
    *extensions.__all__,
    "rearrange_",
    "backend",
    "get_backend",
    "Array",
    "Device",
    "fuse",
    "FusionWarning",
    "lazy",
    "PatternError",
    "show_config",
]))
del (array_methods, data_movement, delegated, docstrings, elementwise_functions,
     extension_dtypes, extensions, boundary, lazy_kernels, operators, numpy_protocols,
     einops_backend, _public)



def __dir__():
    """The namespace's names, not the (private) modules it is built from."""
    return sorted(__all__)


def __getattr__(name):
    if name == "__version__":  # the installed metadata, read when asked (not at import)
        return about.package_version()
    # bfloat16 is absent without ml_dtypes: say what to install rather than just "no attribute"
    if name == "bfloat16":
        raise AttributeError(f"module 'infini_cupy' has no attribute 'bfloat16': {_BFLOAT16_HINT}")
    raise AttributeError(f"module 'infini_cupy' has no attribute {name!r}")
