"""pytest options of the conformance suite: ``--reader``, ``--report-json`` and the run limits.

``pytest conformance/`` runs every case against the reader (default: the reference reader).  Runs are
started in a small thread pool as soon as collection ends (each run is a subprocess, so two at a time
keep two cores busy); each test then waits for its own run and judges it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import readers  # noqa: E402
from harness.cases import Case, corpus_root  # noqa: E402
from harness.runner import CANARY, DEFAULT_MEMORY_LIMIT, DEFAULT_TIME_LIMIT, Run, run_reader  # noqa: E402
from harness.verdict import Verdict, judge  # noqa: E402


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("torchfmt conformance")
    g.addoption("--reader", default="reference",
                help="reader to test: reference (default), torch, kaitai, or a command line "
                     "(shell-split; the file's path is appended)")
    g.addoption("--report-json", default=None, metavar="PATH",
                help="write per-case results (id, category, format, features, outcome, detail) here")
    g.addoption("--reader-timeout", type=float, default=DEFAULT_TIME_LIMIT, metavar="SECONDS",
                help=f"wall-clock limit per reader run (default {DEFAULT_TIME_LIMIT:g})")
    g.addoption("--reader-memory", type=int, default=DEFAULT_MEMORY_LIMIT >> 20, metavar="MIB",
                help=f"address-space limit per reader run (default {DEFAULT_MEMORY_LIMIT >> 20})")
    g.addoption("--reader-jobs", type=int, default=min(2, os.cpu_count() or 1), metavar="N",
                help="reader runs in flight at once (default 2)")


class Suite:
    """Session state: the reader, the pool of runs, the results for --report-json."""

    def __init__(self, config: pytest.Config) -> None:
        try:
            self.reader = readers.resolve(config.getoption("--reader"))
        except readers.UnknownReader as e:
            raise pytest.UsageError(str(e)) from None
        self.time_limit = float(config.getoption("--reader-timeout"))
        self.memory_limit = int(config.getoption("--reader-memory")) << 20
        self.jobs = max(1, int(config.getoption("--reader-jobs")))
        self.report_path = config.getoption("--report-json")
        self.pool: ThreadPoolExecutor | None = None
        self.futures: dict[str, Future[Run]] = {}
        self.results: list[dict[str, Any]] = []

    def run(self, path: Path, hints: dict[str, Any], canaries: tuple[Path, ...] = (CANARY,)) -> Run:
        return run_reader(self.reader.command, path, hints, time_limit=self.time_limit,
                          memory_limit=self.memory_limit, canaries=canaries, extra_env=self.reader.env)

    def gives(self, case: Case) -> bool:
        """Whether the reader is given ``case`` at all (a ``trusted_only`` reader only gets trusted ones)."""
        return not case.problems and (case.trusted or not self.reader.trusted_only)

    def judge(self, case: Case, run: Run | None) -> Verdict:
        return judge(case, run, declined_fails=self.reader.declined_fails, inert=self.reader.inert,
                     trusted_only=self.reader.trusted_only, unexpressed=self.reader.unexpressed)

    def prefetch(self, cases: list[Case]) -> None:
        runnable = [c for c in cases if self.gives(c) and c.id not in self.futures]
        if not runnable:
            return
        if self.pool is None:
            self.pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="reader")
        for c in runnable:
            self.futures[c.id] = self.pool.submit(self.run, c.path, c.hints, (CANARY, *c.canaries))

    def result(self, case: Case) -> Run:
        future = self.futures.pop(case.id, None)
        if future is not None:
            return future.result()
        return self.run(case.path, case.hints, (CANARY, *case.canaries))

    def record(self, case: Case, verdict: Verdict, run: Run | None) -> None:
        self.results.append({
            "id": case.id, "tier": case.tier, "category": case.category, "column": case.column,
            "format": case.format, "features": case.features, "outcome": verdict.outcome,
            "kind": verdict.kind, "code": run.code if run else None, "detail": verdict.detail,
            "seconds": round(run.seconds, 3) if run else None,
        })

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def write_report(self, extra: dict[str, Any]) -> None:
        if not self.report_path:
            return
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        doc = {"reader": self.reader.name, "command": self.reader.command,
               "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "counts": counts,
               **extra, "results": sorted(self.results, key=lambda r: r["id"])}
        Path(self.report_path).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


_SUITE = pytest.StashKey[Suite]()
_EXTRA = pytest.StashKey[dict]()


def pytest_configure(config: pytest.Config) -> None:
    config.stash[_SUITE] = Suite(config)
    root = corpus_root()
    config.stash[_EXTRA] = {"corpus": {"path": str(root), "present": root.is_dir()}}


def pytest_collection_finish(session: pytest.Session) -> None:
    cases = [item.callspec.params["case"] for item in session.items
             if hasattr(item, "callspec") and isinstance(item.callspec.params.get("case"), Case)]
    session.config.stash[_SUITE].prefetch(cases)


def pytest_sessionfinish(session: pytest.Session) -> None:
    suite = session.config.stash[_SUITE]
    suite.close()
    suite.write_report(session.config.stash[_EXTRA])


@pytest.fixture(scope="session")
def suite(request: pytest.FixtureRequest) -> Suite:
    return request.config.stash[_SUITE]


@pytest.fixture(scope="session")
def report_extra(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Session-level facts for the report (e.g. whether the corpus tier ran)."""
    return request.config.stash[_EXTRA]
