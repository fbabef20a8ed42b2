"""The ``torch-full`` adapter (conformance/adapters/torch-full/): torch_reader.py with
``torch.load(weights_only=False)``, on a few committed cases (spec/canonical.md#canonical-reader-cli).  It
runs wherever the suite runs (CI installs torch 2.13), and must never be given an untrusted file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.harness.cases import Case
from conformance.harness.runner import CANARY, canaries_touched, canary_marks
from conformance.tests.adapter_runs import committed, start, verdict, warm_and_command

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")
READS = ["pt-zip/state-dict-mlp", "pt-legacy/views-shared-storage", "pt-zip/python-bytes",
         "pt-zip/protocol-4", "pt-torchscript/torchscript-tiny"]


def start_runs(selected: list[pytest.Item]) -> None:
    """The module's runs (each starts torch), side by side from the end of collection (conftest.py)."""
    start("torch-full", READS)


@pytest.mark.parametrize("case_id", READS)
def test_torch_full_reads_what_weights_only_refuses(case_id: str) -> None:
    """weights_only=False loads bytes, protocol 4 and TorchScript (through torch.jit.load) exactly."""
    assert verdict("torch-full", committed(case_id))[:2] == ("pass", "pass")


def test_torch_full_never_sees_an_untrusted_file(tmp_path: Path) -> None:
    """Reject, adversarial and generated cases are declined without a run, an os.system gadget included."""
    from conformance.generators.rejects import unsafe_global_files

    canary = tmp_path / "canary"
    marks = canary_marks([canary, CANARY])  # one left by another process counts only when touched again
    files = unsafe_global_files(tmp_path, f"touch {canary}")
    gadget = Case(id="generated/unsafe-global-pt-zip", tier="generated", category="reject", format="pt-zip",
                  path=files["pt-zip"], errors=("unsafe-global",))
    for case in (gadget, committed("pt-zip/adv-gadget-os-system"), committed("pt-zip/adv-zip-two-roots")):
        assert not case.trusted
        assert verdict("torch-full", case) == ("declined", "declined", ""), case.id
    assert not canaries_touched(marks)


def test_a_warm_run_is_the_command() -> None:
    """The self-tests' warm start (adapter.yaml ``warm``) answers as the command does: same status, same
    output, same error line (the command's run is the first case's; every other case here runs warm)."""
    command, warm = warm_and_command("torch-full", READS[0])
    assert command.outcome == "accepted" and command.breakage == ""
    assert (warm.status, warm.stdout, warm.stderr) == (command.status, command.stdout, command.stderr)
