"""The zip ``.pt`` archive as torch 2.13's ``torch.save`` writes it (spec/pt-zip.md#pt-zip-write).

Records, in torch's order: ``data.pkl`` (protocol 2), ``.format_version`` (``1``),
``.storage_alignment`` (``64``), ``byteorder`` (``little``), ``data/<key>`` for each storage in the
order the pickle first names it (keys ``0``, ``1``, ...), ``version`` (``3\\n``) and
``.data/serialization_id``.  The root folder is the destination's file name without its extension.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from typing import Any, BinaryIO

from ..model import Storage
from .pickler import Pickler
from .reduce import StorageKeys, global_reduce, reduce, storage_bytes, storage_type
from .zipwriter import ALIGNMENT, CHUNK, ZipWriter

FORMAT_VERSION = b"1"
VERSION = b"3\n"
BYTE_ORDER = b"little"
_M64 = (1 << 64) - 1


def root_name(path: str | os.PathLike[str]) -> str:
    """torch's archive name: the file name without its last extension (``archive`` when that is empty)."""
    stem = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return stem or "archive"


def chunks(data: memoryview) -> Iterator[memoryview]:
    for start in range(0, len(data), CHUNK):
        yield data[start:start + CHUNK]


def hash_combine(seed: int, value: int) -> int:
    """``c10::hash_combine`` on 64-bit ``size_t``."""
    return (seed ^ ((value + 0x9E3779B9 + (seed << 6) + (seed >> 2)) & _M64)) & _M64


def serialization_id(names: list[str], crcs: list[int]) -> bytes:
    """40 decimal digits: 20 from the record names, then 20 from the records' CRC-32s combined in write
    order as torch combines them.  torch's first 20 digits hash the names with its C++ library's string
    hash; no loader reads the id (spec/pt-zip.md#pt-zip-records)."""
    name_part = 0
    for name in sorted(names):
        name_part = hash_combine(name_part, zlib.crc32(name.encode("utf-8")))
    crc_part = 0
    for crc in crcs:
        crc_part = hash_combine(crc_part, crc)
    return f"{name_part:020d}{crc_part:020d}".encode("ascii")


def write_zip(obj: Any, f: BinaryIO, root: str) -> None:
    """Write ``obj`` as a zip ``.pt`` archive to ``f``."""
    keys = StorageKeys()

    def persistent_id(o: Any) -> tuple[Any, ...] | None:
        if not isinstance(o, Storage):
            return None
        stype, numel = storage_type(o)
        return ("storage", stype, keys.key(o), o.device, numel)

    pickle: list[bytes] = []
    Pickler(pickle.append, persistent_id, reduce, global_reduce).dump(obj)
    zw = ZipWriter(f, ALIGNMENT)
    names: list[str] = []

    def small(name: str, data: bytes) -> None:
        zw.bytes_record(f"{root}/{name}", data)
        names.append(name)

    small("data.pkl", b"".join(pickle))
    small(".format_version", FORMAT_VERSION)
    small(".storage_alignment", str(ALIGNMENT).encode("ascii"))
    small("byteorder", BYTE_ORDER)
    for key, storage in keys.storages():
        data = storage_bytes(storage)
        zw.record(f"{root}/data/{key}", chunks(data), len(data))
        names.append(f"data/{key}")
        storage.release()
    small("version", VERSION)
    zw.bytes_record(f"{root}/.data/serialization_id", serialization_id(names, zw.crcs()))
    zw.finish()
