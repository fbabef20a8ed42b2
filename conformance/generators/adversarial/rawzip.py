"""A zip writer with every header field in reach (spec/pt-zip.md#pt-zip-container).

:func:`build` lays members out as torch's writer does (stored, each data start padded to a 64-byte
boundary with an ``FB`` extra field, central directory, end record), and lets a case override any field
of either header: names that disagree, sizes that lie, flags, methods, offsets.  :func:`members` reads
the members of a zip that torch wrote (through the central directory, with :mod:`zipfile`).
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from dataclasses import dataclass, field

ALIGN = 64
FB_EXTRA = 0x4246  # torch's padding extra field ("FB")


@dataclass
class Member:
    """One member as written.  ``data`` is what the member's data area holds (already compressed when
    ``method`` is not 0); ``usize``/``crc`` default to ``data``'s length and CRC-32."""

    name: str
    data: bytes
    method: int = 0
    flags: int = 0
    usize: int | None = None
    crc: int | None = None
    local_name: str | None = None  # the local header's name, when it must differ from the central one
    local: dict[str, int] = field(default_factory=dict)  # local header overrides: csize, usize, crc
    central: dict[str, int] = field(default_factory=dict)  # csize, usize, crc, offset, disk, external
    central_extra: bytes = b""  # the central entry's extra field
    local_extra: bytes = b""  # extra fields of the local header, before the alignment padding
    header_offset: int = 0  # filled in by build()


def _local_header(m: Member, pos: int, align: int) -> bytes:
    name = (m.local_name if m.local_name is not None else m.name).encode("utf-8")
    crc = m.local.get("crc", m.crc if m.crc is not None else zlib.crc32(m.data))
    csize = m.local.get("csize", len(m.data))
    usize = m.local.get("usize", m.usize if m.usize is not None else len(m.data))
    extra = m.local_extra
    if align:
        start = pos + 30 + len(name) + len(extra) + 4
        pad = (-start) % align
        extra += struct.pack("<HH", FB_EXTRA, pad) + b"Z" * pad
    return (
        struct.pack(
            "<4s5H3L2H",
            b"PK\x03\x04",
            20,
            m.flags,
            m.method,
            0,
            0x21,
            crc,
            csize,
            usize,
            len(name),
            len(extra),
        )
        + name
        + extra
    )


def _central_header(m: Member) -> bytes:
    name = m.name.encode("utf-8")
    crc = m.central.get("crc", m.crc if m.crc is not None else zlib.crc32(m.data))
    csize = m.central.get("csize", len(m.data))
    usize = m.central.get("usize", m.usize if m.usize is not None else len(m.data))
    offset = m.central.get("offset", m.header_offset)
    return (
        struct.pack(
            "<4s6H3L5H2L",
            b"PK\x01\x02",
            0x031E,
            20,
            m.flags,
            m.method,
            0,
            0x21,
            crc,
            csize,
            usize,
            len(name),
            len(m.central_extra),
            0,
            m.central.get("disk", 0),
            0,
            m.central.get("external", 0o100644 << 16),
            offset,
        )
        + name
        + m.central_extra
    )


def eocd(count: int, size: int, offset: int, comment: bytes = b"") -> bytes:
    """An end-of-central-directory record and its comment."""
    return struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, size, offset, len(comment)) + comment


def build(
    members: list[Member],
    *,
    align: int = ALIGN,
    comment: bytes = b"",
    between: bytes = b"",
    trailing: bytes = b"",
    eocd: dict[str, int] | None = None,
    prefix: bytes = b"",
    central_extra: list[Member] | None = None,
) -> bytes:
    """The zip file: ``prefix``, members (with ``between`` after each one's data), the central directory
    (plus ``central_extra`` entries, which have no local header of their own), the end record (fields
    overridable through ``eocd``: count, size, offset) and ``trailing`` bytes after it."""
    out = bytearray(prefix)
    for m in members:
        m.header_offset = len(out)
        out += _local_header(m, len(out), align)
        out += m.data + between
    cd_start = len(out)
    for m in members + (central_extra or []):
        out += _central_header(m)
    cd_size = len(out) - cd_start
    e = {
        "count": len(members) + len(central_extra or []),
        "size": cd_size,
        "offset": cd_start,
        **(eocd or {}),
    }
    out += (
        struct.pack(
            "<4s4H2LH", b"PK\x05\x06", 0, 0, e["count"], e["count"], e["size"], e["offset"], len(comment)
        )
        + comment
    )
    return bytes(out + trailing)


def members(data: bytes) -> list[Member]:
    """The members of a zip written by a real writer, in file order, stored bytes as they are."""
    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in sorted(z.infolist(), key=lambda i: i.header_offset):
            out.append(Member(info.filename, z.read(info.filename)))
    return out


def deflate(data: bytes) -> bytes:
    """Raw deflate (method 8) of ``data``."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()
