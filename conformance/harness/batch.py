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
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from . import strict_json
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
                 memory_limit: int) -> None:
        self.parent = Path(tempfile.mkdtemp(prefix="torchfmt-batch-"))
        self.work = self.parent / "tmp"
        self.work.mkdir()
        self.proc = _popen(command, self.work, run_env(self.work, None, extra_env), memory_limit,
                           stdin=subprocess.PIPE)
        self.chunks: list[bytes] = []
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
        """The next answer line (without its newline); ``None`` when the process closed its stdout, and
        :class:`TimeoutError` past ``deadline``.  The line is gathered in pieces: a description can be
        hundreds of MB."""
        fd = self.proc.stdout.fileno()
        while True:
            if self.chunks and b"\n" in self.chunks[-1]:
                last = self.chunks[-1]
                cut = last.index(b"\n")
                line = b"".join([*self.chunks[:-1], last[:cut]])
                rest = last[cut + 1:]
                self.chunks = [rest] if rest else []
                return line
            if self.eof:
                return None
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise TimeoutError
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                self.eof = True
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
        """End the process group; its exit status (negative: the signal)."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=EXIT_GRACE)
        except subprocess.TimeoutExpired:
            pass
        return self.proc.returncode

    def wait_exit(self) -> int | None:
        """The exit status of a process that closed its stdout (killed if it lingers)."""
        try:
            return self.proc.wait(timeout=EXIT_GRACE)
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
        for stream in (self.proc.stdout, self.proc.stderr):
            stream.close()
        shutil.rmtree(self.parent, ignore_errors=True)


class BatchSession:
    """The batch process of one reader, started when needed and restarted after a broken request."""

    def __init__(self, command: Sequence[str], *, time_limit: float = DEFAULT_TIME_LIMIT,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT,
                 extra_env: Mapping[str, str] | None = None) -> None:
        self.command = list(command)
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
        request = {"id": self.requests, "path": str(path), "hints": hint_env(hints or {})}
        command = [*self.command, f"<request {self.requests}: {path}>"]
        start = time.monotonic()
        if self.process is None or self.process.eof or self.process.proc.poll() is not None:
            if self.process is not None:
                self.process.close()
            try:
                self.process = _Process(self.command, self.extra_env, self.memory_limit)
            except OSError as e:
                self.process = None
                run = Run(command, None, b"", b"", 0.0)
                run.broken("start", f"cannot start the reader's batch process: {e}")
                return run
            self.starts += 1
        process = self.process
        watched = Watch([process.parent, path.parent, CONFORMANCE, *map(Path, watch)], process.work,
                        canaries)
        line: bytes | None = None
        timed_out = False
        if process.send(json.dumps(request).encode() + b"\n"):
            try:
                line = process.answer(start + self.time_limit)
            except TimeoutError:
                timed_out = True
        seconds = time.monotonic() - start
        run = Run(command, None, line or b"", b"", seconds)
        end = False
        if timed_out:
            process.kill()
            run.broken("timeout", f"time limit of {self.time_limit:g} s exceeded (the batch process was "
                                  "killed)")
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
