"""On its trigger, answers twice: the second copy 0.3 s after the first (one process per file: the
document printed twice).  The framing error is the trigger's; the request after it is innocent."""

from __future__ import annotations

import sys
import threading
import time

import base


class Twice(base.Reader):
    def write_process(self, path: str, status: int, text: str) -> None:
        super().write_process(path, status, text)
        if self.triggered(path):
            time.sleep(0.3)
            super().write_process(path, status, text)

    def after_answer(self, out, request, status, text) -> None:  # type: ignore[no-untyped-def]
        if self.triggered(request["path"]):
            def again() -> None:
                time.sleep(0.3)
                self.write_answer(out, request, status, text)
            threading.Thread(target=again).start()


if __name__ == "__main__":
    sys.exit(base.main(Twice))
