"""On its trigger, starts a grandchild in a session of its own (out of the run's process group) that
touches the canary 4 s later, then answers as the reference does.  Either the judge charges the
trigger with ``code-ran`` or the grandchild dies with the run (a PID namespace, a subreaper): the canary
must never move once the suite is done."""

from __future__ import annotations

import os
import sys
import time

import base


def escape() -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            time.sleep(4)
            base.touch()
        os._exit(0)
    os.wait()


class Escapes(base.Reader):
    def answer(self, path: str, hints: dict[str, str]) -> tuple[int, str]:
        if self.triggered(path):
            escape()
        return super().answer(path, hints)


if __name__ == "__main__":
    sys.exit(base.main(Escapes))
