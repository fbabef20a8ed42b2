"""The ``.t7`` object stream as torch7's ``File:writeObject`` writes it (spec/t7.md#t7-write).

Binary mode is little-endian with 8-byte longs, what every 64-bit torch7 build writes; ascii mode
prints numbers as torch7's ``DiskFile`` does (spec/t7.md#t7-ascii).  Tables, torch objects and
functions of types 7 and 8 get reference indexes from one counter; an object met again is written as
its type code and index.  Tensor and storage classes come from the dtype table's ``t7_class`` column
(``Cuda`` classes for tensors on a CUDA device), and every torch class carries a version header
``V <n>`` (``V 1`` for tensors and storages, as torch7 writes them).
"""

from __future__ import annotations

import collections
import math
import struct
from typing import Any, BinaryIO

import numpy as np

from ..errors import quote
from ..limits import T7_DEPTH, T7_NDIM, T7_OBJECTS, WALK_FRAMES
from ..model import LuaFunction, LuaTable, Storage, Tensor, TorchObject
from ..recursion import recursion_limit
from ..t7 import classes
from ..t7.reader import (
    BOOLEAN,
    FUNCTION,
    LEGACY_RECUR_FUNCTION,
    NIL,
    NUMBER,
    RECUR_FUNCTION,
    STRING,
    TABLE,
    TORCH,
)
from .pickler import PicklingError
from .reduce import from_numpy

#: The version header torch7 gives tensors and storages.
TENSOR_VERSION = "1"
_KIND_CODES = {"function": FUNCTION, "legacy_recursive": LEGACY_RECUR_FUNCTION, "recursive": RECUR_FUNCTION}
_CLASS_OF = {(info.kind, info.dtype.name, info.device): name
             for name, info in classes.CLASSES.items() if info.dtype is not None}


def _lua_bytes(text: str) -> bytes:
    """A Python string as the Lua string the .t7 reader reads back as it: UTF-8, with the bytes that are
    no UTF-8 kept as the reader's ``surrogateescape`` held them; a lone surrogate outside that range
    (``'\\ud800'``) is no byte string at all, refused by name."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as e:
        bad = text[e.start]
        raise T7Error(f"the string {quote(text)} holds the lone surrogate U+{ord(bad):04X}: no Lua string "
                      "reads back as it") from None


class T7Error(PicklingError):
    """A value with no ``.t7`` form."""


class _Binary:
    def __init__(self, f: BinaryIO) -> None:
        self.f = f

    def int(self, v: int) -> None:
        self.f.write(struct.pack("<i", v))

    def longs(self, vs: list[int]) -> None:
        self.f.write(struct.pack(f"<{len(vs)}q", *vs))

    def double(self, v: float) -> None:
        self.f.write(struct.pack("<d", v))

    def chars(self, raw: bytes) -> None:
        self.f.write(raw)

    def storage(self, s: Storage) -> None:
        arr = s.array()[:s.numel]
        self.f.write(memoryview(np.ascontiguousarray(arr).view(np.uint8)))


def _c_float(x: float, digits: int) -> str:
    """C's ``%.<digits>g``, ``-nan`` included."""
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    return f"%.{digits}g" % x


class _Ascii:
    def __init__(self, f: BinaryIO) -> None:
        self.f = f

    def _line(self, text: str) -> None:
        self.f.write(text.encode("ascii") + b"\n")

    def int(self, v: int) -> None:
        self._line(str(v))

    def longs(self, vs: list[int]) -> None:
        if vs:
            self._line(" ".join(str(v) for v in vs))

    def double(self, v: float) -> None:
        self._line(_c_float(v, 17))

    def chars(self, raw: bytes) -> None:
        if raw:
            self.f.write(raw + b"\n")

    def storage(self, s: Storage) -> None:
        arr = s.array()[:s.numel]
        if s.numel == 0:
            return
        if s.dtype.itemsize == 1:
            self.chars(bytes(np.ascontiguousarray(arr).view(np.uint8)))
        elif s.dtype.name in ("float32", "float16"):
            self._line(" ".join(_c_float(float(x), 9) for x in arr.astype(np.float32)))
        elif s.dtype.name == "float64":
            self._line(" ".join(_c_float(float(x), 17) for x in arr))
        else:
            self._line(" ".join(str(int(x)) for x in arr))


def _parts(obj: Any) -> list[Any]:
    """The values the writer writes inside ``obj``, in order (keys and values of a table)."""
    if isinstance(obj, LuaTable):
        return [x for kv in obj.items for x in kv]
    if isinstance(obj, dict):
        return [x for kv in obj.items() for x in kv]
    if isinstance(obj, (list, tuple)):
        return [x for i, v in enumerate(obj) for x in (float(i + 1), v)]
    if isinstance(obj, TorchObject):
        v = obj.value
        if isinstance(v, LuaTable) and classes.lookup(obj.class_name).kind == classes.TDS_HASH:
            return [x for kv in v.items for x in kv]
        if isinstance(v, dict) and classes.lookup(obj.class_name).kind == classes.TDS_HASH:
            return [x for kv in v.items() for x in kv]
        if classes.lookup(obj.class_name).kind == classes.TDS_VEC:
            return list(v)
        return [v]
    if isinstance(obj, LuaFunction):
        return [LuaTable([(float(i + 1), u) for i, u in enumerate(obj.upvalues)])]
    return []


def check_limits(obj: Any, written: int = 0) -> None:
    """Refuse, before a byte is written, a value whose ``.t7`` stream a reader refuses
    (spec/t7.md#t7-convert-limits): more objects than :data:`~torchfmt.limits.T7_OBJECTS` (every type
    code the stream holds: nils, numbers, back-references; a tensor and its storage two), composite
    objects nested deeper than :data:`~torchfmt.limits.T7_DEPTH` (a tensor is one more level), a tensor
    of more than :data:`~torchfmt.limits.T7_NDIM` dimensions.  ``written``: objects already indexed.
    The walk is the writer's own order (each object once, then as a back-reference), without
    recursion."""
    count = written
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(obj, 0)]
    while stack:
        v, depth = stack.pop()
        count += 1
        if count > T7_OBJECTS.value:
            raise T7Error(f"the output would hold more than {T7_OBJECTS.value:,} objects, more than a .t7 "
                          f"reader reads (T7_OBJECTS, spec/t7.md#t7-limits)")
        if isinstance(v, np.ndarray):
            v = from_numpy(v) if v.ndim <= T7_NDIM.value else v
        if isinstance(v, (Tensor, Storage)):
            if isinstance(v, Tensor) and len(v.shape) > T7_NDIM.value:
                raise T7Error(f"a tensor of {len(v.shape)} dimensions: Lua Torch has at most {T7_NDIM.value}")
            if depth + 1 > T7_DEPTH.value:
                raise T7Error(f"values nest deeper than {T7_DEPTH.value} tables and objects, more than a .t7 "
                              "reader opens (T7_DEPTH, spec/t7.md#t7-limits)")
            if id(v) not in seen:
                seen.add(id(v))
                if isinstance(v, Tensor):  # its storage follows it: a storage, a reference or a nil
                    count += 1
                    if v.storage is not None:
                        seen.add(id(v.storage))
            continue
        if not isinstance(v, (LuaTable, dict, list, tuple, TorchObject, LuaFunction)) or id(v) in seen:
            continue
        seen.add(id(v))
        if depth + 1 > T7_DEPTH.value:
            raise T7Error(f"values nest deeper than {T7_DEPTH.value} tables and objects, more than a .t7 "
                          "reader opens (T7_DEPTH, spec/t7.md#t7-limits)")
        stack.extend((x, depth + 1) for x in reversed(_parts(v)))


class T7Writer:
    """Writes objects to one stream; the reference indexes span the stream."""

    def __init__(self, f: BinaryIO, mode: str = "binary") -> None:
        self.enc: _Binary | _Ascii = _Binary(f) if mode == "binary" else _Ascii(f)
        self.index: dict[int, tuple[int, Any]] = {}
        self.arrays: dict[int, tuple[Tensor, np.ndarray]] = {}

    def write(self, obj: Any) -> None:
        check_limits(obj, len(self.index))
        with recursion_limit(WALK_FRAMES):
            self._object(obj)

    def _string(self, raw: bytes) -> None:
        self.enc.int(len(raw))
        self.enc.chars(raw)

    def _indexed(self, code: int, obj: Any) -> bool:
        """Write the type code and the index; ``True`` when ``obj`` was written before."""
        self.enc.int(code)
        known = self.index.get(id(obj))
        if known is not None:
            self.enc.int(known[0])
            return True
        n = len(self.index) + 1
        self.index[id(obj)] = (n, obj)
        self.enc.int(n)
        return False

    def _object(self, obj: Any) -> None:
        if isinstance(obj, np.generic):
            obj = obj.item()
        enc = self.enc
        if obj is None:
            enc.int(NIL)
        elif type(obj) is bool:
            enc.int(BOOLEAN)
            enc.int(1 if obj else 0)
        elif type(obj) in (int, float):
            if type(obj) is int and float(obj) != obj:
                raise T7Error(f"the integer {obj} is no Lua number (a double)")
            enc.int(NUMBER)
            enc.double(float(obj))
        elif isinstance(obj, (str, bytes, bytearray)):
            enc.int(STRING)
            self._string(_lua_bytes(obj) if isinstance(obj, str) else bytes(obj))
        elif isinstance(obj, np.ndarray):
            if id(obj) not in self.arrays:
                self.arrays[id(obj)] = (from_numpy(obj), obj)
            self._object(self.arrays[id(obj)][0])
        elif isinstance(obj, LuaTable):
            if not self._indexed(TABLE, obj):
                self._pairs(obj.items)
        elif isinstance(obj, (list, tuple)):
            if not self._indexed(TABLE, obj):
                self._pairs([(float(i + 1), v) for i, v in enumerate(obj)])
        elif isinstance(obj, dict):
            if not self._indexed(TABLE, obj):
                self._pairs(list(obj.items()))
        elif isinstance(obj, Tensor):
            self._tensor(obj)
        elif isinstance(obj, Storage):
            if not self._indexed(TORCH, obj):
                self._class(TENSOR_VERSION, self._class_name(classes.STORAGE, obj.dtype.name, obj.device))
                enc.longs([obj.numel])
                enc.storage(obj)
        elif isinstance(obj, TorchObject):
            self._torch_object(obj)
        elif isinstance(obj, LuaFunction):
            self._function(obj)
        else:
            raise T7Error(f"{type(obj).__name__} has no .t7 form")

    def _pairs(self, items: list[tuple[Any, Any]]) -> None:
        for k, v in items:  # what a Lua table cannot hold (spec/t7.md#t7-convert-refusals)
            if k is None or v is None:
                raise T7Error(f"the table entry {quote(k)} holds None: a Lua table holds no nil "
                              "(the entry would vanish)")
            if isinstance(k, float) and math.isnan(k):
                raise T7Error("a table key is NaN: a Lua table has no NaN key")
        self.enc.int(len(items))
        for k, v in items:
            self._object(k)
            self._object(v)

    def _class(self, version: str | None, name: str) -> None:
        if version is not None:
            self._string(f"V {version}".encode("ascii"))
        self._string(name.encode("utf-8"))

    @staticmethod
    def _class_name(kind: str, dtype: str, device: str) -> str:
        dev = "cuda" if device.startswith("cuda") else device
        name = _CLASS_OF.get((kind, dtype, dev))
        if name is None:
            raise T7Error(f"Lua Torch has no {kind} class for {dtype} on {device}")
        return name

    def _tensor(self, t: Tensor) -> None:
        if t.conj or t.neg or t.attrs:
            raise T7Error("a tensor with lazy conjugate/negative bits or Python attributes has no .t7 form")
        name = self._class_name(classes.TENSOR, t.dtype.name, t.device)
        if self._indexed(TORCH, t):
            return
        self._class(TENSOR_VERSION, name)
        shape, stride = t.shape, t.stride
        if len(shape) > T7_NDIM.value:
            raise T7Error(f"a tensor of {len(shape)} dimensions: the .t7 reader reads at most "
                          f"{T7_NDIM.value}")
        if not t.lua and not shape:  # a PyTorch zero-dimensional tensor holds one element
            shape, stride = (1,), (1,)
        self.enc.int(len(shape))
        self.enc.longs(list(shape))
        self.enc.longs(list(stride))
        self.enc.longs([t.storage_offset + 1])
        self._object(t.storage)

    def _torch_object(self, obj: TorchObject) -> None:
        info = classes.lookup(obj.class_name)
        if info.kind in (classes.TENSOR, classes.STORAGE, classes.DECLINED):
            raise T7Error(f"a torch object of class {obj.class_name} cannot be written generically")
        if self._indexed(TORCH, obj):
            return
        self._class(obj.version, obj.class_name)
        if info.kind == classes.TDS_HASH:
            items = obj.value.items if isinstance(obj.value, LuaTable) else list(obj.value.items())
            self.enc.longs([len(items)])
            for k, v in items:
                self._object(k)
                self._object(v)
        elif info.kind == classes.TDS_VEC:
            self.enc.longs([len(obj.value)])
            for v in obj.value:
                self._object(v)
        else:
            if not isinstance(obj.value, (LuaTable, dict, list, tuple)):
                raise T7Error(f"the payload of {obj.class_name} must be a table")
            self._object(obj.value)

    def _function(self, fn: LuaFunction) -> None:
        code = _KIND_CODES[fn.kind]
        if code == FUNCTION:
            self.enc.int(code)
        elif self._indexed(code, fn):
            return
        self._string(fn.bytecode)
        upvalues = collections.OrderedDict((float(i + 1), v) for i, v in enumerate(fn.upvalues))
        self._object(LuaTable(list(upvalues.items())))


def write_t7(obj: Any, f: BinaryIO, mode: str = "binary") -> None:
    """Write ``obj`` as one ``.t7`` object."""
    T7Writer(f, mode).write(obj)
