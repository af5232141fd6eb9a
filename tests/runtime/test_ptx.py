"""What the GPU would run, read from the PTX NVRTC emits (no GPU needed): contiguous elementwise
kernels move 16 bytes per global access, and (when ``ptxas`` is on PATH) no kernel spills
registers.

``ptxas`` of CUDA 13.0 accepts PTX up to ISA 9.0 while NVRTC 13.x writes a newer ``.version``
line; the kernels use nothing newer, so the line is rewritten for the register report.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from infini_cupy import dtypes, variants
from infini_cupy.elementwise import kernels as ek
from infini_cupy.elementwise.ops import OPS
from infini_cupy.elementwise.resolution import loop_dtypes, result_of_loop
from infini_cupy.strided.packed_planner import all_packed_kernel_names
from infini_cupy.strided.seed_planner import rearrange_kernel_name
from infini_cupy.strided.tile_planner import all_tiled_kernel_names

pytest.importorskip("cupy")
from infini_cupy.runtime.nvrtc import compile_ptx  # noqa: E402  (needs cupy)
from tests.support import nvrtc_programs  # noqa: E402

ARCH = "sm_90"
PTXAS_MAX_ISA = "9.0"
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


def _heaviest_variants() -> dict[str, list[str]]:
    """Per source, the variants most likely to need registers: every op on its widest input
    dtype, contiguous and strided on the most dims; the widest casts; the rearrange kernels
    with the most dims; every staged-copy kernel. (All 3064 variants of the three sources, for
    sm_75 and sm_90, were checked this way once: none spills.)"""
    registered = ek.all_names()

    def every_layout(functor, out_ctype, in_ctype):  # contiguous, and strided on the most dims
        prefix = f"<{functor}, {out_ctype}, {in_ctype}"
        strided = [n for n in registered if n.startswith("ew_strided" + prefix)]
        return [n for n in registered if n.startswith("ew_contig" + prefix)] + strided[-1:]

    elementwise = []
    for op in OPS.values():
        dtype = max(loop_dtypes(op.name), key=lambda d: (np.dtype(d).itemsize, np.dtype(d).kind == "c"))
        elementwise += every_layout(op.functor, dtypes.ctype(result_of_loop(op.name, dtype)), dtypes.ctype(dtype))
    for src in ("complex128", "float64", "int64"):
        elementwise += every_layout(ek.CAST_FUNCTOR, "int8_t", dtypes.ctype(src))
    elementwise = list(dict.fromkeys(elementwise))
    rearrange = [rearrange_kernel_name(unit, 5, 5, 2, index) for unit in (1, 4, 32)
                 for index in ("int", "long long")]
    rearrange += [rearrange_kernel_name(32, 5, 1, 2), "rearrange_general<32, long long>",
                  "rearrange_general<32, int>"]
    return {ek.SOURCE: elementwise, "rearrange.cu": rearrange,
            "transpose.cu": list(all_tiled_kernel_names()),
            "packed.cu": list(all_packed_kernel_names())}


def _programs(source: str, names: list[str]):
    """NVRTC programs holding ``names``: those of the NVRTC checks where ``names`` are every
    variant of ``source`` (compiled once per session), else one program of its own."""
    if sorted(names) == sorted(variants.all_variants()[source]):
        return nvrtc_programs.every_variant(source, ARCH)
    return [compile_ptx(source, names, ARCH)]


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="ptxas (CUDA toolkit) not on PATH")
def test_no_kernel_spills_registers(tmp_path):
    reports = []
    for source, names in _heaviest_variants().items():
        stderr = ""
        for index, program in enumerate(_programs(source, names)):
            ptx = re.sub(r"^\.version \d+\.\d+", f".version {PTXAS_MAX_ISA}", program.ptx,
                         count=1, flags=re.M)
            path = tmp_path / f"{source}-{index}.ptx"
            path.write_text(ptx)
            result = subprocess.run(["ptxas", f"-arch={ARCH}", "-v", str(path), "-o",
                                     "/dev/null"], capture_output=True, text=True)
            assert result.returncode == 0, result.stderr[-2000:]
            stderr += result.stderr
        reports.append((source, len(names), stderr))
    for source, count, report in reports:
        assert report.count("Compiling entry function") == count, source
        # one line per entry and per device function compiled on its own (a call, not inlined)
        frames = re.findall(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                            report)
        assert len(frames) >= count, source
        spilling = [f for f in frames if f[1] != "0" or f[2] != "0"]
        assert not spilling, f"{source}: {len(spilling)} kernels spill registers"


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
