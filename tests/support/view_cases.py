"""Shared by the overlap and long property tests: views carved from one flat buffer (steps,
permutation, offset, broadcast dims), hypothesis strategies drawing them, exact values, and
the snapshot-copy oracle comparing whole buffers.

A view is carved with indexing only, so the same function carves a NumPy buffer (the
oracle's) and a CuPy one (``--backend cuda``) identically.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import infini_cupy as xp
from infini_cupy import arrays, config
from tests.support import dtype_cases

DTYPES = dtype_cases.ALL


def values(shape, dtype, seed=0, low=-99, high=99):
    """Random small integers of ``dtype`` (exact in every dtype; non-negative when unsigned)."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    low = max(low, 0) if dtype.kind == "u" else low
    if dtype.kind == "c":
        return (rng.integers(low, high, shape) + 1j * rng.integers(low, high, shape)).astype(dtype)
    return np.asarray(rng.integers(low, high, shape)).astype(dtype)


def carve(buffer, shape, spec):
    """A view of ``shape`` into the 1-d ``buffer``: dims laid out in ``perm`` order with
    ``steps`` (negative: reversed), starting ``offset`` elements in; ``broadcast`` dims have
    stride 0."""
    steps, perm, broadcast, offset = spec
    if not shape:
        return buffer[offset:offset + 1].reshape(())
    lengths = [1 if broadcast[d] else shape[d] for d in range(len(shape))]
    base_shape = [lengths[d] * abs(steps[d]) for d in perm]
    base = buffer[offset:offset + int(np.prod(base_shape))].reshape(base_shape)
    view = base[tuple(slice(None, None, steps[d]) for d in perm)]
    view = view[tuple(slice(0, lengths[d]) for d in perm)].transpose(tuple(np.argsort(perm)))
    if not any(broadcast):
        return view
    # stride 0 in the view's own library: the same view of a host twin under any backend
    return arrays.as_strided(view, shape, [0 if b else st for b, st in zip(broadcast, view.strides)])


def buffer_length(shape, *specs) -> int:
    """Elements a buffer needs for every view of ``shape`` carved with ``specs``."""
    def needed(spec):
        steps, _, broadcast, offset = spec
        lengths = [1 if broadcast[d] else shape[d] for d in range(len(shape))]
        return offset + max(1, int(np.prod([n * abs(s) for n, s in zip(lengths, steps)])))

    return max(needed(spec) for spec in specs)


def view_spec(draw, ndim: int, broadcast_ok: bool, max_offset: int = 12):
    steps = tuple(draw(st.sampled_from((1, 1, 2, -1, -2, 3))) for _ in range(ndim))
    perm = tuple(draw(st.permutations(range(ndim))))
    broadcast = tuple(broadcast_ok and draw(st.integers(0, 5)) == 0 for _ in range(ndim))
    return steps, perm, broadcast, draw(st.integers(0, max_offset))


def shapes(max_ndim=4, max_len=6, min_len=1):
    return st.integers(0, max_ndim).flatmap(
        lambda ndim: st.tuples(*[st.integers(min_len, max_len)] * ndim))


@st.composite
def overlapping_views(draw, dtypes=DTYPES, max_ndim=4):
    """(shape, destination spec, source spec, dtype): two views of one buffer, which overlap
    in most draws; the source may broadcast."""
    shape = draw(shapes(max_ndim))
    return (shape, view_spec(draw, len(shape), False), view_spec(draw, len(shape), True),
            draw(st.sampled_from(dtypes)))


def check_snapshot_copy(to_device, to_host, n, y_of, x_of, dtype, call, seed=0):
    """``call(y_of(buffer), x_of(buffer))`` on the device gives, over the whole buffer, what
    NumPy gives copying from a snapshot: ``y[...] = x.copy()``."""
    host = values(n, dtype, seed)
    buffer = to_device(host.copy())
    expected = host.copy()
    with config.backend("numpy"):  # the oracle's views of NumPy arrays, in every run
        y_of(expected)[...] = np.array(x_of(expected))
    call(y_of(buffer), x_of(buffer))
    np.testing.assert_array_equal(to_host(buffer), expected)


def check_overlapping_views(case, to_device, to_host):
    shape, y_spec, x_spec, dtype = case
    check_snapshot_copy(to_device, to_host, buffer_length(shape, y_spec, x_spec),
                        lambda b: carve(b, shape, y_spec), lambda b: carve(b, shape, x_spec),
                        dtype, xp.rearrange_)
