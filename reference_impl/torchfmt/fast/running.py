"""What the pickle fast paths (:mod:`~torchfmt.fast.pickle_entry`, :mod:`~torchfmt.fast.pickle_run`) see
of the running :class:`~torchfmt.pickle.machine.Machine`: its state, the few steps they share with it, and
the allowlist entries it resolves.  Protocols of their own, so that the machine imports the fast paths and
they import nothing of ``pickle/`` (spec/pickle.md#pickle-globals: one place resolves a global).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from ..limits import Limits


class Allowed(Protocol):
    """An allowlist entry as the fast paths use it (:class:`torchfmt.pickle.globals.Allowed`): its role,
    its handler, called with the arguments and the machine's call context, and its argument check."""

    role: str
    handler: Callable[[tuple[Any, ...], Any], Any] | None

    def check_args(self, args: tuple[Any, ...], offset: int) -> None: ...


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
    #: The handler of ``torch._utils._rebuild_tensor_v2``, whose tensor a run makes itself for a view
    #: that handler accepted before (:func:`torchfmt.fast.pickle_run.take`).
    tensor_rebuild: Callable[[tuple[Any, ...], Any], Any]

    def text(self, raw: bytes | memoryview, encoding: str, errors: str = "strict") -> str: ...

    def made_hashable(self, v: Any, depth: int) -> Any: ...

    def tuple_of(self, items: list[Any]) -> tuple[Any, ...]: ...

    def call_context(self) -> Any: ...

    def persistent(self, pid: Any) -> Any: ...

    def allowed(self, module: str, name: str) -> Allowed | None: ...
