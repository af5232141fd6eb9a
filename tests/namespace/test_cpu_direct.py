"""The ``cpu`` device's direct calls (``namespace/cpu_direct.py``): views, ``reshape``,
``where``, ``count_nonzero``, ``concat``, ``stack``, ``repeat``, ``tile``, ``roll``, the
creations (``empty``, ``zeros``, ``ones``, their ``*_like``) of ``cpu`` Arrays call NumPy
themselves, and so do ``asarray`` of a NumPy array and ``x[k] = scalar``; so do the
delegated reductions, ``cumulative_*``, ``sort``, ``argsort``, ``nonzero``, ``take``,
``take_along_axis``, ``searchsorted`` and ``diff`` (``namespace/cpu_direct_delegated.py``,
their warnings compared too). Each must answer
as the full call behind it (the boundary's function, ``__wrapped__``; ``x[(k,)] = v`` for
``x[k] = v``): the same dtype, shape, strides, bits and memory shared with the input, or the
same exception and message, on random data, many dtypes, layouts (transposed, strided,
reversed, length-1 axes, empty, 0-d) and arguments valid and not."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import infini_cupy as xp
from infini_cupy import dtypes
from infini_cupy.namespace import boundary, cpu_direct, cpu_direct_delegated
from infini_cupy.namespace import device as devices
from infini_cupy.namespace.array import wrap
from infini_cupy.namespace.patterns import reshape_strides

_DTYPES = ["bool", "int8", "uint16", "int64", "float16", "float32", "float64",
           "complex64"] + (["bfloat16"] if dtypes.BFLOAT16 else [])


def _layouts(rng, dtype):
    """NumPy arrays of ``dtype`` in many layouts, each with its name."""
    def values(shape):
        h = rng.standard_normal(shape) * 3
        h.ravel()[:2] = [0.0, np.nan][:h.size]
        if dtype == "bfloat16":
            return h.astype(np.float32).astype(dtypes.BFLOAT16)
        with np.errstate(all="ignore"):
            return h.astype(dtype)

    base = values((6, 1, 8))
    return {
        "contiguous": base,
        "transposed": base.transpose(2, 1, 0),
        "strided": values((6, 4, 16))[:, 1:2, ::2],
        "reversed": base[::-1],
        "2-d": values((5, 7)),
        "2-d transposed": values((7, 5)).T,
        "empty": values((0, 1, 3)),
        "0-d": values(()),
        "1-d": values((9,)),
        "ones": values((1, 1)),
    }


def _outcome(call):
    """(type, dtype, shape, strides, bits) of an Array's native array, or (exception type,
    message)."""
    try:
        r = call()
    except Exception as e:  # noqa: BLE001 - the exception is the outcome
        return type(e), str(e)
    if type(r) is tuple:  # where(condition): nonzero's
        return (tuple, *(_outcome(lambda v=v: v) for v in r))
    assert type(r) is xp.Array, type(r)
    a = r._a
    return type(a), a.dtype, a.shape, a.strides, a.tobytes(), r.device


def _agrees(name, x, *args, **kwargs):
    """The public call and its full call agree, views sharing memory alike."""
    public = getattr(xp, name)
    direct = _outcome(lambda: public(x, *args, **kwargs))
    full = _outcome(lambda: public.__wrapped__(x, *args, **kwargs))
    assert direct == full, (name, args, kwargs)
    if len(direct) > 2:
        shares = [np.shares_memory(f(x, *args, **kwargs)._a, x._a)
                  for f in (public, public.__wrapped__)]
        assert shares[0] == shares[1], (name, args, kwargs)
    return direct


_AXES = [0, 1, 2, -1, -2, -3, -4, 3, 4, None, (0,), (0, 1), (-1,), (1, 1), True, 1.0,
         np.int64(1), [0]]


@pytest.mark.parametrize("dtype", _DTYPES)
def test_views_answer_as_the_full_call(dtype):
    rng = np.random.default_rng(abs(hash(dtype)) % 2**32)
    for layout, h in _layouts(rng, dtype).items():
        x = xp.asarray(h, device="cpu")
        n = h.ndim
        for axes in [tuple(range(n)), tuple(reversed(range(n))), tuple(range(n))[1:],
                     (0,) * n, tuple(range(-n, 0)), (0, 5, 1)[:n], [*range(n)],
                     tuple(np.arange(n))]:
            _agrees("permute_dims", x, axes)
            _agrees("transpose", x, axes)
        _agrees("transpose", x)
        _agrees("matrix_transpose", x)
        for axis in _AXES:
            _agrees("squeeze", x, axis)
            _agrees("squeeze", x, axis=axis)
            _agrees("flip", x, axis=axis)
            _agrees("expand_dims", x, axis)
            _agrees("count_nonzero", x, axis=axis)
            _agrees("count_nonzero", x, axis=axis, keepdims=True)
            for destination in (0, -1, 1, 3, -4, (0,), 1.0):
                _agrees("moveaxis", x, axis, destination)
        _agrees("squeeze", x)
        _agrees("flip", x)
        _agrees("count_nonzero", x)
        assert _agrees("count_nonzero", x)[1] == np.asarray(np.count_nonzero(h)).dtype


@pytest.mark.parametrize("dtype", _DTYPES)
def test_reshape_answers_as_the_full_call(dtype):
    rng = np.random.default_rng(7)
    for layout, h in _layouts(rng, dtype).items():
        x = xp.asarray(h, device="cpu")
        size = h.size
        shapes = [(size,), (-1,), (1, -1), (-1, 1), (size, 1, 1), (-1, -1), (size + 1,),
                  (-2,), (-1, -2), (0, -1), (1, size, -1), size, [size], (np.int64(size),),
                  (True,), (), (1,), (-1, 0), h.shape, h.shape[::-1], (2, -1), (3, -1),
                  (4, -1, 2), (-3, -size // -3)]
        for shape in shapes:
            for copy in (None, False, True):
                _agrees("reshape", x, shape, copy=copy)


def test_reshape_takes_a_view_only_where_the_full_call_does():
    """A view needing a copy, or a dtype the strided copy refuses, goes the full way."""
    h = np.arange(24.0).reshape(4, 6)[:, :3]  # (4, 3), its rows not chained
    x = xp.asarray(h, device="cpu")
    r = xp.reshape(x, (12,))
    assert not np.shares_memory(r._a, h) and np.array_equal(r._a, h.ravel())
    # asarray holds native byte order; an Array made around swapped bytes all the same
    swapped = wrap(np.zeros((2, 3), np.dtype(np.float32).newbyteorder()), "numpy")
    for _ in range(2):  # the dtype's check is not remembered as passed
        with pytest.raises(TypeError, match="reshape supports boolean and numeric"):
            xp.reshape(swapped, (6,))


def test_c_contiguous_layouts_always_chain():
    """cpu_direct skips reshape_strides for C-contiguous arrays: it never refuses one."""
    rng = np.random.default_rng(3)
    for _ in range(300):
        shape = tuple(int(n) for n in rng.integers(0, 4, rng.integers(0, 5)))
        h = np.empty(shape, np.float32)
        if h.ndim and rng.random() < 0.5:  # length-1 axes with odd strides, still contiguous
            h = np.lib.stride_tricks.as_strided(h, strides=tuple(
                s * 7 if n == 1 else s for n, s in zip(h.shape, h.strides)))
        if not h.flags.c_contiguous:
            continue
        for new in [(h.size,), (1, h.size), (h.size, 1)] + (
                [shape[::-1]] if h.size == int(np.prod(shape[::-1])) else []):
            assert reshape_strides(h.shape, h.strides, new) is not None, (shape, h.strides, new)


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # 70000 as float16: both
@pytest.mark.parametrize("dtype", _DTYPES)
def test_where_answers_as_the_full_call(dtype):
    rng = np.random.default_rng(11)
    layouts = _layouts(rng, dtype)
    for layout, h in layouts.items():
        x = xp.asarray(h, device="cpu")
        m = xp.asarray(rng.random(h.shape) > 0.5, device="cpu")
        other = xp.asarray(np.ones(h.shape, np.int16), device="cpu")
        row = xp.asarray(np.zeros(h.shape[-1:], np.float32), device="cpu")
        for x1, x2 in [(x, x), (x, other), (other, x), (x, 0), (1.5, x), (x, True),
                       (x, 1j), (x, -0.0), (x, 70000), (x, row), (0, 1.0),
                       (x, np.float32(2.0)), (x, None), (None, None),
                       (x, xp.asarray(h, device="emulator"))]:
            for condition in (m, x, xp.asarray(True, device="cpu")):
                public = xp.where
                direct = _outcome(lambda: public(condition, x1, x2))
                full = _outcome(lambda: public.__wrapped__(condition, x1, x2))
                assert direct == full, (layout, x1, x2)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_concat_and_stack_answer_as_the_full_call(dtype):
    rng = np.random.default_rng(13)
    layouts = {name: xp.asarray(h, device="cpu") for name, h in _layouts(rng, dtype).items()}
    other_dtype = xp.asarray(np.ones((6, 1, 8), np.int16), device="cpu")
    emulated = xp.asarray(np.ones((6, 1, 8), dtype if dtype != "bfloat16" else np.float32),
                          device="emulator")
    for name, x in layouts.items():
        mates = [[x], [x, x], (x, x, x), [x, layouts["contiguous"]], [x, layouts["reversed"]],
                 [x, layouts["2-d"]], [x, other_dtype], [x, x._a], [x, emulated], []]
        for arrays in mates:
            for axis in (0, 1, 2, -1, -3, 3, -4, None, 1.0, True):
                for function in ("concat", "stack"):
                    public = getattr(xp, function)
                    direct = _outcome(lambda: public(arrays, axis=axis))
                    full = _outcome(lambda: public.__wrapped__(arrays, axis=axis))
                    assert direct == full, (function, name, len(arrays), axis)
                    if len(direct) > 2:  # a new array, never a view of an input
                        assert not any(np.shares_memory(public(arrays, axis=axis)._a, a._a)
                                       for a in arrays if type(a) is xp.Array), function


def test_other_devices_and_native_arrays_go_the_full_way(arr, host):
    h = np.arange(6.0).reshape(2, 3)
    on_suite = arr(h)  # the emulator, or the GPU
    c = xp.asarray(h, device="cpu")
    assert xp.permute_dims(on_suite, (1, 0)).device == on_suite.device
    np.testing.assert_array_equal(host(xp.flip(on_suite, axis=0)), h[::-1])
    with xp.backend("numpy"):
        assert type(xp.flip(h)) is np.ndarray
    with pytest.raises(ValueError, match="different devices"):
        xp.where(xp.asarray(h > 1, device="cpu"), c, on_suite)


def test_signatures_are_the_standards():
    for name in [*cpu_direct._DIRECT, *cpu_direct_delegated.DIRECT]:
        function = getattr(xp, name)
        assert function.__wrapped__ is not function
        assert (inspect.signature(function, follow_wrapped=False)
                == inspect.signature(function.__wrapped__)), name
        assert function.__name__ == name and function.__module__ == "infini_cupy"
    with pytest.raises(TypeError):
        xp.permute_dims(x=xp.ones(2, device="cpu"), axes=(0,))


def _made(call, uninitialized: bool):
    """``_outcome``, but for the bits of an uninitialized array (``empty``'s)."""
    outcome = _outcome(call)
    return outcome[:4] + outcome[5:] if uninitialized and len(outcome) > 2 else outcome


_CREATION_DTYPES = [None, "float32", "int8", "bool", "complex64", "float16", xp.int64,
                    np.float32, "f4", 3, "not a dtype"] + (
    [dtypes.BFLOAT16] if dtypes.BFLOAT16 else [])
_CREATION_DEVICES = [None, "cpu", "emulator", xp.Device("cpu"), "gpu", 0]


@pytest.mark.parametrize("backend", ["numpy", "emulate"])
@pytest.mark.parametrize("name", ["empty", "zeros", "ones"])
def test_creation_answers_as_the_full_call(name, backend):
    public = getattr(xp, name)
    with xp.backend(backend):  # device=None: the backend in force picks the device
        for shape in [(2, 3), 4, (), (0,), (2, 0, 1), -1, (2, -1), 2.0, [2, 3],
                      (np.int64(2),), None, (True, 2)]:
            for dtype in _CREATION_DTYPES:
                for device in _CREATION_DEVICES:
                    direct = _made(lambda: public(shape, dtype=dtype, device=device),
                                   name == "empty")
                    full = _made(lambda: public.__wrapped__(shape, dtype=dtype, device=device),
                                 name == "empty")
                    assert direct == full, (shape, dtype, device)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_creation_like_answers_as_the_full_call(dtype):
    for layout, h in _layouts(np.random.default_rng(17), dtype).items():
        x = xp.asarray(h, device="cpu")
        for name in ("empty_like", "zeros_like", "ones_like"):
            public = getattr(xp, name)
            for kwargs in [{}, *({"dtype": d} for d in _CREATION_DTYPES),
                           *({"device": d} for d in _CREATION_DEVICES),
                           {"shape": (2, 3)}, {"shape": None}, {"shape": -1}]:
                direct = _made(lambda: public(x, **kwargs), name == "empty_like")
                full = _made(lambda: public.__wrapped__(x, **kwargs), name == "empty_like")
                assert direct == full, (name, layout, kwargs)
                if len(direct) > 2:  # a new array, never a view of x
                    assert not np.shares_memory(public(x, **kwargs)._a, h), (name, kwargs)
    emulated = xp.asarray(h, device="emulator")  # another device, a native array: the full way
    assert xp.zeros_like(emulated).device == emulated.device
    with xp.backend("numpy"):
        assert type(xp.ones_like(h)) is np.ndarray


@pytest.mark.parametrize("backend", ["numpy", "emulate"])
def test_asarray_of_a_numpy_array_answers_as_the_full_call(backend):
    """asarray takes a NumPy array onto a CPU device as it is; the device given by name, by
    Device or not at all (the backend in force) as the full call reads it."""
    rng = np.random.default_rng(19)
    with xp.backend(backend):
        for dtype in _DTYPES:
            layouts = _layouts(rng, dtype)
            swapped = layouts["2-d"].astype(layouts["2-d"].dtype.newbyteorder())
            others = [("swapped", swapped), ("str", np.array(["a", "b"])),
                      ("object", np.array([1, None], dtype=object))]
            for layout, h in [*layouts.items(), *others]:
                for device in [None, "cpu", "emulator", xp.Device("cpu"),
                               xp.Device("emulator"), "cuda", "cuda:0", "gpu", "CPU", 0]:
                    direct = _outcome(lambda: xp.asarray(h, device=device))
                    full = _outcome(lambda: xp.asarray.__wrapped__(h, device=device))
                    assert direct == full, (dtype, layout, device)
                    if len(direct) > 2 and direct[-1] in ("cpu", "emulator"):  # (a GPU's:
                        # a copy, under the CuPy stand-in too)
                        assert np.shares_memory(xp.asarray(h, device=device)._a, h) == \
                            np.shares_memory(xp.asarray.__wrapped__(h, device=device)._a, h)
                        # both read the device through _on_cpu: its answer, against the
                        # Device's own
                        assert direct[-1] == (xp.Device(backend == "numpy" and "cpu"
                                                        or "emulator") if device is None
                                              else device)


def test_the_cpu_devices_are_read_as_devices_parse_reads_them():
    for device in ["cpu", "emulator", devices.CPU, devices.EMULATOR, xp.Device("cpu"),
                   xp.Device("emulator")]:
        parsed = devices.parse(device)
        assert boundary._on_cpu(device) == (parsed.backend, parsed.native()), device
    for other in ["cuda", "cuda:0", xp.Device("cuda", 0), "CPU", "gpu", 0, None, b"cpu"]:
        assert boundary._on_cpu(other) == (None, None), other


def _written(x, key, value):
    """(the bits of ``x`` after ``x[key] = value``, the warnings) or (exception type,
    message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            x[key] = value
        except Exception as e:  # noqa: BLE001 - the exception is the outcome
            return type(e), str(e)
    return x._a.tobytes(), [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("dtype", _DTYPES)
def test_setitem_of_a_python_scalar_answers_as_the_general_path(dtype):
    """``x[k] = v`` for one slice or int ``k`` and a real Python scalar ``v`` on ``cpu`` takes
    a shorter way (array.py); ``x[(k,)] = v``, the same write, takes the general one."""
    rng = np.random.default_rng(23)
    for layout, h in _layouts(rng, dtype).items():
        for key in [slice(0, 4), slice(None), slice(None, None, -2), slice(2, 1), 0, -1, 5,
                    100, -100]:
            for value in [1.0, -1, 0, True, False, 1.5, 300, -129, 70000, 2**64, -2**63,
                          1e300, -1e300, float("nan"), float("inf")]:
                short, general = (xp.asarray(h.copy(), device="cpu") for _ in range(2))
                assert _written(short, key, value) == _written(general, (key,), value), (
                    layout, key, value)
    readonly = h.copy()
    readonly.flags.writeable = False
    short, general = (xp.asarray(readonly, device="cpu") for _ in range(2))
    assert _written(short, 0, 1) == _written(general, (0,), 1)
    assert _written(short, 0, 1)[0] is ValueError  # read-only


@pytest.mark.parametrize("dtype", _DTYPES)
def test_repeat_tile_and_roll_answer_as_the_full_call(dtype):
    rng = np.random.default_rng(29)
    count = xp.asarray(2, device="cpu")
    for layout, h in _layouts(rng, dtype).items():
        x = xp.asarray(h, device="cpu")
        for repeats in (0, 1, 2, -1, True, 2.0, np.int64(2), count, None):
            for axis in (None, 0, 1, 2, -1, -3, 3, -4, True, 1.0, np.int64(0), (0,)):
                _agrees("repeat", x, repeats, axis=axis)
        for repetitions in [(2, 1), (), (1,), (0, 2), (2, 1, 1, 1), (1, 1, 1), (-1,), (2, -1),
                            2, [2, 1], (True,), (2.0,), (np.int64(2),), None]:
            _agrees("tile", x, repetitions)
        for shift in (0, 3, -1, 100, -100, True, 1.0, np.int64(2), (1,), [1, 2], None):
            for axis in (None, 0, -1, 3, (0, 1), True):
                _agrees("roll", x, shift, axis=axis)
    swapped = wrap(np.zeros((2, 3), np.dtype(np.float32).newbyteorder()), "numpy")
    for _ in range(2):  # the dtype's refusal is never remembered as a pass
        for call in (lambda: xp.repeat(swapped, 2), lambda: xp.tile(swapped, (2,)),
                     lambda: xp.roll(swapped, 1),
                     lambda: xp.concat([swapped, swapped]), lambda: xp.stack([swapped])):
            with pytest.raises(TypeError, match="supports boolean and numeric"):
                call()


# ---- the delegated functions (namespace/cpu_direct_delegated.py)

def _warned(call):
    """``_outcome`` and the warnings raised on the way (category, message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = _outcome(call)
    return outcome, [(w.category, str(w.message)) for w in caught]


def _agrees_warned(name, *args, **kwargs):
    """The public call and its full call agree, warnings included."""
    public = getattr(xp, name)
    direct = _warned(lambda: public(*args, **kwargs))
    full = _warned(lambda: public.__wrapped__(*args, **kwargs))
    assert direct == full, (name, args, kwargs)
    return direct[0]


_REDUCTION_AXES = [*_AXES, (), (0, 1, 2), (2, 0), (-1, 0)]
_KEEPDIMS = [False, True, 1, None, np.True_]


def _values(rng, dtype):
    """_layouts, and layouts of few distinct values: ties, and signed zeros (equal keys of
    other bits, which a sort that is not stable may reorder)."""
    layouts = _layouts(rng, dtype)
    held = dtype if dtype != "bfloat16" else np.float32
    with np.errstate(all="ignore"):
        layouts["ties"] = rng.integers(-2, 3, (4, 6)).astype(held)
        layouts["signed zeros"] = rng.choice([-0.0, 0.0, 1.0], (3, 200)).astype(held)
    if dtype == "bfloat16":
        for name in ("ties", "signed zeros"):
            layouts[name] = layouts[name].astype(dtypes.BFLOAT16)
    return layouts


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the cast of NaN to the dtypes
@pytest.mark.parametrize("dtype", _DTYPES)
def test_reductions_answer_as_the_full_call(dtype):
    rng = np.random.default_rng(31)
    for layout, h in _values(rng, dtype).items():
        x = xp.asarray(h, device="cpu")
        for axis in _REDUCTION_AXES:
            for keepdims in _KEEPDIMS:
                for name in ("max", "min", "argmax", "argmin", "any", "all", "mean"):
                    _agrees_warned(name, x, axis=axis, keepdims=keepdims)
                for name in ("sum", "prod"):
                    for dtype_arg in (None, xp.float64, xp.int8, xp.uint64):
                        _agrees_warned(name, x, axis=axis, dtype=dtype_arg, keepdims=keepdims)
        for name in ("sum", "prod", "mean"):  # dtypes of other kinds, NumPy's keywords
            for dtype_arg in (np.float32, "float32", 3, xp.bool, xp.complex64):
                _agrees_warned(name, x, dtype=dtype_arg)
        for name in ("any", "all"):
            _agrees_warned(name, x, out=xp.empty((), dtype=xp.bool, device="cpu"))
            _agrees_warned(name, x, out=None)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_std_and_var_answer_as_the_full_call(dtype):
    rng = np.random.default_rng(37)
    for layout, h in _values(rng, dtype).items():
        x = xp.asarray(h, device="cpu")
        for axis in (None, 0, 1, -1, -3, 3, (0,), (0, 1), True, 1.0):
            for correction in (0, 1, 1.5, 6, 8, 100, -1, True, np.float64(1.0), float("nan")):
                for keepdims in (False, True, 1):
                    for name in ("std", "var"):
                        _agrees_warned(name, x, axis=axis, correction=correction,
                                       keepdims=keepdims)
        for name in ("std", "var"):  # NumPy's keywords: the full way
            _agrees_warned(name, x, ddof=1)
            _agrees_warned(name, x, correction=1, ddof=2)
            _agrees_warned(name, x, dtype=xp.float64)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("dtype", _DTYPES)
def test_cumulative_functions_answer_as_the_full_call(dtype):
    rng = np.random.default_rng(41)
    for layout, h in _values(rng, dtype).items():
        x = xp.asarray(h, device="cpu")
        for axis in (None, 0, 1, 2, -1, -3, 3, -4, True, 1.0, np.int64(0), (0,)):
            for dtype_arg in (None, xp.float64, xp.int8, xp.uint64, np.float32, "float32"):
                for include_initial in (False, True, 0):
                    for name in ("cumulative_sum", "cumulative_prod"):
                        _agrees_warned(name, x, axis=axis, dtype=dtype_arg,
                                       include_initial=include_initial)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_sorting_answers_as_the_full_call(dtype):
    rng = np.random.default_rng(43)
    for layout, h in _values(rng, dtype).items():
        x = xp.asarray(h, device="cpu")
        for axis in (-1, 0, 1, 2, 3, -4, None, 1.0, True, np.int64(0)):
            for descending in (False, True, 0):
                for stable in (True, False, None, 1):
                    for name in ("sort", "argsort"):
                        r = _agrees_warned(name, x, axis=axis, descending=descending,
                                           stable=stable)
                        if name == "sort" and len(r) > 2:  # a new array, never x's memory
                            assert not np.shares_memory(
                                xp.sort(x, axis=axis, descending=descending,
                                        stable=stable)._a, h)
        _agrees_warned("nonzero", x)


def test_sort_of_integers_keeps_the_stable_sorts_answer():
    """A stable sort of integers of two bytes or more takes NumPy's default sort (the same
    array); bools and bytes, and argsort, keep the stable one."""
    h = np.random.default_rng(47).integers(-3, 3, (40, 50))
    for dtype in ("bool", "int8", "uint8", "int16", "uint32", "int64"):
        a = h.astype(dtype)
        x = xp.asarray(a, device="cpu")
        for axis in (0, 1, -1):
            assert np.array_equal(xp.sort(x, axis=axis)._a, np.sort(a, axis=axis, kind="stable"))
            assert np.array_equal(xp.argsort(x, axis=axis)._a,
                                  np.argsort(a, axis=axis, kind="stable"))


@pytest.mark.parametrize("dtype", _DTYPES)
def test_indexing_and_searching_answer_as_the_full_call(dtype):
    rng = np.random.default_rng(53)
    layouts = _values(rng, dtype)
    for layout, h in layouts.items():
        x = xp.asarray(h, device="cpu")
        n = max(h.shape, default=1)
        indices = [rng.integers(0, 2, 5), rng.integers(-n, n, (3, 2)), np.array(1),
                   np.array([], np.int64), np.array([n + 5]), np.array([-n - 5]),
                   rng.integers(0, 2, 3).astype(np.uint8), np.array([True, False]),
                   np.array([0.0, 1.0]), np.zeros(h.shape, np.int64),
                   np.zeros(h.shape[:-1] + (2,), np.intp)]
        for i in indices:
            for held in (xp.asarray(i, device="cpu"), xp.asarray(i, device="emulator"), i,
                         i.tolist(), 1):
                for axis in (None, 0, 1, -1, 2, 3, -4, 1.0, True, np.int64(0)):
                    _agrees_warned("take", x, held, axis=axis)
                for axis in (-1, 0, 1, 2, 3, None, 1.0, True):
                    _agrees_warned("take_along_axis", x, held, axis=axis)
        sorted_values = xp.asarray(np.sort(h.ravel()), device="cpu")
        for x1 in (sorted_values, x):
            for x2 in (x, sorted_values, xp.asarray(np.zeros((), h.dtype), device="cpu"),
                       xp.asarray(np.arange(3, dtype=np.int16), device="cpu"),
                       xp.asarray(h, device="emulator"), h, 0.5):
                for side in ("left", "right", "middle", None):
                    _agrees_warned("searchsorted", x1, x2, side=side)
            order = xp.asarray(np.argsort(x1._a.ravel()), device="cpu")
            _agrees_warned("searchsorted", x1, x, sorter=order)
        for n_arg in (1, 2, 0, -1, 10, 1.0, True):
            for axis in (-1, 0, 1, 2, -3, 3, -4, None, 1.0):
                _agrees_warned("diff", x, n=n_arg, axis=axis)
        _agrees_warned("diff", x, prepend=x)
        if h.ndim:
            _agrees_warned("diff", x, append=xp.asarray(h[..., :1], device="cpu"))
        assert xp.diff(x, n=0) is x or xp.diff(x, n=0) is xp.diff.__wrapped__(x, n=0)


class _FullCall(Exception):
    """Raised by a full call that must not be made."""


def _no_full_call(*args, **kwargs):
    raise _FullCall(args, kwargs)


def test_common_arguments_take_the_direct_call():
    """Arguments of the common kinds on ``cpu`` Arrays never reach the full call."""
    rng = np.random.default_rng(59)
    h = rng.standard_normal((6, 8)).astype(np.float32)
    x = xp.asarray(h, device="cpu")
    ints = xp.asarray(rng.integers(0, 6, (6, 2)), device="cpu")
    sorted_row = xp.asarray(np.sort(h[0]), device="cpu")

    def direct(name):
        return cpu_direct_delegated.DIRECT[name](_no_full_call)

    for name in ("max", "min", "argmax", "argmin", "any", "all", "mean", "sum", "prod"):
        for axis in (None, 0, -1):
            for keepdims in (False, True):
                direct(name)(x, axis=axis, keepdims=keepdims)
        if name not in ("argmax", "argmin"):
            direct(name)(x, axis=(0, 1))
    for name in ("sum", "prod"):
        direct(name)(x, axis=1, dtype=xp.float64)
    for name in ("std", "var"):
        direct(name)(x, axis=0, correction=1, keepdims=True)
        direct(name)(x, correction=1.5)
    for name in ("cumulative_sum", "cumulative_prod"):
        direct(name)(x, axis=1)
        direct(name)(sorted_row)
        direct(name)(xp.asarray(2.0, device="cpu"), dtype=xp.float32)
    for name in ("sort", "argsort"):
        direct(name)(x, axis=0, stable=False)
        direct(name)(x)
    direct("nonzero")(x)
    direct("take")(x, ints[:, 0], axis=0)
    direct("take_along_axis")(x, ints, axis=1)
    direct("searchsorted")(sorted_row, x, side="right")
    direct("diff")(x, n=2, axis=0)
    with pytest.raises(_FullCall):  # another device: the full way
        direct("sum")(xp.asarray(h, device="emulator"))
