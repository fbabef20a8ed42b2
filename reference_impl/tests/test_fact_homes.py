"""Facts live once (issue 29): a number or a name the reader defines is read from its home, never
restated as a literal elsewhere in the reader, the suite, the benchmarks or the spec's tools.

Each test scans the source (ast, or the text for a call's literal argument) for one kind of fact and
fails on a new restatement, naming the file and line.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from torchfmt.dtypes import SAFETENSORS_DTYPES

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reference_impl" / "torchfmt"
SCANNED = [PACKAGE, ROOT / "conformance", ROOT / "benchmarks", ROOT / "spec" / "tools"]
#: A recursion limit given as a number: the reader's walks ask for limits.WALK_FRAMES.
LITERAL_FRAMES = re.compile(r"recursion_limit\(\s*[0-9][0-9_]*\s*\)")


def sources(roots: list[Path]) -> list[Path]:
    return [p for root in roots for p in sorted(root.rglob("*.py"))
            if not {"node_modules", "generated", "__pycache__"} & set(p.parts)]


def test_safetensors_dtype_codes_live_in_dtypes() -> None:
    home = PACKAGE / "dtypes.py"
    codes = set(SAFETENSORS_DTYPES.values())
    found = []
    for path in sources(SCANNED):
        if path == home:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in codes:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r}")
    assert found == [], "safetensors dtype codes outside torchfmt/dtypes.py: " + ", ".join(found)


def test_the_reader_walks_ask_for_walk_frames() -> None:
    """The reader's walks and every one of the suite's that mirrors them raise the recursion limit to
    ``limits.WALK_FRAMES``; a harness walk of its own (the comparator, a parser's test) may ask for more,
    but not by restating the reader's number."""
    found = []
    for path in sources(SCANNED):
        for m in LITERAL_FRAMES.finditer(path.read_text(encoding="utf-8")):
            value = int(m.group(0).split("(")[1].rstrip(") ").replace("_", ""))
            if path.is_relative_to(PACKAGE) or value == 20_000:
                line = path.read_text(encoding="utf-8").count("\n", 0, m.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: {m.group(0)}")
    assert found == [], "recursion limits restated as numbers: " + ", ".join(found)
