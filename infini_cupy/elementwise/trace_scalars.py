"""The scalar arguments of a function traced by :mod:`.trace` (``infini_cupy.fuse``): a
Python scalar argument is a value per call, in a slot of the kernel's ``ic::Scalars``; Python
arithmetic of them and constants (``1 - alpha``) is computed per call on the host, as Python
computes it unfused, and fills a slot the same way.

>>> s = ScalarArg(None, 0, float)
>>> (1 - s).compute((0.25,)), (1 - s).kind
(0.75, <class 'float'>)
"""

from __future__ import annotations

import functools
import operator


REPRESENTATIVE = {bool: True, int: 1, float: 1.0, complex: 1j}  # a scalar argument's kind


class Untraceable(Exception):
    """The call named in the message cannot be part of a fused expression."""


class ReadsNoArray(Untraceable):
    """The function's results read no array argument (scalars alone): nothing to fuse."""


class ScalarArg:
    """A Python scalar argument of the fused function, or Python arithmetic of them and
    constants (``1 - alpha``: ``compute`` gives its value from the call's arguments, as
    Python computes it unfused): its value changes per call."""

    __slots__ = ("builder", "index", "kind", "compute")
    __array_ufunc__ = None

    def __init__(self, builder, index, kind, compute=None):
        self.builder, self.index, self.kind, self.compute = builder, index, kind, compute

    def value(self, args):
        return args[self.index] if self.compute is None else self.compute(args)

    def __bool__(self):
        raise Untraceable("bool() of a scalar argument: control flow on a value")

    __int__ = __float__ = __index__ = __bool__

    def __neg__(self):
        return host_scalar(operator.neg, (self,))

    def __pos__(self):
        return host_scalar(operator.pos, (self,))

    def __abs__(self):
        return host_scalar(abs, (self,))

    def __invert__(self):
        return host_scalar(operator.invert, (self,))


def host_scalar(python, args) -> ScalarArg:
    """``python(*args)`` of scalar arguments and Python scalars: computed per call, on the
    host, with Python's own arithmetic (its type is that of the traced arguments')."""
    builder = next(a.builder for a in args if type(a) is ScalarArg)
    kind = type(python(*(REPRESENTATIVE[a.kind] if type(a) is ScalarArg else a for a in args)))
    if kind not in REPRESENTATIVE:
        raise Untraceable(f"{python.__name__} of scalar arguments gives a {kind.__name__}")
    getters = tuple(a.value if type(a) is ScalarArg else functools.partial(_constant, a)
                    for a in args)

    def compute(call_args):
        value = python(*(get(call_args) for get in getters))
        if type(value) is not kind:  # pow: an int to a negative power is a float
            raise Untraceable(f"{python.__name__} of scalar arguments changed type")
        return value

    return ScalarArg(builder, -1, kind, compute)


def _constant(value, call_args):
    return value


def argument_slot(builder, a, dtype, converter) -> tuple:
    """The slot of scalar argument ``a``; a computed one's converter takes all the call's
    arguments (slot index -1)."""
    if a.compute is None:
        return builder.argument(a.index, dtype, converter)
    compute = a.compute
    return builder.argument(-1, dtype, lambda call_args: converter(compute(call_args)))
