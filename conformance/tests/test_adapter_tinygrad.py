"""The tinygrad adapter's mapping on committed cases (conformance/adapters/tinygrad/), when tinygrad is
installed (harness/readers.py; skipped otherwise, unless TORCHFMT_REQUIRE_ADAPTERS is set)."""

from __future__ import annotations

import pytest
from adapter_runs import verdict

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")


@pytest.mark.parametrize("case_id,outcome", [("pt-zip/checkpoint-adam", "pass"),
                                              ("pt-zip/neg-view", "fail"),
                                              ("pt-zip/adv-pickle-protocol-99", "pass")])
def test_mapping(case_id: str, outcome: str) -> None:
    assert verdict("tinygrad", case_id)[0] == outcome
