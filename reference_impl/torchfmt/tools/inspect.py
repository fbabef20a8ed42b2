"""``torchfmt inspect``: what a file is, what it holds, whether ``torch.load(weights_only=True)`` takes
it, and where its bytes go (spec/inspect.md).

Small functions over the one reading of the file (:func:`torchfmt.open_document` in inert mode, so
that a whole pickled model is shown as opaque objects; nothing is imported or called): :func:`inspect`
builds the JSON report of spec/inspect.md#inspect-json, :func:`render` the text a person reads.  Files
that are no checkpoint are named from their first bytes (:func:`torchfmt.detect.not_a_checkpoint`) and
described from what they plainly say (an LFS pointer's size, a page's title); nothing but the
decompressors of the standard library and numpy's header reader is run over them.
"""

from __future__ import annotations

import bz2
import json
import lzma
import os
import re
import zlib
from typing import Any

from ..detect import SAFETENSORS_MAX_HEADER, detect, not_a_checkpoint
from ..errors import FormatError, Unsupported, quote
from ..inputs import check_regular, open_file
from ..model import (
    Document,
    Global,
    LuaFunction,
    LuaTable,
    MetaTensor,
    OpaqueObject,
    QuantizedTensor,
    SparseTensor,
    Storage,
    Tensor,
    TorchObject,
)
from ..pickle.globals import NOT_WEIGHTS_ONLY, lookup, runs_code, storage_dtype
from ..pickle.machine import DEFAULT_SCOPES, Machine, PickleUse, recording_globals, recording_opcodes
from ..pickle.opcodes import WEIGHTS_ONLY
from ..pt.ziparchive import LocalRecord, local_walk
from ..t7.encodings import Hints
from ..walk import SHAREABLE
from ..windows import FileWindows
from .reading import read
from .sizes import account, human_bytes, labelled_children
from .terminal import finish, styled

INSPECT_VERSION = 2
#: Children of one container the tree shows before ``more`` (spec/inspect.md#inspect-tree).
TREE_ITEMS = 50
#: Bytes of a non-checkpoint read to describe it.
_HEAD = 1 << 16


# -- what the file is ----------------------------------------------------------------------------

def _zip_era(extra: dict[str, Any]) -> str:
    if extra.get("format_version") is not None or extra.get("storage_alignment") is not None:
        return ("zip archive with byteorder, .format_version and .storage_alignment records "
                "(a recent torch 2.x)")
    if extra.get("version") == 2:
        return "zip archive of format version 2 (torch 1.4-1.5 with _use_new_zipfile_serialization=True)"
    if extra.get("byteorder_record"):
        return "zip archive with a byteorder record, no .format_version (torch 2.1 to a mid 2.x)"
    return "zip archive without a byteorder record (torch 1.6-2.0)"


#: Legacy-stream globals that date the writer (spec/pt-legacy.md#pt-legacy-rebuild-tensor).
_LEGACY_ERAS: tuple[tuple[str, str], ...] = (
    ("torch._utils._rebuild_tensor_v3", "torch 2.x with _use_new_zipfile_serialization=False"),
    ("torch._utils._rebuild_tensor_v2", "torch 0.4-1.5 (or a later torch with "
                                        "_use_new_zipfile_serialization=False)"),
    ("torch._utils._rebuild_tensor", "torch 0.2-0.3"),
)


def identify(doc: Document, globals_seen: list[tuple[str, str, int]]) -> dict[str, Any]:
    """The variant and writer era of a document read (spec/inspect.md#inspect-what)."""
    out: dict[str, Any] = {"format": doc.format}
    names = {f"{m}.{n}" for m, n, _ in globals_seen}
    if doc.format in ("pt-zip", "pt-torchscript"):
        fields = ("version", "byteorder", "format_version", "storage_alignment", "root")
        out.update({k: doc.extra.get(k) for k in fields})
        era = _zip_era(doc.extra)
        if doc.format == "pt-torchscript":
            out["summary"] = ("TorchScript archive (torch.jit.save), format version "
                              f"{doc.extra.get('version')}, "
                              f"{len(doc.extra.get('code') or [])} code records; torch.load hands it to "
                              "torch.jit.load, and refuses it with weights_only=True")
        else:
            out["summary"] = f"PyTorch checkpoint: {era}, format version {doc.extra.get('version')}"
    elif doc.format == "pt-legacy":
        era = next((e for g, e in _LEGACY_ERAS if g in names), None)
        if era is None and any(n.endswith("Tensor") and n.startswith("torch.") for n in names):
            era = "torch 0.1.10-0.1.12"
        out["summary"] = f"PyTorch legacy stream (torch.save before 1.6): {era or 'era not dated'}"
        out["era"] = era
        out["sys_info"] = doc.extra.get("sys_info")
    elif doc.format == "pt-tar":
        out["summary"] = "PyTorch tar archive (torch 0.1.x before 0.1.10)"
        out["sys_info"] = doc.extra.get("sys_info")
    else:
        t7 = doc.extra.get("t7") or {}
        out.update(t7)
        if t7.get("mode") == "ascii":
            out["summary"] = "Lua Torch .t7, ascii mode"
        else:
            out["summary"] = (f"Lua Torch .t7, binary mode, {t7.get('byte_order')}-endian, "
                              f"{t7.get('long_size')}-byte longs")
        note = doc.notes.get("t7_long_size")
        if note:
            other = note["other_reading"]
            out["long_size_choice"] = {"long_size": note["long_size"], "why": note["why"],
                                       "other_long_size": other["long_size"],
                                       "other_objects": other["objects"]}
            out["summary"] += (f" (chosen: {note['why']}; with {other['long_size']}-byte longs the stream "
                               f"reads as {other['objects']} objects)")
    out["objects"] = len(doc.objects)
    return out


def _text(head: bytes) -> str:
    return head.decode("utf-8", "replace")


def _describe_not_checkpoint(what: str, path: str, size: int) -> dict[str, Any]:
    """What a non-checkpoint plainly says about itself (spec/inspect.md#inspect-not-checkpoint)."""
    with open_file(path) as f:
        head = f.read(_HEAD)
    out: dict[str, Any] = {"format": "not-a-checkpoint", "summary": f"not a checkpoint: {what}"}
    low = head.lstrip().lower()
    if low.startswith(b"version https://git-lfs"):
        out["kind"] = "git-lfs-pointer"
        m = re.search(rb"(?m)^size (\d+)", head)
        oid = re.search(rb"(?m)^oid (\S+)", head)
        out["points_to_bytes"] = int(m.group(1)) if m else None
        out["oid"] = _text(oid.group(1)) if oid else None
        if m:
            n = int(m.group(1))
            out["summary"] = (f"not a checkpoint: a git LFS pointer to a file of {human_bytes(n)} "
                              f"({n:,} bytes, {out['oid']}): run `git lfs pull`, or download the file itself")
    elif low.startswith((b"<!doctype", b"<html")):
        out["kind"] = "html"
        t = re.search(rb"(?is)<title>(.*?)</title>", head)
        out["title"] = _text(t.group(1)).strip() if t else None
        out["summary"] += f" titled {out['title']!r}" if t else ""
        out["summary"] += " (a download that fetched a web page: a login, error or 'are you sure' page?)"
    elif low.startswith((b"<?xml", b"<error>")):
        out["kind"] = "xml"
        for tag in ("Code", "Message"):
            m = re.search(rb"<" + tag.encode() + rb">(.*?)</", head, re.S)
            out[tag.lower()] = _text(m.group(1)) if m else None
        if out.get("code") or out.get("message"):
            out["summary"] += f": {out.get('code')}: {out.get('message')}"
    elif low.startswith((b"{", b"[")):
        out["kind"] = "json"
        try:
            body = json.loads(head) if size <= _HEAD else None
        except ValueError:
            body = None
        if isinstance(body, dict):
            msg = next((body[k] for k in ("error", "message", "detail", "msg") if k in body), None)
            out["message"] = msg if isinstance(msg, str) else None
            if out["message"]:
                out["summary"] += f": {quote(out['message'], 120)}"
    elif low.startswith(b"entry not found"):
        out["kind"] = "error-text"
        out["message"] = _text(head[:200]).strip()
    elif head.startswith(b"\x93NUMPY"):
        out["kind"] = "numpy"
        out.update(_numpy_header(path))
        if "dtype" in out:
            out["summary"] += f": a {out['dtype']} array of shape {tuple(out['shape'])} (numpy.load reads it)"
    elif head[8:10] == b'{"':
        out["kind"] = "safetensors"
        out.update(_safetensors_header(path, size))
        out["summary"] += f": {out.get('tensors')} tensors, {human_bytes(out.get('data_bytes') or 0)} of data"
    else:
        out["kind"] = "compressed"
        inner = _inner_head(head)
        if inner is not None:
            out["inner"] = inner
            out["summary"] += f" holding {inner}: decompress it first"
    return out


def _zip_names(path: str) -> list[str]:
    """The names in a zip archive that is not a checkpoint (a checkpoint zipped by hand?), listed by the
    standard library's zip reader; nothing is extracted."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            return z.namelist()[:100]
    except (zipfile.BadZipFile, OSError, ValueError):
        return []


def _inner_head(head: bytes) -> str | None:
    """What a gzip, bzip2 or xz stream holds, from its first decompressed bytes (at most 512)."""
    try:
        if head.startswith(b"\x1f\x8b"):
            raw = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, 512)
        elif head.startswith(b"BZh"):
            raw = bz2.BZ2Decompressor().decompress(head, 512)
        elif head.startswith(b"\xfd7zXZ\x00"):
            raw = lzma.LZMADecompressor().decompress(head, 512)
        else:
            return None
    except (zlib.error, OSError, EOFError, lzma.LZMAError):
        return None
    if not raw:
        return None
    wrapped = not_a_checkpoint(raw)
    if wrapped:
        return wrapped
    return {"zip": "a zip file (a .pt checkpoint of torch 1.6+, or a TorchScript archive)",
            "pt-legacy": "a legacy .pt stream (torch before 1.6)",
            "pt-tar": "a tar file (a torch 0.1.x .pt?)",
            "t7": "no known signature (a .t7 stream?)"}[detect(raw)]


def _numpy_header(path: str) -> dict[str, Any]:
    import numpy as np

    try:
        with open_file(path) as f:
            version = np.lib.format.read_magic(f)
            fmt = np.lib.format
            read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
            shape, fortran, dtype = read(f)  # the header is a Python literal: ast.literal_eval, nothing run
        return {"shape": list(shape), "dtype": str(dtype), "fortran_order": fortran}
    except (ValueError, OSError, SyntaxError):
        return {}


def _safetensors_header(path: str, size: int) -> dict[str, Any]:
    with open_file(path) as f:
        n = int.from_bytes(f.read(8), "little")
        if n > min(size - 8, 100 << 20):
            return {"header_bytes": n}
        try:
            header = json.loads(f.read(n))
        except ValueError:
            return {"header_bytes": n}
    tensors = {k: v for k, v in header.items() if k != "__metadata__" and isinstance(v, dict)}
    data = max((v.get("data_offsets", [0, 0])[1] for v in tensors.values()), default=0)
    return {"header_bytes": n, "tensors": len(tensors), "data_bytes": data,
            "dtypes": sorted({str(v.get("dtype")) for v in tensors.values()})}


def _declared_storages(buf: FileWindows, records: list[LocalRecord]) -> dict[str, int]:
    """``{record name: bytes}`` of the storages a cut zip's ``data.pkl`` names, when that record is
    whole: the pickle is run by the house's machine (inert, nothing called), storages are not read."""
    pkl = next((r for r in records if r.name.endswith("/data.pkl") and r.name.count("/") == 1), None)
    if pkl is None or pkl.end > len(buf):
        return {}
    root = pkl.name.split("/", 1)[0]
    found: dict[str, int] = {}

    def persistent_load(pid: Any, offset: int) -> Storage:
        dtype = storage_dtype(pid[1]) if isinstance(pid, tuple) and len(pid) == 5 else None
        if dtype is None or type(pid[4]) is not int or pid[4] < 0:
            raise FormatError("bad-reference", offset, "not a storage persistent id")
        found[f"{root}/data/{pid[2]}"] = pid[4] * dtype.itemsize
        return Storage(dtype, pid[4])

    try:
        Machine(buf[pkl.data:pkl.end], persistent_load=persistent_load, inert=True,
                origin=pkl.data).load_exact(0, pkl.end - pkl.data)
    except (FormatError, Unsupported):
        return {}
    return found


def _truncated(path: str, size: int, kind: str, err: FormatError) -> dict[str, Any] | None:
    """How many bytes a cut file lacks, where its container says (spec/inspect.md#inspect-truncated)."""
    needed = err.needed_end
    where = None
    if kind == "zip":
        with open_file(path) as f:
            buf = FileWindows(f)
            records = local_walk(buf)
            declared = _declared_storages(buf, records)
            if declared:
                records = local_walk(buf, declared)
        if records and records[-1].end > size:
            last = records[-1]
            reached = {r.name for r in records}
            later = [n for name, n in declared.items() if name not in reached]
            needed = last.end + sum(later)
            where = f"record {last.name!r}" + (f" and the {len(later)} storage records after it"
                                               if later else "")
    if needed is None or needed <= size:
        if kind != "zip":
            return None
        return {"format": None, "missing_bytes_at_least": None, "declared_end": None,
                "where": "central directory",
                "summary": "a truncated download: the records are whole, the zip's central directory at the "
                           "end is missing or cut"}
    missing = needed - size
    return {"format": None, "missing_bytes_at_least": missing, "declared_end": needed,
            "where": where or err.message,
            "summary": f"a truncated download: {where or 'the data'} needs the file to reach byte "
                       f"{needed:,}, it has {size:,}: at least {human_bytes(missing)} ({missing:,} bytes) "
                       "missing" + (", and the zip's central directory" if kind == "zip" else "")}


# -- the tree -----------------------------------------------------------------------------------

def _node_fields(v: Any) -> dict[str, Any]:
    """What one value shows in the tree (no payload is read)."""
    if isinstance(v, Tensor):
        out: dict[str, Any] = {"type": "quantized_tensor" if isinstance(v, QuantizedTensor) else "tensor",
                               "dtype": v.dtype.name, "shape": list(v.shape), "device": v.device}
        if v.parameter:
            out["parameter"] = True
        if v.requires_grad:
            out["requires_grad"] = True
        return out
    if isinstance(v, MetaTensor):
        return {"type": "meta_tensor", "dtype": v.dtype.name, "shape": list(v.shape)}
    if isinstance(v, SparseTensor):
        return {"type": "sparse_tensor", "layout": v.layout, "dtype": v.dtype.name, "shape": list(v.shape)}
    if isinstance(v, Storage):
        return {"type": "storage", "dtype": v.dtype.name, "numel": v.numel, "device": v.device}
    if isinstance(v, TorchObject):
        return {"type": "torch_object", "class": v.class_name}
    if isinstance(v, OpaqueObject):
        return {"type": "object", "class": v.class_name}
    if isinstance(v, Global):
        return {"type": "global", "name": f"{v.module}.{v.name}"}
    if isinstance(v, LuaFunction):
        return {"type": "function", "bytecode_bytes": len(v.bytecode)}
    kinds = ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), ((bytes, bytearray), "bytes"),
             (LuaTable, "table"), (dict, "dict"), (list, "list"), (tuple, "tuple"), ((set, frozenset), "set"))
    name = next((n for t, n in kinds if isinstance(v, t)), "none" if v is None else type(v).__name__)
    out = {"type": "ordered_dict" if type(v).__name__ == "OrderedDict" else name}
    if isinstance(v, (bool, int, float)) or v is None:
        out["value"] = v if not isinstance(v, float) or v == v and abs(v) != float("inf") else repr(v)
    elif isinstance(v, str):
        out["value"] = v if len(v) <= 80 else v[:77] + "..."
    elif isinstance(v, (bytes, bytearray, LuaTable, dict, list, tuple, set, frozenset)):
        out["len"] = len(v.items) if isinstance(v, LuaTable) else len(v)
    return out


def tree(doc: Document, depth: int) -> list[dict[str, Any]]:
    """The contents to ``depth`` levels below the top-level object (spec/inspect.md#inspect-tree): one
    node per value, ``same_as`` for a value met before, ``more`` for children past :data:`TREE_ITEMS`."""
    first: dict[int, str] = {}

    def node(key: str, v: Any, path: str, level: int) -> dict[str, Any]:
        out = {"key": key, **_node_fields(v)}
        if isinstance(v, (*SHAREABLE, Storage)):
            if id(v) in first:
                out["same_as"] = first[id(v)]
                return out
            first[id(v)] = path
        kids = [] if isinstance(v, (Tensor, MetaTensor, SparseTensor, Storage)) else labelled_children(v)
        if kids and level < depth:
            out["children"] = [node(k, x, f"{path}.{k}" if path else k, level + 1)
                               for k, x in kids[:TREE_ITEMS]]
            if len(kids) > TREE_ITEMS:
                out["more"] = len(kids) - TREE_ITEMS
        elif kids:
            out["hidden_children"] = len(kids)
        return out

    return [node(f"(object {i + 1})" if len(doc.objects) > 1 else "(root)", o, "", 0)
            for i, o in enumerate(doc.objects)]


# -- weights_only readiness -----------------------------------------------------------------------

def _convert_command(doc: Document) -> str | None:
    """The ``torchfmt convert`` line that writes what torch loads with ``weights_only=True``: plain for a
    file of plain values, ``--inert`` for a whole pickled ``nn.Module``; None when neither would work (a
    pickled object that is no module, a global that is no class of one)."""
    from .convert import ConvertError, PickledModules

    if len(doc.objects) != 1:
        return None
    modules = PickledModules()
    try:
        modules.value(doc.objects[0])
    except ConvertError:
        return None
    return "torchfmt convert --inert" if modules.modules else "torchfmt convert"


def _recipe(safe: list[dict[str, Any]]) -> str:
    """The ``add_safe_globals`` lines for ``safe`` (each a refused global that runs no code): the imports
    it needs, a comment for classes pickled from ``__main__`` (the script that loads must define them)."""
    modules = sorted({e["module"] for e in safe if e["module"] not in ("builtins", "__main__")})
    names = ", ".join(e["name"] if e["module"] in ("builtins", "__main__") else e["global"] for e in safe)
    main = [e["name"] for e in safe if e["module"] == "__main__"]
    lines = [f"import {m}" for m in modules]
    if main:
        lines.append(f"# {', '.join(main)}: pickled from a script (__main__): define or import "
                     f"{'it' if len(main) == 1 else 'them'} in the script that loads the file")
    return "\n".join([*lines, f"torch.serialization.add_safe_globals([{names}])"])


def readiness(doc: Document, globals_seen: list[tuple[str, str, int]],
              used: PickleUse | None = None) -> dict[str, Any] | None:
    """Whether ``torch.load(weights_only=True)`` (torch 2.13) loads the file, from one reading
    (spec/inspect.md#inspect-readiness): its container (a tar file, a TorchScript archive), the pickle
    opcodes its unpickler lacks and every global outside its allowlist; the ``add_safe_globals`` lines
    when allowlisting the globals is all it takes, and the ``torchfmt convert`` line that writes a file it
    loads.  None for ``.t7`` files, which have no pickle."""
    if doc.format.startswith("t7"):
        return None
    out: dict[str, Any] = {"ready": False, "torchscript": doc.format == "pt-torchscript", "container": None,
                           "protocols": [], "opcodes": [], "refused": [], "add_safe_globals": None,
                           "convert": None, "summary": ""}
    if doc.format == "pt-torchscript":
        out["container"] = "a TorchScript archive: torch.load hands it to torch.jit.load"
        out["summary"] = ("torch.load(weights_only=True) refuses TorchScript archives: load it with "
                          "torch.jit.load (which runs its code) or read it with torchfmt")
        return out
    used = used or PickleUse([], {})
    out["protocols"] = sorted({p if p is not None else 1 for p in used.protocols})
    out["opcodes"] = [{"opcode": name, "first_offset": first, "count": n}
                      for name, (first, n) in sorted(used.opcodes.items(), key=lambda kv: kv[1][0])
                      if name not in WEIGHTS_ONLY]
    if doc.format == "pt-tar":
        out["container"] = ("a tar file (torch 0.1.x): torch.load(weights_only=True) refuses every file of "
                            "the legacy .tar format")
    refused: dict[str, dict[str, Any]] = {}
    for module, name, offset in globals_seen:
        q = f"{module}.{name}"
        if lookup(module, name, DEFAULT_SCOPES) is not None and q not in NOT_WEIGHTS_ONLY:
            continue
        entry = refused.setdefault(q, {"global": q, "module": module, "name": name, "first_offset": offset,
                                       "count": 0, "runs_code": runs_code(module, name)})
        entry["count"] += 1
    items = out["refused"] = list(refused.values())
    bad = [e["global"] for e in items if e["runs_code"]]
    why = []
    if out["container"]:
        why.append(out["container"])
    if out["opcodes"]:
        names = ", ".join(o["opcode"] for o in out["opcodes"][:6]) + (", ..." if len(out["opcodes"]) > 6
                                                                       else "")
        proto = "/".join(map(str, out["protocols"]))
        why.append(f"its pickle (protocol {proto}) uses {len(out['opcodes'])} opcode(s) torch's weights_only "
                   f"unpickler does not run ({names})")
    if items:
        code = f", {len(bad)} known to run code ({', '.join(bad)}): never allowlist those" if bad else ""
        why.append(f"{len(items)} global(s) outside its allowlist{code}")
    out["ready"] = not why
    if not why:
        out["summary"] = "torch.load(weights_only=True) loads it: every global and opcode is allowed"
        return out
    if items and not bad and not out["container"] and not out["opcodes"]:
        out["add_safe_globals"] = _recipe(items)  # allowlisting is all it takes
    cmd = _convert_command(doc)
    if cmd:
        out["convert"] = cmd
    out["summary"] = "torch.load(weights_only=True) refuses it: " + "; ".join(why)
    return out


# -- the report -----------------------------------------------------------------------------------

def inspect(path: str, hints: Hints | None = None, depth: int = 3, *,
            strict_status: bool = False) -> tuple[dict[str, Any], int]:
    """The JSON report of the file at ``path`` and the exit status (spec/inspect.md#inspect-cli): 0 when
    it was read, strictly or, a whole pickled model, inert (the report says what torch would do); 1 not
    a checkpoint, truncated or malformed, 2 unsupported.  ``strict_status``: ``dump``'s status instead,
    non-zero also for a file only the inert reading reads.  A path that names no regular file raises
    :class:`Unsupported`, another that cannot be read ``OSError``."""
    size = check_regular(path).st_size  # a FIFO or a device is refused before it is opened
    report: dict[str, Any] = {"inspect_version": INSPECT_VERSION, "path": os.fspath(path), "file_bytes": size,
                              "status": "read", "what": None, "error": None, "tree": None,
                              "readiness": None, "bytes": None}
    with open_file(path) as f:
        head = f.read(512) if size else b""  # a pseudo-file of no bytes (/proc/self/mem) is not read
        if head[8:10] == b'{"':  # a safetensors header is parsed whole (detect.safetensors_header)
            want = min(int.from_bytes(head[:8], "little"), SAFETENSORS_MAX_HEADER) + 8
            head += f.read(max(0, want - len(head)))
    what = not_a_checkpoint(head) if head else None
    if what is not None:
        report["status"] = "not-a-checkpoint"
        report["what"] = _describe_not_checkpoint(what, path, size)
        report["error"] = {"code": "unknown-format", "message": f"this is {what}", "offset": 0}
        return report, 1
    doc, refusal, globals_seen, used = _read(path, hints)
    if doc is None:
        return _unread(report, refusal, path, size, head)
    status = 0
    if refusal is not None:  # dump refuses it (a whole pickled model: unsafe-global); shown as read inert
        report["error"] = _error(refusal)
        if strict_status:
            status = 1 if isinstance(refusal, FormatError) else 2
    report["what"] = identify(doc, globals_seen)
    report["tree"] = tree(doc, depth)
    report["readiness"] = readiness(doc, globals_seen, used)
    report["bytes"] = account(doc, size)
    return report, status


#: Refusals an inert reading cannot lift (only a global outside the allowlist or a tensor subclass is read
#: differently): ``inspect`` does not read the file a second time for them, so that no refusal of
#: ``inspect`` costs more than ``dump``'s (issue 26: a file over the view budget was read twice).
STRICT_ONLY_NOT = frozenset({"limit-exceeded", "truncated", "bad-container", "unknown-format", "bad-magic"})


def _read(path: str, hints: Hints | None) -> tuple[Document | None, FormatError | Unsupported | None,
                                                   list[tuple[str, str, int]], PickleUse | None]:
    """``dump``'s reading of the file (:func:`~torchfmt.tools.reading.read`) and its refusal; when it
    refuses, the inert reading (``dump --inert``), which shows a whole pickled model without running it,
    stands in for the report's contents if it reads."""
    try:
        with recording_globals() as globals_seen, recording_opcodes() as used:
            return read(path, hints), None, globals_seen, used
    except (FormatError, Unsupported) as e:
        refusal = e
    if isinstance(refusal, FormatError) and refusal.code in STRICT_ONLY_NOT:
        return None, refusal, [], None  # an inert reading refuses it the same way: not read twice
    try:
        with recording_globals() as globals_seen, recording_opcodes() as used:
            return read(path, hints, inert=True), refusal, globals_seen, used
    except (FormatError, Unsupported):
        return None, refusal, [], None


def _error(e: FormatError | Unsupported) -> dict[str, Any]:
    """The report's ``error``: what ``dump`` prints as its one line."""
    if isinstance(e, FormatError):
        return {"code": e.code, "message": e.message, "offset": e.offset}
    return {"code": "unsupported", "message": e.feature, "offset": None}


def _unread(report: dict[str, Any], e: FormatError | Unsupported | None, path: str, size: int,
            head: bytes) -> tuple[dict[str, Any], int]:
    """The report of a file no reading read, and ``dump``'s exit status."""
    report["error"] = _error(e)
    if isinstance(e, FormatError):
        cut = _truncated(path, size, detect(head) if head else "t7", e) if e.code == "truncated" else None
        report["status"] = {"truncated": "truncated", "unknown-format": "not-a-checkpoint"}.get(e.code,
                                                                                              "malformed")
        report["what"] = cut or {"format": None, "summary": e.line()}
        if e.code == "unknown-format" and detect(head) == "zip":
            report["what"]["kind"] = "zip"
            report["what"]["members"] = _zip_names(path)
            report["what"]["summary"] = ("not a checkpoint: a zip archive that is not torch's, holding "
                                         + ", ".join(report["what"]["members"][:5]) + ": unzip it first")
        return report, 1
    assert isinstance(e, Unsupported)
    report["status"] = "unsupported"
    report["what"] = {"format": None, "summary": e.line()}
    return report, 2


# -- text -----------------------------------------------------------------------------------------

class _Style:
    """Marks text to be shown in a style; :func:`~torchfmt.tools.terminal.finish` draws it, or not."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, code: str) -> str:
        return styled(text, code)


def _table(rows: list[tuple[str, str, str]], indent: str = "  ") -> list[str]:
    width = max((len(r[0]) for r in rows), default=0)
    return [f"{indent}{a:<{width}}  {b:>9}  {c:>6}" for a, b, c in rows]


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _tree_lines(nodes: list[dict[str, Any]], prefix: str = "  ") -> list[str]:
    lines = []
    for n in nodes:
        t = n["type"]
        if t in ("tensor", "quantized_tensor", "meta_tensor", "sparse_tensor"):
            device = n.get("device", "cpu")
            desc = f"{n['dtype']}{n['shape']}" + (f" {device}" if device != "cpu" else "")
            desc += " Parameter" if n.get("parameter") else ""
            desc += f" ({t.replace('_', ' ')})" if t != "tensor" else ""
        elif t in ("torch_object", "object"):
            desc = n["class"]
        elif "value" in n:
            desc = f"{t} {n['value']!r}"
        elif "len" in n:
            desc = f"{t}[{n['len']}]"
        else:
            desc = n.get("name") or t
        if "same_as" in n:
            desc += f"  (same as {n['same_as'] or '(root)'})"
        if "hidden_children" in n:
            desc += f"  ... {n['hidden_children']} entries"
        lines.append(f"{prefix}{n['key']}: {desc}")
        lines += _tree_lines(n.get("children", []), prefix + "  ")
        if n.get("more"):
            lines.append(f"{prefix}  ... {n['more']} more")
    return lines


def render(report: dict[str, Any], color: bool = False, error_line: bool = True) -> str:
    """The report as text for a terminal (spec/inspect.md#inspect-text), file data escaped
    (spec/inspect.md#inspect-text-escapes); ``error_line`` False leaves out ``dump``'s refusal line, for
    a caller that prints it on stderr (a line is shown once)."""
    s = _Style(color)
    what = report["what"] or {}
    out = [s(f"{report['path']}  {human_bytes(report['file_bytes'])}", "1")]
    e = report["error"]
    where = "" if not e or e["offset"] is None else f" (at byte {e['offset']})"
    if error_line or not e or what.get("summary") != f"{e['code']}: {e['message']}{where}":
        out.append(f"  {what.get('summary', '')}")  # not the stderr line again
    if (error_line and e and report["status"] != "not-a-checkpoint"
            and e["message"] not in what.get("summary", "")):
        where = f" (at byte {e['offset']})" if e["offset"] is not None else ""
        out.append(s(f"  {e['code']}: {e['message']}{where}", "31"))
    b = report["bytes"]
    if b is not None:  # what people open the report for comes first (spec/inspect.md#inspect-text)
        out += _bytes_lines(b, s)
    r = report["readiness"]
    if r is not None:
        out += ["", s("torch.load(weights_only=True)", "1"), f"  {r['summary']}"]
        for o in r.get("opcodes", [])[:8]:
            out.append(f"    opcode {o['opcode']} (first at byte {o['first_offset']:,}, "
                       f"{o['count']:,} times)")
        for e in r["refused"]:
            flag = s(f"  runs code: {e['runs_code']}", "31") if e["runs_code"] else ""
            out.append(f"    {e['global']}{flag}")
        if r["add_safe_globals"]:
            out.append("  to load it anyway, if you trust the file's classes:")
            out += [f"    {line}" for line in r["add_safe_globals"].splitlines()]
        if r.get("convert"):
            what = "its state_dict" if "--inert" in r["convert"] else "the same values"
            out.append(f"  or write {what} as a file torch loads with weights_only=True, nothing run:")
            out.append(f"    {r['convert']} {report['path']} OUT.pt")
    if report["tree"] is not None:
        out += ["", s("Contents", "1")] + _tree_lines(report["tree"])
    return finish(out, color)


def _storage_name(x: dict[str, Any]) -> str:
    """A storage by its first path and, when several tensors view it, what it is and how many share it
    (the JSON report lists them)."""
    name = ".".join(x["path"])
    if x["views"] < 2:
        return name
    what = x["field"].strip("()") if x["field"].startswith("(") else "shared"
    return f"{name} ({what} of {x['views']} tensors)"


def _bytes_lines(b: dict[str, Any], s: _Style) -> list[str]:
    total = b["file_bytes"]
    units = "  (decimal units: 1 kB = 1,000 bytes)" + ("  (ascii .t7: binary sizes)" if b["estimated"]
                                                      else "")
    out = ["", s(f"Where the {human_bytes(total)} go", "1") + units]
    if b["headline"]:
        out.append(s(f"  {b['headline']}", "1;33"))
    if b.get("advice"):
        out.append(s(f"  {b['advice']}", "36"))
    rows = [(k["key"] + (f"  [{k['role']}]" if k["role"] else ""), human_bytes(k["bytes"]), _pct(k["share"]))
            for k in sorted(b["top_level"], key=lambda k: -k["bytes"])[:12] if k["bytes"]]
    rows.append(("(everything but storage data)", human_bytes(b["other_bytes"]),
                 _pct(b["other_bytes"] / total if total else 0)))
    out += ["  by top-level key"] + _table(rows, "    ")
    rows = []
    for r in b["roles"]:
        rows.append((r["role"], human_bytes(r["bytes"]), _pct(r["share"])))
        rows += [(f"  {f['field']}", human_bytes(f["bytes"]), _pct(f["share"])) for f in r["fields"][:6]]
    out += ["  by role and field"] + _table(rows, "    ")
    if b["unreachable_bytes"]:
        worst = sorted((x for x in b["storages"] if x["unreachable_bytes"]),
                       key=lambda x: -x["unreachable_bytes"])
        out.append(s(f"  saved but unreachable: {human_bytes(b['unreachable_bytes'])} "
                     f"({_pct(b['unreachable_share'])}): views use only part of their storage", "33"))
        for x in worst[:5]:
            out.append(f"    {_storage_name(x)}: its {x['dtype']} storage of {x['numel']:,} elements "
                       f"holds {human_bytes(x['bytes'])}, "
                       f"its views reach {human_bytes(x['reachable_bytes'])}")
    shared = [x for x in b["storages"] if x["views"] > 1]
    if shared:
        out.append(f"  shared: {len(shared)} storage(s) reached by several tensors, each saved once "
                   "(torch loads them as one)")
    if b["duplicates"]:
        groups = len(b["duplicates"])
        out.append(s(f"  equal bytes: {human_bytes(b['duplicate_bytes'])} in {groups} group(s) "
                     "of separate storages holding the same bytes (torch loads them apart: not a tensor "
                     "saved twice; slim --tie-equal makes each group one storage)", "33"))
        for g in sorted(b["duplicates"], key=lambda g: -g["bytes_each"] * (len(g["paths"]) - 1))[:5]:
            each = human_bytes(g["bytes_each"])
            out.append("    " + " = ".join(".".join(p) for p in g["paths"]) + f"  ({each} each)")
    rows = [(f"--level {lv['level']}", human_bytes(lv["saved_bytes"]),
             _pct(lv["saved_bytes"] / total if total else 0)) for lv in b["slim"] if lv["saved_bytes"] > 0]
    if rows:
        out += ["  torchfmt slim would save (storage bytes)"] + _table(rows, "    ")
    big = sorted(b["storages"], key=lambda x: -x["bytes"])[:5]
    if big:
        rows = [(_storage_name(x) + f"  {x['numel']:,} {x['dtype']} elements, {x['role']}",
                 human_bytes(x["bytes"]), _pct(x["share"])) for x in big]
        out += [f"  largest storages (of {len(b['storages'])})"] + _table(rows, "    ")
    return out
