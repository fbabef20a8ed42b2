"""Opening the file a reader or tool reads (spec/canonical.md#canonical-reader-input).

Only a regular file is read: a FIFO, a device, a socket or a directory is refused before anything is
read from it, by every command alike (an open of a FIFO blocks until a writer comes; a read of a device
may never end).  The path is checked with ``stat`` first, then opened without blocking
(``O_NONBLOCK``) and checked again on the descriptor (``fstat``), so that a path swapped for a FIFO in
between cannot block the open either.  A pseudo-file that says it is regular and holds no bytes
(``/proc/self/mem``) is the empty file it says it is.
"""

from __future__ import annotations

import errno
import os
import stat

from .errors import Unsupported, quote

#: Characters of a path a refusal quotes at most (a path is the user's, not file data: longer than
#: :data:`~torchfmt.errors.QUOTE_CHARS`).
PATH_CHARS = 200

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def kind(mode: int) -> str | None:
    """What a non-regular ``st_mode`` is (``a FIFO``...), None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


def not_regular(path: str | os.PathLike[str], what: str) -> Unsupported:
    return Unsupported(f"not-a-regular-file ({what}: {quote(os.fspath(path), PATH_CHARS)})")


def missing(path: str | os.PathLike[str]) -> Unsupported:
    """A path that names nothing: one clear word whatever the command (not ``unreadable-path``)."""
    return Unsupported(f"missing-input (no such file: {quote(os.fspath(path), PATH_CHARS)})")


def check_regular(path: str | os.PathLike[str]) -> os.stat_result:
    """``stat`` of ``path`` when it names a regular file; :class:`Unsupported` ``missing-input`` or
    ``not-a-regular-file`` otherwise, before anything opens it."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise missing(path) from None
    except NotADirectoryError:
        raise missing(path) from None
    what = kind(st.st_mode)
    if what is not None:
        raise not_regular(path, what)
    return st


def open_regular(path: str | os.PathLike[str]) -> int:
    """A read-only descriptor of the regular file at ``path`` (blocking mode restored once it is known to
    be one), or :class:`Unsupported` as :func:`check_regular`."""
    check_regular(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise missing(path) from None
    except OSError as e:
        if e.errno == errno.ENXIO:  # a socket or a FIFO that appeared after the stat
            raise not_regular(path, "not a regular file") from None
        raise
    try:
        what = kind(os.fstat(fd).st_mode)
        if what is not None:
            raise not_regular(path, what)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_file(path: str | os.PathLike[str], buffering: int = -1):  # noqa: ANN201 - a binary file object
    """:func:`open_regular` as a binary file object (``open(path, "rb")`` for a regular file only)."""
    return os.fdopen(open_regular(path), "rb", buffering=buffering)
