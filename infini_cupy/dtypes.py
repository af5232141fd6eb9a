"""The one dtype table: which dtypes exist, their C++ names in kernels, their categories,
and type promotion (the array API standard's, NumPy's for what it leaves open).

Two dtypes are extensions outside the standard, both computed in float32 by the kernels:
float16, and bfloat16 when the optional ``ml_dtypes`` package is installed
(``pip install 'infini_cupy[bfloat16]'``; NumPy and CuPy hold bfloat16 arrays through it).
Without it bfloat16 is simply absent: ``BFLOAT16`` is None and ``xp.bfloat16`` raises an
AttributeError saying what to install.

>>> import numpy as np
>>> from infini_cupy import dtypes
>>> dtypes.result_type(np.dtype("int8"), 1)          # Python scalars are weak
dtype('int8')
>>> dtypes.result_type(np.dtype("int8"), np.dtype("float32"))   # mixed kinds: NumPy
dtype('float32')
>>> dtypes.ctype(np.dtype("float16"))
'ic::half_t'
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np

# ml_dtypes 0.7 is the first to round a cast to bfloat16 once (float64, 64- and 32-bit
# integers): before, it rounded through float32, twice, and the `cpu` device would then give
# other bits than our kernels. Older releases leave bfloat16 out rather than disagree.
ML_DTYPES_MIN = (0, 7)
BFLOAT16_HINT = "bfloat16 needs the ml_dtypes package: pip install 'ml_dtypes>=0.7'"

try:
    import ml_dtypes
except ImportError:  # optional: bfloat16 is then not supported
    ml_dtypes = None
else:
    if tuple(int(n) for n in re.findall(r"\d+", ml_dtypes.__version__)[:2]) < ML_DTYPES_MIN:
        BFLOAT16_HINT = (f"bfloat16 needs ml_dtypes >= 0.7 (installed: {ml_dtypes.__version__}, "
                         "which rounds float64 to bfloat16 twice): pip install 'ml_dtypes>=0.7'")
        ml_dtypes = None

# ml_dtypes' bfloat16 (NumPy kind 'V', so dtype.kind tests do not see it as a float), or None.
BFLOAT16: np.dtype | None = np.dtype(ml_dtypes.bfloat16) if ml_dtypes is not None else None

# numpy dtype -> (C++ type name in kernels_src, category). Order: the standard's listing,
# bfloat16 beside float16.
DTYPE_TABLE: dict[np.dtype, tuple[str, str]] = {
    np.dtype(np.bool_): ("bool", "bool"),
    np.dtype(np.int8): ("int8_t", "signed"),
    np.dtype(np.int16): ("int16_t", "signed"),
    np.dtype(np.int32): ("int32_t", "signed"),
    np.dtype(np.int64): ("int64_t", "signed"),
    np.dtype(np.uint8): ("uint8_t", "unsigned"),
    np.dtype(np.uint16): ("uint16_t", "unsigned"),
    np.dtype(np.uint32): ("uint32_t", "unsigned"),
    np.dtype(np.uint64): ("uint64_t", "unsigned"),
    np.dtype(np.float16): ("ic::half_t", "real floating"),
    **({BFLOAT16: ("ic::bfloat16_t", "real floating")} if BFLOAT16 is not None else {}),
    np.dtype(np.float32): ("float", "real floating"),
    np.dtype(np.float64): ("double", "real floating"),
    np.dtype(np.complex64): ("ic::complex<float>", "complex floating"),
    np.dtype(np.complex128): ("ic::complex<double>", "complex floating"),
}
ALL_DTYPES: tuple[np.dtype, ...] = tuple(DTYPE_TABLE)
# The standard's dtypes: float16 and bfloat16 are extensions (computed in float32).
EXTENSION_DTYPES: tuple[np.dtype, ...] = tuple(
    d for d in (np.dtype(np.float16), BFLOAT16) if d is not None)
STANDARD_DTYPES: tuple[np.dtype, ...] = tuple(d for d in ALL_DTYPES if d not in EXTENSION_DTYPES)

# The standard's dtype groups, by the names its function signatures use.
CATEGORY_GROUPS: dict[str, frozenset[str]] = {
    "all": frozenset({"bool", "signed", "unsigned", "real floating", "complex floating"}),
    "boolean": frozenset({"bool"}),
    "integer": frozenset({"signed", "unsigned"}),
    "integer or boolean": frozenset({"bool", "signed", "unsigned"}),
    "numeric": frozenset({"signed", "unsigned", "real floating", "complex floating"}),
    "real numeric": frozenset({"signed", "unsigned", "real floating"}),
    "floating-point": frozenset({"real floating", "complex floating"}),
    "real floating-point": frozenset({"real floating"}),
    "complex floating-point": frozenset({"complex floating"}),
}

_REAL_OF_COMPLEX = {np.dtype(np.complex64): np.dtype(np.float32),
                    np.dtype(np.complex128): np.dtype(np.float64)}


# CuPy takes ml_dtypes' bfloat16 only with NumPy >= 2.1.2 (it registers the dtype then);
# with an older NumPy it refuses it as "Unsupported dtype".
CUPY_BFLOAT16_NUMPY = "2.1.2"


def dtype_or_none(dtype) -> np.dtype | None:
    """``numpy.dtype(dtype)``, or None for what is not a dtype (the caller's check says so)."""
    try:
        return np.dtype(dtype)
    except TypeError:
        return None


def check_bfloat16_on_cupy(dtype) -> None:
    """TypeError naming the NumPy version when ``dtype`` is bfloat16 and CuPy cannot hold it
    with this NumPy (older than 2.1.2); nothing otherwise."""
    if is_bfloat16(dtype) and np.lib.NumpyVersion(np.__version__) < CUPY_BFLOAT16_NUMPY:
        raise TypeError(f"bfloat16 on CuPy needs NumPy >= 2.1.2 (CuPy takes ml_dtypes' "
                        f"bfloat16 from then on); this NumPy is {np.__version__}: "
                        "pip install 'numpy>=2.1.2' (the bfloat16 extra requires it)")


def as_dtype(dtype) -> np.dtype:
    """``dtype`` as a supported ``numpy.dtype``; TypeError for anything else."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        hint = f" ({BFLOAT16_HINT})" if BFLOAT16 is None and "bfloat16" in str(dtype) else ""
        raise TypeError(f"{dtype!r} is not a dtype{hint}") from None
    if dt not in DTYPE_TABLE:
        raise TypeError(f"dtype {dt} is not supported; expected one of "
                        f"{', '.join(str(d) for d in ALL_DTYPES)}")
    return dt


def ctype(dtype) -> str:
    """The C++ name of ``dtype``'s element type in kernels_src (``float``, ``ic::half_t``)."""
    return DTYPE_TABLE[as_dtype(dtype)][0]


def alignment(dtype) -> int:
    """Bytes the kernels' C++ type of ``dtype`` is aligned to: its size (``ic::complex<T>`` is
    ``alignas(2 * sizeof(T))``, ``ic::half_t`` ``alignas(2)``). NumPy asks less of its arrays
    (8 bytes for complex128, none of a view carved at any byte offset): a kernel must not
    dereference such an array as its C++ type (a misaligned access: a dead CUDA context)."""
    return as_dtype(dtype).itemsize


def category(dtype) -> str:
    """One of ``bool``, ``signed``, ``unsigned``, ``real floating``, ``complex floating``."""
    return DTYPE_TABLE[as_dtype(dtype)][1]


def dtypes_in(group: str) -> tuple[np.dtype, ...]:
    """The supported dtypes of a standard group (``"numeric"``, ``"real floating-point"``...)."""
    cats = CATEGORY_GROUPS[group]
    return tuple(d for d in ALL_DTYPES if DTYPE_TABLE[d][1] in cats)


def is_in(dtype, group: str) -> bool:
    return DTYPE_TABLE[np.dtype(dtype)][1] in CATEGORY_GROUPS[group]


def real_dtype(dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128, ``dtype`` itself otherwise."""
    dt = np.dtype(dtype)
    return _REAL_OF_COMPLEX.get(dt, dt)


_EXACT_SCALAR_KINDS = {bool: "bool", int: "int", float: "float", complex: "complex"}


def _scalar_kind(value) -> str | None:
    """``bool``/``int``/``float``/``complex`` for Python scalars (NumPy scalars are not weak)."""
    kind = _EXACT_SCALAR_KINDS.get(type(value))  # the common case, one lookup
    if kind is not None:
        return kind
    if isinstance(value, np.generic):
        return None
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, complex):
        return "complex"
    return None


PYTHON_SCALAR_TYPES = (bool, int, float, complex)  # the standard's Python scalars


def is_python_scalar(value) -> bool:
    return _scalar_kind(value) is not None


# What an array of every device holds (CuPy has no string, object or longdouble arrays, and
# native byte order only): a creation function asked for anything else refuses it.
HELD_DTYPES: frozenset[np.dtype] = frozenset(ALL_DTYPES)


def check_held(what: str, dtype) -> np.dtype:
    """``dtype`` as a ``numpy.dtype``; TypeError naming ``what`` unless it is one of
    :data:`HELD_DTYPES` (NumPy alone would make string, object or longdouble arrays).

    >>> check_held("zeros", "float32")
    dtype('float32')
    """
    try:
        held = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{what}: {dtype!r} is not a dtype") from None
    if held not in HELD_DTYPES:
        raise TypeError(f"{what}: dtype {held} ({held.str!r}) is not a boolean or numeric dtype "
                        "in native byte order, which arrays of every device hold")
    return held


def check_fill_value(what: str, value) -> None:
    """TypeError unless ``value`` is a Python number, or a NumPy scalar or array of a held
    dtype: ``full(shape, value)`` takes its dtype from it (NumPy's ``full(3, "a")`` is a
    string array)."""
    if _scalar_kind(value) is not None:
        return
    dtype = getattr(value, "dtype", None)
    if not isinstance(dtype, np.dtype) or dtype not in HELD_DTYPES:
        raise TypeError(f"{what}: fill_value must be a bool, int, float or complex (or a "
                        f"0-d array of a numeric dtype), got {type(value).__name__}"
                        + (f" of dtype {dtype}" if isinstance(dtype, np.dtype) else ""))


def check_astype_method(from_dtype, dtype, order, casting) -> None:
    """NumPy's ``x.astype(dtype, order, casting)`` arguments an Array (and a fused trace of
    one) takes: ValueError for an order Arrays are not cast to, TypeError where
    ``numpy.can_cast`` refuses the cast under ``casting``."""
    if order not in ("C", "K", "A"):
        raise ValueError(f"x.astype: order={order!r}; Arrays are cast to C order")
    if casting != "unsafe" and not np.can_cast(from_dtype, dtype, casting=casting):
        raise TypeError(f"x.astype: cannot cast {from_dtype} to {np.dtype(dtype)} "
                        f"under casting={casting!r}")


def check_group(func: str, group: str, *dts) -> None:
    """TypeError, array-api-strict style, unless every dtype in ``dts`` belongs to ``group``.

    >>> check_group("add", "numeric", np.dtype("bool"), np.dtype("int8"))
    Traceback (most recent call last):
    TypeError: Only numeric dtypes are allowed in add(...). Got bool and int8.
    """
    if all(DTYPE_TABLE[as_dtype(dt)][1] in CATEGORY_GROUPS[group] for dt in dts):
        return
    allowed = "" if group == "all" else f"{group} "
    raise TypeError(f"Only {allowed}dtypes are allowed in {func}(...). "
                    f"Got {' and '.join(str(dt) for dt in dts)}.")


def is_bfloat16(dtype) -> bool:
    """Whether ``dtype`` is ml_dtypes' bfloat16 (False for anything not a ``numpy.dtype``)."""
    return BFLOAT16 is not None and isinstance(dtype, np.dtype) and dtype == BFLOAT16


def float_max(dtype) -> float:
    """The largest finite value of real floating ``dtype`` (bfloat16 included)."""
    if is_bfloat16(dtype):
        return float(ml_dtypes.finfo(BFLOAT16).max)
    return float(np.finfo(dtype).max)


def _numpy_result_type(*args) -> np.dtype:
    """``np.result_type`` with bfloat16 promoting as float16 does: ml_dtypes promotes it with
    some dtypes only (bfloat16 with float16 or int16 raises), so bfloat16 stands in as
    float16, and a float16 answer becomes bfloat16 (float32 when float16 itself took part:
    neither 16-bit type holds the other). So bfloat16 with int8, uint8 or bool stays
    bfloat16, with int16 gives float32 and with int32 float64, as float16 does; with float32
    float32, with float64 float64, with complex64 complex64; weak Python scalars as with
    float16 (a float keeps bfloat16, a complex gives complex64)."""
    # args: numpy dtypes and Python scalars
    if BFLOAT16 is None or not any(isinstance(a, np.dtype) and a == BFLOAT16 for a in args):
        return np.result_type(*args)
    half = np.dtype(np.float16)
    has_half = any(isinstance(a, np.dtype) and a == half for a in args)
    stand_in = tuple(half if isinstance(a, np.dtype) and a == BFLOAT16 else a for a in args)
    result = np.result_type(*stand_in)
    if result == half:
        return np.dtype(np.float32) if has_half else BFLOAT16
    return result


@functools.lru_cache(maxsize=1024)
def _promote_dtypes(dts: tuple[np.dtype, ...]) -> np.dtype:
    # NumPy 2's table agrees with the standard's wherever the standard defines a result, and
    # gives NumPy's answer for mixed kinds (int8 + float16 -> float16, int64 + uint64 -> float64).
    return _numpy_result_type(*dts)


def promote_types(*dts) -> np.dtype:
    """The promoted dtype of ``dts`` (NumPy's table, bfloat16 as :func:`result_type` has it),
    for any NumPy dtypes, supported or not: callers check support themselves."""
    return _promote_dtypes(tuple(np.dtype(d) for d in dts))


_SCALAR_WEAK_OK = {  # Python scalar kind -> array categories it combines with, keeping the array dtype
    "bool": {"bool"},
    "int": {"signed", "unsigned", "real floating", "complex floating"},
    "float": {"real floating", "complex floating"},
    "complex": {"complex floating"},
}
_SCALAR_DEFAULT = {"bool": np.dtype(np.bool_), "int": np.dtype(np.int64),
                   "float": np.dtype(np.float64), "complex": np.dtype(np.complex128)}


def result_type(*args) -> np.dtype:
    """The promoted dtype of dtypes, arrays and Python scalars.

    Arrays and dtypes promote among themselves first; then each Python scalar is weak: it
    takes the array dtype when its kind fits (int with any numeric, float with floating,
    complex with complex), else NumPy's answer (float with int8 gives float64, complex with
    float32 gives complex64, int with bool gives int64).
    """
    dts = []
    scalars = []
    for a in args:
        kind = _scalar_kind(a)
        if kind is not None:
            scalars.append(kind)
        else:
            dts.append(as_dtype(getattr(a, "dtype", a)))
    if not dts:
        if not scalars:
            raise ValueError("at least one array or dtype is required")
        order = ("bool", "int", "float", "complex")
        return _SCALAR_DEFAULT[max(scalars, key=order.index)]
    dt = _promote_dtypes(tuple(dts))
    for kind in scalars:
        if DTYPE_TABLE[dt][1] not in _SCALAR_WEAK_OK[kind]:
            # NEP 50: float with an integer array -> default float; complex with float32 ->
            # complex64; anything with bool -> the scalar's default dtype.
            dt = _numpy_result_type(dt, {"bool": False, "int": 0, "float": 0.0, "complex": 0j}[kind])
    return dt


def scalar_fits(value, dtype) -> bool:
    """Whether Python scalar ``value`` converts to ``dtype`` without overflow of an integer."""
    dt = np.dtype(dtype)
    if dt.kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
        info = np.iinfo(dt)
        return info.min <= value <= info.max
    return True


def _bfloat16_bits(value) -> np.uint16:
    """A Python scalar's bfloat16 bits, rounded once to nearest even as the kernels round: a
    float through float32 rounded to odd (exact, see kernels_src/bfloat16.cuh), an int
    through its top 24 bits with a sticky last bit (exact for ints past 2**53, where float()
    would round first), a complex by its real part."""
    if isinstance(value, complex):
        value = value.real
    if isinstance(value, int):
        magnitude = abs(value)
        drop = max(magnitude.bit_length() - 24, 0)
        odd = (magnitude >> drop) | (1 if magnitude & ((1 << drop) - 1) else 0)
        value = math.ldexp(-odd if value < 0 else odd, drop)  # OverflowError past a double
        with np.errstate(over="ignore"):
            single = np.float32(value)  # exact: 24 bits (inf past float's top, as bfloat16's)
    else:
        value = float(value)
        with np.errstate(over="ignore"):
            single = np.float32(value)  # to nearest even (inf past float's top)
        back = float(single)
        if back != value and value == value:  # inexact: to odd, one step back if rounded away
            bits = int(single.view(np.uint32)) - (abs(back) > abs(value))
            single = np.uint32(bits | 1).view(np.float32)
    bits = int(single.view(np.uint32))
    if single != single:
        return np.uint16(((bits >> 16) & 0x8000) | 0x7FC0)
    return np.uint16((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16)


def kernel_scalar(dtype):
    """The callable turning a number into what a kernel receives by value for ``dtype``:
    ``dtype.type``, except bfloat16, passed as its bits in a ``numpy.uint16`` (the kernel's
    ``ic::bfloat16_t`` is a 2-byte struct; CuPy and the emulator pass a scalar's bytes, and
    uint16 is a scalar type every CuPy version passes)."""
    dt = np.dtype(dtype)
    return _bfloat16_bits if is_bfloat16(dt) else dt.type


def plain_scalar_bounds(dtype):
    """(low, high): a Python scalar between them converts to ``dtype`` by ``kernel_scalar``
    without overflow or rounding to infinity (what :func:`scalar_value` checks); None for
    complex dtypes."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.min, info.max
    if dtype.kind == "b":
        return False, True
    if dtype.kind == "f" or is_bfloat16(dtype):
        fmax = float_max(dtype)
        return -fmax, fmax
    return None


_INT64_MIN, _INT64_MAX, _UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


def int_in_int64(value: int) -> bool:
    """Whether Python int ``value`` is in int64's range (NumPy's dtype for it then)."""
    return _INT64_MIN <= value <= _INT64_MAX


def int_in_64_bits(value: int) -> bool:
    """Whether NumPy holds Python int ``value`` in int64 or uint64; past them it makes an
    object array, which no device holds."""
    return _INT64_MIN <= value <= _UINT64_MAX


def scalar_value(value, dtype):
    """Python scalar ``value`` as a NumPy scalar of ``dtype`` (what a kernel receives by value,
    see :func:`kernel_scalar`).

    OverflowError for integers out of the dtype's range, as NumPy raises.
    """
    dt = np.dtype(dtype)
    if not scalar_fits(value, dt):
        raise OverflowError(f"Python integer {value} out of bounds for {dt}")
    if dt.kind == "b":
        # Only the logical functions compute in bool with a Python int: NumPy's read it as
        # a C long first, and refuse one past int64's range
        if type(value) is int and not _INT64_MIN <= value <= _INT64_MAX:
            raise OverflowError(f"Python integer {value} out of bounds for int64 (a logical "
                                f"function reads an int operand as int64, as NumPy's do)")
        return np.bool_(bool(value))  # truth value, as NumPy's cast (1j is True)
    if dt.kind in "iu" and isinstance(value, complex):
        value = value.real
    if dt.kind in "iu" and isinstance(value, float):
        value = int(value)
    with np.errstate(over="ignore", invalid="ignore"):
        return kernel_scalar(dt)(value)
