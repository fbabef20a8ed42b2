"""The ``torch113`` adapter (conformance/adapters/torch113/): torch_reader.py under Debian's
``python3-torch`` 1.13, on a few committed cases (spec/canonical.md#canonical-reader-cli).  Run when
``conformance/adapters/torch113/setup`` has installed it (CI runs the setup; about 10 s of tests).
"""

from __future__ import annotations

import pytest

from conformance.tests.adapter_runs import committed, start, verdict, warm_and_command

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")
READS = ["pt-zip/dtype-float32", "pt-legacy/state-dict-mlp-torch1.13", "pt-legacy/dtype-float64-torch1.13"]
REFUSES = ["pt-zip/adv-gadget-os-system", "pt-zip/dtype-uint16",
           "pt-zip/quantized-qint8-per-channel-torch1.13", "pt-torchscript/torchscript-tiny"]


def start_runs(selected: list[pytest.Item]) -> None:
    """The module's runs (each starts torch 1.13), side by side from the end of collection (conftest.py)."""
    start("torch113", READS + REFUSES)


@pytest.mark.parametrize("case_id", READS)
def test_torch113_reads_its_own_files_exactly(case_id: str) -> None:
    assert verdict("torch113", committed(case_id))[:2] == ("pass", "pass")


def test_torch113_refusals_are_mapped_onto_the_closed_set() -> None:
    assert verdict("torch113", committed("pt-zip/adv-gadget-os-system"))[:2] == ("pass", "pass")
    result, _, message = verdict("torch113", committed("pt-zip/dtype-uint16"))  # torch 2.x's rebuild function
    assert result == "fail" and message.startswith("unsafe-global: UnpicklingError: Unsupported class "
                                                   "torch._utils._rebuild_tensor_v3"), message
    # torch 1.13's weights_only unpickler has no quantized tensors, even its own
    result, _, message = verdict("torch113", committed("pt-zip/quantized-qint8-per-channel-torch1.13"))
    assert result == "fail" and message.startswith("unsafe-global: UnpicklingError: Unsupported class "
                                                   "torch._utils._rebuild_qtensor"), message
    result, _, message = verdict("torch113", committed("pt-torchscript/torchscript-tiny"))
    assert result == "declined" and message.startswith("unsupported: torchscript-archive"), message


def test_a_warm_run_is_the_command() -> None:
    """The self-tests' warm start (adapter.yaml ``warm``) answers as the command does: same status, same
    output, same error line (the command's run is the first case's; every other case here runs warm)."""
    command, warm = warm_and_command("torch113", READS[0])
    assert command.outcome == "accepted" and command.breakage == ""
    assert (warm.status, warm.stdout, warm.stderr) == (command.status, command.stdout, command.stderr)
