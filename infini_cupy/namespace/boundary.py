"""The namespace's boundary: every public function, compiled from the standard's signature
around its implementation on native arrays; Arrays in, Arrays out, NumPy scalars as 0-d
arrays.

The implementations (:mod:`.elementwise_functions`, :mod:`.data_movement`, :mod:`.delegated`)
take NumPy and CuPy arrays. Each public function checks its array parameters: given an
:class:`~.array.Array`, it unwraps it, runs the implementation on the Array's backend and
wraps what comes back on the same device; given native arrays it calls the implementation
with them and returns what it returns (the kind it was given). NumPy scalars (what NumPy gives
for 0-d results) become 0-d arrays on the way in. Creation functions always return Arrays,
on ``device`` (None: the backend in force).

Functions other than the elementwise ones are compiled from :mod:`.signatures` (``exec`` of a
``def`` with the standard's parameter list), so ``inspect.signature`` reports the standard's
and positional-only and keyword-only markers are enforced; the elementwise functions use two
hand-written templates, the hot path of the namespace.

>>> import numpy as np, infini_cupy as xp
>>> type(xp.sum(np.arange(3.0))).__name__, type(xp.sum(xp.asarray([1.0, 2.0]))).__name__
('ndarray', 'Array')
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import types

import numpy as np

from ..arrays import check_plain_buffer, current_allocator as _current_allocator
from ..arrays import is_array, type_name
from ..arrays import data_pointer as _data_pointer
from ..config import enter_backend, exit_backend, get_backend
from ..arrays import backend_for  # noqa: I001
from ..strided.copy import (learn_compiled_copy as _learn_compiled_copy,
                            rearrange_ as _native_rearrange_, short_rearrange_ as _short_rearrange_,
                            short_rearrange_ids as _short_rearrange_ids)
from . import (cpu_direct, cpu_direct_delegated, data_movement, delegated,
               elementwise_functions, extension_dtypes, extensions, signatures, type_queries)
from . import device as devices
from . import lazy as _lazy
from . import lazy_special_calls
from . import lazy_tape as _lazy_tape
from . import pending as _pending
from .data_movement import _checked_casts
from .array import (Array, check_same_device, learn_out_id as _learn_out_id, settle, wrap,
                    wrap_result)
from .. import config as _config
from ..dtypes import HELD_DTYPES, int_in_int64
from ..arrays import _allocator as _allocator_var
from ..config import lazy_enabled
from ..elementwise.kernels import SOURCE as _elementwise_source
from ..runtime import native as _native
from ..runtime.cuda_compiled import MECHANISM as _COMPILED_LAUNCH
from ..runtime.launch import _hooks as _launch_hooks, launch as _launch
from ..elementwise import numpy_backend as _numpy_backend
from ..elementwise.trace import Traced as _Traced
from ..elementwise.numpy_backend import (repeat as _cpu_repeat,
                                         repeat_into as _cpu_repeat_into)
from ..elementwise.short_path import (SCALAR_TYPES as _HOT_SCALARS, by_ids as _by_ids,
                                      compiled_launch_record as _compiled_launch_record,
                                      hot_known as _hot_known, into_by_ids as _into_by_ids,
                                      known_into as _known_into, run as _run)

_SPECIAL = (Array, np.generic)
_NUMERIC_KINDS = "biufc"  # what asarray takes as it is (bfloat16, kind V: the full call)


def _take(value, backend):
    """(native value, backend) for an Array or a NumPy scalar among the array arguments."""
    if type(value) is Array:
        if backend is not None:
            check_same_device(backend, value._b)
        return value._a, value._b
    return np.asarray(value), backend  # a NumPy scalar is a 0-d array


def _take_all(values, backend):
    """``_take`` over a sequence of arrays (concat's list, meshgrid's ``*arrays``)."""
    if not any(isinstance(v, _SPECIAL) for v in values):
        return values, backend
    out = []
    for v in values:
        if isinstance(v, _SPECIAL):
            v, backend = _take(v, backend)
        out.append(v)
    return (type(values)(out) if type(values) in (list, tuple) else out), backend


# (backend, the library's device) of the CPU's devices, by kind (their names: they have no
# index). Str keys: a str compares with them in C, where Device keys would compare through
# Device.__eq__ (a Python call, a third of asarray(a, device="cpu")).
_ON_CPU = {d.kind: (d.backend, d.native()) for d in (devices.CPU, devices.EMULATOR)}
_ELSEWHERE = (None, None)


def _on_cpu(device) -> tuple:
    """(backend, the library's device) for ``cpu`` or ``emulator`` (a name or a Device),
    (None, None) for any other value."""
    kind = type(device)
    if kind is str:
        return _ON_CPU.get(device, _ELSEWHERE)
    if kind is devices.Device:
        return _ON_CPU.get(device.kind, _ELSEWHERE)  # a GPU's kind is cuda
    return _ELSEWHERE


def _device(device):
    """(backend, the library's device) for a ``device=`` argument; (None, None) for None."""
    if device is None:
        return _ELSEWHERE
    known = _on_cpu(device)
    if known[0] is not None:
        return known
    d = devices.parse(device)
    return d.backend, d.native()


def _wrap_in_force(result):
    """A creation function's result, given no Array and no device, on the backend in force;
    a NumPy array under the ``cuda`` backend (``from_dlpack`` of a host producer: the
    producer's device) on ``cpu``."""
    backend = get_backend()
    if backend == "cuda" and type(result) is np.ndarray:
        backend = "numpy"
    return wrap_result(result, backend)


# What an array parameter takes besides Arrays, NumPy scalars and native arrays: Python
# scalars and sequences, NumPy's array-likes (None only where it is the default), and the
# arrays of a function infini_cupy.fuse traces
_OPERAND_TYPES = frozenset({bool, int, float, complex, list, tuple, _Traced})
_OPERAND_TYPES_OR_NONE = _OPERAND_TYPES | {type(None)}
# array parameters that take other things too (dtypes: can_cast's from_, finfo's type)
_NOT_OPERANDS = frozenset({"from_", "type", "out"})


def _refuse_operand(value, function: str, parameter: str):
    """TypeError for an array parameter given none of the kinds an array can come as (None,
    a str, a dict, another library's array): the implementation would raise AttributeError
    or compute on it (``all("abc")``), or hand back the other library's array."""
    hint = (": convert it first (asarray, from_dlpack)"
            if hasattr(value, "__dlpack__") or hasattr(value, "__array__") else "")
    raise TypeError(f"{function}() takes an array for {parameter}; got {type_name(value)}{hint}")


def _refuse_array_dtype(value, function: str):
    raise TypeError(f"{function}(): dtype must be a dtype, got an array ({type_name(value)} of "
                    f"dtype {value.dtype}): pass its .dtype")


_GLOBALS = {"_SPECIAL": _SPECIAL, "_nd": np.ndarray, "_type": type,  # finfo's "type" parameter
            "_check_plain": check_plain_buffer, "_Array": Array, "_take": _take, "_take_all": _take_all,
            "_device": _device, "_enter": enter_backend, "_exit": exit_backend,
            "_wrap_result": wrap_result, "_get_backend": get_backend, "_pending": _pending,
            "_wrap_in_force": _wrap_in_force, "_is_array": is_array,
            "_refuse_operand": _refuse_operand, "_refuse_array_dtype": _refuse_array_dtype, "_OPERAND_TYPES": _OPERAND_TYPES,
            "_OPERAND_TYPES_OR_NONE": _OPERAND_TYPES_OR_NONE}


def compile_function(name: str, params: str, arrays: str, impl, creation: bool = False):
    """The public ``name(params)``: unwraps ``arrays`` parameters, calls ``impl`` and wraps.

    ``arrays`` names the array parameters: ``x`` (an Array or a NumPy scalar, taken as a 0-d
    array), ``~x`` (an Array; a NumPy scalar passes as it is), ``[xs]``/``*xs`` (sequences),
    ``?x`` (an array or a sequence of arrays).

    ``impl`` is called with positional-only parameters by position and the others by
    keyword, under the standard's names.
    """
    scope = {}
    exec(f"def {name}({params}): pass", scope)  # noqa: S102 - our own table, not user input
    parameters = inspect.signature(scope[name]).parameters
    call = _call(parameters.values())
    # Keyword-only arguments left at a None/True/False default are not passed on: NumPy takes
    # a slower path for explicit defaults (sum(x) 11 us, sum(x, axis=None, ...) 14 us).
    omitted = [p for p in parameters.values() if p.kind is p.KEYWORD_ONLY
               and any(p.default is v for v in (None, True, False)) and p.name != "device"]
    if omitted:
        at_defaults = " and ".join(f"{p.name} is {p.default!r}" for p in omitted)
        call = (f"_impl({_call(p for p in parameters.values() if p not in omitted)}) "
                f"if {at_defaults} else _impl({call})")
    else:
        call = f"_impl({call})"
    names = arrays.split()
    lines = [f"def {name}({params}):", "    _b = None"]
    # the first array given back as it came (astype(x, x.dtype, copy=False), asarray(x),
    # ascontiguousarray of a contiguous x): x itself, as the standard asks, not a new Array
    first = names[0] if names and names[0].isidentifier() and names[0] != "out" else None
    if first:
        lines.append(f"    _x0 = {first}")
    for a in names:
        if a == "out":
            lines += ["    if out is not None and _pending.expressions: "
                      f"_pending.evaluate_all({name + '(out=...)'!r})",
                      "    _out = out",
                      "    if type(out) is _Array: out, _b = _take(out, _b)",
                      "    elif out is not None and not _is_array(out): "
                      f"_refuse_operand(out, {name!r}, 'out')"]
        elif a[0] in "[*":
            lines.append(f"    {a.strip('[]*')}, _b = _take_all({a.strip('[]*')}, _b)")
        elif a[0] == "?":  # an array or a sequence of them
            lines.append(f"    if isinstance({a[1:]}, (list, tuple)): "
                         f"{a[1:]}, _b = _take_all({a[1:]}, _b)")
            lines.append(f"    elif isinstance({a[1:]}, _SPECIAL): {a[1:]}, _b = _take({a[1:]}, _b)")
        elif a[0] == "~":  # Arrays unwrapped, NumPy scalars left to go by value (clip bounds)
            lines.append(f"    if type({a[1:]}) is _Array: {a[1:]}, _b = _take({a[1:]}, _b)")
        else:
            lines.append(f"    if isinstance({a}, _SPECIAL): {a}, _b = _take({a}, _b)")
        if a[0] not in "[*":  # masked and unit-carrying arrays: refused, naming the function
            p = a.lstrip("~?")
            lines.append(f"    elif _type({p}) is not _nd and isinstance({p}, _nd): "
                         f"_check_plain({p}, {name!r})")
            if a == p and p not in _NOT_OPERANDS:
                kinds = ("_OPERAND_TYPES_OR_NONE" if parameters[p].default is None
                         else "_OPERAND_TYPES")
                lines.append(f"    elif _type({p}) is not _nd and _type({p}) not in {kinds} "
                             f"and not _is_array({p}): _refuse_operand({p}, {name!r}, {p!r})")
    result_backend = "_b"
    if "dtype" in parameters:  # NumPy reads an Array's .dtype attribute: dtype=x was taken
        lines.append("    if dtype is not None and (_type(dtype) is _Array or _is_array(dtype)): "
                     f"_refuse_array_dtype(dtype, {name!r})")
    if "device" in parameters:
        lines.append("    _db, device = _device(device)")
        result_backend = "_db or _b"
    if creation and "device" in parameters:  # no Array, no device: the backend in force
        lines += ["    if _b is None:",
                  f"        if _db is None: return _wrap_in_force({call})",
                  "        _b = _db"]
    elif creation:
        lines.append("    if _b is None: _b = _get_backend()")
    else:
        lines.append(f"    if _b is None: return {call}")
    lines += ["    _t = _enter(_b)",
              "    try:",
              f"        _r = {call}",
              "    finally:",
              "        _exit(_t)"]
    if "out" in names:
        lines.append("    if type(_out) is _Array: return _out")
    if first:
        lines.append(f"    if _r is {first} and type(_x0) is _Array and _x0._b == "
                     f"({result_backend}): return _x0")
    lines.append(f"    return _wrap_result(_r, {result_backend})")
    scope = dict(_GLOBALS, _impl=impl)
    # named as a file of the package: tracebacks say whose wrapper it is, and a warning's
    # stacklevel walks past it as past our other frames (numpy_casts.warn_if_complex_to_real)
    where = os.path.join(os.path.dirname(__file__), f"<wrapper of {name}>")
    exec(compile("\n".join(lines), where, "exec"), scope)  # noqa: S102
    return _named(scope[name], impl)


def _call(parameters) -> str:
    """The argument list passing ``parameters`` on: by position where positional-only."""
    return ", ".join(
        p.name if p.kind is p.POSITIONAL_ONLY
        else f"*{p.name}" if p.kind is p.VAR_POSITIONAL
        else f"**{p.name}" if p.kind is p.VAR_KEYWORD
        else f"{p.name}={p.name}"
        for p in parameters)


def _named(function, impl):
    function.__module__ = "infini_cupy"
    function.__doc__ = impl.__doc__
    return function


# ---- the elementwise functions: two templates, the namespace's hot path

def call_unary(impl, x, out):
    """``impl(x, out=out)`` for an Array ``x`` and/or ``out``: on their backend, wrapped."""
    b = None
    if type(x) is Array:
        b, x = x._b, x._a
    o = out
    if type(out) is Array:
        if b is not None:
            check_same_device(b, out._b)
        b, o = out._b, out._a
    t = enter_backend(b)
    try:
        r = impl(x, out=o)
    finally:
        exit_backend(t)
    return out if type(out) is Array else wrap(r, b)


def call_binary(impl, x1, x2, out):
    """``impl(x1, x2, out=out)`` where any of them is an Array: on their backend, wrapped."""
    b = None
    if type(x1) is Array:
        b, x1 = x1._b, x1._a
    if type(x2) is Array:
        if b is not None and b != x2._b:
            check_same_device(b, x2._b)
        b, x2 = x2._b, x2._a
    o = out
    if type(out) is Array:
        if b is not None:
            check_same_device(b, out._b)
        b, o = out._b, out._a
    t = enter_backend(b)
    try:
        r = impl(x1, x2, out=o)
    finally:
        exit_backend(t)
    return out if type(out) is Array else wrap(r, b)


def elementwise_operands(values):
    """The elementwise functions' operand rule for any number of operands (``call_unary`` and
    ``call_binary`` are its unrolled forms, the namespace's hot path; ``infini_cupy.fuse``
    takes its arguments through here): Arrays unwrapped, all of one device (ValueError
    naming both otherwise); native arrays, NumPy and Python scalars as they are.

    Returns (natives, backend, wrapped): ``backend`` is the backend the call runs on (the Arrays'
    device when an Array is among them, else the native arrays', as ``backend_for`` decides
    under the Arrays' backend: a NumPy array beside a GPU Array is a ValueError naming both
    devices) and ``wrapped`` says whether results are Arrays.

    >>> import numpy as np, infini_cupy as xp
    >>> elementwise_operands((xp.asarray([1.0], device="emulator"), np.ones(1), 2.0))[1:]
    ('emulate', True)
    """
    b, natives = None, []
    for v in values:
        if type(v) is Array:
            if b is not None and b != v._b:
                check_same_device(b, v._b)
            b = v._b
            v = v._a
        natives.append(v)
    if b is None:
        return natives, backend_for(*natives), False
    t = enter_backend(b)
    try:
        backend = backend_for(*natives)
    finally:
        exit_backend(t)
    return natives, backend, True


_new = object.__new__


def _learn(key, name, b, natives):
    """The plan of a hot call not yet under ``key`` (its Arrays' layout ids): the one
    remembered under the full key (short_path._hot), kept under ``key``; None if none."""
    known = _hot_known(name, b, natives)
    if known is not None:
        _by_ids.remember(key, known)
        if not _compiled_module:
            compiled_hot_calls()
    return known


def _settled_output(native, b, known):
    """An Array over the output of the remembered plan ``known`` (``short_path.run``: a GPU's
    call, or one of several launches), settled as it is made: its data pointer and the plan's
    layout id, unless another allocator made it (``arrays.outputs_from``: its layout is the
    allocator's, settled when it is next read)."""
    a = wrap(native, b)
    if _current_allocator() is None:
        a._d = _data_pointer(native)
        a._k = known.out_id or _learn_out_id(known, native, b)
    return a


def _into(name, operands, out):
    """The hot path of ``name(*operands, out=out)``, ``out`` an Array (``out=``, the in-place
    operators): keyed by the name, each operand's layout id (Arrays of ``out``'s device) or
    scalar type, and ``out``'s layout id; ``short_path.run`` makes every per-call check of
    ``out`` (writeable, aligned, overlapping no input but in its very layout) with the
    settled Arrays' pointers. Returns ``out``, or None (nothing written) for the full way."""
    b = out._b
    if out._p is not None:
        return None
    if b == "numpy":
        return _cpu_into(name, operands, out)
    key, natives, addresses = [name], [], [0, 0, 0]
    for k, x in enumerate(operands):
        kind = type(x)
        if kind is Array:
            if x._b != b or x._p is not None:
                return None
            key.append(x._k or settle(x))
            natives.append(x._a)
            addresses[k] = x._d
        elif kind in _HOT_SCALARS:
            key.append(kind)
            natives.append(x)
        else:
            return None
    key.append(out._k or settle(out))
    key = tuple(key)
    known = _into_by_ids.get(key)
    if known is None:
        known = _known_into(name, natives, out._a)
        if known is None:
            return None
        _into_by_ids.remember(key, known)
        if not _compiled_module:
            compiled_hot_calls()
    done = _run_into(known, natives, out._a, b, (addresses, out._d))
    return None if done is None else out


def _cpu_result(native) -> Array:
    """The Array of a cpu device's repeat (what numpy_backend.call learnt for the types:
    numpy_backend.repeat); the first such repeat loads the compiled hot path, which takes the
    next ones (runtime/cpu_calls.c)."""
    if not _compiled_module:
        compiled_hot_calls()
    return wrap(native, "numpy")


def _cpu_into(name, operands, out):
    """``_into`` on the cpu device: what ``numpy_backend.call`` learnt for the types, into
    ``out`` (numpy_backend.repeat_into); None, nothing written, for the full way."""
    key, natives = [name], []
    for x in operands:
        kind = type(x)
        if kind is Array:
            if x._b != "numpy" or x._p is not None:
                return None
            x = x._a
            key.append(x.dtype)
        elif kind in _HOT_SCALARS:
            key.append(kind)
        else:
            return None
        natives.append(x)
    key.append(out._a.dtype)
    if not _cpu_repeat_into(tuple(key), natives, out._a):
        return None
    if not _compiled_module:
        compiled_hot_calls()
    return out


def _run_into(known, natives, out, b, read):
    """``short_path.run`` of a call into ``out`` (a native array), and on a GPU under the
    compiled launch the plan's launch record for the next call (hot_calls.c's ``into``)."""
    done = _run(known, natives, out, b, read)
    if done is not None and known.on_gpu and _config.launch_in_force[0] == _COMPILED_LAUNCH:
        known.compiled_launch = _compiled_launch_record(known)
    return done


def _finish(known, natives, addresses, b):
    """The hot call of the remembered plan ``known`` on ``natives`` (their data pointers
    ``addresses``): known.fast (the emulator) or short_path.run, its output an Array settled
    with its pointer and the plan's layout id; None, nothing written, for the full way."""
    fast = known.fast
    if fast is None:
        r = _run(known, natives, None, b)
        if r is None:
            return None
        if known.on_gpu and _config.launch_in_force[0] == _COMPILED_LAUNCH:  # C takes the next call
            known.compiled_launch = _compiled_launch_record(known)
        return _settled_output(r, b, known)
    result = fast(natives, addresses)
    if result is None:
        return None
    r = _new(Array)
    r._a, address = result
    r._b, r._p = b, None
    if address is None:
        r._k = None
    else:
        r._d = address
        r._k = known.out_id or _learn_out_id(known, r._a, b)
    return r


# The compiled hot path (runtime/hot_calls.c): [unary, binary, into, fused, rearrange,
# fused_into, evaluate_seen] once loaded, Nones where it cannot be built; tried at the first
# plan found by layout ids (_learn, _into, FusedFunction.__call__ with and without out=, a
# GPU's rearrange_ under the compiled launch). pending.evaluate_all reads it too.
compiled_calls: list = [None] * 7
_pending.compiled_calls = compiled_calls
_compiled_module: list = []  # [the configured module, or None] once tried


def compiled_hot_calls():
    """``runtime/hot_calls.c`` built, loaded and configured with this namespace's Array,
    memos and hooks, or None where it cannot be built (``runtime.native``)."""
    if not _compiled_module:
        module = _native.hot_calls()
        if module is not None:
            read_only = np.empty(1)
            read_only.flags.writeable = False
            module.configure(Array, _by_ids, _HOT_SCALARS, _config._lazy, _allocator_var,
                             _launch_hooks, _launch, np.empty, settle, _learn_out_id,
                             _finish, _elementwise_source, "numpy", _into_by_ids,
                             np.empty(1), read_only, _run_into)
            if _numpy_backend.ERRSTATE is not None:  # the cpu device's repeats
                module.configure_cpu(_numpy_backend.plain_calls, _numpy_backend.plain_calls_into,
                                     *_numpy_backend.ERRSTATE, np.asarray, read_only)
            # inside lazy(), unary and binary defer a call of a chain seen before
            module.configure_lazy(vars(_pending), _lazy_tape.PendingExpression, _lazy_tape.Tape,
                                  _lazy_tape.ChainState, _pending.lock, _pending.register_seen,
                                  _lazy.DEFERRED_SCALARS, _config._lazy, _pending._log)
            compiled_calls[:] = [module.unary, module.binary, module.into, module.fused,
                                 module.rearrange, module.fused_into, module.evaluate_seen]
        _compiled_module.append(module)
    return _compiled_module[0]


@contextlib.contextmanager
def python_hot_path():
    """The Python hot path alone inside the block (the compiled one set aside; tests and
    the bench compare the two)."""
    compiled_hot_calls()  # loaded first: a plan learnt inside would load it
    saved = compiled_calls[:]
    compiled_calls[:] = [None] * len(saved)
    try:
        yield
    finally:
        compiled_calls[:] = saved


def _unary(impl):
    name = impl.__name__

    def function(x, /, *, out=None):
        if type(x) is Array and out is None:  # the hot path
            compiled = compiled_calls[0]
            if compiled is not None:
                r = compiled(name, x)
                if r is not None:
                    return r
            if not lazy_enabled():
                b = x._b
                if b != "numpy":
                    key = (name, x._k or settle(x))
                    natives = (x._a,)
                    known = _by_ids.get(key) or _learn(key, name, b, natives)
                    if known is not None:
                        r = _finish(known, natives, (x._d,), b)
                        if r is not None:
                            return r
                else:  # the cpu device: what numpy_backend.call learnt for the types
                    r = _cpu_repeat((name, x._a.dtype), (x._a,))
                    if r is not None:
                        return _cpu_result(r)
        elif type(out) is Array and not _pending.expressions and not lazy_enabled():
            compiled = compiled_calls[2]
            if compiled is not None and compiled(name, x, out) is not None:
                return out
            if _into(name, (x,), out) is not None:
                return out
        if out is not None and _pending.expressions:  # a write: pending reads go first
            _pending.evaluate_all(f"{name}(out=...)")
        if type(x) is Array or type(out) is Array:
            if out is None and lazy_enabled():
                r = _lazy.defer(name, (x,))
                if r is not None:
                    return r
            return call_unary(impl, x, out)
        return impl(x, out=out)

    return function


def _binary(impl):
    name = impl.__name__

    def function(x1, x2, /, *, out=None):
        if out is None:  # the hot path
            compiled = compiled_calls[1]
            if compiled is not None:
                r = compiled(name, x1, x2)
                if r is not None:
                    return r
            key = None
            if not lazy_enabled():
                if type(x1) is Array:
                    b = x1._b
                    if type(x2) is Array:
                        if x2._b == b != "numpy":
                            key = (name, x1._k or settle(x1), x2._k or settle(x2))
                            natives, addresses = (x1._a, x2._a), (x1._d, x2._d)
                        elif x2._b == b:  # the cpu device (below for each kind of call)
                            r = _cpu_repeat((name, x1._a.dtype, x2._a.dtype), (x1._a, x2._a))
                            if r is not None:
                                return _cpu_result(r)
                    elif type(x2) in _HOT_SCALARS:
                        if b != "numpy":
                            key = (name, x1._k or settle(x1), type(x2))
                            natives, addresses = (x1._a, x2), (x1._d, 0)
                        else:
                            r = _cpu_repeat((name, x1._a.dtype, type(x2)), (x1._a, x2))
                            if r is not None:
                                return _cpu_result(r)
                elif type(x2) is Array and type(x1) in _HOT_SCALARS:
                    b = x2._b
                    if b != "numpy":
                        key = (name, type(x1), x2._k or settle(x2))
                        natives, addresses = (x1, x2._a), (0, x2._d)
                    else:
                        r = _cpu_repeat((name, type(x1), x2._a.dtype), (x1, x2._a))
                        if r is not None:
                            return _cpu_result(r)
            if key is not None:
                known = _by_ids.get(key) or _learn(key, name, b, natives)
                if known is not None:
                    r = _finish(known, natives, addresses, b)
                    if r is not None:
                        return r
        elif type(out) is Array and not _pending.expressions and not lazy_enabled():
            compiled = compiled_calls[2]
            if compiled is not None and compiled(name, x1, x2, out) is not None:
                return out
            if _into(name, (x1, x2), out) is not None:
                return out
        if out is not None and _pending.expressions:  # a write: pending reads go first
            _pending.evaluate_all(f"{name}(out=...)")
        if type(x1) is Array or type(x2) is Array or type(out) is Array:
            if out is None and lazy_enabled():
                r = _lazy.defer(name, (x1, x2))
                if r is not None:
                    return r
            return call_binary(impl, x1, x2, out)
        return impl(x1, x2, out=out)

    return function


def _elementwise(name: str, impl):
    function = (_unary if "x2" not in inspect.signature(impl).parameters else _binary)(impl)
    function.__name__ = function.__qualname__ = name
    return _named(function, impl)


def rearrange_(y, x):
    """Copy ``x`` into the existing array ``y``: one launch of our strided copy.

    Parameters
    ----------
    y : Array or array
        The destination: ``x``'s shape and dtype, any layout that does not overlap itself
        (negative strides included).
    x : Array or array
        The source: any layout, zero strides (broadcasts) and overlap with ``y`` included
        (the source is read as it was).

    Returns
    -------
    Array or array
        ``y``.

    Raises
    ------
    ValueError
        Shapes that differ, a ``y`` that overlaps itself, arrays on different devices.
    TypeError
        Dtypes that differ, or a dtype our kernels do not copy.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> y = xp.zeros((3, 2), dtype=xp.int64, device="emulator")
    >>> x = xp.asarray([[1, 2, 3], [4, 5, 6]], device="emulator")
    >>> xp.rearrange_(y.T, x)           # x written into y's transposed view
    Array([[1, 2, 3],
           [4, 5, 6]], device='emulator')
    >>> y
    Array([[1, 4],
           [2, 5],
           [3, 6]], device='emulator')
    """
    if _pending.expressions:  # a write: pending expressions read the memory as it was
        _pending.evaluate_all("rearrange_()")
    if type(y) is Array and type(x) is Array:  # the hot path: a layout planned before
        b = y._b
        if b == "emulate" and x._b == b:  # keyed by the Arrays' layout ids
            if _short_rearrange_ids(y._a, x._a, y._k or settle(y), x._k or settle(x), y._d,
                                    x._d):
                return y
        elif x._b == b != "numpy":  # a GPU's Arrays
            compiled = compiled_calls[4]  # the compiled launch's copy (hot_calls.rearrange)
            if compiled is not None and compiled(y, x):
                return y
            if _short_rearrange_(y._a, x._a, b):
                if _config.launch_in_force[0] == _COMPILED_LAUNCH:  # C takes the next call
                    _learn_compiled_copy(y._a, x._a, y._k or settle(y), x._k or settle(x),
                                         y._d, x._d)
                    if not _compiled_module:
                        compiled_hot_calls()
                return y
    b = None
    if type(y) is Array:
        b = y._b
        y_native = y._a
    else:
        y_native = y
    if type(x) is Array:
        if b is not None:
            check_same_device(b, x._b)
        b, x = x._b, x._a
    if b is None:
        return _native_rearrange_(y_native, x)
    t = enter_backend(b)
    try:
        _native_rearrange_(y_native, x)
    finally:
        exit_backend(t)
    return y


rearrange_.__module__ = "infini_cupy"


# ---- the whole namespace

def _implementation(name: str):
    # extension_dtypes before delegated: its result_type, isdtype, finfo know bfloat16
    for module in (elementwise_functions, data_movement, extension_dtypes, delegated):
        if name in module.__all__:
            return getattr(module, name)
    raise AssertionError(f"no implementation of {name}")  # pragma: no cover - a table typo


def _submodule(name: str, table: dict, impls, public: dict,
               overrides: dict | None = None) -> types.ModuleType:
    """The submodule ``name`` of ``impls``' functions, ``overrides``' where it has them."""
    module = types.ModuleType(f"infini_cupy.{name}", f"The array API ``{name}`` extension.")
    overrides = overrides or {}
    for function in impls.__all__:
        if function in public and function not in table:  # matmul, ...: the namespace's own
            setattr(module, function, public[function])
        else:
            params, arrays = table[function]
            setattr(module, function, compile_function(
                function, params, arrays, overrides.get(function, getattr(impls, function)),
                creation=function in signatures.CREATION))
    module.__all__ = list(impls.__all__)
    # registered so that ``import infini_cupy.linalg`` finds this module
    sys.modules[module.__name__] = module
    return module


def _add_extensions(public: dict) -> None:
    """NumPy's functions beyond the standard, and NumPy's extra keywords on the standard's
    (:mod:`.extensions`); ``round(x)`` keeps the elementwise template's path."""
    for name, (params, arrays) in {**extensions.FUNCTIONS, **extensions.KEYWORDS}.items():
        compiled = compile_function(name, params, arrays, getattr(extensions, name))
        public[name] = _decimals(public[name], compiled) if name == "round" else compiled
    # lib.stride_tricks: where NumPy and CuPy keep sliding_window_view
    tricks = types.ModuleType("infini_cupy.lib.stride_tricks", "NumPy's ``lib.stride_tricks``: views.")
    for name in extensions.STRIDE_TRICKS:
        setattr(tricks, name, public.pop(name))
    tricks.__all__ = list(extensions.STRIDE_TRICKS)
    lib = types.ModuleType("infini_cupy.lib", "NumPy's ``lib``: ``stride_tricks``, an extension.")
    lib.stride_tricks, lib.__all__ = tricks, ["stride_tricks"]
    sys.modules.update({lib.__name__: lib, tricks.__name__: tricks})
    public["lib"] = lib


def _decimals(standard, with_decimals):
    def round(x, /, decimals=0, *, out=None):
        if decimals == 0:
            return standard(x, out=out)
        return with_decimals(x, decimals, out=out)

    return _named(round, extensions.round)


def _as_is(asarray):
    """The public ``asarray``, giving an Array of the asked dtype on its own device back as it
    is (NumPy's ``asarray`` gives back its array): generic code calls ``xp.asarray`` on its
    inputs at every call."""

    def as_array(obj, /, *, dtype=None, device=None, copy=None):
        kind = type(obj)
        if kind is Array:  # on its own device, of its dtype: as it is
            if (copy is not True and (dtype is None or dtype == obj.dtype)
                    and (device is None or _on_cpu(device)[0] == obj._b)):
                return obj
            if copy is True and dtype is None and device is None and obj._b == "numpy":
                native = obj._a
                if _checked_casts.get((native.dtype, native.dtype)) == native.dtype:
                    # the full call's astype(x, x.dtype, copy=True), its checks passed for
                    # this dtype: a C-contiguous copy of the bytes
                    return wrap(native.copy(), "numpy")
        elif kind is np.ndarray and dtype is None and copy is None:
            native_dtype = obj.dtype
            if native_dtype.kind in _NUMERIC_KINDS and native_dtype in HELD_DTYPES:
                # a NumPy array onto a CPU device: wrapped as it is, what the full call gives
                backend = _on_cpu(device)[0] if device is not None else get_backend()
                if backend is not None and backend != "cuda":
                    return wrap(obj, backend)
        elif (kind is float or kind is bool or (kind is int and int_in_int64(obj))) \
                and dtype is None and copy is None:
            # a Python scalar onto a CPU device: NumPy's 0-d array of it, what the full call
            # gives (float64, bool, int64), which generic code asks for at every call
            backend = _on_cpu(device)[0] if device is not None else get_backend()
            if backend is not None and backend != "cuda":
                return wrap(np.asarray(obj), backend)
        elif copy is False and isinstance(obj, np.generic):  # (the full call's 0-d array)
            raise ValueError(f"asarray: a NumPy scalar ({obj!r}) has no memory to share: "
                             "copy=False cannot be met")
        return asarray(obj, dtype=dtype, device=device, copy=copy)

    as_array.__name__ = as_array.__qualname__ = "asarray"
    as_array.__wrapped__ = asarray  # inspect.signature: the standard's
    return _named(as_array, asarray)


def public_namespace() -> dict:
    """Every public function of the namespace, and the ``linalg`` and ``fft`` submodules."""
    public = {}
    for name in elementwise_functions.__all__:
        if name not in signatures.NAMESPACE:  # clip has keyword bounds: compiled below
            public[name] = _elementwise(name, _implementation(name))
    for name, (params, arrays) in signatures.NAMESPACE.items():
        if name == "rearrange_":
            public[name] = rearrange_
            continue
        public[name] = compile_function(name, params, arrays, _implementation(name),
                                        creation=name in signatures.CREATION)
    public["astype"] = lazy_special_calls.deferring_astype(public["astype"])  # a cast node
    public["clip"] = lazy_special_calls.deferring_clip(public["clip"])
    public["where"] = lazy_special_calls.deferring_where(public["where"])  # a select node
    public["asarray"] = _as_is(public["asarray"])
    for name in type_queries.REMEMBERED:  # answers by their arguments' types, remembered
        public[name] = type_queries.remembering(name, public[name])
    _add_extensions(public)
    cpu_direct.install(public)  # views, where, count_nonzero of cpu Arrays: NumPy's call
    cpu_direct.install(public, cpu_direct_delegated.DIRECT)  # reductions, sort, take, ...
    public["linalg"] = _submodule("linalg", signatures.LINALG, delegated.linalg, public,
                                  extension_dtypes.LINALG)  # bfloat16 in float32
    public["fft"] = _submodule("fft", signatures.FFT, delegated.fft, public)
    return public
