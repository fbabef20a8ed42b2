"""On its trigger, starts a child that writes a stray line on the answers' stream 50 ms after the
answer.  The stray line is the trigger's framing error."""

from __future__ import annotations

import subprocess
import sys

import base

STRAY = ["sh", "-c", "sleep 0.05; echo stray line of a child"]


class Stray(base.Reader):
    def write_process(self, path: str, status: int, text: str) -> None:
        if self.triggered(path):
            subprocess.Popen(STRAY, stdout=sys.stdout.fileno())
        super().write_process(path, status, text)

    def after_answer(self, out, request, status, text) -> None:  # type: ignore[no-untyped-def]
        if self.triggered(request["path"]):
            subprocess.Popen(STRAY, stdout=out.fileno())


if __name__ == "__main__":
    sys.exit(base.main(Stray))
