"""infini_cupy: an array-API namespace for CuPy arrays whose data movement and elementwise
functions run on our own CUDA kernels (NumPy arrays on the CPU)."""

from .backends import backend, get_backend

__all__ = ["backend", "get_backend"]
