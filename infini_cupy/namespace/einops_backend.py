"""einops' backend for Arrays: ``einops.rearrange``, ``reduce``, ``repeat``, ``pack``,
``unpack`` and ``einsum`` take :class:`infini_cupy.Array` by themselves, as they take NumPy
and CuPy arrays (without it, only ``einops.array_api`` did).

einops finds the backend of an array among the subclasses of its ``AbstractBackend`` whose
``framework_name`` is an imported module; defining :class:`ArrayBackend` at ``import
infini_cupy`` (where einops is installed) is all it takes. Each step is the namespace's
function (:func:`install` hands them over) on the Array's device: a reshape that cannot be a
view is one of our copies, a transpose a view, reductions and ``tile`` the namespace's.

>>> import einops, numpy as np, infini_cupy as xp
>>> x = xp.asarray(np.arange(6.0).reshape(2, 3), device="emulator")
>>> einops.rearrange(x, "h w -> (w h)")
Array([0., 3., 1., 4., 2., 5.], device='emulator')
>>> einops.reduce(x, "h w -> w", "max")
Array([3., 4., 5.], device='emulator')
"""

from __future__ import annotations

import importlib.util

import numpy as np

from .array import Array

_xp: dict = {}  # the public namespace's functions by name (install)


def install(public: dict) -> None:
    """Give the backend the public namespace's functions (``infini_cupy/__init__``, once)."""
    _xp.update(public)


def _abstract_backend():
    """einops' ``AbstractBackend``, or None where einops is not installed or keeps it
    elsewhere (``einops.array_api`` still takes Arrays then)."""
    if importlib.util.find_spec("einops") is None:
        return None
    try:
        from einops._backends import AbstractBackend
    except ImportError:
        return None
    return AbstractBackend


_Base = _abstract_backend()

if _Base is not None:

    class ArrayBackend(_Base):
        """einops' backend for :class:`infini_cupy.Array` (found by einops itself)."""

        framework_name = "infini_cupy"

        def is_appropriate_type(self, tensor):
            return isinstance(tensor, Array)

        def from_numpy(self, x):
            return _xp["asarray"](x)

        def to_numpy(self, x):
            return np.asarray(x.to_device("cpu"))

        def arange(self, start, stop):
            return _xp["arange"](start, stop)

        def reshape(self, x, shape):
            return _xp["reshape"](x, tuple(shape))

        def transpose(self, x, axes):
            return _xp["permute_dims"](x, tuple(axes))

        def reduce(self, x, operation, axes):
            # einops' reductions by name (min, max, sum, mean, prod, any, all) are the
            # namespace's functions of those names; a callable one einops calls itself
            return _xp[operation](x, axis=tuple(axes))

        def stack_on_zeroth_dimension(self, tensors: list):
            return _xp["stack"](tensors)

        def add_axis(self, x, new_position):
            return _xp["expand_dims"](x, axis=new_position)

        def tile(self, x, repeats):
            return _xp["tile"](x, tuple(repeats))

        def concat(self, tensors, axis: int):
            return _xp["concat"](tensors, axis=axis)

        def is_float_type(self, x):
            return _xp["isdtype"](x.dtype, "real floating")

        def einsum(self, pattern, *x):
            return _xp["einsum"](pattern, *x)

    __all__ = ["ArrayBackend"]
else:  # pragma: no cover - depends on the environment
    __all__ = []
