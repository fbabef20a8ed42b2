"""``torchfmt convert``: read any variant, write another (spec/pt-zip.md#pt-zip-write, spec/t7.md#t7-convert).

- ``.t7`` -> ``.pt``/safetensors: a Lua ``nn`` module becomes a state_dict with the names PyTorch's ``nn``
  gives (``0.weight``, ``1.running_mean``; containers nest; an nngraph ``gModule`` numbers its modules in
  ``forwardnodes`` order), CUDA tensors become CPU tensors, and training buffers (``gradWeight``,
  ``output``, ...) are left out unless asked.  Any other Lua value becomes its natural Python value;
  a function has none and is refused.
- ``.pt`` -> ``.pt``: the object as :func:`torchfmt.load` reads it, written in the other layout.
- any -> safetensors (the optional ``safetensors`` package): a flat mapping of names to contiguous
  tensors, tied tensors kept once with the aliases noted in ``__metadata__``.

The input is never overwritten, and an existing output only with ``force``.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .model import LuaFunction, LuaTable, MetaTensor, SparseTensor, Storage, Tensor, TorchObject
from .roles import MODULE_STATE, is_module
from .writer import save
from .writer.atomic import atomic_file
from .writer.reduce import torch_view

TARGETS = ("pt-zip", "pt-legacy", "t7", "safetensors")
_EXTENSIONS = {".t7": "t7", ".safetensors": "safetensors"}


class ConvertError(ValueError):
    """A conversion refused: the output exists, a value has no form in the target, ..."""


@dataclass
class Report:
    """What a conversion did (one line, or ``--json``)."""

    source: str
    output: str
    source_format: str
    target: str
    tensors: int = 0
    left_out: list[str] = field(default_factory=list)
    aliases: dict[str, str] = field(default_factory=dict)
    state_dict: bool = False

    def line(self) -> str:
        what = "a state_dict of " if self.state_dict else ""
        extra = f"; {len(self.left_out)} training buffers left out" if self.left_out else ""
        tied = f"; {len(self.aliases)} tied names kept once" if self.aliases else ""
        return (f"converted {self.source} ({self.source_format}) to {self.output} ({self.target}): "
                f"{what}{self.tensors} tensors{extra}{tied}")

    def json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def target_of(path: str, to: str | None) -> str:
    """The target format: ``to``, else from the output's extension (``pt-zip`` by default)."""
    if to is not None:
        if to not in TARGETS:
            raise ConvertError(f"--to {to!r} is not one of {', '.join(TARGETS)}")
        return to
    return _EXTENSIONS.get(os.path.splitext(path)[1].lower(), "pt-zip")


# -- Lua values -> Python ------------------------------------------------------------------------

def _fields(obj: TorchObject) -> dict[Any, Any]:
    return dict(obj.value.items)


def _sequence(table: Any) -> list[Any]:
    """The values of a Lua array (keys 1..n); empty when ``table`` is not one."""
    if not isinstance(table, LuaTable):
        return []
    by_key = {k: v for k, v in table.items}
    n = len(by_key)
    if all(isinstance(k, float) and k.is_integer() and 1 <= k <= n for k in by_key):
        return [by_key[float(i)] for i in range(1, n + 1)]
    return []


class LuaToPython:
    """Maps Lua values to Python ones, keeping shared values shared and moving tensors to the CPU."""

    def __init__(self, keep_buffers: bool = False) -> None:
        self.keep_buffers = keep_buffers
        self.left_out: list[str] = []
        self.done: dict[int, Any] = {}
        self.storages: dict[int, Storage] = {}

    def tensor(self, t: Tensor) -> Tensor:
        if id(t) in self.done:
            return self.done[id(t)]
        t = torch_view(t)
        storage = t.storage
        if storage is not None and storage.device != "cpu":
            if id(storage) not in self.storages:
                self.storages[id(storage)] = dataclasses.replace(storage, device="cpu")
            storage = self.storages[id(storage)]
        out = dataclasses.replace(t, storage=storage, device="cpu", lua=False)
        self.done[id(t)] = out
        return out

    def state_dict(self, module: TorchObject) -> collections.OrderedDict[str, Tensor]:
        """The module's parameters and buffers under PyTorch's dotted names."""
        out: collections.OrderedDict[str, Tensor] = collections.OrderedDict()
        self._module(module, "", out, set())
        return out

    def _module(self, module: TorchObject, prefix: str, out: dict[str, Tensor], seen: set[int]) -> None:
        if id(module) in seen:  # a module reached twice keeps its first names (PyTorch's rule)
            return
        seen.add(id(module))
        fields = _fields(module)
        for name, value in fields.items():
            if not isinstance(name, str) or not isinstance(value, Tensor):
                continue
            if name in MODULE_STATE or self.keep_buffers:
                if value.lua and not value.shape and name not in MODULE_STATE:
                    continue  # an empty Lua buffer
                out[prefix + name] = self.tensor(value)
            else:
                self.left_out.append(prefix + name)
        for i, child in enumerate(self._children(module)):
            self._module(child, f"{prefix}{i}.", out, seen)

    @staticmethod
    def _children(module: TorchObject) -> list[TorchObject]:
        fields = _fields(module)
        if module.class_name == "nn.gModule" and "forwardnodes" in fields:
            kids: list[TorchObject] = []
            for node in _sequence(fields["forwardnodes"]):
                data = _fields(node).get("data") if isinstance(node, TorchObject) else None
                mod = dict(data.items).get("module") if isinstance(data, LuaTable) else None
                if is_module(mod) and all(mod is not k for k in kids):
                    kids.append(mod)
            return kids
        if "modules" in fields:
            return [m for m in _sequence(fields["modules"]) if is_module(m)]
        return [v for k, v in fields.items() if k in ("module", "modules") and is_module(v)]

    def value(self, v: Any, path: str = "$") -> Any:
        """The natural Python value of a Lua value (an nn module: its state_dict)."""
        if isinstance(v, (LuaTable, TorchObject)) and id(v) in self.done:
            return self.done[id(v)]
        if isinstance(v, Tensor):
            return self.tensor(v)
        if isinstance(v, float) and v.is_integer() and not (v == 0 and math.copysign(1, v) < 0):
            return int(v)
        if isinstance(v, LuaFunction):
            raise ConvertError(f"{path} is a Lua function: it has no Python value")
        if is_module(v):
            out: Any = self.state_dict(v)
        elif isinstance(v, TorchObject):
            out = self.value(v.value, f"{path}<{v.class_name}>")
        elif isinstance(v, Storage):
            out = dataclasses.replace(v, device="cpu") if v.device != "cpu" else v
        elif isinstance(v, LuaTable):
            seq = _sequence(v)
            if seq or not v.items:
                out = []
                self.done[id(v)] = out
                out.extend(self.value(x, f"{path}[{i + 1}]") for i, x in enumerate(seq))
                return out
            out = {}
            self.done[id(v)] = out
            for k, x in v.items:
                key = self.value(k, f"{path} key")
                if isinstance(key, (dict, list)):
                    raise ConvertError(f"{path} has a table as a key: no Python dict can hold it")
                out[key] = self.value(x, f"{path}[{k!r}]")
            return out
        else:
            return v
        if isinstance(v, (LuaTable, TorchObject)):
            self.done[id(v)] = out
        return out


# -- safetensors ---------------------------------------------------------------------------------

def flat_tensors(obj: Any, metadata: bool) -> tuple[dict[str, Tensor], dict[str, str]]:
    """Name -> tensor for a (nested) mapping of tensors; other values are refused, or kept as JSON text
    in ``__metadata__`` when ``metadata``."""
    tensors: dict[str, Tensor] = {}
    other: dict[str, str] = {}
    refused: list[str] = []

    def walk(v: Any, name: str) -> None:
        if isinstance(v, Tensor):
            tensors[name] = v
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{name}.{k}" if name else str(k))
        elif isinstance(v, (list, tuple)) and v and all(isinstance(x, (Tensor, dict)) for x in v):
            for i, x in enumerate(v):
                walk(x, f"{name}.{i}" if name else str(i))
        elif isinstance(v, (SparseTensor, MetaTensor)):
            refused.append(f"{name or '$'} ({type(v).__name__})")
        elif metadata:
            try:
                other[name or "$"] = json.dumps(v)
            except TypeError:
                refused.append(f"{name or '$'} ({type(v).__name__})")
        else:
            refused.append(f"{name or '$'} ({type(v).__name__})")

    walk(obj, "")
    if refused:
        raise ConvertError("safetensors holds tensors only; not tensors: " + ", ".join(refused[:20]) +
                           (f" and {len(refused) - 20} more" if len(refused) > 20 else "") +
                           " (--metadata keeps plain values in __metadata__)")
    return tensors, other


def write_safetensors(obj: Any, path: str, metadata: bool, report: Report) -> None:
    try:
        from safetensors.numpy import save as st_save
    except ImportError:
        raise ConvertError("the safetensors package is not installed (pip install 'torchfmt[safetensors]')") \
            from None
    tensors, meta = flat_tensors(obj, metadata)
    arrays: dict[str, np.ndarray] = {}
    kept: dict[int, str] = {}
    for name, t in tensors.items():
        if t.conj or t.neg or t.dtype.quantized:
            raise ConvertError(f"{name}: a {t.dtype.name} tensor{' view' if t.conj or t.neg else ''} has no "
                               "safetensors form")
        if id(t) in kept:  # tied: the same tensor under two names
            report.aliases[name] = kept[id(t)]
            continue
        kept[id(t)] = name
        view = torch_view(t)
        arrays[name] = np.array(view.numpy(), copy=True, order="C").reshape(view.shape)  # aliasing nothing
    if report.aliases:
        meta["torchfmt.aliases"] = json.dumps(report.aliases)
    report.tensors = len(arrays)
    try:
        data = st_save(arrays, metadata=meta or None)
    except (ValueError, TypeError, KeyError) as e:  # a dtype safetensors' numpy side has no name for
        raise ConvertError(f"safetensors cannot hold these tensors: {e}") from None
    with atomic_file(path) as f:
        f.write(data)


# -- the command ---------------------------------------------------------------------------------

def count_tensors(obj: Any) -> int:
    seen: set[int] = set()
    stack = [obj]
    while stack:
        v = stack.pop()
        if isinstance(v, (Tensor, SparseTensor, MetaTensor)):
            seen.add(id(v))
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, LuaTable):
            stack.extend(x for _, x in v.items)
    return len(seen)


def check_output(source: str, output: str, force: bool, command: str) -> None:
    """Refuse to write over the input, ever, and over an existing output unless ``force``."""
    if os.path.exists(output):
        if os.path.exists(source) and os.path.samefile(source, output):
            raise ConvertError(f"the output is the input: {command} never overwrites its input")
        if not force:
            raise ConvertError(f"{output} exists (--force replaces it)")


def convert(source: str, output: str, to: str | None = None, *, force: bool = False,
            keep_buffers: bool = False, metadata: bool = False) -> Report:
    """Convert the file ``source`` to ``output`` (see the module docstring)."""
    from . import open_document

    target = target_of(output, to)
    check_output(source, output, force, "convert")
    doc = open_document(source)
    if len(doc.objects) != 1:
        raise ConvertError(f"the stream holds {len(doc.objects)} objects; convert writes one")
    obj = doc.objects[0]
    report = Report(source, output, doc.format, target)
    if doc.format.startswith("t7") and target != "t7":
        lua = LuaToPython(keep_buffers)
        report.state_dict = is_module(obj)
        obj = lua.value(obj)
        report.left_out = lua.left_out
    if target == "safetensors":
        write_safetensors(obj, output, metadata, report)
        return report
    save(obj, output, target)
    report.tensors = count_tensors(obj)
    return report
