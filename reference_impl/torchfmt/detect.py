"""Name the variant from the first and last bytes (spec/canonical.md#canonical-detect).

Detection happens once; nothing later re-guesses the format or switches to a more powerful decoder
because of what it finds inside the file.
"""

from __future__ import annotations

import json

from .errors import FormatError
from .t7.detection import ASCII_START, MAX_TYPE_CODE

ZIP_LOCAL_MAGIC = b"PK\x03\x04"

# First bytes (after leading ASCII whitespace, compared ignoring ASCII case) of things that are not
# checkpoints at all, with what they are: one table, data (spec/canonical.md#canonical-detect).
_NOT_A_CHECKPOINT: tuple[tuple[bytes, str], ...] = (
    (b"version https://git-lfs", "a git LFS pointer, not the file it points to"),
    (b"\x1f\x8b", "a gzip stream"),
    (b"<!doctype", "an HTML page"),
    (b"<html", "an HTML page"),
    (b"<?xml", "an XML document (an S3 or HTTP error body?)"),
    (b"<error>", "an XML error body (S3?)"),
    (b"entry not found", "an 'Entry not found' error text, not a checkpoint"),
    (b"\x93numpy", "a numpy .npy file"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"),
    (b"\xfd7zXZ\x00", "an xz stream"),
    (b"BZh", "a bzip2 stream"),
    (b"\x28\xb5\x2f\xfd", "a zstd stream"),
)
_WHITESPACE = b" \t\r\n\x0b\x0c"


def not_a_checkpoint(head: bytes | memoryview) -> str | None:
    """What ``head`` plainly is when it is no checkpoint: a signature of the table, a JSON body, or a
    safetensors file (:func:`safetensors_header`; ``head`` holds the whole file for it)."""
    text = bytes(head[:512]).lstrip(_WHITESPACE).lower()
    for magic, what in _NOT_A_CHECKPOINT:
        if text.startswith(magic.lower()):
            return what
    if text[:1] in (b"{", b"[") and text[1:2].lstrip(_WHITESPACE)[:1] in (b'"', b"{", b"[", b"]", b"}"):
        return "a JSON document (an HTTP error body?)"
    if safetensors_header(head):
        return "a safetensors file (read it with the safetensors library)"
    return None


#: The largest safetensors header the safetensors library reads (its ``MAX_HEADER_SIZE``).
SAFETENSORS_MAX_HEADER = 100_000_000


def safetensors_header(buf: bytes | memoryview) -> bool:
    """Whether ``buf`` starts as a safetensors file: an 8-byte little-endian header length n, then ``{"``,
    and the n bytes at 8 parse as one JSON object (spec/canonical.md#canonical-detect).  A ``.t7`` stream
    can start with the same ten bytes (a number whose double begins ``00000000 7b22``), never with a
    header that parses: ``buf`` must hold the header (the whole file, or at least its first 8 + n bytes)."""
    if bytes(buf[8:10]) != b'{"':
        return False
    n = int.from_bytes(bytes(buf[:8]), "little")
    if not 0 < n <= SAFETENSORS_MAX_HEADER or 8 + n > len(buf):
        return False
    try:
        header = json.loads(bytes(buf[8:8 + n]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(header, dict)


#: The numeric fields of a tar header Python's tarfile converts while reading it (mode, uid, gid, size,
#: mtime, devmajor, devminor): (start, end).
TAR_NUMBER_FIELDS = ((100, 108), (108, 116), (116, 124), (124, 136), (136, 148), (329, 337), (337, 345))


def tar_number(field: bytes) -> int | None:
    """A tar number field as tarfile's ``nti`` reads it: base-256 when the first byte is 0x80 or 0xff,
    else ASCII text up to the first NUL, stripped, in octal (empty is 0); None where tarfile refuses.
    A field is at most 12 bytes, so ``int()`` stays cheap."""
    if field[:1] in (b"\x80", b"\xff"):
        n = int.from_bytes(field[1:], "big")
        return n - 256 ** (len(field) - 1) if field[0] == 0xFF else n
    text = field.split(b"\0", 1)[0]
    try:
        return int(text.decode("ascii").strip() or "0", 8)
    except (UnicodeDecodeError, ValueError):
        return None


def _tar_header(head: bytes) -> bool:
    """Whether the first 512 bytes are a header Python's ``tarfile`` accepts, with the ``ustar`` magic or
    without it (an old-style V7 header): its number fields read and its checksum matches, as torch's
    legacy loader tries tarfile first (spec/pt-legacy.md#pt-legacy-magic, canonical.md#canonical-detect)."""
    if len(head) < 512 or head.count(0) == 512:
        return False
    want = tar_number(head[148:156])
    if want is None or any(tar_number(head[a:b]) is None for a, b in TAR_NUMBER_FIELDS):
        return False
    block = head[:148] + b" " * 8 + head[156:512]
    return want in (sum(block), sum(b - 256 if b > 127 else b for b in block))


def detect(buf: bytes | memoryview) -> str:
    """Return ``zip``, ``pt-legacy``, ``pt-tar`` or ``t7`` for the bytes ``buf``.

    ``zip`` is refined into ``pt-zip`` or ``pt-torchscript`` by its records (spec/pt-zip.md); ``t7``
    into binary/ascii, long size and byte order by :mod:`torchfmt.t7.encodings`.
    """
    head = bytes(buf[:512])
    if not head:
        raise FormatError("truncated", 0, "empty file")
    what = not_a_checkpoint(buf)
    if what is not None:
        raise FormatError("unknown-format", 0, f"this is {what}")
    if head.startswith(ZIP_LOCAL_MAGIC):
        return "zip"
    # Tar only when the first header is one Python's tarfile takes (its checksum matches, its numbers
    # read), ustar magic or not, as torch's legacy loader tries tarfile first; `ustar` at 257 alone is
    # not enough: a .t7 string can hold it, even a whole header; a .t7 stream starts with a type code
    # (binary 0x00..0x08; ascii a digit, sign or whitespace), which no member name torch's tar starts with
    # (spec/canonical.md#canonical-detect).
    if head[0] > MAX_TYPE_CODE and head[0] not in ASCII_START and _tar_header(head):
        return "pt-tar"
    # A legacy stream starts with the magic number pickle: PROTO n, or LONG (protocol 0/1 text 'L'),
    # or LONG1 (0x8a) when written without a PROTO opcode.
    if head[0] == 0x80 or head[:1] in (b"L", b"\x8a"):
        return "pt-legacy"
    return "t7"
