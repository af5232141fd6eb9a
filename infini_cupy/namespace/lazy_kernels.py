"""The fused kernels that compute ``infini_cupy.lazy``'s pending expressions: a group of
pending Arrays (:mod:`.pending`) becomes a function of its leaves that makes the calls
again, traced and launched by ``infini_cupy.fuse`` as one kernel (cached per expression
structure, so a loop's repeated chain is traced once).
"""

from __future__ import annotations

import warnings

import numpy as np

from . import pending
from .fusion import FusedFunction

_public: dict = {}  # the namespace's public functions, by name (install)
_fused: dict = {}  # (steps, outputs, leaf count) -> FusedFunction of the replay
_MAX_FUSED = 1024


def install(public: dict) -> None:
    """Compute pending expressions with ``public``'s functions (the namespace's own)."""
    _public.update(public)
    pending.evaluate_group = evaluate_group


def evaluate_group(group, program=None, fused=None) -> FusedFunction:
    """One fused kernel computing the group's deferred Arrays (the calls themselves where
    fuse cannot fuse them: bit-identical either way); ``program``: the group's (steps,
    outputs, leaves) when the tape has it, else walked from the group's expressions;
    ``fused``: the program's fused function when known. Returns that fused function."""
    steps, outputs, leaves = program or pending.program([e for e, _ in group])
    if fused is None:
        key = (steps, outputs, len(leaves))
        fused = _fused.get(key)
        if fused is None:
            if len(_fused) >= _MAX_FUSED:
                _fused.clear()
            fused = _fused[key] = FusedFunction(_replay(steps, outputs), strict=True)
    try:
        results = fused(*leaves)
    except TypeError:  # cannot fuse (strict): the calls, one kernel each
        results = fused.function(*leaves)
    if len(outputs) == 1:
        results = (results,)
    for (expression, owner), result in zip(group, results):
        owner._a = result._a
        owner._p = None
        expression.result = owner
        expression.args, expression.tape = (), None  # its inputs (and its tape's) may go
    return fused


def _replay(steps, outputs):
    """The function of the leaves that makes the calls again: traced by fuse, or run."""
    calls = [(_public[name], constants, refs) for name, constants, refs in steps]

    def replay(*leaves):
        values = []
        with warnings.catch_warnings():  # the deferred calls warned as they were made
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            for function, constants, refs in calls:
                values.append(function(*[values[k] if step else leaves[k] for step, k in refs],
                                       *constants))
        if len(outputs) == 1:  # one result, not a tuple: the hot paths' one-output calls
            return values[outputs[0]]
        return tuple(values[j] for j in outputs)

    replay.__name__ = replay.__qualname__ = "lazy"
    return replay
