"""``torchfmt inspect``'s byte report read as a person reads it (spec/inspect.md#inspect-bytes,
#inspect-text): shared storages named for all their tensors (Lua's flat ``getParameters`` buffers, written
by real Lua Torch), the summary first, Lua tables in a stable order, one line on avoiding the waste next
time, units on every figure, duplicate storages found without reading what tells them apart cheaply."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import t7_bytes as t
from torchfmt.dtypes import BY_NAME
from torchfmt.model import Storage
from torchfmt.tools import sizes
from torchfmt.tools.inspect import inspect, render

from conformance.adapters.luatorch.prefix import PREFIX as LUATORCH

torch = pytest.importorskip("torch")

#: Real Lua Torch: the prefix the lua-torch adapter's setup builds, or $TORCHFMT_LUA_TORCH (its run.PREFIX).

LUA_FLAT = """
require 'torch'; require 'nn'
torch.manualSeed(1)
local m = nn.Sequential():add(nn.Linear(100, 50)):add(nn.ReLU()):add(nn.Linear(50, 8))
local p, g = m:getParameters()
local x = torch.randn(4, 100)
m:forward(x); m:backward(x, torch.randn(4, 8))
torch.save(arg[1], m)
"""


def lua_flat_model(tmp_path: Path) -> Path:
    """A model whose parameters and gradients Lua Torch's getParameters made two flat storages, saved
    by real Lua Torch after a training step."""
    if not (LUATORCH / "env.sh").exists() or shutil.which("bash") is None:
        pytest.skip(f"real Lua Torch is not built here ({LUATORCH})")
    script = tmp_path / "flat.lua"
    script.write_text(LUA_FLAT)
    out = tmp_path / "flat.t7"
    subprocess.run(["bash", "-c", f'source {LUATORCH}/env.sh && luajit "{script}" "{out}"'], check=True)
    return out


@pytest.mark.spec("inspect.md#inspect-bytes", "inspect.md#inspect-text")
def test_flat_parameter_buffers_are_named_as_such(tmp_path: Path) -> None:
    """The flat storage of every weight and bias is a 'flat parameter buffer' listing its four tensors,
    the flat gradient storage a 'flat gradient buffer': not billed to gradBias (which has 8 elements)."""
    report, status = inspect(str(lua_flat_model(tmp_path)))
    assert status == 0
    b = report["bytes"]
    flat = {s["field"]: s for s in b["storages"] if s["views"] > 1}
    params, grads = flat["(flat parameter buffer)"], flat["(flat gradient buffer)"]
    n = 100 * 50 + 50 + 50 * 8 + 8
    assert params["numel"] == grads["numel"] == n and params["bytes"] == 8 * n
    assert sorted(".".join(p) for p in params["tensors"]) == [
        "modules.1.bias", "modules.1.weight", "modules.3.bias", "modules.3.weight"]
    assert sorted(".".join(p) for p in grads["tensors"]) == [
        "modules.1.gradBias", "modules.1.gradWeight", "modules.3.gradBias", "modules.3.gradWeight"]
    fields = {f["field"]: f["bytes"] for r in b["roles"] for f in r["fields"]}
    assert "gradBias" not in fields and "weight" not in fields
    assert fields["(flat gradient buffer)"] == 8 * n
    text = render(report)
    assert "modules.1.bias (flat parameter buffer of 4 tensors)" in text
    assert "model:clearState() before torch.save" in b["advice"]


@pytest.mark.spec("inspect.md#inspect-text")
def test_summary_comes_first(tmp_path: Path) -> None:
    """The bytes first (what people open the report for), then the weights_only verdict, then the tree."""
    torch.save({"model": {f"l{i}.weight": torch.ones(3) for i in range(80)}}, tmp_path / "m.pt")
    text = render(inspect(str(tmp_path / "m.pt"))[0])
    where, ready, tree = (text.index(h) for h in ("Where the", "torch.load(weights_only=True)", "Contents"))
    assert where < ready < tree
    assert text.splitlines()[3].startswith("Where the")


def _module_t7(order: list[str]) -> bytes:
    """An nn.Linear whose fields come in ``order`` (a Lua table's hash order differs run to run)."""
    float_t, float_s = b"torch.FloatTensor", b"torch.FloatStorage"
    pairs, index = [], 3  # objects are numbered in the order the stream meets them
    for k in order:
        if k in ("weight", "bias"):
            n = 2 if k == "weight" else 1
            value = t.tensor(index, float_t, [n], [1], 1, t.storage(index + 1, float_s, n, bytes(4 * n)))
            index += 2
        else:
            value = t.number(1) if k == "train" else t.string(float_t)
        pairs += [t.string(k.encode()), value]
    return t.torch(1, b"nn.Linear", t.table(2, *pairs))


@pytest.mark.spec("inspect.md#inspect-tree")
def test_lua_fields_in_a_stable_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a.t7", tmp_path / "b.t7"
    a.write_bytes(_module_t7(["weight", "train", "bias", "_type"]))
    b.write_bytes(_module_t7(["_type", "bias", "weight", "train"]))
    ra, rb = inspect(str(a))[0], inspect(str(b))[0]
    assert ra["tree"] == rb["tree"]
    assert [c["key"] for c in ra["tree"][0]["children"]] == ["_type", "bias", "train", "weight"]
    assert [s["path"] for s in ra["bytes"]["storages"]] == [["bias"], ["weight"]]


@pytest.mark.spec("inspect.md#inspect-bytes")
def test_advice_names_the_fix(tmp_path: Path) -> None:
    """A slice saved as a view: save a clone of the slice (and torch, given the clone, writes 5 elements:
    the advice is true); a clean state_dict: no advice."""
    base = torch.arange(100_000, dtype=torch.float32)
    torch.save({"x": base[10:15]}, tmp_path / "view.pt")
    report = inspect(str(tmp_path / "view.pt"))[0]
    assert ".clone()" in report["bytes"]["advice"] and "torchfmt slim" in report["bytes"]["advice"]
    assert report["bytes"]["advice"] in render(report)
    torch.save({"x": base[10:15].clone()}, tmp_path / "clone.pt")
    cloned = inspect(str(tmp_path / "clone.pt"))[0]["bytes"]
    assert cloned["storage_bytes"] == 20 and cloned["advice"] is None


@pytest.mark.spec("inspect.md#inspect-bytes")
def test_headline_figures_have_units(tmp_path: Path) -> None:
    base = torch.zeros(1_000_000)
    torch.save({"x": base[:5]}, tmp_path / "v.pt")
    headline = inspect(str(tmp_path / "v.pt"))[0]["bytes"]["headline"]
    assert "a view of 20 bytes into a storage of 4,000,000 bytes (1,000,000 float32 elements)" in headline


def _storage(data: np.ndarray) -> Storage:
    return Storage(BY_NAME[str(data.dtype)], data.size, data=data)


def test_duplicates_read_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    """Same-sized storages that differ in their first or last bytes are told apart without hashing;
    those whose ends agree are hashed whole, and only identical ones are grouped."""
    n = 1 << 16
    a = np.arange(n, dtype=np.float32)
    b = a.copy()
    b[0] = -1  # differs at the start
    c = a.copy()
    c[-1] = -1  # differs at the end
    d = a.copy()
    d[n // 2] = -1  # same ends, differs in the middle
    e = a.copy()  # identical to a
    hashed: list[int] = []
    real = sizes._digest
    monkeypatch.setattr(sizes, "_digest", lambda s, size: (hashed.append(s.numel), real(s, size))[1])
    groups = sizes.identical_groups([_storage(x) for x in (a, b, c, d, e, np.zeros(3, np.float32))])
    assert groups == [[0, 4]]
    assert len(hashed) == 3  # a, d and e: their ends agree
    # storages of other sizes or dtypes are never even compared
    hashed.clear()
    assert sizes.identical_groups([_storage(a), _storage(a[:-1].copy()), _storage(a.view(np.int32))]) == []
    assert hashed == []


@pytest.mark.spec("inspect.md#inspect-equal-bytes", "inspect.md#inspect-bytes")
def test_equal_bytes_are_no_tensor_saved_twice(tmp_path: Path) -> None:
    """Fresh BatchNorms: weight = running_var (ones), bias = running_mean (zeros), separate tensors torch
    loads apart.  inspect names them equal bytes, never "saved twice", and gives no advice to save them
    once (issue 26); a storage two tensors view is shared, saved once."""
    m = torch.nn.Sequential(*(torch.nn.BatchNorm1d(256) for _ in range(4)))
    sd = m.state_dict()
    torch.save({**sd, "half": sd["0.weight"][:128]}, tmp_path / "bn.pt")
    report = inspect(str(tmp_path / "bn.pt"))[0]
    b = report["bytes"]
    assert b["duplicate_bytes"] > 0.25 * b["file_bytes"]  # the equal bytes are most of the file
    assert b["advice"] is None or "once" not in b["advice"]
    headline = b["headline"] or ""
    assert "saved twice" not in headline.replace("not one tensor saved twice", "")
    assert "equal another storage's" in headline
    text = render(report)
    assert "saved twice:" not in text and "equal bytes:" in text
    assert "shared: 1 storage(s) reached by several tensors" in text  # 0.weight, half
    loaded = torch.load(tmp_path / "bn.pt", weights_only=True)
    ptr = {k: v.untyped_storage().data_ptr() for k, v in loaded.items()}
    assert ptr["0.weight"] != ptr["0.running_var"] and ptr["0.weight"] == ptr["half"]


@pytest.mark.spec("inspect.md#inspect-bytes")
def test_unreachable_headline_attributes_bytes_to_their_storages(tmp_path: Path) -> None:
    """Unreachable bytes in several storages: the headline gives the total, how many storages hold it
    and the largest one's own share, not the whole total pinned on one tensor (issue 26)."""
    a, c = torch.zeros(300_000), torch.zeros(200_000)
    torch.save({"a": a[:5], "c": c[:5]}, tmp_path / "two.pt")
    b = inspect(str(tmp_path / "two.pt"))[0]["bytes"]
    size = b["file_bytes"]
    assert "is saved but unreachable, in 2 storages" in b["headline"]
    worst = 300_000 * 4 - 20
    assert f"the most, {100 * worst / size:.1f}% of the file ({worst:,} bytes), where a is a view" \
        in b["headline"]
    assert f"{100 * b['unreachable_bytes'] / size:.1f}% of the file ({b['unreachable_bytes']:,} bytes)" \
        in b["headline"]
