"""The harness's strict JSON parser (harness/strict_json.py, spec/canonical.md#canonical-document):
nesting past its depth is refused before the C parser recurses, whatever the process's recursion limit."""

from __future__ import annotations

import pytest
from harness import strict_json
from harness.strict_json import DEPTH, JSONError
from torchfmt.recursion import recursion_limit

pytestmark = pytest.mark.spec("canonical.md#canonical-document")


def nested(depth: int) -> str:
    return '{"objects": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def test_nesting_past_the_depth_is_refused_even_with_the_limit_raised_elsewhere() -> None:
    """Another thread's raised limit is this thread's too: the parse of 100,001 levels ran the C stack
    out (a segfault of the whole suite in CI) instead of stopping at the depth."""
    with recursion_limit(200_000), pytest.raises(JSONError, match="nested too deeply"):
        strict_json.loads(nested(100_001))


def test_the_depth_itself_parses() -> None:
    doc = strict_json.loads(nested(DEPTH))
    node, n = doc["objects"], 2
    while node:
        node, n = node[0], n + 1
    assert n == DEPTH  # the object, then DEPTH - 1 arrays
    with pytest.raises(JSONError, match="nested too deeply"):
        strict_json.loads(nested(DEPTH + 1))


def test_many_brackets_that_do_not_nest_parse() -> None:
    assert len(strict_json.loads("[" + ",".join(["[{}]"] * DEPTH) + "]")) == DEPTH


def test_brackets_inside_strings_are_not_nesting() -> None:
    text = "[" * (DEPTH + 5) + '\\"'
    assert strict_json.loads('["' + text.replace("\\", "\\\\").replace('"', '\\"') + '"]') == [text]
