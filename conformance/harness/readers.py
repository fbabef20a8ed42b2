"""The readers the suite knows by name, and how any other reader command is given.

``--reader reference`` (the default) is torchfmt's own command line; ``torch`` and ``kaitai`` are
adapters under ``conformance/adapters/``; anything else is a command line, split like a shell would,
to which the suite appends the file's path (spec/canonical.md#canonical-reader-cli).
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass

from .vocabulary import CONFORMANCE

ADAPTERS = {"torch": CONFORMANCE / "adapters" / "torch_reader.py",
            "kaitai": CONFORMANCE / "adapters" / "kaitai_reader.py"}


@dataclass(frozen=True)
class Reader:
    name: str
    command: list[str]
    is_reference: bool

    @property
    def declined_fails(self) -> bool:
        """The reference reader must read every case the suite holds; others may decline."""
        return self.is_reference


class UnknownReader(ValueError):
    pass


def resolve(spec: str) -> Reader:
    """``reference``, ``torch``, ``kaitai`` or a command line."""
    if spec == "reference":
        return Reader("reference", [sys.executable, "-m", "torchfmt", "dump"], True)
    if spec in ADAPTERS:
        adapter = ADAPTERS[spec]
        if not adapter.is_file():
            raise UnknownReader(f"--reader {spec}: the adapter {adapter} does not exist (yet)")
        return Reader(spec, [sys.executable, str(adapter)], False)
    command = shlex.split(spec)
    if not command:
        raise UnknownReader("--reader: empty command")
    return Reader(spec, command, False)


def available() -> list[str]:
    """Named readers that can run here (the reference, and each adapter that exists)."""
    return ["reference", *(name for name, path in ADAPTERS.items() if path.is_file())]
