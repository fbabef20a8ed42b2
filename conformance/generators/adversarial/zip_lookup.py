"""Zip lookup as torch does it: names equal up to ASCII case (torch's miniz lookup ignores case and picks
one of them), end records the file ends inside (a partial download), an end record hidden in another's
comment (miniz takes the last one), zip64 extra fields, gap bytes between members, records torch ignores
(a ``code/`` folder without ``constants.pkl``) and zip archives that are not torch's at all
(spec/pt-zip.md#pt-zip-container, #pt-zip-records).

The members are torch's own (a two-tensor dict written by torch 2.13), laid out again by
:func:`rawzip.build` with one change; the unchanged layout loads in torch.
"""

from __future__ import annotations

import struct
import zlib

from . import rawzip, sources
from . import rebuild_semantics as rs
from .record import AdvCase

GEN = "zip_lookup.py"
ZIP = ["zip-archive", "dtype-float32", "adv-zip-layout"]
CONTAINER = ["pt-zip.md#pt-zip-container"]
CASE_WHY = (
    "torch 2.13 finds records with miniz's mz_zip_reader_locate_file, which compares raw name bytes "
    "ignoring ASCII case: of two names equal up to case it loads one (which one depends on the binary "
    "search over the sorted directory) while a case-sensitive reader loads the other, so the spec refuses "
    "the pair"
)


def _upper_copy(suffix: str, data: bytes | None = None) -> list[rawzip.Member]:
    """torch's members with a second member named like ``suffix`` in upper case, placed first."""
    ms = sources.zip_members()
    orig = next(m for m in ms if m.name.endswith(suffix))
    root, _, rest = orig.name.partition("/")
    twin = rawzip.Member(root + "/" + rest.upper(), orig.data if data is None else data)
    return [twin, *ms]


def _hidden_end_record() -> bytes:
    """torch's archive whose end record's comment holds a second end record, 4 bytes short of the end of
    the file, pointing at a second central directory in which ``data.pkl`` is another member (a pickle of
    the int 7) placed in a gap: miniz takes the last signature with 22 bytes after it."""
    ms = sources.zip_members()
    alt = rawzip.Member(next(m.name for m in ms if m.name.endswith("/data.pkl")), b"\x80\x02K\x07.")
    out = bytearray()
    for m in [*ms, alt]:
        m.header_offset = len(out)
        out += rawzip._local_header(m, len(out), rawzip.ALIGN) + m.data
    hidden = [alt if m.name == alt.name else m for m in ms]
    b_start = len(out)
    out += b"".join(rawzip._central_header(m) for m in hidden)
    b_size = len(out) - b_start
    a_start = len(out)
    out += b"".join(rawzip._central_header(m) for m in ms)
    a_size = len(out) - a_start
    comment = rawzip.eocd(len(ms), b_size, b_start) + b"\0" * 4
    return bytes(out + rawzip.eocd(len(ms), a_size, a_start, comment))


def _zip64_sizes(extra_length: int, extra: bytes | None = None) -> bytes:
    """torch's archive whose data/0 central entry gives its sizes as 0xFFFFFFFF, with a zip64 extra
    field announcing ``extra_length`` bytes and holding ``extra`` (default: both sizes)."""
    ms = sources.zip_members()
    m = next(m for m in ms if m.name.endswith("/data/0"))
    body = struct.pack("<2Q", len(m.data), len(m.data)) if extra is None else extra
    m.central = {"usize": 0xFFFFFFFF, "csize": 0xFFFFFFFF}
    m.central_extra = struct.pack("<2H", 1, extra_length) + body
    return rawzip.build(ms)


def _zip64_extra_after(first: bytes) -> bytes:
    """torch's archive whose data/0 central entry gives its sizes as 0xFFFFFFFF, its extra area holding
    the field ``first`` and then the zip64 extra field with both sizes."""
    ms = sources.zip_members()
    m = next(m for m in ms if m.name.endswith("/data/0"))
    m.central = {"usize": 0xFFFFFFFF, "csize": 0xFFFFFFFF}
    m.central_extra = first + struct.pack("<2H2Q", 1, 16, len(m.data), len(m.data))
    return rawzip.build(ms)


def _renamed(suffix: str, new: str, data: bytes | None = None) -> bytes:
    """torch's archive with the member ending in ``suffix`` renamed to end in ``new`` (and holding
    ``data``)."""
    ms = sources.zip_members()
    for m in ms:
        if m.name.endswith(suffix):
            m.name = m.name[: -len(suffix)] + new
            m.data = m.data if data is None else data
    return rawzip.build(ms)


def _float3_keyed(pid_key: str, record_key: str) -> bytes:
    """A one-tensor dict whose storage the pickle names ``pid_key`` and whose record is data/``record_key``
    (names written as UTF-8, flag bit 11 clear, as torch's writer does)."""
    return rs.in_zip(rs.doc(("x", rs._float3(key=pid_key))), {record_key: rs.F32})


def _with_big(extra: list[rawzip.Member] | None = None) -> list[rawzip.Member]:
    """torch's members, then a 64 KiB record of zeros (``archive/big``: the records are no longer small
    on average, so a reader reads each local header through a window of its own) and ``extra``."""
    ms = sources.zip_members()
    root = ms[0].name.split("/", 1)[0]
    return [*ms, rawzip.Member(f"{root}/big", bytes(1 << 16)), *(extra or [])]


def _zip64_three() -> bytes:
    """torch's archive whose data/1 central entry gives its sizes and its local header offset as
    0xFFFFFFFF, a 24-byte zip64 extra field holding the three in order."""
    ms = sources.zip_members()
    rawzip.build(ms)  # lays the members out: header offsets (the central directory's size changes none)
    m = next(m for m in ms if m.name.endswith("/data/1"))
    m.central = {"usize": 0xFFFFFFFF, "csize": 0xFFFFFFFF, "offset": 0xFFFFFFFF}
    m.central_extra = struct.pack("<2H3Q", 1, 24, len(m.data), len(m.data), m.header_offset)
    return rawzip.build(ms)


def _local_zip64() -> bytes:
    """torch's archive whose data/0 local header gives its sizes as 0xFFFFFFFF (bit 3 clear), its own
    zip64 extra field holding them before torch's alignment padding."""
    ms = sources.zip_members()
    m = next(m for m in ms if m.name.endswith("/data/0"))
    m.local = {"usize": 0xFFFFFFFF, "csize": 0xFFFFFFFF}
    m.local_extra = struct.pack("<2H2Q", 1, 16, len(m.data), len(m.data))
    return rawzip.build(ms)


def _central_reversed() -> bytes:
    """torch's archive with its central directory listing the members in reverse file order."""
    ms = sources.zip_members()
    data = rawzip.build(ms)
    cd_start = struct.unpack_from("<L", data, len(data) - 6)[0]
    cd = b"".join(rawzip._central_header(m) for m in reversed(ms))
    return data[:cd_start] + cd + rawzip.eocd(len(ms), len(cd), cd_start)


def _directory_into_end_record(reach: int) -> bytes:
    """torch's archive whose end record counts ``reach`` more directory bytes: the central directory it
    announces runs into the end record itself."""
    data = bytearray(rawzip.build(sources.zip_members()))
    size = struct.unpack_from("<L", data, len(data) - 10)[0]
    struct.pack_into("<L", data, len(data) - 10, size + reach)
    return bytes(data)


def zip_lookup_cases() -> list[AdvCase]:
    src = sources.zip_source()
    out: list[AdvCase] = []

    def case(name: str, data: bytes, errors: list[str], feats: list[str], how: str, why: str = "", *,
             spec: tuple[str, ...] = ()) -> None:
        base = ZIP if errors else [f for f in ZIP if f != "adv-zip-layout"]  # an accept case breaks none
        out.append(AdvCase(f"pt-zip/adv-{name}", data, errors, base + feats, [*CONTAINER, *spec], how, src,
                           GEN, why_stricter=why, category="reject" if errors else "accept"))

    case("zip-name-case-data-pkl", rawzip.build(_upper_copy("/data.pkl", b"\x80\x02K\x07.")),
         ["bad-container"], ["stricter-than-torch"],
         "a second member DATA.PKL (a pickle of the int 7) precedes data.pkl", CASE_WHY)
    case("zip-name-case-storage-key", rawzip.build(_upper_copy("/byteorder", b"big")),
         ["bad-container"], ["stricter-than-torch"],
         "a second member BYTEORDER holding 'big' precedes byteorder ('little')", CASE_WHY)
    ms = sources.zip_members()
    key = next(m for m in ms if "/data/" in m.name)
    root = key.name.split("/", 1)[0]
    ms.insert(0, rawzip.Member(root + "/DATA/" + key.name.rsplit("/", 1)[1], bytes(len(key.data))))
    case("zip-name-case-data-dir", rawzip.build(ms), ["bad-container"], ["stricter-than-torch"],
         f"a member DATA/{key.name.rsplit('/', 1)[1]} of zeros precedes the storage record "
         f"data/{key.name.rsplit('/', 1)[1]}", CASE_WHY)
    full = rawzip.build(sources.zip_members())
    for cut in (1, 10, 18, 21):
        case(f"zip-cut-{cut}-bytes", full[:-cut], ["truncated"], [],
             f"the file cut {cut} bytes short of its end (a partial download): the file ends inside the "
             "end-of-central-directory record")
    case("zip-comment-past-end", full[:-2] + b"\x40\x00", ["truncated"], ["stricter-than-torch"],
         "the end record announces a 64-byte comment that the file does not hold",
         "torch 2.13 (miniz) loads it, ignoring the comment length; the end record then disagrees with the "
         "file's size, which is what a cut file looks like, so the spec reports it truncated")
    case("zip-end-record-in-comment", _hidden_end_record(), ["ambiguous"], ["adv-polyglot"],
         "the end record's comment holds a second end record (4 bytes before the end of the file) that "
         "points at a second central directory, whose data.pkl is another member (a pickle of the int 7) "
         "lying in a gap between the members",
         "torch's miniz takes the last end-record signature with 22 bytes after it and so loads the int 7, "
         "while a reader that takes the record ending the file (as the ZIP specification lays it out) loads "
         "the dict: two readers see two archives")
    case("zip-gap-between-members", rawzip.build(sources.zip_members(), between=b"GAP!" * 8), [],
         ["zip-extra-records"],
         "32 bytes ('GAP!' x 8) after each member's data, before the next local header: gaps are allowed "
         "and ignored")
    ms = sources.zip_members()
    root = ms[0].name.split("/", 1)[0]
    text = b"def forward(self):\n  return 7\n"
    code = rawzip.Member(f"{root}/code/__torch__.py", rawzip.deflate(text), method=8, usize=len(text),
                         crc=zlib.crc32(text))
    case("zip-code-folder-without-constants", rawzip.build([*ms, code]), [], ["zip-extra-records"],
         "torch's archive with a deflated code/__torch__.py record but no constants.pkl: torch reads it as "
         "a checkpoint (TorchScript only with constants.pkl) and never reads the code record",
         spec=("torchscript.md#torchscript-detect", "pt-zip.md#pt-zip-records"))
    case("zip-zip64-extra-sizes", _zip64_sizes(16), [], ["zip-zip64-extra"],
         "the central entry of data/0 gives its sizes as 0xFFFFFFFF and a 16-byte zip64 extra field holds "
         "them (as a writer of large archives does)")
    case("zip-zip64-extra-overlong", _zip64_sizes(24), ["bad-container"], ["zip-zip64-extra"],
         "the central entry of data/0 gives its sizes as 0xFFFFFFFF and its zip64 extra field announces 24 "
         "bytes where the extra area holds 16: an overlong extra field, which torch's miniz refuses")
    ut = struct.pack("<2HBL", 0x5455, 5, 1, 1485049682)  # an extended-timestamp field (Info-ZIP "UT")
    case("zip-zip64-extra-after-other-extra", _zip64_extra_after(ut), [], ["zip-zip64-extra"],
         "the central entry of data/0 gives its sizes as 0xFFFFFFFF; its extra area holds a 9-byte "
         "extended-timestamp field (0x5455) and then the 16-byte zip64 extra field that holds them: the "
         "fields are walked in order")
    case("zip-zip64-extra-after-overlong-extra", _zip64_extra_after(struct.pack("<2H", 0x5455, 40) + ut[4:]),
         ["bad-container"], ["zip-zip64-extra"],
         "the same with the extended-timestamp field announcing 40 bytes, past the extra area: the zip64 "
         "field after it cannot be found")
    # torch 2.13's miniz searches back from the end in 4,096-byte steps and fails (an unsigned underflow,
    # OSError EINVAL) when the end record lies more than 4,096 bytes before the end and in the file's first
    # 4,093 bytes: a 16 KiB gap after each member keeps it clear of that bug
    longest, gap = b"C" * 0xFFFF, b"G" * 0x4000
    case("zip-comment-longest", rawzip.build(sources.zip_members(), comment=longest, between=gap), [],
         ["zip-extra-records"],
         "an end record with a 65,535-byte comment (the longest), so that it starts 65,557 bytes before the "
         "end of the file, the lowest position a reader searches (16 KiB gaps after the members: torch's "
         "miniz fails on a valid archive whose end record sits that far back within its first 4,093 bytes)")
    case("zip-end-record-before-search-window",
         rawzip.build(sources.zip_members(), comment=longest, between=gap) + b"C",
         ["truncated", "bad-container"], ["zip-extra-records"],
         "the same with one more byte after the comment: no end record starts in the last 65,557 bytes, "
         "which are all a reader searches",
         "torch's miniz searches back in 4,096-byte steps and stops only after a whole step past 65,557 "
         "bytes, so it also finds end records a few KiB further back, a reach set by its buffer size; the "
         "ZIP specification puts the record and its comment at the end of the file, so one further back "
         "than the longest comment allows ends no archive")
    lookup = ("pt-zip.md#pt-zip-records",)
    case("zip-name-upper-case-data-pkl", _renamed("/data.pkl", "/DATA.PKL"), [], [],
         "torch's archive with its data.pkl member named DATA.PKL (no other): torch's lookup ignores ASCII "
         "case and finds it", spec=lookup)
    case("zip-name-upper-case-byteorder-big", _renamed("/byteorder", "/BYTEORDER", b"big"), [],
         ["zip-big-endian"],
         "torch's archive with its byteorder member named BYTEORDER and holding 'big' (no other): torch's "
         "lookup finds it and swaps every storage's bytes", spec=lookup)
    case("zip-storage-key-case", _float3_keyed("A", "a"), [], ["pickle-persistent-id"],
         "the pickle names storage 'A'; the archive's record is data/a: torch's lookup ignores ASCII case",
         spec=("pt-zip.md#pt-zip-storage-records",))
    case("zip-storage-key-utf8-without-flag", _float3_keyed("\u00e9", "\u00e9"), [], ["pickle-persistent-id"],
         "the pickle names storage '\u00e9'; its record's name is archive/data/ followed by the UTF-8 "
         "bytes c3 a9, with flag bit 11 clear (as torch writes every name): torch compares raw name "
         "bytes, so a reader that decodes the name as CP437 (the ZIP default) finds no record",
         spec=("pt-zip.md#pt-zip-storage-records",))
    ms = sources.zip_members()
    ms.append(rawzip.Member(ms[0].name.split("/", 1)[0] + "/extraZ", b"not read"))
    case("zip-name-not-utf8", rawzip.build(ms).replace(b"/extraZ", b"/extra\x82"), ["bad-container"], [],
         "torch's archive with one more member, named archive/extra followed by the byte 0x82 (flag bit 11 "
         "clear: CP437 text, not UTF-8): torch reads every name as UTF-8 and refuses the archive")
    ms = sources.zip_members()
    next(m for m in ms if "/data/" in m.name).flags = 0x20
    case("zip-patched-data-flag", rawzip.build(ms), ["bad-container"], [],
         "torch's archive whose storage record data/0 has general purpose flag bit 5 (compressed patched "
         "data) set in both headers: torch's miniz refuses to read the member (found by the differential "
         "fuzz target)")
    ms = sources.zip_members()
    pkl = next(m for m in ms if m.name.endswith("/data.pkl"))
    pkl.central["external"] = (0o100644 << 16) | 0x10
    case("zip-data-pkl-dos-directory-attribute", rawzip.build(ms), ["bad-container"], [],
         "torch's archive whose data.pkl central entry has the MS-DOS directory bit (0x10) in its external "
         "attributes: torch's miniz takes it for a directory and reads no data, so torch unpickles "
         "uninitialized memory and fails differently on each load (found by the differential harness)")
    # -- local header windows, zip64 fields in every position, directory order (issue 18 survivors)
    root = sources.zip_members()[0].name.split("/", 1)[0]
    long_name = f"{root}/" + "n" * (995 - len(root) - 1)
    case("zip-local-name-one-past-window",
         rawzip.build(_with_big([rawzip.Member(long_name, b"long name")]), align=0), [],
         ["zip-extra-records"],
         "torch's members and a 64 KiB record archive/big, then a record whose name is 995 bytes long "
         "(no extra fields, no alignment padding anywhere): its local header and name take 1,025 bytes, one "
         "more than the 1 KiB a reader of an archive of large records may read per header first",
         spec=("pt-zip.md#pt-zip-records",))
    after = [rawzip.Member(f"{root}/after", b"after")]
    big = _with_big(after)
    layout = rawzip.build(big)
    bogus = rawzip.Member(f"{root}/stray", b"", central={"offset": big[-1].header_offset - 1})
    case("zip-entry-one-before-header", rawzip.build(_with_big(after), central_extra=[bogus]),
         ["bad-container"], ["stricter-than-torch"],
         "torch's members, a 64 KiB record archive/big and a record archive/after, then one more central "
         f"entry (archive/stray, empty) whose local header offset is {big[-1].header_offset - 1}, one byte "
         f"before archive/after's local header (the archive is {len(layout)} bytes without it): no local "
         "header starts there",
         "torch's miniz reads a local header only for a record it extracts, and torch never extracts "
         "archive/stray; the spec checks every entry's local header (pt-zip-container item 7), as a zip "
         "reader that lists or extracts the archive does")
    case("zip-zip64-extra-three-values", _zip64_three(), [], ["zip-zip64-extra"],
         "the central entry of data/1 gives its sizes and its local header offset as 0xFFFFFFFF and a "
         "24-byte zip64 extra field holds the three, in the order the ZIP specification gives them (sizes, "
         "then offset)")
    case("zip-zip64-local-extra-sizes", _local_zip64(), [], ["zip-zip64-extra"],
         "the local header of data/0 gives its sizes as 0xFFFFFFFF (flag bit 3 clear) and its own zip64 "
         "extra field, before torch's alignment padding field, holds them")
    case("zip-central-directory-reversed", _central_reversed(), [], [],
         "torch's archive with its central directory listing the members in reverse file order (the "
         "order of the central directory is free)")
    case("zip-directory-into-end-record", _directory_into_end_record(10), ["out-of-bounds"],
         ["stricter-than-torch"],
         "torch's archive whose end record's directory size counts 10 more bytes than the central "
         "directory holds: the directory it announces runs into the end record",
         "torch's miniz reads the announced number of entries and ignores the rest of the announced size; "
         "the spec requires the central directory to lie before the end records")
    ms = [m for m in sources.zip_members() if not m.name.endswith("/data.pkl")]
    next(m for m in ms if m.name.endswith("/version")).data = b"99\n"
    case("zip-no-data-pkl-version-99", rawzip.build(ms), ["bad-magic"], [],
         "torch's archive without its data.pkl record and with version 99: torch reads the version record "
         "when it opens the archive, before it looks for data.pkl, and refuses the version",
         spec=("pt-zip.md#pt-zip-version", "pt-zip.md#pt-zip-data-pkl"))
    ms = [m for m in sources.zip_members() if not m.name.endswith("/data.pkl")]
    ms.insert(0, rawzip.Member(ms[0].name.split("/", 1)[0] + "/model.json", b'{"protoVersion": "6"}'))
    out.append(AdvCase("pt-torchscript/adv-torchscript-model-json", rawzip.build(ms), ["bad-container"],
                       ZIP, ["torchscript.md#torchscript-model-json"],
                       "torch's members with data.pkl replaced by a model.json record (the torch < 1.4 "
                       "TorchScript layout)", src, GEN))
    ts = sources.torch_script()
    ms = rawzip.members(ts.data)
    constants = next(m for m in ms if m.name.endswith("/constants.pkl"))
    assert constants.data.endswith(b".")
    constants.data = constants.data[:-1]
    out.append(AdvCase("pt-torchscript/adv-torchscript-constants-pkl-without-stop", rawzip.build(ms),
                       ["bad-pickle"], ["torchscript-archive", "dtype-float32", "adv-zip-layout"],
                       ["torchscript.md#torchscript-constants", "torchscript.md#torchscript-records",
                        "pickle.md#pickle-stack"],
                       "torch.jit.save's archive whose constants.pkl record lost its last byte, the "
                       "pickle's STOP: a record's pickle without STOP is bad-pickle; torch.jit.load reads "
                       "constants.pkl before data.pkl's module tree", ts, GEN))
    return out
