"""Float -> integer casts of NaN, infinities and values out of the integer's range: C++ leaves
them undefined and NumPy gives the host's answers; every device gives what NVIDIA's conversion
instructions give: the kernels themselves, the emulator by a model of those instructions
(``float_to_int_as_cvt`` in kernels_src/numeric.cuh), ``cpu`` by a NumPy routine
(infini_cupy/elementwise/numpy_casts.py). The oracle is the GPU itself:
``gpu_float_to_int.json``, read off an H200 (our cast kernel and CuPy's ``astype`` agreed on
every pair)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import dtypes
from infini_cupy.elementwise import numpy_casts
from infini_cupy.elementwise.numpy_casts import float_to_int

RECORD = json.loads(Path(__file__).with_name("gpu_float_to_int.json").read_text())
VALUES = [float(v) for v in RECORD["values"]]


@pytest.mark.parametrize("pair", sorted(RECORD["gpu"]))
def test_casts_give_what_the_gpu_gives(pair, to_device, to_host):
    src, dst = pair.split("->")
    with np.errstate(all="ignore"):
        host = np.array(VALUES, dtype=src)
    got = to_host(xp.astype(to_device(host), getattr(xp, dst)))
    assert got.tolist() == RECORD["gpu"][pair]
    on_cpu = xp.astype(xp.asarray(host, device="cpu"), getattr(xp, dst))
    assert np.asarray(on_cpu).tolist() == RECORD["gpu"][pair]


@pytest.mark.parametrize("src", ["float32", "float64"])
def test_strided_and_in_range_casts_are_unchanged(src, to_device, to_host):
    """The model changes nothing in range: random values, a strided view, every integer type."""
    rng = np.random.default_rng(7)
    host = (rng.standard_normal((40, 33)) * 100).astype(src)[:, ::3]
    for dst in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
        inside = np.clip(host, np.iinfo(dst).min, np.iinfo(dst).max - 1)
        with np.errstate(all="ignore"):
            expected = inside.astype(dst)
        np.testing.assert_array_equal(to_host(xp.astype(to_device(inside), getattr(xp, dst))),
                                      expected)


INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "float32", "float64", dtypes.BFLOAT16)
DEVICES = ("cpu", "emulator")


def _out_of_range(dtype, seed: int = 3) -> np.ndarray:
    """The record's values, then random ones across every integer range and far past it:
    magnitudes 2**0 .. 2**70, both signs, fractions, ties near the limits."""
    rng = np.random.default_rng(seed)
    magnitude = 2.0 ** rng.uniform(0, 70, 400)
    edges = [float(e) + d for e in (2**7, 2**8, 2**15, 2**16, 2**31, 2**32, 2**63, 2**64)
             for d in (-1.5, -1.0, -0.5, 0.0, 0.5, 1.0)]
    values = np.concatenate([VALUES, magnitude * rng.choice([-1.0, 1.0], 400), edges,
                             [-e for e in edges], [0.0, -0.0, 5e-324, -0.7]])
    with np.errstate(all="ignore"):
        return values.astype(dtype)


@pytest.mark.parametrize("src", FLOATS + ("complex64", "complex128"), ids=str)
def test_every_device_gives_the_same_bits(src, to_host):
    """cpu == emulator, bit for bit, for every float dtype (bfloat16 and float16 included;
    complex by its real part) to every integer dtype and bool, on special and random
    out-of-range values, contiguous and strided, through astype, ``x[...] = v``,
    ``x[mask] = v`` and asarray."""
    host = _out_of_range(src)
    if host.dtype.kind == "c":
        host.imag = host.real[::-1]  # dropped (bool: it counts)
    for dst in INTEGERS + ("bool",):
        got = []
        for device in DEVICES:
            x = xp.asarray(host, device=device)
            whole = xp.astype(x, getattr(xp, dst))
            strided = xp.astype(x[::-3], getattr(xp, dst))
            assigned = xp.zeros(host.shape, dtype=getattr(xp, dst), device=device)
            assigned[...] = x
            masked = xp.zeros(host.shape, dtype=getattr(xp, dst), device=device)
            masked[xp.ones(host.shape, dtype=xp.bool, device=device)] = x
            converted = xp.asarray(x, dtype=getattr(xp, dst), copy=True)
            got.append([to_host(a) for a in (whole, strided, assigned, masked, converted)])
        for cpu, emulator in zip(*got):
            np.testing.assert_array_equal(cpu, emulator, err_msg=f"{src}->{dst}")
            assert cpu.dtype == emulator.dtype == np.dtype(dst)
        np.testing.assert_array_equal(got[0][1], got[0][0][::-3])
        for a in got[0][2:]:
            np.testing.assert_array_equal(a, got[0][0])


@pytest.mark.parametrize("dst", INTEGERS)
def test_bfloat16_and_float16_convert_through_float32(dst):
    """The kernels widen bfloat16 and float16 to float32 exactly, then take float32's
    conversion (NaN to 0, not bfloat16's own rule in ml_dtypes): the record's float32 answers
    hold for every value that both types hold exactly."""
    for src in ("float16", dtypes.BFLOAT16):
        host = _out_of_range(src)
        expected = float_to_int(host.astype(np.float32), np.dtype(dst))
        for device in DEVICES:
            got = xp.astype(xp.asarray(host, device=device), getattr(xp, dst)).to_device("cpu")
            np.testing.assert_array_equal(np.asarray(got), expected, err_msg=f"{src} {device}")
    float32 = RECORD["gpu"][f"float32->{dst}"]
    with np.errstate(all="ignore"):
        exact = [k for k, v in enumerate(VALUES)
                 if np.isnan(v) or float(np.float32(v).astype(dtypes.BFLOAT16)) == float(np.float32(v))]
        host = np.array([VALUES[k] for k in exact]).astype(dtypes.BFLOAT16)
    got = np.asarray(xp.astype(xp.asarray(host, device="cpu"), getattr(xp, dst)))
    assert got.tolist() == [float32[k] for k in exact]


@pytest.mark.parametrize("src", FLOATS, ids=str)
def test_in_range_values_are_numpys(src):
    """In range (the fast path) every device truncates as NumPy does, random values included."""
    rng = np.random.default_rng(11)
    for dst in INTEGERS:
        info = np.iinfo(dst)
        low, high = max(info.min, -60000), min(info.max, 60000)  # inside float16's range too
        host = rng.uniform(low, high + 0.999, 500).astype(src)
        host = host[(host.astype(np.float64) > low - 1) & (host.astype(np.float64) < high + 1)]
        expected = np.trunc(host.astype(np.float64)).astype(dst)
        for device in DEVICES:
            got = xp.astype(xp.asarray(host, device=device), getattr(xp, dst)).to_device("cpu")
            np.testing.assert_array_equal(np.asarray(got), expected, err_msg=f"{src}->{dst}")


def test_python_floats_and_fills():
    """Python floats: ``full`` converts its fill value by the same rule (silently); ``x[k] = v``
    and ``asarray`` keep NumPy's checks of a Python number (ValueError for NaN, OverflowError
    out of range) on every device; NumPy float scalars convert as arrays do."""
    for device in DEVICES:
        for value, dst in ((np.nan, "int8"), (3e9, "int8"), (-1.0, "uint8"), (np.inf, "uint64"),
                           (np.nan, "int64"), (300.7, "uint8")):
            expected = float_to_int(np.array([value]), np.dtype(dst))[0]
            filled = xp.full(3, value, dtype=getattr(xp, dst), device=device)
            assert np.asarray(filled.to_device("cpu")).tolist() == [expected] * 3
            like = xp.full_like(xp.zeros(2, dtype=getattr(xp, dst), device=device), value)
            assert np.asarray(like.to_device("cpu")).tolist() == [expected] * 2
            x = xp.zeros(2, dtype=getattr(xp, dst), device=device)
            x[1] = np.float64(value)
            assert np.asarray(x.to_device("cpu")).tolist() == [0, expected]
        x = xp.zeros(2, dtype=xp.int16, device=device)
        with pytest.raises(ValueError):
            x[0] = float("nan")
        with pytest.raises(OverflowError):
            x[0] = float("inf")
        with pytest.raises(ValueError):
            xp.asarray([1.0, float("nan")], dtype=xp.int8, device=device)
        with pytest.raises(ValueError, match="NaN"):
            int(xp.asarray(float("nan"), device=device))


@pytest.mark.parametrize("src", ["float32", "float64"])
def test_the_compiled_range_check_answers_as_min_and_max(src):
    """``numpy_casts._within``'s compiled pass (runtime/float_range.c) against NumPy's min and
    max: NaN and infinities at every position of a block (its vector lanes, its scalar tail,
    past the 1024-value early exit), values at the bounds and one float beside them, the
    layouts it declines (strided, complex's real part, float16) answered by NumPy."""
    numpy_casts._within(np.zeros(1), -1.0, 1.0)  # looks for the compiled check once
    within = numpy_casts._compiled_within[0]
    if within is None:
        pytest.skip("the compiled hot path is not built here")
    rng = np.random.default_rng(5)
    for dst in INTEGERS:
        low, high = numpy_casts._range(np.dtype(dst), np.dtype(dst).itemsize * 8)
        bounds = (low - 1.0, high + 1.0)
        edge = np.array(bounds, dtype=src)  # the bounds as the source dtype rounds them
        near = np.concatenate([edge, np.nextafter(edge, np.inf), np.nextafter(edge, -np.inf)])
        for size in (0, 1, 3, 4, 5, 7, 8, 1023, 1024, 1025, 2051, 4099):
            base = (rng.random(size) * 100).astype(src)
            cases = [base]
            for special in (np.nan, np.inf, -np.inf, *near):
                for at in {0, size // 2, size - 1, size - 2, 1024, 1027} & set(range(size)):
                    case = base.copy()
                    case[at] = special
                    cases.append(case)
            for case in cases:
                expected = bool(case.size == 0 or (float(case.min()) > bounds[0]
                                                   and float(case.max()) < bounds[1]))
                assert within(case, *bounds) is expected, (dst, size, case)
                assert numpy_casts._within(case, *bounds) is expected
    x = np.array([[1.0, np.nan], [2.0, 3.0]], dtype=src)
    assert within(x[:, 0], -1e9, 1e9) is None and numpy_casts._within(x[:, 0], -1e9, 1e9)
    assert within(x.T, -1e9, 1e9) is False  # F-contiguous: the whole buffer
    assert within(x.astype(np.float16), -1e9, 1e9) is None
    assert not numpy_casts._within(x.astype(np.float16), -1e9, 1e9)
    assert within((x + 1j).real, -1e9, 1e9) is None


@pytest.mark.parametrize("src", ["float16", "float32", "float64", "complex64"])
def test_cpu_astype_repeats_answer_as_the_full_call(src):
    """``astype`` of a ``cpu`` Array, once its dtypes were checked, casts directly
    (namespace/cpu_direct.py): the same bits as the full call behind it, NaN, infinities,
    -0.0 and values out of range included, in every layout."""
    rng = np.random.default_rng(9)
    values = np.concatenate([_out_of_range(np.float64)[:200], rng.standard_normal(100) * 50,
                             [np.nan, np.inf, -np.inf, -0.0, 0.0]])
    with np.errstate(all="ignore"):
        host = values.astype(src)
    layouts = [host, host[::-3], host[:300].reshape(20, 15).T, host[:0], host[5:6].reshape(())]
    for dst in (*INTEGERS, "float32", "float64", "bool", "complex128", src):
        for h in layouts:
            x = xp.asarray(h, device="cpu")
            for _ in range(2):  # the first call checks, the second is direct
                got = xp.astype(x, getattr(xp, dst))
                full = xp.astype.__wrapped__(x, getattr(xp, dst))
                assert got.dtype == full.dtype and got.shape == full.shape
                assert got._a.tobytes() == full._a.tobytes(), (src, dst, h.shape)
                assert got._a.flags.c_contiguous
