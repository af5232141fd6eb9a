"""Float -> integer casts on the ``cpu`` device with the GPU's answers.

C++ and the standard leave NaN, infinities and values outside the integer's range undefined;
NumPy gives the host's (x86: the "integer indefinite", NaN -> INT_MIN, -1.0 -> uint8 255)
and ml_dtypes its own for bfloat16. Every device gives what NVIDIA's conversion instructions
give, measured on an H200 (``tests/elementwise/gpu_float_to_int.json``) and modelled for the
emulator by ``float_to_int_as_cvt`` in ``kernels_src/numeric.cuh``:

- integers of 32 bits or fewer: truncate and saturate into a 32-bit integer of the target's
  signedness (``cvt.rzi.s32``/``.u32``), then keep the low bits; NaN gives 0 from float16,
  bfloat16 and float32, and from float64 ``-2**31`` (signed) or ``2**31`` (unsigned);
- 64-bit integers: truncate and saturate; NaN gives ``-2**63`` (int64) or ``2**63`` (uint64);
- complex sources convert their real part (NumPy's rule), bool is ``x != 0`` (NaN is True).

In range the answer is the truncation, NumPy's own: one pass over the values finds that case
(``runtime/float_range.c`` for contiguous float32 and float64 where the compiled hot path
is built, else NumPy's min and max) and leaves it to NumPy's cast; the rule above runs only
when a value is out of range or NaN.

>>> import numpy as np
>>> float_to_int(np.array([np.nan, np.inf, -1.0, 300.7], np.float32), np.dtype(np.uint8))
array([  0, 255,   0,  44], dtype=uint8)
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from ..dtypes import is_bfloat16
from ..runtime import native
from .numpy_backend import restore, silence

_INTERMEDIATE_BITS = 32  # the cvt.rzi width of every target of 32 bits or fewer


def is_float_to_int(source: np.dtype, target: np.dtype) -> bool:
    """Whether casting ``source`` to ``target`` is one this module answers."""
    return target.kind in "iu" and (source.kind in "fc" or is_bfloat16(source))


def _range(target: np.dtype, bits: int) -> tuple[int, int]:
    if target.kind == "i":
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def float_to_int(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """``x`` (real or complex floating, bfloat16 included) as integer dtype ``target``, a new
    C-contiguous array, with the GPU's answers for NaN, infinities and values out of range;
    silent."""
    if x.dtype.kind == "c":
        x = x.real
    bounds = _BOUNDS.get(target)
    if bounds is None:
        bounds = _BOUNDS[target] = _range(target, target.itemsize * 8)
    low, high = bounds
    outside_low, outside_high = low - 1.0, high + 1.0  # exclusive: truncation stays in range
    if x.size == 0 or _within(x, outside_low, outside_high):
        return x.astype(target, order="C")  # in range: the truncation (NaN is never within)
    with np.errstate(all="ignore"):
        result = x.astype(target, order="C")  # the host's answers, right in range
    # compared in float64, exact for every source and bound
    bad = ~((x > np.float64(outside_low)) & (x < np.float64(outside_high)))
    result[bad] = _outside(x[bad].astype(np.float64), target, low, high,
                           from_double=x.dtype == np.float64)
    return result


_BOUNDS: dict = {}  # an integer dtype -> its (low, high): _range's, read per call
_compiled_within: list = []  # [hot_calls.floats_within, or None] once looked for


def _within(x: np.ndarray, low: float, high: float) -> bool:
    """Whether ``low < v < high`` for every value ``v`` of ``x`` (NaN never is): one compiled
    pass where it takes ``x`` (a contiguous float32 or float64 array), else NumPy's min and
    max (two reductions, about 1.4 us each of call alone)."""
    if not _compiled_within:
        module = native.hot_calls()  # built once, as for the cpu device's elementwise repeats
        _compiled_within.append(None if module is None else module.floats_within)
    within = _compiled_within[0]
    if within is not None:
        answer = within(x, low, high)
        if answer is not None:
            return answer
    return float(x.min()) > low and float(x.max()) < high


def _outside(values: np.ndarray, target: np.dtype, low: int, high: int, from_double: bool):
    """The GPU's answers for float64 ``values`` that are NaN or out of ``target``'s range."""
    nan = np.isnan(values)
    if target.itemsize == 8:  # one saturating conversion
        nan_value = low if target.kind == "i" else 1 << 63
        result = np.full(values.shape, high, dtype=target)
        result[values < 0] = low
        result[nan] = nan_value
        return result
    low32, high32 = _range(target, _INTERMEDIATE_BITS)
    nan_value = (low32 if target.kind == "i" else 1 << 31) if from_double else 0
    wide = np.clip(np.trunc(np.where(nan, float(nan_value), values)), low32, high32)
    return wide.astype(np.int64).astype(target)  # integer narrowing keeps the low bits


def cast(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``x`` as a new C-contiguous array of ``dtype``: :func:`cast_into` a new array, where
    NumPy's own ``astype`` makes it (no float -> integer cast, no complex -> real one)."""
    if is_float_to_int(x.dtype, dtype) or (x.dtype.kind == "c" and dtype.kind != "c"):
        return cast_into(np.empty(x.shape, dtype), x)
    token = silence()
    try:
        return x.astype(dtype, order="C")  # unsafe casting, NumPy's default
    finally:
        restore(token)


def cast_into(out: np.ndarray, x) -> np.ndarray:
    """``out[...] = x`` with NumPy's unsafe casting (complex to real drops the imaginary part)
    and the GPU's float -> integer answers; silent, as the kernels are."""
    x = np.asarray(x)
    if is_float_to_int(x.dtype, out.dtype):
        np.copyto(out, float_to_int(x, out.dtype))
        return out
    if x.dtype.kind == "c" and out.dtype.kind != "c":  # NumPy warns that it drops the
        with warnings.catch_warnings(), np.errstate(all="ignore"):  # imaginary part: meant
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            np.copyto(out, x, casting="unsafe")
        return out
    token = silence()  # np.errstate(all="ignore") at a context variable's cost
    try:
        np.copyto(out, x, casting="unsafe")
    finally:
        restore(token)
    return out


def warn_if_complex_to_real(source, target) -> None:
    """NumPy's and CuPy's warning for a cast of ``source`` complex values to a real
    ``target`` dtype (not bool), on every device (scikit-learn refuses complex data by it)."""
    if source.kind != "c" or target.kind in "bc":
        return
    frame, level = sys._getframe(1), 2  # the warning names the caller's line, as NumPy's
    while frame is not None and frame.f_code.co_filename.startswith(_OUR_CODE):
        frame, level = frame.f_back, level + 1
    warnings.warn("Casting complex values to real discards the imaginary part",
                  np.exceptions.ComplexWarning, stacklevel=level)


# the package's folder as its code objects name their files (co_filename: as imported, not
# resolved), the namespace's generated wrappers included (boundary.py)
_OUR_CODE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
