"""``arange``, ``linspace`` and ``fft.fftfreq``/``rfftfreq`` on the kernels' devices
(``emulator``, ``cuda``): NumPy's arithmetic, step by step, in our elementwise kernels, so
that the values are the same bits on every device.

The libraries compute these values apart: NumPy's ``arange`` fills ``start + i * delta`` in
the dtype, with ``delta`` the difference of its first two values (in float32 for float16),
and its ``linspace`` ``i * step + start`` in float64, its ``fftfreq`` ``k * (1.0 / (n * d))``;
CuPy computes ``start + i * step`` with the step as given and lets NVRTC contract it into one
fused multiply-add (its ``linspace`` also cannot take complex ends), and ``k / (n * d)``.
Here the host decides what NumPy decides on the host (the length, the dtype, the first two
values, ``delta``, ``step``), and the kernels do the per-element arithmetic NumPy's loops do,
each operation rounded on its own (our kernels are compiled without contraction): an integer
index ``i`` (exact in every library) cast to the working dtype, a multiply, an add, then
NumPy's own first, second or last values written over the computed ones, as NumPy writes
them.

>>> import numpy as np, infini_cupy as xp
>>> x = xp.arange(1.0, 2.0, 0.1, dtype=xp.float32, device="emulator")
>>> bool(xp.all(x == xp.asarray(np.arange(1.0, 2.0, 0.1, dtype=np.float32), device="emulator")))
True
"""

from __future__ import annotations

import math
import operator
from typing import Callable, NamedTuple

import numpy as np

from ..arrays import is_cupy_array
from ..elementwise.launcher import cast
from . import elementwise_functions as ew

# the dtypes whose fill NumPy computes in float32 (HALF_fill; ml_dtypes' bfloat16 likewise)
_FILLED_IN_FLOAT32 = ("float16", "bfloat16")


def arange_dtype(start, stop, step) -> np.dtype:
    """NumPy's ``arange`` dtype for no ``dtype``: the promotion of each value's own dtype
    with the default integer (``PyArray_DescrFromObject`` from ``intp`` in ``ctors.c``)."""
    found = np.dtype(np.intp)
    for value in (start, stop, step):
        if value is not None:
            found = np.promote_types(found, np.asarray(value).dtype)
    return found


def arange_length(start, stop, step) -> int:
    """NumPy's ``arange`` length (``_calc_length`` in ``ctors.c``), its errors included: the
    values' own arithmetic (Python's for Python numbers), then the ceiling."""
    with np.errstate(all="ignore"):
        span = stop - start
        quotient = float(span / step)
    if quotient == 0 and span != 0:  # an underflow, or a division by an infinite step
        return 0 if math.copysign(1.0, quotient) < 0 else 1
    if math.isnan(quotient):
        raise ValueError("arange: cannot compute length")
    if math.isinf(quotient) or not -(2 ** 63) <= math.ceil(quotient) < 2 ** 63:
        raise ValueError("Maximum allowed size exceeded")
    return max(math.ceil(quotient), 0)


class OnDevice(NamedTuple):
    """How values reach the device: ``arange(start, stop, step, dtype)`` the library's own
    (NumPy's or CuPy's) for integers, ``upload(host)`` a copy of the NumPy array ``host``."""

    arange: Callable
    upload: Callable

    def index(self, n: int, dtype: np.dtype):
        """``0, 1, ..., n - 1`` as ``dtype``: each integer converted once, rounded to nearest
        (the libraries' ``arange(n)`` of a real dtype computes ``0 + i * 1``, exact
        everywhere; complex ones go through int64)."""
        if dtype.kind == "c":
            return cast(self.arange(0, n, 1, np.dtype(np.int64)), dtype)
        return self.arange(0, n, 1, dtype)


def arange(start, stop, step, dtype, device: OnDevice):
    """``arange(start, stop, step, dtype=dtype)`` as NumPy computes it, the elements in our
    kernels. ``stop`` is not None (the caller moved ``start`` there, as NumPy does)."""
    dtype = arange_dtype(start, stop, step) if dtype is None else np.dtype(dtype)
    length = arange_length(start, stop, step)
    # NumPy's first two values: its dtype's setitem of start and of start + step, which
    # takes a number for an integer dtype as a Python int (truncated, range-checked)
    as_item = int if dtype.kind in "iu" else _same
    head = np.empty(min(length, 2), dtype)
    if length:
        head[0] = as_item(start)
    if length > 1:
        with np.errstate(all="ignore"):
            head[1] = as_item(start + step)
    if length > 2 and dtype == np.bool_:
        raise TypeError("arange() is only supported for booleans when the result has at most "
                        "length 2.")
    if length <= 2:
        return device.upload(head)
    work = np.dtype(np.float32) if dtype.name in _FILLED_IN_FLOAT32 else dtype
    first, second = head.astype(work)
    with np.errstate(over="ignore"):  # integers wrap, as NumPy's C loop does
        delta = second - first
    if dtype.kind in "iu" and _integral(start) and _integral(step) and (
            int(first), int(delta)) == (start, step):
        # integers that neither wrap nor truncate: start + i * step, the libraries' own loop
        return device.arange(int(start), int(start) + length * int(step), int(step), dtype)
    values = ew.add(first, ew.multiply(device.index(length, work), delta))
    if work != dtype:
        values = cast(values, dtype)
    _write_at(values, 0, head)
    return values


def _integral(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _same(value):
    return value


def linspace_dtype(start, stop) -> np.dtype:
    """NumPy's ``linspace`` working dtype (``result_type(start, stop, ensure_inexact)``)."""
    return np.result_type(start, stop, 1.0)


def linspace(start, stop, num, dtype, endpoint, device: OnDevice):
    """``linspace(start, stop, num, dtype=dtype, endpoint=endpoint)`` as NumPy's
    ``function_base.linspace`` computes it for scalar ends, the elements in our kernels."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    work = linspace_dtype(start, stop)
    dtype = work if dtype is None else np.dtype(dtype)
    div = num - 1 if endpoint else num
    first, last = work.type(start), work.type(stop)
    with np.errstate(all="ignore"):  # linspace(0, inf, 3): NaN silently, as NumPy gives it
        delta = last - first
        values = device.index(num, work)
        if div > 0:
            step = delta / work.type(div)
            if step == 0:  # NumPy's way for subnormal steps (numpy#5437)
                values = ew.multiply(ew.divide(values, work.type(div)), delta)
            else:
                values = ew.multiply(values, step)
        else:
            values = ew.multiply(values, delta)
        values = ew.add(values, first)
    if endpoint and num > 1:
        _write_at(values, num - 1, np.asarray([last], work))
    if dtype.kind in "iu":
        values = ew.floor(values)
    if dtype != work:
        values = cast(values, dtype)
    return values


def _write_at(values, position: int, host: np.ndarray) -> None:
    """NumPy's own values written over the computed ones from ``position`` on."""
    if is_cupy_array(values):
        values[position:position + host.size].set(host)
    else:
        values[position:position + host.size] = host


def frequencies(n: int, d, dtype, real: bool, device: OnDevice):
    """``fft.fftfreq(n, d=d, dtype=dtype)`` (``rfftfreq`` where ``real``) as NumPy's
    ``fft/_helper.py`` computes it: the integers ``0, 1, ..., -(n // 2), ..., -1`` times
    ``1.0 / (n * d)``, then cast to ``dtype``. ``n`` and ``d`` are checked already."""
    scale = 1.0 / (n * d)
    k = device.arange(0, n // 2 + 1 if real else n, 1, np.dtype(np.int64))
    if not real:
        negative = k[(n - 1) // 2 + 1:]
        ew.subtract(negative, n, out=negative)  # -(n // 2), ..., -1
    values = ew.multiply(k, scale)
    return values if dtype is None or np.dtype(dtype) == values.dtype else cast(values, dtype)
