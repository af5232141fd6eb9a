"""The cuda launcher's compile: our own NVRTC options (no flush-to-zero, no FMA contraction,
so the GPU computes what the emulator computes) and the architecture it compiles for.
Compiles run through NVRTC without a GPU; loading and launching are tested against the
stand-in for CuPy in test_cuda_launcher.py."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("cupy")

import infini_cupy as xp  # noqa: E402
from infini_cupy.elementwise import kernels as ek  # noqa: E402
from infini_cupy.runtime import nvrtc  # noqa: E402

FLOAT_KERNELS = [ek.contig_name("ic::OpMultiply", "float", "float"),
                 ek.contig_name("ic::OpAdd", "float", "float"),
                 ek.contig_name("ic::OpNextafter", "float", "float")]


def _float_instructions(ptx: str) -> list[str]:
    return [line.split()[0] for line in ptx.splitlines()
            if line.strip() and line.split()[0].endswith(".f32")]


def test_run_time_options_keep_subnormals_and_exact_rounding():
    assert "-ftz=false" in nvrtc.NVRTC_OPTIONS and "-fmad=false" in nvrtc.NVRTC_OPTIONS
    ptx = nvrtc.compile_ptx(ek.SOURCE, FLOAT_KERNELS, "sm_90").ptx
    ops = _float_instructions(ptx)
    assert ops and not [op for op in ops if ".ftz" in op], ops
    assert not [op for op in ops if op.startswith("fma.")], ops  # no contraction of a*b+c
    # What CuPy's RawModule would add: the check above can see it.
    flushed = nvrtc.compile_ptx(ek.SOURCE, FLOAT_KERNELS, "sm_90", ("-ftz=true",)).ptx
    assert [op for op in _float_instructions(flushed) if ".ftz" in op]


def test_cubin_for_known_architectures_ptx_for_newer_ones():
    supported = [int(a) for a in nvrtc.load_nvrtc().getSupportedArchs()]
    assert nvrtc.arch_for(supported[-1]) == f"sm_{supported[-1]}"
    assert nvrtc.arch_for(supported[-1] + 1) == f"compute_{supported[-1]}"
    with pytest.raises(RuntimeError, match=f"sm_{supported[0] - 1}, older than"):
        nvrtc.arch_for(supported[0] - 1)
    program = nvrtc.compile_program("rearrange.cu", ["rearrange<4, 1, 1, 0>"], "sm_90")
    assert program.binary[:4] == b"\x7fELF"  # a cubin
    program = nvrtc.compile_program("rearrange.cu", ["rearrange<4, 1, 1, 0>"], "compute_90")
    assert program.binary.startswith(b"//") and b".entry" in program.binary  # PTX


def test_float32_subnormals_survive(to_device, to_host):
    """On a GPU this fails if the kernels were compiled with -ftz=true (CuPy's default)."""
    zero, one = to_device(np.zeros(4, np.float32)), to_device(np.ones(4, np.float32))
    tiny = np.float32(np.finfo(np.float32).smallest_subnormal)
    np.testing.assert_array_equal(to_host(xp.nextafter(zero, one)), np.full(4, tiny))
    halves = to_device(np.full(4, tiny * 4, np.float32))
    np.testing.assert_array_equal(to_host(xp.multiply(halves, 0.5)), np.full(4, tiny * 2))


def test_packed_arguments_hold_structs_of_any_size():
    """The emulator's parameter buffer (cuLaunchKernel's layout): each pointer leads to the
    argument's exact bytes, structs of 512 bytes included."""
    import ctypes

    from infini_cupy.runtime.structs import SLOT, argument_bytes, array_struct, pack_arguments
    from infini_cupy.strided.plan_cache import TILE_LAYOUT

    rng = np.random.default_rng(0)
    args = [array_struct(rng.integers(-2**62, 2**62, 64)), np.zeros((), TILE_LAYOUT)[()],
            np.int32(-7), np.float64(0.1), np.bool_(True)]
    values = [argument_bytes(a, pointer=None) for a in args]
    assert [len(v) for v in values] == [512, TILE_LAYOUT.itemsize, 4, 8, 1]
    storage, pointers, address = pack_arguments(values)
    assert address == ctypes.addressof(pointers)
    for pointer, value in zip(pointers, values):
        assert pointer % SLOT == 0 and ctypes.string_at(pointer, len(value)) == value
