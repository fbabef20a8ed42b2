"""The allowlist (spec/pickle.md#pickle-globals, #pickle-no-execution): a global outside it is refused in
strict mode, kept inert in inert mode, and in neither mode does anything from the file run."""

from __future__ import annotations

import collections
import io
import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import torch
from torchfmt import read_bytes
from torchfmt.dtypes import BY_STORAGE_CLASS, DTYPES
from torchfmt.errors import FormatError
from torchfmt.model import Global, OpaqueObject
from torchfmt.pickle import globals as allowlist
from torchfmt.pickle.machine import Machine


class Canary:
    """Pickles as ``os.system("touch <path>")``: running the pickle creates the file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.path}",))


class EvalCanary:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (eval, (f"open({str(self.path)!r}, 'w').close()",))


def _zip_pt(payload: object) -> bytes:
    """A torch-written zip .pt whose data.pkl is replaced by ``pickle.dumps(payload)``."""
    buf = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/data.pkl"):
                data = pickle.dumps(payload, protocol=2)
            z.writestr(info.filename, data)
    return out.getvalue()


def _legacy_pt(payload: object) -> bytes:
    """A legacy .pt stream: torch's header pickles, ``payload`` as the object, no storages."""
    buf = io.BytesIO()
    torch.save(1, buf, _use_new_zipfile_serialization=False)
    raw = buf.getvalue()
    m = Machine(raw)
    pos = 0
    for _ in range(3):  # magic, protocol version, sys_info
        _, pos = m.load(pos)
    return raw[:pos] + pickle.dumps(payload, protocol=2) + pickle.dumps([], protocol=2)


@pytest.mark.parametrize("make", [_zip_pt, _legacy_pt])
@pytest.mark.parametrize("canary_type", [Canary, EvalCanary])
def test_a_code_running_global_is_refused_and_never_runs(tmp_path: Path, make: Any, canary_type: Any) -> None:
    canary = tmp_path / "canary"
    data = make({"x": canary_type(canary)})
    with pytest.raises(FormatError) as e:
        read_bytes(data)
    assert e.value.code == "unsafe-global"
    assert not canary.exists()
    # inert mode keeps it as an object and still runs nothing
    doc = read_bytes(data, inert=True)
    obj = doc.objects[0]["x"]
    assert isinstance(obj, OpaqueObject) and obj.class_name in ("posix.system", "builtins.eval")
    assert not canary.exists()


def test_the_cli_refuses_it_with_one_line_and_status_1(tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    path = tmp_path / "evil.pt"
    path.write_bytes(_zip_pt(Canary(canary)))
    run = subprocess.run([sys.executable, "-m", "torchfmt", "dump", str(path)], capture_output=True,
                         text=True)
    assert run.returncode == 1 and run.stdout == ""
    assert run.stderr.startswith("unsafe-global: ") and run.stderr.count("\n") == 1
    inert = subprocess.run([sys.executable, "-m", "torchfmt", "dump", "--inert", str(path)],
                           capture_output=True, text=True)
    assert inert.returncode == 0 and '"type": "object"' in inert.stdout
    assert not canary.exists()


@pytest.mark.parametrize("module, name", [
    ("builtins", "getattr"), ("builtins", "__import__"), ("subprocess", "Popen"), ("torch", "load"),
    ("torch.nn.modules.linear", "Linear"), ("numpy.core.multiarray", "_reconstruct"), ("__main__", "Net"),
    ("copyreg", "_reconstructor"), ("torch.jit._pickle", "restore_type_tag"), ("collections", "Counter"),
])
def test_globals_outside_the_allowlist_are_refused_in_strict_mode(module: str, name: str) -> None:
    data = b"\x80\x02c" + f"{module}\n{name}\n.".encode()
    with pytest.raises(FormatError) as e:
        Machine(data).load_exact(0, len(data))
    assert e.value.code == "unsafe-global"
    assert Machine(data, inert=True).load_exact(0, len(data)) == Global(module, name)


def test_scoped_entries_apply_only_in_their_scope() -> None:
    data = b"\x80\x02ctorch.jit._pickle\nbuild_intlist\n]K\x01a\x85R."
    assert Machine(data, scopes=frozenset({"torch", "torchscript"})).load_exact(0, len(data)) == [1]


def test_every_torch_storage_class_and_dtype_is_allowed() -> None:
    for d in DTYPES:
        assert allowlist.lookup("torch", d.name, frozenset({"torch"})) is not None
    for name in torch.storage._dtype_to_storage_type_map().values():
        assert allowlist.storage_dtype(Global("torch", name)) is BY_STORAGE_CLASS[name]
    assert allowlist.storage_dtype(Global("torch.storage", "UntypedStorage")).name == "uint8"


def test_every_rebuild_function_torch_allows_is_in_the_table() -> None:
    from torch._weights_only_unpickler import _tensor_rebuild_functions

    for f in _tensor_rebuild_functions():
        assert ("torch._utils", f.__name__) in allowlist.ALLOWED, f.__name__


def test_allowlisted_names_exist_in_torch() -> None:
    """Every allowed name is a real torch/builtins object, so the table names what writers emit."""
    import importlib

    for entry in allowlist.ALLOWED_LIST:
        module = importlib.import_module(entry.module)  # the test, not the reader, imports these
        assert hasattr(module, entry.name) == (entry.gone is None), entry.qualname


class _Call:
    """Pickles as ``call(arg)`` (the global ``call`` REDUCE'd with one argument)."""

    def __init__(self, call: Any, arg: object) -> None:
        self.call, self.arg = call, arg

    def __reduce__(self) -> tuple[Any, ...]:
        return (self.call, (self.arg,))


@pytest.mark.spec("pickle.md#pickle-ordered-dict")
@pytest.mark.parametrize("make", [_zip_pt, _legacy_pt])
@pytest.mark.parametrize("arg", [[], (), [("a", 1), ["b", 2]], (("a", 1), ("b", 2), ("a", 3)),
                                 {"b": 1, "a": 2}, collections.OrderedDict([("z", 0), ("y", 1)])],
                         ids=["empty-list", "empty-tuple", "list", "tuple-repeated-key", "dict",
                              "ordered-dict"])
def test_ordered_dict_arguments_load_as_torch_loads_them(tmp_path: Path, make: Any, arg: object) -> None:
    """The empty tuple was refused (found by the differential run: a legacy state_dict's metadata)."""
    path = tmp_path / "f.pt"
    path.write_bytes(make(_Call(collections.OrderedDict, arg)))
    by_torch = torch.load(path, weights_only=True)
    ours = read_bytes(path.read_bytes()).objects[0]
    assert type(by_torch) is collections.OrderedDict and isinstance(ours, collections.OrderedDict)
    assert list(ours.items()) == list(by_torch.items())


@pytest.mark.spec("pickle.md#pickle-globals")
@pytest.mark.parametrize("arg", [[3, False, 4], (True,), [], (2, 3)], ids=["list-bool", "tuple-true", "empty",
                                                                          "tuple"])
def test_torch_size_arguments_load_as_torch_loads_them(tmp_path: Path, arg: object) -> None:
    """torch.Size takes a bool as 0 or 1 (the differential run found [3, False, 4] refused)."""
    path = tmp_path / "f.pt"
    path.write_bytes(_zip_pt(_Call(torch.Size, arg)))
    by_torch = torch.load(path, weights_only=True)
    ours = read_bytes(path.read_bytes()).objects[0]
    assert type(by_torch) is torch.Size and ours.class_name == "torch.Size"
    assert ours.args == [tuple(by_torch)] and all(type(x) is int for x in ours.args[0])
