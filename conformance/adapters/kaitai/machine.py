"""What a rebuild function may ask of the pickle machine that calls it (spec/pickle.md#pickle-globals,
spec/pickle.md#what-the-allowed-callables-build): a :class:`typing.Protocol` that ``pickle_vm.Machine``
satisfies.

Its own module so that the rebuild rules (``rebuild``) name the machine without importing
``pickle_vm``, which imports them: the machine calls the rules, the rules only use the machine's face.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from .failure import Reject


class Machine(Protocol):
    """The machine as its rebuild functions see it."""

    #: The part of the file the pickle is (the zip's record name, ``the object pickle``): error messages.
    what: str

    def fail(self, message: str, code: str = "bad-pickle") -> Reject:
        """The reject to raise for the opcode running now."""
        ...

    def call(self, g: Any, args: Any, *, newobj: bool = False) -> Any:
        """Apply the allowed callable ``g`` to ``args``."""
        ...

    def nested(self, v: Any) -> Any:
        """``v``, a new tuple or frozenset, after its nesting is checked."""
        ...

    def frozenset_(self, items: Iterable[Any]) -> frozenset[Any]:
        """A frozenset of ``items``, its nesting checked before its items are hashed."""
        ...

    def hashed(self, make: Callable[[Iterable[Any]], Any], items: Iterable[Any]) -> Any:
        """``make(items)`` (a set or frozenset); an item that cannot be hashed is ``bad-value``."""
        ...

    def _hashable(self, key: Any) -> Any:
        """``key`` as a dict key, or the machine's ``bad-value``."""
        ...
