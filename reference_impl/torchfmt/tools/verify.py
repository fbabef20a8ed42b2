"""Nothing lost: what a tool wrote reads back as what it meant to write, or nothing is replaced
(issue 20; spec/t7.md#t7-convert-refusals).

``convert`` and ``slim`` write a temporary file; before it replaces anything, :func:`read_back` reads it
with the reader (``dump``'s reading: the same limits) and compares it with the object the tool handed the
writer, value by value: the same containers with the same keys in the same order, the same scalars, the
same tensors (dtype, shape, values).  A ``.t7`` output is compared as Lua holds Python values (a list
or dict is a table, a number a double).  A difference refuses the write with a line naming the value's
path.  Tensor values are compared in full up to :data:`FULL_BYTES` a tensor, beyond it at their first
and last elements (their bytes are copied by the writer, never converted).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import FormatError, Unsupported, quote
from ..model import (
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
from ..writer.reduce import torch_view
from ..writer.safetensors import NUMPY_MAX_DIMS
from .flat import shown_path
from .reading import read

#: Bytes of one tensor compared element by element; a larger one is compared at its ends.
FULL_BYTES = 1 << 26


class Lost(Exception):
    """What was written is not what was meant: ``path`` and ``what`` say where and how."""

    def __init__(self, keys: tuple[Any, ...], what: str) -> None:
        self.keys = keys
        self.what = what
        super().__init__(f"{shown_path(keys)}: {what}")


def read_back(path: str, meant: Any, target: str) -> None:
    """Raise :class:`Lost` unless the file at ``path`` (written as ``target``: ``pt-zip``, ``pt-legacy``,
    ``t7``, ``t7-binary``, ``t7-ascii``) reads back as ``meant``."""
    hints = Hints(mode="ascii" if target == "t7-ascii" else "binary") if target.startswith("t7") else None
    try:
        doc = read(path, hints)
    except (FormatError, Unsupported) as e:
        raise Lost((), f"the written file does not read back ({e.line()})") from None
    if len(doc.objects) != 1:
        raise Lost((), f"the written file holds {len(doc.objects)} objects, not one")
    Compare(target.startswith("t7")).same(meant, doc.objects[0], ())


def read_back_safetensors(path: str, tensors: dict[str, Tensor], metadata: dict[str, str]) -> None:
    """Raise :class:`Lost` unless the safetensors file at ``path`` holds exactly ``tensors`` (name ->
    tensor) and ``metadata``, read as strictly as the format's own readers: by the safetensors library
    itself when it is installed (its header parser, names, dtypes, shapes and ``__metadata__``), and in
    any case by the format's layout (a strict JSON header: no lone surrogate), then each tensor's bytes,
    read one tensor at a time (its ends only beyond :data:`FULL_BYTES`) so that memory stays small
    (spec/t7.md#t7-convert-nothing-lost)."""
    import json
    import os

    from ..writer.safetensors import SAFETENSORS_DTYPES

    _library_reads(path, tensors, metadata)
    fd = os.open(path, os.O_RDONLY)
    try:
        n = int.from_bytes(os.pread(fd, 8, 0), "little")
        try:
            raw = os.pread(fd, n, 8)
            header = json.loads(raw.decode("utf-8"), object_pairs_hook=_strict_object)
        except (ValueError, UnicodeDecodeError) as e:
            raise Lost((), f"the written file's header is no strict JSON ({quote(str(e), 80)})") from None
        if header.pop("__metadata__", None) != (metadata or None):
            raise Lost(("__metadata__",), "the header's metadata differs from what was meant")
        if sorted(header) != sorted(tensors):
            missing = sorted(set(tensors) - set(header))[:3]
            raise Lost((), f"the written file names {len(header)} tensors, not {len(tensors)} (missing "
                           f"{', '.join(quote(n) for n in missing) or 'none'})")
        for name, entry in header.items():
            t = torch_view(tensors[name])
            a = np.asarray(t.numpy()).reshape(t.shape) if t.shape else np.asarray(t.numpy()).reshape(())
            code = SAFETENSORS_DTYPES.get(t.dtype.name)
            if entry.get("dtype") != code or entry.get("shape") != list(t.shape):
                raise Lost((name,), f"{entry.get('dtype')}{entry.get('shape')} read back, "
                                    f"{t.dtype.name}{list(t.shape)} meant")
            begin, end = entry["data_offsets"]
            if end - begin != a.nbytes:
                raise Lost((name,), f"{end - begin} bytes of data read back, {a.nbytes} meant")
            start = 8 + n + begin
            if a.nbytes > FULL_BYTES:  # the first and last elements, as _same_values compares them
                size = a.itemsize
                got = os.pread(fd, size, start) + os.pread(fd, size, start + a.nbytes - size)
                ends = [(0,) * a.ndim, tuple(k - 1 for k in a.shape)]
                want = np.array([a[i] for i in ends], a.dtype)
            else:
                got = os.pread(fd, a.nbytes, start)
                want = np.ascontiguousarray(a)
            if got != want.reshape(-1).view(np.uint8).tobytes():
                raise Lost((name,), "the values read back differ from those meant")
            if t.storage is not None:
                t.storage.release()
    finally:
        os.close(fd)


def _strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as RFC 8259's strict readers take it: no key twice, no lone surrogate in a key or
    a string value (Python's ``json`` takes both)."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        for text in (k, v) if isinstance(v, str) else (k,):
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"a lone surrogate in {ascii(text)[:40]}") from None
        if k in out:
            raise ValueError(f"the key {ascii(k)[:40]} twice")
        out[k] = v
    return out


def _library_reads(path: str, tensors: dict[str, Tensor], metadata: dict[str, str]) -> None:
    """The safetensors library's own reading of the header (names, dtypes, shapes, ``__metadata__``),
    when it is installed (an optional dependency: without it the strict reading above stands)."""
    try:
        from safetensors import SafetensorError, safe_open
    except ImportError:
        return
    from ..writer.safetensors import SAFETENSORS_DTYPES

    try:
        with safe_open(path, framework="numpy") as f:
            names, meta = set(f.keys()), f.metadata()
            if names != set(tensors):
                raise Lost((), f"the safetensors library reads {len(names)} tensors, not {len(tensors)}")
            if (meta or {}) != metadata:
                raise Lost(("__metadata__",), "the safetensors library reads other metadata than meant")
            for name, t in tensors.items():
                piece = f.get_slice(name)
                got = (piece.get_dtype(), list(piece.get_shape()))
                want = (SAFETENSORS_DTYPES.get(t.dtype.name), list(torch_view(t).shape))
                if got != want:
                    raise Lost((name,), f"the safetensors library reads {got[0]}{got[1]}, not "
                                        f"{want[0]}{want[1]}")
    except SafetensorError as e:
        raise Lost((), f"the safetensors library refuses the written file ({quote(str(e), 120)})") from None


def _same_values(a: np.ndarray, b: np.ndarray, keys: tuple[Any, ...]) -> None:
    if a.shape != b.shape:
        raise Lost(keys, f"shape {list(b.shape)} read back, {list(a.shape)} meant")
    if a.dtype.itemsize != b.dtype.itemsize or a.dtype.kind != b.dtype.kind:
        raise Lost(keys, f"dtype {b.dtype} read back, {a.dtype} meant")
    if a.size == 0:
        return
    if a.nbytes > FULL_BYTES:
        ends = [(0,) * a.ndim, tuple(n - 1 for n in a.shape)]
        a, b = np.array([a[i] for i in ends]), np.array([b[i] for i in ends])
    if a.dtype.kind in "fc":
        same = np.array_equal(a, b, equal_nan=True)
    else:  # compared as bytes: every dtype, the ones numpy has no arithmetic for included
        same = np.array_equal(np.ascontiguousarray(a).reshape(-1).view(np.uint8),
                              np.ascontiguousarray(b).reshape(-1).view(np.uint8))
    if not same:
        raise Lost(keys, "the values read back differ from those meant")


class Compare:
    """Compares a value a writer was handed with the value the reader gives for it (``lua``: as a
    ``.t7`` file holds it)."""

    def __init__(self, lua: bool) -> None:
        self.lua = lua
        self.done: set[tuple[int, int]] = set()
        self.keep: list[Any] = []

    def same(self, meant: Any, got: Any, keys: tuple[Any, ...]) -> None:
        stack = [(meant, got, keys)]
        while stack:
            m, g, k = stack.pop()
            for item in reversed(self._one(m, g, k)):
                stack.append(item)

    def _one(self, m: Any, g: Any, k: tuple[Any, ...]) -> list[tuple[Any, Any, tuple[Any, ...]]]:
        if isinstance(m, np.generic):
            m = m.item()
        if m is None or type(m) is bool:
            if g is not m and g != m:
                raise Lost(k, f"{quote(m)} meant, {quote(g)} read back")
            return []
        if type(m) in (int, float):
            return self._number(m, g, k)
        if isinstance(m, (str, bytes, bytearray)):
            if self._text(m) != self._text(g):
                raise Lost(k, f"the text {quote(m)} reads back as {quote(g)}")
            return []
        pair = (id(m), id(g))
        if pair in self.done:
            return []
        self.done.add(pair)
        self.keep.append((m, g))
        if isinstance(m, Tensor):
            return self._tensor(m, g, k)
        if isinstance(m, Storage):
            if not isinstance(g, Storage) or g.dtype.name != m.dtype.name or g.numel != m.numel:
                raise Lost(k, f"a storage of {m.numel} {m.dtype.name} meant, {quote(g)} read back")
            _same_values(m.array()[:m.numel], g.array()[:g.numel], k)
            return []
        if isinstance(m, TorchObject):
            if not isinstance(g, TorchObject) or g.class_name != m.class_name:
                raise Lost(k, f"a {quote(m.class_name)} object reads back as {type(g).__name__}")
            return [(m.value, g.value, k)]
        if isinstance(m, (dict, list, tuple, LuaTable)):
            return self._container(m, g, k)
        if isinstance(m, (Global, OpaqueObject, SparseTensor, MetaTensor, LuaFunction)):
            if type(g) is not type(m):
                raise Lost(k, f"a {type(m).__name__} reads back as {type(g).__name__}")
            return []
        if isinstance(m, np.ndarray):
            if not isinstance(g, Tensor):
                raise Lost(k, f"an array reads back as {type(g).__name__}")
            _same_values(m, np.asarray(g), k)
            return []
        if type(g) is not type(m):
            raise Lost(k, f"a {type(m).__name__} reads back as {type(g).__name__}")
        return []

    def _number(self, m: float, g: Any, k: tuple[Any, ...]) -> list[Any]:
        if self.lua:
            ok = type(g) is float and (g == m or (math.isnan(g) and math.isnan(m)))
        else:
            ok = type(g) is type(m) and (g == m or (type(m) is float and math.isnan(g) and math.isnan(m)))
        if not ok:
            raise Lost(k, f"the number {quote(m)} reads back as {quote(g)}")
        return []

    @staticmethod
    def _text(v: Any) -> Any:
        if isinstance(v, str):  # as the writers encode it: a .t7 string's bytes, a pickle's lone surrogates
            try:
                return ("t", v.encode("utf-8", "surrogateescape"))
            except UnicodeEncodeError:
                return ("t", v.encode("utf-8", "surrogatepass"))
        if isinstance(v, (bytes, bytearray)):
            return ("t", bytes(v))
        return ("other", v)

    def _pairs(self, v: Any) -> list[tuple[Any, Any]] | None:
        """A container's (key, value) pairs as the reader gives them for the target."""
        if isinstance(v, LuaTable):
            return list(v.items)
        if isinstance(v, dict):
            return list(v.items())
        if isinstance(v, (list, tuple)):
            return [(float(i + 1) if self.lua else i, x) for i, x in enumerate(v)]
        return None

    def _container(self, m: Any, g: Any, k: tuple[Any, ...]) -> list[tuple[Any, Any, tuple[Any, ...]]]:
        if self.lua:  # a table, or a tds.Vec's payload: a list on both sides
            if not isinstance(g, LuaTable) and type(g) is not type(m):
                raise Lost(k, f"a {type(m).__name__} reads back as {type(g).__name__}, not a table")
        elif isinstance(m, LuaTable) or (type(g) is not type(m) and not (
                isinstance(m, dict) and isinstance(g, dict))):
            raise Lost(k, f"a {type(m).__name__} reads back as {type(g).__name__}")
        mine, theirs = self._pairs(m), self._pairs(g)
        assert mine is not None and theirs is not None
        if len(mine) != len(theirs):
            raise Lost(k, f"{len(mine)} entries meant, {len(theirs)} read back")
        out: list[tuple[Any, Any, tuple[Any, ...]]] = []
        for (mk, mv), (gk, gv) in zip(mine, theirs, strict=True):
            here = (*k, mk)
            out.extend(self._one(mk, gk, here))  # a key is a leaf, or a tuple checked here
            out.append((mv, gv, here))
        return out

    def _tensor(self, m: Tensor, g: Any, k: tuple[Any, ...]) -> list[Any]:
        if not isinstance(g, Tensor) or type(g) is not type(m):
            raise Lost(k, f"a tensor reads back as {type(g).__name__}")
        if g.dtype.name != m.dtype.name:
            raise Lost(k, f"a {m.dtype.name} tensor reads back as {g.dtype.name}")
        if not self.lua and (g.requires_grad != m.requires_grad or g.parameter != m.parameter):
            raise Lost(k, "requires_grad or Parameter changed")
        mv, gv = (torch_view(m), torch_view(g)) if not self.lua else (m, g)
        shape_m = mv.shape if mv.shape or mv.lua or not self.lua else (1,)  # a 0-d tensor is 1-d in Lua
        if tuple(gv.shape) != tuple(shape_m):
            raise Lost(k, f"shape {list(gv.shape)} read back, {list(shape_m)} meant")
        if m.dtype.quantized or 0 in shape_m or (mv.lua and not mv.shape):  # no element to compare
            return []
        if len(shape_m) > NUMPY_MAX_DIMS:  # numpy holds no such array: the storages' elements and the view
            if (mv.storage_offset, mv.stride) != (gv.storage_offset, gv.stride):
                raise Lost(k, "the view of its storage changed")
            return [(mv.storage, gv.storage, k)]
        _same_values(np.asarray(mv).reshape(shape_m), np.asarray(gv).reshape(shape_m), k)
        return []
