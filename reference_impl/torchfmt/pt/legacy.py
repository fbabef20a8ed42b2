"""The legacy ``.pt`` stream of ``torch.save`` before 1.6 (spec/pt-legacy.md).

Five pickles follow one another: the magic number, the protocol version, ``sys_info``, the object (its
storages named by persistent ids ``('storage', type, key, location, numel, view)``, pickled modules by
``('module', class, source_file, source)``), and the list of storage keys; then each listed storage as an
8-byte element count and its little-endian elements, in list order.  Storages are zero-copy views.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import FormatError, Unsupported, quote
from ..model import Document, Global, Storage
from ..pickle.globals import storage_dtype
from ..pickle.machine import Machine
from .archive import decode_location

MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
PROTOCOL_VERSION = 1001
#: The C type sizes torch's writers record (``struct.calcsize`` of ``=h``, ``=i``, ``=l``); element
#: widths come from the dtype table, so a file claiming other sizes is declined.
TYPE_SIZES = {"short": (2,), "int": (4,), "long": (4, 8)}
#: What a storage or view key may be (torch writes ``str(storage._cdata)``).
KEY_TYPES = (str, bytes, int)


def read_legacy(buf: Any, *, inert: bool = False, stream: bool = False) -> Document:
    """Read a legacy ``.pt`` stream held in ``buf``; ``stream``: the first of several objects saved into
    one stream (spec/pt-legacy.md#pt-legacy-stream), bytes after it allowed and its end offset
    in ``extra["end"]``."""
    buf = buf if isinstance(buf, memoryview) else memoryview(buf)
    header = Machine(buf, inert=inert)
    magic, pos = header.load(0)
    if type(magic) is not int or magic != MAGIC_NUMBER:
        raise FormatError("bad-magic", 0, f"magic number {quote(magic)} (expected 0x{MAGIC_NUMBER:x})")
    at = pos
    version, pos = header.load(pos)
    if type(version) is not int or version != PROTOCOL_VERSION:
        raise FormatError("bad-magic", at, f"protocol version {quote(version)} (expected {PROTOCOL_VERSION})")
    at = pos
    sys_info, pos = header.load(pos)
    little_endian = check_sys_info(sys_info, at)
    storages = LegacyStorages(inert=inert)
    obj, pos = Machine(buf, persistent_load=storages, inert=inert).load(pos)
    at = pos
    keys, pos = header.load(pos)
    end = storages.read_data(buf, keys, pos, at, little_endian)
    if end != len(buf) and not stream:
        raise FormatError("bad-container", end, f"{len(buf) - end} bytes after the last storage")
    return Document("pt-legacy", [obj], extra={"sys_info": sys_info, **({"end": end} if stream else {})})


def check_sys_info(sys_info: Any, at: int, protocol_version: int = PROTOCOL_VERSION) -> bool:
    """Validate ``sys_info`` (spec/pt-legacy.md#pt-legacy-sys-info); return its ``little_endian``."""
    if not (isinstance(sys_info, dict) and sys_info.get("protocol_version") == protocol_version
            and type(sys_info.get("little_endian")) is bool and isinstance(sys_info.get("type_sizes"), dict)):
        raise FormatError("bad-value", at, f"sys_info must hold protocol_version {protocol_version}, "
                                           "little_endian and type_sizes")
    sizes = sys_info["type_sizes"]
    for name, allowed in TYPE_SIZES.items():
        if type(sizes.get(name)) is not int:  # missing or not a size: malformed, as no type_sizes is
            raise FormatError("bad-value", at, f"sys_info must hold type_sizes {name} as an int, not "
                                               f"{quote(sizes.get(name))}")
        if sizes[name] not in allowed:
            raise Unsupported(f"legacy type_sizes {name}={quote(sizes.get(name))}")
    return sys_info["little_endian"]


@dataclass
class _View:
    root_key: Any
    offset: int
    storage: Storage


@dataclass
class LegacyStorages:
    """``persistent_load`` of the legacy object pickle (spec/pt-legacy.md#pt-legacy-persistent-id)."""

    roots: dict[Any, tuple[tuple[Any, ...], Storage]] = field(default_factory=dict)
    views: dict[Any, _View] = field(default_factory=dict)
    inert: bool = False  # a pickled module's id gives its class (strict: refused, whatever the class)

    def __call__(self, pid: Any, offset: int) -> Any:
        if not isinstance(pid, tuple) or not pid:
            raise FormatError("bad-reference", offset, "a persistent id must be a non-empty tuple")
        kind = pid[0].decode("ascii", "replace") if isinstance(pid[0], bytes) else pid[0]
        if kind == "module" and len(pid) == 4 and isinstance(pid[1], Global):
            if not self.inert:  # torch's weights_only loader loads no persistent id but a storage's
                raise FormatError("unsafe-global", offset, f"a pickled module's persistent id (class "
                                                           f"{pid[1].module}.{pid[1].name})")
            return pid[1]  # a pickled module's class; its saved source is not compared
        if kind != "storage" or len(pid) != 6:
            raise FormatError("bad-reference", offset, "a persistent id must be ('storage', type, key, "
                                                       "location, numel, view) or ('module', class, ...)")
        _, stype, key, location, numel, view = pid
        dtype = storage_dtype(stype)
        if dtype is None:
            raise FormatError("bad-reference", offset,
                              f"persistent id names {quote(stype)}, not a storage type")
        if type(numel) is not int or not isinstance(key, KEY_TYPES):
            raise FormatError("bad-reference", offset, "persistent id key must be a str, numel an int")
        if numel < 0:
            raise FormatError("bad-length", offset, f"storage {key!r} has {numel} elements")
        root = self._root(key, (dtype, decode_location(location, offset), numel), offset)
        return root if view is None else self._view(key, root, view, offset)

    def _root(self, key: Any, signature: tuple[Any, ...], offset: int) -> Storage:
        if key in self.views:
            raise FormatError("bad-reference", offset, f"key {key!r} names both a storage and a view")
        if key in self.roots:
            first, storage = self.roots[key]
            if not storage.numel and signature[2] == 0:
                # torch keeps no empty storage: a later id of an empty key is a fresh empty storage of its
                # own type on the first's device (spec/pt-legacy.md#pt-legacy-empty-storage)
                return Storage(signature[0], 0, device=storage.device, key=storage.key)
            if first != signature:
                raise FormatError("bad-reference", offset, f"storage {key!r} named twice with different "
                                                           "type, location or size")
            return storage
        dtype, location, numel = signature
        storage = Storage(dtype, numel, device=location, key=str(key))
        self.roots[key] = (signature, storage)
        return storage

    def _view(self, root_key: Any, root: Storage, view: Any, offset: int) -> Storage:
        if not (isinstance(view, tuple) and len(view) == 3 and isinstance(view[0], KEY_TYPES)
                and type(view[1]) is int and type(view[2]) is int):
            raise FormatError("bad-reference", offset, "view metadata must be (view_key, offset, size)")
        view_key, start, size = view
        if view_key in self.roots:
            raise FormatError("bad-reference", offset, f"key {view_key!r} names both a storage and a view")
        if view_key in self.views:
            known = self.views[view_key]
            if (known.root_key, known.offset, known.storage.numel) != (root_key, start, size):
                raise FormatError("bad-reference", offset, f"view {view_key!r} named twice differently")
            return known.storage
        if start < 0 or size < 0 or start + size > root.numel:
            raise FormatError("out-of-bounds", offset, f"view [{start}, {start + size}) of a storage of "
                                                       f"{root.numel} elements")
        storage = Storage(root.dtype, size, device=root.device, key=str(view_key))
        self.views[view_key] = _View(root_key, start, storage)
        return storage

    def read_data(self, buf: memoryview, keys: Any, pos: int, at: int, little_endian: bool) -> int:
        """Point every storage at its data (spec/pt-legacy.md#pt-legacy-storages); the end offset."""
        if not isinstance(keys, list):
            raise FormatError("bad-value", at, "the storage key list is not a list")
        listed: set[Any] = set()
        for key in keys:
            if not isinstance(key, KEY_TYPES) or key not in self.roots or key in listed:
                raise FormatError("bad-reference", at, f"storage key {key!r} is unknown or listed twice")
            listed.add(key)
        missing = [k for k in self.roots if k not in listed]
        if missing:
            raise FormatError("bad-reference", at, f"storage {quote(missing[0])} is not in the key list")
        for key in keys:
            (dtype, _, numel), storage = self.roots[key]  # numel as named (a v3 tensor may retype bytes)
            if pos + 8 > len(buf):
                raise FormatError("truncated", pos, f"storage {key!r} count reaches past the end",
                                  needed_end=pos + 8)
            raw = bytes(buf[pos:pos + 8])
            counts = {int.from_bytes(raw, "little")}
            if not little_endian:  # writers before 1.0 wrote the count in native (big-endian) order
                counts.add(int.from_bytes(raw, "big"))
            if numel not in counts:
                raise FormatError("bad-value", pos, f"storage {key!r} holds {min(counts)} elements, its "
                                                     f"persistent id says {numel}")
            pos += 8
            nbytes = numel * dtype.itemsize
            if pos + nbytes > len(buf):
                raise FormatError("truncated", pos, f"storage {key!r} reaches past the end of the file",
                                  needed_end=pos + nbytes)
            storage.buffer = buf[pos:pos + nbytes]
            pos += nbytes
        for view in self.views.values():
            root = self.roots[view.root_key][1]
            width = root.dtype.itemsize
            view.storage.buffer = root.buffer[view.offset * width:(view.offset + view.storage.numel) * width]
        return pos
