"""The ``ptloader`` adapter (conformance/adapters/ptloader/): ptloader 0.3.0's ``ptloader.load`` mapped onto
the contract (spec/canonical.md#canonical-reader-cli), on a few committed cases.  Skips when its setup has not
run here, unless TORCHFMT_REQUIRE_ADAPTERS is set."""

from __future__ import annotations

import pytest

from conformance.tests.adapter_runs import start, verdict

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")
READS = ["pt-zip/dtype-float32", "pt-zip/protocol-4"]


def start_runs(selected: list[pytest.Item]) -> None:
    """The module's runs (each starts ptloader and torch), side by side from the end of collection."""
    start("ptloader", [*READS, "pt-zip/state-dict-mlp", "pt-legacy/dtype-float32",
                       "pt-zip/adv-gadget-os-system", "pt-zip/cycles"])


@pytest.mark.parametrize("case_id", READS)
def test_zip_checkpoints_are_described_exactly(case_id: str) -> None:
    """dtype, shape, stride and values compared; storages, offsets and requires_grad are unexpressed."""
    assert verdict("ptloader", case_id)[:2] == ("pass", "pass")


def test_it_drops_a_state_dicts_metadata() -> None:
    """ptloader returns a state_dict as a plain dict: its ``_metadata`` attribute is lost, which the
    comparison sees (spec/canonical.md#canonical-comparison: attribute names are data)."""
    assert verdict("ptloader", "pt-zip/state-dict-mlp")[:2] == ("fail", "wrong-description")


def test_only_zip_checkpoints_are_read() -> None:
    result, _, message = verdict("ptloader", "pt-legacy/dtype-float32")
    assert result == "declined" and message == "unsupported: ptloader reads only zip checkpoints"


def test_its_refusal_of_a_global_is_unsafe_global() -> None:
    assert verdict("ptloader", "pt-zip/adv-gadget-os-system")[:2] == ("pass", "pass")


def test_its_own_failures_are_shown_not_hidden() -> None:
    """ptloader recurses without limit on a cycle: a valid checkpoint it fails on, with its own error."""
    result, kind, message = verdict("ptloader", "pt-zip/cycles")
    assert (result, kind) == ("fail", "rejected-wrongly")
    assert message.startswith("limit-exceeded: ptloader: RecursionError"), message
