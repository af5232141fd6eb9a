"""NumPy's dispatch protocols on ``infini_cupy.Array``: a NumPy ufunc (``__array_ufunc__``) or
array function (``__array_function__``) called on Arrays runs the namespace's function of
that name (our kernels for the elementwise ones) and returns Arrays.

* A ufunc's ``__call__`` whose namespace function exists (``np.add`` -> ``add``,
  ``np.power`` -> ``pow``, ``np.isfinite`` -> ``isfinite``), with no keyword other than
  ``out`` (and that one only where the function takes it: ``np.matmul(x, y, out=z)`` is
  the library's): NumPy's type resolution picks the loop (``np.sqrt`` of int8 computes in float16,
  ``np.rint`` of integers too), operands are cast to it by our cast kernel, the namespace's
  function computes; and ``reduce`` of ``add``/``multiply``/``maximum``/``minimum``/``logical_and``/
  ``logical_or`` (``sum``, ``prod``, ``max``, ``min``, ``all``, ``any``): ours.
* An array function whose namespace function of the same name (``np.concatenate`` ->
  ``concat``) takes the call's arguments (``np.sum(x, axis=0, keepdims=True)``): ours. Where
  the arguments do not fit (``np.std(x, ddof=1)``, ``np.roll(x, 1, 0)``) or the namespace has
  no such function (``np.cumsum``, ``np.einsum``), the array library's on the native arrays:
  NumPy for Arrays on the CPU or the emulator (the CPU's memory either way), CuPy for Arrays on
  a GPU (CuPy's own dispatch to ``cupy.<name>``), results wrapped back into Arrays. What CuPy
  lacks raises TypeError naming the device: never a silent device-to-host copy.
* ``like=`` an Array (``np.empty(3, like=x)``, ``np.asarray(data, like=x)``): an Array on
  ``x``'s device, by the namespace's function where it takes the arguments, else NumPy's
  call copied there.
* A CuPy array first (``cupy_array + x``, ``np.add(cupy_array, x)``): NumPy asks CuPy, whose
  ufunc hands the call back to the Array (``__cupy_override_elementwise_kernel__``): the
  same function, an Array out, as with a NumPy array first on the CPU.

>>> import numpy as np, infini_cupy as xp
>>> x = xp.asarray([1.0, np.inf], device="cpu")
>>> np.isfinite(x)
Array([ True, False], device='cpu')
>>> np.sqrt(xp.asarray([1, 4], device="cpu"))  # NumPy's loop for int64: float64
Array([1., 2.], device='cpu')
>>> np.cumsum(x + 1)  # no cumsum in the namespace: NumPy's, on the CPU's memory
Array([ 2., inf], device='cpu')
"""

from __future__ import annotations

import functools
import inspect
import sys

import numpy as np

from .. import dtypes
from ..elementwise.resolution import operand_type
from ..elementwise.trace import Traced
from . import pending as _pending
from .array import Array, check_same_device, native_array_types, wrap_result

# NumPy's ufunc names that differ from the standard's
_UFUNC_ALIASES = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
    "arcsinh": "asinh", "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh",
    "invert": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "power": "pow", "conjugate": "conj", "rint": "round",
}
_REDUCTIONS = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min",
               "logical_and": "all", "logical_or": "any"}
# NumPy's array functions whose standard name differs
_FUNCTION_ALIASES = {"concatenate": "concat", "power": "pow", "absolute": "abs"}

_public: dict = {}
_signatures: dict = {}


def install(public: dict) -> None:
    """Set the protocols on :class:`~.array.Array` (and NumPy's ufuncs on ``fuse``'s traced
    values), dispatching to ``public``'s functions."""
    _public.update(public)
    Traced.__array_ufunc__ = traced_ufunc
    Array.__array_ufunc__ = array_ufunc
    Array.__array_function__ = array_function
    Array.__cupy_override_elementwise_kernel__ = property(_cupy_kernel_hook)


def _backend_of(values) -> str:
    """The backend of the Arrays among ``values`` (nested in lists, tuples and dicts), one
    device for all (ValueError naming both otherwise)."""
    backend = None
    stack = list(values)
    while stack:
        v = stack.pop()
        if type(v) is Array:
            if backend is not None:
                check_same_device(backend, v._b)
            backend = v._b
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return backend


def _native(value):
    """``value`` with every Array (in lists, tuples and dicts too) replaced by its array."""
    if type(value) is Array:
        return value._a
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_native(v) for v in value)
    if isinstance(value, dict):
        return {k: _native(v) for k, v in value.items()}
    return value


def _library_call(what: str, backend: str, call_numpy, call_cupy):
    """The array library's answer on the native arrays: NumPy on the CPU's memory, CuPy's
    own dispatch on a GPU (NotImplemented from it: TypeError naming the device)."""
    if _pending.expressions:  # the buffers leave our control (np.copyto, np.put write them)
        _pending.evaluate_all(what)
    if backend != "cuda":
        return wrap_result(call_numpy(), backend)
    result = call_cupy()
    if result is NotImplemented:
        raise TypeError(f"{what} on an Array on a GPU: neither infini_cupy nor CuPy has it, and "
                        "NumPy would need a device-to-host copy; use x.to_device('cpu') first")
    return wrap_result(result, backend)


def _cupy_types():
    return (sys.modules["cupy"].ndarray,)


def _foreign(values) -> bool:
    """Whether ``values`` hold another library's array with a ``__array_ufunc__`` of its own
    (a Dask array, an xarray DataArray): NumPy asks it next when ours declines."""
    for v in values:
        kind = type(v)
        if kind is Array or kind in _PLAIN_OPERANDS or isinstance(v, native_array_types()):
            continue
        if isinstance(v, tuple):  # out=
            if _foreign(v):
                return True
        elif getattr(kind, "__array_ufunc__", None) is not None:
            return True
    return False


_PLAIN_OPERANDS = frozenset({*dtypes.PYTHON_SCALAR_TYPES, type(None)})


def _array_like(value) -> bool:
    """A Python list or tuple standing for an array (NumPy converts such operands)."""
    return type(value) in _SEQUENCES


_SEQUENCES = frozenset({list, tuple})


def _device_of(values):
    for v in values:
        if type(v) is Array:
            return v.device
    return None


def _with_arrays(values, device):
    """``values`` with each list/tuple operand made an Array on ``device`` (NumPy's
    ``asarray`` of it, on every device alike)."""
    return tuple(_public["asarray"](v, device=device) if _array_like(v) else v
                 for v in values)


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """``np.<ufunc>(...)`` with an Array among the operands: the namespace's function;
    NotImplemented where another library's array is among them (NumPy's protocol: that
    library answers, as Dask does for a Dask array). List and tuple operands are arrays
    on the Arrays' device, as NumPy converts them."""
    if not _SEQUENCES.isdisjoint(map(type, inputs)):  # (a set operation: no frame per input)
        inputs = _with_arrays(inputs, _device_of(inputs))
    if method == "__call__" and not kwargs:  # np.add(x, y): the commonest, checked first
        function = _functions.get(ufunc, _UNKNOWN)
        if function is _UNKNOWN:
            function = _functions[ufunc] = _function_of(ufunc)
        if function is not None and len(inputs) == ufunc.nin and not _foreign(inputs):
            return function(*_in_numpy_loop(ufunc, inputs))
    if _foreign(inputs) or _foreign(kwargs.values()):
        return NotImplemented
    backend = _backend_of((*inputs, *kwargs.values()))
    out = kwargs.get("out")  # NumPy hands it as a tuple, one entry per output
    name = _UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)
    if method == "__call__" and name in _public and set(kwargs) <= {"out"} \
            and len(inputs) == ufunc.nin and ufunc.nout == 1 \
            and (out is None or out[0] is None or _takes_out(name)
                 or (backend == "cuda" and type(out[0]) is Array
                     and not hasattr(sys.modules["cupy"], ufunc.__name__))):
        inputs = _in_numpy_loop(ufunc, inputs)
        if out is None or out[0] is None:
            return _public[name](*inputs)
        if not _takes_out(name):  # CuPy has no such ufunc (vecdot): ours, copied into out
            result = _public[name](*inputs)
            if tuple(result.shape) != tuple(out[0].shape):
                raise ValueError(f"numpy.{ufunc.__name__}: out= has shape "
                                 f"{tuple(out[0].shape)}, the result {tuple(result.shape)}")
            out[0][...] = result
            return out[0]
        _public[name](*inputs, out=out[0])
        return out[0]
    if method == "reduce" and ufunc.__name__ in _REDUCTIONS and len(inputs) == 1 \
            and set(kwargs) <= {"axis", "keepdims"}:
        return _public[_REDUCTIONS[ufunc.__name__]](
            inputs[0], axis=kwargs.get("axis", 0), keepdims=kwargs.get("keepdims", False))
    args, native_kwargs = _native(inputs), _native(kwargs)
    result = _library_call(
        f"numpy.{ufunc.__name__}.{method}", backend,
        lambda: getattr(ufunc, method)(*args, **native_kwargs),
        lambda: _first_native(args, native_kwargs).__array_ufunc__(
            ufunc, method, *args, **native_kwargs))
    if out is not None and len(out) == 1 and out[0] is not None:
        return out[0]  # the Array (or array) given, written in place
    return result


_functions: dict = {}  # a NumPy ufunc -> the namespace's function of one output, or None


def _function_of(ufunc):
    name = _UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)
    return _public[name] if name in _public and ufunc.nout == 1 else None


def traced_ufunc(self, ufunc, method, *inputs, **kwargs):
    """``np.<ufunc>(...)`` on a value of :func:`~infini_cupy.fuse`'s trace: the namespace's
    function, in NumPy's loop, as :func:`array_ufunc` gives on Arrays (so the fused kernel
    stays bit-identical to the unfused calls); anything else stops the trace (NumPy's
    TypeError), and the function runs unfused."""
    name = _UFUNC_ALIASES.get(ufunc.__name__, ufunc.__name__)
    if method == "__call__" and not kwargs and name in _public and len(inputs) == ufunc.nin \
            and ufunc.nout == 1:
        return _public[name](*_in_numpy_loop(ufunc, inputs))
    return NotImplemented


@functools.lru_cache(maxsize=None)
def _takes_out(name: str) -> bool:
    """Whether the namespace's ``name`` takes ``out=`` (the elementwise functions do;
    ``matmul`` and ``vecdot`` do not: NumPy's ufunc writes their ``out=``)."""
    return "out" in inspect.signature(_public[name]).parameters


def _cupy_kernel_hook(self):
    """CuPy's ufuncs and elementwise kernels hand a call with an Array among its arguments
    to this hook. ``np.add(cupy_array, x)`` and ``cupy_array + x`` get there: NumPy asks
    CuPy's ``__array_ufunc__`` first (the leftmost), which takes Arrays (they have
    ``__cuda_array_interface__``) to ``cupy.add``. Only a GPU Array has the hook, as only it
    has that interface."""
    if self._b != "cuda":
        raise AttributeError(f"an Array on {self.device} is not CuPy's to compute")
    return _cupy_kernel


def _cupy_kernel(kernel, *args, **kwargs):
    """A CuPy ufunc as NumPy's ufunc of that name on these arguments (``__array_ufunc__``: an
    Array, as ``np.add(x, cupy_array)`` gives); another kernel on the native arrays, its
    results Arrays."""
    ufunc = None  # an ElementwiseKernel's name is its author's: only CuPy's ufuncs map
    if type(kernel).__name__ == "ufunc" and kernel.name.startswith("cupy_"):
        ufunc = getattr(np, kernel.name.removeprefix("cupy_"), None)
    if isinstance(ufunc, np.ufunc) and ufunc.nin == kernel.nin and ufunc.nout == 1 \
            and ufunc.nin <= len(args) <= ufunc.nin + 1:
        inputs, out = args[:ufunc.nin], args[ufunc.nin:] or kwargs.pop("out", None)
        if out is not None:
            kwargs["out"] = tuple(out) if isinstance(out, tuple) else (out,)
        return array_ufunc(None, ufunc, "__call__", *inputs, **kwargs)
    backend = _backend_of((*args, *kwargs.values()))
    return wrap_result(kernel(*_native(args), **_native(kwargs)), backend)


@functools.lru_cache(maxsize=1024)
def _numpy_loop(ufunc, types: tuple) -> tuple:
    """NumPy's loop input dtypes of ``ufunc`` on operand ``types`` (NumPy's own TypeError
    where it has none)."""
    weak = {"bool": np.dtype(np.bool_), "int": int, "float": float, "complex": complex}
    return ufunc.resolve_dtypes(tuple(weak.get(t, t) for t in types) + (None,))[:-1]


def _in_numpy_loop(ufunc, inputs):
    """``inputs`` cast (by our cast kernel) to the dtypes of NumPy's loop of ``ufunc``, so
    that the namespace's function runs NumPy's loop: ``np.rint(int8)`` computes in float16,
    ``np.logical_and(int8, int8)`` in int8. Calls with bfloat16 keep the namespace's rules
    (NumPy does not promote it; ``elementwise.resolution`` resolves it as float16)."""
    types = tuple(map(operand_type, inputs))
    key = (ufunc, types)
    loop = _casts.get(key, _UNKNOWN)
    if loop is _UNKNOWN:
        loop = None
        if not any(dtypes.is_bfloat16(t) for t in types):
            loop = _numpy_loop(ufunc, types)  # (NumPy's TypeError where it has none)
            if all(isinstance(t, str) or t == d for t, d in zip(types, loop)):
                loop = None  # the operands' own dtypes: nothing to cast
        _casts[key] = loop
    if loop is None:
        return inputs
    return tuple(v if isinstance(t, str) or t == d or isinstance(v, np.generic)
                 else _public["astype"](v, d) for v, t, d in zip(inputs, types, loop))


# (ufunc, operand types) -> the dtypes of NumPy's loop where some operand is cast to it, else
# None: each signature resolved once (about 2 us of checks per call otherwise)
_casts: dict = {}
_UNKNOWN = object()


def _first_native(args, kwargs):
    """The first CuPy array among the (unwrapped) arguments: CuPy's dispatch is its method."""
    stack = [*args, *kwargs.values()][::-1]
    while stack:
        v = stack.pop()
        if isinstance(v, native_array_types()) and not isinstance(v, np.ndarray):
            return v
        if isinstance(v, (list, tuple)):
            stack.extend(reversed(v))
    raise AssertionError("no CuPy array among the arguments")  # pragma: no cover


def _signature(function) -> inspect.Signature:
    signature = _signatures.get(function)
    if signature is None:
        signature = _signatures[function] = inspect.signature(function)
    return signature


def _binds(function, args, kwargs) -> bool:
    """Whether ``function``'s signature takes ``args`` and ``kwargs``: a matter of their
    number and the keywords' names alone (binding reads no value), remembered by them
    (``Signature.bind`` costs more than the namespace's call it decides on)."""
    key = (function, len(args), *kwargs)
    answer = _bindings.get(key)
    if answer is None:
        try:
            _signature(function).bind(*args, **kwargs)
        except TypeError:
            answer = False
        else:
            answer = True
        if len(_bindings) >= 4096:  # a bound on odd keyword sets
            _bindings.clear()
        _bindings[key] = answer
    return answer


_bindings: dict = {}  # (function, number of positional arguments, *keyword names) -> bool


def _ours(func):
    """The namespace's function for NumPy's ``func``, or None."""
    name = _FUNCTION_ALIASES.get(func.__name__, func.__name__)
    ours = _public.get(name) if func.__module__ == "numpy" else None
    return ours if callable(ours) else None


def array_function(self, func, types, args, kwargs):
    """``np.<function>(...)`` with an Array among the arguments: the namespace's function of
    that name where it takes these arguments, else the array library's; with ``like=`` an
    Array, an array on its device."""
    if not all(t is Array or issubclass(t, native_array_types()) for t in types):
        return NotImplemented
    if not hasattr(func, "_implementation"):  # NumPy's like=self: the functions taking
        return _created_like(self, func, args, kwargs)  # like= are the ones without one
    ours = _ours(func)
    if ours is not None and _binds(ours, args, kwargs):
        args, kwargs = _array_likes_as_arrays(ours, args, kwargs, self.device)
        return ours(*args, **kwargs)
    backend = _backend_of((*args, *kwargs.values())) or self._b
    native_args, native_kwargs = _native(args), _native(kwargs)
    return _library_call(
        f"{func.__module__}.{func.__name__}", backend,
        lambda: func._implementation(*native_args, **native_kwargs),
        lambda: _first_native(native_args, native_kwargs).__array_function__(
            func, _cupy_types(), native_args, native_kwargs))


# the namespace's parameters that take arrays (``arrays``: a sequence of them)
_ARRAY_PARAMETERS = frozenset({"x", "x1", "x2", "condition", "min", "max"})


def _array_likes_as_arrays(function, args, kwargs, device):
    """``args`` and ``kwargs`` of ``function`` with each list or tuple given for an array
    (``np.concatenate([x, [0.0]])``, ``np.where(c, x, [1, 2])``) made an Array on
    ``device``, as NumPy converts it; the very ``args`` and ``kwargs`` where there is none."""
    names = _positional_names(function)
    if len(args) > len(names):  # a *args parameter: bound the general way
        bound = _signature(function).bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            bound.arguments[name] = _converted(name, value, device)
        return bound.args, bound.kwargs
    new_args = tuple(_converted(name, value, device) for name, value in zip(names, args))
    new_kwargs = {name: _converted(name, value, device) for name, value in kwargs.items()}
    if all(a is b for a, b in zip(new_args, args)) and all(
            new_kwargs[name] is value for name, value in kwargs.items()):
        return args, kwargs
    return new_args, new_kwargs


def _positional_names(function) -> tuple:
    """The names of ``function``'s parameters that take a positional argument, in order."""
    names = _positional.get(function)
    if names is None:
        names = _positional[function] = tuple(
            p.name for p in _signature(function).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
    return names


_positional: dict = {}


def _converted(name: str, value, device):
    """``value`` of parameter ``name``, a list or tuple standing for an array made an Array
    (in ``arrays``, each such item); ``value`` itself where there is none."""
    if name == "arrays" and type(value) in _SEQUENCES:
        return type(value)(_with_arrays(value, device)) if any(map(_array_like, value)) \
            else value
    if name in _ARRAY_PARAMETERS and _array_like(value):
        return _public["asarray"](value, device=device)
    return value


def _created_like(like: Array, func, args, kwargs) -> Array:
    """``np.<function>(..., like=like)`` (``np.empty``, ``np.asarray``, ``np.tri``, ...:
    NumPy hands the call on without ``like``, and its arguments may hold Arrays:
    ``np.array(x, like=y)``): the namespace's function on ``like``'s device where it takes
    the arguments; else CuPy's for GPU arrays among them (``cupy.array``), else NumPy's call
    on the native arrays moved to ``like``'s device (a copy to a GPU). So code written for
    NumPy's ``like=`` (Dask's ``tril``, ``percentile``, ``bincount``) makes Arrays on every
    device; CuPy's own ``like=`` would fail where NumPy 2 passes ``device=`` (``np.ones``),
    which CuPy's functions do not take."""
    ours = _ours(func)
    if ours is not None and "device" in _signature(ours).parameters \
            and kwargs.get("device") is None:
        on_device = {**kwargs, "device": like.device}
        if _binds(ours, args, on_device):
            return ours(*args, **on_device)
    native_args, native_kwargs = _native(args), _native(kwargs)
    if _backend_of((*args, *kwargs.values())) == "cuda":  # GPU data: CuPy's like= (cupy.array)
        return _library_call(
            f"{func.__module__}.{func.__name__}", "cuda", None,
            lambda: _first_native(native_args, native_kwargs).__array_function__(
                func, _cupy_types(), native_args, native_kwargs))
    return _public["asarray"](func(*native_args, **native_kwargs), device=like.device)
