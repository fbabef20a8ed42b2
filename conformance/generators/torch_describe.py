"""Real PyTorch's view of a .pt file as a canonical description (spec/canonical.md).

Everything here comes from the objects torch itself loads: dtypes, shapes, strides, offsets and storage
identity from the tensors, hashes from the bytes torch holds.  This module never imports torchfmt (the
expected files it makes must not depend on the reader they judge) and works with torch 1.13 and 2.x.

The public entry points: :func:`detect_format`, :func:`load` (how a file may be loaded, strictest first),
:func:`describe` (a loaded object -> description) and :func:`describe_script_module` (TorchScript).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import math
import re
import sys
import tarfile
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from conformance.harness.facts import limit, walk_frames

DESCRIPTION_VERSION = 0
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
#: torch objects that pickle as a bare global (spec/canonical.md#canonical-pt-values).
_GLOBAL_TYPES = tuple(t for t in (torch.dtype, torch.layout, torch.qscheme,
                                  getattr(torch, "memory_format", None)) if t is not None)
_SPARSE_COMPONENTS = {
    "sparse_csr": ("crow_indices", "col_indices"),
    "sparse_bsr": ("crow_indices", "col_indices"),
    "sparse_csc": ("ccol_indices", "row_indices"),
    "sparse_bsc": ("ccol_indices", "row_indices"),
}


class Declined(Exception):
    """A loaded value that the description has no form for (spec/canonical.md#canonical-values)."""


#: spec/canonical.md#canonical-node-budget: a description holds at most this many VALUE nodes and this many
#: bytes of str/bytes text: the spec's table of limits (harness/facts.py; this module never imports torchfmt,
#: conformance/tests/test_torch_describe_budget.py checks they are the reader's).  What torch loads past them
#: has no description: the describer declines it as soon as it knows, instead of writing gigabytes for a
#: tuple or text bomb that torch loaded in a millisecond.
NODE_BUDGET = limit("NODE_BUDGET")
TEXT_BUDGET = limit("TEXT_BUDGET")


def _over_budget(what: str) -> str:
    return (f"description past the canonical budget: torch loaded the file, and its description needs {what} "
            "(spec/canonical.md#canonical-node-budget)")


# -- format and loading ----------------------------------------------------------------------------

def detect_format(path: str | Path) -> str:
    """The variant by its first bytes and, for zip, its records (spec/canonical.md#canonical-detect)."""
    with open(path, "rb") as f:
        head = f.read(512)
    if head.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
        except (zipfile.BadZipFile, OSError, NotImplementedError, ValueError, EOFError, RuntimeError):
            return "pt-zip"  # Python's zipfile cannot list it (a "version needed" it does not know...)
        if any(n.endswith("/constants.pkl") or n == "constants.pkl" for n in names):
            return "pt-torchscript"
        return "pt-zip"
    if len(head) > 262 and head[257:262] == b"ustar":
        return "pt-tar"
    if tarfile.is_tarfile(path):
        return "pt-tar"
    return "pt-legacy"


class Loaded:
    """A loaded object and the location string the file gave each storage (keyed by StorageImpl)."""

    def __init__(self, obj: Any, locations: dict[int, str], how: str, notes: list[str]) -> None:
        self.obj = obj
        self.locations = locations
        self.how = how
        self.notes = notes


def torch_load(path: str | Path, weights_only: bool) -> Loaded:
    """``torch.load(path, map_location=<keep on CPU, note the location>, weights_only=...)``, quietly.

    The map_location callable leaves each storage on the CPU where torch deserialized it and records
    the location string the file gave it, so ``cuda:0`` storages keep their device in the description.
    """
    locations: dict[int, str] = {}
    alive: list[Any] = []

    def keep_on_cpu(storage: Any, location: str) -> Any:
        alive.append(storage)
        locations[untyped_of_storage(storage)._cdata] = str(location)
        return storage

    rebuild_sparse = torch._utils._rebuild_sparse_tensor

    def rebuild_sparse_noting_new_parts(layout: Any, data: Any) -> Any:
        """torch's own function; a component it copies into a new storage (COO indices cast to int64, a
        component with a conjugate or negative bit resolved: made on the device of the file's component,
        tensors.md#tensors-sparse) keeps the location of the file's component."""
        result = rebuild_sparse(layout, data)
        alive.append(result)
        name = str(layout).removeprefix("torch.")
        if name == "sparse_coo":
            parts = [result._indices(), result._values()]
        elif name in _SPARSE_COMPONENTS:
            parts = [getattr(result, f)() for f in _SPARSE_COMPONENTS[name]] + [result.values()]
        else:
            parts = []
        for given_part, part in zip(data[:len(parts)], parts, strict=True):
            given = locations.get(untyped_of_tensor(given_part)._cdata)
            if given is not None:
                locations.setdefault(untyped_of_tensor(part)._cdata, given)
        return result

    with warnings.catch_warnings(), _sparse_rebuild_replaced(rebuild_sparse_noting_new_parts):
        warnings.simplefilter("ignore")
        try:
            obj = torch.load(str(path), map_location=keep_on_cpu, weights_only=weights_only)
            how = f"torch.load(map_location=<keep on cpu>, weights_only={weights_only})"
        except RuntimeError as e:
            # _rebuild_device_tensor_from_cpu_tensor refuses a callable: load as plain torch.load does
            if "Callable map_location not supported" not in str(e):
                raise
            locations.clear()
            obj = torch.load(str(path), weights_only=weights_only)
            how = f"torch.load(weights_only={weights_only}) (a callable map_location is refused)"
    return Loaded(obj, locations, how, [])


SPARSE_REBUILD = "torch._utils._rebuild_sparse_tensor"


@contextlib.contextmanager
def _sparse_rebuild_replaced(replacement: Any) -> Iterator[None]:
    """``torch._utils._rebuild_sparse_tensor`` replaced while the block loads, where each unpickler finds
    it: pickle (and torch 1.13's weights_only unpickler) by the module's attribute, torch 2.x's
    weights_only unpickler in its table of allowed globals, made once per process and cached."""
    original = torch._utils._rebuild_sparse_tensor
    allowed = getattr(sys.modules.get("torch._weights_only_unpickler"), "_get_allowed_globals", None)
    table = allowed() if hasattr(allowed, "cache_info") else None
    torch._utils._rebuild_sparse_tensor = replacement
    if table is not None and table.get(SPARSE_REBUILD) is original:
        table[SPARSE_REBUILD] = replacement
    try:
        yield
    finally:
        torch._utils._rebuild_sparse_tensor = original
        if table is not None and table.get(SPARSE_REBUILD) is replacement:
            table[SPARSE_REBUILD] = original


def load(path: str | Path, allow_unsafe: bool) -> Loaded:
    """Load with ``weights_only=True``; when that fails and ``allow_unsafe`` (trusted files only),
    with ``weights_only=False``, noting why."""
    try:
        return torch_load(path, True)
    except Exception as e:
        if not allow_unsafe:
            raise
        first = f"weights_only=True refused: {type(e).__name__}: {last_line(e)}"
    loaded = torch_load(path, False)
    loaded.notes.append(first)
    return loaded


def last_line(e: BaseException) -> str:
    """The most specific line of an exception message (torch wraps the cause in advice)."""
    text = str(e)
    m = _SPECIFIC.search(text)
    if m:
        return text[m.start():].splitlines()[0].strip()[:300]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[0] if lines else repr(e))[:300]


_SPECIFIC = re.compile(r"Unsupported (global|operand|class)|Trying to|Can only|Only persistent_load"
                       r"|persistent_load id|must be imported|Cannot use ``weights_only")


# -- bytes and hashes ------------------------------------------------------------------------------

def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def element_size(dtype: torch.dtype) -> int:
    """Bytes per element: ``dtype.itemsize`` (torch >= 2.1; ``torch._utils._element_size`` knows no bits
    dtype), else ``_element_size``."""
    itemsize = getattr(dtype, "itemsize", None)
    return int(itemsize) if itemsize is not None else torch._utils._element_size(dtype)


def untyped_of_tensor(t: torch.Tensor) -> Any:
    """The tensor's untyped storage (torch >= 2.0 ``untyped_storage``, 1.13 ``storage()._storage``)."""
    if hasattr(t, "untyped_storage"):
        return t.untyped_storage()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return t.storage()._storage


def untyped_of_storage(s: Any) -> Any:
    """The untyped storage behind a typed or untyped storage object."""
    if isinstance(s, torch.storage.TypedStorage):
        return s._untyped_storage if hasattr(s, "_untyped_storage") else s._storage
    return s


def storage_bytes(u: Any) -> bytes:
    """The bytes of an untyped CPU storage, as torch holds them (little-endian on this host)."""
    if u.nbytes() == 0:
        return b""
    view = torch.empty(0, dtype=torch.uint8).set_(u)
    return view.numpy().tobytes()


def tensor_sha256(t: torch.Tensor) -> str:
    """Hash of the logical elements in row-major order as torch presents them
    (spec/canonical.md#canonical-hash): conj/neg bits applied, quantized tensors as ``int_repr()``."""
    if t.is_quantized:
        t = t.int_repr()
    if t.numel() == 0:
        return EMPTY_SHA256
    if t.is_complex() and t.is_conj():
        t = t.resolve_conj()
    if hasattr(t, "is_neg") and t.is_neg():
        t = t.resolve_neg()
    # contiguous() keeps the stride of a size-1 dimension, which view(uint8) then refuses: copy instead
    flat = t.clone(memory_format=torch.contiguous_format).reshape(-1)
    if flat.dtype != torch.uint8:
        flat = flat.view(torch.uint8)
    return hashlib.sha256(flat.numpy().tobytes()).hexdigest()


def format_float(x: float) -> str:
    """spec/canonical.md#canonical-float: shortest round-trip decimal, ``nan``, ``inf``, ``-inf``."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


# -- the walk --------------------------------------------------------------------------------------

class ScriptObject:
    """A TorchScript module as its archive's data.pkl holds it: class, no args, attribute state."""

    def __init__(self, class_name: str, state: dict[str, Any]) -> None:
        self.class_name = class_name
        self.state = state


def _is_shareable(v: Any) -> bool:
    """spec/canonical.md#canonical-sharing: mutable containers, tensors and objects."""
    return isinstance(v, (list, set, dict, torch.Tensor, torch.Size, torch.device, complex, ScriptObject))


class Describer:
    """Two walks: count how often each shareable value is reached, then emit the description."""

    def __init__(self, locations: dict[int, str] | None = None) -> None:
        self.locations = locations or {}
        self.count: collections.Counter[int] = collections.Counter()
        self.keep: list[Any] = []
        self.ids: dict[int, str] = {}
        self.storage_ids: dict[int, str] = {}
        self.storages: dict[str, dict[str, Any]] = {}
        #: the dtype of the dense tensors viewing each untyped storage (by ``_cdata``): a bare untyped
        #: storage beside such a view is that storage (spec/tensors.md#tensors-untyped-storage)
        self.view_dtypes: dict[int, torch.dtype] = {}
        self.nodes = 0  # VALUE nodes emitted
        self.text = 0  # bytes of JSON text their str and bytes values write
        self.text_sizes: dict[int, int] = {}  # by id: a text bomb fetches one str again and again

    # pass 1
    def walk(self, root: Any) -> None:
        """Every value as the description reaches it (immutable ones at each occurrence); each visit is one
        node of the description, so more visits than NODE_BUDGET decline it (a tuple bomb ends here)."""
        stack = [root]
        visits = 0
        while stack:
            v = stack.pop()
            visits += 1
            if visits > NODE_BUDGET:
                raise Declined(_over_budget(f"more than {NODE_BUDGET} nodes"))
            if (isinstance(v, torch.Tensor) and v.layout == torch.strided and v.device.type != "meta"
                    and not v.is_quantized):
                self.view_dtypes.setdefault(untyped_of_tensor(v)._cdata, v.dtype)
            if _is_shareable(v):
                self.count[id(v)] += 1
                self.keep.append(v)
                if self.count[id(v)] > 1:
                    continue
            stack.extend(self._children(v))

    @staticmethod
    def _children(v: Any) -> list[Any]:
        if isinstance(v, torch.Size):
            return []
        if isinstance(v, (list, tuple, set, frozenset)):
            return list(v)
        if isinstance(v, dict):
            out = [x for kv in v.items() for x in kv]
            if isinstance(v, collections.OrderedDict):
                out.extend(vars(v).values())
            return out
        if isinstance(v, ScriptObject):
            return list(v.state.values())
        return []

    # pass 2
    def emit(self, v: Any) -> dict[str, Any]:
        """One node of the description, counted against NODE_BUDGET and, for text, TEXT_BUDGET."""
        self.nodes += 1
        if self.nodes > NODE_BUDGET:
            raise Declined(_over_budget(f"more than {NODE_BUDGET} nodes"))
        if isinstance(v, (str, bytes, bytearray)):
            self.text += self._text_size(v)
            if self.text > TEXT_BUDGET:
                raise Declined(_over_budget(f"more than {TEXT_BUDGET} bytes of text"))
        if _is_shareable(v) and self.count[id(v)] > 1:
            if id(v) in self.ids:
                return {"type": "ref", "id": self.ids[id(v)]}
            self.ids[id(v)] = f"o{len(self.ids)}"
            out = self._value(v)
            out["id"] = self.ids[id(v)]
            return out
        return self._value(v)

    def _text_size(self, v: str | bytes | bytearray) -> int:
        """Bytes ``v`` writes as JSON text, quotes included, ASCII escapes (walk.json_text_size's rule)."""
        size = self.text_sizes.get(id(v))
        if size is None:
            size = 2 * len(v) + 2 if isinstance(v, (bytes, bytearray)) else len(json.dumps(v))
            self.text_sizes[id(v)] = size
            self.keep.append(v)
        return size

    def _items(self, pairs: Any) -> list[list[dict[str, Any]]]:
        return [[self.emit(k), self.emit(x)] for k, x in pairs]

    def _value(self, v: Any) -> dict[str, Any]:
        if v is None:
            return {"type": "none"}
        if isinstance(v, bool):
            return {"type": "bool", "value": v}
        if isinstance(v, int):
            return {"type": "int", "value": str(int(v))}
        if isinstance(v, float):
            return {"type": "float", "value": format_float(v)}
        if isinstance(v, str):
            return {"type": "str", "value": v}
        if isinstance(v, (bytes, bytearray)):
            return {"type": "bytes", "hex": bytes(v).hex()}
        if isinstance(v, torch.Size):
            return self._object("torch.Size", v)
        if isinstance(v, tuple):
            return {"type": "tuple", "items": [self.emit(x) for x in v]}
        if isinstance(v, list):
            return {"type": "list", "items": [self.emit(x) for x in v]}
        if isinstance(v, (set, frozenset)):
            return {"type": "set", "items": [self.emit(x) for x in v]}
        if isinstance(v, collections.OrderedDict):
            out: dict[str, Any] = {"type": "ordered_dict", "items": self._items(v.items())}
            if vars(v):
                out["attrs"] = {k: self.emit(x) for k, x in vars(v).items()}
            return out
        if isinstance(v, dict):
            return {"type": "dict", "items": self._items(v.items())}
        if isinstance(v, torch.Tensor):
            return self._tensor(v)
        if isinstance(v, (torch.storage.TypedStorage, torch.UntypedStorage)):
            return {"type": "storage", "storage": self.storage_id_of_storage(v)}
        if isinstance(v, _GLOBAL_TYPES):
            return {"type": "global", "module": "torch", "name": str(v).removeprefix("torch.")}
        if isinstance(v, torch.device):
            return self._object("torch.device", v)
        if isinstance(v, complex):  # pickled as NEWOBJ(complex, (real, imag))
            return {"type": "object", "class": "builtins.complex",
                    "args": [self.emit(v.real), self.emit(v.imag)], "state": None}
        if isinstance(v, ScriptObject):
            self.nodes += 1  # the state dict, a node the walk does not reach as a value
            state = {"type": "dict", "items": self._items(v.state.items())}
            return {"type": "object", "class": v.class_name, "args": [], "state": state}
        if type(v).__name__ == "StorageType":  # a bare storage class, as torch's unpickler loads one
            name = torch.storage._dtype_to_storage_type_map()[v.dtype]
            return {"type": "global", "module": "torch", "name": name}
        if isinstance(v, type) or callable(v):  # a bare allowed global: the class or function itself
            return {"type": "global", "module": v.__module__, "name": v.__qualname__}
        raise Declined(f"no canonical form for a loaded {type(v).__module__}.{type(v).__qualname__}")

    def _object(self, class_name: str, v: Any) -> dict[str, Any]:
        """A reduction the spec keeps opaque: ``args`` are what the object's own ``__reduce__`` passes."""
        _, args = v.__reduce__()[:2]
        return {"type": "object", "class": class_name, "args": [self.emit(a) for a in args], "state": None}

    # storages
    def _storage_record(self, key: int, u: Any, dtype: torch.dtype) -> str:
        sid = self.storage_ids.get(key)
        if sid is not None:
            if self.storages[sid]["dtype"] != dtype_name(dtype):
                raise Declined("one storage viewed as two dtypes")
            return sid
        sid = f"s{len(self.storage_ids)}"
        self.storage_ids[key] = sid
        self.keep.append(u)
        if u.device.type == "meta":
            raise Declined("a storage on the meta device (no version-0 form)")
        raw = storage_bytes(u)
        self.storages[sid] = {
            "dtype": dtype_name(dtype),
            "numel": u.nbytes() // element_size(dtype),
            "device": self.locations.get(key, str(u.device)),
            "sha256": hashlib.sha256(raw).hexdigest(),
        }
        return sid

    def storage_id_of_tensor(self, t: torch.Tensor) -> str:
        u = untyped_of_tensor(t)
        return self._storage_record(u._cdata, u, t.dtype)

    def storage_id_of_storage(self, s: Any) -> str:
        u = untyped_of_storage(s)
        dtype = s.dtype if isinstance(s, torch.storage.TypedStorage) else torch.uint8
        if dtype == torch.uint8:  # an untyped storage's bytes, which a tensor may view with its dtype
            dtype = self.view_dtypes.get(u._cdata, dtype)
        return self._storage_record(u._cdata, u, dtype)

    # tensors
    def _tensor(self, t: torch.Tensor) -> dict[str, Any]:
        if t.device.type == "meta":
            return self._meta(t)
        if getattr(t, "is_nested", False):
            raise Declined("nested tensor (no version-0 form)")
        if t.layout != torch.strided:
            return self._sparse(t)
        if type(t) not in (torch.Tensor, torch.nn.Parameter):
            raise Declined(f"tensor subclass {type(t).__qualname__}")
        out: dict[str, Any] = {
            "type": "quantized_tensor" if t.is_quantized else "tensor",
            "dtype": dtype_name(t.dtype),
            "shape": list(t.shape),
            "stride": list(t.stride()),
            "storage_offset": t.storage_offset(),
            "storage": (sid := self.storage_id_of_tensor(t)),
            "device": self.storages[sid]["device"],
            "requires_grad": bool(t.requires_grad),
            "sha256": tensor_sha256(t),
        }
        if isinstance(t, torch.nn.Parameter):
            out["parameter"] = True
        if t.is_quantized:
            scheme = str(t.qscheme()).removeprefix("torch.")
            out["qscheme"] = scheme
            if scheme.startswith("per_tensor"):
                out["scale"] = format_float(t.q_scale())
                out["zero_point"] = int(t.q_zero_point())
            else:
                out["scales"] = self.emit(t.q_per_channel_scales())
                out["zero_points"] = self.emit(t.q_per_channel_zero_points())
                out["axis"] = int(t.q_per_channel_axis())
        attrs = {k: x for k, x in vars(t).items()} if hasattr(t, "__dict__") else {}
        if attrs:
            out["_attrs"] = {k: repr(x)[:200] for k, x in attrs.items()}
        return out

    def _meta(self, t: torch.Tensor) -> dict[str, Any]:
        """A tensor on the meta device: what torch knows of it without storage
        (spec/canonical.md#canonical-meta)."""
        if type(t) not in (torch.Tensor, torch.nn.Parameter):
            raise Declined(f"meta tensor subclass {type(t).__qualname__}")
        if t.layout != torch.strided or t.is_quantized:
            raise Declined(f"meta tensor of layout {t.layout}" + (" (quantized)" if t.is_quantized else ""))
        out: dict[str, Any] = {"type": "meta_tensor", "dtype": dtype_name(t.dtype), "shape": list(t.shape),
                               "stride": list(t.stride()), "requires_grad": bool(t.requires_grad)}
        if isinstance(t, torch.nn.Parameter):
            out["parameter"] = True
        return out

    def _sparse(self, t: torch.Tensor) -> dict[str, Any]:
        layout = str(t.layout).removeprefix("torch.")
        out: dict[str, Any] = {"type": "sparse_tensor", "layout": layout, "dtype": dtype_name(t.dtype),
                               "shape": list(t.shape), "requires_grad": bool(t.requires_grad)}
        if layout == "sparse_coo":
            out["indices"] = self.emit(t._indices())
            out["values"] = self.emit(t._values())
            out["is_coalesced"] = bool(t.is_coalesced())
        elif layout in _SPARSE_COMPONENTS:
            compressed, plain = _SPARSE_COMPONENTS[layout]
            out["compressed_indices"] = self.emit(getattr(t, compressed)())
            out["plain_indices"] = self.emit(getattr(t, plain)())
            out["values"] = self.emit(t.values())
        else:
            raise Declined(f"tensor layout {layout}")
        return out


def describe(obj: Any, fmt: str, notes: dict[str, Any] | None = None,
             locations: dict[int, str] | None = None) -> dict[str, Any]:
    """The canonical description of one loaded top-level object (spec/canonical.md#canonical-document).

    ``locations`` maps StorageImpl addresses to the file's location strings (see :func:`torch_load`).
    Raises :class:`Declined` for a value the description has no form for."""
    d = Describer(locations)
    # Raised for good, never put back: the limit is one per process, and a save-and-restore here, in a
    # thread beside torchfmt.recursion's blocks (the suite's), would put back a limit raised by them.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), walk_frames()))
    d.walk(obj)
    objects = [d.emit(obj)]
    doc: dict[str, Any] = {"description_version": DESCRIPTION_VERSION, "format": fmt,
                           "objects": objects, "storages": d.storages}
    doc.update(notes or {})
    return doc


# -- TorchScript -----------------------------------------------------------------------------------

def script_object(module: Any) -> ScriptObject:
    """A loaded ScriptModule as data.pkl pickles it: ``__torch__`` class, attributes in slot order."""
    c = getattr(module, "_c", module)
    attrs = torch._C._jit_debug_module_iterators(c)["named_attributes"]
    state: dict[str, Any] = {}
    for name, value in attrs:
        if isinstance(value, torch._C.ScriptModule):
            value = script_object(value)
        elif isinstance(value, torch._C.ScriptObject):
            raise Declined(f"TorchScript object attribute {name}")
        state[name] = value
    return ScriptObject(c.qualified_name, state)


def describe_script_module(module: Any, notes: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``torch.jit.load``-ed module described like its archive's data.pkl
    (spec/torchscript.md#torchscript-records)."""
    return describe(script_object(module), "pt-torchscript", notes)
