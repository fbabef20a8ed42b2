"""A persistent reader worker: one process imports a reader once, then forks one child per file.

The worker, ``python -m conformance.differential.forkserver torch`` (started by :class:`Worker`, with this
tree's reader and the suite's package on its ``PYTHONPATH``), runs the torch adapter's contract command
(``conformance/adapters/torch_reader.py`` ``main``: ``torch.load(weights_only=True)``, never laxer,
described by ``conformance/generators/torch_describe.py``); ``... forkserver reference`` runs ``torchfmt
dump`` (``torchfmt.cli.main``).  Importing torch costs seconds; a fork costs milliseconds, so the harness
sends many files through one worker.

Each child runs the command exactly as the contract's subprocess would, with its stdout and stderr
redirected to files, in a sandbox folder (cwd, HOME and TMPDIR: the worker's throwaway folder), under an
address-space limit, and is killed at the time limit; a crash or a kill only ends the child.  The worker
reads one JSON request per line on stdin, ``{"path", "timeout", "env"}``, and answers one JSON line
``{"status", "seconds", "timed_out", "stdout", "stderr"}`` (``status`` negative: the signal that ended
the child; ``stdout``/``stderr``: files the client reads and removes).  :class:`Worker` is the client:
it starts the worker in its own sandbox and restarts it when it dies.

``... forkserver torch --persistent`` forks nothing: the worker itself runs the command on each file (its
fds 1 and 2 are in-memory files, whose bytes follow each reply line), under its own address-space limit,
and says ``ready`` once torch is imported.  A fork of a process that has imported torch costs tens of
milliseconds; a file torch refuses costs about one, so the fuzz target (fuzz/fuzz_differential.py) uses
this mode.  What a fresh
process would keep apart is kept apart: the environment is restored after each file, and a worker whose
resident memory grows past :data:`RECYCLE_RSS` is replaced.  A timer stops a file at the time limit
(status -9, ``timed_out``, as a killed child); a file whose C code does not return within
``Worker.GRACE_SECONDS`` more gets the worker killed, and a crash (a signal) is that file's reply; the next
file then starts a new worker.  torch still only ever runs ``weights_only=True`` (the torch adapter's
``main``).
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
#: Address-space limit per child: the contract's 2 GiB for the reference; torch maps more of its own.
MEMORY = {"reference": 2 << 30, "torch": 6 << 30}
READERS = tuple(MEMORY)
#: A persistent worker whose resident set passes this is replaced after the file (no state of one
#: hostile file lives on in the memory the next one sees).
RECYCLE_RSS = 1 << 30
_PAGE = os.sysconf("SC_PAGE_SIZE")
#: The worker's throwaway folder's name starts so; a worker whose client is gone (stdin at its end: a
#: fuzzer exits without Python's clean-up) removes it.
FOLDER_PREFIX = "torchfmt-diff-"


# -- the worker (run as a script) ------------------------------------------------------------------

def _entry(reader: str):  # noqa: ANN202 - the reader's contract command, imported before any fork
    if reader == "torch":
        torch_reader = importlib.import_module("conformance.adapters.torch_reader")
        importlib.import_module("torch")  # once, before the forks
        importlib.import_module("conformance.generators.torch_describe")
        importlib.import_module("conformance.harness.vocabulary").error_codes()
        _warm_up(lambda path: torch_reader.main(["torch_reader.py", path]))
        return lambda path: torch_reader.main(["torch_reader.py", path])
    import torchfmt.pickle.machine  # noqa: F401
    import torchfmt.pt.legacy  # noqa: F401
    import torchfmt.pt.tar  # noqa: F401
    import torchfmt.pt.zip  # noqa: F401
    import torchfmt.t7.reader  # noqa: F401
    from torchfmt.cli import main

    return lambda path: main(["dump", path])


def _warm_up(run) -> None:  # noqa: ANN001
    """Run the torch adapter once, in the worker, on a file torch itself just wrote (nothing from a
    variant), so that torch's lazy imports and first-call set-up happen once, not in every child."""
    import io

    import torch

    folder = tempfile.mkdtemp(prefix="warm-")
    path = os.path.join(folder, "warm.pt")
    torch.save({"w": torch.arange(4, dtype=torch.float32), "b": [1, 2.5, "x"]}, path)
    saved = os.dup(1), os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 1)
            os.dup2(null.fileno(), 2)
            run(path)
            buf = io.BytesIO()
            torch.save(torch.zeros(2), buf, _use_new_zipfile_serialization=False)
            with open(path, "wb") as f:
                f.write(buf.getvalue())
            run(path)
            sys.stdout.flush()
            sys.stderr.flush()
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
        shutil.rmtree(folder, ignore_errors=True)


def _child(run, path: str, out: str, err: str, env: dict[str, str], memory: int) -> None:  # noqa: ANN001
    """In the forked child: redirect, limit, run, exit with the command's status (never returns)."""
    status = 1
    try:
        for fd, name in ((1, out), (2, err)):
            target = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        os.environ.update(env)
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        status = run(path)
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - what an uncaught exception does to a real process: a traceback
        traceback.print_exc()
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status if isinstance(status, int) else 1)


def _wait(pid: int, timeout: float) -> tuple[int, bool]:
    """The child's status (negative: a signal) and whether it was killed at ``timeout``."""
    fd = os.pidfd_open(pid)
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
        timed_out = not ready
        if timed_out:
            os.kill(pid, signal.SIGKILL)
    finally:
        os.close(fd)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), timed_out


def _rss() -> int:
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * _PAGE


class _TimeLimit(BaseException):
    """Raised in a persistent worker by the timer at a file's time limit (a BaseException: the
    command's own ``except Exception`` must not take it for torch refusing the file)."""


def _alarm(signum: int, frame: object) -> None:
    raise _TimeLimit


def _inline(run, path: str, env: dict[str, str], timeout: float) -> int | None:  # noqa: ANN001
    """In a persistent worker: run the command on ``path`` as :func:`_child` would, in this process
    (fds 1 and 2 are the worker's in-memory output files); ``None`` when the timer stopped it at
    ``timeout`` seconds (Python code is stopped there; C code that holds on is the client's to kill)."""
    saved = dict(os.environ)
    status: object = 1
    try:
        os.environ.update(env)
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            status = run(path)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _TimeLimit:
        status = None
    except SystemExit as e:
        status = e.code if isinstance(e.code, int) else 1
    except BaseException:  # noqa: BLE001 - what an uncaught exception does to a real process: a traceback
        traceback.print_exc()
        status = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.environ.clear()
        os.environ.update(saved)
    return status if isinstance(status, int) or status is None else 1


def _take(fd: int) -> bytes:
    """What was written to in-memory file ``fd`` since the last take; the file is emptied."""
    data = os.pread(fd, os.fstat(fd).st_size, 0)
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    return data


def serve(reader: str, persistent: bool = False) -> None:  # pragma: no cover - runs in the worker process
    run = _entry(reader)
    try:
        (_serve_inline if persistent else _serve_forked)(reader, run)
    finally:  # the client is gone or asked it to stop: its folder goes with it
        folder = Path(os.environ.get("TMPDIR", "")).parent
        if folder.name.startswith(FOLDER_PREFIX):
            os.chdir("/")
            shutil.rmtree(folder, ignore_errors=True)


def _serve_forked(reader: str, run) -> None:  # noqa: ANN001  # pragma: no cover - in the worker
    """One forked child per file."""
    work = Path(os.environ.get("TMPDIR", tempfile.gettempdir()))
    n = 0
    for line in sys.stdin:
        req = json.loads(line)
        n += 1
        out, err = str(work / f"out-{n}"), str(work / f"err-{n}")
        sys.stdout.flush()
        sys.stderr.flush()
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(run, req["path"], out, err, req.get("env", {}), MEMORY[reader])
        status, timed_out = _wait(pid, float(req.get("timeout", 10)))
        reply = {"status": status, "seconds": time.monotonic() - start, "timed_out": timed_out,
                 "stdout": out, "stderr": err}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def _serve_inline(reader: str, run) -> None:  # noqa: ANN001  # pragma: no cover - in the worker
    """The persistent loop.  Each reply is a JSON line (with ``stdout`` and ``stderr`` the byte counts)
    followed by those bytes, on a private copy of fd 1; fds 1 and 2 are in-memory files, so that what C code
    writes is caught as well (files on disk cost milliseconds per input)."""
    replies = os.fdopen(os.dup(1), "wb")
    files = os.memfd_create("stdout"), os.memfd_create("stderr")
    os.dup2(files[0], 1)
    os.dup2(files[1], 2)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY[reader], MEMORY[reader]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    signal.signal(signal.SIGALRM, _alarm)
    replies.write(b"ready\n")
    replies.flush()
    for line in sys.stdin:
        req = json.loads(line)
        _take(files[0]), _take(files[1])
        start = time.monotonic()
        status = _inline(run, req["path"], req.get("env", {}), float(req.get("timeout", 10)))
        out, err = _take(files[0]), _take(files[1])
        recycle = _rss() > RECYCLE_RSS
        reply = {"status": -signal.SIGKILL if status is None else status, "seconds": time.monotonic() - start,
                 "timed_out": status is None, "cpu": time.process_time(),
                 "stdout": len(out), "stderr": len(err), "recycle": recycle}
        replies.write(json.dumps(reply).encode() + b"\n" + out + err)
        replies.flush()
        if recycle:
            return


# -- the client ------------------------------------------------------------------------------------

@dataclass
class Reply:
    """What one child did: exit status (negative: signal), output, wall time, whether it was killed."""

    status: int | None
    stdout: bytes
    stderr: bytes
    seconds: float
    timed_out: bool = False


class Worker:
    """A running worker for ``reader`` ("torch" or "reference"); :meth:`run` answers one file."""

    #: Seconds the worker may take to start (importing torch) before it counts as dead.
    START_SECONDS = 120
    #: Seconds past the time limit a persistent worker has to stop a file itself (its timer stops Python
    #: code; C code that does not return by then gets the worker killed).
    GRACE_SECONDS = 5

    def __init__(self, reader: str, timeout: float, persistent: bool = False,
                 root: str | None = None) -> None:
        """``root``: where the worker's throwaway folder is made (default: the temporary folder)."""
        assert reader in READERS, reader
        self.reader = reader
        self.timeout = timeout
        self.persistent = persistent
        self.root = root
        self.proc: subprocess.Popen[bytes] | None = None
        self.folder = ""
        self.restarts = 0
        self._pending: tuple[Path, dict[str, str]] = (Path(), {})
        self._sent = False
        self._sent_at = 0.0
        #: CPU seconds of persistent workers: those that ended, and the running one's at its last reply
        #: (a killed worker's last seconds are not counted).
        self.cpu_ended = 0.0
        self.cpu_running = 0.0

    def start(self) -> None:
        self.folder = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{self.reader}-", dir=self.root)
        work = Path(self.folder) / "tmp"
        work.mkdir()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "TMPDIR": str(work),
               "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
               # this tree's reader, and the suite's package (the worker is this module run by name)
               "PYTHONPATH": os.pathsep.join([str(ROOT / "reference_impl"), str(ROOT)])}
        cmd = [sys.executable, "-m", "conformance.differential.forkserver", self.reader]
        self.proc = subprocess.Popen([*cmd, "--persistent"] if self.persistent else cmd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=work, env=env, start_new_session=True)
        if self.persistent:  # wait for torch's import here, so that no file's time limit pays for it
            assert self.proc.stdout is not None
            ready, _, _ = select.select([self.proc.stdout], [], [], self.START_SECONDS)
            if not ready or self.proc.stdout.readline() != b"ready\n":
                self.stop()

    def scratch(self) -> Path:
        """The running worker's throwaway folder (started first if none runs): a place for the files
        it is sent, removed with it."""
        self._ensure()
        return Path(self.folder)

    @property
    def cpu(self) -> float:
        """CPU seconds the persistent workers spent (up to their last replies)."""
        return self.cpu_ended + self.cpu_running

    def stop(self) -> None:
        self.cpu_ended += self.cpu_running
        self.cpu_running = 0.0
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            self.proc = None
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = ""

    def __enter__(self) -> Worker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def run(self, path: Path, env: dict[str, str] | None = None) -> Reply:
        """Run the reader's contract command on ``path`` (restarting a dead worker once)."""
        self.begin(path, env)
        return self.finish()

    def begin(self, path: Path, env: dict[str, str] | None = None) -> None:
        """Send ``path`` to the worker (started first if it is not running); :meth:`finish` answers.
        The caller may work in between: the file is read meanwhile."""
        self._pending = (Path(path), env or {})
        self._sent = self._ensure() and self._send(*self._pending)

    def finish(self) -> Reply:
        """The reply to the file of :meth:`begin`."""
        path, env = self._pending
        for attempt in (0, 1):
            if attempt or not self._sent:
                self._sent = self._ensure() and self._send(path, env)
            reply = self._receive() if self._sent else None
            if reply is not None:
                return reply
            self.stop()
        return Reply(None, b"", b"the reader's worker died twice", 0.0)

    def _ensure(self) -> bool:
        """Whether a worker runs, starting one if none does."""
        if self.proc is None or self.proc.poll() is not None:
            if self.proc is not None:
                self.restarts += 1
            self.stop()
            self.start()
        return self.proc is not None

    def _send(self, path: Path, env: dict[str, str]) -> bool:
        assert self.proc is not None and self.proc.stdin is not None
        req = {"path": str(path.resolve()), "timeout": self.timeout, "env": env}
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return False
        self._sent_at = time.monotonic()
        return True

    def _receive(self) -> Reply | None:
        assert self.proc is not None and self.proc.stdout is not None
        wait = self.timeout + (self.GRACE_SECONDS if self.persistent else self.START_SECONDS)
        left = max(0.0, self._sent_at + wait - time.monotonic())
        ready, _, _ = select.select([self.proc.stdout], [], [], left)
        line = self.proc.stdout.readline() if ready else b""
        if self.persistent and not line:  # the file outlasted the limit, or crashed the worker
            return self._ended(time.monotonic() - self._sent_at, timed_out=not ready)
        if not line:
            return None
        r = json.loads(line)
        if self.persistent:  # the output follows the line
            out, err = self._read_exactly(r["stdout"]), self._read_exactly(r["stderr"])
        else:
            out = Path(r["stdout"]).read_bytes() if Path(r["stdout"]).exists() else b""
            err = Path(r["stderr"]).read_bytes() if Path(r["stderr"]).exists() else b""
            for name in (r["stdout"], r["stderr"]):
                Path(name).unlink(missing_ok=True)
        self.cpu_running = r.get("cpu", 0.0)
        if r.get("recycle"):
            self.restarts += 1
            self.stop()
        return Reply(r["status"], out, err, r["seconds"], r["timed_out"])

    def _read_exactly(self, n: int) -> bytes:
        assert self.proc is not None and self.proc.stdout is not None
        data = self.proc.stdout.read(n)
        if len(data) != n:
            raise OSError(f"the {self.reader} worker's reply ended after {len(data)} of {n} bytes")
        return data

    def _ended(self, seconds: float, timed_out: bool) -> Reply:
        """A persistent worker's file ended it: killed at the time limit, or a signal (what it wrote is
        lost with it); the next file starts a new worker."""
        assert self.proc is not None
        if timed_out:
            os.killpg(self.proc.pid, signal.SIGKILL)
        status = self.proc.wait()
        self.restarts += 1
        self.stop()
        return Reply(-signal.SIGKILL if timed_out else status, b"", b"", seconds, timed_out)


if __name__ == "__main__":
    serve(sys.argv[1], "--persistent" in sys.argv[2:])
