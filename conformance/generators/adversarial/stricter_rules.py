"""One file torch 2.13 loads for each documented stricter-than-torch refusal of
``conformance/differential/documented.yaml`` that had no case (spec/canonical.md#canonical-differential).

Each rule says why the spec refuses what ``torch.load(weights_only=True)`` loads; each case here is a file
that shows it: torch loads it (checked in the sandbox, ``torchcheck``), the reference refuses it with the
rule's code and message.  Every file is torch's own container (its zip members or its legacy stream's
pickles) with one thing changed; ``stricter_rule`` in each case's notes names its rule.
"""

from __future__ import annotations

import pickle
import struct

from . import assemble as a
from . import rawzip, sources, wrap
from .rebuild_semantics import F32, G, ints, pid
from .rebuild_semantics import in_zip as rebuild_in_zip
from .record import AdvCase

GEN = "stricter_rules.py"
ZIP = ["zip-archive", "adv-stricter-rule"]
LEGACY = ["legacy-stream", "adv-stricter-rule"]
T, F = pickle.NEWTRUE, pickle.NEWFALSE


def _v2(storage: bytes, size: tuple[int, ...], stride: tuple[int, ...], offset: int = 0,
        hooks: bytes | None = None, metadata: bytes | None = None) -> bytes:
    """``_rebuild_tensor_v2`` with the backward hooks and metadata arguments as given."""
    args = [storage, a.integer(offset), ints(size), ints(stride), F,
            a.ordered_dict() if hooks is None else hooks]
    extra = [metadata] if metadata is not None else []
    return a.call(G("torch._utils", "_rebuild_tensor_v2"), *args, *extra)


def _doc(*items: tuple[str, bytes]) -> bytes:
    return a.dict_(*((a.binunicode(k), v) for k, v in items))


def _f3(location: str = "cpu") -> bytes:
    return (a.tuple_(a.binunicode("storage"), G("torch", "FloatStorage"), a.binunicode("0"),
                     a.binunicode(location), a.integer(3)) + pickle.BINPERSID)


def _zip_with(members: list[rawzip.Member], **build: object) -> bytes:
    return rawzip.build(members, **build)  # type: ignore[arg-type]


def _member(members: list[rawzip.Member], suffix: str) -> rawzip.Member:
    return next(m for m in members if m.name.endswith(suffix))


def _legacy_storages(tail: bytes, widths: dict[str, int]) -> list[tuple[int, bytes]]:
    """(count, raw bytes) of each storage record in torch's legacy tail (widths by key order)."""
    out, pos = [], 0
    for width in widths.values():
        (count,) = struct.unpack_from("<q", tail, pos)
        out.append((count, tail[pos + 8:pos + 8 + count * width]))
        pos += 8 + count * width
    assert pos == len(tail), (pos, len(tail))
    return out


def _sys_info(pairs: list[tuple[bytes, bytes]]) -> bytes:
    return a.program(a.dict_(*pairs))


def stricter_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    def case(rule: str, name: str, data: bytes, errors: list[str], feats: list[str], spec: list[str],
             how: str, why: str, *, fmt: str = "pt-zip") -> None:
        src = sources.zip_source() if fmt == "pt-zip" else sources.torch_legacy()
        out.append(AdvCase(f"{fmt}/adv-{name}", data, errors, (ZIP if fmt == "pt-zip" else LEGACY) + feats,
                           spec, f"{how} (stricter_rule {rule})", src, GEN, why_stricter=why))

    f3 = {"0": F32}
    # -- pickle: calls, PROTO, argument kinds, value globals
    pairs = pickle.EMPTY_LIST + pickle.MARK + (a.integer(1) + a.integer(2) + pickle.TUPLE2) * 40_000
    pairs += pickle.APPENDS + a.put(0)
    calls = (a.global_("collections", "OrderedDict") + a.get(0) + pickle.TUPLE1 + pickle.REDUCE
             + pickle.APPEND) * 80
    case("pickle-call-budget", "stricter-call-budget-ordered-dicts",
         rebuild_in_zip(a.proto(2) + pickle.EMPTY_LIST + pairs + pickle.APPEND + calls + a.stop(), {}),
         ["limit-exceeded"], ["pickle-reduce"], ["pickle.md#pickle-limits"],
         "a list of one memoized list of 40,000 pairs and of 80 calls of collections.OrderedDict on it "
         "(about 9.6 M items handed to calls, from a 160 KB pickle)",
         "the spec bounds the work a pickle's calls are handed (pickle.md#pickle-limits), so that a small "
         "file cannot make a reader run for ever; torch has no such budget")
    case("proto-first", "stricter-proto-after-first-opcode",
         rebuild_in_zip(a.proto(2) + pickle.EMPTY_DICT + a.proto(2) + a.stop(), {}),
         ["bad-pickle"], [], ["pickle.md#pickle-opcodes"],
         "data.pkl is PROTO 2, EMPTY_DICT, PROTO 2, STOP: a second PROTO after the first opcode",
         "no pickler writes PROTO after the first opcode, and a second PROTO would change what later opcodes "
         "mean; torch's unpickler takes PROTO anywhere")
    case("backward-hooks-kind", "stricter-backward-hooks-list",
         rebuild_in_zip(a.program(_doc(("x", _v2(pid("FloatStorage", "0", 3), (3,), (1,),
                                                 hooks=a.list_(a.integer(7)))))), f3),
         ["bad-pickle"], ["pickle-persistent-id", "pickle-reduce"], ["pickle.md#pickle-rebuild"],
         "_rebuild_tensor_v2 whose backward_hooks argument is the list [7] (torch writes an empty "
         "OrderedDict)",
         "torch stores any value as the tensor's _backward_hooks and ignores it; the spec's argument kinds "
         "keep it to what torch writes")
    case("metadata-kind", "stricter-metadata-empty-list",
         rebuild_in_zip(a.program(_doc(("x", _v2(pid("FloatStorage", "0", 3), (3,), (1,),
                                                 metadata=a.list_())))), f3),
         ["bad-pickle"], ["pickle-persistent-id", "pickle-reduce"], ["pickle.md#pickle-rebuild"],
         "_rebuild_tensor_v2 whose metadata argument is an empty list",
         "torch skips any falsy metadata and only then insists on a dict; the spec's argument kinds keep it "
         "to the dict torch writes")
    latin2 = a.call(G("_codecs", "encode"), a.binunicode("\u0105"), a.binunicode("latin2"))
    case("codecs-encoding", "stricter-codecs-encode-latin2",
         rebuild_in_zip(a.program(_doc(("b", latin2))), {}),
         ["bad-value"], ["pickle-reduce", "pickle-bytes"], ["pickle.md#pickle-rebuild"],
         "_codecs.encode('\u0105', 'latin2'): torch looks the codec up by the file's name and loads b'\\xb1' "
         "(found by the differential fuzz target)",
         "a reader would look a codec up by a name the file gives and run it; protocols 0-2 write bytes "
         "with latin-1 only")
    case("value-global-called", "stricter-torch-tensor-called",
         rebuild_in_zip(a.program(_doc(("t", a.call(G("torch", "Tensor"))))), {}),
         ["bad-pickle"], ["pickle-reduce"], ["pickle.md#pickle-globals"],
         "REDUCE calls torch.Tensor with no argument (its legacy constructor: an empty float tensor)",
         "torch's weights_only unpickler lets REDUCE call allowed types such as torch.Tensor; no writer "
         "pickles such a call, and the spec keeps those globals values")
    # -- tensors: negative view numbers, locations
    case("negative-view", "stricter-negative-stride-one-element",
         rebuild_in_zip(a.program(_doc(("x", _v2(pid("FloatStorage", "0", 3), (1,), (-1,), offset=2)))), f3),
         ["bad-length"], ["pickle-persistent-id", "pickle-reduce"], ["tensors.md#tensors-view-bounds"],
         "a one-element view (offset 2, size (1,)) whose stride is -1",
         "torch's set_ takes a negative stride without a bounds check of the elements before the offset; "
         "the spec refuses negative view numbers")
    meta = a.call(G("torch._utils", "_rebuild_meta_tensor_no_storage"), G("torch", "float32"), ints((2,)),
                  ints((-1,)), F)
    case("negative-meta-view", "stricter-meta-negative-stride",
         rebuild_in_zip(a.program(_doc(("m", meta))), {}),
         ["bad-length"], ["meta-tensor", "pickle-reduce"],
         ["tensors.md#tensors-meta", "tensors.md#tensors-view-bounds"],
         "_rebuild_meta_tensor_no_storage(float32, (2,), (-1,), False): a meta tensor with a negative stride",
         "torch builds a meta tensor from any size and stride without a check (it holds no data); the spec "
         "refuses negative view numbers there as everywhere")
    case("location-not-device", "stricter-location-not-a-device",
         rebuild_in_zip(a.program(_doc(("x", _v2(_f3(""), (3,), (1,))))), f3),
         ["bad-value"], ["pickle-persistent-id", "pickle-reduce"], ["tensors.md#tensors-device"],
         "a storage whose location string is empty",
         "torch.load with map_location never parses the location (the file loads); the spec requires a "
         "device string, as torch.load without map_location does")
    # -- zip container
    ms = sources.zip_members()
    version = next(m for m in ms if m.name.endswith("/version"))
    version.data = version.data.rstrip(b"\n") + b"\n\x00\x00"
    case("zip-version-decimal", "stricter-zip-version-trailing-nul", _zip_with(ms),
         ["bad-value"], [], ["pt-zip.md#pt-zip-version"],
         f"the {version.name} record holds {version.data!r}: torch's stoull stops at the newline",
         "torch parses the version with stoull, which stops at the first non-digit; the spec requires "
         "exactly the decimal torch writes, so that no two readers read two versions from one record")
    ms = sources.zip_members()
    root = ms[0].name.split("/")[0]
    case("zip-name-encoding", "stricter-zip-extra-member-dotdot",
         _zip_with(ms + [rawzip.Member(f"{root}/../extra", b"x")]),
         ["bad-container"], [], ["pt-zip.md#pt-zip-container"],
         f"torch's archive with one more member, named {root}/../extra, that torch never looks up",
         "torch matches raw name bytes and never decodes or resolves a name; the spec's names are keys that "
         "must never be paths, so that every reader finds the same member by the same name")
    ms = sources.zip_members()
    case("zip-one-disk", "stricter-zip-extra-member-disk-1",
         _zip_with(ms + [rawzip.Member(f"{root}/extra", b"x", central={"disk": 1})]),
         ["bad-container"], [], ["pt-zip.md#pt-zip-container"],
         f"torch's archive with one more member, {root}/extra, whose central entry says it starts on disk 1",
         "miniz ignores disk numbers; the spec requires a one-disk archive, so that no two zip readers see "
         "two directories")
    ms = sources.zip_members()
    data = bytearray(_zip_with(ms + [rawzip.Member(f"{root}/extra", b"xy", usize=3)]))
    entry = data.rfind(b"PK\x01\x02")  # the extra member's central entry, the last one
    struct.pack_into("<H", data, entry + 12, 1)  # its modification time: 2 seconds past midnight
    case("zip-stored-sizes", "stricter-zip-stored-sizes-differ-time-set", bytes(data),
         ["bad-container"], [], ["pt-zip.md#pt-zip-container"],
         f"torch's archive with one more stored member, {root}/extra, of compressed size 2 and size 3, "
         "whose central entry has a modification time of 1 (2 seconds past midnight)",
         "miniz checks that a stored entry's two sizes agree by reading the method and the time as one "
         "32-bit number, so a stored entry with a time set escapes the check; the spec requires a stored "
         "member's sizes to agree, so that no two readers read two lengths")
    ms = sources.zip_members()
    extra = rawzip.Member(f"{root}/extra", b"not read")
    data = bytearray(_zip_with(ms + [extra]))
    data[extra.header_offset + 2:extra.header_offset + 4] = b"\x00\x00"
    case("zip-local-headers", "stricter-zip-extra-member-no-local-header", bytes(data),
         ["bad-container"], [], ["pt-zip.md#pt-zip-container"],
         f"torch's archive with one more member, {root}/extra, whose local header signature PK\\x03\\x04 is "
         "broken (PK\\x00\\x00): torch never reads the member (found by the differential fuzz target)",
         "torch reads a local header only for a member it reads; the spec requires every member the central "
         "directory names to have its local header, so that a tool that walks local headers sees the same "
         "archive")
    ms = sources.zip_members()
    extra = rawzip.Member(f"{root}/extra", b"not read", local={"csize": 0xFFFFFFFF, "usize": 0xFFFFFFFF})
    case("zip-local-headers", "stricter-zip-extra-member-local-sizes-ffffffff", _zip_with(ms + [extra]),
         ["bad-container"], [], ["pt-zip.md#pt-zip-container"],
         f"torch's archive with one more member, {root}/extra, whose local header gives its sizes as "
         "0xFFFFFFFF with no zip64 extra field: torch never reads the member (found by the differential fuzz "
         "target)",
         "torch reads a local header only for a member it reads, and then only its name and extra lengths; "
         "the spec requires a local header's sizes to be real, or in a zip64 extra field")
    ms = sources.zip_members()
    data = _zip_with(ms)
    at = len(data) - 22  # the locator goes before the end record; the record it names overlaps it
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, at - 36, 1)
    case("zip64-locator-ignored", "stricter-zip64-locator-without-record", data[:at] + locator + data[at:],
         ["out-of-bounds", "bad-container"], [], ["pt-zip.md#pt-zip-container"],
         "torch's archive with a zip64 end-of-central-directory locator before its end record, pointing 36 "
         "bytes before itself, where no zip64 end record is (found by the differential fuzz target)",
         "miniz ignores a locator whose zip64 end record it does not find and reads the plain end record; "
         "the spec requires a locator to point at a zip64 end record before it, so that no two zip readers "
         "see two directories")
    ms = sources.zip_members()
    extra = rawzip.Member(f"{root}/extra", b"xy", usize=40, local={"csize": 40}, central={"csize": 40})
    case("zip-member-bounds", "stricter-zip-extra-member-into-directory", _zip_with(ms + [extra]),
         ["out-of-bounds", "bad-container"], [], ["pt-zip.md#pt-zip-container"],
         f"torch's archive with one more stored member, {root}/extra, last before the central directory, "
         "whose sizes (40) take its data into the directory",
         "miniz only checks that the bytes it reads lie inside the file; the spec requires every member's "
         "data to lie before the central directory, so that members and directory never share bytes")
    ms = sources.zip_members()
    data = _zip_with(ms)
    eocd = bytearray(data[-22:])
    size = struct.unpack_from("<L", eocd, 12)[0]
    struct.pack_into("<L", eocd, 12, size + 46)
    case("zip-directory-size", "stricter-zip-directory-size-too-big",
         data[:-22] + b"\x00" * 46 + bytes(eocd),
         ["bad-container"], [], ["pt-zip.md#pt-zip-container"],
         "torch's archive with 46 zero bytes after the last central entry, counted in the end record's "
         "directory size",
         "miniz reads the announced number of entries and ignores the rest of the announced size; the spec "
         "requires the entries to fill it exactly, so that no bytes hide in the directory")
    # -- legacy stream
    raw = sources.torch_legacy().data
    spans = wrap.legacy_spans(raw)
    keys, tail = wrap.legacy_tail()
    obj = raw[spans[3][0]:spans[3][1]]
    records = _legacy_storages(tail, dict.fromkeys(keys, 4))
    info = [(a.binunicode("protocol_version"), a.integer(1001)), (a.binunicode("little_endian"), T)]
    case("legacy-sys-info", "stricter-legacy-sys-info-no-type-sizes",
         raw[:spans[1][1]] + _sys_info(info) + raw[spans[2][1]:],
         ["bad-value"], [], ["pt-legacy.md#pt-legacy-sys-info"],
         "torch's legacy stream whose sys_info is {'protocol_version': 1001, 'little_endian': True} "
         "(no type_sizes)",
         "torch reads sys_info and does not look at it; the spec checks the fields that say how the writer "
         "laid the storages out", fmt="pt-legacy")
    count, body = records[-1]
    wrapped = b"".join(wrap.storage_record(c, b) for c, b in records[:-1])
    wrapped += wrap.storage_record(count + (1 << 62), body)
    case("legacy-count-disagrees", "stricter-legacy-count-wraps",
         wrap.in_legacy(obj, keys, wrapped),
         ["bad-value", "out-of-bounds", "bad-length"], [], ["pt-legacy.md#pt-legacy-storages"],
         f"torch's legacy stream whose last storage record counts {count} + 2^62 float32 elements (then "
         f"the {count} elements torch wrote) where its persistent id says {count}",
         "torch checks the count times the element size against the storage's bytes in 64-bit arithmetic, "
         "which wraps: 4 x (n + 2^62) is 4n, and it reads n elements; the spec requires the count to equal "
         "the persistent id's numel", fmt="pt-legacy")
    short = b"".join(wrap.storage_record(c, b) for c, b in records[:-1])
    case("legacy-key-list", "stricter-legacy-key-list-short",
         wrap.in_legacy(obj, keys[:-1], short),
         ["bad-reference"], [], ["pt-legacy.md#pt-legacy-storage-keys"],
         f"torch's legacy stream whose key list leaves out storage {keys[-1]!r} (and its record), which the "
         "object still names",
         "torch fills only the storages the key list names and leaves any other storage the object names "
         "uninitialised (its values are whatever memory held)", fmt="pt-legacy")
    view_pid = (a.tuple_(a.binunicode("storage"), G("torch", "FloatStorage"), a.binunicode("0"),
                         a.binunicode("cpu"), a.integer(3),
                         a.tuple_(a.binunicode("0v"), a.integer(0), a.integer(5))) + pickle.BINPERSID)
    view_obj = a.program(_doc(("x", _v2(view_pid, (3,), (1,)))))
    case("legacy-view-bounds", "stricter-legacy-view-past-storage",
         wrap.in_legacy(view_obj, ["0"], wrap.storage_record(3, F32)),
         ["out-of-bounds"], ["pickle-persistent-id", "pickle-reduce"],
         ["pt-legacy.md#pt-legacy-persistent-id"],
         "a legacy stream whose persistent id names the view ('0v', 0, 5) of its 3-element storage '0' (the "
         "view form torch 0.1-0.3 wrote); the tensor views its first 3 elements",
         "torch cuts the view with a slice of the storage, which stops at the storage's end, and loads a "
         "view of 3 elements where the id says 5; the spec requires a view to lie inside its storage",
         fmt="pt-legacy")
    back_pid = (a.tuple_(a.binunicode("storage"), G("torch", "FloatStorage"), a.binunicode("0"),
                         a.binunicode("cpu"), a.integer(3),
                         a.tuple_(a.binunicode("0v"), a.integer(-2), a.integer(1))) + pickle.BINPERSID)
    case("legacy-view-bounds", "stricter-legacy-view-negative-offset",
         wrap.in_legacy(a.program(_doc(("x", _v2(back_pid, (1,), (1,))))), ["0"],
                        wrap.storage_record(3, F32)),
         ["out-of-bounds"], ["pickle-persistent-id", "pickle-reduce"],
         ["pt-legacy.md#pt-legacy-persistent-id"],
         "a legacy stream whose persistent id names the view ('0v', -2, 1) of its 3-element storage '0'; the "
         "tensor views its one element",
         "torch cuts the view with a Python slice of the storage's bytes, so a negative offset counts from "
         "the storage's end and the view is element 1 (('0v', -1, 1) makes an empty slice, which torch "
         "refuses); the spec requires a view to lie inside its storage, offset 0 or more",
         fmt="pt-legacy")
    magic = raw[spans[0][0]:spans[0][1]]
    assert magic[:1] == pickle.PROTO and magic[2:3] == pickle.LONG1, magic[:4]
    case("detect-first-bytes", "stricter-legacy-magic-after-mark",
         pickle.MARK + magic[2:] + raw[spans[0][1]:],
         ["unknown-format"], [], ["canonical.md#canonical-detect"],
         "torch's legacy stream whose magic-number pickle is MARK, LONG1 <magic>, STOP (no PROTO; its first "
         "byte is 0x28): STOP returns the magic number above the open MARK",
         "torch unpickles any file that is neither zip nor tar; the spec decides the variant from the first "
         "bytes, and a legacy stream starts with the pickle of its magic number", fmt="pt-legacy")
    return out
