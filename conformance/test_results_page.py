"""The readers matrix stays true: RESULTS.md and the README summary are what the stored results make, and
every finding a reader's adapter states is shown by that reader's stored run (conformance/matrix.py)."""

from __future__ import annotations

import pytest

from conformance import matrix
from conformance.harness import readers, results

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")


def test_results_page_is_generated() -> None:
    text, readme_block = matrix.render()
    assert matrix.RESULTS_MD.read_text(encoding="utf-8") == text, \
        "conformance/RESULTS.md is stale: run python -m conformance.matrix --render"
    assert readme_block in matrix.README.read_text(encoding="utf-8"), \
        "the README's matrix is stale: run python -m conformance.matrix --render"


@pytest.mark.parametrize("name", readers.names())
def test_findings_are_shown_by_the_stored_run(name: str) -> None:
    found = results.findings(name)
    stored = results.load(name)
    if found:
        assert stored is not None, f"{name} states findings but has no stored results"
    for f in found:
        assert results.unshown(f, stored) == [], f"{name}: not shown by the stored run: {f.text}"


def test_an_absent_reader_is_never_shown_passing() -> None:
    stored = [results.ReaderResults(reader="nothere", absent="not installed")]
    table = matrix.summary_table(stored, {"pt-zip/x": {"column": "accept", "format": "pt-zip"}})
    assert table[-1].startswith("| nothere | absent (not installed)") and "pass" not in table[-1]


def test_a_finding_not_shown_is_caught() -> None:
    r = results.ReaderResults(reader="x", cases={"a": {"outcome": "pass"}, "b": {"outcome": "fail"}})
    assert results.unshown(results.Finding("t", ("a", "b")), r) == ["a"]


def test_a_declined_finding_is_shown_only_by_declines() -> None:
    r = results.ReaderResults(reader="x", cases={"a": {"outcome": "declined"}, "b": {"outcome": "fail"}})
    assert results.unshown(results.Finding("t", ("a", "b"), "declined"), r) == ["b"]
