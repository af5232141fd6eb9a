"""The notebooks run top to bottom, and are stored without outputs.

They are executed once per test run (``tests/support/notebooks.py``), and the executed copies
are what the documentation site renders (``tests/test_docs.py``). The notebooks assert their
results against NumPy, so a wrong result fails here like an error does. They run in
emulation, or on the GPU when CuPy finds one.
"""

from __future__ import annotations

import ast
import json

import pytest

import infini_cupy
from tests.support import notebooks

NOTEBOOKS = sorted(notebooks.NOTEBOOKS_DIR.glob("*.ipynb"))
# the notebooks whose GPU branches run on the CuPy stand-in in seconds (03's measures the bench's
# full-size cases there: minutes in the emulator)
ON_STANDIN = {"00_first_steps.ipynb", "02_elementwise.ipynb"}
EXPECTED = {"00_first_steps.ipynb", "01_rearrange_planner.ipynb", "02_elementwise.ipynb",
            "03_gpu_benchmarks.ipynb"}


def test_the_notebooks_are_there():
    assert EXPECTED <= {path.name for path in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_without_outputs(path):
    notebook = json.loads(path.read_text())
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [], f"{path.name} cell {index} has outputs: strip them"
            assert cell["execution_count"] is None, f"{path.name} cell {index} has a count"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_takes_public_names_from_the_package(path):
    """What a notebook takes from ``infini_cupy`` itself is in the API reference (``__all__``);
    the internals an exploration shows come by their module path, which the architecture page
    describes, so a reader can tell the two apart and look either up."""
    architecture = (notebooks.NOTEBOOKS_DIR.parent / "docs" / "dev" / "architecture.md").read_text()
    public = set(infini_cupy.__all__) | {"__version__"}
    for index, cell in enumerate(json.loads(path.read_text())["cells"]):
        if cell["cell_type"] != "code":
            continue
        tree = ast.parse("".join(cell["source"]))
        aliases = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                   for a in node.names if a.name == "infini_cupy"}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "infini_cupy":
                taken = {a.name for a in node.names}
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id in aliases):
                taken = {node.attr}
            elif isinstance(node, ast.ImportFrom) and str(node.module).startswith("infini_cupy."):
                module = node.module.rsplit(".", 1)[-1]
                assert f"{module}.py" in architecture or f"{module}/" in architecture, (
                    f"{path.name} cell {index} imports {node.module}, which "
                    "docs/dev/architecture.md does not describe")
                continue
            else:
                continue
            assert taken <= public, (f"{path.name} cell {index} takes {sorted(taken - public)} "
                                     "from infini_cupy: not public (its __all__)")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_top_to_bottom(path):
    pytest.importorskip("ipykernel")
    pytest.importorskip("nbformat")
    pytest.importorskip("nbclient")
    _, failure = notebooks.execute(path)
    if failure:
        pytest.fail(failure, pytrace=False)


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name in ON_STANDIN],
                         ids=lambda p: p.name)
def test_notebook_runs_as_on_a_gpu(path):
    """What a notebook does when CuPy finds a GPU (CuPy arrays, Arrays on cuda:0), run against
    the CuPy stand-in: its asserts hold there too (notebook 02's layouts reach the kernel as
    built: cupy.asarray of a strided NumPy view is a contiguous copy)."""
    for module in ("ipykernel", "nbformat", "nbclient", "cupy"):
        pytest.importorskip(module)
    _, failure = notebooks.execute(path, standin=True)
    if failure:
        pytest.fail(failure, pytrace=False)


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.name != "00_first_steps.ipynb"],
                         ids=lambda p: p.name)
def test_notebook_plots_are_in_its_outputs(path):
    """The site renders the executed copies: a plot drawn with a non-inline backend is lost."""
    pytest.importorskip("nbclient")
    notebook, failure = notebooks.execute(path)
    if failure:
        pytest.skip("test_notebook_runs_top_to_bottom reports it")
    images = sum("image/png" in output.get("data", {})
                 for cell in notebook.cells for output in cell.get("outputs", []))
    assert images, f"{path.name} executed without a single plot in its outputs"
