"""The inert values this reader builds (spec/canonical.md#canonical-values).

Pickled containers stay Python values (``dict``, ``list``, ``tuple``, ``set``, ``frozenset``, and
:class:`ODict` for ``collections.OrderedDict``); everything else is one of the records below.  Records
that the description shares by identity (tensors, tables, objects) compare by identity.
"""

from __future__ import annotations

import collections
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .facts import DType


@dataclass(eq=False)
class Storage:
    """``numel`` elements of ``dtype`` on ``device``.  ``raw`` holds them as the file stores them:
    ``stored_width`` bytes each (a .t7 Long written with 4-byte longs is narrower than int64) in
    ``byte_order``; ``array`` gives the canonical little-endian bytes (spec/canonical.md#canonical-hash)."""

    dtype: DType
    numel: int
    device: str
    raw: Any = None  # bytes-like, or a numpy array already in canonical form
    byte_order: str = "little"
    stored_width: int | None = None
    typed: bool = True  # False for a torch.UntypedStorage, whose bytes a _rebuild_tensor_v3 may retype
    retyped: bool = False  # an untyped storage a _rebuild_tensor_v3 gave another dtype than uint8

    def array(self) -> np.ndarray:
        """The elements as a ``(numel, itemsize)`` uint8 array of little-endian bytes."""
        width = self.dtype.itemsize
        if self.numel == 0:
            return np.zeros((0, width), np.uint8)
        if isinstance(self.raw, np.ndarray):
            return self.raw.reshape(self.numel, width)
        stored = self.stored_width or width
        flat = np.frombuffer(self.raw, np.uint8, count=self.numel * stored)
        if stored != width:  # a narrower signed integer (t7 long4): sign-extend
            ints = flat.view(np.dtype(f"{'>' if self.byte_order == 'big' else '<'}i{stored}"))
            return ints.astype(f"<i{width}").view(np.uint8).reshape(self.numel, width)
        if self.byte_order == "big" and self.dtype.swap_unit > 1:
            unit = self.dtype.swap_unit
            flat = flat.reshape(-1, unit)[:, ::-1].reshape(-1)
        return flat.reshape(self.numel, width)


@dataclass(eq=False)
class Tensor:
    """A dense strided view of ``storage`` (spec/canonical.md#canonical-values); ``conj``/``neg`` are
    PyTorch's lazy view bits; ``lua`` marks a .t7 tensor, which holds no element when it has no
    dimension."""

    dtype: DType
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    storage_offset: int
    storage: Storage | None
    device: str
    requires_grad: bool = False
    parameter: bool = False
    conj: bool = False
    neg: bool = False
    lua: bool = False

    @property
    def numel(self) -> int:
        if self.lua and not self.shape:
            return 0
        return math.prod(self.shape)


@dataclass(eq=False)
class QuantizedTensor(Tensor):
    qscheme: str = ""
    scale: float | None = None
    zero_point: int | None = None
    scales: Tensor | None = None
    zero_points: Tensor | None = None
    axis: int | None = None


@dataclass(eq=False)
class MetaTensor:
    """A tensor on PyTorch's meta device: a dtype and a geometry, no storage, no values
    (spec/tensors.md#tensors-meta)."""

    dtype: DType
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    requires_grad: bool
    parameter: bool = False


@dataclass(eq=False)
class SparseTensor:
    layout: str
    dtype: DType
    shape: tuple[int, ...]
    requires_grad: bool
    parts: dict[str, Any]  # indices/values or compressed_indices/plain_indices/values
    is_coalesced: bool | None = None


@dataclass(frozen=True)
class Global:
    """An allowed global as a value: a dtype, layout, qscheme, storage or tensor type."""

    module: str
    name: str

    @property
    def qualname(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(eq=False)
class Opaque:
    """An ``object`` value: ``torch.Size``, ``torch.device``, ``builtins.complex``, a TorchScript
    class instance.

    As a dict key or set item it merges as the Python value torch builds does (spec/pickle.md#pickle-keys):
    a ``torch.Size`` is its tuple (a tuple subclass), a ``complex`` is the number (``complex(1, 0) == 1``),
    a ``torch.device`` equals another device of the same type and index; any other object is itself."""

    class_name: str
    args: list[Any]
    state: Any = None

    def key(self) -> Any:
        """The Python value this object merges as, or ``self``."""
        if self.class_name == "torch.Size" and len(self.args) == 1 and type(self.args[0]) is tuple:
            return self.args[0]
        if self.class_name == "builtins.complex" and len(self.args) == 2:
            return complex(*self.args)
        if self.class_name == "torch.device":
            return _DeviceKey(tuple(self.args))
        return self

    def __eq__(self, other: object) -> bool:
        mine = self.key()
        if mine is self:
            return other is self
        if isinstance(other, Opaque):
            theirs = other.key()
            if theirs is other:
                return False
        elif isinstance(mine, _DeviceKey):  # a device equals only a device
            return False
        else:
            theirs = other
        return bool(mine == theirs)

    def __hash__(self) -> int:
        mine = self.key()
        return id(self) if mine is self else hash(mine)


@dataclass(frozen=True)
class _DeviceKey:
    args: tuple[Any, ...]


class ODict(collections.OrderedDict):
    """``collections.OrderedDict`` with the attributes a pickle's BUILD set (``_metadata``)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.attrs: dict[str, Any] = {}


@dataclass(eq=False)
class LuaTable:
    items: list[tuple[Any, Any]] = field(default_factory=list)


@dataclass(eq=False)
class TorchObject:
    class_name: str
    version: str | None
    value: Any = None


@dataclass(eq=False)
class LuaFunction:
    kind: str  # function | legacy_recursive | recursive
    bytecode: bytes
    upvalues: list[Any] = field(default_factory=list)
