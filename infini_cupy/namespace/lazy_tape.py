"""What a deferred call writes down (:func:`infini_cupy.lazy`): its :class:`PendingExpression`,
and its step on the :class:`Tape`, the program of every call its thread deferred since the
last evaluation, in call order.

A tape follows a path of :class:`ChainState`: the shape of a chain so far (its steps, and
the layouts, dtypes and scalar types of its operands), shared by every tape that writes the
same calls on operands of the same layouts. A state keeps what its first chain learnt past
it: per next call (keyed by :meth:`Tape.add`'s key) the state after it and the call's
resolution, and per set of Arrays evaluated the fused function computing them. So a chain
seen before is deferred without resolving its calls again (``lazy.defer_seen``) and
evaluated without walking, hashing or grouping its program (``pending.evaluate_all``).
"""

from __future__ import annotations

import numpy as np

from ..elementwise.short_path import layout_id

# Per expression (shared subexpressions counted once per use, as the fused C++ type copies
# them): nodes (fuse's trace refuses more than 256), kernel inputs and scalar slots (the
# kernel's parameters: 16 bytes a slot, within CUDA's 4 KiB with the layout structs).
MAX_NODES = 128
MAX_INPUTS = 16
MAX_SCALARS = 64
MAX_STATES = 4096  # chain states kept: past it, tapes start from a new root
_PYTHON_SCALARS = frozenset({bool, int, float, complex})


class PendingExpression:
    """``name(*args, *constants)`` not yet computed: what a deferred Array will hold.

    args: a PendingExpression (a deferred argument), an evaluated Array, or a scalar.
    constants: arguments of the call that are part of the kernel (astype's dtype).
    dtype, shape: the result's, resolved at the call. backend, device: the Array's (device:
    the GPU's index on ``cuda``, else None). nodes, inputs, scalars: the expression tree's
    size (uses of a shared subexpression counted each). kind: an id of (dtype, shape,
    backend), for the signature of a call taking it (``lazy.result_kind``). result: the
    evaluated Array. tape: the tape of the thread that deferred it (None: none, or evaluated);
    index: its step's position there, while the tape follows a chain state.
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


class ChainState:
    """A chain's shape so far. steps: per step ``(name, constants, refs)``, a ref ``(0, k)``
    to leaf k or ``(1, j)`` to step j. shape, backend: every step's (None at the root).
    leaves, inputs, scalars: the tape's leaves (its kernel inputs, one per Array however
    many uses, and its scalar slots, one per use) and their two counts. next: a call's key ->
    (the state after it, the call's resolution by ``lazy`` or None, the expression's nodes,
    inputs and scalars). fused: output step indices -> the fused function computing them
    as one group (``pending.evaluate_all``)."""

    __slots__ = ("steps", "shape", "backend", "leaves", "inputs", "scalars", "next", "fused")

    def __init__(self, steps=(), shape=None, backend=None, leaves=0, inputs=0, scalars=0):
        self.steps, self.shape, self.backend = steps, shape, backend
        self.leaves, self.inputs, self.scalars = leaves, inputs, scalars
        self.next, self.fused = {}, {}


_root = [ChainState(), 0]  # the root, and how many states hang from it


def step_ref(index: int) -> int:
    """A call key's item for a pending operand, step ``index`` of the tape (layout ids, an
    Array's item, are positive)."""
    return -1 - 2 * index


def leaf_ref(index: int) -> int:
    """A call key's item for an Array already leaf ``index`` of the tape."""
    return -2 - 2 * index


class Tape:
    """The program of the calls one thread deferred since the last evaluation (each thread
    has its own: ``pending.current_tape``): its state (None once it is no one kernel's:
    several shapes or devices, a step off it, past the kernel's limits; evaluations then walk
    the expressions), its leaves (held: an Array's id stays its own) and ``leaf_of`` (an
    Array's id -> its leaf index), the device of its steps."""

    __slots__ = ("state", "leaves", "leaf_of", "device")

    def __init__(self):
        self.state = _root[0]
        self.leaves, self.leaf_of, self.device = [], {}, None

    def add(self, expression, resolved=None) -> None:
        """Write ``expression``'s step, following (or learning) its state; ``resolved``:
        what ``lazy`` resolved of the call, kept for its repeats."""
        expression.tape = self  # evaluated with its thread's other steps, however written
        state = self.state
        if state is None:
            return
        if state.shape is None:
            self.device = expression.device
        elif (expression.shape != state.shape or expression.backend != state.backend
              or expression.device != self.device):
            self.give_up()
            return
        key, refs, leaves, leaf_of = [expression.name, *expression.constants], [], \
            self.leaves, self.leaf_of
        inputs = scalars = 0
        for arg in expression.args:
            if type(arg) is PendingExpression:
                if arg.result is None:
                    if arg.tape is not self:  # (another thread's, or pending since a failure)
                        self.give_up()
                        return
                    key.append(step_ref(arg.index))
                    refs.append((1, arg.index))
                    continue
                arg = arg.result
            if type(arg) in _PYTHON_SCALARS or isinstance(arg, np.generic) or arg is None:
                key.append(type(arg))  # a scalar: a slot per use
                refs.append((0, len(leaves)))
                leaves.append(arg)
                scalars += 1
                continue
            k = leaf_of.get(id(arg))  # an Array: one kernel input however many uses
            if k is None:
                key.append(arg._k or layout_id(arg._a, arg._b))
                k = leaf_of[id(arg)] = len(leaves)
                leaves.append(arg)
                inputs += 1
            else:
                key.append(leaf_ref(k))
            refs.append((0, k))
        key = tuple(key)
        known = state.next.get(key)
        if known is None:
            after = ChainState(state.steps + ((expression.name, expression.constants,
                                               tuple(refs)),),
                               expression.shape, expression.backend, len(leaves),
                               state.inputs + inputs, state.scalars + scalars)
            if (len(after.steps) + after.leaves > MAX_NODES or after.inputs > MAX_INPUTS
                    or after.scalars > MAX_SCALARS):
                self.give_up()
                return
            known = _learn(state, key, after, resolved, expression)
        elif resolved is not None and known[1] is None:
            known = state.next[key] = (known[0], resolved, *known[2:])
        expression.index = len(state.steps)
        self.state = known[0]

    def write_seen(self, expression, state, after, added, fresh, device) -> None:
        """Write a call whose key ``state`` knows (``lazy.defer_seen`` checked it): its
        expression, the state ``after`` it, its ``added`` leaves, ``fresh``: (Array, leaf
        index) of the Arrays among them, ``device``: its device."""
        expression.tape, expression.index = self, len(state.steps)
        self.leaves += added
        for array, k in fresh:
            self.leaf_of[id(array)] = k
        self.device = device
        self.state = after

    def give_up(self) -> None:
        """Evaluations walk the expressions until the next; the leaves held go now (the tape
        holds the Arrays its dead steps read until an evaluation, no longer)."""
        self.state = None
        self.leaves, self.leaf_of = [], {}

    def program(self, outputs):
        """(steps, output step indices, leaves) of the expressions ``outputs``, or None for
        the walk."""
        if self.state is None:
            return None
        return self.state.steps, tuple([e.index for e in outputs]), self.leaves


def _learn(state, key, after, resolved, expression) -> tuple:
    """``state.next[key]``, learnt: bounded, by starting over from a new root."""
    root = _root
    root[1] += 1
    if root[1] > MAX_STATES:
        root[:] = [ChainState(), 0]  # tapes already on the old tree finish on it
    known = state.next[key] = (after, resolved, expression.nodes, expression.inputs,
                               expression.scalars)
    return known
