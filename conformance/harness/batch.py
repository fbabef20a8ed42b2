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
import select
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
#: How long a process that closed its stdout has to exit before it is killed.
EXIT_GRACE = 5.0


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

    def close(self) -> None:
        """Close stdin (the protocol's end), give the process a moment, then end its group anyway."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            pass
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
        #: Processes started, and how many of them ended a broken request.
        self.starts = 0
        self.restarts = 0

    def run(self, path: Path, hints: Mapping[str, Any] | None = None, *, watch: Sequence[Path] = (),
            canaries: Sequence[Path] = (CANARY,)) -> Run:
        """One request: the file's answer, judged as a per-process run of it would be."""
        path = Path(path).resolve()
        self.requests += 1
        command = [*self.command, f"<request {self.requests}: {path}>"]
        start = time.monotonic()
        if self.process is None or self.process.eof or self.process.proc.poll() is not None:
            if self.process is not None:
                self.process.close()
            try:
                self.process = _Process(self.command, self.extra_env, self.memory_limit, self.sandbox)
            except OSError as e:
                self.process = None
                run = Run(command, None, b"", b"", 0.0)
                run.broken("start", f"cannot start the reader's batch process: {e}")
                return run
            self.starts += 1
        process = self.process
        _copy, given = process.stage.stage(path)
        request = {"id": self.requests, "path": given, "hints": hint_env(hints or {})}
        watched = Watch([process.parent, path.parent, CONFORMANCE, *map(Path, watch)], process.work,
                        process.stage.canaries(canaries), source=path)
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
            end = not check_answer(run, line, self.requests)
            if not end and process.pending():
                run.broken("output", "the batch process wrote more than one line for the request")
                end = True
        watched.check(run)
        if end:
            process.kill()
            self.restarts += 1
        return run

    def close(self) -> None:
        if self.process is not None:
            self.process.close()
            self.process = None


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
