"""The registry of kernel variants: every name expression the package can ever request.

Each kernel family registers its source file and a function listing its name expressions.
The ``cuda`` runtime, the emulator, the NVRTC compile checks and ``warmup`` all read this one
registry, so a variant the runtime can launch is a variant the tests have compiled.
"""

from __future__ import annotations

import importlib
from typing import Callable

# source file in kernels_src/ -> functions returning name expressions of that source
_FAMILIES: dict[str, list[Callable[[], tuple[str, ...]]]] = {}

# Modules that register families when imported.
_FAMILY_MODULES = ("infini_cupy.strided_copy", "infini_cupy.elementwise_kernels")


def register(source: str, names: Callable[[], tuple[str, ...]]) -> None:
    """Declare that ``names()`` lists name expressions of kernels in ``kernels_src/<source>``."""
    _FAMILIES.setdefault(source, []).append(names)


def all_variants() -> dict[str, tuple[str, ...]]:
    """Every name expression the package can request, grouped by source file."""
    for module in _FAMILY_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:  # a real import error inside the family module
                raise
    out = {}
    for source, fns in _FAMILIES.items():
        names: list[str] = []
        for fn in fns:
            names.extend(n for n in fn() if n not in names)
        out[source] = tuple(names)
    return out
