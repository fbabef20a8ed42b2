"""Name the variant from the first and last bytes (spec/canonical.md#canonical-detect).

Detection happens once; nothing later re-guesses the format or switches to a more powerful decoder
because of what it finds inside the file.
"""

from __future__ import annotations

from .errors import FormatError

ZIP_LOCAL_MAGIC = b"PK\x03\x04"
TAR_MAGIC_OFFSET = 257

# First bytes of things that are not checkpoints at all, with what they are.
_NOT_A_CHECKPOINT: tuple[tuple[bytes, str], ...] = (
    (b"version https://git-lfs", "a git LFS pointer, not the file it points to"),
    (b"\x1f\x8b", "a gzip stream"),
    (b"<!DOCTYPE", "an HTML page"),
    (b"<html", "an HTML page"),
    (b"\x93NUMPY", "a numpy .npy file"),
)


def detect(buf: bytes | memoryview) -> str:
    """Return ``zip``, ``pt-legacy``, ``pt-tar`` or ``t7`` for the bytes ``buf``.

    ``zip`` is refined into ``pt-zip`` or ``pt-torchscript`` by its records (spec/pt-zip.md); ``t7``
    into binary/ascii, long size and byte order by :mod:`torchfmt.t7.encodings`.
    """
    head = bytes(buf[:512])
    if not head:
        raise FormatError("truncated", 0, "empty file")
    for magic, what in _NOT_A_CHECKPOINT:
        if head.startswith(magic):
            raise FormatError("unknown-format", 0, f"this is {what}")
    if head.startswith(ZIP_LOCAL_MAGIC):
        return "zip"
    if len(head) >= TAR_MAGIC_OFFSET + 5 and head[TAR_MAGIC_OFFSET:TAR_MAGIC_OFFSET + 5] == b"ustar":
        return "pt-tar"
    # A legacy stream starts with the magic number pickle: PROTO n, or LONG (protocol 0/1 text 'L'),
    # or LONG1 (0x8a) when written without a PROTO opcode.
    if head[0] == 0x80 or head[:1] in (b"L", b"\x8a"):
        return "pt-legacy"
    return "t7"
