"""What the tensor fast paths (:mod:`~torchfmt.pickle.tensor_entry`, :mod:`~torchfmt.pickle.tensor_run`)
see of the running :class:`~torchfmt.pickle.machine.Machine`: its state and the few steps they share
with it.  A protocol of its own so that the machine imports the fast paths and they do not import it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..limits import Limits
from .call import Call


class Running(Protocol):
    """The part of a running machine the fast paths read and change (spec/pickle.md: they do what its
    opcodes would do, in one step)."""

    buf: memoryview
    start: int
    end: int
    pos: int
    at: int
    proto: int | None
    work: int
    limits: Limits
    scopes: frozenset[str]
    stack: list[Any]
    metastack: list[list[Any]]
    memo: dict[int, Any]
    nest: dict[int, int]
    made: list[Any]
    layouts: list[Any]
    persistent_load: Callable[[Any, int], Any] | None

    def text(self, raw: bytes | memoryview, encoding: str, errors: str = "strict") -> str: ...

    def made_hashable(self, v: Any, depth: int) -> Any: ...

    def tuple_of(self, items: list[Any]) -> tuple[Any, ...]: ...

    def call_context(self) -> Call: ...

    def persistent(self, pid: Any) -> Any: ...
