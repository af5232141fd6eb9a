"""The notebooks run top to bottom, and are stored without outputs.

Each notebook is executed with nbclient in a fresh kernel of this very interpreter (a kernel
spec written for the test, so a ``python3`` kernel installed elsewhere on the machine cannot
stand in for it), with matplotlib's Agg backend and ``notebooks/`` as working directory. The
notebooks assert their results against NumPy, so a wrong result fails here like an error does.
They run in emulation, or on the GPU when CuPy finds one.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import pytest

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))
EXPECTED = {"01_rearrange_planner.ipynb", "02_elementwise.ipynb", "03_gpu_benchmarks.ipynb"}
NOTEBOOK_SECONDS = 300  # per notebook; about 10 s each with a warm kernel cache
KERNEL_NAME = "infini-cupy-test"


def test_the_notebooks_are_there():
    assert EXPECTED <= {path.name for path in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_without_outputs(path):
    notebook = json.loads(path.read_text())
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"{path.name} cell {index} has outputs: strip them"
            assert cell["execution_count"] is None, f"{path.name} cell {index} has a count"


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    """A kernel spec running ``sys.executable``, found first through JUPYTER_PATH."""
    pytest.importorskip("ipykernel")
    root = tmp_path_factory.mktemp("jupyter")
    spec_dir = root / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "infini_cupy tests",
        "language": "python",
    }))
    return {"JUPYTER_PATH": str(root), "MPLBACKEND": "Agg"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(path, kernel_env, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    for name, value in kernel_env.items():
        monkeypatch.setenv(name, value)
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, kernel_name=KERNEL_NAME, resources={"metadata": {"path": str(NOTEBOOKS_DIR)}}
    )
    deadline = time.monotonic() + NOTEBOOK_SECONDS
    with client.setup_kernel():
        for index, cell in enumerate(notebook.cells):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"{path.name} took more than {NOTEBOOK_SECONDS} s (at cell {index})")
            client.timeout = math.ceil(remaining)  # the notebook's budget, whichever cell spends it
            try:
                client.execute_cell(cell, index)
            except nbclient.exceptions.CellExecutionError as e:
                pytest.fail(f"{path.name} cell {index} failed:\n{e}", pytrace=False)
            except TimeoutError:
                pytest.fail(f"{path.name} took more than {NOTEBOOK_SECONDS} s (in cell {index})")
