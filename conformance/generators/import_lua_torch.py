"""Import the real Lua Torch golden files as committed cases (spec/t7.md).

Every ``*.t7`` of ``../shared/corpus/t7/lua-torch/`` with its ``*.expected.json`` becomes
``conformance/cases/<format>/<case-id>/``: the file (name unchanged), ``expected.json`` (copied byte for
byte: it is what real torch7 @814ea4a loaded) and ``case.yaml``.  Provenance comes from the folder's
``EXPECTED.md`` (how each file was written, whether by hand through ``torch.DiskFile`` primitives) and
the expected file's ``_loaded_with`` note; hints from ``_loaded_with``.  Features are derived from the
expected description plus a few per-file facts that the description cannot show; spec anchors from the
features, and canonical.md#canonical-t7-values for every accept case (its description uses those forms).
The two files real torch7 could not load either are reject cases with the code this project's
spec names for them.

This script never imports torchfmt: expectations come from the real writer's loader, not from us.

    python -m conformance.generators.import_lua_torch [--corpus ../shared/corpus] [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "conformance" / "cases"
FEATURES = ROOT / "conformance" / "features.yaml"
GENERATOR = "conformance/generators/import_lua_torch.py"
SOURCE = "t7/lua-torch"

LUAJIT_WRITER = "Lua Torch7 @814ea4a (LuaJIT 2.1.0-beta3, x86_64 Linux)"
LUA53_WRITER = "Lua Torch7 @814ea4a (Lua 5.3.6, x86_64 Linux)"

#: The files real torch7 could not load, and the code this project's spec gives each (spec/t7.md).
REJECTS: dict[str, tuple[str, str]] = {
    "class_custom_write.t7": (
        "bad-value",
        "spec/t7.md#t7-custom-write: the payload after the class header of test.CustomWrite starts with "
        "type code 7 where the generic layout needs a table (type code 3)"),
    "raw_primitives_stream.t7": (
        "bad-type-code",
        "spec/t7.md#t7-stream: writeBool + writeObject + writeInt is no sequence of objects; the third "
        "'type code' is 456"),
}

#: Facts about a file that its expected description does not show (EXPECTED.md says them).
EXTRA_FEATURES: dict[str, list[str]] = {
    "class_custom_write.t7": ["t7-custom-class", "t7-custom-write", "t7-class-version", "t7-torch-object"],
    "raw_primitives_stream.t7": ["adv-bad-type-code", "multi-object", "t7-nil", "t7-table"],
    "serialize_ascii.t7": ["t7-serialize"],
    "unreferenced.t7": ["t7-unreferenced"],
    "legacy_noversion_tensor.t7": ["t7-class-noversion"],
    "multi_object_stream.t7": ["t7-reference"],
    # binary streams that read completely with either long size (spec/t7.md#t7-detect, found by reading
    # each file both ways): only the hint of real torch7's load decides them (spec/t7.md#t7-hints)
    "storage_double.t7": ["t7-long-size-ambiguous"],
    "tensor_double_2x3.t7": ["t7-long-size-ambiguous"],
    "tensor_empty_nostorage.t7": ["t7-long-size-ambiguous"],
}

#: Of those, the files that read as exactly one object only with 8-byte longs (the 4-byte reading adds a
#: nil or more), and a 4-byte-long file that the 8-byte reading fails: each is imported a second time
#: without hints, since spec/t7.md#t7-detect decides it, and its expectation is still real torch7's.
NO_HINTS = (
    "storage_double.t7", "tensor_double_2x3.t7", "tensor_empty_nostorage.t7", "long4_tensor_double_t.t7",
)

#: Class-name prefixes of the packages real torch7 had installed (nn, nngraph, graph, tds, torch).
NN_PREFIXES = ("nn.", "nngraph.", "graph.")
KNOWN_PREFIXES = NN_PREFIXES + ("torch.", "tds.")

#: Spec anchors each feature exercises.
ANCHORS: dict[str, list[str]] = {
    "t7-binary": ["t7.md#t7-encodings", "t7.md#t7-binary"],
    "t7-ascii": ["t7.md#t7-encodings", "t7.md#t7-ascii"],
    "t7-long-size-ambiguous": ["t7.md#t7-hints", "canonical.md#canonical-t7-hints"],
    "t7-long-size-one-object": ["t7.md#t7-detect", "t7.md#t7-long-size"],
    "t7-long-size-one-reading": ["t7.md#t7-detect", "t7.md#t7-long-size"],
    "t7-long4": ["t7.md#t7-long-size", "canonical.md#canonical-t7-hints"],
    "t7-big-endian": ["t7.md#t7-byte-order"],
    "t7-nil": ["t7.md#t7-nil"],
    "t7-number": ["t7.md#t7-number"],
    "t7-string": ["t7.md#t7-string"],
    "t7-boolean": ["t7.md#t7-boolean"],
    "t7-table": ["t7.md#t7-table"],
    "t7-table-key": ["t7.md#t7-table"],
    "t7-reference": ["t7.md#t7-reference-index", "canonical.md#canonical-sharing"],
    "t7-self-reference": ["t7.md#t7-reference-index", "canonical.md#canonical-sharing"],
    "t7-unreferenced": ["t7.md#t7-reference-index"],
    "t7-torch-object": ["t7.md#t7-torch-object"],
    "t7-custom-class": ["t7.md#t7-torch-object"],
    "t7-nn-module": ["t7.md#t7-torch-object"],
    "t7-class-version": ["t7.md#t7-class-version"],
    "t7-class-noversion": ["t7.md#t7-class-version"],
    "t7-custom-write": ["t7.md#t7-custom-write"],
    "t7-cuda": ["t7.md#t7-cuda"],
    "t7-function": ["t7.md#t7-function"],
    "t7-legacy-function": ["t7.md#t7-function"],
    "t7-tds": ["t7.md#t7-tds"],
    "t7-lua53": ["t7.md#t7-number"],
    "t7-serialize": ["t7.md#t7-serialize"],
    "multi-object": ["t7.md#t7-stream"],
    "bare-storage": ["t7.md#t7-storage"],
    "shared-storage": ["t7.md#t7-storage", "canonical.md#canonical-sharing"],
    "storage-offset": ["t7.md#t7-tensor-offset", "tensors.md#tensors-storage-offset"],
    "non-contiguous": ["tensors.md#tensors-stride"],
    "expanded-stride0": ["tensors.md#tensors-stride"],
    "overlapping-view": ["tensors.md#tensors-stride"],
    "zero-dim": ["t7.md#t7-tensor", "tensors.md#tensors-zero-dim"],
    "no-storage": ["t7.md#t7-tensor"],
    "adv-bad-type-code": ["t7.md#t7-type-codes"],
}


# -- reading the corpus -------------------------------------------------------------------------------

def expected_md(folder: Path) -> dict[str, dict[str, str]]:
    """Per file: the ``mode`` and ``written by`` lines of EXPECTED.md."""
    out: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for line in (folder / "EXPECTED.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            current = out.setdefault(name, {}) if name.endswith(".t7") else None
        elif current is not None:
            m = re.match(r"- (mode|written by): (.*)", line)
            if m:
                current[m.group(1)] = m.group(2).strip().strip("`")
    return out


def hints_of(doc: dict[str, Any]) -> dict[str, Any]:
    """What real torch7's load used, from ``_loaded_with`` (spec/canonical.md#canonical-t7-hints)."""
    m = re.search(r"DiskFile (binary|ascii), longSize=([48]), (little|big)-endian", doc["_loaded_with"])
    if not m:
        raise SystemExit(f"cannot read the load settings in {doc['_loaded_with']!r}")
    hints: dict[str, Any] = {"mode": m.group(1)}
    if m.group(1) == "binary":  # the long size and byte order mean nothing to the ascii encoding
        hints.update(long_size=int(m.group(2)), byte_order=m.group(3))
    return hints


# -- features from the expected description -------------------------------------------------------

def _is_row_major(shape: list[int], stride: list[int]) -> bool:
    expect = 1
    for n, s in zip(reversed(shape), reversed(stride), strict=True):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def _overlaps(shape: list[int], stride: list[int]) -> bool:
    numel = 1
    for n in shape:
        numel *= n
    if numel == 0 or numel > 100_000 or 0 in [s for n, s in zip(shape, stride, strict=True) if n > 1]:
        return False
    addresses = {0}
    for n, s in zip(shape, stride, strict=True):
        addresses = {a + i * s for a in addresses for i in range(n)}
    return len(addresses) < numel


def tensor_features(t: dict[str, Any], storages: dict[str, Any]) -> set[str]:
    out = {f"dtype-{t['dtype']}"}
    shape, stride = t["shape"], t["stride"]
    if t["device"].startswith("cuda"):
        out |= {"t7-cuda", "cuda-location"}
    if t["storage"] is None:
        out.add("no-storage")
    if not shape:
        out.add("zero-dim")
        return out
    if 0 in shape:
        out.add("empty-tensor")
        return out
    numel = 1
    for n in shape:
        numel *= n
    if t["storage_offset"]:
        out.add("storage-offset")
    if any(s == 0 and n > 1 for n, s in zip(shape, stride, strict=True)):
        out.add("expanded-stride0")
    elif _overlaps(shape, stride):
        out.add("overlapping-view")
    elif not _is_row_major(shape, stride):
        out.add("non-contiguous")
    elif t["storage"] is not None and storages[t["storage"]]["numel"] == numel and not t["storage_offset"]:
        out.add("contiguous")
    if t["storage"] is not None and storages[t["storage"]]["numel"] > numel:
        out.add("partial-view")
    return out


def description_features(doc: dict[str, Any]) -> set[str]:
    """Features visible in a description: walk it with the ids of the enclosing objects."""
    out: set[str] = set()
    storages = doc["storages"]
    holders: dict[str, int] = {}
    for s in storages.values():
        out.add(f"dtype-{s['dtype']}")
    if len(doc["objects"]) > 1:
        out.add("multi-object")
    stack: list[tuple[Any, frozenset[str], bool]] = [(o, frozenset(), False) for o in doc["objects"]]
    while stack:
        node, ancestors, is_key = stack.pop()
        kind = node["type"]
        ident = node.get("id")
        inner = ancestors | {ident} if ident else ancestors
        simple = {"none": "t7-nil", "float": "t7-number", "str": "t7-string", "bytes": "t7-string",
                  "bool": "t7-boolean", "table": "t7-table", "function": "t7-function"}
        if kind in simple:
            out.add(simple[kind])
        if is_key and kind in ("table", "torch_object", "function", "ref", "tensor"):
            out.add("t7-table-key")
        if kind == "ref":
            out.add("t7-reference")
            if node["id"] in ancestors:
                out.add("t7-self-reference")
        elif kind == "table":
            for k, v in node["items"]:
                stack.append((k, inner, True))
                stack.append((v, inner, False))
        elif kind == "list":
            stack.extend((v, inner, False) for v in node["items"])
        elif kind == "torch_object":
            cls = node["class"]
            out.add("t7-torch-object")
            out.add("t7-class-version" if node["version"] is not None else "t7-class-noversion")
            if cls.startswith(NN_PREFIXES):
                out.add("t7-nn-module")
            if cls.startswith("tds."):
                out.add("t7-tds")
            if not cls.startswith(KNOWN_PREFIXES):
                out.add("t7-custom-class")
            stack.append((node["value"], inner, False))
        elif kind == "function":
            if node["kind"] != "recursive":
                out.add("t7-legacy-function")
            stack.extend((v, inner, False) for v in node["upvalues"])
        elif kind == "tensor":
            out |= tensor_features(node, storages)
            out.add("t7-class-version")
            if node["storage"] is not None:
                holders[node["storage"]] = holders.get(node["storage"], 0) + 1
        elif kind == "storage":
            out |= {"bare-storage", "t7-class-version"}
            holders[node["storage"]] = holders.get(node["storage"], 0) + 1
    if any(n > 1 for n in holders.values()):
        out.add("shared-storage")
    if any(s["device"].startswith("cuda") for s in storages.values()):
        out |= {"t7-cuda", "cuda-location"}
    return out


# -- writing the cases ------------------------------------------------------------------------------

def case_id(name: str) -> str:
    return name[: -len(".t7")].replace("_", "-")


def build_case(folder: Path, name: str, md: dict[str, str], vocabulary: set[str]) -> tuple[str, dict, bytes]:
    """The case folder's path under cases/, its case.yaml and the expected.json bytes."""
    expected_bytes = (folder / f"{name}.expected.json").read_bytes()
    doc = json.loads(expected_bytes)
    hints = hints_of(doc)
    fmt = f"t7-{hints['mode']}"
    feats = {fmt}
    if hints.get("long_size") == 4:
        feats.add("t7-long4")
    if hints.get("byte_order") == "big":
        feats.add("t7-big-endian")
    if name.startswith("lua53_"):
        feats.add("t7-lua53")
    if "error" not in doc:
        feats |= description_features(doc)
    feats |= set(EXTRA_FEATURES.get(name, []))
    if "t7-class-noversion" in feats and name == "legacy_noversion_tensor.t7":
        feats.discard("t7-class-version")
    unknown = sorted(feats - vocabulary)
    if unknown:
        raise SystemExit(f"{name}: features not in features.yaml: {unknown}")
    spec = ["t7.md#t7-type-codes", "t7.md#t7-detect"]
    for f in sorted(feats):
        for anchor in ANCHORS.get(f, []):
            if f.startswith("dtype-"):
                continue
            if anchor not in spec:
                spec.append(anchor)
    if any(f.startswith("dtype-") for f in feats):
        spec += [a for a in ("t7.md#t7-tensor", "t7.md#t7-storage", "tensors.md#tensors-dtype-table")
                 if a not in spec]
    raw = (folder / name).read_bytes()
    lines = [f"copied from ../shared/corpus/{SOURCE}/{name} (sha256 {hashlib.sha256(raw).hexdigest()})"]
    mode = md.get("mode", "")
    lines.append(f"mode: {mode}")
    if md.get("written by"):
        lines.append(f"written by: {md['written by']}")
    if "handcrafted" in mode:
        lines.append("handcrafted: written with the real torch.DiskFile primitive methods (writeInt, "
                     "writeLong, writeDouble, writeChar, ...), not by writeObject")
    lines.append(f"expected.json: what real torch.load gave ({doc['_loaded_with']})")
    for note in doc.get("_notes", []):
        lines.append(f"note: {note}")
    case: dict[str, Any] = {
        "id": f"{fmt}/{case_id(name)}",
        "category": "reject" if "error" in doc else "accept",
        "format": fmt,
        "file": name,
        "features": sorted(feats),
        "spec": spec,
        "provenance": {
            "writer": LUA53_WRITER if name.startswith("lua53_") else LUAJIT_WRITER,
            "generator": GENERATOR,
            "notes": "; ".join(lines),
        },
    }
    if "error" in doc:
        code, why = REJECTS[name]
        case["spec"] = spec + ["canonical.md#canonical-error-codes"]
        case["expect"] = {"error": code}
        case["provenance"]["notes"] += f"; real torch7 failed too: {doc['error']}; code: {why}"
    else:
        case["spec"] = spec + ["canonical.md#canonical-t7-values"]
        case["expect"] = {"description": "expected.json"}
    case["hints"] = hints
    return f"{fmt}/{case_id(name)}", case, expected_bytes


def without_hints(rel: str, case: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The same file and expectation read with no hint (spec/t7.md#t7-detect): of the two long sizes
    that read it completely, only the one real torch7 used gives one object."""
    out = dict(case)
    out["id"] = f"{rel}-no-hints"
    one_reading = case["hints"].get("long_size") == 4  # the 8-byte reading fails
    feature = "t7-long-size-one-reading" if one_reading else "t7-long-size-one-object"
    out["features"] = sorted(set(case["features"]) | {feature})
    hint_anchors = ANCHORS["t7-long-size-ambiguous"]  # this case has no hints
    spec = [a for a in case["spec"] if a not in hint_anchors]
    for anchor in ANCHORS[feature]:
        if anchor not in spec:
            spec.insert(-1, anchor)
    out["spec"] = spec
    out["provenance"] = dict(case["provenance"])
    if one_reading:
        out["provenance"]["notes"] += ("; read here without hints: the 8-byte reading fails, the 4-byte one "
                                       "(the writer's) reads the file completely")
    else:
        out["provenance"]["notes"] += ("; read here without hints: both long sizes read the file completely, "
                                       "and only the 8-byte reading (real torch7's) gives the one object "
                                       "torch.save writes")
    del out["hints"]
    return out["id"], out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--check", action="store_true", help="only report what would change")
    ap.add_argument("-k", help="only the cases whose id contains this (the others are left as they are)")
    args = ap.parse_args(argv)
    folder = args.corpus / SOURCE
    md = expected_md(folder)
    vocabulary: set[str] = set()
    for section in yaml.safe_load(FEATURES.read_text(encoding="utf-8")).values():
        vocabulary |= set(section)
    names = sorted(p.name[: -len(".expected.json")] for p in folder.glob("*.t7.expected.json"))
    missing = [n for n in names if not (folder / n).is_file()]
    if missing:
        raise SystemExit(f"expected files without their .t7: {missing}")
    changed = 0
    built = []
    for name in names:
        rel, case, expected_bytes = build_case(folder, name, md.get(name, {}), vocabulary)
        built.append((name, rel, case, expected_bytes))
        if name in NO_HINTS:
            built.append((name, *without_hints(rel, case), expected_bytes))
    if args.k:
        built = [b for b in built if args.k in b[1]]
    for name, rel, case, expected_bytes in built:
        out = CASES / rel
        text = yaml.safe_dump(case, sort_keys=False, allow_unicode=True, width=110)
        # expected.json is copied for reject cases too: it records how real torch7 failed.
        files = {name: (folder / name).read_bytes(), "case.yaml": text.encode("utf-8"),
                 "expected.json": expected_bytes}
        for fname, data in files.items():
            target = out / fname
            if target.is_file() and target.read_bytes() == data:
                continue
            changed += 1
            if args.check:
                print(f"would write {target.relative_to(ROOT)}")
                continue
            out.mkdir(parents=True, exist_ok=True)
            if fname == name:
                shutil.copyfile(folder / name, target)
            else:
                target.write_bytes(data)
    print(f"{len(built)} cases from {folder}: {changed} files {'to write' if args.check else 'written'}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
