"""``gpu-check``'s ``env`` step: what this machine offers the cuda backend, each item or why
it is unavailable (an environment report never stops).

>>> sorted(environment())[:4]  # doctest: +SKIP
['cache_dir', 'cached_binaries', 'compute_sanitizer', 'cuda']
"""

from __future__ import annotations

import os
import platform
import shutil

from ...runtime import cuda as launcher


def sanitizer() -> str | None:
    """The ``compute-sanitizer`` executable, or None."""
    found = shutil.which("compute-sanitizer")
    for candidate in (found, "/usr/local/cuda/bin/compute-sanitizer"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _cached() -> int:
    """Binaries in the launcher's disk cache (``$INFINI_CUPY_CACHE_DIR/cubin``)."""
    from ... import config

    folder = config.cache_dir() / "cubin"
    return len(list(folder.glob("*.bin"))) if folder.is_dir() else 0


def _probe(what):
    """``what()``, or the error it raised as text (an environment report never stops)."""
    try:
        return what()
    except Exception as e:
        return f"unavailable: {type(e).__name__}: {e}"


def environment() -> dict:
    """What this machine offers the cuda backend (each item, or why it is unavailable)."""
    import numpy

    from ... import config

    def gpus():
        runtime = launcher._cupy().cuda.runtime  # CuPy's, or the tests' stand-in
        return [{"name": runtime.getDeviceProperties(i)["name"].decode(),
                 "compute_capability": launcher._cupy().cuda.Device(i).compute_capability,
                 "memory_gib": round(runtime.getDeviceProperties(i)["totalGlobalMem"] / 2**30, 1)}
                for i in range(runtime.getDeviceCount())]

    def cupy_version():
        import cupy

        return cupy.__version__

    def cuda_versions():
        runtime = launcher._cupy().cuda.runtime
        return {"driver": runtime.driverGetVersion(), "runtime": runtime.runtimeGetVersion()}

    def nvrtc():
        from ...runtime.nvrtc import nvrtc_version

        from cuda.pathfinder import load_nvidia_dynamic_lib

        return {"version": ".".join(map(str, nvrtc_version())),
                "library": load_nvidia_dynamic_lib("nvrtc").abs_path}

    def headers():
        from cuda.pathfinder import find_nvidia_header_directory

        return find_nvidia_header_directory("cudart") or "not found: pip install nvidia-cuda-runtime"

    return {"python": platform.python_version(), "numpy": numpy.__version__,
            "cupy": _probe(cupy_version), "gpus": _probe(gpus), "cuda": _probe(cuda_versions),
            "nvrtc": _probe(nvrtc), "cuda_headers": _probe(headers),
            "compute_sanitizer": sanitizer() or "not found",
            "cache_dir": str(config.cache_dir()), "cached_binaries": _cached()}
