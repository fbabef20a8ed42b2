"""Reject cases derived from real-writer files: truncations, tampered magic, bad type codes, negative and
oversized lengths, views outside their storage (spec/canonical.md#canonical-error-codes).

Every case starts from a file a real writer wrote: a Lua Torch ``.t7`` file (the committed
``cases/t7-binary`` case with the same bytes when there is one, else ``../shared/corpus/t7/lua-torch``)
or a torch-written ``.pt`` file (a committed ``pt-zip``/``pt-legacy`` accept case holding a float32
tensor when there is one, else a file written here by the installed torch).  One structural field is
then edited, in place, at an offset found by walking the layout the spec gives; zip members that change
get their CRC-32 recomputed in every header.  Derived ``.pt`` files are checked against real torch:
a file torch loads is not written as a reject case.

The expected error code is the spec's judgement of the edit (errors.py says what each code means); the
reader under test never decides it.  Run ``python -m conformance.generators.rejects`` to (re)write the
cases; it never imports torchfmt.

:func:`unsafe_global_files` builds, at test time, the pickles whose global would run a shell command.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import pickle
import pickletools
import shutil
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from conformance.generators.case_folder import write_case_folder
from conformance.harness.expected import read_expected_bytes

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "conformance" / "cases"
GENERATOR = "conformance/generators/rejects.py"
LUA_TORCH_WRITER = "Lua Torch7 @814ea4a (LuaJIT 2.1)"
T7_HINTS = {"mode": "binary", "long_size": 8, "byte_order": "little"}
LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
#: libyaml's safe loader where PyYAML has it (the suite's collection reads every case.yaml through here).
SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def corpus_root() -> Path:
    env = os.environ.get("TORCHFMT_CORPUS")
    return Path(env) if env else (ROOT.parent / "shared" / "corpus").resolve()


@dataclass
class Source:
    data: bytes
    label: str  # where the bytes come from, for provenance
    writer: str
    expected: dict[str, Any] | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass
class Reject:
    folder: str  # "<format>/<name>"
    source: Source
    data: bytes
    errors: list[str]
    features: list[str]
    spec: list[str]
    how: str
    hints: dict[str, Any] | None = None
    checked: str = ""  # what real torch said of the derived file
    extra_features: list[str] = field(default_factory=list)

    @property
    def format(self) -> str:
        return self.folder.split("/")[0]


# -- sources ---------------------------------------------------------------------------------------

def _tracked(fmt: str) -> set[Path] | None:
    """Files of ``cases/<fmt>/`` that git tracks (``None`` outside a git checkout: trust the tree)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", f"conformance/cases/{fmt}"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return {ROOT / p for p in out.decode("utf-8").split("\0") if p}


def _committed_files(fmt: str) -> list[tuple[Path, dict[str, Any]]]:
    """(file, case.yaml) of the committed cases of ``fmt``: files not yet in git are not sources."""
    tracked = _tracked(fmt)
    out = []
    for yml in sorted((CASES / fmt).glob("*/case.yaml")):
        if tracked is not None and yml not in tracked:
            continue
        try:
            data = yaml.load(yml.read_text(encoding="utf-8"), Loader=SAFE_LOADER)  # noqa: S506 - safe
        except yaml.YAMLError:
            continue
        file = data.get("file") if isinstance(data, dict) else None
        if isinstance(file, str) and (yml.parent / file).is_file():
            out.append((yml.parent / file, data))
    return out


def t7_source(name: str) -> Source:
    """A Lua Torch file: its committed copy (a t7-binary accept case holding the file ``name``) when there
    is one, else the corpus file ``../shared/corpus/t7/lua-torch/<name>``."""
    for path, meta in _committed_files("t7-binary"):
        if path.name == name and meta.get("category") == "accept":
            return Source(path.read_bytes(), path.relative_to(ROOT).as_posix(),
                          str(meta.get("provenance", {}).get("writer", LUA_TORCH_WRITER)))
    original = corpus_root() / "t7" / "lua-torch" / name
    return Source(original.read_bytes(), f"../shared/corpus/t7/lua-torch/{name}", LUA_TORCH_WRITER)


def _single_float_tensor(expected: dict[str, Any]) -> bool:
    objs = expected.get("objects") or [{}]
    top = objs[0]
    return (top.get("type") == "tensor" and top.get("dtype") == "float32" and top.get("storage_offset") == 0
            and len(expected.get("storages", {})) == 1 and 2 <= len(top.get("shape", [])) and
            0 < expected["storages"][top["storage"]]["numel"] < 200)


def pt_source(fmt: str) -> Source:
    """A torch-written file holding one float32 tensor: the smallest committed accept case, else one
    written now by the installed torch."""
    found = []
    for path, meta in _committed_files(fmt):
        writer = str(meta.get("provenance", {}).get("writer", ""))
        desc = (meta.get("expect") or {}).get("description")
        if meta.get("category") != "accept" or not writer.startswith("torch") or not isinstance(desc, str):
            continue
        try:
            expected = json.loads(read_expected_bytes(path.parent / desc))
        except (OSError, ValueError):
            continue
        if _single_float_tensor(expected):
            found.append((path.stat().st_size, path, writer, expected))
    if found:
        _, path, writer, expected = min(found)
        return Source(path.read_bytes(), path.relative_to(ROOT).as_posix(), writer, expected)
    import torch

    buf = io.BytesIO()
    torch.save(torch.arange(6, dtype=torch.float32).reshape(2, 3), buf,
               _use_new_zipfile_serialization=(fmt == "pt-zip"))
    call = ("torch.save(torch.arange(6, dtype=torch.float32).reshape(2, 3), f"
            + (")" if fmt == "pt-zip" else ", _use_new_zipfile_serialization=False)"))
    return Source(buf.getvalue(), f"a file written by {call} (not committed)", f"torch {torch.__version__}")


# -- layouts (spec/t7.md#t7-tensor, spec/pt-legacy.md, spec/pt-zip.md) -------------------------------

def t7_tensor_layout(data: bytes) -> dict[str, int]:
    """Offsets of the fields of a binary (little-endian, 8-byte long) t7 file holding one tensor."""
    at: dict[str, int] = {}
    pos = 0

    def int32(name: str) -> int:
        nonlocal pos
        at[name] = pos
        pos += 4
        return struct.unpack_from("<i", data, pos - 4)[0]

    def long(name: str) -> int:
        nonlocal pos
        at[name] = pos
        pos += 8
        return struct.unpack_from("<q", data, pos - 8)[0]

    def string(name: str) -> bytes:
        nonlocal pos
        n = int32(name + "_len")
        pos += n
        return data[pos - n:pos]

    assert int32("type") == 4
    int32("index")
    assert string("version") == b"V 1"
    assert string("class").endswith(b"Tensor")
    ndim = int32("ndim")
    for i in range(ndim):
        long(f"size{i}")
    for i in range(ndim):
        long(f"stride{i}")
    long("offset")
    assert int32("storage_type") == 4
    int32("storage_index")
    string("storage_version")
    assert string("storage_class").endswith(b"Storage")
    long("storage_size")
    at["storage_data"] = pos
    return at


def pickle_spans(data: bytes) -> list[tuple[int, int, list[tuple[str, Any, int]]]]:
    """The consecutive pickles at the start of a legacy stream: (start, end, [(opcode, arg, pos)]).
    Opcodes are only listed (pickletools.genops), never executed."""
    spans = []
    f = io.BytesIO(data)
    for _ in range(5):
        start = f.tell()
        ops = [(op.name, arg, pos) for op, arg, pos in pickletools.genops(f)]
        spans.append((start, f.tell(), ops))
    return spans


def rebuild_args(ops: list[tuple[str, Any, int]]) -> tuple[tuple[str, int], tuple[str, int]]:
    """(opcode, position) of the storage offset and of the first size in the first
    ``_rebuild_tensor_v2`` call: the two integers after its storage's BINPERSID."""
    start = next(i for i, (name, arg, _) in enumerate(ops)
                 if name in ("GLOBAL", "STACK_GLOBAL", "SHORT_BINUNICODE", "BINUNICODE")
                 and isinstance(arg, str) and "_rebuild_tensor" in arg)
    persid = next(i for i in range(start, len(ops)) if ops[i][0] == "BINPERSID")
    ints = [(name, pos) for name, _, pos in ops[persid + 1:] if name in ("BININT1", "BININT2", "BININT")]
    return ints[0], ints[1]


def set_int_op(data: bytearray, op: tuple[str, int], value: int) -> None:
    """Overwrite a BININT1/BININT2/BININT argument in place (same width)."""
    name, pos = op
    fmt = {"BININT1": "<B", "BININT2": "<H", "BININT": "<i"}[name]
    struct.pack_into(fmt, data, pos + 1, value)


def zip_members(data: bytes) -> dict[str, dict[str, int]]:
    """Central-directory facts of each member: local header, data start/size, CRC field offsets."""
    eocd = data.rindex(b"PK\x05\x06")
    count, cd_size, cd_start = struct.unpack_from("<HII", data, eocd + 10)
    members = {}
    pos = cd_start
    for _ in range(count):
        assert data[pos:pos + 4] == b"PK\x01\x02"
        flags, = struct.unpack_from("<H", data, pos + 8)
        csize, usize = struct.unpack_from("<II", data, pos + 20)
        n, m, k = struct.unpack_from("<HHH", data, pos + 28)
        local, = struct.unpack_from("<I", data, pos + 42)
        name = data[pos + 46:pos + 46 + n].decode("utf-8")
        ln, lm = struct.unpack_from("<HH", data, local + 26)
        start = local + 30 + ln + lm
        members[name] = {"central": pos, "local": local, "start": start, "size": csize, "flags": flags}
        pos += 46 + n + m + k
    return members


def zip_replace(data: bytes, member_suffix: str, new: bytes) -> bytes:
    """Replace a stored member's bytes with ``new`` of the same length, fixing its CRC-32 in the local
    header (when set there), the data descriptor (when flag bit 3 is set) and the central directory."""
    out = bytearray(data)
    name, m = next((n, m) for n, m in zip_members(data).items() if n.endswith(member_suffix))
    assert len(new) == m["size"], (name, len(new), m["size"])
    out[m["start"]:m["start"] + m["size"]] = new
    crc = zlib.crc32(new)
    if struct.unpack_from("<I", out, m["local"] + 14)[0] != 0:
        struct.pack_into("<I", out, m["local"] + 14, crc)
    if m["flags"] & 0x08:
        desc = m["start"] + m["size"]
        desc += 4 if out[desc:desc + 4] == b"PK\x07\x08" else 0
        struct.pack_into("<I", out, desc, crc)
    struct.pack_into("<I", out, m["central"] + 16, crc)
    return bytes(out)


# -- the cases -------------------------------------------------------------------------------------

def _patch(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def t7_rejects() -> list[Reject]:
    src = t7_source("tensor_float_2x3.t7")
    d, at = src.data, t7_tensor_layout(src.data)
    base = ["t7-binary", "t7-torch-object", "dtype-float32"]
    t7_spec = ["t7.md#t7-binary", "canonical.md#canonical-error-codes"]

    def case(name: str, data: bytes, errors: list[str], feats: list[str], spec: list[str], how: str,
             source: Source = src, base_feats: list[str] = base) -> Reject:
        return Reject(f"t7-binary/{name}", source, data, errors, base_feats + feats, t7_spec + spec, how,
                      dict(T7_HINTS))

    cut = "adv-truncated"
    out = [
        case("reject-truncated-in-type-code", d[:2], ["truncated"], [cut], ["t7.md#t7-type-codes"],
             "cut after 2 bytes, inside the first type code"),
        case("reject-truncated-after-class-name", d[:at["ndim"]], ["truncated"], [cut],
             ["t7.md#t7-torch-object", "t7.md#t7-tensor"],
             f"cut at byte {at['ndim']}, right after the class name, before the tensor's nDimension"),
        case("reject-truncated-in-sizes", d[:at["size0"] + 4], ["truncated"], [cut], ["t7.md#t7-tensor"],
             f"cut at byte {at['size0'] + 4}, inside the first size (an 8-byte long)"),
        case("reject-truncated-in-storage-data", d[:at["storage_data"] + 10], ["truncated"], [cut],
             ["t7.md#t7-storage"], f"cut at byte {at['storage_data'] + 10}, 10 bytes into the "
             "storage's 24 data bytes"),
        case("reject-truncated-last-byte", d[:-1], ["truncated"], [cut], ["t7.md#t7-storage"],
             "the last byte removed"),
        case("reject-unknown-type-code", _patch(d, at["storage_type"], "<i", 99), ["bad-type-code"],
             ["adv-bad-type-code"], ["t7.md#t7-type-codes"],
             f"the storage's type code (byte {at['storage_type']}) set from 4 (torch object) to 99"),
        case("reject-negative-class-name-length", _patch(d, at["storage_class_len"], "<i", -5),
             ["bad-length"], ["adv-negative-length"], ["t7.md#t7-string", "t7.md#t7-torch-object"],
             f"the storage's class-name length (byte {at['storage_class_len']}) set to -5"),
        case("reject-negative-storage-size", _patch(d, at["storage_size"], "<q", -1), ["bad-length"],
             ["adv-negative-length"], ["t7.md#t7-storage"],
             f"the storage size (long at byte {at['storage_size']}) set from 6 to -1"),
        case("reject-negative-ndim", _patch(d, at["ndim"], "<i", -1), ["bad-length"],
             ["adv-negative-length"], ["t7.md#t7-tensor"],
             f"the tensor's nDimension (int at byte {at['ndim']}) set from 2 to -1"),
        case("reject-storage-size-beyond-eof", _patch(d, at["storage_size"], "<q", 1000), ["truncated"],
             ["adv-size-beyond-eof"], ["t7.md#t7-storage"],
             f"the storage size (long at byte {at['storage_size']}) set from 6 to 1000 elements: "
             "4000 bytes declared, 24 in the file"),
        case("reject-string-length-beyond-eof", _patch(d, at["class_len"], "<i", 1000), ["truncated"],
             ["adv-size-beyond-eof"], ["t7.md#t7-string"],
             f"the tensor's class-name length (int at byte {at['class_len']}) set from 17 to 1000"),
        case("reject-view-offset-outside-storage", _patch(d, at["offset"], "<q", 100), ["out-of-bounds"],
             ["adv-view-out-of-bounds", "storage-offset"],
             ["t7.md#t7-tensor-offset", "tensors.md#tensors-view-bounds"],
             f"the tensor's 1-based storageOffset (long at byte {at['offset']}) set from 1 to 100; "
             "the storage holds 6 elements"),
        case("reject-view-size-outside-storage", _patch(d, at["size0"], "<q", 50), ["out-of-bounds"],
             ["adv-view-out-of-bounds"], ["t7.md#t7-tensor", "tensors.md#tensors-view-bounds"],
             f"the tensor's first size (long at byte {at['size0']}) set from 2 to 50: the 50x3 view "
             "with strides {3,1} reaches element 150 of a 6-element storage"),
    ]
    table = t7_source("table_nested.t7")
    tfeat = ["t7-binary", "t7-table", "t7-string"]
    out += [
        case("reject-truncated-in-string", table.data[:-2], ["truncated"], [cut], ["t7.md#t7-string"],
             "the last 2 bytes removed, inside the innermost string value 'deep'", table, tfeat),
        case("reject-unknown-top-type-code", _patch(table.data, 0, "<i", 99),
             ["bad-type-code", "unknown-format"], ["adv-bad-type-code"],
             ["t7.md#t7-type-codes", "t7.md#t7-detect"],
             "the first type code set from 3 (table) to 99; with the binary hint a reader names the "
             "bad type code, one that sniffs the encoding first may find no t7 encoding at all",
             table, tfeat),
    ]
    return out


def legacy_rejects() -> list[Reject]:
    src = pt_source("pt-legacy")
    d = src.data
    spans = pickle_spans(d)
    obj_start, obj_end, obj_ops = spans[3]
    keys_end = spans[4][1]
    numel, = struct.unpack_from("<q", d, keys_end)
    data_start = keys_end + 8
    offset_op, size_op = rebuild_args(obj_ops)
    base = ["legacy-stream", "dtype-float32"]
    spec = ["pt-legacy.md#pt-legacy-magic", "canonical.md#canonical-error-codes"]

    def case(name: str, data: bytes, errors: list[str], feats: list[str], more: list[str],
             how: str) -> Reject:
        return Reject(f"pt-legacy/{name}", src, data, errors, base + feats, spec + more, how)

    magic = bytearray(d)
    long1 = next(pos for name, _, pos in spans[0][2] if name == "LONG1")
    magic[long1 + 2] ^= 0x01  # LONG1: opcode, length byte, then the little-endian magic
    version = bytearray(d)
    set_int_op(version, next((n, p) for n, _, p in spans[1][2] if n.startswith("BININT")), 999)
    view = bytearray(d)
    set_int_op(view, offset_op, 200)
    return [
        case("reject-bad-magic", bytes(magic), ["bad-magic"], ["adv-bad-magic", "legacy-magic"], [],
             f"one bit of the magic number 0x{LEGACY_MAGIC:x} flipped (byte {long1 + 2}, inside the first "
             "pickle's LONG1)"),
        case("reject-bad-protocol-version", bytes(version), ["bad-magic"], ["adv-bad-magic", "legacy-magic"],
             ["pt-legacy.md#pt-legacy-protocol-version"],
             "the protocol version pickled after the magic number set from 1001 to 999"),
        case("reject-truncated-in-object-pickle", d[:(obj_start + obj_end) // 2], ["truncated"],
             ["adv-truncated"], ["pt-legacy.md#pt-legacy-object"],
             f"cut at byte {(obj_start + obj_end) // 2}, halfway through the object pickle "
             f"(bytes {obj_start}-{obj_end})"),
        case("reject-truncated-in-storage-data", d[:data_start + 10], ["truncated"], ["adv-truncated"],
             ["pt-legacy.md#pt-legacy-storages"],
             f"cut at byte {data_start + 10}, 10 bytes into the storage's {numel * 4} data bytes"),
        case("reject-view-offset-outside-storage", bytes(view), ["out-of-bounds"],
             ["adv-view-out-of-bounds", "storage-offset"],
             ["pt-legacy.md#pt-legacy-rebuild-tensor", "tensors.md#tensors-view-bounds"],
             f"the storage offset argument of _rebuild_tensor_v2 ({offset_op[0]} at byte {offset_op[1]}) "
             f"set from 0 to 200; the storage holds {numel} elements"),
        case("reject-storage-numel-beyond-eof", _patch(d, keys_end, "<q", numel + 1000),
             ["truncated", "bad-value"], ["adv-size-beyond-eof"], ["pt-legacy.md#pt-legacy-storages"],
             f"the element count before the storage's raw bytes (int64 at byte {keys_end}) set from "
             f"{numel} to {numel + 1000}: past the end of the file, and no longer the count the "
             "pickle's persistent id gives"),
    ]


def zip_rejects() -> list[Reject]:
    src = pt_source("pt-zip")
    d = src.data
    members = zip_members(d)
    pkl_name, pkl = next((n, m) for n, m in members.items() if n.endswith("/data.pkl"))
    rec_name, rec = next((n, m) for n, m in members.items() if "/data/" in n)
    pkl_bytes = d[pkl["start"]:pkl["start"] + pkl["size"]]
    ops = [(op.name, arg, pos) for op, arg, pos in pickletools.genops(pkl_bytes)]
    offset_op, size_op = rebuild_args(ops)
    base = ["zip-archive", "dtype-float32"]
    spec = ["pt-zip.md#pt-zip-container", "canonical.md#canonical-error-codes"]

    def case(name: str, data: bytes, errors: list[str], feats: list[str], more: list[str],
             how: str) -> Reject:
        return Reject(f"pt-zip/{name}", src, data, errors, base + feats, spec + more, how)

    def edited(op: tuple[str, int], value: int) -> bytes:
        new = bytearray(pkl_bytes)
        set_int_op(new, op, value)
        return zip_replace(d, "/data.pkl", bytes(new))

    eocd = d.rindex(b"PK\x05\x06")
    return [
        case("reject-truncated-central-directory", d[:eocd - 10], ["truncated", "bad-container"],
             ["adv-truncated"], [],
             f"cut at byte {eocd - 10}: the end-of-central-directory record and the end of the central "
             "directory are gone"),
        case("reject-truncated-in-storage-record", d[:rec["start"] + rec["size"] // 2],
             ["truncated"], ["adv-truncated"], ["pt-zip.md#pt-zip-container"],
             f"cut at byte {rec['start'] + rec['size'] // 2}, halfway through the record {rec_name}"),
        case("reject-view-offset-outside-storage", edited(offset_op, 200), ["out-of-bounds"],
             ["adv-view-out-of-bounds", "storage-offset"],
             ["pt-zip.md#pt-zip-data-pkl", "tensors.md#tensors-view-bounds"],
             f"in {pkl_name}, the storage offset argument of _rebuild_tensor_v2 ({offset_op[0]} at pickle "
             "byte {}) set from 0 to 200; the member's CRC-32 recomputed, the layout unchanged"
             .format(offset_op[1])),
        case("reject-view-size-outside-storage", edited(size_op, 200), ["out-of-bounds"],
             ["adv-view-out-of-bounds"], ["pt-zip.md#pt-zip-data-pkl", "tensors.md#tensors-view-bounds"],
             f"in {pkl_name}, the first size of the tensor ({size_op[0]} at pickle byte {size_op[1]}) "
             "set to 200; the member's CRC-32 recomputed, the layout unchanged"),
    ]


def torch_verdict(data: bytes) -> str:
    """What real torch says of a derived .pt file: the exception it raises (the generator refuses to
    call a file torch loads a reject case)."""
    import torch

    try:
        torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - any failure of torch's loader is the evidence sought
        first = (str(e).strip().splitlines() or [""])[0][:160]
        return (f"torch {torch.__version__} torch.load(weights_only=True) refuses it: "
                f"{type(e).__name__}: {first}")
    raise SystemExit("real torch loads a derived file; it is not a reject case")


BUILDERS: dict[str, Callable[[], list[Reject]]] = {
    "t7-binary": lambda: t7_rejects(), "pt-legacy": lambda: legacy_rejects(), "pt-zip": lambda: zip_rejects()}


def all_rejects(formats: list[str] | None = None) -> list[Reject]:
    out = [r for fmt, build in BUILDERS.items() if formats is None or fmt in formats for r in build()]
    for r in out:
        if r.format.startswith("pt-"):
            r.checked = torch_verdict(r.data)
        else:
            r.checked = "what real Lua Torch does with it: case.yaml lua (conformance/lua_verdicts.py)"
    return out


# -- writing ---------------------------------------------------------------------------------------

def case_yaml(r: Reject, file: str) -> dict[str, Any]:
    notes = (f"derived from {r.source.label} (sha256 {r.source.sha256[:16]}..., written by "
             f"{r.source.writer}): {r.how}. {r.checked}.")
    data: dict[str, Any] = {
        "id": r.folder, "category": "reject", "format": r.format, "file": file,
        "features": sorted(set(r.features)), "spec": list(dict.fromkeys(r.spec)),
        "provenance": {"writer": f"generated (adversarial), derived from a {r.source.writer} file",
                       "generator": GENERATOR, "notes": notes},
        "expect": {"error": r.errors[0]} if len(r.errors) == 1 else {"errors": r.errors},
    }
    if r.hints:
        data["hints"] = r.hints
    return data


def generated_folders() -> list[Path]:
    """Case folders this generator wrote before (their provenance names it)."""
    out = []
    for yml in CASES.glob("*/*/case.yaml"):
        try:
            data = yaml.load(yml.read_text(encoding="utf-8"), Loader=SAFE_LOADER)  # noqa: S506 - safe
        except yaml.YAMLError:
            continue
        if isinstance(data, dict) and (data.get("provenance") or {}).get("generator") == GENERATOR:
            out.append(yml.parent)
    return out


def write(rejects: list[Reject], formats: list[str] | None = None) -> list[Path]:
    """Write the cases; remove the generator's earlier cases of these formats that it no longer makes."""
    written = []
    for r in rejects:
        folder = CASES / r.folder
        file = "data.t7" if r.format.startswith("t7") else "data.pt"
        write_case_folder(folder, file, r.data, case_yaml(r, file))
        written.append(folder)
    for stale in set(generated_folders()) - set(written):
        if formats is None or stale.parent.name in formats:
            shutil.rmtree(stale)
    return written


# -- test-time: a pickle whose global would run code ----------------------------------------------

class _RunsCode:
    """Pickles as ``os.system(command)``: REDUCE of the global ``posix system`` (never unpickled)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[str]]:
        return (os.system, (self.command,))


def unsafe_global_files(folder: Path, command: str) -> dict[str, Path]:
    """A zip ``.pt`` and a legacy ``.pt`` whose object pickle calls ``os.system(command)`` if executed
    (spec/pickle.md#pickle-no-execution).  Built with :func:`pickle.dumps`, which only writes."""
    payload = pickle.dumps({"weight": _RunsCode(command)}, protocol=2)
    assert b"system" in payload
    zpath = folder / "unsafe_zip.pt"
    import zipfile

    with zipfile.ZipFile(zpath, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    lpath = folder / "unsafe_legacy.pt"
    sys_info = {"protocol_version": 1001, "little_endian": True,
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    lpath.write_bytes(pickle.dumps(LEGACY_MAGIC, protocol=2) + pickle.dumps(1001, protocol=2)
                      + pickle.dumps(sys_info, protocol=2) + payload + pickle.dumps([], protocol=2))
    return {"pt-zip": zpath, "pt-legacy": lpath}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--list", action="store_true", help="print the cases without writing them")
    p.add_argument("--formats", nargs="+", choices=sorted(BUILDERS), help="only these formats")
    args = p.parse_args(argv)
    rejects = all_rejects(args.formats)
    if args.list:
        for r in rejects:
            print(f"{r.folder}: {r.errors} <- {r.source.label}: {r.how}")
        return 0
    for folder in write(rejects, args.formats):
        print(folder.relative_to(ROOT))
    print(f"{len(rejects)} reject cases written", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
