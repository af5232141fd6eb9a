"""NVRTC compile checks, no GPU needed: every name expression the package can request compiles
for a current architecture (sm_90), and for the oldest one (sm_75) every name expression whose
code depends on the architecture, with one of each kernel template; a broken source fails
loudly.

What the architecture changes in our kernels is the code under ``__CUDA_ARCH__`` guards
(``ARCH_GUARDED``: cp.async, the bfloat16 conversions), so a variant compiles its own code
on sm_75 only where its sm_90 code holds an instruction of a guarded block; the rest of a
template is the same C++ for both. A new guard fails
``test_the_architecture_changes_only_the_known_blocks`` until its instruction is listed.
"""

from __future__ import annotations

import re

import pytest

from infini_cupy import variants
from infini_cupy.errors import KernelCompileError
from infini_cupy.runtime.nvrtc import compile_ptx
from infini_cupy.runtime.sources import kernels_dir
from tests.support import nvrtc_programs

pytest.importorskip("cupy")
CURRENT, OLDEST = nvrtc_programs.CURRENT, "sm_75"
ARCHS = (OLDEST, CURRENT)
ALL = variants.all_variants()
# Header -> (its `#if ... __CUDA_ARCH__ >= 800` (or 900) blocks, the PTX instructions they
# emit): bfloat16's rounding from float (sm_80) and from double and integers (sm_90)
ARCH_GUARDED = {"common.cuh": (2, ("cp.async",)),
                "bfloat16.cuh": (2, ("cvt.rn.bf16.f32", "cvt.rn.bf16.f64", "cvt.rn.bf16.s64",
                                     "cvt.rn.bf16.u64", "cvt.rn.bf16.s32", "cvt.rn.bf16.u32"))}


def _assert_compiled(programs, names, arch):
    lowered = {}
    for program in programs:
        lowered.update({n: s for n, s in program.lowered_names.items() if n in names})
        assert f".target {arch}" in program.ptx
    # every name expression resolved to its own kernel symbol, present in the PTX
    assert set(lowered) == set(names)
    assert len(set(lowered.values())) == len(names)
    assert set(nvrtc_programs.kernel_bodies(programs, set(names))) == set(names)


@pytest.mark.parametrize("source", sorted(ALL))
def test_every_variant_compiles(source):
    names = ALL[source]
    assert names, f"{source} registers no variants"
    _assert_compiled(nvrtc_programs.every_variant(source, CURRENT), names, CURRENT)


def architecture_dependent(source: str) -> list[str]:
    """The variants of ``source`` whose sm_90 code holds an instruction of a guarded block
    (on sm_75 they compile the code beside it), and the first variant of each template."""
    programs = nvrtc_programs.every_variant(source, CURRENT)
    markers = [m for _, found in ARCH_GUARDED.values() for m in found]
    bodies = nvrtc_programs.kernel_bodies(programs)
    for program in programs:  # no guarded instruction outside a kernel (a called .func)
        for marker in markers:
            assert program.ptx.count(marker) == sum(
                body.count(marker) for name, body in bodies.items()
                if name in program.lowered_names), (source, marker)
    guarded = {name for name, body in bodies.items() if any(m in body for m in markers)}
    first = {name.split("<")[0]: name for name in reversed(ALL[source])}
    return sorted(guarded | set(first.values()))


@pytest.mark.parametrize("source", sorted(ALL))
def test_the_oldest_architecture_compiles_what_depends_on_it(source):
    names = architecture_dependent(source)
    _assert_compiled(nvrtc_programs.programs(source, names, OLDEST), names, OLDEST)


def test_the_architecture_changes_only_the_known_blocks():
    guards = {}
    for path in sorted(kernels_dir().rglob("*.cu*")):
        count = sum("__CUDA_ARCH__" in line and line.lstrip().startswith("#")
                    for line in path.read_text().splitlines())
        if count:
            guards[path.name] = count
    assert guards == {name: count for name, (count, _) in ARCH_GUARDED.items()}, (
        "a new __CUDA_ARCH__ block: list the PTX instructions it emits in ARCH_GUARDED, so "
        "that sm_75 compiles the variants that reach it")
    # and each listed instruction is one sm_90 emits for some variant
    emitted = "".join(program.ptx for source in ALL
                      for program in nvrtc_programs.every_variant(source, CURRENT))
    for _, markers in ARCH_GUARDED.values():
        for marker in markers:
            assert marker in emitted, marker


def test_the_register_report_changes_no_code():
    """The shared programs ask ptxas for its report (tests/support/nvrtc_programs.py): every
    section of the cubin is the run time's, but the tool's note of its command line, the
    names of internal symbols (they hold a hash of the options) and the sizes-only sections."""
    from infini_cupy.runtime import elf

    nobits = 8  # SHT_NOBITS: shared memory, a size and no bytes
    for source, names in ALL.items():
        plain = compile_ptx(source, names[:1], CURRENT)
        reported = compile_ptx(source, names[:1], CURRENT, nvrtc_programs.REPORT)
        assert "spill stores" in reported.log and "spill stores" not in plain.log
        found, other = elf.sections(plain.binary), elf.sections(reported.binary)
        assert set(found) == set(other), source
        compared = 0
        for name, (kind, offset, size, _) in found.items():
            if kind == nobits or name in (".note.nv.tkinfo", ".strtab"):
                continue
            _, other_offset, other_size, _ = other[name]
            assert (plain.binary[offset:offset + size]
                    == reported.binary[other_offset:other_offset + other_size]), (source, name)
            compared += name.startswith(".text.")
        assert compared == 1, source  # the kernel's code


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
