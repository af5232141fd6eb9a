"""NVRTC programs compiled once per session and shared by the tests that read them: the NVRTC
checks (tests/runtime/test_nvrtc.py), the bfloat16 names on their own
(tests/elementwise/test_kernels.py), the register report (tests/runtime/test_ptx.py) and the
SASS checks (tests/readers/test_sass.py, tests/perf/test_kernel_costs.py: :func:`read_sass`)
ask for the same name expressions, and compiling them costs minutes.

They are compiled with the options of the run time and, for a cubin (``sm_XX``), ptxas's
report (:data:`REPORT`: registers, stack frame and spills of every kernel, in the program's
log), which changes no instruction (tests/runtime/test_nvrtc.py compares the code).

A session that runs the NVRTC checks starts compiling the biggest sources' variants
(:data:`AHEAD`) on a thread when collection ends (:func:`start_for`), so that they compile
beside the other tests instead of holding the session up when the checks' turn comes. The
tests share the work: a name is compiled once, by whichever asks first."""

from __future__ import annotations

import os
import re
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from infini_cupy import variants

_held: dict[tuple[str, str], list] = {}  # (source, arch) -> programs compiled so far
# name expression's (source, arch, name) -> the Future of the program compiling it now
_in_flight: dict[tuple[str, str, str], Future] = {}
_lock = threading.Lock()
REPORT = ("--ptxas-options=--verbose",)
# Names per program compiled ahead (start_ahead): small enough that a test asking for names
# the thread has not reached yet compiles them itself at once, big enough to parse rarely.
AHEAD_CHUNK = 250


def report_options(arch: str) -> tuple[str, ...]:
    """What the shared programs add to the run time's options: ptxas's report, for a cubin."""
    return REPORT if arch.startswith("sm_") else ()


def _compile(source: str, names, arch: str):
    from infini_cupy.runtime.nvrtc import compile_ptx

    return compile_ptx(source, names, arch, report_options(arch))


def _claim(source: str, names, arch: str) -> tuple[list, set]:
    """(``names`` that no program holds or is compiling, now marked as compiling by the caller's
    futures; the futures of those being compiled elsewhere). Call with the lock held."""
    have = {name for program in _held.setdefault((source, arch), [])
            for name in program.lowered_names}
    mine, waiting = [], set()
    for name in dict.fromkeys(names):
        if name in have:
            continue
        future = _in_flight.get((source, arch, name))
        if future is None:
            mine.append(name)
        else:
            waiting.add(future)
    return mine, waiting


def _run(source: str, names: list, arch: str, future: Future) -> None:
    """Compile ``names`` (claimed under ``future``) and publish the program, or the error."""
    program, error = None, None
    try:
        program = _compile(source, names, arch)
    except BaseException as e:  # the test that asks re-raises it
        error = e
    with _lock:
        if program is not None:
            _held[(source, arch)].append(program)
        for name in names:
            _in_flight.pop((source, arch, name), None)
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(program)


def _mark(source: str, names: list, arch: str) -> Future:
    future = Future()
    for name in names:
        _in_flight[(source, arch, name)] = future
    return future


def compile_all(source: str, names, arch: str) -> None:
    """``names`` compiled in one NVRTC program per core (NVRTC releases the GIL), at once;
    names another thread is compiling are waited for, not compiled again."""
    workers = max(1, min(os.cpu_count() or 1, 4))
    with _lock:
        mine, waiting = _claim(source, names, arch)
        chunks = [mine[i::workers] for i in range(workers) if mine[i::workers]]
        futures = [_mark(source, chunk, arch) for chunk in chunks]
    if chunks:
        with ThreadPoolExecutor(len(chunks)) as pool:
            list(pool.map(lambda job: _run(source, *job), zip(chunks, [arch] * len(chunks),
                                                               futures)))
    for future in (*futures, *waiting):
        future.result()  # raises what the compile raised


def start_ahead(sources, arch: str) -> threading.Thread:
    """Compile every registered name of ``sources`` for ``arch`` on a thread of its own, in
    programs of :data:`AHEAD_CHUNK` names, while the session's other tests run (its first
    core's Python beside it); tests asking for names it has not reached compile them
    themselves, for names it is compiling they wait. An error is kept for the test that asks."""

    def work():
        for source in sources:
            every = list(variants.all_variants()[source])
            while True:
                with _lock:
                    mine, _ = _claim(source, every, arch)
                    chunk = mine[:AHEAD_CHUNK]
                    future = _mark(source, chunk, arch) if chunk else None
                if future is None:
                    break
                _run(source, chunk, arch, future)
                if future.exception() is not None:
                    break  # the names left compile where a test asks, and fail there too

    thread = threading.Thread(target=work, name="NVRTC ahead", daemon=True)
    thread.start()
    return thread


CURRENT = "sm_90"  # the architecture the NVRTC checks compile every variant for
# What a session compiles ahead when it runs the NVRTC checks: the sources that take minutes
AHEAD = ("elementwise.cu", "transpose.cu")


def start_for(config, items) -> None:
    """Compile :data:`AHEAD` ahead (:func:`start_ahead`) when the selected ``items`` include
    their NVRTC checks and NVRTC loads (called when collection ends)."""
    wanted = {f"test_every_variant_compiles[{source}]" for source in AHEAD}
    if config.option.collectonly or not any(item.name in wanted for item in items):
        return
    try:
        from infini_cupy.runtime.nvrtc import load_nvrtc

        load_nvrtc()
    except (ImportError, RuntimeError):
        return  # the checks skip, or say what to install
    start_ahead(AHEAD, CURRENT)


def programs(source: str, names, arch: str) -> list:
    """Programs holding every one of ``names`` for ``arch``: those this session compiled
    already (or is compiling), and new ones for the names none of them holds."""
    compile_all(source, list(names), arch)
    wanted = set(names)
    with _lock:
        held = list(_held[(source, arch)])
    return [program for program in held if wanted & set(program.lowered_names)]


def every_variant(source: str, arch: str) -> list:
    """The programs holding every registered name expression of ``source`` for ``arch``."""
    return programs(source, list(variants.all_variants()[source]), arch)


def read_sass(pairs) -> None:
    """Read the SASS of ``(source, name)`` pairs (:func:`infini_cupy.readers.sass.read_kernels`)
    from this session's programs for :data:`CURRENT`: the NVRTC checks compile every variant
    for it, so reading a variant costs its share of one ``nvdisasm`` run, not a compile."""
    from infini_cupy.readers import sass

    by_source: dict[str, list] = {}
    for source, name in pairs:
        by_source.setdefault(source, []).append(name)
    for source, names in by_source.items():
        sass.read_kernels(source, names, CURRENT,
                          programs_for=lambda missing, source=source: programs(source, missing,
                                                                               CURRENT))


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
