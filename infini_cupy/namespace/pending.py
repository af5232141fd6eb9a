"""The pending expressions of deferred Arrays (:func:`infini_cupy.lazy`) and their
evaluation: one fused kernel (``infini_cupy.fuse``'s trace and plan) per group of pending
Arrays of one device and shape, reading each input once and writing only the Arrays still
referenced; intermediates nothing references live in registers, never in memory.

Any evaluation evaluates every pending Array still referenced: so a write into memory (an
``out=``, ``x[key] = v``, ``rearrange_``, a buffer handed out through ``__array__`` or
DLPack) calls :func:`evaluate_all` first, and no pending expression reads memory changed
after its call. A deferred Array's pending expression is its ``_p``; its ``_a`` is unset
until evaluated: while any is, ``Array.__getattr__`` (:func:`_read_pending`) evaluates on
the first read.
"""

from __future__ import annotations

import logging
import threading
import weakref

import numpy as np

from .. import config

_log = logging.getLogger("infini_cupy")

# Per expression (shared subexpressions counted once per use, as the fused C++ type copies
# them): nodes (fuse's trace refuses more than 256), kernel inputs and scalar slots (the
# kernel's parameters: 16 bytes a slot, within CUDA's 4 KiB with the layout structs).
MAX_NODES = 128
MAX_INPUTS = 16
MAX_SCALARS = 64
MAX_OUTPUTS = 8  # Arrays one kernel writes
# Past this many registered expressions the dead ones are dropped, and past half of it live
# ones are evaluated: code that defers in a loop and never reads stays bounded.
MAX_REGISTERED = 1024

# weakref of every deferred Array (its ``_p`` the PendingExpression) registered since the
# last evaluation, in call order: dead once nothing references it (an intermediate)
expressions: list = []
_lock = threading.RLock()
_PYTHON_SCALARS = frozenset({bool, int, float, complex})
# (group of (expression, deferred Array), its program or None) -> None: computes each and
# sets the Array's ``_a``; set by lazy_kernels.install (it needs fuse, which this module may
# not import)
evaluate_group = None


class PendingExpression:
    """``name(*args, *constants)`` not yet computed: what a deferred Array will hold.

    args: a PendingExpression (a deferred argument), an evaluated Array, or a scalar.
    constants: arguments of the call that are part of the kernel (astype's dtype).
    dtype, shape: the result's, resolved at the call. backend, device: the Array's (device:
    the GPU's index on ``cuda``, else None). nodes, inputs, scalars: the expression tree's
    size (uses of a shared subexpression counted each). kind: an id of (dtype, shape,
    backend), for the signature of a call taking it (``lazy._kind``). result: the evaluated
    Array. tape, index: the tape its step is on (:class:`_Tape`, None: none) and its position.
    """

    __slots__ = ("name", "args", "constants", "dtype", "shape", "backend", "device", "nodes",
                 "inputs", "scalars", "kind", "result", "tape", "index")

    def __init__(self, name, args, dtype, shape, backend, device, nodes, inputs, scalars, kind,
                 constants=()):
        self.name, self.args, self.constants = name, args, constants
        self.dtype, self.shape = dtype, shape
        self.backend, self.device = backend, device
        self.nodes, self.inputs, self.scalars = nodes, inputs, scalars
        self.kind = kind
        self.result = self.tape = None


class _Tape:
    """The program of every expression registered since the last evaluation, written as
    they are registered (call order is an order of computation): per expression its step
    ``(name, constants, refs)``, a ref ``(0, k)`` to leaf k or ``(1, j)`` to step j. While
    every expression on it has one backend, device and shape and its size is within the
    kernel's limits, an evaluation whose live Arrays make one group takes it as the group's
    program (:func:`program`'s walk aside), intermediates nothing references included:
    computed in registers, never stored."""

    def __init__(self):
        self.steps, self.leaves, self.leaf_of = [], [], {}
        self.shape = self.backend = self.device = None  # of its expressions
        self.usable = True  # False once past the limits or mixed
        self.inputs = self.scalars = 0

    def add(self, expression) -> None:
        if not self.usable:
            return
        if self.shape is None:
            self.shape, self.backend = expression.shape, expression.backend
            self.device = expression.device
        elif (expression.shape != self.shape or expression.backend != self.backend
              or expression.device != self.device):
            self.give_up()
            return
        refs, leaves = [], self.leaves
        for arg in expression.args:
            if type(arg) is PendingExpression:
                if arg.result is None:
                    if arg.tape is not self:  # (not on it: registered before a failure)
                        self.give_up()
                        return
                    refs.append((1, arg.index))
                    continue
                arg = arg.result
            if type(arg) in _PYTHON_SCALARS or isinstance(arg, np.generic) or arg is None:
                refs.append((0, len(leaves)))  # a scalar: a slot per use
                leaves.append(arg)
                self.scalars += 1
                continue
            k = self.leaf_of.get(id(arg))  # an Array: one kernel input however many uses
            if k is None:
                k = self.leaf_of[id(arg)] = len(leaves)
                leaves.append(arg)  # held: its id stays its own
                self.inputs += 1
            refs.append((0, k))
        expression.tape, expression.index = self, len(self.steps)
        self.steps.append((expression.name, expression.constants, tuple(refs)))
        if (len(self.steps) + len(leaves) > MAX_NODES or self.inputs > MAX_INPUTS
                or self.scalars > MAX_SCALARS):
            self.give_up()

    def give_up(self) -> None:
        """Evaluations walk the expressions until the next; the leaves held go now (the tape
        holds the Arrays its dead steps read until an evaluation, no longer)."""
        self.usable = False
        self.steps, self.leaves, self.leaf_of = [], [], {}

    def program(self, group):
        """(steps, output step indices, leaves) of ``group``, or None for the walk."""
        if not self.usable:
            return None
        return tuple(self.steps), tuple([e.index for e, _ in group]), self.leaves


_tape = _Tape()


def register(expression: PendingExpression, array) -> None:
    """Put ``array``, deferred with ``expression``, in :data:`expressions` and on the tape."""
    with _lock:
        if not expressions:
            _deferred_class[0] = cls = type(array)
            cls.__getattr__ = _read_pending
        _tape.add(expression)
        expressions.append(weakref.ref(array))
        if len(expressions) < MAX_REGISTERED:
            return
        expressions[:] = [ref for ref in expressions if _unevaluated(ref())]
        crowded = len(expressions) >= MAX_REGISTERED // 2
    if crowded:
        evaluate_all(f"{len(expressions)} pending arrays")


# The Array class, whose __getattr__ is _read_pending while any deferred Array may be
# unevaluated: then reading an unset ``_a`` evaluates, and at no other time does a failed
# attribute lookup on an Array go through Python (NumPy probes two at every np.asarray).
_deferred_class: list = [None]


def _read_pending(array, name):
    """``Array.__getattr__`` while Arrays are deferred: ``_a`` of a deferred Array is
    computed on first read, so no code path reads an unevaluated buffer."""
    if name == "_a":
        expression = array._p
        if expression is not None:
            evaluate_all(f"a {expression.name}() result read")
            return array._a
    elif name in type(array).__dict__:
        return object.__getattribute__(array, name)  # a property's own AttributeError
    raise AttributeError(f"'{type(array).__name__}' object has no attribute {name!r}")


def _release_class() -> None:
    """Nothing deferred is left: Array's lookups are plain again."""
    cls = _deferred_class[0]
    if cls is not None and not expressions and "__getattr__" in cls.__dict__:
        del cls.__getattr__


def _unevaluated(owner) -> bool:
    """A deferred Array still referenced, not yet evaluated."""
    return owner is not None and owner._p is not None


def evaluate_all(reason: str) -> None:
    """Compute every pending Array still referenced (``reason``: what needs it, for the log)."""
    global _tape
    with _lock:
        live = []
        for ref in expressions:
            owner = ref()
            if owner is not None:
                expression = owner._p
                if expression is not None:
                    live.append((expression, owner))
        expressions.clear()
        tape, _tape = _tape, _Tape()
        if not live:
            _release_class()
            return
        token = config.enter_lazy(False)  # the evaluation's own calls run now
        kernels = 0
        try:
            groups = _groups(live)
            if len(groups) == 1:
                evaluate_group(groups[0], tape.program(groups[0]))
                kernels = 1
            else:
                for group in groups:
                    evaluate_group(group, None)
                    kernels += 1
        except BaseException:
            expressions.extend(weakref.ref(owner) for e, owner in live if e.result is None)
            _tape.give_up()  # their steps are not on it
            raise
        finally:
            config.exit_lazy(token)
        _release_class()
    _log.debug("lazy: %d pending array(s) evaluated by %d fused kernel(s): %s",
               len(live), kernels, reason)


def _groups(live):
    """Pending Arrays in groups that one kernel computes: one device and shape, within the
    kernel's limits together."""
    groups, open_groups = [], {}
    for expression, owner in live:
        key = (expression.backend, expression.device, expression.shape)
        group = open_groups.get(key)
        if group is not None:
            nodes, inputs, scalars = group[0]
            if (nodes + expression.nodes > MAX_NODES or inputs + expression.inputs > MAX_INPUTS
                    or scalars + expression.scalars > MAX_SCALARS
                    or len(group[1]) == MAX_OUTPUTS):
                group = None
        if group is None:
            group = open_groups[key] = [(0, 0, 0), []]
            groups.append(group)
        nodes, inputs, scalars = group[0]
        group[0] = (nodes + expression.nodes, inputs + expression.inputs,
                    scalars + expression.scalars)
        group[1].append((expression, owner))
    return [members for _, members in groups]


def program(outputs):
    """(steps, output step indices, leaves): the expressions as a list of calls, each
    ``(name, constants, refs)`` with a ref ``(0, k)`` to leaf k (an evaluated Array or a scalar, the
    fused function's arguments) or ``(1, j)`` to step j's result."""
    steps, step_of, leaves, leaf_of = [], {}, [], {}

    def ref(arg):
        if type(arg) is PendingExpression:
            if arg.result is not None:
                arg = arg.result
            else:
                j = step_of.get(id(arg))
                if j is None:
                    refs = tuple([ref(a) for a in arg.args])
                    j = step_of[id(arg)] = len(steps)
                    steps.append((arg.name, arg.constants, refs))
                return (1, j)
        if type(arg) in _PYTHON_SCALARS or isinstance(arg, np.generic) or arg is None:
            leaves.append(arg)  # a scalar: a slot per use (1 and 1.0 and True are equal)
            return (0, len(leaves) - 1)
        k = leaf_of.get(id(arg))  # an Array: one kernel input however many uses
        if k is None:
            k = leaf_of[id(arg)] = len(leaves)
            leaves.append(arg)
        return (0, k)

    outputs = tuple(ref(e)[1] for e in outputs)
    return tuple(steps), outputs, leaves
