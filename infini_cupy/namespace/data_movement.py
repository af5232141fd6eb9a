"""Data movement of the namespace on the rearrange kernel: views stay views, and every needed
copy is one (or a few) ``rearrange_`` launches into a preallocated output; a change of dtype
is the elementwise cast kernel.

All functions take and return native arrays (NumPy or CuPy); on the ``numpy`` backend the
same code runs with ``rearrange_`` falling back to ``numpy.copyto``. The view functions
(``broadcast_to``, ``permute_dims``, ``flip``, ...) are :mod:`.delegated`'s: no copy, no kernel.

>>> import numpy as np, infini_cupy as xp
>>> xp.concat([np.zeros((1, 2), np.int8), np.ones((2, 2), np.float32)]).dtype
dtype('float32')
"""

from __future__ import annotations

import contextlib
import math
import operator

import array_api_compat
import numpy as np

from .. import dtypes
from ..arrays import (
    backend_for,
    check_plain_buffer,
    empty_on_device_of,
    is_array,
    is_cupy_array,
    require_cupy,
    type_name,
)
from ..elementwise import numpy_casts
from ..elementwise.launcher import cast
from ..elementwise.plan import broadcast_shapes as broadcast_shape_of
from ..elementwise.trace import Traced, astype_node
from ..strided.copy import check_copyable_dtype, rearrange_, rearrange_copy
from . import delegated
from .patterns import apply_pattern, reshape_strides


def _check_array(x, what: str) -> None:
    """TypeError unless ``x`` is a NumPy or CuPy array of a dtype our kernels copy, whether
    or not this call needs a copy (a view of an object array is refused like its copy)."""
    if not is_array(x):
        raise TypeError(f"{what} takes a NumPy or CuPy array, got {type_name(x)}")
    check_copyable_dtype(x.dtype, what)


def _library(x):
    """numpy or cupy: the module whose ``broadcast_to``/``repeat`` take ``x``."""
    return require_cupy() if is_cupy_array(x) else np


def _index(value, what: str, name: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{what}: {name} must be an integer, got {value!r}") from None


def _normalize_axis(axis, ndim: int, what: str) -> int:
    axis = _index(axis, what, "axis")
    if not -ndim <= axis < ndim:
        # NumPy's AxisError is both an IndexError and a ValueError, as NumPy raises it
        raise np.exceptions.AxisError(axis, ndim, what)
    return axis % ndim


def _check_result_size(shape: tuple, dtype, what: str) -> None:
    """ValueError naming ``shape`` when an array of it would not fit the address space:
    NumPy's ``tile``/``repeat`` raise OverflowError from C and ``empty`` a ValueError naming
    nothing, so each device said another thing."""
    if math.prod(shape) * np.dtype(dtype).itemsize > _LARGEST_NBYTES:
        raise ValueError(f"{what}: the result of shape {shape} and dtype {np.dtype(dtype)} is "
                         f"beyond the largest array ({_LARGEST_NBYTES} bytes)")


_LARGEST_NBYTES = np.iinfo(np.intp).max


def _int_tuple(values, what: str, name: str) -> tuple:
    """A shape or repetitions argument as a tuple of ints (NumPy also takes a bare int)."""
    items = values if isinstance(values, (tuple, list)) else (values,)
    try:
        return tuple(operator.index(v) for v in items)
    except TypeError:
        raise TypeError(f"{what}: {name} must be integers, got {values!r}") from None


def rearrange(x, pattern: str | None = None, /, **axes_lengths):
    """A C-contiguous copy of ``x``, or einops' ``rearrange(x, pattern, **axes_lengths)``
    computed as views plus at most one kernel launch.

    Parameters
    ----------
    x : Array, array, or a list of them
        Any layout (negative and zero strides included). A list is stacked on a new first
        axis, as einops does.
    pattern : str, optional
        An einops pattern (``"b c h w -> b h w c"``, ``"b (h d) -> b h d"``). Without one,
        ``x`` is copied into a new C-contiguous array.
    **axes_lengths : int
        Lengths of split axes (``d=64``).

    Returns
    -------
    Array or array
        A view of ``x`` when the pattern needs no copy, else a new C-contiguous array made by
        one launch of our strided copy (a plan cached per layout).

    Raises
    ------
    ValueError
        A malformed pattern, or one that does not fit ``x``'s shape (named in the message).
    TypeError
        A pattern that is not a str, axis lengths without a pattern, a dtype our kernels do
        not copy.

    Examples
    --------
    >>> import numpy as np, infini_cupy as xp
    >>> x = np.arange(24).reshape(2, 3, 4)
    >>> xp.rearrange(x, "b h w -> b (w h)").shape
    (2, 12)
    >>> y = xp.asarray([[1, 2, 3], [4, 5, 6]], device="emulator")
    >>> xp.rearrange(y, "h w -> (w h)")
    Array([1, 4, 2, 5, 3, 6], device='emulator')
    """
    if isinstance(x, (list, tuple)) and not x:
        raise TypeError(f"rearrange: an empty {type(x).__name__} has no arrays to stack")
    if isinstance(x, (list, tuple)) and all(is_array(a) for a in x):
        # einops stacks a list of arrays on a new first axis
        x = stack(x)
        if pattern is None and not axes_lengths:
            return x  # already a new C-contiguous array
    if pattern is None:
        if axes_lengths:
            raise TypeError("rearrange: axis lengths were given without a pattern")
        return rearrange_copy(x)
    if not isinstance(pattern, str):
        raise TypeError(f"rearrange: the pattern must be a str, got {type(pattern).__name__}")
    _check_array(x, "rearrange")
    return apply_pattern(x, pattern, rearrange_copy, **axes_lengths)


def ascontiguousarray(x, /):
    """``x`` itself when already C-contiguous, else a C-contiguous copy (an extension).

    Parameters
    ----------
    x : Array or array

    Returns
    -------
    Array or array
        ``x``, or a copy made by one launch of our strided copy.

    Raises
    ------
    TypeError
        A dtype our kernels do not copy.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.asarray([[1, 2], [3, 4]], device="emulator")
    >>> xp.ascontiguousarray(x.T)
    Array([[1, 3],
           [2, 4]], device='emulator')
    """
    _check_array(x, "ascontiguousarray")
    return x if x.flags.c_contiguous else rearrange_copy(x)


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """The array API's ``asarray``: an Array from an array, a nested sequence or a scalar.

    An array copied (``copy=True``) or cast (``dtype=``) on its own device goes through our
    kernels (the strided copy, or the cast kernel); everything else is the array library's
    ``asarray`` (NumPy for ``cpu`` and the emulator, CuPy on a GPU).

    Parameters
    ----------
    obj : array, nested sequence, Python scalar or DLPack producer
    dtype : dtype, optional
    device : Device, str or cupy.cuda.Device, optional
        ``"cpu"``, ``"emulator"``, ``"cuda"``/``"cuda:N"``; None: the backend in force.
    copy : bool, optional
        True: always copy; False: never (ValueError when a copy is needed); None: when needed.

    Returns
    -------
    Array
        (Plain NumPy or CuPy arrays come back plain from the implementation on native arrays.)

    Raises
    ------
    TypeError
        Strings, objects or other non-numeric data, naming the dtype (up front, rather than at
        the first call that would refuse it); masked and unit-carrying arrays, whose meaning
        is more than their buffer (``.filled()`` or ``np.asarray`` them on purpose).
    ValueError
        An unknown device, or ``copy=False`` where a copy is needed.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.asarray([1.0, 2.0], device="emulator")
    Array([1., 2.], device='emulator')
    >>> xp.asarray(["a"])
    Traceback (most recent call last):
    TypeError: asarray: list input gives dtype <U1 ('<U1'), not a boolean or numeric dtype that arrays of every device hold
    """
    check_plain_buffer(obj, "asarray")
    if type(obj) is memoryview:
        obj = np.asarray(obj)  # a view: its format's byte order is seen below
    if isinstance(obj, np.ndarray) and not obj.dtype.isnative:
        obj, copy = _native_byte_order(obj, copy)
    if (hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__") and not is_array(obj)
            and not isinstance(obj, np.generic)):
        # a DLPack producer (a torch tensor): its memory as from_dlpack takes it, copied once
        # if copy=True. NumPy's asarray would ask its __array__, which may take no copy=
        # (torch's: copy=False a ValueError) or hold no dtype NumPy has (bfloat16)
        try:
            obj = delegated.from_dlpack(obj, copy=copy)
        except BufferError as e:  # what the producer will not export, or no Array holds
            raise TypeError(f"asarray: {type(obj).__name__} input: {e}") from e
        copy = False if copy is False else None  # copied once already if copy=True
    if (isinstance(obj, (np.ndarray, np.generic)) and obj.dtype.kind in "fc"
            and obj.dtype not in dtypes.HELD_DTYPES and dtype is not None):
        # longdouble, which no device holds, asked for as a held dtype: NumPy's conversion on
        # the host, as for every device (a copy: copy=False cannot be met)
        if copy is False:
            raise ValueError(f"asarray: dtype {obj.dtype} needs a copy into {np.dtype(dtype)}, "
                             "and copy=False was given")
        obj, copy = np.asarray(obj).astype(dtypes.check_held("asarray", dtype)), None
    if (is_array(obj) and copy is not False
            and (device is None or device == array_api_compat.device(obj))
            and (copy or (dtype is not None and np.dtype(dtype) != obj.dtype))):
        return astype(obj, obj.dtype if dtype is None else dtype, copy=True)
    if isinstance(getattr(obj, "dtype", None), np.dtype):
        _check_numeric(obj, obj.dtype)
    if dtype is not None and (is_cupy_array(obj) or hasattr(device, "id")):  # a CuPy device
        dtypes.check_bfloat16_on_cupy(dtypes.dtype_or_none(dtype))
    token = numpy_casts.silence()  # 1e40 in a list into float32 is inf, silently, as our
    try:  # cast of an array gives it (floating-point warnings are silent on every device)
        try:
            result = delegated.asarray(obj, dtype=dtype, device=device, copy=copy)
        except TypeError:
            stacked = stacked_on_gpu(obj) if isinstance(obj, (list, tuple)) else None
            if stacked is None:
                raise
            if copy is False:  # NumPy's answer for a list on every other device
                raise ValueError("asarray: a list or tuple is copied, and copy=False was "
                                 "given") from None
            result = delegated.asarray(stacked, dtype=dtype, device=device, copy=None)
    except (TypeError, ValueError, OverflowError) as e:
        if dtype is None and isinstance(obj, (list, tuple)):  # CuPy refuses strings its way
            host_dtype = None
            with contextlib.suppress(TypeError, ValueError):  # ragged: the error below
                host_dtype = np.asarray(obj).dtype
            if host_dtype is not None:  # outside the suppress: its TypeError is the answer
                _check_numeric(obj, host_dtype)
        if str(e).startswith("asarray"):
            raise
        # the library's message (a ragged list, a value out of range), named as ours are
        kind = next(k for k in (TypeError, OverflowError, ValueError) if isinstance(e, k))
        raise kind(f"asarray: {e}") from e
    finally:
        numpy_casts.restore(token)
    _check_numeric(obj, result.dtype)
    return result


def stacked_on_gpu(items):
    """A (nested) list or tuple ``items`` holding GPU arrays beside other values (Python
    scalars, NumPy arrays) as the array NumPy makes of such a list on the host, built on the
    GPU arrays' GPU: each other value a 0-d (or n-d) array there first, then stacked by CuPy,
    which promotes as NumPy's discovery does (a Python int beside float32: float64). CuPy
    converts such a list through NumPy, which a GPU array refuses (a TypeError). None where
    ``items`` holds no GPU array."""
    gpu_arrays = [v for v in _leaves(items) if is_cupy_array(v)]
    if not gpu_arrays:
        return None
    cupy = require_cupy()

    def on_gpu(v):
        if type(v) is list or type(v) is tuple:
            return [on_gpu(w) for w in v]
        return v if is_cupy_array(v) else cupy.asarray(v)

    with gpu_arrays[0].device:
        stacked = on_gpu(items)
        _nested_shape(stacked)  # CuPy stacks arrays of one shape at each level, on the GPU
        return cupy.asarray(stacked)


def _nested_shape(items) -> tuple:
    """The shape of a nested list of arrays; NumPy's ValueError where it is ragged (CuPy
    would take it through NumPy, refused for the GPU arrays: a TypeError)."""
    if type(items) is not list:
        return items.shape
    shapes = {_nested_shape(v) for v in items}
    if len(shapes) > 1:
        raise ValueError(f"asarray: the sequence is ragged: its elements have shapes "
                         f"{sorted(shapes)}")
    return (len(items), *(shapes.pop() if shapes else ()))


def _leaves(items):
    for v in items:
        if type(v) is list or type(v) is tuple:
            yield from _leaves(v)
        else:
            yield v


def _native_byte_order(obj, copy):
    """(``obj``'s values in native byte order, the ``copy`` still asked for): the kernels
    copy native byte order only, and CuPy's ``asarray`` swaps to it too, so every device
    holds the same dtype. The swap is a copy: ``copy=False`` refuses it."""
    if obj.dtype.kind not in "biufc":
        return obj, copy  # not numeric: _check_numeric names it
    if copy is False:
        raise ValueError(f"asarray: dtype {obj.dtype.str!r} needs a copy into native byte "
                         f"order, and copy=False was given")
    return obj.astype(obj.dtype.newbyteorder("=")), None  # a new array: copied already


def _check_numeric(obj, dtype) -> None:
    """TypeError unless ``dtype`` is one that arrays of every device hold (strings, objects
    and longdouble are not: CuPy has none, and the kernels take none)."""
    if dtype not in dtypes.HELD_DTYPES and (dtype.isnative or dtype.kind not in "biufc"):
        big = _int_past_64_bits(obj) if dtype.kind == "O" else None
        if big is not None:  # NumPy makes an object array of it, which no device holds
            raise OverflowError(f"asarray: {big} fits no integer dtype (int64, uint64); give a "
                                "dtype or a float")
        raise TypeError(f"asarray: {type(obj).__name__} input gives dtype {dtype} "
                        f"({dtype.str!r}), not a boolean or numeric dtype that arrays of "
                        "every device hold")


def _int_past_64_bits(obj):
    """The first Python int of ``obj`` (an int or a nested list or tuple) that neither int64
    nor uint64 holds; None when there is none."""
    if type(obj) is int:
        return None if dtypes.int_in_64_bits(obj) else obj
    if type(obj) is list or type(obj) is tuple:
        for item in obj:
            big = _int_past_64_bits(item)
            if big is not None:
                return big
    return None


def _cast_into(out, x):
    """``out[...] = x`` converted to ``out.dtype`` (NumPy's casting: complex to real drops the
    imaginary part): the elementwise cast kernel; on the numpy backend ``numpy.copyto`` with
    the kernels' answers for NaN and out-of-range floats into integers (``numpy_casts``)."""
    if backend_for(out, x) == "numpy":  # silent, with the GPU's float -> integer answers
        return numpy_casts.cast_into(out, x)
    return cast(x, out.dtype, out=out)


def astype(x, dtype, /, *, copy: bool = True, device=None):
    """``x`` as ``dtype``.

    A different dtype goes through our elementwise cast kernel (NumPy's casting: wrap-around
    for integers, complex to real drops the imaginary part with NumPy's and CuPy's
    ``ComplexWarning``; bfloat16 bit for bit as ml_dtypes); the same dtype copies through
    our strided copy, or is ``x`` itself with ``copy=False``.

    Parameters
    ----------
    x : Array or array
    dtype : dtype
        Any dtype of the namespace, float16 and bfloat16 included.
    copy : bool, default True
        False: return ``x`` itself when it already has ``dtype``.
    device : Device or str, optional
        Cast where ``x`` is, then move there.

    Returns
    -------
    Array or array
        A new C-contiguous array (one launch), or ``x``.

    Raises
    ------
    TypeError
        A dtype the kernels do not hold (strings, objects, float128).

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.asarray([1.7, -1.7, 300.0], device="emulator")
    >>> xp.astype(x, xp.int16)
    Array([  1,  -1, 300], dtype=int16, device='emulator')
    """
    known = (_checked_casts.get((x.dtype, dtype))
             if type(x) is np.ndarray and isinstance(dtype, (np.dtype, type)) else None)
    if known is not None:  # a NumPy array, a cast whose dtypes passed the checks below
        dtype = known
    else:
        if type(x) is Traced:  # inside infini_cupy.fuse's trace: a cast node
            return astype_node(x, dtype, copy, device)
        _check_array(x, "astype")
        asked, dtype = dtype, np.dtype(dtype)
        check_copyable_dtype(dtype, "astype")
        dtypes.as_dtype(dtype)  # the cast kernels' dtypes (no float128 on a GPU): a TypeError
        if x.dtype != dtype:
            check_copyable_dtype(x.dtype, "astype")
        if type(x) is np.ndarray and isinstance(asked, (np.dtype, type)):
            if len(_checked_casts) >= _CHECKED_CASTS_KEPT:
                _checked_casts.clear()
            _checked_casts[x.dtype, asked] = dtype
    numpy_casts.warn_if_complex_to_real(x.dtype, dtype)
    if device is not None and device != array_api_compat.device(x):
        # cast where x is (the cuda backend computes nothing on NumPy arrays), then move
        return delegated.to_device(astype(x, dtype, copy=False), device)
    if x.dtype == dtype:
        return rearrange_copy(x) if copy else x
    if backend_for(x) == "numpy":
        if numpy_casts.is_float_to_int(x.dtype, dtype):  # the kernels' answers, silently
            return numpy_casts.float_to_int(x, dtype)
        if type(x) is np.ndarray:
            return numpy_casts.cast(x, dtype)
        return numpy_casts.cast_into(empty_on_device_of(x, x.shape, dtype), x)
    return cast(x, dtype)  # a layout cast before: the short path


# (a NumPy array's dtype, the dtype asked for) -> the target dtype, for the casts whose dtypes
# astype has checked: a dtype's checks hold for every array of it
_checked_casts: dict = {}
_CHECKED_CASTS_KEPT = 1024  # every pair of the namespace's dtypes, twice over (dtype or type)


def reshape(x, /, shape, *, copy: bool | None = None):
    """``x`` in a new shape: a view when strides allow, else one copy.

    Parameters
    ----------
    x : Array or array
    shape : tuple of int
        At most one ``-1``.
    copy : bool, optional
        True: always copy (one launch); False: never (ValueError where a view is impossible);
        None: a view when possible.

    Returns
    -------
    Array or array

    Raises
    ------
    ValueError
        A shape of another size, two ``-1``, or ``copy=False`` where a copy is needed.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> x = xp.asarray([[1, 2, 3], [4, 5, 6]], device="emulator")
    >>> xp.reshape(x.T, (6,))          # not a view of x.T: one launch of our copy
    Array([1, 4, 2, 5, 3, 6], device='emulator')
    """
    _check_array(x, "reshape")
    shape = _int_tuple(shape, "reshape", "shape")
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: at most one -1 in the new shape, got {shape}")
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        if known == 0 or x.size % known:
            raise ValueError(f"reshape: cannot reshape array of shape {x.shape} into {shape}")
        shape = tuple(x.size // known if n == -1 else n for n in shape)
    if math.prod(shape) != x.size or any(n < 0 for n in shape):
        raise ValueError(f"reshape: cannot reshape array of shape {x.shape} into {shape}")
    if copy:
        return rearrange_copy(x).reshape(shape)
    if reshape_strides(tuple(x.shape), tuple(x.strides), shape) is not None:
        return x.reshape(shape)
    if copy is False:
        raise ValueError(
            f"reshape: shape {x.shape} with strides {x.strides} cannot be viewed as {shape} "
            "without a copy, and copy=False"
        )
    return rearrange_copy(x).reshape(shape)


def _result_dtype(arrays, what: str) -> tuple[np.dtype, bool]:
    """(the joined arrays' dtype, whether NumPy may join them itself: NumPy arrays of the
    ``numpy`` backend, all of that dtype, so that no cast of ours is needed)."""
    if not arrays:
        raise ValueError(f"{what}: needs at least one array")
    for a in arrays:
        _check_array(a, what)
    backend = backend_for(*arrays)  # mixed devices: a clear error before anything else
    dtype = arrays[0].dtype
    if all(a.dtype == dtype for a in arrays):  # one dtype, each checked above
        return dtype, backend == "numpy"
    # the namespace's result_type (NumPy's promotion, the standard's where it has one;
    # bfloat16 as the elementwise functions promote it)
    dtype = dtypes.promote_types(*(a.dtype for a in arrays))
    check_copyable_dtype(dtype, what)
    return dtype, False


def _joined_by_numpy(join, arrays, axis):
    """``join(arrays, axis=axis)`` of NumPy (``np.concatenate``, ``np.stack``) as a new
    C-contiguous array (NumPy's keeps its inputs' order: F-ordered inputs join F-ordered),
    or None where NumPy refuses them: the caller's checks then raise our error."""
    try:
        joined = join(arrays, axis=axis)
    except (ValueError, TypeError, OverflowError):  # AxisError is a ValueError; OverflowError:
        return None  # an axis beyond a C long
    return joined if joined.flags.c_contiguous else np.ascontiguousarray(joined)


def _copy_into(out, x) -> None:
    if out.dtype == x.dtype:
        rearrange_(out, x)
    else:
        _cast_into(out, x)


def concat(arrays, /, *, axis: int | None = 0):
    """Join arrays along an existing axis (``axis=None``: flattened): one launch per input.

    Parameters
    ----------
    arrays : sequence of Array or array
        Same shape except along ``axis``, on one device; their dtypes promote together.
    axis : int or None, default 0

    Returns
    -------
    Array or array
        A new C-contiguous array of the promoted dtype (an input of another dtype goes
        through the cast kernel).

    Raises
    ------
    ValueError
        No arrays, shapes that differ outside ``axis``, 0-d arrays, arrays on different devices.
    TypeError
        Dtypes that do not promote.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> a = xp.asarray([[1, 2]], device="emulator")
    >>> xp.concat([a, a + 2], axis=0)
    Array([[1, 2],
           [3, 4]], device='emulator')
    """
    arrays = tuple(arrays)
    dtype, numpy_joins = _result_dtype(arrays, "concat")
    if numpy_joins and axis is not None:  # the cpu device: NumPy's join, checked by NumPy
        joined = _joined_by_numpy(np.concatenate, arrays, axis)  # None for 0-d arrays too
        if joined is not None:
            return joined
    if axis is None:
        out = empty_on_device_of(arrays[0], (sum(a.size for a in arrays),), dtype)
        if numpy_joins:  # the cpu device: NumPy's copies into ours
            return np.concatenate(arrays, axis=None, out=out)
        start = 0
        for a in arrays:
            # a contiguous piece of out viewed in a's shape: a's elements land in C order
            _copy_into(out[start:start + a.size].reshape(a.shape), a)
            start += a.size
        return out
    ndim = arrays[0].ndim
    if ndim == 0:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated")
    axis = _normalize_axis(axis, ndim, "concat")
    for a in arrays:
        if a.ndim != ndim or any(
            n != m for d, (n, m) in enumerate(zip(a.shape, arrays[0].shape)) if d != axis
        ):
            raise ValueError(
                f"concat: shapes {[tuple(a.shape) for a in arrays]} differ outside axis {axis}"
            )
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = empty_on_device_of(arrays[0], tuple(shape), dtype)
    if numpy_joins:  # the cpu device: NumPy's copies into ours (C order)
        return np.concatenate(arrays, axis=axis, out=out)
    start = 0
    for a in arrays:
        index = [slice(None)] * ndim
        index[axis] = slice(start, start + a.shape[axis])
        _copy_into(out[tuple(index)], a)
        start += a.shape[axis]
    return out


def stack(arrays, /, *, axis: int = 0):
    """Join arrays of one shape along a new axis: one launch per input.

    Parameters
    ----------
    arrays : sequence of Array or array
        All of one shape, on one device; their dtypes promote together.
    axis : int, default 0

    Returns
    -------
    Array or array

    Raises
    ------
    ValueError
        No arrays, shapes that differ, arrays on different devices.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> a = xp.asarray([1, 2], device="emulator")
    >>> xp.stack([a, a * 10], axis=1)
    Array([[ 1, 10],
           [ 2, 20]], device='emulator')
    """
    arrays = tuple(arrays)
    dtype, numpy_joins = _result_dtype(arrays, "stack")
    if numpy_joins:  # the cpu device: NumPy's join, checked by NumPy
        joined = _joined_by_numpy(np.stack, arrays, axis)
        if joined is not None:
            return joined
    shape = tuple(arrays[0].shape)
    if any(tuple(a.shape) != shape for a in arrays):
        raise ValueError(f"stack: all shapes must agree, got {[tuple(a.shape) for a in arrays]}")
    axis = _normalize_axis(axis, len(shape) + 1, "stack")
    out = empty_on_device_of(arrays[0], shape[:axis] + (len(arrays),) + shape[axis:], dtype)
    if numpy_joins:  # the cpu device: NumPy's copies into ours (C order)
        return np.stack(arrays, axis=axis, out=out)
    for i, a in enumerate(arrays):
        # the trailing Ellipsis keeps a 0-d slot an array view (NumPy would give a scalar)
        _copy_into(out[(slice(None),) * axis + (i, Ellipsis)], a)
    return out


def tile(x, repetitions, /):
    """Repeat ``x`` along each axis: one launch from a broadcast view of ``x`` (on the
    ``cpu`` device NumPy's ``tile``, after the same checks).

    Parameters
    ----------
    x : Array or array
    repetitions : tuple of int
        Non-negative; shorter than ``x.ndim`` means leading ones.

    Returns
    -------
    Array or array

    Raises
    ------
    ValueError
        A negative repetition.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.tile(xp.asarray([1, 2], device="emulator"), (2, 2))
    Array([[1, 2, 1, 2],
           [1, 2, 1, 2]], device='emulator')
    """
    _check_array(x, "tile")
    reps = _int_tuple(repetitions, "tile", "repetitions")
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: repetitions must be non-negative, got {reps}")
    ndim = max(x.ndim, len(reps))
    full_reps = (1,) * (ndim - len(reps)) + reps
    shape = (1,) * (ndim - x.ndim) + tuple(x.shape)
    result = tuple(r * n for r, n in zip(full_reps, shape))
    _check_result_size(result, x.dtype, "tile")
    if backend_for(x) == "numpy":  # the cpu device: NumPy's tile, after our checks
        return np.tile(x, reps)
    reps = full_reps
    out = empty_on_device_of(x, result, x.dtype)
    # out viewed as (r0, n0, r1, n1, ...) is C-contiguous: a view; x broadcast over the r's
    interleaved = tuple(v for pair in zip(reps, shape) for v in pair)
    source = x.reshape(tuple(v for n in shape for v in (1, n)))
    rearrange_(out.reshape(interleaved), _library(x).broadcast_to(source, interleaved))
    return out


def repeat(x, repeats, /, *, axis: int | None = None):
    """Repeat each element.

    An integer count is one launch of our copy from a broadcast view (on the ``cpu`` device
    NumPy's ``repeat``, after the same checks); per-element counts (an array) have a
    data-dependent shape and are delegated to the array library's ``repeat`` (NumPy for
    ``cpu`` and the emulator, CuPy on a GPU).

    Parameters
    ----------
    x : Array or array
    repeats : int or Array
    axis : int, optional
        None: over the flattened ``x``.

    Returns
    -------
    Array or array

    Raises
    ------
    ValueError
        A negative count, or ``repeats`` on another device.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.repeat(xp.asarray([1, 2], device="emulator"), 2)
    Array([1, 1, 2, 2], device='emulator')
    """
    _check_array(x, "repeat")
    if is_array(repeats):
        backend_for(x, repeats)  # mixed devices: a clear error
        if repeats.dtype == np.uint64:  # any integer dtype (the standard); NumPy's and CuPy's
            repeats = repeats.astype(np.int64)  # repeat cast counts to intp 'safe'ly
        return _library(x).repeat(x, repeats, axis=axis)  # counts per element: library's
    repeats = _index(repeats, "repeat", "repeats")
    if repeats < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {repeats}")
    if axis is not None:
        axis = _normalize_axis(axis, x.ndim, "repeat")
    shape = tuple(x.shape)
    result = ((x.size * repeats,) if axis is None
              else shape[:axis] + (shape[axis] * repeats,) + shape[axis + 1:])
    _check_result_size(result, x.dtype, "repeat")
    if backend_for(x) == "numpy":  # the cpu device: NumPy's repeat, after our checks
        return np.repeat(x, repeats, axis=axis)
    out = empty_on_device_of(x, result, x.dtype)
    if axis is None:  # flattened: out viewed as (*x.shape, repeats), x broadcast on the last axis
        expanded, source = shape + (repeats,), x[..., None]
    else:
        expanded = shape[: axis + 1] + (repeats,) + shape[axis + 1:]
        source = x.reshape(shape[: axis + 1] + (1,) + shape[axis + 1:])
    rearrange_(out.reshape(expanded), _library(x).broadcast_to(source, expanded))
    return out


def roll(x, /, shift, *, axis=None):
    """Shift elements cyclically.

    For k rolled axes, 2**k block copies into a new array (``axis=None``: 2, plus one to
    flatten an ``x`` that is not C-contiguous).

    Parameters
    ----------
    x : Array or array
    shift : int or tuple of int
    axis : int, tuple of int or None
        None: roll the flattened array, then restore the shape.

    Returns
    -------
    Array or array

    Raises
    ------
    ValueError
        As many shifts as axes are needed; with ``axis=None`` one int shift.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.roll(xp.asarray([1, 2, 3, 4], device="emulator"), 1)
    Array([4, 1, 2, 3], device='emulator')
    """
    _check_array(x, "roll")
    if axis is None:
        if isinstance(shift, (tuple, list)):
            raise ValueError(f"roll: with axis=None, shift must be an int, got {shift}")
        return reshape(roll(reshape(x, (-1,)), shift, axis=0), x.shape)
    axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,)
    shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    total = {}
    for s, a in zip(shifts, axes):
        a = _normalize_axis(a, x.ndim, "roll")
        total[a] = total.get(a, 0) + _index(s, "roll", "shift")
    out = empty_on_device_of(x, tuple(x.shape), x.dtype)
    if x.size == 0:
        return out
    pieces = [((), ())]  # (destination slices, source slices) per axis so far
    for d in range(x.ndim):
        n = x.shape[d]
        s = total.get(d, 0) % n
        parts = [(slice(None), slice(None))] if s == 0 else [
            (slice(s, None), slice(None, n - s)), (slice(None, s), slice(n - s, None))]
        pieces = [(dst + (pd,), src + (ps,)) for dst, src in pieces for pd, ps in parts]
    # into a new array: on the cpu device NumPy's copy, no overlap for rearrange_ to plan for
    copy = np.copyto if backend_for(x) == "numpy" else rearrange_
    for dst, src in pieces:
        copy(out[dst], x[src])
    return out


def broadcast_shapes(*shapes):
    """The shape ``shapes`` broadcast together give (no kernel).

    Parameters
    ----------
    *shapes : tuple of int

    Returns
    -------
    tuple of int
        ``()`` for no shapes.

    Raises
    ------
    ValueError
        Shapes that do not broadcast, naming every shape.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.broadcast_shapes((3, 1), (1, 4))
    (3, 4)
    """
    shapes = [_int_tuple(s, "broadcast_shapes", "shapes") for s in shapes]
    return broadcast_shape_of("broadcast_shapes", *shapes)


def unstack(x, /, *, axis: int = 0):
    """Views, one per index along ``axis`` (0-d views of a 1-d ``x``, not scalars); no copy.

    Parameters
    ----------
    x : Array or array
        At least one dimension.
    axis : int, default 0

    Returns
    -------
    tuple of Array or array

    Raises
    ------
    ValueError
        A 0-d ``x``, or an axis out of range.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> xp.unstack(xp.asarray([[1, 2], [3, 4]], device="emulator"))
    (Array([1, 2], device='emulator'), Array([3, 4], device='emulator'))
    """
    _check_array(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack: x must have at least one dimension, got a 0-d array")
    axis = _normalize_axis(axis, x.ndim, "unstack")
    return tuple(x[(slice(None),) * axis + (i, Ellipsis)] for i in range(x.shape[axis]))


__all__ = ["rearrange", "ascontiguousarray", "asarray", "astype", "reshape", "concat", "stack",
           "tile", "repeat", "roll", "unstack", "broadcast_shapes"]
