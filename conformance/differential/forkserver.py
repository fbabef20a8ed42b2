"""A persistent reader worker: one process imports a reader once, then forks one child per file.

``forkserver.py torch`` runs the torch adapter's contract command (``conformance/adapters/torch_reader.py``
``main``: ``torch.load(weights_only=True)``, never laxer, described by
``conformance/generators/torch_describe.py``); ``forkserver.py reference`` runs ``torchfmt dump``
(``torchfmt.cli.main``).  Importing torch costs seconds; a fork costs milliseconds, so the harness sends
many files through one worker.

Each child runs the command exactly as the contract's subprocess would, with its stdout and stderr
redirected to files, in a sandbox folder (cwd, HOME and TMPDIR: the worker's throwaway folder), under an
address-space limit, and is killed at the time limit; a crash or a kill only ends the child.  The worker
reads one JSON request per line on stdin, ``{"path", "timeout", "env"}``, and answers one JSON line
``{"status", "seconds", "timed_out", "stdout", "stderr"}`` (``status`` negative: the signal that ended
the child; ``stdout``/``stderr``: files the client reads and removes).  :class:`Worker` is the client:
it starts the worker in its own sandbox and restarts it when it dies.
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


# -- the worker (run as a script) ------------------------------------------------------------------

def _entry(reader: str):  # noqa: ANN202 - the reader's contract command, imported before any fork
    if reader == "torch":
        sys.path.insert(0, str(ROOT / "conformance" / "adapters"))
        torch_reader = importlib.import_module("torch_reader")  # puts conformance/generators on sys.path
        importlib.import_module("torch")  # once, before the forks
        importlib.import_module("torch_describe")
        importlib.import_module("harness.vocabulary").error_codes()
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


def serve(reader: str) -> None:  # pragma: no cover - runs in the worker process
    sys.path.insert(0, str(ROOT / "conformance"))
    run = _entry(reader)
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

    def __init__(self, reader: str, timeout: float) -> None:
        assert reader in READERS, reader
        self.reader = reader
        self.timeout = timeout
        self.proc: subprocess.Popen[bytes] | None = None
        self.folder = ""
        self.restarts = 0

    def start(self) -> None:
        self.folder = tempfile.mkdtemp(prefix=f"torchfmt-diff-{self.reader}-")
        work = Path(self.folder) / "tmp"
        work.mkdir()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(work), "TMPDIR": str(work),
               "OMP_NUM_THREADS": "1", "PYTHONDONTWRITEBYTECODE": "1",
               "PYTHONPATH": str(ROOT / "reference_impl")}
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), self.reader],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=work, env=env, start_new_session=True)

    def stop(self) -> None:
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
        for _ in (0, 1):
            if self.proc is None or self.proc.poll() is not None:
                if self.proc is not None:
                    self.restarts += 1
                self.stop()
                self.start()
            reply = self._ask(path, env or {})
            if reply is not None:
                return reply
            self.stop()
        return Reply(None, b"", b"the reader's worker died twice", 0.0)

    def _ask(self, path: Path, env: dict[str, str]) -> Reply | None:
        assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
        req = {"path": str(Path(path).resolve()), "timeout": self.timeout, "env": env}
        try:
            self.proc.stdin.write((json.dumps(req) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return None
        ready, _, _ = select.select([self.proc.stdout], [], [], self.timeout + self.START_SECONDS)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            return None
        r = json.loads(line)
        out = Path(r["stdout"]).read_bytes() if Path(r["stdout"]).exists() else b""
        err = Path(r["stderr"]).read_bytes() if Path(r["stderr"]).exists() else b""
        for name in (r["stdout"], r["stderr"]):
            Path(name).unlink(missing_ok=True)
        return Reply(r["status"], out, err, r["seconds"], r["timed_out"])


if __name__ == "__main__":
    serve(sys.argv[1])
