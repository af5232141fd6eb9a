"""bfloat16 arrays through rearrange: every plan kind (staged tiled transpose, the seed
planner's block/grid matrix, the flat-index general kernel) and every layout class, bit for
bit (NaN payloads included: a copy moves bytes, 2 at a time or in wider units).

The planner sees only the item size, so bfloat16 shares float16's 2-byte kernels; these tests
make sure a kind-'V' dtype (ml_dtypes') gets there at all and comes back unchanged.
"""

from __future__ import annotations

import contextlib

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

import infini_cupy as xp  # noqa: E402
from infini_cupy.runtime.launch import recording  # noqa: E402
from infini_cupy.strided.plan_cache import coalescing_plans, seed_plans_only  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)


def _bits(rng, shape) -> np.ndarray:
    """Random bfloat16 bit patterns: NaNs with payloads, infinities and subnormals included."""
    return rng.integers(0, 2**16, shape, dtype=np.uint32).astype(np.uint16).view(BF16)


def _same_bits(actual, expected):
    assert actual.dtype == BF16 and actual.shape == expected.shape
    np.testing.assert_array_equal(np.ascontiguousarray(actual).view(np.uint16),
                                  np.ascontiguousarray(expected).view(np.uint16))


_GENERAL_SHAPE = (3, 5, 3, 5, 3, 5, 3)


def _general_view(rng):
    """A permutation of 7 dims that cannot merge: past the matrix's 5 block/grid dims."""
    return _bits(rng, _GENERAL_SHAPE[::-1]).transpose()


PLANS = [  # (what, view maker, kernel the plan launches)
    ("tiled transpose", lambda rng: _bits(rng, (96, 130)).T, "tiled_copy<"),
    ("NCHW -> NHWC", lambda rng: _bits(rng, (2, 16, 9, 33)).transpose(0, 2, 3, 1), "tiled_copy<"),
    ("seed matrix, reversed and strided (seed plans)", lambda rng: _bits(rng, (40, 64))[::-1, ::2], "rearrange<"),
    ("packed tiles, 7 dims (coalescing plans)", _general_view, "packed_copy<2"),
    ("general kernel, 7 dims (seed plans)", _general_view, "rearrange_general<2, "),
]


@pytest.mark.parametrize("what,make,kernel", PLANS, ids=[p[0] for p in PLANS])
def test_every_plan_copies_bfloat16_bits(what, make, kernel, to_device, to_host):
    x = make(np.random.default_rng(3))
    rule = (seed_plans_only() if "seed plans" in what else
            coalescing_plans() if "coalescing plans" in what else contextlib.nullcontext())
    with rule, recording() as launches:
        y = xp.rearrange(to_device(x))
    assert [r.name for r in launches if r.name.startswith(kernel)], (what, [r.name for r in launches])
    _same_bits(to_host(y), x)


LAYOUTS = [  # (what, source view, destination maker)
    ("contiguous", lambda b: b[:48], lambda n: np.empty(n.shape, BF16)),
    ("offset by one element", lambda b: b[1:49], lambda n: np.empty(n.shape, BF16)),
    ("strided", lambda b: b[:96:2].reshape(6, 8), lambda n: np.empty(n.shape, BF16)),
    ("transposed into transposed", lambda b: b[:96].reshape(8, 12).T,
     lambda n: np.empty(n.shape[::-1], BF16).T),
    ("broadcast", lambda b: np.broadcast_to(b[:7], (5, 7)), lambda n: np.empty(n.shape, BF16)),
    ("negative strides", lambda b: b[:120].reshape(10, 12)[::-1, ::-3],
     lambda n: np.empty((n.shape[0], 2 * n.shape[1]), BF16)[:, ::2]),
    ("4-d permuted", lambda b: b[:240].reshape(2, 3, 5, 8).transpose(3, 1, 0, 2),
     lambda n: np.empty(n.shape, BF16)),
    ("0-d", lambda b: b[5:6].reshape(()), lambda n: np.empty((), BF16)),
]


@pytest.mark.parametrize("what,src,dst", LAYOUTS, ids=[lay[0] for lay in LAYOUTS])
def test_rearrange_into_every_layout_class(what, src, dst, to_device, to_host):
    buffer = _bits(np.random.default_rng(5), (256,))
    x = src(buffer)
    y = to_device(dst(x))
    assert xp.rearrange_(y, to_device(x)) is y
    _same_bits(to_host(y), x)
    _same_bits(to_host(xp.rearrange(to_device(x))), x)


def test_data_movement_keeps_bfloat16(to_device, to_host):
    rng = np.random.default_rng(9)
    a, b = _bits(rng, (3, 4)), _bits(rng, (2, 4))
    _same_bits(to_host(xp.concat([to_device(a), to_device(b)])), np.concatenate([a, b]))
    _same_bits(to_host(xp.stack([to_device(a), to_device(a)], axis=1)), np.stack([a, a], axis=1))
    _same_bits(to_host(xp.roll(to_device(a), 2, axis=1)), np.roll(a, 2, axis=1))
    _same_bits(to_host(xp.tile(to_device(a), (2, 1))), np.tile(a, (2, 1)))
    _same_bits(to_host(xp.rearrange(to_device(a), "h w -> (w h)")), a.T.reshape(-1))


def test_concat_promotes_bfloat16_with_float16_to_float32(backend_name, to_device, to_host):
    a = np.array([1.5, -2.0], BF16)
    h = np.array([0.25], np.float16)
    got = to_host(xp.concat([to_device(a), to_device(h)]))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array([1.5, -2.0, 0.25], np.float32))
