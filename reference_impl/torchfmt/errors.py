"""The one exception type and the closed set of error codes (spec/canonical.md#canonical-error-codes).

Every reader failure is a :class:`FormatError` carrying a code from :data:`ERROR_CODES`, the byte
offset where the problem was found (or ``None`` when no single offset applies) and what was expected.
A feature the reader knows but does not support is :class:`Unsupported` (exit status 2, "declined").
"""

from __future__ import annotations

from typing import Any

#: The closed set of error codes, each with the meaning the spec gives it.  spec/canonical.md's table
#: is checked against this mapping; case expectations may only use these names.
ERROR_CODES: dict[str, str] = {
    "truncated": "the file ends inside a structure, or a declared size reaches past the end of the file",
    "unknown-format": "the bytes are not any variant of .t7 or .pt (e.g. an LFS pointer, HTML, gzip)",
    "bad-magic": "a magic number, protocol or format-version marker has a value the spec does not allow",
    "bad-type-code": "a .t7 type code outside the spec's table",
    "bad-opcode": "a pickle opcode that is unknown or not allowed where it appears",
    "bad-length": "a length, count, size, dimension or stride that is negative or overflows",
    "out-of-bounds": "an offset or view that reaches outside its storage, record or file",
    "bad-reference": "a .t7 index, pickle memo key or persistent id that names nothing, or the wrong kind",
    "bad-pickle": "a malformed pickle program: stack underflow, MARK misuse, wrong argument types, no STOP",
    "unsafe-global": "a pickle global outside the spec's allowlist",
    "bad-container": "a zip or tar container that breaks its invariants (names, sizes, duplicates, flags)",
    "bad-value": "a value of the wrong type or outside its domain (unknown dtype, bad UTF-8, bad number)",
    "limit-exceeded": "a reader resource limit (nesting depth, node count, element count) was reached",
    "ambiguous": "the bytes can be read as two different things and the spec forbids guessing",
}


class FormatError(Exception):
    """A malformed, unsafe or ambiguous file (exit status 1)."""

    def __init__(self, code: str, offset: int | None, message: str, *, needed_end: int | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        self.code = code
        self.offset = offset
        self.message = message
        #: For ``truncated``: the file offset the structure being read declares it reaches (at least), so
        #: that ``torchfmt inspect`` can say how many bytes a cut download lacks
        #: (spec/inspect.md#inspect-truncated).
        self.needed_end = needed_end
        super().__init__(self.line())

    def line(self) -> str:
        """The one stderr line: ``<code>: <message> (at byte N)``."""
        where = "" if self.offset is None else f" (at byte {self.offset})"
        return f"{self.code}: {self.message}{where}"


class Unsupported(Exception):
    """A feature the reader declines to read (exit status 2)."""

    def __init__(self, feature: str) -> None:
        self.feature = feature
        super().__init__(self.line())

    def line(self) -> str:
        return f"unsupported: {self.feature}"


#: Characters of file data an error message quotes at most (spec/canonical.md#canonical-reader-cli).
QUOTE_CHARS = 40
_QUOTE_ITEMS = 3  # items of a container shown
_QUOTE_DEPTH = 2  # containers shown inside containers


def quote(value: Any, limit: int = QUOTE_CHARS) -> str:
    """A short, escaped, one-line rendering of ``value`` from a file, for an error message.

    Text and bytes show an ASCII-escaped prefix of at most ``limit`` characters; containers show their
    type, length and first few items, nested at most two deep; a huge int shows its size.  Nothing here
    hashes, compares or walks the value further than that, so a hostile value (a million-deep tuple, a
    gigabyte string, a 10**100000 int) costs a bounded rendering (spec/canonical.md#canonical-reader-cli).
    """
    out = _quote(value, limit, _QUOTE_DEPTH)
    return out if len(out) <= 3 * limit else out[:3 * limit] + "..."


def _quote(v: Any, limit: int, depth: int) -> str:
    if isinstance(v, (str, bytes, bytearray, memoryview)):
        raw = v if not isinstance(v, memoryview) else bytes(v[:limit + 1])
        head = ascii(raw[:limit]) if isinstance(raw, str) else ascii(bytes(raw[:limit]))
        return head + ("..." if len(v) > limit else "")
    if v is None or isinstance(v, (bool, float)):
        return repr(v)
    if isinstance(v, int):
        bits = v.bit_length()
        return repr(v) if bits <= 128 else f"<{'-' if v < 0 else ''}int of {bits} bits>"
    name = getattr(type(v), "__name__", "object")
    if isinstance(v, (tuple, list, set, frozenset, dict)):
        n = len(v)
        if depth <= 0:
            return f"<{name} of {n} items>"
        items = v.items() if isinstance(v, dict) else v
        shown = []
        for i, item in enumerate(items):
            if i == _QUOTE_ITEMS:
                shown.append("...")
                break
            if isinstance(v, dict):
                shown.append(f"{_quote(item[0], limit, depth - 1)}: {_quote(item[1], limit, depth - 1)}")
            else:
                shown.append(_quote(item, limit, depth - 1))
        return f"{name}[{', '.join(shown)}]"
    cls = getattr(v, "class_name", None)  # an opaque object, or a global's module and name
    if isinstance(cls, str):
        return f"<{_quote(cls, limit, 0)} object>"
    module, gname = getattr(v, "module", None), getattr(v, "name", None)
    if isinstance(module, str) and isinstance(gname, str):
        return f"<global {_quote(module + '.' + gname, limit, 0)}>"
    return f"<{name}>"
