"""``__array_namespace_info__()``: what the namespace supports, on which devices.

The default device follows the backend (``numpy``: the CPU, ``emulate``: the emulator,
``cuda``: CuPy's current GPU). Devices are :class:`~.device.Device` values, equal to their
names (``"cpu"``, ``"emulator"``, ``"cuda:0"``); device arguments also take the libraries'
own values (``"cpu"``, a ``cupy.cuda.Device``). NumPy and CuPy share dtypes and defaults, so
one table serves every device.

>>> from infini_cupy.namespace.info import __array_namespace_info__
>>> info = __array_namespace_info__()
>>> info.capabilities()["max dimensions"]
64
>>> sorted(info.dtypes(kind="unsigned integer"))
['uint16', 'uint32', 'uint64', 'uint8']
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from . import device as devices

# The standard's dtype kinds, from the dtype table's categories.
_KIND = {"bool": "bool", "signed": "signed integer", "unsigned": "unsigned integer",
         "real floating": "real floating", "complex floating": "complex floating"}
_DTYPES = {kind: tuple(d.name for d in dtypes.STANDARD_DTYPES if _KIND[dtypes.category(d)] == kind)
           for kind in _KIND.values()}
_DTYPES["integral"] = _DTYPES["signed integer"] + _DTYPES["unsigned integer"]
_DTYPES["numeric"] = _DTYPES["integral"] + _DTYPES["real floating"] + _DTYPES["complex floating"]
# Extensions (float16; bfloat16 with ml_dtypes): listed only when asked for by this kind or by
# name, never in the standard's kinds, so code written for the standard sees its dtypes only.
_EXTENDED = {d.name: d for d in dtypes.EXTENSION_DTYPES}
_DTYPES["extended"] = tuple(_EXTENDED)
for _name in _EXTENDED:
    _DTYPES[_name] = (_name,)
del _name


def _check_device(device) -> None:
    devices.parse(device)  # ValueError naming an unknown device


class Info:
    """The object returned by ``__array_namespace_info__()`` (array API inspection API)."""

    __module__ = "infini_cupy"

    def capabilities(self) -> dict:
        """Boolean indexing and data-dependent shapes are supported; up to 64 dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        """The device of the backend in force: cpu, emulator or CuPy's current GPU."""
        return devices.default()

    def default_dtypes(self, *, device=None) -> dict:
        """float64, complex128 and int64 (integral and indexing), on every device."""
        _check_device(device)
        return {
            "real floating": np.dtype("float64"),
            "complex floating": np.dtype("complex128"),
            "integral": np.dtype("int64"),
            "indexing": np.dtype("int64"),
        }

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The standard's dtypes by name, of ``kind`` (a kind name or a tuple of them) if given.

        Extensions: ``kind="extended"`` gives float16 and bfloat16 (bfloat16 only with
        ml_dtypes installed), ``kind="float16"`` or ``"bfloat16"`` that one dtype.
        """
        _check_device(device)
        if kind is None:
            names = _DTYPES["bool"] + _DTYPES["numeric"]
        else:
            kinds = (kind,) if isinstance(kind, str) else kind
            if type(kinds) is not tuple or not all(isinstance(k, str) for k in kinds):
                raise TypeError(f"kind must be a dtype kind's name or a tuple of them, got "
                                f"{kind!r}")
            unknown = [k for k in kinds if k not in _DTYPES]
            if unknown:
                raise ValueError(f"unknown dtype kind {unknown[0]!r}; expected one of {', '.join(_DTYPES)}")
            names = [n for n in _DTYPES["bool"] + _DTYPES["numeric"] + _DTYPES["extended"]
                     if any(n in _DTYPES[k] for k in kinds)]
        return {name: _EXTENDED[name] if name in _EXTENDED else np.dtype(name) for name in names}

    def devices(self) -> tuple:
        """The CPU, the emulator, then every CUDA device CuPy sees (none without a GPU); a
        tuple (2025.12; a list before, see :mod:`.versions`)."""
        return tuple(devices.devices())


def __array_namespace_info__() -> Info:
    """The namespace's inspection object (array API 2023.12+).

    Its methods name the capabilities, the default device and dtypes, the dtypes of each
    kind and the devices of the namespace.

    Parameters
    ----------
    None

    Returns
    -------
    Info
        The inspection object.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> info = xp.__array_namespace_info__()
    >>> info.default_dtypes(device="cpu")["real floating"]
    dtype('float64')
    >>> info.capabilities()["boolean indexing"]
    True
    >>> info.dtypes(kind="signed integer")["int8"]
    dtype('int8')
    """
    return Info()
