"""Container attacks: zip records that disagree with each other, names that are paths, duplicates,
overlaps, encryption and compression, data after the end record, a TorchScript archive presented as a
checkpoint (CVE-2025-32434), a tampered legacy magic number and polyglots
(spec/pt-zip.md#pt-zip-container, spec/pt-legacy.md#pt-legacy-magic, spec/canonical.md#canonical-detect).

The members are torch's own (a two-tensor dict written by torch 2.13), laid out again by
:func:`rawzip.build` with one field changed; the unchanged layout loads in torch.
"""

from __future__ import annotations

import pickle
import struct
import zlib

from . import assemble as a
from . import rawzip, sources, wrap
from .record import HARNESS_CANARY, AdvCase, canary_path

GEN = "containers.py"
ZIP = ["zip-archive", "dtype-float32", "adv-zip-layout"]
CONTAINER = ["pt-zip.md#pt-zip-container"]


def _members() -> list[rawzip.Member]:
    return sources.zip_members()


def _member(members: list[rawzip.Member], suffix: str) -> rawzip.Member:
    return next(m for m in members if m.name.endswith(suffix))


def container_cases() -> list[AdvCase]:
    out: list[AdvCase] = []
    src = sources.zip_source()

    def case(
        name: str,
        data: bytes,
        errors: list[str],
        feats: list[str],
        spec: list[str],
        how: str,
        *,
        fmt: str = "pt-zip",
        base: list[str] | None = None,
        category: str = "reject",
        why: str = "",
        canary: str | None = None,
        source: object = src,
    ) -> None:
        out.append(
            AdvCase(
                f"{fmt}/adv-{name}",
                data,
                errors,
                (ZIP if base is None else base) + feats,
                CONTAINER + spec if fmt == "pt-zip" else spec,
                how,
                source,
                GEN,  # type: ignore[arg-type]
                category=category,
                why_stricter=why,
                canary=canary,
            )
        )

    ms = _members()
    _member(ms, "/data/0").local_name = "archive/data/9"
    case(
        "zip-local-central-name-mismatch",
        rawzip.build(ms),
        ["bad-container"],
        [],
        [],
        "the local header of archive/data/0 names archive/data/9; the central directory says archive/data/0",
        why="torch finds records through the central directory only; a tool that walks local headers sees "
        "another archive, so the spec requires both headers to agree",
    )

    ms = _members()
    evil = wrap.inject(
        wrap.zip_pickle(),
        "extra",
        a.call(
            a.global_("os", "system"),
            a.binunicode(f"touch {canary_path('zip-duplicate-data-pkl')} {HARNESS_CANARY}"),
        ),
    )
    ms.append(rawzip.Member(_member(ms, "/data.pkl").name, evil))
    case(
        "zip-duplicate-data-pkl",
        rawzip.build(ms),
        ["bad-container"],
        ["adv-duplicate-member"],
        [],
        "a second archive/data.pkl member after torch's: the first is torch's pickle, the second the same "
        "dict plus os.system(command); a reader that takes the first name it sees and one that takes the "
        "last read different programs",
        canary=canary_path("zip-duplicate-data-pkl"),
        why="torch's zip reader takes one of the two members (the first: the canary is not touched even "
        "with weights_only=False) without a word; a scanner that reads the other one judges a "
        "different program, so the spec forbids duplicate names",
    )

    ms = _members()
    ms.append(rawzip.Member(_member(ms, "/data/0").name, struct.pack("<6f", *([1e30] * 6))))
    case(
        "zip-duplicate-storage-record",
        rawzip.build(ms),
        ["bad-container"],
        ["adv-duplicate-member"],
        [],
        "a second archive/data/0 record (six 1e30 floats) after torch's: the weight depends on which one a "
        "reader picks",
        why="torch's zip reader keeps one of the two entries silently; the spec forbids duplicate names",
    )

    # overlapping members: data/1's local header and data sit inside data/0's data area
    ms = _members()
    d0, d1 = _member(ms, "/data/0"), _member(ms, "/data/1")
    inner = rawzip.Member(d1.name, d1.data)
    inner_bytes = rawzip._local_header(inner, 0, 0) + d1.data  # noqa: SLF001 - the same header writer
    d0.data = d0.data + inner_bytes
    ms.remove(d1)
    pkl = a.program(
        a.dict_(
            (
                a.binunicode("weight"),
                a.rebuild_tensor(
                    a.storage_pid("ByteStorage", "0", "cpu", len(d0.data)), 0, (len(d0.data),), (1,)
                ),
            ),
            (
                a.binunicode("bias"),
                a.rebuild_tensor(a.storage_pid("FloatStorage", "1", "cpu", 2), 0, (2,), (1,)),
            ),
        )
    )
    _member(ms, "/data.pkl").data = pkl
    extra = rawzip.Member(d1.name, d1.data)
    data = rawzip.build(ms, central_extra=[extra])
    # point the extra central entry at the inner local header: after data/0's 24 float bytes
    cd = data.rindex(b"PK\x01\x02")
    d0_start = next(
        i
        for i in range(len(data))
        if data.startswith(b"PK\x03\x04" + b"\x14\x00", i)
        and data[i + 30 : i + 30 + len(d0.name)] == d0.name.encode()
    )
    name_len, extra_len = struct.unpack_from("<HH", data, d0_start + 26)
    inner_at = d0_start + 30 + name_len + extra_len + 24
    data = data[: cd + 42] + struct.pack("<I", inner_at) + data[cd + 46 :]
    case(
        "zip-overlapping-members",
        data,
        ["bad-container"],
        ["adv-overlapping-members", "dtype-uint8"],
        [],
        "archive/data/1 (a local header and its 8 bytes) lies inside archive/data/0's data area, which "
        "the pickle reads as a uint8 storage: two records share bytes (the overlapping-file trick of zip "
        "bombs)",
        why="torch reads each record through its own central entry and does not check that "
        "records are disjoint",
    )

    ms = _members()
    _member(ms, "/data/0").central["usize"] = 4000
    _member(ms, "/data/0").central["csize"] = 4000
    case(
        "zip-central-size-disagrees",
        rawzip.build(ms),
        ["bad-container", "truncated", "out-of-bounds"],
        [],
        [],
        "archive/data/0's central entry says 4000 bytes; its local header says 24",
    )
    ms = _members()
    _member(ms, "/data.pkl").local["usize"] = 5
    case(
        "zip-local-size-disagrees",
        rawzip.build(ms),
        ["bad-container"],
        [],
        [],
        "archive/data.pkl's local header says 5 uncompressed bytes; the central directory gives the "
        "real size",
        why="torch reads sizes from the central directory only; the spec requires both headers to agree",
    )
    ms = _members()
    m = _member(ms, "/data/0")
    m.central["usize"] = m.local["usize"] = 48
    case(
        "zip-stored-sizes-differ",
        rawzip.build(ms),
        ["bad-container"],
        [],
        [],
        "archive/data/0 is stored (method 0) but both headers say 24 bytes stored, 48 uncompressed",
    )
    ms = _members()
    _member(ms, "/data.pkl").flags = 0x0001
    case(
        "zip-encrypted-flag",
        rawzip.build(ms),
        ["bad-container"],
        ["adv-zip-compression"],
        [],
        "the encryption flag (bit 0) set on archive/data.pkl (its bytes are the plain pickle)",
        why="torch's reader ignores the encryption flag and reads the bytes as they are; the spec "
        "rejects an encrypted member",
    )
    ms = _members()
    _member(ms, "/data/0").method = 99
    case(
        "zip-unknown-compression-method",
        rawzip.build(ms),
        ["bad-container"],
        ["adv-zip-compression"],
        [],
        "archive/data/0's compression method set to 99 (no such method) in both headers",
        why="torch reads the record's bytes without looking at the method of a storage record",
    )
    ms = _members()
    pkl = _member(ms, "/data.pkl")
    size = 256 << 20
    body = pkl.data[:-1]  # torch's program without STOP, then no-op pairs: NONE, POP ... STOP
    filler = (pickle.NONE + pickle.POP) * ((size - len(body) - 1) // 2)
    plain = body + filler + pickle.STOP
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    pkl.data = comp.compress(plain) + comp.flush()
    pkl.method, pkl.usize, pkl.crc = 8, len(plain), zlib.crc32(plain)
    case(
        "zip-deflate-bomb",
        rawzip.build(ms),
        ["bad-container", "limit-exceeded"],
        ["adv-zip-compression", "adv-expansion-bomb"],
        ["pickle.md#pickle-limits"],
        f"archive/data.pkl deflated: {len(pkl.data)} bytes that inflate to {len(plain)} (torch's pickle "
        "padded with NONE/POP pairs). A reader rejects or declines compressed records; it must not inflate "
        "them without a budget",
        category="impl",
    )

    for name, rename, how in [
        (
            "zip-absolute-member-names",
            lambda n: "/" + n,
            "every member name starts with '/' (/archive/data.pkl, ...)",
        ),
        (
            "zip-dotdot-member-names",
            lambda n: "../" + n,
            "every member name starts with '../' (../archive/data.pkl, ...)",
        ),
        (
            "zip-backslash-member-names",
            lambda n: n.replace("/", "\\"),
            "every member name uses backslashes (archive\\data.pkl, ...)",
        ),
    ]:
        ms = _members()
        for m in ms:
            m.name = rename(m.name)
        case(
            name,
            rawzip.build(ms),
            ["bad-container"],
            ["adv-path-traversal"],
            ["pt-zip.md#pt-zip-root-name"],
            how + ": names are keys under one root folder, never paths",
            why="torch takes the text before the first '/' as the root and never writes files, so it loads "
            "it; an extracting tool would write outside its folder",
        )
    ms = _members()
    ms[3].name = ms[3].name.replace("archive/", "other/")
    case(
        "zip-two-roots",
        rawzip.build(ms),
        ["bad-container"],
        [],
        ["pt-zip.md#pt-zip-root-name"],
        f"one member ({ms[3].name}) lives under a second root folder 'other/'",
    )
    case(
        "zip-missing-data-pkl",
        rawzip.build([m for m in _members() if not m.name.endswith("/data.pkl")]),
        ["bad-container"],
        [],
        ["pt-zip.md#pt-zip-records"],
        "torch's archive without its data.pkl member",
    )
    case(
        "zip-missing-storage-record",
        rawzip.build([m for m in _members() if not m.name.endswith("/data/1")]),
        ["bad-reference"],
        [],
        ["pt-zip.md#pt-zip-storage-records"],
        "torch's archive without archive/data/1, which the pickle names",
    )
    case(
        "zip-data-after-end-record",
        rawzip.build(_members(), trailing=a.program(a.integer(1))),
        ["bad-container"],
        ["adv-trailing-data"],
        [],
        "5 bytes (a pickle) after the end-of-central-directory record, outside its comment",
        why="torch's zip reader finds the end record by scanning back and ignores bytes after it",
    )
    inner = rawzip.build(_members())
    case(
        "zip-comment-holds-zip",
        rawzip.build(_members(), comment=inner[:0xFFFF]),
        ["ambiguous"],
        ["adv-polyglot"],
        [],
        "the end record's comment holds a complete second copy of the archive, so a reader scanning back "
        "for the end record first finds the inner one (whose offsets point into the outer file)",
        why="torch's zip reader settles on one end record without checking that the comment holds no "
        "other; two zip readers can then see two different archives in one file",
    )
    case(
        "zip-eocd-count-lies",
        rawzip.build(_members(), eocd={"count": 200}),
        ["bad-container", "truncated"],
        [],
        [],
        "the end record says 200 entries; the central directory holds 7",
    )
    case(
        "zip-cd-offset-beyond-eof",
        rawzip.build(_members(), eocd={"offset": 1 << 30}),
        ["bad-container", "truncated", "out-of-bounds"],
        ["adv-size-beyond-eof"],
        [],
        "the end record puts the central directory at 1 GiB, past the end of the file",
    )
    ms = _members()
    _member(ms, "/data/0").central["offset"] = 1 << 20
    case(
        "zip-local-offset-beyond-eof",
        rawzip.build(ms),
        ["bad-container", "truncated", "out-of-bounds"],
        ["adv-size-beyond-eof"],
        [],
        "archive/data/0's central entry puts its local header at 1 MiB, past the end of the file",
    )
    ms = _members()
    _member(ms, "/version").data = b"99999999999999999999\n"
    case(
        "zip-version-huge",
        rawzip.build(ms),
        ["bad-magic"],
        ["adv-bad-magic"],
        ["pt-zip.md#pt-zip-version"],
        "the version record says 99999999999999999999",
    )
    ms = _members()
    _member(ms, "/byteorder").data = b"middle"
    case(
        "zip-byteorder-unknown",
        rawzip.build(ms),
        ["bad-value"],
        [],
        ["pt-zip.md#pt-zip-byteorder"],
        "the byteorder record says 'middle'",
    )

    # CVE-2025-32434: a TorchScript archive where a checkpoint is expected
    ts = sources.torch_script()
    case(
        "torchscript-as-checkpoint",
        ts.data,
        ["unsafe-global"],
        ["torchscript-archive"],
        [
            "torchscript.md#torchscript-detect",
            "pickle.md#pickle-no-execution",
            "canonical.md#canonical-detect",
        ],
        "a TorchScript archive (code/ records, constants.pkl, data.pkl of __torch__ classes) saved under a "
        "checkpoint's name. torch <= 2.5 handed such a file to torch.jit.load even with weights_only=True "
        "(CVE-2025-32434). A reader may describe it as pt-torchscript (never compiling or running code/, "
        "keeping __torch__ classes opaque), decline it, or reject it as unsafe-global; it must never run "
        "its code",
        fmt="pt-torchscript",
        base=["torchscript-archive"],
        category="impl",
        source=ts,
    )

    # legacy stream: tampered magic; polyglots
    leg = sources.torch_legacy()
    spans = wrap.legacy_spans(leg.data)
    magic_end = spans[0][1]
    tampered = a.program(a.integer(0x1950A86A20F9469CFC6C + 1))
    assert len(tampered) == magic_end, (len(tampered), magic_end)
    case(
        "legacy-magic-plus-one",
        tampered + leg.data[magic_end:],
        ["bad-magic"],
        ["adv-bad-magic"],
        ["pt-legacy.md#pt-legacy-magic"],
        "the first pickle's magic number 0x1950a86a20f9469cfc6c written as 0x1950a86a20f9469cfc6d",
        fmt="pt-legacy",
        base=["legacy-stream", "legacy-magic", "dtype-float32"],
        source=leg,
    )
    case(
        "legacy-magic-as-string",
        a.program(a.binunicode("0x1950a86a20f9469cfc6c")) + leg.data[magic_end:],
        ["bad-magic"],
        ["adv-bad-magic"],
        ["pt-legacy.md#pt-legacy-magic"],
        "the first pickle holds the magic number's hex text as a string instead of the integer",
        fmt="pt-legacy",
        base=["legacy-stream", "legacy-magic", "dtype-float32"],
        source=leg,
    )
    zip_bytes = rawzip.build(_members())
    case(
        "polyglot-legacy-then-zip",
        leg.data + zip_bytes,
        ["ambiguous", "bad-container", "bad-value"],
        ["adv-polyglot", "adv-trailing-data"],
        ["canonical.md#canonical-detect", "pt-legacy.md#pt-legacy-storages"],
        "torch's legacy stream followed by a complete zip .pt (its offsets relative to the zip's own start): "
        "a reader going by the first bytes sees the legacy stream, a zip tool scanning back from the end "
        "sees the archive",
        fmt="pt-legacy",
        base=["legacy-stream", "dtype-float32"],
        source=leg,
        why="torch goes by the first bytes and ignores everything after the last storage; the spec rejects "
        "bytes after the stream's end, the place where a second file hides",
    )
    shifted = rawzip.build(_members(), prefix=leg.data)
    case(
        "polyglot-zip-after-legacy-absolute",
        shifted,
        ["ambiguous", "bad-container", "bad-value"],
        ["adv-polyglot", "adv-trailing-data"],
        ["canonical.md#canonical-detect"],
        "torch's legacy stream followed by a zip whose offsets count from the start of the whole file "
        "(as a self-extracting archive's do): a valid legacy stream from the front, a valid zip .pt from "
        "the back",
        fmt="pt-legacy",
        base=["legacy-stream", "dtype-float32"],
        source=leg,
        why="torch goes by the first bytes and ignores everything after the last storage",
    )
    ms = sources.zip_members()
    for m in ms:
        if m.name.endswith(".data/serialization_id"):
            m.data = b"\xed\xa0\x80" + m.data[3:]  # a lone surrogate spelled in UTF-8: not UTF-8 text
    case("zip-serialization-id-not-utf8", rawzip.build(ms), ["bad-value"], [], ["pt-zip.md#pt-zip-records"],
         "torch's members with the .data/serialization_id record starting with the bytes ED A0 80 (a lone "
         "surrogate, which strict UTF-8 refuses): torch decodes the record once the object is loaded "
         "(found by the differential harness)")
    ms = sources.zip_members()
    next(m for m in ms if "/data/" in m.name).flags = 0x2000
    case("zip-masked-local-header-flag", rawzip.build(ms), ["bad-container"], [], [],
         "torch's members with general purpose flag bit 13 (masked local header values, used by central "
         "directory encryption) set on a storage record: torch's miniz refuses the archive as unsupported "
         "encryption (found by the differential fuzzer)")
    ms = sources.zip_members()
    next(m for m in ms if "/data/" in m.name).central["disk"] = 0xFFFF
    case("zip-entry-disk-ffff", rawzip.build(ms), ["bad-container"], [], [],
         "torch's members with a storage record's central entry naming disk 0xFFFF (the zip64 escape, with "
         "no zip64 extra field): torch's miniz compares the field itself with the disk number and refuses "
         "the archive as multi-disk (found by the differential fuzzer)")
    return out
