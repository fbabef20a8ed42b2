"""The tinygrad adapter's mapping on committed cases, when tinygrad is installed (harness/readers.py)."""

from __future__ import annotations

import pytest
from harness import readers
from harness.cases import committed_cases
from harness.runner import run_reader
from harness.verdict import judge

pytestmark = pytest.mark.skipif(not readers.probe("tinygrad")[0] if "tinygrad" in readers.folder_adapters()
                                else True, reason="tinygrad adapter not installed (run its setup)")


@pytest.mark.parametrize("case_id,outcome", [("pt-zip/checkpoint-adam", "pass"),
                                              ("pt-zip/neg-view", "fail"),
                                              ("pt-zip/adv-pickle-protocol-99", "pass")])
def test_mapping(case_id: str, outcome: str) -> None:
    reader = readers.resolve("tinygrad")
    case = next(c for c in committed_cases() if c.id == case_id)
    run = run_reader(reader.command, case.path, case.hints, extra_env=reader.env)
    verdict = judge(case, run, declined_fails=False, unexpressed=reader.unexpressed)
    assert verdict.outcome == outcome, verdict.detail
