"""``slim`` keeps which tensors share a storage exactly as the real loader loads them
(spec/slim.md#slim-identity, issue 26): over every file of conformance/cases and ../shared/corpus that
``slim`` accepts, at each level,
the tensors kept fall into the same groups of one storage in the output as in the input.  For ``.pt``
the groups are torch 2.13's (``untyped_storage().data_ptr()`` of what ``torch.load(weights_only=True)``
gives for the input and for the output); for ``.t7`` they are the reader's storage objects, and a sample
of files is judged by real Lua Torch (``torch.pointer`` of each tensor's storage), which shows the
reader's identity is Lua's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torchfmt
from torchfmt.errors import FormatError, Unsupported
from torchfmt.model import LuaTable, Tensor, TorchObject
from torchfmt.tools.roles import LEVELS
from torchfmt.tools.slim import slim

from conformance.adapters.luatorch.prefix import PREFIX as LUATORCH
from conformance.harness.cases import committed_cases, corpus_cases

ROOT = Path(__file__).resolve().parents[2]

torch = pytest.importorskip("torch")

Groups = frozenset[frozenset[tuple[Any, ...]]]


def _files() -> list[tuple[str, Path, dict[str, Any]]]:
    return [(c.id, c.path, c.hints) for c in [*committed_cases(), *corpus_cases()]
            if c.format != "pt-torchscript" and c.path.is_file()]


def groups(pairs: Iterator[tuple[tuple[Any, ...], Any]]) -> Groups:
    """The partition of the paths by storage key."""
    by: dict[Any, set[tuple[Any, ...]]] = {}
    for path, key in pairs:
        by.setdefault(key, set()).add(path)
    return frozenset(frozenset(g) for g in by.values())


def within(parts: Groups, paths: set[tuple[Any, ...]]) -> Groups:
    """The partition restricted to ``paths``."""
    return frozenset(frozenset(p for p in g if p in paths) for g in parts) - {frozenset()}


def paths_of(parts: Groups) -> set[tuple[Any, ...]]:
    return {p for g in parts for p in g}


def torch_storages(v: Any) -> Iterator[tuple[tuple[Any, ...], int]]:
    """(path, ``untyped_storage().data_ptr()``) of every tensor with elements torch loaded, depth first
    (a container once: its first path)."""
    seen: set[int] = set()
    stack: list[tuple[tuple[Any, ...], Any]] = [((), v)]
    while stack:
        path, x = stack.pop()
        if isinstance(x, torch.Tensor):
            if x.layout == torch.strided and not x.is_meta and x.numel() and not x.is_quantized:
                yield path, x.untyped_storage().data_ptr()
            continue
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, dict):
            stack.extend(reversed([(path + (k,), y) for k, y in x.items() if isinstance(k, (str, int))]))
        elif isinstance(x, (list, tuple)):
            stack.extend(reversed([(path + (i,), y) for i, y in enumerate(x)]))


def reader_storages(v: Any) -> Iterator[tuple[tuple[Any, ...], int]]:
    """(path, id of the storage) of every ``.t7`` tensor with elements the reader gives, depth first in
    file order (a container once: its first path, as a description gives it)."""
    seen: set[int] = set()
    stack: list[tuple[tuple[Any, ...], Any]] = [((), v)]
    while stack:
        path, x = stack.pop()
        if isinstance(x, Tensor):
            if x.storage is not None and x.shape and all(x.shape):
                yield path, id(x.storage)
            continue
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, TorchObject):
            stack.append((path, x.value))
        elif isinstance(x, LuaTable):
            stack.extend(reversed([(path + (k,), y) for k, y in x.items if isinstance(k, (str, float))]))
        elif isinstance(x, (list, dict)):
            items = x.items() if isinstance(x, dict) else enumerate(x)
            stack.extend(reversed([(path + (k,), y) for k, y in items]))


def _torch_load(path: Path) -> Any:
    try:
        return torch.load(path, weights_only=True, map_location="cpu")
    except Exception:  # noqa: BLE001 - torch refuses it: no sharing of torch's to compare with
        return None


def _same_sharing(case_id: str, source: Path, hints: dict[str, Any], out: Path) -> tuple[int, int]:
    """Slim ``source`` at each level into ``out``; the levels checked and the tensors compared."""
    t7 = source.suffix == ".t7" or case_id.startswith("t7")
    before = None
    checked = compared = 0
    for level in LEVELS:
        try:
            slim(str(source), str(out), level, force=True, hints=torchfmt.Hints(**hints) if hints else None)
        except (FormatError, Unsupported, RecursionError, MemoryError):
            return checked, compared  # slim refuses the file (the reader does, or it is no checkpoint)
        if t7:
            before = before or groups(reader_storages(torchfmt.load(source, torchfmt.Hints(**hints)
                                                                    if hints else None)))
            after = groups(reader_storages(torchfmt.load(out)))
        else:
            if before is None:
                loaded = _torch_load(source)
                if loaded is None:
                    return checked, compared
                before = groups(torch_storages(loaded))
            got = _torch_load(out)
            assert got is not None, (case_id, level, "torch does not load the output")
            after = groups(torch_storages(got))
        kept = paths_of(after)
        assert after == within(before, kept), (case_id, level)
        assert kept <= paths_of(before), (case_id, level)  # no tensor came from nowhere
        checked += 1
        compared += len(kept)
    return checked, compared


@pytest.mark.spec("slim.md#slim-identity", "slim.md#slim-trim")
def test_slim_keeps_sharing_as_torch_loads_it(tmp_path: Path) -> None:
    """Before issue 26, 'pt-legacy/checkpoint-adam' at medium failed: the optimizer's two step tensors
    (both 1.0) were made one storage."""
    files = _files()
    checked = compared = accepted = 0
    for n, (case_id, path, hints) in enumerate(files):
        levels, tensors = _same_sharing(case_id, path, hints, tmp_path / f"{n}{path.suffix or '.pt'}")
        accepted += bool(levels)
        checked += levels
        compared += tensors
        for f in tmp_path.iterdir():
            f.unlink()
    print(f"\n{accepted} of {len(files)} files slimmed, {checked} levels, {compared} kept tensors' sharing "
          "equal to the input's")
    assert accepted >= 300 and compared >= 1000


def described_storages(desc: dict[str, Any]) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(path, storage id) of every tensor with elements of a canonical description (spec/canonical.md),
    by every path a table first reached reaches it (a ``ref`` to a tensor is one more path to it)."""
    tensors: dict[str, dict[str, Any]] = {}
    walk: list[Any] = [desc["objects"]]
    while walk:
        v = walk.pop()
        if isinstance(v, dict):
            if v.get("type") == "tensor" and "id" in v:
                tensors[v["id"]] = v
            walk.extend(v.values())
        elif isinstance(v, list):
            walk.extend(v)
    stack: list[tuple[tuple[Any, ...], Any]] = [((i,), o) for i, o in
                                                reversed(list(enumerate(desc["objects"])))]
    while stack:
        path, v = stack.pop()
        if not isinstance(v, dict):
            continue
        if v.get("type") == "ref" and v.get("id") in tensors:
            v = tensors[v["id"]]
        if v.get("type") == "tensor":
            if v.get("storage") and v["shape"] and all(v["shape"]):
                yield path, v["storage"]
        elif v.get("type") == "torch_object":
            stack.append((path, v["value"]))
        elif v.get("type") == "table":
            for k, x in reversed(v["items"]):
                if k.get("type") in ("str", "float"):
                    key = k["value"] if k["type"] == "str" else float(k["value"])
                    stack.append((path + (key,), x))


def _lua_description(path: Path) -> dict[str, Any] | None:
    proc = subprocess.run([sys.executable, str(ROOT / "conformance" / "adapters" / "lua-torch" / "run.py"),
                           str(path)], capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "TORCHFMT_T7_MODE": "binary"} if path.suffix == ".t7" else None)
    if proc.returncode == 2 and "t7-class" in proc.stderr:
        return None  # a class this Lua Torch lacks (nn.SpatialNormalization of 2011): not judged here
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(not (LUATORCH / "env.sh").is_file(), reason="real Lua Torch is not built")
@pytest.mark.spec("slim.md#slim-identity")
def test_lua_torch_loads_slims_t7_outputs_with_the_inputs_sharing(tmp_path: Path) -> None:
    """A sample of .t7 files (the corpus' Lua nn models, getParameters' flat storages among them): what
    real Lua Torch loads from slim's output at each level shares storages as what it loaded from the
    input (its expected description), and as the reader's identity says (the reader's own is judged
    equal to Lua's for every .t7 case by the conformance suite, spec/canonical.md#canonical-sharing)."""
    plain = ({}, {"mode": "binary", "byte_order": "little", "long_size": 8})
    sample = [c for c in [*committed_cases(), *corpus_cases()]
              if c.format == "t7-binary" and c.category == "accept" and c.hints in plain
              and c.description is not None and c.description["objects"]
              and str(c.description["objects"][0].get("class", "")).startswith(("nn.", "nngraph."))
              and any(True for _ in described_storages(c.description))][:12]
    compared = judged = 0
    for n, case in enumerate(sample):
        assert case.description is not None
        before = groups(described_storages(case.description))
        reader = groups(((0, *p), k) for p, k in reader_storages(torchfmt.load(case.path)))
        # the reader's identity is Lua's for the input (over the paths both walks take)
        common = paths_of(reader) & paths_of(before)
        assert within(reader, common) == within(before, common), case.id
        for level in LEVELS:
            out = tmp_path / f"{n}-{level}.t7"
            try:
                slim(str(case.path), str(out), level, force=True)
            except (FormatError, Unsupported):
                break
            lua = _lua_description(out)
            if lua is None:
                break
            judged += level == LEVELS[0]
            after = groups(described_storages(lua))
            both = paths_of(after) & paths_of(before)
            assert within(after, both) == within(before, both), (case.id, level)
            compared += len(both)
    print(f"\n{judged} .t7 files, {compared} kept tensors' sharing as real Lua Torch loads it")
    assert judged >= 5 and compared >= 50
