"""The ``.pt`` variants through their grammars: pytorch_zip.ksy (zip and TorchScript archives),
pytorch_legacy.ksy (the legacy stream), pytorch_tar.ksy (torch 0.1.x), each pickle through
python_pickle.ksy and :mod:`.pickle_vm`.  What the grammars leave to a reader is here: what a persistent
id names, which records must exist and agree, how many storages follow and how wide they are.
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Callable
from typing import Any, NoReturn

import kaitaistruct
import pytorch_legacy
import pytorch_tar
import pytorch_zip
from kaitaistruct import BytesIO, KaitaiStream

from . import rebuild
from .facts import BY_STORAGE_CLASS, DTYPES, DType, limits
from .failure import Decline, Reject, from_kaitai, half_read
from .pickle_vm import Machine, ops_from, pickle_length
from .values import Global, Storage, Tensor

#: ``version`` record values torch 2.13 reads (spec/pt-zip.md#pt-zip-version).
ZIP_VERSIONS = range(1, 11)
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
LEGACY_PROTOCOL = 1001
TAR_PROTOCOL = 1000
TYPE_SIZES = {"short": (2,), "int": (4,), "long": (4, 8)}
_UNTYPED = ("torch.storage.UntypedStorage",)  # the only spelling torch's allowlist has
_DECIMAL = re.compile(rb"[0-9]{1,20}\n?")


def parse(grammar: str, what: str, make: Any) -> Any:
    """Run a generated parser (or read a lazy instance), mapping its failures to codes."""
    try:
        return make()
    except (kaitaistruct.KaitaiStructError, EOFError, ValueError, UnicodeDecodeError, OverflowError) as e:
        if grammar == "pytorch_tar" and type(e) is ValueError:  # a header number that is not octal
            raise Reject("bad-container", f"{what}: {e}") from None
        if grammar == "pytorch_tar" and isinstance(e, UnicodeDecodeError):  # a header field, before its magic
            raise Reject("bad-container", f"{what}: a header field that is not UTF-8") from None
        if grammar == "pytorch_zip" and isinstance(e, UnicodeDecodeError):  # a member name
            raise Reject("bad-container", f"{what}: a name that is not UTF-8") from None
        raise from_kaitai(e, grammar, what) from None


def storage_type(stype: Any) -> tuple[DType, bool]:
    """The dtype a persistent id's storage type names, and whether the storage is typed."""
    if isinstance(stype, Global):
        if stype.qualname in _UNTYPED:
            return DTYPES["uint8"], False
        if stype.module in ("torch", "torch.cuda") and stype.name in BY_STORAGE_CLASS:
            return BY_STORAGE_CLASS[stype.name], True
    raise Reject("bad-reference", f"persistent id names {stype!r}, not a storage type")


def location(loc: Any) -> str:
    if isinstance(loc, bytes):
        loc = loc.decode("ascii", "replace")
    if not isinstance(loc, str) or not loc:
        raise Reject("bad-value", f"storage location {loc!r} is not a device string")
    return loc


_PARSE_ERRORS = (kaitaistruct.KaitaiStructError, EOFError, ValueError, UnicodeDecodeError, OverflowError)


def replay(first: Reject, steps: Callable[[], Any]) -> NoReturn:
    """After a grammar failure ``first``: run ``steps``, which parse the same bytes one opcode at a time
    and give each its meaning at once; a problem they meet before the grammar's is the first in reading
    order and is reported instead (spec/canonical.md#canonical-error-codes)."""
    try:
        steps()
    except _PARSE_ERRORS:
        pass
    raise first


def run_pickle(pickle: Any, what: str, machine: Machine, *, exact: bool, limit: int | None = None) -> Any:
    """The value of a parsed python_pickle; ``exact``: it is a record of its own and must end at STOP
    (and FRAMEs must stay inside it); ``limit``: the bytes left in the file from its start otherwise."""
    value = machine.run(pickle.ops, what, pickle._io.size() if exact else limit)
    if exact and pickle._io.pos() != pickle._io.size():
        raise Reject("bad-pickle", f"{what}: {pickle._io.size() - pickle._io.pos()} bytes after STOP")
    return value


# -- zip (spec/pt-zip.md) ---------------------------------------------------------------------------------

EOCD_SIG = b"PK\x05\x06"
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
LOCATOR_SIG = b"PK\x06\x07"
MAX_COMMENT = 0xFFFF


def _at(f: Any, pos: int, make: Any) -> Any:
    """Parse a pytorch_zip type at ``pos`` of the file's stream."""
    io = KaitaiStream(f)
    io.seek(pos)
    return make(io)


_TORCH_RECORDS = frozenset({"data.pkl", "version", "constants.pkl", "model.json"})


class _Folded(dict[str, Any]):
    """Records by name, looked up as torch (miniz) does: ASCII case ignored
    (spec/pt-zip.md#pt-zip-container)."""

    def __setitem__(self, name: str, value: Any) -> None:
        super().__setitem__(name.translate(_ASCII_LOWER), value)

    def __getitem__(self, name: str) -> Any:
        return super().__getitem__(name.translate(_ASCII_LOWER))

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        return super().get(name.translate(_ASCII_LOWER), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.translate(_ASCII_LOWER))


class ZipArchive:
    """A zip checkpoint's records by name (relative to the root folder).  Every header is read by
    pytorch_zip.ksy's types; this class finds the end record (the grammar takes it at a fixed distance
    from the end, as torch writes it, so a reader that meets other zips searches for it) and checks the
    container's invariants the grammar leaves to a reader (spec/pt-zip.md#pt-zip-container)."""

    def __init__(self, f: Any, mm: Any, size: int) -> None:
        self.mm = mm
        self.size = size
        self.root_struct = z = pytorch_zip.PytorchZip(KaitaiStream(f))
        eocd_at = self._find_eocd()
        eocd = parse("pytorch_zip", "end of central directory",
                     lambda: _at(f, eocd_at, lambda io: pytorch_zip.PytorchZip.EndOfCentralDir(io, z, z)))
        count, cd_len, cd_ofs, ends_at = (eocd.num_entries_total, eocd.len_central_dir, eocd.ofs_central_dir,
                                          eocd_at)
        if eocd.num_entries_on_disk != eocd.num_entries_total:
            raise Reject("bad-container", "the entry counts of this disk and of the archive differ")
        if eocd_at >= 20 and bytes(mm[eocd_at - 20:eocd_at - 16]) == LOCATOR_SIG:
            loc = parse("pytorch_zip", "zip64 locator", lambda: _at(
                f, eocd_at - 20, lambda io: pytorch_zip.PytorchZip.Zip64Locator(io, z, z)))
            z64_at = loc.ofs_zip64_end_of_central_dir
            if z64_at + 56 > eocd_at - 20:
                raise Reject("out-of-bounds", "the zip64 end record does not lie before its locator")
            z64 = parse("pytorch_zip", "zip64 end record", lambda: _at(
                f, z64_at, lambda io: pytorch_zip.PytorchZip.Zip64EndOfCentralDir(io, z, z)))
            for v32, v64, see in ((eocd.num_entries_total, z64.num_entries_total, 0xFFFF),
                                  (eocd.len_central_dir, z64.len_central_dir, 0xFFFFFFFF),
                                  (eocd.ofs_central_dir, z64.ofs_central_dir, 0xFFFFFFFF)):
                if v32 not in (v64, see):
                    raise Reject("bad-container", "the end record and the zip64 end record disagree")
            count, cd_len, cd_ofs, ends_at = (z64.num_entries_total, z64.len_central_dir, z64.ofs_central_dir,
                                              z64_at)
        if cd_ofs + cd_len > ends_at:
            raise Reject("out-of-bounds", "the central directory does not lie before the end records")
        raw = bytes(mm[cd_ofs:cd_ofs + cd_len])
        cd_io = KaitaiStream(BytesIO(raw))
        try:
            cd = pytorch_zip.PytorchZip.CentralDir(count, cd_io, z, z)
        except (EOFError, kaitaistruct.EndOfStreamError):
            raise Reject("bad-container", f"the central directory does not hold {count} entries") from None
        except UnicodeDecodeError:
            raise Reject("bad-container", "a record name that is not UTF-8") from None
        except (kaitaistruct.KaitaiStructError, ValueError) as e:
            raise from_kaitai(e, "pytorch_zip", "central directory") from None
        if cd_io.pos() != cd_len:
            raise Reject("bad-container", f"{cd_len - cd_io.pos()} bytes of the central directory after its "
                                          "entries")
        names = [e.file_name for e in cd.entries]
        last = [n.replace("\\", "/").rsplit("/", 1)[-1].translate(_ASCII_LOWER) for n in names]
        if names and not any(n in _TORCH_RECORDS for n in last):
            raise Reject("unknown-format", "a zip archive, not a torch checkpoint (no data.pkl, version or "
                                           "constants.pkl record)")
        self.records: _Folded = _Folded()
        self.exact: set[str] = set()
        folded_names: set[str] = set()
        spans: list[tuple[int, int, str]] = []
        root = None
        for e in cd.entries:
            name = e.file_name
            self._check_entry(e, name)
            if name.endswith("/"):
                if e.len_body or e.len_uncompressed:
                    raise Reject("bad-container", f"directory entry {name!r} holds data")
                continue
            folder, sep, rel = name.partition("/")
            if not sep:
                raise Reject("bad-container", f"record {name!r} is not inside a root folder")
            if root is None:
                root = folder
            elif folder != root:
                raise Reject("bad-container", f"records in two root folders, {root!r} and {folder!r}")
            folded = rel.translate(_ASCII_LOWER)
            if folded in folded_names:
                raise Reject("bad-container", f"record {name!r} appears twice (names equal up to ASCII case)")
            folded_names.add(folded)
            lf = self._local_header(e, name, cd_ofs)
            if lf.file_name != name or lf.compression_method != e.compression_method \
                    or (lf.flags ^ e.flags) & 0x49:
                raise Reject("bad-container", f"the local header of {name!r} disagrees with its central "
                                              "entry")
            if not e.flags & 0x08 and 0xFFFFFFFF not in (lf.len_compressed, lf.len_uncompressed) \
                    and (lf.len_compressed, lf.len_uncompressed) != (e.len_body, e.len_uncompressed):
                raise Reject("bad-container", f"the local sizes of {name!r} disagree with its central entry")
            if lf.ofs_body + e.len_body > cd_ofs:
                raise Reject("out-of-bounds", f"record {name!r} reaches past the start of the central "
                                              "directory")
            spans.append((e.ofs_local_header, lf.ofs_body + e.len_body, name))
            self.records[rel] = e
            self.exact.add(rel)
        spans.sort()
        for (_, end, name), (start, _, _) in zip(spans, spans[1:], strict=False):
            if end > start:
                raise Reject("bad-container", f"record {name!r} overlaps the next one")
        if root is None:
            raise Reject("bad-container", "the archive holds no record")

    def _local_header(self, e: Any, name: str, cd_ofs: int) -> Any:
        """The entry's local header, which MUST lie in the file (``truncated``) and before the central
        directory (``out-of-bounds``); when the grammar fails inside it, the lengths it read first are
        checked first (spec/pt-zip.md#pt-zip-container)."""
        ofs = e.ofs_local_header

        def extent(n: int, in_file: bool = True) -> None:
            if in_file and ofs + n > self.size:
                raise Reject("truncated", f"the local header of {name!r} reaches past the end of the file")
            if ofs + n > cd_ofs:
                raise Reject("out-of-bounds", f"the local header of {name!r} reaches the central directory")
        extent(30)
        try:
            return parse("pytorch_zip", f"local header of {name!r}", lambda: e.local_file)
        except Reject as failure:
            half = half_read(failure, "LocalFile")
            if half is not None and hasattr(half, "len_extra"):
                extent(30 + half.len_file_name + half.len_extra, in_file=False)
            raise

    def _find_eocd(self) -> int:
        """The end record that, with its comment, ends exactly at the end of the file."""
        lo = max(0, self.size - 22 - MAX_COMMENT)
        tail = bytes(self.mm[lo:])
        found, seen = [], False
        i = tail.rfind(EOCD_SIG)
        while i >= 0:
            seen = True
            at = lo + i
            if at + 22 <= self.size and at + 22 + int.from_bytes(tail[i + 20:i + 22], "little") == self.size:
                found.append(at)
            i = tail.rfind(EOCD_SIG, 0, i)
        if len(found) > 1:
            raise Reject("ambiguous", "two end records end at the end of the file (a comment holds an "
                                      "archive)")
        last = tail.rfind(EOCD_SIG, 0, max(0, len(tail) - 18))  # the last with 22 bytes after it: miniz's
        if found and lo + last != found[0]:
            raise Reject("ambiguous", "an end record inside the comment of the one that ends the file")
        if not found:
            if seen:
                last = lo + tail.rfind(EOCD_SIG)
                if last + 22 > self.size or last + 22 + int.from_bytes(self.mm[last + 20:last + 22],
                                                                       "little") > self.size:
                    raise Reject("truncated", "the file ends inside the end-of-central-directory record or "
                                              "its comment")
                raise Reject("bad-container", "bytes follow the end-of-central-directory record")
            raise Reject("truncated", "no end-of-central-directory record at the end of the file")
        return found[0]

    @staticmethod
    def _check_entry(e: Any, name: str) -> None:
        if e.disk_start_32 != 0:  # 0xFFFF too: miniz reads it as a disk number (multi-disk)
            raise Reject("bad-container", f"record {name!r} starts on disk {e.disk_start_32}")
        if e.external_attrs & 0x10 and not name.endswith("/"):  # miniz: a directory, whatever its name
            raise Reject("bad-container", f"record {name!r} has the MS-DOS directory attribute")
        if e.flags & 0x2041:  # bits 0, 6 and 13 (masked local headers)
            raise Reject("bad-container", f"record {name!r} is encrypted")
        stored = e.compression_method == pytorch_zip.PytorchZip.Compression.stored
        if stored and e.len_body != e.len_uncompressed:
            raise Reject("bad-container", f"stored record {name!r} has two sizes")
        wide = 0xFFFFFFFF in (e.len_compressed_32, e.len_uncompressed_32, e.ofs_local_header_32)
        if wide and not e.has_zip64:
            raise Reject("bad-container", f"record {name!r} lacks its zip64 extra field")
        parts = name.rstrip("/").split("/") if name.endswith("/") else name.split("/")
        if not name or name.startswith("/") or "\\" in name or "\0" in name \
                or any(p in ("", ".", "..") for p in parts):
            raise Reject("bad-container", f"record name {name!r} is not a key")

    def stored(self, name: str) -> Any:
        e = self.records[name]
        if not e.is_stored:
            raise Reject("bad-container", f"record {name!r} is compressed (method "
                                          f"{int(e.compression_method)})")
        return e

    def body(self, name: str) -> bytes:
        e = self.stored(name)
        return bytes(parse("pytorch_zip", f"record {name!r}", lambda: e.local_file.body))

    def view(self, name: str) -> memoryview:
        e = self.stored(name)
        start = e.local_file.ofs_body
        return memoryview(self.mm)[start:start + e.len_body]

    def decimal(self, name: str, code: str = "bad-value") -> int:
        raw = self.body(name)
        if not _DECIMAL.fullmatch(raw):
            raise Reject(code, f"record {name!r} holds {raw[:20]!r}, not a decimal")
        return int(raw)


def read_zip(f: Any, mm: Any, size: int) -> tuple[str, list[Any]]:
    """A zip checkpoint or TorchScript archive: its format and its one object."""
    a = ZipArchive(f, mm, size)
    names = a.records
    torchscript = "constants.pkl" in a.exact  # torch lists records exactly; code/ alone is no TorchScript
    if torchscript and "data.pkl" not in names and "model.json" in names:
        raise Decline("TorchScript archive of the model.json era")
    version_name = ".data/version" if ".data/version" in names else "version"
    if version_name not in names:
        raise Reject("bad-container", "the archive has no version record")
    version = a.decimal(version_name)
    if version not in ZIP_VERSIONS:
        raise Reject("bad-magic", f"format version {version}")
    byte_order = "little"
    if "byteorder" in names:
        byte_order = a.body("byteorder").decode("latin-1")
        if byte_order not in ("little", "big"):
            raise Reject("bad-value", f"byteorder record {byte_order[:20]!r}")
    for name in (".format_version", ".storage_alignment"):
        if name in names and a.decimal(name) == 0 and name == ".storage_alignment":
            raise Reject("bad-value", "storage alignment 0")
    scopes = frozenset({"torch", "torchscript"}) if torchscript else frozenset({"torch"})
    opaque = ("__torch__",) if torchscript else ()

    def unpickle(name: str, prefix: str) -> Any:
        if name not in names:
            raise Reject("bad-container", f"the archive has no {name} record")
        e = a.stored(name)

        def machine() -> Machine:
            return Machine(ZipStorages(a, prefix, byte_order), scopes=scopes, opaque_modules=opaque)
        try:
            pickle = parse("python_pickle", name, lambda: e.local_file.pickle)
        except Reject as first:
            io = KaitaiStream(BytesIO(bytes(a.view(name))))
            replay(first, lambda: machine().run(ops_from(io, record=True), name, e.len_body))
        if pickle is None:
            raise Reject("bad-container", f"{name} is not a stored pickle record")
        return run_pickle(pickle, name, machine(), exact=True)

    obj = unpickle("data.pkl", "data/")
    if ".data/serialization_id" in names:  # decoded by torch once the object is loaded (pt-zip-records)
        try:
            a.body(".data/serialization_id").decode("utf-8")
        except UnicodeDecodeError:
            raise Reject("bad-value", "the .data/serialization_id record is not UTF-8") from None
    if torchscript:
        if "constants.pkl" in names:
            unpickle("constants.pkl", "constants/")
        return "pt-torchscript", [obj]
    return "pt-zip", [obj]


class ZipStorages:
    """The zip ``persistent_load``: ``('storage', type, key, location, numel)`` names the record
    ``<prefix><key>`` (spec/pt-zip.md#pt-zip-storage-records)."""

    def __init__(self, archive: ZipArchive, prefix: str, byte_order: str) -> None:
        self.archive = archive
        self.prefix = prefix
        self.byte_order = byte_order
        self.loaded: dict[tuple[type, Any], tuple[tuple[Any, ...], Storage]] = {}

    def __call__(self, pid: Any) -> Storage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] in ("storage", b"storage")):
            raise Reject("bad-reference", "a persistent id must be ('storage', type, key, location, numel)")
        _, stype, key, loc, numel = pid
        dtype, typed = storage_type(stype)
        if type(key) not in (str, int) or type(numel) is not int:
            raise Reject("bad-reference", "a persistent id's key must be a str and its numel an int")
        raw_key, key = (type(key), key), str(key)  # spec/tensors.md#tensors-storage-identity
        signature = (dtype, typed, location(loc), numel)
        if raw_key in self.loaded:
            first, storage = self.loaded[raw_key]
            if first != signature:
                raise Reject("bad-reference", f"storage {key!r} named twice with different type, location "
                                              "or size")
            return storage
        if numel < 0:
            raise Reject("bad-length", f"storage {key!r} of {numel} elements")
        name = self.prefix + key
        if name not in self.archive.records:
            raise Reject("bad-reference", f"no record {name!r} for storage {key!r}")
        e = self.archive.stored(name)
        if e.len_body != numel * dtype.itemsize:
            raise Reject("bad-value", f"record {name!r} holds {e.len_body} bytes, not {numel} x "
                                      f"{dtype.itemsize}")
        storage = Storage(dtype, numel, signature[2], self.archive.view(name), self.byte_order, typed=typed)
        if numel:  # an empty storage is never shared
            self.loaded[raw_key] = (signature, storage)
        return storage


# -- the legacy stream (spec/pt-legacy.md) ------------------------------------------------------------

def check_sys_info(sys_info: Any, protocol: int) -> None:
    if not (isinstance(sys_info, dict) and sys_info.get("protocol_version") == protocol
            and type(sys_info.get("little_endian")) is bool and isinstance(sys_info.get("type_sizes"), dict)):
        raise Reject("bad-value", f"sys_info must hold protocol_version {protocol}, little_endian and "
                                  "type_sizes")
    for name, allowed in TYPE_SIZES.items():
        if sys_info["type_sizes"].get(name) not in allowed:
            raise Decline(f"legacy type_sizes {name}={sys_info['type_sizes'].get(name)!r}")


class LegacyStorages:
    """The legacy ``persistent_load``: ``('storage', type, key, location, numel, view)``, or a pickled
    module's ``('module', class, source_file, source)`` (spec/pt-legacy.md#pt-legacy-persistent-id)."""

    def __init__(self) -> None:
        self.roots: dict[Any, tuple[tuple[Any, ...], Storage]] = {}
        self.views: dict[Any, tuple[Any, int, Storage]] = {}

    def __call__(self, pid: Any) -> Any:
        if not isinstance(pid, tuple) or not pid:
            raise Reject("bad-reference", "a persistent id must be a non-empty tuple")
        kind = pid[0].decode("ascii", "replace") if isinstance(pid[0], bytes) else pid[0]
        if kind == "module" and len(pid) == 4 and isinstance(pid[1], Global):
            return pid[1]
        if kind != "storage" or len(pid) != 6:
            raise Reject("bad-reference", "a persistent id must be ('storage', type, key, location, numel, "
                                          "view)")
        _, stype, key, loc, numel, view = pid
        dtype, typed = storage_type(stype)
        if type(numel) is not int or not isinstance(key, (str, bytes, int)):
            raise Reject("bad-reference", "a persistent id's key must be a str and its numel an int")
        if numel < 0:
            raise Reject("bad-length", f"storage {key!r} of {numel} elements")
        signature = (dtype, location(loc), numel)
        if key in self.views:
            raise Reject("bad-reference", f"key {key!r} names both a storage and a view")
        if key in self.roots:
            first, root = self.roots[key]
            if first != signature:
                raise Reject("bad-reference", f"storage {key!r} named twice with different type, location "
                                              "or size")
        else:
            root = Storage(dtype, numel, signature[1], typed=typed)
            self.roots[key] = (signature, root)
        if view is None:
            return root
        if not (isinstance(view, tuple) and len(view) == 3 and type(view[1]) is int and type(view[2]) is int):
            raise Reject("bad-reference", "view metadata must be (view_key, offset, size)")
        view_key, start, n = view
        if view_key in self.roots:
            raise Reject("bad-reference", f"key {view_key!r} names both a storage and a view")
        if view_key in self.views:
            known = self.views[view_key]
            if (known[0], known[1], known[2].numel) != (key, start, n):
                raise Reject("bad-reference", f"view {view_key!r} named twice differently")
            return known[2]
        if start < 0 or n < 0 or start + n > numel:
            raise Reject("out-of-bounds", f"view [{start}, {start + n}) of a storage of {numel} elements")
        storage = Storage(dtype, n, root.device)
        self.views[view_key] = (key, start, storage)
        return storage


LEGACY_PICKLES = ("magic number", "protocol version", "sys_info", "object pickle", "storage keys")


def _legacy_pickles(run: Callable[[int, Machine], Any]) -> tuple[bool, LegacyStorages, Any, list[Any]]:
    """The five pickles of the legacy stream, each checked as soon as it is run
    (spec/pt-legacy.md#pt-legacy-magic ... #pt-legacy-storage-keys); ``run(k, machine)`` runs the k-th."""
    header = Machine()
    magic = run(0, header)
    if type(magic) is not int or magic != LEGACY_MAGIC:
        raise Reject("bad-magic", f"magic number {magic!r}")
    version = run(1, header)
    if type(version) is not int or version != LEGACY_PROTOCOL:
        raise Reject("bad-magic", f"protocol version {version!r}")
    sys_info = run(2, header)
    check_sys_info(sys_info, LEGACY_PROTOCOL)
    storages = LegacyStorages()
    obj = run(3, Machine(storages))
    keys = run(4, header)
    if not isinstance(keys, list) or not all(isinstance(k, (str, bytes, int)) for k in keys):
        raise Reject("bad-value", "the storage key list is not a list of keys")
    if len(set(map(repr, keys))) != len(keys) or any(k not in storages.roots for k in keys) \
            or len(keys) != len(storages.roots):
        raise Reject("bad-reference", "the storage key list does not name each storage once")
    return sys_info["little_endian"], storages, obj, keys


def _legacy_storage(width: int, io: Any, leg: Any, key: Any, numel: int, little: bool) -> Any:
    """pytorch_legacy.ksy's ``storage`` at ``io``, whose count MUST be the persistent id's ``numel``
    (spec/pt-legacy.md#pt-legacy-storages).  When the grammar fails after reading the count (the elements
    run past the end, or the count is negative), the count, found in the failure's frames since the
    generated parser drops its half-read object, is checked first, as a reader meets it first."""
    try:
        rec = pytorch_legacy.PytorchLegacy.Storage(width, io, leg, leg)
        count, failure = rec.num_elements, None
    except _PARSE_ERRORS as e:
        rec, failure = None, e
        count = getattr(half_read(e, "Storage"), "num_elements", None)
    if count is not None and count != numel:
        if not little:
            raise Decline("a legacy storage count in big-endian order (the grammar reads it little-endian)")
        raise Reject("bad-value", f"storage {key!r} holds {count} elements, its persistent id says {numel}")
    if failure is not None:
        raise from_kaitai(failure, "pytorch_legacy", f"storage {key!r}") from None
    return rec


def read_legacy(f: Any, size: int) -> tuple[str, list[Any]]:
    try:
        leg = parse("pytorch_legacy", "legacy stream", lambda: pytorch_legacy.PytorchLegacy(KaitaiStream(f)))
    except Reject as first:
        f.seek(0)
        io = KaitaiStream(f)
        replay(first, lambda: _legacy_pickles(
            lambda k, m: m.run(ops_from(io), LEGACY_PICKLES[k], size - io.pos())))
    pickles = (leg.magic_number, leg.protocol_version, leg.sys_info, leg.object, leg.storage_keys)
    starts = [0]
    for p in pickles[:-1]:
        starts.append(starts[-1] + pickle_length(p))
    little, storages, obj, keys = _legacy_pickles(
        lambda k, m: run_pickle(pickles[k], LEGACY_PICKLES[k], m, exact=False, limit=size - starts[k]))
    io = leg._io
    io.seek(leg.storages.ofs_start)
    for key in keys:
        (dtype, _loc, numel), root = storages.roots[key]  # as the persistent id said (before any retyping)
        rec = _legacy_storage(dtype.itemsize, io, leg, key, numel, little)
        root.raw = rec.data
    if io.pos() != size:
        raise Reject("bad-container", f"{size - io.pos()} bytes after the last storage")
    for root_key, start, view in storages.views.values():
        root = storages.roots[root_key][1]
        w = root.dtype.itemsize
        view.raw = root.raw[start * w:(start + view.numel) * w]
    return "pt-legacy", [obj]


# -- tar (spec/pt-tar.md) -------------------------------------------------------------------------------

_PAX_LENGTH = re.compile(rb"([0-9]+) ")
MAX_PAX_BYTES = limits()["TAR_PAX_BYTES"]


def _pax_records(body: bytes, file_size: int) -> dict[bytes, bytes]:
    """The records ``<length> <key>=<value>\\n`` of a PAX header, which pytorch_tar.ksy keeps as bytes;
    lengths and sizes are ASCII digits, counted before conversion (spec/pt-tar.md#pt-tar-members)."""
    if len(body) > MAX_PAX_BYTES:
        raise Reject("limit-exceeded", f"a PAX extended header of {len(body)} bytes (limit {MAX_PAX_BYTES})")
    out: dict[bytes, bytes] = {}
    i = 0
    while i < len(body):
        m = _PAX_LENGTH.match(body, i)
        digits = m.group(1).lstrip(b"0") if m else b""
        n = int(digits) if m and 0 < len(digits) <= len(str(len(body))) else 0
        if not m or n <= len(m.group(0)) or i + n > len(body) or body[i + n - 1:i + n] != b"\n":
            raise Reject("bad-container", "malformed PAX record")
        key, eq, value = body[m.end():i + n - 1].partition(b"=")
        if not eq:
            raise Reject("bad-container", "PAX record without '='")
        out[key] = value
        i += n
    size = out.get(b"size")
    if size is not None:
        if not re.fullmatch(rb"[0-9]+", size):
            raise Reject("bad-container", "a PAX size that is not ASCII digits")
        if len(size.lstrip(b"0")) > len(str(file_size)) or int(size) > file_size:
            raise Reject("truncated", "a PAX size past the end of the file")
    return out


#: The number fields of a tar header (mode, uid, gid, size, mtime, devmajor, devminor) besides the checksum.
_TAR_NUMBERS = ((100, 108), (108, 116), (116, 124), (124, 136), (136, 148), (329, 337), (337, 345))


def _tar_number(field: bytes) -> int:
    """A tar header number as Python's ``tarfile`` reads it: base-256 after a 0x80 or 0xFF byte, else
    ASCII octal up to the first NUL, spaces around it ignored (ValueError when it is neither)."""
    if field[0] in (0o200, 0o377):
        n = int.from_bytes(field[1:], "big")
        return n - 256 ** (len(field) - 1) if field[0] == 0o377 else n
    text = field.split(b"\0", 1)[0].decode("ascii")
    return int(text.strip() or "0", 8)


def is_tar_header(head: bytes) -> bool:
    """Whether the first 512 bytes are a tar header Python's ``tarfile`` accepts (an old-style V7 one
    needs no ``ustar`` magic): number fields that read as numbers and a checksum that matches, unsigned or
    signed.  torch tries a file as a tar archive first, so such a legacy stream is ``pt-tar``
    (spec/pt-legacy.md#pt-legacy-magic, spec/canonical.md#canonical-detect)."""
    block = head[:512]
    if len(block) < 512 or block.count(0) == 512:
        return False
    try:
        checksum = _tar_number(block[148:156])
        for start, end in _TAR_NUMBERS:
            _tar_number(block[start:end])
    except ValueError:  # UnicodeDecodeError included
        return False
    rest = block[:148] + b" " * 8 + block[156:]
    return checksum in (sum(rest), sum(b - 256 if b > 127 else b for b in rest))


def read_tar(f: Any) -> tuple[str, list[Any]]:
    tar = parse("pytorch_tar", "tar archive", lambda: pytorch_tar.PytorchTar(KaitaiStream(f)))
    members: dict[str, Any] = {}
    f.seek(0, 2)
    file_size = f.tell()
    pax: dict[bytes, bytes] = {}
    for m in tar.members:
        if m.is_end:
            break
        if chr(m.header.type_flag) == "x":
            pax = _pax_records(m.body if isinstance(m.body, bytes) else b"", file_size)
            continue
        if chr(m.header.type_flag) == "g":
            continue
        overrides, pax = pax, {}
        try:  # pytorch_tar.ksy keeps the name as bytes (runtimes decode UTF-8 differently)
            name = bytes(m.header.name_bytes).decode("utf-8")
        except UnicodeDecodeError:
            raise Reject("bad-container", "tar archive: a header field that is not UTF-8") from None
        if b"size" in overrides and int(overrides[b"size"]) != m.header.len_body:
            raise Decline("a PAX size record that overrides the ustar size (pytorch_tar.ksy sizes members "
                          "by the ustar header)")
        if b"path" in overrides and overrides[b"path"].decode("utf-8", "replace") != name:
            raise Decline("a PAX path record that renames a member (pytorch_tar.ksy names members by the "
                          "ustar header)")
        if name in members:
            raise Reject("bad-container", f"tar member {name!r} twice")
        members[name] = m.body
    for name in ("sys_info", "pickle", "tensors", "storages"):
        if name not in members:
            raise Reject("bad-container", f"the archive has no {name!r} member")
    header = Machine()
    check_sys_info(run_pickle(members["sys_info"], "sys_info", header, exact=True), TAR_PROTOCOL)
    objects: dict[int, Any] = {}
    st = members["storages"]
    for rec in st.storages:
        record = run_pickle(rec.record, "storage record", header, exact=False)
        if not (isinstance(record, tuple) and len(record) == 3 and type(record[0]) is int):
            raise Reject("bad-pickle", "a storage record must be (key, location, type)")
        key, loc, stype = record
        dtype, _ = storage_type(stype)
        if dtype.itemsize != rec.element_size or key in objects:
            raise Reject("bad-reference", f"storage {key}: type {stype!r} or a key seen before")
        objects[key] = Storage(dtype, rec.num_elements, location(loc), rec.data)
    views = run_pickle(st.storage_views, "storage views", header, exact=False)
    if st._io.pos() != st._io.size():
        raise Reject("bad-length", "bytes after the storage views")
    if not isinstance(views, list):
        raise Reject("bad-pickle", "storage views must be a list")
    for v in views:
        if not (isinstance(v, tuple) and len(v) == 4 and all(type(x) is int for x in v)):
            raise Reject("bad-pickle", "a storage view must be (key, root_key, offset, numel)")
        key, root_key, start, n = v
        root = objects.get(root_key)
        if not isinstance(root, Storage) or key in objects:
            raise Reject("bad-reference", f"view {key} of unknown storage {root_key}")
        if start < 0 or n < 0 or start + n > root.numel:
            raise Reject("out-of-bounds", f"view [{start}, {start + n}) of {root.numel}")
        w = root.dtype.itemsize
        objects[key] = Storage(root.dtype, n, root.device, root.raw[start * w:(start + n) * w])
    tm = members["tensors"]
    for rec in tm.tensors:
        record = run_pickle(rec.record, "tensor record", header, exact=False)
        if not (isinstance(record, tuple) and len(record) == 3 and type(record[0]) is int
                and type(record[1]) is int):
            raise Reject("bad-pickle", "a tensor record must be (key, storage_key, type)")
        key, storage_key, _ = record
        storage = objects.get(storage_key)
        if not isinstance(storage, Storage) or key in objects:
            raise Reject("bad-reference", f"tensor {key} of unknown storage {storage_key}")
        size, stride = tuple(rec.sizes), tuple(rec.strides)
        rebuild.check_view(storage, rec.storage_offset, size, stride, f"tensor {key}")
        objects[key] = Tensor(storage.dtype, size, stride, rec.storage_offset, storage, storage.device)
    if tm._io.pos() != tm._io.size():
        raise Reject("bad-length", "bytes after the last tensor record")

    def persistent_load(pid: Any) -> Any:
        if isinstance(pid, tuple) and len(pid) == 3 and isinstance(pid[0], Global):
            return pid[0]
        if not (isinstance(pid, str) and pid.isdigit() and int(pid) in objects):
            raise Reject("bad-reference", f"persistent id {pid!r} names no tensor or storage")
        return objects[int(pid)]

    obj = run_pickle(members["pickle"], "pickle", Machine(persistent_load), exact=True)
    return "pt-tar", [obj]


def open_mmap(f: Any, size: int) -> Any:
    return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""

