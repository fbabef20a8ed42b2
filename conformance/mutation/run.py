"""Run one mutant against the cases, as the suite runs and judges them.

A :class:`Workspace` is a copy of the package (``<folder>/torchfmt``) in which one module at a time is
replaced by its mutant.  The harness, in this process, imports the unmutated package; only the runs see
the mutant.  Each case runs first in a :class:`Worker` on the copy (:mod:`mutation.worker`: ``torchfmt
dump`` in-process, one case after another, a tenth of the cost of a process per case), its output judged
by the harness's own ``check_output`` and ``judge`` (``declined_fails``: the reference reader's
verdict).  A case that fails there is run again exactly as ``pytest conformance --reader reference``
runs it: a :class:`harness.warm.WarmServer` on the copy (a child forked per run calling the command's
``torchfmt.cli.main``) through :func:`harness.runner.run_reader` (sandbox folder, limits, ``.t7``
hints, the contract's checks, the canaries); the mutant is killed only if that run fails too.  So every
kill is the suite's own verdict, and a survivor passed every case in-process (``driver.baseline``
checks, before each run, that every case passes in-process on the unmutated copy, as it does in the
suite).  A case over the time limit is a failure of kind ``timeout``, as in the suite, and so is a
mutant over its own time limit.

A failure of kind ``side-effect`` (a file changed under ``conformance/`` while the case ran) or
``code-ran`` (the canary's time moved) is run again, :data:`RETRIES` times, and kills only if it
happens every time: the reader writes no file and calls nothing a mutant could turn into a command,
while on a shared machine other processes touch the canary (other test runs of the adversarial
pickles) and edit the tree.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from conformance.harness import readers
from conformance.harness.cases import Case
from conformance.harness.runner import CANARY, Run, check_output, hint_env, run_reader
from conformance.harness.verdict import judge
from conformance.harness.warm import WarmServer

from .operators import Mutant, apply
from .scope import PACKAGE

HERE = Path(__file__).resolve().parent
#: What an in-process run stands for.
COMMAND = ["torchfmt", "dump"]

#: Per case: a mutant that makes a case run longer is killed by ``timeout`` (the suite allows 60 s; no
#: case takes more than a few seconds on the unmutated reader).
CASE_TIME_LIMIT = 20.0
#: Per mutant: past this, the cases not yet run are not run and the mutant counts as killed by timeout.
MUTANT_TIME_LIMIT = 300.0
#: Failures that other processes on the machine can cause, and how often they are run again.
ELSEWHERE = ("side-effect", "code-ran")
RETRIES = 3


@dataclass
class Outcome:
    status: str  # "killed" | "timeout" | "survived" | "uncovered"
    case: str = ""  # the first failing case
    kind: str = ""  # its verdict's kind (harness/verdict.py FAILURES, harness/runner.py BREAKAGES)
    detail: str = ""
    cases_run: int = 0
    seconds: float = 0.0


class Worker:
    """A :mod:`mutation.worker` process on a copy of the package: cases run in it one after another."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        if self.proc is None:
            pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
            # cwd the repository root: ``-c`` imports the suite's package from there, torchfmt from PYTHONPATH
            self.proc = subprocess.Popen([sys.executable, "-c",
                                          "from conformance.mutation.worker import serve; serve()"],
                                         **pipes, cwd=str(HERE.parents[1]), env=self.env, text=True,
                                         start_new_session=True)
        return self.proc

    def run(self, case: Case, time_limit: float) -> Run:
        proc = self._start()
        assert proc.stdin is not None and proc.stdout is not None
        start = time.monotonic()
        reply = None
        try:
            proc.stdin.write(json.dumps({"path": str(case.path), "env": hint_env(case.hints)}) + "\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], time_limit)
            reply = proc.stdout.readline() if ready else None
        except BrokenPipeError:
            reply = ""
        seconds = time.monotonic() - start
        if not reply:  # too slow, or the worker died (a mutant that breaks the import, a crash)
            self.close()
            run = Run(COMMAND, -9 if reply is None else 1, b"", b"", seconds)
            if reply is None:
                run.broken("timeout", f"time limit of {time_limit:g} s exceeded")
            else:
                run.broken("crash", "the in-process worker died")
            run.outcome = "broken"
            return run
        doc = json.loads(reply)
        run = Run(COMMAND, int(doc["status"]), doc["stdout"].encode("latin-1"),
                  doc["stderr"].encode("latin-1"), float(doc["seconds"]))
        check_output(run)
        return run

    def close(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            for f in (self.proc.stdin, self.proc.stdout):
                if f is not None:
                    f.close()
            self.proc = None


class Workspace:
    """A private copy of the package where a module can be swapped for a mutant."""

    def __init__(self, package: Path = PACKAGE) -> None:
        self.package = package
        self.folder = Path(tempfile.mkdtemp(prefix="torchfmt-mutant-"))
        shutil.copytree(package, self.folder / "torchfmt", ignore=shutil.ignore_patterns("__pycache__"))
        self.pycache = self.folder / "pycache"
        self.reader = readers.resolve("reference")
        self.env = {**os.environ, "PYTHONPATH": str(self.folder), "PYTHONPYCACHEPREFIX": str(self.pycache)}
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)

    def _write(self, module: str, text: str) -> None:
        target = self.folder / "torchfmt" / module
        target.write_text(text, encoding="utf-8")
        # its compiled form must never outlive it (the check by mtime and size could miss a change)
        for pyc in (self.pycache / str(target.parent).lstrip("/")).glob(target.stem + ".*.pyc"):
            pyc.unlink()

    def server(self) -> WarmServer:
        return WarmServer(env=self.env)

    def harness_run(self, server: WarmServer, case: Case, time_limit: float) -> Run:
        """``case`` run as the suite runs the reference reader: harness/runner.py on a warm start."""
        return run_reader(self.reader.command, case.path, case.hints, time_limit=time_limit,
                          canaries=(CANARY, *case.canaries), extra_env=self.reader.env, launch=server.start)

    def confirm(self, server: WarmServer, case: Case, time_limit: float) -> tuple[str, str]:
        """The suite's verdict on ``case`` (outcome, kind), failures that other processes can cause run
        again (:data:`ELSEWHERE`)."""
        verdict = judge(case, self.harness_run(server, case, time_limit), declined_fails=True)
        for _ in range(RETRIES):
            if verdict.kind not in ELSEWHERE:
                break
            verdict = judge(case, self.harness_run(server, case, time_limit), declined_fails=True)
        return verdict.outcome, verdict.kind, verdict.detail  # type: ignore[return-value]

    def run_cases(self, cases: list[Case], case_time_limit: float = CASE_TIME_LIMIT,
                  mutant_time_limit: float = MUTANT_TIME_LIMIT) -> Outcome:
        """Run ``cases`` on the package as it is now, stopping at the first failure.

        Each case runs first in the in-process worker (:mod:`mutation.worker`, judged by the harness's
        ``check_output`` and ``judge``); a failure there is run again as the suite runs it (a warm start
        through ``run_reader``) and kills only if it fails there too (a case whose in-process run differs
        from the suite's is then run on in the worker's stead)."""
        start = time.monotonic()
        worker = Worker(self.env)
        server: WarmServer | None = None
        try:
            for n, case in enumerate(cases, 1):
                if time.monotonic() - start > mutant_time_limit:
                    return Outcome("timeout", case.id, "timeout",
                                   f"the mutant's time limit of {mutant_time_limit:g} s ran out",
                                   n - 1, time.monotonic() - start)
                run = worker.run(case, case_time_limit)
                if judge(case, run, declined_fails=True).outcome == "pass":
                    continue
                server = server or self.server()
                outcome, kind, detail = self.confirm(server, case, case_time_limit)
                if outcome != "pass":
                    status = "timeout" if kind == "timeout" else "killed"
                    return Outcome(status, case.id, kind, detail[:300], n, time.monotonic() - start)
            return Outcome("survived", "", "", "", len(cases), time.monotonic() - start)
        finally:
            worker.close()
            if server is not None:
                server.close()

    def failures(self, cases: list[Case], case_time_limit: float = CASE_TIME_LIMIT,
                 harness: bool = False) -> list[str]:
        """Every case of ``cases`` that fails on the package as it is now, run in the in-process worker
        (``harness``: as the suite runs it, a warm start through ``run_reader``)."""
        out = []
        worker = Worker(self.env)
        server = self.server() if harness else None
        try:
            for case in cases:
                run = self.harness_run(server, case, case_time_limit) if server else \
                    worker.run(case, case_time_limit)
                verdict = judge(case, run, declined_fails=True)
                if verdict.outcome != "pass":
                    out.append(f"{case.id}: {verdict.kind}: {verdict.detail[:200]}")
        finally:
            worker.close()
            if server is not None:
                server.close()
        return out

    def run_mutant(self, mutant: Mutant, source: str, cases: list[Case], **limits: float) -> Outcome:
        """``mutant`` of a module whose unmutated source is ``source``, against ``cases``."""
        self._write(mutant.module, apply(mutant, source))
        try:
            return self.run_cases(cases, **limits)
        finally:
            self._write(mutant.module, source)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
