"""NVRTC compile checks, no GPU needed: every name expression the package can request
compiles for the oldest and a current architecture, and a broken source fails loudly."""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from infini_cupy import variants
from infini_cupy.errors import KernelCompileError
from infini_cupy.runtime.nvrtc import compile_ptx

pytest.importorskip("cupy")
ARCHS = ("sm_75", "sm_90")
ALL = variants.all_variants()


def compile_all(source: str, names, arch: str):
    """Compile in one NVRTC program per core (NVRTC releases the GIL)."""
    workers = max(1, min(os.cpu_count() or 1, 4))
    chunks = [names[i::workers] for i in range(workers) if names[i::workers]]
    with ThreadPoolExecutor(len(chunks)) as pool:
        return list(pool.map(lambda chunk: compile_ptx(source, chunk, arch), chunks))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("source", sorted(ALL))
def test_every_variant_compiles(source, arch):
    names = ALL[source]
    assert names, f"{source} registers no variants"
    programs = compile_all(source, list(names), arch)
    lowered = {}
    for program in programs:
        lowered.update(program.lowered_names)
        assert f".target {arch}" in program.ptx
    # every name expression resolved to its own kernel symbol, present in the PTX
    assert set(lowered) == set(names)
    assert len(set(lowered.values())) == len(names)
    for program in programs:
        for symbol in program.lowered_names.values():
            assert f".entry {symbol}" in program.ptx


def test_rearrange_registry_is_the_seed_matrix_plus_general():
    names = ALL["rearrange.cu"]
    matrix = [n for n in names if n.startswith("rearrange<")]
    assert len(matrix) == 6 * 5 * 5 * 3 * 2  # 32- and 64-bit Index
    assert {n for n in names if n.startswith("rearrange_general<")} == {
        f"rearrange_general<{u}, {index}>" for u in (1, 2, 4, 8, 16, 32)
        for index in ("int", "long long")
    }


def test_a_broken_source_raises_with_log_and_numbered_source(tmp_path):
    broken = tmp_path / "broken.cu"
    broken.write_text(
        '#include "common.cuh"\n'
        "template <int N> __global__ void k(int *p) { p[threadIdx.x] = N + undefined_name; }\n"
    )
    with pytest.raises(KernelCompileError) as info:
        compile_ptx(str(broken), ["k<3>"], "sm_90")
    message = str(info.value)
    assert "k<3>" in message and "--gpu-architecture=sm_90" in message
    assert "undefined_name" in message  # from the compiler log
    # the numbered source NVRTC saw (headers pasted in), so log line numbers can be looked up
    assert re.search(r"\n\s*\d+  template <int N> __global__ void k", message)


@pytest.mark.parametrize("arch", ARCHS)
def test_the_emulator_test_kernels_are_valid_cuda(arch):
    """The emulator's own test kernels (dynamic shared memory included) compile for a GPU
    too, so what the emulator tests with is CUDA, not only g++."""
    from tests.runtime.test_emulate import KERNELS, NAMES

    assert "reverse_dynamic" in NAMES
    assert compile_ptx(KERNELS, list(NAMES), arch).ptx
