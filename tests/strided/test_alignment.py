"""Strided copies of arrays at any byte offset, with strides off their itemsize: no access
wider than the addresses allow (a misaligned access is a ``KernelFault`` in emulation and a
dead CUDA context on a GPU), and NumPy's bytes.

The staged copy used to choose its vector width from element 0 of each side only; its tiles
along the walked dim start ``t * tile - shift`` elements in, with the shift following the
destination's sectors, so from the second tile on the source's 4-byte vectors could start 1
or 2 bytes off (``xp.concat([h[:1], h[:20000]])`` for float16 ``h``). The planner tests check
every tile start of both sides in the simulation of the kernel; the kernel tests run the
copies on the suite's backend, the hypothesis property over layouts at random byte offsets.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import infini_cupy as xp
from infini_cupy.strided.tile_planner import TilePlan
from tests.strided.test_planner import check_copies_exactly
from tests.support import device, dtype_cases
from tests.support.view_cases import values

SHORT = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# max_examples from the profile in force ("long" when the slow tests are selected)
LONG = settings(deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.insert(0, step)
        step *= n
    return tuple(strides)


# ---------------------------------------------------------------- the planner
def f_strides(shape, itemsize):
    return tuple(itemsize * int(np.prod(shape[:d])) for d in range(len(shape)))


@pytest.mark.parametrize("itemsize, length", [(1, 20000), (2, 20000), (1, 17001), (2, 9001)])
@pytest.mark.parametrize("dst_address", [1, 2, 3, 6, 14, 31])
def test_staged_rows_keep_both_sides_vectors_on_every_tile(itemsize, length, dst_address):
    """A row longer than a tile whose destination starts off its sector (the second piece of
    a concat): the tiles follow dst's sectors, and src's vectors must still start aligned on
    every tile (the simulation of the kernel asserts every access aligned to its width)."""
    staged = []
    for src_address in (0, 1, 2, 4, 6):
        plan = check_copies_exactly((length,), (itemsize,), (itemsize,), itemsize,
                                    dst_address=dst_address, src_address=src_address)
        if isinstance(plan, TilePlan) and plan.tiles1 > 1 and plan.shift1:
            staged.append(plan)
    assert staged  # the layouts reach shifted tiles


@pytest.mark.parametrize("shape, itemsize", [((128, 127), 4), ((257, 200), 8), ((8, 64, 257), 2)])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("dst_address", [1, 2, 3, 6, 14])
def test_concat_pieces_at_byte_offsets(shape, itemsize, order, dst_address):
    """``concat([a[:1], a])``'s second copy, into an output carved at a byte offset."""
    src = c_strides(shape, itemsize) if order == "C" else f_strides(shape, itemsize)
    check_copies_exactly(shape, c_strides(shape, itemsize), src, itemsize,
                         dst_address=dst_address, src_address=0)


# ---------------------------------------------------------------- the kernels
def _issue_array(to_device, dtype, shape, order="C", seed=0):
    host = np.asarray(values(shape, dtype, seed), order=order)
    return host, to_device(host)


@pytest.mark.parametrize("dtype, head", [("float16", 1), ("uint8", 1), ("uint8", 3)])
def test_concat_of_a_short_head_and_a_long_tail(dtype, head, to_device, to_host):
    host, h = _issue_array(to_device, dtype, (20000,))
    got = xp.concat([h[:head], h[:20000]])
    np.testing.assert_array_equal(to_host(got), np.concatenate([host[:head], host]))


@pytest.mark.parametrize("dtype, shape", [("float32", (128, 127)), ("float64", (257, 200)),
                                          ("int16", (8, 64, 257))])
@pytest.mark.parametrize("order", ["F", "C"])
def test_concat_of_fortran_and_c_arrays(dtype, shape, order, to_device, to_host):
    host, a = _issue_array(to_device, dtype, shape, order)
    for axis in range(len(shape)):
        head = (slice(None),) * axis + (slice(0, 1),)
        got = xp.concat([a[head], a], axis=axis)
        np.testing.assert_array_equal(to_host(got), np.concatenate([host[head], host], axis=axis))


@pytest.mark.parametrize("dtype, shape, order", [
    ("float16", (20000,), "C"), ("uint8", (20000,), "C"), ("float32", (128, 127), "F"),
    ("float64", (257, 200), "F"), ("int16", (8, 64, 257), "F"),
])
@pytest.mark.parametrize("side", ["dst", "src"])
def test_copies_at_every_byte_offset(dtype, shape, order, side, to_device, to_host):
    """The copies above with one side (C order) carved at each byte offset 0..15 past a
    256-byte boundary, the other (``order``) aligned: a concat into such an output, or of
    such an input."""
    dtype = np.dtype(dtype)
    itemsize = dtype.itemsize
    other = c_strides(shape, itemsize) if order == "C" else f_strides(shape, itemsize)
    nbytes = int(np.prod(shape)) * itemsize
    source = values(shape, dtype, seed=1)
    for offset in range(16):

        def views(carved, plain, offset=offset):  # (y, x)
            c = device.byte_view(carved, offset, dtype, shape, c_strides(shape, itemsize))
            o = device.byte_view(plain, 0, dtype, shape, other)
            return (c, o) if side == "dst" else (o, c)

        carved, plain = device.aligned_bytes(nbytes + 16, seed=offset), device.aligned_bytes(nbytes, seed=99)
        views(carved, plain)[1][...] = source
        expected_carved, expected_plain = carved.copy(), plain.copy()
        y_expected, _ = views(expected_carved, expected_plain)
        y_expected[...] = source
        carved_dev, plain_dev = to_device(carved), to_device(plain)
        y, x = views(carved_dev, plain_dev)
        assert xp.rearrange_(y, x) is y
        np.testing.assert_array_equal(to_host(carved_dev), expected_carved, err_msg=f"byte {offset}")
        np.testing.assert_array_equal(to_host(plain_dev), expected_plain, err_msg=f"byte {offset}")


# ---------------------------------------------------------------- the property
def check_copies_at_byte_offsets(case, to_device, to_host):
    """rearrange_ between two layouts at byte offsets, rearrange and astype of one, and a
    concat of a head of it with it: NumPy's bytes, nothing outside the destination written."""
    dtype, shape, (x_layout, y_layout, _), seed = case
    data = values(shape, dtype, seed)
    _, x_host, _, x = device.twin_views(to_device, dtype, shape, x_layout, data)
    y_buffer_host, _, y_buffer, y = device.twin_views(to_device, dtype, shape, y_layout,
                                                      values(shape, dtype, seed + 1))
    expected = y_buffer_host.copy()
    device.byte_view(expected, y_layout[0], dtype, shape, y_layout[1])[...] = x_host
    assert xp.rearrange_(y, x) is y
    np.testing.assert_array_equal(to_host(y_buffer), expected)
    np.testing.assert_array_equal(to_host(xp.rearrange(x)), data)
    np.testing.assert_array_equal(to_host(xp.astype(x, dtype)), data)
    if shape:
        got = xp.concat([x[:1], x, x[::-1]])
        np.testing.assert_array_equal(to_host(got), np.concatenate([data[:1], data, data[::-1]]))


@SHORT
@given(case=device.byte_offset_case(dtype_cases.ALL))
def test_copies_at_byte_offsets_short(case, to_device, to_host):
    check_copies_at_byte_offsets(case, to_device, to_host)


@pytest.mark.slow
@LONG
@given(case=device.byte_offset_case(dtype_cases.ALL, max_len=40))
def test_copies_at_byte_offsets_long(case, to_device, to_host):
    check_copies_at_byte_offsets(case, to_device, to_host)
