"""``rearrange_`` / ``rearrange`` against NumPy on random layouts, exact equality.

Runs in emulation by default; ``pytest --backend cuda`` runs the same tests on a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infini_cupy import arrays, config
from infini_cupy.strided import plan_cache as rearrange_module
from infini_cupy.strided.copy import rearrange_, rearrange_copy
from tests.support import dtype_cases

DTYPES = dtype_cases.EACH_SIZE


def random_values(rng, shape, dtype):
    """Random bits of ``dtype`` (NaN-free floats so array_equal is exact)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(-128, 128, size=shape).astype(dtype)
    values = rng.standard_normal(size=shape) * 100
    if dtype.kind == "c":
        values = values + 1j * rng.standard_normal(size=shape)
    return values.astype(dtype)


@st.composite
def layouts(draw):
    """A source view (permuted, sliced, reversed, broadcast, offset) and a destination view
    (permuted, sliced, reversed) of the same shape, carved from larger buffers."""
    ndim = draw(st.integers(0, 8))
    max_len = {0: 1, 1: 64, 2: 24, 3: 10, 4: 6}.get(ndim, 4)
    shape = tuple(draw(st.lists(st.integers(0, max_len), min_size=ndim, max_size=ndim)))
    if ndim and draw(st.booleans()):  # mostly non-empty
        shape = tuple(max(n, 1) for n in shape)
    dtype = draw(st.sampled_from(DTYPES))

    def view_spec(allow_broadcast):
        steps = tuple(draw(st.sampled_from((1, 1, 2, -1, -2))) for _ in range(ndim))
        perm = tuple(draw(st.permutations(range(ndim))))
        broadcast = tuple(
            allow_broadcast and draw(st.integers(0, 4)) == 0 for _ in range(ndim)
        )
        offset = draw(st.integers(0, 3))
        return steps, perm, broadcast, offset

    return shape, dtype, view_spec(True), view_spec(False), draw(st.integers(0, 2**32 - 1))


def buffer_size(shape, spec) -> int:
    steps, perm, broadcast, offset = spec
    size = 1
    for d in range(len(shape)):
        n = 1 if broadcast[d] else shape[d]
        size *= n * abs(steps[d]) + 1
    return size + offset


def carve(flat, shape, spec):
    """A view of ``shape`` into ``flat`` with the layout ``spec`` (steps, permutation,
    broadcast dims, offset); indexing only, so a host buffer and its device copy give the
    same view."""
    steps, perm, broadcast, offset = spec
    ndim = len(shape)
    lengths = [1 if broadcast[d] else shape[d] for d in range(ndim)]
    buffer_shape = [lengths[d] * abs(steps[d]) + 1 for d in perm]  # buffer dim i is view dim perm[i]
    base = flat[offset:offset + int(np.prod(buffer_shape))].reshape(buffer_shape)
    if not ndim:
        return base  # indexing a 0-d array with () would give a scalar
    view = base[tuple(slice(None, None, steps[d]) for d in perm)]
    view = view[tuple(slice(0, lengths[d]) for d in perm)]
    view = view.transpose(tuple(int(d) for d in np.argsort(perm)))
    if not any(broadcast):
        return view
    return arrays.as_strided(view, shape, [0 if b else st for b, st in zip(broadcast, view.strides)])


def random_view(rng, shape, dtype, spec):
    flat = random_values(rng, (buffer_size(shape, spec),), dtype)
    return carve(flat, shape, spec), flat


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=layouts())
def test_rearrange_into_any_layout_matches_numpy(case, to_device, to_host):
    shape, dtype, src_spec, dst_spec, seed = case
    rng = np.random.default_rng(seed)
    x_host, x_buffer = random_view(rng, shape, dtype, src_spec)
    _, y_buffer = random_view(rng, shape, dtype, dst_spec)
    expected = y_buffer.copy()  # y's elements from x, every other element untouched
    carve(expected, shape, dst_spec)[...] = x_host
    y_device = to_device(y_buffer)
    y = carve(y_device, shape, dst_spec)
    result = rearrange_(y, carve(to_device(x_buffer), shape, src_spec))
    assert result is y
    np.testing.assert_array_equal(to_host(y_device), expected)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=layouts())
def test_rearrange_copy_is_c_contiguous(case, to_device, to_host):
    shape, dtype, src_spec, _, seed = case
    x_host, x_buffer = random_view(np.random.default_rng(seed), shape, dtype, src_spec)
    x = carve(to_device(x_buffer), shape, src_spec)
    y = rearrange_copy(x)
    assert y.flags.c_contiguous and y.shape == x.shape and y.dtype == x.dtype
    np.testing.assert_array_equal(to_host(y), x_host)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (1,), (1, 1, 1)])
def test_zero_size_and_zero_dim(shape, to_device, to_host):
    x = to_device(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape))
    y = rearrange_copy(x)
    np.testing.assert_array_equal(to_host(y), to_host(x))


def test_transpose_and_nchw_to_nhwc_are_exact(to_device, to_host):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((67, 45)).astype(np.float32)
    np.testing.assert_array_equal(to_host(rearrange_copy(to_device(a).T)), a.T)
    b = rng.standard_normal((2, 8, 6, 5)).astype(np.float16)
    y = np.empty((2, 6, 5, 8), np.float16)
    y = to_device(y)
    rearrange_(y.transpose(0, 3, 1, 2), to_device(b))
    np.testing.assert_array_equal(to_host(y), b.transpose(0, 2, 3, 1))


# --- overlap: the answer of copying from a snapshot -------------------------------------


def test_overlap_identical(to_device, to_host):
    a = to_device(np.arange(12, dtype=np.int32).reshape(3, 4))
    expected = to_host(a).copy()
    rearrange_(a, a)
    np.testing.assert_array_equal(to_host(a), expected)


@pytest.mark.parametrize("shift", [1, -1, 3])
def test_overlap_shifted_by_elements(shift, to_device, to_host):
    buf = to_device(np.arange(40, dtype=np.float64))
    x = buf[5:25]
    y = buf[5 + shift : 25 + shift]
    expected = to_host(x).copy()
    rearrange_(y, x)
    np.testing.assert_array_equal(to_host(y), expected)


def test_overlap_transposed_view_of_itself(to_device, to_host):
    a = to_device(np.random.default_rng(2).standard_normal((33, 33)).astype(np.float32))
    expected = to_host(a).T.copy()
    rearrange_(a, a.T)  # in-place transpose
    np.testing.assert_array_equal(to_host(a), expected)


# --- errors name what disagrees, and write nothing ---------------------------------------


def test_shape_mismatch_names_the_shapes(to_device):
    y, x = to_device(np.zeros((2, 3))), to_device(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(3, 2\)"):
        rearrange_(y, x)


def test_dtype_mismatch_names_the_dtypes(to_device, to_host):
    y, x = to_device(np.zeros(4, np.float32)), to_device(np.ones(4, np.float64))
    with pytest.raises(TypeError, match="float32.*float64"):
        rearrange_(y, x)
    assert not to_host(y).any()


def test_self_overlapping_destination_is_rejected(to_device, to_host):
    buf = to_device(np.zeros(4, np.float32))
    y = arrays.as_strided(buf, (3, 4), (0, 4))  # writeable, rows alias
    with pytest.raises(ValueError, match="overlap"):
        rearrange_(y, to_device(np.ones((3, 4), np.float32)))
    assert not to_host(buf).any()


def test_non_arrays_and_object_dtypes_are_type_errors(to_device):
    with pytest.raises(TypeError, match="list"):
        rearrange_([1, 2], to_device(np.zeros(2)))
    # object arrays exist on the host only: the emulate backend takes NumPy arrays in every run
    with config.backend("emulate"), pytest.raises(TypeError, match="object"):
        rearrange_(np.empty(2, object), np.empty(2, object))


def test_read_only_destination():
    y = np.zeros(3)
    y.flags.writeable = False
    # the read-only flag is NumPy's (CuPy arrays are always writeable): a host check in every run
    with config.backend("emulate"), pytest.raises(ValueError, match="read-only"):
        rearrange_(y, np.ones(3))


def test_plan_cache_hit_does_no_planning(monkeypatch, to_device, to_host):
    h = np.random.default_rng(3).standard_normal((9, 7)).astype(np.float32)
    x, y = to_device(h), to_device(np.empty((7, 9), np.float32))
    rearrange_(y, x.T)
    calls = []
    monkeypatch.setattr(rearrange_module, "plan_rearrange", lambda *a, **k: calls.append(a))
    rearrange_(y, x.T)
    assert calls == []
    np.testing.assert_array_equal(to_host(y), h.T)


@pytest.mark.gpu
def test_rearrange_on_gpu_matches_numpy():
    import cupy

    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 65, 129)).astype(np.float32)
    d = cupy.asarray(a)
    np.testing.assert_array_equal(rearrange_copy(d.transpose(2, 0, 1)[::-1]).get(),
                                  a.transpose(2, 0, 1)[::-1])
