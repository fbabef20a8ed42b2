"""Self-tests written where the judge's mutants survived the others (mutation/judge.py, issue 25): each
fails on the mutant named in its docstring."""

from __future__ import annotations

from conformance.harness.compare import compare
from conformance.harness.verdict import judge
from conformance.tests.test_harness_verdict import case, run


def test_the_reference_reader_may_not_decline() -> None:
    """``harness/verdict.py:82`` ``if declined_fails`` -> ``False``: a decline of the reference reader
    would be reported apart instead of failing (spec/canonical.md#canonical-reader-cli)."""
    declined = run("declined")
    v = judge(case("accept"), declined, declined_fails=True)
    assert (v.outcome, v.kind) == ("fail", "declined")
    assert judge(case("accept"), declined, declined_fails=False).outcome == "declined"


def _doc(obj: dict) -> dict:
    return {"description_version": 0, "format": "pt-zip", "objects": [obj], "storages": {}}


def _int(v: int) -> dict:
    return {"type": "int", "value": str(v)}


def test_set_items_match_in_any_order_and_only_equal_ones() -> None:
    """A set is a multiset of items: reordered it is equal; a tuple in it is ordered data."""
    def s(*items: dict) -> dict:
        return {"type": "set", "items": list(items)}

    def t(*items: dict) -> dict:
        return {"type": "tuple", "items": list(items)}

    assert compare(_doc(s(_int(1), _int(2), _int(3))), _doc(s(_int(3), _int(1), _int(2)))) == []
    twins = (t(_int(1), _int(2)), t(_int(2), _int(1)))
    assert compare(_doc(s(*twins)), _doc(s(*reversed(twins)))) == []
    assert compare(_doc(s(t(_int(1), _int(2)))), _doc(s(t(_int(2), _int(1)))))
