"""Bad inputs across the public API, one table row each: the standard's exception type
(TypeError for types and dtypes, ValueError for shapes, values and devices, IndexError for
axes: NumPy's AxisError is both), a message naming the offending values, and a destination
left untouched (sentinel-filled, compared afterwards).

Rows whose arrays cannot exist on the suite's device (object, structured or byte-swapped
dtypes, read-only arrays under ``--backend cuda``) skip there. Elementwise rows that fail
would be ``xfail(strict=True)`` rows with the reason (none today).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

import array_api_compat
import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import arrays
from tests.support.torch_cpu import import_torch

SENTINEL = 7  # every destination starts full of it; an error must leave it so
F32 = np.float32
I8 = np.int8


@dataclass(frozen=True)
class Row:
    """``build(ctx)`` returns ``(call, destination or None)``; ``call()`` must raise ``error``
    with a message matching ``match``."""

    name: str
    error: type
    match: str
    build: Callable
    xfail: str | None = None
    xfail_raises: type | None = None  # what the known bug raises instead


class Context:
    """Arrays for a row: on the suite's device, or on another one (mixed devices)."""

    def __init__(self, to_device, foreign, on_gpu: bool):
        self._to_device = to_device
        self.foreign = foreign  # a host array -> the same values on another device
        self.on_gpu = on_gpu

    def dev(self, a):
        """``a`` on the suite's device; skips rows whose dtype the device cannot hold."""
        a = np.asarray(a)
        try:
            moved = self._to_device(a)
        except Exception as e:  # CuPy has no object, structured or byte-swapped arrays
            pytest.skip(f"{a.dtype} arrays cannot live on this device: {e}")
        if moved.dtype != a.dtype:  # cupy.asarray of a big-endian array gives native order
            pytest.skip(f"{a.dtype} arrays cannot live on this device: it holds them as "
                        f"{moved.dtype} (CuPy has native byte order only)")
        return moved

    def ones(self, shape, dtype=F32):
        return self.dev(np.ones(shape, dtype))

    def dest(self, shape, dtype=F32):
        return self.dev(np.full(shape, SENTINEL, dtype))

    def host_only(self, a):
        """A NumPy-only layout (read-only flags): skips when the suite runs on CuPy."""
        if self.on_gpu:
            pytest.skip("NumPy-only input (CuPy arrays are always writable)")
        return a


def _strided(a, shape, strides):
    if arrays.is_cupy_array(a):
        import cupy

        return cupy.lib.stride_tricks.as_strided(a, shape, strides)
    return np.lib.stride_tricks.as_strided(a, shape, strides)


def _read_only(shape, dtype=F32):
    a = np.full(shape, SENTINEL, dtype)
    a.flags.writeable = False
    return a


STRUCTURED = np.dtype([("a", "<f4"), ("b", "<i4")])
BAD_DTYPES = [  # (dtype, what the message must name)
    (np.dtype(object), "object"),
    (STRUCTURED, r"\('a', '<f4'\)|V8"),
    (np.dtype(">f4"), ">f4"),
    (np.dtype("<U3"), "U3"),
    (np.dtype("M8[s]"), "datetime64|M8"),
]


def _bad(dtype, shape=(3,)):
    return np.zeros(shape, dtype) if dtype.kind != "O" else np.full(shape, None, dtype)


# ---------------------------------------------------------------- the table
ROWS: list[Row] = []


def row(name, error, match, xfail=None, xfail_raises=None):
    def register(build):
        ROWS.append(Row(name, error, match, build, xfail, xfail_raises))
        return build

    return register


# rearrange_(y, x) ------------------------------------------------------------------------
def _into(make_destination, call):
    """A row builder whose call writes into a fresh sentinel destination: ``call(c, y)``."""

    def build(c):
        y = make_destination(c)
        return (lambda: call(c, y)), y

    return build


for _what, _value, _shown in [("list", [[1.0] * 4] * 3, "list"), ("None", None, "NoneType"),
                              ("scalar", F32(1), "float32"), ("str", "x", "str")]:
    row(f"rearrange_ x={_what}", TypeError, f"takes arrays; x is a {_shown}$")(
        _into(lambda c: c.dest((3, 4)), lambda c, y, v=_value: xp.rearrange_(y, v)))
    row(f"rearrange_ y={_what}", TypeError, f"takes arrays; y is a {_shown}$")(
        lambda c, v=_value: (lambda: xp.rearrange_(v, c.ones((3, 4))), None))

for _dtype, _shown in BAD_DTYPES:
    row(f"rearrange_ dtype {_dtype}", TypeError, _shown)(
        lambda c, dt=_dtype: (lambda: xp.rearrange_(c.dev(_bad(dt)), c.dev(_bad(dt))), None))
    row(f"rearrange pattern dtype {_dtype}", TypeError, _shown)(  # a view-only pattern too
        lambda c, dt=_dtype: (lambda: xp.rearrange(c.dev(_bad(dt, (2, 3))), "a b -> b a"), None))
    row(f"ascontiguousarray dtype {_dtype}", TypeError, _shown)(
        lambda c, dt=_dtype: (lambda: xp.ascontiguousarray(c.dev(_bad(dt))), None))
    row(f"astype to {_dtype}", TypeError, _shown)(
        lambda c, dt=_dtype: (lambda: xp.astype(c.ones(3), dt), None))
    row(f"concat dtype {_dtype}", TypeError, _shown)(
        lambda c, dt=_dtype: (lambda: xp.concat([c.dev(_bad(dt)), c.dev(_bad(dt))]), None))
    row(f"add dtype {_dtype}", TypeError, _shown)(
        _into(lambda c: c.dest(3), lambda c, y, dt=_dtype: xp.add(c.dev(_bad(dt)), 1, out=y)))
    for _name, _call in [("reshape", lambda a: xp.reshape(a, (2, 3))),
                         ("reshape copy", lambda a: xp.reshape(a.T, (6,))),
                         ("stack", lambda a: xp.stack([a, a])),
                         ("unstack", lambda a: xp.unstack(a)),
                         ("tile", lambda a: xp.tile(a, (2,))),
                         ("repeat", lambda a: xp.repeat(a, 2, axis=0)),
                         ("roll", lambda a: xp.roll(a, 1, axis=1))]:
        row(f"{_name} dtype {_dtype}", TypeError, _shown)(  # views are refused like copies
            lambda c, dt=_dtype, f=_call: (lambda: f(c.dev(_bad(dt, (2, 3)))), None))


@row("rearrange_ dtypes differ", TypeError, r"float32.*float64")
def _(c):
    y = c.dest((3, 4))
    return (lambda: xp.rearrange_(y, c.ones((3, 4), np.float64))), y


@row("rearrange_ bool into uint8", TypeError, r"uint8.*bool")
def _(c):
    y = c.dest(5, np.uint8)
    return (lambda: xp.rearrange_(y, c.ones(5, bool))), y


@row("rearrange_ shapes differ", ValueError, r"\(3, 4\).*\(4, 3\)")
def _(c):
    y = c.dest((3, 4))
    return (lambda: xp.rearrange_(y, c.ones((4, 3)))), y


@row("rearrange_ broadcastable but different shape", ValueError, r"\(3, 4\).*\(1, 4\)")
def _(c):
    y = c.dest((3, 4))
    return (lambda: xp.rearrange_(y, c.ones((1, 4)))), y


@row("rearrange_ ndim differs", ValueError, r"\(12,\).*\(3, 4\)")
def _(c):
    y = c.dest(12)
    return (lambda: xp.rearrange_(y, c.ones((3, 4)))), y


@row("rearrange_ read-only destination", ValueError, r"\(3, 4\).*read-only")
def _(c):
    y = c.host_only(_read_only((3, 4)))
    return (lambda: xp.rearrange_(y, c.ones((3, 4)))), y


@row("rearrange_ broadcast destination", ValueError, r"(read-only|overlaps itself).*\(0, 4\)")
def _(c):
    buf = c.dest(4)
    y = _strided(buf, (3, 4), (0, 4))
    return (lambda: xp.rearrange_(y, c.ones((3, 4)))), buf


@row("rearrange_ interleaved self-overlapping destination", ValueError,
     r"overlaps itself.*\(3, 3\).*\(8, 4\)")
def _(c):
    buf = c.dest(16)
    y = _strided(buf, (3, 3), (8, 4))  # rows two elements apart, three long: they share bytes
    return (lambda: xp.rearrange_(y, c.ones((3, 3)))), buf


@row("rearrange_ mixed devices", ValueError, r"different devices|cuda backend needs CuPy")
def _(c):
    y = c.dest((3, 4))
    return (lambda: xp.rearrange_(y, c.foreign(np.ones((3, 4), F32)))), y


@row("rearrange_ destination on another device", ValueError, r"different devices")
def _(c):
    y = c.foreign(np.full((3, 4), SENTINEL, F32))
    return (lambda: xp.rearrange_(y, c.ones((3, 4)))), None


@row("rearrange_ NumPy arrays under the cuda backend", ValueError, "cuda backend needs CuPy")
def _(c):
    y = np.full((3, 4), SENTINEL, F32)

    def call():
        with xp.backend("cuda"):
            xp.rearrange_(y, np.ones((3, 4), F32))

    return call, y


# rearrange(x, pattern, **axes) ----------------------------------------------------------
for _pattern, _match in [
    ("a b -> a c", r"'a b -> a c'.*b only on the left.*c only on the right"),
    ("a b c -> a b c", r"'a b c -> a b c'.*3 dimensions.*\(3, 4\)"),
    ("a b -> (a b", r"unbalanced parentheses"),
    ("a a -> a", r"'a a -> a'.*twice"),
    ("a b -> b a ...", r"ellipsis.*right side only"),
    ("a -> b -> a", r"exactly one '->'"),
    ("a b -> a 2b", r"'2b'|anonymous axis|not a valid axis"),
    ("a ((b)) -> a b", r"nested parentheses"),
    ("a b -> a_ b", r"a_"),
    ("", r"exactly one '->'"),
]:
    row(f"rearrange pattern {_pattern!r}", ValueError, _match)(
        lambda c, p=_pattern: (lambda: xp.rearrange(c.ones((3, 4)), p), None))

for _axes, _match in [
    ({"a": 1.5}, r"integers.*1\.5"),
    ({"a": "3"}, r"integers.*'3'"),
    ({"a": -1}, r"a=-1"),
    ({"a": 2}, r"length 3.*not divisible by 2"),
    ({"a": 4}, r"length 3.*not divisible by 4"),
    ({"z": 2}, r"'z'.*not in the pattern"),
    ({"a": 3, "b": 2}, r"length 3.*a=3 \* b=2"),
]:
    row(f"rearrange axes {_axes}", ValueError, _match)(
        lambda c, a=_axes: (lambda: xp.rearrange(c.ones((3, 4)), "(a b) c -> a b c", **a), None))

row("rearrange pattern not a str", TypeError, r"str.*int")(
    lambda c: (lambda: xp.rearrange(c.ones(3), 5), None))
row("rearrange axes without a pattern", TypeError, "without a pattern")(
    lambda c: (lambda: xp.rearrange(c.ones(3), a=3), None))
row("rearrange x=list", TypeError, "list")(lambda c: (lambda: xp.rearrange([1.0, 2.0]), None))
row("rearrange x=list with pattern", TypeError, "list")(
    lambda c: (lambda: xp.rearrange([1.0, 2.0], "a -> a"), None))
row("rearrange x=[]", TypeError, "empty list has no arrays")(
    lambda c: (lambda: xp.rearrange([], "t -> t"), None))
row("ascontiguousarray x=list", TypeError, "list")(
    lambda c: (lambda: xp.ascontiguousarray([1.0]), None))

# asarray / astype --------------------------------------------------------------------------
row("astype unknown dtype", TypeError, "foo")(lambda c: (lambda: xp.astype(c.ones(3), "foo"), None))
row("astype float128", TypeError, "float128|longdouble")(
    lambda c: (lambda: xp.astype(c.ones(3), np.longdouble), None))
row("astype x=list", TypeError, "list")(lambda c: (lambda: xp.astype([1.0], F32), None))
row("astype unknown device", ValueError, "'gpu'")(
    lambda c: (lambda: xp.astype(c.ones(3), F32, device="gpu"), None))
row("asarray copy to object", TypeError, "object")(
    lambda c: (lambda: xp.asarray(c.ones(3), dtype=object, copy=True), None))
row("asarray unknown device", ValueError, "'gpu'")(
    lambda c: (lambda: xp.asarray(c.ones(3), device="gpu", copy=True), None))

row("asarray NumPy scalar copy=False", ValueError, "NumPy scalar.*copy=False")(
    lambda c: (lambda: xp.asarray(np.float32(1.5), copy=False), None))
row("full int beyond int64 and uint64", OverflowError, "18446744073709551616 fits no integer")(
    lambda c: (lambda: xp.full((2,), 2**64), None))
row("full int below int64", OverflowError, "fits no integer")(
    lambda c: (lambda: xp.full((2,), -2**63 - 1), None))
for _value in (3 + 0j, 1j, np.complex64(2)):
    row(f"arange {_value!r}", TypeError, "real numbers")(
        lambda c, v=_value: (lambda: xp.arange(v), None))
row("arange complex step", TypeError, "real numbers")(lambda c: (lambda: xp.arange(0, 4, 1j), None))
for _name in ("tril", "triu"):
    row(f"{_name} 0-d", ValueError, rf"{_name}: x of shape \(\) holds no matrix")(
        lambda c, n=_name: (lambda: getattr(xp, n)(c.dev(np.float32(5))), None))

# type queries of what no device holds, or of what is no dtype ------------------------------
for _args in (("U1", I8), (None, I8), (F32, np.dtype("O")), (F32, "S2"), (np.dtype("M8[s]"),)):
    row(f"result_type{_args}", TypeError, "result_type")(
        lambda c, a=_args: (lambda: xp.result_type(*a), None))
row("can_cast to object", TypeError, "can_cast: dtype object")(
    lambda c: (lambda: xp.can_cast(I8, np.dtype("O")), None))
row("can_cast from str", TypeError, "can_cast: dtype <U1")(
    lambda c: (lambda: xp.can_cast("U1", I8), None))
for _name, _value in (("finfo", 3), ("finfo", None), ("finfo", [1.0]), ("iinfo", 3),
                      ("iinfo", None), ("iinfo", (8,))):
    row(f"{_name}({_value!r})", TypeError, f"{_name}: takes a dtype or an array")(
        lambda c, n=_name, v=_value: (lambda: getattr(xp, n)(v), None))
row("iinfo('float32')", ValueError, "iinfo: float32 is not an integer")(
    lambda c: (lambda: xp.iinfo("float32"), None))
row("finfo('U1')", TypeError, "finfo: dtype <U1")(lambda c: (lambda: xp.finfo("U1"), None))

# creation of what no device holds (NumPy alone makes string, object, longdouble arrays) -----
def _device(c):
    return array_api_compat.device(c.ones(1))


for _name, _call, _match in [
    ("zeros str", lambda c, d: xp.zeros(3, dtype="U1", device=d), "zeros: dtype <U1 .*not a bool"),
    ("empty object", lambda c, d: xp.empty(3, dtype=object, device=d), "empty: dtype object"),
    ("ones longdouble", lambda c, d: xp.ones(3, dtype=np.longdouble, device=d),
     "ones: dtype float128"),
    ("ones big-endian", lambda c, d: xp.ones(3, dtype=">f4", device=d),
     "ones: dtype >f4 .*native byte order"),
    ("arange str", lambda c, d: xp.arange(3, dtype="U1", device=d), "arange: dtype <U1"),
    ("eye object", lambda c, d: xp.eye(2, dtype=object, device=d), "eye: dtype object"),
    ("full str fill", lambda c, d: xp.full(3, "a", device=d), "full: fill_value must be .* str"),
    ("full None fill", lambda c, d: xp.full(3, None, device=d), "full: fill_value .* NoneType"),
    ("full_like str fill", lambda c, d: xp.full_like(c.ones(3), "a"),
     "full_like: fill_value .* str"),
    ("zeros_like str", lambda c, d: xp.zeros_like(c.ones(3), dtype="U2"), "zeros_like: dtype <U2"),
    ("zeros unknown dtype", lambda c, d: xp.zeros(3, dtype="foo", device=d),
     "zeros: 'foo' is not a dtype"),
]:
    row(f"creation {_name}", TypeError, _match)(
        lambda c, call=_call: (lambda: call(c, _device(c)), None))

# delegated functions whose library's message would name nothing ----------------------------
row("searchsorted 2-d x1", ValueError, r"searchsorted\(\): x1 must be one-dimensional.*\(3, 4\)")(
    lambda c: (lambda: xp.searchsorted(c.ones((3, 4)), c.ones(2)), None))
row("where x2=str", TypeError, r"where\(\): x2 must be an array or a Python scalar.*str")(
    lambda c: (lambda: xp.where(c.ones(3) > 0, c.ones(3), "a"), None))
row("where condition=list", TypeError, r"where\(\): condition must be an array.*list")(
    lambda c: (lambda: xp.where([True, False, True], c.ones(3), 0.0), None))

# reshape ---------------------------------------------------------------------------------
for _shape, _error, _match in [
    ((5,), ValueError, r"\(3, 4\) into \(5,\)"),
    ((-1, -1), ValueError, r"at most one -1.*\(-1, -1\)"),
    ((-2, -6), ValueError, r"\(3, 4\) into \(-2, -6\)"),
    ((5, -1), ValueError, r"\(3, 4\) into \(5, -1\)"),
    ((3.0, 4), TypeError, r"shape must be integers.*3\.0"),
    ("12", TypeError, r"shape must be integers.*'12'"),
    (None, TypeError, r"shape must be integers.*None"),
]:
    row(f"reshape to {_shape!r}", _error, _match)(
        lambda c, s=_shape: (lambda: xp.reshape(c.ones((3, 4)), s), None))
row("reshape copy=False needs a copy", ValueError, r"\(4, 3\).*\(12,\).*copy=False")(
    lambda c: (lambda: xp.reshape(c.ones((3, 4)).T, (12,), copy=False), None))
row("reshape x=list", TypeError, "list")(lambda c: (lambda: xp.reshape([1.0, 2.0], (2,)), None))

# concat / stack ------------------------------------------------------------------------
row("concat no arrays", ValueError, "at least one")(lambda c: (lambda: xp.concat([]), None))
row("concat shapes differ", ValueError, r"\(3, 4\), \(3, 5\).*axis 0")(
    lambda c: (lambda: xp.concat([c.ones((3, 4)), c.ones((3, 5))]), None))
row("concat ndims differ", ValueError, r"\(3, 4\), \(4,\)")(
    lambda c: (lambda: xp.concat([c.ones((3, 4)), c.ones(4)], axis=1), None))
row("concat 0-d", ValueError, "zero-dimensional")(
    lambda c: (lambda: xp.concat([c.ones(()), c.ones(())]), None))
row("concat axis out of range", IndexError, r"axis 2.*dimension 2")(
    lambda c: (lambda: xp.concat([c.ones((3, 4))] * 2, axis=2), None))
row("concat axis -3", IndexError, r"axis -3.*dimension 2")(
    lambda c: (lambda: xp.concat([c.ones((3, 4))] * 2, axis=-3), None))
row("concat axis float", TypeError, r"axis must be an integer.*1\.0")(
    lambda c: (lambda: xp.concat([c.ones((3, 4))] * 2, axis=1.0), None))
row("concat list element", TypeError, "list")(
    lambda c: (lambda: xp.concat([c.ones((1, 4)), [[1.0] * 4]]), None))
row("concat mixed devices", ValueError, r"different devices|cuda backend needs CuPy")(
    lambda c: (lambda: xp.concat([c.ones((1, 4)), c.foreign(np.ones((1, 4), F32))]), None))
row("broadcast_shapes mismatch", ValueError, r"\(3, 4\) and \(2, 1\)")(
    lambda c: (lambda: xp.broadcast_shapes((3, 4), (2, 1)), None))
row("broadcast_shapes not integers", TypeError, r"integers.*1\.5")(
    lambda c: (lambda: xp.broadcast_shapes((3, 1.5)), None))
row("rearrange list of arrays, shapes differ", ValueError, r"\(3, 4\), \(2, 4\)")(
    lambda c: (lambda: xp.rearrange([c.ones((3, 4)), c.ones((2, 4))], "n h w -> h n w"), None))
row("asarray of strings", TypeError, r"dtype <U3")(
    lambda c: (lambda: xp.asarray(["yes", "no"]), None))
row("asarray of objects", TypeError, r"dtype object")(
    lambda c: (lambda: xp.asarray(np.array([1, None], dtype=object)), None))
row("asarray of a ragged list", ValueError, r"^asarray: .*inhomogeneous")(
    lambda c: (lambda: xp.asarray([[1, 2], [3]]), None))
row("asarray of a ragged list on the emulator", ValueError, r"^asarray: .*inhomogeneous")(
    lambda c: (lambda: xp.asarray([[1.0], [2.0, 3.0]], device="emulator"), None))
row("asarray int out of range", OverflowError, r"^asarray: .*300 out of bounds for int8")(
    lambda c: (lambda: xp.asarray([1, 300], dtype=xp.int8), None))
row("rearrange bad pattern is a PatternError", xp.PatternError, r"'h w -> w'.*h only on the left")(
    lambda c: (lambda: xp.rearrange(c.ones((2, 3)), "h w -> w"), None))
row("stack no arrays", ValueError, "at least one")(lambda c: (lambda: xp.stack([]), None))
row("stack shapes differ", ValueError, r"\(3, 4\), \(2, 4\)")(
    lambda c: (lambda: xp.stack([c.ones((3, 4)), c.ones((2, 4))]), None))
row("stack axis out of range", IndexError, r"axis 3.*dimension 3")(
    lambda c: (lambda: xp.stack([c.ones((3, 4))] * 2, axis=3), None))
row("stack axis -4", IndexError, r"axis -4.*dimension 3")(
    lambda c: (lambda: xp.stack([c.ones((3, 4))] * 2, axis=-4), None))
row("stack mixed devices", ValueError, r"different devices|cuda backend needs CuPy")(
    lambda c: (lambda: xp.stack([c.foreign(np.ones(4, F32)), c.ones(4)]), None))

# tile / repeat / roll / unstack ----------------------------------------------------------
row("tile negative", ValueError, r"non-negative.*\(-1, 2\)")(
    lambda c: (lambda: xp.tile(c.ones((3, 4)), (-1, 2)), None))
row("tile float", TypeError, r"repetitions must be integers.*1\.5")(
    lambda c: (lambda: xp.tile(c.ones((3, 4)), (1.5, 2)), None))
row("tile x=list", TypeError, "list")(lambda c: (lambda: xp.tile([1.0], (2,)), None))
row("repeat negative", ValueError, r"non-negative.*-1")(
    lambda c: (lambda: xp.repeat(c.ones((3, 4)), -1), None))
row("repeat float", TypeError, r"repeats must be an integer.*2\.0")(
    lambda c: (lambda: xp.repeat(c.ones((3, 4)), 2.0), None))
row("repeat axis out of range", IndexError, r"axis 2.*dimension 2")(
    lambda c: (lambda: xp.repeat(c.ones((3, 4)), 2, axis=2), None))
row("repeat counts on another device", ValueError, r"different devices|cuda backend needs CuPy")(
    lambda c: (lambda: xp.repeat(c.ones(3), c.foreign(np.ones(3, np.int64))), None))
row("roll axis out of range", IndexError, r"axis 2.*dimension 2")(
    lambda c: (lambda: xp.roll(c.ones((3, 4)), 1, axis=2), None))
row("roll shift float", TypeError, r"shift must be an integer.*1\.5")(
    lambda c: (lambda: xp.roll(c.ones((3, 4)), 1.5, axis=0), None))
row("roll shifts and axes differ", ValueError, r"2 shifts for 1 axes")(
    lambda c: (lambda: xp.roll(c.ones((3, 4)), (1, 2), axis=(0,)), None))
row("roll axis=None with shifts", ValueError, r"axis=None.*\(1, 2\)")(
    lambda c: (lambda: xp.roll(c.ones((3, 4)), (1, 2)), None))
row("unstack axis out of range", IndexError, r"axis -3.*dimension 2")(
    lambda c: (lambda: xp.unstack(c.ones((3, 4)), axis=-3), None))
row("unstack 0-d", ValueError, "0-d")(lambda c: (lambda: xp.unstack(c.ones(())), None))

# elementwise -------------------------------------------------------------------------------
row("add shapes do not broadcast", ValueError, r"add\(\).*\(3,\) and \(4,\)")(
    lambda c: (lambda: xp.add(c.ones(3), c.ones(4)), None))


@row("add out shape", ValueError, r"out has shape \(4,\).*\(3,\)")
def _(c):
    out = c.dest(4)
    return (lambda: xp.add(c.ones(3), 1, out=out)), out


@row("add out dtype", TypeError, r"float32 cannot be cast into out of dtype int16")
def _(c):
    out = c.dest(3, np.int16)
    return (lambda: xp.add(c.ones(3), 1, out=out)), out


@row("add out overlaps itself", ValueError, r"overlaps itself.*\(0,\)")
def _(c):
    buf = c.dest(3)
    out = _strided(buf, (3,), (0,))
    return (lambda: xp.add(c.ones(3), 1, out=out)), buf


@row("add out on another device", ValueError, r"different devices|cuda backend needs CuPy")
def _(c):
    out = c.dest(3)
    return (lambda: xp.add(c.foreign(np.ones(3, F32)), 1, out=out)), out


@row("add inputs on two devices", ValueError, r"different devices|cuda backend needs CuPy")
def _(c):
    return (lambda: xp.add(c.ones(3), c.foreign(np.ones(3, F32)))), None


row("negative of bool", TypeError, r"negative\(\) does not take bool.*logical_not")(
    lambda c: (lambda: xp.negative(c.ones(3, bool)), None))
row("sign of bool", TypeError, r"sign\(\) does not take bool")(
    lambda c: (lambda: xp.sign(c.ones(3, bool)), None))
row("bitwise_and of float", TypeError, r"bitwise_and.*float32")(
    lambda c: (lambda: xp.bitwise_and(c.ones(3), c.ones(3)), None))
row("add of scalars only", TypeError, r"add\(\).*array")(lambda c: (lambda: xp.add(1, 2), None))

for _value, _shown in [(None, "NoneType"), ([1.0, 2.0, 3.0], "list"), ("a", "str"),
                       (object(), "object")]:
    row(f"add with {_shown}", TypeError, _shown)(
        lambda c, v=_value: (lambda: xp.add(c.ones(3), v), None))
row("sin of a list", TypeError, "list")(lambda c: (lambda: xp.sin([1.0]), None))
row("add out=list", TypeError, "list")(
    lambda c: (lambda: xp.add(c.ones(3), 1, out=[0.0, 0.0, 0.0]), None))
for _dtype, _shown in [(np.dtype(object), "object"), (np.dtype(">f4"), ">f4")]:
    row(f"clip dtype {_dtype}", TypeError, _shown)(
        lambda c, dt=_dtype: (lambda: xp.clip(c.dev(_bad(dt)), 0, 1), None))


@row("add read-only out", ValueError, r"read-only")
def _(c):
    out = c.host_only(_read_only(3))
    return (lambda: xp.add(c.ones(3), 1, out=out)), out


# ---------------------------------------------------------------- running the table
@pytest.fixture
def foreign(backend_name, monkeypatch):
    """Host array -> the same values on another device: NumPy (cpu) when the suite runs on
    CuPy, else a stand-in for a CuPy array on cuda:1 (only device bookkeeping sees it)."""
    if backend_name == "cuda":
        return np.asarray

    class OtherDevice(np.ndarray):
        pass

    real = arrays.is_cupy_array
    monkeypatch.setattr(arrays, "is_cupy_array", lambda a: isinstance(a, OtherDevice) or real(a))
    monkeypatch.setattr(arrays, "device_of",
                        lambda a: "cuda:1" if isinstance(a, OtherDevice) else "cpu")
    return lambda a: np.asarray(a).view(OtherDevice)


def _params():
    for r in ROWS:
        marks = [pytest.mark.xfail(strict=True, reason=r.xfail, raises=r.xfail_raises)] if r.xfail else []
        yield pytest.param(r, id=r.name, marks=marks)


@pytest.mark.parametrize("case", list(_params()))
def test_bad_input(case, to_device, to_host, foreign, backend_name):
    ctx = Context(to_device, foreign, backend_name == "cuda")
    call, destination = case.build(ctx)
    before = None if destination is None else to_host(destination).copy()
    with pytest.raises(case.error) as info:
        call()
    assert re.search(case.match, str(info.value)), (
        f"{type(info.value).__name__} message does not name the values:\n{info.value}")
    if destination is not None:
        np.testing.assert_array_equal(to_host(destination), before)


def test_the_table_covers_every_data_movement_function():
    from infini_cupy.namespace import data_movement as _data_movement

    covered = " ".join(r.name for r in ROWS)
    for name in [*_data_movement.__all__, "rearrange_"]:
        assert re.search(rf"\b{name}\b", covered), name


# ---------------------------------------------------------------- warm caches
def test_errors_after_a_valid_call_of_the_same_layout(to_device, to_host, foreign):
    """The short paths (a layout seen before skips validation and planning) still refuse."""
    x = to_device(np.arange(12, dtype=F32).reshape(3, 4))
    y = to_device(np.zeros((4, 3), F32)).T
    xp.rearrange_(y, x)
    xp.rearrange_(y, x)  # now on the short path
    other = foreign(np.ones((3, 4), F32))
    before = to_host(y).copy()
    with pytest.raises(ValueError, match="different devices|cuda backend needs CuPy"):
        xp.rearrange_(y, other)
    with pytest.raises(TypeError, match="float32.*float64"):
        xp.rearrange_(y, x.astype(np.float64))
    np.testing.assert_array_equal(to_host(y), before)
    a = to_device(np.ones(5, F32))
    xp.add(a, 1)
    xp.add(a, 1)
    with pytest.raises(ValueError, match="different devices|cuda backend needs CuPy"):
        xp.add(a, foreign(np.ones(5, F32)))


def test_read_only_after_a_valid_call_of_the_same_layout(backend_name):
    if backend_name == "cuda":
        pytest.skip("NumPy-only: CuPy arrays are always writable")
    x = np.arange(12, dtype=F32).reshape(3, 4)
    y = np.zeros((4, 3), F32).T
    xp.rearrange_(y, x)
    y[...] = SENTINEL
    y.base.flags.writeable = False  # same pointer, shape and strides: a cached layout
    y = y.base.T
    with pytest.raises(ValueError, match=r"read-only"):
        xp.rearrange_(y, x)
    assert (y == SENTINEL).all()


def test_numpy_backend_raises_the_same_errors():
    """The numpy backend (``numpy.copyto`` underneath) applies the same rules."""
    with xp.backend("numpy"):
        y = np.full((3, 4), SENTINEL, F32)
        for call, error, match in [
            (lambda: xp.rearrange_(y, np.ones((4, 3), F32)), ValueError, r"\(3, 4\).*\(4, 3\)"),
            (lambda: xp.rearrange_(y, np.ones((3, 4))), TypeError, "float32.*float64"),
            (lambda: xp.rearrange_(y, [[1.0] * 4] * 3), TypeError, "list"),
            (lambda: xp.rearrange_(np.lib.stride_tricks.as_strided(y, (3, 4), (0, 4)),
                                   np.ones((3, 4), F32)), ValueError, "overlaps itself"),
            (lambda: xp.rearrange(np.ones((2, 3), ">f4"), "a b -> b a"), TypeError, ">f4"),
            (lambda: xp.concat([y, y], axis=2), IndexError, "axis 2"),
        ]:
            with pytest.raises(error, match=match):
                call()
        assert (y == SENTINEL).all()


@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_setitem_of_a_value_that_does_not_broadcast_names_both_shapes(device):
    """``x[key] = value`` with a value that does not broadcast to ``x[key]`` (more dims, or a
    length other than 1 or the view's) is a ValueError naming both shapes on every device and
    layout, and writes nothing."""
    rng = np.random.default_rng(47)
    h = rng.standard_normal((4, 6)).astype(F32)
    for key, shape in [((slice(None), 1), (2, 4)), ((slice(None), 1), (1, 4)), (0, (3,)),
                       ((slice(None, None, -1), slice(None, None, 2)), (4, 2)),
                       (Ellipsis, (2, 4, 6)), ((None, 1), (2, 6))]:
        for layout in (lambda a: a, lambda a: a.T.copy().T, lambda a: a[::-1]):
            x = xp.asarray(layout(h.copy()), device=device)
            before = np.asarray(x.to_device("cpu")).copy()
            value = xp.asarray(rng.standard_normal(shape).astype(F32), device=device)
            expected = np.asarray(x.to_device("cpu"))[key].shape
            with pytest.raises(ValueError, match=re.escape(f"{shape}") + ".*"
                               + re.escape(f"{expected}")):
                x[key] = value
            np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), before)


@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_setitem_with_an_index_key_refuses_extra_leading_dims_as_a_basic_key_does(device):
    """With a mask or an integer array in the key, a value of more dims than ``x[key]``
    (leading length-1 dims, which NumPy drops) is a ValueError naming its shape, as with a
    basic key, and writes nothing; a value of ``x[key]``'s dims or fewer is written as
    NumPy writes it. Random keys mixing masks, index arrays, lists, ints, slices, None and
    Ellipsis, on a 3-d array."""
    rng = np.random.default_rng(53)
    h = rng.standard_normal((3, 4, 5)).astype(F32)
    makers = [
        lambda: rng.random(h.shape[:1]) < 0.5,
        lambda: rng.random(h.shape[:2]) < 0.5,
        lambda: rng.integers(0, 3, size=rng.integers(1, 4)),
        lambda: rng.integers(0, 3, size=(2, 2)),
        lambda: [int(i) for i in rng.integers(0, 3, size=2)],
    ]
    tails = [(), (slice(None),), (slice(1, 3), None), (Ellipsis, 2), (None, Ellipsis),
             (Ellipsis, np.array([0, 3]))]
    for _ in range(60):
        first = makers[rng.integers(len(makers))]()
        key = (first,) + tails[rng.integers(len(tails))]
        if np.ndim(first) == 2 and any(k is not None and k is not Ellipsis for k in key[1:]) \
                and len(key) > 2:
            key = key[:2]
        try:
            expected_shape = h[key].shape
        except IndexError:
            continue
        native_key = tuple(xp.asarray(k, device=device) if isinstance(k, np.ndarray) else k
                           for k in key)
        x = xp.asarray(h.copy(), device=device)
        value = rng.standard_normal((1,) + expected_shape).astype(F32)
        with pytest.raises(ValueError, match=re.escape(f"{value.shape}")):
            x[native_key] = xp.asarray(value, device=device)
        np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), h)
        expected = h.copy()
        expected[key] = value[0]
        x[native_key] = xp.asarray(value[0], device=device)
        np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), expected)


def _setitem_refused(h, key, value, named: str, device) -> None:
    """``x[key] = value`` of an Array of ``h`` is a TypeError naming ``named``, x untouched."""
    x = xp.asarray(h.copy(), device=device)
    k = xp.asarray(key, device=device) if isinstance(key, np.ndarray) else key
    with pytest.raises(TypeError, match=rf"x\[key\] = value: .*{re.escape(named)}"):
        x[k] = value
    np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), h)


@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_setitem_of_a_value_of_no_array_kind_is_a_type_error(device):
    """``x[key] = value`` with None, a str, bytes or an object (NumPy would write None as NaN
    and parse a str, CuPy refuses them), or a complex Python scalar into a real ``x``, is a
    TypeError naming the value's type on every device, for basic, mask and integer-array keys
    and every dtype, and writes nothing; lists and scalars of the right kind are written as
    NumPy writes them."""
    rng = np.random.default_rng(49)
    mask = rng.random(4) < 0.5
    for dtype in ("bool", "int16", "uint8", "float32", "float64", "complex64"):
        h = (rng.standard_normal((4, 3)) * 4).astype(dtype)
        for key in (1, (slice(None), 0), Ellipsis, mask, np.array([0, 2])):
            values = [(None, "NoneType"), ("1", "str"), (b"1", "bytes"), (object(), "object")]
            if dtype != "complex64":
                values.append((1j, "complex value"))
            for value, named in values:
                _setitem_refused(h, key, value, named, device)
            x = xp.asarray(h.copy(), device=device)
            k = xp.asarray(key, device=device) if isinstance(key, np.ndarray) else key
            expected = h.copy()
            expected[key] = 1
            x[k] = 1
            np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), expected)
            row = [True, False, True] if dtype == "bool" else [1, 2, 3]
            if key is Ellipsis or isinstance(key, tuple) and key[1] == 0:
                continue  # a row of 3 does not broadcast to those keys' shapes
            expected[key] = row
            x[k] = row
            np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), expected)



@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_setitem_of_no_numbers_inside_a_list_or_array_is_a_type_error(device):
    """Strings and None inside a list, NumPy scalars of no number kind (str, datetime) and
    arrays of dtypes no device holds (object, longdouble) as ``x[key] = value``: a TypeError
    naming what was found, for basic, mask and integer-array keys, nothing written (NumPy
    parses the strings, writes None as NaN, a datetime as its count)."""
    rng = np.random.default_rng(83)
    h = rng.standard_normal(3)
    for key in (slice(None), np.array([True, False, True]), np.array([0, 2])):
        count = len(h[key])
        values = [([1.0] * (count - 1) + ["1"], "str"), ([None] * count, "NoneType"),
                  ([[2.0] * (count - 1) + [None]], "NoneType"),
                  (np.str_("7"), "<U1"), (np.datetime64(7, "s"), "datetime64"),
                  (np.array([None] * count, dtype=object), "object"),
                  (np.ones(count, np.longdouble), str(np.dtype(np.longdouble)))]
        for value, named in values:
            _setitem_refused(h, key, value, named, device)
        # the same values as numbers, and in another byte order, are written as NumPy writes
        for value in ([1.5] * count, np.arange(count, dtype=">f8"), np.float32(2)):
            x = xp.asarray(h.copy(), device=device)
            k = xp.asarray(key, device=device) if isinstance(key, np.ndarray) else key
            expected = h.copy()
            expected[key] = value
            x[k] = value
            np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), expected)


@pytest.mark.parametrize("device", ["cpu", "emulator"])
def test_asarray_of_what_no_device_holds(device):
    """``longdouble`` data is refused by ``asarray`` as by the creation functions, unless a
    held ``dtype=`` is asked for (NumPy's conversion, a copy: ``copy=False`` refused); a
    Python int past 64 bits is an OverflowError, as in ``full``."""
    ld = np.random.default_rng(84).standard_normal(4).astype(np.longdouble)
    if ld.dtype == np.float64:
        pytest.skip("longdouble is float64 on this platform")
    for obj in (ld, ld[0], [1.0, ld[1]]):
        with pytest.raises(TypeError, match=rf"asarray: .*{ld.dtype}"):
            xp.asarray(obj, device=device)
    with pytest.raises(TypeError, match=rf"asarray: .*{ld.dtype}"):
        xp.asarray([1.0], dtype=np.longdouble, device=device)
    got = xp.asarray(ld, dtype=xp.float32, device=device)
    np.testing.assert_array_equal(np.asarray(got.to_device("cpu")), ld.astype(np.float32))
    with pytest.raises(ValueError, match="copy=False"):
        xp.asarray(ld, dtype=xp.float64, device=device, copy=False)
    for big in (2**64, -2**63 - 1, [1, 2**64 + 5], [[3], [-2**70]]):
        with pytest.raises(OverflowError, match=r"asarray: -?\d+ fits no integer dtype"):
            xp.asarray(big, device=device)
    assert xp.asarray(2**64, dtype=xp.float64, device=device) == 2.0**64
    assert xp.asarray(2**64 - 1, device=device).dtype == xp.uint64

# ---------------------------------------------------------------- integer indices out of range
_OUT_OF_RANGE = [  # (key of a (3, 4) array, NumPy's message)
    (np.array([0, 7]), "index 7 is out of bounds for axis 0 with size 3"),
    (np.array([[1], [-4]]), "index -4 is out of bounds for axis 0 with size 3"),
    ((np.array([1]), np.array([2, 9, -8])), "index 9 is out of bounds for axis 1 with size 4"),
    ((np.array([0, 9]), np.array([7, 9])), "index 9 is out of bounds for axis 0 with size 3"),
    ((slice(None), np.array([0, -5])), "index -5 is out of bounds for axis 1 with size 4"),
    ((Ellipsis, np.array([4])), "index 4 is out of bounds for axis 1 with size 4"),
    ((np.array([3]), slice(1, None)), "index 3 is out of bounds for axis 0 with size 3"),
    ((None, np.array([5], np.uint8)), "index 5 is out of bounds for axis 0 with size 3"),
    (np.array(3), "index 3 is out of bounds for axis 0 with size 3"),
]


@pytest.mark.parametrize("key, message", _OUT_OF_RANGE)
def test_an_integer_index_out_of_range_is_refused_on_every_device(on, key, message):
    """``x[idx] = v``, with the index arrays as Arrays, lists or NumPy arrays, and ``x[idx]``
    with host-held indices are NumPy's IndexError on every device, naming the first
    offending value, and write nothing: CuPy would wrap them (``indices % n``) on a GPU.
    A GPU-held index of ``x[idx]`` is the documented exception (the next test)."""
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = on(h)
    keys = key if isinstance(key, tuple) else (key,)
    as_arrays = tuple(on(k) if isinstance(k, np.ndarray) else k for k in keys)
    as_lists = tuple(k.tolist() if isinstance(k, np.ndarray) and k.ndim else k for k in keys)
    with pytest.raises(IndexError, match=re.escape(message)):
        h[key]  # NumPy's own words
    for k in (as_arrays, as_lists, keys):
        with pytest.raises(IndexError, match=re.escape(message)):
            x[k] = 1.0
        np.testing.assert_array_equal(np.asarray(x.to_device("cpu")), h)
    for k in (as_lists, keys):
        with pytest.raises(IndexError, match=re.escape(message)):
            x[k]
    in_range = tuple(np.clip(k, -1, 0) if isinstance(k, np.ndarray) else k for k in keys)
    np.testing.assert_array_equal(np.asarray(x[in_range].to_device("cpu")), h[in_range])


def test_a_gpu_held_index_out_of_range_of_getitem_wraps_on_a_gpu_only(on, backend_name):
    """``x[idx]`` with ``idx`` an Array on a GPU is CuPy's gather, which wraps an index out of
    range (``x[[0, 7]]`` of 3 rows is rows 0 and 1): checking it would make every gather wait
    for the GPU (docs/user/array.md); every other device raises NumPy's IndexError."""
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = on(h)
    idx = on(np.array([0, 7, -4]))
    if x.device.kind == "cuda":
        np.testing.assert_array_equal(np.asarray(x[idx].to_device("cpu")), h[[0, 1, 2]])
    else:
        with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 3"):
            x[idx]


@pytest.mark.parametrize("case", [
    (dict(), np.array([0, 12]), "index 12 is out of bounds for axis 0 with size 12"),
    (dict(axis=1), np.array([0, -5]), "index -5 is out of bounds for axis 1 with size 4"),
    (dict(axis=-2), np.array([[1, 3]]), "index 3 is out of bounds for axis 0 with size 3"),
    (dict(axis=0), np.array(3), "index 3 is out of bounds for axis 0 with size 3"),
])
def test_take_refuses_an_index_out_of_range_on_every_device(on, case):
    """``xp.take`` is NumPy's ``take`` (mode 'raise') on every device: an index out of range
    is IndexError, where ``cupy.take`` wraps it."""
    kwargs, indices, message = case
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = on(h)
    with pytest.raises(IndexError, match=re.escape(message)):
        np.take(h, indices, **kwargs)
    with pytest.raises(IndexError, match=re.escape(message)):
        xp.take(x, on(indices), **kwargs)
    fine = np.clip(indices, -1, 0)
    np.testing.assert_array_equal(np.asarray(xp.take(x, on(fine), **kwargs).to_device("cpu")),
                                  np.take(h, fine, **kwargs))


def test_take_from_an_empty_axis_is_numpy_s_error(on):
    for shape, axis, message in [((0, 3), 0, "cannot do a non-empty take from an empty axes."),
                                 ((0, 0), 0, "index 0 is out of bounds for axis 0 with size 0"),
                                 ((3, 0), 1, "cannot do a non-empty take from an empty axes.")]:
        h = np.zeros(shape, np.float32)
        with pytest.raises(IndexError, match=re.escape(message)):
            np.take(h, np.array([0]), axis=axis)
        with pytest.raises(IndexError, match=re.escape(message)):
            xp.take(on(h), on(np.array([0])), axis=axis)
    empty = xp.take(on(np.zeros((0, 3), np.float32)), on(np.zeros(0, np.int64)), axis=0)
    assert empty.shape == (0, 3)


@pytest.mark.parametrize("axis, indices, message", [
    (1, [[0], [5], [1]], "index 5 is out of bounds for axis 1 with size 4"),
    (-1, [[-5], [0], [1]], "index -5 is out of bounds for axis 1 with size 4"),
    (0, [[0, 1, 2, 3], [0, 1, 3, 0]], "index 3 is out of bounds for axis 0 with size 3"),
])
def test_take_along_axis_refuses_an_index_out_of_range_on_every_device(on, axis, indices,
                                                                       message):
    h = np.arange(12, dtype=np.float32).reshape(3, 4)
    indices = np.array(indices)
    with pytest.raises(IndexError, match=re.escape(message)):
        np.take_along_axis(h, indices, axis=axis)
    with pytest.raises(IndexError, match=re.escape(message)):
        xp.take_along_axis(on(h), on(indices), axis=axis)
    fine = np.clip(indices, -1, 0)
    np.testing.assert_array_equal(
        np.asarray(xp.take_along_axis(on(h), on(fine), axis=axis).to_device("cpu")),
        np.take_along_axis(h, fine, axis=axis))


def test_an_index_into_an_empty_axis_is_refused_and_writes_nothing(on):
    """Into an axis of size 0 every index is out of range (CuPy's scatter would take it
    modulo 0 on a GPU); an empty index array is fine."""
    x = on(np.zeros((0, 3), np.float32))
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        x[on(np.array([0]))] = 1.0
    x[on(np.zeros(0, np.int64))] = 1.0
    assert x[on(np.zeros(0, np.int64))].shape == (0, 3)


@pytest.mark.parametrize("call", [
    lambda x: xp.repeat(x, 2**70), lambda x: xp.repeat(x, 2**61, axis=1),
    lambda x: xp.tile(x, (2**70, 1)), lambda x: xp.tile(x, 2**60),
], ids=["repeat", "repeat-axis", "tile", "tile-int"])
def test_a_result_beyond_the_largest_array_is_the_value_error_naming_its_shape(on, call):
    """The cpu device raised NumPy's OverflowError (or "negative dimensions are not
    allowed"), the other devices ``empty``'s "Maximum allowed dimension exceeded"."""
    with pytest.raises(ValueError, match=r"(repeat|tile): the result of shape \(.*\) and "
                                         r"dtype float32 is beyond the largest array"):
        call(on(np.ones((3, 4), np.float32)))


@pytest.mark.parametrize("join", ["concat", "stack"])
def test_an_axis_beyond_a_c_long_is_the_axis_error_on_every_device(on, join):
    x = on(np.ones((3, 4), np.float32))
    with pytest.raises(np.exceptions.AxisError, match=rf"{join}: axis {2**70} is out of bounds"):
        getattr(xp, join)([x, x], axis=2**70)


@pytest.mark.parametrize("call, parameter", [
    (lambda x, v: xp.matmul(x, v), "x2"), (lambda x, v: xp.vecdot(x, v), "x2"),
    (lambda x, v: xp.linalg.solve(x, v), "x2"), (lambda x, v: xp.tensordot(x, v), "x2"),
    (lambda x, v: xp.isin(x, v), "x2"), (lambda x, v: xp.searchsorted(x[0], v), "x2"),
    (lambda x, v: xp.take_along_axis(x, v), "indices"), (lambda x, v: xp.squeeze(v), "x"),
    (lambda x, v: xp.all(v), "x"), (lambda x, v: xp.to_device(v, x.device), "x"),
])
@pytest.mark.parametrize("value", [None, "abc", {"a": 1}, "torch"], ids=["None", "str", "dict",
                                                                        "torch"])
def test_an_array_parameter_given_no_array_is_a_type_error_naming_it(on, call, parameter,
                                                                     value):
    """None, a str, a dict or another library's array where an array goes: a TypeError naming
    the parameter and the type, not an AttributeError (``squeeze(None)``), an IndexError
    (``tensordot(x, None)``), an answer about a str (``all("abc")``) or a torch tensor handed
    back (``matmul(x, tensor)``)."""
    if value == "torch":
        torch = import_torch()
        value = torch.ones(3, 3, dtype=torch.float64)
    x = on(np.eye(3) * 2)
    with pytest.raises(TypeError, match=rf"\(\) takes an array for {parameter}; got "
                                        rf"{re.escape(arrays.type_name(value))}"):
        call(x, value)


@pytest.mark.parametrize("call", [
    lambda x, d: xp.zeros(3, dtype=d, device=x.device), lambda x, d: xp.asarray([1], dtype=d),
    lambda x, d: xp.astype(x, d), lambda x, d: x.astype(d), lambda x, d: xp.sum(x, dtype=d),
    lambda x, d: xp.full_like(x, 1, dtype=d), lambda x, d: xp.linalg.trace(x, dtype=d),
], ids=["zeros", "asarray", "astype", "x.astype", "sum", "full_like", "trace"])
def test_an_array_as_dtype_is_a_type_error(on, call):
    """``dtype=x`` (an Array or NumPy array for ``x.dtype``): NumPy's TypeError; NumPy read
    an Array's ``dtype`` attribute and went on in its dtype."""
    x = on(np.eye(3))
    for d in (on(np.int8(1)), np.ones(2, np.int8)):
        with pytest.raises(TypeError, match=r"dtype must be a dtype, got an array \(.* of "
                                            r"dtype int8\): pass its \.dtype"):
            call(x, d)


@pytest.mark.parametrize("indices", [[1], (0, 1), 1], ids=["list", "tuple", "int"])
def test_take_along_axis_of_indices_that_are_no_array_is_a_type_error(on, indices):
    """NumPy's and CuPy's ``take_along_axis`` read ``indices.dtype``: an AttributeError for a
    list; the standard's ``indices`` is an array."""
    x = on(np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match=r"take_along_axis: indices must be an array of "
                                        rf"integers, got {type(indices).__name__}"):
        xp.take_along_axis(x, indices, axis=0)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize(("shape", "axis"), [((), -1), ((4,), 1), ((3, 4), -3)])
def test_a_1d_transform_along_an_axis_x_lacks_is_the_axis_error(on, name, shape, axis):
    """A 0-d ``x`` or an axis out of range: NumPy's and CuPy's transforms raised a bare
    ``IndexError: tuple index out of range``; the AxisError names axis, call and shape."""
    x = on(np.ones(shape, np.complex128 if name in ("ifft", "irfft", "hfft") else np.float64))
    with pytest.raises(np.exceptions.AxisError,
                       match=rf"fft\.{name} of shape {re.escape(str(shape))}: axis {axis} is "
                             rf"out of bounds for array of dimension {len(shape)}"):
        getattr(xp.fft, name)(x, axis=axis)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
@pytest.mark.parametrize(("shape", "axes", "axis"), [
    ((), (0,), 0), ((3, 4), (0, 2), 2), ((3, 4), (-3, 1), -3)])
def test_an_nd_transform_over_an_axis_x_lacks_is_the_axis_error(on, name, shape, axes, axis):
    """As for the 1-d transforms: NumPy and CuPy raised a bare IndexError (``index 2 is out of
    bounds for axis 0 with size 2``, of ``axes`` itself)."""
    x = on(np.ones(shape, np.complex128 if name in ("ifftn", "irfftn") else np.float64))
    with pytest.raises(np.exceptions.AxisError,
                       match=rf"fft\.{name} of shape {re.escape(str(shape))}: axis {axis} is "
                             rf"out of bounds for array of dimension {len(shape)}"):
        getattr(xp.fft, name)(x, axes=axes)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_an_nd_transform_refuses_more_lengths_than_axes_and_an_axis_twice(on, name):
    """``s`` without ``axes`` for more axes than ``x`` has (the last ``len(s)`` of none), and
    an axis named twice in ``axes``, which the standard leaves unspecified: NumPy transforms
    it again, CuPy pads or cuts it to every ``s[i]`` before any transform (another shape)."""
    x = on(np.ones((3, 4), np.complex128 if name in ("ifftn", "irfftn") else np.float64))
    with pytest.raises(ValueError, match=rf"fft\.{name}: s=\(2, 2, 2\) names 3 axes, x of "
                                         r"shape \(3, 4\) has 2"):
        getattr(xp.fft, name)(x, s=(2, 2, 2))
    for axes, axis in (((0, 0), 0), ((1, 0, -1), 1)):
        with pytest.raises(ValueError, match=rf"fft\.{name}: axes={re.escape(str(axes))} names "
                                             rf"axis {axis} of x of shape \(3, 4\) twice"):
            getattr(xp.fft, name)(x, axes=axes)
    with pytest.raises(TypeError, match=rf"fft\.{name}: the axes are integers, got float 1\.0"):
        getattr(xp.fft, name)(x, axes=(1.0,))


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_an_nd_transform_takes_a_sequence_of_axes_and_refuses_an_int(on, name, host):
    """``axes`` is a sequence (a range, a list, an array of integers answer as the tuple);
    an int or a str is a TypeError naming it (NumPy's "'int' object is not iterable")."""
    h = np.random.default_rng(7).standard_normal((3, 4))
    x = on(h.astype(np.complex128) if name in ("ifftn", "irfftn") else h)
    transform = getattr(xp.fft, name)
    expected = host(transform(x, axes=(0,)))
    for axes in (range(1), [0], np.array([0])):
        np.testing.assert_array_equal(host(transform(x, axes=axes)), expected)
    for axes, named in ((0, "int 0"), ("0", "str '0'")):
        with pytest.raises(TypeError, match=rf"fft\.{name}: axes must be a sequence of "
                                            rf"integers, got {named}"):
            transform(x, axes=axes)


@pytest.mark.parametrize("name", ["rfftn", "irfftn"])
@pytest.mark.parametrize(("shape", "axes"), [((), None), ((3, 4), ()), ((3, 4), None)])
def test_a_real_nd_transform_over_no_axis_is_a_value_error(on, name, shape, axes):
    """Their last axis is the half spectrum: over none (a 0-d ``x``, ``axes=()``, ``s=()``)
    NumPy and CuPy raised ``IndexError: list index out of range``."""
    x = on(np.ones(shape, np.complex128 if name == "irfftn" else np.float64))
    s = () if shape and axes is None else None
    with pytest.raises(ValueError, match=rf"fft\.{name}: no axis to transform \(x of shape "
                                         rf"{re.escape(str(shape))}, axes="):
        getattr(xp.fft, name)(x, s=s, axes=axes)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize(("given", "error", "message"), [
    ({"n": 0}, ValueError, "n must be a positive integer, got 0"),
    ({"n": -3}, ValueError, "n must be a positive integer, got -3"),
    ({"n": 2.5}, TypeError, r"n must be an integer, got float 2\.5"),
    ({"n": True}, TypeError, "n must be an integer, got bool True"),
    ({"n": 4, "d": 0}, ValueError, r"d must not be 0 \(the frequencies are k / \(d \* n\)\), "
                                   "got 0"),
    ({"n": 4, "d": 0.0}, ValueError, r"d must not be 0 .*, got 0\.0"),
    ({"n": 4, "dtype": xp.int64}, ValueError,
     "dtype must be a real floating-point dtype, got int64"),
    ({"n": 4, "dtype": xp.complex64}, ValueError,
     "dtype must be a real floating-point dtype, got complex64"),
    ({"n": 4, "dtype": xp.bool}, ValueError,
     "dtype must be a real floating-point dtype, got bool"),
])
def test_fftfreq_refuses_what_the_standard_refuses(on, name, given, error, message):
    """NumPy divided by zero for ``n=0`` or ``d=0`` (ZeroDivisionError) and CuPy answered an
    empty array or inf; a negative ``n`` gave NumPy's ``rfftfreq`` an empty array; an integer
    dtype truncated the frequencies to 0 (array-api-strict refuses it, ValueError)."""
    given = dict(given)
    n = given.pop("n")
    with pytest.raises(error, match=rf"fft\.{name}: {message}"):
        getattr(xp.fft, name)(n, device=on(np.empty(0)).device, **given)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_fftfreq_refuses_a_0d_array_spacing_of_0(on, name):
    """A computed spacing (a 0-d array) of 0 is refused as the number 0 is: NumPy and the
    kernels answered inf and NaN."""
    spacing = on(np.asarray(0.0, np.float32))
    with pytest.raises(ValueError, match=rf"fft\.{name}: d must not be 0 .*, got Array\(0\."):
        getattr(xp.fft, name)(4, d=spacing)
    assert getattr(xp.fft, name)(4, d=on(np.asarray(0.5))).device == spacing.device


_FINITE = "start, stop and step must be finite, got "


@pytest.mark.parametrize(("args", "error", "message"), [
    ((0, 10, 0), ValueError, "step must not be 0, got 0"),
    ((0.0, 1.0, 0.0), ValueError, r"step must not be 0, got 0\.0"),
    ((0, 10, np.float32(0)), ValueError, "step must not be 0"),
    ((np.nan,), ValueError, _FINITE + "start=nan, stop=None, step=1"),
    ((0, np.inf), ValueError, _FINITE + "start=0, stop=inf, step=1"),
    ((0, 1, -np.inf), ValueError, _FINITE + "start=0, stop=1, step=-inf"),
    ((0, 1j), TypeError, r"start, stop and step are real numbers, got 1j"),
])
def test_arange_refuses_what_has_no_length(on, args, error, message):
    """A step of 0 (NumPy and CuPy divided by zero: ZeroDivisionError) and an infinite or NaN
    bound or step (NumPy's ValueError "Maximum allowed size exceeded" or "cannot compute
    length", CuPy's OverflowError for an infinity): one clear error on every device."""
    with pytest.raises(error, match=rf"arange: {message}"):
        xp.arange(*args, device=on(np.empty(0)).device)


def test_arange_of_the_standard_arguments_is_numpys(on, host):
    """What the checks let through answers as NumPy does (a negative step, an empty range)."""
    device = on(np.empty(0)).device
    for args in ((5,), (2, 9, 3), (9, 2, -2), (0.5, 3.0, 0.75), (3, 1), (1.0, 1.0)):
        expected = np.arange(*args)
        got = host(xp.arange(*args, device=device))
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(("axes", "error", "message"), [
    (-1, ValueError, r"axes=-1 must be from 0 to the dimensions of x1 \(2, 3\) and x2 \(3, 2\)"),
    (3, ValueError, r"axes=3 must be from 0 to the dimensions of x1 \(2, 3\) and x2 \(3, 2\)"),
    (([1], [0, 1]), ValueError,
     r"axes=\(\[1\], \[0, 1\]\) names 1 axes of x1 \(2, 3\) and 2 of x2 \(3, 2\)"),
    (([1], [5]), np.exceptions.AxisError, r"x2 of shape \(3, 2\): axis 5 is out of bounds"),
    (([1.0], [0]), TypeError, r"the axes of x1 are integers, got float 1\.0"),
])
def test_tensordot_refuses_axes_the_standard_refuses_naming_the_shapes(on, to_host, axes,
                                                                       error, message):
    """NumPy read ``axes=-1`` as a product over no axis (shape (2, 3, 3, 2)) and raised a bare
    IndexError for a count past the dimensions (a 0-d array with ``axes=1`` too)."""
    rng = np.random.default_rng(7)
    x1, x2 = on(rng.random((2, 3))), on(rng.random((3, 2)))
    with pytest.raises(error, match=f"tensordot: {message}"):
        xp.tensordot(x1, x2, axes=axes)
    h1, h2 = rng.random((2, 3)), rng.random((2, 3))
    for count, second in ((0, h2), (1, h2.T), (2, h2)):  # the standard's counts: NumPy's
        np.testing.assert_allclose(to_host(xp.tensordot(on(h1), on(second), axes=count)),
                                   np.tensordot(h1, second, axes=count), rtol=1e-12)


@pytest.mark.parametrize("extra", [{}, {"prepend": "x"}, {"append": 1.5}])
def test_diff_of_more_differences_than_elements_is_empty_at_once(on, to_host, extra):
    """``diff(x, n=2**70)``: NumPy loops ``n`` times (forever); every difference past the
    length along the axis is of nothing, so the answer is NumPy's for that length."""
    h = np.random.default_rng(3).random((2, 5))
    x = on(h)
    given = {k: (x if v == "x" else v) for k, v in extra.items()}
    numpy_given = {k: (h if v == "x" else v) for k, v in extra.items()}
    got = xp.diff(x, n=2**70, axis=1, **given)
    want = np.diff(h, n=h.shape[1] + 1 + (5 if "prepend" in extra else 0)
                   + (1 if "append" in extra else 0), axis=1, **numpy_given)
    assert got.shape == want.shape == (2, 0) and got.dtype == want.dtype
    np.testing.assert_array_equal(to_host(xp.diff(x, n=3, axis=1, **given)),
                                  np.diff(h, n=3, axis=1, **numpy_given))
