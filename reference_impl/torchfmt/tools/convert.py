"""``torchfmt convert``: read any variant, write another (spec/pt-zip.md#pt-zip-write, spec/t7.md#t7-convert).

- ``.t7`` -> ``.pt``/safetensors: a Lua ``nn`` module becomes a state_dict with the names PyTorch's ``nn``
  gives (``0.weight``, ``1.running_mean``; containers nest; an nngraph ``gModule`` numbers its modules in
  ``forwardnodes`` order), CUDA tensors become CPU tensors, and the fields the role table names
  training buffers (``gradWeight``, ``output``, ...; :func:`~torchfmt.tools.roles.training_buffer`) are
  left out unless asked; every other tensor field is kept (``nn.SpatialConvolutionMap``'s ``connTable``).
  Any other Lua value becomes its natural Python value; a function has none and is refused.
- ``.pt`` -> ``.pt``: the object as :func:`torchfmt.load` reads it, written in the other layout; with
  ``inert`` a whole pickled ``nn.Module`` (``torch.save(model)``, a 0.1.x tar file) becomes its state_dict.
- any -> safetensors (the optional ``safetensors`` package): a flat mapping of names to contiguous
  tensors, tied tensors kept once with the aliases noted in ``__metadata__``.

The input is never overwritten, and an existing output only with ``force``.  A refused conversion is a
:class:`ConvertError`, an :class:`~torchfmt.errors.Unsupported` (exit status 2, one line
``unsupported: <feature> (<why>)``, spec/t7.md#t7-convert-refusals).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import Unsupported, quote
from ..inputs import kind
from ..model import (
    Document,
    Global,
    LuaFunction,
    LuaTable,
    MetaTensor,
    OpaqueObject,
    SparseTensor,
    Storage,
    Tensor,
    TorchObject,
)
from ..t7.encodings import Hints
from ..walk import values
from ..writer import write
from ..writer.atomic import atomic_file
from ..writer.pickler import PicklingError
from ..writer.reduce import torch_view
from ..writer.safetensors import NUMPY_MAX_DIMS, SAFETENSORS_DTYPES
from ..writer.safetensors import write_safetensors as st_write
from .flat import NameClash, Names
from .flat import shown_path as shown_key_path
from .progress import CountingFile, progress
from .reading import read
from .roles import RANK, is_module, module_field_role, training_buffer
from .sizes import storage_bytes
from .verify import Lost, read_back, read_back_safetensors

TARGETS = ("pt-zip", "pt-legacy", "t7", "safetensors")
#: The output extensions each target may be written under (spec/t7.md#t7-convert-extension): a name of
#: another format's extension (``out.onnx``, ``out.safetensors --to pt-legacy``) is refused.  A name
#: without an extension is written as ``--to`` says (``pt-zip`` without it).
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "pt-zip": (".pt", ".pth", ".bin", ".ckpt", ".tar"),  # .bin: pytorch_model.bin; .tar: model.pth.tar
    "pt-legacy": (".pt", ".pth", ".bin", ".ckpt", ".tar"),
    "t7": (".t7", ".th", ".net"),  # the names Lua Torch users gave torch.save's files
    "safetensors": (".safetensors",),
}
_BY_EXTENSION = {".t7": "t7", ".th": "t7", ".net": "t7", ".safetensors": "safetensors"}


#: What ``convert`` and ``slim`` refuse: the closed set of ``<feature>`` words of their refusal line
#: ``unsupported: <feature> (<why>)`` (spec/t7.md#t7-convert-refusals; the spec's table is generated from
#: this mapping).  Words of conformance/features.yaml where one fits.
REFUSALS: dict[str, str] = {
    "t7-function": "a Lua function (type 8): no Python value holds it",
    "t7-legacy-function": "a Lua function of type 6 or 7: no Python value holds it",
    "t7-table-key": "a Lua table or torch object used as a table key: no Python dict holds it",
    "multi-object": "a .t7 stream of several top-level objects: the output holds one",
    "torchscript-archive": "a TorchScript archive is a program, not a checkpoint (convert and slim)",
    "pt-zip-value": "a value the pt-zip writer has no pickle form for",
    "pt-legacy-value": "a value the legacy stream cannot hold (a dtype with no typed storage class, ...)",
    "t7-value": "a value Lua Torch has no form for (a dtype without a Lua class, a lazy view, ...)",
    "safetensors-non-tensor": "a value that is not a tensor, without --metadata (the first ten named)",
    "safetensors-name": "two different values whose flat names collide (both paths named): one would be "
                        "lost; a name or --metadata value that is no valid Unicode string (a lone "
                        "surrogate), which safetensors' readers refuse; a name the writer's own header keys "
                        "take (__metadata__, torchfmt.aliases)",
    "safetensors-dtype": "a tensor safetensors has no form for (quantized; a lazy conjugate, negative view; "
                         "more than 64 dimensions, numpy's limit, through which the writer streams)",
    "read-back": "what was written does not read back as what was meant (its path named): nothing replaced",
    "existing-output": "the output exists and --force was not given",
    "output-is-input": "the output is the input (refused even with --force)",
    "output-not-regular": "the output is a directory, FIFO, device or socket (refused even with --force)",
    "unwritable-path": "the output cannot be written (the operating system's reason)",
    "target-format": "an output format that is not one of pt-zip, pt-legacy, t7, safetensors",
    "output-extension": "an output name whose extension is another format's than the one written (--to, "
                        "or the extension's own; the accepted extensions named)",
    "pickled-object": "--inert: a pickled object that is no nn.Module, or a global outside the allowlist",
    "drop-key": "slim --drop names a key the checkpoint does not have",
    "slim-level": "slim --level is not light, medium or heavy",
}

#: Characters of a value's path (``$.modules[3].fn``) a refusal shows at most, its end kept.
PATH_CHARS = 120


class ConvertError(Unsupported):
    """A conversion refused (spec/t7.md#t7-convert-refusals): ``feature`` (one of :data:`REFUSALS`) says
    what is not done, ``detail`` why, in one short line (file data quoted by
    :func:`~torchfmt.errors.quote`), ``offset`` the byte of the input it concerns when known."""

    def __init__(self, feature: str, detail: str, offset: int | None = None) -> None:
        if feature not in REFUSALS:
            raise ValueError(f"unknown refusal {feature!r}")
        self.detail = " ".join(detail.split())
        self.offset = offset
        super().__init__(feature)

    def line(self) -> str:
        """``unsupported: <feature> (<detail>[, at byte N])``."""
        where = "" if self.offset is None else f", at byte {self.offset}"
        return f"unsupported: {self.feature} ({self.detail}{where})"


def shown_path(path: str) -> str:
    """A value's path, ASCII-escaped and cut to its last :data:`PATH_CHARS` characters."""
    path = ascii(path)[1:-1]
    return path if len(path) <= PATH_CHARS else "..." + path[-PATH_CHARS:]


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
    #: device -> tensors moved (spec/t7.md#t7-convert-devices)
    moved_to_cpu: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        what = "a state_dict of " if self.state_dict else ""
        extra = f"; {len(self.left_out)} training buffers left out" if self.left_out else ""
        tied = f"; {len(self.aliases)} tied names kept once" if self.aliases else ""
        moved = ""
        if self.moved_to_cpu:
            devices = ", ".join(f"{n} from {d}" for d, n in sorted(self.moved_to_cpu.items()))
            moved = f"; tagged cpu ({devices}; --keep-devices keeps the tags)"
        return (f"converted {self.source} ({self.source_format}) to {self.output} ({self.target}): "
                f"{what}{self.tensors} tensors{extra}{tied}{moved}")

    def json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def target_of(path: str, to: str | None) -> str:
    """The target format: ``to``, else from the output's extension (``pt-zip`` for ``.pt`` and the
    others of :data:`EXTENSIONS`, and for a name without one); an extension that is not one of the
    target's is refused, naming those accepted (spec/t7.md#t7-convert-extension)."""
    if to is not None and to not in TARGETS:
        raise ConvertError("target-format", f"--to {quote(to)} is not one of {', '.join(TARGETS)}")
    ext = os.path.splitext(os.path.basename(path))[1].lower()
    target = to if to is not None else _BY_EXTENSION.get(ext, "pt-zip")
    check_extension(path, target, f"--to {target}" if to is not None else f"{target} (the default)")
    return target


def check_extension(path: str, target: str, said: str) -> None:
    """Refuse an output name whose extension is not one of ``target``'s (:data:`EXTENSIONS`; ``t7-*``
    variants are ``t7``), ``said`` naming why that target is written (spec/t7.md#t7-convert-extension)."""
    ext = os.path.splitext(os.path.basename(path))[1].lower()
    target = "t7" if target.startswith("t7") else target
    if ext and ext not in EXTENSIONS[target]:
        accepted = ", ".join(EXTENSIONS[target])
        raise ConvertError("output-extension", f"the output {quote(os.path.basename(path), 80)} ends in "
                           f"{quote(ext, 20)}, which is no {target} file's extension: {said} is written "
                           f"as {accepted} (or a name without an extension)")


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


def _state_order(module: TorchObject, name: Any) -> tuple[int, bool, str]:
    """Where a module's field goes in its state_dict, as PyTorch registers them: the weights role before
    the running statistics (spec/inspect.md#inspect-roles), a bias after its weight; the other fields
    after them by name (a file holds a table in its hash order, which says nothing)."""
    role = module_field_role(name, module.class_name)
    if role is None or not role.module_state:
        return (len(RANK), False, name if isinstance(name, str) else "")
    return (RANK[role.name], name.endswith("bias"), "")


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
        ordered = sorted(fields.items(), key=lambda kv: _state_order(module, kv[0]))
        for name, value in ordered:
            if not isinstance(name, str) or not isinstance(value, Tensor):
                continue
            if training_buffer(name, module.class_name) is None:  # every field no rule names as a buffer
                out[prefix + name] = self.tensor(value)
            elif not self.keep_buffers:
                self.left_out.append(prefix + name)
            elif value.shape or not value.lua:  # an empty Lua buffer (clearState's) has no state to keep
                out[prefix + name] = self.tensor(value)
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
        if isinstance(v, (LuaTable, TorchObject, list)) and id(v) in self.done:
            return self.done[id(v)]
        if isinstance(v, Tensor):
            return self.tensor(v)
        if isinstance(v, float) and v.is_integer() and not (v == 0 and math.copysign(1, v) < 0):
            return int(v)
        if isinstance(v, LuaFunction):
            raise ConvertError("t7-function" if v.kind == "recursive" else "t7-legacy-function",
                               f"{shown_path(path)} is a Lua function: it has no Python value", v.offset)
        if is_module(v):
            out: Any = self.state_dict(v)
        elif isinstance(v, TorchObject):
            out = self.value(v.value, f"{path}<{v.class_name}>")
        elif isinstance(v, Storage):
            out = dataclasses.replace(v, device="cpu") if v.device != "cpu" else v
        elif isinstance(v, list):  # a torch class's read() may give a list (tds.Vec)
            out = []
            self.done[id(v)] = out
            out.extend(self.value(x, f"{path}[{i + 1}]") for i, x in enumerate(v))
            return out
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
                    raise ConvertError("t7-table-key", f"{shown_path(path)} has a table as a key: no Python "
                                                       "dict can hold it")
                out[key] = self.value(x, _item_path(path, k))
            return out
        else:
            return v
        if isinstance(v, (LuaTable, TorchObject)):
            self.done[id(v)] = out
        return out


# -- whole pickled PyTorch modules (read with --inert) ---------------------------------------------

def is_pickled_module(v: Any) -> bool:
    """A ``torch.nn.Module`` pickled whole (``torch.save(model)``), read inert: an opaque object whose
    state holds the module's ``_parameters``, ``_buffers`` and ``_modules``."""
    return isinstance(v, OpaqueObject) and isinstance(v.state, dict) and \
        all(isinstance(v.state.get(k), dict) for k in ("_parameters", "_buffers", "_modules"))


def _allowed(class_name: str) -> bool:
    from ..pickle.globals import lookup
    from ..pickle.machine import DEFAULT_SCOPES

    module, _, name = class_name.rpartition(".")
    return lookup(module, name, DEFAULT_SCOPES) is not None


class PickledModules:
    """Maps what an inert reading returns to values ``torch.load(weights_only=True)`` loads: a whole
    pickled ``nn.Module`` becomes the state_dict ``module.state_dict()`` gives (parameters, then
    persistent buffers, then each child under ``<name>.``; tensors detached: no Parameter, no
    requires_grad); any other object outside the allowlist is refused
    (spec/t7.md#t7-convert-pickled-module)."""

    def __init__(self) -> None:
        self.done: dict[int, Any] = {}
        self.modules = 0

    def value(self, v: Any, path: str = "$") -> Any:
        if id(v) in self.done:
            return self.done[id(v)]
        if is_pickled_module(v):
            out: Any = collections.OrderedDict()
            self._module(v, "", out, set())
            self.modules += 1
        elif isinstance(v, OpaqueObject) and not _allowed(v.class_name):
            raise ConvertError("pickled-object", f"{shown_path(path)} is a pickled {quote(v.class_name)} "
                                                 "object, no nn.Module: loading it would run its class")
        elif isinstance(v, Global) and not _allowed(f"{v.module}.{v.name}"):
            name = quote(f"{v.module}.{v.name}")
            raise ConvertError("pickled-object", f"{shown_path(path)} is the global {name}: loading it "
                                                 "would import it")
        elif type(v) in (dict, collections.OrderedDict):
            out = type(v)()
            self.done[id(v)] = out
            if isinstance(out, collections.OrderedDict):  # its attributes (a state_dict's _metadata)
                out.__dict__.update(v.__dict__)
            for k, x in v.items():
                out[k] = self.value(x, _item_path(path, k))
            return out
        elif type(v) is list:
            out = []
            self.done[id(v)] = out
            out.extend(self.value(x, f"{path}[{i}]") for i, x in enumerate(v))
            return out
        elif type(v) is tuple:
            out = tuple(self.value(x, f"{path}[{i}]") for i, x in enumerate(v))
        else:
            return v
        self.done[id(v)] = out
        return out

    def _module(self, module: OpaqueObject, prefix: str, out: dict[str, Any], seen: set[int]) -> None:
        if id(module) in seen:  # a module reached twice keeps its first names, as in PyTorch
            return
        seen.add(id(module))
        state = module.state
        transient = state.get("_non_persistent_buffers_set") or ()
        tensors = [*state["_parameters"].items(),
                   *((k, t) for k, t in state["_buffers"].items() if k not in transient)]
        for name, t in tensors:
            if t is not None:
                out[prefix + str(name)] = self._detached(t)
        for name, child in state["_modules"].items():
            if is_pickled_module(child):
                self._module(child, f"{prefix}{name}.", out, seen)

    def _detached(self, t: Any) -> Any:
        if id(t) not in self.done:
            self.done[id(t)] = dataclasses.replace(t, requires_grad=False, parameter=False) \
                if isinstance(t, Tensor) else t
        return self.done[id(t)]


# -- safetensors ---------------------------------------------------------------------------------

#: Values the JSON text of one ``--metadata`` value may hold, repeats included: a shared list nested 30
#: deep is 2^30 values to ``json.dumps``, which :func:`_json_plain` counts without expanding it.
PLAIN_NODES = 1_000_000


def _json_plain(v: Any) -> bool:
    """Whether ``--metadata`` would keep ``v``: only JSON's types, no container inside itself, and at most
    :data:`PLAIN_NODES` values once shared containers are written out (counted per container once)."""
    size: dict[int, int] = {}
    active: set[int] = set()

    def count(x: Any) -> int:
        if x is None or type(x) in (bool, int, float, str):
            return 1
        if type(x) not in (dict, list, tuple) or id(x) in active:
            return PLAIN_NODES + 1  # no JSON form, or a container inside itself
        if id(x) not in size:
            if type(x) is dict and not all(type(k) in (str, int, float, bool) or k is None for k in x):
                return PLAIN_NODES + 1
            active.add(id(x))
            total = 1
            for y in (x.values() if type(x) is dict else x):
                total = min(total + count(y), PLAIN_NODES + 1)
                if total > PLAIN_NODES:
                    break
            active.discard(id(x))
            size[id(x)] = total
        return size[id(x)]

    return count(v) <= PLAIN_NODES


def flat_tensors(obj: Any, metadata: bool, raw: dict[str, Any] | None = None
                 ) -> tuple[dict[str, Tensor], dict[str, str]]:
    """Name -> tensor for a (nested) mapping of tensors; other values are refused, or kept as JSON text
    in ``__metadata__`` when ``metadata``.  Names are unique: two different values that flatten to one
    name are refused, naming both paths (:class:`~torchfmt.tools.flat.NameClash`); ``raw`` gets each
    metadata value as it was before it became JSON text."""
    tensors: dict[str, Tensor] = {}
    other: dict[str, str] = {}
    refused: list[str] = []
    unplain: list[str] = []  # refused values --metadata would refuse too
    names = Names()

    def walk(v: Any, name: str, keys: tuple[Any, ...], inside: frozenset[int]) -> None:
        if isinstance(v, (dict, list, tuple)) and id(v) in inside:
            refused.append(f"{quote(name or '$')} (a container inside itself)")
            unplain.append(name)
        elif isinstance(v, Tensor):
            if names.add(name, v, shown_key_path(keys)):
                tensors[name] = v
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(x, f"{name}.{k}" if keys else str(k), (*keys, k), inside | {id(v)})
        elif isinstance(v, (list, tuple)) and v and all(isinstance(x, (Tensor, dict)) for x in v):
            for i, x in enumerate(v):
                walk(x, f"{name}.{i}" if keys else str(i), (*keys, i), inside | {id(v)})
        elif isinstance(v, (SparseTensor, MetaTensor)):
            refused.append(f"{quote(name or '$')} ({type(v).__name__})")
            unplain.append(name)
        elif metadata:
            try:
                text = json.dumps(v)
            except (TypeError, ValueError, RecursionError):
                refused.append(f"{quote(name or '$')} ({type(v).__name__})")
                unplain.append(name)
            else:
                if names.add(name or "$", text, shown_key_path(keys)):
                    other[name or "$"] = text
                    if raw is not None:
                        raw[name or "$"] = v
        else:
            refused.append(f"{quote(name or '$')} ({type(v).__name__})")
            if not _json_plain(v):
                unplain.append(name)

    try:
        walk(obj, "", (), frozenset())
    except NameClash as e:
        raise ConvertError("safetensors-name", f"{e}: one would be lost") from None
    if refused:
        n = len(refused)
        # advice that works when followed: --metadata only when it is not given and would keep every one
        plain = not metadata and not unplain
        advice = ("--metadata keeps them, as JSON in __metadata__" if plain else
                  "they have no JSON form for --metadata: --to pt-zip keeps every value" if metadata else
                  "--to pt-zip keeps every value (--metadata keeps only plain values, as JSON)")
        raise ConvertError("safetensors-non-tensor", f"safetensors holds tensors only; {n} "
                           f"{'value is' if n == 1 else 'values are'} not: " + ", ".join(refused[:10])
                           + (", ..." if n > 10 else "") + f"; {advice}")
    return tensors, other


#: The header keys the writer itself fills: no tensor (``__metadata__``) nor ``--metadata`` value
#: (``torchfmt.aliases``) may take their names (spec/t7.md#t7-convert-safetensors-names).
RESERVED_NAMES = {"__metadata__": "the header's metadata entry",
                  "torchfmt.aliases": "the writer's own metadata key for tied names"}


def _unicode(text: str) -> bool:
    """Whether ``text`` is a string of Unicode scalar values (no lone surrogate): what JSON readers that
    follow RFC 8259 strictly, as safetensors' does, accept."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_safetensors_names(tensors: dict[str, Tensor], meta: dict[str, str], raw: dict[str, Any]) -> None:
    """Refuse, by name, what safetensors' own readers would refuse or misread
    (spec/t7.md#t7-convert-safetensors-names): a tensor name or a ``--metadata`` name or value (``raw``:
    the values before they became JSON text) that is no valid Unicode string, and a name the writer's
    own header keys take."""
    for name in [*tensors, *meta]:
        if not _unicode(name):
            raise ConvertError("safetensors-name", f"the name {ascii(name)} is no valid Unicode string (a "
                               "lone surrogate): safetensors' readers refuse such a header")
    for name, value in raw.items():
        if not _unicode(json.dumps(value, ensure_ascii=False, default=str)):
            raise ConvertError("safetensors-name", f"the --metadata value {ascii(name)} holds a lone "
                               "surrogate (no valid Unicode string): safetensors' readers refuse it")
    for name in tensors:
        if name in RESERVED_NAMES:
            raise ConvertError("safetensors-name", f"a tensor named {quote(name)}: the name is "
                               f"{RESERVED_NAMES[name]} of a safetensors header")
    for name in meta:
        if name in RESERVED_NAMES:
            raise ConvertError("safetensors-name", f"the --metadata value named {quote(name)} collides with "
                               f"{RESERVED_NAMES[name]}: rename it before converting")


def write_safetensors(obj: Any, path: str, metadata: bool, report: Report) -> None:
    """Write the flat tensors of ``obj`` as safetensors (spec/t7.md#t7-convert-safetensors): the header
    first, then each tensor streamed from its storage (:mod:`torchfmt.writer.safetensors`)."""
    raw: dict[str, Any] = {}
    tensors, meta = flat_tensors(obj, metadata, raw)
    check_safetensors_names(tensors, meta, raw)
    written: dict[str, Tensor] = {}
    kept: dict[int, str] = {}
    for name, t in tensors.items():
        if t.conj or t.neg or t.dtype.name not in SAFETENSORS_DTYPES:
            view = " view" if t.conj or t.neg else ""
            raise ConvertError("safetensors-dtype",
                               f"{quote(name)}: a {t.dtype.name} tensor{view} has no safetensors form")
        if len(t.shape) > NUMPY_MAX_DIMS:
            raise ConvertError("safetensors-dtype", f"{quote(name)}: a tensor of {len(t.shape)} dimensions "
                               f"(the writer streams through numpy, which holds at most {NUMPY_MAX_DIMS})")
        if id(t) in kept:  # tied: the same tensor under two names
            report.aliases[name] = kept[id(t)]
            continue
        kept[id(t)] = name
        written[name] = torch_view(t)
    if report.aliases:
        meta["torchfmt.aliases"] = json.dumps(report.aliases)
    report.tensors = len(written)
    total = sum(math.prod(t.shape) * t.dtype.itemsize for t in written.values())
    meant = {name: tensors[name] for name in written}
    with progress(total, "convert: writing") as done, \
            atomic_file(path, check=lambda tmp: checked(tmp, meant, "safetensors", meta)) as f:
        st_write(written, f, meta or None, done)


# -- the command ---------------------------------------------------------------------------------

def count_tensors(obj: Any) -> int:
    """The tensors reachable from ``obj``, each counted once (containers may nest in cycles)."""
    tensors: set[int] = set()
    visited: set[int] = set()
    stack = [obj]
    while stack:
        v = stack.pop()
        if isinstance(v, (Tensor, SparseTensor, MetaTensor)):
            tensors.add(id(v))
        elif id(v) in visited:
            continue
        visited.add(id(v))
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, LuaTable):
            stack.extend(x for _, x in v.items)
    return len(tensors)


def check_output(source: str, output: str, force: bool, command: str, *, dry_run: bool = False) -> None:
    """Refuse to write over the input, ever, over what is not a regular file, ever (``--force`` replacing
    ``/dev/null`` or a FIFO by a regular file would break what uses it), and over an existing output
    unless ``force`` (``dry_run`` writes nothing: only the first two)."""
    try:
        st = os.stat(output)
    except OSError:
        return
    if os.path.exists(source) and os.path.samefile(source, output):
        raise ConvertError("output-is-input", f"the output is the input: {command} never overwrites its "
                                              "input")
    what = kind(st.st_mode)
    if what is not None:
        raise ConvertError("output-not-regular", f"{quote(output, 120)} is {what}: {command} writes only a "
                                                 "regular file, never over another kind (--force neither)")
    if not force and not dry_run:
            raise ConvertError("existing-output", f"{quote(output, 120)} exists (--force replaces it)")


def convert(source: str, output: str, to: str | None = None, *, force: bool = False,
            keep_buffers: bool = False, metadata: bool = False, inert: bool = False,
            keep_devices: bool = False, hints: Hints | None = None) -> Report:
    """Convert the file ``source`` to ``output`` (see the module docstring); ``inert`` reads a whole
    pickled ``nn.Module`` and writes its state_dict (:class:`PickledModules`); ``keep_devices`` keeps
    the device tags (``cuda:0``, ...) instead of tagging everything ``cpu``
    (spec/t7.md#t7-convert-devices); ``hints`` are a ``.t7`` file's encoding hints, as for ``torchfmt
    dump``."""
    target = target_of(output, to)
    check_output(source, output, force, "convert")
    doc = read(source, hints, inert=inert)
    if doc.format == "pt-torchscript":
        raise ConvertError("torchscript-archive", "a TorchScript archive is a program (torch.jit.load), not "
                                                  "a checkpoint: torch.jit.load it and save its state_dict()")
    if len(doc.objects) != 1:
        raise ConvertError("multi-object", f"the stream holds {len(doc.objects)} objects; convert writes one")
    obj = doc.objects[0]
    report = Report(source, output, doc.format, target)
    if doc.format.startswith("t7") and target != "t7":
        lua = LuaToPython(keep_buffers)
        report.state_dict = is_module(obj)
        obj = lua.value(obj)
        report.left_out = lua.left_out
    elif inert:
        modules = PickledModules()
        obj = modules.value(obj)
        report.state_dict = modules.modules > 0
    if not keep_devices:
        report.moved_to_cpu = to_cpu(obj)
    with writing(output, target):
        if target == "safetensors":
            write_safetensors(obj, output, metadata, report)
            return report
        total = storage_bytes(Document(target, [obj]))
        with progress(total, "convert: writing") as done, \
                atomic_file(output, check=lambda tmp: checked(tmp, obj, target)) as f:
            write(obj, CountingFile(f, done), target, path=output)  # type: ignore[arg-type]
    report.tensors = count_tensors(obj)
    return report


def to_cpu(obj: Any) -> dict[str, int]:
    """Tag every tensor and storage reachable from ``obj`` that is on another device (``cuda:0``, ``mps``,
    ...) as a CPU one, in place (a file holds the bytes either way; torch then loads it without
    ``map_location``); meta tensors stay meta.  How many tensors were moved, by device (a tensor counted
    once, by its own device, its storage with it; a storage reached as a value of its own counts as one)."""
    moved: dict[str, int] = collections.Counter()
    for v in values(obj):
        if isinstance(v, Tensor):
            storage = v.storage
            device = next((d for d in (v.device, storage.device if storage is not None else "cpu")
                           if d not in ("cpu", "meta")), None)
            if device is not None:
                moved[device] += 1
            if v.device not in ("cpu", "meta"):
                v.device = "cpu"
            if storage is not None and storage.device not in ("cpu", "meta"):
                storage.device = "cpu"
        elif isinstance(v, Storage) and v.device not in ("cpu", "meta"):
            moved[v.device] += 1
            v.device = "cpu"
    return dict(moved)


def checked(tmp: str, meant: Any, target: str, metadata: dict[str, str] | None = None) -> None:
    """Refuse a written file that does not read back as what was meant (:mod:`torchfmt.tools.verify`):
    it is removed and nothing is replaced."""
    try:
        if target == "safetensors":
            read_back_safetensors(tmp, meant, metadata or {})
        else:
            read_back(tmp, meant, target)
    except Lost as e:
        raise ConvertError("read-back", f"{e}; nothing written") from None


@contextlib.contextmanager
def writing(output: str, target: str) -> Iterator[None]:
    """Refusals of the writer, and a destination it cannot write, as :class:`ConvertError`."""
    try:
        yield
    except PicklingError as e:  # a value the target format has no form for
        raise ConvertError(f"{target}-value", quote(str(e), 200)) from None
    except OSError as e:
        why = quote(e.strerror or type(e).__name__)
        raise ConvertError("unwritable-path", f"{why}: {quote(output, 120)}") from None


def _item_path(path: str, key: Any) -> str:
    """The path of a table's item: ``.name`` for a short identifier, else the key quoted in brackets."""
    if isinstance(key, str) and key.isidentifier() and len(key) <= 40:
        return f"{path}.{key}"
    if isinstance(key, float) and key.is_integer():
        return f"{path}[{int(key)}]"
    return f"{path}[{quote(key)}]"
