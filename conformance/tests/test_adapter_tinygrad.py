"""The tinygrad adapter's mapping on committed cases (conformance/adapters/tinygrad/), when tinygrad is
installed (harness/readers.py; skipped otherwise, unless TORCHFMT_REQUIRE_ADAPTERS is set)."""

from __future__ import annotations

import pytest

from conformance.tests.adapter_runs import start, verdict

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")
OUTCOMES = [("pt-zip/checkpoint-adam", "pass"), ("pt-zip/neg-view", "fail"),
            ("pt-zip/adv-pickle-protocol-99", "pass")]


def start_runs(selected: list[pytest.Item]) -> None:
    """The module's runs (each starts tinygrad), side by side from the end of collection (conftest.py)."""
    start("tinygrad", [case_id for case_id, _ in OUTCOMES])


@pytest.mark.parametrize("case_id,outcome", OUTCOMES)
def test_mapping(case_id: str, outcome: str) -> None:
    assert verdict("tinygrad", case_id)[0] == outcome
