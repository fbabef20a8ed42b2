"""A warm start for the reference reader: the same ``torchfmt dump`` without a new interpreter per run.

``python -m torchfmt dump PATH`` spends most of a small case importing Python and numpy.  A
:class:`WarmServer` is a process that has imported :mod:`torchfmt.cli` and the reader's modules once
(:func:`warm_up`) and forks one child per run;
the child takes the run's limits, folder, environment and standard streams exactly as
:func:`harness.runner.run_reader` gives them to a command, calls the ``torchfmt.cli.main`` that
``python -m torchfmt`` calls with the same arguments, and exits with its status.  Each run is a fresh
process forked from a server that has read no file, so runs share nothing.  :class:`WarmProcess` looks
like the :class:`subprocess.Popen` ``run_reader`` drives (``pid``, ``communicate``, ``returncode``), so
every check of the contract is the same.  Linux and macOS (``fork``); elsewhere the harness runs the
command.

A Python adapter whose ``adapter.yaml`` has a ``warm`` entry (harness/readers.py) gets the same kind of
server for its self-tests (conformance/tests/adapter_runs.py): the server, under the Python the adapter's
command ends up in, started with what a run's interpreter reads as it starts (harness/runner.py
``START_ENV``: torch takes its thread count from ``OMP_NUM_THREADS`` once; an empty ``HOME``), imports
the modules the entry names (``preload``: torch, a second or more per command), and each child runs the
adapter's script as ``__main__`` with the file's path, as the command would.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import pkgutil
import resource
import runpy
import select
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path

#: The command a warm run stands for: what conftest's ``--reader reference`` runs.
MODULE = "torchfmt"


def available() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


class WarmServer:
    """One server process (one run at a time); :meth:`start` launches a run in a forked child.

    Without arguments, the reference reader's (``torchfmt.cli.main``); with ``script``, an adapter's:
    ``python`` (default: the suite's) imports ``preload`` once, and each run is ``script PATH``.  A
    ``python`` of its own is the interpreter the adapter's command hands the file to, without
    ``PYTHONPATH`` and ``PYTHONHOME`` (torch113's ``run.py``): the server and its runs get neither."""

    #: What an adapter's command leaves out of the environment it hands another interpreter.
    HANDED_OFF = ("PYTHONPATH", "PYTHONHOME")

    def __init__(self, script: str | None = None, preload: Sequence[str] = (), python: str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.script = script
        self.drop = self.HANDED_OFF if script is not None and python is not None else ()
        self.files = tempfile.mkdtemp(prefix="torchfmt-warm-")
        # run from the repository root (cwd below): ``-c`` imports the suite's package from there
        code = "from conformance.harness.warm import serve; serve()" if script is None else \
            f"from conformance.harness.warm import serve; serve({list(preload)!r})"
        server_env = {k: v for k, v in (os.environ if env is None else env).items() if k not in self.drop}
        if script is not None:  # what a run's interpreter and torch take from the environment as they start
            from .runner import START_ENV  # here: a server under another Python imports this module alone

            home = os.path.join(self.files, "home")  # empty, as a run's HOME: no user site-packages
            os.mkdir(home)
            server_env.update(START_ENV, HOME=home)
        self.proc = subprocess.Popen([python or sys.executable, "-c", code],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=str(Path(__file__).resolve().parents[2]), env=server_env)
        self.runs = 0
        self.buffer = b""

    def reply(self, timeout: float | None = None) -> dict | None:
        """The server's next reply line, or ``None`` after ``timeout`` seconds without one (read from
        the pipe itself: a buffered reader could hold a reply that ``select`` no longer sees)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return {"error": "the warm server died", "status": -9}
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def start(self, command: Sequence[str], cwd: Path, env: Mapping[str, str],
              memory_limit: int) -> WarmProcess:
        """Run ``command`` (``... -m torchfmt ARGS``) as ``torchfmt.cli.main(ARGS)`` in a forked child; an
        adapter's server runs its script with the command's last argument, the file."""
        argv = list(command[list(command).index(MODULE) + 1:]) if self.script is None else [command[-1]]
        self.runs += 1
        n = self.runs
        out, err = os.path.join(self.files, f"{n}.out"), os.path.join(self.files, f"{n}.err")
        request = {"argv": argv, "cwd": str(cwd), "env": {k: v for k, v in env.items() if k not in self.drop},
                   "memory_limit": memory_limit, "out": out, "err": err, "script": self.script}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request).encode() + b"\n")
        self.proc.stdin.flush()
        reply = self.reply() or {}
        if "pid" not in reply:
            raise OSError(reply.get("error", "the warm server did not start the run"))
        return WarmProcess(self, reply["pid"], out, err)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        shutil.rmtree(self.files, ignore_errors=True)


class WarmProcess:
    """A run in a forked child, driven like a :class:`subprocess.Popen` with both outputs piped."""

    def __init__(self, server: WarmServer, pid: int, out: str, err: str) -> None:
        self.server, self.pid, self.out, self.err = server, pid, out, err
        self.returncode: int | None = None

    def communicate(self, timeout: float | None = None) -> tuple[bytes, bytes]:
        if self.returncode is None:
            reply = self.server.reply(timeout)
            if reply is None:
                raise subprocess.TimeoutExpired(["warm", MODULE], timeout or 0.0)
            self.returncode = int(reply["status"])
        data = []
        for name in (self.out, self.err):
            with open(name, "rb") as f:
                data.append(f.read())
            os.unlink(name)
        return data[0], data[1]


def _child(request: dict, proto: tuple[int, int]) -> None:
    """In the forked child: the run's session, limits, folder, environment and streams, then the command."""
    try:
        for fd in proto:
            os.close(fd)
        os.setsid()  # the harness kills the run's process group, as for a command
        limit = int(request["memory_limit"])
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        for fd, (path, flags) in enumerate([(os.devnull, os.O_RDONLY),
                                            (request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
                                            (request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)]):
            os.dup2(os.open(path, flags, 0o600), fd)
        argv = request["argv"]
        try:
            if request.get("script"):  # an adapter's script, as ``python SCRIPT PATH`` runs it
                sys.argv = [request["script"], *argv]
                sys.path[0] = os.path.dirname(request["script"])
                runpy.run_path(request["script"], run_name="__main__")
                status = 0
            else:
                sys.argv = [MODULE, *argv]
                from torchfmt.cli import main

                status = main(argv)
        except SystemExit as e:  # sys.exit(...) or argparse's usage errors: the status Python exits with
            if e.code is None or isinstance(e.code, int):
                status = e.code or 0
            else:
                print(e.code, file=sys.stderr)
                status = 1
        except Exception:  # noqa: BLE001 - as Python ends a script that raises: the traceback, status 1
            if not request.get("script"):
                raise
            traceback.print_exc()
            status = 1
        if request.get("script"):
            _finalize()
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001 - whatever happens, the child never returns into the server
        status = 70
    os._exit(status)


def _finalize() -> None:
    """What the interpreter does as a script ends, before its process exits (Py_FinalizeEx): wait for
    the threads that are not daemons, then call the exit handlers (the script's and those of the modules
    the server imported: the command imported them too)."""
    import atexit
    import threading

    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()


#: The reader's subpackages: ``torchfmt dump`` imports the one a file's format needs when it meets the
#: file, so the server imports them all once instead of every child importing its own.
READER_PACKAGES = ("torchfmt.pickle", "torchfmt.pt", "torchfmt.t7")


def warm_up() -> None:
    """Import what ``torchfmt dump`` imports, at its start or on its way, without reading any file: the
    CLI, every module of the reader's subpackages and the numpy dtypes of the dtype table (the command
    imports numpy and ml_dtypes only for a file whose elements must be rearranged); then freeze the heap,
    so that a child's garbage collections do not copy the server's pages that the child only reads."""
    import torchfmt.cli  # noqa: F401
    from torchfmt.dtypes import DTYPES

    for name in READER_PACKAGES:
        package = importlib.import_module(name)
        for info in pkgutil.iter_modules(package.__path__, name + "."):
            importlib.import_module(info.name)
    for dtype in DTYPES:
        dtype.numpy  # noqa: B018 - imported and cached once, here
    gc.collect()
    gc.freeze()


def serve(preload: Sequence[str] | None = None) -> None:
    """The server's loop: one JSON request per line on stdin, ``{"pid"}`` then ``{"status"}`` back.
    ``preload``: an adapter's modules to import (default: the reference reader's, :func:`warm_up`)."""
    if preload is None:
        warm_up()
    else:
        for name in preload:
            importlib.import_module(name)
        gc.collect()
        gc.freeze()
    requests, replies = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # the children's stdout is theirs alone
    sys.stdout.flush()
    for line in requests:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(request, (requests.fileno(), replies.fileno()))
        replies.write(json.dumps({"pid": pid}).encode() + b"\n")
        replies.flush()
        _, status = os.waitpid(pid, 0)
        replies.write(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
        replies.flush()
