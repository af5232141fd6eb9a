"""What a bug report needs: the package's version and :func:`show_config` (versions, backend,
devices, NVRTC, cache folder), also printed by ``python -m infini_cupy --version``."""

from __future__ import annotations

import sys

from . import config


def package_version() -> str:
    """The installed distribution's version (``pip install -e .`` installs it too)."""
    from importlib import metadata  # here: ``import infini_cupy`` need not load it

    try:
        return metadata.version("infini_cupy")
    except metadata.PackageNotFoundError:  # a checkout on sys.path, never installed
        return "0+unknown"


def _version_of(module: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(module)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cupy_and_devices() -> tuple[str, list[str]]:
    try:
        import cupy
    except ImportError:
        return "not installed", []
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no driver, no GPU: CuPy's own words, unless no driver is there
        # (the CUDA runtime then says "driver version is insufficient", which misleads)
        why = f"{type(e).__name__}: {e}" if _driver_present() else "no NVIDIA driver (libcuda.so.1)"
        return cupy.__version__, [f"none ({why})"]
    names = []
    for index in range(count):
        name = cupy.cuda.runtime.getDeviceProperties(index)["name"]
        names.append(f"cuda:{index} {name.decode() if isinstance(name, bytes) else name}")
    return cupy.__version__, names


def _driver_present() -> bool:
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def _nvrtc() -> str:
    try:
        import cupy  # noqa: F401
    except ImportError:
        return ("not found: our NVRTC bindings come with CuPy "
                "(pip install 'infini_cupy[cuda13]', or [cuda12] with a CUDA 12 driver)")
    try:
        from .runtime.nvrtc import nvrtc_version

        return ".".join(map(str, nvrtc_version()))
    except Exception as e:  # RuntimeError naming the wheel to install: said whole
        return f"not found ({' '.join(str(e).split())})"


def config_info() -> dict[str, str]:
    """The facts :func:`show_config` prints, as strings, in its order.

    >>> import infini_cupy as xp
    >>> info = xp.about.config_info()
    >>> info["infini_cupy"] == xp.__version__, info["backend"] in ("numpy", "emulate", "cuda")
    (True, True)
    """
    import platform

    from .runtime import native
    from .runtime.emulate.build import _installed_compiler

    cupy_version, devices = _cupy_and_devices()
    return {
        "infini_cupy": package_version(),
        "python": f"{platform.python_version()} ({sys.executable})",
        "platform": platform.platform(),
        "numpy": _version_of("numpy"),
        "array-api-compat": _version_of("array-api-compat"),
        "ml_dtypes (bfloat16)": _version_of("ml_dtypes"),
        "cupy": cupy_version,
        "devices": ", ".join(["cpu", "emulator", *devices]),
        "backend": config.get_backend(),
        "nvrtc": _nvrtc(),
        "cuda launch": config.launch_in_force[0],  # INFINI_CUPY_LAUNCH (docs/dev/launch.md)
        "g++ (emulator)": (_installed_compiler() or "not found").splitlines()[0],
        "hot path": native.status(),
        "cache folder": str(config.cache_dir()),
    }


def show_config(file=None) -> None:
    """Print versions, backend, devices, NVRTC, the cuda launch mechanism, the hot path and
    the kernel cache folder (for bug reports).

    Parameters
    ----------
    file : file object, optional
        Where to print; ``sys.stdout`` by default.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.show_config()  # doctest: +ELLIPSIS
    infini_cupy          ...
    python               ...
    ...
    cache folder         ...
    """
    for key, value in config_info().items():
        print(f"{key:<20} {value}", file=file or sys.stdout)
