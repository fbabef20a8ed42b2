"""The ``.t7`` object grammar, written once over an :class:`~torchfmt.t7.encodings.Encoding`
(spec/t7.md).

torch7's ``File:readObject`` is recursive; here every composite object (table, torch object, tensor,
function) is a generator that *yields* to ask for its next sub-object, and one loop drives a stack of
them, so nesting costs no Python recursion and is bounded by :data:`torchfmt.limits.T7_DEPTH`, both as
read and as the description will write it.  Nothing read is ever executed: function bytecode stays bytes.
The limits are :mod:`torchfmt.limits`' (spec/t7.md#t7-limits); the pattern matched on file data
(:data:`_LUA_NUMBER`) is taken by its first, greedy match, so it runs in linear time.
"""

from __future__ import annotations

import gc
import math
import operator
import os
import re
import struct
from collections.abc import Generator
from dataclasses import dataclass
from types import GeneratorType
from typing import Any

from .. import fast
from ..errors import FormatError, Unsupported
from ..limits import T7_DEPTH, T7_NDIM, T7_OBJECTS, VIEW_BYTES
from ..model import Document, LuaFunction, LuaTable, Storage, Tensor, TorchObject
from ..walk import children
from . import classes
from .detection import sniff_byte_order, sniff_mode
from .encodings import AsciiEncoding, BinaryEncoding, Encoding, Hints

# -- the type codes (spec/t7.md#t7-type-codes) ------------------------------------------------------
NIL = 0
NUMBER = 1
STRING = 2
TABLE = 3
TORCH = 4
BOOLEAN = 5
FUNCTION = 6
LEGACY_RECUR_FUNCTION = 7
RECUR_FUNCTION = 8

#: Every type code, its name in torch7's File.lua, and whether it carries a reference index.
TYPE_CODES: dict[int, tuple[str, bool]] = {
    NIL: ("TYPE_NIL", False),
    NUMBER: ("TYPE_NUMBER", False),
    STRING: ("TYPE_STRING", False),
    TABLE: ("TYPE_TABLE", True),
    TORCH: ("TYPE_TORCH", True),
    BOOLEAN: ("TYPE_BOOLEAN", False),
    FUNCTION: ("TYPE_FUNCTION", False),
    LEGACY_RECUR_FUNCTION: ("LEGACY_TYPE_RECUR_FUNCTION", True),
    RECUR_FUNCTION: ("TYPE_RECUR_FUNCTION", True),
}

FUNCTION_KINDS = {FUNCTION: "function", LEGACY_RECUR_FUNCTION: "legacy_recursive",
                  RECUR_FUNCTION: "recursive"}
#: What a back-reference's type code says the indexed object is (spec/t7.md#t7-reference-index).
REFERENCE_KINDS = {TABLE: "table", TORCH: "torch object", LEGACY_RECUR_FUNCTION: "function",
                   RECUR_FUNCTION: "function"}


class _Pending:
    """The index of a tensor whose storage is still being read."""


_PENDING = _Pending()


class _Slow:
    """What a fast path returns when the checked path must read the object (spec/t7.md#t7-tensor)."""


_SLOW = _Slow()
# A sub-object request: None (any object) or the message for an object that must be a table.
_Request = str | None
_Reader = Generator[_Request, Any, Any]


def lua_string(raw: bytes) -> str | bytes:
    """A Lua string: ``str`` when its bytes are valid UTF-8, else ``bytes`` (spec/t7.md#t7-string)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw


#: Characters of file data an error message quotes at most.
_QUOTE = 40


def _show(value: Any) -> str:
    """A short escaped rendering of a value from the file for an error message: a prefix of a string,
    a number, or only the kind of a composite object (never its repr, which would walk it)."""
    if isinstance(value, (str, bytes)):
        text = ascii(value[:_QUOTE])
        return text[:_QUOTE] + "..." if len(value) > _QUOTE or len(text) > _QUOTE else text
    if value is None or isinstance(value, (bool, float)):
        return repr(value)
    return f"a {_kind(value)}"


def _kind(obj: Any) -> str:
    if isinstance(obj, LuaTable):
        return "table"
    if isinstance(obj, (TorchObject, Tensor, Storage, _Pending)):
        return "torch object"
    return "function"


def _key_identity(key: Any, at: int) -> tuple[str, Any]:
    """How Lua tells table keys apart; nil and NaN cannot be keys (spec/t7.md#t7-table)."""
    if key is None:
        raise FormatError("bad-value", at, "a table key is nil")
    if isinstance(key, float):
        if math.isnan(key):
            raise FormatError("bad-value", at, "a table key is NaN")
        return ("number", key + 0.0)  # -0.0 and 0.0 are one key
    if isinstance(key, (str, bytes, bool)):
        return (type(key).__name__, key)
    return ("object", id(key))


class ObjectReader:
    """Reads the objects of one stream; the reference table spans the whole stream
    (spec/t7.md#t7-stream)."""

    def __init__(self, enc: Encoding, max_depth: int = T7_DEPTH.value,
                 max_objects: int = T7_OBJECTS.value, fd: int | None = None) -> None:
        self.enc = enc
        self.max_depth = max_depth
        self.max_objects = max_objects
        #: Objects begun so far, back-references included (spec/t7.md#t7-limits).
        self.count = 0
        #: Index i holds the object whose reference index is i + 1.
        self.objects: list[Any] = []
        #: Composite values made (tables, torch objects and their table or list, functions): the
        #: description nests no deeper than this (see :func:`_read_with`).
        self.composites = 0
        #: The composite readers open in :meth:`read_object` (their count is the nesting depth).
        self._stack: list[_Reader] = []
        #: The fast paths read binary streams only, and never when :data:`torchfmt.fast.ENABLED` is off.
        self._fast = fast.ENABLED and type(enc) is BinaryEncoding
        #: The open file ``enc.buf`` maps, if any: :meth:`_fast_run` reads headers after big storages
        #: from it.
        self._fd = fd if self._fast and _PREAD is not None else None
        if self._fast:
            assert isinstance(enc, BinaryEncoding)
            e = "<" if enc.byte_order == "little" else ">"
            self._int = struct.Struct(e + "i").unpack_from
            self._int2 = struct.Struct(e + "ii").unpack_from
            self._double = struct.Struct(e + "d").unpack_from
            self._long = struct.Struct(e + ("q" if enc.long_size == 8 else "i")).unpack_from
            #: The header of every tensor and storage torch7 writes: the length 3 and ``V 1``.
            self._version_header = struct.pack(e + "i", 3) + b"V 1"
            #: The layout of the last tensor read with a new storage: the next is likely the same.
            self._layout: _Layout | None = None
            #: Every layout met, by tensor class block and dimension count (up to :data:`_LAYOUTS`): a
            #: state_dict's tensors take turns among a few (a weight, then its bias).
            self._layouts: dict[tuple[bytes, int], _Layout] = {}
            #: The views :meth:`_fast_run` has read, by element width, then sizes and strides (see
            #: :func:`_run_view`).
            self._views: dict[int, dict[tuple[int, ...], Any]] = {}
            #: ``unpack_from`` of a tensor's sizes, strides and offset, by dimension count.
            self._geometry = _GeometryStructs(e + ("q" if enc.long_size == 8 else "i"))

    # -- the stream and the driver -----------------------------------------------------------------
    def read_stream(self) -> list[Any]:
        """Every top-level object until the end of the stream (spec/t7.md#t7-stream)."""
        out = []
        while not self.enc.at_end():
            out.append(self.read_object())
        if not out:
            raise FormatError("truncated", self.enc.pos, "the stream holds no object")
        return out

    def read_object(self) -> Any:
        """One object, driving the composite readers with an explicit stack."""
        stack: list[_Reader] = []
        self._stack = stack
        value = self._begin(None)
        while True:
            if isinstance(value, GeneratorType):
                if len(stack) >= self.max_depth:
                    raise FormatError("limit-exceeded", self.enc.pos,
                                      f"objects nest deeper than {self.max_depth}")
                stack.append(value)
                send = None
            elif not stack:
                return value
            else:
                send = value
            try:
                request = stack[-1].send(send)
            except StopIteration as done:
                stack.pop()
                value = done.value
                continue
            value = self._begin(request)

    def _begin(self, table_only: _Request) -> Any:
        """Read a type code and either finish a simple value or return the generator that reads a
        composite one.  ``table_only`` (a message) demands a table (spec/t7.md#t7-type-codes)."""
        enc = self.enc
        at = enc.pos
        self.count += 1
        if self.count > self.max_objects:
            raise FormatError("limit-exceeded", at, f"the stream holds more than {self.max_objects} objects")
        code = enc.read_int()
        if code not in TYPE_CODES:
            raise FormatError("bad-type-code", at, f"unknown type code {code}")
        if table_only is not None and code != TABLE:
            raise FormatError("bad-value", at, f"{table_only}, found type code {code}")
        if code == NIL:
            return None
        if code == NUMBER:
            return enc.read_double()
        if code == STRING:
            return lua_string(enc.read_chars(self._count("string length", 1)))
        if code == BOOLEAN:
            flag = enc.read_int()
            if flag not in (0, 1):
                raise FormatError("bad-value", at, f"boolean {flag} is neither 0 nor 1")
            return flag == 1
        if code == FUNCTION:
            return self._function(code, at)
        index_at = enc.pos
        index = enc.read_int()
        if 1 <= index <= len(self.objects):
            return self._reference(code, index, index_at)
        if index != len(self.objects) + 1:
            raise FormatError("bad-reference", index_at,
                              f"index {index} is neither a known object nor the next new one "
                              f"({len(self.objects) + 1})")
        if code == TABLE:
            return self._table()
        if code == TORCH:
            return self._torch()
        return self._function(code, at)

    def _reference(self, code: int, index: int, at: int) -> Any:
        """A back-reference (spec/t7.md#t7-reference-index)."""
        obj = self.objects[index - 1]
        if obj is _PENDING:
            raise FormatError("bad-reference", at, f"index {index} names a tensor still being read")
        if _kind(obj) != REFERENCE_KINDS[code]:
            raise FormatError("bad-reference", at, f"type code {code} refers to index {index}, "
                                                   f"a {_kind(obj)}, not a {REFERENCE_KINDS[code]}")
        return obj

    def _count(self, what: str, item_size: int) -> int:
        """A count or length (an int), checked against the bytes left (spec/t7.md#t7-limits)."""
        at = self.enc.pos
        n = self.enc.read_int()
        return self._check_count(n, what, item_size, at)

    def _check_count(self, n: int, what: str, item_size: int, at: int) -> int:
        if n < 0:
            raise FormatError("bad-length", at, f"negative {what} {n}")
        if n * item_size > self.enc.remaining():
            raise FormatError("truncated", at, f"{what} {n} needs at least {n * item_size} bytes, "
                                               f"{self.enc.remaining()} left",
                              needed_end=self.enc.pos + n * item_size)
        return n

    # -- tables (spec/t7.md#t7-table) ------------------------------------------------------------------
    def _table(self) -> _Reader | LuaTable:
        table = LuaTable()
        self.composites += 1
        self.objects.append(table)
        n = self._count("table size", 2 * self.enc.min_object_size)
        return self._pairs(table, n, "table") if n else table  # an empty table needs no reader

    def _pairs(self, table: LuaTable, n: int, what: str, tds: bool = False) -> _Reader:
        seen: set[tuple[str, Any]] = set()
        seen_strings: set[str] = set()  # the keys whose identity is ("str", key), by far the most
        enc = self.enc
        fast = self._fast and not tds
        fast_simple, fast_tensor, append = self._fast_simple, self._fast_tensor, table.items.append
        if fast:
            unpack_int2 = self._int2
            buf = enc.buf
            size = enc.size
        left = n
        while left:
            if fast and self._layout is not None:
                done = self._fast_run(table.items, seen_strings, left)
                if done:
                    left -= done
                    continue
            left -= 1
            key_at = pos = enc.pos
            key = _SLOW
            if fast:
                # a string key, as _fast_simple reads it (inline: it is most keys of a state_dict)
                if pos + 8 <= size and self.count < self.max_objects:
                    code, length = unpack_int2(buf, pos)
                    end = pos + 8 + length
                    if code == STRING and 0 <= length and end <= size:
                        raw = bytes(buf[pos + 8:end])
                        try:
                            key = raw.decode("utf-8")
                        except UnicodeDecodeError:
                            key = raw
                        self.count += 1
                        enc.pos = end
                if key is _SLOW:
                    key = fast_simple()
            if key is _SLOW:
                key = yield None
            value = fast_tensor() if fast else _SLOW
            if value is _SLOW:
                value = yield None
            if type(key) is str:
                if key in seen_strings:
                    raise FormatError("bad-value", key_at, f"{what} key {_show(key)} appears twice")
                seen_strings.add(key)
            else:
                ident = _key_identity(key, key_at)
                if tds and ident[0] not in ("number", "str", "bytes"):
                    raise FormatError("bad-value", key_at, "a tds.Hash key is neither a string nor a number")
                if ident in seen:
                    raise FormatError("bad-value", key_at, f"{what} key {_show(key)} appears twice")
                seen.add(ident)
                if not tds and ident[0] == "number":
                    key = ident[1]  # LuaJIT keys a table by the integer -0.0 equals: 0; tds keeps -0.0
            if value is not None:  # torch7 assigns t[k] = v: a nil value leaves no entry
                append((key, value))
        return table

    # -- the fast paths (spec/t7.md#t7-tensor) --------------------------------------------------
    # A state_dict-like table is a string or number key and a tensor with its storage per entry.  These
    # read exactly such an entry in one go in a binary stream; on anything else, and on anything the
    # checked path would reject, they leave the reader as it was and return _SLOW, so that the checked
    # path (_begin and the composite readers) reads the same bytes and raises its own error.  A test
    # reads every case both ways (reference_impl/tests/test_t7_fast_path.py).

    def _fast_run(self, items: list[tuple[Any, Any]], seen_strings: set[str], left: int) -> int:
        """Read into a table's ``items`` up to ``left`` entries in a row that are a new UTF-8 string key
        and a tensor laid out as the last one (see :class:`_Layout`) over a new storage whose elements
        hold its view; stop before the first entry that is anything else (the per-entry path reads it,
        and raises any error).  The number of entries read.  After a storage of :data:`_PEEK_AFTER`
        bytes or more, the next entry is read with ``pread`` from the file when there is one: its page of
        the map is not touched (a page fault costs some four times a small ``pread``), and its bytes are
        the map's."""
        layout = self._layout
        assert layout is not None
        if len(self._stack) >= self.max_depth:
            return 0
        enc = self.enc
        buf, size, pos, fd = enc.buf, enc.size, enc.pos, self._fd
        objects = self.objects
        # each entry is three objects: the key, the tensor and its storage
        left = min(left, (self.max_objects - self.count) // 3)
        unpack_int2, layouts, byte_order = self._int2, self._layouts, enc.byte_order
        new, storage_init, tensor_init = object.__new__, Storage.__init__, Tensor.__init__
        index = len(objects) + 1  # the tensor's reference index (its storage's is the next)
        peek, pread = fd is not None, _PREAD
        read_at = -1  # where the bytes read with pread begin
        done = 0
        switch = True  # to the layout's values
        while done < left:
            if switch:
                switch = False
                keyed, lsize, ndim, fixed = layout.keyed, layout.size, layout.ndim, layout.fixed
                dtype, device = layout.info.dtype, layout.info.device
                if dtype is None or (dtype.name == "int64" and enc.long_size != dtype.itemsize):
                    break  # widened: the encoding's own reading
                width = dtype.itemsize
                last_geometry = 5 + 2 * ndim  # the offset in the unpacked key and layout
                views = self._views.setdefault(width, {})
                # a storage of peek_n elements or more has _PEEK_AFTER bytes or more
                peek_n = -(-_PEEK_AFTER // width) if fd is not None else size + 1
                geometry = view = None
            if not peek:
                src, base = buf, 0
            elif read_at != pos:  # the entry from bytes read at pos, rather than from the map
                src, base = pread(fd, _PEEK, pos), pos
                read_at = pos
            q = pos - base
            try:
                code, length = unpack_int2(src, q)
                if code != STRING or length < 0:
                    break
                kq = q + 8 + length  # the tensor, in src
                unpack = keyed.get(length) or layout.with_key(length)
                f = unpack(src, q + 8)  # the key's bytes, then the layout's fields
                if _KEYED_FIXED_FIELDS(f) != fixed:
                    # laid out as another tensor read before?  (A guess the next unpack checks.)
                    nlen = unpack_int2(src, kq + 15)[0]  # the class name's length (and one int more)
                    block = bytes(src[kq + 8:kq + 19 + nlen])
                    other = layouts.get((block, unpack_int2(src, kq + 19 + nlen)[0]))
                    if other is None or other is layout:
                        break
                    layout = self._layout = other
                    switch = True
                    continue  # the same entry, from the same src
            except struct.error:  # past the end of src
                if peek:  # of what was read: read the entry from the map
                    peek = False
                    continue
                break
            if f[2] != index or f[-3] != index + 1:
                break
            n = f[-1]
            p = base + kq + lsize
            end = p + n * width
            if n < 0 or end > size:
                break
            if f[5:last_geometry] != geometry:
                geometry = f[5:last_geometry]
                view = views.get(geometry) or _run_view(views, geometry, ndim, width)
            if view is _SLOW:
                break
            sizes, strides, numel, reach = view
            offset = f[last_geometry] - 1
            # the view's elements lie inside the storage (_check_view's test)
            if offset < 0 or numel > n or offset + reach >= n:
                break
            try:
                key = f[0].decode("utf-8")
            except UnicodeDecodeError:
                break
            if key in seen_strings:
                break
            # Storage(dtype, n, device, buf[p:end], byte_order) and Tensor(dtype, sizes, strides, offset,
            # storage, device=device, lua=True), as the class calls do them (new, then __init__) with
            # every field given in order: a plain call of a Python function is much faster (the test
            # compares every field with the checked path's objects)
            storage = new(Storage)
            storage_init(storage, dtype, n, device, buf[p:end], byte_order, None, None, False, False)
            tensor = new(Tensor)
            tensor_init(tensor, dtype, sizes, strides, offset, storage, device,
                        False, False, False, False, {}, True)
            objects.append(tensor)
            objects.append(storage)
            seen_strings.add(key)
            items.append((key, tensor))
            index += 2
            pos = end
            peek = n >= peek_n
            done += 1
        if done:
            self.count += 3 * done
            enc.pos = pos
            enc.longs_read = True
        return done

    def _fast_simple(self) -> Any:
        """A string or number, as ``_begin(None)`` reads it, or ``_SLOW``."""
        enc = self.enc
        pos = enc.pos
        size = enc.size
        if self.count >= self.max_objects or pos + 8 > size:
            return _SLOW
        code, n = self._int2(enc.buf, pos)
        if code == STRING:
            end = pos + 8 + n
            if n < 0 or end > size:
                return _SLOW
            raw = bytes(enc.buf[pos + 8:end])
            try:
                value: Any = raw.decode("utf-8")
            except UnicodeDecodeError:
                value = raw
        elif code == NUMBER:
            end = pos + 12
            if end > size:
                return _SLOW
            value = self._double(enc.buf, pos + 4)[0]
        else:
            return _SLOW
        self.count += 1
        enc.pos = end
        return value

    def _fast_class(self, p: int, known: dict[bytes, classes.ClassInfo]
                    ) -> tuple[classes.ClassInfo, int] | None:
        """The class at ``p`` (a ``V 1`` header and a name in ``known``) and where it ends, or None."""
        enc = self.enc
        buf = enc.buf
        if p + 11 > enc.size or buf[p:p + 7] != self._version_header:
            return None
        nlen = self._int(buf, p + 7)[0]
        p += 11
        if nlen < 0 or p + nlen > enc.size:
            return None
        info = known.get(bytes(buf[p:p + nlen]))
        return None if info is None else (info, p + nlen)

    def _fast_tensor(self) -> Any:
        """A tensor whose storage is new, a back-reference or nil, as ``_begin(None)`` and the tensor and
        storage readers read it, or ``_SLOW`` with the reader unchanged."""
        enc = self.enc
        pos = enc.pos
        nobj = len(self.objects)
        if self.count + 2 > self.max_objects or len(self._stack) >= self.max_depth:
            return _SLOW
        layout = self._layout
        f = None
        if layout is not None and pos + layout.size <= enc.size:
            f = layout.unpack(enc.buf, pos)
            if (f[1] != nobj + 1 or f[-3] != nobj + 2 or f[0] != TORCH or f[-4] != TORCH
                    or f[3] != layout.ndim or f[2] != layout.tensor_block or f[-2] != layout.storage_block):
                f = None
        if f is not None:  # laid out as the last tensor: one unpack read it (see _Layout)
            info, ndim, geometry, b, storage, n = layout.info, layout.ndim, f, 4, _NEW, f[-1]
            p = pos + layout.size
            at = p - layout.tail
        else:
            head = self._fast_head(pos, nobj)
            if head is None:
                return _SLOW
            info, ndim, geometry, at, p, storage, n = head
            b = 0
        # sizes, strides and offset are geometry[b:b + 2 * ndim + 1]
        dtype = info.dtype
        assert dtype is not None
        sizes = geometry[b:b + ndim]
        strides = geometry[b + ndim:b + 2 * ndim]
        offset = geometry[b + 2 * ndim] - 1
        if offset < 0 or (ndim and (min(sizes) < 0 or min(strides) < 0)):
            return _SLOW
        if storage is _NEW:
            if dtype.name == "int64":  # a 4-byte-long file widens it: the encoding's own reading
                if n < 0 or p + n * enc.long_size > enc.size:
                    return _SLOW
                enc.pos = p
                storage = enc.read_storage(dtype, n, info.device)
                p = enc.pos
            else:  # as BinaryEncoding.read_storage: a zero-copy slice of the file
                end = p + n * dtype.itemsize
                if n < 0 or end > enc.size:
                    return _SLOW
                storage = Storage(dtype, n, info.device, enc.buf[p:end], enc.byte_order)
                p = end
            new = True
        else:
            new = False
        # A one- or two-dimensional view whose elements lie inside its storage passes _check_view (a
        # storage's bytes fit the file, so its elements fit 64-bit byte offsets); any other view is
        # checked by it.
        numel = 0
        if ndim == 1:
            numel, top = sizes[0], strides[0]
            last = offset + (numel - 1) * top
        elif ndim == 2:
            (n0, n1), (s0, s1) = sizes, strides
            numel, top = n0 * n1, max(s0, s1)
            last = offset + (n0 - 1) * s0 + (n1 - 1) * s1
        if not (numel and storage is not None and numel <= storage.numel and last < storage.numel
                and dtype.itemsize * top < 1 << 63):
            try:
                _check_view(sizes, strides, offset, storage, at)
            except FormatError:
                enc.pos = pos
                return _SLOW
        tensor = Tensor(dtype, sizes, strides, offset, storage, device=info.device, lua=True)
        self.objects.append(tensor)
        if new:
            self.objects.append(storage)
        enc.pos = p
        enc.longs_read = True
        self.count += 2
        return tensor

    def _fast_head(self, pos: int, nobj: int) -> _Head | None:
        """The class and geometry of a tensor at ``pos`` with a nil, known or new storage of its class
        (:data:`_NEW`: its size follows); None for anything else.  A tensor with a new storage makes the
        reader's :class:`_Layout`."""
        enc = self.enc
        buf = enc.buf
        size = enc.size
        if pos + 8 > size:
            return None
        code, index = self._int2(buf, pos)
        if code != TORCH or index != nobj + 1:
            return None
        found = self._fast_class(pos + 8, _TENSOR_CLASSES)
        if found is None:
            return None
        info, p = found
        tensor_block = bytes(buf[pos + 8:p])
        if p + 4 > size:
            return None
        ndim = self._int(buf, p)[0]
        p += 4
        long_size = enc.long_size
        if not 0 <= ndim <= T7_NDIM.value or p + (2 * ndim + 1) * long_size > size:
            return None
        geometry = self._geometry[ndim](buf, p)
        p += (2 * ndim + 1) * long_size
        at = p
        if p + 8 > size:
            return None
        scode, sindex = self._int2(buf, p)
        if scode == NIL:
            return info, ndim, geometry, at, p + 4, None, 0
        if scode != TORCH:
            return None
        p += 8
        if 1 <= sindex <= nobj:
            storage = self.objects[sindex - 1]
            if (type(storage) is not Storage or storage.dtype is not info.dtype
                    or storage.device != info.device):
                return None
            return info, ndim, geometry, at, p, storage, 0
        if sindex != nobj + 2:
            return None
        found = self._fast_class(p, _STORAGE_CLASSES)
        if found is None:
            return None
        sinfo, end = found
        if sinfo.dtype is not info.dtype or sinfo.device != info.device or end + long_size > size:
            return None
        storage_block = bytes(buf[p:end])
        n = self._long(buf, end)[0]
        known = self._layouts.get((tensor_block, ndim))
        if known is None or known.storage_block != storage_block or known.info is not info:
            known = _Layout(self._geometry.code, tensor_block, ndim, storage_block, info)
            if len(self._layouts) < _LAYOUTS:
                self._layouts[tensor_block, ndim] = known
        self._layout = known
        return info, ndim, geometry, at, end + long_size, _NEW, n

    # -- torch objects (spec/t7.md#t7-torch-object) ------------------------------------------------
    def _torch(self) -> Any:
        enc = self.enc
        first_at = enc.pos
        first = enc.read_chars(self._count("class header length", 1))
        version = _version(first)
        if version is None:
            name_bytes, name_at = first, first_at  # written before versioning: the class name itself
        else:
            name_at = enc.pos
            name_bytes = enc.read_chars(self._count("class name length", 1))
        try:
            name = name_bytes.decode("utf-8")
        except UnicodeDecodeError:
            raise FormatError("bad-value", name_at,
                              f"class name {_show(name_bytes)} is not UTF-8") from None
        if not name:
            raise FormatError("bad-value", name_at, "empty class name")
        info = classes.lookup(name)
        if info.kind == classes.TENSOR:
            return self._tensor(info)
        if info.kind == classes.STORAGE:
            return self._storage(info)
        if info.kind == classes.DECLINED:
            raise Unsupported(f"t7 class {info.why}")
        self.composites += 2  # the object, and the table or list it may hold
        if info.kind == classes.TDS_HASH:
            obj = TorchObject(name, version, LuaTable())
            self.objects.append(obj)
            n = self._long_count("tds.Hash size", 2 * enc.min_object_size)
            return self._tds_hash(obj, n)
        if info.kind == classes.TDS_VEC:
            obj = TorchObject(name, version, [])
            self.objects.append(obj)
            n = self._long_count("tds.Vec size", enc.min_object_size)
            return self._tds_vec(obj, n)
        obj = TorchObject(name, version, None)
        self.objects.append(obj)
        return self._generic(obj)

    def _long_count(self, what: str, item_size: int) -> int:
        at = self.enc.pos
        return self._check_count(self.enc.read_long(), what, item_size, at)

    def _generic(self, obj: TorchObject) -> _Reader:
        """Any other class: one table of fields (spec/t7.md#t7-custom-write)."""
        obj.value = yield (f"the payload of torch class {_show(obj.class_name)} must be a table of fields "
                           f"(a class with its own write() is not readable generically)")
        return obj

    def _tds_hash(self, obj: TorchObject, n: int) -> _Reader:
        yield from self._pairs(obj.value, n, "tds.Hash", tds=True)
        return obj

    def _tds_vec(self, obj: TorchObject, n: int) -> _Reader:
        for _ in range(n):
            obj.value.append((yield None))
        return obj

    # -- tensors and storages (spec/t7.md#t7-tensor, #t7-storage) ---------------------------------
    def _tensor(self, info: classes.ClassInfo) -> _Reader:
        enc = self.enc
        slot = len(self.objects)
        self.objects.append(_PENDING)
        ndim_at = enc.pos
        ndim = enc.read_int()
        if ndim < 0:
            raise FormatError("bad-length", ndim_at, f"negative tensor dimension count {ndim}")
        self._check_count(2 * ndim + 1, "tensor sizes, strides and offset", enc.min_long_size, ndim_at)
        if ndim > T7_NDIM.value:
            raise FormatError("limit-exceeded", ndim_at, f"{ndim} dimensions (at most {T7_NDIM.value})")
        sizes = self._non_negative_longs(ndim, "size")
        strides = self._non_negative_longs(ndim, "stride")
        offset_at = enc.pos
        offset = enc.read_long() - 1  # the file holds the 1-based Lua offset
        if offset < 0:
            raise FormatError("out-of-bounds", offset_at, f"storage offset {offset + 1} is below 1")
        return self._tensor_storage(info, slot, tuple(sizes), tuple(strides), offset, enc.pos)

    def _non_negative_longs(self, n: int, what: str) -> list[int]:
        at = self.enc.pos
        values = self.enc.read_longs(n)
        if any(v < 0 for v in values):
            raise FormatError("bad-length", at, f"negative tensor {what} in {values}")
        return values

    def _tensor_storage(self, info: classes.ClassInfo, slot: int, sizes: tuple[int, ...],
                        strides: tuple[int, ...], offset: int, at: int) -> _Reader:
        storage = yield None
        if storage is not None and not (isinstance(storage, Storage) and storage.dtype is info.dtype
                                        and storage.device == info.device):
            raise FormatError("bad-value", at, f"a {info.device} {info.dtype} tensor's storage is "
                                               f"{type(storage).__name__}, not a matching storage")
        assert info.dtype is not None
        _check_view(sizes, strides, offset, storage, at)
        tensor = Tensor(info.dtype, sizes, strides, offset, storage, device=info.device, lua=True)
        self.objects[slot] = tensor
        return tensor

    def _storage(self, info: classes.ClassInfo) -> Storage:
        at = self.enc.pos
        n = self.enc.read_long()
        if n < 0:
            raise FormatError("bad-length", at, f"negative storage size {n}")
        assert info.dtype is not None
        storage = self.enc.read_storage(info.dtype, n, info.device)
        self.objects.append(storage)
        return storage

    # -- functions (spec/t7.md#t7-function) --------------------------------------------------------
    def _function(self, code: int, at: int) -> _Reader:
        bytecode = self.enc.read_chars(self._count("bytecode length", 1))
        func = LuaFunction(FUNCTION_KINDS[code], bytecode, [], offset=at)
        self.composites += 1
        if code != FUNCTION:  # type 6 has no index and cannot be shared
            self.objects.append(func)
        return self._upvalues(func, code)

    def _upvalues(self, func: LuaFunction, code: int) -> _Reader:
        at = self.enc.pos
        table = yield "a function's upvalues must be a table"
        values = _sequence(table, at, "upvalue table")
        if code == RECUR_FUNCTION and not all(isinstance(v, LuaTable) for v in values):
            raise FormatError("bad-value", at, "a type 8 upvalue is not a {name, value} table")
        func.upvalues.extend(values)
        return func


def _version(header: bytes) -> str | None:
    """The text after ``V `` when ``header`` is a version string ``V <number>``, else ``None``
    (spec/t7.md#t7-class-version)."""
    if not header.startswith(b"V "):
        return None
    text = header[2:]
    if not _is_lua_number(text):
        return None
    return text.decode("ascii")


#: The number LuaJIT 2.1's ``tonumber`` accepts (decimal, hexadecimal with an optional fraction and binary
#: exponent, ``0b`` binary, ``inf``, ``infinity``, ``nan``), without the whitespace around it.  Each part
#: (digits, fraction, exponent) is a maximal run, so the longest match is the greedy first one:
#: :func:`_is_lua_number` takes it with ``match`` (no backtracking) and compares its end with the
#: text's.  ``fullmatch`` would backtrack through every digit of ``V 111...1x`` (4 s for 16 MB), and the
#: former pattern ``[0-9]+\.?[0-9]*``, with n ways to split a run of digits, took 17 s for 30 KB.
_LUA_NUMBER = re.compile(
    rb"[+-]?(?:0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    rb"|0[bB][01]+"
    rb"|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    rb"|(?i:inf(?:inity)?|nan))")
_LUA_SPACE = b" \t\n\v\f\r"


def _is_lua_number(text: bytes) -> bool:
    """Whether Lua's ``tonumber`` accepts ``text`` (decimal or hexadecimal, surrounding spaces), in time
    linear in its length (spec/t7.md#t7-class-version, #t7-limits)."""
    core = text.strip(_LUA_SPACE)
    m = _LUA_NUMBER.match(core)
    return m is not None and m.end() == len(core)


def _sequence(table: LuaTable, at: int, what: str) -> list[Any]:
    """The values of a table whose keys are exactly 1..n (spec/t7.md#t7-function)."""
    by_key: dict[float, Any] = {}
    for key, value in table.items:
        if not (isinstance(key, float) and key.is_integer() and key >= 1):
            raise FormatError("bad-value", at, f"{what} has the key {_show(key)}; expected 1..n")
        by_key[key] = value
    n = len(by_key)
    if max(by_key, default=0.0) != n:
        raise FormatError("bad-value", at, f"{what} keys are not 1..{n}")
    return [by_key[float(i)] for i in range(1, n + 1)]


def _check_view(sizes: tuple[int, ...], strides: tuple[int, ...], offset: int,
                storage: Storage | None, at: int) -> None:
    """A view's elements must lie inside its storage (spec/t7.md#t7-tensor-offset).  Sizes, strides and
    the offset count elements, are not negative and are below 2^63 (a long holds no more); a tensor with a
    size 0 has no element whatever its other sizes, strides and offset (spec/tensors.md#tensors-empty)."""
    numel = math.prod(sizes) if sizes else 0
    if numel == 0:
        return
    if storage is None:
        raise FormatError("out-of-bounds", at, f"a tensor of {numel} elements has no storage")
    if len(sizes) == 1:
        last = offset + (sizes[0] - 1) * strides[0]
    else:
        last = offset + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
    if last >= storage.numel:
        raise FormatError("out-of-bounds", at, f"the view reaches element {last} of a storage of "
                                               f"{storage.numel}")
    if numel > storage.numel and numel * storage.dtype.itemsize > VIEW_BYTES.value:  # t7.md#t7-limits
        raise FormatError("limit-exceeded", at, f"a view of {numel} elements over a storage of "
                                                f"{storage.numel}: over {VIEW_BYTES.value} bytes to hash")


# -- what the fast paths know (spec/t7.md#t7-tensor) ----------------------------------------------
_TENSOR_CLASSES = {name.encode(): info for name, info in classes.CLASSES.items()
                   if info.kind == classes.TENSOR}
_STORAGE_CLASSES = {name.encode(): info for name, info in classes.CLASSES.items()
                    if info.kind == classes.STORAGE}


#: ``os.pread`` where the platform has it.
_PREAD = getattr(os, "pread", None)
#: Bytes of a storage after which :meth:`ObjectReader._fast_run` reads the next entry with ``pread``
#: (the kernel maps a file's pages 64 KiB around each fault: past that, the next page is not mapped yet).
_PEEK_AFTER = 1 << 16
#: Bytes it reads: a key, a tensor and a storage header of a few dimensions.
_PEEK = 1024
#: Distinct views it keeps (:meth:`ObjectReader._run_view`).
_VIEWS = 4096

#: A new storage (its size follows) in a :data:`_Head`.
_NEW = _Pending()
#: A tensor's class, dimension count, sizes-strides-offset, where its storage begins, where the storage
#: ends (a new one: where its elements begin), the storage (None, a known one or _NEW) and a new one's size.
_Head = tuple[classes.ClassInfo, int, tuple[int, ...], int, int, Any, int]


#: The fields of a :class:`_Layout` unpacked after its key's bytes (:meth:`_Layout.with_key`) every
#: tensor laid out so repeats: the two type codes, the class blocks and the dimension count.
_KEYED_FIXED_FIELDS = operator.itemgetter(1, 3, 4, -4, -2)
#: Key lengths a layout keeps a struct for (:meth:`_Layout.with_key`).
_KEY_LENGTHS = 256
#: Layouts a reader keeps.
_LAYOUTS = 64


class _Layout:
    """The bytes of a tensor with a new storage (code, index, class header and name, dimension count,
    geometry, code, index, storage class header and name, size), as one struct; a tensor laid out the
    same way (the same classes and dimension count) is read with one unpack (spec/t7.md#t7-tensor)."""

    def __init__(self, code: str, tensor_block: bytes, ndim: int, storage_block: bytes,
                 info: classes.ClassInfo) -> None:
        order, long_code = code
        self.order = order
        #: The struct's format without its byte order.
        self.format = (f"ii{len(tensor_block)}si{2 * ndim + 1}{long_code}ii"
                       f"{len(storage_block)}s{long_code}")
        layout = struct.Struct(order + self.format)
        self.unpack = layout.unpack_from
        #: ``unpack_from`` of a key's bytes then the layout, by key length (see :meth:`with_key`).
        self.keyed: dict[int, Any] = {}
        self.size = layout.size
        self.tensor_block = tensor_block
        self.storage_block = storage_block
        self.ndim = ndim
        self.info = info
        #: Bytes from the end of the geometry to the end of the layout.
        self.tail = 8 + len(storage_block) + struct.calcsize(order + long_code)
        #: The fields every tensor laid out so repeats (see :data:`_KEYED_FIXED_FIELDS`).
        self.fixed = (TORCH, tensor_block, ndim, TORCH, storage_block)

    def with_key(self, length: int) -> Any:
        """``unpack_from`` of a table entry's key of ``length`` bytes followed by this layout (the key's
        bytes come first), kept for up to :data:`_KEY_LENGTHS` lengths."""
        unpack = struct.Struct(f"{self.order}{length}s{self.format}").unpack_from
        if len(self.keyed) < _KEY_LENGTHS:
            self.keyed[length] = unpack
        return unpack



class _GeometryStructs(dict[int, Any]):
    """``unpack_from`` of ``2 * ndim + 1`` longs (``code``: byte order and long), made when first asked."""

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code

    def __missing__(self, ndim: int) -> Any:
        unpack = self[ndim] = struct.Struct(f"{self.code[0]}{2 * ndim + 1}{self.code[1]}").unpack_from
        return unpack


def _run_view(views: dict[tuple[int, ...], Any], geometry: tuple[int, ...], ndim: int, width: int) -> Any:
    """For :meth:`ObjectReader._fast_run`: the sizes and strides ``geometry`` holds (each tuple made once
    and shared by every tensor of that geometry: fewer objects for the collector), its element count and
    the distance from its first element to its last; ``_SLOW`` for a geometry the per-entry path must read
    (no dimension or no element, a negative size or stride, a stride whose bytes (``width`` each)
    overflow 64 bits).  Kept in ``views``, up to :data:`_VIEWS` of them (spec/t7.md#t7-tensor)."""
    sizes, strides = geometry[:ndim], geometry[ndim:]
    view: Any = _SLOW
    if ndim and min(sizes) > 0 and min(strides) >= 0 and width * max(strides) < 1 << 63:
        reach = sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
        view = (sizes, strides, math.prod(sizes), reach)
    if len(views) < _VIEWS:
        views[geometry] = view
    return view


# -- the whole file (spec/t7.md#t7-detect) -----------------------------------------------------------
#: The values that nest in a ``.t7`` description (each is shareable: spec/canonical.md#canonical-sharing).
_COMPOSITE = (LuaTable, TorchObject, LuaFunction, list)
#: Types of values that never nest (a quick test before ``isinstance(x, _COMPOSITE)``).
_PLAIN = frozenset({str, bytes, float, bool, type(None), Tensor, Storage})


def _check_described_depth(objects: list[Any], limit: int) -> None:
    """Reject a stream whose description would nest deeper than ``limit`` composite values
    (spec/t7.md#t7-limits).

    The description writes a shared object in full where it is first reached and a ``ref`` elsewhere
    (spec/canonical.md#canonical-sharing), in the order of :func:`torchfmt.walk.children`.  That place
    can be deeper than where the object was read: a table kept only as a key with a nil value (no item),
    or an upvalue table, is first reached through a later back-reference, so chains of such tables read
    1,000 deep can be described a million deep.  This walk follows the description's order without
    recursion and measures the depth it will write.
    """
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(o, 0) for o in reversed(objects) if isinstance(o, _COMPOSITE)]
    while stack:
        value, depth = stack.pop()
        if id(value) in seen:
            continue  # written as a ref
        seen.add(id(value))
        depth += 1
        if depth > limit:
            raise FormatError("limit-exceeded", None,
                              f"the description would nest objects deeper than {limit}")
        pairs = value.items if type(value) is LuaTable else ((c, None) for c in children(value))
        kids = [x for kv in pairs for x in kv if type(x) not in _PLAIN and isinstance(x, _COMPOSITE)]
        if kids:
            stack.extend((child, depth) for child in reversed(kids))


def _read_with(enc: Encoding, fd: int | None = None) -> list[Any]:
    # Reading allocates up to T7_OBJECTS objects and nothing is garbage until it ends: the cyclic
    # collector, run every few hundred allocations, would walk the growing graph again and again.
    enabled = gc.isenabled()
    gc.disable()
    try:
        reader = ObjectReader(enc, fd=fd)
        objects = reader.read_stream()
    finally:
        if enabled:
            gc.enable()
    # Each level of the description is a composite value met for the first time, so it nests no deeper
    # than the composite values there are: the walk is needed only where there are more than the limit.
    if reader.composites > T7_DEPTH.value:
        _check_described_depth(objects, T7_DEPTH.value)
    return objects


@dataclass
class _Reading:
    """One reading of a binary stream with one long size: its objects, or the error that ended it."""

    enc: BinaryEncoding
    objects: list[Any] | None = None
    error: FormatError | None = None

    @classmethod
    def of(cls, buf: memoryview, byte_order: str, long_size: int, fd: int | None = None) -> _Reading:
        reading = cls(BinaryEncoding(buf, byte_order, long_size))
        try:
            reading.objects = _read_with(reading.enc, fd)
        except FormatError as e:
            reading.error = e
        return reading

    def document(self, notes: dict[str, Any] | None = None) -> Document:
        assert self.objects is not None
        return Document(self.enc.format, self.objects, {"t7": self.enc.describe()}, notes=notes or {})


def read_t7(buf: bytes | memoryview, hints: Hints, fd: int | None = None) -> Document:
    """Read a whole ``.t7`` stream, detecting what ``hints`` leave open (spec/t7.md#t7-detect).  ``fd``:
    the open file ``buf`` maps, if it is one (some headers are read from it rather than the map)."""
    mv = memoryview(buf).cast("B") if not isinstance(buf, memoryview) or buf.format != "B" else buf
    mode = hints.mode or sniff_mode(mv)
    if mode == "ascii":
        enc: Encoding = AsciiEncoding(mv)
        return Document(enc.format, _read_with(enc), {"t7": enc.describe()})
    byte_order = hints.byte_order or sniff_byte_order(mv) or "little"
    if hints.long_size:
        enc = BinaryEncoding(mv, byte_order, hints.long_size)
        return Document(enc.format, _read_with(enc, fd), {"t7": enc.describe()})
    eight = _Reading.of(mv, byte_order, 8, fd)
    if not eight.enc.longs_read:  # the long size cannot matter
        if eight.error is not None:
            raise eight.error
        return eight.document()
    four = _Reading.of(mv, byte_order, 4, fd)
    if eight.objects is None and four.objects is None:
        # The error of the reading that got further into the file (spec/t7.md#t7-detect).
        assert eight.error is not None and four.error is not None
        raise four.error if four.enc.pos > eight.enc.pos else eight.error
    if four.objects is None:
        return eight.document()
    if eight.objects is None:
        return four.document()
    # Both read the whole stream: torch.save writes one object, so the reading that gives exactly one
    # top-level object wins; if both do, the 8-byte one (every 64-bit build's).  The other reading is
    # kept as a note of the description.
    ones = [r for r in (eight, four) if len(r.objects or ()) == 1]
    if not ones:
        raise FormatError("ambiguous", None,
                          f"the stream reads completely both with 8-byte longs ({len(eight.objects)} "
                          f"objects) and with 4-byte longs ({len(four.objects)} objects), neither as the "
                          f"one object torch.save writes; give the long size as a hint")
    chosen = ones[0]
    other = four if chosen is eight else eight
    why = ("both readings give one object; 8 bytes is every 64-bit build's long" if len(ones) == 2 else
           f"only {chosen.enc.long_size}-byte longs give the one object torch.save writes")
    return chosen.document({"t7_long_size": {
        "long_size": chosen.enc.long_size,
        "why": why,
        "other_reading": {"long_size": other.enc.long_size, "objects": len(other.objects or ()),
                          "document": other.document()},
    }})
