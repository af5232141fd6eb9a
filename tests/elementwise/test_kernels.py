"""Elementwise kernels and NVRTC, without a GPU (the nvidia-cuda-nvrtc wheel): the registry
holds every name expression the engine can request (tests/runtime/test_nvrtc.py compiles the
registry), the strided 16-byte path, the bfloat16 names on their own. Names are compiled in
one program per core, shared with the NVRTC checks (tests/support/nvrtc_programs.py): one
program per name would re-parse the source thousands of times."""

from __future__ import annotations

import pytest

from infini_cupy import dtypes, variants
from infini_cupy.elementwise import kernels as ek
from infini_cupy.elementwise.ops import CAST_FUNCTOR
from tests.support import nvrtc_programs
from tests.support.dtype_cases import require_bfloat16



def _nvrtc_available() -> bool:
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
        return True
    except Exception:
        return False


def test_registry_lists_every_elementwise_name():
    """The registry is what tests/runtime/test_nvrtc.py compiles: every
    name the engine can request is in it, so that check covers every elementwise kernel."""
    names = variants.all_variants()[ek.SOURCE]
    assert set(names) == set(ek.all_names())
    assert len(names) == len(set(names))


@pytest.mark.skipif(not _nvrtc_available(), reason="NVRTC (nvidia-cuda-nvrtc) not installed")
def test_strided_kernels_have_a_16_byte_path():
    """Rows of a 2-dim strided layout (a broadcast column, a padded row pitch) move 16 bytes per
    access; the element path stays for the layouts without aligned rows (and for 3 dims)."""
    from infini_cupy.runtime.nvrtc import compile_ptx

    names = [ek.strided_name("ic::OpAdd", "float", "float", n, ek.INDEX_CTYPE) for n in ek.STRIDED_NDIMS]
    program = compile_ptx(ek.SOURCE, names, "sm_90")
    for name in names:
        symbol = program.lowered_names[name]
        start = program.ptx.index(f".entry {symbol}(")
        body = program.ptx[start:program.ptx.index("\n}\n", start)]
        assert "ld.global.f32" in body and "st.global.f32" in body, name
        vector = "ld.global.v4.f32" in body and "st.global.v4.f32" in body
        assert vector == name.endswith(", 2, int>"), name


def _bfloat16_names():
    return tuple(n for n in ek.all_names() if "ic::bfloat16_t" in n)


@pytest.mark.skipif(not _nvrtc_available(), reason="NVRTC (nvidia-cuda-nvrtc) not installed")
@pytest.mark.parametrize("arch", ["sm_75", "sm_90"])
def test_nvrtc_compiles_every_bfloat16_variant(arch):
    """The bfloat16 names alone, for both architectures (a subset of what
    tests/runtime/test_nvrtc.py compiles, quick to run on its own: ``-k bfloat16``): every op
    variant taking bfloat16 and every cast to and from it."""
    require_bfloat16()
    names = _bfloat16_names()
    casts = [n for n in names if n.startswith(f"ew_contig<{CAST_FUNCTOR},")]
    assert len(casts) == 2 * (len(dtypes.ALL_DTYPES) - 1) + 1  # to and from every dtype
    lowered = {}
    for program in nvrtc_programs.programs(ek.SOURCE, names, arch):  # shared with test_nvrtc
        lowered.update({n: s for n, s in program.lowered_names.items() if n in names})
    assert set(lowered) == set(names)
    assert len(set(lowered.values())) == len(names)
