"""Hermetic runs: a reader sees a copy of its file alone and, where bubblewrap runs, nothing of the suite
(spec/canonical.md#canonical-reader-cli).

Every run (one process per file, or a batch process, harness/batch.py) has a folder of its own,
:class:`Stage`: ``tmp/`` (the reader's cwd, ``HOME`` and ``TMPDIR``) and ``input/``, where each file the
reader is asked about is copied alone into a fresh sub-folder under its own name.  The reader is never
given a path inside ``conformance/`` or beside ``expected.json`` and ``case.yaml``.

Where Debian's ``bwrap`` (bubblewrap) starts here, the command runs in its sandbox (:func:`wrap`): the
root folders bound read-only, a ``/tmp`` of its own that is the run's ``tmp/`` (the reader's own folder),
the copies under ``/input`` (a reader may open its file for writing, as tinygrad does; a change to a
copy's content is a side effect, harness/runner.py ``Watch``), the project and the shared corpus hidden
but for what the readers' commands need (``reference_impl/``, ``spec/``, ``ksy/`` and the adapters, the
harness's vocabulary and the generators' helpers), a PID namespace that ends every process the reader
started with the run (``--unshare-pid --die-with-parent``) and no network. A canary the payload of a case
would touch under ``/tmp`` then lands in the run's ``tmp/`` (:meth:`Stage.canaries`), where the harness
looks for it.
Elsewhere (no bwrap, ``TORCHFMT_SANDBOX=0``) the run has the copy, its folder and the checks of
harness/runner.py, and the processes it leaves behind are found by a token in their environment
(:func:`kill_escaped`).
"""

from __future__ import annotations

import atexit
import importlib.util
import itertools
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

from .cases import corpus_root
from .vocabulary import ROOT

BWRAP = shutil.which("bwrap")
#: The sandbox's /tmp: the run's ``tmp/`` folder.
SANDBOX_TMP = Path("/tmp")
#: Where the copies of a run's files are in the sandbox (each checked by content after its run).
INPUT = SANDBOX_TMP / "input"
#: What of a project checkout a reader's command may need, bound read-only over the hidden checkout.
VISIBLE = ("reference_impl", "spec", "ksy", "conformance/adapters", "conformance/harness",
           "conformance/generators")
#: The environment variable whose value marks every process of one run (processes left behind are found
#: by it where there is no PID namespace).
TOKEN_ENV = "TORCHFMT_RUN_TOKEN"
_COUNTER = itertools.count(1)
#: Removes the folders runs are done with, beside the runs: removing a folder takes about 2.5 ms on a
#: disk mounted with ``discard`` (ext4 on this project's CI machines), 15 ms for a run's five, which the run's
#: thread waited for (a tenth of the suite's wall time).  Its queue ends before the interpreter does.
_REMOVER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stage-remover")


@cache
def _trash() -> Path:
    """A folder of this process's where a finished run's folder is moved at once (a rename: the run's path
    is gone when the run ends) before :data:`_REMOVER` removes it; removed itself as the process ends."""
    folder = Path(tempfile.mkdtemp(prefix="torchfmt-done-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def discard(folder: Path) -> None:
    """Remove ``folder`` (and all it holds) now as far as any path to it goes, the bytes beside the runs."""
    target = _trash() / f"{folder.name}-{next(_COUNTER)}"
    try:
        folder.rename(target)
    except OSError:  # another file system, or gone already
        shutil.rmtree(folder, ignore_errors=True)
        return
    _REMOVER.submit(shutil.rmtree, target, True)


def removals_done() -> None:
    """Wait until every folder :func:`discard` was given is removed (then the trash folder too)."""
    _REMOVER.submit(lambda: None).result()
    if _trash.cache_info().currsize:
        shutil.rmtree(_trash(), ignore_errors=True)
        _trash.cache_clear()


@cache
def bwrap_works() -> bool:
    """Whether bubblewrap starts a sandbox here (``TORCHFMT_SANDBOX=0`` says not to use it)."""
    if BWRAP is None or os.environ.get("TORCHFMT_SANDBOX") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        proc = subprocess.run([BWRAP, *_namespaces(), "--ro-bind", "/", "/", "--", "true"],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def isolation() -> str:
    """What the run's header says of the isolation the readers' commands get."""
    if bwrap_works():
        return ("bubblewrap sandbox (only the run's folder writable, the suite hidden, PID namespace, "
                "no network); each file a copy alone in a folder of its own")
    return ("no sandbox (bwrap not usable here): each file a copy alone in a folder of its own; "
            "side effects found by the watched tree and the canaries; processes left behind killed")


def _namespaces() -> list[str]:
    return ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--die-with-parent"]


@cache
def _origin() -> Path | None:
    """The checkout the ``torchfmt`` package is imported from (``<checkout>/reference_impl/torchfmt``)."""
    spec = importlib.util.find_spec("torchfmt")
    origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
    return origin.parents[2] if origin is not None and len(origin.parents) > 2 else None


@cache
def _suite_roots() -> list[Path]:
    """The project checkouts a reader could answer from: this harness's, the other worktrees of its
    repository (git's list), and the one the ``torchfmt`` package is imported from (an editable install
    may point at another checkout)."""
    roots = [ROOT]
    try:
        listed = subprocess.run(["git", "-C", str(ROOT), "worktree", "list", "--porcelain"],
                                capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
        lines = listed.stdout.splitlines() if listed.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired):
        lines = []
    found = [Path(line[len("worktree "):]) for line in lines if line.startswith("worktree ")]
    if _origin() is not None:
        found.append(_origin())
    for other in found:
        if (other / "conformance").is_dir() and other.resolve() not in roots:
            roots.append(other.resolve())
    return roots


def corpus_dir() -> Path:
    return corpus_root()


def _hidden() -> list[Path]:
    corpus = corpus_dir()
    roots = _suite_roots()
    return [*roots, *([corpus] if corpus.is_dir() and not any(corpus.is_relative_to(r) for r in roots)
                      else [])]


@cache
def _view() -> tuple[str, ...]:
    """bwrap's arguments for the file system every sandboxed run sees (its own folders aside): the root
    read-only, the project's checkouts and the corpus hidden, what the readers' commands need of the
    checkouts the harness and ``torchfmt`` come from bound back read-only.  The hidden folders are made
    read-only by :func:`_sealed`, after the command's own folders are bound into them (a mount point is
    made in a folder still writable)."""
    args = ["--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
    needed = _suite_roots()[:1] + [r for r in _suite_roots() if r == _origin()]
    for hidden in _hidden():
        args += ["--tmpfs", str(hidden)]
        if hidden in needed:
            for rel in VISIBLE:
                if (hidden / rel).is_dir():
                    args += ["--ro-bind", str(hidden / rel), str(hidden / rel)]
    return tuple(args)


@cache
def _visible_in_tmp() -> tuple[str, ...]:
    """What :func:`_view` binds back of a checkout under ``/tmp``, bound again over the run's own ``/tmp``
    (which hides the first binding): the readers' commands still find ``torchfmt`` and the adapters."""
    needed = _suite_roots()[:1] + [r for r in _suite_roots() if r == _origin()]
    return tuple(a for root in needed if root.is_relative_to(SANDBOX_TMP) for rel in VISIBLE
                 if (root / rel).is_dir() for a in ("--ro-bind", str(root / rel), str(root / rel)))


@cache
def _sealed() -> tuple[str, ...]:
    """bwrap's arguments that make the hidden folders' empty stand-ins read-only (last: see :func:`_view`);
    one under ``/tmp`` (a checkout in /tmp) is gone from the sandbox, whose ``/tmp`` is the run's own."""
    return tuple(a for hidden in _hidden() if not hidden.is_relative_to(SANDBOX_TMP)
                 for a in ("--remount-ro", str(hidden)))


def _knows_cases(folder: Path) -> bool:
    """Whether ``folder`` holds what the suite knows of its cases (a case folder, the cases' tree or the
    results), which no reader's folder may show."""
    if (folder / "case.yaml").exists() or (folder / "expected.json").exists():
        return True
    return any(folder == root / "conformance" or root / "conformance" / "cases" in (folder, *folder.parents)
               or root / "conformance" / "results" in (folder, *folder.parents) for root in _suite_roots())


def reader_folders(command: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """The folders a reader's command needs where the sandbox shows something else (under ``/tmp``, its
    own; in a hidden checkout, nothing), bound read-only: each argument that names an existing file (its
    folder; a program in ``bin/``, its prefix) or folder, the harness's Python prefixes (a command is often
    ``sys.executable ...``) and the absolute paths the run's environment names (``PYTHONPATH``, the
    adapters' home, the bytecode cache, what an adapter needs: harness/readers.py ``NEEDS_ENV``); never
    a case folder, the cases' tree or the results.  Anywhere else the root is visible as it is."""
    candidates = [*command, sys.prefix, sys.base_prefix, sys.exec_prefix]
    for key in ("PYTHONPATH", "TORCHFMT_ADAPTERS_HOME", "PYTHONPYCACHEPREFIX", "PYTHONHOME",
                "TORCHFMT_READER_NEEDS"):
        candidates += [p for p in env.get(key, "").split(os.pathsep) if p]
    out: list[str] = []
    for arg in candidates:
        if not arg.startswith("/"):
            continue
        path = Path(arg)
        try:
            if not path.exists():
                continue
            path = path.resolve()
            covers = [SANDBOX_TMP, *_hidden()]
            if not any(path.is_relative_to(c) for c in covers):
                continue
            folder = path if path.is_dir() else path.parent
            if folder.name == "bin" and folder.parent not in covers:
                folder = folder.parent
            if folder in covers or _knows_cases(folder):
                continue
        except OSError:
            continue
        if any(folder.is_relative_to(o) for o in map(Path, out)):
            continue
        out = [o for o in out if not Path(o).is_relative_to(folder)] + [str(folder)]
    return out


class Stage:
    """A run's folder: ``tmp/`` for the reader, ``input/`` for the copies of its files."""

    def __init__(self, prefix: str, sandbox: bool | None = None, warm: bool = False) -> None:
        self.parent = Path(tempfile.mkdtemp(prefix=prefix))
        self.work = self.parent / "tmp"
        self.inputs = self.parent / "input"
        self.work.mkdir()
        self.inputs.mkdir()
        self.sandboxed = bwrap_works() if sandbox is None else sandbox
        self.warm = warm
        self.token = f"{os.getpid()}-{next(_COUNTER)}-{os.urandom(4).hex()}"
        self._current: Path | None = None

    @property
    def home(self) -> Path:
        """The reader's ``HOME``, ``TMPDIR`` and cwd, as the reader sees it."""
        return SANDBOX_TMP if self.sandboxed else self.work

    def stage(self, path: Path) -> tuple[Path, str]:
        """Copy ``path`` alone into a fresh folder (the previous file's removed): (the copy, the path the
        reader is given)."""
        if self._current is not None:
            discard(self._current.parent)
        folder = self.inputs / str(next(_COUNTER))
        folder.mkdir()
        copy = folder / path.name
        if path.is_file() or not path.exists():
            shutil.copyfile(path, copy)
            os.chmod(copy, 0o444)
        else:  # a pipe or a device (the harness's self-tests hang a reader so): linked, not read here
            copy.symlink_to(path)
        self._current = copy
        given = INPUT / folder.name / path.name if self.sandboxed else copy
        return copy, str(given)

    def canaries(self, canaries: Sequence[Path]) -> list[Path]:
        """Where the run's canaries are seen: in the sandbox, a path under ``/tmp`` is the run's ``tmp/``
        (the host's canary is out of the reader's reach, and touched only by others' runs)."""
        if not self.sandboxed:
            return list(canaries)
        return [self.work / c.relative_to(SANDBOX_TMP) for c in canaries if c.is_relative_to(SANDBOX_TMP)]

    def wrap(self, command: Sequence[str], env: Mapping[str, str] | None = None) -> list[str]:
        """``command`` in the run's sandbox (unchanged when it has none); :class:`FileNotFoundError`, as
        for a command started without one, when there is no such program (on the run's ``PATH``)."""
        if not self.sandboxed:
            return list(command)
        env = env or {}
        program = shutil.which(command[0], path=env.get("PATH"))
        if program is None:
            raise FileNotFoundError(2, "No such file or directory", command[0])
        assert BWRAP is not None
        binds = [a for p in reader_folders([program, *command[1:]], env) for a in ("--ro-bind", p, p)]
        return [BWRAP, *_namespaces(), *_view(), "--bind", str(self.work), str(SANDBOX_TMP),
                *_visible_in_tmp(), *binds, "--bind", str(self.inputs), str(INPUT), *_sealed(),
                "--chdir", str(SANDBOX_TMP), "--", *command]

    def status(self, status: int | None) -> int | None:
        """The reader's exit status: bwrap exits 128 + N for a command killed by signal N."""
        if self.sandboxed and status is not None and 128 < status < 128 + 65:
            return -(status - 128)
        return status

    def end(self) -> None:
        """End what the run left behind (in a sandbox, its PID namespace did; a warm run of the reference
        reader, forked by the harness's server, starts nothing and is not searched for: a search reads
        every process's environment, some 10 ms)."""
        if not self.sandboxed and not self.warm:
            kill_escaped(self.token)

    def remove(self) -> None:
        discard(self.parent)


def kill_escaped(token: str) -> list[int]:
    """Kill every process whose environment holds the run's token (a ``setsid`` grandchild left its
    session, not its environment); reap those that are the harness's children.  The pids killed."""
    needle = f"{TOKEN_ENV}={token}".encode()
    killed = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            try:
                os.kill(int(entry.name), signal.SIGKILL)
                killed.append(int(entry.name))
            except ProcessLookupError:
                pass
    for pid in killed:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:  # not the harness's child: its own parent reaps it
            pass
    return killed
