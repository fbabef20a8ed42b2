"""Atomic replacement of a file (spec/pt-zip.md#pt-zip-write-atomic).

A writer writes a temporary file in the destination's folder, flushes and fsyncs it, and renames it
over the destination; a crash or ``kill -9`` at any moment leaves either the old file or the new one,
never a mixture.  The temporary file is removed when writing fails, when the ``check`` of what was
written refuses it, and when the process gets any signal whose default ends it and that a process can
catch (:data:`STOP_SIGNALS`: SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGALRM, SIGXCPU as ``ulimit -t`` sends
it, ...: the temporary file goes, then the signal ends the process as it would have).  Only
``kill -9`` (or a crash) can leave one behind: its name, ``.NAME.torchfmt-PID-RANDOM.tmp``, says which
process wrote it, and the next write of ``NAME`` removes those whose writer is dead
(:func:`remove_stale`).
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

#: Catchable signals whose default action ends the process: the temporary file is removed before the
#: signal ends it.  A signal the program handles itself (or ignores: Python ignores SIGPIPE) is left to it.
STOP_SIGNALS = tuple(getattr(signal, name) for name in (
    "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF",
    "SIGXCPU", "SIGXFSZ", "SIGPIPE", "SIGPOLL", "SIGTRAP", "SIGSYS", "SIGSTKFLT", "SIGPWR")
    if hasattr(signal, name))
#: What a temporary's name holds between ``.NAME.`` and ``.tmp``: the writer's pid and a random tag.
_TAG = re.compile(r"torchfmt-([0-9]{1,10})-[0-9a-f]{16}")


class _Stopped(BaseException):
    """A stop signal arrived while a temporary file existed."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signum)


@contextlib.contextmanager
def _stop_signals_raise() -> Iterator[None]:
    """In the main thread, the stop signals raise :class:`_Stopped` inside the block (elsewhere a thread
    cannot set handlers: the block runs as it is)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise _Stopped(signum)

    before = {s: signal.signal(s, stop) for s in STOP_SIGNALS
              if signal.getsignal(s) in (signal.SIG_DFL, signal.default_int_handler)}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str],
                check: Callable[[str], None] | None = None) -> Iterator[BinaryIO]:
    """A binary file open for writing that becomes ``path`` when the block ends without an error and
    ``check`` (given the temporary file's path once it is complete) raises nothing."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    remove_stale(path)
    tmp = temporary_name(path)
    try:
        with _stop_signals_raise():
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
                with os.fdopen(fd, "wb") as f:
                    yield f
                    f.flush()
                    os.fsync(f.fileno())
                if check is not None:
                    check(tmp)
                os.chmod(tmp, 0o666 & ~_umask())  # as open() would have made it
                os.replace(tmp, path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
    except _Stopped as e:  # the file is gone: now the signal does what it would have done
        _deliver(e.signum)
        raise
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    except OSError:  # some file systems cannot sync a folder; the rename itself is atomic
        pass
    finally:
        os.close(dir_fd)


def temporary_name(path: str) -> str:
    """The temporary file of a write of ``path``: beside it, hidden, naming this process."""
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}.torchfmt-{os.getpid()}-{secrets.token_hex(8)}.tmp")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def remove_stale(path: str | os.PathLike[str]) -> list[str]:
    """Remove the temporaries a killed write of ``path`` left (a regular file of this user named as
    :func:`temporary_name` names them, whose writer process no longer exists); what was removed.  Nothing
    else is touched: another name, a live writer's file, a link, another user's file."""
    folder, name = os.path.split(os.path.abspath(os.fspath(path)))
    prefix = f".{name}."
    removed = []
    try:
        entries = os.listdir(folder)
    except OSError:
        return removed
    for entry in entries:
        if not (entry.startswith(prefix) and entry.endswith(".tmp")):
            continue
        m = _TAG.fullmatch(entry[len(prefix):-len(".tmp")])
        if m is None or int(m.group(1)) == os.getpid() or _alive(int(m.group(1))):
            continue
        full = os.path.join(folder, entry)
        try:
            st = os.lstat(full)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
                os.unlink(full)
                removed.append(entry)
        except OSError:
            continue
    return removed


def _deliver(signum: int) -> None:
    """Deliver ``signum`` again with the handler there was before: Python's own for SIGINT (a
    KeyboardInterrupt), the default (the process ends by the signal) for the others."""
    handler = signal.getsignal(signum)
    if callable(handler):
        handler(signum, None)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
