"""The accuracy table of the elementwise docs (``docs/user/accuracy.json``, rendered on
:doc:`/user/elementwise`) is true on this machine, and no looser than it need be.

Each real floating-point function of the table runs on a few thousand random inputs of its
domain plus special values (zeros, subnormals, the largest finite value, infinities, NaN), on
``cpu`` (NumPy computes) and on the emulator (our CUDA sources, g++ and glibc's libm), in
float32 and float64. Its error is measured against a reference in more precision: float64 for
float32 inputs, NumPy's ``longdouble`` (x87 extended, 64 significant bits) for float64 inputs.
A measured error of ``e`` units of the last place from the exact result is a distance of
``ceil(e - 1/2)`` representable steps from the correctly rounded result: the unit of CUDA's
table, which the ``cuda`` column quotes (documented, not measured here). The table's classes:

- ``"exact"``: every result equals the mathematical result (no rounding takes place);
- ``"cr"``: correctly rounded (0 steps), with some results rounded;
- ``N``: at most ``N`` steps from the correctly rounded result, and the sampled maximum is at
  least ``N - 1`` (a bound more than one ulp loose fails, as does one that is exceeded).

The ``cpu`` device's answers depend on the CPU: NumPy picks its SIMD loops at run time, and
where the CPU has AVX-512 its loops (Intel's SVML for most functions) round otherwise, so the
table has a column for each, ``cpu`` and ``cpu_avx512``, and the test checks the one NumPy
runs here (:mod:`tests.support.accuracy_table`). The sampled maximum can also differ with
another glibc. To measure and print this machine's measured columns::

    python -m tests.elementwise.test_accuracy
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import infini_cupy as xp
from tests.support.accuracy_table import AVX512_COLUMN, column, numpy_loops, table

MEASURED_DEVICES = ("cpu", "emulator")
DTYPES = ("float32", "float64")
N_RANDOM = 2000
SEED = 49
# Uncertainty of the reference, in ulps of the dtype: a float64 result holds a float32's
# exact value to 2^-29 ulp; a longdouble one a float64's to 2^-11 per ulp of glibc's long
# double libm, which is within 2 of them. A result this close to half an ulp counts as
# correctly rounded.
REFERENCE_TOLERANCE = {"float32": 2.0 ** -20, "float64": 2.0 ** -10}
HIGHER = {"float32": np.float64, "float64": np.longdouble}
PRECISION = {"float32": 24, "float64": 53}


# ---------------------------------------------------------------- inputs
def _log_uniform(rng, n, lo_exp, hi_exp, signed=True):
    """Magnitudes 2**u, u uniform in [lo_exp, hi_exp], with random signs where ``signed``."""
    x = np.exp2(rng.uniform(lo_exp, hi_exp, n))
    return x * rng.choice([-1.0, 1.0], n) if signed else x


def _specials(dtype):
    info = np.finfo(dtype)
    tiny_sub = float(info.smallest_subnormal)
    values = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, tiny_sub, -tiny_sub, 3 * tiny_sub,
              float(info.smallest_normal), -float(info.smallest_normal),
              float(info.smallest_normal) * (1 - float(info.eps)), float(info.max),
              -float(info.max), float(info.eps), math.inf, -math.inf, math.nan]
    return np.array(values, dtype=np.float64)


def _unary_inputs(name, dtype, rng):
    """Random inputs of ``name``'s domain (float64, cast to ``dtype`` by the caller)."""
    n, wide = N_RANDOM, (126 if dtype == "float32" else 1022)
    half = n // 2
    max_exp = 88.0 if dtype == "float32" else 709.0
    if name in ("exp", "expm1"):
        return np.concatenate([rng.uniform(-max_exp * 1.15, max_exp * 0.999, half),
                               _log_uniform(rng, n - half, -40, 3)])
    if name in ("sinh", "cosh"):
        return np.concatenate([rng.uniform(-max_exp * 0.999, max_exp * 0.999, half),
                               _log_uniform(rng, n - half, -40, 3)])
    if name in ("log", "log2", "log10", "sqrt"):
        return np.concatenate([_log_uniform(rng, half, -wide - 20, wide + 1, signed=False),
                               rng.uniform(0.5, 2.0, n - half)])
    if name == "log1p":
        return np.concatenate([_log_uniform(rng, half, -60, 0, signed=True) * 0.999,
                               _log_uniform(rng, n - half, -10, wide, signed=False)])
    if name in ("asin", "acos", "atanh"):
        return np.concatenate([rng.uniform(-1.0, 1.0, half),
                               (1.0 - _log_uniform(rng, n - half, -50, -1, signed=False))
                               * rng.choice([-1.0, 1.0], n - half)])
    if name == "acosh":
        return 1.0 + _log_uniform(rng, n, -50, 40, signed=False)
    if name == "tanh":
        return np.concatenate([rng.uniform(-20.0, 20.0, half), _log_uniform(rng, n - half, -40, 2)])
    if name in ("sin", "cos", "tan"):
        return np.concatenate([rng.uniform(-10.0, 10.0, half), _log_uniform(rng, n - half, -30, 20)])
    if name == "square":
        return _log_uniform(rng, n, -wide / 2, wide / 2)
    return np.concatenate([rng.uniform(-10.0, 10.0, half), _log_uniform(rng, n - half, -wide, wide)])


def _binary_inputs(name, dtype, rng):
    n, half = N_RANDOM, N_RANDOM // 2
    if name == "pow":
        base = _log_uniform(rng, n, -15, 15, signed=False)
        exponent = rng.uniform(-8.0, 8.0, n)
        negative = rng.random(n) < 0.25  # negative bases with integer exponents
        base[negative] *= -1
        exponent[negative] = np.round(exponent[negative])
        return base, exponent
    if name == "logaddexp":
        x1 = rng.uniform(-50.0, 50.0, n)
        return x1, np.concatenate([rng.uniform(-50.0, 50.0, half), x1[half:] + rng.uniform(-1, 1, n - half)])
    if name in ("add", "subtract"):  # cancellation: half the pairs share an exponent
        x1 = _log_uniform(rng, n, -60, 60)
        x2 = np.concatenate([_log_uniform(rng, half, -60, 60),
                             -x1[half:] * rng.uniform(0.5, 2.0, n - half)])
        return x1, x2
    return (np.concatenate([rng.uniform(-10.0, 10.0, half), _log_uniform(rng, n - half, -60, 60)]),
            np.concatenate([rng.uniform(-10.0, 10.0, half), _log_uniform(rng, n - half, -60, 60)]))


def inputs(name, dtype):
    """The arguments ``name`` is measured on in ``dtype``: random values of its domain, and
    every special value (for a binary function, paired with every other and with 1.5)."""
    rng = np.random.default_rng([SEED, sorted(_numpy_names()).index(name), DTYPES.index(dtype)])
    specials = _specials(dtype)
    with np.errstate(all="ignore"):
        if _arity(name) == 1:
            args = (np.concatenate([_unary_inputs(name, dtype, rng), specials]),)
        else:
            x1, x2 = _binary_inputs(name, dtype, rng)
            s1, s2 = np.meshgrid(specials, np.concatenate([specials, [1.5, -1.5, 3.0]]))
            args = (np.concatenate([x1, s1.ravel()]), np.concatenate([x2, s2.ravel()]))
        return tuple(a.astype(dtype) for a in args)


# ---------------------------------------------------------------- measuring
def _numpy_names():
    from infini_cupy.elementwise.ops import OPS

    return {name: OPS[name].numpy_name for name in table()["functions"]}


def _arity(name):
    from infini_cupy.elementwise.ops import OPS

    return OPS[name].arity


def _reference(name, args, dtype):
    """``name`` of ``args`` in the next precision up (NumPy), as that precision's array."""
    higher = [a.astype(HIGHER[dtype]) for a in args]
    with np.errstate(all="ignore"):
        if name == "reciprocal":
            return np.reciprocal(higher[0])
        if name == "round":
            return np.rint(higher[0])
        return getattr(np, _numpy_names()[name])(*higher)


def _ulp_errors(got, reference, dtype):
    """|got - exact| in units of the last place of ``dtype`` at the exact value; 0 where both
    are the same NaN or infinity (or the exact result overflows to ``got``'s infinity), inf
    where only one is."""
    higher = HIGHER[dtype]
    got_h = got.astype(higher)
    with np.errstate(over="ignore"):
        rounded = reference.astype(dtype)  # the correctly rounded result
    nan_got, nan_ref = np.isnan(got_h), np.isnan(reference)
    infinite = np.isinf(got_h) | np.isinf(rounded)
    _, exponent = np.frexp(reference)
    smallest = np.ldexp(higher(1), np.finfo(dtype).minexp - PRECISION[dtype] + 1)
    ulp = np.maximum(np.ldexp(higher(1), exponent.astype(np.int32) - PRECISION[dtype]), smallest)
    with np.errstate(all="ignore"):
        errors = np.abs(got_h - reference) / ulp
    errors = np.where(infinite, np.where(got_h == rounded.astype(higher), 0.0, np.inf), errors)
    errors = np.where(nan_got | nan_ref, np.where(nan_got & nan_ref, 0.0, np.inf), errors)
    return errors.astype(np.float64)


def measure(name, device, dtype):
    """The largest error of ``name`` on ``device`` in ``dtype``, in ulps of the exact result,
    and the arguments that gave it (for the failure message)."""
    args = inputs(name, dtype)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        result = getattr(xp, name)(*(xp.asarray(a, device=device) for a in args))
    got = np.asarray(result.to_device("cpu"))
    assert got.dtype == np.dtype(dtype), (name, device, got.dtype)
    errors = _ulp_errors(got, _reference(name, args, dtype), dtype)
    worst = int(np.argmax(errors))
    return float(errors[worst]), tuple(a[worst] for a in args), got[worst]


def classify(max_error, dtype):
    """The table's entry for a measured maximum error: "exact", "cr" or a step count."""
    if max_error == 0.0:
        return "exact"
    steps = math.ceil(max_error - 0.5 - REFERENCE_TOLERANCE[dtype])
    return "cr" if steps <= 0 else steps


def _measured_cases():
    return [(name, device, dtype) for name in table()["functions"]
            for device in MEASURED_DEVICES for dtype in DTYPES]


# ---------------------------------------------------------------- the tests
def test_table_covers_the_real_floating_functions():
    """Every row names a function of the op table, with an entry for each device and dtype,
    each ``"exact"``, ``"cr"``, a positive step count, or (cuda only) null."""
    from infini_cupy.elementwise.ops import OPS

    functions = table()["functions"]
    assert list(functions) == sorted(functions)
    for name, devices in functions.items():
        assert name in OPS, name
        assert set(devices) == {"cpu", AVX512_COLUMN, "emulator", "cuda"}, name
        for device, entries in devices.items():
            assert set(entries) == set(DTYPES), (name, device)
            for entry in entries.values():
                assert entry in ("exact", "cr") or (isinstance(entry, int) and entry > 0) or (
                    device == "cuda" and entry is None), (name, device, entry)


@pytest.fixture(scope="module")
def measured():
    """Every measured case's maximum error, measured once (the emulator's kernels compile
    on first use)."""
    return {case: measure(*case) for case in _measured_cases()}


@pytest.mark.parametrize("device", MEASURED_DEVICES)
def test_documented_bounds_hold_and_are_tight(measured, device):
    """On every function and dtype, the documented class holds on the sampled inputs, and a
    step count is at most one step above the sampled maximum (``cpu``: the column of the
    loops NumPy runs on this CPU)."""
    functions, documented_in = table()["functions"], column(device)
    if documented_in is None:
        pytest.skip("NumPy's loops on this CPU (neither AVX2 nor AVX-512) are not in the table")
    wrong = []
    for (name, on, dtype), (error, args, got) in measured.items():
        if on != device:
            continue
        documented, found = functions[name][documented_in][dtype], classify(error, dtype)
        if isinstance(documented, int) and isinstance(found, int):
            ok = found <= documented <= found + 1
        elif documented == "cr" and found == "cr":
            ok = True
        else:
            ok = documented == found
        if not ok:
            wrong.append(f"{name} {dtype}: documented {documented!r}, measured {found!r} "
                         f"({error:.3g} ulp at {name}{args} = {got!r})")
    assert not wrong, (f"docs/user/accuracy.json is wrong on {device} (its column "
                       f"{documented_in!r}):\n" + "\n".join(wrong))


@pytest.mark.gpu
def test_the_gpu_stays_within_cudas_table():
    """On a GPU, the ``cuda`` column (CUDA's documented bounds, not a measurement) holds on
    the same inputs: a bound only, CUDA's figures are maxima over its own tests."""
    functions = table()["functions"]
    wrong = []
    for name in functions:
        for dtype in DTYPES:
            documented = functions[name]["cuda"][dtype]
            if documented is None:
                continue
            error, args, got = measure(name, "cuda", dtype)
            found = classify(error, dtype)
            ok = (found == "exact" or documented != "exact") and (
                found in ("exact", "cr") or (isinstance(documented, int) and found <= documented))
            if not ok:
                wrong.append(f"{name} {dtype}: CUDA's table {documented!r}, measured {found!r} "
                             f"({error:.3g} ulp at {name}{args} = {got!r})")
    assert not wrong, "\n".join(wrong)


@pytest.mark.skipif(numpy_loops() is None, reason="NumPy runs no SIMD loops here to turn off")
@pytest.mark.parametrize(("disabled", "loops"), [
    ("X86_V4 AVX512_ICL AVX512_SPR", "avx2"), ("X86_V3 X86_V4 AVX512_ICL AVX512_SPR", None)])
def test_the_cpu_column_is_that_of_the_loops_numpy_runs(disabled, loops):
    """With NumPy's AVX-512 loops turned off the ``cpu`` column is this machine's; with its
    AVX2 ones too, NumPy's baseline loops round otherwise again (``exp`` float32 correctly
    rounded, ``tanh`` float64 2 ulp): no column, and the ``cpu`` rounding tests skip."""
    code = ("from tests.support.accuracy_table import column, numpy_loops; "
            "print(numpy_loops(), column('cpu'), column('emulator'))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[2],
                         env=dict(os.environ, NPY_DISABLE_CPU_FEATURES=disabled))
    assert run.stdout.split() == [str(loops), str(loops and "cpu"), "emulator"]


def test_float32_exp_of_one_differs_by_one_ulp_between_cpu_and_emulator():
    """The known case the table explains: NumPy's SIMD expf and glibc's differ at x = 1."""
    if numpy_loops() is None:
        pytest.skip("NumPy runs no SIMD expf on this CPU (neither AVX2 nor AVX-512)")
    one = np.ones(1, dtype=np.float32)
    on_cpu = np.asarray(xp.exp(xp.asarray(one, device="cpu")).to_device("cpu"))
    emulated = np.asarray(xp.exp(xp.asarray(one, device="emulator")).to_device("cpu"))
    exact = np.float32(math.e)
    assert emulated[0] == exact  # glibc's expf is correctly rounded here
    steps = abs(int(on_cpu.view(np.int32)[0]) - int(emulated.view(np.int32)[0]))
    assert steps == 1


def main(argv=None):
    """Print the measured columns as JSON, to paste into ``docs/user/accuracy.json`` (the
    ``cpu`` device's under this CPU's column name)."""
    out = {}
    for name, device, dtype in _measured_cases():
        error, args, got = measure(name, device, dtype)
        named = column(device) or f"{device} (NumPy's baseline loops: no column yet)"
        out.setdefault(name, {}).setdefault(named, {})[dtype] = classify(error, dtype)
        print(f"{name:12s} {device:9s} {dtype}: {error:8.4f} ulp -> {classify(error, dtype)!r}"
              f"  at {args}", file=sys.stderr)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
