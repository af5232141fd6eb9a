"""One pass over a transposed operand (``ew_tiled`` and ``ew_tiled_out``,
infini_cupy/elementwise/tiled_plan.py): every function and dtype through the tile against
NumPy, an input or the output laid across the walk, the layouts it takes (partial
tiles, a batch dim, broadcast batches, reversed and strided views, offsets, ``out=`` in place
and overlapping the tiled input), and its shared-memory accesses free of bank conflicts for
every element size. Layouts it leaves to a staged copy: tests/elementwise/test_paths.py."""

from __future__ import annotations

import numpy as np
import pytest

from infini_cupy import arrays, config
from infini_cupy.elementwise.ops import OPS
from infini_cupy.elementwise.resolution import loop_dtypes
from infini_cupy.namespace import elementwise_functions as F
from infini_cupy.readers import coalescing
from infini_cupy.tools.cases import aligned_alloc
from tests.support.elementwise_cases import (
    assert_matches,
    kernels_launched,
    oracle,
    prepare,
    python_scalar,
    random_array,
)

OP_DTYPES = [(name, str(dt)) for name, op in OPS.items() for dt in loop_dtypes(op.name)]


def _layouts(op_name, dtype, rng):
    """(description, args, out) whose one operand laid across the walk goes through the tile
    (``out``: True for a transposed ``out=``): partial tiles on both dims, a transposed input
    in each position, a scalar beside it, every input transposed, a transposed output."""
    gen = lambda shape, pos=0: random_array(op_name, dtype, shape, rng, pos)  # noqa: E731
    arity = OPS[op_name].arity
    if arity == 1:
        yield "transposed", (gen((45, 37)).T,), False
        yield "out transposed", (gen((37, 45)),), True
    elif arity == 2:
        yield "second transposed", (gen((37, 45), 0), gen((45, 37), 1).T), False
        yield "first transposed", (gen((45, 37), 0).T, gen((37, 45), 1)), False
        yield "scalar and transposed", (python_scalar(op_name, dtype), gen((45, 37), 1).T), False
        yield "both transposed", (gen((45, 37), 0).T, gen((45, 37), 1).T), False
        yield "out transposed", (gen((37, 45), 0), gen((37, 45), 1)), True
    else:  # clip: x transposed, bounds a column and a row
        with np.errstate(invalid="ignore"):
            lo, hi = np.minimum(gen((37, 1)), gen((1, 45))), np.maximum(gen((45,)), gen((45,)))
        yield "x transposed", (gen((45, 37)).T, lo, hi), False
        yield "out transposed", (gen((37, 45)), lo, hi), True


@pytest.mark.parametrize("op_name,dtype", OP_DTYPES)
def test_every_function_through_the_tile(op_name, dtype, stage_small, backend_name, to_device,
                                         to_host, pytestconfig):
    if pytestconfig.getoption("--backend").startswith("cuda-standin"):
        # The launcher's path is one for every function (the layouts below take it through
        # the stand-in); what differs per function is the kernels' arithmetic, checked in
        # emulation and on a GPU. The stand-in's PTX checks of 662 cases cost CI minutes.
        pytest.skip("per-function arithmetic: the emulate and cuda runs check it")
    prepare(backend_name, op_name)
    rng = np.random.default_rng(abs(hash((op_name, dtype, "tiled"))) % 2**32)
    for what, args, transposed_out in _layouts(op_name, dtype, rng):
        expected = oracle(op_name, *args)
        device_args = [to_device(a) if isinstance(a, np.ndarray) else a for a in args]
        out = to_device(np.zeros(expected.shape[::-1], expected.dtype)).T if transposed_out else None
        actual, kernels = kernels_launched(lambda: getattr(F, op_name)(*device_args, out=out))
        # a transposed out= beside one input: whichever of the two the tile takes is one launch
        tiled = [["ew_tiled_out"]] if what == "both transposed" else \
            [["ew_tiled"], ["ew_tiled_out"]] if transposed_out else [["ew_tiled"]]
        assert kernels in tiled, (what, kernels)
        assert_matches(op_name, to_host(actual), expected, dtype, what)


def _random(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(-100, 100, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _aligned(a):
    """A copy of ``a`` on a 256-byte boundary, as CuPy allocates."""
    out = aligned_alloc(a.shape, a.dtype)
    out[...] = a
    return out


def _layout_cases():
    """(name, a, b): add(a, b) takes the tile for each."""
    yield "square", _random((64, 64), "float32", 0), _random((64, 64), "float32", 1).T
    yield "partial tiles", _random((33, 95), "float32", 0), _random((95, 33), "float32", 1).T
    yield "one row of tiles", _random((5, 200), "float64", 0), _random((200, 5), "float64", 1).T
    yield "batch", _random((3, 40, 50), "float32", 0), \
        _random((3, 50, 40), "float32", 1).transpose(0, 2, 1)
    yield "tiled input contiguous along the outer dim", _random((3, 40, 50), "float32", 0), \
        _random((40, 50, 3), "float32", 1).transpose(2, 0, 1)
    yield "broadcast batch", _random((4, 40, 50), "float16", 0), _random((50, 40), "float16", 1).T
    yield "reversed", _random((40, 50), "int8", 0), _random((50, 40), "int8", 1).T[::-1]
    yield "every other column", _random((40, 50), "float32", 0), \
        _random((100, 40), "float32", 1)[::2].T
    yield "offset views", _random((41, 51), "complex128", 0)[1:, 1:], \
        _random((51, 41), "complex128", 1)[1:, 1:].T
    yield "uint8 view", _random((40, 64), "uint8", 0), _random((64, 40), "uint8", 1).T


@pytest.mark.parametrize("case", list(_layout_cases()), ids=lambda c: c[0])
def test_layouts_the_tile_takes(case, stage_small, backend_name, to_device, to_host):
    _, a, b = case
    prepare(backend_name, "add", "subtract")
    expected = a + b if a.dtype.kind != "i" else (a.astype(np.int64) + b).astype(a.dtype)
    actual, kernels = kernels_launched(lambda: F.add(to_device(a), to_device(b)))
    assert kernels == ["ew_tiled"]
    np.testing.assert_array_equal(to_host(actual), expected)
    flipped, _ = kernels_launched(lambda: F.subtract(to_device(b), to_device(a)))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(to_host(flipped), b - a)
    # inputs alike, the new output unlike them: written through the tile
    twice, kernels = kernels_launched(lambda: F.add(to_device(b), to_device(b)))
    assert kernels == ["ew_tiled_out"]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(to_host(twice), b + b)


def test_in_place_and_overlapping_outputs(stage_small, backend_name, to_device, to_host):
    prepare(backend_name, "add")
    a, b = _random((70, 70), "float32", 0), _random((70, 70), "float32", 1)
    # out is the direct input: each element read and written by one thread
    x = to_device(a.copy())
    result, kernels = kernels_launched(lambda: F.add(x, to_device(b).T, out=x))
    assert result is x and kernels == ["ew_tiled"]
    np.testing.assert_array_equal(to_host(x), a + b.T)
    # out is the tiled input's memory (x += x.T): computed into a temporary, then copied
    x = to_device(a.copy())
    F.add(x, x.T, out=x)
    np.testing.assert_array_equal(to_host(x), a + a.T)


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("staged", [0, 1, -1])
def test_no_bank_conflicts_for_any_element_size(dtype, staged, stage_small, backend_name):
    if backend_name != "emulate":
        pytest.skip("the profiler reads emulator traces")
    prepare("emulate", "add")
    a, b = _aligned(_random((96, 96), dtype, 0)), _aligned(_random((96, 96), dtype, 1)).T
    args = {1: (a, b), 0: (b, a), -1: (b, b)}[staged]  # -1: the output through the tile
    # outputs aligned as CuPy allocates them: whole sectors per warp access
    with config.backend("emulate"), arrays.outputs_from(aligned_alloc):
        _, launches = coalescing.profile(lambda: F.add(*args))
    (launch,) = launches
    assert launch.kernel.endswith(f", {staged}>") or staged < 0 and "_out<" in launch.kernel
    assert launch.shared.wavefronts == launch.shared.ideal > 0
    assert min(launch.reads.efficiency, launch.writes.efficiency) >= 0.9
