"""The inert records both formats are read into (spec/canonical.md#canonical-values).

Nothing here holds a callable from a file.  Python containers from pickles stay plain Python values
(``dict``, ``list``, ``tuple``, ``set``, ``collections.OrderedDict`` whose ``__dict__`` holds the
attributes a pickle set, such as a state_dict's ``_metadata``); Lua tables are :class:`LuaTable`
because their keys may be tables.  Records compare by identity: sharing in the file is sharing here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .display import table_repr, tensor_repr, torch_object_repr
from .dtypes import DType, resolve_bits, to_little_endian
from .windows import Record

if TYPE_CHECKING:  # numpy is imported where elements are asked for, not to read a file (issue 12)
    import numpy as np


@dataclass(eq=False)
class Storage:
    """A flat run of ``numel`` elements of ``dtype`` on ``device`` (spec/tensors.md#tensors-storage).

    The bytes come either from ``buffer`` (a zero-copy slice of the file's mmap, in ``byte_order``) or
    from ``data`` (an array a reader had to convert, e.g. a 4-byte-long ``.t7`` LongStorage).  Nothing is
    read from the file until :meth:`array` is called.
    """

    dtype: DType
    numel: int
    device: str = "cpu"
    buffer: Any = None
    byte_order: str = "little"
    data: np.ndarray | None = None
    key: str | None = None
    viewed: bool = False  # a tensor views it: its dtype is fixed (spec/tensors.md#tensors-storage)
    retyped: bool = False  # an untyped (byte) storage a _rebuild_tensor_v3 gave another dtype

    def array(self) -> np.ndarray:
        """The elements as a 1-D little-endian numpy array (a view of the file where possible)."""
        import numpy as np

        if self.data is None:
            if self.buffer is None:
                self.data = np.zeros(self.numel, dtype=self.dtype.numpy)
            else:
                view = self.buffer.view() if isinstance(self.buffer, Record) else self.buffer
                raw = np.frombuffer(view, dtype=np.uint8, count=self.numel * self.dtype.itemsize)
                if self.byte_order == "big":
                    self.data = to_little_endian(raw, self.dtype)
                else:
                    self.data = raw.view(self.dtype.numpy)
        return self.data

    def release(self) -> None:
        """Forget the elements read from a file record mapped on demand (they are mapped again when
        asked for), so that a big file's records are never all mapped at once."""
        if isinstance(self.buffer, Record):
            self.data = None
            self.buffer.drop()


@dataclass(eq=False)
class Tensor:
    """A dense strided view of a storage (spec/tensors.md#tensors-view).

    ``shape``, ``stride`` and ``storage_offset`` are in elements (offset 0-based).  ``storage`` is ``None``
    only for a ``.t7`` tensor with no storage.  ``conj``/``neg`` are PyTorch's lazy view bits: the values
    torch presents are the stored ones conjugated / negated.  ``attrs`` holds Python attributes a pickle
    set on the tensor.
    """

    dtype: DType
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    storage_offset: int
    storage: Storage | None
    device: str = "cpu"
    requires_grad: bool = False
    parameter: bool = False
    conj: bool = False
    neg: bool = False
    attrs: dict[str, Any] = field(default_factory=dict)
    lua: bool = False  # a .t7 tensor: no dimensions means no element (spec/t7.md#t7-tensor)

    def numpy(self) -> np.ndarray:
        """The logical values as a numpy view over the storage (no copy, except after conj/neg).

        An empty tensor is an empty 1-d array whatever its shape (its hash is the empty string's; a
        shape such as ``(0, 2**62, 4)`` is legal but no numpy array).  Dimensions of size 1 are left
        out of the strided view: they change neither the elements nor their order, and numpy allows
        at most 64 dimensions where torch allows more (spec/tensors.md#tensors-view)."""
        import numpy as np

        if (self.lua and not self.shape) or self.storage is None or any(s == 0 for s in self.shape):
            return np.zeros((0,), dtype=self.dtype.numpy)
        base = self.storage.array()
        if self.dtype.per_byte > 1:  # packed (contiguous): the bytes that hold the elements, as int_repr()
            packed = -(-math.prod(self.shape) // self.dtype.per_byte)
            return base[self.storage_offset:self.storage_offset + packed]
        item = base.itemsize
        dims = [(n, s) for n, s in zip(self.shape, self.stride, strict=True) if n != 1]
        if not (self.conj or self.neg) and row_major(self.shape, self.stride):  # a slice, not as_strided
            count = math.prod(n for n, _ in dims)
            view = base[self.storage_offset:self.storage_offset + count].reshape([n for n, _ in dims])
            view.flags.writeable = False
            return view
        # numpy's as_strided cannot rebuild ml_dtypes' float8 types: stride their bits, then view back
        bits = base.view(f"u{item}") if base.dtype.type.__module__.startswith("ml_dtypes") else base
        view = np.lib.stride_tricks.as_strided(
            bits[self.storage_offset:],
            shape=tuple(n for n, _ in dims),
            strides=tuple(s * item for _, s in dims),
            writeable=False,
        )
        if bits is not base:
            view = view.view(base.dtype)
        if self.conj or self.neg:
            view = resolve_bits(view, self.dtype, self.conj, self.neg)
        return view

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """``np.asarray(t)``: the logical values in the tensor's shape (read-only where they map the
        file; ``np.array(t)`` copies).  Packed dtypes give their bytes (``int_repr()``)."""
        import numpy as np

        values = self.numpy()
        if values.size and self.dtype.per_byte == 1:
            values = values.reshape(self.shape)
        elif not values.size:
            values = values.reshape(self.shape if not (self.lua and not self.shape) else (0,))
        if dtype is not None:
            values = values.astype(dtype, copy=False)
        return np.array(values, copy=True) if copy else values

    def __repr__(self) -> str:
        return tensor_repr(type(self).__name__, self.dtype, self.shape, lambda: self.numpy(),
                           self.device, self.requires_grad)


def row_major(shape: tuple[int, ...], stride: tuple[int, ...]) -> bool:
    """Whether a view of ``shape`` and ``stride`` lays its elements out one after another, last dimension
    fastest (a dimension of size 1 has any stride)."""
    step = 1
    for n, s in zip(reversed(shape), reversed(stride), strict=True):
        if n != 1 and s != step:
            return False
        step *= n
    return True


@dataclass(eq=False)
class QuantizedTensor(Tensor):
    """A quantized tensor: the dense fields over the integer representation plus its scheme
    (spec/tensors.md#tensors-quantized).  Per-tensor schemes use ``scale``/``zero_point``; per-channel
    ones ``scales``/``zero_points`` (tensors) and ``axis``."""

    qscheme: str = "per_tensor_affine"
    scale: float | None = None
    zero_point: int | None = None
    scales: Tensor | None = None
    zero_points: Tensor | None = None
    axis: int | None = None


@dataclass(eq=False)
class SparseTensor:
    """A sparse tensor (spec/tensors.md#tensors-sparse): COO (``indices``, ``values``, ``is_coalesced``)
    or a compressed layout (``compressed_indices``, ``plain_indices``, ``values``)."""

    layout: str
    dtype: DType
    shape: tuple[int, ...]
    values: Tensor
    indices: Tensor | None = None
    is_coalesced: bool | None = None
    compressed_indices: Tensor | None = None
    plain_indices: Tensor | None = None
    requires_grad: bool = False


@dataclass(eq=False)
class MetaTensor:
    """A tensor on PyTorch's meta device: a dtype and a geometry, no storage and no values
    (spec/tensors.md#tensors-meta).  Its storage offset is always 0."""

    dtype: DType
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    requires_grad: bool = False
    parameter: bool = False
    attrs: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        return tensor_repr("MetaTensor", self.dtype, self.shape, None, "meta", self.requires_grad)


@dataclass(eq=False)
class TorchObject:
    """A ``.t7`` torch class instance: class name, version string (``None`` when the file has none)
    and the value its ``read`` produced (spec/t7.md#t7-torch-object)."""

    class_name: str
    version: str | None
    value: Any

    def __getitem__(self, key: Any) -> Any:
        """``obj["weight"]``: a field of the object's table (as torchfile's ``TorchObject``)."""
        if isinstance(self.value, LuaTable):
            return self.value[key]
        raise KeyError(key)

    def __getattr__(self, name: str) -> Any:
        """``obj.weight``: a string field of the object's table."""
        if name.startswith("_") or name in ("class_name", "version", "value"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"{self.class_name} has no field {name!r}") from None

    def __repr__(self) -> str:
        return torch_object_repr(self.class_name, self.value.keys() if isinstance(self.value, LuaTable)
                                 else None)


@dataclass(eq=False)
class LuaFunction:
    """A ``.t7`` Lua function, kept as bytes and never loaded (spec/t7.md#t7-function)."""

    kind: str  # "function" (type 6), "legacy_recursive" (7), "recursive" (8)
    bytecode: bytes
    upvalues: list[Any]
    #: The file offset of its type code, where the reader knows it (for messages that refuse it).
    offset: int | None = None


@dataclass(eq=False)
class LuaTable:
    """A Lua table: key/value pairs in file order; keys may be any value, tables included."""

    items: list[tuple[Any, Any]] = field(default_factory=list)

    def _index(self) -> dict[Any, Any]:
        # first value of each hashable key, as a Lua table holds one value per key; numbers by value
        # (``t[1]`` finds the key 1.0 every .t7 number is), tables and tensors by identity
        index = self.__dict__.get("_by_key")
        if index is None or self.__dict__.get("_indexed") != len(self.items):
            index = {}
            for k, v in self.items:
                index.setdefault(k, v)
            self.__dict__["_by_key"], self.__dict__["_indexed"] = index, len(self.items)
        return index

    def __getitem__(self, key: Any) -> Any:
        """``t[1]``, ``t["weight"]``: the value of a key (1-based keys as the file has them)."""
        return self._index()[key]

    def get(self, key: Any, default: Any = None) -> Any:
        return self._index().get(key, default)

    def __contains__(self, key: Any) -> bool:
        return key in self._index()

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Any:
        """The keys, in file order, as iterating a ``dict`` gives."""
        return (k for k, _ in self.items)

    def keys(self) -> list[Any]:
        return [k for k, _ in self.items]

    def values(self) -> list[Any]:
        return [v for _, v in self.items]

    def __getattr__(self, name: str) -> Any:
        """``t.weight``: a string key (torchfile's tables allow the same)."""
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"the table has no key {name!r}") from None

    def __repr__(self) -> str:
        return table_repr(self.keys())


@dataclass(frozen=True)
class Global:
    """A bare pickled global the spec allows (e.g. ``torch.float32``), never resolved."""

    module: str
    name: str


@dataclass(eq=False)
class OpaqueObject:
    """A reduction kept opaque: ``class`` (module.qualname), REDUCE/NEWOBJ ``args``, BUILD ``state``."""

    class_name: str
    args: list[Any]
    state: Any = None


class KeyedObject(OpaqueObject):
    """An opaque object that hashes and compares like the Python value torch loads for it: a
    ``torch.Size`` like the tuple it subclasses, a ``complex`` like the number it is.  As a dict key or
    set item it merges with equal keys as in torch, ``torch.Size((1, 2))`` with ``(1, 2)`` and
    ``complex(1, 0)`` with ``1`` (spec/pickle.md#pickle-keys).  ``python`` is that value, built by the
    reader from plain numbers; nothing from the file is called."""

    def __init__(self, class_name: str, args: list[Any], python: Any) -> None:
        super().__init__(class_name, args)
        self.python = python

    def __eq__(self, other: object) -> bool:
        return bool(self.python == (other.python if isinstance(other, KeyedObject) else other))

    def __hash__(self) -> int:
        return hash(self.python)


@dataclass(eq=False)
class Document:
    """A whole file: its variant name (``pt-zip``, ``t7-binary``, ...) and its top-level objects."""

    format: str
    objects: list[Any]
    extra: dict[str, Any] = field(default_factory=dict)
    #: Notes for the description: ``_<name>`` members, which comparison ignores
    #: (spec/canonical.md#canonical-document); JSON values, or a :class:`Document` (described in turn),
    #: such as a reading the reader did not choose.
    notes: dict[str, Any] = field(default_factory=dict)
