"""The pending expressions of deferred Arrays (:func:`infini_cupy.lazy`) and their
evaluation: one fused kernel (``infini_cupy.fuse``'s trace and plan) per group of pending
Arrays of one device and shape, reading each input once and writing only the Arrays still
referenced; intermediates nothing references live in registers, never in memory.

Any evaluation evaluates every pending Array still referenced: so a write into memory (an
``out=``, ``x[key] = v``, ``rearrange_``, a buffer handed out through ``__array__`` or
DLPack) calls :func:`evaluate_all` first, and no pending expression reads memory changed
after its call. A deferred Array's pending expression is its ``_p``; its ``_a`` is unset
until evaluated: ``Array.__getattr__`` (:func:`_read_pending`, set at the first deferral)
evaluates it on the first read.
"""

from __future__ import annotations

import logging
import threading
import weakref

import numpy as np

from .. import config
from .lazy_tape import MAX_INPUTS, MAX_NODES, MAX_SCALARS, PendingExpression, Tape

_log = logging.getLogger("infini_cupy")

MAX_OUTPUTS = 8  # Arrays one kernel writes
MAX_EVALUATIONS = 64  # sets of outputs a chain state remembers the fused function of
# Past this many registered expressions the dead ones are dropped, and past half of it live
# ones are evaluated: code that defers in a loop and never reads stays bounded.
MAX_REGISTERED = 1024

# weakref of every deferred Array (its ``_p`` the PendingExpression) registered since the
# last evaluation, in call order: dead once nothing references it (an intermediate)
expressions: list = []
lock = threading.RLock()  # held while expressions and the tapes change
# per thread (its ident), the tape of the steps it deferred since the last evaluation: a
# chain is one thread's calls, never interleaved with another's (whose chain shapes would
# mix, each mix a program of its own to trace and compile)
tapes: dict = {}
_PYTHON_SCALARS = frozenset({bool, int, float, complex})
# boundary.compiled_calls, set by boundary: the compiled hot path once loaded, whose last
# item (runtime/lazy_calls.c's evaluate_seen) evaluates a chain seen before
compiled_calls: list = [None]
# (group of (expression, deferred Array), its program or None, its fused function or None)
# -> the fused function that computed it: computes each and sets the Array's ``_a``; set by
# lazy_kernels.install (it needs fuse, which this module may not import)
evaluate_group = None


def register(expression: PendingExpression, array, resolved=None) -> None:
    """Put ``array``, deferred with ``expression``, in :data:`expressions` and on the tape
    (``resolved``: what ``lazy`` resolved of its call, for the tape's state to keep)."""
    with lock:
        current_tape().add(expression, resolved)
        if register_seen(array):
            return
        expressions[:] = [ref for ref in expressions if _unevaluated(ref())]
        crowded = len(expressions) >= MAX_REGISTERED // 2
    if crowded:
        evaluate_all(f"{len(expressions)} pending arrays")


def current_tape() -> Tape:
    """This thread's tape (the lock held)."""
    ident = threading.get_ident()
    tape = tapes.get(ident)
    if tape is None:
        tape = tapes[ident] = Tape()
    return tape


def register_seen(array) -> bool:
    """Put ``array``, already on the tape, in :data:`expressions` (the lock held); False
    when they are past :data:`MAX_REGISTERED`."""
    if _deferred_class[0] is None:
        _deferred_class[0] = cls = type(array)
        cls.__getattr__ = _read_pending
    expressions.append(weakref.ref(array))
    return len(expressions) < MAX_REGISTERED


# The Array class, whose __getattr__ is _read_pending from the first deferral on: reading an
# unset ``_a`` evaluates. Set once, not per chain: setting and removing a class attribute
# costs about 1 us and drops CPython's cached attribute lookups on every Array, where a failed
# lookup through it (NumPy probes two at every np.asarray) costs about 0.03 us more.
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


def _unevaluated(owner) -> bool:
    """A deferred Array still referenced, not yet evaluated."""
    return owner is not None and owner._p is not None


def evaluate_all(reason: str) -> None:
    """Compute every pending Array still referenced (``reason``: what needs it, for the log)."""
    compiled = compiled_calls[-1]
    if compiled is not None and compiled() is not None:  # these steps in C, a chain seen
        return
    with lock:
        live = []
        for ref in expressions:
            owner = ref()
            if owner is not None:
                expression = owner._p
                if expression is not None:
                    live.append((expression, owner))
        expressions.clear()
        tapes.clear()  # every tape's live steps are computed below: each thread starts anew
        tapes[threading.get_ident()] = Tape()  # (this one's now: it goes on first, mostly)
        if not live:
            return
        token = config.enter_lazy(False)  # the evaluation's own calls run now
        try:
            tape = live[0][0].tape
            if all([e.tape is tape for e, _ in live]):  # mostly: one thread's chain
                kernels = _evaluate(live, tape)
            else:
                kernels = sum([_evaluate(members, tape)
                               for tape, members in _by_tape(live).items()])
        except BaseException:  # what is left stays pending, each on the tape it was on
            expressions.extend(weakref.ref(owner) for e, owner in live if e.result is None)
            raise
        finally:
            config.exit_lazy(token)
    _log.debug("lazy: %d pending array(s) evaluated by %d fused kernel(s): %s",
               len(live), kernels, reason)


def _by_tape(live) -> dict:
    """``live``'s pairs per the tape their expressions are on (None: on none), in call order."""
    by_tape = {}
    for pair in live:
        by_tape.setdefault(pair[0].tape, []).append(pair)
    return by_tape


def _evaluate(live, tape) -> int:
    """Compute ``live``, (expression, Array) pairs registered on ``tape`` (None: on no tape);
    the number of kernels. A chain state seen evaluating these outputs before (all on the
    tape, in one group: both follow from the state and the outputs) runs its fused function."""
    state = tape.state if tape is not None else None
    if state is not None:
        outputs = tuple([e.index for e, _ in live])
        fused = state.fused.get(outputs)
        if fused is not None:
            evaluate_group(live, (state.steps, outputs, tape.leaves), fused)
            return 1
    groups = _groups(live)
    if len(groups) == 1:
        program = tape.program([e for e, _ in live]) if state is not None else None
        fused = evaluate_group(live, program, None)
        if program is not None:
            if len(state.fused) >= MAX_EVALUATIONS:
                state.fused.clear()
            state.fused[outputs] = fused
        return 1
    for group in groups:
        evaluate_group(group, None, None)
    return len(groups)


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
