"""Nothing lost silently: masked and unit-carrying arrays are refused with a TypeError naming
the type and what to do, plain-buffer subclasses (``numpy.memmap``) work, and a read-only
``out=`` is refused as read-only, naming the function, on every device."""

from __future__ import annotations

import numpy as np
import pytest

import infini_cupy as xp

DEVICES = ("cpu", "emulator")


class Quantity(np.ndarray):
    """A unit-carrying subclass, as astropy's Quantity is."""

    unit = "m"


def masked():
    return np.ma.masked_array([1.0, 4.0, 9.0], mask=[0, 1, 0])


def with_unit():
    return np.asarray([1.0, 4.0, 9.0]).view(Quantity)


CALLS = {
    "asarray": lambda a: xp.asarray(a),
    "sqrt": lambda a: xp.sqrt(a),
    "add": lambda a: xp.add(1.0, a),
    "clip": lambda a: xp.clip(a, 0, 1),
    "sum": lambda a: xp.sum(a),
    "reshape": lambda a: xp.reshape(a, (3, 1)),
    "concat": lambda a: xp.concat([a, a]),
    "astype": lambda a: xp.astype(a, xp.float32),
    "rearrange": lambda a: xp.rearrange(a, "a -> a"),
}


@pytest.mark.parametrize("device", ("numpy", "emulate"))
@pytest.mark.parametrize("call", sorted(CALLS))
def test_masked_arrays_are_refused(call, device):
    with xp.backend(device):
        with pytest.raises(TypeError, match=r"numpy\.ma\.MaskedArray.*filled\(value\).*np\.asarray"):
            CALLS[call](masked())


@pytest.mark.parametrize("call", ("asarray", "sqrt", "sum"))
def test_unit_carrying_arrays_are_refused(call):
    with pytest.raises(TypeError, match=r"Quantity, whose unit would be lost"):
        CALLS[call](with_unit())


@pytest.mark.parametrize("device", DEVICES)
def test_masked_operand_of_an_array_operator_is_refused(device):
    x = xp.asarray([1.0, 2.0, 3.0], device=device)
    with pytest.raises(TypeError, match=r"add\(\): got a numpy\.ma\.MaskedArray"):
        x + masked()
    assert np.array_equal(np.asarray(xp.sqrt(xp.asarray(masked().filled(0.0), device=device))
                                     .to_device("cpu")), [1.0, 0.0, 3.0])


@pytest.mark.parametrize("device", ("numpy", "emulate"))
def test_memmap_keeps_working(tmp_path, device):
    mm = np.memmap(tmp_path / "a.dat", dtype=np.float32, mode="w+", shape=(4,))
    mm[:] = [1, 4, 9, 16]
    with xp.backend(device):
        assert np.array_equal(xp.sqrt(mm), [1, 2, 3, 4])
        assert float(xp.sum(xp.asarray(mm))) == 30.0
        out = np.memmap(tmp_path / "b.dat", dtype=np.float32, mode="w+", shape=(4,))
        xp.multiply(mm, 2, out=out)
        assert np.array_equal(out, [2, 8, 18, 32])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("make_out", ("broadcast_to", "read_only_flag"))
def test_read_only_out_is_refused_naming_the_function(device, make_out):
    x = xp.asarray(np.arange(6.0).reshape(2, 3), device=device)
    if make_out == "broadcast_to":
        out = xp.broadcast_to(xp.asarray(np.zeros(3), device=device), (2, 3))
    else:
        host = np.zeros((2, 3))
        host.flags.writeable = False
        out = xp.asarray(host, device=device)
    for call in (lambda: xp.add(x, 1.0, out=out), lambda: xp.exp(x, out=out)):
        with pytest.raises(ValueError, match=r"^(add|exp)\(\): out .*is read-only"):
            call()


@pytest.mark.parametrize("device", DEVICES)
def test_out_of_another_dtype_takes_the_result_by_same_kind_casting(device):
    x = xp.asarray(np.arange(4, dtype=np.float32), device=device)
    out = xp.asarray(np.zeros(4, np.float16), device=device)
    xp.add(x, 0.5, out=out)  # float32 into float16: same kind
    assert np.array_equal(np.asarray(out.to_device("cpu")), np.arange(4) + 0.5)
    wrong = xp.asarray(np.zeros(4, np.int32), device=device)
    with pytest.raises(TypeError, match=r"add\(\): the result of dtype float32 cannot be cast "
                                        r"into out of dtype int32"):
        xp.add(x, 0.5, out=wrong)
