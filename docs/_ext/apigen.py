"""The API reference pages, written at build time from the package's public names.

Every name of ``infini_cupy.__all__`` (and of ``infini_cupy.dask.__all__``, ``linalg``,
``fft``) gets an entry on one page of ``reference/generated/``; a name no family claims goes
to "Other names", so a newly exported name is never missing (``tests/test_docs.py`` checks
the built inventory against ``__all__``).
"""

from __future__ import annotations

import types
from pathlib import Path

import infini_cupy
import infini_cupy.dask
from infini_cupy.namespace import (
    data_movement,
    delegated,
    elementwise_functions,
    extension_dtypes,
    extensions,
)

CONSTANTS = ["e", "inf", "nan", "newaxis", "pi", "__array_api_version__"]
PACKAGE = ["fuse", "FusionWarning", "lazy", "backend", "get_backend", "show_config"]
ARRAY_MEMBERS = [  # the Array's non-operator members, in reading order
    "dtype", "shape", "ndim", "size", "device", "T", "mT", "to_device", "__array_namespace__",
    "__getitem__", "__setitem__", "__array__", "__dlpack__", "__dlpack_device__",
    "__cuda_array_interface__", "__bool__", "__int__", "__float__", "__complex__", "__index__",
    "__len__", "__iter__", "__format__", "__repr__", "__str__"]
OPERATORS = ["__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__",
             "__pow__", "__and__", "__or__", "__xor__", "__lshift__", "__rshift__",
             "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__",
             "__neg__", "__pos__", "__abs__", "__invert__", "__matmul__"]
REFLECTED = [f"__r{o[2:]}" for o in OPERATORS[:12]] + ["__rmatmul__"]
INPLACE = [f"__i{o[2:]}" for o in OPERATORS[:12]] + ["__imatmul__"]


def _families() -> list[tuple[str, str, str, list[str]]]:
    """(file stem, title, introduction, names) for each page, in the order of the index."""
    public = [n for n in infini_cupy.__all__]
    dtypes = [n for n in public if n in set(delegated.DTYPE_NAMES)
              | set(extension_dtypes.EXTENSION_DTYPE_NAMES)]
    families = [
        ("array", "The Array and devices",
         "The namespace's array object and its devices. Operators are the namespace's "
         "functions (our kernels for the elementwise ones); basic indexing gives views.",
         ["Array", "Device"]),
        ("elementwise", "Elementwise functions",
         "The standard's elementwise functions, on our kernels for Arrays on the emulator and "
         "on a GPU (NumPy computes for Arrays on ``cpu``). Each takes ``out=`` (an extension). "
         "See :doc:`/user/elementwise`.",
         [n for n in public if n in elementwise_functions.__all__]),
        ("data_movement", "Data movement and rearrange",
         "Copies run our strided-copy kernel; views stay views. See :doc:`/user/rearrange`.",
         [n for n in public if n in data_movement.__all__ or n in ("rearrange_", "PatternError")]),
        ("package", "Fusion, backends and configuration",
         "Beyond the standard: one kernel for a whole expression (``fuse``, ``lazy``), the "
         "backend switch, and the report for bug reports. See :doc:`/user/fusion`, "
         ":doc:`/user/lazy` and :doc:`/user/backends`.",
         [n for n in PACKAGE if n in public]),
        ("extensions", "Beyond the standard (NumPy's extras)",
         "NumPy's functions that generic code calls beyond the standard (xarray, SciPy, "
         "numpy_groupies, cubed), as NumPy's behave, on every device. See "
         ":doc:`/user/extensions`.",
         [n for n in public if n in extensions.__all__]),
        ("delegated", "Other functions of the standard (delegated)",
         "Creation, reductions, searching, sorting, sets, linear algebra and the rest of the "
         "standard come from array-api-compat and run in the array's own library: NumPy for "
         "Arrays on ``cpu`` and the emulator, CuPy on a GPU. Their meaning is the standard's: "
         "see `the array API standard <https://data-apis.org/array-api/2025.12/>`__.",
         [n for n in public if n in delegated.__all__ and n not in dtypes
          and n not in CONSTANTS and n not in ("linalg", "fft")
          and n not in data_movement.__all__]),
        ("linalg", "infini_cupy.linalg", "The standard's ``linalg`` extension (delegated).",
         [f"linalg.{n}" for n in infini_cupy.linalg.__all__ if n not in infini_cupy.__all__]),
        ("fft", "infini_cupy.fft", "The standard's ``fft`` extension (delegated).",
         [f"fft.{n}" for n in infini_cupy.fft.__all__]),
        ("dtypes", "Data types and constants",
         "The standard's 13 dtypes, the ``float16`` and ``bfloat16`` extensions (bfloat16 "
         "with ml_dtypes installed) and the standard's constants. See :doc:`/user/dtypes`.",
         dtypes + [n for n in CONSTANTS if n in public]),
    ]
    claimed = {n for *_, names in families for n in names} | {"linalg", "fft"}
    other = [n for n in public if n not in claimed]
    if other:
        families.append(("other", "Other names", "Public names not in a family above.", other))
    return families


def _entry(name: str, module: str = "infini_cupy") -> list[str]:
    obj = infini_cupy
    for part in (module.split(".")[1:] + name.split(".")):
        obj = getattr(obj, part, None)
    if name in ("Array",):
        # NumPy's methods (for generic code) after the standard's attributes and to_device
        numpy_methods = [m for m in vars(infini_cupy.Array)
                         if not m.startswith("_") and m not in ARRAY_MEMBERS]
        split = ARRAY_MEMBERS.index("to_device") + 1
        members = [m for m in ARRAY_MEMBERS[:split] + numpy_methods + ARRAY_MEMBERS[split:]
                   + OPERATORS + REFLECTED + INPLACE if hasattr(infini_cupy.Array, m)]
        lines = [f".. autoclass:: {name}()", ""]  # made by asarray, not its constructor
        for member in members:
            kind = ("autoproperty" if isinstance(getattr(infini_cupy.Array, member), property)
                    else "automethod")
            lines += [f"   .. {kind}:: {member}", ""]
        return lines
    if isinstance(obj, type) and issubclass(obj, BaseException):
        return [f".. autoexception:: {name}", ""]
    if isinstance(obj, type) and name == "Device":
        return [f".. autoclass:: {name}", ""]
    if callable(obj) and not hasattr(obj, "kind") and name not in ("newaxis",):
        return [f".. autofunction:: {name}", ""]
    if isinstance(obj, types.ModuleType):  # infini_cupy.lib: a namespace of NumPy's extras
        lines = [f".. py:data:: {name}", "", f"   {' '.join((obj.__doc__ or '').split())}", ""]
        for sub in getattr(obj, "__all__", []):
            for fn in getattr(getattr(obj, sub), "__all__", []):
                lines += [f".. autofunction:: infini_cupy.{name}.{sub}.{fn}", ""]
        return lines
    return [f".. py:data:: {name}", "", f"   {_data_doc(name, obj)}", ""]


def _data_doc(name: str, obj) -> str:
    if name in CONSTANTS:
        return {"e": "Euler's number, a Python float.", "inf": "Positive infinity, a Python float.",
                "nan": "Not a number, a Python float.", "pi": "Pi, a Python float.",
                "newaxis": "``None``: indexes a new axis of length one.",
                "__array_api_version__": f"The standard's version: ``{obj!r}``."}[name]
    return f"The ``{name}`` dtype (``numpy.dtype('{obj}')``); compare with ``==``."


def _page(stem: str, title: str, intro: str, names: list[str]) -> str:
    module = "infini_cupy"
    if stem in ("linalg", "fft"):  # infini_cupy.linalg.solve, documented as solve
        module = f"infini_cupy.{stem}"
        names = [n.split(".", 1)[1] for n in names]
    lines = [title, "=" * len(title), "", f".. currentmodule:: {module}", "", intro, "",
             ".. autosummary::"] + (["   :nosignatures:"] if stem == "array" else []) + [""]
    lines += [f"   {n}" for n in names if n not in ("__array_api_version__",)] + [""]
    for name in names:
        lines += _entry(name, module)
    return "\n".join(lines) + "\n"


def _dask_page() -> str:
    names = infini_cupy.dask.__all__
    title = "infini_cupy.dask"
    lines = [title, "=" * len(title), "", ".. module:: infini_cupy.dask", "",
             "Our kernels inside Dask graphs: one blockwise layer per call, a task per chunk. "
             "See :doc:`/user/dask`.", "", ".. autosummary::", ""]
    lines += [f"   {n}" for n in names] + [""]
    for name in names:
        lines += [f".. autofunction:: {name}", ""]
    return "\n".join(lines) + "\n"


def _exceptions_page() -> str:
    lines = ["Exceptions and warnings", "=======================", "",
             ".. currentmodule:: infini_cupy", "",
             "Bad input raises the standard's exception types (TypeError, ValueError, "
             "IndexError) with the shapes, dtypes and devices named. These are ours:", "",
             ".. autoexception:: FusionWarning", "   :no-index:", "",
             ".. autoexception:: infini_cupy.errors.KernelCompileError", "",
             ".. autoexception:: infini_cupy.errors.KernelFault", ""]
    return "\n".join(lines) + "\n"


def _cli_help() -> dict[str, str]:
    """``--help`` of ``python -m infini_cupy`` and of each command, as argparse prints it."""
    import argparse
    import os

    from infini_cupy.__main__ import COMMANDS

    os.environ["COLUMNS"] = "72"  # argparse wraps to the terminal: the same text everywhere,
    # narrow enough for the reading column at a 1300-px window
    helps = {}
    for name, module in COMMANDS.items():
        parser = argparse.ArgumentParser(prog=f"python -m infini_cupy {name}",
                                         description=module.HELP)
        module.add_arguments(parser)
        helps[name] = parser.format_help()
    return helps


def write_pages(app) -> None:
    out = Path(app.srcdir) / "reference" / "generated"
    out.mkdir(parents=True, exist_ok=True)
    pages = {stem: _page(stem, title, intro, names)
             for stem, title, intro, names in _families()}
    pages["dask"] = _dask_page()
    pages["exceptions"] = _exceptions_page()
    for stem, text in pages.items():
        path = out / f"{stem}.rst"
        if not path.exists() or path.read_text() != text:  # unchanged: no rebuild of it
            path.write_text(text)
    for name, text in _cli_help().items():
        path = out / f"cli-{name}.txt"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    for stale in set(out.glob("*.rst")) - {out / f"{s}.rst" for s in pages}:
        stale.unlink()


def setup(app):
    app.connect("builder-inited", write_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
