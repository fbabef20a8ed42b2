"""The ``.t7`` cases that decide what spec/t7.md left open (issue 18), each checked with real Lua Torch.

Every case is a small stream built here from the grammar of spec/t7.md (or, for ``torch.serialize``, the
bytes real Lua Torch returns), named ``t7-binary/spec-*`` or ``t7-ascii/spec-*``.  Each file is read by
real Lua Torch (the lua-torch adapter's prefix, or ``$TORCHFMT_LUA_TORCH``: torch7 @814ea4a on LuaJIT 2.1,
nn and tds, built by ``../shared/tools/lua-torch/build.sh``) with ``lua_describe.lua``:
``File:readObject`` with the case's mode, long size and byte order, every object until the end of the
file.  Its verdict is recorded in the case's notes:

- an ``accept`` case is one Lua Torch loads; its ``expected.json`` is made from what Lua Torch loaded
  (:func:`canonical`): values, sizes, strides, offsets and element bytes as Lua reports them.  Only the
  facts Lua keeps nowhere come from the case's own bytes: a class's version text, and a function's type
  code and bytecode hash.  The generator stops when Lua refuses an accept case;
- a ``reject`` or ``impl`` case Lua Torch loads is stricter than Lua Torch: its notes say why (``why``);
  the generator stops when that reason is missing.  The feature ``stricter-than-lua`` is
  ``conformance/lua_verdicts.py``'s, from the lua-torch adapter's verdict, as for every .t7 case.

This script never imports torchfmt.

    python -m conformance.generators.t7_questions [--check]
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

from conformance.generators import lua_torch
from conformance.generators.case_folder import write_case_folder
from conformance.generators.t7_question_cases import PREFIX, Case, all_cases

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "conformance" / "cases"
GENERATOR = "conformance/generators/t7_questions.py"

#: dtype of each tensor or storage class stem (spec/tensors.md#tensors-dtype-table; the generator keeps
#: its own copy: it never imports the reader).
DTYPES = {
    "Byte": "uint8",
    "Char": "int8",
    "Short": "int16",
    "Int": "int32",
    "Long": "int64",
    "Half": "float16",
    "Float": "float32",
    "Double": "float64",
}


# -- Lua's reading -> the canonical description (spec/canonical.md) -------------------------------------
def canonical(case: Case, raw: dict[str, Any]) -> dict[str, Any]:
    reached: dict[int, int] = {}

    def count(v: Any) -> None:
        stack = [v]
        while stack:
            x = stack.pop()
            if isinstance(x, dict):
                if "key" in x:
                    reached[x["key"]] = reached.get(x["key"], 0) + 1
                stack.extend(x.values())
            elif isinstance(x, list):
                stack.extend(x)

    count(raw["objects"])
    ids: dict[int, str] = {}
    storage_ids: dict[str, str] = {}
    functions = iter(case.functions)

    def sid(key: int) -> str:
        return storage_ids.setdefault(str(key), f"s{len(storage_ids)}")

    def value(v: dict[str, Any]) -> dict[str, Any]:
        t = v["t"]
        if t == "nil":
            return {"type": "none"}
        if t == "bool":
            return {"type": "bool", "value": v["v"]}
        if t == "num":
            return {"type": "float", "value": v["v"]}
        if t == "str":
            b = bytes.fromhex(v["hex"])
            try:
                return {"type": "str", "value": b.decode("utf-8")}
            except UnicodeDecodeError:
                return {"type": "bytes", "hex": v["hex"]}
        if t == "storage":
            return {"type": "storage", "storage": sid(v["storage"])}
        if t == "ref":
            return {"type": "ref", "id": ids[v["key"]]}
        out: dict[str, Any]
        shared = reached[v["key"]] > 1
        if shared:
            ids[v["key"]] = f"o{len(ids)}"
        if t == "table":
            out = {"type": "table", "items": [[value(k), value(x)] for k, x in v["items"]]}
        elif t == "tensor":
            stem = v["class"].split(".")[-1][: -len("Tensor")].replace("Cuda", "")
            out = {
                "type": "tensor",
                "dtype": DTYPES[stem],
                "shape": v["size"],
                "stride": v["stride"],
                "storage_offset": v["offset"],
                "storage": None if v["storage"] is None else sid(v["storage"]),
                "device": "cpu",
                "requires_grad": False,
                "sha256": hashlib.sha256(bytes.fromhex(v["hex"])).hexdigest(),
            }
        elif t == "function":
            kind, bytecode = next(functions)
            out = {
                "type": "function",
                "kind": kind,
                "bytecode_sha256": hashlib.sha256(bytecode).hexdigest(),
                "upvalues": [value(u) for u in v["upvalues"]],
            }
        elif t == "obj":
            inner = (
                {"type": "list", "items": [value(x) for x in v["list"]]}
                if "list" in v
                else {"type": "table", "items": [[value(k), value(x)] for k, x in v["items"]]}
            )
            out = {
                "type": "torch_object",
                "class": v["class"],
                "version": case.versions.get(v["class"], "1"),
                "value": inner,
            }
        else:
            raise SystemExit(f"{case.folder}: Lua described an unknown kind {t}")
        if shared:
            out["id"] = ids[v["key"]]
        return out

    objects = [value(o) for o in raw["objects"]]
    storages = {}
    for key, s in raw["storages"].items():
        if key not in storage_ids:
            continue
        stem = s["class"].split(".")[-1][: -len("Storage")].replace("Cuda", "")
        storages[storage_ids[key]] = {
            "dtype": DTYPES[stem],
            "numel": s["n"],
            "device": "cpu",
            "sha256": hashlib.sha256(bytes.fromhex(s["hex"])).hexdigest(),
        }
    mode, long_size, order = case.lua_args()
    how = f"longSize={long_size}, {order}-endian" if mode == "binary" else "ascii"
    return {
        "format": case.fmt,
        "objects": objects,
        "storages": dict(sorted(storages.items())),
        "_loaded_with": f"torch7@814ea4a (LuaJIT 2.1) File:readObject over torch.DiskFile {mode}, {how}, "
        "every object until the end of the file (conformance/generators/lua_describe.lua)",
    }


def case_yaml(case: Case) -> dict[str, Any]:
    assert case.lua is not None
    loads, said = case.lua
    notes = [case.how, said + " (conformance/generators/lua_describe.lua)"]
    features = set(case.features)
    if case.category != "accept" and loads:
        if not case.why:
            raise SystemExit(f"{case.folder}: Lua Torch loads it; say why the spec is stricter (why)")
        # the feature stricter-than-lua and its reason (case.yaml lua) are conformance/lua_verdicts.py's,
        # from the lua-torch adapter's verdict: this run's notes say what Lua did here
        notes.append(f"stricter than Lua Torch: {case.why}")
    expect: dict[str, Any]
    if case.category == "accept":
        expect = {"description": "expected.json"}
    elif len(case.errors) == 1:
        expect = {"error": case.errors[0]}
    else:
        expect = {"errors": list(case.errors)}
    return {
        "id": case.folder,
        "category": case.category,
        "format": case.fmt,
        "file": "data.t7",
        "features": sorted(features),
        "spec": list(dict.fromkeys(case.spec)),
        "provenance": {
            "writer": case.writer,
            "generator": GENERATOR,
            "notes": ". ".join(n.rstrip(".") for n in notes) + ".",
        },
        "expect": expect,
    } | ({"hints": dict(case.hints)} if case.hints else {})


def owned() -> list[Path]:
    out = []
    for yml in CASES.glob(f"t7-*/{PREFIX}*/case.yaml"):
        data = yaml.safe_load(yml.read_text(encoding="utf-8")) or {}
        if (data.get("provenance") or {}).get("generator") == GENERATOR:
            out.append(yml.parent)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--check", action="store_true", help="run Lua Torch on every case and report; write nothing"
    )
    p.add_argument("-k", help="only the cases whose name contains this")
    args = p.parse_args(argv)
    sys.setrecursionlimit(100_000)  # descriptions of 1,025 nested levels
    cases = [c for c in all_cases() if not args.k or args.k in c.name]
    names = [c.folder for c in cases]
    assert len(set(names)) == len(names), "duplicate case names"
    written = []
    for c in cases:
        reading = lua_torch.read(c.data, *c.lua_args())
        c.lua = (reading.loads, reading.said)
        print(f"{c.folder:64} {c.category:6} {','.join(c.errors):28} {reading.said[:70]}")
        expected = None
        if c.category == "accept":
            if reading.raw is None:
                raise SystemExit(f"{c.folder}: an accept case Lua Torch does not load: {reading.said}")
            expected = canonical(c, reading.raw)
        yml = case_yaml(c)
        if not args.check:
            write_case_folder(CASES / c.folder, "data.t7", c.data, yml, expected)
            written.append(CASES / c.folder)
    if not args.check and not args.k:
        for stale in set(owned()) - set(written):
            shutil.rmtree(stale)
    print(len(cases), "cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
