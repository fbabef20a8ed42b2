"""Writing one generated case folder: the file, its ``case.yaml`` (the schema: conformance/README.md) and,
for an accept case, ``expected.json`` (``expected.json.gz`` above :data:`GZIP_ABOVE` bytes).

Shared by the generators (torch_pt.py, rejects.py, adversarial/record.py), so that their files are dumped
one way.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import yaml


def dump_json(node: Any, indent: str = "") -> str:
    """JSON with each object or array on one line when that line stays short (or nesting is deep),
    else one item a line."""
    flat = json.dumps(node, ensure_ascii=True)
    if len(indent) + len(flat) <= 110 or not isinstance(node, (dict, list)) or not node or len(indent) > 24:
        return flat + ("\n" if not indent else "")
    inner = indent + " "
    if isinstance(node, dict):
        parts = [f"{inner}{json.dumps(k)}: {dump_json(v, inner)}" for k, v in node.items()]
        body, ends = ",\n".join(parts), "{}"
    else:
        body, ends = ",\n".join(f"{inner}{dump_json(v, inner)}" for v in node), "[]"
    return f"{ends[0]}\n{body}\n{indent}{ends[1]}" + ("\n" if not indent else "")


#: Bytes of expected.json text above which a generator writes ``expected.json.gz`` instead (gzip, no
#: name and no time in its header, so the bytes repeat); conformance/harness/expected.py reads both.
GZIP_ABOVE = 1 << 20


def write_expected(folder: Path, expected: dict[str, Any]) -> str:
    """Write ``expected`` into ``folder`` as ``expected.json``, or gzip-compressed as ``expected.json.gz``
    when its text is longer than :data:`GZIP_ABOVE` bytes; the name written (case.yaml
    ``expect: description:``)."""
    text = dump_json(expected).encode("utf-8")
    name = "expected.json" if len(text) <= GZIP_ABOVE else "expected.json.gz"
    for old in {"expected.json", "expected.json.gz"} - {name}:  # left by an earlier run
        (folder / old).unlink(missing_ok=True)
    (folder / name).write_bytes(text if name == "expected.json" else gzip.compress(text, 9, mtime=0))
    return name


def write_case_folder(
    folder: Path, file: str, data: bytes, case: dict[str, Any], expected: dict[str, Any] | None = None
) -> None:
    """Replace ``folder`` with one holding ``file`` (the bytes ``data``), ``case.yaml`` (``case``, keys in
    the order given) and, when given, the expected description ``expected`` (:func:`write_expected`,
    whose file name case.yaml's ``expect: description:`` then holds).  Lua Torch's verdict on the file
    (case.yaml ``lua``, written by conformance/lua_verdicts.py) is kept while the bytes are the ones it
    judged."""
    case = dict(case, **kept_lua_verdict(folder, data))
    if "stricter" in case.get("lua", {}):
        case["features"] = sorted({*case["features"], "stricter-than-lua"})
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / file).write_bytes(data)
    if expected is not None:
        case["expect"] = {**case["expect"], "description": write_expected(folder, expected)}
    text = yaml.safe_dump(case, sort_keys=False, width=100, allow_unicode=True)
    (folder / "case.yaml").write_text(text, encoding="utf-8")


def kept_lua_verdict(folder: Path, data: bytes) -> dict[str, Any]:
    """``{"lua": ...}`` from the case.yaml in ``folder`` when its verdict judged exactly ``data``, else
    ``{}``."""
    try:
        old = yaml.safe_load((folder / "case.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    lua = old.get("lua") if isinstance(old, dict) else None
    if isinstance(lua, dict) and lua.get("sha256") == hashlib.sha256(data).hexdigest():
        return {"lua": lua}
    return {}
