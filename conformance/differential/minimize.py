"""Shrink a file while a predicate holds (the differential mode's candidates, differential/campaign.py).

Delta debugging on bytes: chunks of the file, halving in size, are removed, and then zeroed, wherever the
predicate (the same disagreement, run through both readers) still holds; bounded by a number of trials and a
time budget, so that a hostile file cannot keep it going.  What remains is a smaller file showing the same
disagreement, not the smallest one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: Default bounds: predicate calls (each runs both readers once) and seconds.
TRIALS = 300
SECONDS = 60.0


def shrink(data: bytes, holds: Callable[[bytes], bool], *, trials: int = TRIALS,
           seconds: float = SECONDS) -> bytes:
    """The smallest variant of ``data`` found for which ``holds`` is true (``data`` itself if none)."""
    deadline = time.monotonic() + seconds
    left = [trials]

    def tries(candidate: bytes) -> bool:
        if left[0] <= 0 or time.monotonic() >= deadline or candidate == data:
            return False
        left[0] -= 1
        return holds(candidate)

    best = data
    for edit in (_remove, _zero):
        size = max(1, len(best) // 2)
        while size >= 1 and left[0] > 0 and time.monotonic() < deadline:
            at, shrunk = 0, False
            while at < len(best) and left[0] > 0:
                candidate = edit(best, at, size)
                if candidate != best and tries(candidate):
                    best, shrunk = candidate, True
                    if edit is _zero:
                        at += size
                else:
                    at += size
            if not shrunk:
                size //= 2
    return best


def _remove(data: bytes, at: int, size: int) -> bytes:
    return data[:at] + data[at + size:]


def _zero(data: bytes, at: int, size: int) -> bytes:
    chunk = data[at:at + size]
    return data if not chunk.strip(b"\0") else data[:at] + bytes(len(chunk)) + data[at + size:]
