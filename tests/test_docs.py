"""The documentation site builds with warnings as errors, its API reference has an entry for
every public name, and the README and user guide read as documentation, not a development log.

The build renders the notebooks executed once for ``tests/test_notebooks.py``
(``tests/support/notebooks.py``), so they are not executed twice.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import infini_cupy

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BUILD_SECONDS = 600


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The built HTML site (a fresh build: what CI's ``sphinx-build -W`` sees)."""
    pytest.importorskip("sphinx")
    pytest.importorskip("pydata_sphinx_theme")
    pytest.importorskip("myst_nb")
    pytest.importorskip("numpydoc")
    pytest.importorskip("sphinx_design")
    env = dict(os.environ)
    try:
        from tests.support import notebooks

        executed = tmp_path_factory.mktemp("executed_notebooks")
        for path in sorted(notebooks.NOTEBOOKS_DIR.glob("*.ipynb")):
            notebook, _ = notebooks.execute(path)  # a failure is test_notebooks.py's to report
            import nbformat

            nbformat.write(notebook, executed / path.name)
        env["INFINI_CUPY_DOCS_NOTEBOOKS"] = str(executed)
    except ImportError:  # no nbclient: myst-nb executes them
        pass
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
        capture_output=True, text=True, env=env, timeout=BUILD_SECONDS, cwd=ROOT)
    assert done.returncode == 0, f"sphinx-build -W failed:\n{done.stdout}\n{done.stderr}"
    return out / "html"


def _inventory(site: Path) -> set[str]:
    from sphinx.util.inventory import InventoryFile

    with open(site / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", os.path.join)
    return {name for entries in inventory.data.values() for name in entries} if hasattr(
        inventory, "data") else {name for entries in inventory.values() for name in entries}


def test_every_public_name_has_a_reference_entry(site):
    import infini_cupy.dask

    documented = _inventory(site)
    expected = {f"infini_cupy.{name}" for name in infini_cupy.__all__
                if name not in ("linalg", "fft")}
    for module in ("linalg", "fft"):
        for name in getattr(infini_cupy, module).__all__:
            if name not in infini_cupy.__all__:  # linalg.matmul is infini_cupy.matmul
                expected.add(f"infini_cupy.{module}.{name}")
    expected |= {f"infini_cupy.dask.{name}" for name in infini_cupy.dask.__all__}
    expected |= {"infini_cupy.errors.KernelCompileError", "infini_cupy.errors.KernelFault",
                 "infini_cupy.Array.__add__", "infini_cupy.Array.__getitem__",
                 "infini_cupy.Array.__setitem__"}
    # the Array's public members: the standard's and NumPy's methods generic code calls
    expected |= {f"infini_cupy.Array.{name}" for name in vars(infini_cupy.Array)
                 if not name.startswith("_")}
    missing = sorted(expected - documented)
    assert not missing, f"public names without a reference entry: {missing}"


def _public_documented() -> dict:
    """The public functions and classes of the namespace, ``linalg`` and ``fft`` (by their
    qualified name: ``"linalg.det"``) and the Array's public members (``"Array.shape"``)."""
    import types

    public = {name: getattr(infini_cupy, name, None) for name in infini_cupy.__all__}
    found = {name: value for name, value in public.items()
             if callable(value) and not isinstance(value, types.ModuleType)}
    for module in ("linalg", "fft"):
        for name in getattr(infini_cupy, module).__all__:
            value = getattr(getattr(infini_cupy, module), name)
            if value is not public.get(name):  # linalg.matmul is infini_cupy.matmul
                found[f"{module}.{name}"] = value
    found.update({f"Array.{name}": member for name, member in vars(infini_cupy.Array).items()
                  if not name.startswith("_")})
    return found


def test_every_public_function_has_an_example():
    """Each public function and class of the namespace, ``linalg`` and ``fft``, and each public
    member of the Array, has a doctest example (``>>>``), and pytest collects it: from
    ``infini_cupy`` (its ``__module__``) or, for ``linalg``'s and ``fft``'s own functions, from
    ``docstrings.__test__`` (``namespace/examples.py`` holds the delegated functions')."""
    from infini_cupy.namespace import docstrings

    found = _public_documented()
    for name, value in found.items():
        if name.startswith(("linalg.", "fft.")):
            assert docstrings.__test__.get(name) == value.__doc__, name
    missing = sorted(name for name, value in found.items() if ">>>" not in (value.__doc__ or ""))
    assert not missing, f"public names without an example: {missing}"
    assert len(found) > 200


def _public_functions() -> dict:
    """The public functions of the namespace, ``linalg`` and ``fft`` (by their qualified
    name), classes left out."""
    return {name: value for name, value in _public_documented().items()
            if not name.startswith("Array.") and not isinstance(value, type)}


def test_every_public_function_has_a_parameters_section():
    """Each public function of the namespace, ``linalg`` and ``fft`` has numpydoc's
    "Parameters" section, as the API reference renders it (the generated docstrings take
    theirs from ``namespace/parameters.py``)."""
    import inspect

    functions = _public_functions()
    assert {"linalg.cholesky", "fft.fft", "sum"} <= functions.keys()
    missing = sorted(name for name, value in functions.items()
                     if "Parameters\n----------\n" not in (inspect.getdoc(value) or ""))
    assert not missing, f"public functions without a Parameters section: {missing}"


def test_the_parameters_tables_follow_the_signatures():
    """The Parameters section that ``namespace/parameters.py`` gives a function names its
    parameters as ``inspect.signature`` does, in that order (``*arrays`` with its star), and
    a summary of its own (``SUMMARIES``) stands where a generated docstring starts."""
    import inspect

    from infini_cupy.namespace.parameters import PARAMETERS, SUMMARIES

    functions = _public_functions()
    for name, sections in PARAMETERS.items():
        parameters = inspect.signature(functions[name]).parameters.values()
        listed = sections.split("Parameters\n----------\n")[1].split("\n\n")[0]
        documented = [part.strip() for line in listed.splitlines() if not line.startswith(" ")
                      for part in line.split(" : ")[0].split(",")]
        assert documented == [("*" if p.kind is p.VAR_POSITIONAL else "") + p.name
                              for p in parameters], name
    for name, summary in SUMMARIES.items():
        assert inspect.getdoc(functions[name]).splitlines()[0] == summary, name


# A summary that only names the function: a delegated one's default, a creation function's
# "``eye`` on ``device`` (None: the backend's default device)."
BARE_SUMMARY = r"The array API's ``[\w.]+``\.|``[\w.]+`` on ``device`` \(None: .*"


def test_no_summary_only_repeats_the_name():
    """No public docstring starts with the bare "The array API's ``name``." or, for a
    creation function, "``name`` on ``device`` ...": the generated ones start with the
    standard's summary (``namespace/parameters.py``'s ``SUMMARIES``)."""
    import inspect

    bare = sorted(name for name, value in _public_documented().items()
                  if re.fullmatch(BARE_SUMMARY, (inspect.getdoc(value) or "").split("\n", 1)[0]))
    assert not bare, f"public docstrings whose summary only names the function: {bare}"


def test_every_example_is_a_numpydoc_examples_section():
    """An example (``>>>``) in a public docstring is under numpydoc's "Examples" heading, so
    the API reference renders it as the others."""
    import inspect

    docs = {name: inspect.cleandoc(value.__doc__ or "")
            for name, value in _public_documented().items()}
    missing = sorted(name for name, doc in docs.items()
                     if ">>>" in doc and "\nExamples\n--------\n" not in doc)
    assert not missing, f"examples outside a numpydoc Examples section: {missing}"


def test_the_command_line_reference_lists_every_command(site):
    from infini_cupy.__main__ import COMMANDS

    page = (site / "reference" / "cli.html").read_text()
    for name in COMMANDS:
        assert f"python -m infini_cupy {name}" in page, name


def test_the_command_line_reference_counts_the_variants_warmup_compiles():
    """The warmup entry's counts are the variants ``warmup`` selects, per source."""
    from collections import Counter

    from infini_cupy.tools.warmup.command import selected_variants

    text = " ".join((DOCS / "reference" / "cli.md").read_text().split())
    found = re.search(r"compile every kernel variant \(([\d,]+): ([\d,]+) block/grid copies, "
                      r"([\d,]+) staged and ([\d,]+) packed copies, ([\d,]+) elementwise", text)
    assert found, "cli.md's warmup entry no longer gives the counts this test reads"
    total, copies, staged, packed, elementwise = (int(g.replace(",", "")) for g in found.groups())
    variants = selected_variants()
    per_source = Counter(source for source, _ in variants)
    assert (total, copies, staged, packed, elementwise) == (
        len(variants), per_source["rearrange.cu"], per_source["transpose.cu"],
        per_source["packed.cu"], per_source["elementwise.cu"])


def test_the_notebooks_are_rendered_with_outputs(site):
    page = (site / "notebooks" / "00_first_steps.html").read_text()
    assert "cell_output" in page, "the first-steps notebook is rendered without its outputs"
    assert "using emulator" in page or "using cuda" in page


def test_the_built_pages_have_the_accuracy_table_and_the_charts(site):
    page = (site / "user" / "elementwise.html").read_text()
    assert "accuracy-table" in page and "emulator float32" in page
    for chart in ("h100_libraries.png", "h100_model.png"):
        assert (site / "_images" / chart).is_file(), chart
        assert chart in (site / "performance" / "h100.html").read_text()


def _extension(name: str):
    """A module of docs/_ext, imported from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_ext_{name}", DOCS / "_ext" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_performance_charts_are_drawn_from_the_records(tmp_path):
    """The charts' data is the H100 page's table and the JSON records: every row of the
    table, its "ours" the recorded measurement where the case is recorded."""
    pytest.importorskip("matplotlib")
    charts = _extension("perf_charts")
    rows = charts.library_rows()
    table = (DOCS / "performance" / "h100.md").read_text().split("## The bench's cases")[1]
    assert len(rows) == table.split("\n## ")[0].count("\n| ") - 2  # less the header and rule
    measured = {c["case"]: c["measured_fraction"] for c in json.loads(
        charts.MEASURED.read_text())["cases"]}
    for case, ours, *_ in rows:
        if case in measured:
            assert ours == pytest.approx(measured[case], abs=0.006), case
    points = charts.model_points()
    assert points and all(0 < p[2] and 0 < p[4] <= 1.0 for p in points)
    for path in charts.write_charts(tmp_path):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path


def test_the_accuracy_table_renders_every_function():
    accuracy = _extension("accuracy")
    table = json.loads(accuracy.TABLE.read_text())
    lines = accuracy.markdown_table(table)
    assert len(lines) == 2 + len(table["functions"])
    assert "| `exp` | ≤ 2 | CR* | ≤ 2 |" in "\n".join(lines)  # float32: cpu, emulator, cuda
    # float64: cpu (AVX-512 in parentheses where it differs), emulator, cuda
    assert "| CR* (≤ 1) | CR* | ≤ 1 |" in "\n".join(lines)
    assert accuracy.cell("add", "cr") == "CR" and accuracy.cell("logaddexp", None) == "—"


# Development-log wording has no place in user-facing pages: budgets of past work, commit
# comparisons, the machine a figure came from (figures live on the Performance page, each with
# its command, machine and date). gpu-check's own time budget (``--budget``) is a user's word.
DEVELOPMENT_LOG = re.compile(
    r"(?:issue'?s?|us|µs|microsecond) budget|budget (?:is|was) \d|\bcommits?\b|µs before|"
    r"this machine|this 2-core|load average|measured 20\d\d-|"
    r"\bthe issue\b|\bissue \d+", re.IGNORECASE)


def _user_facing_pages():
    yield ROOT / "README.md"
    yield DOCS / "index.md"
    yield DOCS / "getting_started.md"
    yield from sorted((DOCS / "user").glob("*.md"))


@pytest.mark.parametrize("path", list(_user_facing_pages()), ids=lambda p: p.name)
def test_no_development_log_wording(path):
    hits = [f"{path.name}:{n}: {line.strip()}"
            for n, line in enumerate(path.read_text().splitlines(), 1)
            if DEVELOPMENT_LOG.search(line)]
    assert not hits, "development-log wording:\n" + "\n".join(hits)


def _top_level_imports(code: str) -> set[str]:
    """Modules a piece of Python imports unconditionally (unindented import lines)."""
    found = set()
    for line in code.splitlines():
        match = re.match(r"(?:from\s+([\w.]+)\s+import|import\s+([\w., ]+))", line)
        if match:
            names = match.group(1) or match.group(2)
            found.update(n.split()[0].split(".")[0] for n in names.split(",") if n.strip())
    return found


def test_the_docs_extra_has_what_the_build_imports():
    """``pip install -e ".[docs]"`` alone builds the docs (the README's command): every module
    the Sphinx extensions and the executed notebooks import is the package's own, the
    standard library's, or a requirement of the package or of its ``docs`` extra (the
    reference documents ``infini_cupy.dask``, which needs Dask)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    provided = {re.split(r"[<>=\[ ;]", req)[0].lower().replace("-", "_")
                for req in project["dependencies"] + project["optional-dependencies"]["docs"]}
    modules = {"dask"}
    for path in [DOCS / "conf.py", *sorted((DOCS / "_ext").glob("*.py"))]:
        modules |= _top_level_imports(path.read_text())
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text())["cells"]
        modules |= _top_level_imports("\n".join("".join(c["source"]) for c in cells
                                                if c["cell_type"] == "code"))
    modules -= set(sys.stdlib_module_names) | {"infini_cupy", "__future__", "_ext"}
    names = {"pydata_sphinx_theme": "pydata_sphinx_theme", "myst_nb": "myst_nb",
             "sphinx_design": "sphinx_design", "array_api_compat": "array_api_compat",
             "docutils": "sphinx"}  # docutils: a requirement of Sphinx
    missing = {m for m in modules if names.get(m, m) not in provided}
    assert not missing, f"the docs extra lacks {sorted(missing)}"
