"""The ``torch-full`` adapter (conformance/adapters/torch-full/): torch_reader.py with
``torch.load(weights_only=False)``, on a few committed cases (spec/canonical.md#canonical-reader-cli).  It
runs wherever the suite runs (CI installs torch 2.13), and must never be given an untrusted file.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from harness import readers
from harness.cases import CASES_DIR, Case, load_case
from harness.runner import CANARY, run_reader
from harness.verdict import judge

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")


@functools.cache
def resolved(name: str) -> readers.Reader | str:
    """The named reader, or why it is not installed here (probed once per session)."""
    try:
        return readers.resolve(name)
    except readers.UnknownReader as e:
        return str(e)


def verdict(name: str, case: Case) -> tuple[str, str, str]:
    """(verdict outcome, verdict kind, run message) of the reader ``name`` on ``case``; a case that a
    ``trusted_only`` reader must not see is never run."""
    reader = resolved(name)
    if isinstance(reader, str):
        pytest.skip(reader)
    run = run_reader(reader.command, case.path, case.hints, extra_env=reader.env) \
        if case.trusted or not reader.trusted_only else None
    v = judge(case, run, declined_fails=False, inert=reader.inert, trusted_only=reader.trusted_only)
    return v.outcome, v.kind, run.message if run else ""


def committed(case_id: str) -> Case:
    return load_case(CASES_DIR / case_id)


@pytest.mark.parametrize("case_id", ["pt-zip/state-dict-mlp", "pt-legacy/views-shared-storage",
                                     "pt-zip/python-bytes", "pt-zip/protocol-4",
                                     "pt-torchscript/torchscript-tiny"])
def test_torch_full_reads_what_weights_only_refuses(case_id: str) -> None:
    """weights_only=False loads bytes, protocol 4 and TorchScript (through torch.jit.load) exactly."""
    assert verdict("torch-full", committed(case_id))[:2] == ("pass", "pass")


def test_torch_full_never_sees_an_untrusted_file(tmp_path: Path) -> None:
    """Reject, adversarial and generated cases are declined without a run, an os.system gadget included."""
    from generators.rejects import unsafe_global_files

    canary = tmp_path / "canary"
    shared_before = CANARY.exists()  # left by another process on this machine: only a new one counts
    files = unsafe_global_files(tmp_path, f"touch {canary}")
    gadget = Case(id="generated/unsafe-global-pt-zip", tier="generated", category="reject", format="pt-zip",
                  path=files["pt-zip"], errors=("unsafe-global",))
    for case in (gadget, committed("pt-zip/adv-gadget-os-system"), committed("pt-zip/adv-zip-two-roots")):
        assert not case.trusted
        assert verdict("torch-full", case) == ("declined", "declined", ""), case.id
    assert not canary.exists() and (shared_before or not CANARY.exists())
