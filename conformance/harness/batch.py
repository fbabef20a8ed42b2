"""A reader's batch mode: one process answers request after request
(spec/canonical.md#canonical-reader-batch).

A :class:`BatchSession` starts the reader's batch command once, in the conditions a per-process run has
(harness/runner.py: its own temporary folder as cwd, ``HOME`` and ``TMPDIR``, the address-space limit,
its own session; no hints in its environment), and sends it one JSON line per file.  Each answer is
judged as the per-process run would be, and every isolation check stays per request: the time limit
counts from the request (the process's start included, for the first one), the canaries and the watched
folders are checked around each request.  A request with no answer in time (``timeout``), a process that
ends before answering (``crash``) or an answer that is not one line holding a JSON object with the
request's id and a status (``output``) ends the process; the next request starts a new one.  Whether
answers depend on order is checked by the suite (conformance/conftest.py): a sample of cases also runs
one process per file, and a case whose two verdicts differ fails.
"""

from __future__ import annotations

import collections
import json
import os
import secrets
import select
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import strict_json
from .capture import Capture, output_limit
from .runner import (
    CANARY,
    CONFORMANCE,
    DEFAULT_MEMORY_LIMIT,
    DEFAULT_TIME_LIMIT,
    Run,
    Watch,
    _popen,
    check_error_line,
    check_status,
    hint_env,
    run_env,
    signal_name,
)
from .sandbox import TOKEN_ENV, Stage

#: Members an answer may have besides notes (names starting with ``_``).
ANSWER_KEYS = frozenset({"id", "status", "description", "error"})
#: How much of a batch process's stderr is kept, to quote when it dies.
STDERR_TAIL = 4096
#: Request ids grow by a random step below this: an answer cannot be written before its request.
ID_STEP = 1 << 20
MORE_THAN_ONE_LINE = "the batch process wrote more than one line for the request"
#: How long the rest of a line written between requests is waited for.
PENDING_WAIT = 0.5
#: How long at most a request asked alone of a new process is watched after its answer: twice as long
#: as the breakage it is tried for took to show (at least :data:`PENDING_WAIT`), so that a loaded
#: machine does not clear an answer of its own late deed.
TRIAL_WAIT = 5.0
#: How long a process that closed its stdout has to exit before it is killed.
EXIT_GRACE = 5.0
#: How long a process has to exit once the suite ended its standard input (what it does until then, a
#: canary touched at the end, is checked after it exited); one still running then fails the session.
END_GRACE = 30.0
#: What :meth:`BatchSession._request` is given: path, hints, watched folders, canaries, command.
Request = tuple[Path, "Mapping[str, Any] | None", Sequence[Path], Sequence[Path], list[str]]


class _Process:
    """One batch process: its folder, its pipes, the tail of its stderr (drained by a thread, so that a
    talkative reader never blocks on a full pipe)."""

    def __init__(self, command: Sequence[str], extra_env: Mapping[str, str] | None,
                 memory_limit: int, sandbox: bool | None = None) -> None:
        self.stage = Stage("torchfmt-batch-", sandbox=sandbox)
        self.parent, self.work = self.stage.parent, self.stage.work
        env = run_env(self.stage.home, None, extra_env)
        env[TOKEN_ENV] = self.stage.token
        try:
            self.proc = _popen(self.stage.wrap(command, env), self.work, env, memory_limit,
                               stdin=subprocess.PIPE)
        except OSError:
            self.stage.remove()
            raise
        self.chunks: list[bytes] = []
        #: Bytes of the answer line being read (refused past harness/capture.py's output limit).
        self.held = 0
        self.limit = output_limit()
        self.eof = False
        self.tail: collections.deque[bytes] = collections.deque(maxlen=64)
        self.drain = threading.Thread(target=self._drain, daemon=True)
        self.drain.start()

    def _drain(self) -> None:
        fd = self.proc.stderr.fileno()
        while chunk := os.read(fd, 1 << 16):
            self.tail.append(chunk)

    def stderr_tail(self) -> str:
        text = b"".join(self.tail)[-STDERR_TAIL:].decode("utf-8", "replace").strip().splitlines()
        return " | ".join(repr(x[:200]) for x in text[-3:])

    def send(self, line: bytes) -> bool:
        try:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
            return True
        except (BrokenPipeError, OSError):
            return False

    def answer(self, deadline: float) -> bytes | None:
        """The next answer line (without its newline); ``None`` when the process closed its stdout,
        :class:`TimeoutError` past ``deadline`` and :class:`OverflowError` once the line passes the output
        limit (harness/capture.py).  The line is gathered in pieces, spilled to a file past
        harness/capture.py's ``SPILL``: a description can be hundreds of MB."""
        fd = self.proc.stdout.fileno()
        line = Capture(self.limit)
        while True:
            if self.chunks:
                last = self.chunks.pop()
                cut = last.find(b"\n")
                if cut >= 0:
                    if not line.add(last[:cut]):
                        raise OverflowError(line.size)
                    rest = last[cut + 1:]
                    self.chunks = [rest] if rest else []
                    return line.value()
                if not line.add(last):
                    line.close()
                    raise OverflowError(line.size)
            if self.eof:
                line.close()
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                line.close()
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                line.close()
                raise TimeoutError
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self.eof = True
                if line.size:  # an unfinished last line: not an answer
                    line.close()
                    raise OverflowError(-line.size)
                return None
            self.chunks.append(chunk)

    def pending(self) -> bool:
        """Whether the process wrote more than its answer (checked right after it)."""
        if self.chunks:
            return True
        fd = self.proc.stdout.fileno()
        if not select.select([fd], [], [], 0)[0]:
            return False
        chunk = os.read(fd, 1 << 20)
        if not chunk:  # the process ended after answering: the next request starts a new one
            self.eof = True
            return False
        self.chunks.append(chunk)
        return True

    def kill(self) -> int | None:
        """End the process group (and, outside a PID namespace, what it left behind); its exit status
        (negative: the signal)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            pass
        self.stage.end()
        return self.stage.status(self.proc.returncode)

    def wait_exit(self) -> int | None:
        """The exit status of a process that closed its stdout (killed if it lingers)."""
        try:
            return self.stage.status(self.proc.wait(timeout=EXIT_GRACE))
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def stdin_end(self, grace: float = EXIT_GRACE) -> bool:
        """Close stdin (the protocol's end) and give the process ``grace`` seconds to exit; whether it
        did."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            return False
        return True

    def close(self) -> None:
        """End the process: its stdin closed, a moment to exit, then its group ended anyway."""
        self.stdin_end()
        self.kill()
        self.stage.end()
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()
        self.stage.remove()


class BatchSession:
    """The batch process of one reader, started when needed and restarted after a broken request."""

    def __init__(self, command: Sequence[str], *, time_limit: float = DEFAULT_TIME_LIMIT,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT,
                 extra_env: Mapping[str, str] | None = None, sandbox: bool | None = None) -> None:
        self.command = list(command)
        #: bubblewrap's sandbox: ``None`` where it runs (harness/sandbox.py), ``False`` never.
        self.sandbox = sandbox
        self.time_limit = time_limit
        self.memory_limit = memory_limit
        self.extra_env = dict(extra_env or {})
        self.process: _Process | None = None
        self.requests = 0
        self.lock = threading.RLock()
        #: The last request's id; each one grows by a random step.
        self.next_id = secrets.randbelow(ID_STEP)
        #: This process's answers by id, what each request was, and its last answer with a watch set just
        #: after it and its id.
        self.answered: dict[int, Run] = {}
        #: (what each request was, when its answer came: ``time.monotonic()``)
        self.asked: dict[int, tuple[Request, float]] = {}
        self.last: tuple[Run, Watch, int] | None = None
        #: Problems found after the verdict of their request was judged: the session fails (conftest.py).
        self.late: list[str] = []
        #: Processes started, and how many of them ended a broken request.
        self.starts = 0
        self.restarts = 0

    def run(self, path: Path, hints: Mapping[str, Any] | None = None, *, watch: Sequence[Path] = (),
            canaries: Sequence[Path] = (CANARY,)) -> Run:
        """One request: the file's answer, judged as a per-process run of it would be.

        What the process did since its last answer is checked first (:meth:`_between`) and charged to
        that answer; this request then goes to a new process.  A request that a process which answered
        others breaks (a line that is not its answer, an exit without an answer, side effects, a canary)
        is asked again of a new process: when that one answers otherwise, the breakage was an earlier
        answer's (a second answer, a child's stray line, a late side effect) and is charged as
        :meth:`_blame` says, the request keeping the new process's answer
        (spec/canonical.md#canonical-reader-batch)."""
        path = Path(path).resolve()
        self.requests += 1
        command = [*self.command, f"<request {self.requests}: {path}>"]
        with self.lock:
            self._between()
            prior = None
            if self.answered and self.process is not None and not self.process.eof:
                last = max(self.answered)
                prior = (self.answered[last], last == min(self.answered), *self.asked[last])
            request: Request = (path, hints, watch, canaries, command)
            run, named = self._request(*request)
            if named is None and (prior is None or not suspect(run)):
                return run
            if self.process is not None:  # asked again of a new process
                self.process.close()
                self.process = None
            retry, _ = self._request(*request)
            if named is None and (retry.outcome, retry.breakage) == (run.outcome, run.breakage):
                return run  # the file's own answer, in a new process too
            # answered otherwise, unless the new process does the same a moment later (a line late)
            time.sleep(PENDING_WAIT)
            self._settle(retry)
            if retry.outcome == "broken":
                return retry
            kind = "output" if run.breakage in ("output", "crash") else run.breakage or "output"
            if named is not None:
                self._charge(named, kind, "a second answer to this request came with a later one (a new "
                                          "process answers that request otherwise)")
            elif prior is not None:
                answer, first, asked, since = prior
                self._blame(answer, asked, first, [(kind, "the next request found: " + "; ".join(run.problems)
                                                    + " (a new process answers that request otherwise)")],
                            since)
            return retry

    def _request(self, path: Path, hints: Mapping[str, Any] | None, watch: Sequence[Path],
                 canaries: Sequence[Path], command: list[str]) -> tuple[Run, Run | None]:
        """Send the request and judge its answer: (the run, the earlier answer of this process that the
        line read as this request's answer names by its id, if any)."""
        start = time.monotonic()
        if self.process is None or self.process.eof or self.process.proc.poll() is not None:
            if self.process is not None:
                self.process.close()
            self.answered, self.asked = {}, {}
            try:
                self.process = _Process(self.command, self.extra_env, self.memory_limit, self.sandbox)
            except OSError as e:
                self.process = None
                run = Run(command, None, b"", b"", 0.0)
                run.broken("start", f"cannot start the reader's batch process: {e}")
                return run, None
            self.starts += 1
        process = self.process
        copy, given = process.stage.stage(path)
        self.next_id += 1 + secrets.randbelow(ID_STEP)  # grows, and cannot be predicted
        request_id = self.next_id
        request = {"id": request_id, "path": given, "hints": hint_env(hints or {})}
        folders = [process.parent, path.parent, CONFORMANCE, *map(Path, watch)]
        watched = Watch(folders, process.work, process.stage.canaries(canaries), source=path, copy=copy)
        line: bytes | None = None
        timed_out = False
        over: int | None = None
        if process.send(json.dumps(request).encode() + b"\n"):
            try:
                line = process.answer(start + self.time_limit)
            except TimeoutError:
                timed_out = True
            except OverflowError as e:
                over = e.args[0]
        seconds = time.monotonic() - start
        run = Run(command, None, line or b"", b"", seconds)
        end = False
        earlier: Run | None = None
        if timed_out:
            process.kill()
            run.broken("timeout", f"time limit of {self.time_limit:g} s exceeded (the batch process was "
                                  "killed)")
            end = True
        elif over is not None:
            run.broken("output", f"the answer line passed {process.limit} bytes, the canonical text budget "
                                 "and its margin (spec/canonical.md#canonical-reader-cli): not kept"
                       if over > 0 else f"the batch process ended in the middle of an answer line "
                                        f"({-over} bytes without a newline)")
            end = True
        elif line is None:
            run.status = process.wait_exit()
            how = "killed by signal " + f"{-run.status} ({signal_name(-run.status)})" \
                if run.status is not None and run.status < 0 else f"exit status {run.status}"
            tail = process.stderr_tail()
            run.broken("crash", f"the batch process ended before answering ({how})"
                                + (f"; stderr: {tail}" if tail else ""))
            end = True
        else:
            end = not check_answer(run, line, request_id)
            earlier = self._earlier(line) if end else None
            if not end and process.pending():
                run.broken("output", MORE_THAN_ONE_LINE)
                end = True
        # the gap's watch is marked before the request's is checked: a canary touched in between is seen
        # by one of them
        gap = Watch(folders, process.work, process.stage.canaries(canaries), source=path, copy=copy)
        watched.check(run)
        if end:
            process.kill()
            self.restarts += 1
            self.last = None
        else:
            self.answered[request_id] = run
            self.asked[request_id] = ((path, hints, watch, canaries, command), time.monotonic())
            run.settle = lambda: self.settle(run)
            self.last = (run, gap, request_id)
        return run, earlier

    def _earlier(self, line: bytes) -> Run | None:
        """The earlier request of this process an answer line names, if any."""
        try:
            answer = strict_json.loads(line, wrapped=1)
        except (strict_json.JSONError, ValueError):
            return None
        number = answer.get("id") if isinstance(answer, dict) else None
        return self.answered.get(number) if isinstance(number, int) and not isinstance(number, bool) else None

    def _between(self, ending: bool = False, exited: bool = False) -> None:
        """Charge the last answer with what its process did since (:meth:`_gap`), as :meth:`_blame` says;
        the process is then ended, and the next request gets a new one."""
        if self.last is None or self.process is None:
            return
        run, gap, request_id = self.last
        first = request_id == min(self.answered, default=request_id)
        problems, named = self._gap(self.process, run, gap, ending, exited)
        self.last = None
        if problems:
            self.process.kill()
            self.restarts += 1
            if named is not None:
                for kind, problem in problems:
                    self._charge(named, kind, problem)
            else:
                asked, since = self.asked[request_id]
                self._blame(run, None if ending else asked, first, problems, since)

    def _gap(self, process: _Process, run: Run, gap: Watch, ending: bool = False,
             exited: bool = False) -> tuple[list[tuple[str, str]], Run | None]:
        """What ``process`` did since ``run``'s answer: output written before the next request (a second
        line, an early answer, a child's stray line), an exit before standard input ended, side effects
        and canaries, as (kind, problem) pairs; and the earlier answer a line written names by its id."""
        problems = []
        named = None
        if process.pending():
            try:
                line = process.answer(time.monotonic() + PENDING_WAIT)
            except (TimeoutError, OverflowError):
                line = None
            named = self._earlier(line) if line else None
            problems.append(("output", "the batch process wrote on standard output after this answer, before "
                                       "the next request" + (f": {line[:80]!r}" if line else "")))
        elif process.eof or process.proc.poll() is not None:
            if not ending or exited:  # at the end: one that exited before its standard input ended
                status = process.wait_exit()
                problems.append(("output", f"the batch process exited (status {status}) after this answer, "
                                           "before its standard input ended"))
        probe = Run(run.command, None, b"", b"", 0.0)
        if ending:  # what the process left behind ends with it
            process.stage.end()
        gap.check(probe)
        if probe.breakage:
            problems.append((probe.breakage, "after this answer, before the next request: "
                                             + "; ".join(probe.problems)))
        return problems, named

    def _blame(self, run: Run, request: Request | None, first: bool, problems: list[tuple[str, str]],
               since: float | None = None) -> None:
        """Charge ``problems``, seen after ``run``'s answer, to ``run`` where that is fair: its verdict was
        given (the session fails either way), it was its process's first answer, or a new process asked
        it alone does the same (:meth:`_alone`).  Otherwise an earlier answer of the process did it (a
        child's stray line, a late second answer or side effect landing after a later answer), which one
        is not known: the session fails as a whole and ``run`` keeps its answer.  ``since``: when ``run``'s
        answer came (the trial is watched twice as long as the breakage took to show)."""
        shown = time.monotonic() - since if since is not None else 0.0
        if run.judged or first or request is None \
                or self._alone(request, min(TRIAL_WAIT, max(PENDING_WAIT, 2 * shown))):
            for kind, problem in problems:
                self._charge(run, kind, problem)
            return
        self.late.append(f"{run.command[-1]}: " + "; ".join(p for _, p in problems)
                         + " (a new process asked this request alone does not do it: an earlier request of "
                           "the same process did)")

    def _alone(self, request: Request, wait: float = PENDING_WAIT) -> bool:
        """Whether a new process asked only ``request`` breaks, by its answer or in the ``wait`` seconds
        after it.  The session's process is checked and ended first (what the
        trial does, where the canaries are shared, is not that process's), and so is the trial's: the
        next request starts a new one."""
        self._between()
        if self.process is not None:
            self.process.close()
            self.process = None
        try:
            trial, _ = self._request(*request)
            if trial.outcome == "broken" or self.last is None or self.process is None:
                return True
            time.sleep(wait)
            trial, gap, _ = self.last
            return bool(self._gap(self.process, trial, gap)[0])
        finally:
            if self.process is not None:
                self.process.close()
            self.process, self.answered, self.asked, self.last = None, {}, {}, None

    def _charge(self, run: Run, kind: str, problem: str) -> None:
        """Fail an answer already given; one already judged fails the session as a whole (:attr:`late`)."""
        run.broken(kind, problem)
        if kind == "code-ran":
            run.breakage = "code-ran"
        run.outcome = "broken"
        if run.judged:
            self.late.append(f"{run.command[-1]}: {problem}")

    def settle(self, run: Run) -> None:
        """Check what the process did since ``run``'s answer, if it is still the last one (the verdict of
        a request is judged once this has run).  A request in flight is waited for: what it finds (an
        early answer that lands after the gap was checked, read as its answer) may be ``run``'s, and is
        charged before ``run``'s verdict is given."""
        with self.lock:
            self._settle(run)

    def _settle(self, run: Run) -> None:
        if self.last is None or self.last[0] is not run:
            return
        _, gap, request_id = self.last
        self._between()
        if self.last is None and self.process is not None and run.outcome != "broken" \
                and not self.process.eof and self.process.proc.poll() is None:
            # what the process does from now until the next request or its end (a canary touched at
            # standard input's end) is still this answer's, and fails the session
            self.last = (run, gap.again(), request_id)

    def close(self) -> None:
        with self.lock:
            if self.process is not None:
                if self.last is not None:  # one already on its way out exits on its own
                    try:
                        self.process.proc.wait(timeout=PENDING_WAIT)
                    except subprocess.TimeoutExpired:
                        pass
                exited = self.process.proc.poll() is not None  # before its standard input ended
                ended = self.process.stdin_end(END_GRACE)
                self._between(ending=True, exited=exited)
                if not ended:
                    self.late.append(f"the batch process {shlex.join(self.command)[:200]} was still running "
                                     f"{END_GRACE:g} s after its standard input ended (it must exit then)")
                self.process.close()
                self.process = None


def suspect(run: Run) -> bool:
    """Whether a broken request may have been broken by the process's earlier requests: a line that is
    not its answer or one after it (a child's stray line, a late second answer), an exit 0, 1 or 2
    without an answer, side effects or a canary (a timeout or a death by a signal is the request's own)."""
    if run.outcome != "broken":
        return False
    if run.breakage == "crash":
        return "before answering" in run.problems[0] and run.status in (0, 1, 2)
    return run.breakage in ("output", "side-effect", "code-ran")


def check_answer(run: Run, line: bytes, request: int) -> bool:
    """Judge one answer line as the per-process run's status and outputs would be; ``False`` when the
    line breaks the protocol's framing (the process cannot be trusted with the next request)."""
    try:
        answer = strict_json.loads(line, wrapped=1)
    except strict_json.JSONError as e:
        run.broken("output", f"the answer is not one line holding one JSON object: {e}")
        return False
    if not isinstance(answer, dict):
        run.broken("output", "the answer is not a JSON object")
        return False
    # JSON integers, and nothing that equals one in Python (``1.0``, ``true``)
    if type(answer.get("id")) is not int or answer["id"] != request:
        run.broken("output", f"the answer's id is {answer.get('id')!r}, not the request's {request}")
        return False
    status = answer.get("status")
    if type(status) is not int:
        run.broken("output", f"the answer's status is {status!r}, not an integer")
        return False
    run.status = status
    extra = sorted(k for k in set(answer) - ANSWER_KEYS if not k.startswith("_"))
    if extra:
        run.broken("output", f"the answer has members the protocol does not define: {extra}")
        return True
    error = answer.get("error")
    if isinstance(error, str):
        run.stderr = error.encode("utf-8", "surrogatepass")
    if not check_status(run):
        return True
    if status == 0:
        description = answer.get("description")
        if "description" not in answer:
            run.broken("output", "status 0 but the answer has no description")
        elif not isinstance(description, dict):
            run.broken("output", "status 0 but the description is not a JSON object")
        else:
            run.description = description
            run.outcome = "accepted"
        return True
    if "description" in answer:
        run.broken("output", f"status {status} but the answer has a description (stdout is not empty)")
    if not isinstance(error, str):
        run.broken("output", f"status {status} but the answer has no error line")
        run.outcome = "broken"
        return True
    check_error_line(run)
    return True
