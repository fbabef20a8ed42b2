"""Real files cut at their structural boundaries are ``truncated`` (spec/canonical.md#canonical-error-codes).

Generated at collection, never committed: the cuts of conformance/generators/truncations.py (which
committed accept cases, which offsets, why), each written to a temporary folder and run through the
reader under test, which must exit 1 with ``truncated``.  Each cut is its own test,
``generated/truncation/<case-id>@<offset>``, recorded in ``--report-json`` with tier ``generated``.
"""

from __future__ import annotations

import pytest

from conformance.generators import truncations
from conformance.harness.cases import Case

CUTS = truncations.cuts()
CUT_CASES = truncations.write_cut_cases(CUTS)


@pytest.mark.spec("canonical.md#canonical-error-codes", "canonical.md#canonical-reader-cli",
                  "t7.md#t7-stream", "t7.md#t7-limits", "t7.md#t7-ascii", "pt-zip.md#pt-zip-container",
                  "pt-legacy.md#pt-legacy-storages", "pickle.md#pickle-opcodes", "pt-tar.md#pt-tar-members")
@pytest.mark.parametrize("case", CUT_CASES, ids=[c.id for c in CUT_CASES])
def test_truncated(case: Case, suite) -> None:
    verdict, run = suite.verdict(case)
    suite.record(case, verdict, run)
    if verdict.outcome == "declined":
        pytest.skip(verdict.detail)
    if verdict.outcome != "pass":  # the reader's failure, without the harness's traceback
        pytest.fail(f"{case.id} (reject, cut of {case.path.name}): {verdict.detail}", pytrace=False)


def test_every_format_is_cut_at_enough_points() -> None:
    """The tier stays a tier: each base file gives several cuts, and the total stays within budget."""
    per_base: dict[str, int] = {}
    for base, _ in CUTS:
        per_base[base.id] = per_base.get(base.id, 0) + 1
    assert len(per_base) == sum(len(v) for v in truncations.BASES.values())
    assert all(n >= 5 for n in per_base.values()), per_base
    assert len(CUTS) <= 300
