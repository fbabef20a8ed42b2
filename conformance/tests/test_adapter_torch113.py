"""The ``torch113`` adapter (conformance/adapters/torch113/): torch_reader.py under Debian's
``python3-torch`` 1.13, on a few committed cases (spec/canonical.md#canonical-reader-cli).  Run when
``conformance/adapters/torch113/setup`` has installed it (not in CI: over two minutes of apt).
"""

from __future__ import annotations

import functools

import pytest
from harness import readers
from harness.cases import CASES_DIR, Case, load_case
from harness.runner import run_reader
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


@pytest.mark.parametrize("case_id", ["pt-zip/dtype-float32", "pt-legacy/state-dict-mlp-torch1.13",
                                     "pt-legacy/dtype-float64-torch1.13"])
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
    assert result == "declined" and message.startswith("unsupported: torchscript-archive")
