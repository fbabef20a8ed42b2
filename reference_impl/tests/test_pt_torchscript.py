"""TorchScript archives (spec/torchscript.md): ``torch.jit.save`` output is described, never compiled;
the module tree, its tensors and the constants match what ``torch.jit.load`` gives."""

from __future__ import annotations

import io
import pickle
import zipfile

import pytest
import torch
from test_pt_zip import Pairing
from torchfmt import read_bytes
from torchfmt.errors import FormatError
from torchfmt.model import OpaqueObject


class Inner(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)
        self.register_buffer("steps", torch.tensor(7))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x)


class Outer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Inner()
        self.scale = 2.5
        self.names = ["a", "b"]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x) * self.scale


def _saved(module: torch.jit.ScriptModule) -> bytes:
    buf = io.BytesIO()
    torch.jit.save(module, buf)
    return buf.getvalue()


def test_script_module_tree_and_tensors_match_torch_jit_load() -> None:
    torch.manual_seed(0)
    data = _saved(torch.jit.script(Outer()))
    doc = read_bytes(data)
    assert doc.format == "pt-torchscript"
    loaded = torch.jit.load(io.BytesIO(data))
    outer = doc.objects[0]
    assert isinstance(outer, OpaqueObject) and outer.class_name == loaded._c.qualified_name
    inner = outer.state["inner"]
    assert inner.class_name == loaded.inner._c.qualified_name
    assert outer.state["scale"] == 2.5 and outer.state["names"] == ["a", "b"]
    pairing = Pairing()
    pairing.tensor(loaded.inner.lin.weight, inner.state["lin"].state["weight"])
    pairing.tensor(loaded.inner.lin.bias, inner.state["lin"].state["bias"])
    pairing.tensor(loaded.inner.steps, inner.state["steps"])


def test_constants_and_code_records() -> None:
    k = torch.tensor([1.0, 2.0, 3.0])

    def f(x: torch.Tensor) -> torch.Tensor:
        return x * k + 1

    data = _saved(torch.jit.trace(f, torch.ones(3)))
    doc = read_bytes(data)
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    root = doc.extra["root"]
    assert doc.extra["code"] == sorted(n[len(root) + 1:] for n in names if n.startswith(f"{root}/code/"))
    constants = doc.extra["constants"]
    assert any(c.numpy().tolist() == [1.0, 2.0, 3.0] for c in constants)


def test_only_torchscript_classes_are_opaque_in_strict_mode() -> None:
    data = _saved(torch.jit.script(Inner()))
    archive = zipfile.ZipFile(io.BytesIO(data))
    records = {i.filename: archive.read(i) for i in archive.infolist()}
    pkl = next(n for n in records if n.endswith("/data.pkl"))
    records[pkl] = pickle.dumps({"x": print}, protocol=2)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, value in records.items():
            z.writestr(name, value)
    with pytest.raises(FormatError) as e:
        read_bytes(out.getvalue())
    assert e.value.code == "unsafe-global"
