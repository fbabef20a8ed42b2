"""``slim`` saves exactly the bytes ``inspect`` attributes (spec/inspect.md#inspect-slim,
spec/slim.md#slim-levels): one byte accounting and one table of roles behind both.

For each level, ``inspect``'s report predicts the storage bytes ``slim`` leaves (``bytes.slim``: storages
dropped, merged, trimmed).  The slimmed file must be smaller than its input by exactly those bytes plus
the change in the container's own bytes, and that change is computed here exactly, from the layout
rules of the container, never tolerated:

- ``.pt`` (files real torch 2.13 writes here): Python's :mod:`zipfile` lists the records; torch's layout
  (a 30-byte local header, the name, an ``FB`` extra field padding the data to 64 bytes, a 16-byte data
  descriptor after non-empty data, a 46-byte central entry with the name, 98 bytes of end records)
  must give the size of the input torch wrote and of the output, so storage payloads, other records and
  framing add up to both files to the byte.  torch 2.13 ``weights_only=True`` loads the output: every
  kept tensor equal, with its dtype, shape, strides and class, views still sharing their storage at
  the same distance; what each level drops is also checked against torch's own figures.
- ``.t7`` (files real Lua Torch wrote: committed cases and the shared corpus, those with training
  buffers): the size the binary grammar gives (spec/t7.md: type codes, indices, class headers, sizes,
  strides, storage payloads) must be the size of the Lua-written input and of the output.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torchfmt
from torchfmt.model import LuaFunction, LuaTable, Storage, Tensor, TorchObject
from torchfmt.t7 import classes
from torchfmt.t7.encodings import Hints
from torchfmt.tools.inspect import inspect
from torchfmt.tools.roles import LEVELS, MODULE_STATE, is_module
from torchfmt.tools.slim import slim
from torchfmt.walk import values

from conformance.harness.cases import committed_cases, corpus_cases, corpus_root

ROOT = Path(__file__).resolve().parents[2]

torch = pytest.importorskip("torch")


def _prediction(path: Path, hints: Hints | None = None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    report, status = inspect(str(path), hints)
    assert status == 0, report["error"]
    return report["bytes"], {lv["level"]: lv for lv in report["bytes"]["slim"]}


# -- .pt: torch's zip layout --------------------------------------------------------------------

_STORAGE_RECORD = re.compile(r"^[^/]+/data/[^/]+$")


def _zip_parts(path: Path) -> dict[str, int]:
    """The bytes of a torch zip file by kind, from Python's zipfile and torch's layout rules:
    ``storages`` (payloads of ``<root>/data/<key>``), ``records`` (other payloads: data.pkl, byteorder,
    versions), ``framing`` (headers, padding, descriptors, directory, end records) and their ``total``."""
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
    pos = storages = records = 0
    for info in infos:
        name = len(info.filename.encode("utf-8"))
        start = pos + 30 + name + 4  # local header, name, the FB field's own header
        pos = start + (-start % 64) + info.file_size + (16 if info.file_size else 0)
        if _STORAGE_RECORD.match(info.filename):
            storages += info.file_size
        else:
            records += info.file_size
    total = pos + sum(46 + len(i.filename.encode("utf-8")) for i in infos) + 56 + 20 + 22
    return {"storages": storages, "records": records, "framing": total - storages - records, "total": total}


def _tensors(obj: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(obj, torch.Tensor):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _tensors(v, f"{path}.{k}" if path else str(k))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from _tensors(v, f"{path}.{i}" if path else str(i))


def _views_file() -> dict[str, Any]:
    base = torch.arange(100_000, dtype=torch.float32)
    other = torch.randn(5000, dtype=torch.float64)
    grid = base[1000:1012].view(3, 4)
    return {"v": base[10:15], "grid_t": grid.t(), "row": grid[1], "strided": other[100:400:3],
            "tail": other[-2:], "empty": base[5:5], "w": torch.randn(7, 3),
            "p": torch.nn.Parameter(torch.arange(50, dtype=torch.float16)[3:9])}


def _copies_file() -> dict[str, Any]:
    w = torch.randn(300, 20)
    return {"a": w, "b": w.clone(), "c": w.clone()[10:20], "same": w, "h1": w.half(), "h2": w.half(),
            "i": torch.arange(64, dtype=torch.int64)}


def _trainer_file() -> dict[str, Any]:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.BatchNorm1d(8), torch.nn.Linear(8, 2))
    opt = torch.optim.Adam(model.parameters())
    batch = torch.randn(1000, 16)
    for _ in range(2):
        opt.zero_grad()
        model(batch[:32]).sum().backward()
        opt.step()
    sched = torch.optim.lr_scheduler.StepLR(opt, 10)
    return {"model": model.state_dict(), "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
            "model_ema": {k: v.clone() for k, v in model.state_dict().items()},
            "grads": {n: p.grad.clone() for n, p in model.named_parameters()},
            "last_batch": batch[:32], "epoch": 3,
            "args": {"clip_grad": 1.0, "ema_decay": 0.999, "requires_grad": True, "optim": "adam"}}


#: The top-level keys each level keeps, by the roles of spec/inspect.md#inspect-roles.
_TRAINER_KEPT = {"light": {"model", "model_ema", "last_batch", "epoch", "args"}}


def _storage_key(t: Any) -> int:
    return t.untyped_storage().data_ptr()


def _check_pt_output(obj: dict[str, Any], out: Path, level: str, tie: bool = False) -> None:
    """torch 2.13 loads ``out``: every kept tensor equal, with its layout and class, and tensors that
    shared a storage still share one at the same distance; without ``tie`` (``--tie-equal``), tensors
    that did not share one still do not (spec/slim.md#slim-identity)."""
    loaded = torch.load(out, weights_only=True)
    want = _TRAINER_KEPT.get(level, set(obj)) if "optimizer" in obj else set(obj)
    assert set(loaded) == want
    pairs = [(t, dict(_tensors(loaded)).get(p)) for p, t in _tensors({k: obj[k] for k in want})]
    for old, new in pairs:
        assert new is not None and type(new) is type(old)
        assert (new.dtype, new.shape, new.stride()) == (old.dtype, old.shape, old.stride())
        assert torch.equal(new, old)
    for a_old, a_new in pairs:
        for b_old, b_new in pairs:
            if _storage_key(a_old) == _storage_key(b_old) and a_old.numel() and b_old.numel():
                assert _storage_key(a_new) == _storage_key(b_new)
                assert (a_new.storage_offset() - b_new.storage_offset() ==
                        a_old.storage_offset() - b_old.storage_offset())
            elif not tie and a_new.numel() and b_new.numel():
                assert _storage_key(a_new) != _storage_key(b_new)


def _trimmed_by_torch(obj: dict[str, Any]) -> int:
    """The bytes outside the run of elements each storage's views use, from torch's own view figures."""
    spans: dict[int, list[int]] = {}
    size: dict[int, int] = {}
    for _, t in _tensors(obj):
        key = _storage_key(t)
        size[key] = t.untyped_storage().nbytes()
        if t.numel():
            lo = t.storage_offset() * t.element_size()
            last = t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True))
            hi = (last + 1) * t.element_size()
            spans.setdefault(key, []).extend((lo, hi))
    return sum(n - (max(spans[k]) - min(spans[k]) if k in spans else 0) for k, n in size.items())


@pytest.mark.spec("inspect.md#inspect-slim", "slim.md#slim-levels", "slim.md#slim-trim",
                  "slim.md#slim-tie-equal", "slim.md#slim-identity", "slim.md#slim-pt-drop")
@pytest.mark.parametrize("tie", [False, True], ids=["default", "tie-equal"])
@pytest.mark.parametrize("make", [_views_file, _copies_file, _trainer_file])
@pytest.mark.parametrize("level", LEVELS)
def test_pt_slim_saves_what_inspect_attributed(make: Any, level: str, tie: bool, tmp_path: Path) -> None:
    obj = make()
    source, out = tmp_path / "in.pt", tmp_path / "out.pt"
    torch.save(obj, source)
    b, levels = _prediction(source)
    lv = levels[level]
    tied = lv["tie_equal"]
    if tie:  # --tie-equal's own figures; the parts it shares with the default are the same
        lv = {**lv, **tied}
    before = _zip_parts(source)
    assert before["total"] == source.stat().st_size  # the layout rules are torch's own
    assert before["storages"] == b["storage_bytes"]
    report = slim(str(source), str(out), level, tie_equal=tie)
    after = _zip_parts(out)
    assert after["total"] == out.stat().st_size
    # the storages shrink by exactly what inspect predicted; the rest is the container's own change
    assert before["storages"] - after["storages"] == lv["saved_bytes"]
    assert after["storages"] == lv["storage_bytes_after"] == report.storage_bytes_after
    assert source.stat().st_size - out.stat().st_size == lv["saved_bytes"] + (
        before["records"] - after["records"]) + (before["framing"] - after["framing"])
    _check_pt_output(obj, out, level, tie)
    if "args" in obj:  # settings named like trainer keys are no trainer state
        assert torch.load(out, weights_only=True)["args"] == obj["args"]
    # inspect's parts against torch's own figures
    if make is _views_file:
        assert lv["dropped_bytes"] == tied["tied_bytes"] == 0
        assert lv["trimmed_bytes"] == _trimmed_by_torch(obj) > 0
    elif make is _copies_file:
        w = obj["a"]
        assert tied["tied_bytes"] == w.nbytes * 2 + obj["h1"].nbytes  # b and c's storage, h2
        assert report.storages_tied == (3 if tie else 0)
        # untied, c's storage (a clone of w) is its own and trimmed to c's ten rows (tied, it is w's:
        # saved_bytes then counts it as tied, not trimmed)
        c = obj["c"]
        assert levels[level]["trimmed_bytes"] == c.untyped_storage().nbytes() - c.nbytes
        assert tied["saved_bytes"] == tied["tied_bytes"]
        assert lv["dropped_bytes"] == 0
    else:
        dropped = set(obj) - _TRAINER_KEPT.get(level, set(obj))
        assert lv["dropped_bytes"] == sum(t.untyped_storage().nbytes()
                                          for k in dropped for _, t in _tensors(obj[k]))
        assert lv["trimmed_bytes"] == obj["last_batch"].untyped_storage().nbytes() - obj["last_batch"].nbytes


# -- .t7: the binary grammar -------------------------------------------------------------------

_CLASS = {(info.kind, info.dtype.name, info.device): name for name, info in classes.CLASSES.items()
          if info.dtype is not None}


def _class_bytes(kind: str, dtype: str, device: str) -> int:
    """A torch class header: the version string ``V 1`` and the class name, each an int and chars."""
    return 4 + 3 + 4 + len(_CLASS[(kind, dtype, "cuda" if device.startswith("cuda") else device)])


def _t7_parts(doc: Any, long_size: int) -> dict[str, int]:
    """The bytes of a binary ``.t7`` stream of ``doc``'s objects by the grammar of spec/t7.md, each
    object written once and then referred to by index: ``storages`` (payloads) and ``total``."""
    seen: set[int] = set()
    out = {"storages": 0, "total": 0}

    def indexed(v: Any) -> bool:
        out["total"] += 8  # type code and index
        if id(v) in seen:
            return True
        seen.add(id(v))
        return False

    def size(v: Any) -> None:
        if v is None:
            out["total"] += 4
        elif isinstance(v, bool):
            out["total"] += 8
        elif isinstance(v, (int, float)):
            out["total"] += 12
        elif isinstance(v, (str, bytes)):
            raw = v.encode("utf-8", "surrogateescape") if isinstance(v, str) else v
            out["total"] += 8 + len(raw)
        elif isinstance(v, LuaTable):
            if not indexed(v):
                out["total"] += 4
                for k, x in v.items:
                    size(k)
                    size(x)
        elif isinstance(v, Tensor):
            if not indexed(v):
                out["total"] += _class_bytes(classes.TENSOR, v.dtype.name, v.device)
                out["total"] += 4 + 2 * len(v.shape) * long_size + long_size
                size(v.storage)
        elif isinstance(v, Storage):
            if not indexed(v):
                w = long_size if v.dtype.name == "int64" else v.dtype.itemsize
                out["total"] += _class_bytes(classes.STORAGE, v.dtype.name, v.device) + long_size
                out["storages"] += v.numel * w
                out["total"] += v.numel * w
        elif isinstance(v, TorchObject):
            if not indexed(v):
                version = 4 + 2 + len(v.version) if v.version is not None else 0  # "V <version>"
                out["total"] += version + 4 + len(v.class_name)
                size(v.value)
        elif isinstance(v, LuaFunction):
            if v.kind == "function":
                out["total"] += 4  # no index
            elif indexed(v):
                return
            out["total"] += 4 + len(v.bytecode) + 12 + 12 * len(v.upvalues)  # upvalues: a table keyed 1..n
            for u in v.upvalues:
                size(u)
        else:
            raise AssertionError(f"no .t7 form for {type(v).__name__}")

    for obj in doc.objects:
        size(obj)
    return out


def _lua_models() -> list[Any]:
    """Binary .t7 accept cases (committed, and the corpus tiers with the shared corpus's files of real Lua
    Torch, ``t7/lua-torch``) whose modules hold training buffers."""
    files = [(c.path, Hints(**c.hints) if c.hints else None, c.id) for c in committed_cases() + corpus_cases()
             if c.category == "accept" and not c.problems and c.format == "t7-binary"]
    lua_torch = corpus_root() / "t7" / "lua-torch"
    files += [(p, None, f"lua-torch/{p.name}") for p in sorted(lua_torch.glob("*.t7"))]
    out = []
    for path, hints, name in files:
        try:
            doc = torchfmt.open_document(path, hints)
        except (torchfmt.FormatError, torchfmt.Unsupported):
            continue
        if doc.format == "t7-binary" and any(
                is_module(v) and any(isinstance(x, Tensor) and x.storage is not None and k not in MODULE_STATE
                                     for k, x in v.value.items) for v in _values(doc.objects)):
            out.append(pytest.param(path, hints, id=name))
    return out


def _values(objs: list[Any]) -> Iterator[Any]:
    return (v for obj in objs for v in values(obj))


@pytest.mark.spec("inspect.md#inspect-slim", "slim.md#slim-levels", "slim.md#slim-t7-levels")
@pytest.mark.parametrize(("path", "hints"), _lua_models())
def test_t7_slim_saves_what_inspect_attributed(path: Path, hints: Hints | None, tmp_path: Path) -> None:
    b, levels = _prediction(path, hints)
    doc = torchfmt.open_document(path, hints)
    long_size = (doc.extra.get("t7") or {}).get("long_size", 8)
    before = _t7_parts(doc, long_size)
    assert before["total"] == path.stat().st_size  # the grammar's size of what Lua Torch wrote
    assert before["storages"] == b["storage_bytes"]
    for level in LEVELS:
        out = tmp_path / f"{level}.t7"
        slim(str(path), str(out), level, hints=hints, force=True)  # written even when no smaller
        slimmed = torchfmt.open_document(out)
        after = _t7_parts(slimmed, 8)
        assert after["total"] == out.stat().st_size
        lv = levels[level]
        assert before["storages"] - after["storages"] == lv["saved_bytes"], level
        assert after["storages"] == lv["storage_bytes_after"]
        framing = (before["total"] - before["storages"]) - (after["total"] - after["storages"])
        assert path.stat().st_size - out.stat().st_size == lv["saved_bytes"] + framing
        if level == "light":  # the module state is kept value for value
            old = [v for v in _values(doc.objects) if is_module(v)]
            new = [v for v in _values(slimmed.objects) if is_module(v)]
            assert [m.class_name for m in old] == [m.class_name for m in new]
            for m_old, m_new in zip(old, new, strict=True):
                new_fields = dict(m_new.value.items)
                for k, x in m_old.value.items:
                    if k in MODULE_STATE and isinstance(x, Tensor):
                        assert np.array_equal(np.asarray(new_fields[k]), np.asarray(x), equal_nan=True)
