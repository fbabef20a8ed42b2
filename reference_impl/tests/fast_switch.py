"""The reader's one fast-path switch (:data:`torchfmt.fast.ENABLED`) set for a stretch of a test."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from torchfmt import fast


@contextmanager
def fast_paths(on: bool) -> Iterator[None]:
    """The fast paths taken (``on``) or not inside the block, whatever the environment said; the switch
    as it was afterwards."""
    was = fast.ENABLED
    fast.ENABLED = on
    try:
        yield
    finally:
        fast.ENABLED = was
