"""Sniffing a ``.t7`` stream's mode and byte order (spec/t7.md#t7-detect).

A ``.t7`` file has no header.  The mode and the byte order are decided by the first bytes; the long
size only by reading, so :func:`torchfmt.t7.reader.read_t7` settles it by trying both sizes.
"""

from __future__ import annotations

import re

from ..errors import FormatError

#: Type codes are 0..8, so a binary stream's first byte is 0x00..0x08 in either byte order.
MAX_TYPE_CODE = 8
#: Bytes an ascii stream may start with: C whitespace, a sign or a digit.
ASCII_START = frozenset(b" \t\n\v\f\r+-0123456789")
_NON_ZERO = re.compile(rb"[^\x00]")


def sniff_mode(buf: memoryview) -> str:
    """``binary`` or ``ascii`` from the first byte (spec/t7.md#t7-detect)."""
    if len(buf) == 0:
        raise FormatError("truncated", 0, "empty file")
    first = buf[0]
    if first <= MAX_TYPE_CODE:
        return "binary"
    if first in ASCII_START:
        return "ascii"
    raise FormatError("unknown-format", 0,
                      f"first byte 0x{first:02x} starts neither a binary nor an ascii .t7 stream")


def sniff_byte_order(buf: memoryview) -> str | None:
    """The byte order of a binary stream, from its first non-zero type code (spec/t7.md#t7-detect).

    The stream may start with nil objects (type code 0, the same in both orders); the first 4-byte
    word that is not zero is a type code 1..8 in exactly one order.  ``None`` when no such word
    exists (the stream is nils only, or ends first): then the order does not change the reading.
    """
    found = _NON_ZERO.search(buf)  # one linear scan in C: a file of zeros is 4 M nil objects per 16 MB
    if found is None:
        return None
    pos = found.start() - found.start() % 4
    if pos + 4 > len(buf):
        return None
    word = bytes(buf[pos:pos + 4])
    if 0 < word[0] <= MAX_TYPE_CODE and word[1:] == b"\0\0\0":
        return "little"
    if 0 < word[3] <= MAX_TYPE_CODE and word[:3] == b"\0\0\0":
        return "big"
    raise FormatError("bad-type-code", pos, f"{word.hex()} is no type code in either byte order")
