"""The harness's strict JSON parser (harness/strict_json.py, spec/canonical.md#canonical-document):
nesting past its depth is refused before the C parser recurses, whatever the process's recursion limit."""

from __future__ import annotations

import pytest
from torchfmt.recursion import recursion_limit

from conformance.harness import strict_json
from conformance.harness.strict_json import DEPTH, JSONError

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


HUGE = "7" * 5000  # past the 4,300 digits Python's int converts: its ValueError escaped the parser


@pytest.mark.spec("canonical.md#canonical-json-numbers")
@pytest.mark.parametrize("text", [
    HUGE, f"-{HUGE}", f'{{"_note": {HUGE}}}', f'{{"objects": [{{"type": "none", "_n": {HUGE}}}]}}',
    "9223372036854775808", "-9223372036854775809", "[1e999]", '{"_x": -1e999}', "1E400", "[Infinity]",
    '{"_x": NaN}', "-Infinity",
])
def test_numbers_without_a_form_are_refused_as_json_errors(text: str) -> None:
    """An integer outside the signed 64-bit range and a number that overflows a double are refused
    wherever they sit, notes included, and only ever as a JSONError (the suite judges it ``output``)."""
    with pytest.raises(JSONError):
        strict_json.loads(text)
    with pytest.raises(JSONError):
        strict_json.loads(text.encode())


@pytest.mark.spec("canonical.md#canonical-json-numbers")
def test_numbers_in_range_parse_exactly() -> None:
    assert strict_json.loads("[9223372036854775807, -9223372036854775808, 0, -0, 1.5, 1e308, 5e-324]") \
        == [(1 << 63) - 1, -(1 << 63), 0, 0, 1.5, 1e308, 5e-324]
    assert type(strict_json.loads("1")) is int and type(strict_json.loads("1.0")) is float
    assert strict_json.loads('{"value": "' + HUGE + '"}') == {"value": HUGE}  # an int value's form


@pytest.mark.parametrize("text", ['{"a": 1', "[1] [2]", b'"\xff"', '{"a": 1, "a": 2}', "", "nul"])
def test_every_malformed_document_is_a_json_error(text: str | bytes) -> None:
    with pytest.raises(JSONError):
        strict_json.loads(text)
