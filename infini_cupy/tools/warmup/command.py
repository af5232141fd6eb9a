"""``python -m infini_cupy warmup``: compile every kernel variant ahead of its first use.

Three ways, one registry (:func:`infini_cupy.variants.all_variants`):

- ``--arch sm_XX``: NVRTC, no GPU needed. Batches of name expressions become one NVRTC
  program each, compiled on a thread pool (NVRTC releases the GIL). A compile check for a
  target architecture; nothing is cached.
- ``--arch sm_XX --cache-dir DIR``: the binaries ``gpu-check`` launches (``--variants
  gpu-check``, the default: its smoke, the bench's key rows and the GPU samples of the suite,
  planned as on that GPU) or every variant (``--variants all``), one per name expression in
  the launcher's own cache format under ``DIR/cubin`` (:mod:`.warm_cache`); a GPU machine
  given ``INFINI_CUPY_CACHE_DIR=DIR`` (``gpu-check --cache-dir DIR``) loads them. With
  ``--native-python PYTHON``, the compiled hot path built for that interpreter goes to
  ``DIR/native`` too (a GPU machine without g++ or ``Python.h`` then has it).
- on a machine with a GPU (no ``--arch``): the ``cuda`` launcher compiles each variant as it
  would at its first launch (one NVRTC program per name expression), which fills its on-disk
  cache (``$INFINI_CUPY_CACHE_DIR/cubin``): later processes load instead of compiling.
- ``--backend emulate``: g++ builds the emulator's libraries, one per batch, in the emulator's
  disk cache; checks that every variant builds for the CPU.

>>> from infini_cupy.__main__ import main
>>> main(["warmup", "--arch", "sm_90", "--source", "rearrange.cu", "--limit", "4"])  # doctest: +SKIP
compiled 4 variants (rearrange.cu 4) for sm_90 through NVRTC in 1.2 s; 0 failures
0
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

from ... import variants
from ...arrays import gpu_available
from ...runtime import cuda, native
from ...runtime.emulate import build as emulator_build
from ...runtime.emulate import launcher as emulator
from ...runtime.nvrtc import compile_ptx
from ..arguments import gpu_arch, positive_int

HELP = "compile every kernel variant (for the current GPU, an --arch through NVRTC, or the emulator)"
NVRTC_BATCH = 32  # names per NVRTC program: the source is parsed once per program
EMULATE_BATCH = 64  # names per emulator library


def add_arguments(parser) -> None:
    parser.add_argument("--arch", type=gpu_arch, help="compile through NVRTC for this architecture (sm_75, "
                                       "sm_90, ...): no GPU needed; cached only with --cache-dir")
    parser.add_argument("--cache-dir", help="with --arch: write the binaries into this folder "
                                            "in our binary cache's format (DIR/cubin), for a "
                                            "GPU machine's INFINI_CUPY_CACHE_DIR")
    parser.add_argument("--archive", help="with --cache-dir: also write the binaries as one "
                                          ".tar.xz file (what to carry; gpu-check --cache-dir "
                                          "takes it as it is)")
    parser.add_argument("--native-python", action="append", default=[], metavar="PYTHON",
                        help="with --cache-dir: also build the compiled hot path for this "
                             "interpreter (the GPU machine's Python version, e.g. python3.12) "
                             "into DIR/native, for a machine without g++ or Python.h "
                             "(repeatable)")
    parser.add_argument("--variants", choices=("gpu-check", "all"), default="gpu-check",
                        help="with --cache-dir: what gpu-check launches (default) or every "
                             "variant")
    parser.add_argument("--backend", choices=("auto", "cuda", "emulate"), default="auto",
                        help="without --arch: cuda (the current GPU; fills our binary cache, "
                             "$INFINI_CUPY_CACHE_DIR/cubin) or emulate (g++ libraries of the "
                             "CPU emulator); auto picks cuda when a GPU is present")
    parser.add_argument("--source", action="append",
                        help="only the variants of this kernels_src file: rearrange.cu, "
                             "transpose.cu, elementwise.cu, ... (repeatable)")
    parser.add_argument("--limit", type=positive_int, help="at most this many variants (quick runs)")
    parser.add_argument("--jobs", type=positive_int, default=os.cpu_count() or 1,
                        help="parallel compiles for --arch and emulate (default: CPU count)")


def selected_variants(sources=None, limit=None) -> list[tuple[str, str]]:
    """(source, name expression) pairs of the registry, filtered and cut to ``limit``."""
    registry = variants.all_variants()
    if sources:
        unknown = [s for s in sources if s not in registry]
        if unknown:
            raise ValueError(f"unknown source(s) {', '.join(unknown)}; the registry has "
                             f"{', '.join(sorted(registry))}")
    pairs = [(source, name) for source, names in registry.items()
             if not sources or source in sources for name in names]
    return pairs if limit is None else pairs[:max(0, limit)]


def batches(pairs, size: int) -> list[tuple[str, tuple[str, ...]]]:
    """Consecutive names of one source, at most ``size`` per batch."""
    out: list[tuple[str, tuple[str, ...]]] = []
    for source, name in pairs:
        if out and out[-1][0] == source and len(out[-1][1]) < size:
            out[-1] = (source, out[-1][1] + (name,))
        else:
            out.append((source, (name,)))
    return out


class Progress:
    """A text progress bar on stderr: redrawn in place on a terminal, else a line per tenth."""

    def __init__(self, total: int, what: str, stream=None, width: int = 30):
        self.total, self.what, self.width = total, what, width
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.done = self.failed = 0
        self.start = time.perf_counter()
        self._next_line = 0

    def update(self, count: int, failed: int = 0) -> None:
        self.done += count
        self.failed += failed
        elapsed = time.perf_counter() - self.start
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        failures = f", {self.failed} failed" if self.failed else ""
        text = f"{self.what} [{bar}] {self.done}/{self.total} {elapsed:5.1f} s{failures}"
        if self.tty:
            self.stream.write("\r" + text + ("\n" if self.done >= self.total else ""))
        elif self.done >= self._next_line or self.done >= self.total:
            self.stream.write(text + "\n")
            self._next_line = self.done + max(1, self.total // 10)
        self.stream.flush()


def _nvrtc_batch(arch: str):
    def compile_batch(source, names):
        compile_ptx(source, list(names), arch)

    return compile_batch


def _emulate_batch(source, names):
    emulator.prepare(source, names)


def _cuda_one(source, names):
    cuda.prepare(source, names)


def _run_batches(work, compile_batch, jobs: int, progress: Progress) -> list[tuple[str, str, str]]:
    """Compile every batch; returns (source, names, error) for each failed batch."""
    failures = []
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = {pool.submit(compile_batch, source, names): (source, names)
                   for source, names in work}
        for future in as_completed(futures):
            source, names = futures[future]
            error = future.exception()
            if error is not None:
                failures.append((source, names, error))
            progress.update(len(names), len(names) if error is not None else 0)
    return failures


def warmup(pairs, *, arch=None, backend="cuda", jobs=1, stream=None):
    """Compile ``pairs`` ((source, name expression)); returns (seconds, failures)."""
    if arch:
        work, compile_batch, what = batches(pairs, NVRTC_BATCH), _nvrtc_batch(arch), f"NVRTC {arch}"
    elif backend == "emulate":
        work, compile_batch, what = batches(pairs, EMULATE_BATCH), _emulate_batch, "g++ (emulate)"
        emulator_build.runtime_library()  # built once, before the pool races for it
    else:
        # The runtime compiles one variant at a time under a lock: threads would only wait.
        work, compile_batch, what, jobs = batches(pairs, 1), _cuda_one, "cuda", 1
    progress = Progress(len(pairs), what, stream)
    start = time.perf_counter()
    failures = _run_batches(work, compile_batch, jobs, progress)
    return time.perf_counter() - start, failures


def _where(args) -> tuple[str | None, str]:
    """(arch or None, backend), or raise RuntimeError with what to do instead."""
    if args.arch:
        return args.arch, "nvrtc"
    backend = args.backend
    if backend == "auto":
        backend = "cuda" if gpu_available() else None
    if backend is None or (backend == "cuda" and not gpu_available()):
        raise RuntimeError(
            "warmup: no CUDA device found, so there is no current device to compile for. Use "
            "--arch sm_XX to compile through NVRTC for an architecture (no GPU needed), or "
            "--backend emulate to build the CPU emulator's kernels with g++."
        )
    return None, backend


def _current_device() -> str:
    import cupy

    device = cupy.cuda.Device()
    name = cupy.cuda.runtime.getDeviceProperties(device.id)["name"].decode()
    return f"GPU {device.id} ({name}, sm_{device.compute_capability})"


def _fill_cache(args) -> int:
    """``--arch --cache-dir``: the launcher's cache for ``args.arch`` in ``args.cache_dir``."""
    from pathlib import Path

    from ..gpu_check import command as gpu_check
    from . import warm_cache

    folder = Path(args.cache_dir)
    start = time.perf_counter()
    if args.variants == "all":
        pairs = set(selected_variants(args.source, args.limit))
    else:
        print(f"recording what gpu-check launches (planned for {args.arch}) ...", flush=True)
        pairs = (warm_cache.smoke_variants(args.arch) | warm_cache.bench_variants(args.arch)
                 | warm_cache.sample_variants(args.arch, gpu_check.WARMED_TESTS))
    recorded = time.perf_counter() - start
    progress = Progress(len(pairs), f"NVRTC {args.arch} -> {folder}/cubin")
    seconds, failures = warm_cache.fill(folder, pairs, args.arch, args.jobs, progress)
    size = warm_cache.folder_bytes(folder / "cubin") if (folder / "cubin").is_dir() else 0
    print(f"{len(pairs) - len(failures)} of {len(pairs)} variants in {folder}/cubin for "
          f"{args.arch} ({size / 2**20:.1f} MiB); recorded in {recorded:.0f} s, compiled in "
          f"{seconds:.0f} s; {len(failures)} failures")
    for source, name, error in failures:
        print(f"  FAILED {source}: {name}: {str(error).strip().splitlines()[0]}")
    for python in args.native_python:
        try:
            print(f"compiled hot path for {python}: {native.build_for(python, folder)}")
        except (OSError, RuntimeError, ValueError, subprocess.SubprocessError) as e:
            failures.append(("hot_calls.c", python, e))
            print(f"  FAILED the compiled hot path for {python}: {e}")
    if args.archive:
        packed = warm_cache.archive(folder, Path(args.archive))
        print(f"archive: {args.archive} ({packed / 2**20:.1f} MiB)")
    return 1 if failures else 0


def run(args) -> int:
    given = [flag for flag, value in (("--archive", args.archive),
                                      ("--native-python", args.native_python),
                                      ("--variants", args.variants != "gpu-check")) if value]
    if given and not args.cache_dir:
        print(f"warmup: {', '.join(given)} needs --cache-dir (with --arch)")
        return 2
    if args.cache_dir and not args.arch:
        print("warmup: --cache-dir needs --arch (on a GPU machine, set INFINI_CUPY_CACHE_DIR "
              "and run warmup without --arch)")
        return 2
    if args.cache_dir:
        return _fill_cache(args)
    try:
        arch, backend = _where(args)
        pairs = selected_variants(args.source, args.limit)
    except (RuntimeError, ValueError) as e:
        print(e)
        return 2
    if not pairs:
        print("warmup: no variants selected")
        return 0
    seconds, failures = warmup(pairs, arch=arch, backend=backend, jobs=args.jobs)
    counts: dict[str, int] = {}
    for source, _ in pairs:
        counts[source] = counts.get(source, 0) + 1
    per_source = ", ".join(f"{source} {n}" for source, n in counts.items())
    target = f"for {arch} through NVRTC" if arch else (
        "for the CPU emulator (g++)" if backend == "emulate" else f"for {_current_device()}")
    failed = sum(len(names) for _, names, _ in failures)
    print(f"compiled {len(pairs) - failed} of {len(pairs)} variants ({per_source}) {target} "
          f"in {seconds:.1f} s; {failed} failures")
    for source, names, error in failures:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        print(f"  FAILED {source}: {shown}: {first}")
    return 1 if failures else 0
