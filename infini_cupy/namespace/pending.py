"""The pending expressions of deferred Arrays (:func:`infini_cupy.lazy`) and their
evaluation: one fused kernel (``infini_cupy.fuse``'s trace and plan) per group of pending
Arrays of one device and shape, reading each input once and writing only the Arrays still
referenced; intermediates nothing references live in registers, never in memory.

Any evaluation evaluates every pending Array still referenced: so a write into memory (an
``out=``, ``x[key] = v``, ``rearrange_``, a buffer handed out through ``__array__`` or
DLPack) calls :func:`evaluate_all` first, and no pending expression reads memory changed
after its call. A deferred Array's pending expression is its ``_p``; its ``_a`` is unset
until evaluated (``Array.__getattr__`` evaluates on the first read).
"""

from __future__ import annotations

import logging
import threading
import weakref

from .. import config

_log = logging.getLogger("infini_cupy")

# Per expression (shared subexpressions counted once per use, as the fused C++ type copies
# them): nodes (fuse's trace refuses more than 256), kernel inputs and scalar slots (the
# kernel's parameters: 16 bytes a slot, within CUDA's 4 KiB with the layout structs).
MAX_NODES = 128
MAX_INPUTS = 16
MAX_SCALARS = 64

expressions: list = []  # weakref of every PendingExpression not yet evaluated, in call order
_lock = threading.RLock()
_fused: dict = {}  # (steps, outputs, leaf count) -> FusedFunction of the replay


class PendingExpression:
    """``name(*args)`` not yet computed: what a deferred Array will hold.

    args: a PendingExpression (a deferred argument), an evaluated Array, or a scalar.
    dtype, shape: the result's, resolved at the call. backend, device: the Array's (device:
    the GPU's index on ``cuda``, else None). nodes, inputs, scalars: the expression tree's
    size (uses of a shared subexpression counted each). owner: weakref to the deferred
    Array (dead once nothing references it: an intermediate). result: the evaluated Array.
    """

    __slots__ = ("name", "args", "dtype", "shape", "backend", "device", "nodes", "inputs",
                 "scalars", "owner", "result", "__weakref__")

    def __init__(self, name, args, dtype, shape, backend, device, nodes, inputs, scalars):
        self.name, self.args, self.dtype, self.shape = name, args, dtype, shape
        self.backend, self.device = backend, device
        self.nodes, self.inputs, self.scalars = nodes, inputs, scalars
        self.owner = self.result = None


def register(expression: PendingExpression, array) -> None:
    expression.owner = weakref.ref(array)
    with _lock:
        expressions.append(weakref.ref(expression))


def evaluate_all(reason: str) -> None:
    """Compute every pending Array still referenced (``reason``: what needs it, for the log)."""
    with _lock:
        live = []
        for ref in expressions:
            expression = ref()
            if expression is not None and expression.result is None:
                owner = expression.owner()
                if owner is not None:
                    live.append((expression, owner))
        expressions.clear()
        if not live:
            return
        token = config.enter_lazy(False)  # the evaluation's own calls run now
        kernels = 0
        try:
            for group in _groups(live):
                _evaluate(group)
                kernels += 1
        except BaseException:
            expressions.extend(weakref.ref(e) for e, _ in live if e.result is None)
            raise
        finally:
            config.exit_lazy(token)
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
                    or scalars + expression.scalars > MAX_SCALARS):
                group = None
        if group is None:
            group = open_groups[key] = [(0, 0, 0), []]
            groups.append(group)
        nodes, inputs, scalars = group[0]
        group[0] = (nodes + expression.nodes, inputs + expression.inputs,
                    scalars + expression.scalars)
        group[1].append((expression, owner))
    return [members for _, members in groups]


def _evaluate(group) -> None:
    """One fused kernel computing the group's Arrays (run unfused where fuse cannot)."""
    from .fusion import FusedFunction

    steps, outputs, leaves = _program([e for e, _ in group])
    key = (steps, outputs, len(leaves))
    fused = _fused.get(key)
    if fused is None:
        if len(_fused) >= 1024:
            _fused.clear()
        fused = _fused[key] = FusedFunction(_replay(steps, outputs), strict=True)
    try:
        results = fused(*leaves)
    except TypeError:  # cannot fuse (strict): the calls themselves, one kernel each
        results = fused.function(*leaves)
    for (expression, owner), result in zip(group, results):
        owner._a = result._a
        owner._p = None
        expression.result = owner
        expression.args = ()  # its inputs may go now


def _program(outputs):
    """(steps, output step indices, leaves): the expressions as a list of calls, each
    ``(name, refs)`` with a ref ``(0, k)`` to leaf k (an evaluated Array or a scalar, the
    fused function's arguments) or ``(1, j)`` to step j's result."""
    from .array import Array

    steps, step_of, leaves, leaf_of = [], {}, [], {}

    def ref(arg):
        if type(arg) is PendingExpression:
            if arg.result is not None:
                arg = arg.result
            else:
                j = step_of.get(id(arg))
                if j is None:
                    refs = tuple(ref(a) for a in arg.args)
                    j = step_of[id(arg)] = len(steps)
                    steps.append((arg.name, refs))
                return (1, j)
        if type(arg) is Array:  # one kernel input per Array, however many uses
            k = leaf_of.get(id(arg))
            if k is None:
                k = leaf_of[id(arg)] = len(leaves)
                leaves.append(arg)
            return (0, k)
        leaves.append(arg)  # a scalar: a slot per use (1 and 1.0 and True are equal)
        return (0, len(leaves) - 1)

    outputs = tuple(ref(e)[1] for e in outputs)
    return tuple(steps), outputs, leaves


def _replay(steps, outputs):
    """The function of the leaves that makes the calls again: traced by fuse, or run."""
    import infini_cupy

    functions = [getattr(infini_cupy, name) for name, _ in steps]
    calls = [(f, refs) for f, (_, refs) in zip(functions, steps)]

    def replay(*leaves):
        values = []
        for function, refs in calls:
            values.append(function(*(values[k] if step else leaves[k] for step, k in refs)))
        return tuple(values[j] for j in outputs)

    replay.__name__ = replay.__qualname__ = "lazy"
    return replay
