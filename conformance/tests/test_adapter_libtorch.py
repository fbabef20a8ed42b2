"""The ``libtorch`` and ``libtorch-jit`` adapters (conformance/adapters/libtorch*/): what libtorch does,
mapped onto the contract (spec/canonical.md#canonical-reader-cli), on a few committed cases.

Run when the libtorch program is built (``conformance/adapters/libtorch/setup``; ``.ci/run`` builds it).
"""

from __future__ import annotations

import pytest

from conformance.harness.cases import CASES_DIR, load_case
from conformance.harness.runner import run_reader
from conformance.tests.adapter_runs import committed, reader, start, verdict

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")
T7_CASE = min(p.name for p in (CASES_DIR / "t7-binary").iterdir() if not p.name.startswith("adv-"))
READS = ["pt-zip/dtype-float32", "pt-zip/dtype-complex128", "pt-zip/quantized-qint8-per-channel",
         "pt-zip/expanded-stride0", "pt-zip/neg-view"]
DECLINES = [("pt-legacy/dtype-float32", "legacy-stream"),
            ("pt-torchscript/torchscript-tiny", "torchscript-archive"), (f"t7-binary/{T7_CASE}", "t7")]


def start_runs(selected: list[pytest.Item]) -> None:
    """The module's runs (each starts libtorch), side by side from the end of collection (conftest.py)."""
    start("libtorch", [*READS, "pt-zip/state-dict-mlp", "pt-zip/adv-gadget-os-system", "pt-zip/protocol-4",
                       *(case_id for case_id, _ in DECLINES)])
    start("libtorch-jit", ["pt-torchscript/torchscript-sequential", "pt-zip/dtype-float32"])


@pytest.mark.parametrize("case_id", READS)
def test_tensors_libtorch_reads_are_described_exactly(case_id: str) -> None:
    assert verdict("libtorch", case_id)[:2] == ("pass", "pass")


def test_a_state_dict_is_shown_failing_with_libtorchs_own_message() -> None:
    """torch::pickle_load turns collections.OrderedDict into None, then asserts: shown, not hidden."""
    result, kind, message = verdict("libtorch", "pt-zip/state-dict-mlp")
    assert (result, kind) == ("fail", "rejected-wrongly")
    assert message.startswith("bad-pickle: ") and "Expected GenericDict but got None" in message


def test_100000_deep_lists_are_described_without_the_describer_crashing() -> None:
    """torch::pickle_load returns the 100,001 nested lists; describe.cpp writes them with an explicit stack
    (a recursive walk overflowed its stack, a crash reported as libtorch's).  The JSON is 100,001 levels
    deep, past what the harness parses, so its text is checked here."""
    r = reader("libtorch")
    case = committed("pt-zip/adv-pickle-deep-lists")
    run = run_reader(r.command, case.path, case.hints, extra_env=r.env)
    depth = 100_001
    head = b'{"description_version":0,"format":"pt-zip","objects":['
    assert run.status == 0, run.stderr[-300:]
    assert run.stdout == (head + b'{"type":"list","items":[' * depth + b"]}" * depth
                          + b'],"storages":{}}\n')


def test_libtorchs_errors_are_mapped_onto_the_closed_set() -> None:
    assert verdict("libtorch", "pt-zip/adv-gadget-os-system") == (
        "pass", "pass", "unsafe-global: Unpickler found unknown type os.system")
    result, _, message = verdict("libtorch", "pt-zip/protocol-4")
    assert result == "fail" and message.startswith("bad-magic: Only Pickle protocol 2 is supported")


def test_what_libtorch_cannot_read_is_declined() -> None:
    for case_id, feature in DECLINES:
        result, _, message = verdict("libtorch", case_id)
        assert result == "declined" and message.startswith(f"unsupported: {feature}"), (case_id, message)


def test_libtorch_jit_reads_torchscript_archives_and_only_trusted_ones() -> None:
    assert verdict("libtorch-jit", "pt-torchscript/torchscript-sequential")[:2] == ("pass", "pass")
    # an adversarial case is never run: declined by the harness before any run
    untrusted = "pt-torchscript/adv-torchscript-as-checkpoint"
    assert not load_case(CASES_DIR / untrusted).trusted
    assert verdict("libtorch-jit", untrusted) == ("declined", "declined", "")
    result, _, message = verdict("libtorch-jit", "pt-zip/dtype-float32")
    assert result == "declined" and "not a TorchScript archive" in message
