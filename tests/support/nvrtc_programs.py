"""NVRTC programs compiled once per session and shared by the tests that read them: the NVRTC
checks (tests/runtime/test_nvrtc.py), the bfloat16 names on their own
(tests/elementwise/test_kernels.py) and the register report (tests/runtime/test_ptx.py) ask
for the same name expressions, and compiling them costs minutes.

They are compiled with the options of the run time and, for a cubin (``sm_XX``), ptxas's
report (:data:`REPORT`: registers, stack frame and spills of every kernel, in the program's
log), which changes no instruction (tests/runtime/test_nvrtc.py compares the code)."""

from __future__ import annotations

import os
import re
from concurrent.futures import ThreadPoolExecutor

from infini_cupy import variants

_held: dict[tuple[str, str], list] = {}  # (source, arch) -> programs compiled so far
REPORT = ("--ptxas-options=--verbose",)


def report_options(arch: str) -> tuple[str, ...]:
    """What the shared programs add to the run time's options: ptxas's report, for a cubin."""
    return REPORT if arch.startswith("sm_") else ()


def compile_all(source: str, names, arch: str) -> list:
    """``names`` compiled in one NVRTC program per core (NVRTC releases the GIL)."""
    from infini_cupy.runtime.nvrtc import compile_ptx

    workers = max(1, min(os.cpu_count() or 1, 4))
    chunks = [names[i::workers] for i in range(workers) if names[i::workers]]
    with ThreadPoolExecutor(len(chunks)) as pool:
        return list(pool.map(
            lambda chunk: compile_ptx(source, chunk, arch, report_options(arch)), chunks))


def programs(source: str, names, arch: str) -> list:
    """Programs holding every one of ``names`` for ``arch``: those this session compiled
    already, and new ones for the names none of them holds."""
    held = _held.setdefault((source, arch), [])
    have = {name for program in held for name in program.lowered_names}
    missing = [name for name in dict.fromkeys(names) if name not in have]
    if missing:
        held += compile_all(source, missing, arch)
    wanted = set(names)
    return [program for program in held if wanted & set(program.lowered_names)]


def every_variant(source: str, arch: str) -> list:
    """The programs holding every registered name expression of ``source`` for ``arch``."""
    return programs(source, list(variants.all_variants()[source]), arch)


def kernel_bodies(found: list, names=None) -> dict[str, str]:
    """Name expression -> the PTX of its kernel (``.entry`` to its closing brace), for
    ``names`` (default: every name) of the programs ``found``."""
    bodies = {}
    for program in found:
        named = {symbol: name for name, symbol in program.lowered_names.items()
                 if names is None or name in names}
        for entry in _ENTRY.finditer(program.ptx):
            if entry.group(1) in named:
                end = program.ptx.index("\n}\n", entry.start())
                bodies[named[entry.group(1)]] = program.ptx[entry.start():end]
    return bodies


_ENTRY = re.compile(r"^(?:\.\w+ )*\.entry (\S+)\(", re.M)  # ".weak .entry _Z...("
