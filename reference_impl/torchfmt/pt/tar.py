"""The tar ``.pt`` format of torch 0.1.x (January-March 2017; spec/pt-tar.md).

A POSIX (PAX) tar archive with four members: ``sys_info`` (a pickle), ``storages`` (a count, then per
storage a pickled ``(key, location, type)`` header, an 8-byte element count and the little-endian
elements, then a pickled list of views), ``tensors`` (a count, then per tensor a pickled ``(key,
storage_key, type)`` header and its raw view: ndim as int32 plus 4 ignored bytes, sizes, strides and
offset as int64) and ``pickle`` (the object, naming tensors and storages by ``str(key)`` persistent ids
and pickled modules by ``(class, source_file, source)``).  Storages are zero-copy views of the file.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass
from typing import Any

from ..detect import TAR_NUMBER_FIELDS, tar_number
from ..errors import FormatError, quote
from ..limits import TAR_PAX_BYTES
from ..model import Document, Global, Storage, Tensor
from ..pickle.globals import storage_dtype
from ..pickle.machine import Machine
from ..pickle.rebuild import check_view
from .archive import decode_location
from .legacy import check_sys_info

BLOCK = 512
MEMBERS = ("sys_info", "pickle", "tensors", "storages")
TAR_PROTOCOL_VERSION = 1000
_USTAR_MAGICS = (b"ustar\x0000", b"ustar  \x00")
_PAX_RECORD = re.compile(rb"([0-9]+) ")  # a bytes pattern: ASCII digits only
#: A decimal the archive writes (a PAX record length or size): ASCII digits only, never ``²`` or other
#: digits ``str.isdigit`` and ``int`` take.
_DECIMAL = re.compile(r"[0-9]+", re.ASCII)


@dataclass(frozen=True)
class TarMember:
    name: str
    offset: int
    size: int


def _octal(field: bytes, at: int) -> int:
    """A numeric header field: octal text (NUL/space padded) or GNU base-256: 0x80 then the value
    big-endian (0xff, a negative number, and any other first byte with the high bit are refused)."""
    if field[:1] and field[0] & 0x80:
        if field[0] != 0x80:
            raise FormatError("bad-container", at, f"tar number field {ascii(field)} is negative or not a "
                                                   "GNU base-256 number")
        return int.from_bytes(field[1:], "big")
    text = field.rstrip(b"\0 ").lstrip(b" ")
    if not text:
        return 0
    if not re.fullmatch(rb"[0-7]+", text):
        raise FormatError("bad-container", at, f"tar number field {ascii(field)} is not octal")
    return int(text, 8)


def _decimal(text: str | bytes, most: int) -> int | None:
    """The value of ASCII decimal ``text`` when it is at most ``most``, else ``None``; the digits are
    counted before ``int()`` sees them (spec/pt-tar.md#pt-tar-members)."""
    if isinstance(text, bytes):
        text = text.decode("ascii", "replace")
    if not _DECIMAL.fullmatch(text):
        return None
    digits = text.lstrip("0")
    if len(digits) > len(str(most)):
        return None
    value = int(digits or "0")
    return value if value <= most else None


def _pax(data: bytes, at: int) -> dict[str, str]:
    """PAX extended header records ``"<len> <key>=<value>\\n"``."""
    if len(data) > TAR_PAX_BYTES.value:
        raise FormatError("limit-exceeded", at, f"a PAX extended header of {len(data)} bytes "
                                                f"(at most {TAR_PAX_BYTES.value})")
    out: dict[str, str] = {}
    i = 0
    while i < len(data):
        m = _PAX_RECORD.match(data, i)
        n = (_decimal(m.group(1), len(data) - i) or 0) if m else 0
        if not m or n <= len(m.group(0)) or i + n > len(data) or data[i + n - 1:i + n] != b"\n":
            raise FormatError("bad-container", at, "malformed PAX extended header")
        key, eq, value = data[m.end():i + n - 1].partition(b"=")
        if not eq:
            raise FormatError("bad-container", at, "PAX record without '='")
        out[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
        i += n
    return out


def read_members(buf: memoryview) -> dict[str, TarMember]:
    """Walk the tar headers (spec/pt-tar.md#pt-tar-members): checksums, ustar magic, regular files or
    PAX headers only, no member twice, no data past the end, only zero blocks after the end marker."""
    members: dict[str, TarMember] = {}
    pax: dict[str, str] = {}
    pos = 0
    while True:
        if pos + BLOCK > len(buf):
            raise FormatError("truncated", pos, "the tar archive ends without its end-of-archive block")
        header = bytes(buf[pos:pos + BLOCK])
        if header == bytes(BLOCK):
            break
        stored = _octal(header[148:156], pos + 148)
        if stored != sum(header[:148]) + 8 * 32 + sum(header[156:]):
            raise FormatError("bad-container", pos, "tar header checksum mismatch")
        for start, end in TAR_NUMBER_FIELDS:  # at a later header it can't read, tarfile ends the archive
            if tar_number(header[start:end]) is None:
                raise FormatError("bad-container", pos + start,
                                  f"tar number field {ascii(header[start:end])} is no number tarfile reads")
        if header[257:265] not in _USTAR_MAGICS:
            raise FormatError("bad-container", pos + 257, "not a ustar header")
        size = _octal(header[124:136], pos + 124)
        kind = header[156:157]
        data = pos + BLOCK
        if data + size > len(buf):
            raise FormatError("truncated", pos, f"tar member of {size} bytes reaches past the end",
                                  needed_end=data + size)
        name = header[:100].split(b"\0", 1)[0]
        prefix = header[345:500].split(b"\0", 1)[0]
        full = (prefix + b"/" + name if prefix else name).decode("utf-8", "replace")
        if kind == b"x":
            pax = _pax(bytes(buf[data:data + size]), data)
        elif kind == b"g":
            pass  # global PAX header: nothing torch needs
        elif kind in (b"0", b"\0"):
            full = pax.get("path", full)
            if "size" in pax:
                pax_size = _decimal(pax["size"], len(buf))
                if pax_size is None:
                    if _DECIMAL.fullmatch(pax["size"]):
                        raise FormatError("truncated", pos, "the PAX size reaches past the end")
                    raise FormatError("bad-container", pos, f"PAX size {pax['size'][:20]!a} is not an "
                                                            "ASCII decimal")
                size = pax_size
                if data + size > len(buf):
                    raise FormatError("truncated", pos, f"tar member of {size} bytes reaches past the end",
                                  needed_end=data + size)
            pax = {}
            if full in members:
                raise FormatError("bad-container", pos, f"duplicate tar member {_quote(full)}")
            members[full] = TarMember(full, data, size)
        else:
            raise FormatError("bad-container", pos, f"tar member of type {ascii(kind)} (only regular files)")
        pos = data + (size + BLOCK - 1) // BLOCK * BLOCK
    if any(buf[pos:]):
        raise FormatError("bad-container", pos, "bytes other than zeros after the end of the archive")
    for name in MEMBERS:
        if name not in members:
            raise FormatError("bad-container", None, f"the archive has no {name!r} member")
    return members


def read_tar(buf: Any, *, inert: bool = False) -> Document:
    """Read a tar ``.pt`` file held in ``buf``."""
    buf = buf if isinstance(buf, memoryview) else memoryview(buf)
    members = read_members(buf)
    header = Machine(buf, inert=inert)
    m = members["sys_info"]
    sys_info = header.load_exact(m.offset, m.offset + m.size)
    little_endian = check_sys_info(sys_info, m.offset, TAR_PROTOCOL_VERSION)
    objects: dict[int, Storage | Tensor] = {}
    _read_storages(buf, members["storages"], header, objects, little_endian)
    _read_tensors(buf, members["tensors"], header, objects)
    m = members["pickle"]

    def persistent_load(pid: Any, offset: int) -> Any:
        """spec/pt-tar.md#pt-tar-pickle: ``str(key)`` of a tensor or storage, or a module 3-tuple."""
        if isinstance(pid, tuple) and len(pid) == 3 and isinstance(pid[0], Global):
            return pid[0]
        key = _decimal(pid, 1 << 63) if isinstance(pid, str) else None
        if key is None or key not in objects:
            raise FormatError("bad-reference", offset,
                              f"persistent id {_quote(pid)} names no tensor or storage")
        return objects[key]

    obj = Machine(buf, persistent_load=persistent_load, inert=inert).load_exact(m.offset, m.offset + m.size)
    return Document("pt-tar", [obj], extra={"sys_info": sys_info})


def _quote(value: Any) -> str:
    """A short escaped rendering of a persistent id for an error message."""
    if isinstance(value, (str, bytes)):
        text = ascii(value[:40])
        return text[:40] + "..." if len(value) > 40 or len(text) > 40 else text
    return f"a {type(value).__name__}"


def _count(header: Machine, pos: int, end: int) -> tuple[int, int]:
    n, pos = header.load(pos, end)
    if type(n) is not int or n < 0:
        raise FormatError("bad-length", pos, f"record count {quote(n)}")
    return n, pos


def _record(header: Machine, pos: int, end: int) -> tuple[Any, int]:
    """One record header pickle; the member ending first means the count promised too many."""
    if pos >= end:
        raise FormatError("truncated", pos, "the member ends before its last record")
    return header.load(pos, end)


def _read_storages(buf: memoryview, m: TarMember, header: Machine, objects: dict[int, Any],
                   little_endian: bool) -> None:
    """spec/pt-tar.md#pt-tar-storages."""
    end = m.offset + m.size
    n, pos = _count(header, m.offset, end)
    for _ in range(n):
        at = pos
        record, pos = _record(header, pos, end)
        if not (isinstance(record, tuple) and len(record) == 3 and type(record[0]) is int):
            raise FormatError("bad-pickle", at, "storage header must be (key, location, type)")
        key, location, stype = record
        dtype = storage_dtype(stype)
        if dtype is None:
            raise FormatError("bad-reference", at, f"storage header names {quote(stype)}, not a storage type")
        if pos + 8 > end:
            raise FormatError("truncated", pos, "storage count reaches past the member")
        numel = int.from_bytes(buf[pos:pos + 8], "little")  # as torch reads it, whatever sys_info says
        if not little_endian and pos + 8 + numel * dtype.itemsize > end:  # 0.1 on a big-endian host
            numel = int.from_bytes(buf[pos:pos + 8], "big")
        nbytes = numel * dtype.itemsize
        if pos + 8 + nbytes > end:
            raise FormatError("truncated", pos, f"storage {key} of {numel} elements reaches past the member")
        if key in objects:
            raise FormatError("bad-reference", at, f"storage key {key} twice")
        objects[key] = Storage(dtype, numel, device=decode_location(location, at),
                               buffer=buf[pos + 8:pos + 8 + nbytes], key=str(key))
        pos += 8 + nbytes
    at = pos
    views = header.load_exact(pos, end)
    if not isinstance(views, list):
        raise FormatError("bad-pickle", at, "storage views must be a list")
    for view in views:
        if not (isinstance(view, tuple) and len(view) == 4 and all(type(x) is int for x in view)):
            raise FormatError("bad-pickle", at, "a storage view must be (key, root_key, offset, numel)")
        key, root_key, start, numel = view
        root = objects.get(root_key)
        if not isinstance(root, Storage) or key in objects:
            raise FormatError("bad-reference", at, f"view {key} of unknown storage {root_key}")
        if start < 0 or numel < 0 or start + numel > root.numel:
            raise FormatError("out-of-bounds", at, f"view [{start}, {start + numel}) of {root.numel}")
        width = root.dtype.itemsize
        objects[key] = Storage(root.dtype, numel, device=root.device, key=str(key),
                               buffer=root.buffer[start * width:(start + numel) * width])


def _read_tensors(buf: memoryview, m: TarMember, header: Machine, objects: dict[int, Any]) -> None:
    """spec/pt-tar.md#pt-tar-tensors: ndim is an int32 followed by 4 bytes torch ignores (writers left
    garbage there)."""
    end = m.offset + m.size
    n, pos = _count(header, m.offset, end)
    for _ in range(n):
        at = pos
        record, pos = _record(header, pos, end)
        if not (isinstance(record, tuple) and len(record) == 3 and type(record[0]) is int
                and type(record[1]) is int):
            raise FormatError("bad-pickle", at, "tensor header must be (key, storage_key, type)")
        key, storage_key, _tensor_type = record
        storage = objects.get(storage_key)
        if not isinstance(storage, Storage):
            raise FormatError("bad-reference", at,
                              f"tensor {quote(key)} names unknown storage {quote(storage_key)}")
        if pos + 8 > end:
            raise FormatError("truncated", pos, "tensor view reaches past the member")
        ndim = struct.unpack_from("<i", buf, pos)[0]
        if ndim < 0:
            raise FormatError("bad-length", pos, f"tensor of {ndim} dimensions")
        if pos + 8 + 16 * ndim + 8 > end:
            raise FormatError("truncated", pos, "tensor view reaches past the member")
        size = struct.unpack_from(f"<{ndim}q", buf, pos + 8)
        stride = struct.unpack_from(f"<{ndim}q", buf, pos + 8 + 8 * ndim)
        offset = struct.unpack_from("<q", buf, pos + 8 + 16 * ndim)[0]
        check_view(storage, offset, size, stride, pos)
        if key in objects:
            raise FormatError("bad-reference", at, f"tensor key {key} twice")
        objects[key] = Tensor(storage.dtype, size, stride, offset, storage, device=storage.device)
        pos += 16 + 16 * ndim
    if pos != end:
        raise FormatError("bad-container", pos, f"{end - pos} bytes after the last tensor")
