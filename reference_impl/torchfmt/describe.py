"""The canonical description: a pure function of the model (spec/canonical.md).

Two walks over the object tree: the first counts how often each shareable value is reached (the
second occurrence of a list, dict, table, tensor, ... makes it need an id), the second emits JSON.
Both walks visit a shareable value's children (:mod:`torchfmt.walk`) only on its first visit, and
immutable values (tuples included) on every visit, so the counts match what is written.  The budgets
are :mod:`torchfmt.limits`' (spec/canonical.md#canonical-node-budget).
"""

from __future__ import annotations

import collections
import hashlib
import math
from typing import TYPE_CHECKING, Any

from . import limits
from .errors import FormatError
from .limits import WALK_FRAMES
from .model import (
    Document,
    Global,
    LuaFunction,
    LuaTable,
    MetaTensor,
    OpaqueObject,
    QuantizedTensor,
    SparseTensor,
    Storage,
    Tensor,
    TorchObject,
    row_major,
)
from .recursion import recursion_limit
from .walk import SHAREABLE, children, json_text_size
from .windows import Record

if TYPE_CHECKING:  # numpy is imported only where bytes must be rearranged (issue 12: the command's start)
    from collections.abc import Iterator

    import numpy as np

DESCRIPTION_VERSION = 0
#: Values that hold nothing and are never shared: the count pass ticks them and moves on.
_LEAVES = frozenset({type(None), bool, int, float, str, bytes, bytearray, Global})
_TEXTS = frozenset({str, bytes, bytearray})
_HASH_CHUNK = 1 << 26


def sha256_of_array(arr: np.ndarray) -> str:
    """SHA-256 of ``arr``'s elements in row-major order, each as little-endian bytes
    (spec/canonical.md#canonical-hash)."""
    import numpy as np

    h = hashlib.sha256()
    if arr.size == 0:
        return h.hexdigest()
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.nbytes <= _HASH_CHUNK or arr.flags.c_contiguous:
        h.update(np.ascontiguousarray(arr).reshape(-1).view(np.uint8))
    else:
        for block in _row_major_blocks(arr):
            h.update(np.ascontiguousarray(block).reshape(-1).view(np.uint8))
    return h.hexdigest()


def _row_major_blocks(arr: np.ndarray) -> Iterator[np.ndarray]:
    """``arr``'s elements in row-major order as sub-arrays of about ``_HASH_CHUNK`` bytes (at least half
    of it but at a run's end): the first axis ``k`` whose trailing block fits is cut into slices, each
    index of the axes before it in turn.  An expanded view of 16.8M elements is four slices, not 16.8M
    rows (spec/canonical.md#canonical-hash)."""
    import numpy as np

    inner = arr.itemsize
    k = arr.ndim - 1
    while k > 0 and inner * arr.shape[k] <= _HASH_CHUNK:
        inner *= arr.shape[k]
        k -= 1
    step = max(1, _HASH_CHUNK // inner)
    for outer in np.ndindex(*arr.shape[:k]):
        sub = arr[outer]
        for i in range(0, sub.shape[0], step):
            yield sub[i:i + step]


def _file_bytes_sha256(storage: Storage, start: int, stop: int) -> str | None:
    """SHA-256 of bytes ``start:stop`` of a storage that is little-endian bytes of the file, hashed as they
    lie (its elements in order are those bytes, spec/canonical.md#canonical-hash); ``None`` where the
    elements must first go through numpy (converted, big-endian or absent bytes, a range the bytes do not
    hold), which :meth:`Storage.array` does."""
    if storage.data is not None or storage.buffer is None or storage.byte_order != "little" \
            or not 0 <= start <= stop <= storage.numel * storage.dtype.itemsize:
        return None
    buffer = storage.buffer
    with (buffer.view() if isinstance(buffer, Record) else memoryview(buffer)) as view:
        if view.format != "B" or not view.c_contiguous or view.nbytes < stop:
            return None
        with view[start:stop] as part:
            return hashlib.sha256(part).hexdigest()


def _storage_sha256(storage: Storage) -> str:
    """The hash of a storage's elements (spec/canonical.md#canonical-hash)."""
    digest = _file_bytes_sha256(storage, 0, storage.numel * storage.dtype.itemsize)
    return digest if digest is not None else sha256_of_array(storage.array())


def _tensor_sha256(t: Tensor) -> str:
    """The hash of a tensor's values: the bytes of its storage it covers where it is a row-major run of
    them, or the values :meth:`Tensor.numpy` gives."""
    storage = t.storage
    if type(t) is Tensor and storage is not None and not (t.conj or t.neg or t.dtype.per_byte != 1
                                                          or (t.lua and not t.shape) or 0 in t.shape) \
            and row_major(t.shape, t.stride):
        item = t.dtype.itemsize
        start = t.storage_offset * item
        digest = _file_bytes_sha256(storage, start, start + math.prod(t.shape) * item)
        if digest is not None:
            return digest
    return sha256_of_array(t.numpy())


def _whole_storage(t: Tensor) -> bool:
    """Whether a dense tensor's values are its storage's elements, all, in order: its hash is then the
    storage's (spec/canonical.md#canonical-hash), computed once."""
    storage = t.storage
    if type(t) is not Tensor or storage is None or t.conj or t.neg or t.dtype.per_byte != 1 \
            or t.storage_offset != 0 or (t.lua and not t.shape) or math.prod(t.shape) != storage.numel:
        return False
    return row_major(t.shape, t.stride)


def format_float(x: float) -> str:
    """A float as the contract writes it: shortest round-trip decimal, ``nan``, ``inf``, ``-inf``."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


class _Describer:
    def __init__(self) -> None:
        self.seen: collections.Counter[int] = collections.Counter()
        self.keep: list[Any] = []  # keeps counted objects alive so id() stays unique
        self.ids: dict[int, str] = {}
        self.storage_ids: dict[int, str] = {}
        self.storages: dict[str, dict[str, Any]] = {}
        self.nodes = 0
        self.text = 0
        self.texts: dict[int, int] = {}  # JSON bytes of each str, by id
        self.hexes: dict[int, str] = {}  # one hex string per bytes value, however often it is written
        self.view_bytes = 0  # bytes of the logical elements of the tensors met, each once (VIEW_FACTOR)
        self.storage_bytes = 0  # bytes of their storages, each once
        self.storage_ids_seen: set[int] = set()

    # -- pass 1: count references -------------------------------------------------------------
    def count(self, value: Any, text: bool = False) -> None:
        """Count the references to each shareable value, checking the node and view budgets; ``text``
        also counts the JSON text the str and bytes values will write (what pass 2 checks as it
        writes them), for :func:`check_limits`."""
        stack = [value]
        while stack:
            v = stack.pop()
            self._tick()
            if type(v) in _LEAVES:
                if text and type(v) in _TEXTS:
                    self._count_text(v)
                continue
            if isinstance(v, SHAREABLE):
                self.seen[id(v)] += 1
                if self.seen[id(v)] > 1:
                    continue
                self.keep.append(v)
                if isinstance(v, Tensor) and v.storage is not None:
                    self._count_view(v)
            stack.extend(children(v))

    def _count_view(self, t: Tensor) -> None:
        """Tensors hash their logical elements: together at most VIEW_FACTOR times their storages'
        bytes plus VIEW_BYTES (spec/canonical.md#canonical-node-budget), checked before any hash."""
        assert t.storage is not None
        self.view_bytes += 0 if t.lua and not t.shape else math.prod(t.shape) * t.dtype.itemsize
        if id(t.storage) not in self.storage_ids_seen:
            self.storage_ids_seen.add(id(t.storage))
            self.storage_bytes += t.storage.numel * t.storage.dtype.itemsize
        factor = limits.VIEW_FACTOR.value
        if self.view_bytes > factor * self.storage_bytes + limits.VIEW_BYTES.value:
            raise FormatError("limit-exceeded", None,
                              f"the tensors hold {self.view_bytes} bytes, more than {factor} times "
                              f"their storages' {self.storage_bytes} plus {limits.VIEW_BYTES.value}")

    # -- pass 2: emit ---------------------------------------------------------------------------
    def storage_id(self, s: Storage) -> str:
        """The storage's id, its entry written at its first reference (the caller releases its
        elements, :meth:`Storage.release`, once done with them)."""
        sid = self.storage_ids.get(id(s))
        if sid is None:
            sid = f"s{len(self.storage_ids)}"
            self.storage_ids[id(s)] = sid
            self.keep.append(s)
            self.storages[sid] = {
                "dtype": s.dtype.name,
                "numel": s.numel,
                "device": s.device,
                "sha256": _storage_sha256(s),
            }
        return sid

    def _tick(self) -> None:
        self.nodes += 1
        if self.nodes > limits.NODE_BUDGET.value:
            raise FormatError("limit-exceeded", None,
                              f"description would exceed {limits.NODE_BUDGET.value} nodes")

    def emit(self, v: Any) -> dict[str, Any]:
        t = type(v)
        if t is int:
            return {"type": "int", "value": str(v)}
        if t is float:
            return {"type": "float", "value": format_float(v)}
        if isinstance(v, SHAREABLE) and self.seen[id(v)] > 1:
            if id(v) in self.ids:
                return {"type": "ref", "id": self.ids[id(v)]}
            self.ids[id(v)] = f"o{len(self.ids)}"
            out = self._emit_value(v)
            out["id"] = self.ids[id(v)]
            return out
        return self._emit_value(v)

    def _items(self, pairs: Any) -> list[list[dict[str, Any]]]:
        return [[self.emit(k), self.emit(x)] for k, x in pairs]

    def _emit_value(self, v: Any) -> dict[str, Any]:
        if v is None:
            return {"type": "none"}
        if isinstance(v, bool):
            return {"type": "bool", "value": v}
        if isinstance(v, int):
            return {"type": "int", "value": str(v)}
        if isinstance(v, float):
            return {"type": "float", "value": format_float(v)}
        if isinstance(v, (str, bytes, bytearray)):
            self._count_text(v)
        if isinstance(v, str):
            return {"type": "str", "value": v}
        if isinstance(v, (bytes, bytearray)):
            hexed = self.hexes.get(id(v))
            if hexed is None:
                hexed = self.hexes[id(v)] = bytes(v).hex()
                self.keep.append(v)
            return {"type": "bytes", "hex": hexed}
        if isinstance(v, list):
            return {"type": "list", "items": [self.emit(x) for x in v]}
        if isinstance(v, tuple):
            return {"type": "tuple", "items": [self.emit(x) for x in v]}
        if isinstance(v, (set, frozenset)):
            return {"type": "set", "items": [self.emit(x) for x in v]}
        if isinstance(v, collections.OrderedDict):
            out: dict[str, Any] = {"type": "ordered_dict", "items": self._items(v.items())}
            if vars(v):
                out["attrs"] = {k: self.emit(x) for k, x in vars(v).items()}
            return out
        if isinstance(v, dict):
            return {"type": "dict", "items": self._items(v.items())}
        if isinstance(v, LuaTable):
            return {"type": "table", "items": self._items(v.items)}
        if isinstance(v, Tensor):
            return self._tensor(v)
        if isinstance(v, SparseTensor):
            return self._sparse(v)
        if isinstance(v, MetaTensor):
            return self._meta(v)
        if isinstance(v, Storage):
            sid = self.storage_id(v)
            v.release()
            return {"type": "storage", "storage": sid}
        if isinstance(v, TorchObject):
            return {"type": "torch_object", "class": v.class_name, "version": v.version,
                    "value": self.emit(v.value)}
        if isinstance(v, LuaFunction):
            return {"type": "function", "kind": v.kind,
                    "bytecode_sha256": hashlib.sha256(v.bytecode).hexdigest(),
                    "upvalues": [self.emit(x) for x in v.upvalues]}
        if isinstance(v, Global):
            return {"type": "global", "module": v.module, "name": v.name}
        if isinstance(v, OpaqueObject):
            return {"type": "object", "class": v.class_name, "args": [self.emit(x) for x in v.args],
                    "state": None if v.state is None else self.emit(v.state)}
        raise TypeError(f"no canonical form for {type(v).__name__}")

    def _count_text(self, v: str | bytes | bytearray) -> None:
        """Count the JSON bytes this occurrence writes (spec/canonical.md#canonical-node-budget)."""
        if isinstance(v, str) and len(v) < 256:  # cheaper to escape again than to cache
            n = json_text_size(v)
        elif isinstance(v, str):
            n = self.texts.get(id(v))
            if n is None:
                n = self.texts[id(v)] = json_text_size(v)
                self.keep.append(v)
        else:
            n = 2 * len(v) + 2
        self.text += n
        if self.text > limits.TEXT_BUDGET.value:
            raise FormatError("limit-exceeded", None,
                              f"description would exceed {limits.TEXT_BUDGET.value} bytes of JSON text")

    def _tensor(self, t: Tensor) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "quantized_tensor" if isinstance(t, QuantizedTensor) else "tensor",
            "dtype": t.dtype.name,
            "shape": list(t.shape),
            "stride": list(t.stride),
            "storage_offset": t.storage_offset,
            "storage": None if t.storage is None else self.storage_id(t.storage),
            "device": t.device,
            "requires_grad": t.requires_grad,
        }
        sid = out["storage"]
        out["sha256"] = (self.storages[sid]["sha256"] if sid is not None and _whole_storage(t)
                         else _tensor_sha256(t))
        if t.storage is not None:
            t.storage.release()
        if t.parameter:
            out["parameter"] = True
        if isinstance(t, QuantizedTensor):
            out["qscheme"] = t.qscheme
            if t.scales is None:
                out["scale"] = format_float(t.scale if t.scale is not None else math.nan)
                out["zero_point"] = t.zero_point
            else:
                out["scales"] = self.emit(t.scales)
                out["zero_points"] = self.emit(t.zero_points)
                out["axis"] = t.axis
        return out

    @staticmethod
    def _meta(t: MetaTensor) -> dict[str, Any]:
        """spec/canonical.md#canonical-meta: the geometry, no storage, offset, device or hash."""
        out: dict[str, Any] = {"type": "meta_tensor", "dtype": t.dtype.name, "shape": list(t.shape),
                               "stride": list(t.stride), "requires_grad": t.requires_grad}
        if t.parameter:
            out["parameter"] = True
        return out

    def _sparse(self, t: SparseTensor) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "sparse_tensor", "layout": t.layout, "dtype": t.dtype.name,
                               "shape": list(t.shape), "requires_grad": t.requires_grad}
        if t.layout == "sparse_coo":
            out["indices"] = self.emit(t.indices)
            out["values"] = self.emit(t.values)
            out["is_coalesced"] = bool(t.is_coalesced)
        else:
            out["compressed_indices"] = self.emit(t.compressed_indices)
            out["plain_indices"] = self.emit(t.plain_indices)
            out["values"] = self.emit(t.values)
        return out


def describe_document(doc: Document) -> dict[str, Any]:
    """The canonical description of a loaded :class:`Document` (spec/canonical.md#canonical-document)."""
    d = _Describer()
    for obj in doc.objects:
        d.count(obj)
    d.nodes = 0  # both walks visit the same nodes: the count pass has checked the budget
    with recursion_limit(WALK_FRAMES):
        objects = [d.emit(obj) for obj in doc.objects]
    out = {
        "description_version": DESCRIPTION_VERSION,
        "format": doc.format,
        "objects": objects,
        "storages": d.storages,
    }
    for name, note in doc.notes.items():
        out[f"_{name}"] = _note(note)
    return out


def check_limits(doc: Document) -> None:
    """Refuse, as :func:`describe_document` would, a document over the description's budgets (nodes,
    JSON text, view elements: spec/canonical.md#canonical-node-budget), without hashing anything: the
    check every tool makes of what it read, so that an input ``dump`` refuses is refused by all."""
    d = _Describer()
    for obj in doc.objects:
        d.count(obj, text=True)


def _note(note: Any) -> Any:
    """A note as JSON: a :class:`Document` inside it is described in turn (it carries no notes of its
    own worth keeping)."""
    if isinstance(note, Document):
        return describe_document(note)
    if isinstance(note, dict):
        return {k: _note(v) for k, v in note.items()}
    return note
