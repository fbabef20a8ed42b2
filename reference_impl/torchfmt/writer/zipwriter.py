"""The zip container as torch's ``PyTorchStreamWriter`` (miniz) writes it (spec/pt-zip.md#pt-zip-write).

Every record is stored (method 0) under ``<root>/<name>``.  Its local header has version 0, flags
``0x0808`` (a data descriptor follows the data; UTF-8 names), time and date 0, CRC and sizes 0, and
an extra field ``FB`` of ``Z`` bytes that pads the data to a multiple of the alignment; a data
descriptor (``PK\\x07\\x08``, CRC-32, sizes) follows the data (an empty record has flags
``0x0800`` and no descriptor).  The central directory repeats each
entry with its CRC and sizes and no extra field; a zip64 end record and its locator always precede the
end record.  Records of 4 GiB or more, or beyond 4 GiB into the file, carry zip64 extra fields as miniz
writes them.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import BinaryIO

ALIGNMENT = 64
_U32 = 0xFFFFFFFF
_FLAGS = 0x0808
_EMPTY_FLAGS = 0x0800
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")
_DESCRIPTOR = struct.Struct("<4sIII")
_DESCRIPTOR64 = struct.Struct("<4sIQQ")
_EOCD64 = struct.Struct("<4sQHHIIQQQQ")
_LOCATOR = struct.Struct("<4sIQI")
_EOCD = struct.Struct("<4sHHHHIIH")
#: Bytes written at a time when a record streams from its source.
CHUNK = 1 << 24


@dataclass
class _Entry:
    name: bytes
    offset: int
    crc: int
    size: int
    flags: int


class ZipWriter:
    """Writes stored records to ``f`` one after another; :meth:`finish` writes the directory."""

    def __init__(self, f: BinaryIO, alignment: int = ALIGNMENT) -> None:
        self.f = f
        self.alignment = alignment
        self.pos = 0
        self.entries: list[_Entry] = []

    def _write(self, data: bytes | memoryview) -> None:
        self.f.write(data)
        self.pos += len(data)

    def padding(self, name_size: int, size: int) -> bytes:
        """The ``FB`` extra field that aligns the data of a record of ``size`` bytes at :attr:`pos`
        (torch's ``getPadding``)."""
        start = self.pos + _LOCAL.size + name_size + 4
        if size >= _U32 or self.pos >= _U32:
            start += 4 + (16 if size >= _U32 else 0) + (8 if self.pos >= _U32 else 0)
        pad = -start % self.alignment
        return b"FB" + struct.pack("<H", pad) + b"Z" * pad

    def record(self, name: str, chunks: Iterable[bytes | memoryview], size: int) -> None:
        """Write one record of ``size`` bytes given as ``chunks``."""
        raw = name.encode("utf-8")
        offset = self.pos
        zip64 = b""
        if size >= _U32 or offset >= _U32:
            # miniz's local zip64 field: the size, a compressed size of 0 (the descriptor has it), the offset
            body = (struct.pack("<QQ", size, 0) if size >= _U32 else b"") + \
                (struct.pack("<Q", offset) if offset >= _U32 else b"")
            zip64 = struct.pack("<HH", 1, len(body)) + body
        extra = zip64 + self.padding(len(raw), size)
        flags = _FLAGS if size else _EMPTY_FLAGS
        self._write(_LOCAL.pack(b"PK\x03\x04", 0, flags, 0, 0, 0, 0, 0, 0, len(raw),
                                len(extra)) + raw + extra)
        crc = 0
        written = 0
        for chunk in chunks:
            crc = zlib.crc32(chunk, crc)
            written += len(chunk)
            self._write(chunk)
        if written != size:
            raise ValueError(f"record {name!r}: {written} bytes written, {size} announced")
        if not size:
            pass  # miniz writes no data descriptor after an empty record
        elif size >= _U32 or offset >= _U32:
            self._write(_DESCRIPTOR64.pack(b"PK\x07\x08", crc, size, size))
        else:
            self._write(_DESCRIPTOR.pack(b"PK\x07\x08", crc, size, size))
        self.entries.append(_Entry(raw, offset, crc, size, flags))

    def bytes_record(self, name: str, data: bytes) -> None:
        self.record(name, [data], len(data))

    def finish(self) -> None:
        """The central directory, the zip64 end record, its locator and the end record."""
        start = self.pos
        for e in self.entries:
            big = e.size >= _U32
            far = e.offset >= _U32
            body = (struct.pack("<QQ", e.size, e.size) if big else b"") + \
                (struct.pack("<Q", e.offset) if far else b"")
            extra = struct.pack("<HH", 1, len(body)) + body if body else b""
            size32 = _U32 if big else e.size
            self._write(_CENTRAL.pack(b"PK\x01\x02", 0, 0, e.flags, 0, 0, 0, e.crc, size32,
                                      size32, len(e.name), len(extra), 0, 0, 0, 0,
                                      _U32 if far else e.offset) + e.name + extra)
        cd_size = self.pos - start
        eocd64 = self.pos
        n = len(self.entries)
        self._write(_EOCD64.pack(b"PK\x06\x06", _EOCD64.size - 12, 0x031E, 0x2D, 0, 0, n, n, cd_size, start))
        self._write(_LOCATOR.pack(b"PK\x06\x07", 0, eocd64, 1))
        self._write(_EOCD.pack(b"PK\x05\x06", 0, 0, min(n, 0xFFFF), min(n, 0xFFFF), min(cd_size, _U32),
                               min(start, _U32), 0))

    def crcs(self) -> list[int]:
        """The CRC-32 of each non-empty record, in write order (torch combines no empty record's)."""
        return [e.crc for e in self.entries if e.size]
