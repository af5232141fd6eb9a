"""The keys a fused function's repeated calls are found by (:mod:`.fusion`): what a key
holds fixes everything a first call decided for those arguments, so a repeat checks per
call only what the key leaves open (pointers, ``out`` writeable, overlap).

- :func:`ids_into`: Arrays and scalars into an Array (runtime/hot_calls.c's ``fused_into``
  builds the same key in C);
- :func:`mixed_into`: Arrays, native arrays and scalars in any mix into an Array;
- :func:`layout_key`, :func:`key_into`: native arrays (and Arrays) by type, dtype, shape and
  strides;
- :func:`unfused_key`: a call NumPy computes with the function's own calls (the ``cpu``
  device): by the keys above where Arrays decide the device, else with the backend in
  force, which decides for native arrays alone.
"""

from __future__ import annotations

import numpy as np

from .. import config, dtypes
from .array import Array, settle

PYTHON_SCALARS = (bool, int, float, complex)
SCALAR_TYPES = frozenset(PYTHON_SCALARS) | frozenset(dt.type for dt in dtypes.ALL_DTYPES)
array_types: set = {np.ndarray}  # and cupy.ndarray, once a call ran on a GPU


def _into_key(args, out, natives: bool):
    """The key of a call into the Array ``out``: each Array's layout id (settled), each
    scalar's type, with ``natives`` each native array's type, dtype, shape and strides as
    one item, then ``out``'s layout id; None for any other argument or a pending Array."""
    if out._p is not None:
        return None
    key = []
    for a in args:
        kind = type(a)
        if kind is Array:
            if a._p is not None:
                return None
            key.append(a._k or settle(a))
        elif kind in SCALAR_TYPES:
            key.append(kind)
        elif natives and kind in array_types:
            key.append((kind, a.dtype, a.shape, a.strides))
        else:
            return None
    key.append(out._k or settle(out))
    return tuple(key)


def ids_into(args, out):
    """The key of a call of Arrays and scalars into the Array ``out``, or None for any other."""
    return _into_key(args, out, False)


def mixed_into(args, out):
    """The key of a call into the Array ``out`` of Arrays, native arrays and scalars, or None
    for any other argument. ``out``, an Array, names the backend (the native arrays are its
    device's)."""
    return _into_key(args, out, True)


def layout_key(args):
    """Each argument's layout: an Array's backend, dtype, shape and strides, a native
    array's type, dtype, shape and strides, a scalar's type, an option (None, a string)
    itself; None for any other argument."""
    key = []
    for a in args:
        kind = type(a)
        if kind is Array:
            key += (a._b, a._a.dtype, a._a.shape, a._a.strides)
        elif kind in SCALAR_TYPES:
            key.append(kind)
        elif kind in array_types:
            key += (kind, a.dtype, a.shape, a.strides)
        elif a is None or kind is str:
            key.append((kind, a))
        else:
            return None
    return tuple(key)


def key_into(args, out):
    """The layout key of a call into the native array ``out``: :func:`layout_key`'s, then
    ``out``'s type, dtype, shape and strides (``fused_out.into_record`` keeps records of
    native arrays alone)."""
    key = layout_key(args)
    return None if key is None else (*key, type(out), out.dtype, out.shape, out.strides)


def unfused_key(args, out):
    """The key under which a call the ``cpu`` device computes with the function's own calls
    is remembered (``FusedFunction._unfused_calls`` without ``out``, ``_unfused_into`` with
    it): without ``out``, of Arrays and scalars, their layout ids and types (the Arrays say
    where it runs); into an Array, :func:`mixed_into` (``out`` says); else the backend in
    force (it decides where native arrays run), :func:`layout_key` of the arguments and
    ``out``'s layout. None for any other argument or a deferred Array."""
    if out is None:
        key = []
        for a in args:
            kind = type(a)
            if kind is Array:
                if a._p is not None:
                    break
                key.append(a._k or settle(a))
            elif kind in SCALAR_TYPES:
                key.append(kind)
            else:
                break
        else:
            return tuple(key)
    elif type(out) is Array:
        key = mixed_into(args, out)
        if key is not None or out._p is not None:
            return key
    key = layout_key(args)
    if key is None:
        return None
    if out is None:
        return (config.get_backend(), *key)
    if type(out) is Array:
        return (config.get_backend(), *key, out._b, out._a.dtype, out._a.shape,
                out._a.strides)
    if type(out) in array_types:
        return (config.get_backend(), *key, type(out), out.dtype, out.shape, out.strides)
    return None
