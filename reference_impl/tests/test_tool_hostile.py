"""Every tool on a folder of hostile and odd files (issue 20, "Done when"): every adversarial case of the
conformance suite and the files of tests/tool_inputs.py.

For each file, ``inspect``, ``inspect --json``, ``slim`` and ``convert --to pt-zip|pt-legacy|safetensors|t7``
(run in this process, as ``torchfmt`` would run them) keep the contract: exit 0, 1 or 2; exactly one
stderr line and no output nor temporary file unless 0; never 0 where ``dump`` refuses, and then ``dump``'s
status and line.  An output is compared with torch's view of the input (``torch.load(weights_only=True)``):
``torch.load`` of a ``.pt`` output gives the same object, safetensors' and our reader's view of a
safetensors or ``.t7`` output the same tensors.  A ``.t7`` input has no torch view (its truth is Lua
Torch's, which the conformance suite checks): its outputs are held to the contract only.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import tool_inputs
import torchfmt
from test_tool_contract import TOOLS, left_behind, run, tool_argv
from torchfmt.model import LuaTable, Tensor, TorchObject
from torchfmt.recursion import recursion_limit

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(p for p in (ROOT / "conformance" / "cases").glob("*/adv-*/data.*")
               if p.suffix in (".pt", ".t7"))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return tool_inputs.make(tmp_path_factory.mktemp("hostile"))


def _torch_view(path: Path) -> Any:
    """torch's view of a ``.pt`` file, or None where torch (weights_only) refuses it."""
    try:
        return _load(path)
    except Exception:
        return None


def _load(path: Path) -> Any:
    """``torch.load(weights_only=True)``; a CUDA file, on this machine without CUDA, mapped to the CPU."""
    try:
        return torch.load(path, weights_only=True)
    except RuntimeError as e:
        if "CUDA" not in str(e):
            raise
        return torch.load(path, weights_only=True, map_location="cpu")


def _fingerprint(t: Any) -> tuple[str, tuple[int, ...], bytes]:
    t = t.detach()
    if t.is_meta:
        return str(t.dtype).replace("torch.", ""), tuple(t.shape), b""
    if t.layout == torch.sparse_coo:  # by its parts: a dense form of size 2^62 has no storage
        parts = (_fingerprint(t._indices())[2], _fingerprint(t._values())[2])
        raw = b"coo:%d:" % len(parts[0]) + b"".join(parts)
        return str(t.dtype).replace("torch.", ""), tuple(t.shape), raw
    if t.is_sparse or t.layout != torch.strided:
        t = t.to_dense()
    if t.is_quantized:
        t = t.int_repr()
    t = t.resolve_conj().resolve_neg().contiguous()
    if t.is_meta or not t.numel() or t.dim() > 64:
        return str(t.dtype).replace("torch.", ""), tuple(t.shape), b""
    raw = t.reshape(-1).view(torch.uint8).numpy().tobytes()
    return str(t.dtype).replace("torch.", ""), tuple(t.shape), raw


def _tensors(v: Any, out: list[Any], seen: set[int]) -> list[Any]:
    """The tensors of a torch value, each once, depth first."""
    if isinstance(v, torch.Tensor):
        if id(v) not in seen:
            seen.add(id(v))
            out.append(v)
    elif isinstance(v, dict) and id(v) not in seen:
        seen.add(id(v))
        for x in v.values():
            _tensors(x, out, seen)
    elif isinstance(v, (list, tuple)) and id(v) not in seen:
        seen.add(id(v))
        for x in v:
            _tensors(x, out, seen)
    return out


def _our_tensors(root: Any) -> list[Any]:
    """The dense tensors our reader gives for a ``.t7`` file, each once."""
    out, seen, stack = [], set(), [root]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, LuaTable):
            stack.extend(x for pair in v.items for x in pair)
        elif isinstance(v, TorchObject):
            stack.append(v.value)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return out


def _same(a: Any, b: Any, memo: set[tuple[int, int]]) -> bool:
    """torch's equality of two loaded values: containers, scalars (NaN equal to NaN), tensors bit for
    bit with their dtype, shape, requires_grad."""
    if (id(a), id(b)) in memo:
        return True
    memo.add((id(a), id(b)))
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.requires_grad == b.requires_grad and (
            a.is_meta and b.is_meta and a.shape == b.shape and a.dtype == b.dtype
            or not a.is_meta and _fingerprint(a) == _fingerprint(b))
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):  # keys in order, NaN keys equal to NaN keys; values by position
        return len(a) == len(b) and all(_same(ka, kb, memo) and _same(va, vb, memo) for (ka, va), (kb, vb)
                                        in zip(a.items(), b.items(), strict=True))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y, memo) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _our_fingerprint(t: Any) -> tuple[str, tuple[int, ...], bytes]:
    """:func:`_fingerprint` of our tensor; an empty one, and one of more than 64 dimensions, by dtype and
    shape alone, as there (numpy holds no array of shape (0, 2^62) nor of 65 dimensions, torch no strided
    one of (0, 2^62, 4))."""
    if 0 in t.shape or len(t.shape) > 64:
        return str(t.dtype), tuple(t.shape), b""
    return _fingerprint(torch.from_numpy(np.array(t, copy=True)))


def _check_output(tool: list[str], src: Path, out: Path) -> None:
    want = _torch_view(src) if src.suffix != ".t7" and tool[0] == "convert" else None
    if want is None:
        return
    target = tool[-1]
    if target in ("pt-zip", "pt-legacy"):
        got = _load(out)
        same = _same(want, got, set())
        assert same, f"{target} output differs from torch's view of {src}"
        return
    if target == "safetensors":
        from safetensors.torch import load_file

        got_prints = Counter(_fingerprint(t) for t in load_file(out).values())
    else:
        got_prints = Counter(_our_fingerprint(t) for t in _our_tensors(torchfmt.load(out)))
    want_prints = Counter(_fingerprint(t) for t in _tensors(want, [], set()))
    if target == "t7":  # a Lua tensor of no dimension is an empty 1-d one to torch
        want_prints = Counter({(d, s or (1,), r): n for (d, s, r), n in want_prints.items()})
    assert set(got_prints) <= set(want_prints), f"{target} output holds tensors {src} does not"


def _contract(path: Path, tmp_path: Path) -> list[str]:
    """The tools' runs on ``path`` that break the contract (empty: none)."""
    dump_status, dump_err, _ = run(["dump", str(path)])
    broken = []
    for tool in TOOLS:
        out = tmp_path / ("out." + {"t7": "t7", "safetensors": "safetensors"}.get(tool[-1], "bin"))
        status, err, _ = run(tool_argv(tool, path, out))
        name = " ".join(tool)
        if status not in (0, 1, 2):
            broken.append(f"{name}: exit {status}")
        if status != 0 and len(err) != 1:
            broken.append(f"{name}: {len(err)} stderr lines")
        if status != 0 and out.exists():
            broken.append(f"{name}: an output beside a failure")
        if left_behind(tmp_path):
            broken.append(f"{name}: temporary files {left_behind(tmp_path)}")
        if dump_status != 0 and (status, err) != (dump_status, dump_err):
            broken.append(f"{name}: {status} {err[:1]} where dump: {dump_status} {dump_err[:1]}")
        if status == 0 and out.exists():
            try:
                with recursion_limit(20_000):  # a 990-deep list
                    _check_output(tool, path, out)
            except AssertionError as e:
                broken.append(f"{name}: {e}")
            out.unlink()
    return broken


@pytest.mark.parametrize("path", CASES, ids=[f"{p.parent.parent.name}/{p.parent.name}" for p in CASES])
def test_adversarial_case(path: Path, tmp_path: Path) -> None:
    assert _contract(path, tmp_path) == []


@pytest.mark.parametrize("name", [*tool_inputs.PT, *tool_inputs.T7])
def test_tool_input(made: dict[str, Path], name: str, tmp_path: Path) -> None:
    assert _contract(made[name], tmp_path) == []


def test_the_folder_is_the_one_meant() -> None:
    """Every adversarial case directory is in the folder (a glob that matched nothing would pass)."""
    dirs = {p.parent for p in CASES}
    assert len(dirs) >= 300
    assert all(re.fullmatch(r"adv-[a-z0-9.-]+", d.name) for d in dirs)
