"""``torchfile.load`` with torchfile's types and options, over torchfmt's ``.t7`` reader.

``import torchfmt.compat.torchfile as torchfile`` and a torchfile user's code runs unchanged: tensors and
storages are numpy arrays (a tensor an ``as_strided`` view of its storage's array, so tensors that share a
storage share memory, as in torchfile), strings are ``bytes`` (``utf8_decode_strings`` decodes them;
class names and versions never), whole numbers ``int`` (``use_int_heuristic``), a table whose keys are
1..n a ``list`` (``use_list_heuristic``) and any other one a :class:`hashable_uniq_dict` (a ``dict``
compared and hashed by identity, with ``t.key`` access), ``tds.Vec`` a list and ``tds.Hash`` such a
dict, a Lua function a :class:`LuaFunction` ``(size, dumped, upvalues)`` and any other torch class a
:class:`TorchObject` with ``torch_typename()`` (``obj.value`` is the field ``value``, as torchfile's
``nn.Constant(5).value`` is 5).  What torchfile itself cannot read is read too: ascii files, 4-byte
longs, big-endian files (torchmft's detection, or ``force_8bytes_long``), Half tensors (``float16``).

Where torchfmt refuses a file (spec/t7.md), this refuses it with torchfmt's
:class:`~torchfmt.errors.FormatError`; torchfile's own reader was laxer.
"""

from __future__ import annotations

import os
from collections import namedtuple
from typing import Any

import numpy as np

from .. import model
from ..t7.encodings import Hints

__all__ = ["LuaFunction", "T7ReaderException", "TorchObject", "hashable_uniq_dict", "load"]

LuaFunction = namedtuple("LuaFunction", ["size", "dumped", "upvalues"])


class T7ReaderException(Exception):
    """torchfile's exception type (torchfmt's reader raises :class:`~torchfmt.errors.FormatError`)."""


class hashable_uniq_dict(dict):  # noqa: N801 - torchfile's name
    """A ``dict`` compared and hashed by identity, as Lua tables are (so a table can be a key), with
    ``t.key`` access (a ``str`` key also found as its UTF-8 ``bytes``), as torchfile's."""

    def __hash__(self) -> int:  # type: ignore[override]
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __getattr__(self, key: str) -> Any:
        if key in self:
            return self[key]
        return self.get(key.encode("utf8"))


class TorchObject:
    """A torch class instance torchfile has no reader for: ``torch_typename()`` (``bytes``) and its field
    table by ``obj.field`` and ``obj[field]`` (a missing field is None, as in torchfile)."""

    def __init__(self, typename: bytes, obj: Any = None, version_number: int = 0) -> None:
        self._typename = typename
        self._obj = obj
        self._version_number = version_number

    def _field(self, k: Any) -> Any:
        if not isinstance(self._obj, dict):
            return None
        if k in self._obj:
            return self._obj[k]
        return self._obj.get(k.encode("utf8")) if isinstance(k, str) else None

    def __getattr__(self, k: str) -> Any:
        if k.startswith("__") or k in ("_typename", "_obj", "_version_number"):
            raise AttributeError(k)
        return self._field(k)

    def __getitem__(self, k: Any) -> Any:
        return self._field(k)

    def torch_typename(self) -> bytes:
        return self._typename

    def __repr__(self) -> str:
        keys = list(self._obj)[:8] if isinstance(self._obj, dict) else []
        return f"TorchObject({self._typename!r}, fields={keys!r})"  # bounded: torchfile's repr nests all

    __str__ = __repr__

    def __dir__(self) -> list[Any]:
        return [*(self._obj.keys() if isinstance(self._obj, dict) else []), "torch_typename"]


class _Converter:
    """torchfmt's values as torchfile's, each value converted once (shared and self-referencing values
    stay shared: containers are registered before their contents are filled)."""

    def __init__(self, list_heuristic: bool, int_heuristic: bool, utf8: bool) -> None:
        self.list_heuristic, self.int_heuristic, self.utf8 = list_heuristic, int_heuristic, utf8
        self.done: dict[int, Any] = {}
        self.storages: dict[int, np.ndarray] = {}
        self.keep: list[Any] = []  # the converted values' sources, so their ids stay theirs

    def string(self, v: str | bytes) -> Any:
        raw = v.encode("utf-8", "surrogateescape") if isinstance(v, str) else bytes(v)
        return raw.decode("utf8") if self.utf8 else raw

    def storage(self, s: model.Storage) -> np.ndarray:
        if id(s) not in self.storages:
            self.keep.append(s)
            self.storages[id(s)] = np.array(s.array(), copy=True)  # writable, as torchfile's fromfile
        return self.storages[id(s)]

    def tensor(self, t: model.Tensor) -> np.ndarray:
        dtype = t.dtype.numpy
        if t.storage is None or not t.shape:
            return np.empty(0, dtype=dtype)
        data = self.storage(t.storage)
        strides = [data.dtype.itemsize * s for s in t.stride]
        return np.lib.stride_tricks.as_strided(data[t.storage_offset:], shape=t.shape, strides=strides)

    def value(self, v: Any) -> Any:
        if v is None or type(v) is bool:
            return v
        if type(v) is float:
            return int(v) if self.int_heuristic and v.is_integer() else v
        if type(v) is int:
            return v if self.int_heuristic else float(v)
        if isinstance(v, (str, bytes)):
            return self.string(v)
        if id(v) in self.done:
            return self.done[id(v)]
        self.keep.append(v)
        if isinstance(v, model.Tensor):
            out = self.done[id(v)] = self.tensor(v)
            return out
        if isinstance(v, model.Storage):
            out = self.done[id(v)] = self.storage(v)
            return out
        if isinstance(v, model.LuaFunction):
            # the stream holds the upvalues as one table {[1] = u1, ...}: torchfile reads it as any table
            upvalues = self.table(v.upvalues, [(float(i + 1), u) for i, u in enumerate(v.upvalues)])
            out = self.done[id(v)] = LuaFunction(len(v.bytecode), v.bytecode, upvalues)
            return out
        if isinstance(v, model.LuaTable):
            return self.table(v, v.items)
        if isinstance(v, model.TorchObject):
            return self.torch_object(v)
        if isinstance(v, list):  # a tds.Vec's elements
            out = self.done[id(v)] = []
            out.extend(self.value(x) for x in v)
            return out
        return v

    def table(self, src: Any, items: list[tuple[Any, Any]]) -> Any:
        obj = hashable_uniq_dict()
        self.done[id(src)] = obj
        key_sum, natural = 0, True
        for k, x in items:
            key, val = self.value(k), self.value(x)
            obj[key] = val
            if self.list_heuristic:
                if not isinstance(key, int) or isinstance(key, bool) or key <= 0:
                    natural = False
                else:
                    key_sum += key
        n = len(obj)
        if self.list_heuristic and natural and n * (n + 1) == 2 * key_sum:
            lst: list[Any] = []
            for i in range(n):
                elem = obj[i + 1]
                lst.append(lst if elem is obj else elem)
            self.done[id(src)] = lst
            return lst
        return obj

    def torch_object(self, v: model.TorchObject) -> Any:
        name = v.class_name
        if name == "tds.Vec" and isinstance(v.value, list):
            return self.value(v.value)
        if name == "tds.Hash" and isinstance(v.value, model.LuaTable):
            obj = hashable_uniq_dict()
            self.done[id(v)] = obj
            for k, x in v.value.items:
                obj[self.value(k)] = self.value(x)
            return obj
        version = 0
        if v.version is not None:
            try:
                version = int(float(v.version))
            except ValueError:
                version = 0
        out = TorchObject(name.encode("utf-8"), None, version)
        self.done[id(v)] = out
        out._obj = self.value(v.value)
        return out


def load(filename: str | os.PathLike[str], use_list_heuristic: bool = True, use_int_heuristic: bool = True,
         utf8_decode_strings: bool = False, force_deserialize_classes: Any = None,
         force_8bytes_long: bool = False) -> Any:
    """The first object of the ``.t7`` file ``filename``, as ``torchfile.load`` gives it (its keyword
    options, same defaults); ``force_8bytes_long`` reads with 8-byte longs, as torchfile does on a
    platform whose C ``long`` is 4 bytes (torchfmt otherwise detects the long size)."""
    if force_deserialize_classes is not None:  # torchfile raises this very exception
        raise DeprecationWarning("force_deserialize_classes is now always forced to be true, so no longer "
                                 "required")
    from .. import load as read

    hints = Hints.from_env().override(long_size=8 if force_8bytes_long else None)
    obj = read(filename, hints, mmap=False)
    return _Converter(use_list_heuristic, use_int_heuristic, utf8_decode_strings).value(obj)
