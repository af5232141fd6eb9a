"""Executing the notebooks once per test run: ``tests/test_notebooks.py`` checks that each runs
top to bottom, and ``tests/test_docs.py`` renders the executed copies in the site instead of
executing them a second time.

Each notebook runs with nbclient in a fresh kernel of this very interpreter (a kernel spec
written for the run, so a ``python3`` kernel installed elsewhere on the machine cannot stand
in for it), with matplotlib's inline backend (Agg would drop every plot: ``plt.show()`` does
nothing with it, and the site renders these copies), ``notebooks/`` as working directory and the checkout's
``infini_cupy`` first on the path. ``execute(path, standin=True)`` runs it as on a GPU: the
CuPy stand-in installed by a first cell (``cupy_standin.as_gpu_machine``), so the branches a
notebook takes when CuPy finds a device run in CI too.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

NOTEBOOKS_DIR = Path(__file__).resolve().parents[2] / "notebooks"
NOTEBOOK_SECONDS = 300  # per notebook; about 10 s each with a warm kernel cache
KERNEL_NAME = "infini-cupy-test"

# (path, standin) -> (the executed notebook, failure)
_runs: dict[tuple[Path, bool], tuple[object, str | None]] = {}
STANDIN_CELL = ("import contextlib\n"
                "from tests.support import cupy_standin\n"
                "_standin = contextlib.ExitStack()  # open for the kernel's lifetime\n"
                "_standin.enter_context(cupy_standin.as_gpu_machine())")
_jupyter_path: list[str] = []


def _kernel_env() -> dict[str, str]:
    """JUPYTER_PATH with a kernel spec running ``sys.executable``, and MPLBACKEND."""
    if not _jupyter_path:
        root = Path(tempfile.mkdtemp(prefix="infini_cupy-jupyter-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)  # the run's kernels are gone
        spec_dir = root / "kernels" / KERNEL_NAME
        spec_dir.mkdir(parents=True)
        (spec_dir / "kernel.json").write_text(json.dumps({
            "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "infini_cupy tests",
            "language": "python",
        }))
        _jupyter_path.append(str(root))
    # the checkout's infini_cupy, as in the tests, whatever copy is installed
    pythonpath = os.pathsep.join(filter(None, [str(NOTEBOOKS_DIR.parent),
                                               os.environ.get("PYTHONPATH")]))
    return {"JUPYTER_PATH": _jupyter_path[0], "PYTHONPATH": pythonpath,
            "MPLBACKEND": "module://matplotlib_inline.backend_inline"}


def execute(path: Path, standin: bool = False):
    """(the executed notebook, None) or (the notebook so far, why it failed); once per run.
    ``standin``: on the CuPy stand-in, as on a GPU (the notebook then has STANDIN_CELL first)."""
    key = (Path(path), standin)
    if key not in _runs:
        _runs[key] = _execute(*key)
    return _runs[key]


def _execute(path: Path, standin: bool):
    import nbclient
    import nbformat

    saved = {name: os.environ.get(name) for name in ("JUPYTER_PATH", "MPLBACKEND", "PYTHONPATH")}
    os.environ.update(_kernel_env())
    notebook = nbformat.read(path, as_version=4)
    if standin:
        notebook.cells.insert(0, nbformat.v4.new_code_cell(STANDIN_CELL))
    client = nbclient.NotebookClient(
        notebook, kernel_name=KERNEL_NAME, resources={"metadata": {"path": str(path.parent)}})
    deadline = time.monotonic() + NOTEBOOK_SECONDS
    try:
        with client.setup_kernel():
            for index, cell in enumerate(notebook.cells):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return notebook, f"{path.name} took more than {NOTEBOOK_SECONDS} s (at cell {index})"
                client.timeout = math.ceil(remaining)  # the notebook's budget, whichever cell spends it
                try:
                    client.execute_cell(cell, index)
                except nbclient.exceptions.CellExecutionError as e:
                    return notebook, f"{path.name} cell {index} failed:\n{e}"
                except TimeoutError:
                    return notebook, f"{path.name} took more than {NOTEBOOK_SECONDS} s (in cell {index})"
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return notebook, None
