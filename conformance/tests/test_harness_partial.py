"""A partial comparison (an adapter's ``unexpressed`` fields, harness/readers.py) skips only the named
fields and still catches every other difference (spec/canonical.md#canonical-comparison)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.cases import Case
from conformance.harness.compare import compare
from conformance.harness.runner import Run
from conformance.harness.verdict import judge
from conformance.tests.test_harness_compare import H1, item, two_views

pytestmark = pytest.mark.spec("canonical.md#canonical-comparison")

UNEXPRESSED = frozenset({"stride", "storage_offset", "storage", "storages"})


def values_only(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` as a reader that returns realized tensors writes it: the unexpressed fields absent."""
    out = copy.deepcopy(d)
    out.pop("storages")
    for _, v in out["objects"][0]["items"]:
        if v["type"] == "tensor":
            for k in ("stride", "storage_offset", "storage"):
                v.pop(k)
    return out


def test_absent_unexpressed_fields_are_not_differences() -> None:
    expected = two_views()
    actual = values_only(expected)
    assert compare(expected, actual)  # a full comparison sees the absent fields
    assert compare(expected, actual, UNEXPRESSED) == []


def test_a_wrong_value_is_still_caught() -> None:
    expected = two_views()
    actual = values_only(expected)
    item(actual, "b")["sha256"] = H1[::-1].replace("1", "9")
    assert [d.path for d in compare(expected, actual, UNEXPRESSED)] == ["$.objects[0].items[1 'b'][1].sha256"]


@pytest.mark.parametrize("field,value", [("dtype", "float64"), ("shape", [6]), ("requires_grad", True),
                                         ("device", "meta")])
def test_other_tensor_fields_are_still_compared(field: str, value: Any) -> None:
    expected = two_views()
    actual = values_only(expected)
    item(actual, "a")[field] = value
    found = [d.path for d in compare(expected, actual, UNEXPRESSED)]
    assert found and all(p.startswith(f"$.objects[0].items[0 'a'][1].{field}") for p in found)


def test_only_the_named_fields_are_skipped() -> None:
    expected = two_views()
    actual = copy.deepcopy(expected)
    item(actual, "b")["stride"] = [7]
    item(actual, "b")["storage_offset"] = 0
    assert len(compare(expected, actual, frozenset({"stride"}))) == 1  # storage_offset still compared
    assert compare(expected, actual, frozenset({"stride", "storage_offset"})) == []


def test_the_verdict_says_the_comparison_was_partial() -> None:
    expected = two_views()
    case = Case(id="pt-zip/partial", tier="committed", category="accept", format="pt-zip",
                path=Path("/nonexistent"), description=expected, errors=(),
                provenance={"writer": "torch 2.13.0+cpu", "generator": "x"})
    run = Run([], 0, b"", b"", 0.1, outcome="accepted", description=values_only(expected))
    v = judge(case, run, declined_fails=False, unexpressed=UNEXPRESSED)
    assert v.outcome == "pass" and "partial comparison" in v.detail
    assert judge(case, run, declined_fails=False).outcome == "fail"
