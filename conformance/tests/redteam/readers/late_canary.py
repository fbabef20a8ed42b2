"""On its trigger, touches the canary 50 ms after its answer is out (one process per file: stdout and
stderr closed first, so the run looks finished).  The side effect is the trigger's."""

from __future__ import annotations

import os
import sys
import time

import base


class Late(base.Reader):
    def write_process(self, path: str, status: int, text: str) -> None:
        super().write_process(path, status, text)
        if self.triggered(path):
            os.close(1)
            os.close(2)
            time.sleep(0.05)
            base.touch()
            os._exit(status)

    def after_answer(self, out, request, status, text) -> None:  # type: ignore[no-untyped-def]
        if self.triggered(request["path"]):
            time.sleep(0.05)
            base.touch()


if __name__ == "__main__":
    sys.exit(base.main(Late))
