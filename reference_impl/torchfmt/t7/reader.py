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
import re
from collections.abc import Generator
from dataclasses import dataclass
from types import GeneratorType
from typing import Any

from .. import fast
from ..errors import FormatError, Unsupported
from ..fast import t7 as fast_t7
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
        self.stack: list[_Reader] = []
        #: The fast paths (:mod:`torchfmt.fast.t7`): binary streams only, and only when
        #: :data:`torchfmt.fast.ENABLED`; ``fd``, the open file ``enc.buf`` maps, if any, is theirs.
        self.fast = (fast_t7.Entries(enc, _GRAMMAR, fd) if fast.ENABLED and type(enc) is BinaryEncoding
                     else None)

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
        self.stack = stack
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
        entries = None if tds else self.fast
        slow, append = fast_t7.SLOW, table.items.append
        left = n
        while left:
            if entries is not None and entries.layout is not None:
                done = entries.run(self, table.items, seen_strings, left)
                if done:
                    left -= done
                    continue
            left -= 1
            key_at = enc.pos
            key = slow if entries is None else entries.key(self)
            if key is slow:
                key = yield None
            value = slow if entries is None else entries.tensor(self)
            if value is slow:
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


# -- what the fast paths take from this grammar (torchfmt/fast/t7.py) -------------------------------
_GRAMMAR = fast_t7.Grammar(
    nil=NIL, number=NUMBER, string=STRING, torch=TORCH,
    tensors={name.encode(): info for name, info in classes.CLASSES.items() if info.kind == classes.TENSOR},
    storages={name.encode(): info for name, info in classes.CLASSES.items() if info.kind == classes.STORAGE},
    check_view=_check_view)


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
