"""Property: a fused function of a random expression tree (unary and binary functions,
comparisons, ``where``, ``clip``, casts, constants and scalar arguments) over random operand
kinds, dtypes, broadcast shapes and layouts is one launch and bit-identical to the unfused
calls, or raises the unfused calls' error. On the suite's device (the emulator, or the GPU with
``--backend cuda``: the native operands are then CuPy arrays).

Each new tree is a new kernel build (g++ for the emulator, NVRTC through the stand-in), so
the default run draws a fixed, derandomized set of a few dozen examples (their kernels stay
in the disk cache); ``-m slow`` draws hundreds more."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import infini_cupy as xp
from infini_cupy.runtime.launch import recording

DTYPES = ["int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64"]
UNARY = ["negative", "abs", "square", "sqrt", "exp", "sin", "floor"]
BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "divide"]
COMPARE = ["greater", "less_equal", "not_equal"]
KINDS = ["ndarray", "Array", "0-d", "numpy scalar"]
LAYOUTS = ["C", "F", "reversed", "step", "broadcast"]
CONSTANTS = [2, -1, 0.5, 1.5, True]


def _trees(inputs: int, scalars: int):
    """Expression trees over ``inputs`` array arguments and ``scalars`` Python scalars."""
    array = st.builds(lambda k: ("in", k), st.integers(0, inputs - 1))
    leaf = st.one_of(  # arrays three times as often: a call of scalars alone is refused
        array, array, array,
        st.builds(lambda v: ("const", v), st.sampled_from(CONSTANTS)),
        *([st.builds(lambda j: ("arg", inputs + j), st.integers(0, scalars - 1))]
          if scalars else []))

    def extend(child):
        return st.one_of(
            st.tuples(st.just("unary"), st.sampled_from(UNARY), child),
            st.tuples(st.just("binary"), st.sampled_from(BINARY), child, child),
            st.tuples(st.just("where"), st.sampled_from(COMPARE), child, child, child, child),
            st.tuples(st.just("clip"), child, st.sampled_from([-1, 0, None]),
                      st.sampled_from([1, 3, None])),
            st.tuples(st.just("cast"), st.sampled_from(DTYPES), child))

    # two levels of calls at least over random subtrees (hypothesis starts from small ones)
    return extend(extend(st.recursive(leaf, extend, max_leaves=4)))


def _evaluate(tree, args):
    kind = tree[0]
    if kind in ("in", "arg"):
        return args[tree[1]]
    if kind == "const":
        return tree[1]
    if kind == "unary":
        return getattr(xp, tree[1])(_evaluate(tree[2], args))
    if kind == "binary":
        return getattr(xp, tree[1])(_evaluate(tree[2], args), _evaluate(tree[3], args))
    if kind == "where":
        condition = getattr(xp, tree[1])(_evaluate(tree[2], args), _evaluate(tree[3], args))
        return xp.where(condition, _evaluate(tree[4], args), _evaluate(tree[5], args))
    if kind == "clip":
        return xp.clip(_evaluate(tree[1], args), tree[2], tree[3])
    return xp.astype(_evaluate(tree[2], args), tree[1])


def _values(dtype, shape, rng):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -9, 10, shape).astype(dt)
    return (rng.standard_normal(shape) * 3).astype(dt)


def _laid_out(a, layout):
    """``a``'s values in ``layout`` (its shape kept)."""
    if a.ndim == 0 or layout == "C":
        return a
    if layout == "F":
        return np.ascontiguousarray(a.T).T
    if layout == "reversed":
        return np.ascontiguousarray(a[..., ::-1])[..., ::-1]
    return np.repeat(a, 2, axis=-1)[..., ::2]  # every other element


@st.composite
def cases(draw):
    inputs, scalars = draw(st.integers(1, 3)), draw(st.integers(0, 1))
    tree = draw(_trees(inputs, scalars))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    args = []
    for k in range(inputs):
        dtype = draw(st.sampled_from(DTYPES))
        kind = "ndarray" if k == 0 else draw(st.sampled_from(KINDS))  # an array among them
        layout = draw(st.sampled_from(LAYOUTS))
        own = shape
        if layout == "broadcast":  # a trailing part of the shape, some dims of length 1
            own = tuple(n if draw(st.booleans()) else 1
                        for n in shape[len(shape) - draw(st.integers(1, len(shape))):])
        args.append((kind, _laid_out(_values(dtype, own, rng), layout)))
    args += [("python", draw(st.sampled_from([2, -3, 0.25, -1.5])))] * scalars
    return tree, tuple(args)


def _operands(args, to_device):
    """The drawn ``(kind, value)`` arguments as operands on the suite's device."""
    return tuple({"ndarray": lambda v: to_device(v), "Array": lambda v: xp.asarray(to_device(v)),
                  "0-d": lambda v: to_device(np.asarray(v.ravel()[0])),
                  "numpy scalar": lambda v: v.ravel()[0], "python": lambda v: v}[kind](value)
                 for kind, value in args)


def _outcome(call):
    with np.errstate(all="ignore"):
        try:
            return call(), None
        except (TypeError, ValueError, OverflowError) as e:
            return None, (type(e), str(e))


def _reads_an_array(tree, args) -> bool:
    """The tree reads an array argument (else it runs unfused: nothing to fuse over)."""
    if tree[0] == "in":
        return not isinstance(args[tree[1]], np.generic)
    return any(_reads_an_array(t, args) for t in tree[1:] if isinstance(t, tuple))


def _check(tree, args, to_device, to_host):
    def function(*a):
        return _evaluate(tree, a)

    unfused, error = _outcome(lambda: function(*args))
    fused = xp.fuse(function)
    if error is not None:  # refused unfused (dtypes, scalars alone): refused fused alike
        assert _outcome(lambda: fused(*args))[1] == error
        return
    if not hasattr(unfused, "shape") or isinstance(unfused, np.generic):
        return  # the tree never reached an array (a constant): nothing to fuse
    with recording() as launches:
        got, _ = _outcome(lambda: fused(*args))
    if _reads_an_array(tree, args):
        assert [r.name for r in launches] == [fused.kernel_name(*args)]
    assert type(got) is type(unfused)
    held = type(got)
    got, unfused = to_host(got), to_host(unfused)
    assert (got.dtype, got.shape) == (unfused.dtype, unfused.shape)
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(unfused).tobytes()
    _check_out(fused, args, unfused, held, to_device, to_host)


def _check_out(fused, args, expected, held, to_device, to_host):
    """``out=`` a transposed array of the result's dtype, of the result's kind (an Array or a
    native array), three times, a new one each time: the first call, then repeats by layout
    (fused_out.run_into; hot_calls.c's fused_into for Arrays), each the unfused bits."""
    for _ in range(3):
        out = to_device(np.zeros(expected.shape[::-1], expected.dtype)).T
        out = xp.asarray(out) if held is xp.Array else out
        with np.errstate(all="ignore"):
            assert fused(*args, out=out) is out
        assert np.ascontiguousarray(to_host(out)).tobytes() == \
            np.ascontiguousarray(expected).tobytes()


# to_device and to_host are the same for every example
_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large,
           HealthCheck.function_scoped_fixture]


@settings(max_examples=60, derandomize=True, database=None, deadline=None,
          suppress_health_check=_HEALTH)
@given(case=cases())
def test_random_trees_fuse_into_one_launch_equal_to_the_unfused_calls(case, to_device, to_host):
    tree, args = case
    _check(tree, _operands(args, to_device), to_device, to_host)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=_HEALTH)
@given(case=cases())
def test_random_trees_long(case, to_device, to_host):
    tree, args = case
    _check(tree, _operands(args, to_device), to_device, to_host)
