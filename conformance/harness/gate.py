"""Runs of cases side by side, but a case that may run code alone.

A case whose payload would run code names a canary of its own (case.yaml ``canary``), and its payload
touches that canary and the harness's shared ``runner.CANARY``.  Every run checks the shared canary and
the watched tree after it ends, so a reader that runs one such payload while another case is in flight
would have its code charged to that other case as well.  :class:`Gate` lets runs share the reader's
workers, and gives a run that watches a canary of its own the reader to itself: nothing else is in
flight from the moment it starts until it is judged.  (Two suites run at once on one machine still share
the canary: run a reader that executes code from files in one suite at a time.)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path


def runs_alone(canaries: Sequence[Path], shared: Path) -> bool:
    """Whether a run watching ``canaries`` is one of a case that names its own canary."""
    return any(c != shared for c in canaries)


class Gate:
    """A shared/exclusive lock that lets a waiting exclusive run in before later shared ones."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared = 0
        self._exclusive = False
        self._waiting = 0

    @contextmanager
    def hold(self, exclusive: bool) -> Iterator[None]:
        with self._cond:
            if exclusive:
                self._waiting += 1
                self._cond.wait_for(lambda: not self._exclusive and self._shared == 0)
                self._waiting -= 1
                self._exclusive = True
            else:
                self._cond.wait_for(lambda: not self._exclusive and self._waiting == 0)
                self._shared += 1
        try:
            yield
        finally:
            with self._cond:
                if exclusive:
                    self._exclusive = False
                else:
                    self._shared -= 1
                self._cond.notify_all()
