"""The package's shape: every module says first what it owns, imports never go in a circle
(not even through imports inside functions), no hardware figure is defined twice, and the
tests mirror the package's folders."""

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


def _imports(name: str, path: pathlib.Path, modules, *, lazy: bool = True) -> set[str]:
    """Package modules ``name`` imports: at module level, and with ``lazy`` inside functions
    too (a cycle through a function-level import is a cycle all the same, only deferred)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    tree = ast.parse(path.read_text())
    found = set()
    for node in (ast.walk(tree) if lazy else tree.body):
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


def _cycle(graph) -> list[str] | None:
    """One import cycle of ``graph`` (module -> modules it imports), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(module):
        state[module] = 1
        stack.append(module)
        for dep in sorted(graph[module]):
            if state.get(dep) == 1:
                return stack[stack.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep)
                if found:
                    return found
        stack.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module)
            if found:
                return found
    return None


def _graph(*, lazy: bool):
    modules = _modules()
    graph = {name: _imports(name, path, modules, lazy=lazy) for name, path in modules.items()}
    # A package importing its own children to re-export them is not a cycle, and a module that
    # imports the top-level package inside a function (``import infini_cupy as xp``: the public
    # namespace, for the tools) asks for the finished package, not for a part of it.
    return {name: {d for d in deps if not d.startswith(name + ".")
                   and not (lazy and d == "infini_cupy")}
            for name, deps in graph.items()}


@pytest.mark.parametrize("name", sorted(_modules()))
def test_every_module_opens_with_what_it_owns(name):
    path = _modules()[name]
    doc = ast.get_docstring(ast.parse(path.read_text()))
    assert doc and len(doc.splitlines()[0]) > 20, f"{path} needs a docstring saying what it owns"


def test_no_import_cycles():
    cycle = _cycle(_graph(lazy=False))
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_no_import_cycles_through_imports_inside_functions():
    cycle = _cycle(_graph(lazy=True))
    assert cycle is None, "import cycle (through a function-level import): " + " -> ".join(cycle)


def test_the_cycle_finder_sees_imports_inside_functions(tmp_path):
    a = tmp_path / "a.py"
    a.write_text("def f():\n    from pkg import b\n")
    modules = {"pkg.a": a, "pkg.b": tmp_path / "b.py"}
    assert _imports("pkg.a", a, modules) == {"pkg.b"}
    assert _imports("pkg.a", a, modules, lazy=False) == set()
    assert _cycle({"pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}}) == ["pkg.a", "pkg.b", "pkg.a"]


# Names of hardware figures: each is assigned in one module (infini_cupy/perf/devices.py) and
# imported everywhere else.
HARDWARE = {"SECTOR", "SECTOR_BYTES", "BANKS", "BANK_BYTES", "WARP", "WARP_SIZE",
            "REGISTERS_PER_SM", "SHARED_PER_SM", "SM_COUNT", "SMS", "THREADS_PER_SM",
            "BLOCKS_PER_SM", "STATIC_SHARED_BYTES", "STATIC_SHARED_LIMIT", "MAX_DYNAMIC_SHARED",
            "H100"}


def test_no_hardware_figure_is_defined_twice():
    defined: dict[str, list[str]] = {}
    for name, path in _modules().items():
        for node in ast.parse(path.read_text()).body:
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [node.target] if isinstance(node, ast.AnnAssign) else [])
            for target in targets:
                if isinstance(target, ast.Name) and target.id in HARDWARE:
                    defined.setdefault(target.id, []).append(name)
    assert {k: v for k, v in defined.items() if v != ["infini_cupy.perf.devices"]} == {}


def test_tests_mirror_the_package_folders():
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders <= {p.name for p in TESTS.iterdir() if p.is_dir()}, folders
