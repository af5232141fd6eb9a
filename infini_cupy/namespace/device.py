"""Devices of the namespace: ``Device`` values naming the CPU (NumPy), the emulator (our
kernels on the CPU) or a GPU (``cuda:N``), and their mapping to backends and to the array
libraries' own device objects.

An :class:`~infini_cupy.Array` remembers its device, and every call on it runs there: the
``numpy`` backend for ``cpu``, ``emulate`` for ``emulator``, ``cuda`` for ``cuda:N``. Device
arguments also take the libraries' values (``"cpu"``, a ``cupy.cuda.Device``) and the strings
``"emulator"``, ``"cuda"`` (the current GPU) and ``"cuda:N"``.

>>> from infini_cupy.namespace.device import Device, parse
>>> parse("emulator") == Device("emulator"), str(Device("cpu"))
(True, 'cpu')
>>> parse("cpu").backend
'numpy'
"""

from __future__ import annotations

import sys

from .. import config
from ..arrays import gpu_available, is_cupy_array, require_cupy

_BACKEND_OF_KIND = {"cpu": "numpy", "emulator": "emulate", "cuda": "cuda"}
_KIND_OF_BACKEND = {b: k for k, b in _BACKEND_OF_KIND.items()}


class Device:
    """Where an array lives and its calls run.

    ``Device("cpu")`` (NumPy computes), ``Device("emulator")`` (our kernels, compiled for
    the host) or ``Device("cuda", N)`` (GPU ``N``). Equal to its name as a string
    (``"cpu"``, ``"cuda:0"``).

    Parameters
    ----------
    kind : {"cpu", "emulator", "cuda"}
        The kind of device.
    index : int, optional
        The GPU's index, for ``"cuda"`` alone.

    Raises
    ------
    ValueError
        An unknown kind, an index with ``"cpu"`` or ``"emulator"``, or ``"cuda"`` without one.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.asarray([1, 2], device="emulator")
    >>> x.device
    Device('emulator')
    >>> x.device == "emulator", x.device == xp.Device("cpu")
    (True, False)
    >>> xp.Device("cpu").backend
    'numpy'
    """

    __slots__ = ("kind", "index", "_name")
    __module__ = "infini_cupy"

    def __init__(self, kind: str, index: int | None = None):
        if kind not in _BACKEND_OF_KIND:
            raise ValueError(f"unknown device kind {kind!r}; expected cpu, emulator or cuda")
        if (kind == "cuda") != (index is not None):
            raise ValueError(f"a {kind} device takes {'an' if kind == 'cuda' else 'no'} index")
        self.kind, self.index = kind, index
        self._name = kind if index is None else f"{kind}:{index}"

    @property
    def backend(self) -> str:
        """The backend that runs calls on this device."""
        return _BACKEND_OF_KIND[self.kind]

    def native(self):
        """The array library's device: ``"cpu"`` for NumPy, a ``cupy.cuda.Device`` for CuPy."""
        return "cpu" if self.index is None else require_cupy().cuda.Device(self.index)

    def __eq__(self, other):
        if isinstance(other, Device):
            return self._name == other._name
        if isinstance(other, str):
            return self._name == other
        cp = sys.modules.get("cupy")
        if cp is not None and isinstance(other, cp.cuda.Device):
            return self.index == other.id
        return NotImplemented

    def __hash__(self):
        return hash(self._name)  # equal to its name: hash as the name does

    def __repr__(self):
        return f"Device({self._name!r})"

    def __str__(self):
        return self._name


CPU, EMULATOR = Device("cpu"), Device("emulator")
_CUDA: dict[int, Device] = {}


def cuda(index: int) -> Device:
    device = _CUDA.get(index)
    if device is None:
        device = _CUDA[index] = Device("cuda", index)
    return device


def of_backend(backend: str, native=None) -> Device:
    """The device of an array of ``backend``; ``native``: its CuPy array or device (cuda)."""
    if backend == "numpy":
        return CPU
    if backend == "emulate":
        return EMULATOR
    if native is None:
        return cuda(require_cupy().cuda.Device().id)
    return cuda(native.device.id if is_cupy_array(native) else native.id)


def default() -> Device:
    """The device of the backend in force (``cuda``: CuPy's current GPU)."""
    return of_backend(config.get_backend())


def parse(device) -> Device:
    """A :class:`Device` for any accepted device value (None: :func:`default`); ValueError
    naming the value otherwise."""
    if device is None:
        return default()
    if isinstance(device, Device):
        return device
    if isinstance(device, str):
        if device in ("cpu", "emulator"):
            return CPU if device == "cpu" else EMULATOR
        if device == "cuda" or (device.startswith("cuda:") and device[5:].isdigit()):
            if not gpu_available():
                from ..runtime.availability import cuda_unavailable

                raise ValueError(f"device {device!r}: the cuda backend cannot run here: "
                                 f"{cuda_unavailable() or 'CuPy found no CUDA device'}")
            return of_backend("cuda") if device == "cuda" else cuda(int(device[5:]))
    cp = sys.modules.get("cupy")  # a CuPy device can only exist once CuPy is imported
    if cp is not None and isinstance(device, cp.cuda.Device):
        return cuda(device.id)
    raise ValueError(
        f"unknown device {device!r}: expected None, 'cpu', 'emulator', 'cuda:N', an "
        "infini_cupy Device or a cupy.cuda.Device"
    )


def devices() -> list:
    """Every device: the CPU, the emulator, then each GPU CuPy sees."""
    found = [CPU, EMULATOR]
    if gpu_available():
        found += [cuda(i) for i in range(require_cupy().cuda.runtime.getDeviceCount())]
    return found
