"""``warmup --arch sm_XX --cache-dir DIR``: on a machine without a GPU, the binaries that
``gpu-check`` launches, compiled by NVRTC into ``DIR/cubin`` in the launcher's own cache
format (``runtime/cuda.py``), so that a GPU machine given ``--cache-dir DIR`` loads them
instead of compiling.

Which variants: those the smoke cases, the bench's key rows
(:mod:`infini_cupy.tools.gpu_check.bench_step`, at their GPU sizes) and the GPU samples of the
suite (``gpu_check.WARMED_TESTS``: the sample and the compiled launch's sample) launch,
recorded from the emulator (every thread) while the planners plan as on the target GPU: an
H100's opt-in of 227 KiB of dynamic shared memory per block (:data:`OPTIN`), not the offline
default. The samples run as ``pytest -p infini_cupy.tools.warmup.warm_cache`` (this module is
that plugin: it records only when ``INFINI_CUPY_WARM_RECORD`` names the file to write).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ...runtime import cuda, launch

OPTIN = {"sm_90": 232448, "sm_100": 232448, "sm_80": 166912, "sm_89": 101376, "sm_86": 101376}
RECORD_VAR = "INFINI_CUPY_WARM_RECORD"
REPO = Path(__file__).resolve().parents[3]


class RecordingLauncher:
    """The emulator's launches, run as usual, their (source, name) kept from every thread."""

    def __init__(self, inner):
        self.inner, self.seen, self._lock = inner, set(), threading.Lock()

    def launch(self, source, name, grid, block, args, shared_mem=0):
        with self._lock:
            self.seen.add((source, name))
        self.inner.launch(source, name, grid, block, args, shared_mem)

    def prepare(self, source, names):
        self.inner.prepare(source, names)


@contextlib.contextmanager
def recorded(arch: str):
    """Emulated launches recorded, plans made for ``arch``'s shared-memory opt-in."""
    import infini_cupy as xp

    recorder = RecordingLauncher(launch.LAUNCHERS["emulate"])
    with cuda.planning_for(OPTIN.get(arch, OPTIN["sm_90"])), xp.backend("emulate"), \
            launch.launcher_replaced("emulate", recorder):
        yield recorder.seen


def smoke_variants(arch: str) -> set:
    from ..gpu_check import smoke as gpu_smoke

    with recorded(arch) as seen:
        gpu_smoke.run_cases(lambda a: a, np.asarray)
    return set(seen)


class _NothingRuns:
    """In place of CuPy for the reference calls of a planned row: every function does
    nothing (``asarray`` gives 0, what the row assigns to its input)."""

    def __getattr__(self, name):
        if name == "asarray":
            return lambda *a, **k: 0.0
        if name == "fuse":
            return lambda function: (lambda *a: None)
        return lambda *a, **k: None


class _Planned:
    """gpu_bench's rows at their GPU sizes with launches recorded, not run: NumPy arrays never
    touched (their pages are never written)."""

    copy_bytes = 1
    fused_shape = None  # set from gpu_bench
    library = _NothingRuns()
    # the launch-bound calls' rows: each call once on NumPy arrays, its launch recorded
    calls_library = np
    backend = "emulate"
    host_repeat = (1, 0)
    synchronize = staticmethod(lambda: None)

    def __init__(self):
        from ..gpu_check import bench_step as gpu_bench

        self.fused_shape = gpu_bench.FUSED_SHAPE

    @staticmethod
    def alloc(shape, dtype):
        from ..cases import aligned_alloc  # aligned as CuPy aligns: the GPU's plans

        return aligned_alloc(shape, dtype)

    @staticmethod
    def shape(case):
        return case.shape

    @staticmethod
    def to_host(a):
        return np.zeros((), np.float32)  # nothing ran: no value to compare

    @staticmethod
    def seconds(fn):
        fn()
        return 1.0

    copy_seconds = staticmethod(lambda nbytes: 1.0)
    torch_call = staticmethod(lambda case, operands: None)
    torch_gelu = staticmethod(lambda x: None)


def bench_variants(arch: str) -> set:
    from .. import cases
    from ..gpu_check import bench_step as gpu_bench

    with recorded(arch), cases.unfilled(), launch.launches_skipped(), \
            launch.recording() as launches:
        for row in gpu_bench.rows(_Planned()):
            if "error" in row:
                raise RuntimeError(f"planning bench row {row['case']}: {row['error']}")
    return {(r.source, r.name) for r in launches}


def sample_variants(arch: str, paths, timeout: int = 3600) -> set:
    """The variants the GPU sample of the suite launches, from its emulated run."""
    record = Path(os.environ.get("TMPDIR", "/tmp")) / f"warm-record-{os.getpid()}.json"
    env = dict(os.environ, **{RECORD_VAR: str(record), "INFINI_CUPY_WARM_ARCH": arch})
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o",
                    "addopts=", "-p", "infini_cupy.tools.warmup.warm_cache", *paths], cwd=REPO,
                   env=env, capture_output=True, timeout=timeout)
    try:
        return {tuple(pair) for pair in json.loads(record.read_text())}
    finally:
        record.unlink(missing_ok=True)


# ---------------------------------------------------------------- the pytest plugin
_session: list = []


def pytest_configure(config):
    if os.environ.get(RECORD_VAR):
        stack = contextlib.ExitStack()
        seen = stack.enter_context(recorded(os.environ.get("INFINI_CUPY_WARM_ARCH", "sm_90")))
        _session.append((stack, seen))


def pytest_unconfigure(config):
    if _session:
        stack, seen = _session.pop()
        Path(os.environ[RECORD_VAR]).write_text(json.dumps(sorted(seen)))
        stack.close()


# ---------------------------------------------------------------- compiling
def fill(folder: Path, pairs, arch: str, jobs: int, progress=None) -> tuple[float, list]:
    """Compile ``pairs`` for ``arch`` into ``folder/cubin`` (entries already there are kept);
    returns (seconds, [(source, name, error)])."""
    target = folder / "cubin"
    todo = []
    for source, name in sorted(pairs):
        if cuda._cached_entry(source, name, arch, target) is None:
            todo.append((source, name))
    start, failures = time.perf_counter(), []
    if progress is not None and len(todo) < len(pairs):  # the cached ones count as done
        progress.update(len(pairs) - len(todo), 0)

    def one(pair):
        try:
            cuda._compile_entry(pair[0], pair[1], arch, target)
        except Exception as e:  # reported with the others
            failures.append((pair[0], pair[1], e))
        if progress is not None:
            progress.update(1, 0)

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(one, todo))
    return time.perf_counter() - start, failures


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


NATIVE = "native"  # the compiled hot path's builds (runtime/native.py), carried beside cubin


def archive(folder: Path, path: Path) -> int:
    """``folder/cubin`` (and ``folder/native``, the compiled hot path built for the GPU
    machine's Python) as one xz-compressed tar file at ``path`` (cubins of one kernel family
    share most of their bytes: about 20 times smaller); returns its size in bytes."""
    import tarfile

    with tarfile.open(path, "w:xz") as tar:
        tar.add(folder / "cubin", arcname="cubin")
        if (folder / NATIVE).is_dir():
            tar.add(folder / NATIVE, arcname=NATIVE)
    return path.stat().st_size


def unpacked(path: Path, folder: Path) -> Path:
    """``folder`` holding the cache folder of :func:`archive`'s file (its cubins and compiled
    hot path, nothing else)."""
    import tarfile

    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "r:xz") as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(("cubin", NATIVE))
                   and (m.isfile() or m.isdir()) and ".." not in Path(m.name).parts]
        tar.extractall(folder, members=members)
    return folder
