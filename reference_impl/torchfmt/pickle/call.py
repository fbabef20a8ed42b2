"""What a handler of an allowed callable receives besides its arguments (spec/pickle.md#pickle-globals).

A module of its own so that the allowlist (:mod:`torchfmt.pickle.globals`) and the handlers it names
(:mod:`torchfmt.pickle.rebuild`) both use it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Call:
    """What a handler may know about its call: the opcode's file offset, the mode, and a way to apply
    another allowed callable (for ``_rebuild_from_type_v2``)."""

    offset: int
    inert: bool
    call: Callable[[Any, tuple[Any, ...]], Any]


Handler = Callable[[tuple[Any, ...], Call], Any]
