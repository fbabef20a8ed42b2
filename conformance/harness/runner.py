"""Run any reader on one file, under limits, and check what it did (spec/canonical.md#canonical-reader-cli).

``READER... PATH`` runs with stdin closed, cwd, HOME and TMPDIR set to a fresh temporary folder, a
wall-clock limit and an address-space limit (RLIMIT_AS), and the case's ``.t7`` hints as
``TORCHFMT_T7_*`` environment variables (spec/canonical.md#canonical-t7-hints).  Whatever the case
expects, the run is *broken* when the exit status is not 0, 1 or 2, when the output breaks the
contract for that status, or when the reader created, changed or removed anything outside its
temporary folder: the case folder, the project's ``conformance/`` tree and the folder holding the
temporary folder are snapshotted before and after, and the :data:`CANARY` path must not be created or
touched.
"""

from __future__ import annotations

import hashlib
import os
import re
import resource
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import strict_json
from .capture import STDERR_TAIL, STDERR_WHOLE, Capture, Stderr, output_limit
from .fswatch import TreeWatch
from .sandbox import TOKEN_ENV, Stage
from .vocabulary import CONFORMANCE, HINT_ENV, error_codes

DEFAULT_TIME_LIMIT = 60.0
DEFAULT_MEMORY_LIMIT = 2 << 30
#: A fixed path that adversarial cases may name (e.g. a pickle whose global would ``touch`` it);
#: a reader that creates or touches it has run code from the file.  Every run checks it; a case may add
#: its own (case.yaml ``canary``).
CANARY = Path("/tmp/torchfmt-conformance-canary")
#: Variables every run gets that an interpreter or a library reads once, as it starts (an adapter's warm
#: server starts with them too, harness/warm.py): no bytecode written, one OpenMP thread.
START_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"}
#: Folders left out of snapshots: the harness's own Python writes byte-code there.
_SKIP_DIRS = frozenset({"__pycache__", ".pytest_cache", ".ruff_cache"})
_ERROR_LINE = re.compile(r"^([a-z][a-z0-9-]*):")
#: Starts a run: (command, folder, environment, memory limit) -> a Popen-like process.
Launch = Callable[[Sequence[str], Path, Mapping[str, str], int], Any]
#: How a run can break the contract: ``crash`` (a signal, or an exit status other than 0, 1, 2),
#: ``timeout``, ``output`` (output that breaks the table of the contract), ``side-effect`` (files changed
#: outside the temporary folder), ``code-ran`` (a canary was created or touched), ``start`` (the reader
#: did not start).
#: How long a run's process may hold its outputs open after its command exited, and how long its end is
#: waited for once killed.
LINGER = 1.0
EXIT_WAIT = 5.0
BREAKAGES = ("crash", "timeout", "output", "side-effect", "code-ran", "start")


def canary_marks(canaries: Sequence[Path]) -> dict[Path, int | None]:
    """Each canary's modification time in ns (None when absent), taken before a run: a payload's
    ``touch`` creates the file or moves that time, so a canary left by an earlier run (or by another
    process on this machine) does not hide a later one."""
    marks: dict[Path, int | None] = {}
    for canary in canaries:
        try:
            marks[canary] = canary.stat().st_mtime_ns
        except OSError:
            marks[canary] = None
    return marks


def canaries_touched(marks: Mapping[Path, int | None]) -> list[Path]:
    """The canaries of ``marks`` created or touched since they were taken."""
    return [c for c, before in marks.items() if canary_marks([c])[c] not in (None, before)]


@dataclass
class Run:
    """What one reader run did.

    ``outcome`` is ``accepted`` (status 0, one JSON document), ``rejected`` (status 1, one
    ``<code>: ...`` line), ``declined`` (status 2, one ``unsupported: ...`` line) or ``broken`` (anything
    else; ``problems`` says why).
    """

    command: list[str]
    status: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    outcome: str = "broken"
    description: Any = None
    code: str | None = None
    message: str = ""
    problems: list[str] = field(default_factory=list)
    #: The kind of the first breakage (one of :data:`BREAKAGES`), or ``""``.
    breakage: str = ""
    #: Bytes the reader wrote to stderr (``stderr`` keeps their first line and tail, harness/capture.py).
    stderr_size: int = 0
    #: Set once the suite judged the run: a batch answer found broken later fails the session instead.
    judged: bool = False
    #: A batch answer's: checks what its process did since the answer (harness/batch.py), before judging.
    settle: Callable[[], None] | None = None

    def broken(self, kind: str, problem: str) -> None:
        assert kind in BREAKAGES, kind
        self.breakage = self.breakage or kind
        self.problems.append(problem)

    def summary(self) -> str:
        if self.outcome == "accepted":
            return "accepted (exit 0)"
        if self.outcome in ("rejected", "declined"):
            return f"{self.outcome}: {self.message}"
        return "broken: " + "; ".join(self.problems)


Snapshot = dict[str, tuple[int, int, int]]


def snapshot(roots: Iterable[Path], skip: Path | None = None) -> Snapshot:
    """(kind, size, mtime_ns) of every entry under ``roots`` (symlinks not followed), except ``skip``."""
    out: Snapshot = {}
    for root in roots:
        if not root.exists():
            continue
        stack = [root]
        while stack:
            d = stack.pop()
            try:
                entries = list(os.scandir(d))
            except (NotADirectoryError, FileNotFoundError, PermissionError):
                continue
            for e in entries:
                if e.name in _SKIP_DIRS or (skip is not None and e.path == str(skip)):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                is_dir = e.is_dir(follow_symlinks=False)
                out[e.path] = (1 if is_dir else 0, 0 if is_dir else st.st_size, st.st_mtime_ns)
                if is_dir:
                    stack.append(Path(e.path))
    return out


def file_digest(path: Path) -> str | None:
    """The SHA-256 of a case's file (``None`` when it is gone): a write that keeps its size and
    modification time changes it (a generated case lives outside the watched tree)."""
    try:
        if not path.is_file():  # a pipe would block (the self-tests hang a reader on one)
            return None
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return None


def snapshot_changes(before: Snapshot, after: Snapshot) -> list[str]:
    changes = [f"created {p}" for p in sorted(after.keys() - before.keys())]
    changes += [f"removed {p}" for p in sorted(before.keys() - after.keys())]
    changes += [f"modified {p}" for p in sorted(before.keys() & after.keys())
                if before[p] != after[p] and before[p][0] == 0]
    return changes


_TREE: list[TreeWatch | None] = []
_TREE_LOCK = threading.Lock()


def tree_watch() -> TreeWatch | None:
    """The session's kernel watch of ``conformance/`` (harness/fswatch.py), or ``None`` where there is
    none (``TORCHFMT_SNAPSHOTS=1`` asks for snapshots anyway)."""
    with _TREE_LOCK:
        if not _TREE:
            use = os.environ.get("TORCHFMT_SNAPSHOTS") != "1"
            _TREE.append(TreeWatch.open(CONFORMANCE, _SKIP_DIRS) if use else None)
        return _TREE[0]


def _limits(memory_limit: int) -> None:
    """In the child, before exec: cap the address space; no core files."""
    resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


#: util-linux's ``prlimit``: it sets a run's limits on itself, then execs the reader's command (same
#: process, same arguments).  Python forks the whole harness process to run a ``preexec_fn`` (tens of
#: milliseconds once it holds every case's description); without one it starts the child with vfork.
PRLIMIT = shutil.which("prlimit")


def _popen(command: Sequence[str], work: Path, env: Mapping[str, str], memory_limit: int, *,
           stdin: int = subprocess.DEVNULL) -> Any:
    """Start ``command`` as a run: stdin closed (a batch process's: a pipe, harness/batch.py), both outputs
    piped, its own session, the limits."""
    io = {"stdin": stdin, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    # prlimit only for a command it can exec: one that cannot start must fail here, as without it
    if PRLIMIT is not None and shutil.which(command[0], path=env.get("PATH")) is not None:
        return subprocess.Popen([PRLIMIT, f"--as={memory_limit}", "--core=0", "--", *command], **io, cwd=work,
                                env=env, start_new_session=True)
    return subprocess.Popen(command, **io, cwd=work, env=env, start_new_session=True,
                            preexec_fn=lambda: _limits(memory_limit))


def hint_env(hints: Mapping[str, Any]) -> dict[str, str]:
    """The ``TORCHFMT_T7_*`` variables for a case's hints (only the hints it has)."""
    return {HINT_ENV[k]: str(v) for k, v in hints.items() if k in HINT_ENV}


def _ends(lines: list[str], width: int = 200) -> str:
    """The first and the last line of a reader's stderr (a traceback's exception is its last line)."""
    if not lines:
        return "''"
    shown = [lines[0][:width]] if len(lines) == 1 else [lines[0][:width], "...", lines[-1][:width]]
    return " | ".join(repr(x) if x != "..." else x for x in shown)


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


def check_status(run: Run) -> bool:
    """Whether the run ended with one of the contract's three statuses (else it is a ``crash``)."""
    if run.status is None:
        return False
    if run.status < 0:
        run.broken("crash", f"killed by signal {-run.status} ({signal_name(-run.status)})")
        return False
    if run.status not in (0, 1, 2):
        line = run.stderr.decode("utf-8", "replace").strip().splitlines()
        run.broken("crash", f"exit status {run.status} (only 0, 1, 2 are allowed)"
                            + (f"; stderr: {_ends(line)}" if line else ""))
        return False
    return True


def check_output(run: Run) -> None:
    """Classify a finished run by the contract's rules for its exit status."""
    out = run.stdout
    if not check_status(run):
        return
    if run.status == 0:
        try:
            run.description = strict_json.loads(out)
        except strict_json.JSONError as e:
            run.broken("output", f"exit 0 but stdout is not one JSON document: {e}")
            return
        if not isinstance(run.description, dict):
            run.broken("output", "exit 0 but the JSON document is not an object")
            return
        run.outcome = "accepted"
        return
    if out:
        run.broken("output", f"exit {run.status} but stdout is not empty ({len(out)} bytes)")
    check_error_line(run)


def check_error_line(run: Run) -> None:
    """The one stderr line of a run that ended with status 1 or 2: ``<code>: ...`` or ``unsupported: ...``."""
    err = run.stderr
    if run.stderr_size > STDERR_WHOLE:
        run.broken("output", f"exit {run.status} needs exactly one stderr line, got {run.stderr_size} bytes "
                            f"(kept: the first line and the last {STDERR_TAIL}): "
                            f"{_ends(err.decode('utf-8', 'replace').splitlines())}")
        return
    try:
        text = err.decode("utf-8")
    except UnicodeDecodeError:
        run.broken("output", f"exit {run.status} but stderr is not UTF-8")
        return
    lines = text[:-1].split("\n") if text.endswith("\n") else text.split("\n")
    if len(lines) != 1 or not lines[0].strip():
        run.broken("output", f"exit {run.status} needs exactly one stderr line, got {len(lines)}: "
                            f"{_ends([x for x in lines if x.strip()])}")
        return
    line = run.message = lines[0]
    if run.status == 2:
        if not line.startswith("unsupported: "):
            run.broken("output", f"exit 2 but the stderr line does not start with 'unsupported: ': {line!r}")
            return
        run.outcome = "declined"
    else:
        m = _ERROR_LINE.match(line)
        if not m or m.group(1) not in error_codes():
            run.broken("output", f"exit 1 but the stderr line does not start with '<code>:' from the "
                                f"closed set: {line[:300]!r}")
            return
        run.code = m.group(1)
        run.outcome = "rejected"
    if run.problems:
        run.outcome = "broken"


def environ() -> dict[str, str]:
    """A copy of the harness's environment, taken from a thread: pytest sets and removes
    ``PYTEST_CURRENT_TEST`` around each test in the main thread, and a copy made while it does raises
    ``KeyError`` (a key listed, then gone); taken again until one holds (CI: a prefetched run failed as a
    harness error)."""
    for _ in range(100):
        try:
            return dict(os.environ)
        except KeyError:
            continue
    return {k: v for k in list(os.environ) if (v := os.environ.get(k)) is not None}


def run_env(work: Path, hints: Mapping[str, Any] | None,
            extra_env: Mapping[str, str] | None) -> dict[str, str]:
    """A run's environment: the harness's, ``HOME``/``TMPDIR`` its folder, :data:`START_ENV`, the case's
    hints (and no other ``TORCHFMT_T7_*``), then the reader's own (``extra_env``)."""
    env = {k: v for k, v in environ().items() if not k.startswith("TORCHFMT_T7_")}
    env.update(HOME=str(work), TMPDIR=str(work), TMP=str(work), TEMP=str(work), **START_ENV)
    env.update(hint_env(hints or {}))
    env.update(extra_env or {})
    return env


class Watch:
    """What a run must leave alone, marked as it starts: the canaries, ``conformance/`` (by the kernel
    where it can, harness/fswatch.py) and the other ``folders`` (snapshotted; ``work`` left out)."""

    def __init__(self, folders: Sequence[Path], work: Path, canaries: Sequence[Path],
                 source: Path | None = None, copy: Path | None = None) -> None:
        self._args = (folders, work, canaries, source, copy)
        self.work = work
        self.source = source
        #: the copy the reader was given: it may open it for writing (tinygrad does), never change it
        self.copy = copy
        self.digest = file_digest(source) if source is not None else None
        self.marks = canary_marks(canaries)
        self.tree = tree_watch()
        self.folders = list(folders)
        if self.tree is not None:  # conformance/ is watched by the kernel; the rest is snapshotted
            self.folders = [p for p in self.folders if not p.is_relative_to(CONFORMANCE)]
            self.mark = self.tree.mark()
        self.before = snapshot(self.folders, skip=work)

    def again(self) -> Watch:
        """A watch of the same things, marked now (what a batch process does after a checked gap)."""
        return Watch(*self._args)

    def check(self, run: Run) -> None:
        """Add the run's side effects and touched canaries to its problems (a canary outranks the rest)."""
        changes = snapshot_changes(self.before, snapshot(self.folders, skip=self.work))
        if self.tree is not None:
            changes += self.tree.since(self.mark)
        if self.source is not None and file_digest(self.source) != self.digest:
            changes.append(f"modified {self.source} (its content)")
        if self.copy is not None and self.digest is not None and file_digest(self.copy) != self.digest:
            changes.append(f"modified the copy of {self.source} the reader was given (its content)")
        if changes:
            run.broken("side-effect",
                       "side effects outside the reader's temp folder: " + ", ".join(changes[:10]))
        for canary in canaries_touched(self.marks):
            run.breakage = "code-ran"  # outranks whatever else broke
            run.problems.append(f"the canary {canary} was touched: the reader ran code from the file")
        if run.problems:
            run.outcome = "broken"


def collect(proc: Any, deadline: float, out: Capture, err: Stderr) -> str:
    """Read both outputs of ``proc`` into their bounded captures until both end: ``""``, ``"timeout"``
    past ``deadline``, or ``"over"`` once stdout passed its limit.  A process the reader left holding the
    pipes after it exited is not waited for past :data:`LINGER` seconds (its run's end kills it)."""
    streams = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
    exited: float | None = None
    while streams:
        now = time.monotonic()
        if now >= deadline:
            return "timeout"
        if exited is None and proc.poll() is not None:
            exited = now
        if exited is not None and now - exited > LINGER:
            return ""
        ready, _, _ = select.select(list(streams), [], [], min(deadline - now, 0.1 if exited else 1.0))
        for fd in ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                del streams[fd]
            elif streams[fd].add(chunk) is False:
                return "over"
    try:
        proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return "timeout"
    return ""


def _kill(proc: Any) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # it ended as the time ran out
        pass


def run_reader(reader: Sequence[str], path: Path, hints: Mapping[str, Any] | None = None, *,
               time_limit: float = DEFAULT_TIME_LIMIT, memory_limit: int = DEFAULT_MEMORY_LIMIT,
               watch: Sequence[Path] = (), extra_env: Mapping[str, str] | None = None,
               canaries: Sequence[Path] = (CANARY,), launch: Launch | None = None,
               sandbox: bool | None = None) -> Run:
    """Run ``reader + [copy of path]`` in a folder of its own and check the contract.

    The reader is given a copy of the file alone in a folder (harness/sandbox.py), in bubblewrap's
    sandbox where it runs (``sandbox``: ``None`` where it can, ``False`` never); ``watch``: more folders
    that must be left untouched (the case folder is always watched, its file by content, and so is
    ``conformance/``); ``canaries``: paths that must not be created or touched during the run;
    ``launch``: starts the run instead of :class:`subprocess.Popen` (the reference reader's warm start,
    harness/warm.py: the same copy, no sandbox), given the command, folder, environment and memory limit.
    """
    path = Path(path).resolve()
    stage = Stage("torchfmt-run-", sandbox=False if launch is not None else sandbox, warm=launch is not None)
    copy, given = stage.stage(path)
    env = run_env(stage.home, hints, extra_env)
    env[TOKEN_ENV] = stage.token
    command = [*reader, given]
    watched = Watch([stage.parent, path.parent, CONFORMANCE, *map(Path, watch)], stage.work,
                    stage.canaries(canaries), source=path, copy=copy)
    start = time.monotonic()
    try:
        proc: Any = (launch or _popen)(stage.wrap(command, env), stage.work, env, memory_limit)
    except OSError as e:
        stage.remove()
        run = Run(command, None, b"", b"", 0.0)
        run.broken("start", f"cannot start the reader: {e}")
        return run
    out, err = Capture(output_limit()), Stderr()
    if getattr(proc, "stdout", None) is None:  # a warm run: its outputs are files (harness/warm.py)
        try:
            stdout, stderr = proc.communicate(timeout=time_limit)
            ended = ""
        except subprocess.TimeoutExpired:
            _kill(proc)
            stdout, stderr = proc.communicate()
            ended = "timeout"
        out.add(stdout)
        err.add(stderr)
    else:
        ended = collect(proc, start + time_limit, out, err)
        _kill(proc)  # leftovers of the reader's process group must not outlive it
        try:
            proc.wait(timeout=EXIT_WAIT)
        except subprocess.TimeoutExpired:
            pass
        for stream in (proc.stdout, proc.stderr):
            stream.close()
    seconds = time.monotonic() - start
    run = Run(command, stage.status(proc.returncode), out.value(), err.value(), seconds)
    run.stderr_size = err.size
    if ended == "timeout":
        run.broken("timeout", f"time limit of {time_limit:g} s exceeded")
    elif ended == "over":
        run.broken("output", f"stdout passed {out.limit} bytes, the canonical text budget and its margin "
                             "(spec/canonical.md#canonical-reader-cli): not kept, the reader was killed")
    else:
        check_output(run)
    stage.end()
    watched.check(run)
    stage.remove()
    return run
