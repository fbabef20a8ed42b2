"""The JavaScript and the Python parsers generated from ksy/ give every committed case file, and the
suite's generated truncations of them, the same parse tree (issue 28): the same fields and instances,
values, stream positions and sizes, the same byte arrays (by hash), and the same failures.  A file one
runtime accepts and the other refuses is a grammar that leans on one runtime's strictness; the grammar
is fixed, not this test.  The one difference allowed is the one no grammar can remove: an integer
beyond 2^53 is compared as the double JavaScript holds.

One node process (ksy/tree.js, with the stack the deep .t7 files need: torch_t7.ksy's doc) parses every
file; this process builds the Python trees the same way (see tree.js for the tree's form).  Needs node
and `npm ci` in ksy/ (CI has both); skipped without them.
"""

from __future__ import annotations

import hashlib
import json
import math
import resource
import shutil
import subprocess
import sys
import threading
from io import BytesIO
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KSY = ROOT / "ksy"

import pytorch_legacy  # noqa: E402
import pytorch_tar  # noqa: E402
import pytorch_zip  # noqa: E402
import torch_t7  # noqa: E402
import torch_t7_ascii  # noqa: E402
from kaitaistruct import KaitaiStream, KaitaiStruct  # noqa: E402

#: The grammar each case folder's files are read with.
GRAMMAR = {"t7-binary": "torch_t7", "t7-ascii": "torch_t7_ascii", "pt-zip": "pytorch_zip",
           "pt-torchscript": "pytorch_zip", "pt-legacy": "pytorch_legacy", "pt-tar": "pytorch_tar"}
CLASSES = {"torch_t7": torch_t7.TorchT7, "torch_t7_ascii": torch_t7_ascii.TorchT7Ascii,
           "pytorch_zip": pytorch_zip.PytorchZip, "pytorch_legacy": pytorch_legacy.PytorchLegacy,
           "pytorch_tar": pytorch_tar.PytorchTar}
#: node's stack, in KiB, for the 10,000-level adv-t7-deep-tables (torch_t7.ksy's doc states what a parser
#: needs: about 2 KiB a level; the tree walk here needs as much again), under a stack rlimit as big.
NODE_STACK_KIB = 64 * 1024
#: The Python side's recursion: a thread with a stack as deep as node's.
PY_STACK_BYTES = 512 * 1024 * 1024
PY_RECURSION = 200_000

needs_node = pytest.mark.skipif(
    shutil.which("node") is None or not (KSY / "node_modules" / "kaitai-struct").is_dir(),
    reason="node or ksy/node_modules (cd ksy && npm ci) is not here")


def _jobs() -> list[tuple[str, str]]:
    jobs = []
    for case_yaml in sorted((ROOT / "conformance" / "cases").glob("*/*/case.yaml")):
        folder = case_yaml.parent
        grammar = GRAMMAR.get(folder.parent.name)
        if grammar:
            jobs.append((str(folder / yaml.safe_load(case_yaml.read_text())["file"]), grammar))
    return jobs


def _truncation_jobs(folder: Path) -> list[tuple[str, str]]:
    """The suite's generated truncations (conformance/generators/truncations.py's cuts), written to
    ``folder``."""
    from conformance.generators import truncations  # noqa: PLC0415

    jobs = []
    for base, cut in truncations.cuts():
        path = folder / f"{base.id.replace('/', '--')}@{cut}{base.path.suffix}"
        path.write_bytes(base.path.read_bytes()[:cut])
        jobs.append((str(path), GRAMMAR[base.format]))
    return jobs


def fold(name: str) -> str:
    return name.replace("_", "").lower()


def number(x: float | int) -> Any:
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if x.is_integer():
            return str(int(x))
        return x
    if abs(x) > 2**53:  # JavaScript holds it as the nearest double (torch_t7_ascii.ksy's int_line doc)
        return str(int(float(x)))
    return str(int(x))


def value(v: Any, nodes: list[dict[str, Any]]) -> Any:
    if v is None:
        return None
    if isinstance(v, bool) or isinstance(v, str):
        return v
    if isinstance(v, int | float):
        return number(v)
    if isinstance(v, bytes | bytearray):
        return [str(len(v)), hashlib.sha256(v).hexdigest()[:16]]
    if isinstance(v, list):
        return [value(x, nodes) for x in v]
    return struct(v, nodes)


def struct(obj: KaitaiStruct, nodes: list[dict[str, Any]]) -> dict[str, int]:
    """tree.js's struct(): the struct appended to ``nodes`` (pre-order), its fields in folded-name order."""
    index = len(nodes)
    fields: dict[str, Any] = {}
    nodes.append(fields)
    names = [(k, False) for k in vars(obj) if not k.startswith("_")]
    names += [(k, True) for k, a in vars(type(obj)).items()
              if isinstance(a, property) and not k.startswith("_")]
    names.sort(key=lambda n: fold(n[0]))
    io = getattr(obj, "_io", None)
    if io is not None:
        fields["@io"] = [number(io.pos()), number(io.size())]
    for key, is_instance in names:
        root_io = getattr(getattr(obj, "_root", None), "_io", None)
        streams = [(s, s.pos()) for s in (io, root_io) if s is not None]
        try:
            got = value(getattr(obj, key), nodes)
        except RecursionError:
            raise
        except Exception:
            if not is_instance:
                raise
            got = "fails"
            for stream, pos in streams:  # as tree.js: a failed read's stream position is the runtime's
                stream.seek(pos)
        if got is not None:
            fields[fold(key)] = got
    return {"#": index}


def python_tree(path: str, grammar: str) -> Any:
    with open(path, "rb") as f:
        data = f.read()
    try:
        parsed = CLASSES[grammar](KaitaiStream(BytesIO(data)))
    except RecursionError:
        raise
    except Exception:
        return "fails"
    nodes: list[dict[str, Any]] = []
    struct(parsed, nodes)
    return nodes


def _route(nodes: list[dict[str, Any]], index: int) -> str:
    """Where struct ``index`` sits in the tree, as field names from the root."""
    parent: dict[int, str] = {}
    for i, fields in enumerate(nodes):
        for k, v in fields.items():
            for j, item in enumerate(v if isinstance(v, list) else [v]):
                if isinstance(item, dict) and "#" in item:
                    parent[item["#"]] = (i, k + (f"[{j}]" if isinstance(v, list) else ""))
    steps = []
    while index in parent:
        index, step = parent[index]
        steps.append(step)
    return "/" + "/".join(reversed(steps))


def _first_difference(a: Any, b: Any) -> str | None:
    """Where the Python tree ``a`` and the JavaScript tree ``b`` first differ (None: nowhere)."""
    if a == b:
        return None
    if not (isinstance(a, list) and isinstance(b, list)):
        return f"python {str(a)[:80]}, javascript {str(b)[:80]}"
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            for k in sorted(set(x) | set(y)):
                if x.get(k) != y.get(k):
                    return (f"{_route(a, i)}/{k}: python {str(x.get(k, '<absent>'))[:80]}, "
                            f"javascript {str(y.get(k, '<absent>'))[:80]}")
    return f"python {len(a)} structs, javascript {len(b)}"


def _big_stack() -> None:
    """node's main thread grows up to the stack rlimit: room for NODE_STACK_KIB and some."""
    _, hard = resource.getrlimit(resource.RLIMIT_STACK)
    want = 2 * NODE_STACK_KIB * 1024
    soft = want if hard == resource.RLIM_INFINITY else min(want, hard)
    resource.setrlimit(resource.RLIMIT_STACK, (soft, hard))


def _in_deep_thread(fn: Any) -> Any:
    """Run ``fn`` in a thread with a deep stack (the generated parsers recurse once per nesting level)."""
    result: dict[str, Any] = {}

    def run() -> None:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(PY_RECURSION)
        try:
            result["value"] = fn()
        except BaseException as e:  # handed to the caller
            result["error"] = e
        finally:
            sys.setrecursionlimit(old)

    old_size = threading.stack_size(PY_STACK_BYTES)
    try:
        t = threading.Thread(target=run)
        t.start()
        t.join()
    finally:
        threading.stack_size(old_size)
    if "error" in result:
        raise result["error"]
    return result["value"]


@needs_node
def test_javascript_and_python_parse_trees_are_equal(tmp_path: Path) -> None:
    committed = _jobs()
    assert len(committed) > 1000
    cuts = _truncation_jobs(tmp_path)
    assert len(cuts) > 100
    jobs = committed + cuts
    proc = subprocess.run(
        ["node", f"--stack-size={NODE_STACK_KIB}", str(KSY / "tree.js")],
        input="".join(json.dumps(j) + "\n" for j in jobs), capture_output=True, text=True, check=False,
        preexec_fn=_big_stack)
    assert proc.returncode == 0, proc.stderr[-2000:]
    js = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(t["path"], t["grammar"]) for t in js] == jobs
    py = _in_deep_thread(lambda: [python_tree(p, g) for p, g in jobs])
    diffs = []
    for (p, _g), want, got in zip(jobs, py, js, strict=True):
        if (d := _first_difference(want, got["tree"])) is not None:
            where = Path(p).parent.name if p.startswith(str(ROOT)) else Path(p).name
            diffs.append(f"{where}: {d}")
    assert not diffs, f"{len(diffs)} of {len(jobs)} files parse differently:\n" + "\n".join(diffs)
    assert sum(1 for t in py[:len(committed)] if t != "fails") > len(committed) // 2
    # a cut file fails somewhere in its tree (t7's root is lazy instances, each failing on its own)
    assert sum(1 for t in py[len(committed):] if '"fails"' in json.dumps(t)) > len(cuts) // 2
