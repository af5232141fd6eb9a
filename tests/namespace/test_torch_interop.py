"""Arrays and PyTorch (CPU) tensors across DLPack, both ways: every dtype both hold, every
layout torch makes (transposed, sliced with a step, expanded with 0 strides, 0-d, 0-size),
memory shared where no copy is asked for, ``copy=True`` independent, torch's refusals as
torch raises them. bfloat16: tests/namespace/test_dlpack_bfloat16.py."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import infini_cupy as xp
from tests.support.torch_cpu import import_torch

DEVICES = ("cpu", "emulator")
# the dtypes both libraries hold, by name (torch's unsigned ints past 8 bits included)
NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64", "complex64", "complex128")


@pytest.fixture(scope="module")
def torch():
    return import_torch()


def _random(name, shape, rng):
    return np.asarray(_random_values(name, shape, rng))  # 0-d: an array, not a scalar


def _random_values(name, shape, rng):
    h = rng.standard_normal(shape) * 50
    if name == "bool":
        return h > 0
    if name.startswith("complex"):
        return (h + 1j * rng.standard_normal(shape)).astype(name)
    if name.startswith("uint"):
        return np.abs(h).astype(name)
    return h.astype(name)


def _layouts(base):
    """Views of a 4x6 (or bigger) tensor or array, as ``(label, view)``."""
    return [("contiguous", base), ("transposed", base.T), ("stepped", base[1:, ::2]),
            ("column", base[:, 2]), ("0-d", base[1, 3]), ("0-size", base[:0])]


def _host(a):
    return np.asarray(xp.to_device(a, "cpu"))


def _writable_once(view) -> bool:
    """Whether each element of ``view`` is a distinct place in memory with one to write."""
    return view.numel() > 0 if hasattr(view, "numel") else view.size > 0


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_a_tensor_comes_in_as_an_array_of_its_memory(torch, device, name):
    rng = np.random.default_rng(len(name) * 7 + len(device))
    base = torch.from_numpy(_random(name, (5, 6), rng))
    for label, t in _layouts(base) + [("expanded", base[:, :1].expand(5, 4))]:
        expected = t.numpy().copy()
        a = xp.from_dlpack(t, device=device)
        assert a.device == device and a.dtype == np.dtype(name), label
        assert a.shape == tuple(t.shape), label
        np.testing.assert_array_equal(_host(a), expected, err_msg=label)
        copied = xp.from_dlpack(t, device=device, copy=True)
        np.testing.assert_array_equal(_host(copied), expected, err_msg=label)
        if label == "expanded" or not _writable_once(t):
            continue
        new = _random(name, t.shape, rng)
        copied[...] = xp.asarray(new, device=device)  # the copy alone changes
        np.testing.assert_array_equal(t.numpy(), expected, err_msg=label)
        a[...] = xp.asarray(new, device=device)  # written through: torch sees it
        np.testing.assert_array_equal(t.numpy(), new, err_msg=label)
        for shared in (xp.from_dlpack(t, device=device, copy=False), xp.asarray(t, copy=False)):
            np.testing.assert_array_equal(_host(shared), new, err_msg=label)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", NAMES)
def test_an_array_goes_out_as_a_tensor_of_its_memory(torch, device, name):
    """torch takes an Array's layout as it is (strides in elements); no negative strides:
    torch 2.13's from_dlpack aborts the process on one (docs/user/interop.md)."""
    rng = np.random.default_rng(len(name) * 11 + len(device))
    base = xp.asarray(_random(name, (5, 6), rng), device=device)
    for label, a in _layouts(base) + [("broadcast", xp.broadcast_to(base[:, :1], (5, 4)))]:
        expected = _host(a).copy()
        t = torch.from_dlpack(a)
        assert str(t.dtype) == f"torch.{name}" and tuple(t.shape) == a.shape, label
        np.testing.assert_array_equal(t.numpy(), expected, err_msg=label)
        itemsize = np.dtype(name).itemsize
        assert tuple(t.stride()) == tuple(s // itemsize for s in _host(a).strides), label
        if label == "broadcast" or a.size == 0:
            continue
        new = _random(name, a.shape, rng)
        t.copy_(torch.from_numpy(new))  # written through: the Array sees it
        np.testing.assert_array_equal(_host(a), new, err_msg=label)


@pytest.mark.parametrize("device", DEVICES)
def test_generic_code_takes_tensors_in_and_gives_them_back(torch, device):
    """The round trip a user writes: tensors in, the namespace's functions, a tensor out, the
    values NumPy computes from the same data."""
    rng = np.random.default_rng(12)
    t = torch.from_numpy(rng.standard_normal((6, 5)).astype(np.float32))
    u = torch.from_numpy(rng.standard_normal(5).astype(np.float32))
    x, y = xp.from_dlpack(t, device=device), xp.from_dlpack(u, device=device)
    result = torch.from_dlpack(xp.exp(x.T) * y[:, None] - 1.0)
    expected = np.exp(t.numpy().T) * u.numpy()[:, None] - np.float32(1.0)
    np.testing.assert_allclose(result.numpy(), expected, rtol=2e-6)
    assert result.dtype == torch.float32


@pytest.mark.parametrize("device", DEVICES)
def test_tensors_torch_will_not_export_are_its_buffer_errors(torch, device):
    t = torch.ones(3, requires_grad=True)
    with pytest.raises(BufferError, match="require gradient"):
        xp.from_dlpack(t, device=device)
    with pytest.raises(BufferError, match="conjugate bit"):
        xp.from_dlpack(torch.tensor([1 + 2j, 3j]).conj(), device=device)
    # resolved first, the same values come in
    got = xp.from_dlpack(torch.tensor([1 + 2j, 3j]).conj().resolve_conj(), device=device)
    np.testing.assert_array_equal(_host(got), [1 - 2j, -3j])


@pytest.mark.parametrize("device", DEVICES)
def test_asarray_takes_a_tensor_through_dlpack(torch, device):
    """``xp.asarray`` of a tensor: its memory (``copy=None``/``False``), one copy
    (``copy=True``), a cast (``dtype=``); what torch will not export a TypeError naming it."""
    rng = np.random.default_rng(13)
    h = rng.standard_normal((3, 4))
    t = torch.from_numpy(h.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy DeprecationWarning about torch's __array__
        shared, unshared = xp.asarray(t, device=device), xp.asarray(t, device=device, copy=True)
        cast = xp.asarray(t, dtype=xp.float32, device=device)
    np.testing.assert_array_equal(_host(cast), h.astype(np.float32))
    unshared[...] = 0.0
    np.testing.assert_array_equal(t.numpy(), h)
    shared[...] = 1.0
    assert bool((t == 1.0).all())
    with pytest.raises(ValueError, match="copy"):
        xp.asarray(t, dtype=xp.float32, device=device, copy=False)
    with pytest.raises(TypeError, match="asarray: Tensor input: .*require gradient"):
        xp.asarray(torch.ones(2, requires_grad=True), device=device)
