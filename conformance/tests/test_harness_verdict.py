"""Verdicts: what kind of failure a run is, and how trusted-only and inert readers are judged."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.harness.cases import Case
from conformance.harness.runner import Run
from conformance.harness.verdict import FAILURES, UNTRUSTED, judge

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")

DESCRIPTION = {"description_version": 0, "format": "pt-zip", "objects": [], "storages": {}}
OTHER = {**DESCRIPTION, "objects": [{"type": "none"}]}


def case(category: str, *, writer: str = "torch 2.13.0+cpu", errors: tuple[str, ...] = (),
         tier: str = "committed") -> Case:
    return Case(id=f"pt-zip/{category}", tier=tier, category=category, format="pt-zip",
                path=Path("/nonexistent"), description=DESCRIPTION if category == "accept" else None,
                errors=errors, provenance={"writer": writer, "generator": "x"})


def run(outcome: str, *, code: str | None = None, description: dict | None = None,
        breakage: str = "") -> Run:
    r = Run([], 0, b"", b"", 0.1, outcome=outcome, description=description, code=code,
            message=f"{code}: x" if code else "")
    if breakage:
        r.broken(breakage, "broke")
    return r


@pytest.mark.parametrize("c,r,kind", [
    (case("accept"), run("accepted", description=DESCRIPTION), "pass"),
    (case("accept"), run("accepted", description=OTHER), "wrong-description"),
    (case("accept"), run("rejected", code="truncated"), "rejected-wrongly"),
    (case("reject", errors=("truncated",)), run("rejected", code="bad-value"), "wrong-code"),
    (case("reject", errors=("truncated",)), run("accepted", description=DESCRIPTION), "accepted-wrongly"),
    (case("reject", errors=("truncated",)), run("broken", breakage="timeout"), "timeout"),
    (case("reject", errors=("truncated",)), run("broken", breakage="crash"), "crash"),
    (case("accept"), run("declined"), "declined"),
])
def test_each_outcome_has_its_kind(c: Case, r: Run, kind: str) -> None:
    v = judge(c, r, declined_fails=False)
    assert v.kind == kind, v
    assert v.outcome == "fail" or v.kind in ("pass", "declined")
    assert v.outcome != "fail" or v.kind in FAILURES or v.kind in ("timeout", "crash")


def test_a_trusted_only_reader_is_given_real_writers_accept_cases_only() -> None:
    assert case("accept").trusted
    for untrusted in (case("accept", writer="generated (adversarial)"), case("reject", errors=("x",)),
                      case("impl"), case("accept", tier="corpus")):
        assert not untrusted.trusted
        v = judge(untrusted, None, declined_fails=False, trusted_only=True)
        assert (v.outcome, v.detail) == ("declined", UNTRUSTED)
    v = judge(case("accept"), run("accepted", description=DESCRIPTION), declined_fails=False,
              trusted_only=True)
    assert v.outcome == "pass"


def test_an_inert_reader_passes_gadget_cases_by_accepting_them_without_running_them() -> None:
    gadget = case("reject", errors=("unsafe-global",))
    accepted = run("accepted", description=DESCRIPTION)
    assert judge(gadget, accepted, declined_fails=False).kind == "accepted-wrongly"
    assert judge(gadget, accepted, declined_fails=False, inert=True).outcome == "pass"
    ran = run("broken", breakage="code-ran")
    assert judge(gadget, ran, declined_fails=False, inert=True).kind == "code-ran"
    other = case("reject", errors=("truncated",))
    assert judge(other, accepted, declined_fails=False, inert=True).kind == "accepted-wrongly"


@pytest.mark.spec("canonical.md#canonical-document")
@pytest.mark.parametrize("doc", [
    {}, [], {"_note": 1}, {"format": "pt-zip", "objects": []},
    {**DESCRIPTION, "extra": 1}, {**DESCRIPTION, "format": "pt"}, {**DESCRIPTION, "objects": {}},
    {**DESCRIPTION, "objects": [1]}, {**DESCRIPTION, "objects": [{"value": 1}]},
    {**DESCRIPTION, "storages": []}, {**DESCRIPTION, "storages": {"s0": "x"}},
    {**DESCRIPTION, "description_version": 1}, {**DESCRIPTION, "description_version": 0.0},
])
@pytest.mark.parametrize("c", [case("impl"), case("impl", errors=("truncated",)), case("accept"),
                               case("reject", errors=("unsafe-global",))])
def test_an_accepted_answer_must_be_a_description_document(c: Case, doc: object) -> None:
    """An impl case that fixes no description passed ``{}``: the document's own shape is checked for
    every accepted run, before anything else about it, in every mode (an inert reader's too)."""
    for inert in (False, True):
        v = judge(c, run("accepted", description=doc), declined_fails=False, inert=inert)
        assert (v.outcome, v.kind) == ("fail", "output"), v
        assert "not a description document" in v.detail


def test_a_description_document_passes_a_case_that_fixes_none() -> None:
    for doc in (DESCRIPTION, {k: v for k, v in DESCRIPTION.items() if k != "description_version"},
                {**OTHER, "_notes": {"any": [1.5]}}):
        assert judge(case("impl"), run("accepted", description=doc), declined_fails=False).outcome == "pass"
    partial = {k: v for k, v in DESCRIPTION.items() if k != "storages"}  # a reader with no storages
    assert judge(case("impl"), run("accepted", description=partial), declined_fails=False,
                 unexpressed=frozenset({"storages"})).outcome == "pass"
    assert judge(case("impl"), run("accepted", description=partial), declined_fails=False).kind == "output"
