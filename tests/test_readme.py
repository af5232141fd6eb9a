"""The README stays short and true: its Python examples run as written (CPU only, in a fresh
interpreter), its two set-up commands are the ones CI runs, and it stays under 200 lines."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.MULTILINE | re.DOTALL)


def test_readme_is_short():
    assert len(README.splitlines()) < 200


def test_readme_python_examples_run_as_written(tmp_path):
    blocks = _blocks("python")
    assert len(blocks) >= 2
    script = tmp_path / "readme_examples.py"
    script.write_text("\n".join(blocks))  # one session, in order, as a reader runs them
    # this checkout first, then what the suite's interpreter was given (where a checkout runs
    # uninstalled, its dependencies may be on PYTHONPATH too)
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=tmp_path, timeout=600, env={**os.environ, "PYTHONPATH": path})
    assert done.returncode == 0, f"README examples failed:\n{done.stdout}\n{done.stderr}"


def test_exactly_two_set_up_commands_and_ci_runs_the_second():
    setups = [b.strip() for b in _blocks("bash") if b.startswith("python3 -m venv")]
    assert setups == [
        'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[cuda13]" && '
        "python -m infini_cupy demo",
        'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[test]" && '
        "python -m pytest",
    ]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert setups[1] in ci, ".ci/run must run the README's test command verbatim"


def test_the_test_log_opens_with_the_versions_installed():
    """CI installs the newest releases: the header of its pytest run lists what it installed."""
    import numpy as np

    from tests.conftest import pytest_report_header

    (line,) = pytest_report_header(None)
    assert line.startswith("installed (") and f"numpy=={np.__version__}" in line
