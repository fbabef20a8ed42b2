"""How each model record pickles in a ``.pt`` file: the reductions torch 2.13's ``Tensor.__reduce_ex__``
and ``torch.save``'s ``persistent_id`` give (spec/pt-zip.md#pt-zip-write-pickle).

Shared by the zip and the legacy writer; they differ only in the persistent id's shape and in how
storage keys are made.  The rebuild function of a dense tensor is chosen from the dtype table:
``_rebuild_tensor_v2`` over a typed storage where the dtype has a legacy storage class,
``_rebuild_tensor_v3`` over an ``UntypedStorage`` of bytes where it has none.
"""

from __future__ import annotations

import collections
import dataclasses
import math
from typing import Any

import numpy as np

from ..dtypes import DTYPES, DType
from ..model import (
    Global,
    KeyedObject,
    LuaFunction,
    LuaTable,
    MetaTensor,
    OpaqueObject,
    QuantizedTensor,
    SparseTensor,
    Storage,
    Tensor,
    TorchObject,
)
from ..pickle.rebuild import LAYOUTS
from .pickler import PicklingError, Reduce

UNTYPED = Global("torch.storage", "UntypedStorage")
_UTILS = "torch._utils"


def _utils(name: str) -> Global:
    return Global(_UTILS, name)


def storage_type(storage: Storage) -> tuple[Global, int]:
    """The storage type global a persistent id names and the ``numel`` it gives: the dtype's typed
    storage class and its element count, or ``UntypedStorage`` and the byte count
    (spec/pt-zip.md#pt-zip-storage-records)."""
    dtype = storage.dtype
    if dtype.storage_class is None:
        return UNTYPED, storage.numel * dtype.itemsize
    return Global("torch", dtype.storage_class), storage.numel


def storage_bytes(storage: Storage) -> memoryview:
    """The storage's elements as little-endian bytes (a view of the source where it is little-endian)."""
    arr = storage.array()
    if storage.numel == 0:
        return memoryview(b"")
    return memoryview(np.ascontiguousarray(arr[:storage.numel]).view(np.uint8))


class StorageKeys:
    """Storages in the order the pickle first names them; each distinct storage object gets one key."""

    def __init__(self) -> None:
        self.keys: dict[int, tuple[str, Storage]] = {}

    def key(self, storage: Storage) -> str:
        entry = self.keys.get(id(storage))
        if entry is None:
            entry = (str(len(self.keys)), storage)
            self.keys[id(storage)] = entry
        return entry[0]

    def storages(self) -> list[tuple[str, Storage]]:
        return list(self.keys.values())


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))


def dtype_of_numpy(dt: np.dtype) -> DType:
    """The first dtype of the table read as ``dt`` (uint8 before the bits and quantized types)."""
    le = dt.newbyteorder("<") if dt.byteorder == ">" else dt
    for d in DTYPES:
        if d.numpy == le:
            return d
    raise PicklingError(f"no torch dtype for numpy dtype {dt}")


def from_numpy(arr: np.ndarray) -> Tensor:
    """A contiguous tensor holding a copy of ``arr``'s elements in C order."""
    dtype = dtype_of_numpy(arr.dtype)
    data = np.ascontiguousarray(arr, dtype=dtype.numpy).reshape(-1)
    shape = tuple(int(n) for n in arr.shape)
    return Tensor(dtype, shape, contiguous_strides(shape), 0, Storage(dtype, data.size, data=data))


def torch_view(t: Tensor) -> Tensor:
    """A ``.t7`` tensor as torch sees a view: one with no dimensions holds no element in Lua Torch
    (spec/t7.md#t7-tensor), so it becomes a 1-d empty tensor; a tensor without a storage gets an
    empty one."""
    if t.lua and not t.shape:
        return dataclasses.replace(t, shape=(0,), stride=(1,), storage_offset=0,
                                   storage=t.storage or Storage(t.dtype, 0, t.device))
    if t.storage is None:
        return dataclasses.replace(t, storage=Storage(t.dtype, 0, t.device))
    return t


def _hooks() -> collections.OrderedDict[Any, Any]:
    return collections.OrderedDict()


def _metadata(t: Tensor) -> dict[str, bool]:
    """torch's ``get_tensor_metadata``: the lazy view bits that are set."""
    out = {}
    if t.conj:
        out["conj"] = True
    if t.neg:
        out["neg"] = True
    return out


def dense(t: Tensor, requires_grad: bool) -> Reduce:
    """``_rebuild_tensor_v2`` (typed storage) or ``_rebuild_tensor_v3`` (untyped, dtype named)."""
    t = torch_view(t)
    assert t.storage is not None
    args: tuple[Any, ...] = (t.storage, t.storage_offset, tuple(t.shape), tuple(t.stride), requires_grad,
                             _hooks())
    meta = _metadata(t)
    if t.dtype.storage_class is None:
        args += (Global("torch", t.dtype.name),)
    return Reduce(_utils("_rebuild_tensor_v3" if t.dtype.storage_class is None else "_rebuild_tensor_v2"),
                  args + ((meta,) if meta else ()))


def _quantized(t: QuantizedTensor) -> Reduce:
    scheme = Global("torch", t.qscheme)
    if t.scales is not None:  # torch writes every per-channel scheme as per_channel_affine
        params: tuple[Any, ...] = (Global("torch", "per_channel_affine"), t.scales, t.zero_points, t.axis)
    else:
        params = (scheme, t.scale, t.zero_point)
    return Reduce(_utils("_rebuild_qtensor"), (t.storage, t.storage_offset, tuple(t.shape), tuple(t.stride),
                                              params, t.requires_grad, _hooks()))


def _sparse(t: SparseTensor) -> Reduce:
    values = dataclasses.replace(t.values, requires_grad=t.requires_grad, parameter=False)
    if t.layout == "sparse_coo":
        data: tuple[Any, ...] = (t.indices, values, tuple(t.shape), bool(t.is_coalesced))
    else:
        data = (t.compressed_indices, t.plain_indices, values, tuple(t.shape))
    return Reduce(_utils("_rebuild_sparse_tensor"), (Global("torch", t.layout), data))


def _meta(t: MetaTensor, requires_grad: bool) -> Reduce:
    return Reduce(_utils("_rebuild_meta_tensor_no_storage"),
                  (Global("torch", t.dtype.name), tuple(t.shape), tuple(t.stride), requires_grad))


def global_reduce(g: Global) -> Reduce | None:
    """A torch layout pickles as ``torch.serialization._get_layout("torch.<name>")``; other globals
    (dtypes, qschemes) as themselves."""
    if g.module == "torch" and g.name in LAYOUTS:
        return Reduce(Global("torch.serialization", "_get_layout"), (f"torch.{g.name}",))
    return None


def reduce(obj: Any) -> Reduce:
    """The reduction of any value the pickler has no plain form for."""
    if isinstance(obj, np.ndarray):
        return dataclasses.replace(dense(from_numpy(obj), False), source=obj)
    if type(obj) is complex:
        return Reduce(Global("builtins", "complex"), (obj.real, obj.imag), source=obj)
    if isinstance(obj, (Tensor, MetaTensor)):
        return dataclasses.replace(_tensor(obj), source=obj)
    if isinstance(obj, SparseTensor):
        return dataclasses.replace(_sparse(obj), source=obj)
    if isinstance(obj, KeyedObject) or type(obj) is OpaqueObject:
        module, _, name = obj.class_name.rpartition(".")
        return Reduce(Global(module, name), tuple(obj.args), obj.state, source=obj)
    if isinstance(obj, (LuaTable, TorchObject, LuaFunction)):
        raise PicklingError(f"a Lua {type(obj).__name__} has no PyTorch form (torchfmt convert maps Lua "
                            "values to Python ones)")
    raise PicklingError(f"no pickle form for {type(obj).__name__}")


def _tensor(t: Tensor | MetaTensor) -> Reduce:
    """A tensor with torch's wrapping: Parameter, Python attributes (``_rebuild_from_type_v2``)."""
    base: Reduce
    if isinstance(t, QuantizedTensor):
        base = _quantized(t)
    elif isinstance(t, MetaTensor):
        base = _meta(t, False if t.parameter else t.requires_grad)
    else:
        base = dense(t, False if t.parameter else t.requires_grad)
    state = dict(t.attrs) or None
    if t.parameter:
        if state is None:
            return Reduce(_utils("_rebuild_parameter"), (base, t.requires_grad, _hooks()))
        return Reduce(_utils("_rebuild_parameter_with_state"), (base, t.requires_grad, _hooks(), state))
    if state is None:
        return base
    return Reduce(Global("torch._tensor", "_rebuild_from_type_v2"),
                  (base.func, Global("torch", "Tensor"), base.args, state))
