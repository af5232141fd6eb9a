"""Shared by the elementwise tests: random data per (function, dtype), the layouts every
function is checked on, NumPy as the oracle, and the tolerances.

Tolerances (relative, and the same absolute for results near zero; complex: of the modulus):
- exact: integers, bools, and the float functions IEEE defines exactly (add, sqrt, floor,
  remainder, ...): bit-equal to NumPy (NaN positions included).
- float16: 2e-3 (two float16 ulps: both sides compute in float32 and round once).
- bfloat16: 1.6e-2 (two bfloat16 ulps, likewise). The oracle for bfloat16 is NumPy computing
  in float32, rounded to bfloat16 by ml_dtypes (nextafter: ml_dtypes' own, in bfloat16 steps).
- float32: 2e-6 (about 16 ulps: NumPy's SIMD float32 functions and CUDA's each allow ~4).
- float64: 8e-15 (CUDA's double functions allow 2 ulps; glibc's 1).
- complex64: 1e-4, complex128: 1e-11 (composite formulas; FMA contraction on the GPU).
"""

from __future__ import annotations

import sys

import numpy as np

from infini_cupy import dtypes
from infini_cupy.elementwise import kernels as ek
from infini_cupy.elementwise.ops import OPS
from infini_cupy.elementwise.resolution import result_of_loop
from infini_cupy.runtime import launch
from tests.support.batches import batch_built

# Float functions whose real results are exact under IEEE 754 (no libm approximation).
EXACT_REAL = {
    "abs", "add", "ceil", "clip", "conj", "copysign", "divide", "equal", "floor", "floor_divide",
    "greater", "greater_equal", "imag", "isfinite", "isinf", "isnan", "less", "less_equal",
    "maximum", "minimum", "multiply", "negative", "nextafter", "not_equal", "positive", "real",
    "reciprocal", "remainder", "round", "sign", "signbit", "sqrt", "square", "subtract", "trunc",
}
# ... and complex results exact too (componentwise, no products that FMA could fuse).
EXACT_COMPLEX = {
    "add", "conj", "equal", "imag", "isfinite", "isinf", "isnan", "negative", "not_equal",
    "positive", "real", "round", "subtract",
}
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 8e-15, "complex64": 1e-4, "complex128": 1e-11}

SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5])


def random_array(op_name: str, dtype, shape, rng, position: int = 0) -> np.ndarray:
    """Random values of ``dtype`` suited to ``op_name``'s argument ``position``."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if op_name == "pow":
            lo, hi = ((-4, 4) if dt.kind == "i" else (0, 5)) if position == 0 else (0, 12)
        elif op_name in ("bitwise_left_shift", "bitwise_right_shift") and position == 1:
            lo, hi = 0, dt.itemsize * 8 + 2
        else:
            lo, hi = int(info.min), int(info.max)
        a = rng.integers(lo, hi, shape, dtype=dt, endpoint=True)
        if op_name in ("floor_divide", "remainder", "divide") and a.size:
            flat = a.reshape(-1)
            picks = rng.integers(0, flat.size, max(1, flat.size // 5))
            flat[picks] = rng.choice(np.array([0, 1, -1 if dt.kind == "i" else 2], dtype=dt), picks.size)
        return a
    if dt.kind == "c":
        rdt = dtypes.real_dtype(dt)
        re, im = (np.asarray(rng.standard_normal(shape) * 2).astype(rdt) for _ in range(2))
        return np.asarray(re + 1j * im).astype(dt)
    a = np.asarray(rng.standard_normal(shape) * 3)
    if a.size:
        flat = a.reshape(-1)
        picks = rng.integers(0, flat.size, max(1, flat.size // 6))
        flat[picks] = rng.choice(SPECIALS, picks.size)
    return np.asarray(a.astype(dt))


def python_scalar(op_name: str, dtype):
    """A Python scalar of ``dtype``'s kind, valid as either argument of ``op_name``."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return True
    if dt.kind in "iu":
        return 2 if op_name in ("pow", "bitwise_left_shift", "bitwise_right_shift") else 3
    if dt.kind == "c":
        return 1.5 - 0.5j
    return 1.5


def dtype_kind(dtype) -> str:
    """NumPy's dtype kind, with bfloat16 (kind 'V' in ml_dtypes) a float: 'f'."""
    dt = np.dtype(dtype)
    return "f" if dtypes.is_bfloat16(dt) else dt.kind


def _is_bfloat16_array(a) -> bool:
    return isinstance(a, np.ndarray) and dtypes.is_bfloat16(a.dtype)


def oracle(op_name: str, *args):
    """NumPy's answer, cast to the result dtype of our op table."""
    op = OPS[op_name]
    if any(_is_bfloat16_array(a) for a in args):
        return _bfloat16_oracle(op_name, args)
    with np.errstate(all="ignore"):
        if op_name == "clip":
            x = args[0]
            expected = np.clip(*args)
            result_dtype = x.dtype
        else:
            expected = getattr(np, op.numpy_name)(*args)
            result_dtype = result_of_loop(op.name, dtypes.result_type(*args))
            if op_name == "floor_divide" and np.dtype(result_dtype).kind == "f":
                # The standard, not NumPy, when exactly one operand is infinite: inf // 2 is
                # inf (NumPy: nan), -1 // inf is -0 (NumPy: -1).
                a, b = (np.asarray(v, result_dtype) for v in args)
                one_inf = (np.isinf(a) != np.isinf(b)) & ~np.isnan(a) & ~np.isnan(b) & (b != 0)
                expected = np.where(one_inf, a / b, expected)
            if op_name == "nextafter":
                # The standard (and C): x2 when x1 == x2, so nextafter(-0, +0) is +0; NumPy's
                # float16 nextafter returns x1.
                a, b = (np.asarray(v, result_dtype) for v in args)
                expected = np.where(a == b, b, expected)
        return np.asarray(expected).astype(result_dtype)


def _bfloat16_oracle(op_name: str, args):
    """bfloat16 as our kernels (and ml_dtypes' ufuncs) compute it: bfloat16 arrays widened to
    float32 (exact), NumPy's float32 answer, rounded once to the result dtype by ml_dtypes."""
    if op_name == "clip":
        result_dtype = args[0].dtype
    else:
        result_dtype = result_of_loop(OPS[op_name].name, dtypes.result_type(*args))
    if op_name == "nextafter":  # steps of bfloat16: ml_dtypes' nextafter on bfloat16 operands
        a, b = (np.asarray(v).astype(result_dtype) for v in args)
        with np.errstate(all="ignore"):
            return np.where(a == b, b, np.nextafter(a, b)).astype(result_dtype)
    wide = [a.astype(np.float32) if _is_bfloat16_array(a) else a for a in args]
    return oracle(op_name, *wide).astype(result_dtype)


def assert_matches(op_name: str, actual, expected: np.ndarray, input_dtype, what: str = ""):
    assert actual.dtype == expected.dtype, f"{op_name} {what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{op_name} {what}: shape {actual.shape} != {expected.shape}"
    kind, in_kind = dtype_kind(actual.dtype), dtype_kind(input_dtype)
    exact = kind in "biu" or (in_kind == "f" and op_name in EXACT_REAL) or (
        in_kind == "c" and op_name in EXACT_COMPLEX)
    msg = f"{op_name} {what}"
    if dtypes.is_bfloat16(actual.dtype):  # NumPy's testing finds NaN only in its own float kinds
        actual, expected = actual.astype(np.float32), expected.astype(np.float32)
    if exact:
        np.testing.assert_array_equal(actual, expected, err_msg=msg, strict=True)
        return
    rtol = RTOL[str(np.dtype(input_dtype))] if in_kind in "fc" else RTOL[str(actual.dtype)]
    compare_dtype = np.complex128 if kind == "c" else np.float64
    np.testing.assert_allclose(actual.astype(compare_dtype), expected.astype(compare_dtype),
                               rtol=rtol, atol=rtol, equal_nan=True, err_msg=msg)


_prepared: set = set()


def _standin_is_cupy() -> bool:
    """The suite runs with ``--backend cuda-standin`` (the stand-in for CuPy is ``cupy``)."""
    standin = sys.modules.get("tests.support.cupy_standin")
    return standin is not None and isinstance(sys.modules.get("cupy"), standin.CupyStandin)


def prepare(backend_name: str, *groups: str) -> None:
    """Build the variants of ops (or ``"cast"``) into one emulator library per group before
    their tests: one g++ run each instead of one per kernel. The CuPy stand-in runs its
    launches in the emulator too: with ``--backend cuda-standin`` the same libraries are
    loaded (the emulated suite's, from the disk cache) instead of one built per kernel."""
    if backend_name != "emulate" and not _standin_is_cupy():
        return
    for group in groups:
        if group not in _prepared:
            names = ek.cast_variant_names() if group == "cast" else ek.op_variant_names(group)
            with batch_built():
                launch.prepare(ek.SOURCE, names, backend="emulate")
            _prepared.add(group)


def kernels_launched(fn):
    """(fn(), the kernel templates it launched, in order: names without their arguments)."""
    with launch.recording() as launches:
        result = fn()
    return result, [r.name.split("<")[0] for r in launches]
