"""Every case against the reader under test (spec/canonical.md#canonical-reader-cli).

Committed cases (conformance/cases/<format>/<id>/) and the corpus tier (../shared/corpus, read in
place) are one parametrized test each, with the case id as the test id.
"""

from __future__ import annotations

import pytest

from conformance.harness.cases import CORPUS_TIERS, Case, committed_cases, corpus_cases, corpus_root
from conformance.harness.verdict import judge

COMMITTED = committed_cases(lazy=True)  # each case read when it runs (or --features selects)
CORPUS = corpus_cases()
ALL = COMMITTED + CORPUS


def check(case: Case, suite) -> None:
    """Run (or collect the prefetched run of) ``case`` and judge it; declined -> skip "declined: ...".  An
    exception while running or judging it fails the case, in the report as in pytest (conftest.py)."""
    case.loaded()
    if case.problems:
        verdict = judge(case, None, declined_fails=True)
        suite.record(case, verdict, None)
        pytest.fail(verdict.detail, pytrace=False)
    verdict, run = suite.verdict(case)
    suite.record(case, verdict, run)
    if verdict.outcome == "declined":
        pytest.skip(verdict.detail)
    if verdict.outcome != "pass":
        pytest.fail(f"{case.id} ({case.category}): {verdict.detail}", pytrace=False)


@pytest.mark.parametrize("case", ALL, ids=[c.id for c in ALL])
def test_case(case: Case, suite) -> None:
    check(case, suite)


def test_corpus_tier_present() -> None:
    """The corpus tier says plainly when it did not run, and finds every tier when it did."""
    root = corpus_root()
    if not root.is_dir():
        pytest.skip(f"corpus tier not run: {root} does not exist "
                    "(put the shared corpus there or set TORCHFMT_CORPUS)")
    found = {tier: sum(c.id.startswith(f"corpus/{tier}/") for c in CORPUS) for tier in CORPUS_TIERS}
    assert all(found.values()), f"corpus tiers without cases under {root}: {found}"
