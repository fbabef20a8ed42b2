"""pytest options of the conformance suite: ``--reader``, ``--report-json``, the case selection and the
run limits.

``pytest conformance/`` runs every case against the reader (default: the reference reader): the modules
of :data:`READER_TESTS`.  Every other test module of the suite is a self-test of the harness (it tests
the judge, not the reader): collected only with ``--self-tests`` or when its file or folder is named on
the command line (:func:`pytest_ignore_collect`), and then run for the reference reader or with
``--self-tests``.  ``--format`` and
``--features`` select cases; ``--declines`` says once that the reader declines whole formats.  Runs are
started in a small thread pool as soon as collection ends (each run is a subprocess, so two at a time
keep two cores busy); the self-tests run first, meanwhile, and each case's test then waits for its own
run and judges it.  The run's header says which
tiers ran, and its end shows the reader's results per format and category.

A reader that declares a batch mode (harness/readers.py; ``--reader-batch`` for a command, or to run the
reference reader so) is started once per run in flight and answers case after case
(spec/canonical.md#canonical-reader-batch, harness/batch.py); ``--per-process`` runs it one process per
file instead.  In batch mode a random sample of the cases (``--batch-recheck``, seed ``--batch-seed``; with
``--batch-recheck-failures`` every failure too) also runs one process per file, and a case whose two
verdicts differ fails, saying both.  One worker takes the slow runs first (by the reader's last run, or
bombs in its first: harness/durations.py, harness/lanes.py) and the others the runs in the order their
tests judge them, so that the first verdicts show at once.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import random
import shlex
import time
import zlib
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from conformance.harness import durations, readers, sandbox, warm
from conformance.harness.batch import BatchSession
from conformance.harness.cases import Case, corpus_root
from conformance.harness.gate import Gate, runs_alone
from conformance.harness.lanes import Lanes
from conformance.harness.runner import CANARY, DEFAULT_MEMORY_LIMIT, DEFAULT_TIME_LIMIT, Run, run_reader
from conformance.harness.verdict import Verdict, harness_error, judge


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
    g.addoption("--format", action="append", default=[], metavar="FORMAT",
                help="run only the cases of this format (t7-binary, t7-ascii, pt-zip, pt-legacy, pt-tar, "
                     "pt-torchscript, ...; a prefix such as t7 or pt selects a family); repeatable")
    g.addoption("--features", action="append", default=[], metavar="FEATURE",
                help="run only the cases that have this feature (conformance/features.yaml); repeatable, "
                     "comma-separated lists allowed: a case with any of them runs")
    g.addoption("--declines", action="append", default=[], metavar="FORMAT",
                help="the reader declines this whole format (or prefix, as --format): its cases are not "
                     "run and count as declined; repeatable")
    g.addoption("--cold", action="store_true",
                help="run the reference reader as a new `python -m torchfmt dump` process for every case "
                     "(default: a warm start for most cases, harness/warm.py, and the command for a sample)")
    g.addoption("--reader-batch", action="store_true",
                help="run the reader in batch mode (spec/canonical.md#canonical-reader-batch): a --reader "
                     "command is then started as it is and speaks the protocol; a named reader runs its "
                     "declared batch command (the default for adapters that declare one)")
    g.addoption("--per-process", action="store_true",
                help="run one process per file even for a reader that declares a batch mode")
    g.addoption("--batch-recheck", default=str(BATCH_RECHECK), metavar="N|all",
                help=f"in batch mode, rerun this many cases picked at random (default {BATCH_RECHECK}; all: "
                     "every case) one process per file; a case whose verdicts differ fails")
    g.addoption("--reader-per-process", default=None, metavar="CMD",
                help="with --reader CMD --reader-batch: the reader's command for one file (shell-split; the "
                     "file's path is appended), which the rechecks run; a named reader declares its own "
                     "(harness/readers.py)")
    g.addoption("--batch-recheck-failures", action="store_true",
                help="in batch mode, also rerun every failed case one process per file")
    g.addoption("--batch-seed", type=int, default=None, metavar="SEED",
                help="the seed that picks the --batch-recheck sample (default: a new one, in the header)")
    g.addoption("--self-tests", action="store_true",
                help="also collect and run the harness's own self-tests (every test module but the "
                     "reader's: conftest.READER_TESTS), for any reader")


#: One case in this many runs the real ``python -m torchfmt dump`` command even with the warm start.
COLD_SAMPLE = 16
#: Cases rerun one process per file in batch mode, by default.
BATCH_RECHECK = 20


def cold_sample(path: Path) -> bool:
    """Whether the file at ``path`` is in the sample run by the command (fixed by its name)."""
    return zlib.crc32(str(path.name if path.parent.name == "" else f"{path.parent.name}/{path.name}")
                      .encode()) % COLD_SAMPLE == 0


def batch_command(reader: readers.Reader, config: pytest.Config) -> list[str] | None:
    """The batch command the reader runs with, or ``None`` for one process per file: a named reader's
    declared one unless ``--per-process`` (the reference reader's only with ``--reader-batch``); a command
    given to ``--reader`` is one with ``--reader-batch``."""
    if config.getoption("--per-process"):
        if config.getoption("--reader-batch"):
            raise pytest.UsageError("--reader-batch and --per-process exclude each other")
        return None
    asked = config.getoption("--reader-batch")
    if reader.name not in readers.names():  # a command line
        return list(reader.command) if asked else None
    if reader.batch is None:
        if asked:
            raise pytest.UsageError(f"--reader-batch: the reader {reader.name!r} declares no batch mode")
        return None
    return reader.batch if asked or not reader.is_reference else None


def per_process_command(reader: readers.Reader, batch: list[str] | None, config: pytest.Config) -> list[str]:
    """The reader's command for one file: a named reader's own; for a ``--reader`` command in batch mode,
    ``--reader-per-process`` (the batch command with a file's path appended is no per-process run: a
    recheck of it would fail every case), which batch mode needs: the cases whose expectation allows more
    than one answer are always rechecked."""
    given = config.getoption("--reader-per-process")
    if reader.name in readers.names():
        if given is not None:
            raise pytest.UsageError(f"--reader-per-process: the reader {reader.name!r} declares its own")
        return list(reader.command)
    if given is not None:
        if batch is None:
            raise pytest.UsageError("--reader-per-process goes with --reader-batch")
        command = shlex.split(given)
        if not command:
            raise pytest.UsageError("--reader-per-process: empty command")
        return command
    if batch is not None:
        raise pytest.UsageError("--reader CMD --reader-batch: give the reader's command for one file with "
                                "--reader-per-process CMD (the rechecks run it: every case whose expectation "
                                "allows more than one answer, and a sample)")
    return list(reader.command)


def recheck_always(case: Case) -> bool:
    """Whether ``case``'s expectation allows more than one answer, so that an order-dependent flip between
    them is seen by the recheck alone (the goldens pass both): an impl case, a reject case that allows
    several codes (or any), an accept case that fixes no description."""
    if case.category == "impl":
        return True
    if case.category == "reject":
        return len(case.errors) != 1
    return case.category == "accept" and case.description is None


def _split(values: list[str]) -> list[str]:
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def format_matches(fmt: str, selectors: list[str]) -> bool:
    """``fmt`` is one of ``selectors`` or starts with one followed by ``-`` (``t7`` selects t7-binary)."""
    return any(fmt == s or fmt.startswith(s + "-") for s in selectors)


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
        self.formats = _split(config.getoption("--format"))
        self.features = set(_split(config.getoption("--features")))
        self.declines = _split(config.getoption("--declines"))
        self.pool: Lanes | None = None
        #: Warm servers for the reference reader, one per run in flight (harness/warm.py).
        self.warm: queue.Queue[warm.WarmServer] | None = None
        self.warm_servers: list[warm.WarmServer] = []
        #: The command of the reader's batch mode, when it runs in one (harness/batch.py).
        self.batch = batch_command(self.reader, config)
        self.sessions: queue.Queue[BatchSession] = queue.Queue()
        #: What the batch processes did after an answer whose verdict was already given: fails the session.
        self.late: list[str] = []
        self.batch_sessions: list[BatchSession] = []
        recheck = str(config.getoption("--batch-recheck"))
        self.recheck_count = None if recheck == "all" else int(recheck)
        #: The command the rechecks run one process per file (harness/readers.py; --reader-per-process).
        self.per_process = per_process_command(self.reader, self.batch, config)
        self.recheck_failures = bool(config.getoption("--batch-recheck-failures"))
        seed = config.getoption("--batch-seed")
        self.seed = seed if seed is not None else random.SystemRandom().randrange(1 << 32)
        #: Per-process runs of the cases rechecked, and what the rechecks found.
        self.rechecks: dict[str, Future[Run]] = {}
        self.rechecked: list[str] = []
        #: Cases rechecked because their expectation allows more than one answer.
        self.recheck_always = 0
        self.differ: list[str] = []
        if self.reader.is_reference and sandbox.bwrap_works():
            readers.fill_bytecode_cache()
        if self.reader.is_reference and warm.available() and not config.getoption("--cold") \
                and self.batch is None:
            self.warm = queue.Queue()
        self.futures: dict[str, Future[Run]] = {}
        #: a case that names its own canary runs with nothing else in flight (harness/gate.py)
        self.gate = Gate()
        self.results: list[dict[str, Any]] = []
        #: Each case's record in ``results`` (its last), to fail one pytest fails after it was judged.
        self.recorded: dict[str, dict[str, Any]] = {}
        #: Each case's seconds in the reader's last run, to start the slow ones first.
        self.last_seconds = durations.load(self.reader.name)

    def run(self, path: Path, hints: dict[str, Any], canaries: tuple[Path, ...] = (CANARY,)) -> Run:
        if self.batch is not None:
            try:
                session = self.sessions.get_nowait()
            except queue.Empty:
                session = BatchSession(self.batch, time_limit=self.time_limit, memory_limit=self.memory_limit,
                                       extra_env=self.reader.env)
                self.batch_sessions.append(session)
            try:
                with self.gate.hold(runs_alone(canaries, CANARY)):
                    return session.run(path, hints, canaries=canaries)
            finally:
                self.sessions.put(session)
        return self.run_process(path, hints, canaries)

    def run_process(self, path: Path, hints: dict[str, Any], canaries: tuple[Path, ...] = (CANARY,)) -> Run:
        """One process for the file (the reference reader: warm, but for a sample, harness/warm.py)."""
        server = None
        if self.warm is not None and not cold_sample(path):
            try:
                server = self.warm.get_nowait()
            except queue.Empty:
                server = warm.WarmServer()
                self.warm_servers.append(server)
        try:
            with self.gate.hold(runs_alone(canaries, CANARY)):
                return run_reader(self.per_process, path, hints, time_limit=self.time_limit,
                                  memory_limit=self.memory_limit, canaries=canaries,
                                  extra_env=self.reader.env, launch=server.start if server else None)
        finally:
            if server is not None:
                self.warm.put(server)

    def selects(self, case: Case) -> bool:
        """Whether ``--format`` and ``--features`` keep ``case``."""
        if self.formats and not format_matches(case.format, self.formats):
            return False
        return not self.features or bool(self.features & set(case.loaded().features))

    def declined_format(self, case: Case) -> bool:
        return format_matches(case.format, self.declines)

    def gives(self, case: Case) -> bool:
        """Whether the reader is given ``case`` at all (a ``trusted_only`` reader only gets trusted ones;
        a format the reader declines with ``--declines`` is never run)."""
        return (not case.problems and (case.trusted or not self.reader.trusted_only)
                and not self.declined_format(case))

    def judge(self, case: Case, run: Run | None) -> Verdict:
        if not case.problems and self.declined_format(case):
            if self.reader.declined_fails:
                return Verdict("fail", f"the reference reader may not decline {case.format}", "declined")
            return Verdict("declined", f"declined: the whole {case.format} format (--declines)")
        if run is not None and run.settle is not None:  # a batch answer: what its process did since
            run.settle()
        if run is not None:
            run.judged = True
        verdict = self.judge_run(case, run)
        if self.batch is None or run is None:
            return verdict
        rerun = self.rechecks.pop(case.id, None)
        if rerun is None and self.recheck_failures and verdict.outcome == "fail":
            rerun = self.pool_submit(self.run_process, case.path, case.hints, (CANARY, *case.canaries))
        if rerun is None:
            return verdict
        alone = rerun.result()
        self.rechecked.append(case.id)
        return self.agree(case, verdict, run, self.judge_run(case, alone), alone)

    def judge_run(self, case: Case, run: Run | None) -> Verdict:
        return judge(case, run, declined_fails=self.reader.declined_fails, inert=self.reader.inert,
                     trusted_only=self.reader.trusted_only, unexpressed=self.reader.unexpressed)

    def agree(self, case: Case, batch: Verdict, run: Run, alone: Verdict, alone_run: Run) -> Verdict:
        """The batch verdict when the per-process run of the case judges the same (outcome, kind and code),
        else a failure that shows both."""
        if (batch.outcome, batch.kind, run.code) == (alone.outcome, alone.kind, alone_run.code):
            return batch
        self.differ.append(case.id)
        def first(v: Verdict) -> str:
            return v.detail.splitlines()[0][:300] if v.detail else ""

        return Verdict("fail", f"the batch answer and one process per file judge differently (answers must "
                               f"not depend on order, spec/canonical.md#canonical-reader-batch): batch "
                               f"{batch.outcome}/{batch.kind} ({first(batch)}) from "
                               f"`{' '.join(self.batch or [])}`; one process per file "
                               f"{alone.outcome}/{alone.kind} ({first(alone)}) from "
                               f"`{' '.join(self.per_process)} PATH`", "batch-differs")

    def pool_submit(self, fn: Any, *args: Any, slow: bool = False) -> Future[Run]:
        if self.pool is None:
            self.pool = Lanes(self.jobs)
        return self.pool.submit(fn, *args, slow=slow)

    def prefetch(self, cases: list[Case]) -> None:
        runnable = [c for c in cases if self.gives(c.loaded()) and c.id not in self.futures]
        if not runnable:
            return
        # (future's table, case, how it runs): in batch mode the sample rerun one process per file first
        # (each a process start: a test that judges a rechecked case waits for both runs, and the tests
        # after it wait behind it), then the reader's runs as their tests judge them; the cases slow last
        # time before all of these (harness/durations.py)
        jobs: list[tuple[dict[str, Future[Run]], Case, Any]] = []
        if self.batch is not None:
            # every case whose expectation allows more than one answer, and a random sample of the others
            always = [c for c in runnable if recheck_always(c)]
            rest = sorted((c for c in runnable if not recheck_always(c)), key=lambda c: c.id)
            count = len(rest) if self.recheck_count is None else min(self.recheck_count, len(rest))
            self.recheck_always = len(always)
            jobs += [(self.rechecks, c, self.run_process)
                     for c in [*always, *random.Random(self.seed).sample(rest, count)]]
        jobs += [(self.futures, c, self.run) for c in runnable]
        slow, quick = durations.split(jobs, [c.id for _, c, _ in jobs], self.last_seconds,
                                      [c.features for _, c, _ in jobs])
        if self.pool is None:
            self.pool = Lanes(self.jobs)
        chosen = [(lane, job) for lane, part in ((True, slow), (False, quick)) for job in part]
        futures = self.pool.submit_all([(how, (c.path, c.hints, (CANARY, *c.canaries)), lane)
                                        for lane, (_, c, how) in chosen])
        for (_, (table, c, _)), future in zip(chosen, futures, strict=True):
            table[c.id] = future

    def result(self, case: Case) -> Run:
        future = self.futures.pop(case.id, None)
        if future is not None:
            return future.result()
        return self.run(case.path, case.hints, (CANARY, *case.canaries))

    def verdict(self, case: Case) -> tuple[Verdict, Run | None]:
        """Run (or collect the prefetched run of) ``case`` and judge it; an exception on the way (the
        run's thread, the parser, the comparator, the verdict) is the case's failure, ``harness-error``,
        never a pass and never an escape that leaves the report without the case."""
        run: Run | None = None
        try:
            run = self.result(case) if self.gives(case) else None
            return self.judge(case, run), run
        except Exception as e:  # any: the verdict must stand for what pytest says
            return harness_error(e, "running the reader" if run is None and self.gives(case)
                                 else "judging the case"), run

    def failed_by_pytest(self, case: Case, when: str, reason: str) -> None:
        """pytest failed the test of ``case`` (in its setup, call or teardown): the report says fail too
        (the case's record made one, whatever it said; kept as it was when it already failed)."""
        line = " ".join(reason.split())[:500]
        record = self.recorded.get(case.id)
        if record is None:
            self.record(case, Verdict("fail", f"pytest failed the test in its {when} before it was "
                                              f"judged: {line}", "harness-error"), None)
        elif record["outcome"] != "fail":
            record.update(outcome="fail", kind="harness-error",
                          detail=f"pytest failed the test in its {when} after it was judged "
                                 f"{record['outcome']} ({record['detail'][:200]}): {line}")

    def record(self, case: Case, verdict: Verdict, run: Run | None) -> None:
        self.results.append({
            "id": case.id, "tier": case.tier, "category": case.category, "column": case.column,
            "format": case.format, "features": case.features, "path": str(case.path),
            "hints": case.hints, "spec": case.spec, "outcome": verdict.outcome,
            "kind": verdict.kind, "code": run.code if run else None, "detail": verdict.detail,
            "seconds": round(run.seconds, 3) if run else None,
        })
        self.recorded[case.id] = self.results[-1]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.quiet(cancel_futures=True)
        for server in self.warm_servers:
            server.close()
        for session in self.batch_sessions:
            session.close()
            self.late += session.late
        if self.pool is not None:  # after the sessions: their processes die with the thread that started them
            self.pool.shutdown()
        sandbox.removals_done()
        durations.save(self.reader.name, {r["id"]: r["seconds"] for r in self.results
                                          if r["seconds"] is not None})

    def batch_stats(self) -> dict[str, Any]:
        return {"requests": sum(s.requests for s in self.batch_sessions),
                "starts": sum(s.starts for s in self.batch_sessions),
                "restarts": sum(s.restarts for s in self.batch_sessions), "seed": self.seed,
                "rechecked": sorted(self.rechecked), "differ": sorted(self.differ),
                "late": list(self.late)}

    def batch_line(self) -> str:
        """What batch mode did: requests, processes, restarts, and the rechecks one process per file."""
        if self.batch is None:
            return ""
        stats = self.batch_stats()
        requests, starts, restarts = stats["requests"], stats["starts"], stats["restarts"]
        verdict = f"{len(self.differ)} differ: {', '.join(self.differ[:10])}" if self.differ else "all agree"
        return (f"batch mode: {requests} requests, {starts} processes started ({restarts} requests ended "
                f"one); "
                f"{len(self.rechecked)} cases rerun one process per file ({self.recheck_always} whose "
                f"expectation allows more than one answer; seed {self.seed}): {verdict}")

    def table(self) -> dict[tuple[str, str], dict[str, int]]:
        """(format, category or corpus) -> outcome -> count, over the cases run so far."""
        rows: dict[tuple[str, str], dict[str, int]] = {}
        for r in self.results:
            row = rows.setdefault((r["format"], r["column"]), {})
            row[r["outcome"]] = row.get(r["outcome"], 0) + 1
        return rows

    def write_report(self, extra: dict[str, Any]) -> None:
        if not self.report_path:
            return
        counts: dict[str, int] = {}
        for r in self.results:
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        by_format: dict[str, dict[str, int]] = {}
        for (fmt, _category), row in self.table().items():
            into = by_format.setdefault(fmt, {})
            for outcome, n in row.items():
                into[outcome] = into.get(outcome, 0) + n
        doc = {"reader": self.reader.name, "command": self.batch or self.reader.command,
               "mode": "batch" if self.batch else "per-process",
               **({"batch": self.batch_stats()} if self.batch else {}),
               "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "counts": counts,
               "counts_by_format": dict(sorted(by_format.items())),
               **extra, "results": sorted(self.results, key=lambda r: r["id"])}
        Path(self.report_path).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


_SUITE = pytest.StashKey[Suite]()
_EXTRA = pytest.StashKey[dict]()


#: The suite's modules that run the reader (the ``suite`` fixture); every other test module is a self-test.
READER_TESTS = ("test_cases.py", "test_truncations.py", "test_unsafe_pickle.py")
HERE = Path(__file__).resolve().parent
#: Folders of the suite that hold data and scripts, never a test module: not walked for tests (the cases'
#: thousands of files).
DATA_FOLDERS = ("cases", "results", "adapters", "harness", "generators")


def _named(config: pytest.Config) -> list[Path]:
    """The paths under ``conformance/`` named on the command line below it (a file, a folder, a node id)."""
    named = []
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path != HERE and path.is_relative_to(HERE):
            named.append(path)
    return named


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave the harness's self-tests uncollected (not even imported: several walk every expected
    description) unless ``--self-tests`` asks for them or their file or folder is named: ``pytest
    conformance`` is the reader's verdict, and ``-k ONE_CASE`` starts at once."""
    path = Path(collection_path)
    if path.parent == HERE and path.name in DATA_FOLDERS:
        return True
    if path.suffix != ".py" or not path.name.startswith("test_") or config.getoption("--self-tests"):
        return None
    path = path.resolve()
    if not path.is_relative_to(HERE):
        return None
    if path.parent == HERE and path.name in READER_TESTS:
        return None
    return True if not any(path == n or n in path.parents for n in _named(config)) else None


def reader_tests_only(config: pytest.Config) -> bool:
    """Whether this run collects the reader's tests alone: no ``--self-tests``, and every path named lies
    in ``conformance/`` and names it or one of :data:`READER_TESTS` (``pytest conformance -k ONE``)."""
    if config.getoption("--self-tests"):
        return False
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path != HERE and not (path.parent == HERE and path.name in READER_TESTS):
            return False
    return True


#: pytest plugins no reader's test uses, left out of a run of those alone: hypothesis's imports hypothesis
#: for its end-of-run summary (about 0.6 s of CPU, a fifth of ``pytest conformance -k ONE_CASE``).
UNUSED_BY_READER_TESTS = ("hypothesispytest",)


def pytest_configure(config: pytest.Config) -> None:
    if reader_tests_only(config):
        for name in UNUSED_BY_READER_TESTS:
            plugin = config.pluginmanager.get_plugin(name)
            if plugin is not None:
                config.pluginmanager.unregister(plugin)
    config.stash[_SUITE] = Suite(config)
    root = corpus_root()
    config.stash[_EXTRA] = {"corpus": {"path": str(root), "present": root.is_dir()}}


def pytest_report_header(config: pytest.Config) -> list[str]:
    """The reader, at the top of the run (the tiers are counted once the cases are collected)."""
    suite = config.stash[_SUITE]
    if suite.batch is not None:
        sample = "every case" if suite.recheck_count is None else f"{suite.recheck_count} cases"
        return [f"torchfmt conformance: reader {suite.reader.name!r} in batch mode "
                f"({' '.join(suite.batch)}); every case whose expectation allows more than one answer and "
                f"{sample} more rerun one process per file ({' '.join(suite.per_process)} PATH; --batch-seed "
                f"{suite.seed})" + (", and every failure" if suite.recheck_failures else ""),
                isolation_line(suite)]
    return [f"torchfmt conformance: reader {suite.reader.name!r} ({' '.join(suite.reader.command)})",
            isolation_line(suite)]


def isolation_line(suite: Suite) -> str:
    """Which isolation the reader's runs get (harness/sandbox.py)."""
    line = f"isolation: {sandbox.isolation()}"
    if suite.warm is not None:
        line += ("; the reference reader's warm start (harness/warm.py) forks from the harness's server: "
                 "the same copies and checks, no sandbox (1 case in 16 runs the command)")
    return line


def tiers_line(suite: Suite, cases: list[Case]) -> str:
    """Which tiers run, counted from the collected cases (never loaded a second time)."""
    root = corpus_root()
    committed = sum(c.tier == "committed" for c in cases)
    if root.is_dir():
        corpus = f"corpus ({sum(c.tier == 'corpus' for c in cases)} cases from {root})"
    else:
        corpus = f"corpus NOT run ({root} does not exist; set TORCHFMT_CORPUS to run it)"
    chosen = ""
    if suite.formats or suite.features:
        chosen = f"; selected by --format {','.join(suite.formats) or '*'} --features " \
                 f"{','.join(sorted(suite.features)) or '*'}"
    return f"tiers: committed ({committed} cases), generated (truncations, unsafe globals), {corpus}" + chosen


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the cases ``--format``/``--features`` leave out and, with another reader than the
    reference, the harness's self-tests (tests that never run the reader: no ``suite`` fixture)."""
    suite = config.stash[_SUITE]
    self_tests = suite.reader.name == "reference" or config.getoption("--self-tests")
    keep, drop = [], []
    for item in items:
        runs_reader = "suite" in getattr(item, "fixturenames", ())
        case = item.callspec.params.get("case") if hasattr(item, "callspec") else None
        generated = isinstance(case, Case) and case.tier == "generated"
        if not runs_reader and not self_tests:
            drop.append(item)
        elif isinstance(case, Case) and not generated and not suite.selects(case):
            drop.append(item)
        elif runs_reader and (suite.formats or suite.features) and (generated or not isinstance(case, Case)) \
                and not _generated_selected(item, suite):
            drop.append(item)
        else:
            keep.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    # The reader's runs start in the pool as soon as collection ends (pytest_collection_finish): the tests
    # that only judge them go last, so that the self-tests use the main thread meanwhile instead of
    # waiting behind the runs.  Each group keeps its collected order.
    items[:] = sorted(keep, key=_order)


def _generated_selected(item: pytest.Item, suite: Suite) -> bool:
    """A generated reader test (truncations, unsafe globals) kept by ``--format``: its format is its
    ``fmt`` parameter or its generated case's; ``--features`` leaves them out."""
    if suite.features:
        return False
    params = item.callspec.params if hasattr(item, "callspec") else {}
    case = params.get("case")
    fmt = params.get("fmt") or (case.format if isinstance(case, Case) else "")
    return not suite.formats or format_matches(str(fmt), suite.formats)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """The reader's results per format and category (pass, fail, declined): apart from the harness's
    self-tests, which pytest's own totals include."""
    suite = config.stash[_SUITE]
    rows = suite.table()
    if not rows:
        return
    tr = terminalreporter
    tr.section(f"reader {suite.reader.name!r}: cases by format and category")
    tr.write_line(f"{'format':<16} {'category':<9} {'pass':>6} {'fail':>6} {'declined':>9}")
    total = {"pass": 0, "fail": 0, "declined": 0}
    for (fmt, column), row in sorted(rows.items()):
        tr.write_line(f"{fmt:<16} {column:<9} {row.get('pass', 0):>6} {row.get('fail', 0):>6} "
                      f"{row.get('declined', 0):>9}")
        for k in total:
            total[k] += row.get(k, 0)
    tr.write_line(f"{'all':<16} {'':<9} {total['pass']:>6} {total['fail']:>6} {total['declined']:>9}")
    if suite.batch is not None:
        tr.write_line(suite.batch_line())
    for problem in suite.late:
        tr.write_line(f"FAILED the batch session (found after the request's verdict): {problem}", red=True)


def pytest_collection_finish(session: pytest.Session) -> None:
    cases = [item.callspec.params["case"] for item in session.items
             if hasattr(item, "callspec") and isinstance(item.callspec.params.get("case"), Case)]
    suite = session.config.stash[_SUITE]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and cases:
        reporter.write_line(tiers_line(suite, cases))
    if session.config.option.collectonly:  # nothing will be judged
        return
    suite.prefetch(cases)
    start_self_test_runs(session.items)


def start_self_test_runs(items: list[pytest.Item]) -> None:
    """Call ``start_runs(selected)`` of each test module that has one, with its selected tests: a
    self-test whose subprocesses take seconds (adapters and differential workers starting torch) starts
    them here, in its own threads, and its tests later judge what they did, each its own."""
    selected: dict[Any, list[pytest.Item]] = {}
    for item in items:
        module = getattr(item, "module", None)
        if callable(getattr(module, "start_runs", None)):
            selected.setdefault(module, []).append(item)
    for module, its_items in selected.items():
        module.start_runs(its_items)


def _order(item: pytest.Item) -> tuple[bool, bool]:
    """Self-tests first, those whose runs started at collection (``start_runs``) after the others, so
    that their runs have had time; then the tests that judge the reader's runs (``suite``)."""
    return ("suite" in getattr(item, "fixturenames", ()),
            callable(getattr(getattr(item, "module", None), "start_runs", None)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """The report never disagrees with pytest: a case's test that pytest fails, in any phase and for
    any reason (a harness exception, a fixture's, a teardown's), is recorded as failed."""
    outcome = yield
    report = outcome.get_result()
    case = item.callspec.params.get("case") if hasattr(item, "callspec") else None
    if report.failed and isinstance(case, Case) and "suite" in getattr(item, "fixturenames", ()):
        reason = call.excinfo.exconly() if call.excinfo is not None else str(report.longrepr)
        item.config.stash[_SUITE].failed_by_pytest(case, report.when, reason)


def pytest_sessionfinish(session: pytest.Session) -> None:
    suite = session.config.stash[_SUITE]
    suite.close()
    suite.write_report(session.config.stash[_EXTRA])
    if suite.late:  # a batch process broke the protocol after a verdict was given: the run fails
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def suite(request: pytest.FixtureRequest) -> Suite:
    return request.config.stash[_SUITE]


@pytest.fixture(scope="session")
def needs_torch() -> None:
    """Skip a self-test whose truth is real torch 2.13 when torch is not installed: the suite itself
    needs no torch (README: the first command installs none; the all-tests command does)."""
    if importlib.util.find_spec("torch") is None:
        pytest.skip("needs torch 2.13, the truth this test compares with: pip install -e '.[test,torch]'")


@pytest.fixture(scope="session")
def report_extra(request: pytest.FixtureRequest) -> dict[str, Any]:
    """Session-level facts for the report (e.g. whether the corpus tier ran)."""
    return request.config.stash[_EXTRA]
