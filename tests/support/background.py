"""Long subprocess runs that some tests only read (the suite again through the cuda launcher,
the conformance suite), started when collection ends on a thread of their own, one after
another, so that they use a second core while the rest of the session runs on the first.
Their modules' tests run last and wait for them; a run that a test asks for before the
thread has reached it runs at once in that test, beside the thread's current run.

A test module takes part by defining ``background_runs(items) -> {key: function}``: given its
selected items, the runs they will read, each ``function(folder)`` taking a fresh temporary
folder and returning what the tests read. The thread takes the runs of modules that set
``background_first = True`` first (the longest), then the others from the last module's
backwards, while the session reaches the waiting tests from the first module's on: a run the
thread has not reached by then runs in the session, so the two ends share the runs left.
The tests read a result with ``result(config, key, function)``, which also runs
``function`` where nothing started it (a single test run on its own). A run's subprocesses go through :func:`run`, so that a session
that ends early (``-x``, an interrupt) kills them instead of leaving them running.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest

_processes: set[subprocess.Popen] = set()
# os.environ as the session's runs were queued: what their subprocesses get (environ())
_session_environ: dict[str, str] = {}
_processes_lock = threading.Lock()
_stopping = threading.Event()  # set by stop(config): no new subprocess starts after it


def environ() -> dict[str, str]:
    """A copy of the environment as the session's runs were queued, before any test: the
    base of every run's ``env``. The runs start on their own thread while tests change
    ``os.environ`` (``monkeypatch.setenv`` of the cache folder, the notebooks' PYTHONPATH), and
    a subprocess started then inherited the change: a run built the compiled hot path into a
    test's cache folder while that test damaged the file on purpose."""
    return dict(_session_environ or os.environ)


def run(command, *, timeout: float, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run(command, capture_output=True, text=True, timeout=timeout, **kwargs)``,
    in a process group of its own that :func:`stop` kills; ``env`` :func:`environ` where
    none is given."""
    kwargs.setdefault("env", environ())
    with _processes_lock:
        if _stopping.is_set():
            raise RuntimeError("the session is ending: no new background subprocess")
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True, **kwargs)
        _processes.add(proc)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        _kill(proc)
        proc.communicate()
        raise
    finally:
        with _processes_lock:
            _processes.discard(proc)
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)


class _Run:
    def __init__(self, function):
        self.function = function
        self.started = False
        self.done = threading.Event()
        self.value = None
        self.error: BaseException | None = None


class Runs:
    """The session's background runs: a queue taken in order by one thread."""

    def __init__(self):
        self._lock = threading.Lock()
        self._runs: dict[object, _Run] = {}  # in order: those not started are the queue
        self._folder = Path(tempfile.mkdtemp(prefix="infini_cupy-background-"))
        self._stopped = False
        self._thread: threading.Thread | None = None

    def submit(self, runs: dict) -> None:
        with self._lock:
            for key, function in runs.items():
                self._runs.setdefault(key, _Run(function))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="background runs",
                                                daemon=True)
                self._thread.start()

    def _take(self, key) -> _Run | None:
        """The run ``key`` marked started, or None where it was started already."""
        with self._lock:
            found = self._runs[key]
            if found.started:
                return None
            if self._stopped:
                raise RuntimeError(f"background run {key!r} asked for after the session's runs "
                                   "were stopped")
            found.started = True
            return found

    def _execute(self, found: _Run) -> None:
        try:
            folder = Path(tempfile.mkdtemp(prefix="run-", dir=self._folder))
            found.value = found.function(folder)
        except BaseException as e:  # pytest's skip and fail included: the test re-raises them
            found.error = e
        finally:
            found.done.set()

    def _work(self) -> None:
        while True:
            with self._lock:
                key = next((k for k, r in self._runs.items()
                            if not r.started and not self._stopped), None)
            if key is None:
                return
            try:
                found = self._take(key)
            except RuntimeError:  # stopped meanwhile
                return
            if found is not None:
                self._execute(found)

    def result(self, key, function):
        with self._lock:
            self._runs.setdefault(key, _Run(function))
        found = self._take(key)
        if found is not None:  # not reached by the thread yet: run it here, now
            self._execute(found)
        found = self._runs[key]
        found.done.wait()
        if found.error is not None:
            raise found.error
        return found.value

    def stop(self) -> None:
        """Drop what has not started and wait for the thread's current run (which ends at
        once where :func:`stop` killed its subprocesses)."""
        with self._lock:
            self._stopped = True
        if self._thread is not None:
            self._thread.join(timeout=60)
        shutil.rmtree(self._folder, ignore_errors=True)


_KEY = pytest.StashKey[Runs]()


def modules_with_runs(items) -> dict:
    """``module -> its selected items`` for the modules that define ``background_runs``."""
    found: dict = {}
    for item in items:
        module = getattr(item, "module", None)
        if module is not None and hasattr(module, "background_runs"):
            found.setdefault(module, []).append(item)
    return found


def last(items) -> list:
    """``items`` with those of modules that have background runs moved to the end, in order."""
    waiting = {id(item) for group in modules_with_runs(items).values() for item in group}
    return ([item for item in items if id(item) not in waiting]
            + [item for item in items if id(item) in waiting])


def in_thread_order(modules: dict) -> list:
    """``(module, items)`` of ``modules`` (in the session's order) in the order the thread
    takes their runs: those with ``background_first`` first, then the others from the last."""
    return sorted(list(modules.items())[::-1],
                  key=lambda found: not getattr(found[0], "background_first", False))


def start(config, items) -> None:
    """Queue the runs the selected ``items`` will read (called when collection ends; not
    for ``--collect-only``)."""
    if config.option.collectonly:
        return
    _session_environ.clear()
    _session_environ.update(os.environ)
    runs = {}
    for module, selected in in_thread_order(modules_with_runs(items)):
        runs.update(module.background_runs(config, selected))
    if runs:
        _session_runs(config).submit(runs)


def result(config, key, function):
    """What run ``key`` returned (re-raising what it raised), waiting for it; ``function``
    runs here where no run ``key`` was queued."""
    return _session_runs(config).result(key, function)


def _session_runs(config) -> Runs:
    if _KEY not in config.stash:
        _stopping.clear()  # a new session in this process (pytester) starts subprocesses again
        config.stash[_KEY] = Runs()
    return config.stash[_KEY]


def stop(config) -> None:
    """The session's end: no subprocess starts after it, those running are killed, the runs
    not started are dropped. Only the session stops the subprocesses: a :class:`Runs` of a
    test's own stops its queue alone."""
    with _processes_lock:
        _stopping.set()
        for proc in list(_processes):
            _kill(proc)
    if _KEY in config.stash:
        config.stash[_KEY].stop()
