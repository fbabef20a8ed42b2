"""A validated zip ``.pt`` archive: its metadata records and its storage records (spec/pt-zip.md).

``byteorder`` (absent: little) says how storage elements are stored, ``version`` which format revision
wrote the archive; each storage a pickle names by persistent id ``('storage', type, key, location,
numel)`` is the record ``<root>/<prefix><key>``, read as a zero-copy view of the file.  Shared by plain
archives (:mod:`torchfmt.pt.zip`) and TorchScript ones (:mod:`torchfmt.pt.torchscript`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import FormatError, quote
from ..model import Storage
from ..pickle.globals import storage_dtype
from ..pickle.machine import DEFAULT_SCOPES, Machine
from .ziparchive import Member, Records, Source, fold

if TYPE_CHECKING:
    from ..dtypes import DType

#: ``version`` values torch 2.13 reads (caffe2/serialize/versions.h: kMin/kMaxSupportedFileFormatVersion).
MIN_VERSION, MAX_VERSION = 1, 10
BYTE_ORDERS = ("little", "big")
_DECIMAL = re.compile(rb"[0-9]{1,20}\n?")


@dataclass
class Archive:
    """A validated ``.pt`` zip archive and its metadata records (spec/pt-zip.md#pt-zip-records)."""

    buf: Source
    root: str
    members: Records
    version: int
    byte_order: str
    format_version: int | None
    storage_alignment: int | None

    @classmethod
    def open(cls, buf: Source, root: str, members: Records) -> Archive:
        def record(name: str) -> bytes | None:
            m = members.get(name)
            return None if m is None else bytes(m.data(buf))

        version_name = ".data/version" if ".data/version" in members else "version"
        raw = record(version_name)
        if raw is None:
            raise FormatError("bad-container", None, "the archive has no version record")
        version = _decimal(raw, version_name, members)
        if not MIN_VERSION <= version <= MAX_VERSION:
            raise FormatError("bad-magic", members[version_name].offset,
                              f"format version {version} (readers know {MIN_VERSION}-{MAX_VERSION})")
        order = record("byteorder")
        if order is not None and order.decode("latin-1") not in BYTE_ORDERS:
            raise FormatError("bad-value", members["byteorder"].offset, f"byteorder record {order[:20]!r}")
        fmt, align = record(".format_version"), record(".storage_alignment")
        alignment = None if align is None else _decimal(align, ".storage_alignment", members)
        if alignment == 0:
            raise FormatError("bad-value", members[".storage_alignment"].offset, "storage alignment 0")
        return cls(buf, root, members, version, "little" if order is None else order.decode(),
                   None if fmt is None else _decimal(fmt, ".format_version", members), alignment)

    def unpickle(self, name: str, prefix: str, *, inert: bool, scopes: frozenset[str] = DEFAULT_SCOPES,
                 opaque_modules: tuple[str, ...] = ()) -> Any:
        """Run the pickle record ``name``; its storages are the records ``prefix + key``."""
        m = self.members.get(name)
        if m is None:
            raise FormatError("bad-container", None, f"the archive has no {name} record")
        pkl = m.data(self.buf)  # declines a compressed pickle
        machine = Machine(pkl, persistent_load=StorageRecords(self, prefix), inert=inert,
                          scopes=scopes, opaque_modules=opaque_modules, origin=m.offset)
        return machine.load_exact(0, m.size)

    def info(self) -> dict[str, Any]:
        """What the archive says about itself (kept in :attr:`Document.extra`)."""
        return {"root": self.root, "version": self.version, "byteorder": self.byte_order,
                "byteorder_record": "byteorder" in self.members,
                "format_version": self.format_version, "storage_alignment": self.storage_alignment}


def _decimal(raw: bytes, name: str, members: dict[str, Member]) -> int:
    if not _DECIMAL.fullmatch(raw):
        raise FormatError("bad-value", members[name].offset, f"{name} record {raw[:20]!r} is not a decimal")
    return int(raw)


class StorageRecords:
    """``persistent_load`` of a zip archive (spec/pt-zip.md#pt-zip-storage-records): one
    :class:`~torchfmt.model.Storage` per key, a zero-copy view of its record."""

    def __init__(self, archive: Archive, prefix: str) -> None:
        self.archive = archive
        self.prefix = prefix
        self.loaded: dict[tuple[type, Any], tuple[tuple[Any, ...], Storage]] = {}
        self._members_get = functools.partial(dict.get, archive.members)  # by folded name

    def __call__(self, pid: Any, offset: int) -> Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")):
            raise FormatError("bad-reference", offset,
                              "a persistent id must be ('storage', type, key, location, numel)")
        _, stype, key, location, numel = pid
        dtype = storage_dtype(stype)
        if dtype is None:
            raise FormatError("bad-reference", offset,
                              f"persistent id names {quote(stype)}, not a storage type")
        if type(key) not in (str, int) or type(numel) is not int:
            raise FormatError("bad-reference", offset, "persistent id key must be str, numel an int")
        location = decode_location(location, offset)
        return self.named(key, str(key), dtype, location, numel, offset)

    def head(self, stype: Any, location: Any) -> tuple[DType, str]:
        """The dtype and device string of a persistent id's storage type and location, which
        :meth:`__call__` has accepted once (the tensor runs of :mod:`torchfmt.fast.pickle_run`)."""
        dtype = storage_dtype(stype)
        assert dtype is not None
        return dtype, decode_location(location, None)

    def named(self, raw_key: str | int, key: str, dtype: DType, location: str, numel: int,
              offset: int) -> Storage:
        """The storage of a persistent id whose type, key and location :meth:`__call__` has checked."""
        signature = (dtype, location, numel)
        # torch's cache is keyed by the raw key (0 and "0" are two storages of one record) and keeps no
        # empty storage (each reference to one is a storage of its own): spec/tensors.md#tensors-storage
        loaded = self.loaded.get((type(raw_key), raw_key))
        if loaded is not None:
            first, storage = loaded
            if first != signature:
                raise FormatError("bad-reference", offset, f"storage {key!r} named twice with different "
                                                           f"type, location or size")
            return storage
        if numel < 0:
            raise FormatError("bad-length", offset, f"storage {key!r} has {numel} elements")
        name = self.prefix + key
        record = self._members_get(name.lower() if name.isascii() else fold(name))  # Records.get, inline
        if record is None:
            raise FormatError("bad-reference", offset, f"no record {self.prefix + key!r} for storage {key!r}")
        if record.size != numel * dtype.itemsize:
            raise FormatError("bad-value", offset,
                              f"record {self.prefix + key!r} holds {record.size} bytes, "
                              f"not {numel} x {dtype.itemsize}")
        # Storage(dtype, numel, device=location, buffer=..., byte_order=..., key=key), as the class call
        # makes it (new, then __init__ with every field in order): faster than a call with keywords
        archive = self.archive
        buf = archive.buf
        # record.record(buf) without its call: a compressed record is refused there
        buffer = buf.record(record.offset, record.size) if not record.method else record.record(buf)
        storage = _new(Storage)
        _storage_init(storage, dtype, numel, location, buffer, archive.byte_order, None, key, False, False)
        if numel:
            self.loaded[(type(raw_key), raw_key)] = (signature, storage)
        return storage


_new, _storage_init = object.__new__, Storage.__init__


def decode_location(location: Any, offset: int) -> str:
    """A storage location string (``cpu``, ``cuda:0``; bytes in Python 2 pickles are ASCII)."""
    if isinstance(location, bytes):
        try:
            location = location.decode("ascii")
        except UnicodeDecodeError:
            location = None
    if not isinstance(location, str) or not location:
        raise FormatError("bad-value", offset, f"storage location {quote(location)} is not a device string")
    return location
