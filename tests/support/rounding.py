"""The tests' own oracle for conversions to 16-bit floats: each value rounded once, exactly.

A value (a Python int, or a float taken exactly through ``as_integer_ratio``) is rounded to
nearest, ties to even, on the target's full significand, with Python's integers: no float
arithmetic that could round on the way, and no library whose answer changes with its release
(ml_dtypes rounded float64 through float32, twice, before 0.7). Subnormals, the tie at the top
of the range (which rounds to infinity) and signed zeros follow IEEE 754.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np


@dataclass(frozen=True)
class Format:
    """A binary floating-point format: ``fraction_bits`` stored significand bits, exponent
    bias ``bias`` (the smallest normal is 2**(1 - bias)), and the quiet NaN it gives."""

    fraction_bits: int
    bias: int
    exponent_bits: int
    quiet_nan: int

    @property
    def infinity(self) -> int:
        return ((1 << self.exponent_bits) - 1) << self.fraction_bits

    @property
    def sign(self) -> int:
        return 1 << (self.fraction_bits + self.exponent_bits)


BFLOAT16 = Format(fraction_bits=7, bias=127, exponent_bits=8, quiet_nan=0x7FC0)
FLOAT16 = Format(fraction_bits=10, bias=15, exponent_bits=5, quiet_nan=0x7E00)


def round_once(value, fmt: Format) -> int:
    """The bits of ``value`` (int or float) rounded once to ``fmt``: NaN is ``fmt``'s quiet NaN
    with the value's sign (payloads are the caller's to compare)."""
    if isinstance(value, float) and math.isnan(value):
        return (fmt.sign if math.copysign(1.0, value) < 0 else 0) | fmt.quiet_nan
    negative = value < 0 or (isinstance(value, float) and math.copysign(1.0, value) < 0)
    sign = fmt.sign if negative else 0
    if isinstance(value, float) and math.isinf(value):
        return sign | fmt.infinity
    magnitude = Fraction(abs(value))  # exact, for floats as for ints
    if magnitude == 0:
        return sign
    # exponent: 2**e <= magnitude < 2**(e + 1)
    e = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if magnitude < Fraction(2) ** e:
        e -= 1
    min_exponent = 1 - fmt.bias
    quantum = Fraction(2) ** (max(e, min_exponent) - fmt.fraction_bits)
    units, remainder = divmod(magnitude, quantum)  # units: an int; remainder < quantum
    units = int(units)
    if 2 * remainder > quantum or (2 * remainder == quantum and units % 2 == 1):
        units += 1
    if e < min_exponent:  # subnormal: the bits are the count of the smallest subnormal
        bits = units  # (a carry to 1 << fraction_bits is the smallest normal, as it should be)
    else:
        bits = ((e + fmt.bias) << fmt.fraction_bits) + units - (1 << fmt.fraction_bits)
    return sign | min(bits, fmt.infinity)


def round_once_array(values: np.ndarray, fmt: Format) -> np.ndarray:
    """:func:`round_once` of each element (the real part of complex values) as uint16."""
    values = np.asarray(values)
    if values.dtype.kind == "c":
        values = values.real
    items = values.ravel().tolist()  # Python ints and floats, exactly
    return np.array([round_once(v, fmt) for v in items], np.uint16).reshape(values.shape)


def near_ties_float64(fmt: Format, rng) -> np.ndarray:
    """float64 values at and beside every rounding decision of ``fmt``, over its whole exponent
    range (subnormals and the top included): each tie between neighbours, one float64 ulp and
    a float32-sized nudge either side, for a few significands per exponent."""
    out = []
    lowest = -(fmt.bias - 1) - fmt.fraction_bits  # exponent of the smallest subnormal
    top = fmt.bias  # largest finite exponent
    steps = 1 << fmt.fraction_bits
    for e in range(lowest + fmt.fraction_bits, top + 1):
        quantum = max(e, 1 - fmt.bias) - fmt.fraction_bits
        units = {steps, steps + 1, 2 * steps - 1, int(rng.integers(steps, 2 * steps))}
        for n in units:
            tie = math.ldexp(2 * n + 1, quantum - 1)  # between n and n + 1 quanta
            out += [tie, np.nextafter(tie, 0.0), np.nextafter(tie, np.inf),
                    tie * (1 + 2.0**-30), tie * (1 - 2.0**-30), math.ldexp(n, quantum)]
    values = np.array(out, np.float64)
    values = values[np.isfinite(values)]
    return np.concatenate([values, -values])


def near_ties_int(dtype, fmt: Format) -> np.ndarray:
    """Integers of ``dtype`` at and beside the ties of ``fmt`` for every bit length the dtype
    has past ``fmt``'s significand (the large values, where a float32 step would round
    first), with the dtype's extremes."""
    dt = np.dtype(dtype)
    info = np.iinfo(dt)
    out = {info.max, info.min, info.max - 1}
    width = fmt.fraction_bits + 1
    for length in range(width + 1, dt.itemsize * 8 + 1):
        shift = length - width
        for n in ((1 << fmt.fraction_bits), (1 << width) - 1, (1 << fmt.fraction_bits) + 1):
            tie = ((2 * n + 1) << shift) >> 1
            for v in (tie - 2, tie - 1, tie, tie + 1, tie + 2, n << shift):
                for s in (v, -v):
                    if info.min <= s <= info.max:
                        out.add(s)
    return np.array(sorted(out), dt)
