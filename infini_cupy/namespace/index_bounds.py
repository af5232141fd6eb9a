"""Bounds of integer-array indices on a GPU, checked before CuPy sees them.

CuPy 14.2 wraps an out-of-range integer index array silently (``x[idx]``, ``x[idx] = v``,
``cupy.take`` and ``cupy.take_along_axis``: ``cupy/_core/_routines_indexing.pyx``, the
``cupy_take`` kernel's ``indices % index_range``, the scatter kernels' ``indices % adim``
and ``_prepare_array_indexing``'s floor modulo), where NumPy raises ``IndexError``. The
standard leaves out-of-bounds indices unspecified; the library refuses them as NumPy does
wherever that costs no wait for the GPU, and where the wrap would write to the wrong
elements:

- indices held on the host (lists, NumPy arrays): checked here, on the host, for ``x[idx]``,
  ``x[idx] = v``, ``take`` and ``take_along_axis`` (no launch, no synchronization);
- indices held on the GPU: checked for ``x[idx] = v``, ``take`` and ``take_along_axis``
  with two reductions (min and max) per index array and one wait for the stream to read them;
  ``x[idx]`` with a GPU index array is CuPy's alone (it wraps): checking it would make every
  gather wait for the GPU.

Errors are NumPy's: ``index 7 is out of bounds for axis 0 with size 3``, naming the first
offending value of the first offending index array in the key's order (NumPy's order).
"""

from __future__ import annotations

import operator

import numpy as np

from ..arrays import is_cupy_array


def _is_array(k) -> bool:
    return isinstance(k, np.ndarray) or is_cupy_array(k)


def _first_bad(host: np.ndarray, n: int):
    """The first value of ``host`` (C order) outside ``[-n, n)``, or None."""
    flat = host.ravel()
    bad = flat >= n if flat.dtype.kind == "u" else (flat < -n) | (flat >= n)
    if not bad.any():
        return None
    return flat[int(np.argmax(bad))]


def _out_of_bounds(value, axis: int, n: int) -> IndexError:
    return IndexError(f"index {value} is out of bounds for axis {axis} with size {n}")


def integer_arrays(key: tuple, ndim: int) -> list:
    """``(index, axis, on_host)`` for each integer index array of ``key`` (an item that is a
    list, a NumPy or a CuPy array of an integer dtype, 0-d included), with the axis of ``x``
    it indexes; ``[]`` for a key whose items consume more than ``ndim`` axes (the library
    raises for it) or that holds an item of no integer or boolean kind."""
    items = []
    consumed = 0
    for k in key:
        if k is None or k is Ellipsis:
            items.append((k, 0))
            continue
        if isinstance(k, list):
            try:
                k = np.asarray(k)
            except (ValueError, TypeError):  # ragged, or holding GPU arrays: the library's
                return []
            if k.size == 0:  # an empty list is no mask (CuPy's _prepare_slice_list)
                k = k.astype(np.intp)
        if _is_array(k):
            kind = k.dtype.kind
            if kind == "b":
                width = k.ndim
            elif kind in "iu":
                width = 1
            else:
                return []
        elif isinstance(k, (bool, np.bool_)):
            width = 0
        else:  # a slice, an integer
            width = 1
        items.append((k, width))
        consumed += width
    if consumed > ndim:
        return []
    found = []
    axis = 0
    for k, width in items:
        if k is Ellipsis:
            axis += ndim - consumed
            consumed = ndim  # a second Ellipsis: the library's IndexError
        elif k is not None and width and _is_array(k) and k.dtype.kind in "iu":
            found.append((k, axis, isinstance(k, np.ndarray)))
        axis += width
    return found


def check(key: tuple, shape: tuple, on_device: bool) -> None:
    """IndexError, as NumPy's, for an integer index array of ``key`` with a value outside
    ``[-n, n)`` for the size ``n`` of the axis of ``shape`` it indexes. Host-held arrays are
    checked on the host; GPU-held ones only with ``on_device`` (reductions and a wait)."""
    found = [(k, axis, shape[axis]) for k, axis, on_host in integer_arrays(key, len(shape))
             if on_host or on_device]
    if found:
        check_arrays(found)


def check_arrays(found: list) -> None:
    """``check`` of ``(index, axis, n)`` triples, in order: the GPU's reductions (min and
    max of each GPU-held array) queued first, then read with one wait for the stream."""
    extremes = [(k.min(), k.max()) if is_cupy_array(k) and k.size and n else None
                for k, axis, n in found]
    for (k, axis, n), ends in zip(found, extremes):
        if isinstance(k, np.ndarray):
            value = _first_bad(k, n)
        elif k.size == 0 or (ends is not None and -n <= int(ends[0]) and int(ends[1]) < n):
            value = None
        else:  # the error's path (an empty axis, or an index past it): values to the host
            value = _first_bad(k.get(), n)
        if value is not None:
            raise _out_of_bounds(value, axis, n)


def check_take(x, indices, axis) -> None:
    """``take(x, indices, axis=axis)``'s refusals as NumPy's: ``cannot do a non-empty take
    from an empty axes.`` for a non-empty result from an empty axis, else an index outside
    ``[-n, n)``. An axis out of range, or indices of no integer kind: the library's error."""
    ndim = x.ndim
    if axis is None:
        n, label, rest = x.size, 0, 1
    else:
        try:
            axis = operator.index(axis)
        except TypeError:
            return
        if not -max(ndim, 1) <= axis < max(ndim, 1):
            return
        label = axis % max(ndim, 1)
        n = x.shape[label] if ndim else 1
        rest = x.size // n if n else int(np.prod(x.shape[:label] + x.shape[label + 1:]))
    if not _is_array(indices):
        try:
            indices = np.asarray(indices)
        except ValueError:
            return
    if indices.dtype.kind not in "iu" or indices.size == 0:
        return
    if n == 0 and rest:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    check_arrays([(indices, label, n)])


def check_take_along_axis(x, indices, axis) -> None:
    """``take_along_axis(x, indices, axis=axis)``: an index outside ``[-n, n)`` for the size
    ``n`` of ``x`` along ``axis`` is NumPy's IndexError; other errors are the library's."""
    if not _is_array(indices) or indices.dtype.kind not in "iu" or indices.size == 0:
        return
    if axis is None:
        check_arrays([(indices, 0, x.size)])
        return
    try:
        axis = operator.index(axis)
    except TypeError:
        return
    if x.ndim == 0 or not -x.ndim <= axis < x.ndim or indices.ndim != x.ndim:
        return
    axis %= x.ndim
    check_arrays([(indices, axis, x.shape[axis])])
