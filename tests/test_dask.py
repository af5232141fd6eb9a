"""``infini_cupy.dask``: rearrange, elementwise, astype, where and matmul over dask arrays,
chunk by chunk; Dask's own functions on Array chunks.

Results against einops/NumPy on the synchronous and threaded schedulers; the graph: one
blockwise layer per call (plus one rechunk, only when the pattern needs it), each task reading
one chunk per input (nothing gathers the whole array); launches of our kernels, one per chunk.
Runs on the suite's backend: NumPy chunks in emulation, CuPy chunks with ``--backend cuda``.
"""

from __future__ import annotations

import inspect
import math
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import infini_cupy as xp

da = pytest.importorskip("dask.array")
import dask  # noqa: E402
einops = pytest.importorskip("einops")
from dask.core import get_dependencies  # noqa: E402

from infini_cupy import dask as xd  # noqa: E402

from infini_cupy.runtime.launch import recording  # noqa: E402
from tests.support.elementwise_cases import RTOL  # noqa: E402

SCHEDULERS = ("synchronous", "threads")


@pytest.fixture
def chunked(to_device):
    """``chunked(numpy_array, chunks)``: a dask array of the suite's chunk type (CuPy on cuda)."""
    return lambda h, chunks: da.from_array(to_device(h), chunks=chunks, asarray=False)


def _new_layers(y, *inputs) -> list[str]:
    old = set().union(*(set(x.dask.layers) for x in inputs))
    return sorted(name for name in y.dask.layers if name not in old)


def _one_chunk_per_task(y, n_inputs: int) -> None:
    """Every task of y's layer reads exactly one chunk of each input: no task gathers all."""
    graph = dict(y.__dask_graph__())
    tasks = [key for key in graph if isinstance(key, tuple) and key[0] == y.name]
    assert len(tasks) == math.prod(y.numblocks)
    for key in tasks:
        assert len(get_dependencies(graph, key)) == n_inputs, key


# ------------------------------------------------------------------------------- rearrange
CASES = [  # pattern, axes, shape, chunks, rechunk needed
    ("b h w -> b w h", {}, (4, 6, 10), (2, 3, 5), False),
    ("b h w -> w b h", {}, (4, 6, 10), (2, 3, 5), False),
    ("b h w -> b (w h)", {}, (4, 6, 10), (2, 3, 5), True),  # h must be whole
    ("b h w -> b (w h)", {}, (4, 6, 10), (2, 6, 5), False),  # ... and is
    ("b h w -> (b h) w", {}, (4, 6, 10), (2, 3, 5), True),
    ("b (h d) w -> b h d w", {"d": 2}, (4, 6, 10), (2, 4, 5), False),  # chunks multiples of d
    ("b (h d) w -> b h d w", {"d": 2}, (4, 6, 10), (2, 3, 5), True),  # 3 is not
    ("(b1 b2) (h d) w -> (b1 d) w (b2 h)", {"b2": 2, "d": 3}, (4, 6, 10), (2, 6, 5), False),
    ("... w -> w (...)", {}, (4, 6, 10), (2, 6, 5), False),
    ("b ... -> (... b)", {}, (4, 6, 10), (2, 6, 10), True),
    ("b h w -> b 1 h w ()", {}, (4, 6, 10), (2, 3, 5), False),
    ("b h (w 1) -> (b h) w", {}, (4, 6, 10), (2, 6, 5), False),
]


@pytest.mark.parametrize("scheduler", SCHEDULERS)
@pytest.mark.parametrize("pattern, axes, shape, chunks, needs_rechunk", CASES)
def test_rearrange_matches_einops(chunked, to_host, scheduler, pattern, axes, shape, chunks,
                                  needs_rechunk):
    h = np.random.default_rng(0).standard_normal(shape)
    x = chunked(h, chunks)
    y = xd.rearrange(x, pattern, **axes)
    expected = einops.rearrange(h, pattern, **axes)
    layers = _new_layers(y, x)
    assert len(layers) == 1 + needs_rechunk
    assert any(name.startswith("rechunk") for name in layers) == needs_rechunk
    assert y.shape == expected.shape and y.dtype == h.dtype
    assert type(y._meta) is type(x._meta)  # CuPy chunks give CuPy meta
    got = y.compute(scheduler=scheduler)
    assert type(got) is type(x._meta)
    np.testing.assert_array_equal(to_host(got), expected)
    _one_chunk_per_task(y, 1)


def test_rearrange_one_kernel_launch_per_chunk(chunked, to_host):
    h = np.arange(4 * 6 * 10, dtype=np.float32).reshape(4, 6, 10)
    x = chunked(h, (2, 6, 5))
    y = xd.rearrange(x, "b h w -> b (w h)")  # needs a copy in every chunk
    with recording() as launches:
        got = y.compute(scheduler="synchronous")
    np.testing.assert_array_equal(to_host(got), einops.rearrange(h, "b h w -> b (w h)"))
    assert len(launches) == y.npartitions == 4
    with recording() as launches:  # a permutation: a view of every chunk, no launch
        xd.rearrange(x, "b h w -> w h b").compute(scheduler="synchronous")
    assert not launches


def test_rearrange_without_pattern_copies_each_chunk(chunked, to_host):
    h = np.arange(24.0).reshape(4, 6)
    x = xd.rearrange(chunked(h, (2, 3)), "a b -> b a")
    y = xd.rearrange(x)
    with recording() as launches:
        blocks = [b.compute(scheduler="synchronous") for b in y.blocks]
    assert len(launches) == 4 and all(b.flags.c_contiguous for b in blocks)
    np.testing.assert_array_equal(to_host(y.compute()), h.T)


def test_threaded_tasks_run_in_the_captured_backend(chunked, to_host, monkeypatch):
    """The backend in force at graph build is re-entered in each task, on the worker threads,
    and our kernels launch there (recording is per thread: count inside the tasks)."""
    seen, lock, original = [], threading.Lock(), xd._in_backend

    def counting(backend, func, *args, **kwargs):
        with recording() as launches:
            result = original(backend, func, *args, **kwargs)
        with lock:
            seen.append((threading.get_ident(), backend, xp.get_backend(), len(launches)))
        return result

    monkeypatch.setattr(xd, "_in_backend", counting)
    h = np.arange(8 * 6, dtype=np.float64).reshape(8, 6)
    built_in = xp.get_backend()
    y = xd.exp(xd.rearrange(chunked(h, (2, 3)), "a (b c) -> (c a) b", c=3))
    with xp.backend("numpy"):  # what is in force at compute time does not matter
        got = y.compute(scheduler="threads", num_workers=2)
    np.testing.assert_allclose(to_host(got), np.exp(einops.rearrange(h, "a (b c) -> (c a) b", c=3)))
    assert len(seen) == 2 * y.npartitions
    assert {b for _, b, _, _ in seen} == {built_in}
    assert sum(n for *_, n in seen) == 2 * y.npartitions  # one copy and one exp per chunk


def test_rearrange_plans_without_touching_data():
    """An 8 TiB array: planning computes nothing, the layer is one task per chunk.
    (NumPy chunks in emulation, whatever the suite's backend: nothing runs.)"""
    x = da.zeros((2**20, 2**20), chunks=(2**14, 2**14))
    with xp.backend("emulate"):
        y = xd.rearrange(x, "(a b) c -> a (c b)", b=4)  # b whole: chunks of (a b) multiples of 4
        z = xd.multiply(y, 2.0)
    assert y.shape == (2**18, 2**22) and y.numblocks == x.numblocks
    assert _new_layers(y, x) == [y.name]
    assert len(y.dask.layers[y.name]) == x.npartitions
    assert _new_layers(z, y) == [z.name] and z.chunks == y.chunks


def test_zero_size(chunked, to_host):
    h = np.zeros((0, 4, 6))
    y = xd.rearrange(chunked(h, (1, 2, 3)), "b h w -> (b w) h")
    assert to_host(y.compute()).shape == (0, 4)


def _split(draw, n: int) -> tuple:
    """Chunk sizes along an axis of length n: regular or irregular."""
    if draw(st.booleans()):
        size = draw(st.integers(1, n))
        return (size,) * (n // size) + ((n % size,) if n % size else ())
    cuts = sorted(draw(st.sets(st.integers(1, n - 1), max_size=3))) if n > 1 else []
    return tuple(b - a for a, b in zip([0, *cuts], [*cuts, n]))


@st.composite
def _patterns(draw):
    """A random pattern over up to 4 named axes, a shape, the lengths to pass, and chunks."""
    names = list("abcd")[: draw(st.integers(1, 4))]
    length = {n: draw(st.integers(1, 4)) for n in names}

    def grouping(order):
        groups = []
        for name in order:
            if groups and draw(st.booleans()):
                groups[-1].append(name)
            else:
                groups.append([name])
        return groups

    left, right = grouping(names), grouping(draw(st.permutations(names)))
    text = lambda gs: " ".join(g[0] if len(g) == 1 else "(" + " ".join(g) + ")" for g in gs)
    shape = tuple(math.prod(length[n] for n in g) for g in left)
    axes = {n: length[n] for g in left if len(g) > 1 for n in g[1:]}
    chunks = tuple(_split(draw, n) for n in shape)
    return f"{text(left)} -> {text(right)}", shape, axes, chunks


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_patterns())
def test_random_patterns_and_chunks(chunked, to_host, case):
    pattern, shape, axes, chunks = case
    h = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    x = chunked(h, chunks)
    y = xd.rearrange(x, pattern, **axes)
    np.testing.assert_array_equal(to_host(y.compute(scheduler="synchronous")),
                                  einops.rearrange(h, pattern, **axes))
    layers = _new_layers(y, x)
    assert y.name in layers and all(n.startswith("rechunk") for n in layers if n != y.name)
    assert len(layers) <= 2
    if x.npartitions == 1:
        assert len(layers) == 1


# ------------------------------------------------------------------------------ elementwise
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_elementwise_matches_numpy(chunked, to_host, scheduler):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 8))
    b = rng.standard_normal((8,)).astype(np.float32)
    i = rng.integers(-5, 6, (6, 8)).astype(np.int8)
    x, v, n = chunked(a, (3, 4)), chunked(b, (4,)), chunked(i, (3, 4))
    cases = [
        (xd.add(x, v), a + b),  # broadcasting, float64 + float32
        (xd.multiply(n, 3), i * np.int8(3)),  # a Python int stays weak: int8
        (xd.divide(n, 2), i / 2),  # integers divide to float64
        (xd.exp(x), np.exp(a)),
        (xd.greater(x, 0.5), a > 0.5),
        (xd.clip(n, -2, None), np.clip(i, -2, None)),
        (xd.subtract(2.0, v), 2.0 - b),  # a scalar first
        (xd.astype(x, np.float32), a.astype(np.float32)),
    ]
    for y, expected in cases:
        assert y.dtype == expected.dtype and y.shape == expected.shape
        got = to_host(y.compute(scheduler=scheduler))
        assert got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-6)


@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_where_matches_numpy(chunked, to_host, scheduler):
    """``xd.where``: one layer, a task per output chunk reading one chunk of each operand,
    NumPy's broadcasting and values; Python scalars weak, as in ``xp.where``; bad operands
    refused when the graph is built."""
    rng = np.random.default_rng(12)
    a = rng.standard_normal((6, 8))
    b = rng.standard_normal((8,)).astype(np.float32)
    i = rng.integers(-5, 6, (6, 1)).astype(np.int8)
    c = rng.random((6, 8)) < 0.5
    cond, x, v, n = chunked(c, (3, 4)), chunked(a, (3, 4)), chunked(b, (4,)), chunked(i, (3, 1))
    cases = [  # (the result, NumPy's, how many Dask operands)
        (xd.where(cond, x, v), np.where(c, a, b), 3),  # float64 with float32
        (xd.where(cond, v, n), np.where(c, b, i), 3),  # float32 with int8: float32
        (xd.where(cond, n, 3), np.where(c, i, np.int8(3)), 2),  # a Python int stays weak
        (xd.where(cond, 0.5, v), np.where(c, np.float32(0.5), b), 2),
        (xd.where(cond[:, :1], x, n), np.where(c[:, :1], a, i), 3),
    ]
    for y, expected, operands in cases:
        assert y.dtype == expected.dtype and y.shape == expected.shape
        _one_chunk_per_task(y, operands)
        got = to_host(y.compute(scheduler=scheduler))
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(ValueError, match=r"where: operands could not be broadcast.*\(6, 8\) \(5,\)"):
        xd.where(cond, x, chunked(np.zeros(5), 5))
    with pytest.raises(TypeError, match="needs a dask.array.Array"):
        xd.where(c, a, 1.0)


def test_elementwise_graph_and_launches(chunked, to_host):
    h = np.arange(24.0).reshape(4, 6)
    x, w = chunked(h, (2, 3)), chunked(h[::-1].copy(), (2, 3))
    y = xd.add(x, w)
    assert _new_layers(y, x, w) == [y.name] and y.chunks == x.chunks
    _one_chunk_per_task(y, 2)
    with recording() as launches:
        got = y.compute(scheduler="synchronous")
    assert len(launches) == y.npartitions == 4
    np.testing.assert_array_equal(to_host(got), h + h[::-1])


def test_elementwise_names_are_the_namespaces():
    assert len(xd.ELEMENTWISE_NAMES) == 67
    for name in xd.ELEMENTWISE_NAMES:
        assert callable(getattr(xp, name)) and getattr(xd, name).__name__ == name
    for module in ("infini_cupy.elementwise.ops", "infini_cupy.elementwise_ops"):
        try:
            ops = __import__(module, fromlist=["OPS"]).OPS
        except ImportError:
            continue
        assert set(ops) == set(xd.ELEMENTWISE_NAMES)
        break


def test_astype_same_dtype(chunked):
    x = chunked(np.ones((4, 4)), 2)
    assert xd.astype(x, x.dtype, copy=False) is x
    y = xd.astype(x, x.dtype)
    assert _new_layers(y, x) == [y.name]
    with recording() as launches:
        y.compute(scheduler="synchronous")
    assert len(launches) == 4


# ------------------------------------------------------------------------------- bad input
def test_bad_input(chunked):
    h = np.zeros((4, 6))
    x = chunked(h, 2)
    with pytest.raises(TypeError, match="dask.array.Array.*ndarray"):
        xd.rearrange(h, "a b -> b a")
    with pytest.raises(TypeError, match="needs a dask.array.Array argument"):
        xd.add(h, 1)
    with pytest.raises(TypeError, match="pattern must be a str"):
        xd.rearrange(x, 3)
    with pytest.raises(ValueError, match=r"'a b c -> c b a'.*\(4, 6\)"):
        xd.rearrange(x, "a b c -> c b a")
    with pytest.raises(ValueError, match=r"'a \(b c\) -> a b c'.*\(4, 6\)"):
        xd.rearrange(x, "a (b c) -> a b c", c=4)
    with pytest.raises(ValueError, match="integers"):
        xd.rearrange(x, "a (b c) -> a b c", c=[2])
    with pytest.raises(TypeError):  # no bitwise ops on floats: raised when the graph is built
        xd.bitwise_and(x, x)
    unknown = x[x[:, 0] > 0]
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        xd.rearrange(unknown, "a b -> b a")



def test_chunk_by_chunk_calls_take_unknown_chunk_sizes(chunked, to_device, to_host):
    """After a boolean mask (chunk sizes nan) the elementwise functions, astype, where and
    asarray work chunk by chunk, as Dask's own do; before, they asked for
    compute_chunk_sizes(), which only rearrange and matmul need."""
    h = np.arange(24.0).reshape(4, 6)
    x = chunked(h, 2)
    unknown, rows = x[x[:, 0] > 5], h[h[:, 0] > 5]
    # exp: NumPy's own differs by machine (its AVX-512 loop and libm's differ in the last
    # bit), so the kernel's exp of the whole rows is the bit-for-bit oracle, NumPy's the close one
    whole = to_host(xp.exp(xp.asarray(to_device(rows))))
    np.testing.assert_allclose(whole, np.exp(rows), rtol=RTOL["float64"], atol=0)
    for got, expected in [(xd.exp(unknown), whole), (xd.add(unknown, x[0]), rows + h[0]),
                          (xd.multiply(unknown, unknown), rows * rows),
                          (xd.astype(unknown, np.float32), rows.astype(np.float32)),
                          (xd.where(unknown > 8, unknown, 0.0), np.where(rows > 8, rows, 0.0))]:
        assert math.isnan(got.shape[0])
        np.testing.assert_array_equal(to_host(got.compute(scheduler="synchronous")), expected)
    result = xd.asarray(unknown).compute(scheduler="synchronous")
    assert type(result) is xp.Array
    np.testing.assert_array_equal(to_host(result._a), rows)
    with pytest.raises(ValueError, match=r"broadcast together with shapes \(nan, 6\) \(2, 6\)"):
        xd.add(unknown, x[:2])
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        xd.matmul(unknown, x.T)


def test_namespace_functions_name_a_dask_array_in_full(chunked):
    """infini_cupy's own functions refuse a Dask array naming its type with its module:
    Dask's class is also called Array, and "got Array" read as ours refused."""
    x = chunked(np.ones((2, 3)), 1)
    for call in (lambda: xp.exp(x), lambda: xp.add(xp.ones(3), x), lambda: xp.concat([x]),
                 lambda: xp.where(x, 1.0, 2.0), lambda: xp.rearrange(x, "a b -> b a")):
        with pytest.raises(TypeError, match=r"got dask\.array\.core\.Array"):
            call()

def test_signatures_follow_the_namespace():
    for name in xd.ELEMENTWISE_NAMES:
        ours = [p.name for p in inspect.signature(getattr(xd, name)).parameters.values()]
        theirs = [p.name for p in inspect.signature(getattr(xp, name)).parameters.values()
                  if p.name != "out"]
        assert ours == theirs, name


# ----------------------------------------------------------------------------------- matmul
MATMUL_SHAPES = [  # x1's shape and chunks, x2's
    ((6, 8), (3, 4), (8, 5), (4, 2)),
    ((6, 8), (6, 8), (8, 5), (8, 5)),  # one chunk each
    ((8,), (3,), (8, 5), (3, 2)),  # chunks that do not line up along the contracted axis
    ((6, 8), (3, 4), (8,), (4,)),
    ((8,), (5,), (8,), (3,)),
    ((2, 6, 8), (1, 3, 4), (8, 5), (4, 5)),  # a batch axis against none
    ((3, 1, 6, 8), (1, 1, 3, 4), (2, 8, 5), (1, 4, 5)),  # batch axes broadcast
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.bool_])
@pytest.mark.parametrize("shape1, chunks1, shape2, chunks2", MATMUL_SHAPES)
def test_matmul_matches_numpy(chunked, to_device, to_host, shape1, chunks1, shape2, chunks2,
                              dtype):
    rng = np.random.default_rng(21)
    h1, h2 = ((rng.standard_normal(s) * 3).astype(dtype) for s in (shape1, shape2))
    x1, x2 = xd.asarray(chunked(h1, chunks1)), xd.asarray(chunked(h2, chunks2))
    expected = np.matmul(h1, h2)
    y = xd.matmul(x1, x2)
    assert y.dtype == expected.dtype and y.shape == expected.shape
    got = y.compute(scheduler="synchronous")
    assert type(got) is xp.Array and got.dtype == expected.dtype
    np.testing.assert_allclose(to_host(got._a), expected, rtol=1e-5, atol=1e-4)
    plain = xd.matmul(chunked(h1, chunks1), to_device(h2))  # plain chunks, an array operand
    np.testing.assert_allclose(to_host(plain.compute()), expected, rtol=1e-5, atol=1e-4)


def test_matmul_bad_input(chunked):
    x = chunked(np.ones((4, 6)), 2)
    with pytest.raises(ValueError, match=r"shapes \(4, 6\) and \(4, 6\) do not multiply"):
        xd.matmul(x, x)
    with pytest.raises(ValueError, match="do not multiply"):
        xd.matmul(x, chunked(np.ones(()), ()))
    with pytest.raises(ValueError, match=r"batch axes of shapes \(2, 4, 6\) and \(3, 6, 4\)"):
        xd.matmul(chunked(np.ones((2, 4, 6)), 2), chunked(np.ones((3, 6, 4)), 2))
    with pytest.raises(TypeError, match="needs a dask.array.Array argument"):
        xd.matmul(np.ones((2, 2)), np.ones((2, 2)))


# ------------------------------------------------------------------------------- Array chunks
@pytest.mark.parametrize("scheduler", SCHEDULERS)
def test_array_chunks_stay_arrays(chunked, to_host, scheduler):
    """``xd.asarray``: chunks become infini_cupy.Array; our functions keep them so, with one
    launch per chunk, and compute() joins them with our concat into one Array."""
    rng = np.random.default_rng(11)
    h = rng.standard_normal((6, 8, 10)).astype(np.float32)
    x = xd.asarray(chunked(h, (2, 4, 5)))
    assert type(x._meta) is xp.Array and x.chunks == ((2, 2, 2), (4, 4), (5, 5))
    y = xd.multiply(xd.add(x, 1.0), x)
    z = xd.rearrange(y, "b h w -> b (w h)")  # needs h whole in a chunk: a rechunk of Arrays
    w = xd.astype(z, xp.float64)
    with dask.config.set(scheduler=scheduler):
        result = w.compute()
    assert type(result) is xp.Array and result.dtype == np.float64
    expected = ((h + 1) * h).transpose(0, 2, 1).reshape(6, 80).astype(np.float64)
    np.testing.assert_allclose(to_host(result._a), expected, rtol=1e-6)


def test_array_chunks_launch_our_kernels(chunked):
    h = np.arange(48.0).reshape(6, 8)
    x = xd.asarray(chunked(h, (3, 4)))  # 4 chunks
    with dask.config.set(scheduler="synchronous"), recording() as launches:
        y = xd.exp(x).compute()
    assert type(y) is xp.Array
    # one exp per chunk, then our concat joins the four chunks
    assert sum(r.name.startswith("ew_") and "Exp" in r.name for r in launches) == 4
    assert any(r.source in ("rearrange.cu", "transpose.cu", "packed.cu") for r in launches)



def test_dask_assert_eq_on_array_chunks(chunked, to_device):
    """Dask's testing helper takes Arrays for CuPy arrays by their type's name and calls
    ``get()`` on them: it raised AttributeError."""
    from dask.array.utils import assert_eq

    h = np.arange(12.0).reshape(3, 4)
    d, a = xd.asarray(chunked(h, 2)), xp.asarray(to_device(h))
    assert assert_eq(d, d) and assert_eq(xd.add(d, 1), a + 1) and assert_eq(d.sum(), a.sum())
    assert assert_eq(d, h, check_type=False)  # an Array beside a NumPy array, as for CuPy's
    with pytest.raises(AssertionError, match="differ"):
        assert_eq(d, a + 1)

@pytest.mark.parametrize("call", [
    lambda x, d: x + d, lambda x, d: d * x, lambda x, d: x == d, lambda x, d: d != x,
    lambda x, d: x < d, lambda x, d: np.add(x, d), lambda x, d: np.maximum(d, x),
], ids=["x+d", "d*x", "x==d", "d!=x", "x<d", "np.add(x,d)", "np.maximum(d,x)"])
def test_operators_between_an_array_and_a_dask_array(chunked, to_device, to_host, call):
    """Dask's operators take an Array beside a Dask array, as NumPy's and CuPy's arrays (the
    chunk type infini_cupy.dask registers): a Dask array whose chunks are Arrays; before,
    both sides declined and ``x == d`` was Python's identity, False."""
    rng = np.random.default_rng(12)
    a, b = (rng.integers(-3, 3, (6, 8)).astype(np.float32) for _ in range(2))
    x, d = xp.asarray(to_device(a)), chunked(b, (3, 4))
    y = call(x, d)
    assert isinstance(y, da.Array) and type(y._meta) is xp.Array
    result = y.compute()
    assert type(result) is xp.Array
    expected = call(a, b)
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(to_host(result._a), expected)


def test_asarray_of_a_plain_array_cuts_it_into_chunks(to_device, to_host):
    h = np.arange(12).reshape(3, 4)
    x = xd.asarray(to_device(h), chunks=(2, 2))
    assert x.chunks == ((2, 1), (2, 2)) and type(x._meta) is xp.Array
    np.testing.assert_array_equal(to_host(x.compute()._a), h)


def test_operands_that_do_not_broadcast_name_their_shapes(chunked):
    """Raised at graph build, in NumPy's and dask.array's words, not Dask's about chunks."""
    x, y = chunked(np.zeros((4, 6)), 2), chunked(np.zeros((4, 5)), 2)
    for call in (lambda: xd.add(x, y), lambda: xd.multiply(y, x), lambda: xd.clip(x, y)):
        with pytest.raises(ValueError, match=r"operands could not be broadcast together "
                                             r"with shapes \((4, 6|4, 5)\) \((4, 5|4, 6)\)"):
            call()


def test_rearrange_of_a_list_stacks_it_as_einops_does(chunked, to_device, to_host):
    rng = np.random.default_rng(5)
    hs = [rng.standard_normal((4, 6)) for _ in range(3)]
    xs = [chunked(h, (2, 3)) for h in hs]
    for pattern in ("n h w -> h (n w)", "n h w -> w h n"):
        got = xd.rearrange(xs, pattern).compute(scheduler="synchronous")
        np.testing.assert_array_equal(to_host(got), einops.rearrange(hs, pattern))
    np.testing.assert_array_equal(to_host(xp.rearrange([xp.asarray(to_device(h)) for h in hs],
                                                       "n h w -> h (n w)")._a),
                                  einops.rearrange(hs, "n h w -> h (n w)"))


# Dask's own functions on Array chunks: what works through NumPy's protocols (Array's
# __array_function__ / __array_ufunc__, our concat as Dask's concatenate), and what needs
# NumPy methods on the chunks that Array does not have (x.argmax(), ...) or a matmul
# Dask does its own way; the README lists both.
DASK_WORKS = {
    "sum": (lambda d: d.sum(axis=0), lambda h: h.sum(axis=0)),
    "prod": (lambda d: da.prod(d, axis=1), lambda h: h.prod(axis=1)),
    "max": (lambda d: d.max(), lambda h: h.max()),
    "min": (lambda d: da.min(d, axis=1), lambda h: h.min(axis=1)),
    "any": (lambda d: (d > 0).any(axis=0), lambda h: (h > 0).any(axis=0)),
    "all": (lambda d: (d > -9).all(), lambda h: (h > -9).all()),
    "nansum": (lambda d: da.nansum(d), lambda h: np.nansum(h)),
    "cumsum": (lambda d: d.cumsum(axis=0), lambda h: h.cumsum(axis=0)),
    "cumprod": (lambda d: da.cumprod(d, axis=1), lambda h: h.cumprod(axis=1)),
    "slicing": (lambda d: d[1:, ::2], lambda h: h[1:, ::2]),
    "transpose": (lambda d: d.T, lambda h: h.T),
    "concatenate": (lambda d: da.concatenate([d, d], axis=1), lambda h: np.concatenate([h, h], 1)),
    "where": (lambda d: da.where(d > 0, d, 0.0), lambda h: np.where(h > 0, h, 0.0)),
    "diff": (lambda d: da.diff(d, axis=1), lambda h: np.diff(h, axis=1)),
    "operators": (lambda d: (d + 1) * d - d / 2, lambda h: (h + 1) * h - h / 2),
    # NumPy's methods on Array chunks (x.sum(), x.astype(), x.reshape(): namespace/array_methods.py)
    "mean": (lambda d: d.mean(), lambda h: h.mean()),
    "std": (lambda d: d.std(axis=0), lambda h: h.std(axis=0)),
    "var": (lambda d: da.var(d), lambda h: np.var(h)),
    "count_nonzero": (lambda d: da.count_nonzero(d > 0), lambda h: np.count_nonzero(h > 0)),
    "reshape": (lambda d: d.reshape(-1), lambda h: h.reshape(-1)),
    # Dask's arg reductions ask for a structured empty_like, which Arrays refuse with a
    # TypeError as CuPy does: Dask then keeps values and indices apart, as for CuPy chunks
    "argmax": (lambda d: d.argmax(axis=0), lambda h: h.argmax(axis=0)),
    "argmin": (lambda d: da.argmin(d, axis=1), lambda h: h.argmin(axis=1)),
    "nanargmax": (lambda d: da.nanargmax(d), lambda h: np.nanargmax(h)),
    # Dask's tensordot picks the chunks' library by __array_priority__, which Arrays have
    "dot": (lambda d: da.dot(d, d.T), lambda h: h @ h.T),
    "tensordot": (lambda d: da.tensordot(d, d, axes=([0], [0])), lambda h: h.T @ h),
    # NumPy's like= with an Array chunk as the model (namespace/numpy_protocols.py)
    "tril": (lambda d: da.tril(d[:, :6], k=-1), lambda h: np.tril(h[:, :6], k=-1)),
    "bincount": (lambda d: da.bincount(abs(d[0] * 3).astype(np.int64), minlength=12),
                 lambda h: np.bincount(abs(h[0] * 3).astype(np.int64), minlength=12)),
    "pad": (lambda d: da.pad(d, 1), lambda h: np.pad(h, 1)),
    "median": (lambda d: da.median(d, axis=0), lambda h: np.median(h, axis=0)),
    "topk": (lambda d: da.topk(d, 3, axis=1), lambda h: -np.sort(-h, axis=1)[:, :3]),
    "take": (lambda d: da.take(d, [0, 5, 2], axis=0), lambda h: np.take(h, [0, 5, 2], axis=0)),
    "cov": (lambda d: da.cov(d), lambda h: np.cov(h)),
    "svd": (lambda d: da.linalg.svd(d.T.rechunk((4, 6)))[1],
            lambda h: np.linalg.svd(h.T, compute_uv=False)),
    # Dask's percentile merges the chunks' percentiles (an approximation): as for NumPy chunks
    "percentile": (lambda d: da.percentile(d[0], [25, 50, 75]),
                   lambda h: da.percentile(da.from_array(h[0], chunks=4), [25, 50, 75])
                   .compute(scheduler="synchronous")),
}
DASK_FAILS = {  # Dask takes Arrays for CuPy arrays by name ("cupy" in str(type(chunk))):
    "matmul": lambda d: d @ d.T,  # cupy.matmul on them (infini_cupy.dask.matmul instead)
}


@pytest.mark.parametrize("name", sorted(DASK_WORKS))
def test_dask_functions_on_array_chunks(backend_name, to_host, name):
    if backend_name != "emulate":
        pytest.skip("Arrays on the emulator: NumPy's fallbacks run on the CPU's memory")
    ours, numpy_ = DASK_WORKS[name]
    h = np.random.default_rng(3).standard_normal((6, 8))
    with xp.backend("emulate"):
        d = xd.asarray(h, chunks=(3, 4))
    got = ours(d).compute(scheduler="synchronous")
    assert type(got) is xp.Array and got.device == "emulator"
    np.testing.assert_allclose(to_host(got._a), numpy_(h), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(DASK_FAILS))
def test_dask_functions_needing_numpy_methods_raise(backend_name, name):
    if backend_name != "emulate":
        pytest.skip("Arrays on the emulator")
    with xp.backend("emulate"):
        d = xd.asarray(np.ones((6, 8)), chunks=(3, 4))
    with pytest.raises((AttributeError, TypeError, IndexError)):
        DASK_FAILS[name](d).compute(scheduler="synchronous")


def test_elementwise_with_an_array_operand(chunked, to_device, to_host):
    """An infini_cupy.Array beside a Dask array in xd's functions: a one-chunk Dask array, as a
    NumPy/CuPy operand is (not passed to every task as is, against 0-size metas)."""
    h = np.arange(12.0).reshape(3, 4)
    d = xd.asarray(chunked(h, (2, 3)))
    a = xp.asarray(to_device(h))
    for got, expected in [(xd.add(d, a), h + h), (xd.subtract(a[:1], d), h[:1] - h),
                          (xd.add(d[:1], a), h[:1] + h), (xd.where(d > 4, a, 0.0), np.where(h > 4, h, 0.0))]:
        assert got.shape == expected.shape and type(got._meta) is xp.Array
        result = got.compute(scheduler="synchronous")
        assert type(result) is xp.Array
        np.testing.assert_array_equal(to_host(result._a), expected)


def test_zero_size_rearrange_keeps_array_chunks(chunked, to_host):
    """Dask's rechunk of a 0-size array makes NumPy chunks: rearrange does not rechunk it."""
    x = xd.asarray(chunked(np.zeros((0, 4, 6)), (1, 2, 3)))
    y = xd.rearrange(x, "b h w -> (b w) h")
    result = y.compute(scheduler="synchronous")
    assert type(y._meta) is xp.Array and type(result) is xp.Array and result.shape == (0, 4)
