"""Source and destination sharing memory, in every way: the answer is that of copying from a
snapshot of the source, and nothing outside the destination changes.

Every case carves both views from one buffer with the same function on the device and on a
NumPy twin; the oracle copies the twin's source first (``y[...] = x.copy()``) and the whole
buffers are compared. Covers ``rearrange_`` (first call and the cached-layout short path),
the namespace's views used in place, and elementwise ``out=``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import infini_cupy as xp
from infini_cupy import arrays, config
from infini_cupy.runtime.launch import recording
from tests.support import dtype_cases
from tests.support.layout_cases import shares
from tests.support.view_cases import (
    check_overlapping_views,
    check_snapshot_copy,
    overlapping_views,
)
from tests.support.view_cases import values as _values


def _strided(a, shape, strides):
    if arrays.is_cupy_array(a):
        import cupy

        return cupy.lib.stride_tricks.as_strided(a, shape, strides)
    return np.lib.stride_tricks.as_strided(a, shape, strides)


def _square(n):
    return lambda b: b[: n * n].reshape(n, n)


# (name, buffer length, y of the buffer, x of the buffer)
CASES = [
    ("identical", 40, lambda b: b, lambda b: b),
    ("shifted by +1 element", 40, lambda b: b[1:], lambda b: b[:-1]),
    ("shifted by -1 element", 40, lambda b: b[:-1], lambda b: b[1:]),
    ("shifted by 7 elements", 64, lambda b: b[7:], lambda b: b[:-7]),
    ("reversed onto itself", 41, lambda b: b, lambda b: b[::-1]),
    ("reversed, shifted by one", 41, lambda b: b[1:], lambda b: b[:-1][::-1]),
    ("transposed view of itself", 81, _square(9), lambda b: _square(9)(b).T),
    ("transposed and reversed", 81, _square(9), lambda b: _square(9)(b).T[::-1]),
    ("transpose into a shifted window", 100,
     lambda b: b[1:82].reshape(9, 9), lambda b: b[:81].reshape(9, 9).T),
    ("every other element onto the others", 64, lambda b: b[::2], lambda b: b[1::2]),
    ("strided onto its own compaction", 64, lambda b: b[:16], lambda b: b[::4]),
    ("compaction onto its own strided view", 64, lambda b: b[::4], lambda b: b[:16]),
    ("row broadcast from the destination", 64,
     lambda b: b.reshape(8, 8), lambda b: xp.broadcast_to(b.reshape(8, 8)[3], (8, 8))),
    ("column broadcast from the destination", 64,
     lambda b: b.reshape(8, 8), lambda b: xp.broadcast_to(b.reshape(8, 8)[:, 2:3], (8, 8))),
    ("one element broadcast from the destination", 30,
     lambda b: b, lambda b: xp.broadcast_to(b[17], (30,))),
    ("rows shifted down by one", 72, lambda b: b.reshape(9, 8)[1:], lambda b: b.reshape(9, 8)[:-1]),
    ("columns shifted right by one", 72,
     lambda b: b.reshape(8, 9)[:, 1:], lambda b: b.reshape(8, 9)[:, :-1]),
    ("diagonal shift, transposed", 100,
     lambda b: b.reshape(10, 10)[1:, 1:], lambda b: b.reshape(10, 10)[:-1, :-1].T),
    ("different shapes of one run", 48,
     lambda b: b[:24].reshape(4, 6), lambda b: b[4:28].reshape(6, 4).T),
    ("3-d permutation of itself", 64,
     lambda b: b.reshape(4, 4, 4), lambda b: b.reshape(4, 4, 4).transpose(2, 0, 1)),
    ("interleaved rows", 2 * 7 * 6,
     lambda b: b.reshape(14, 6)[0::2], lambda b: b.reshape(14, 6)[1::2][::-1]),
    ("interleaved as_strided windows", 40,
     lambda b: _strided(b, (5, 4), (8 * b.itemsize, b.itemsize)),
     lambda b: _strided(b[4:], (5, 4), (8 * b.itemsize, b.itemsize))),
    # large enough for the staged (tiled) copy, the kernel matrix and the flat-index kernel
    ("large transpose of itself", 300 * 300, _square(300), lambda b: _square(300)(b).T),
    ("large rows shifted", 200 * 130, lambda b: b.reshape(200, 130)[1:],
     lambda b: b.reshape(200, 130)[:-1]),
    ("large misaligned rows shifted by one", 64 * 301,
     lambda b: b.reshape(64, 301)[:, 1:], lambda b: b.reshape(64, 301)[:, :-1]),
    ("many dims permuted onto themselves", 2**12,
     lambda b: b.reshape((2,) * 12),
     lambda b: b.reshape((2,) * 12).transpose(11, 0, 10, 1, 9, 2, 8, 3, 7, 4, 6, 5)),
]
DTYPES = dtype_cases.EACH_SIZE


# the large layouts (kernel families) in two unit sizes; the small ones in every dtype
OVERLAP_PARAMS = [pytest.param(*case, dtype, id=f"{case[0]}-{dtype}") for case in CASES
                  for dtype in DTYPES if case[1] <= 5000 or dtype in ("float32", "int8")]


@pytest.mark.parametrize("name, n, y_of, x_of, dtype", OVERLAP_PARAMS)
def test_rearrange_overlapping(name, n, y_of, x_of, dtype, to_device, to_host):
    check_snapshot_copy(to_device, to_host, n, y_of, x_of, dtype, xp.rearrange_)
    # again: the layout is cached now, and the short path must see the overlap too
    check_snapshot_copy(to_device, to_host, n, y_of, x_of, dtype, xp.rearrange_)


@pytest.mark.parametrize("name, n, y_of, x_of", CASES[:12], ids=[c[0] for c in CASES[:12]])
def test_cached_disjoint_layout_then_overlapping(name, n, y_of, x_of, to_device, to_host):
    """The short path remembers layouts by strides and alignment, not addresses: a layout
    first seen on disjoint buffers must still be snapshotted when it overlaps."""
    host = _values(n, "float32", seed=1)
    other = to_device(host.copy())
    target = to_device(np.zeros(n, np.float32))
    xp.rearrange_(y_of(target), x_of(other))  # same layout, disjoint memory: remembered
    check_snapshot_copy(to_device, to_host, n, y_of, x_of, "float32", xp.rearrange_)


def test_overlap_copies_through_one_snapshot(to_device, to_host):
    buffer = to_device(np.arange(64, dtype=np.float32))
    with recording() as launches:
        xp.rearrange_(buffer[1:], buffer[:-1])
    assert len(launches) == 2  # snapshot, then the copy
    with recording() as launches:
        xp.rearrange_(buffer, buffer)
    assert launches == []  # the same elements of the same memory: nothing to do
    np.testing.assert_array_equal(to_host(buffer), np.r_[0, np.arange(63)])


# ---------------------------------------------------------------- the namespace in place
IN_PLACE = [
    ("flip", lambda a: xp.flip(a, axis=0)),
    ("flip both axes", lambda a: xp.flip(a)),
    ("permute_dims", lambda a: xp.permute_dims(a, (1, 0))),
    ("matrix_transpose", lambda a: xp.matrix_transpose(a)),
    ("moveaxis", lambda a: xp.moveaxis(a, 0, 1)),
    ("broadcast_to of a row", lambda a: xp.broadcast_to(a[2], a.shape)),
    ("reshape view of the transpose", lambda a: xp.reshape(xp.reshape(a, (-1,)), (a.shape[1], a.shape[0])).T),
    ("rearrange pattern view", lambda a: xp.rearrange(a, "h w -> w h")),
    ("rearrange pattern with a copy", lambda a: xp.rearrange(a, "h w -> (w h)").reshape(a.shape)),
    ("flip columns", lambda a: xp.flip(a, axis=1)),
]


@pytest.mark.parametrize("name, view", IN_PLACE, ids=[c[0] for c in IN_PLACE])
def test_in_place_through_namespace_views(name, view, to_device, to_host):
    host = _values(36, "float32", seed=2).reshape(6, 6)
    a = to_device(host.copy())
    with config.backend("numpy"):  # the oracle's view of the NumPy twin, in every run
        expected = np.array(view(host))
    assert xp.rearrange_(a, view(a)) is a
    np.testing.assert_array_equal(to_host(a), expected)


def test_copies_never_alias_their_inputs(to_device):
    a = to_device(_values(24, "float32").reshape(4, 6))
    for result in (xp.concat([a, a]), xp.stack([a, a.T.T]), xp.tile(a, (1, 1)), xp.repeat(a, 1),
                   xp.roll(a, 0), xp.asarray(a, copy=True), xp.astype(a, np.float32),
                   xp.reshape(a, (24,), copy=True), xp.rearrange(a), xp.rearrange(a.T)):
        assert not shares(result, a)


# ---------------------------------------------------------------- elementwise out=
OUT_CASES = [
    ("identical", 40, lambda b: b, lambda b: b),
    ("shifted by +1 element", 40, lambda b: b[1:], lambda b: b[:-1]),
    ("shifted by -1 element", 40, lambda b: b[:-1], lambda b: b[1:]),
    ("reversed", 41, lambda b: b, lambda b: b[::-1]),
    ("transposed view of itself", 81, _square(9), lambda b: _square(9)(b).T),
    ("row broadcast from out", 64, lambda b: b.reshape(8, 8),
     lambda b: xp.broadcast_to(b.reshape(8, 8)[5], (8, 8))),
    ("interleaved", 64, lambda b: b[::2], lambda b: b[1::2]),
    ("diagonal shift, transposed", 100, lambda b: b.reshape(10, 10)[1:, 1:],
     lambda b: b.reshape(10, 10)[:-1, :-1].T),
    ("large transpose", 130 * 130, _square(130), lambda b: _square(130)(b).T),
]
OUT_OPS = [
    ("negative", lambda x, out: xp.negative(x, out=out), np.negative),
    ("add scalar", lambda x, out: xp.add(x, 3, out=out), lambda x: x + 3),
    ("add x to itself", lambda x, out: xp.add(x, x, out=out), lambda x: x + x),
    ("maximum", lambda x, out: xp.maximum(x, 1, out=out), lambda x: np.maximum(x, 1)),
]


@pytest.mark.parametrize("op_name, op, oracle", OUT_OPS, ids=[o[0] for o in OUT_OPS])
@pytest.mark.parametrize("dtype", ["float32", "int16", "float16"])
@pytest.mark.parametrize("name, n, out_of, x_of", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_elementwise_out_overlapping(name, n, out_of, x_of, dtype, op_name, op, oracle,
                                     to_device, to_host):
    host = _values(n, dtype, seed=3)
    buffer = to_device(host.copy())
    expected = host.copy()
    with config.backend("numpy"):  # the oracle's views of the NumPy twin, in every run
        out_of(expected)[...] = oracle(np.array(x_of(expected)))
    assert op(x_of(buffer), out_of(buffer)) is not None
    np.testing.assert_array_equal(to_host(buffer), expected)


def test_elementwise_out_over_the_bytes_of_an_input_of_another_dtype(to_device, to_host):
    host = _values(32, "float32", seed=4)
    host[::3] = 0
    buffer = to_device(host.copy())
    out = buffer.view(np.bool_)[::4]  # a bool per float, over each float's first byte
    expected = host.copy()
    expected.view(np.uint8)[::4] = host == 0
    xp.equal(buffer, 0, out=out)
    np.testing.assert_array_equal(to_host(buffer).view(np.uint8), expected.view(np.uint8))


def test_elementwise_out_interleaved_but_disjoint(to_device, to_host):
    buffer = to_device(np.zeros(16, np.float32))
    out = _strided(buffer, (2, 3), (12, 8))  # elements at 0, 8, 16 and 12, 20, 28 bytes
    xp.add(to_device(np.ones((2, 3), np.float32)), 1, out=out)
    np.testing.assert_array_equal(to_host(buffer)[[0, 2, 4, 3, 5, 7]], 2)


def test_rearrange_accepts_interleaved_but_disjoint_destinations(to_device, to_host):
    buffer = to_device(np.zeros(16, np.float32))
    y = _strided(buffer, (2, 3), (12, 8))
    xp.rearrange_(y, to_device(np.arange(6, dtype=np.float32).reshape(2, 3)))
    np.testing.assert_array_equal(to_host(buffer)[[0, 2, 4, 3, 5, 7]], np.arange(6))


# ---------------------------------------------------------------- random overlapping views
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=overlapping_views())
def test_random_overlapping_views(case, to_device, to_host):
    check_overlapping_views(case, to_device, to_host)
