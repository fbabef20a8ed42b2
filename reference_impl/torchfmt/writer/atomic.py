"""Atomic replacement of a file (spec/pt-zip.md#pt-zip-write-atomic).

A writer writes a temporary file in the destination's folder, flushes and fsyncs it, and renames it
over the destination; a crash or ``kill -9`` at any moment leaves either the old file or the new one,
never a mixture.  The temporary file is removed when writing fails.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import BinaryIO


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file open for writing that becomes ``path`` when the block ends without an error."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # as open() would have made it
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    except OSError:  # some file systems cannot sync a folder; the rename itself is atomic
        pass
    finally:
        os.close(dir_fd)
