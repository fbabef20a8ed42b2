"""The ``.t7`` writer, ``slim`` and ``convert --to t7`` judged by real Lua Torch (spec/t7.md#t7-write,
spec/t7.md#t7-write-ascii, spec/slim.md#slim-t7-levels, spec/t7.md#t7-convert).

Lua Torch reads every file through conformance/adapters/lua-torch (one LuaJIT that loaded torch, nn,
nngraph and tds once and forks a child per file, conformance/adapters/luatorch/worker.py), and its
description of what
``File:readObject`` returned is compared by spec/canonical.md#canonical-comparison:

- every ``.t7`` accept case (committed and corpus tier) Lua reads, read by ``torchfmt.load`` and written
  back by ``torchfmt.save`` (binary with 8-byte longs, and ascii), loads in Lua as the original does:
  values, classes, sharing and cycles;
- ``slim`` at each level loads in Lua as our reader reads the slimmed file, dropped buffers are empty
  tensors of their class, and every ``nn`` model that runs gives bit-identical ``forward`` output before and
  after (forward.lua);
- ``convert --to t7`` of each ``.pt`` state_dict loads in Lua with every tensor's dtype, shape and values
  those of the source (a 0-d tensor as shape [1]).

They skip where Lua Torch is not built (conformance/adapters/lua-torch/setup), and fail instead under
``TORCHFMT_REQUIRE_ADAPTERS`` (CI).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torchfmt
from torchfmt.errors import FormatError, Unsupported
from torchfmt.model import LuaTable
from torchfmt.recursion import recursion_limit
from torchfmt.t7.encodings import Hints
from torchfmt.tools.convert import ConvertError, convert
from torchfmt.tools.slim import LEVELS, slim
from torchfmt.writer.t7 import T7Writer

from conformance.adapters.luatorch.prefix import lua_command
from conformance.adapters.luatorch.worker import LuaWorker, installed
from conformance.harness.cases import Case, committed_cases, corpus_cases
from conformance.harness.compare import compare

ROOT = Path(__file__).resolve().parents[2]
LUA_ADAPTER = ROOT / "conformance" / "adapters" / "lua-torch"

pytestmark = pytest.mark.skipif(
    not installed() and not os.environ.get("TORCHFMT_REQUIRE_ADAPTERS"),
    reason="Lua Torch is not built here (conformance/adapters/lua-torch/setup)",
)
#: What a loaded Lua object cannot show (the lua-torch adapter's unexpressed fields).
IGNORE = frozenset({"version"})
T7_CASES = [
    c
    for c in committed_cases() + corpus_cases()
    if c.category == "accept" and c.format.startswith("t7-") and not c.problems
]
PT_CASES = [
    c
    for c in committed_cases()
    if c.category == "accept" and c.format in ("pt-zip", "pt-legacy") and not c.problems
]


@pytest.fixture(autouse=True)
def _deep_descriptions():
    """The 1,024-level .t7 cases' descriptions nest about 3,000 deep: decoding, comparing and writing them
    recurse once per level (the suite's own reads raise the limit the same way)."""
    with recursion_limit(20_000):
        yield


@pytest.fixture(scope="module")
def lua():
    assert installed(), "TORCHFMT_REQUIRE_ADAPTERS is set but Lua Torch is not built"
    with LuaWorker() as worker:
        yield worker


def lua_reads(lua: LuaWorker, path: Path, hints: dict[str, Any]) -> dict[str, Any] | str:
    """Lua's description of ``path``, or what Lua said instead."""
    answer = lua.run(path, hints)
    return json.loads(answer.stdout) if answer.outcome == "loads" else f"{answer.outcome}: {answer.summary()}"


def written_hints(mode: str) -> dict[str, Any]:
    return {"mode": mode, "long_size": 8, "byte_order": "little"} if mode == "binary" else {"mode": "ascii"}


def _hints(case: Case) -> Hints | None:
    return Hints(**case.hints) if case.hints else None


def write(objects: list[Any], path: Path, mode: str) -> None:
    """``torchfmt.save`` for one object (a stream of several through its T7Writer)."""
    if len(objects) == 1:
        torchfmt.save(objects[0], path, "t7", t7_mode=mode)
        return
    with open(path, "wb") as f:
        writer = T7Writer(f, mode)
        for o in objects:
            writer.write(o)


def _nan_payloads(desc: dict[str, Any]) -> bool:
    """Whether ascii can not carry the file's NaNs bit for bit: a non-canonical NaN in a float storage
    shows as a hash that differs after writing (a known limit of %.17g; spec/t7.md#t7-write-ascii)."""
    return any(s["dtype"].startswith("float") for s in desc["storages"].values())


# -- torchfmt.save --------------------------------------------------------------------------------


@pytest.mark.spec("t7.md#t7-write", "t7.md#t7-write-ascii")
def test_written_files_load_in_lua_as_the_originals(lua: LuaWorker, tmp_path: Path) -> None:
    compared = {"binary": 0, "ascii": 0}
    failures = []
    for n, case in enumerate(T7_CASES):
        original = lua_reads(lua, case.path, case.hints)
        if isinstance(original, str):
            continue  # Lua does not read the original (a cutorch class, a function: declined)
        objects = torchfmt.open_document(case.path, _hints(case)).objects
        for mode in ("binary", "ascii"):
            out = tmp_path / f"{n}-{mode}.t7"
            write(objects, out, mode)
            again = lua_reads(lua, out, written_hints(mode))
            if isinstance(again, str):
                failures.append(f"{case.id} ({mode}): {again}")
                continue
            again["format"] = original["format"]
            diffs = compare(original, again, ignore=IGNORE)
            if (
                diffs
                and mode == "ascii"
                and all("sha256" in str(d) for d in diffs)
                and _nan_payloads(original)
            ):
                continue  # NaN payloads do not survive ascii, in torch7's writer as here
            if diffs:
                failures.append(f"{case.id} ({mode}): {diffs[:3]}")
            compared[mode] += 1
    assert not failures, failures
    print(f"Lua reads {compared} written files as their originals")
    assert compared["binary"] >= 50 and compared["ascii"] >= 40


@pytest.mark.spec("t7.md#t7-write")
def test_zero_dim_tensor_is_shape_1_and_sharing_and_cycles_survive(lua: LuaWorker, tmp_path: Path) -> None:
    """A PyTorch 0-d tensor is written as shape [1] (torch7 has no 0-d tensors); a table that holds itself
    and two views of one storage stay so in Lua."""
    scalar = np.array(2.5, dtype=np.float32)
    views = torchfmt.load(ROOT / "conformance/cases/t7-binary/shared-storage-views/shared_storage_views.t7")
    table = LuaTable([("scalar", scalar), ("views", views)])
    table.items.append(("self", table))
    for mode in ("binary", "ascii"):
        out = tmp_path / f"x-{mode}.t7"
        torchfmt.save(table, out, "t7", t7_mode=mode)
        desc = lua_reads(lua, out, written_hints(mode))
        assert not isinstance(desc, str), desc
        top = desc["objects"][0]
        items = {k["value"]: v for k, v in top["items"]}
        assert items["scalar"]["shape"] == [1] and items["scalar"]["dtype"] == "float32"
        assert items["self"] == {"type": "ref", "id": top["id"]}
        storages = [v.get("storage") for _, v in items["views"]["items"] if v.get("type") == "tensor"]
        assert len(storages) >= 2 and len(set(storages)) == 1, storages
        assert compare(torchfmt.describe(out, Hints(**written_hints(mode))), desc, ignore=IGNORE) == []


# -- slim -----------------------------------------------------------------------------------------


def _is_nn(desc: dict[str, Any]) -> bool:
    top = desc["objects"][0]
    return top["type"] == "torch_object" and top["class"].startswith(("nn.", "nngraph."))


def _forward(pairs: list[tuple[Path, Path, str]]) -> list[str]:
    """forward.lua's line for each (original, slimmed, mode), all in one LuaJIT."""
    text = "".join(f"{a}\t{b}\t{mode}\n" for a, b, mode in pairs)
    proc = subprocess.run(
        lua_command(str(LUA_ADAPTER / "forward.lua")), input=text, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.splitlines()


def _emptied(desc: dict[str, Any], names: set[str]) -> list[dict[str, Any]]:
    """The values of the fields ``names`` of every torch object of a description."""
    out, stack = [], list(desc["objects"])
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            if v.get("type") == "torch_object" and v["value"].get("type") == "table":
                out += [x for k, x in v["value"]["items"] if k.get("value") in names]
            stack.extend(x for key, x in v.items() if key in ("items", "value"))
    return out


@pytest.mark.spec("slim.md#slim-t7-levels", "slim.md#slim-cli", "slim.md#slim-variant")
def test_slimmed_files_load_in_lua_and_models_compute_the_same(lua: LuaWorker, tmp_path: Path) -> None:
    checked, pairs, failures = 0, [], []
    for n, case in enumerate(T7_CASES):
        original = lua_reads(lua, case.path, case.hints)
        if isinstance(original, str) or len(original["objects"]) != 1:
            continue
        if compare(torchfmt.describe(case.path, _hints(case)), original, ignore=IGNORE):
            continue  # Lua loads something else than the file holds (a Lua 5.3 function: nil; case.yaml lua)
        mode = original["format"].removeprefix("t7-")
        for level in LEVELS:
            out = tmp_path / f"{n}-{level}.t7"
            try:
                # force: a level with nothing to save writes no file unless forced (spec/slim.md#slim-no-gain)
                report = slim(str(case.path), str(out), level, hints=_hints(case), force=True)
            except (ConvertError, FormatError, Unsupported) as e:
                failures.append(f"{case.id} ({level}): slim refused: {e}")
                continue
            desc = lua_reads(lua, out, written_hints(mode))
            if isinstance(desc, str):
                failures.append(f"{case.id} ({level}): {desc}")
                continue
            diffs = compare(torchfmt.describe(out, Hints(**written_hints(mode))), desc, ignore=IGNORE)
            if diffs:
                failures.append(f"{case.id} ({level}): Lua reads another value: {diffs[:3]}")
            dropped = {p.rsplit(".", 1)[-1] for p in report.dropped}
            for v in _emptied(desc, dropped):  # a dropped tensor: an empty tensor of its class
                if v.get("type") == "tensor" and (v["shape"] != [] or v["storage"] is not None):
                    failures.append(f"{case.id} ({level}): a dropped tensor is not empty: {v['shape']}")
            checked += 1
            if _is_nn(original):
                pairs.append((case.path, out, mode))
    assert not failures, failures
    results = _forward(pairs)
    bad = [
        f"{p[0]} -> {p[1].name}: {r}"
        for p, r in zip(pairs, results, strict=True)
        if not r.startswith(("same", "norun"))
    ]
    assert not bad, bad
    same = sum(r.startswith("same") for r in results)
    print(
        f"slim: {checked} outputs load in Lua as written; forward equal on {same} of {len(pairs)} nn outputs "
        f"({len(pairs) - same} models run on no candidate input)"
    )
    assert checked >= 150 and same >= 12


# -- convert --to t7 ------------------------------------------------------------------------------


def _tensors(desc: dict[str, Any]) -> dict[str, tuple[str, list[int], str]]:
    """name -> (dtype, shape, sha256) of the top-level mapping's tensors (dict or Lua table), a ``ref`` to a
    shared tensor (tied weights) resolved to it."""
    top = desc["objects"][0]
    if top["type"] not in ("dict", "ordered_dict", "table"):
        return {}
    shared, stack = {}, [top]  # every value written in full with an id, at any depth
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            if "id" in v and v.get("type") != "ref":
                shared[v["id"]] = v
            stack.extend(v.get(key) for key in ("items", "value") if isinstance(v.get(key), (list, dict)))
    values = {str(k.get("value")): shared.get(v["id"], v) if v["type"] == "ref" else v
              for k, v in top["items"]}
    return {name: (v["dtype"], v["shape"], v["sha256"]) for name, v in values.items()
            if v.get("type") == "tensor"}


@pytest.mark.spec("t7.md#t7-convert", "t7.md#t7-write")
def test_converted_state_dicts_load_in_lua_with_their_values(lua: LuaWorker, tmp_path: Path) -> None:
    converted, failures = 0, []
    for n, case in enumerate(PT_CASES):
        source = _tensors(torchfmt.describe(case.path))
        if not source:
            continue
        out = tmp_path / f"{n}.t7"
        try:
            convert(str(case.path), str(out), "t7")
        except (ConvertError, FormatError, Unsupported):
            continue  # a dtype Lua Torch has no class for, a value with no Lua form: refused, nothing written
        desc = lua_reads(lua, out, written_hints("binary"))
        if isinstance(desc, str):
            failures.append(f"{case.id}: {desc}")
            continue
        got = _tensors(desc)
        for name, (dtype, shape, digest) in source.items():
            expect = (dtype, shape or [1], digest)  # a 0-d tensor is written as one element of one dimension
            if got.get(name) != expect:
                failures.append(f"{case.id} {name}: {got.get(name)} != {expect}")
        converted += 1
    assert not failures, failures
    print(f"convert --to t7: {converted} state_dicts load in Lua with their values")
    assert converted >= 25
