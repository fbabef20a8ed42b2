"""Atomic replacement of a file (spec/pt-zip.md#pt-zip-write-atomic).

A writer writes a temporary file in the destination's folder, flushes and fsyncs it, and renames it
over the destination; a crash or ``kill -9`` at any moment leaves either the old file or the new one,
never a mixture.  The temporary file is removed when writing fails, when the ``check`` of what was
written refuses it, and when the process is told to stop (SIGINT, SIGTERM, SIGHUP: the temporary file
goes, then the signal ends the process as it would have).
"""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

#: Signals that end a process politely: the temporary file is removed before the signal ends it.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


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

    before = {s: signal.signal(s, stop) for s in STOP_SIGNALS if signal.getsignal(s) != signal.SIG_IGN}
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
    try:
        with _stop_signals_raise():
            fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
            try:
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


def _deliver(signum: int) -> None:
    """Deliver ``signum`` again with the handler there was before: Python's own for SIGINT (a
    KeyboardInterrupt), the default (the process ends by the signal) for the others."""
    handler = signal.getsignal(signum)
    if callable(handler):
        handler(signum, None)
        return
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
