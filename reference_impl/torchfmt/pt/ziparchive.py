"""The zip container of ``.pt`` files, parsed from its end (spec/pt-zip.md#pt-zip-container).

Only what torch's writers make is accepted: one disk, no encryption, names that are keys (never paths)
under one root folder, central and local headers that agree, members that neither overlap nor reach into
the central directory.  Records a reader reads must be stored (method 0) and are zero-copy slices of the
file; TorchScript's ``code/`` records, which are deflated, are only listed.
CRC-32 values are not checked: torch itself does not check them, and checking would read every storage.
"""

from __future__ import annotations

import functools
import operator
import re
import struct
from dataclasses import dataclass
from typing import NamedTuple

from .. import fast
from ..errors import FormatError
from ..windows import FileWindows, MemoryWindows, Record

Source = FileWindows | MemoryWindows

EOCD_SIG = b"PK\x05\x06"
ZIP64_LOCATOR_SIG = b"PK\x06\x07"
ZIP64_EOCD_SIG = b"PK\x06\x06"
CENTRAL_SIG = b"PK\x01\x02"
LOCAL_SIG = b"PK\x03\x04"

_EOCD = struct.Struct("<4s4H2LH")  # sig, disk, cd disk, entries here, entries, cd size, cd offset, comment
_LOCATOR = struct.Struct("<4sLQL")  # sig, disk of zip64 eocd, its offset, total disks
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")  # sig, size, made by, needed, disk, cd disk, here, total,
#                                             directory size, directory offset
_CENTRAL = struct.Struct("<4s6H3L5H2L")
_LOCAL = struct.Struct("<4s5H3L2H")
#: The fields of each that the readers use, the others skipped: (signature, flags, method, stored size,
#: size, name, extra and comment lengths, disk, local header offset) and (signature, flags, method,
#: stored size, size, name and extra lengths).
_CENTRAL_USED = struct.Struct("<4s4xHH8xLLHHHH2xLL")
_LOCAL_USED = struct.Struct("<4s2xHH8xLLHH")

FLAG_ENCRYPTED = 0x0001
FLAG_DATA_DESCRIPTOR = 0x0008
FLAG_PATCHED = 0x0020  # compressed patched data: miniz refuses to read such a member
#: The MS-DOS directory bit of a central entry's external attributes: miniz takes such a member for a
#: directory, whatever its name, and reads no data for it (torch then reads uninitialized memory).
DOS_DIRECTORY = 0x10
FLAG_STRONG_ENCRYPTION = 0x0040
FLAG_MASKED_LOCAL = 0x2000  # central directory encryption: miniz refuses the archive
FLAG_UTF8 = 0x0800
ZIP64_EXTRA_ID = 0x0001
MAX_COMMENT = 0xFFFF
#: Record names only torch's writers make: a zip archive with none of them (in any folder) is no
#: checkpoint at all (spec/pt-zip.md#pt-zip-records).
TORCH_RECORDS = frozenset({"data.pkl", "version", "constants.pkl", "model.json"})


class Member(NamedTuple):
    """One archive member: its name (relative to the root folder), data offset, size (uncompressed),
    compression method and stored size.  A named tuple: an archive of 20,000 records makes 40,000."""

    name: str
    offset: int
    size: int
    header_offset: int
    method: int = 0
    stored_size: int = 0

    def data(self, buf: Source) -> bytes | memoryview:
        """The member's bytes, read from ``buf``; a record that is read must be stored, never inflated
        (spec/pt-zip.md#pt-zip-records)."""
        self._stored()
        return buf[self.offset:self.offset + self.size]

    def record(self, buf: Source) -> Record | memoryview:
        """The member's bytes as a storage record: mapped only when used (a view of ``buf`` in memory)."""
        self._stored()
        return buf.record(self.offset, self.size)

    def _stored(self) -> None:
        if self.method != 0:
            raise _fail(self.header_offset, f"record {self.name!r} is compressed (method {self.method})")


def _fail(offset: int | None, message: str) -> FormatError:
    return FormatError("bad-container", offset, message)


def _unpack(s: struct.Struct, buf: Source, offset: int, what: str) -> tuple[int | bytes, ...]:
    if offset < 0 or offset + s.size > len(buf):
        raise FormatError("truncated", offset, f"{what} reaches past the end of the file")
    return s.unpack(bytes(buf[offset:offset + s.size]))


def _find_eocd(buf: Source) -> int:
    """The end-of-central-directory record: the last signature with at least 22 bytes after it (torch's
    miniz takes that one), which with its comment ends exactly at the end of the file.  Another candidate
    that also ends there (a comment that holds a second archive), or one the last hides in its comment,
    makes the file ``ambiguous``: two zip readers could see two archives in it."""
    lo = max(0, len(buf) - _EOCD.size - MAX_COMMENT)
    tail = bytes(buf[lo:])
    last = tail.rfind(EOCD_SIG, 0, max(0, len(tail) - _EOCD.size + len(EOCD_SIG)))
    if last < 0:
        if tail.rfind(EOCD_SIG) >= 0:
            raise FormatError("truncated", lo + tail.rfind(EOCD_SIG),
                              "the file ends inside the end-of-central-directory record")
        raise FormatError("truncated", len(buf), "no end-of-central-directory record at the end of the file")
    at = lo + last
    found: list[int] = []
    i = last
    while i >= 0:
        comment = struct.unpack_from("<H", tail, i + 20)[0]
        if lo + i + _EOCD.size + comment == len(buf):
            found.append(lo + i)
        i = tail.rfind(EOCD_SIG, 0, i)
    if at not in found:
        comment = struct.unpack_from("<H", tail, last + 20)[0]
        if found:
            raise FormatError("ambiguous", at, f"an end record inside the comment of the end record at byte "
                              f"{found[0]}: torch reads the later one, other zip readers the earlier")
        if at + _EOCD.size + comment > len(buf):
            raise FormatError("truncated", at, f"the end record's {comment}-byte comment runs past the end")
        raise _fail(at, "bytes after the end-of-central-directory record")
    if len(found) > 1:
        raise FormatError("ambiguous", found[-1], f"{len(found)} end records end the file")
    return at


def _directory(buf: Source) -> tuple[int, int, int, int]:
    """(entries, directory offset, directory size, where the directory must end) from the EOCD records."""
    eocd = _find_eocd(buf)
    _, disk, cd_disk, here, total, cd_size, cd_offset, _ = _unpack(_EOCD, buf, eocd, "EOCD")
    limit = eocd
    loc = eocd - _LOCATOR.size
    if loc >= 0 and bytes(buf[loc:loc + 4]) == ZIP64_LOCATOR_SIG:
        _, z_disk, z_offset, disks = _unpack(_LOCATOR, buf, loc, "zip64 locator")
        if z_disk != 0 or disks != 1:
            raise _fail(eocd, "a multi-disk zip archive")
        if z_offset + _ZIP64_EOCD.size > loc:
            raise FormatError("out-of-bounds", loc, "zip64 end record is not before its locator")
        sig, _, _, _, disk64, cd_disk64, here64, total64, size64, offset64 = _unpack(
            _ZIP64_EOCD, buf, z_offset, "zip64 end record")
        if sig != ZIP64_EOCD_SIG:
            raise _fail(z_offset, "the zip64 locator does not point at a zip64 end record")
        pairs = (("disk", disk, disk64, 0xFFFF), ("cd disk", cd_disk, cd_disk64, 0xFFFF),
                 ("entries", total, total64, 0xFFFF), ("entries here", here, here64, 0xFFFF),
                 ("directory size", cd_size, size64, 0xFFFFFFFF),
                 ("directory offset", cd_offset, offset64, 0xFFFFFFFF))
        for name, small, big, sentinel in pairs:
            if small not in (sentinel, big):
                raise _fail(eocd, f"EOCD {name} {small} disagrees with zip64 {big}")
        disk, cd_disk, here, total, cd_size, cd_offset = disk64, cd_disk64, here64, total64, size64, offset64
        limit = z_offset
    if disk != 0 or cd_disk != 0:
        raise _fail(eocd, "a multi-disk zip archive")
    if here != total:
        raise _fail(eocd, f"{here} entries on this disk but {total} in all")
    if cd_offset + cd_size > limit:
        raise FormatError("out-of-bounds", eocd, "the central directory reaches past its end records")
    return total, cd_offset, cd_size, limit


def _zip64_extra(extra: bytes, values: list[int], at: int) -> list[int]:
    """Replace 0xFFFFFFFF sizes/offset by the zip64 extra field's values (in order usize, csize, offset).

    Like torch's miniz, the extra fields are walked only when a value needs one, and each field must fit
    in the extra area (an overlong field is ``bad-container``: miniz refuses it)."""
    if 0xFFFFFFFF not in values:
        return values
    i = 0
    while i + 4 <= len(extra):
        hid, hlen = struct.unpack_from("<2H", extra, i)
        if i + 4 + hlen > len(extra):
            raise _fail(at, f"extra field 0x{hid:04x} of {hlen} bytes runs past the extra area")
        if hid == ZIP64_EXTRA_ID:
            body, j, out = extra[i + 4:i + 4 + hlen], 0, list(values)
            for k, v in enumerate(values):
                if v == 0xFFFFFFFF:
                    if j + 8 > len(body):
                        raise _fail(at, "zip64 extra field too short")
                    out[k] = struct.unpack_from("<Q", body, j)[0]
                    j += 8
            return out
        i += 4 + hlen
    raise _fail(at, "a 0xFFFFFFFF size or offset without a zip64 extra field")


#: Names such as torch writes (``archive/data/0``): ASCII letters, digits, ``_.-`` in components that are
#: neither ``.`` nor ``..``; every such name passes :func:`_name`'s checks, which then need not run.
_SEGMENT = rb"(?!\.\.?(?:/|\Z))[A-Za-z0-9_.\-]+"
_PLAIN_NAME = re.compile(_SEGMENT + rb"(?:/" + _SEGMENT + rb")*")


def _name(raw: bytes, flags: int, at: int) -> str:
    """A member name as a key (spec/pt-zip.md#pt-zip-container): UTF-8 whatever flag bit 11 says (torch
    hands every name to Python as UTF-8 and fails on any other), never absolute, no ``..``, no backslash
    or NUL, no empty components."""
    if _PLAIN_NAME.fullmatch(raw):
        return raw.decode("ascii")
    try:
        name = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _fail(at, f"member name {raw!r} is not valid UTF-8") from None
    parts = name.rstrip("/").split("/")
    bad_part = any(p in ("", ".", "..") for p in parts)
    if not name or name.startswith("/") or "\\" in name or "\0" in name or bad_part:
        raise _fail(at, f"member name {name!r} is not a plain relative key")
    return name


def read_members(buf: Source) -> tuple[str, Records]:
    """Parse and validate the archive: (root folder name, members by name relative to the root).

    One pass over the central directory (:func:`_central`), one over the local headers (:func:`_locals`),
    then the overlap and root checks (:func:`_rooted`): their loops are written out, because an archive
    may hold tens of thousands of records (issue 12)."""
    total, cd_offset, cd_size, _ = _directory(buf)
    cd = bytes(buf[cd_offset:cd_offset + cd_size])  # before the end records (checked): one read
    found = _central(cd, cd_offset, total)
    if found and not any(fold(entry[0]).rsplit("/", 1)[-1] in TORCH_RECORDS for entry in found):
        raise FormatError("unknown-format", 0, "a zip archive, not a torch checkpoint: it has no data.pkl, "
                          "version or constants.pkl record")
    dense = sum([entry[4] for entry in found]) < _HeaderReader.WINDOW // 16 * max(1, len(found))
    window = _HeaderReader.WINDOW if dense else _HeaderReader.HEADER
    first = next((entry[0] for entry in found if not entry[0].endswith("/")), None)
    if fast.ENABLED and first is not None:  # the common case: records only, in file order, under one root
        root = first.split("/", 1)[0]
        members = _locals(buf, found, cd_offset, window, root + "/")
        if members is not None:
            return root, Records(members)
    members = _locals(buf, found, cd_offset, window)
    assert members is not None
    _check_overlaps(members)
    return _rooted(members)


_ENCRYPTED = FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION | FLAG_MASKED_LOCAL
_REFUSED_FLAGS = _ENCRYPTED | FLAG_PATCHED
_MEMBER = functools.partial(tuple.__new__, Member)  # Member(*fields) without its Python-level __new__


def _central(cd: bytes, cd_offset: int, total: int) -> list[tuple[str, bytes, int, int, int, int, int]]:
    """The central directory ``cd`` (at ``cd_offset`` in the file) entry by entry: (name, its bytes,
    local header offset, size, stored size, method, flags) of each."""
    found: list[tuple[str, bytes, int, int, int, int, int]] = []
    keys: set[bytes] = set()  # the raw names, ASCII lower-cased: torch's lookup (miniz) ignores case
    unpack, plain, cd_end = _CENTRAL_USED.unpack_from, _PLAIN_NAME.fullmatch, len(cd)
    at = 0
    for _ in range(total):
        pos = cd_offset + at
        if at + 46 > cd_end:
            raise _fail(pos, "central directory shorter than its entry count")
        sig, flags, method, csize, usize, nlen, xlen, clen, disk, external, header = unpack(cd, at)
        if sig != CENTRAL_SIG:
            raise _fail(pos, "bad central directory entry signature")
        end = at + 46 + nlen + xlen + clen
        if end > cd_end:
            raise _fail(pos, "central directory entry reaches past the directory")
        raw = cd[at + 46:at + 46 + nlen]
        if usize == 0xFFFFFFFF or csize == 0xFFFFFFFF or header == 0xFFFFFFFF:
            extra = cd[at + 46 + nlen:at + 46 + nlen + xlen]
            usize, csize, header = _zip64_extra(extra, [usize, csize, header], pos)
        name = raw.decode("ascii") if plain(raw) else _name(raw, flags, pos)
        if flags & _REFUSED_FLAGS:
            if flags & _ENCRYPTED:
                raise _fail(pos, f"member {name!r} is encrypted")
            raise _fail(pos, f"member {name!r} is compressed patched data (flag bit 5)")
        if method == 0 and csize != usize:
            raise _fail(pos, f"stored member {name!r} has compressed size {csize} != size {usize}")
        if disk != 0:  # miniz takes 0xFFFF as a disk number too (its zip64 value is never read): multi-disk
            raise _fail(pos, f"member {name!r} starts on disk {disk}")
        if external & DOS_DIRECTORY and not name.endswith("/"):
            raise _fail(pos, f"member {name!r} has the MS-DOS directory attribute (torch reads none of it)")
        # names equal as text are equal as bytes (UTF-8 is decoded strictly), so the folded bytes decide
        key = raw.lower()
        if key in keys:
            raise _fail(pos, f"duplicate member name {name!r} (names equal up to ASCII case or as raw bytes)")
        keys.add(key)
        found.append((name, raw, header, usize, csize, method, flags))
        at = end
    if at != cd_end:
        raise _fail(cd_offset + at, f"{cd_end - at} bytes of central directory after the last entry")
    return found


class _HeaderReader:
    """How local headers, which lie in file order, are read: through one window at a time, 64 KiB where
    records are small (a file of 20,000 of them then costs some hundreds of reads, not 40,000: issue
    12), else 1 KiB, a header and its name, so that large records between headers are not read."""

    WINDOW = 1 << 16
    HEADER = 1 << 10


def _locals(buf: Source, found: list[tuple[str, bytes, int, int, int, int, int]], cd_offset: int,
            window: int, prefix: str | None = None) -> list[Member] | None:
    """Check each local header against its central entry (whose name's bytes are ``raw``), reading them
    through windows of ``window`` bytes; the members' data ranges.

    With ``prefix`` (the root folder's name and a slash), the members named relative to the root, as
    :func:`_rooted` names them, if every one is a record under the root that starts at or after the end
    of the one before (so that :func:`_check_overlaps` and :func:`_rooted` have nothing to refuse); else,
    once every local header is checked, None."""
    size = len(buf)
    win, start, wlen = b"", 0, 0
    unpack = _LOCAL_USED.unpack_from
    members: list[Member] = []
    cut = 0 if prefix is None else len(prefix)
    regular, after = True, 0  # where the member before ends
    for name, raw, header, usize, csize, method, flags in found:
        if header + 30 > size:
            raise FormatError("truncated", header, "local header reaches past the end of the file")
        rel = header - start
        if rel < 0 or rel + 30 > wlen:
            win, start = bytes(buf[header:min(size, header + window)]), header
            wlen, rel = len(win), 0
        sig, lflags, lmethod, lcsize, lusize, nlen, xlen = unpack(win, rel)
        if sig != LOCAL_SIG:
            raise _fail(header, f"no local header for {name!r} where the central directory points")
        data = header + 30 + nlen + xlen
        if data > cd_offset:
            raise FormatError("out-of-bounds", header,
                              f"local header of {name!r} reaches the central directory")
        if rel + 30 + nlen + xlen > wlen:
            win, start = bytes(buf[header:min(size, header + max(window, 30 + nlen + xlen))]), header
            wlen, rel = len(win), 0
        lraw = win[rel + 30:rel + 30 + nlen]
        lname = name if lraw == raw else _name(lraw, lflags, header)
        if lname != name or lmethod != method or (lflags ^ flags) & (FLAG_ENCRYPTED | FLAG_DATA_DESCRIPTOR):
            raise _fail(header, f"local header of {name!r} disagrees with the central directory")
        if not lflags & FLAG_DATA_DESCRIPTOR:
            lextra = win[rel + 30 + nlen:rel + 30 + nlen + xlen]
            if _zip64_extra(lextra, [lusize, lcsize], header) != [usize, csize]:
                raise _fail(header, f"local sizes of {name!r} disagree with the central directory")
        if data + csize > cd_offset:
            raise FormatError("out-of-bounds", header, f"data of {name!r} reaches the central directory")
        if prefix is None:
            members.append(_MEMBER((name, data, usize, header, method, csize)))
        elif regular:
            regular = header >= after and name.startswith(prefix) and name[-1] != "/"
            members.append(_MEMBER((name[cut:], data, usize, header, method, csize)))
            after = data + csize
    return members if regular else None


DESCRIPTOR_SIG = b"PK\x07\x08"
#: How far past a record's data start :func:`local_walk` looks for its data descriptor.
_DESCRIPTOR_SCAN = 1 << 24


@dataclass(frozen=True)
class LocalRecord:
    """A record met walking local headers: its full name, header offset, data offset and where its data
    ends (which for the record a cut file ends in lies past the end of the file)."""

    name: str
    header: int
    data: int
    end: int


def local_walk(buf: Source, sizes: dict[str, int] | None = None) -> list[LocalRecord]:
    """For a zip archive cut short (no end records): the records its local headers announce, from the
    start, up to the one the file ends in (spec/inspect.md#inspect-truncated).  A header's sizes are its
    own, else ``sizes[name]`` (what the pickle says a storage record holds), else the data descriptor
    torch's writer puts after the data (found within 16 MiB, its size matching).  The walk stops at a
    record whose size it cannot learn.  Nothing here is used for reading: it only measures a cut."""
    out: list[LocalRecord] = []
    pos = 0
    while pos + _LOCAL.size <= len(buf) and bytes(buf[pos:pos + 4]) == LOCAL_SIG:
        _, _, flags, _, _, _, _, csize, usize, nlen, xlen = _LOCAL.unpack(bytes(buf[pos:pos + _LOCAL.size]))
        name = bytes(buf[pos + 30:pos + 30 + nlen]).decode("utf-8", "replace")
        data = pos + _LOCAL.size + nlen + xlen
        size: int | None = None
        if not flags & FLAG_DATA_DESCRIPTOR:
            try:
                size = _zip64_extra(bytes(buf[pos + 30 + nlen:data]), [usize, csize], pos)[1]
            except FormatError:
                return out
        elif sizes and name in sizes:
            size = sizes[name]
        else:
            size = _descriptor_size(buf, data)
        if size is None:
            return out
        out.append(LocalRecord(name, pos, data, data + size))
        if data + size >= len(buf):
            return out
        pos = data + size
        if flags & FLAG_DATA_DESCRIPTOR:
            pos += _descriptor_length(buf, pos)
    return out


def _descriptor_size(buf: Source, data: int) -> int | None:
    """The size of the data starting at ``data`` from the descriptor after it (32- or 64-bit sizes)."""
    chunk = bytes(buf[data:min(len(buf), data + _DESCRIPTOR_SCAN)])
    i = chunk.find(DESCRIPTOR_SIG)
    while i >= 0:
        if i + 16 <= len(chunk) and struct.unpack_from("<L", chunk, i + 8)[0] == i:
            return i
        if i + 24 <= len(chunk) and struct.unpack_from("<Q", chunk, i + 8)[0] == i:
            return i
        i = chunk.find(DESCRIPTOR_SIG, i + 1)
    return None


def _descriptor_length(buf: Source, pos: int) -> int:
    """Bytes of the data descriptor at ``pos``: 16, or 24 with zip64 sizes (the next header follows)."""
    if bytes(buf[pos:pos + 4]) != DESCRIPTOR_SIG:
        return 0
    return 16 if bytes(buf[pos + 16:pos + 20]) in (LOCAL_SIG, CENTRAL_SIG, b"") else 24


def _check_overlaps(members: list[Member]) -> None:
    ordered = sorted(members, key=operator.itemgetter(3))  # header_offset
    for a, b in zip(ordered, ordered[1:], strict=False):
        if a.offset + a.stored_size > b.header_offset:
            raise _fail(b.header_offset, f"members {a.name!r} and {b.name!r} overlap")


def fold(name: str) -> str:
    """A record name as torch's lookup (miniz) compares it: its bytes with ASCII letters in lower case."""
    if name.isascii():
        return name.lower()
    return name.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")


class Records(dict[str, Member]):
    """The members by name relative to the root, looked up as torch does: raw name bytes compared with
    ASCII case ignored (names equal that way are refused as duplicates, so a lookup finds at most one).
    :meth:`exact` answers as torch's record listing does, case and all."""

    def __init__(self, members: list[Member]) -> None:
        self.names = [m.name for m in members]
        super().__init__(zip([n.lower() if n.isascii() else fold(n) for n in self.names], members,
                             strict=True))
        self._exact = set(self.names)

    def __getitem__(self, name: str) -> Member:
        return super().__getitem__(fold(name))

    def get(self, name: str, default: Member | None = None) -> Member | None:  # type: ignore[override]
        return super().get(fold(name), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(fold(name))

    def exact(self, name: str) -> bool:
        return name in self._exact


def _rooted(members: list[Member]) -> tuple[str, Records]:
    """Every member lies under one root folder, whatever its name (spec/pt-zip.md#pt-zip-root-name)."""
    first = next((m for m in members if not m.name.endswith("/")), None)
    if first is None:
        raise _fail(None, "the archive holds no records")
    root = first.name.split("/", 1)[0]
    prefix = root + "/"
    cut = len(prefix)
    out: list[Member] = []
    for m in members:
        name = m[0]
        if not name.startswith(prefix):  # another first component, or the root's name without a slash
            raise _fail(m.header_offset, f"member {name!r} is not under the root folder {prefix!r}")
        if name[-1] != "/":  # a record: after the prefix there is at least one character
            out.append(_MEMBER((name[cut:], m[1], m[2], m[3], m[4], m[5])))
        elif m.size:
            raise _fail(m.header_offset, f"directory entry {name!r} has data")
    return root, Records(out)
