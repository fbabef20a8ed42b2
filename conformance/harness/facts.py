"""The project's facts as the suite reads them: from the spec's generated tables, never restated.

Each fact has one home in the reference implementation (``reference_impl/torchfmt/limits.py``,
``t7/encodings.py``, ...), and the spec renders it as a generated table (``spec/tools/tables.py``).
The suite (its generators, vocabulary, adapters and benchmarks) reads those tables here, as data: it
measures third-party readers on machines where torchfmt is not installed, and nothing of the reader is
imported for a number.  A self-test (``conformance/tests/test_facts.py``) fails when one of these facts
is written as a literal elsewhere in the suite.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = ROOT / "spec"
LIMITS_FILE = ROOT / "reference_impl" / "torchfmt" / "limits.py"


def generated_table(text: str, name: str) -> list[list[str]]:
    """The body rows of the table between ``<!-- generated: NAME ...-->`` and its end marker, each
    cell stripped of spaces and backticks."""
    key = re.escape(name)
    m = re.search(rf"<!-- generated: {key};.*?-->\n(.*?)<!-- end generated: {key} -->", text, re.S)
    if m is None:
        raise LookupError(f"no generated table {name!r}")
    rows = [line for line in m.group(1).splitlines() if line.startswith("|")]
    return [[c.strip().strip("`") for c in row.strip().strip("|").split("|")] for row in rows[2:]]


@cache
def spec_table(file: str, name: str) -> tuple[tuple[str, ...], ...]:
    """The generated table ``name`` of ``spec/FILE``."""
    text = (SPEC_DIR / file).read_text(encoding="utf-8")
    return tuple(tuple(row) for row in generated_table(text, name))


@cache
def limits() -> dict[str, int]:
    """Each reader limit's value by name (spec/canonical.md#canonical-node-budget, ``reader-limits``)."""
    return {row[0]: int(row[1].replace(",", "")) for row in spec_table("canonical.md", "reader-limits")}


def limit(name: str) -> int:
    """One reader limit's value (``limit("CALL_WORK")``); an unknown name is a ``KeyError``."""
    return limits()[name]


@dataclass(frozen=True)
class Hint:
    """One ``.t7`` hint (spec/canonical.md#canonical-t7-hints): its ``case.yaml`` key, the environment
    variable that hands it to a reader, and the values it may take (as ``case.yaml`` writes them)."""

    key: str
    env: str
    values: tuple[object, ...]


def _hint_value(text: str) -> object:
    return int(text) if text.isdigit() else text


@cache
def t7_hints() -> dict[str, Hint]:
    """The hints by ``case.yaml`` key, in the table's order (spec/canonical.md ``t7-hints``)."""
    return {key: Hint(key, env, tuple(_hint_value(v.strip().strip("`")) for v in values.split(",")))
            for key, env, values in (row[:3] for row in spec_table("canonical.md", "t7-hints"))}


def hint_env() -> dict[str, str]:
    """``case.yaml`` key -> the environment variable that hands it to a reader."""
    return {h.key: h.env for h in t7_hints().values()}


def hint_variables() -> tuple[str, ...]:
    """The environment variables a reader may be handed (a batch request's ``env`` holds only these)."""
    return tuple(h.env for h in t7_hints().values())


@cache
def walk_frames() -> int:
    """The Python frames a walk of a value the limits allow may take (limits.py ``WALK_FRAMES``, read
    with :mod:`ast`, nothing imported): not a limit on files, so not in the spec's table, but a fact the
    generators' walks of torch's values need as the reader's do."""
    tree = ast.parse(LIMITS_FILE.read_text(encoding="utf-8"), filename=str(LIMITS_FILE))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == "WALK_FRAMES" for t in targets):
            value = ast.literal_eval(node.value)
            if isinstance(value, int):
                return value
    raise LookupError(f"{LIMITS_FILE}: no integer WALK_FRAMES")
