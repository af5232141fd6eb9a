"""The package's shape: every module says first what it owns, imports never go in a circle,
and the tests mirror the package's folders."""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "infini_cupy"
TESTS = pathlib.Path(__file__).resolve().parent


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _module_level_imports(name: str, path: pathlib.Path, modules) -> set[str]:
    """Package modules ``name`` imports at module level (function-level imports are lazy)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in modules else base)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {m for m in found if m in modules and m != name}


@pytest.mark.parametrize("name", sorted(_modules()))
def test_every_module_opens_with_what_it_owns(name):
    path = _modules()[name]
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc and len(doc.splitlines()[0]) > 20, f"{path} needs a docstring saying what it owns"


def test_no_import_cycles():
    modules = _modules()
    graph = {name: _module_level_imports(name, path, modules) for name, path in modules.items()}
    # A package importing its own children to re-export them is not a cycle.
    graph = {name: {d for d in deps if not d.startswith(name + ".")} for name, deps in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module):
        state[module] = 1
        stack.append(module)
        for dep in sorted(graph[module]):
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep):] + [dep]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)


def test_tests_mirror_the_package_folders():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= {p.name for p in TESTS.iterdir() if p.is_dir()}, folders
