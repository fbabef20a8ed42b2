"""Batch mode and one process per file judge every committed case alike, for the reference reader, torch,
netron and lua-torch (spec/canonical.md#canonical-reader-batch).

Each reader runs every committed case twice: in its batch mode (harness/batch.py, two processes side by
side as the suite runs them) and one process per file: netron and lua-torch as their command; the
reference reader and torch in children forked from a server that imported them once (harness/warm.py: a
fresh process per file, which ``test_harness_warm.py`` and the adapters' self-tests hold to the command),
so that the comparison costs minutes, not the quarter of an hour torch's command takes.  Every case's
verdict (outcome, kind, error code) must be the same.  It takes minutes, so it runs when
``TORCHFMT_BATCH_EQUIVALENCE`` is set (CI sets it; ``.ci/run``); netron's and lua-torch's parts skip when
their setup has not run, unless ``TORCHFMT_REQUIRE_ADAPTERS`` is set.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from conformance.harness import readers, warm
from conformance.harness.batch import BatchSession
from conformance.harness.cases import Case, committed_cases
from conformance.harness.readers import ADAPTERS_DIR
from conformance.harness.runner import CANARY, Run, run_reader
from conformance.harness.verdict import judge

pytestmark = [
    pytest.mark.spec("canonical.md#canonical-reader-batch"),
    pytest.mark.skipif(not os.environ.get("TORCHFMT_BATCH_EQUIVALENCE"),
                       reason="minutes long: set TORCHFMT_BATCH_EQUIVALENCE=1 (CI does)"),
]
JOBS = 2


def reader_or_skip(name: str) -> readers.Reader:
    try:
        return readers.resolve(name)
    except readers.UnknownReader as e:
        if os.environ.get("TORCHFMT_REQUIRE_ADAPTERS"):
            pytest.fail(f"TORCHFMT_REQUIRE_ADAPTERS is set but {e}")
        pytest.skip(str(e))


class Alone:
    """One process per file: the command, or a warm server's forked child (one per thread)."""

    def __init__(self, reader: readers.Reader) -> None:
        self.reader = reader
        self.local = threading.local()
        self.servers: list[warm.WarmServer] = []
        self.lock = threading.Lock()

    def server(self) -> warm.WarmServer | None:
        if not warm.available() or self.reader.name not in ("reference", "torch"):
            return None
        if not hasattr(self.local, "server"):
            if self.reader.name == "reference":
                made = warm.WarmServer()
            else:
                made = warm.WarmServer(str(ADAPTERS_DIR / "torch_reader.py"), ["torch"])
            with self.lock:
                self.servers.append(made)
            self.local.server = made
        return self.local.server

    def run(self, case: Case) -> Run:
        server = self.server()
        return run_reader(self.reader.command, case.path, case.hints, extra_env=self.reader.env,
                          canaries=(CANARY, *case.canaries), launch=server.start if server else None)

    def close(self) -> None:
        for server in self.servers:
            server.close()


def verdicts(reader: readers.Reader, cases: list[Case], run) -> dict[str, tuple]:
    def one(case: Case) -> tuple:
        r = run(case)
        v = judge(case, r, declined_fails=reader.declined_fails, inert=reader.inert,
                  trusted_only=reader.trusted_only, unexpressed=reader.unexpressed)
        return v.outcome, v.kind, r.code, v.detail.splitlines()[0][:200] if v.detail else ""

    with ThreadPoolExecutor(JOBS) as pool:
        return dict(zip((c.id for c in cases), pool.map(one, cases), strict=True))


@pytest.mark.parametrize("name", ["reference", "torch", "netron", "lua-torch"])
def test_batch_and_one_process_per_file_agree_on_every_committed_case(name: str) -> None:
    reader = reader_or_skip(name)
    assert reader.batch is not None, f"{name} declares no batch mode"
    cases = [c for c in committed_cases() if not c.problems and (c.trusted or not reader.trusted_only)]
    sessions: dict[int, BatchSession] = {}
    lock = threading.Lock()

    def batch(case: Case) -> Run:
        with lock:
            session = sessions.get(threading.get_ident())
            if session is None:
                session = sessions[threading.get_ident()] = BatchSession(reader.batch, extra_env=reader.env)
        return session.run(case.path, case.hints, canaries=(CANARY, *case.canaries))

    alone = Alone(reader)
    try:
        in_batch = verdicts(reader, cases, batch)
        by_one = verdicts(reader, cases, alone.run)
    finally:
        for session in sessions.values():
            session.close()
        alone.close()
    differ = [f"{k}: batch {in_batch[k][:3]} ({in_batch[k][3]}), alone {by_one[k][:3]} ({by_one[k][3]})"
              for k in sorted(in_batch) if in_batch[k][:3] != by_one[k][:3]]
    assert len(in_batch) == len(cases) > 700
    assert not differ, f"{len(differ)} of {len(cases)} cases judged differently:\n" + "\n".join(differ[:20])

