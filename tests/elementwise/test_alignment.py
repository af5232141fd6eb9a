"""Elementwise functions and casts on arrays that NumPy takes but that are not aligned to the
kernels' C++ type: a kernel dereferences each operand as that type (``complex<double>`` is
16-byte aligned, ``float`` 4, ``int16_t`` 2; :func:`infini_cupy.dtypes.alignment`), so an
operand whose address or a stride is off that alignment is copied bytewise into an aligned
temporary first, and a misaligned ``out=`` is computed aligned, then copied into. Before,
these were a ``KernelFault`` in emulation and a dead CUDA context on a GPU.

Views are carved at byte offsets from host buffers and their device copies alike
(``tests/support/device.py``); NumPy computes on the host twins.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import infini_cupy as xp
from infini_cupy import dtypes
from infini_cupy.elementwise import short_path
from infini_cupy.namespace import elementwise_functions as F
from infini_cupy.runtime import recent
from tests.support import device, dtype_cases
from tests.support.elementwise_cases import prepare
from tests.support.view_cases import values

SHORT = settings(max_examples=40, deadline=None,
                 suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# max_examples from the profile in force ("long" when the slow tests are selected)
LONG = settings(deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _compiled(backend_name):
    prepare(backend_name, "exp", "negative", "add", "subtract", "equal", "logical_not", "cast")


def twins(to_device, to_host, dtype, shape, strides, offset, data):
    """(host view, device view, read back) of ``data`` laid out at byte ``offset`` with byte
    ``strides``. ``read back()`` is the device view's values, read through its buffer's bytes:
    CuPy's own copy kernels (``.get()`` of a strided view) would fault on misaligned elements."""
    dtype = np.dtype(dtype)
    first, span = device.view_extent(shape, strides, dtype.itemsize)
    host_buffer = device.aligned_bytes(offset + first + span + 16, seed=1)
    host = device.byte_view(host_buffer, offset + first, dtype, shape, strides)
    host[...] = data
    device_buffer = to_device(host_buffer)

    def read_back():
        return np.array(device.byte_view(to_host(device_buffer), offset + first, dtype, shape,
                                         strides))

    return host, device.byte_view(device_buffer, offset + first, dtype, shape, strides), read_back


def c_strides(shape, itemsize):
    return tuple(itemsize * int(np.prod(shape[d + 1:])) for d in range(len(shape)))


def test_the_kernels_types_are_aligned_to_their_size():
    for dtype in dtypes.ALL_DTYPES:
        assert dtypes.alignment(dtype) == dtype.itemsize
    assert np.dtype(np.complex128).alignment == 8  # NumPy asks less: the case below


def test_exp_of_complex128_eight_bytes_into_a_float64_array(to_device, to_host):
    h = device.aligned_bytes(21 * 8)
    h.view(np.float64)[...] = np.arange(21.0)
    z_host = h.view(np.float64)[1:].view(np.complex128)  # NumPy: aligned (to 8)
    z = to_device(h).view(np.float64)[1:].view(np.complex128)
    assert z_host.flags.aligned
    np.testing.assert_allclose(to_host(xp.exp(z)), np.exp(z_host), rtol=1e-12)
    np.testing.assert_array_equal(to_host(xp.negative(z)), -z_host)


@pytest.mark.parametrize("offset", [1, 2, 3, 5, 6, 7])
@pytest.mark.parametrize("shape", [(37,), (4, 9), (3, 5, 7)])
def test_float32_views_at_odd_offsets(offset, shape, to_device, to_host):
    data = values(shape, np.float32, seed=offset, low=-20, high=20)  # exp stays finite
    host, x, _ = twins(to_device, to_host, np.float32, shape, c_strides(shape, 4), offset, data)
    np.testing.assert_allclose(to_host(xp.exp(x)), np.exp(host), rtol=2e-6)
    np.testing.assert_array_equal(to_host(xp.add(x, x)), host + host)
    np.testing.assert_array_equal(to_host(xp.add(x, 1.5)), host + np.float32(1.5))
    np.testing.assert_array_equal(to_host(xp.astype(x, np.float64)), host.astype(np.float64))
    np.testing.assert_array_equal(to_host(xp.astype(x, np.int8)), host.astype(np.int8))
    np.testing.assert_array_equal(to_host(xp.astype(x, np.float32)), host)
    other, y, _ = twins(to_device, to_host, np.int16, shape, c_strides(shape, 2), offset,
                        values(shape, np.int16, seed=9))
    np.testing.assert_array_equal(to_host(xp.add(x, y)), host + other)  # a cast input too


@pytest.mark.parametrize("offset", [0, 1])
@pytest.mark.parametrize("shape, strides", [((20, 3), (9, 3)), ((20, 10), (90, 9)),
                                            ((7, 5), (-30, 3))])
def test_int16_with_odd_strides(shape, strides, offset, to_device, to_host):
    """Strides of 9 and 3 bytes: every other int16 element starts at an odd address."""
    data = values(shape, np.int16, seed=3)
    _, x, _ = twins(to_device, to_host, np.int16, shape, strides, offset, data)
    np.testing.assert_array_equal(to_host(xp.negative(x)), -data)
    np.testing.assert_array_equal(to_host(xp.add(x, x.T.T)), data + data)
    np.testing.assert_array_equal(to_host(xp.astype(x, np.float32)), data.astype(np.float32))
    _, out, read_out = twins(to_device, to_host, np.int16, shape, strides, offset + 1, 0)
    assert xp.subtract(x, 1, out=out) is out
    np.testing.assert_array_equal(read_out(), data - 1)


@pytest.mark.parametrize("dtype", ["float32", "complex128", "int16", "float16", "float64"])
@pytest.mark.parametrize("offset", [1, 2, 8])
def test_misaligned_out(dtype, offset, to_device, to_host):
    dtype = np.dtype(dtype)
    shape = (6, 7)
    strides = c_strides(shape, dtype.itemsize)
    data = values(shape, dtype, seed=5)
    x = to_device(data)
    _, out, read_out = twins(to_device, to_host, dtype, shape, strides, offset, 0)
    assert xp.negative(x, out=out) is out
    np.testing.assert_array_equal(read_out(), -data)
    # transposed and misaligned: staged, then copied back
    _, out_t, read_out_t = twins(to_device, to_host, dtype, shape[::-1],
                                 c_strides(shape[::-1], dtype.itemsize), offset, 0)
    assert xp.add(x, x, out=out_t.T) is not None
    np.testing.assert_array_equal(read_out_t().T, data + data)
    # out= the misaligned input itself, and an input cast into a misaligned out=
    _, x_mis, read_x = twins(to_device, to_host, dtype, shape, strides, offset, data)
    assert xp.negative(x_mis, out=x_mis) is x_mis
    np.testing.assert_array_equal(read_x(), -data)
    small = values(shape, np.int8, seed=7)
    assert xp.add(to_device(small), x, out=out) is out
    np.testing.assert_array_equal(read_out(), small.astype(dtype) + data)


def test_the_short_path_checks_each_pointer(to_device, to_host):
    """One signature, remembered on aligned arrays; a later call with the same shape and
    strides at an odd address takes the full path (which copies it aligned)."""
    recent.forget_all()
    shape = (64,)
    data = values(shape, np.float32, seed=6)
    for offset in (0, 0, 2, 1, 0, 3):
        _, x, _ = twins(to_device, to_host, np.float32, shape, (4,), offset, data)
        np.testing.assert_array_equal(to_host(F.add(x, x)), data + data)
        np.testing.assert_array_equal(to_host(F.negative(x)), -data)
    assert short_path._known


def test_fused_repeats_into_an_array_check_each_pointer(to_device, to_host):
    """A fused call into an Array, remembered on aligned Arrays (fused_out.into_record); a
    repeat with an input of the same layout at an odd address goes the full way (which runs
    it unfused, copied aligned), NumPy's answer."""
    recent.forget_all()
    shape = (64,)
    data = values(shape, np.float32, seed=8)
    fused = xp.fuse(lambda a, b: a * b + a)
    out = xp.asarray(to_device(np.zeros(shape, np.float32)))
    for offset in (0, 0, 0, 2, 1, 0, 3):
        _, x, _ = twins(to_device, to_host, np.float32, shape, (4,), offset, data)
        x = xp.asarray(x)
        assert fused(x, x, out=out) is out
        np.testing.assert_allclose(to_host(out), data * data + data, rtol=1e-6)


# ---------------------------------------------------------------- the property
def check_elementwise_at_byte_offsets(case, to_device, to_host):
    """add, negative (or logical_not), equal and a cast of views at byte offsets, into new
    arrays and into an ``out=`` at a byte offset: NumPy's values, exactly (small integers)."""
    dtype, shape, (x_layout, y_layout, out_layout), seed = case
    _, x_host, _, x = device.twin_views(to_device, dtype, shape, x_layout, values(shape, dtype, seed))
    _, y_host, _, y = device.twin_views(to_device, dtype, shape, y_layout,
                                        values(shape, dtype, seed + 1))
    x_np, y_np = np.array(x_host), np.array(y_host)
    np.testing.assert_array_equal(to_host(xp.equal(x, y)), x_np == y_np)
    other = np.dtype("float64" if dtype.kind != "c" else "complex64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        np.testing.assert_array_equal(to_host(xp.astype(x, other)), x_np.astype(other))
    if dtype.kind == "b":
        op, oracle = xp.logical_not, np.logical_not
        result = oracle(x_np)
    else:
        op, oracle = xp.negative, np.negative
        result = oracle(x_np)
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(to_host(xp.add(x, y)), x_np + y_np)
    np.testing.assert_array_equal(to_host(op(x)), result)
    out_buffer_host, _, out_buffer, out = device.twin_views(to_device, dtype, shape, out_layout,
                                                            values(shape, dtype, seed + 2))
    expected = out_buffer_host.copy()
    device.byte_view(expected, out_layout[0], dtype, shape, out_layout[1])[...] = result
    assert op(x, out=out) is out
    np.testing.assert_array_equal(to_host(out_buffer), expected)  # nothing else written


@SHORT
@given(case=device.byte_offset_case(dtype_cases.ALL))
def test_elementwise_at_byte_offsets_short(case, to_device, to_host):
    check_elementwise_at_byte_offsets(case, to_device, to_host)


@pytest.mark.slow
@LONG
@given(case=device.byte_offset_case(dtype_cases.ALL, max_len=40))
def test_elementwise_at_byte_offsets_long(case, to_device, to_host):
    check_elementwise_at_byte_offsets(case, to_device, to_host)
