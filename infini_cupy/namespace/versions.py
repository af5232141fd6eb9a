"""The standard's versions the namespace answers for: ``x.__array_namespace__(api_version=...)``
gives ``infini_cupy`` itself for 2025.12 (or None), and for an earlier version a namespace
with that version's behaviour where the two differ.

2025.12 changed three return types, tuples where earlier versions said lists:
``meshgrid``, ``broadcast_arrays`` and ``__array_namespace_info__().devices()``. An earlier
version's namespace is a module object holding every name of ``infini_cupy`` (the same
functions, so Arrays and their devices are shared) with those three returning lists and
``__array_api_version__`` set to the version asked for. Functions added in 2025.12 stay:
a namespace may hold names beyond its version's.

>>> import infini_cupy as xp
>>> x = xp.asarray([1.0, 2.0], device="cpu")
>>> old = x.__array_namespace__(api_version="2024.12")
>>> old.__array_api_version__, type(old.meshgrid(x, x)).__name__
('2024.12', 'list')
>>> x.__array_namespace__() is xp
True
"""

from __future__ import annotations

import functools
import sys
import types

from .info import Info

LATEST = "2025.12"
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", LATEST)
# the functions whose sequence results were lists before 2025.12
_LIST_RESULTS = ("meshgrid", "broadcast_arrays")
_namespaces: dict[str, types.ModuleType] = {}


class ListInfo(Info):
    """``__array_namespace_info__()`` of a namespace before 2025.12: ``devices()`` a list."""

    def devices(self) -> list:
        return list(super().devices())


def _returning_list(function):
    @functools.wraps(function)  # keeps the standard's signature (inspect follows __wrapped__)
    def as_list(*args, **kwargs):
        return list(function(*args, **kwargs))

    return as_list


def _list_info() -> ListInfo:
    """The namespace's inspection object, ``devices()`` as a list (before 2025.12)."""
    return ListInfo()


def _earlier(version: str) -> types.ModuleType:
    package = sys.modules[__name__.split(".")[0]]
    module = types.ModuleType(package.__name__, f"infini_cupy at array API {version}.")
    module.__dict__.update({name: getattr(package, name)
                            for name in (*package.__all__, "linalg", "fft")})
    module.__dict__.update({name: _returning_list(getattr(package, name))
                            for name in _LIST_RESULTS})
    module.__array_api_version__ = version
    module.__array_namespace_info__ = _list_info
    module.__all__ = list(package.__all__)
    return module


def namespace(api_version: str | None):
    """The namespace for ``api_version`` (None: the latest); ValueError naming the versions
    supported otherwise."""
    if api_version is None or api_version == LATEST:
        return sys.modules[__name__.split(".")[0]]
    if api_version not in API_VERSIONS:
        raise ValueError(f"unsupported array API version {api_version!r}; expected one of "
                         f"{', '.join(API_VERSIONS)}")
    found = _namespaces.get(api_version)
    if found is None:
        found = _namespaces[api_version] = _earlier(api_version)
    return found
