"""The ``lua-torch`` adapter (conformance/adapters/lua-torch/): real Lua Torch's File:readObject, described
through describe.lua and luatorch/graph.py, on a few committed cases
(spec/canonical.md#canonical-reader-cli).  Run
where ``conformance/adapters/lua-torch/setup`` has built or linked Lua Torch (CI builds it); skipped
elsewhere,
failed instead under TORCHFMT_REQUIRE_ADAPTERS.
"""

from __future__ import annotations

import pytest

from conformance.harness.batch import BatchSession
from conformance.harness.verdict import judge
from conformance.tests.adapter_runs import committed, reader, start, verdict

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")
READS = [
    "t7-binary/tensor-float-2x3",
    "t7-binary/nn-sequential-float",
    "t7-binary/table-self-cycle",
    "t7-binary/tds-hash-vec",
    "t7-binary/long4-longstorage",
    "t7-binary/bigendian-table",
    "t7-ascii/ascii-tensor-half-2x3",
    "t7-ascii/serialize-ascii",
    "t7-binary/multi-object-stream",
]
OTHERS = [
    "pt-zip/dtype-float32",
    "t7-binary/cuda-tensor-float",
    "t7-binary/func-upvalues",
    "t7-binary/reject-truncated-in-storage-data",
    "t7-binary/reject-unknown-type-code",
    "t7-binary/reject-view-offset-outside-storage",
    "t7-binary/adv-t7-storage-ref-to-table",
    "t7-binary/adv-t7-key-nil",
]


def start_runs(selected: list[pytest.Item]) -> None:
    """The module's runs, side by side from the end of collection (conftest.py)."""
    start("lua-torch", READS + OTHERS)


@pytest.mark.parametrize("case_id", READS)
def test_lua_reads_the_files_it_wrote_as_expected(case_id: str) -> None:
    """Binary, ascii, 4-byte longs, big-endian, a cycle, tds, nn, several objects: as the case expects."""
    assert verdict("lua-torch", case_id)[:2] == ("pass", "pass")


def test_what_lua_cannot_read_is_declined() -> None:
    result, _, message = verdict("lua-torch", "pt-zip/dtype-float32")
    assert result == "declined" and message.startswith("unsupported: pt files"), message
    result, _, message = verdict("lua-torch", "t7-binary/cuda-tensor-float")  # cutorch is not built
    assert result == "declined" and "torch.CudaTensor" in message, message
    result, _, message = verdict("lua-torch", "t7-binary/func-upvalues")
    assert result == "declined" and message.startswith("unsupported: t7-function"), message


def test_lua_errors_are_mapped_by_torch7s_message() -> None:
    result, _, message = verdict("lua-torch", "t7-binary/reject-truncated-in-storage-data")
    assert result == "pass" and message.startswith("truncated: lua-torch: torch/File.lua:"), message
    assert "read error: read 2 blocks instead of 6" in message
    result, _, message = verdict("lua-torch", "t7-binary/reject-unknown-type-code")
    assert result == "pass" and message.endswith("unknown object"), message
    result, _, message = verdict("lua-torch", "t7-binary/adv-t7-key-nil")
    assert (
        result == "pass" and message.startswith("bad-value: lua-torch:") and "table index is nil" in message
    )


def test_what_lua_does_with_a_hostile_file_is_what_the_harness_sees() -> None:
    """No check of the adapter's own: Lua loads a view outside its storage (reading the memory after it),
    and dies by SIGSEGV when a tensor's storage slot names a table."""
    result, kind, _ = verdict("lua-torch", "t7-binary/reject-view-offset-outside-storage")
    assert (result, kind) == ("fail", "accepted-wrongly")
    result, kind, _ = verdict("lua-torch", "t7-binary/adv-t7-storage-ref-to-table")
    assert (result, kind) == ("fail", "crash")


def test_batch_mode_judges_every_case_as_its_own_process_does() -> None:
    """``run.py --batch`` (spec/canonical.md#canonical-reader-batch: one serve.lua, which loaded torch once,
    forks a child per file) gives every case here the verdict and message of ``run.py PATH``, the .pt file
    it declines and the SIGSEGV of adv-t7-storage-ref-to-table in mid-batch included: the batch process dies
    with the signal (a crash, as the per-process run's) and the next case gets a new one."""
    r = reader("lua-torch")
    assert r.batch is not None
    session = BatchSession(r.batch, extra_env=r.env)
    order = [*READS, *OTHERS, *READS[:2]]  # the crash, then more cases
    got = {}
    try:
        for case_id in order:
            case = committed(case_id)
            run = session.run(case.path, case.hints)
            v = judge(case, run, declined_fails=False, inert=r.inert, trusted_only=r.trusted_only,
                      unexpressed=r.unexpressed)
            got[case_id] = (v.outcome, v.kind, run.message)
    finally:
        session.close()
    assert {k: verdict("lua-torch", k) for k in got} == got
    assert got["t7-binary/adv-t7-storage-ref-to-table"][:2] == ("fail", "crash")
    assert (session.requests, session.starts, session.restarts) == (len(order), 2, 1)
