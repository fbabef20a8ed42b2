"""A pickle whose global would run code is rejected and nothing runs (spec/pickle.md#pickle-no-execution).

Built at test time (never committed): a zip ``.pt`` and a legacy ``.pt`` whose object pickle is
``os.system("touch <canary>")``.  The reader must exit 1 with ``unsafe-global`` and the canary files
must not exist afterwards.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from conformance.generators.rejects import unsafe_global_files
from conformance.harness.cases import Case
from conformance.harness.runner import CANARY, canaries_touched, canary_marks
from conformance.harness.verdict import Verdict


@pytest.mark.spec("canonical.md#canonical-reader-cli", "pickle.md#pickle-no-execution")
@pytest.mark.parametrize("fmt", ["pt-zip", "pt-legacy"])
def test_unsafe_global_is_rejected_and_never_run(fmt: str, tmp_path: Path, suite) -> None:
    canary = tmp_path / "canary"
    command = f"touch {shlex.quote(str(canary))} {shlex.quote(str(CANARY))}"
    files = unsafe_global_files(tmp_path, command)
    marks = canary_marks([canary, CANARY])  # one left by another process counts only when touched again
    case = Case(id=f"generated/unsafe-global-{fmt}", tier="generated", category="reject", format=fmt,
                path=files[fmt], features=["adv-unsafe-global", "pickle-reduce"],
                spec=["pickle.md#pickle-no-execution", "pickle.md#pickle-globals"],
                errors=("unsafe-global",))
    try:
        run = suite.run(case.path, {}, canaries=(canary, CANARY)) if suite.gives(case) else None
        verdict = suite.judge(case, run)
        ran = bool(canaries_touched(marks))
        if ran and verdict.outcome != "fail":  # recorded as the test fails it (conftest.py)
            verdict = Verdict("fail", f"the reader ran os.system from the file: {run.summary()}", "code-ran")
        suite.record(case, verdict, run)
    finally:
        if marks[CANARY] is None:
            CANARY.unlink(missing_ok=True)
    if ran:
        pytest.fail(f"{case.id}: the reader ran os.system from the file: {run.summary()}", pytrace=False)
    if verdict.outcome == "declined":
        pytest.skip(verdict.detail)
    if verdict.outcome != "pass":
        pytest.fail(f"{case.id} (reject): {verdict.detail}", pytrace=False)
