"""The package's layers (issue 20): the reader (detect -> container -> object stream -> model, with
describe and the writer beside it) never imports the tools built on it (:mod:`torchfmt.tools`), and no
module imports itself back through others.

Imports are read from the source (ast), every one of them: at the top, inside functions and under
``TYPE_CHECKING``, since each is a dependency a reader of the code has to follow.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "torchfmt"
#: The front: the command line and the package's public names, which may reach the tools (the
#: ``inspect``/``slim``/``convert`` commands; ``torchfmt.load_file`` is the flat view of a tool).
FRONT = {"torchfmt", "torchfmt.cli", "torchfmt.__main__"}
TOOLS = "torchfmt.tools"


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """``{dotted name: (path, is a package)}`` of every module under the package directory ``root``."""
    out = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


def import_graph(root: Path) -> dict[str, dict[str, list[tuple[int, bool]]]]:
    """``{module: {imported module: [(line, at the top level), ...]}}`` for imports within the package
    (``from . import x`` counts as importing the submodule ``x`` when there is one)."""
    mods = modules(root)
    graph: dict[str, dict[str, list[tuple[int, bool]]]] = {m: {} for m in mods}
    for name, (path, is_package) in mods.items():
        package = name if is_package else name.rpartition(".")[0]
        tree = ast.parse(path.read_text(), str(path))
        top = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = package.split(".")
                    up = parts[:len(parts) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                if target in mods:
                    graph[name].setdefault(target, []).append((node.lineno, id(node) in top))
    return graph


def cycles(graph: dict[str, dict[str, list[tuple[int, bool]]]]) -> list[list[str]]:
    """The strongly connected components of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph[v]:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_circles() -> None:
    assert cycles(import_graph(PACKAGE)) == []


Graph = dict[str, dict[str, list[tuple[int, bool]]]]


def folder_graph(graph: Graph) -> Graph:
    """The import graph between folders: each sub-package (``torchfmt.pickle``, ``torchfmt.pt``, ...) is
    one node, each module of the package's own folder (the face ``torchfmt`` among them) another."""
    def node(module: str) -> str:
        return ".".join(module.split(".")[:2])

    out: dict[str, dict[str, list[tuple[int, bool]]]] = {node(m): {} for m in graph}
    for m, targets in graph.items():
        for t, where in targets.items():
            if node(t) != node(m):
                out[node(m)].setdefault(node(t), []).extend(where)
    return out


def test_no_import_circles_between_folders() -> None:
    """pickle/ never imports pt/ (torch's rebuild rules live in the pickle layer, issue 29), the tools
    never import the face that reaches one of them, and so on for every pair of folders."""
    assert cycles(folder_graph(import_graph(PACKAGE))) == []


def test_reader_never_imports_the_tools() -> None:
    graph = import_graph(PACKAGE)
    assert any(m.startswith(TOOLS + ".") for m in graph), "the tools layer exists"
    bad = [f"{m} imports {t} (line {line})" for m, targets in graph.items()
           if m not in FRONT and not m.startswith(TOOLS)
           for t, where in targets.items() if t == TOOLS or t.startswith(TOOLS + ".") for line, _ in where]
    assert bad == []


def test_front_reaches_the_tools_on_demand() -> None:
    """``import torchfmt`` (what ``dump`` and every reader user pays) loads no tool: the package's names
    reach ``torchfmt.tools.flat`` only inside ``load_file``."""
    graph = import_graph(PACKAGE)
    top_level = [t for t, where in graph["torchfmt"].items()
                 if t.startswith(TOOLS) and any(top for _, top in where)]
    assert top_level == []


def test_the_checks_see_what_they_look_for(tmp_path: Path) -> None:
    """A circle through a function-level and a ``TYPE_CHECKING`` import, and a reader module importing
    a tool, are found in a package made for the purpose."""
    pkg = tmp_path / "torchfmt"
    (pkg / "tools").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "tools" / "__init__.py").write_text("")
    (pkg / "tools" / "flat.py").write_text("import math\n")
    (pkg / "a.py").write_text("def f():\n    from .b import y\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
                              "from .tools import flat\n")
    (pkg / "tools" / "reading.py").write_text("from .. import a\n")
    (pkg / "a.py").write_text("def f():\n    from .b import y\n    from .tools import flat\n")
    graph = import_graph(pkg)
    assert cycles(graph) == [["torchfmt.a", "torchfmt.b"]]
    assert cycles(folder_graph(graph)) == [["torchfmt.a", "torchfmt.b", "torchfmt.tools"]]
    assert graph["torchfmt.b"]["torchfmt.tools.flat"] == [(4, True)]
    assert graph["torchfmt.a"]["torchfmt.b"] == [(2, False)]


@pytest.mark.parametrize("name", ["inspect", "slim", "convert", "plot", "sizes", "roles", "flat"])
def test_each_tool_lives_in_the_tools_layer(name: str) -> None:
    assert (PACKAGE / "tools" / f"{name}.py").is_file()
    assert not (PACKAGE / f"{name}.py").exists()
