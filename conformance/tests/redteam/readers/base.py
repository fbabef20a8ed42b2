"""What every red-team reader shares: the reference reader's answer for a file, served one process per
file (``reader.py [OPTIONS] PATH``) or in batch mode (``reader.py [OPTIONS]``, no path: one request per
line on stdin, spec/canonical.md#canonical-reader-batch), with hooks a trick overrides.

A trick fires only on its *trigger* files (``--on SHA256,...``: the files' digests), so that every other
case of a run is answered as the reference reader answers it and must pass: a verdict charged to any
case but the trigger is the judge blaming the wrong case (issue 25).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
from typing import IO, Any

from torchfmt import cli
from torchfmt.limits import WALK_FRAMES
from torchfmt.recursion import recursion_limit
from torchfmt.t7.encodings import Hints

#: The canary every run checks (conformance/harness/runner.py CANARY); the red-team suite runs in a
#: private /tmp, so touching it reaches no other suite on the machine.
CANARY = "/tmp/torchfmt-conformance-canary"


def touch(path: str = CANARY) -> None:
    with open(path, "a"):
        os.utime(path)


def digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def reference(path: str, hints: dict[str, str]) -> tuple[int, str]:
    """``torchfmt dump PATH``'s ending: (0, the description's JSON text) or (1 or 2, the error line)."""
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("TORCHFMT_T7_")}
    os.environ.update(hints)
    try:
        try:
            parsed = Hints.from_env()
        except Exception as e:  # an invalid hint: declined, as dump does
            return 2, e.line()  # type: ignore[attr-defined]
        err = io.StringIO()
        status, desc = cli._describe(path, parsed, False, err)
        if desc is None:
            return status, err.getvalue().strip()
        out = io.StringIO()
        with recursion_limit(WALK_FRAMES):
            cli._write(desc, out, None)
        return 0, out.getvalue().strip()
    finally:
        for k in [k for k in os.environ if k.startswith("TORCHFMT_T7_")]:
            del os.environ[k]
        os.environ.update(saved)


class Reader:
    """The reference reader; a trick overrides :meth:`answer` (what is said) or the hooks (how)."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.triggers = set(filter(None, args.on.split(",")))
        self.batch = args.path is None
        self.seen: dict[str, bool] = {}

    def triggered(self, path: str) -> bool:
        """Whether ``path`` is a trigger, decided once per path (in batch mode before the answer: the
        suite may remove its copy of the file as soon as the answer is in)."""
        if path not in self.seen:
            try:
                self.seen[path] = digest(path) in self.triggers
            except OSError:
                self.seen[path] = False
        return self.seen[path]

    def answer(self, path: str, hints: dict[str, str]) -> tuple[int, str]:
        return reference(path, hints)

    # one process per file
    def process(self, path: str) -> int:
        hints = {k: v for k, v in os.environ.items() if k.startswith("TORCHFMT_T7_")}
        status, text = self.answer(path, hints)
        self.write_process(path, status, text)
        return status

    def write_process(self, path: str, status: int, text: str) -> None:
        if status == 0:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        else:
            sys.stderr.write(text + "\n")
            sys.stderr.flush()

    # batch mode
    def line(self, request: dict[str, Any], status: int, text: str) -> str:
        body = f'"description": {text}' if status == 0 else f'"error": {json.dumps(text)}'
        return f'{{"id": {request["id"]}, "status": {status}, {body}}}\n'

    def write_answer(self, out: IO[str], request: dict[str, Any], status: int, text: str) -> None:
        out.write(self.line(request, status, text))
        out.flush()

    def after_answer(self, out: IO[str], request: dict[str, Any], status: int, text: str) -> None:
        """Called once the answer is written (a trick's late deed)."""

    def at_eof(self) -> None:
        """Called when stdin ends."""

    def serve(self) -> int:
        answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
        os.dup2(2, 1)
        for raw in sys.stdin:
            if not raw.strip():
                continue
            request = json.loads(raw)
            self.triggered(request["path"])
            status, text = self.answer(request["path"], request.get("hints") or {})
            self.request = request
            self.write_answer(answers, request, status, text)
            self.after_answer(answers, request, status, text)
        self.at_eof()
        return 0


def main(reader: type[Reader] = Reader, argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--on", default="", help="the trigger files' sha256 digests, comma-separated")
    parser.add_argument("--suite", default="", help="the suite's conformance/ folder (lookup readers)")
    parser.add_argument("path", nargs="?")
    args = parser.parse_args(argv)
    r = reader(args)
    return r.serve() if r.batch else r.process(args.path)


if __name__ == "__main__":
    sys.exit(main())
