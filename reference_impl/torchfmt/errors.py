"""The one exception type and the closed set of error codes (spec/canonical.md#canonical-error-codes).

Every reader failure is a :class:`FormatError` carrying a code from :data:`ERROR_CODES`, the byte
offset where the problem was found (or ``None`` when no single offset applies) and what was expected.
A feature the reader knows but does not support is :class:`Unsupported` (exit status 2, "declined").
"""

from __future__ import annotations

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
    "bad-value": "a value of the wrong type or outside its domain (unknown dtype, bad UTF-8, NaN key)",
    "limit-exceeded": "a reader resource limit (nesting depth, node count, element count) was reached",
    "ambiguous": "the bytes can be read as two different things and the spec forbids guessing",
}


class FormatError(Exception):
    """A malformed, unsafe or ambiguous file (exit status 1)."""

    def __init__(self, code: str, offset: int | None, message: str) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        self.code = code
        self.offset = offset
        self.message = message
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
