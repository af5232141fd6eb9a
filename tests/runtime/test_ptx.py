"""What the GPU would run, read from the PTX NVRTC emits and ptxas's report (no GPU needed):
contiguous elementwise kernels move 16 bytes per global access, no kernel spills registers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from infini_cupy import dtypes, variants
from infini_cupy.elementwise import kernels as ek
from infini_cupy.elementwise.ops import OPS
from infini_cupy.elementwise.resolution import loop_dtypes, result_of_loop
from infini_cupy.strided.seed_planner import rearrange_kernel_name

pytest.importorskip("cupy")
from tests.support import nvrtc_programs  # noqa: E402  (needs cupy)

ARCH = "sm_90"
_ACCESS = re.compile(r"\b(ld|st)\.global(?:\.nc)?(?:\.v(\d))?\.[a-z]+?(\d+)\b")


def _entry_bodies(source: str, names, arch: str = ARCH) -> dict[str, str]:
    """Name expression -> PTX text of its kernel (programs shared with the NVRTC checks)."""
    return nvrtc_programs.kernel_bodies(nvrtc_programs.programs(source, names, arch), set(names))


def _access_bytes(body: str, kind: str) -> set[int]:
    """Sizes in bytes of the global loads (kind "ld") or stores ("st") of a kernel."""
    return {int(vector or 1) * int(bits) // 8
            for op, vector, bits in _ACCESS.findall(body) if op == kind}


def _contiguous_sample() -> dict[str, tuple[int, int]]:
    """Contiguous variants -> (input, output) element sizes: every input dtype through add (or
    logical_and for bool), comparisons (bool out), a transcendental, casts both ways."""
    sample = {}
    for dtype in dtypes.ALL_DTYPES:
        for op_name in ("add", "logical_and", "less", "exp", "abs"):
            op = OPS[op_name]
            if dtype in loop_dtypes(op.name):
                out = result_of_loop(op.name, dtype)
                name = ek.contig_name(op.functor, dtypes.ctype(out), dtypes.ctype(dtype))
                sample[name] = (np.dtype(dtype).itemsize, np.dtype(out).itemsize)
                break
    for src, dst in (("int8", "float64"), ("float64", "int8"), ("float16", "complex128")):
        name = ek.contig_name(ek.CAST_FUNCTOR, dtypes.ctype(dst), dtypes.ctype(src))
        sample[name] = (np.dtype(src).itemsize, np.dtype(dst).itemsize)
    assert set(sample) <= set(ek.all_names())
    return sample


def test_contiguous_elementwise_moves_16_bytes_per_access():
    sample = _contiguous_sample()
    bodies = _entry_bodies(ek.SOURCE, list(sample))
    for name, (in_size, out_size) in sample.items():
        vec = max(1, 16 // max(in_size, out_size))  # VecWidth in elementwise.cu
        loads, stores = _access_bytes(bodies[name], "ld"), _access_bytes(bodies[name], "st")
        # the vector loop, then the scalar tail
        assert max(loads) == vec * in_size and max(stores) == vec * out_size, (name, loads, stores)
        assert 16 in (max(loads), max(stores)), name
    float_add = bodies[ek.contig_name("ic::OpAdd", "float", "float")]
    assert "ld.global.v4.f32" in float_add and "st.global.v4.f32" in float_add


# What spills, in bytes (stores, loads) at most: the tiled kernels of complex128 pow, sin and
# sinh (eight items a thread, each tens of registers of double math: compute-bound kernels,
# whose spills stay in L1), complex64 pow's, and libdevice's slow path of double sin/cos for
# huge arguments (NVIDIA's code). A new spill, or a bigger one, fails.
KNOWN_SPILLS = {
    "ew_tiled_out<ic::OpPow, ic::complex<double>, ic::complex<double>>": (472, 648),
    "ew_tiled<ic::OpPow, ic::complex<double>, ic::complex<double>, 0>": (60, 60),
    "ew_tiled<ic::OpPow, ic::complex<double>, ic::complex<double>, 1>": (60, 68),
    "ew_tiled<ic::OpPow, ic::complex<float>, ic::complex<float>, 0>": (4, 4),
    "ew_tiled_out<ic::OpSin, ic::complex<double>, ic::complex<double>>": (16, 16),
    "ew_tiled_out<ic::OpSinh, ic::complex<double>, ic::complex<double>>": (16, 16),
    "__internal_trig_reduction_slowpathd": (8, 8),
}
_PROPERTIES = re.compile(r"Function properties for (\S+)\n.*?(\d+) bytes stack frame, "
                         r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def spills(programs) -> dict[str, tuple[int, int]]:
    """Function (name expression of a kernel, else its symbol) -> (spill store bytes, spill
    load bytes), of every function that spills, from ptxas's report in the programs' logs."""
    found = {}
    for program in programs:
        named = {symbol: name for name, symbol in program.lowered_names.items()}
        for symbol, _, stores, loads in _PROPERTIES.findall(program.log):
            if stores != "0" or loads != "0":
                name = named.get(symbol, symbol)
                found[name] = tuple(map(max, zip(found.get(name, (0, 0)), (int(stores), int(loads)))))
    return found


def test_no_kernel_spills_registers_but_the_known_ones():
    """ptxas's report of every registered kernel (the shared programs ask for it,
    tests/support/nvrtc_programs.py): nothing spills registers but :data:`KNOWN_SPILLS`, and
    those no more than recorded."""
    found = {}
    for source, names in variants.all_variants().items():
        programs = nvrtc_programs.every_variant(source, ARCH)
        report = "".join(program.log for program in programs)
        assert report.count("Compiling entry function") == len(names), source
        # one report per entry and per device function compiled on its own (a call)
        assert len(_PROPERTIES.findall(report)) >= len(names), source
        found.update(spills(programs))
    grown = {name: bytes_ for name, bytes_ in found.items()
             if name not in KNOWN_SPILLS
             or any(now > known for now, known in zip(bytes_, KNOWN_SPILLS[name]))}
    assert not grown, f"new or bigger register spills (store, load bytes): {grown}"


_DIVISION = re.compile(r"\b(div|rem)\.(s|u)(32|64)\b")


def test_rearrange_kernels_divide_only_outside_their_copy_loops():
    """The 32-bit matrix kernels never divide in 64 bits (no call to the 64-bit division
    helpers; they divide only to place a block's range and a thread, once), and the flat-index
    kernels divide by no dim length (magic numbers): what is left is the trip count the
    compiler computes before the grid-stride loop (a 64-bit division with its 32-bit path)."""
    names = [rearrange_kernel_name(4, 2, 2, 0, "int"), rearrange_kernel_name(1, 5, 5, 2, "int"),
             "rearrange_general<4, int>", "rearrange_general<32, long long>"]
    bodies = _entry_bodies("rearrange.cu", names)
    for name in names[:2]:
        assert not {m for m in _DIVISION.findall(bodies[name]) if m[2] == "64"}, name
    for name in names[2:]:
        assert len(_DIVISION.findall(bodies[name])) <= 2, name


def test_float16_and_bfloat16_convert_in_hardware():
    """cvt for float16 on every architecture, for bfloat16 from sm_80 (sm_75 rounds in
    software); the software float16 conversions are gone from the GPU's code."""
    add = {dtype: ek.contig_name("ic::OpAdd", dtype, dtype) for dtype in ("ic::half_t", "ic::bfloat16_t")}
    for arch, bf16_cvt in (("sm_75", False), ("sm_90", True)):
        bodies = _entry_bodies(ek.SOURCE, list(add.values()), arch)
        half = bodies[add["ic::half_t"]]
        assert "cvt.f32.f16" in half and "cvt.rn.f16.f32" in half, arch
        assert "0x477ff000" not in half.lower() and "1199566848" not in half, arch  # overflow test
        assert ("cvt.rn.bf16.f32" in bodies[add["ic::bfloat16_t"]]) == bf16_cvt, arch
