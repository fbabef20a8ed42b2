"""On its trigger, writes ``--mb`` MiB (default 256) where the contract allows none: ``--stream stdout``
(lines of junk before the answer), ``stderr`` (lines of junk on stderr, then the answer: a break for a
rejection run one process per file, allowed in batch mode and with exit 0) or ``line`` (one line of
junk without a newline, the answer after it on the same line).  The verdict must be the trigger's; the
harness's memory must not follow the flood (benchmarks measure that)."""

from __future__ import annotations

import os
import sys

import base

STREAM, MB = "stdout", 256
CHUNK = 1 << 20


def flood(fd: int, newline: bool) -> None:
    piece = (b"x" * (CHUNK - 1) + b"\n") if newline else b"y" * CHUNK
    for _ in range(MB):
        try:
            os.write(fd, piece)
        except BrokenPipeError:
            return


class Flood(base.Reader):
    def write_process(self, path: str, status: int, text: str) -> None:
        if self.triggered(path):
            sys.stdout.flush()
            flood(2 if STREAM == "stderr" else 1, STREAM != "line")
        super().write_process(path, status, text)

    def write_answer(self, out, request, status, text) -> None:  # type: ignore[no-untyped-def]
        if self.triggered(request["path"]):
            out.flush()
            flood(2 if STREAM == "stderr" else out.fileno(), STREAM != "line")
        super().write_answer(out, request, status, text)


if __name__ == "__main__":
    while sys.argv[1:2] in (["--stream"], ["--mb"]):
        if sys.argv[1] == "--stream":
            STREAM = sys.argv[2]
        else:
            MB = int(sys.argv[2])
        del sys.argv[1:3]
    sys.exit(base.main(Flood))
