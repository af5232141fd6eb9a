"""``infini_cupy.fuse``: one kernel for a whole elementwise function.

The first call with a given signature (per argument: dtype and ndim of an array, the type of
a scalar) traces the function (:mod:`..elementwise.trace`) into one expression type; every
call then plans it for its arrays' layout (:mod:`..elementwise.fused_plan`, cached) and
launches that one kernel. A repeated layout is a dict lookup, the outputs' allocation and the
launch. Works on Arrays, CuPy arrays and NumPy arrays under ``backend("emulate")``; NumPy
arrays on the ``numpy`` backend just run the function. A function the trace cannot fuse runs
unfused, with a :class:`FusionWarning` naming the call that stopped it (``strict=True``: a
TypeError instead).

>>> import numpy as np, infini_cupy as xp
>>> @xp.fuse
... def standardize(x, mean, std):
...     return (x - mean) / std
>>> with xp.backend("emulate"):
...     standardize(np.arange(4.0), 1.0, 2.0)
array([-0.5,  0. ,  0.5,  1. ])
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from .. import config, dtypes
from ..arrays import backend_for, device_context, empty, is_array, pointer_reader
from ..elementwise.fused_plan import FLAG_OFF, FLAG_ON, plan_fused, scalars_dtype
from ..elementwise.kernels import SOURCE
from ..elementwise.trace import Untraceable, trace_function
from ..runtime.launch import launch
from ..runtime.recent import RecentCalls
from .array import Array, check_same_device, wrap

_PYTHON_SCALARS = (bool, int, float, complex)
_SCALAR_TYPES = frozenset(_PYTHON_SCALARS) | frozenset(dt.type for dt in dtypes.ALL_DTYPES)
_array_types: set = {np.ndarray}  # and cupy.ndarray, once a call ran on a GPU


class FusionWarning(UserWarning):
    """A fused function ran unfused (the message names the call that stopped the trace)."""


class _Prepared:
    """A signature and layout seen before: what a repeated call needs to launch."""

    __slots__ = ("plan", "backend", "on_gpu", "pointer", "input_checks", "output_checks",
                 "shape", "scalars", "scalar_bytes", "arg_slots", "wrap", "returns")


def _stopping_call(error: BaseException, function) -> str:
    """The call in ``function`` whose error stopped the trace, with its line, and the error."""
    tb, called, where = error.__traceback__, None, None
    while tb is not None:
        if tb.tb_frame.f_code is function.__code__ and tb.tb_next is not None:
            where = f"line {tb.tb_lineno}"
            called = tb.tb_next.tb_frame.f_code.co_name
        tb = tb.tb_next
    what = f"{type(error).__name__}: {error}"
    return f"{called}() at {where} raised {what}" if called else what


class FusedFunction:
    """A function of arrays and scalars, run as one fused kernel per call (see :func:`fuse`)."""

    def __init__(self, function, strict: bool = False):
        self.function = function
        self.strict = strict
        self._traces: dict = {}  # signature -> FusedExpression, or the reason it is not fused
        self._prepared = RecentCalls(1024)  # layout key -> _Prepared
        functools.update_wrapper(self, function)

    def __repr__(self):
        return f"<fused function {getattr(self.function, '__qualname__', self.function)!r}>"

    def __call__(self, *args, **kwargs):
        if not kwargs:
            prepared = self._prepared.get(self._key(args))
            # NumPy arrays run kernels only under backend("emulate")
            if prepared is not None and (prepared.on_gpu or prepared.wrap is not None
                                         or config.get_backend() == "emulate"):
                return self._launch(prepared, args)
        return self._call(args, kwargs)

    # ------------------------------------------------------------ the cached path
    @staticmethod
    def _key(args):
        key = []
        for a in args:
            kind = type(a)
            if kind is Array:
                key += (a._b, a._a.dtype, a._a.shape, a._a.strides)
            elif kind in _SCALAR_TYPES:
                key.append(kind)
            elif kind in _array_types:
                key += (kind, a.dtype, a.shape, a.strides)
            else:
                return None
        return tuple(key)

    def _launch(self, prepared, args):
        """Launch a prepared call: its signature and layout are ``args``'."""
        pointer, wrapped = prepared.pointer, prepared.wrap
        inputs, misaligned = [], 0
        for k, align_mask, vector_mask in prepared.input_checks:
            x = args[k] if wrapped is None else args[k]._a
            address = pointer(x)
            if address & align_mask:
                return self._unfused(args, {}, None)  # off its C++ type's alignment
            misaligned |= address & vector_mask
            inputs.append(x)
        scalars = prepared.scalars
        if prepared.arg_slots:
            buffer = bytearray(prepared.scalar_bytes)
            for j, k, convert in prepared.arg_slots:
                value = convert(args[k]).tobytes()
                buffer[j:j + len(value)] = value
            scalars = np.void(bytes(buffer))
        backend, shape = prepared.backend, prepared.shape
        outputs = []
        for dtype, vector_mask in prepared.output_checks:
            out = empty(backend, shape, dtype)
            misaligned |= pointer(out) & vector_mask
            outputs.append(out)
        plan = prepared.plan
        if plan is not None:
            flag = FLAG_OFF if misaligned or plan.vector_masks is None else FLAG_ON
            operands = (scalars, *plan.layout_args, flag, *outputs, *inputs)
            if prepared.on_gpu:
                with device_context(inputs):
                    launch(SOURCE, plan.kernel, plan.grid, plan.block, operands, backend=backend)
            else:
                launch(SOURCE, plan.kernel, plan.grid, plan.block, operands, backend=backend)
        if wrapped is not None:
            outputs = [wrap(o, wrapped) for o in outputs]
        if prepared.returns == "one":
            return outputs[0]
        return tuple(outputs) if prepared.returns == "tuple" else outputs

    # ------------------------------------------------------------ the first call of a layout
    def _call(self, args, kwargs):
        if kwargs:
            return self._unfused(args, kwargs, "keyword arguments are not traced")
        prepared = self._prepare(args)
        if prepared is None:
            return self.function(*args)  # NumPy computes: nothing to fuse
        if isinstance(prepared, str):
            return self._unfused(args, kwargs, prepared)
        key = self._key(args)
        if key is not None:
            self._prepared.remember(key, prepared)
        return self._launch(prepared, args)

    def kernel_name(self, *args) -> str | None:
        """The name expression a call with ``args`` launches (nothing runs); None when it
        launches none (an empty result, the numpy backend); TypeError when it is not fused.

        >>> import numpy as np, infini_cupy as xp
        >>> with xp.backend("emulate"):  # doctest: +ELLIPSIS
        ...     xp.fuse(lambda x, y: x * y + 1).kernel_name(np.zeros(3, np.float32), 2.0)
        'ew_fused_contig<ic::Fused<ic::Expr<ic::OpAdd, float, float, ic::Expr<ic::OpMultiply, ...'
        """
        prepared = self._prepare(args)
        if isinstance(prepared, str):
            raise TypeError(f"fuse({self.__name__}): cannot fuse: {prepared}")
        return None if prepared is None or prepared.plan is None else prepared.plan.kernel

    def _prepare(self, args):
        """The prepared call for ``args``; None on the numpy backend; else the reason it does
        not fuse."""
        wrapped, natives = None, []
        for a in args:
            if type(a) is Array:
                if wrapped is not None:
                    check_same_device(wrapped, a._b)
                wrapped = a._b
                natives.append(a._a)
            else:
                natives.append(a)
        signature = []
        for k, a in enumerate(natives):
            if type(a) in _PYTHON_SCALARS:
                signature.append(("python", type(a)))
            elif isinstance(a, np.generic):
                signature.append(("numpy", a.dtype))
            elif is_array(a):
                signature.append(("array", a.dtype, a.ndim))
            else:
                return f"argument {k} is a {type(a).__name__}"
        arrays = [a for a in natives if is_array(a)]
        if not arrays:
            return "no array argument"
        backend = wrapped or backend_for(*arrays)
        if backend == "numpy":
            return None
        fx = self._trace(tuple(signature))
        if isinstance(fx, str):
            return fx
        inputs = [natives[k] for k in fx.inputs]
        ctypes = fx.operand_ctypes
        itemsizes = tuple(d.itemsize for d in fx.output_dtypes + fx.input_dtypes)
        layouts = tuple((tuple(x.shape), tuple(x.strides)) for x in inputs)
        plan = plan_fused(fx.fused_type, ctypes, itemsizes, len(fx.output_dtypes),
                          fx.output_inputs, layouts)
        if plan is None:
            return "its outputs have different shapes, or more than 8 dims that do not merge"
        shape = plan.shape
        prepared = _Prepared()
        prepared.backend, prepared.wrap = backend, wrapped
        prepared.on_gpu = backend == "cuda"
        if prepared.on_gpu:
            _array_types.add(type(inputs[0]))
        prepared.returns = fx.returns
        prepared.plan = plan if int(np.prod(shape, dtype=np.int64)) else None
        prepared.pointer = pointer_reader(backend)
        nout = len(fx.output_dtypes)
        masks = plan.vector_masks or (0,) * (nout + len(inputs))
        prepared.input_checks = tuple((k, dtypes.alignment(d) - 1, mask) for k, d, mask
                                      in zip(fx.inputs, fx.input_dtypes, masks[nout:]))
        prepared.output_checks = tuple(zip(fx.output_dtypes, masks[:nout]))
        prepared.shape = shape
        prepared.scalars, prepared.arg_slots = _scalar_slots(fx)
        prepared.scalar_bytes = prepared.scalars.tobytes()
        return prepared

    def _trace(self, signature):
        fx = self._traces.get(signature)
        if fx is None:
            try:
                fx = trace_function(self.function, signature)
            except Untraceable as e:
                fx = f"{e}"
                self._strict(fx, e)
            except Exception as e:  # noqa: BLE001 - any failure: the unfused call decides
                fx = _stopping_call(e, self.function)
                self._strict(fx, e)
            self._traces[signature] = fx
        return fx

    def _strict(self, reason, error):
        if self.strict:
            raise TypeError(f"fuse({self.__name__}): cannot fuse: {reason}") from error

    def _unfused(self, args, kwargs, reason):
        if reason is not None:
            if self.strict:
                raise TypeError(f"fuse({self.__name__}): cannot fuse: {reason}")
            warnings.warn(f"fuse({self.__name__}): {reason}; running unfused", FusionWarning,
                          stacklevel=3)
        return self.function(*args, **kwargs)


def _scalar_slots(fx):
    """(``ic::Scalars`` with the constants, per-call slots (slot, argument, converter))."""
    record = np.zeros((), scalars_dtype(len(fx.slots)))
    buffer = bytearray(record.tobytes())
    arg_slots = []
    for j, (dtype, value, index, convert) in enumerate(fx.slots):
        if index is None:
            data = value.tobytes()
            buffer[16 * j:16 * j + len(data)] = data
        else:
            arg_slots.append((16 * j, index, convert))
    return np.frombuffer(buffer, record.dtype)[0], tuple(arg_slots)


def fuse(function=None, *, strict: bool = False):
    """Decorator: run ``function`` as one fused kernel per call.

    The function may apply the elementwise functions, operators, ``where``, ``astype`` and
    ``clip`` to its array and scalar arguments. The first call with a signature (per argument:
    dtype and ndim of an array, the type of a scalar) traces it into one expression, with the
    standard's promotion at every node; each call then launches one kernel that reads every
    input once and writes every output once, bit-identical to the unfused calls. A repeated
    layout costs a dictionary lookup, the outputs' allocation and the launch.

    Parameters
    ----------
    function : callable
        ``fuse(f)`` or ``@fuse``; ``@fuse(strict=True)`` for the keyword.
    strict : bool, default False
        Where the trace cannot fuse the function (a reduction, indexing, ``bool()`` of a
        value, outputs of different shapes): False runs it unfused with a
        :class:`FusionWarning` naming the call that stopped the trace; True raises TypeError.

    Returns
    -------
    callable
        The fused function: Arrays, CuPy arrays, and NumPy arrays under ``backend("emulate")``
        run the fused kernel (NumPy arrays on the ``numpy`` backend just run ``function``);
        ``kernel_name(*args)`` names the kernel a call launches.

    Raises
    ------
    TypeError
        At a call, with ``strict=True``, where the function cannot be fused; the dtype errors
        the unfused calls would raise.

    Examples
    --------
    >>> import infini_cupy as xp
    >>> @xp.fuse
    ... def softplus(x):
    ...     return xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(x, 0)
    >>> softplus(xp.asarray([-1.0, 0.0, 2.0], device="emulator"))  # one launch
    Array([0.31326169, 0.69314718, 2.12692801], device='emulator')
    """
    if function is None:
        return lambda f: FusedFunction(f, strict)
    return FusedFunction(function, strict)

