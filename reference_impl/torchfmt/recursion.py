"""Raising Python's recursion limit for a bounded walk, safely across threads.

The limit is one per interpreter, not per thread.  Code that saves the limit, raises it and puts the
saved value back races with any other thread doing the same: a thread can put back a raised limit that
outlives every walk (so a later C-recursive parse in any thread may run past the C stack and crash the
process), or put back the small one while another thread is still deep (a spurious RecursionError).
:func:`recursion_limit` keeps one count for the whole process instead: while any block is inside, the
limit is the largest any of them asked for; when the last one leaves, the limit it found comes back.

The conformance harness uses it too (its JSON parser and comparator run beside the reader's threads).
The raise is never the safety bound itself: every walk that asks for it is bounded by the data's own
depth, which a reader limit (spec/limits.md) or a parser's check has already capped.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_asked: list[int] = []  # what the blocks now inside asked for
_found = 0  # the limit before the first of them


@contextmanager
def recursion_limit(at_least: int) -> Iterator[None]:
    """Run the block with Python's recursion limit at least ``at_least`` (see the module's text)."""
    global _found
    with _lock:
        if not _asked:
            _found = sys.getrecursionlimit()
        _asked.append(at_least)
        sys.setrecursionlimit(max([_found, *_asked]))
    try:
        yield
    finally:
        with _lock:
            _asked.remove(at_least)
            sys.setrecursionlimit(max([_found, *_asked]))
