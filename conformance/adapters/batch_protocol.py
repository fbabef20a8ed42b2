"""The batch protocol's loop for a Python adapter (spec/canonical.md#canonical-reader-batch).

:func:`serve` reads one JSON request per line on stdin (``{"id", "path", "hints"}``), calls the adapter's
contract command as a function on the path, with the request's ``TORCHFMT_T7_*`` hints as its only ones,
and answers on one line what the command would have printed and the status it would have exited with:
``{"id", "status", "description"}`` or ``{"id", "status", "error"}``.  What the function prints is caught
(``sys.stdout``, ``sys.stderr``); anything written on file descriptor 1 by other means (a C library, a
child process given the inherited descriptor) goes to stderr, never into the answers.  The standard
library only: adapters run it under other Pythons (torch113's Debian one, the venvs of ptloader,
tinygrad and torchfile); the hint variables come from harness/facts.py, which needs no more.
"""

from __future__ import annotations

import io
import json
import os
import sys
import traceback
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from typing import Any

from conformance.harness.facts import hint_variables  # the stdlib only

#: The variables a request's hints set (spec/canonical.md#canonical-t7-hints, its generated table).
HINTS = hint_variables()


class _Pieces(io.RawIOBase):
    """A binary sink keeping what is written as it was written, joined when asked: a description of
    hundreds of MB written at once is kept as that one bytes object, not copied into a growing buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces: list[bytes] = []

    def writable(self) -> bool:
        return True

    def write(self, b: Any) -> int:
        piece = b if type(b) is bytes else bytes(b)
        self.pieces.append(piece)
        return len(piece)

    def getvalue(self) -> bytes:
        return self.pieces[0] if len(self.pieces) == 1 else b"".join(self.pieces)


class _Captured(io.TextIOWrapper):
    """A text stream with a ``buffer``, as ``sys.stdout`` has (adapters write bytes to it too)."""

    def __init__(self) -> None:
        super().__init__(_Pieces(), encoding="utf-8", errors="surrogateescape", write_through=True)

    def value(self) -> bytes:
        self.flush()
        return self.buffer.getvalue()  # type: ignore[attr-defined]


def call(command: Callable[..., int | None], *args: object) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, stderr) of ``command(*args)`` as ``sys.exit(command(*args))`` would end:
    ``SystemExit`` gives its code, an uncaught exception its traceback and status 1."""
    out, err = _Captured(), _Captured()
    limit = sys.getrecursionlimit()
    # the command's frames start deeper than in its own process (``sys.exit(main())``): as much more room
    sys.setrecursionlimit(limit + _depth())
    with redirect_stdout(out), redirect_stderr(err):
        try:
            status = command(*args)
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                status = e.code
            else:  # sys.exit("message"): Python prints it and exits 1
                print(e.code, file=sys.stderr)
                status = 1
        except BaseException:  # noqa: BLE001 - as Python ends a script that raises
            traceback.print_exc()
            status = 1
        finally:
            sys.setrecursionlimit(limit)
    return status or 0, out.value(), err.value()


def _depth() -> int:
    """Frames on the stack below the caller's caller."""
    frame, n = sys._getframe(2), 0
    while frame is not None:
        frame, n = frame.f_back, n + 1
    return n


def answer_line(request_id: object, status: int, out: bytes, err: bytes) -> list[bytes]:
    """The answer for what a command printed, in pieces to write one after the other (a description of
    hundreds of MB is not copied into one line first): the description (its stdout, a JSON text whose line
    breaks are whitespace) as it is, unparsed; the stderr as the error line; stdout of a failed status kept
    so that the suite sees it (a description with status 1 or 2 is a broken answer, as stdout is there)."""
    head = json.dumps({"id": request_id, "status": status})[:-1]
    if status == 0:
        text = out.strip().replace(b"\r", b" ").replace(b"\n", b" ") or b"null"
        return [head.encode() + b', "description": ', text, b"}\n"]
    parts = {"error": err.decode("utf-8", "replace")}
    if out:
        parts["description"] = out.decode("utf-8", "replace")
    return [(head + ", " + json.dumps(parts)[1:]).encode() + b"\n"]


def serve(command: Callable[[str], int | None]) -> int:
    """Answer requests until stdin ends; ``command(path)`` is the adapter's command on one file."""
    requests = sys.stdin.buffer
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # fd 1 is stderr from now on: only answers go to the suite
    sys.stdout = os.fdopen(1, "w", closefd=False)
    limit = sys.getrecursionlimit()
    for raw in requests:
        if not raw.strip():
            continue
        request = json.loads(raw)
        for name in HINTS:
            os.environ.pop(name, None)
        os.environ.update({k: str(v) for k, v in (request.get("hints") or {}).items() if k in HINTS})
        status, out, err = call(command, request["path"])
        sys.setrecursionlimit(limit)  # what one request raised is not the next one's
        answers.writelines(answer_line(request["id"], status, out, err))
        answers.flush()
    return 0
