"""Values -> the canonical description (spec/canonical.md): hashes (#canonical-hash), float literals
(#canonical-float), sharing (#canonical-sharing) and the budgets (#canonical-node-budget).

Two walks: the first counts how often each shareable value is reached (visiting its children only the
first time, immutable values every time, so that it meets exactly the nodes the second writes) and
enforces the budgets before anything is written; the second writes JSON.
"""

from __future__ import annotations

import collections
import hashlib
import json
import math
from typing import Any

import numpy as np

from .facts import limits
from .failure import Reject
from .values import (
    Global,
    LuaFunction,
    LuaTable,
    MetaTensor,
    ODict,
    Opaque,
    QuantizedTensor,
    SparseTensor,
    Storage,
    Tensor,
    TorchObject,
)

#: spec/canonical.md's reader-limits table (#canonical-node-budget, spec/pickle.md#pickle-nesting).
LIMITS = limits()
NODE_BUDGET = LIMITS["NODE_BUDGET"]
TEXT_BUDGET = LIMITS["TEXT_BUDGET"]
MAX_DEPTH = LIMITS["VALUE_DEPTH"]
#: A view may present more elements than its storage holds (stride 0, overlaps) up to this many bytes.
MAX_EXPANDED = LIMITS["VIEW_BYTES"]
#: The tensors of a description hold at most this many times their storages' bytes, plus MAX_EXPANDED.
VIEW_FACTOR = LIMITS["VIEW_FACTOR"]
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()

_SHAREABLE = (list, dict, set, LuaTable, TorchObject, LuaFunction, Opaque, Tensor, SparseTensor, MetaTensor)


def format_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


def _apply_bits(t: Tensor, block: np.ndarray) -> np.ndarray:
    """The values torch presents for a conjugate or negative view (spec/canonical.md#canonical-hash)."""
    name = t.dtype.name
    if name in ("float16", "complex32"):  # sign-quiet: a flipped signaling NaN comes out quiet
        bits = block.reshape(*block.shape[:-1], -1, 2).view("<u2")[..., 0].copy()
        flip = np.zeros(bits.shape, bool)
        if t.neg:
            flip[...] = True
        if t.conj:
            flip[..., -1] = ~flip[..., -1]
        bits = np.where(flip, bits ^ 0x8000, bits)
        nan = flip & ((bits & 0x7C00) == 0x7C00) & ((bits & 0x03FF) != 0)
        bits = np.where(nan, bits | 0x0200, bits).astype("<u2")
        return bits.view(np.uint8).reshape(block.shape)
    values = block.view(t.dtype.numpy)[..., 0].copy()
    if t.neg:
        values = -values
    if t.conj and values.dtype.kind == "c":
        values = np.conj(values)
    return values.astype(values.dtype.newbyteorder("<")).view(np.uint8).reshape(block.shape)


def tensor_sha256(t: Tensor) -> str:
    """The hash of a tensor's logical elements in row-major order."""
    if t.numel == 0 or t.storage is None:
        return EMPTY_SHA256
    if t.dtype.per_byte > 1:  # packed, contiguous: the bytes that hold the elements, as int_repr() gives
        nbytes = -(-t.numel // t.dtype.per_byte)
        packed = t.storage.array()[t.storage_offset:t.storage_offset + nbytes]
        return hashlib.sha256(np.ascontiguousarray(packed)).hexdigest()
    h = hashlib.sha256()
    for block in presented_blocks(t):
        h.update(block)
    return h.hexdigest()


def presented_blocks(t: Tensor) -> Any:
    """A strided tensor's logical elements in row-major order, in blocks of bytes, as torch presents them
    (a conjugate or negative bit applied)."""
    if t.numel > t.storage.numel and t.numel * t.dtype.itemsize > MAX_EXPANDED:
        raise Reject("limit-exceeded", f"a view of {t.numel} elements over a storage of {t.storage.numel}")
    elems = t.storage.array()  # (numel, itemsize)
    width = t.dtype.itemsize
    base = elems[t.storage_offset:]
    dims = [(n, s) for n, s in zip(t.shape, t.stride, strict=True) if n != 1]  # numpy: at most 64 dims
    view = np.lib.stride_tricks.as_strided(
        base, shape=(*(n for n, _ in dims), width), strides=(*(s * width for _, s in dims), 1),
        writeable=False)
    rows = view.reshape(1, *view.shape) if view.ndim == 1 else view
    step = max(1, (1 << 24) // max(1, t.numel // max(1, rows.shape[0]) * width))
    for i in range(0, rows.shape[0], step):
        block = np.ascontiguousarray(rows[i:i + step])
        yield _apply_bits(t, block) if t.conj or t.neg else block


def storage_sha256(s: Storage) -> str:
    h = hashlib.sha256()
    elems = s.array()
    for i in range(0, len(elems), 1 << 24):  # the array is a view of the file where it can be
        h.update(np.ascontiguousarray(elems[i:i + (1 << 24)]))
    return h.hexdigest()


class Describer:
    def __init__(self) -> None:
        self.seen: collections.Counter[int] = collections.Counter()
        self.alive: list[Any] = []
        self.ids: dict[int, str] = {}
        self.storage_ids: dict[int, str] = {}
        self.storages: dict[str, dict[str, Any]] = {}
        self.nodes = 0
        self.text = 0
        self.text_sizes: dict[int, tuple[Any, int]] = {}
        self.view_elements = 0  # logical elements of the tensors, each tensor once
        self.storage_elements = 0  # elements of their storages, each storage once
        self.counted_storages: set[int] = set()

    # -- the counting walk --------------------------------------------------------------------------
    def count(self, root: Any, depth_limit: int | None = MAX_DEPTH) -> None:
        """Count the nodes, text and tensor elements the description of ``root`` will write, in
        document order, and check them against the budgets before anything is written or hashed
        (spec/canonical.md#canonical-node-budget); and the nesting, where each value is first written
        in full (spec/pickle.md#pickle-nesting; None: the caller checked it)."""
        stack = [(root, 1)]
        while stack:
            v, depth = stack.pop()
            self.nodes += 1
            if self.nodes > NODE_BUDGET:
                raise Reject("limit-exceeded", f"the description would hold more than {NODE_BUDGET} values")
            if isinstance(v, (str, bytes, bytearray)):
                self.text += self._text_size(v)
                if self.text > TEXT_BUDGET:
                    raise Reject("limit-exceeded", f"the description would write more than {TEXT_BUDGET} "
                                                   "bytes of JSON text for its str and bytes values")
            if isinstance(v, _SHAREABLE):
                self.seen[id(v)] += 1
                if self.seen[id(v)] > 1:
                    continue
                self.alive.append(v)
                if isinstance(v, Tensor):
                    self._count_view(v)
            if depth_limit is not None and depth > depth_limit:
                raise Reject("limit-exceeded", f"values nest deeper than {depth_limit}")
            stack.extend((c, depth + 1) for c in reversed(_children(v)))

    def _text_size(self, v: Any) -> int:
        """The bytes of the JSON string a str or bytes value writes, quotes and escapes included, in
        ASCII JSON (a code point outside ASCII is a 6-byte escape, outside the BMP two)."""
        known = self.text_sizes.get(id(v))
        if known is not None and known[0] is v:
            return known[1]
        n = len(json.dumps(v)) if isinstance(v, str) else 2 * len(v) + 2
        self.text_sizes[id(v)] = (v, n)
        return n

    def _count_view(self, t: Tensor) -> None:
        """Each tensor hashes its logical elements: together at most VIEW_FACTOR times their storages'
        bytes plus VIEW_BYTES (spec/canonical.md#canonical-node-budget), checked before any hash."""
        if t.storage is None:
            return
        self.view_elements += t.numel * t.dtype.itemsize
        if id(t.storage) not in self.counted_storages:
            self.counted_storages.add(id(t.storage))
            self.storage_elements += t.storage.numel * t.storage.dtype.itemsize
        if self.view_elements > VIEW_FACTOR * self.storage_elements + MAX_EXPANDED:
            raise Reject("limit-exceeded", f"the tensors hold {self.view_elements} bytes, more than "
                                           f"{VIEW_FACTOR} times their storages' {self.storage_elements} "
                                           f"plus {MAX_EXPANDED}")

    # -- the writing walk ---------------------------------------------------------------------------
    def emit(self, v: Any, depth: int = 0) -> dict[str, Any]:
        if isinstance(v, _SHAREABLE) and self.seen[id(v)] > 1:
            known = self.ids.get(id(v))
            if known is not None:
                return {"type": "ref", "id": known}
            self.ids[id(v)] = f"o{len(self.ids)}"
            out = self._value(v, depth + 1)
            out["id"] = self.ids[id(v)]
            return out
        return self._value(v, depth + 1)

    def _pairs(self, pairs: Any, depth: int) -> list[list[dict[str, Any]]]:
        return [[self.emit(k, depth), self.emit(x, depth)] for k, x in pairs]

    def _value(self, v: Any, depth: int) -> dict[str, Any]:
        if v is None:
            return {"type": "none"}
        if isinstance(v, bool):
            return {"type": "bool", "value": v}
        if isinstance(v, int):
            return {"type": "int", "value": str(v)}
        if isinstance(v, float):
            return {"type": "float", "value": format_float(v)}
        if isinstance(v, str):
            return {"type": "str", "value": v}
        if isinstance(v, (bytes, bytearray)):
            return {"type": "bytes", "hex": bytes(v).hex()}
        if isinstance(v, list):
            return {"type": "list", "items": [self.emit(x, depth) for x in v]}
        if isinstance(v, tuple):
            return {"type": "tuple", "items": [self.emit(x, depth) for x in v]}
        if isinstance(v, (set, frozenset)):
            return {"type": "set", "items": [self.emit(x, depth) for x in v]}
        if isinstance(v, ODict):
            out: dict[str, Any] = {"type": "ordered_dict", "items": self._pairs(v.items(), depth)}
            if v.attrs:
                out["attrs"] = {k: self.emit(x, depth) for k, x in v.attrs.items()}
            return out
        if isinstance(v, dict):
            return {"type": "dict", "items": self._pairs(v.items(), depth)}
        if isinstance(v, LuaTable):
            return {"type": "table", "items": self._pairs(v.items, depth)}
        if isinstance(v, Tensor):
            return self._tensor(v, depth)
        if isinstance(v, MetaTensor):
            out = {"type": "meta_tensor", "dtype": v.dtype.name, "shape": list(v.shape),
                   "stride": list(v.stride), "requires_grad": v.requires_grad}
            if v.parameter:
                out["parameter"] = True
            return out
        if isinstance(v, SparseTensor):
            out = {"type": "sparse_tensor", "layout": v.layout, "dtype": v.dtype.name,
                   "shape": list(v.shape), "requires_grad": v.requires_grad}
            for name, part in v.parts.items():
                out[name] = self.emit(part, depth)
            if v.layout == "sparse_coo":
                out["is_coalesced"] = bool(v.is_coalesced)
            return out
        if isinstance(v, Storage):
            return {"type": "storage", "storage": self.storage_id(v)}
        if isinstance(v, TorchObject):
            return {"type": "torch_object", "class": v.class_name, "version": v.version,
                    "value": self.emit(v.value, depth)}
        if isinstance(v, LuaFunction):
            return {"type": "function", "kind": v.kind,
                    "bytecode_sha256": hashlib.sha256(v.bytecode).hexdigest(),
                    "upvalues": [self.emit(x, depth) for x in v.upvalues]}
        if isinstance(v, Global):
            return {"type": "global", "module": v.module, "name": v.name}
        if isinstance(v, Opaque):
            return {"type": "object", "class": v.class_name, "args": [self.emit(x, depth) for x in v.args],
                    "state": None if v.state is None else self.emit(v.state, depth)}
        raise TypeError(f"no canonical form for {type(v).__name__}")

    def storage_id(self, s: Storage) -> str:
        sid = self.storage_ids.get(id(s))
        if sid is None:
            sid = self.storage_ids[id(s)] = f"s{len(self.storage_ids)}"
            self.alive.append(s)
            self.storages[sid] = {"dtype": s.dtype.name, "numel": s.numel, "device": s.device,
                                  "sha256": storage_sha256(s)}
        return sid

    def _tensor(self, t: Tensor, depth: int) -> dict[str, Any]:
        q = isinstance(t, QuantizedTensor)
        out: dict[str, Any] = {
            "type": "quantized_tensor" if q else "tensor", "dtype": t.dtype.name, "shape": list(t.shape),
            "stride": list(t.stride), "storage_offset": t.storage_offset,
            "storage": None if t.storage is None else self.storage_id(t.storage),
            "device": t.device, "requires_grad": t.requires_grad, "sha256": tensor_sha256(t),
        }
        if t.parameter:
            out["parameter"] = True
        if q:
            out["qscheme"] = t.qscheme
            if t.scales is None:
                out["scale"] = format_float(float(t.scale if t.scale is not None else math.nan))
                out["zero_point"] = t.zero_point
            else:
                out["scales"] = self.emit(t.scales, depth)
                out["zero_points"] = self.emit(t.zero_points, depth)
                out["axis"] = t.axis
        return out


def _children(v: Any) -> list[Any]:
    if isinstance(v, (list, tuple, set, frozenset)):
        return list(v)
    if isinstance(v, dict):
        out = [x for kv in v.items() for x in kv]
        if isinstance(v, ODict):
            out.extend(v.attrs.values())
        return out
    if isinstance(v, LuaTable):
        return [x for kv in v.items for x in kv]
    if isinstance(v, TorchObject):
        return [v.value]
    if isinstance(v, LuaFunction):
        return list(v.upvalues)
    if isinstance(v, Opaque):
        return v.args if v.state is None else [*v.args, v.state]
    if isinstance(v, QuantizedTensor):
        return [t for t in (v.scales, v.zero_points) if t is not None]
    if isinstance(v, SparseTensor):
        return list(v.parts.values())
    return []


def describe(fmt: str, objects: list[Any], depth_limit: int | None = MAX_DEPTH) -> dict[str, Any]:
    """The description of a file of variant ``fmt`` holding ``objects``
    (spec/canonical.md#canonical-document); ``depth_limit`` bounds each object's nesting (None: the
    caller measured it, as .t7 streams are, spec/t7.md#t7-limits)."""
    d = Describer()
    for obj in objects:
        d.count(obj, depth_limit)
    out = [d.emit(obj) for obj in objects]
    return {"description_version": 0, "format": fmt, "objects": out, "storages": d.storages}
