"""Tar ``.pt`` (torch 0.1.x) attacks on the PAX records (spec/pt-tar.md#pt-tar-members).

No installable writer makes tar checkpoints any more (torch 0.1.x), so these archives are built here
from 512-byte ustar headers (Python's ``tarfile.TarInfo.tobuf``) and the four members torch's reader
needs, holding an empty dict: each case breaks the archive in the PAX extended header before
``sys_info``, which a reader meets while walking the headers.  Python's ``tarfile`` (torch's reader of
these files) turns a PAX ``size`` that ``int()`` refuses into 0 and takes every digit ``int()`` takes
(``٦`` is 6); the spec allows ASCII digits only and counts them before converting.
"""

from __future__ import annotations

import collections
import io
import pickle
import struct
import tarfile
from typing import Any

from . import sources, tar_writer, wrap
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
    digits_why = ("PAX numbers are ASCII decimal digits (POSIX); Python's int(), and so tarfile, also takes "
                  "other Unicode digits or falls back to 0, which a reader in another language would read as "
                  "another size or refuse")
    for c in out:
        c.why_stricter = digits_why
    out.append(AdvCase(
        "pt-tar/adv-tar-pax-record-without-newline", archive(_record(b"path", b"sys_info")[:-1] + b"X"),
        ["bad-container"], ["tar-archive", "tar-pax"], ["pt-tar.md#pt-tar-members"],
        f"{base} whose one record 'NN path=sys_info' ends with 'X' where its newline belongs", None, GEN,
        why_stricter="a PAX record is '<length> <key>=<value>\\n' (POSIX); the tarfile of torch's Python "
        "3.11.7 takes the value and ignores the last byte, the tarfile of Python releases with the fix for "
        "CVE-2024-6232 (Debian's 3.11.2 on this machine among them) refuses such a record"))
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
    return out + layout_cases()


# -- torch 0.1's layout, written from torch 2.13 objects (tar_writer) ------------------------------

LAYOUT = ("torch 0.1's tar checkpoint layout written by generators/adversarial/tar_writer.py from torch "
          "2.13 objects (member pickles by Python's pickle, protocol 2; storage counts and bytes by torch's "
          "UntypedStorage._write_file; headers by tarfile, PAX format)")
STORAGES = "pt-tar.md#pt-tar-storages"
TENSORS = "pt-tar.md#pt-tar-tensors"
OBJECT = "pt-tar.md#pt-tar-pickle"
MEMBERS_ANCHOR = "pt-tar.md#pt-tar-members"


def _state_dict() -> Any:
    """Several float32 tensors on shared storages, views with offsets and strides, a scalar, one tensor
    named twice, and an int64 tensor."""
    import torch

    g = torch.Generator().manual_seed(18)
    w = torch.randn(3, 4, generator=g)
    b = torch.randn(4, generator=g)
    return collections.OrderedDict(
        weight=w, bias=b, weight_t=w.t(), row=w[1], column=w[:, 2], corner=w[1:, 2:],
        scalar=w[2, 3], again=w, steps=torch.arange(5), bias_tail=b[2:])


def _storage_types() -> dict[str, Any]:
    """A storage of every type torch's tar loader knows (``torch.storage._dtype_to_storage_type_map``),
    bare, and a tensor over each storage whose dtype a tensor can have without quantization."""
    import torch

    out: dict[str, Any] = {}
    for dtype, name in torch.storage._dtype_to_storage_type_map().items():
        if name.startswith("Q"):  # quantized: no tensor views such a storage by set_
            raw = torch.tensor([1, 2, 250, 7], dtype=torch.uint8)
            qwidth = torch._utils._element_size(dtype)
            if qwidth > 1:
                raw = torch.arange(4 * qwidth, dtype=torch.uint8) * 17
            u = raw.untyped_storage()
            out[name] = torch.storage.TypedStorage(wrap_storage=u, dtype=dtype, _internal=True)
            continue
        if dtype == torch.bool:
            t = torch.tensor([True, False, True])
        elif dtype.is_complex:
            t = torch.complex(torch.arange(3.0), -torch.arange(3.0)).to(dtype)
        else:
            t = (torch.arange(3) * 3 - 2).to(dtype) if dtype != torch.uint8 else torch.arange(3, dtype=dtype)
        out[name] = torch.storage.TypedStorage(wrap_storage=t.untyped_storage(), dtype=dtype, _internal=True)
        if hasattr(torch, name.removesuffix("Storage") + "Tensor"):  # no torch.Complex*Tensor type
            out[name.removesuffix("Storage") + "Tensor"] = t
    return out


def _parameters() -> Any:
    import torch

    g = torch.Generator().manual_seed(7)
    p = torch.nn.Parameter(torch.randn(2, 3, generator=g))
    frozen = torch.nn.Parameter(torch.randn(3, generator=g, dtype=torch.float64), requires_grad=False)
    return collections.OrderedDict(weight=p, frozen=frozen, weight_data_row=p.data[1], weight_again=p)


def _storage_views() -> Any:
    """0.1's storage views: two views cutting one root (overlapping), tensors over each, the root bare."""
    import torch

    root = torch.arange(10, dtype=torch.float64) * 1.5
    first, second = tar_writer.StorageView(root, 2, 5), tar_writer.StorageView(root, 4, 6)
    return {"root": root, "first": first, "second": second,
            "on_first": tar_writer.ViewTensor(first, (2, 2), (1, 2), 1),
            "on_second": tar_writer.ViewTensor(second, (3,), (2,), 0), "first_again": first}


def _cuda() -> Any:
    import torch

    return {"a": tar_writer.OnDevice(torch.arange(3, dtype=torch.float32), "cuda:0"),
            "b": tar_writer.OnDevice(torch.ones(2, dtype=torch.int64), "cuda:1"), "cpu": torch.zeros(2)}


def _empty_shared() -> Any:
    import torch

    z = torch.zeros(0, 4, dtype=torch.int16)
    return {"z": z, "t": z.t(), "cols": z[:, 1:3]}


def _size_field(size: int, first: int = 0x80) -> bytes:
    """A 12-byte GNU base-256 number: ``first`` (0x80 positive) then the value big-endian."""
    return bytes([first]) + size.to_bytes(11, "big")


def _pax_archive(parts: dict[str, bytes], *, pax: tuple[str, ...] = (),
                 extra: tuple[tuple[str, bytes], ...] = (), sizes: dict[str, str] | None = None) -> bytes:
    """The members ``extra`` then ``parts`` (tar_writer.ORDER) as ustar headers (tarfile.TarInfo.tobuf),
    each member of ``pax`` preceded by a PAX extended header whose ``path`` and ``size`` records give its
    name and size (``sizes``: the size record's text) over a ustar header named ``member`` of size 0."""
    sizes = sizes or {}
    out = b""
    for name, body in [*extra, *((n, parts[n]) for n in tar_writer.ORDER)]:
        if name in pax:
            rec = _record(b"path", name.encode()) + _record(b"size", sizes.get(name, str(len(body))).encode())
            out += _header(f"PaxHeaders/{name}", len(rec), tarfile.XHDTYPE) + rec + bytes(-len(rec) % BLOCK)
            out += _header("member", 0, tarfile.REGTYPE)
        else:
            out += _header(name, len(body), tarfile.REGTYPE)
        out += body + bytes(-len(body) % BLOCK)
    return out + bytes(2 * BLOCK)


def _checksum(data: bytes, field: Any, at: int = 0) -> bytes:
    """``data`` with the checksum of the header at ``at`` rewritten: ``field(unsigned, signed)``, the
    8-byte field from the two sums Python's tarfile accepts (the field read as spaces)."""
    d = bytearray(data)
    d[at + 148:at + 156] = b" " * 8
    block = d[at:at + BLOCK]
    d[at + 148:at + 156] = field(sum(block), sum(b - 256 if b > 127 else b for b in block))
    return bytes(d)


def _patched(data: bytes, at: int, raw: bytes) -> bytes:
    """``data`` with ``raw`` written at ``at`` in its first header, the checksum recomputed (unsigned)."""
    d = bytearray(data)
    d[at:at + len(raw)] = raw
    return _checksum(bytes(d), lambda unsigned, _signed: b"%06o\0 " % unsigned)


def _later_patched(data: bytes, header: int, at: int, raw: bytes) -> bytes:
    """``data`` with ``raw`` written at ``at`` in the header at ``header``, its checksum recomputed."""
    d = bytearray(data)
    d[header + at:header + at + len(raw)] = raw
    return _checksum(bytes(d), lambda unsigned, _signed: b"%06o\0 " % unsigned, header)


def _records(member: bytes) -> list[tuple[int, int]]:
    """The (start, end) of each pickle at the start of a ``tensors`` member (the count, then the first
    tensor's header): torch's own pickle reads them (the generator's own files only)."""
    import pickle as pkl

    f = io.BytesIO(member)
    out = []
    for _ in range(2):
        start = f.tell()
        pkl.load(f)
        out.append((start, f.tell()))
    return out


def layout_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    def case(name: str, data: bytes, errors: list[str], feats: list[str], spec: list[str], how: str, *,
             why: str = "") -> None:
        out.append(AdvCase(f"pt-tar/adv-tar-{name}", data, errors, ["tar-archive", *feats],
                           [MEMBERS_ANCHOR, *spec], f"{LAYOUT}: {how}", None, GEN,
                           category="reject" if errors else "accept", why_stricter=why))

    sd = tar_writer.members(_state_dict(), garbage=b"\0\0\0\x80")
    views = [STORAGES, TENSORS, OBJECT, "tensors.md#tensors-view", "tensors.md#tensors-storage-offset",
             "tensors.md#tensors-view-bounds", "pt-tar.md#pt-tar-sys-info"]
    case("state-dict", tar_writer.archive(sd), [],
         ["state-dict", "pickle-ordered-dict", "shared-storage", "storage-offset", "non-contiguous",
          "zero-dim", "pickle-memo", "dtype-float32", "dtype-int64", "pickle-persistent-id"], views,
         "an OrderedDict of float32 tensors on two storages (a 3x4 weight, its transpose, a row, a column, "
         "a corner, a 0-d element, the weight named twice; a bias and its tail) and an int64 arange; each "
         "ndim's high half is 0x80000000, as in files from the wild")
    case("members-storages-first", tar_writer.archive(sd, order=("storages", "tensors", "pickle",
                                                                   "sys_info")), [],
         ["state-dict", "shared-storage", "dtype-float32"], views,
         "the state-dict case's members in the reverse order (the spec allows any order)")
    case("size-base-256", tar_writer.archive(sd, size_field={"storages": _size_field(len(sd["storages"])),
                                                             "pickle": _size_field(len(sd["pickle"]))}),
         [], ["tar-base-256", "state-dict", "dtype-float32"], views,
         "the state-dict case with the pickle and storages headers' size fields in GNU base-256 form "
         "(0x80, then the size in 11 bytes big-endian), checksums recomputed: Python's tarfile reads them")
    case("size-base-256-first-byte-0x81",
         tar_writer.archive(sd, size_field={"storages": _size_field(len(sd["storages"]), 0x81)}),
         ["bad-container"], ["tar-base-256", "state-dict"], [],
         "the storages header's size field in base-256 form with first byte 0x81: GNU base-256 numbers "
         "start with 0x80 (positive) or 0xff (negative), and tarfile refuses any other first byte with "
         "the high bit set")
    case("size-base-256-negative",
         tar_writer.archive(sd, size_field={"storages": bytes([0xFF]) + (2**88 - 16).to_bytes(11, "big")}),
         ["bad-container"], ["tar-base-256", "state-dict"], [],
         "the storages header's size field in base-256 form with first byte 0xff: a negative size (-16)")
    le = {**sd, "sys_info": pickle.dumps({**tar_writer.SYS_INFO, "little_endian": False}, protocol=2)}
    case("little-endian-false-little-endian-counts", tar_writer.archive(le), [],
         ["state-dict", "dtype-float32"], [STORAGES, "pt-tar.md#pt-tar-sys-info"],
         "the state-dict case with sys_info saying little_endian False over the same little-endian storage "
         "counts: torch reads the counts little-endian whatever sys_info says")
    name = b"FloatStorage"
    as_str = sd["storages"].replace(pickle.GLOBAL + b"torch\n" + name + b"\n",
                                    pickle.BINUNICODE + struct.pack("<I", len(name)) + name, 1)
    assert as_str != sd["storages"]
    case("storage-type-str", tar_writer.archive({**sd, "storages": as_str}), ["bad-reference"],
         ["state-dict"], [STORAGES],
         "the state-dict case whose first storage header names its type by the str 'FloatStorage', not the "
         "global torch.FloatStorage")
    case("storage-types", tar_writer.tar_checkpoint(_storage_types()), [],
         ["bare-storage", "pickle-persistent-id", "dtype-float64", "dtype-float32", "dtype-float16",
          "dtype-bfloat16", "dtype-int64", "dtype-int32", "dtype-int16", "dtype-int8", "dtype-uint8",
          "dtype-bool", "dtype-complex128", "dtype-complex64", "dtype-qint8", "dtype-qint32",
          "dtype-quint8", "dtype-quint4x2", "dtype-quint2x4"],
         [STORAGES, TENSORS, OBJECT, "tensors.md#tensors-dtype-table"],
         "a storage of every storage type torch's tar loader knows (torch.storage."
         "_dtype_to_storage_type_map: 12 plain, 5 quantized), each bare, and a tensor over each plain one "
         "with a legacy tensor type (tensor_type torch.<Stem>Tensor: all but the complex ones, which have "
         "none)")
    case("parameters", tar_writer.tar_checkpoint(_parameters()), [],
         ["parameter", "requires-grad", "shared-storage", "storage-offset", "dtype-float32", "dtype-float64",
          "pickle-memo", "pickle-reduce", "pickle-ordered-dict"],
         [STORAGES, TENSORS, OBJECT, "pt-legacy.md#pt-legacy-rebuild-tensor"],
         "Parameters as 0.1 pickled Variables (NEWOBJ torch.nn.parameter.Parameter, BUILD with (data, grad "
         "None, backward_hooks OrderedDict(), requires_grad, volatile False)), one requiring grad and one "
         "not, a tensor over a row of the first one's storage and the first one named twice")
    case("storage-views", tar_writer.tar_checkpoint(_storage_views()), [],
         ["bare-storage", "shared-storage", "storage-offset", "overlapping-view", "dtype-float64",
          "pickle-memo"], [STORAGES, TENSORS, OBJECT, "tensors.md#tensors-view"],
         "a float64 root storage of 10 elements, two storage views of it ((view, root, 2, 5) and (view, "
         "root, 4, 6), overlapping) in the storages member's view list, a tensor over each view, and the "
         "root bare")
    case("cuda-locations", tar_writer.tar_checkpoint(_cuda()), [],
         ["cuda-location", "dtype-float32", "dtype-int64"], [STORAGES, TENSORS, OBJECT],
         "storages whose headers give locations cuda:0 and cuda:1 (storage types torch.cuda.FloatStorage "
         "and torch.cuda.LongStorage, tensor types torch.cuda.*Tensor) beside a cpu one; described on the "
         "device the file gives, as torch loads them with a map_location that keeps them on the CPU")
    case("empty-storage-shared", tar_writer.tar_checkpoint(_empty_shared()), [],
         ["empty-tensor", "shared-storage", "dtype-int16"],
         [STORAGES, TENSORS, "tensors.md#tensors-storage-identity"],
         "three tensors of the tensors member over one empty int16 storage (a 0x4 tensor, its transpose and "
         "a column slice): the tar loader makes each storage once, from the storages member, so the three "
         "share it")
    _edge_cases(sd, case)
    return out


def _edge_cases(sd: dict[str, bytes], case: Any) -> None:
    """Headers, PAX records and member records at the edges of what torch's loader (Python's tarfile and
    torch's member readers) takes: the state-dict case's members in other archives."""
    import torch

    members = [MEMBERS_ANCHOR]
    detect = ["canonical.md#canonical-detect", MEMBERS_ANCHOR]
    header = ["tar-header-edge", "state-dict", "dtype-float32"]
    case("pax-path-and-size", _pax_archive(sd, pax=tar_writer.ORDER), [], ["tar-pax", "state-dict",
                                                                          "dtype-float32"], members,
         "the state-dict case's members, each preceded by a PAX extended header whose path and size records "
         "name it and give its size, over a ustar header named 'member' whose size field is 0: the PAX "
         "records override the header's")
    short = _pax_archive(sd, pax=("storages",), sizes={"storages": "0" * 10})
    case("pax-size-past-end",
         _pax_archive(sd, pax=("storages",), sizes={"storages": str(len(short) - 1).zfill(10)}),
         ["truncated"], ["tar-pax", "adv-size-beyond-eof", "state-dict"], members,
         "the state-dict case whose storages member's PAX size record (ten digits, zero-padded) is the "
         "file's length less one: fewer digits than the file's size, a size no file this long can hold "
         "after the header")
    x100 = "x" * 100
    rec = _record(b"path", (x100 + "0").encode())
    extra = (_header(x100, 2, tarfile.REGTYPE) + b"{}" + bytes(BLOCK - 2)
             + _header("PaxHeaders/y", len(rec), tarfile.XHDTYPE) + rec + bytes(-len(rec) % BLOCK)
             + _header("y", 2, tarfile.REGTYPE) + b"[]" + bytes(BLOCK - 2))
    case("name-fills-100-bytes", extra + _pax_archive(sd), [], [*header, "tar-pax"], members,
         "the state-dict case after two extra members torch ignores: one whose ustar name fills all 100 "
         "bytes of the name field (100 'x', no NUL: the mode field '0000644' follows), one whose PAX path "
         "is those 100 'x' and '0'. The names differ: a name is at most the 100 bytes of its field")
    case("first-member-name-json", _pax_archive(sd, extra=(('{ "notes": [] }', b"{}"),)), [], header,
         detect, "the state-dict case after an extra first member named '{ \"notes\": [] }': the file "
         "starts '{ \"', no JSON document for canonical-detect ('{' immediately followed by '\"', '{', '[', "
         "']' or '}'), and a tar header tarfile takes")
    base = _pax_archive(sd)
    case("checksum-base-256", _checksum(base, lambda u, _s: b"\x80" + u.to_bytes(7, "big")), [], header,
         detect, "the state-dict case whose first header's checksum field is in GNU base-256 form (0x80, "
         "then the sum in 7 bytes big-endian): Python's tarfile reads every number field so")
    high = bytearray(base)
    high[157:257] = b"\x80" * 100  # linkname: unused by a regular file
    high[500:512] = b"\x80" * 12  # the header's padding
    case("checksum-base-256-wraps-to-signed-sum",
         _checksum(bytes(high), lambda _u, signed: b"\x80" + (2**56 + signed).to_bytes(7, "big")),
         ["unknown-format"], header, detect,
         "the state-dict case whose first header holds 0x80 in its linkname and padding bytes (a signed "
         "sum below zero) and a base-256 checksum field 0x80 then 2^56 plus that signed sum: 0x80 makes a "
         "positive number, no sum of the header, so tarfile refuses the header, torch's loader then "
         "unpickles the file and fails; no tar, and no .t7 starts with 's'")
    signed = bytearray(base)
    signed[265:269] = "\u00e9".encode() + b"\0\0"  # uname
    case("checksum-signed", _checksum(bytes(signed), lambda _u, s: b"%06o\0 " % s), ["bad-container"],
         header, detect,
         "the state-dict case whose first header's uname is '\u00e9' (UTF-8 c3 a9) and whose checksum is "
         "the signed sum of its bytes (bytes above 0x7f counted negative), which Python's tarfile also takes",
         why="the checksum is the unsigned sum of the header's bytes (POSIX); Python's tarfile also takes "
         "the signed sum, a workaround for old Sun tars that summed signed chars, which torch 0.1's writer "
         "(Python's tarfile, which writes the unsigned sum) never wrote")
    for name, at, raw, what in (
            ("devmajor-not-octal", 337, b"x000000\0", "devmajor field 'x000000': its first byte is no "
             "octal digit"),
            ("mode-last-byte-not-octal", 100, b"0000644x", "mode field '0000644x': its last byte is no octal "
             "digit (no NUL ends the text before it)")):
        case(f"first-header-{name}", _patched(base, at, raw), ["unknown-format"], header, detect,
             f"the state-dict case whose first header's {what}, the checksum recomputed: Python's tarfile "
             "refuses the header, torch's loader then unpickles the file and fails; no tar, and no .t7 "
             "starts with 's'")
    case("first-header-devmajor-without-nul", _patched(base, 329, b"0000000 1234567\0"), [], header, members,
         "the state-dict case whose first header's devmajor field is '0000000 ' (no NUL: the space fills its "
         "8th byte) and devminor '1234567', the checksum recomputed: each 8-byte field reads on its own, "
         "Python's tarfile takes the header (device numbers of a regular file are not used) and torch "
         "loads it")
    # a later header tarfile cannot read: tarfile ends the archive there, unseen (no error)
    last = sum(BLOCK + len(sd[n]) + -len(sd[n]) % BLOCK for n in tar_writer.ORDER[:-1])  # storages' header
    case("later-header-mode-not-octal", _later_patched(base, last, 100, b"0000644x"), ["bad-container"],
         header, members,
         "the state-dict case whose last member's (storages) header has the mode field '0000644x', the "
         "checksum recomputed: Python's tarfile ends the archive at that header without an error, so torch's "
         "loader finds no storages member and fails")
    tail = _pax_archive(sd, extra=()).removesuffix(bytes(2 * BLOCK))
    after = tail + _header("notes", 2, tarfile.REGTYPE) + b"{}" + bytes(BLOCK - 2) + bytes(2 * BLOCK)
    case("trailing-header-mode-not-octal", _later_patched(after, len(tail), 100, b"0000644x"),
         ["bad-container"], header, members,
         "the state-dict case with an extra last member 'notes' whose header has the mode field '0000644x', "
         "the checksum recomputed: Python's tarfile ends the archive at that header without an error and "
         "torch loads the four members before it",
         why="every header's number fields must read (pt-tar-members): tarfile silently ends the archive at "
         "a later header it cannot read, so whatever follows (members, any bytes) is hidden from torch; a "
         "reader that read on would see members torch never sees")
    odd = _later_patched(base, last, 136, b"\xff" + b"\xff" * 10 + b"\xfe")  # mtime: base-256, -2
    case("later-header-number-fields-tarfile-reads", _later_patched(odd, last, 100, b"644\0jnk\0"), [],
         header, members,
         "the state-dict case whose last member's (storages) header has the mtime field in GNU "
         "base-256 with the first byte 0xff (a negative time, -2) and the mode field '644', a NUL, then "
         "'jnk': Python's tarfile reads both (text up to the first NUL; 0xff base-256 as negative), so "
         "torch loads the archive; a reader checks these fields as tarfile does, not as the size field")
    why_t7 = ("a .t7 stream starts with its first object's type code (binary 0x00-0x08; ascii a digit, a "
              "sign or whitespace) and torch's tar files start with the name sys_info: the spec gives such a "
              "first byte to .t7, so that a valid .t7 is never taken for tar")
    for name, first in (("digit", "0notes"), ("space", " notes")):
        case(f"first-member-name-{name}", _pax_archive(sd, extra=((first, b"{}"),)), ["bad-value"],
             header, ["canonical.md#canonical-detect", "t7.md#t7-detect"],
             f"the state-dict case after an extra first member named {first!r}: Python's tarfile takes the "
             "archive and torch loads it; the first byte starts a t7-ascii stream, whose first token is no "
             "integer", why=why_t7)
    # -- the storages and tensors members' records
    u8 = tar_writer.members({"b": torch.arange(3, dtype=torch.uint8)})
    st = u8["storages"]
    at = _records(st)[1][1]  # the first storage's count
    n = int.from_bytes(st[at:at + 8], "little")
    over = (n + len(st) - (at + 8 + n) + 1).to_bytes(8, "little")
    case("storage-one-byte-past-member", tar_writer.archive({**u8, "storages": st[:at] + over + st[at + 8:]}),
         ["truncated"], ["adv-size-beyond-eof", "dtype-uint8"], [STORAGES],
         "a uint8 storage of 3 elements whose element count says one more than the bytes left in the "
         "storages member (its elements and the views pickle): its last element would be the member's "
         "first padding byte")
    root = torch.arange(10, dtype=torch.float64)
    case("storage-view-past-root", tar_writer.tar_checkpoint({"root": root,
                                                              "v": tar_writer.StorageView(root, 8, 5)}),
         ["out-of-bounds"], ["adv-view-out-of-bounds", "bare-storage", "dtype-float64"], [STORAGES],
         "a float64 root storage of 10 elements and a storage view (view, root, 8, 5) of it, both bare: "
         "elements 8 to 13 of 10",
         why="a storage view must lie inside its root; torch's loader slices the root's untyped storage, "
         "which quietly clips the view to the 2 elements that exist, where a reader in another language "
         "would read past the root")
    t = sd["tensors"]
    (_, _), (h0, h1) = _records(t)
    key, _skey, ttype = pickle.loads(t[h0:h1])
    case("tensor-names-unknown-storage",
         tar_writer.archive({**sd, "tensors": t[:h0] + pickle.dumps((key, 99, ttype), protocol=2) + t[h1:]}),
         ["bad-reference"], ["adv-bad-reference", "state-dict"], [TENSORS],
         "the state-dict case whose first tensor header names storage key 99, which the storages member "
         "does not hold")
    body = sd["pickle"] + bytes(-len(sd["pickle"]) % BLOCK)  # torch's unpickler stops at STOP
    rec = _record(b"path", b"pickle") + _record(b"size", str(len(body)).encode())
    again = (_header("PaxHeaders/pickle", len(rec), tarfile.XHDTYPE) + rec + bytes(-len(rec) % BLOCK)
             + _header("member", 0, tarfile.REGTYPE) + body)
    case("duplicate-member-ends-file", _pax_archive(sd)[:-2 * BLOCK] + again, ["bad-container"],
         ["tar-pax", "state-dict", "dtype-float32"], members,
         "the state-dict case whose archive ends with a second pickle member (a PAX header with path and "
         f"size records, then its {len(body)} bytes, its pickle padded with zeros) and no end-of-archive "
         "block: the file ends exactly at that member's last byte. Read header by header, the name met twice "
         "comes before the missing end block",
         why="no name may appear twice (Python's tarfile, torch's reader, takes the last copy; a reader "
         "indexing members as it meets them would take the first), and an archive ends with a zero block; "
         "tarfile takes a file that ends at a block boundary without one")
    (c0, c1), _ = _records(t)
    count = pickle.loads(t[c0:c1])
    as_float = t[:c0] + pickle.dumps(float(count), protocol=2) + t[c1:]
    case("tensor-count-float", tar_writer.archive({**sd, "tensors": as_float}),
         ["bad-length"], ["state-dict"], [TENSORS],
         f"the state-dict case whose tensors member starts with the tensor count as the float "
         f"{float(count)!r} instead of an int")
    cut = t[:h1] + b"\xff" * 3
    cut_tar = bytearray(tar_writer.archive({**sd, "tensors": cut}))
    at = cut_tar.index(b"tensors\0") + BLOCK + len(cut)  # the member's first padding byte
    assert len(cut) % BLOCK and cut_tar[at] == 0
    cut_tar[at] = 0xFF
    case("tensor-ndim-cut-by-member", bytes(cut_tar), ["truncated"], ["adv-size-beyond-eof", "state-dict"],
         [TENSORS],
         "the state-dict case whose tensors member ends 3 bytes into its first tensor's int32 ndim "
         "(ff ff ff), the padding after the member starting with ff: the ndim field is cut by the "
         "member's end (read together with the padding byte it would be -1, a bad-length)")
