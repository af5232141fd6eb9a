"""Whether the ``cuda`` backend can run here, and if not, the one cause to tell the user: CuPy
missing, no NVIDIA driver, a driver older than CuPy's CUDA, or no GPU visible. ``gpu-check``
and ``demo --backend cuda`` print it as their one line and stop, within seconds.

>>> cause = cuda_unavailable()
>>> cause is None or isinstance(cause, str)
True
"""

from __future__ import annotations

import ctypes
import os

CUDA_ERROR_NO_DEVICE = 100  # cudaErrorNoDevice
CUDA_ERROR_INSUFFICIENT_DRIVER = 35  # cudaErrorInsufficientDriver
LIBCUDA = "libcuda.so.1"  # the NVIDIA driver's library (Linux)


def _driver_library() -> str | None:
    """Why the driver library does not load, or None when it does."""
    try:
        ctypes.CDLL(LIBCUDA)
    except OSError as e:
        return str(e)
    return None


def cuda_unavailable() -> str | None:
    """Why CuPy cannot run our kernels on a GPU here (one line), or None when it can."""
    try:
        import cupy
    except ImportError as e:
        return (f"CuPy is missing ({e}): pip install 'infini_cupy[cuda13]' (or [cuda12], "
                "matching the NVIDIA driver)")
    except Exception as e:  # a broken install: CuPy's own message
        return f"CuPy does not import: {type(e).__name__}: {e}"
    if os.name == "posix" and _driver_library() is not None:
        return f"no NVIDIA driver: {_driver_library()}"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        status = getattr(e, "status", None)
        if status == CUDA_ERROR_NO_DEVICE:
            visible = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
            return f"no GPU visible (CUDA_VISIBLE_DEVICES={visible}): {e}"
        if status == CUDA_ERROR_INSUFFICIENT_DRIVER:
            return (f"the NVIDIA driver is older than CuPy's CUDA runtime "
                    f"({cupy.cuda.runtime.runtimeGetVersion()}): {e}")
        return f"CUDA does not start: {type(e).__name__}: {e}"
    if count == 0:
        return "no GPU visible: CuPy sees 0 devices"
    return None
