"""A progress bar on the terminal for the tools' long reads and writes (spec/slim.md#slim-report).

Shown by tqdm on stderr when stderr is a terminal and the job moves at least :data:`THRESHOLD` bytes;
silent otherwise (a pipe, a log file, a test), so that what a script reads from stderr stays one line.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

#: Bytes a job must move for a bar to be shown (about 100 MB).
THRESHOLD = 100 * 10**6


def shown(total: int) -> bool:
    """Whether a job of ``total`` bytes shows a bar: stderr is a terminal and ``total`` is large."""
    return total >= THRESHOLD and sys.stderr.isatty() and os.environ.get("TERM") != "dumb"


@contextlib.contextmanager
def progress(total: int, what: str) -> Iterator[Callable[[int], None]]:
    """A function to call with each count of bytes done; it draws a bar of ``total`` bytes labelled
    ``what`` when :func:`shown`, and does nothing else."""
    if not shown(total):
        yield lambda n: None
        return
    from tqdm import tqdm

    width = shutil.get_terminal_size().columns  # a terminal that reports no size: $COLUMNS, else 80
    with tqdm(total=total, desc=what, unit="B", unit_scale=True, unit_divisor=1000, file=sys.stderr,
              ncols=width, leave=False, mininterval=0.2) as bar:
        yield bar.update


class CountingFile:
    """A binary file that tells ``done`` how many bytes each write wrote (a writer only calls
    ``write``; ``tell`` is the file's)."""

    def __init__(self, f: BinaryIO, done: Callable[[int], None]) -> None:
        self.f, self.done = f, done

    def write(self, data: Any) -> int:
        n = self.f.write(data)
        self.done(memoryview(data).nbytes)
        return n

    def tell(self) -> int:
        return self.f.tell()
