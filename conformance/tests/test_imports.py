"""The suite is one package, ``conformance``, imported by one name (issue 29): no module edits
``sys.path`` but the adapters' scripts, and none imports a part of the suite as a top-level name.

Before, ``harness``, ``generators``, ``differential`` and ``mutation`` were put on ``sys.path`` by some 47
files and imported as top-level packages, so the same code was importable under two names (two module
objects, two copies of every module-level state) and what a test imported depended on which other test
module had run first.  The tests outside ``conformance/`` find the package by pytest's ``pythonpath``
(pyproject.toml); commands run as ``python -m conformance.<module>`` from the repository root.

The exception: an adapter's script is a command the harness runs, in a reader's sandbox
(harness/sandbox.py), with whatever interpreter the adapter names: it puts the repository root on
``sys.path`` itself (conformance/README.md, "Batch mode").  A script is a file under
``conformance/adapters/`` with a ``__main__`` block, outside the adapters' shared packages.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = ROOT / "conformance" / "adapters"
#: The adapters' shared packages: imported as conformance.adapters.<name>, never run as commands.
SHARED = ("kaitai", "luatorch")
#: Top-level names the suite's parts had before they were one package: importing one now would load a
#: second copy of that code (or fail).
OLD_NAMES = {"harness", "generators", "differential", "mutation", "kaitai", "luaworker", "luagraph",
             "test_truncations", "torch_describe", "case_folder", "adapter_runs", "conftest"}


def python_files() -> list[Path]:
    """The project's Python files as git lists them (the committed cases hold none)."""
    out = subprocess.run(["git", "ls-files", "-z", "--", "*.py"], cwd=ROOT, capture_output=True,
                         check=True, timeout=60).stdout.decode()
    return [ROOT / name for name in out.split("\0") if name]


def is_adapter_script(path: Path, tree: ast.Module) -> bool:
    """Whether ``path`` is an adapter's command: under ``conformance/adapters/``, outside the shared
    packages, with an ``if __name__ == "__main__":`` block."""
    if not path.is_relative_to(ADAPTERS) or path.relative_to(ADAPTERS).parts[0] in SHARED:
        return False
    return any(isinstance(node, ast.If) and "__main__" in ast.unparse(node.test) for node in tree.body)


#: The one edit allowed outside the adapters' scripts: the warm server's child runs an adapter's script as
#: ``python SCRIPT`` would, with ``sys.path[0]`` the script's folder (harness/warm.py).
RUNS_A_SCRIPT = {("conformance/harness/warm.py", "sys.path[0]")}
#: An edit or an old name in code kept in a string (a ``python -c`` script).
IN_TEXT = re.compile(r"sys\.path(?:\.(?:insert|append|extend)\(|\[[^\]]*\]\s*=|\s*\+?=)"
                     r"|^\s*(?:from|import)\s+(?:" + "|".join(sorted(OLD_NAMES)) + r")\b", re.M)


def path_edits(tree: ast.Module, name: str = "") -> list[int]:
    """The lines that edit ``sys.path``: ``insert``/``append``/``extend`` calls, an assignment to it or to
    a slice or item of it (but :data:`RUNS_A_SCRIPT`), and such code inside a string (``python -c``)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("insert", "append", "extend") \
                and ast.unparse(node.func.value) == "sys.path":
            lines.append(node.lineno)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                text = ast.unparse(target)
                if (text == "sys.path" or text.startswith("sys.path[")) and (name, text) not in RUNS_A_SCRIPT:
                    lines.append(node.lineno)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and IN_TEXT.search(node.value):
            lines.append(node.lineno)
    return lines


def old_name_imports(tree: ast.Module) -> list[str]:
    """``import X`` / ``from X import`` of a name in :data:`OLD_NAMES` (absolute imports only)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in OLD_NAMES]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in OLD_NAMES:
                found.append(node.module)
    return found


#: What a file must contain to be parsed at all (the parse of every file takes seconds).
SUSPECT = re.compile(r"sys\.path|(?:from|import)\s+(?:" + "|".join(sorted(OLD_NAMES)) + r")\b")


@pytest.fixture(scope="module")
def trees() -> dict[Path, ast.Module]:
    """The syntax trees of the files that could break a rule (:data:`SUSPECT`)."""
    texts = {path: path.read_text(encoding="utf-8") for path in python_files()}
    return {path: ast.parse(text, str(path)) for path, text in texts.items() if SUSPECT.search(text)}


def test_only_the_adapters_scripts_edit_sys_path(trees: dict[Path, ast.Module]) -> None:
    found = [f"{path.relative_to(ROOT)}:{line}" for path, tree in trees.items()
             if not is_adapter_script(path, tree) and path != Path(__file__).resolve()
             for line in path_edits(tree, path.relative_to(ROOT).as_posix())]
    assert not found, ("sys.path edited outside the adapters' scripts (import conformance.* instead; a test "
                       f"outside conformance/ finds it by pyproject.toml's pythonpath): {found}")


def test_no_part_of_the_suite_is_imported_by_a_top_level_name(trees: dict[Path, ast.Module]) -> None:
    found = [f"{path.relative_to(ROOT)}: {name}" for path, tree in trees.items()
             if not is_adapter_script(path, tree) for name in old_name_imports(tree)]
    assert not found, f"import the suite's parts as conformance.* (one name each): {found}"


def test_the_check_sees_an_edit_and_a_script() -> None:
    """The checks themselves: an insert into ``sys.path`` is found, and an adapter's script is one."""
    insert = "sys.path" + ".insert(0, 'x')"  # spelled apart: a grep for the project's edits finds none here
    text = f"import sys\n{insert}\nfrom harness import cases\n"
    assert SUSPECT.search(text) and SUSPECT.search("  import mutation.driver")
    assert not SUSPECT.search("import os")
    tree = ast.parse(text)
    assert path_edits(tree) == [2] and old_name_imports(tree) == ["harness"]
    assert path_edits(ast.parse("import sys\nsys.path[:0] = ['x']\nsys.path += ['y']\n")) == [2, 3]
    assert path_edits(ast.parse(f'CODE = "import sys; {insert}"\n')) == [1]
    assert path_edits(ast.parse("sys.path[0] = 'x'\n"), "conformance/harness/warm.py") == []
    script = ast.parse(f"import sys\n{insert}\nif __name__ == '__main__':\n    pass\n")
    assert is_adapter_script(ADAPTERS / "netron" / "run.py", script)
    assert not is_adapter_script(ADAPTERS / "kaitai" / "pt.py", script)
    assert not is_adapter_script(ROOT / "conformance" / "matrix.py", script)
