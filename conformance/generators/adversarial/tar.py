"""Tar ``.pt`` (torch 0.1.x) attacks on the PAX records (spec/pt-tar.md#pt-tar-members).

No installable writer makes tar checkpoints any more (torch 0.1.x), so these archives are built here
from 512-byte ustar headers (Python's ``tarfile.TarInfo.tobuf``) and the four members torch's reader
needs, holding an empty dict: each case breaks the archive in the PAX extended header before
``sys_info``, which a reader meets while walking the headers.  Python's ``tarfile`` (torch's reader of
these files) turns a PAX ``size`` that ``int()`` refuses into 0 and takes every digit ``int()`` takes
(``٦`` is 6); the spec allows ASCII digits only and counts them before converting.
"""

from __future__ import annotations

import pickle
import struct
import tarfile

from . import sources, wrap
from .record import AdvCase

GEN = "tar.py"
#: A whole checkpoint of torch 0.1's layout holding an empty dict and no tensor, written with Python's
#: pickle (protocol 2, as torch 0.1 did): only the PAX header of each case is wrong.
SYS_INFO = {"protocol_version": 1000, "little_endian": True, "type_sizes": {"short": 2, "int": 4, "long": 8}}
MEMBERS = {
    "sys_info": pickle.dumps(SYS_INFO, protocol=2),
    "pickle": pickle.dumps({}, protocol=2),
    "tensors": pickle.dumps(0, protocol=2),
    "storages": pickle.dumps(0, protocol=2) + pickle.dumps([], protocol=2),
}
BLOCK = 512
MAGIC = 0x1950A86A20F9469CFC6C  # the legacy stream's magic number (spec/pt-legacy.md#pt-legacy-magic)


def _header(name: str, size: int, kind: bytes) -> bytes:
    info = tarfile.TarInfo(name)
    info.size = size
    info.type = kind
    info.mtime = 0
    return info.tobuf(format=tarfile.USTAR_FORMAT)


def _record(key: bytes, value: bytes) -> bytes:
    """One PAX record ``"<len> <key>=<value>\\n"`` whose length counts its own digits."""
    body = b" " + key + b"=" + value + b"\n"
    n = len(body) + 1
    while len(str(n).encode()) + len(body) != n:
        n += 1
    return str(n).encode() + body


def archive(records: bytes) -> bytes:
    """The four members, the first preceded by a PAX extended header holding ``records``."""
    out = _header("././@PaxHeader", len(records), tarfile.XHDTYPE) + records + bytes(-len(records) % BLOCK)
    for name, body in MEMBERS.items():
        out += _header(name, len(body), tarfile.REGTYPE) + body + bytes(-len(body) % BLOCK)
    return out + bytes(2 * BLOCK)


def _tar_header_legacy(checksum_ok: bool) -> bytes:
    """torch's legacy object pickle, storage keys and storages after head pickles laid out so that the
    first 512 bytes are also an old-style (V7) tar header of an empty regular file: the magic number and
    the protocol version as LONG1 padded with zero bytes (every number field of the header then starts
    with NUL) and a sys_info dict whose first key, a 364-character string, holds the rest of the header:
    the checksum (correct when ``checksum_ok``), type '0' and NULs.  torch's loader ignores sys_info."""
    magic = pickle.PROTO + b"\x02" + pickle.LONG1 + bytes([121]) + MAGIC.to_bytes(121, "little") + pickle.STOP
    version = pickle.PROTO + b"\x02" + pickle.LONG1 + b"\x08" + (1001).to_bytes(8, "little") + pickle.STOP
    head = magic + version + pickle.PROTO + b"\x02" + pickle.EMPTY_DICT + pickle.MARK + pickle.BINUNICODE
    head += struct.pack("<I", 512 - len(head) - 4)
    assert len(head) == 148, len(head)
    block = bytearray(head + bytes(364))
    block[156:157] = b"0"
    total = sum(block[:148]) + 8 * 32 + sum(block[156:])
    block[148:156] = b"%06o\0 " % (total if checksum_ok else total + 1)
    sys_info = (bytes(block) + pickle.NONE
                + b"".join(pickle.BINUNICODE + struct.pack("<I", len(k)) + k + v for k, v in (
                    (b"protocol_version", pickle.BININT2 + struct.pack("<H", 1001)),
                    (b"little_endian", pickle.NEWTRUE),
                    (b"type_sizes", pickle.EMPTY_DICT + pickle.MARK + b"".join(
                        pickle.BINUNICODE + struct.pack("<I", len(n)) + n + pickle.BININT1 + bytes([w])
                        for n, w in ((b"short", 2), (b"int", 4), (b"long", 4))) + pickle.SETITEMS)))
                + pickle.SETITEMS + pickle.STOP)
    legacy = wrap.legacy_with(wrap.legacy_pickle())
    return sys_info + legacy[wrap.legacy_spans(legacy)[2][1]:]


def tar_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    def case(name: str, records: bytes, errors: list[str], feats: list[str], how: str, *,
             category: str = "reject", spec: tuple[str, ...] = ()) -> None:
        out.append(AdvCase(f"pt-tar/adv-tar-{name}", archive(records), errors, ["tar-archive"] + feats,
                           ["pt-tar.md#pt-tar-members", *spec], how, None, GEN, category=category))

    base = ("a checkpoint in torch 0.1's tar layout holding an empty dict (sys_info, pickle, tensors and "
            "storages pickled by Python, ustar headers by tarfile.TarInfo.tobuf), sys_info preceded by a PAX "
            "extended header")
    case("pax-size-superscript-two", _record(b"size", "\u00b2".encode()), ["bad-container"],
         ["adv-digit-text"],
         f"{base} whose size record is '\u00b2' (UTF-8 c2 b2): str.isdigit() calls it a digit, int() refuses "
         "it and Python's tarfile then takes size 0. PAX numbers are ASCII digits only")
    case("pax-size-arabic-indic-six", _record(b"size", "\u0666".encode()), ["bad-container"],
         ["adv-digit-text"],
         f"{base} whose size record is '\u0666' (ARABIC-INDIC DIGIT SIX): Python's int(), and so tarfile, "
         "reads it as 6. PAX numbers are ASCII digits only")
    case("pax-size-5000-digits", _record(b"size", b"1" * 5000), ["truncated"], ["adv-digit-text",
                                                                                 "adv-size-beyond-eof"],
         f"{base} whose size record has 5000 digits: past the end of any file, which a reader must find "
         "by counting the digits (Python's int() refuses more than 4300)")
    case("pax-length-5000-digits", b"1" * 5000 + b" path=sys_info\n", ["bad-container"],
         ["adv-digit-text"],
         f"{base} whose record length is 5000 digits, longer than the header: a malformed record, found "
         "without converting the digits")
    case("pax-length-superscript-two", "1\u00b2 path=sys_info\n".encode(), ["bad-container"],
         ["adv-digit-text"],
         f"{base} whose record length is '1\u00b2': ASCII digits only")
    legacy = ["legacy-stream", "legacy-magic", "dtype-float32", "pickle-persistent-id"]
    magic = ["pt-legacy.md#pt-legacy-magic", "canonical.md#canonical-detect"]
    out.append(AdvCase(
        "pt-tar/adv-tar-v7-header-over-legacy-stream", _tar_header_legacy(True), ["bad-container"],
        ["tar-archive", "adv-polyglot", *legacy], [*magic, "pt-tar.md#pt-tar-members"],
        "a legacy stream (torch's object pickle and storages) whose first 512 bytes are also an old-style "
        "(V7) tar header: the magic number and protocol version written as LONG1 padded with zero bytes and "
        "a sys_info dict whose first key holds the header's checksum and type. Python's tarfile accepts the "
        "header, so torch takes the tar path (and finds no tar checkpoint)",
        sources.torch_legacy(), GEN))
    out.append(AdvCase(
        "pt-legacy/adv-legacy-padded-head-pickles", _tar_header_legacy(False), [],
        legacy, magic,
        "the same stream with the tar checksum off by one: no tar header, a legacy stream with padded "
        "LONG1 numbers and an extra sys_info key (torch ignores sys_info)",
        sources.torch_legacy(), GEN, category="accept"))
    return out
