"""Bounded capture of what a reader writes (spec/canonical.md#canonical-reader-cli, "Bounded capture").

A description is bounded by the canonical budgets (spec/canonical.md#canonical-node-budget): at most
``TEXT_BUDGET`` bytes of str and bytes text, plus its structure.  So is what the harness keeps of a
reader's output: stdout per process and an answer line in batch mode are refused past
:func:`output_limit` (the text budget plus :data:`OUTPUT_MARGIN`), and stderr is kept as its first
line and a bounded tail.  The harness's memory then follows the descriptions it compares, never what a
reader writes: output past :data:`SPILL` bytes is kept in a file of the harness's until it is judged.
"""

from __future__ import annotations

import ast
import tempfile
from functools import cache

from .vocabulary import ROOT

LIMITS_FILE = ROOT / "reference_impl" / "torchfmt" / "limits.py"
#: Room for a description's structure beyond its text (keys, numbers, brackets): 64 MiB.
OUTPUT_MARGIN = 64 << 20
#: Output kept in memory up to this size; past it, in a temporary file.
SPILL = 16 << 20
#: stderr kept whole up to this size; past it, its first line (up to :data:`STDERR_HEAD`) and its last
#: :data:`STDERR_TAIL` bytes.
STDERR_WHOLE = 64 << 10
STDERR_HEAD = 8 << 10
STDERR_TAIL = 8 << 10


@cache
def text_budget() -> int:
    """``TEXT_BUDGET`` from limits.py, read as data (``Limit("TEXT_BUDGET", <value>, ...)``)."""
    tree = ast.parse(LIMITS_FILE.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TEXT_BUDGET"
                                                for t in node.targets):
            call = node.value
            if isinstance(call, ast.Call) and len(call.args) >= 2:
                value = _integer(call.args[1])
                if value is not None and value > 0:
                    return value
    raise LookupError(f"{LIMITS_FILE}: no TEXT_BUDGET = Limit('TEXT_BUDGET', <int>, ...)")


def _integer(node: ast.expr) -> int | None:
    """An integer literal, or ``a << b`` / ``a * b`` of them (``1 << 28``)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.LShift, ast.Mult)):
        a, b = _integer(node.left), _integer(node.right)
        if a is not None and b is not None and 0 <= b < 64:
            return a << b if isinstance(node.op, ast.LShift) else a * b
    return None


def output_limit() -> int:
    """Bytes of stdout (per process) or of one answer line (batch) the harness takes."""
    return text_budget() + OUTPUT_MARGIN


class Capture:
    """One output stream, kept up to ``limit`` bytes (``over`` once a reader wrote more)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        self.over = False
        self._parts: list[bytes] = []
        self._held = 0
        self._file: tempfile._TemporaryFileWrapper | None = None  # type: ignore[type-arg]

    def add(self, chunk: bytes) -> bool:
        """Keep ``chunk``; ``False`` once the stream is past its limit (the rest is not kept)."""
        self.size += len(chunk)
        if self.over or self.size > self.limit:
            self.over = True
            self._parts, self._held = [], 0
            if self._file is not None:
                self._file.close()
                self._file = None
            return False
        if self._file is None and self._held + len(chunk) > SPILL:
            self._file = tempfile.TemporaryFile(prefix="torchfmt-capture-")
            for part in self._parts:
                self._file.write(part)
            self._parts, self._held = [], 0
        if self._file is not None:
            self._file.write(chunk)
        else:
            self._parts.append(chunk)
            self._held += len(chunk)
        return True

    def value(self) -> bytes:
        """What was kept (empty once past the limit)."""
        if self._file is not None:
            self._file.seek(0)
            data = self._file.read()
            self._file.close()
            self._file = None
            return data
        return b"".join(self._parts)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Stderr:
    """A stderr stream kept whole up to :data:`STDERR_WHOLE` bytes, else as its head and tail."""

    def __init__(self) -> None:
        self.size = 0
        self.head = bytearray()
        self.tail = bytearray()

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        room = STDERR_WHOLE - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[:-STDERR_TAIL]

    @property
    def whole(self) -> bool:
        return self.size <= STDERR_WHOLE

    def value(self) -> bytes:
        """All of it, or its first line (at most :data:`STDERR_HEAD` bytes), a marker and its tail."""
        if self.whole:
            return bytes(self.head)
        first = bytes(self.head[:STDERR_HEAD]).split(b"\n", 1)[0]
        skipped = self.size - len(first) - len(self.tail)
        return first + f"\n[... {skipped} bytes not kept ...]\n".encode() + bytes(self.tail)

