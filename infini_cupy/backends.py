"""The backend switch: which launcher runs a kernel, read in one place.

| backend   | arrays          | what runs                                              |
| --------- | --------------- | ------------------------------------------------------ |
| ``cuda``    | ``cupy.ndarray``  | our kernels, compiled by NVRTC through ``cupy.RawModule`` |
| ``emulate`` | ``numpy.ndarray`` | the same kernel sources compiled by g++, run on the CPU |
| ``numpy``   | ``numpy.ndarray`` | plain NumPy                                            |

CuPy arrays always take ``cuda``. NumPy arrays take ``numpy`` unless
``INFINI_CUPY_BACKEND=emulate`` is set or the code runs inside ``backend("emulate")``.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys

import numpy as np

BACKENDS = ("cuda", "emulate", "numpy")
ENV_VAR = "INFINI_CUPY_BACKEND"

# None: no override in force, fall back to the environment variable.
_override: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "infini_cupy_backend", default=None
)


def _check_name(name: str) -> str:
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")
    return name


def get_backend() -> str:
    """The backend asked for: ``backend()`` override, else ``$INFINI_CUPY_BACKEND``, else ``numpy``.

    ``cuda`` is only the answer for CuPy arrays (see :func:`backend_for`); asking for it here
    makes NumPy inputs an error rather than a silent CPU computation.
    """
    name = _override.get()
    if name is None:
        name = os.environ.get(ENV_VAR, "").strip() or "numpy"
        if name not in BACKENDS:
            raise ValueError(
                f"{ENV_VAR}={name!r} is not a backend; expected one of {', '.join(BACKENDS)}"
            )
    return name


@contextlib.contextmanager
def backend(name: str):
    """Run NumPy arrays through ``name`` inside the ``with`` block.

    >>> import numpy as np, infini_cupy as xp
    >>> with xp.backend("emulate"):
    ...     y = xp.rearrange(np.arange(6).reshape(2, 3).T)
    """
    token = _override.set(_check_name(name))
    try:
        yield name
    finally:
        _override.reset(token)


def _cupy_module():
    """CuPy if it is already imported (a CuPy array can only exist then); never imports it."""
    return sys.modules.get("cupy")


def is_cupy_array(x) -> bool:
    cp = _cupy_module()
    return cp is not None and isinstance(x, cp.ndarray)


def device_of(x) -> str:
    """A short device description for error messages: ``cpu`` or ``cuda:N``."""
    if is_cupy_array(x):
        return f"cuda:{x.device.id}"
    return "cpu"


def backend_for(*arrays) -> str:
    """The backend for an operation on ``arrays`` (non-arrays, such as Python scalars, are ignored).

    Raises ValueError naming both devices when CuPy arrays of different GPUs, or CuPy and
    NumPy arrays, are mixed.
    """
    devices = []
    for a in arrays:
        if is_cupy_array(a) or isinstance(a, np.ndarray):
            d = device_of(a)
            if d not in devices:
                devices.append(d)
    if len(devices) > 1:
        raise ValueError(
            f"arrays are on different devices: {' and '.join(devices)}; "
            "move them to one device first (to_device)"
        )
    if devices and devices[0] != "cpu":
        return "cuda"
    name = get_backend()
    if name == "cuda" and devices:
        raise ValueError(
            "the cuda backend needs CuPy arrays, got NumPy arrays (device cpu); "
            "convert with cupy.asarray or choose the 'emulate' or 'numpy' backend"
        )
    return name


def require_cupy():
    """Import CuPy for the ``cuda`` backend, with an error that says what to install."""
    try:
        import cupy
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError(
            "the cuda backend needs CuPy: pip install 'infini_cupy[cuda12]' or "
            "'infini_cupy[cuda13]' (matching your CUDA driver)"
        ) from e
    return cupy


def gpu_available() -> bool:
    """True when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy
    except ImportError:
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False
