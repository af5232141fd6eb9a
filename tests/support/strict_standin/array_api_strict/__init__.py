"""A stand-in for ``array_api_strict`` whose arrays are ``infini_cupy.Array``s: put on the path
of a subprocess, it makes the array-API tests of xarray and SciPy (written against
array_api_strict, their reference namespace) run on our Arrays. Every name is infini_cupy's;
the flag setters of array_api_strict do nothing."""

import infini_cupy as _xp

__version__ = "2.6.1"  # SciPy wants array_api_strict >= 2.3


def set_array_api_strict_flags(**flags):
    """array_api_strict's flags (``api_version``, ...): infini_cupy has none to set."""


def __getattr__(name):
    return getattr(_xp, name)


def pytest_report_header(config):
    """Loaded first as a plugin (``-p array_api_strict``: before a conftest puts the real
    package ahead on ``sys.path``), it says which namespace the suite gets."""
    return f"array_api_strict stand-in: infini_cupy on {_xp.empty(0).device}"
