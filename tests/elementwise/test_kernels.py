"""Elementwise kernels and NVRTC, without a GPU (the nvidia-cuda-nvrtc wheel): the registry
holds every name expression the engine can request (tests/runtime/test_nvrtc.py compiles the
registry for sm_75 and sm_90), the strided 16-byte path, the bfloat16 names on their own.
Names are compiled in batches, batches in parallel processes: one program per name would
re-parse the source thousands of times."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import pytest

from infini_cupy import dtypes, variants
from infini_cupy.elementwise import kernels as ek
from infini_cupy.elementwise.ops import CAST_FUNCTOR

BATCH = 400


def _compile(batch, arch):
    from infini_cupy.runtime.nvrtc import compile_ptx

    program = compile_ptx(ek.SOURCE, batch, arch)
    return {name: program.lowered_names[name] for name in batch}


def _nvrtc_available() -> bool:
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
        return True
    except Exception:
        return False


def test_registry_lists_every_elementwise_name():
    """The registry is what tests/runtime/test_nvrtc.py compiles for sm_75 and sm_90: every
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
    """The bfloat16 names alone (a subset of the test above, quick to run on its own:
    ``-k bfloat16``): every op variant taking bfloat16 and every cast to and from it."""
    pytest.importorskip("ml_dtypes")
    names = _bfloat16_names()
    casts = [n for n in names if n.startswith(f"ew_contig<{CAST_FUNCTOR},")]
    assert len(casts) == 2 * (len(dtypes.ALL_DTYPES) - 1) + 1  # to and from every dtype
    batches = [names[i:i + BATCH] for i in range(0, len(names), BATCH)]
    lowered = {}
    with ProcessPoolExecutor(max(1, min(len(batches), os.cpu_count() or 1))) as pool:
        for result in pool.map(_compile, batches, [arch] * len(batches)):
            lowered.update(result)
    assert set(lowered) == set(names)
    assert len(set(lowered.values())) == len(names)
