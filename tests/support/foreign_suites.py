"""Other projects' array-API tests run on Arrays: their reference namespace, array_api_strict,
replaced by the stand-in (``tests/support/strict_standin``) in a subprocess on emulator (or
cpu) Arrays, so that the stand-in is found on ``sys.path`` first and the backend is set
before import."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from infini_cupy.namespace.device import Device
from tests.support import background

REPO = Path(__file__).resolve().parents[2]
STANDIN = REPO / "tests" / "support" / "strict_standin"


def run_on_arrays(pytest_args: list[str], plugins: tuple[str, ...] = (), *, env: dict = None,
                  timeout: int = 600, device: str = "emulator") -> subprocess.CompletedProcess:
    """``python -m pytest pytest_args`` with the stand-in loaded first, then ``plugins`` (from
    the stand-in's folder), on Arrays of ``device`` (``emulator`` or ``cpu``); ``env`` adds to
    the environment. Checks that the stand-in answered and that some test passed."""
    base = background.environ()
    environment = dict(base, **(env or {}),
                       INFINI_CUPY_BACKEND=Device(device).backend,
                       PYTHONPATH=os.pathsep.join([str(STANDIN), str(REPO),
                                                   base.get("PYTHONPATH", "")]))
    loaded = [arg for plugin in ("array_api_strict", *plugins) for arg in ("-p", plugin)]
    command = [sys.executable, "-m", "pytest", *loaded, "-p", "no:cacheprovider",
               "-o", "addopts=", *pytest_args]
    done = background.run(command, env=environment, timeout=timeout, cwd=REPO / "tests")
    assert f"array_api_strict stand-in: infini_cupy on {device}\n" in done.stdout, done.stdout[-3000:]
    assert " passed" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def failed_tests(done: subprocess.CompletedProcess) -> list[str]:
    """The ids of the tests that failed or errored (the run's ``-rfE`` summary)."""
    return re.findall(r"^(?:FAILED|ERROR) (\S+)", done.stdout, re.M)


def check_known(failed: list[str], known: dict) -> None:
    """Every failure is one of ``known`` (test name -> why), and every entry of ``known``
    still fails."""
    unknown = [t for t in failed if not any(k in t for k in known)]
    assert not unknown, f"{len(unknown)} tests fail on Arrays:\n" + "\n".join(unknown)
    stale = [k for k in known if not any(k in t for t in failed)]
    assert not stale, f"known failures that pass now (take them out of the list): {stale}"
