"""Batch mode: exits (status 0) right after its trigger's answer, stdin still open.  The process's end
is the trigger's; the next request gets a new process and passes."""

from __future__ import annotations

import os
import sys

import base


class Quits(base.Reader):
    def after_answer(self, out, request, status, text) -> None:  # type: ignore[no-untyped-def]
        if self.triggered(request["path"]):
            os._exit(0)


if __name__ == "__main__":
    sys.exit(base.main(Quits))
