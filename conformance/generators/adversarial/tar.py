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
import tarfile

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
    return out
