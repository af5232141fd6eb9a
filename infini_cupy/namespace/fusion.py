"""``infini_cupy.fuse``: one kernel for a whole elementwise function.

The first call with a given signature (per argument: dtype and ndim of an array, the type of
a scalar; keyword arguments by name) traces the function (:mod:`..elementwise.trace`) into
one expression type; every call then plans it for its arrays' layout
(:mod:`..elementwise.fused_plan`, cached) and launches that one kernel. A repeated layout is
a dict lookup, the outputs' allocation and the launch.

Arguments follow the elementwise functions' rule (:func:`.boundary.elementwise_operands`):
Arrays, native NumPy/CuPy arrays, NumPy scalars and Python scalars in any mix; an Array
among them makes the results Arrays on its device; NumPy arrays on the ``cpu`` device (the
``numpy`` backend) run the function unfused. Errors (devices, shapes, dtypes) are the
unfused calls': a call that cannot be fused runs unfused, and warns with a
:class:`FusionWarning` naming what stopped the trace when it succeeds (``strict=True``: a
TypeError instead).

>>> import numpy as np, infini_cupy as xp
>>> @xp.fuse
... def standardize(x, mean, std):
...     return (x - mean) / std
>>> with xp.backend("emulate"):
...     standardize(np.arange(4.0), 1.0, std=2.0)
array([-0.5,  0. ,  0.5,  1. ])
"""

from __future__ import annotations

import functools
import types
import warnings

import numpy as np

from .. import config, dtypes
from ..arrays import (DATA_FIELD_OFFSET, FIELD_POINTERS, current_allocator, empty,
                      gpu_available, is_array, numpy_data_pointer, pointer_reader, read_address)
from ..elementwise.fused_plan import (FLAG_OFF, FLAG_ON, ArraySpec, plan_arguments, plan_fused,
                                      scalar_slots)
from ..elementwise.kernels import SOURCE
from ..elementwise.trace import ReadsNoArray, Untraceable, stopping_call, trace_function
from ..runtime import cuda, cuda_compiled
from ..runtime import launch as launches
from ..runtime.launch import launch
from ..runtime.recent import RecentCalls
from ..runtime.structs import dim3
from . import pending
from .array import Array, check_same_device, learn_out_id, settle, wrap
from .boundary import compiled_calls, compiled_hot_calls, elementwise_operands
from .fused_keys import (PYTHON_SCALARS, SCALAR_TYPES, array_types, ids_into, key_into,
                         layout_key, mixed_into, unfused_key)
from .fused_out import into_record, launch_into, run_into, write_again, write_out

_new = object.__new__


class FusionWarning(UserWarning):
    """A fused function ran unfused.

    :func:`~infini_cupy.fuse` warns so when its trace meets a call that is not an
    elementwise function; the message names that call. The function's result is the same,
    computed call by call.

    Examples
    --------
    >>> import warnings
    >>> import infini_cupy as xp
    >>> @xp.fuse
    ... def center(x):
    ...     return x - xp.mean(x)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     y = center(xp.asarray([1.0, 3.0], device="emulator"))
    >>> y
    Array([-1.,  1.], device='emulator')
    >>> caught[0].category is xp.FusionWarning
    True
    >>> print(caught[0].message)
    fuse(center): mean(): not an elementwise function; running unfused
    """


class _Prepared:
    """A signature and layout seen before: what a repeated call needs to launch."""

    __slots__ = ("fx", "keywords", "returns", "plan", "layouts", "backend", "on_gpu", "pointer",
                 "input_checks", "output_checks", "shape", "scalars", "scalar_bytes", "arg_slots",
                 "wrap", "template", "out_id", "compiled_launch", "scalar_source")


def _spec(value):
    """A ``(shape, dtype)`` pair or a shape-and-dtype object as a :class:`ArraySpec`; a Python
    scalar type (``float``) as a value of it; anything else as it is."""
    if type(value) is tuple and len(value) == 2:
        return ArraySpec(*value)
    if type(value) is type and value in PYTHON_SCALARS:
        return value(1)
    if (hasattr(value, "shape") and hasattr(value, "dtype") and type(value) is not Array
            and not is_array(value) and not isinstance(value, np.generic)):
        return ArraySpec(value.shape, value.dtype)  # jax.ShapeDtypeStruct and the like
    return value


def scalar_slots_filled(prepared, args):
    """The kernel's ``ic::Scalars`` for a call: the constants and each per-call slot's
    argument converted as traced; None when a computed scalar changed type (``2 ** -1``) or a
    value does not convert (an int past its slot's range): the unfused calls decide (they
    raise the eager call's error, or answer as NumPy's ``where`` does)."""
    if not prepared.arg_slots:
        return prepared.scalars
    buffer = bytearray(prepared.scalar_bytes)
    try:
        for j, k, convert in prepared.arg_slots:
            value = convert(args[k] if k >= 0 else args).tobytes()  # -1: computed
            if j is not None:  # None: a slot no output reads, converted as the unfused call
                buffer[j:j + len(value)] = value
    except (Untraceable, OverflowError):
        return None
    return np.void(bytes(buffer))


def _scalar_arguments(prepared, positions, pack=None):
    """What a hot path (hot_calls.c's ``fused``, compiled_launch.c) reads of a call with
    scalar arguments (at ``positions``), or None without them: (their positions, ``[the last
    (their values, made off, made on) seen]``, ``made(args)``). ``made`` fills the scalar
    slots (:func:`scalar_slots_filled`), keeps them as the last seen and returns them, or
    None (the Python way decides); ``pack(scalars, flag)``: what is kept per flag (a GPU's
    packed parameters), else the scalars themselves twice. Kept per the arguments' objects:
    a literal, the same object at every call, is converted once."""
    if not prepared.arg_slots:
        return None
    last = [(None, None, None)]

    def made(args):
        scalars = scalar_slots_filled(prepared, args)
        if scalars is None:
            return None
        values = tuple([args[k] for k in positions])
        seen = last[0] = ((values, scalars, scalars) if pack is None else
                          (values, pack(scalars, False), pack(scalars, True)))
        return seen

    return positions, last, made


def head_for(head, scalar_args, args):
    """``head`` (the arguments before the flag: the scalars, the layouts) with the scalar
    arguments' slots for ``args`` from :func:`_scalar_arguments`'s ``scalar_args``: the last
    seen when every scalar argument is the same object, else made (the Python twin of
    hot_arrays.c's ``scalars_seen``); ``head`` itself without scalar arguments; None for the
    Python way."""
    if scalar_args is None:
        return head
    positions, last, made = scalar_args
    seen = last[0]
    values = seen[0]
    if values is None or any(args[k] is not v for k, v in zip(positions, values)):
        seen = made(args)
        if seen is None:
            return None
    return (seen[1], *head[1:])


# how a fused function returns its outputs (trace.FusedExpression.returns), as the compiled
# calls read it: None for one output, else the sequence type they are returned in
_RETURNED_AS = {"one": None, "tuple": tuple, "list": list}


def _emulator_template(prepared):
    """What ``_launch`` and ``_launch_ids`` read of a call on the emulator (None for any
    other): the input checks, per output its dtype and 16-byte mask, the arguments before
    the flag (scalars, layouts), the kernel, grid and block, the flag for misaligned and
    aligned pointers, the scalar arguments' source (:func:`_scalar_arguments`; None without
    them: the scalars in the head serve every call) and how the function returns its
    outputs (None: one; ``tuple``, ``list``: those of its outputs)."""
    plan = prepared.plan
    if prepared.backend != "emulate" or not FIELD_POINTERS or plan is None:
        return None
    flags = (FLAG_OFF, FLAG_OFF if plan.vector_masks is None else FLAG_ON)
    returns = _RETURNED_AS[prepared.returns]
    return (prepared.input_checks, prepared.output_checks, (prepared.scalars, *plan.layout_args),
            plan.kernel, plan.grid, plan.block, flags, prepared.scalar_source, returns)


def compiled_fused_record(prepared, into=None):
    """``prepared.compiled_launch``: what runtime/compiled_launch.c reads (from hot_calls.c's
    ``fused``) to run a GPU's call of Arrays (and scalars) on this thread's current context,
    or None (the Python way takes every call); with ``into``, a record of
    ``fused_out.into_record``, its launch record (``fused_into``'s) for the call's plan into
    ``out``'s layout. The fields, in order: the input checks, the outputs' shape, per output
    its dtype and 16-byte mask, how the function returns them (``_emulator_template``'s
    ``returns``), the driver's generation, the context, the device, the kernel's
    ``CUfunction`` there, (grid, block, dynamic shared memory) as 7 ints, the parameters
    packed as bytes with the vector flag off and on (the pointer slots, the outputs' then the
    inputs', zero and last), each parameter's offset in them (uint32), the index of the first
    pointer slot, the scalar arguments' source (:func:`_scalar_arguments`, keeping both
    packings per scalar values; None without scalar arguments), and ``out``'s per-call checks
    (``short_path.out_check``; None for new outputs). Made after a call launched the Python
    way on this context."""
    plan = prepared.plan
    if (plan is None or prepared.wrap is None
            or not all(unwrap for _, unwrap, _, _ in prepared.input_checks)):
        return None
    outputs = prepared.output_checks
    if into is None:
        head, kernel, grid, block = ((prepared.scalars, *plan.layout_args), plan.kernel,
                                     plan.grid, plan.block)
        flag_on = FLAG_OFF if plan.vector_masks is None else FLAG_ON
        record, out_check = prepared.compiled_launch, None
    else:
        _, _, _, out_check, out_mask, head, kernel, grid, block, flags, _, _, made = into
        flag_on, record = flags[1], made[0]
        outputs = ((outputs[0][0], out_mask),)
    cupy = cuda.device_side_module()
    module = cuda_compiled.driver(cupy)
    context = module.current_context()
    if record is not None and record[4:6] == (cuda_compiled.generation(), context):
        return record
    if context is None:
        return None
    pointers = len(outputs) + len(prepared.input_checks)
    offsets, packed_off = cuda_compiled.packed_parameters((*head, FLAG_OFF), pointers, True)
    packed_on = cuda_compiled.packed_parameters((*head, flag_on), pointers, True)[1]
    if not cuda_compiled.fits(module, offsets, packed_off):
        return None
    device = cupy.cuda.runtime.getDevice()
    source = prepared.scalar_source

    def pack(scalars, aligned):
        flag = flag_on if aligned else FLAG_OFF
        return cuda_compiled.packed_parameters((scalars, *head[1:], flag), pointers, True)[1]

    returns = _RETURNED_AS[prepared.returns]
    record = (prepared.input_checks, tuple(prepared.shape), outputs, returns,
              cuda_compiled.generation(), context, device,
              cuda.function_handle(device, SOURCE, kernel),
              (*dim3(grid), *dim3(block), 0), packed_off, packed_on, offsets,
              len(head) + 1,
              source and _scalar_arguments(prepared, source[0], pack), out_check)
    assert len(record) == module.FUSED_RECORD_FIELDS
    return record


def _emulator_outputs(outputs, shape):
    """(new outputs on the emulator, one per (dtype, 16-byte mask) of ``outputs``, their
    pointers' bits off the 16-byte packs)."""
    made, off_packs = [], 0
    for dtype, out_mask in outputs:
        out = empty("emulate", shape, dtype)
        off_packs |= numpy_data_pointer(out) & out_mask
        made.append(out)
    return made, off_packs


def _keep_compiled_into(record):
    """After a GPU's repeat into an Array ran the Python way (``fused_out.run_into``) under
    the compiled launch: its launch record, kept in ``record`` (``fused_out.into_record``'s:
    its prepared call, then the list that keeps it) for hot_calls.c's ``fused_into`` to run
    the next repeat."""
    if config.launch_in_force[0] == cuda_compiled.MECHANISM:
        record[-1][0] = compiled_fused_record(record[-2], record)


class _Nothing(str):
    """Why a call is not fused, silently: its results read no array argument."""


class _Raised(str):
    """Why a call is not fused: an error raised by the function or by its arguments (a mix
    of devices, shapes that do not broadcast), which the unfused call raises too."""


_NUMPY_COMPUTES = object()  # _prepare's answer on the cpu device: the function's own calls
_UNPLANNED = "its outputs have different shapes, or more than 8 dims that do not merge"


class FusedFunction:
    """A function of arrays and scalars, run as one fused kernel per call (see :func:`fuse`).

    Called like the function, plus ``out=`` (reserved): an array of the result's shape and
    dtype, any layout, to write the (single) result into; the call then returns ``out``.
    """

    def __init__(self, function, strict: bool = False):
        if not callable(function):
            raise TypeError(f"fuse takes a function, got {type(function).__name__}")
        self.function = function
        self.strict = strict
        self._traces: dict = {}  # (signature, keywords) -> FusedExpression, or a reason
        self._prepared = RecentCalls(1024)  # layout key -> _Prepared
        # the Arrays' layout ids and the scalars' types -> a _Prepared of _prepared that
        # launches from its emulator template or its GPU launch record (see _launch_ids)
        self._by_ids = RecentCalls(1024)
        # the same and out=, an Array: the layout ids and out's -> fused_out.into_record's
        self._into_by_ids = RecentCalls(1024)
        # native arrays into a native array: the layout key and out's -> into_record's
        self._into_by_key = RecentCalls(1024)
        # Arrays and native arrays into an Array: fused_keys.mixed_into -> into_record's
        self._mixed_into = RecentCalls(1024)
        # calls the cpu device computes with the function's own calls, without and with
        # out= (by fused_keys.unfused_key): _prepare, tracing and planning skipped
        self._unfused_calls = RecentCalls(1024)
        self._unfused_into = RecentCalls(1024)
        functools.update_wrapper(self, function)
        if "__name__" not in vars(self):  # a partial or another callable: its type names it
            self.__name__ = type(function).__name__

    def __repr__(self):
        return f"<fused function {getattr(self.function, '__qualname__', self.function)!r}>"

    def __get__(self, instance, owner=None):
        """A fused method: bound to the instance, as the function would be."""
        return self if instance is None else types.MethodType(self, instance)

    def __call__(self, *args, out=None, **kwargs):
        if not kwargs and out is None:
            compiled = compiled_calls[3]  # the same steps compiled (runtime/hot_calls.c)
            if compiled is not None:
                r = compiled(self._by_ids, SCALAR_TYPES, args)
                if r is not None:
                    return r
            key = []  # Arrays and scalars: the hot path, a plan seen before (_launch_ids)
            for a in args:
                kind = type(a)
                if kind is Array:
                    key.append(a._k or settle(a))
                elif kind in SCALAR_TYPES:
                    key.append(kind)
                else:
                    key = None
                    break
            if key is not None:
                key = tuple(key)
                prepared = self._by_ids.get(key)
                if prepared is None:
                    if key in self._unfused_calls:  # the cpu device: NumPy computes
                        return self.function(*args)
                    prepared = self._prepared.get(layout_key(args))
                    if (prepared is not None and prepared.wrap is not None
                            and (prepared.template is not None
                                 or prepared.compiled_launch is not None)):
                        self._by_ids.remember(key, prepared)
                        compiled_hot_calls()  # built and loaded once
                        if prepared.template is None:  # a GPU's, C declined or met it first
                            return self._launch(prepared, args)
                        return self._launch_ids(prepared, args)
                elif prepared.template is None:
                    return self._launch(prepared, args)
                else:
                    return self._launch_ids(prepared, args)
            prepared = self._prepared.get(layout_key(args))
            # NumPy arrays run kernels only under backend("emulate")
            if prepared is not None and (prepared.on_gpu or prepared.wrap is not None
                                         or config.get_backend() == "emulate"):
                return self._launch(prepared, args)
        elif type(out) is Array and not kwargs and not pending.expressions:
            compiled = compiled_calls[5]  # the same steps compiled (runtime/hot_calls.c)
            if compiled is not None and compiled(self._into_by_ids, SCALAR_TYPES, args,
                                                 out) is not None:
                return out
            key, known = ids_into(args, out), self._into_by_ids  # a record seen before
            if key is None:  # native arrays among the Arrays: by their layouts
                key, known = mixed_into(args, out), self._mixed_into
            record = None if key is None else known.get(key)
            if record is not None and run_into(record, args, out, head_for) is not None:
                if record[1] is not None:  # a GPU's
                    _keep_compiled_into(record)
                return out
            if record is None and key in self._unfused_into:  # the cpu device
                return write_again(f"fuse({self.__name__})", self.function(*args), out)
        elif type(out) in array_types and not kwargs and not pending.expressions:
            key = key_into(args, out)  # native arrays into one: a record seen before
            record = None if key is None else self._into_by_key.get(key)
            # (NumPy arrays run kernels only under backend("emulate"))
            if (record is not None and (record[1] is not None or config.get_backend() == "emulate")
                    and run_into(record, args, out, head_for) is not None):
                return out
        if out is not None and pending.expressions:  # a write: pending reads go first
            pending.evaluate_all(f"fuse({self.__name__})(out=...)")
        return self._call(args, kwargs, out)

    # ------------------------------------------------------------ the cached path

    def _inputs(self, prepared, args):
        """The kernel's input arrays, and the pointer bits off 16-byte packs; None when an
        input is off its C++ type's alignment (the call then runs unfused)."""
        pointer, inputs, misaligned = prepared.pointer, [], 0
        for k, unwrap, align_mask, vector_mask in prepared.input_checks:
            x = args[k]._a if unwrap else args[k]
            address = pointer(x)
            if address & align_mask:
                return None, 0
            misaligned |= address & vector_mask
            inputs.append(x)
        return inputs, misaligned

    def _on_gpu(self, prepared, args, out):
        """A prepared call on CuPy arrays: all on one GPU (else the unfused call's error),
        outputs allocated and the kernel launched there."""
        natives = [args[k]._a if unwrap else args[k] for k, unwrap, _, _ in prepared.input_checks]
        if out is not None:
            natives.append(out._a if type(out) is Array else out)
        device = natives[0].data.device_id
        if any(x.data.device_id != device for x in natives):
            return self._fallback(prepared, args, out)
        with natives[0].device:
            if out is None:
                return self._launch(prepared, args, True)
            return self._launch_into(prepared, args, out)

    def _launch_ids(self, prepared, args):
        """``_launch`` of Arrays on the emulator from its template, the inputs' pointers the
        Arrays' own (read once), one output an Array settled with its pointer and the plan's
        layout id (several: Arrays settled at their first use). ``__call__`` keys it by the
        Arrays' layout ids (settled once, see :func:`~.array.settle`) and the scalars' types;
        any other argument (a native array) goes by the layout key (``_key``)."""
        checks, outputs, head, kernel, grid, block, flags, scalar_args, returns = \
            prepared.template
        head = head_for(head, scalar_args, args)
        if head is None:
            return self._fallback(prepared, args, None)
        inputs, misaligned = [], 0
        for k, _, align_mask, vector_mask in checks:
            x = args[k]  # an Array: __call__'s key takes no other array
            address = x._d
            if address & align_mask:
                return self._fallback(prepared, args, None)  # off its C++ type's alignment
            misaligned |= address & vector_mask
            inputs.append(x._a)
        if returns is not None:  # several outputs
            made, off_packs = _emulator_outputs(outputs, prepared.shape)
            launch(SOURCE, kernel, grid, block,
                   (*head, flags[not (misaligned | off_packs)], *made, *inputs), backend="emulate")
            return returns([wrap(out, "emulate") for out in made])
        (dtype, out_mask), = outputs
        alloc = current_allocator()  # arrays.empty inlined
        if alloc is None:
            out = np.empty(prepared.shape, dtype)
            address = read_address(id(out) + DATA_FIELD_OFFSET).value or 0
            misaligned |= address & out_mask
        else:  # another allocator's layout: its address read, not kept
            out = alloc(tuple(prepared.shape), dtype)
            misaligned |= numpy_data_pointer(out) & out_mask
            address = None
        launch(SOURCE, kernel, grid, block, (*head, flags[not misaligned], out, *inputs),
               backend="emulate")
        r = _new(Array)  # settled: its pointer, the plan's layout id
        r._a, r._b, r._p = out, "emulate", None
        if address is None:
            r._k = None
        else:
            r._d = address
            r._k = prepared.out_id or learn_out_id(prepared, out, "emulate")
        return r

    def _launch(self, prepared, args, on_its_device=False):
        """Launch a prepared call into new outputs: its signature and layout are ``args``'.
        (The hot path: ``_inputs``, ``_scalars`` and ``_run`` written out.)"""
        template = prepared.template
        if template is not None:  # the emulator: written out
            checks, outputs, head, kernel, grid, block, flags, scalar_args, returns = template
            head = head_for(head, scalar_args, args)
            if head is None:
                return self._fallback(prepared, args, None)
            inputs, misaligned = [], 0
            for k, unwrap, align_mask, vector_mask in checks:
                x = args[k]._a if unwrap else args[k]
                address = read_address(id(x) + DATA_FIELD_OFFSET).value or 0
                if address & align_mask:
                    return self._fallback(prepared, args, None)  # off its C++ type's alignment
                misaligned |= address & vector_mask
                inputs.append(x)
            made, off_packs = _emulator_outputs(outputs, prepared.shape)
            launch(SOURCE, kernel, grid, block,
                   (*head, flags[not (misaligned | off_packs)], *made, *inputs), backend="emulate")
            if prepared.wrap is not None:
                made = [wrap(out, "emulate") for out in made]
            return made[0] if returns is None else returns(made)
        if prepared.on_gpu and not on_its_device:
            return self._on_gpu(prepared, args, None)
        pointer, inputs, misaligned = prepared.pointer, [], 0
        for k, unwrap, align_mask, vector_mask in prepared.input_checks:
            x = args[k]._a if unwrap else args[k]
            address = pointer(x)
            if address & align_mask:
                return self._fallback(prepared, args, None)  # off its C++ type's alignment
            misaligned |= address & vector_mask
            inputs.append(x)
        scalars = head_for((prepared.scalars,), prepared.scalar_source, args)
        if scalars is None:
            return self._fallback(prepared, args, None)
        scalars = scalars[0]
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
            launch(SOURCE, plan.kernel, plan.grid, plan.block, operands, backend=backend)
            if prepared.on_gpu and config.launch_in_force[0] == cuda_compiled.MECHANISM:
                prepared.compiled_launch = compiled_fused_record(prepared)  # C: the next
        if prepared.wrap is not None:
            outputs = [wrap(o, backend) for o in outputs]
        returns = prepared.returns
        if returns == "one":
            return outputs[0]
        return tuple(outputs) if returns == "tuple" else outputs

    def _launch_into(self, prepared, args, out):
        """Launch a prepared call of one output into ``out`` (any layout; an overlap with an
        input other than the same view computes into a temporary first, NumPy's answer)."""
        fx = prepared.fx
        if fx.returns != "one":
            raise TypeError(f"fuse({self.__name__}): out= takes a function of one output; "
                            f"this one returns a {fx.returns} of {len(fx.output_dtypes)}")
        inputs, misaligned = self._inputs(prepared, args)
        scalars = None if inputs is None else scalar_slots_filled(prepared, args)
        if scalars is None:
            return self._fallback(prepared, args, out)
        return launch_into(f"fuse({self.__name__})", prepared, scalars, inputs, misaligned, out)

    # ------------------------------------------------------------ the first call of a layout
    def _call(self, args, kwargs, out):
        unfused = None if kwargs else unfused_key(args, out)
        unfused_calls = self._unfused_calls if out is None else self._unfused_into
        if unfused is not None and unfused in unfused_calls:  # the cpu device
            result = self.function(*args)
            return result if out is None else write_again(f"fuse({self.__name__})", result, out)
        operands = (*args, *kwargs.values()) if kwargs else args
        key = layout_key(operands)
        if key is not None and kwargs:
            key = (tuple(kwargs), *key)
        prepared = None if key is None else self._prepared.get(key)
        if prepared is not None and not (prepared.on_gpu or prepared.wrap is not None
                                         or config.get_backend() == "emulate"):
            prepared = None
        if (prepared is not None and type(out) is Array and prepared.wrap is None
                and out._b != prepared.backend):
            prepared, key = None, None  # native inputs, out on another device: out decides
        if prepared is None:
            try:
                prepared = self._prepare(operands, tuple(kwargs), out)
            except (TypeError, ValueError) as error:  # devices, shapes: the unfused call's
                return self._unfused(args, kwargs, out, _Raised(error))
            if prepared is None or prepared is _NUMPY_COMPUTES:  # nothing to fuse
                result = self._unfused(args, kwargs, out, None)
                if prepared is not None and unfused is not None:  # out= passed its checks
                    unfused_calls.remember(unfused, True)
                return result
            if isinstance(prepared, str):
                return self._unfused(args, kwargs, out, prepared)
            if key is not None:
                self._prepared.remember(key, prepared)
        if out is None:
            return self._launch(prepared, operands)
        if prepared.wrap is not None and type(out) is Array:
            check_same_device(prepared.wrap, out._b)
        if prepared.on_gpu:
            result = self._on_gpu(prepared, operands, out)
        else:
            result = self._launch_into(prepared, operands, out)
        if kwargs:
            return result
        if type(out) is Array:
            key, known = ids_into(args, out), self._into_by_ids
            if key is None:
                key, known = mixed_into(args, out), self._mixed_into
        else:
            key, known = key_into(args, out), self._into_by_key
        if key is not None:  # passed every check of out=: its repeats by these keys
            record = into_record(prepared, args, out, prepared.scalar_source)
            if record is not None:
                known.remember(key, record)
                compiled_hot_calls()  # built and loaded once
        return result

    def _prepare(self, operands, keywords, out=None):
        """The prepared call for ``operands``; ``_NUMPY_COMPUTES`` on the cpu device; None
        without an array argument; else the reason it does not fuse. ValueError for a mix of devices, as the
        unfused call.

        The arrays the results read (and ``out``) decide as for one unfused call: the
        device, and Arrays out when an Array is among them. An argument the results do not
        read takes no part, as in the unfused calls."""
        natives = [a._a if type(a) is Array else a for a in operands]
        if not any(is_array(a) for a in natives):
            return None  # no array to fuse over: the unfused calls
        fx = self._expression(natives, keywords)
        if type(fx) is _Nothing:
            return None  # the results read scalars alone: no array of theirs has a device
        read = operands if isinstance(fx, str) else [operands[k] for k in fx.inputs]
        _, backend, _ = elementwise_operands(read if out is None else (*read, out))
        wrapped = any(type(a) is Array for a in read)  # results of the calls (out aside)
        if backend == "numpy":
            return _NUMPY_COMPUTES  # nothing to plan
        if isinstance(fx, str):
            return fx
        inputs = [natives[k] for k in fx.inputs]
        layouts = plan_arguments(fx, inputs)
        plan = plan_fused(*layouts)
        if plan is None:
            return _UNPLANNED
        prepared = _Prepared()
        prepared.fx, prepared.plan, prepared.keywords = fx, plan, keywords
        prepared.out_id = None  # its outputs' layout id, learnt from the first (_launch_ids)
        prepared.compiled_launch = None  # a GPU's launch record (compiled_fused_record)
        prepared.returns = fx.returns
        prepared.layouts = layouts
        prepared.backend = backend
        prepared.wrap = backend if wrapped else None
        prepared.on_gpu = backend == "cuda"
        if prepared.on_gpu:
            array_types.add(type(inputs[0]))
        prepared.shape = plan.shape
        if not int(np.prod(plan.shape, dtype=np.int64)):
            prepared.plan = None  # an empty result: nothing to launch
        prepared.pointer = pointer_reader(backend)
        nout = len(fx.output_dtypes)
        masks = plan.vector_masks or (0,) * (nout + len(inputs))
        prepared.input_checks = tuple(
            (k, type(operands[k]) is Array, dtypes.alignment(d) - 1, mask)
            for k, d, mask in zip(fx.inputs, fx.input_dtypes, masks[nout:]))
        prepared.output_checks = tuple(zip(fx.output_dtypes, masks[:nout]))
        prepared.scalars, prepared.arg_slots = scalar_slots(fx)
        prepared.scalar_source = _scalar_arguments(  # slots kept per the scalars' objects
            prepared, tuple(k for k, a in enumerate(operands) if type(a) in SCALAR_TYPES))
        prepared.scalar_bytes = prepared.scalars.tobytes()
        prepared.template = _emulator_template(prepared)
        return prepared

    def _expression_plan(self, natives, keywords):
        """(FusedExpression, FusedLaunch) for native arguments (arrays, specs, scalars), or
        (the reason it is not fused, None)."""
        fx = self._expression(natives, keywords)
        if isinstance(fx, str):
            return fx, None
        plan = plan_fused(*plan_arguments(fx, [natives[k] for k in fx.inputs]))
        return (fx, plan) if plan is not None else (_UNPLANNED, None)

    def _expression(self, natives, keywords):
        """The FusedExpression for native arguments (arrays, specs, scalars), or the reason
        it is not fused."""
        signature = []
        for k, a in enumerate(natives):
            if type(a) in PYTHON_SCALARS:
                signature.append(("python", type(a)))
            elif isinstance(a, np.generic):
                signature.append(("numpy", a.dtype))
            elif is_array(a) or type(a) is ArraySpec:
                signature.append(("array", a.dtype, a.ndim))
            elif a is None or type(a) is str:  # an option (mode="relu"): part of the trace
                signature.append(("static", a))
            else:
                return f"argument {k} is a {type(a).__name__}"
        return self._trace(tuple(signature), keywords)

    def _trace(self, signature, keywords):
        fx = self._traces.get((signature, keywords))
        if fx is None:
            try:
                fx = trace_function(self.function, signature, keywords)
            except ReadsNoArray as e:
                fx = _Nothing(e)
            except Untraceable as e:
                fx = f"{e}"
            except Exception as e:  # noqa: BLE001 - any failure: the unfused call decides
                fx = _Raised(stopping_call(e, self.function))
            self._traces[(signature, keywords)] = fx
        return fx

    # ------------------------------------------------------------ unfused
    def _fallback(self, prepared, operands, out):
        """The unfused calls for a prepared signature: an input off its C++ type's alignment,
        or a scalar computed from the arguments of another type than traced."""
        positional = len(operands) - len(prepared.keywords)
        return self._unfused(operands[:positional],
                             dict(zip(prepared.keywords, operands[positional:])), out, None)

    def _unfused(self, args, kwargs, out, reason):
        """The function's own calls: their errors are the call's; then the warning (or, when
        strict, the TypeError) saying why it was not fused."""
        if self.strict and reason is not None and type(reason) is not _Raised:
            raise TypeError(f"fuse({self.__name__}): cannot fuse: {reason}")
        result = self.function(*args, **kwargs)
        if reason is not None:
            if self.strict:
                raise TypeError(f"fuse({self.__name__}): cannot fuse: {reason}")
            warnings.warn(f"fuse({self.__name__}): {reason}; running unfused", FusionWarning,
                          stacklevel=4)
        if out is None:
            return result
        return write_out(f"fuse({self.__name__})", result, out)

    # ------------------------------------------------------------ ahead of time
    def kernel_name(self, *args, **kwargs) -> str | None:
        """The name expression a call with these arguments launches on the emulator or a GPU
        (nothing runs); None when it launches none (an empty result); TypeError when it is
        not fused. Arrays may be given as ``(shape, dtype)`` (C-contiguous), scalars as
        their type (``float``).

        >>> import numpy as np, infini_cupy as xp
        >>> xp.fuse(lambda x, y: x * y + 1).kernel_name(((3,), "float32"), 2.0)  # doctest: +ELLIPSIS
        'ew_fused_contig<ic::Fused<ic::Expr<ic::OpAdd, float, float, ic::Expr<ic::OpMultiply, ...'
        """
        operands = [_spec(a) for a in (*args, *kwargs.values())]
        natives = [a._a if type(a) is Array else a for a in operands]
        fx, plan = self._expression_plan(natives, tuple(kwargs))
        if isinstance(fx, str):
            raise TypeError(f"fuse({self.__name__}): cannot fuse: {fx}")
        return plan.kernel if int(np.prod(plan.shape, dtype=np.int64)) else None

    def prepare(self, *args, **kwargs) -> str | None:
        """Compile, ahead of the first call, the kernel a call with these arguments (or
        ``(shape, dtype)`` pairs and scalar types, see :meth:`kernel_name`) launches, for the
        device of the arrays given (for pairs: the backend in force, or the current GPU when
        that is ``numpy`` and CuPy sees one), so that the first call does not wait for NVRTC
        or g++. Returns its name expression (None: nothing to
        compile, for an empty result or the cpu device). The kernel goes to the same caches
        as every variant (the GPU's ``$INFINI_CUPY_CACHE_DIR/cubin`` included).

        >>> import infini_cupy as xp
        >>> with xp.backend("emulate"):  # doctest: +ELLIPSIS
        ...     xp.fuse(lambda x: x * 2).prepare(((1024,), "float32"))
        'ew_fused_contig<ic::Fused<ic::Expr<ic::OpMultiply, float, float, ic::In<0>, ic::Scalar<0, float>>>, float, float>'
        """
        name = self.kernel_name(*args, **kwargs)
        arrays = [a for a in (*args, *kwargs.values()) if type(a) is Array or is_array(a)]
        backend = elementwise_operands(arrays)[1] if arrays else config.get_backend()
        if not arrays and backend == "numpy" and gpu_available():
            backend = "cuda"
        if name is not None and backend != "numpy":
            launches.prepare(SOURCE, [name], backend=backend)
        return name if backend != "numpy" else None


def fuse(function=None, *, strict: bool = False):
    """Decorator: run ``function`` as one fused kernel per call.

    The function may apply the elementwise functions (NumPy's ufuncs too), operators,
    ``where``, ``astype`` and ``clip`` to its array and scalar arguments; the fused function
    takes what the unfused calls take (Arrays, native arrays, NumPy and Python scalars, in any
    mix), keyword arguments included, plus ``out=`` for a single result. The first call with a
    signature (per argument: dtype and ndim of an array, the type of a scalar) traces it into
    one expression, with the standard's promotion at every node; each call then launches one kernel that reads every
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
        ``kernel_name(*args)`` names the kernel a call launches and ``prepare(*args)``
        compiles it ahead of the first call (arguments may be ``(shape, dtype)`` pairs).

    Raises
    ------
    TypeError
        A ``function`` that is not callable. At a call, with ``strict=True``, where the
        function cannot be fused (and the unfused calls succeed); the errors the unfused
        calls raise, as they raise them.

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
