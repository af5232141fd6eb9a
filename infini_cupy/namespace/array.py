"""``infini_cupy.Array``: the namespace's array object, a lean wrapper over a ``numpy.ndarray``
(devices ``cpu`` and ``emulator``) or a ``cupy.ndarray`` (``cuda:N``) that remembers its
device; attributes, conversions, DLPack, ``to_device`` and indexing. Operators are installed
by :mod:`.operators`; namespace functions wrap and unwrap in :mod:`.boundary`.

An Array holds two slots, the native array and the backend its calls run on (``numpy``,
``emulate`` or ``cuda``); a call enters that backend for its duration (a context variable,
no global state). Basic indexing gives views; ``x[key] = v`` on a basic index is one strided
copy into the view (``rearrange_``, our kernel) from ``v`` cast and broadcast; boolean and
integer-array indices are the array library's.

``__array__`` policy: an Array on the CPU or the emulator converts to NumPy without a copy
(``numpy.asarray(x)``); an Array on a GPU raises TypeError, as CuPy does, rather than copy
device to host silently: call ``x.to_device("cpu")`` first. NumPy's ufuncs and array functions
called on Arrays dispatch to the namespace (:mod:`.numpy_protocols`).

>>> import infini_cupy as xp
>>> x = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="cpu")
>>> x.T[0], x.device
(Array([1., 3.], device='cpu'), Device('cpu'))
"""

from __future__ import annotations

import math
import sys

import numpy as np

from .. import dtypes
from ..arrays import backend_for, data_pointer, device_context, is_array, may_overlap
from ..config import enter_backend, exit_backend
from ..elementwise.short_path import layout_id
from ..elementwise.numpy_casts import is_float_to_int
from ..strided.copy import apart_from, rearrange_
from ..strided.layout import overlaps_itself
from . import device as devices
from . import dlpack_bfloat16 as _dlpack_bfloat16
from . import index_bounds as _index_bounds
from . import pending as _pending
from . import versions
from .data_movement import astype, stacked_on_gpu
from .delegated import to_device as _native_to_device

# what indexes a view (bool is an int but a boolean index: not here)
_BASIC_INDEX_TYPES = frozenset({int, slice, type(None), type(Ellipsis)})


class Array:
    """An array of the namespace, on one device (``cpu``, ``emulator`` or ``cuda:N``).

    Created by :func:`infini_cupy.asarray`, the creation functions and every namespace
    function given an Array, never by its constructor. Every call on an Array runs on its
    device: our kernels on the emulator and GPUs, NumPy on ``cpu``. Operators are the
    namespace's functions; basic indexing gives views, and assignment through one is one
    launch of our strided copy.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.asarray([[1.0, 2.0], [3.0, 4.0]], device="emulator")
    >>> x.device, x.shape, x.dtype
    (Device('emulator'), (2, 2), dtype('float64'))
    >>> x.T + 1
    Array([[2., 4.],
           [3., 5.]], device='emulator')
    """

    # _a: the native array (unset while deferred: pending.py's __getattr__ computes it on
    # first read); _b: the backend; _p: the pending expression of a deferred Array
    # (infini_cupy.lazy), else None; _k: the native's layout id (short_path.layout_id) once
    # the hot path has read it (see settle), else None; _d: then the native's data pointer
    __slots__ = ("_a", "_b", "_p", "_k", "_d", "__weakref__")  # weakref: lazy's owners
    __module__ = "infini_cupy"
    # Read by code that picks a library among arrays (Dask's tensordot, without a default):
    # above NumPy's 0, so that an Array and a NumPy array give an Array; below a Dask
    # array's 11, so that Dask's operators keep an Array as an operand of their chunks' calls.
    __array_priority__ = 10.0

    def __init__(self, *args, **kwargs):
        raise TypeError("infini_cupy.Array is created by infini_cupy.asarray and the "
                        "creation functions, not by its constructor")

    def __getstate__(self):
        """The slots that are set, as ``object.__getstate__`` gives them (a deferred Array's
        value computed by the read of ``_a``), for pickle's protocols 0 and 1 too, which
        refuse a class with ``__slots__`` and no ``__getstate__``."""
        return None, {name: getattr(self, name) for name in ("_a", "_b", "_p", "_k", "_d")
                      if hasattr(self, name)}

    def __setstate__(self, state):
        """Unpickled or copied: the slots as they were, but for the layout id and pointer
        (``settle``'s), which name the original's native array: a copy's is another."""
        for name, value in state[1].items():
            setattr(self, name, value)
        self._k = None

    # ---- attributes
    @property
    def dtype(self):
        """The data type (a ``numpy.dtype``).

        Examples
        --------
        >>> import infini_cupy as xp
        >>> xp.asarray([1, 2], dtype=xp.int8, device="cpu").dtype
        dtype('int8')
        """
        pending = self._p
        return self._a.dtype if pending is None else pending.dtype

    @property
    def shape(self) -> tuple:
        """The shape, a tuple of ints.

        Examples
        --------
        >>> import infini_cupy as xp
        >>> xp.zeros((2, 3), device="cpu").shape
        (2, 3)
        """
        pending = self._p
        return self._a.shape if pending is None else pending.shape

    @property
    def ndim(self) -> int:
        """The number of dimensions.

        Examples
        --------
        >>> import infini_cupy as xp
        >>> xp.zeros((2, 3), device="cpu").ndim
        2
        """
        pending = self._p
        return self._a.ndim if pending is None else len(pending.shape)

    @property
    def size(self) -> int:
        """The number of elements.

        Examples
        --------
        >>> import infini_cupy as xp
        >>> xp.zeros((2, 3), device="cpu").size
        6
        """
        pending = self._p
        return self._a.size if pending is None else math.prod(pending.shape)

    @property
    def device(self) -> devices.Device:
        """The :class:`~infini_cupy.Device` the Array lives on.

        Equal to its name as a string (``x.device == "emulator"``).

        Examples
        --------
        >>> import infini_cupy as xp
        >>> x = xp.asarray([1.0, 2.0], device="cpu")
        >>> x.device
        Device('cpu')
        >>> x.device == "cpu"
        True
        """
        b = self._b
        if b == "numpy":
            return devices.CPU
        if b == "emulate":
            return devices.EMULATOR
        pending = self._p
        return devices.cuda(self._a.device.id if pending is None else pending.device)

    @property
    def T(self) -> Array:
        """The transpose of a 2-d Array, a view.

        Raises
        ------
        ValueError
            An Array of other than 2 dims (``permute_dims`` permutes any axes).

        Examples
        --------
        >>> import infini_cupy as xp
        >>> x = xp.asarray([[1, 2, 3], [4, 5, 6]], device="cpu")
        >>> x.T
        Array([[1, 4],
               [2, 5],
               [3, 6]], device='cpu')
        """
        if self._a.ndim != 2:
            raise ValueError(f"x.T needs a 2-d array, got {self._a.ndim} dims (use permute_dims)")
        return wrap(self._a.T, self._b)

    @property
    def mT(self) -> Array:
        """The last two axes swapped, a view: a stack of transposed matrices.

        Raises
        ------
        ValueError
            An Array of fewer than 2 dims.

        Examples
        --------
        >>> import infini_cupy as xp
        >>> x = xp.zeros((4, 2, 3), device="cpu")
        >>> x.mT.shape
        (4, 3, 2)
        """
        if self._a.ndim < 2:
            raise ValueError(f"x.mT needs at least 2 dims, got {self._a.ndim}")
        return wrap(self._a.swapaxes(-1, -2), self._b)

    def __array_namespace__(self, /, *, api_version: str | None = None):
        """``infini_cupy`` (standard 2025.12); ``api_version="2024.12"`` (or 2023.12, 2022.12,
        2021.12) gives a namespace of the same functions with that version's list returns."""
        return versions.namespace(api_version)

    def to_device(self, device, /, *, stream=None) -> Array:
        """This array on ``device``.

        Parameters
        ----------
        device : Device, str or cupy.cuda.Device
            ``"cpu"``, ``"emulator"``, ``"cuda"`` (CuPy's current GPU), ``"cuda:N"``.
        stream : cupy.cuda.Stream, optional
            The CuPy stream of a copy to or from a GPU: one of the GPU the copy runs on (the
            target's; for a copy to ``cpu``, the Array's own GPU's).

        Returns
        -------
        Array
            Itself when already there; between ``cpu`` and ``emulator`` a new Array sharing
            the memory (no copy); to or from a GPU a copy.

        Raises
        ------
        ValueError
            An unknown device, or a stream of another GPU than the copy's.
        TypeError
            A ``stream`` that is no CuPy stream.

        Examples
        --------
        >>> import infini_cupy as xp
        >>> x = xp.asarray([1, 2], device="emulator")
        >>> x.to_device("cpu")
        Array([1, 2], device='cpu')
        """
        target = devices.parse(device)
        if target == self.device:
            return self
        if target.index is None and self._b != "cuda":
            return wrap(self._a, target.backend)  # the CPU's memory either way
        return wrap(_native_to_device(self._a, target.native(), stream=stream), target.backend)

    # ---- conversions
    def __bool__(self) -> bool:
        """``bool(self)`` of a 0-d Array (or one of one element, as NumPy's): its value on
        the host, after the device finishes. Several elements or none: ValueError on every
        device (CuPy answers False for none, with a DeprecationWarning)."""
        if self._a.size == 0:
            raise ValueError("The truth value of an empty array is ambiguous: use x.size > 0 "
                             "to check that an Array is not empty")
        with device_context((self._a,)):  # read on the stream of its GPU (see get)
            return bool(self._a)

    def __int__(self) -> int:
        """``int(self)`` of a one-element Array: its value on the host (a float truncated)."""
        with device_context((self._a,)):
            return int(self._a)

    def __float__(self) -> float:
        """``float(self)`` of a one-element Array: its value on the host.

        Examples
        --------
        >>> import infini_cupy as xp
        >>> float(xp.sum(xp.asarray([1.5, 2.0], device="emulator")))
        3.5
        """
        with device_context((self._a,)):
            return float(self._a)

    def __complex__(self) -> complex:
        """``complex(self)`` of a one-element Array: its value on the host."""
        with device_context((self._a,)):
            return complex(self._a)

    def __index__(self) -> int:
        """``operator.index(self)`` of a 0-d integer Array (``range(n)``, ``lst[i]``);
        TypeError for any other Array."""
        # checked here: CuPy's 0-d arrays have no __index__
        if self._a.ndim != 0 or self._a.dtype.kind not in "iu":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        with device_context((self._a,)):
            return int(self._a)

    def __array__(self, dtype=None, copy=None):
        """``numpy.asarray(self)``: the data as a NumPy array (no copy on ``cpu`` and the
        emulator unless ``dtype`` or ``copy=True`` asks for one); TypeError for an Array on
        a GPU (no silent device-to-host copy: ``to_device("cpu")``)."""
        if _pending.expressions:  # the buffer leaves our control: nothing may read it late
            _pending.evaluate_all("__array__")
        if self._b == "cuda":
            raise TypeError(f"an Array on {self.device} does not convert to NumPy implicitly "
                            "(a silent device-to-host copy); use x.to_device('cpu')")
        result = np.array(self._a, dtype=dtype, copy=copy)
        # a view, not the native itself: setting its shape or dtype must not change the
        # Array, whose layout the hot path reads once (settle)
        return result.view() if result is self._a else result

    def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The DLPack capsule of the data (the standard's ``__dlpack__``): the native array's,
        NumPy's or CuPy's, with their checks of ``stream``, ``dl_device`` and ``copy``;
        bfloat16 on ``cpu`` and the emulator, which NumPy does not export, as CuPy exports it
        (dtype code ``kDLBfloat``), with NumPy's checks."""
        if _pending.expressions:
            _pending.evaluate_all("__dlpack__")
        kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                    ("dl_device", dl_device), ("copy", copy)) if v is not None}
        if self._b != "cuda" and dtypes.is_bfloat16(self._a.dtype):
            return _dlpack_bfloat16.to_dlpack(self._a, **kwargs)
        with device_context((self._a,)):  # CuPy orders the consumer after the current stream
            return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        """``(device type, device id)`` in DLPack's numbering: ``(1, 0)`` on ``cpu`` and the
        emulator, ``(2, N)`` on GPU N."""
        return self._a.__dlpack_device__()

    @property
    def __cuda_array_interface__(self) -> dict:
        """CuPy's ``__cuda_array_interface__`` (version 3) of an Array on a GPU, for Numba,
        PyTorch and other CUDA libraries; AttributeError on ``cpu`` and the emulator."""
        if self._b != "cuda":
            raise AttributeError(f"an Array on {self.device} has no __cuda_array_interface__")
        if _pending.expressions:
            _pending.evaluate_all("__cuda_array_interface__")
        # CuPy names the current GPU's current stream: under this Array's GPU, the stream
        # our kernels wrote it on, which the consumer waits for
        with self._a.device:
            return self._a.__cuda_array_interface__

    def __repr__(self) -> str:
        """``Array([...], dtype=..., device='...')``: NumPy's repr of the values, the device."""
        body = repr(self._a)
        body = body[body.index("(") + 1:-1] if body.endswith(")") else body
        return f"Array({body}, device={str(self.device)!r})"

    def __str__(self) -> str:
        """The values as NumPy prints them (``print(x)``)."""
        return str(self._a)

    def __format__(self, spec: str) -> str:
        """A 0-d Array formats as its value (``f"{x:.3f}"``); others as ``str`` with no spec."""
        if self._a.ndim == 0:
            with device_context((self._a,)):
                value = self._a.item()  # one element to the host, as float(x) does
            if not isinstance(value, (bool, int, float, complex)):
                value = float(value)  # bfloat16: ml_dtypes' scalar
            return format(value, spec)
        if spec:
            raise TypeError(f"format spec {spec!r} given for an Array of shape {self.shape}; "
                            "only 0-d Arrays take one")
        return str(self)

    def __len__(self) -> int:
        """The length of the first dim; TypeError for a 0-d Array."""
        if self._a.ndim == 0:
            raise TypeError("len() of a 0-d Array")
        return self._a.shape[0]

    def __iter__(self):
        """The views ``self[0]``, ``self[1]``, ... along the first dim; TypeError for a 0-d
        Array."""
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d Array")
        return (self[i] for i in range(self._a.shape[0]))

    # ---- indexing
    def __getitem__(self, key) -> Array:
        """``self[key]``: integers, slices, ``...`` and ``None`` give a view (no copy).

        Boolean masks and integer arrays are the array library's (NumPy, or CuPy on a GPU).

        Parameters
        ----------
        key : int, slice, Ellipsis, None, tuple of them, or an Array/array of bools or ints

        Returns
        -------
        Array
            A view for a basic key (a 0-d Array for one element, never a scalar); a new Array
            for a mask or an integer array.

        Raises
        ------
        IndexError
            An index out of range, too many indices.

        Examples
        --------
        >>> import infini_cupy as xp
        >>> x = xp.asarray([[1, 2, 3], [4, 5, 6]], device="emulator")
        >>> x[:, ::-1]
        Array([[3, 2, 1],
               [6, 5, 4]], device='emulator')
        >>> x[1, 2]
        Array(6, device='emulator')
        """
        if self._b == "cuda":  # a mask or index array: CuPy's kernel, on this array's GPU
            native_key = _native_key(key, self._b)
            if not all(type(k) in _BASIC_INDEX_TYPES for k in native_key):
                # CuPy wraps an index out of range: host-held ones refused first, as NumPy
                # does (no wait for the GPU); GPU-held ones are CuPy's (docs/user/array.md)
                _index_bounds.check(native_key, self._a.shape, on_device=False)
            with self._a.device:
                return wrap(self._a[native_key], self._b)
        return wrap(self._a[_native_key(key, self._b)], self._b)

    def __setitem__(self, key, value) -> None:
        """``self[key] = value``: for a basic key, one launch of our strided copy into the view.

        ``value`` (an Array, a native array or a Python scalar) is cast by our cast kernel
        when its dtype differs, broadcast to the view, then copied by ``rearrange_``. Masks and
        integer arrays are the array library's.

        Parameters
        ----------
        key : int, slice, Ellipsis, None, tuple of them, or a mask / integer array
        value : Array, array or Python scalar
            Broadcastable to ``self[key]``; its dtype must promote to ``self``'s (the standard
            since 2025.12); across kinds (int into float) it is cast as NumPy casts.

        Raises
        ------
        TypeError
            A ``value`` whose dtype would promote to another one (float64 into float32), a
            complex Python scalar into a real array, or a ``value`` that is none of an
            array, a Python scalar and a list (None, a str).
        ValueError
            A ``value`` that does not broadcast, or on another device.

        Examples
        --------
        >>> import infini_cupy as xp
        >>> x = xp.zeros((2, 3), device="emulator")
        >>> x[:, 1] = xp.asarray([7.0, 8.0], device="emulator")
        >>> x
        Array([[0., 7., 0.],
               [0., 8., 0.]], device='emulator')
        """
        if _pending.expressions:  # a write: pending expressions read the memory as it was
            _pending.evaluate_all("x[key] = value")
        kind = type(key)
        if self._b == "numpy" and type(value) in _REAL_SCALARS and (
                kind is slice or kind is int
                or (kind is tuple and all(type(k) is int or type(k) is slice for k in key))):
            # the cpu device's commonest write, a real Python scalar through slices and
            # ints: the steps below for that key and value, without their generality
            native = self._a
            if native.flags.c_contiguous or native.flags.f_contiguous:
                view = native[(*key, ...)] if kind is tuple else native[key, ...]
                source = _scalar_source(np, value, view.dtype)
                if source.dtype == view.dtype:  # (always: _source's check, kept)
                    view[...] = source  # NumPy broadcasts the 0-d source
                    return
        if self._b == "cuda" and overlaps_itself(self._a):
            # NumPy marks a broadcast_to view read-only, CuPy does not: its threads would
            # race to the shared elements
            raise ValueError(f"x[key] = value: x (shape {self.shape}, strides "
                             f"{self._a.strides}) overlaps itself (its elements share memory, "
                             "as a broadcast_to view's do): read-only; write into a copy")
        key = _native_key(key, self._b)
        token = enter_backend(self._b)
        try:
            if not all(type(k) in _BASIC_INDEX_TYPES or isinstance(k, np.integer) for k in key):
                if type(value) is Array:
                    check_same_device(self._b, value._b)
                    value = value._a
                given = value  # (what the steps below convert is a new array)
                value = _checked_scalar(value, self._a.dtype)
                if hasattr(value, "dtype") and not isinstance(value, np.generic):
                    _check_native_device(value, self._a)
                    value = _held_value(value, self._a.dtype)
                    _check_promotes(value.dtype, self._a.dtype)
                if hasattr(value, "dtype") and is_float_to_int(value.dtype, self._a.dtype):
                    # our cast first: the kernels' answers for NaN and out-of-range values
                    value = astype(_library(self._a).asarray(value), self._a.dtype)
                elif not hasattr(value, "dtype"):  # converted whole before any write (NumPy
                    # writes a list's values up to the one that fails)
                    value = _scalar_source(_library(self._a), value, self._a.dtype)
                _check_value_ndim(getattr(value, "shape", ()), key, self._a.ndim)
                value, key = _apart_from_target(self._a, value if value is given else None,
                                                value, key)
                if self._b == "cuda":  # CuPy's kernel, on this array's GPU
                    with self._a.device:
                        # CuPy's scatter wraps an index out of range: refused before any
                        # write, GPU-held indices with two reductions and one wait
                        _index_bounds.check(key, self._a.shape, on_device=True)
                        self._a[key] = value
                    return
                self._a[key] = value  # the library's
                return
            view = self._a[key]
            native = self._a
            if self._b == "numpy" and (native.flags.c_contiguous or native.flags.f_contiguous):
                # NumPy's copy (it broadcasts a 0-d value): a view of a contiguous array never
                # overlaps itself, the one layout rule rearrange_ would plan to check
                source = _source(value, view, self._b, zero_d_broadcast=False)
                view[...] = apart_from(view, source)  # a snapshot where NumPy's copy errs
            else:
                rearrange_(view, _source(value, view, self._b))
        finally:
            exit_backend(token)


_new = object.__new__


def wrap(native, backend: str) -> Array:
    """An Array over ``native`` (a NumPy or CuPy array) whose calls run on ``backend``."""
    a = _new(Array)
    a._a = native
    a._b = backend
    a._p = None
    a._k = None
    return a


def learn_out_id(plan, native, backend: str) -> int:
    """``plan.out_id``: the layout id of ``native``, the plan's first output on the hot path."""
    plan.out_id = layout_id(native, backend)
    return plan.out_id


def settle(x: Array) -> int:
    """``x``'s layout id (:func:`~infini_cupy.elementwise.short_path.layout_id`), read once
    and kept with its data pointer in ``x._k`` and ``x._d``: neither changes over an
    Array's life (its native array is never replaced, views are new Arrays)."""
    native = x._a
    x._d = data_pointer(native)
    x._k = layout_id(native, x._b)
    return x._k


def check_same_device(b1: str, b2: str) -> None:
    if b1 != b2:
        names = {"numpy": "cpu", "emulate": "emulator", "cuda": "cuda"}
        raise ValueError(f"arrays are on different devices: {names[b1]} and {names[b2]}; "
                         "move them to one device first (to_device)")


def _native_key(key, backend: str) -> tuple:
    """``key`` as a tuple for the native array: Arrays unwrapped, and a trailing Ellipsis so
    that an index selecting one element gives a 0-d view, never a NumPy scalar. Not where an
    index array of 1 or more dims is among them: the result is an array then, and NumPy
    takes a mask with an Ellipsis beside it 2.5 times as long (its general indexing)."""
    items = key if type(key) is tuple else (key,)
    out = []
    ellipsis = False
    for k in items:
        if type(k) is Array:
            check_same_device(backend, k._b)
            k = k._a
        elif type(k) is list and _holds_arrays(k):
            k = _index_of_list(k, backend)
        if k is Ellipsis or getattr(k, "ndim", 0):
            ellipsis = True
        out.append(k)
    if not ellipsis:
        out.append(Ellipsis)
    return tuple(out)


def _holds_arrays(items: list) -> bool:
    """Whether the (nested) list ``items`` holds an Array."""
    return any(type(v) is Array or (type(v) is list and _holds_arrays(v)) for v in items)


def _index_of_list(items: list, backend: str):
    """A list index holding Arrays (``x[[xp.asarray(0), xp.asarray(1)]]``) as the index
    array NumPy makes of it, on every device: the Arrays unwrapped (ValueError naming both
    devices for another device's); on a GPU the index array is built there, its Python ints
    0-d arrays of it (CuPy converts a list through NumPy, which a GPU array refuses: a
    TypeError), so it is an index held on the GPU."""

    def unwrapped(v):
        if type(v) is Array:
            check_same_device(backend, v._b)
            return v._a
        return [unwrapped(w) for w in v] if type(v) is list else v

    natives = unwrapped(items)
    return natives if backend != "cuda" else stacked_on_gpu(natives)  # NumPy converts it


def _library(native):
    return np if isinstance(native, np.ndarray) else sys.modules["cupy"]


def _source(value, view, backend: str, zero_d_broadcast: bool = True):
    """``value`` as a native array of ``view``'s dtype and shape (a broadcast view): the
    source of ``x[key] = value``; another dtype goes through our cast kernel first. With
    ``zero_d_broadcast`` False, a 0-d value is left 0-d (for a copy that broadcasts it)."""
    library = _library(view)
    if type(value) is Array:
        check_same_device(backend, value._b)
        value = value._a
    elif hasattr(value, "dtype") and not isinstance(value, np.generic):
        _check_native_device(value, view)
        value = _held_value(value, view.dtype)
    elif isinstance(value, np.generic) and is_float_to_int(value.dtype, view.dtype) \
            and value.dtype.kind != "c":
        value = library.asarray(value)  # cast below as arrays are (NaN, out of range)
    elif not hasattr(value, "dtype") or isinstance(value, np.generic):
        value = _scalar_source(library, _checked_scalar(value, view.dtype), view.dtype)
    if value.dtype != view.dtype:
        _check_promotes(value.dtype, view.dtype)
        value = astype(value, view.dtype)
    if value.shape != view.shape and (zero_d_broadcast or value.ndim):
        try:
            value = _broadcast(library, value, view.shape)
        except ValueError:  # NumPy's message names no shape for a value of more dims
            raise ValueError(f"x[key] = value: value of shape {tuple(value.shape)} does not "
                             f"broadcast to x[key]'s shape {tuple(view.shape)}") from None
    return value


def _check_native_device(value, native) -> None:
    """ValueError naming both devices for a native array ``value`` of ``x[key] = value`` on
    another device than ``x``'s ``native`` (a NumPy array into a GPU Array), whatever the key
    and the value's shape: CuPy would upload a NumPy value given with an index array."""
    if type(value) is not type(native):  # (a NumPy subclass: the same device)
        backend_for(native, value)


def _apart_from_target(target, given, value, key):
    """``value`` and the index arrays of ``key``, each a snapshot where it may share memory
    with ``target``: NumPy's mask assignment and CuPy's scatter kernels read them while they
    write ``target`` (``x[mask] = x[::-1][:3]`` would read values already written). ``given``
    is ``value`` where it is the caller's own, else None (a new array shares nothing).
    On ``target``'s GPU, where CuPy's ``copy`` would otherwise allocate on the current one."""
    if type(target) is np.ndarray:  # (NumPy's bounds check, in C)
        if isinstance(given, np.ndarray) and np.may_share_memory(value, target):
            value = value.copy()
        for i, k in enumerate(key):
            if isinstance(k, np.ndarray) and np.may_share_memory(k, target):
                key = (*key[:i], k.copy(), *key[i + 1:])
        return value, key
    with target.device:
        if is_array(given) and may_overlap(value, target):
            value = value.copy()
        return value, tuple([k.copy() if is_array(k) and may_overlap(k, target) else k
                             for k in key])


def _check_value_ndim(value_shape: tuple, key: tuple, ndim: int) -> None:
    """ValueError for a value of more dims than ``x[key]`` with a mask or an index array
    in ``key``: the standard broadcasts the value to ``x[key]`` (no leading 1-dims dropped,
    as with a basic key), where NumPy and CuPy drop them. Counted from the key alone:
    ``x[key]``'s shape needs the mask's values."""
    kept = 0  # dims of x[key] from slices, None and the Ellipsis
    consumed = 0  # dims of x taken by the key's items
    indexed = 0  # dims of the broadcast index arrays (a mask gives one)
    for k in key:
        if k is None:
            kept += 1
        elif type(k) is slice:
            kept += 1
            consumed += 1
        elif k is not Ellipsis:
            k_ndim = getattr(k, "ndim", None)  # (np.ndim of a CuPy array: a CuPy routine)
            k_dtype = getattr(k, "dtype", None)
            if k_ndim is None or k_dtype is None:  # a list or a Python scalar
                k_ndim, k_dtype = np.ndim(k), np.asarray(k).dtype
            if k_dtype == np.bool_:
                consumed += k_ndim
                indexed = max(indexed, 1)
            else:
                consumed += 1
                indexed = max(indexed, k_ndim)
    result_ndim = kept + indexed + max(ndim - consumed, 0)
    if len(value_shape) > result_ndim:
        raise ValueError(f"x[key] = value: value of shape {tuple(value_shape)} does not "
                         f"broadcast to x[key], {result_ndim}-d (the standard drops no "
                         "leading dims)")


def _checked_scalar(value, dtype):
    """``value`` of ``x[key] = value`` checked: TypeError for one that is none of an array, a
    scalar or a (nested) list or tuple (NumPy writes None as NaN and parses a str, CuPy
    refuses both), or a complex scalar, Python's or NumPy's, into a real ``dtype`` (the
    standard's kinds; NumPy's error speaks of float(), its warning of a discarded part). A
    NumPy integer or bool comes back as the Python scalar it is taken as, NumPy's way: its
    value, OverflowError out of ``dtype``'s range (``astype`` would wrap it)."""
    if not (hasattr(value, "dtype") or type(value) in _VALUE_TYPES
            or isinstance(value, (int, float, complex, list, tuple))):
        raise TypeError(f"x[key] = value: value must be an array, a Python scalar (bool, int, "
                        f"float, complex) or a list of them, got {type(value).__name__}")
    if isinstance(value, np.generic) and value.dtype.kind not in "biufc" \
            and not dtypes.is_bfloat16(value.dtype):
        raise TypeError(f"x[key] = value: value must be a number, got a NumPy {value.dtype} "
                        f"scalar ({value!r})")
    if type(value) is list or type(value) is tuple:
        _check_sequence(value)
    if isinstance(value, (complex, np.complexfloating)) and dtype.kind != "c":
        raise TypeError(f"x[key] = value: a complex value ({value!r}) into x's dtype {dtype} "
                        "(take its real part first)")
    if isinstance(value, (np.integer, np.bool_)):
        return value.item()
    return value


_VALUE_TYPES = frozenset({bool, int, float, complex, list, tuple})


def _check_sequence(value) -> None:
    """TypeError for a (nested) list or tuple ``value`` of ``x[key] = value`` holding what is
    no number (a str, None, an object): NumPy would parse a str and write None as NaN."""
    for item in value:
        if type(item) is list or type(item) is tuple:
            _check_sequence(item)
        elif isinstance(item, (bool, int, float, complex)):
            continue
        elif isinstance(getattr(item, "dtype", None), np.dtype) and (
                item.dtype.kind in "biufc" or dtypes.is_bfloat16(item.dtype)):
            continue  # a NumPy scalar, an array, an Array
        else:
            raise TypeError(f"x[key] = value: value must be an array, a Python scalar (bool, "
                            f"int, float, complex) or a list of them, got a list holding "
                            f"{type(item).__name__} {item!r}"[:300])


def _held_value(value, dtype):
    """An array ``value`` of ``x[key] = value`` of a dtype that arrays of every device hold:
    a NumPy array of non-native byte order as its values in native order (as ``asarray``
    takes it); TypeError for any other dtype (strings, objects, longdouble), whatever the
    key and the device. ``x`` of a dtype not ours (a structured array of Dask's): as is."""
    held = dtypes.HELD_DTYPES
    value_dtype = value.dtype
    if value_dtype in held or dtype not in held:
        return value
    if isinstance(value, np.ndarray) and not value_dtype.isnative \
            and value_dtype.newbyteorder("=") in held:
        return value.astype(value_dtype.newbyteorder("="))
    raise TypeError(f"x[key] = value: value's dtype {value_dtype} ({value_dtype.str!r}) is not a "
                    "boolean or numeric dtype that arrays of every device hold")


def _scalar_source(library, value, dtype):
    """A Python or NumPy scalar ``value`` as a 0-d array of ``dtype``: NumPy's checks (an
    OverflowError for a Python int out of range), silent where a float overflows."""
    limit = _FINITE_MAX.get(dtype)
    if dtype in _OVERFLOW_FREE or (limit is not None and type(value) in _REAL_SCALARS
                                   and -limit <= value <= limit):
        return library.asarray(value, dtype=dtype)  # Python scalars: NumPy's checks
    with np.errstate(over="ignore"):  # silent on every device: 1e300 into float16 is inf
        return library.asarray(value, dtype=dtype)


# dtypes no Python scalar overflows on the way in (a float too large for an integer dtype is
# NumPy's OverflowError): no need to silence NumPy's overflow warning for them; nor for a real
# scalar within a narrower float dtype's range
_OVERFLOW_FREE = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float64, np.complex128))
_REAL_SCALARS = frozenset({int, float, bool})
_FINITE_MAX = {np.dtype(t): float(np.finfo(t).max) for t in (np.float16, np.float32)}


# dtype families within which the standard defines promotion (bfloat16's category is
# "real floating" in the dtype table)
_FAMILY = {"bool": "bool", "signed": "integer", "unsigned": "integer",
           "real floating": "floating", "complex floating": "floating"}


def _check_promotes(value_dtype, dtype) -> None:
    """``x[key] = value`` promotes ``value`` to ``x``'s dtype (standard 2025.12): TypeError
    where the standard's promotion of the two gives another dtype (float64 into float32,
    int16 into uint8). Across families (int into float), where the standard defines no
    promotion, the value is cast, as NumPy does."""
    if value_dtype not in dtypes.DTYPE_TABLE or dtype not in dtypes.DTYPE_TABLE:
        return  # not ours (a structured array of Dask's): the library decides
    family = _FAMILY[dtypes.category(value_dtype)]
    if family == _FAMILY[dtypes.category(dtype)] and dtypes.promote_types(value_dtype, dtype) != dtype:
        raise TypeError(f"x[key] = value: value's dtype {value_dtype} does not promote to x's "
                        f"dtype {dtype} (they promote to {dtypes.promote_types(value_dtype, dtype)});"
                        " cast it with astype first")


def _broadcast(library, value, shape):
    """``broadcast_to(value, shape)``: for a C-contiguous NumPy array a view made directly
    (about 1 us; ``numpy.broadcast_to`` takes 7 us), else the library's."""
    if library is not np or not value.flags.c_contiguous or value.ndim > len(shape):
        return library.broadcast_to(value, shape)
    lead = len(shape) - value.ndim
    strides = [0] * lead
    for n, m, stride in zip(shape[lead:], value.shape, value.strides):
        if m != n and m != 1:
            return library.broadcast_to(value, shape)  # NumPy's error message
        strides.append(stride if m == n else 0)
    # only ever the source of a copy: no need to mark it read-only as broadcast_to does
    return np.ndarray(shape, value.dtype, buffer=value, strides=tuple(strides))


_native_types: list = [None, (np.ndarray,)]  # [the cupy module read, the array types]


def native_array_types() -> tuple:
    """NumPy's array type, and CuPy's once CuPy is imported: the ``cupy`` module imported
    now (read again when it is another, as when the tests' stand-in takes its name)."""
    cp = sys.modules.get("cupy")
    if cp is not _native_types[0]:
        _native_types[:] = [cp, (np.ndarray,) if cp is None else (np.ndarray, cp.ndarray)]
    return _native_types[1]


def wrap_result(result, backend: str):
    """Arrays in a namespace function's result as Arrays (NumPy scalars as 0-d Arrays);
    tuples, named tuples and lists keep their type; anything else is returned as is."""
    kind = type(result)
    if kind is np.ndarray:
        return wrap(result, backend)
    if isinstance(result, np.generic):
        return wrap(np.asarray(result), backend)
    if kind is tuple or kind is list:
        return kind(wrap_result(r, backend) for r in result)
    if isinstance(result, tuple):  # named tuples (unique_all, eigh, ...)
        return kind(*(wrap_result(r, backend) for r in result))
    if isinstance(result, native_array_types()):
        return wrap(result, backend)
    return result


__all__ = ["Array", "wrap", "learn_out_id", "settle", "wrap_result", "check_same_device",
           "native_array_types"]
