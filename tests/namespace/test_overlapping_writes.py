"""Writes whose inputs share memory with their output, on every device: random views of one
buffer (shifted, reversed, transposed, strided, broadcast) as the output and the inputs of
each kind of write (``out=``, the in-place operators, ``x[key] = v`` with a basic key, a mask
or an index array, ``rearrange_``, ``fuse``'s ``out=``, ``clip``, a ``lazy()`` chain whose
input is written before it is read). NumPy on snapshots of the inputs is the oracle (the
answer as if the inputs were copied first); an output that overlaps itself is refused with
the buffer left as it was.
"""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import arrays

BUFFER = 96  # float64 elements of the buffer every view is carved from
CASES = 300
WRITES = ("out", "operator", "setitem", "mask", "indices", "rearrange_", "fuse", "clip", "lazy")
# writes whose output may be drawn overlapping itself (each refuses it)
CHECKED_FOR_SELF_OVERLAP = ("out", "operator", "setitem", "rearrange_", "fuse")


def _distinct(shape, strides) -> bool:
    offsets = np.zeros(1, np.int64)
    for n, s in zip(shape, strides):
        offsets = (offsets[:, None] + np.arange(n) * s).ravel()
    return len(np.unique(offsets)) == offsets.size


def _layout(rng, shape, distinct=True):
    """(first element, strides), in elements, of a view of ``shape`` inside the buffer."""
    while True:
        strides = tuple(int(rng.integers(-4, 5)) for _ in shape)
        if rng.random() < 0.3 and shape:  # a C-contiguous array, its dims permuted
            step, strides = 1, [0] * len(shape)
            for d in rng.permutation(len(shape))[::-1]:
                strides[d], step = step, step * shape[d]
            strides = tuple(strides)
        if _distinct(shape, strides) != distinct:
            continue
        lo = -sum(s * (n - 1) for n, s in zip(shape, strides) if s < 0)
        hi = BUFFER - 1 - sum(s * (n - 1) for n, s in zip(shape, strides) if s > 0)
        if lo <= hi:
            return int(rng.integers(lo, hi + 1)), strides


def _carve(buffer, layout, shape):
    first, strides = layout
    return arrays.as_strided(buffer[first:], shape, tuple(s * 8 for s in strides))


def _shape(rng, ndim):
    return tuple(int(rng.integers(1, 5)) for _ in range(ndim))


def _case(rng, write):
    """The views of one case: ``(name, layout, shape)`` of the output and the inputs."""
    shape = _shape(rng, int(rng.integers(1, 4)))
    self_overlapping = (write in CHECKED_FOR_SELF_OVERLAP and np.prod(shape) > 1
                        and rng.random() < 0.1)
    views = {"o": (_layout(rng, shape, distinct=not self_overlapping), shape)}
    full = shape if write not in ("mask", "indices") else None
    if write == "mask":
        full = (int(rng.integers(0, np.prod(shape) + 1)),)
    elif write == "indices":
        full = (int(rng.integers(1, shape[0] + 1)),) + shape[1:]
    views["a"] = (_layout(rng, full), full)
    broadcast = tuple(1 if rng.random() < 0.3 else n for n in shape[int(rng.integers(0, 2)):])
    views["b"] = (_layout(rng, broadcast), broadcast)
    return views, self_overlapping


def _write(write, module, o, a, b, key):
    """``write`` with output ``o`` and inputs ``a``, ``b`` in ``module`` (NumPy or ours)."""
    if write == "out":
        module.subtract(a, b, out=o)
    elif write == "operator":
        o *= b
    elif write == "setitem":
        o[...] = b
    elif write in ("mask", "indices"):
        o[key] = a
    elif write == "rearrange_":
        if module is np:
            o[...] = a
        else:
            xp.rearrange_(o, a)
    elif write == "fuse":
        if module is np:
            np.add(a * 2, b, out=o)
        else:
            xp.fuse(lambda p, q: p * 2 + q)(a, b, out=o)
    elif write == "clip":
        module.clip(a, -3.0, 5.0, out=o)
    else:  # lazy: the sum read after o (which a or b may share memory with) is written
        if module is np:
            total = a + b
            o[...] = 3.0
            return total
        with xp.lazy():
            total = a + b
            o[...] = 3.0
        return total
    return None


@pytest.mark.parametrize("device", ["cpu", "suite"])
@pytest.mark.parametrize("write", WRITES)
def test_a_write_from_views_of_its_output_reads_the_inputs_as_they_were(
        to_device, to_host, device, write):
    """``device``: ``cpu``, or the suite's (the emulator, or the GPU)."""
    rng = np.random.default_rng(sum(map(ord, write)))
    for case in range(CASES):
        views, self_overlapping = _case(rng, write)
        start = rng.integers(-20, 20, BUFFER).astype(np.float64)
        buffer = start.copy() if device == "cpu" else to_device(start)
        expected = start.copy()
        ours = {name: _carve(buffer, *view) for name, view in views.items()}
        ours = {name: xp.asarray(v, device="cpu", copy=False) if device == "cpu"
                else xp.asarray(v) for name, v in ours.items()}
        theirs = {name: _carve(expected, *view) for name, view in views.items()}
        key = None
        if write == "mask":
            key = np.zeros(views["o"][1], bool).ravel()
            key[rng.permutation(key.size)[:views["a"][1][0]]] = True
            key = key.reshape(views["o"][1])
        elif write == "indices":
            key = rng.permutation(views["o"][1][0])[:views["a"][1][0]]
        what = f"case {case}: {write}, views {views}"
        if self_overlapping:
            with pytest.raises(ValueError, match="overlaps itself"):
                _write(write, xp, ours["o"], ours["a"], ours["b"], key)
            np.testing.assert_array_equal(to_host(buffer), start, err_msg=what)
            continue
        snapshots = {name: np.array(theirs[name]) for name in ("a", "b")}
        total = _write(write, np, theirs["o"], snapshots["a"], snapshots["b"], key)
        if key is not None:
            key = xp.asarray(key, device=ours["o"].device)
        our_total = _write(write, xp, ours["o"], ours["a"], ours["b"], key)
        np.testing.assert_array_equal(to_host(buffer), expected, err_msg=what)
        if total is not None:
            np.testing.assert_array_equal(to_host(our_total), total, err_msg=what)
