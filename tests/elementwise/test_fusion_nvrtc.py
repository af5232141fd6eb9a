"""NVRTC compiles the fused kernel of every case the fusion tests run, for sm_75 and sm_90
(no GPU needed), as every other variant is compiled."""

from __future__ import annotations

import pytest

from tests.support import fusion_cases

pytest.importorskip("cupy")


@pytest.mark.parametrize("arch", ["sm_75", "sm_90"])
def test_nvrtc_compiles_every_fused_kernel_of_the_tests(arch):
    from infini_cupy.runtime.nvrtc import compile_ptx

    names = fusion_cases.kernel_names()
    assert len(names) >= 20
    program = compile_ptx("elementwise.cu", names, arch)
    assert set(program.lowered_names) == set(names)
    assert len(set(program.lowered_names.values())) == len(names)
    for symbol in program.lowered_names.values():
        assert f".entry {symbol}" in program.ptx
