"""The pool the suite's reader runs start in: runs in their tests' order, and the slow ones beside them.

A run that takes a reader a minute (a bomb at the time limit) started first in an ordinary pool holds a
worker, and with two workers, two of them hold both: the first test, which judges a quick case, waits
for them, and the screen shows nothing for minutes.  Started last, it is the run's tail.  Here every
worker takes the runs in their tests' order, except the first, which takes the slow ones first (the
slowest first: harness/durations.py) and the quick ones once no slow one is left; with one worker, that
worker takes the slow ones last.  Only the order of the runs depends on it, never a verdict.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any


class Lanes:
    """``workers`` threads over two queues: ``submit(..., slow=True)`` puts a job in the slow one."""

    def __init__(self, workers: int, name: str = "reader") -> None:
        self._quick: deque[tuple[Future, Callable[..., Any], tuple[Any, ...]]] = deque()
        self._slow: deque[tuple[Future, Callable[..., Any], tuple[Any, ...]]] = deque()
        self._ready = threading.Condition()
        self._closed = False
        self._running = 0
        self._threads = [threading.Thread(target=self._work, args=(i == 0 and workers > 1,),
                                          name=f"{name}_{i}", daemon=True) for i in range(max(1, workers))]
        for t in self._threads:
            t.start()

    def submit(self, fn: Callable[..., Any], *args: Any, slow: bool = False) -> Future:
        return self.submit_all([(fn, args, slow)])[0]

    def submit_all(self, jobs: list[tuple[Callable[..., Any], tuple[Any, ...], bool]]) -> list[Future]:
        """Queue ``(fn, args, slow)`` jobs at once (no worker picks one before both queues hold theirs)."""
        futures: list[Future] = [Future() for _ in jobs]
        with self._ready:
            if self._closed:
                raise RuntimeError("the pool is shut down")
            for future, (fn, args, slow) in zip(futures, jobs, strict=True):
                (self._slow if slow else self._quick).append((future, fn, args))
            self._ready.notify_all()
        return futures

    def _next(self, slow_first: bool) -> tuple[Future, Callable[..., Any], tuple[Any, ...]] | None:
        with self._ready:
            while not (self._quick or self._slow or self._closed):
                self._ready.wait()
            order = (self._slow, self._quick) if slow_first else (self._quick, self._slow)
            for queue in order:
                if queue:
                    return queue.popleft()
            return None  # closed and empty

    def _work(self, slow_first: bool) -> None:
        while (job := self._next(slow_first)) is not None:
            future, fn, args = job
            if not future.set_running_or_notify_cancel():
                continue
            with self._ready:
                self._running += 1
            try:
                future.set_result(fn(*args))
            except BaseException as e:  # the job's, handed to whoever waits for it
                future.set_exception(e)
            finally:
                with self._ready:
                    self._running -= 1
                    self._ready.notify_all()

    def quiet(self, cancel_futures: bool = False) -> None:
        """Wait until no job runs or waits (``cancel_futures``: cancel those not started), the workers
        kept: a process a worker started with a parent-death signal (bubblewrap's ``--die-with-parent``:
        a batch process) dies with the worker's thread, so the processes are ended first."""
        with self._ready:
            if cancel_futures:
                for queue in (self._quick, self._slow):
                    while queue:
                        queue.popleft()[0].cancel()
            while self._running or self._quick or self._slow:
                self._ready.wait()

    def shutdown(self, cancel_futures: bool = False) -> None:
        """Let the workers end once the queues are empty (``cancel_futures``: cancel what has not started),
        and wait for them."""
        with self._ready:
            self._closed = True
            if cancel_futures:
                for queue in (self._quick, self._slow):
                    while queue:
                        queue.popleft()[0].cancel()
            self._ready.notify_all()
        for t in self._threads:
            t.join()
