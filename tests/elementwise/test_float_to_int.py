"""Float -> integer casts of NaN, infinities and values out of the integer's range: C++ leaves
them undefined and NumPy gives the host's answers; our kernels give what NVIDIA's conversion
instructions give, and the emulator models those instructions (``float_to_int_as_cvt`` in
kernels_src/numeric.cuh). The oracle is the GPU itself: ``gpu_float_to_int.json``, read off an
H200 (our cast kernel and CuPy's ``astype`` agreed on every pair)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import infini_cupy as xp

RECORD = json.loads(Path(__file__).with_name("gpu_float_to_int.json").read_text())
VALUES = [float(v) for v in RECORD["values"]]


@pytest.mark.parametrize("pair", sorted(RECORD["gpu"]))
def test_casts_give_what_the_gpu_gives(pair, backend_name, to_device, to_host):
    if backend_name == "numpy":
        pytest.skip("the cpu device casts as NumPy does (the standard leaves these values "
                    "unspecified)")
    src, dst = pair.split("->")
    with np.errstate(all="ignore"):
        host = np.array(VALUES, dtype=src)
    got = to_host(xp.astype(to_device(host), getattr(xp, dst)))
    assert got.tolist() == RECORD["gpu"][pair]


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
