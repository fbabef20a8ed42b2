"""What lua-torch/describe.lua's lines say, in the contract's terms (spec/canonical.md#canonical-reader-cli).

describe.lua writes what real Lua Torch returned as a flat graph of JSON lines and the element bytes to a
blobs file; :func:`answer` turns one such run into the reader's exit status, stdout and stderr line: the
canonical description (spec/canonical.md#canonical-t7-values), a Lua error mapped onto the closed set of
codes by torch7's message (:data:`CODES`), or a decline.  Shared by lua-torch/run.py (one file per
process) and :mod:`.worker` (many files through one LuaJIT that forks a child per file), so both answer
alike.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import struct
import sys
from typing import Any

DTYPES = {
    "Byte": "uint8",
    "Char": "int8",
    "Short": "int16",
    "Int": "int32",
    "Long": "int64",
    "Float": "float32",
    "Double": "float64",
    "Half": "float16",
}
#: torch7's error messages -> codes of the closed set (first match wins; anything else: bad-value).
CODES = (
    (r"read error: read \d+ blocks instead of \d+|end of file", "truncated"),
    (r": unknown object$", "bad-type-code"),
    (r"invalid memory size", "bad-length"),
    (r"not enough memory|out of memory|stack overflow", "limit-exceeded"),
)
#: A class the Lua process has no definition of: a missing package (cutorch, a user's own class).
UNKNOWN_CLASS = re.compile(r"unknown Torch class <(.*)>", re.S)


def float_text(bits: str) -> str:
    (x,) = struct.unpack(">d", bytes.fromhex(bits))
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def class_name(hex_name: str) -> str:
    return bytes.fromhex(hex_name).decode("utf-8", "replace")


def dtype(hex_name: str, kind: str) -> str:
    return DTYPES[class_name(hex_name).removeprefix("torch.").removesuffix(kind)]


class Graph:
    """describe.lua's nodes and top-level values made into the canonical description."""

    def __init__(self, nodes: dict[int, dict[str, Any]], top: list[Any], blobs: bytes) -> None:
        self.nodes, self.top, self.blobs = nodes, top, blobs
        self.counts: dict[int, int] = {}
        self.ids: dict[int, str] = {}
        self.storage_ids: dict[int, str] = {}
        self.storages: dict[str, dict[str, Any]] = {}
        for v in self._references():
            if "n" in v:
                self.counts[v["n"]] = self.counts.get(v["n"], 0) + 1

    def _references(self):
        yield from self.top
        for node in self.nodes.values():
            if node["k"] in ("table", "hash"):
                for k, v in node["items"]:
                    yield k
                    yield v
            elif node["k"] == "vec":
                yield from node["items"]
            elif node["k"] == "object":
                yield node["value"]
            elif node["k"] == "tensor" and node["storage"] is not None:
                yield node["storage"]

    def sha256(self, span: list[int]) -> str:
        return hashlib.sha256(self.blobs[span[0] : span[0] + span[1]]).hexdigest()

    def storage_id(self, n: int) -> str:
        sid = self.storage_ids.get(n)
        if sid is None:
            node = self.nodes[n]
            sid = self.storage_ids[n] = f"s{len(self.storage_ids)}"
            self.storages[sid] = {
                "dtype": dtype(node["class"], "Storage"),
                "numel": node["numel"],
                "device": "cpu",
                "sha256": self.sha256(node["data"]),
            }
        return sid

    def emit(self, v: dict[str, Any]) -> dict[str, Any]:
        if "nil" in v:
            return {"type": "none"}
        if "b" in v:
            return {"type": "bool", "value": v["b"]}
        if "d" in v:
            return {"type": "float", "value": float_text(v["d"])}
        if "s" in v:
            raw = bytes.fromhex(v["s"])
            try:
                return {"type": "str", "value": raw.decode("utf-8")}
            except UnicodeDecodeError:
                return {"type": "bytes", "hex": raw.hex()}
        n = v["n"]
        node = self.nodes[n]
        if node["k"] == "storage":  # a storage value is never a shared value: its id is its storage's
            return {"type": "storage", "storage": self.storage_id(n)}
        if self.counts.get(n, 0) > 1:
            if n in self.ids:
                return {"type": "ref", "id": self.ids[n]}
            self.ids[n] = f"o{len(self.ids)}"
            out = self.value(node)
            out["id"] = self.ids[n]
            return out
        return self.value(node)

    def value(self, node: dict[str, Any]) -> dict[str, Any]:
        kind = node["k"]
        if kind == "table":
            return {"type": "table", "items": [[self.emit(k), self.emit(x)] for k, x in node["items"]]}
        if kind == "object":
            return {
                "type": "torch_object",
                "class": class_name(node["class"]),
                "value": self.emit(node["value"]),
            }
        if kind == "hash":
            items = [[self.emit(k), self.emit(x)] for k, x in node["items"]]
            return {
                "type": "torch_object",
                "class": class_name(node["class"]),
                "value": {"type": "table", "items": items},
            }
        if kind == "vec":
            return {
                "type": "torch_object",
                "class": class_name(node["class"]),
                "value": {"type": "list", "items": [self.emit(x) for x in node["items"]]},
            }
        assert kind == "tensor", kind
        storage = node["storage"]
        return {
            "type": "tensor",
            "dtype": dtype(node["class"], "Tensor"),
            "shape": node["size"],
            "stride": node["stride"],
            "storage_offset": node["offset"],
            "storage": None if storage is None else self.storage_id(storage["n"]),
            "device": "cpu",
            "requires_grad": False,
            "sha256": self.sha256(node["data"]),
        }

    def document(self, fmt: str) -> dict[str, Any]:
        objects = [self.emit(v) for v in self.top]
        return {"description_version": 0, "format": fmt, "objects": objects, "storages": self.storages}


def code_of(message: str) -> str:
    """The closed-set code for torch7's error ``message``."""
    for pattern, code in CODES:
        if re.search(pattern, message):
            return code
    return "bad-value"


#: The install paths in torch7's messages (the prefix's Lua files, build.sh's source trees), left out so
#: that a message reads the same from any prefix: ``torch/File.lua:375: unknown object``.
_PATHS = re.compile(r"(?:/[^\s/:]+)+?/(?:share/lua/5\.1|lua|\.build/src/[^/\s]+)/")
#: The same paths as LuaJIT shortens a chunk name over 59 characters: ``...`` and its last 56 characters.
_SHORTENED = re.compile(r"\.\.\.(?:[^\s:'\"]*?/)??(?:share/lua/5\.1|lua|\.build/src/[^/\s]+)/")
#: This adapter's own Lua files, wherever the checkout lies (full or shortened): one spelling.
_OWN = re.compile(r"(?:\.\.\.|/)[^\s:'\"]*lua-torch/(?=[\w.]+\.lua:\d)")


def lua_message(hex_text: str) -> str:
    text = _OWN.sub("conformance/adapters/lua-torch/", bytes.fromhex(hex_text).decode("utf-8", "replace"))
    return _PATHS.sub("", _SHORTENED.sub("", text))


def one_line(text: str, limit: int = 300) -> str:
    return " ".join(text.encode("ascii", "backslashreplace").decode().split())[:limit]


def answer(lines: list[str], blobs: bytes, mode: str) -> tuple[int, str, str]:
    """(exit status, stdout, stderr line) for describe.lua's complete output ``lines``: 0 and the description,
    1 and ``<code>: lua-torch: <torch7's message>``, or 2 and ``unsupported: ...``; 3 when the lines are not
    describe.lua's (the adapter's own trouble)."""
    if not lines:
        return 3, "", "adapter error: describe.lua wrote nothing"
    end = json.loads(lines[-1])
    if "decline" in end:
        return 2, "", f"unsupported: {one_line(bytes.fromhex(end['decline']).decode('utf-8', 'replace'))}"
    if "error" in end:
        message = lua_message(end["error"])
        unknown = UNKNOWN_CLASS.search(message)
        if unknown:
            return (
                2,
                "",
                (
                    f"unsupported: t7-class (Lua Torch has no class {one_line(unknown.group(1), 80)} "
                    "loaded; torch, nn, nngraph and tds are)"
                ),
            )
        code = code_of(message)
        if end.get("describing") and code != "limit-exceeded":  # Lua read it; describing it failed here
            return 3, "", f"adapter error: describing what Lua loaded: {one_line(message)}"
        return 1, "", f"{code}: lua-torch: {one_line(message)}"
    if "top" not in end:
        return 3, "", f"adapter error: describe.lua ended with {one_line(lines[-1], 100)}"
    nodes = {}
    for line in lines[:-1]:
        node = json.loads(line)
        nodes[node["n"]] = node
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 100_000))  # the description's walk: as deep as Lua read
    try:
        return 0, json.dumps(Graph(nodes, end["top"], blobs).document(f"t7-{mode}")), ""
    finally:
        sys.setrecursionlimit(limit)


def lua_error(lines: list[str]) -> tuple[str, int] | None:
    """(torch7's message, objects read before it) when the run ended with a Lua error, else ``None``."""
    if not lines:
        return None
    end = json.loads(lines[-1])
    if "error" not in end:
        return None
    return lua_message(end["error"]), int(end.get("read", 0))
