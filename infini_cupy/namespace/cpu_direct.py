"""Public functions whose answer on the ``cpu`` device is one NumPy call, made directly.

On ``cpu`` NumPy computes. For the views (``permute_dims``, ``transpose``,
``matrix_transpose``, ``squeeze``, ``flip``,
``expand_dims``, ``moveaxis``, and ``reshape`` where it is a view), ``where``,
``count_nonzero``, ``concat`` and ``stack`` of one dtype, ``repeat`` by an int count,
``tile``, ``roll`` of the flattened array, and the creations ``empty``, ``zeros``, ``ones``
and their ``*_like``, the full call (the boundary's wrapper, the delegated function or our
data movement, then array_api_compat) ends in one NumPy call (the function of the same name)
on the native arrays with the public call's arguments, and wraps what comes back (for
``roll``, NumPy's copies of the blocks, NumPy's ``roll``'s answer); for ``astype`` to
another dtype, in ``numpy_casts``' cast (the GPU's answers for NaN and out-of-range floats
into integers). For ``cpu`` Arrays and arguments of the common kinds (ints and tuples of
ints for axes, shapes, counts and repetitions, Python scalars for ``where``'s values, a
dtype pair ``astype`` has checked before, a list or tuple of Arrays of one dtype to join
along an int axis), each function here makes that call itself (for an int axis, NumPy's own
steps without its axis normalisation) and wraps the result: the full call's answer at a
fraction of its cost.
Anything else goes the full way and raises what it always raised: another device, a NumPy
array or scalar, an argument of another kind, an axis out of range, a shape that needs a
copy, a negative count, a bfloat16 operand of ``where``, a cast not checked before or to the
same dtype, arrays to join that NumPy refuses or whose dtypes differ (our promotion), a
creation on another device than ``cpu`` (by name, or by the backend in force) or of another
shape (``*_like(shape=)``).

The functions delegated to array_api_compat that generic code calls most (reductions,
``cumulative_*``, ``sort``, ``take``, ...) have their direct forms in
:mod:`.cpu_direct_delegated`, installed by :func:`install` as these are.

The emulator and GPUs keep the full way: their calls run the boundary a GPU runs, which is
what the emulator is there to test. ``cpu`` Arrays are never deferred (``lazy()`` defers
kernels), so no function here asks for lazy mode.

>>> import infini_cupy as xp
>>> x = xp.ones((2, 1, 3), device="cpu")
>>> xp.permute_dims(x, (2, 1, 0)).shape, xp.squeeze(x, axis=1).shape
((3, 1, 2), (2, 3))
"""

from __future__ import annotations

import numpy as np

from ..config import get_backend
from ..dtypes import HELD_DTYPES
from ..elementwise.numpy_casts import cast, float_to_int, is_float_to_int, warn_if_complex_to_real
from ..strided.copy import check_copyable_dtype
from .data_movement import _checked_casts, _joined_by_numpy
from .array import Array, wrap, wrap_result
from .patterns import reshape_strides

_CPU = "numpy"  # the cpu device's backend
_EVERYTHING, _REVERSED = slice(None), slice(None, None, -1)  # NumPy's np.s_[:], np.s_[::-1]
_PYTHON_SCALARS = frozenset({bool, int, float, complex})  # where's values taken by value


def _ints(values) -> bool:
    """Whether ``values`` is a tuple of ints (a bool is not one here)."""
    if type(values) is not tuple:
        return False
    for v in values:
        if type(v) is not int:
            return False
    return True


def permute_dims(full):
    def permute_dims(x, /, axes):
        if type(x) is Array and x._b == _CPU and _ints(axes):
            # compat's permute_dims is np.transpose(x, axes): x.transpose(axes), whose
            # refusals (a repeated axis, a wrong count) are NumPy's either way
            return wrap(x._a.transpose(axes), _CPU)
        return full(x, axes)

    return permute_dims


def transpose(full):
    def transpose(x, /, axes=None):
        if type(x) is Array and x._b == _CPU and (axes is None or _ints(axes)):
            # NumPy's transpose, as extensions.transpose ends in it (permute_dims)
            return wrap(x._a.transpose(axes), _CPU)
        return full(x, axes)

    return transpose


def matrix_transpose(full):
    def matrix_transpose(x, /):
        if type(x) is Array and x._b == _CPU and x._a.ndim >= 2:
            # compat's matrix_transpose: NumPy's swapaxes of the last two (fewer dims: its
            # ValueError, the full way)
            return wrap(x._a.swapaxes(-1, -2), _CPU)
        return full(x)

    return matrix_transpose


def squeeze(full):
    def squeeze(x, /, axis=None):
        if type(x) is Array and x._b == _CPU:
            if axis is None:  # every length-1 axis, the tuple of them the full call passes
                return wrap(x._a.squeeze(), _CPU)
            if type(axis) is int or _ints(axis):  # np.squeeze(x, axis): x.squeeze(axis=axis)
                return wrap(x._a.squeeze(axis=axis), _CPU)
        return full(x, axis)

    return squeeze


def flip(full):
    def flip(x, /, *, axis=None):
        if type(x) is Array and x._b == _CPU:
            a = x._a
            ndim = a.ndim
            # np.flip's indexer; a 0-d array indexed by () gives a NumPy scalar, which the
            # full call returns as a 0-d array (wrap_result)
            if axis is None:
                return wrap_result(a[(_REVERSED,) * ndim], _CPU)
            if type(axis) is int and -ndim <= axis < ndim:
                index = [_EVERYTHING] * ndim
                index[axis] = _REVERSED
                return wrap_result(a[tuple(index)], _CPU)
        return full(x, axis=axis)

    return flip


def expand_dims(full):
    def expand_dims(x, /, axis):
        if type(x) is Array and x._b == _CPU and type(axis) is int:
            a = x._a
            ndim = a.ndim
            if -ndim - 1 <= axis <= ndim:  # np.expand_dims: a reshape with a 1 at axis
                at = axis if axis >= 0 else axis + ndim + 1
                shape = a.shape
                return wrap(a.reshape(shape[:at] + (1,) + shape[at:]), _CPU)
        return full(x, axis)

    return expand_dims


def moveaxis(full):
    def moveaxis(x, source, destination, /):
        if type(x) is Array and x._b == _CPU and type(source) is int \
                and type(destination) is int:
            ndim = x._a.ndim
            if -ndim <= source < ndim and -ndim <= destination < ndim:
                # np.moveaxis: the other axes in order, source inserted at destination
                source %= ndim
                order = [n for n in range(ndim) if n != source]
                order.insert(destination % ndim, source)
                return wrap(x._a.transpose(order), _CPU)
        return full(x, source, destination)

    return moveaxis


# the dtypes that passed check_copyable_dtype in a direct form (a dtype's check holds for
# every array and every call; only its refusal's message names the call)
_copyable: set = set()


def _check_copyable(dtype, what: str) -> None:
    """check_copyable_dtype(dtype, what), once per dtype that passes: its TypeError is the
    full call's."""
    if dtype not in _copyable:
        check_copyable_dtype(dtype, what)
        _copyable.add(dtype)


def _reshape_view(a, shape):
    """``a.reshape(shape)`` where data_movement.reshape takes that view (``shape`` a tuple
    of ints with at most one -1, of ``a``'s size, whose strides chain); else None."""
    if type(shape) is not tuple:
        return None
    known, free = 1, None  # the product of the lengths given; the index of a -1
    for k, n in enumerate(shape):
        if type(n) is not int:
            return None
        if n < 0:
            if n != -1 or free is not None:
                return None
            free = k
        else:
            known *= n
    size = a.size
    if free is not None:
        if known == 0 or size % known:
            return None
        shape = shape[:free] + (size // known,) + shape[free + 1:]
    elif known != size:
        return None
    _check_copyable(a.dtype, "reshape")
    # a C-contiguous array's strides always chain (reshape_strides ignores length-1 axes,
    # as NumPy's contiguity flag does); any other layout asks
    if not a.flags.c_contiguous and reshape_strides(a.shape, a.strides, shape) is None:
        return None  # a copy: our strided copy, the full way
    return a.reshape(shape)


def reshape(full):
    def reshape(x, /, shape, *, copy=None):
        if type(x) is Array and x._b == _CPU and copy is None:
            view = _reshape_view(x._a, shape)
            if view is not None:
                return wrap(view, _CPU)
        return full(x, shape, copy=copy)

    return reshape


def _where_value(value):
    """A value of ``where`` as the full call passes it to np.where, or None where the full
    call must run (another device, bfloat16, NumPy scalars, anything else)."""
    kind = type(value)
    if kind is Array:
        if value._b != _CPU:
            return None
        a = value._a
        return None if a.dtype.kind == "V" else a  # bfloat16: selected as its bits
    return value if kind in _PYTHON_SCALARS else None


def where(full):
    def where(condition, x1=None, x2=None, /):
        if type(condition) is Array and condition._b == _CPU:
            v1, v2 = _where_value(x1), _where_value(x2)
            if v1 is not None and v2 is not None:  # compat's where is np.where
                return wrap_result(np.where(condition._a, v1, v2), _CPU)
        return full(condition, x1, x2)

    return where


def count_nonzero(full):
    def count_nonzero(x, /, *, axis=None, keepdims=False):
        if type(x) is Array and x._b == _CPU and axis is None and keepdims is False:
            # compat's count_nonzero: np.asarray of np.count_nonzero's Python int
            return wrap(np.asarray(np.count_nonzero(x._a)), _CPU)
        return full(x, axis=axis, keepdims=keepdims)

    return count_nonzero


def astype(full):
    def astype(x, dtype, /, *, copy=True, device=None):
        if type(x) is Array and x._b == _CPU and device is None \
                and isinstance(dtype, (np.dtype, type)):
            a = x._a
            target = _checked_casts.get((a.dtype, dtype))  # the full call's checks passed
            if target is not None and target == a.dtype:  # one dtype: x, or a C copy (the
                # strided copy's bytes: NumPy's copy, no cast)
                return wrap(a.copy(), _CPU) if copy else x
            if target is not None:
                # data_movement.astype's cast on the numpy backend, the GPU's answers for
                # NaN and out-of-range floats into integers included
                warn_if_complex_to_real(a.dtype, target)
                if is_float_to_int(a.dtype, target):
                    return wrap(float_to_int(a, target), _CPU)
                return wrap(cast(a, target), _CPU)
        return full(x, dtype, copy=copy, device=device)

    return astype


def _natives_of_one_dtype(arrays, what: str):
    """The NumPy arrays of a list or tuple of ``cpu`` Arrays of one dtype the kernels copy
    (data_movement's ``_result_dtype`` lets NumPy join those itself), or None."""
    kind = type(arrays)
    if (kind is not list and kind is not tuple) or not arrays:
        return None
    natives = []
    for v in arrays:
        if type(v) is not Array or v._b != _CPU:
            return None
        natives.append(v._a)
    dtype = natives[0].dtype
    for a in natives:
        if a.dtype != dtype:
            return None  # promoted by our rules: the full way
    _check_copyable(dtype, what)
    return natives


def _joining(join, what: str):
    """The direct form of ``concat`` (``join``: np.concatenate) or ``stack`` (np.stack)."""

    def direct(full):
        def joined_call(arrays, /, *, axis=0):
            if type(axis) is int:
                natives = _natives_of_one_dtype(arrays, what)
                if natives is not None:
                    joined = _joined_by_numpy(join, natives, axis)
                    if joined is not None:
                        return wrap(joined, _CPU)
            return full(arrays, axis=axis)

        return joined_call

    return direct


concat, stack = _joining(np.concatenate, "concat"), _joining(np.stack, "stack")


def repeat(full):
    def repeat(x, repeats, /, *, axis=None):
        if type(x) is Array and x._b == _CPU and type(repeats) is int and repeats >= 0:
            a = x._a
            ndim = a.ndim
            if axis is None or (type(axis) is int and -ndim <= axis < ndim):
                # data_movement.repeat's checks passed: on cpu, NumPy's repeat
                _check_copyable(a.dtype, "repeat")
                try:
                    return wrap_result(np.repeat(a, repeats, axis=axis if axis is None
                                                 else axis % ndim), _CPU)
                except (OverflowError, ValueError):  # too big: the full call's ValueError
                    pass
        return full(x, repeats, axis=axis)

    return repeat


def tile(full):
    def tile(x, repetitions, /):
        if type(x) is Array and x._b == _CPU and _ints(repetitions):
            for r in repetitions:
                if r < 0:
                    return full(x, repetitions)  # the full call's ValueError
            # data_movement.tile's checks passed: on cpu, NumPy's tile
            _check_copyable(x._a.dtype, "tile")
            try:
                return wrap_result(np.tile(x._a, repetitions), _CPU)
            except (OverflowError, ValueError):  # too big: the full call's ValueError
                pass
        return full(x, repetitions)

    return tile


def roll(full):
    def roll(x, /, shift, *, axis=None):
        if type(x) is Array and x._b == _CPU and type(shift) is int and axis is None:
            # data_movement.roll's checks passed: the flattened roll, NumPy's (along given
            # axes ours is the faster, and stays)
            _check_copyable(x._a.dtype, "roll")
            return wrap_result(np.roll(x._a, shift), _CPU)
        return full(x, shift, axis=axis)

    return roll


def _creating(numpy_function):
    """The direct form of ``empty``, ``zeros`` or ``ones`` (``numpy_function``, NumPy's): on
    ``cpu`` the full call (delegated's ``created``) is NumPy's function with the shape, and the
    dtype where one is given."""

    def direct(full):
        def creation(shape, *, dtype=None, device=None):
            if (dtype is None or isinstance(dtype, np.dtype) and dtype in HELD_DTYPES) and (
                    (get_backend() == _CPU) if device is None else (
                        type(device) is str and device == "cpu")):
                return wrap_result(numpy_function(shape, dtype=dtype), _CPU)
            return full(shape, dtype=dtype, device=device)

        return creation

    return direct


empty, zeros, ones = _creating(np.empty), _creating(np.zeros), _creating(np.ones)


def _creating_like(numpy_function):
    """The direct form of ``empty_like``, ``zeros_like`` or ``ones_like`` of a ``cpu`` Array on
    its own device, of its shape (``shape``: NumPy's keyword, extensions.py): the full call
    (extensions' ``like``, delegated's, then compat's) is NumPy's function."""

    def direct(full):
        def like(x, /, *, dtype=None, device=None, shape=None):
            if type(x) is Array and x._b == _CPU and device is None and shape is None and (
                    dtype is None or isinstance(dtype, np.dtype) and dtype in HELD_DTYPES):
                return wrap_result(numpy_function(x._a, dtype=dtype), _CPU)
            return full(x, dtype=dtype, device=device, shape=shape)

        return like

    return direct


empty_like, zeros_like = _creating_like(np.empty_like), _creating_like(np.zeros_like)
ones_like = _creating_like(np.ones_like)


_DIRECT = {"permute_dims": permute_dims, "transpose": transpose,
           "matrix_transpose": matrix_transpose, "squeeze": squeeze, "flip": flip,
           "expand_dims": expand_dims, "moveaxis": moveaxis, "reshape": reshape,
           "where": where, "count_nonzero": count_nonzero, "astype": astype,
           "concat": concat, "stack": stack, "repeat": repeat, "tile": tile, "roll": roll,
           "empty": empty, "zeros": zeros, "ones": ones, "empty_like": empty_like,
           "zeros_like": zeros_like, "ones_like": ones_like}


def install(public: dict, table: dict = _DIRECT) -> None:
    """Each public function of ``table`` (name -> direct form; by default this module's)
    replaced by its direct form, the boundary's function behind it (name, docstring and
    signature kept: inspect follows ``__wrapped__``)."""
    for name, direct in table.items():
        full = public[name]
        function = direct(full)
        function.__name__ = function.__qualname__ = name
        function.__module__ = full.__module__
        function.__doc__ = full.__doc__
        function.__wrapped__ = full
        public[name] = function


__all__ = ["install"]
