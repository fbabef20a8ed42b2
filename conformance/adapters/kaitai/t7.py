"""``.t7`` streams through torch_t7.ksy (binary: the four lazy encodings) and torch_t7_ascii.ksy
(spec/t7.md).  The grammars thread the reference index and reject what breaks it; this module gives the
parsed objects their meaning: what a back-reference names, tensors over storages, tables, functions and
torch objects (spec/t7.md#t7-reference-index, #t7-tensor, #t7-torch-object, #t7-function, #t7-tds).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import kaitaistruct
import numpy as np
import torch_t7
import torch_t7_ascii
from kaitaistruct import KaitaiStream

from .describe import describe
from .facts import BY_T7_CLASS, DType, hint_env, limits
from .failure import Decline, Reject, from_kaitai
from .values import LuaFunction, LuaTable, Storage, Tensor, TorchObject

#: ``case.yaml`` key -> the variable that hands it over (spec/canonical.md#canonical-t7-hints).
HINT_ENV = hint_env()
ASCII_START = frozenset(b" \t\n\v\f\r+-0123456789")
FUNCTION_KINDS = {"lua_function": "function", "legacy_recur_function": "legacy_recursive",
                  "recur_function": "recursive"}
#: spec/canonical.md's reader-limits table (spec/t7.md#t7-limits, #t7-tensor).
LIMITS = limits()
MAX_NDIM = LIMITS["T7_NDIM"]
#: Composite objects (tables, torch objects, functions) open at once (spec/t7.md#t7-limits: at least 1,000).
MAX_NESTING = LIMITS["T7_DEPTH"]
#: Objects a stream may begin, back-references included (spec/t7.md#t7-limits).
MAX_OBJECTS = LIMITS["T7_OBJECTS"]
#: What the generated t7 parsers raise on bad input (a negative count fails the grammar's own ``valid``).
_PARSE_ERRORS = (kaitaistruct.KaitaiStructError, EOFError, ValueError, UnicodeDecodeError, OverflowError)


def hints() -> dict[str, str]:
    """The case's hints (spec/canonical.md#canonical-t7-hints), as given."""
    return {k: os.environ[v] for k, v in HINT_ENV.items() if os.environ.get(v)}


def _class_info(name: str) -> tuple[str, DType | None, str]:
    """(kind, dtype, device) of a class name: tensor/storage of a dtype, tds, or generic."""
    for kind, suffix in (("tensor", "Tensor"), ("storage", "Storage")):
        if name.startswith("torch.") and name.endswith(suffix):
            stem = name[len("torch."):-len(suffix)]
            device = "cpu"
            if stem.startswith("Cuda"):
                stem, device = stem[4:] or "Float", "cuda"
            if stem in BY_T7_CLASS:
                return kind, BY_T7_CLASS[stem], device
    if name in ("tds.Hash", "tds_hash"):
        return "tds_hash", None, "cpu"
    if name == "tds.Vec":
        return "tds_vec", None, "cpu"
    if name == "torch.Generator":
        raise Decline("t7 class torch.Generator (its write() dumps a C struct)")
    return "generic", None, "cpu"


def c_double(token: str) -> float:
    """A double as C's strtod reads it (decimal, hexadecimal, inf, nan with a sign)."""
    t = token.strip().lower()
    sign = -1.0 if t.startswith("-") else 1.0
    body = t.lstrip("+-")
    if body == "nan":  # nan(chars) is no token: glibc's fscanf refuses it (spec/t7.md#t7-ascii)
        return math.copysign(math.nan, sign)
    try:
        value = float.fromhex(body) if body.startswith("0x") else float(body)
    except ValueError:
        raise Reject("bad-value", f"{token[:40]!r} is not a number") from None
    return sign * value


_INT_TOKEN = re.compile(r"[+-]?[0-9]+")
#: What LuaJIT 2.1's tonumber accepts (spec/t7.md#t7-class-version).
#: A Lua number without its surrounding whitespace; taken by its greedy first match and compared with
#: the text's end (no backtracking: linear time, spec/t7.md#t7-limits).
_LUA_NUMBER = re.compile(r"[+-]?(?:0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)"
                         r"(?:[pP][+-]?[0-9]+)?|0[bB][01]+|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                         r"|(?i:inf(?:inity)?|nan))", re.ASCII)
#: Nesting of tables, torch objects, functions and tds.Vec lists, as described (spec/t7.md#t7-limits).
MAX_T7_NESTING = MAX_NESTING


def _is_lua_number(text: str) -> bool:
    core = text.strip(" \t\n\v\f\r")
    m = _LUA_NUMBER.match(core)
    return m is not None and m.end() == len(core)


def _int_token(token: str) -> int:
    """An ascii integer token (spec/t7.md#t7-ascii)."""
    if not _INT_TOKEN.fullmatch(token):
        raise Reject("bad-value", f"{token[:40]!r} is not an integer token")
    if len(token.lstrip("+-").lstrip("0")) > 19:  # counted before int(), which refuses 4300+ digits
        raise Reject("bad-value", f"an integer token of {len(token)} characters is out of range")
    return int(token)


def _ascii_floats(tokens: list[str], dtype: DType) -> np.ndarray:
    """Float, Double or Half storage tokens as torch7 reads them (spec/t7.md#t7-ascii): a double
    correctly rounded once; a float rounded once (strtof: a binary64 value exactly halfway between two
    floats is settled by the token's exact value); a half from that float, every NaN 0x7fff."""
    doubles = np.array([c_double(t) for t in tokens], dtype=np.float64)
    if dtype.name == "float64":
        return doubles
    f32 = doubles.astype(np.float32)
    inexact = np.flatnonzero(np.isfinite(doubles) & (f32.astype(np.float64) != doubles))
    for i in inexact:
        d = float(doubles[i])
        if not math.isfinite(float(f32[i])):
            continue
        with np.errstate(over="ignore"):
            other = np.nextafter(f32[i], np.float32(math.inf if float(f32[i]) < d else -math.inf))
        if not math.isfinite(float(other)):
            continue
        mid = (Fraction(float(f32[i])) + Fraction(float(other))) / 2
        if Fraction(d) != mid:
            continue
        exact = _exact(tokens[i])
        if exact is not None and exact != mid:
            f32[i] = f32[i] if (exact < mid) == (float(f32[i]) < float(other)) else other
    if dtype.name == "float32":
        return f32
    halves = f32.astype(np.float16)
    halves.view(np.uint16)[np.isnan(f32)] = 0x7FFF
    return halves


def _exact(token: str) -> Fraction | None:
    t = token.strip().lower()
    sign = -1 if t.startswith("-") else 1
    body = t.lstrip("+-")
    try:
        return sign * (Fraction(float.fromhex(body)) if body.startswith("0x") else Fraction(body))
    except (ValueError, ZeroDivisionError):
        return None


def _key_identity(key: Any) -> tuple[str, Any]:
    if key is None:
        raise Reject("bad-value", "a table key is nil")
    if isinstance(key, float):
        if math.isnan(key):
            raise Reject("bad-value", "a table key is NaN")
        return ("number", key + 0.0)
    if isinstance(key, (str, bytes, bool)):
        return (type(key).__name__, key)
    return ("object", id(key))


def _lua_string(raw: bytes) -> str | bytes:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return bytes(raw)


class _Pending:
    """The index of a tensor whose storage is still being read."""


class Builder:
    """Values from a parsed stream; ``index`` is the stream's reference table (spec/t7.md#t7-stream)."""

    def __init__(self, ascii_mode: bool, long_size: int = 8, big: bool = False) -> None:
        self.ascii = ascii_mode
        self.long_size = long_size
        self.big = big
        self.index: dict[int, Any] = {}
        self.longs_read = False
        self.objects = 0

    # -- scalars of either grammar ------------------------------------------------------------------
    def _int(self, x: Any) -> int:
        return x.value if hasattr(x, "value") else x

    def _tokens(self, arr: Any) -> list[str]:
        """A token array's tokens (torch_t7_ascii.ksy keeps them as bytes it checked to be ASCII)."""
        raw = [*getattr(arr, "leading", []), *([arr.last_token] if hasattr(arr, "last_token") else [])]
        return [bytes(t).decode("ascii") for t in raw]

    def _ints(self, x: Any, n: int) -> list[int]:
        if self.ascii:
            return [_int_token(t) for t in self._tokens(x)]
        return [v.value for v in x]

    # -- objects --------------------------------------------------------------------------------------
    def value(self, o: Any) -> Any:
        self.objects += 1
        if self.objects > MAX_OBJECTS:
            raise Reject("limit-exceeded", f"the stream holds more than {MAX_OBJECTS} objects")
        tc = o.type_code.name
        if tc == "lua_nil":
            return None
        if tc == "number":
            return c_double(o.number.text) if self.ascii else o.number
        if tc == "boolean":
            flag = self._int(o.lua_boolean)
            if flag not in (0, 1):
                raise Reject("bad-value", f"boolean {flag} is neither 0 nor 1")
            return flag == 1
        if tc == "string":
            return _lua_string(o.string.value)
        if tc == "lua_function":
            return self.function(o.lua_function, tc, None)
        ix = o.indexed
        idx = ix.index
        if not ix.is_new:
            return self.reference(tc, idx)
        if tc == "table":
            return self.table(ix.table, idx)
        if tc == "torch":
            return self.torch(ix.torch, idx)
        return self.function(ix.lua_function, tc, idx)

    def reference(self, tc: str, idx: int) -> Any:
        obj = self.index.get(idx)
        if obj is None or isinstance(obj, _Pending):
            raise Reject("bad-reference", f"index {idx} names an object still being read")
        kind = {LuaTable: "table", LuaFunction: "function"}.get(type(obj), "torch")
        want = {"table": "table", "torch": "torch"}.get(tc, "function")
        if kind != want:
            raise Reject("bad-reference", f"a {tc} reference to index {idx}, which is a {kind}")
        return obj

    def table(self, body: Any, idx: int) -> LuaTable:
        t = LuaTable()
        self.index[idx] = t
        self._pairs(t, body.pairs, "table")
        return t

    def _pairs(self, t: LuaTable, pairs: list[Any], what: str, tds: bool = False) -> None:
        seen: set[tuple[str, Any]] = set()
        for kv in pairs:
            key = self.value(kv.key)
            val = self.value(kv.value)
            ident = _key_identity(key)
            if tds and ident[0] not in ("number", "str", "bytes"):
                raise Reject("bad-value", "a tds.Hash key is neither a string nor a number")
            if ident in seen:
                raise Reject("bad-value", f"{what} key {key!r:.40} appears twice")
            seen.add(ident)
            if val is not None:
                t.items.append((key, val))

    def function(self, body: Any, tc: str, idx: int | None) -> LuaFunction:
        bytecode = body.bytecode.value if self.ascii else body.bytecode
        f = LuaFunction(FUNCTION_KINDS[tc], bytes(bytecode))
        if idx is not None:
            self.index[idx] = f
        ups = self.value(body.upvalues)
        if not isinstance(ups, LuaTable):
            raise Reject("bad-value", "a function's upvalues are not a table")
        by_key: dict[float, Any] = {}
        for k, v in ups.items:
            if not (isinstance(k, float) and k.is_integer() and k >= 1):
                raise Reject("bad-value", f"the upvalue table has the key {k!r:.40}")
            by_key[k] = v
        if max(by_key, default=0.0) != len(by_key):
            raise Reject("bad-value", "the upvalue table's keys are not 1..n")
        f.upvalues = [by_key[float(i)] for i in range(1, len(by_key) + 1)]
        if tc == "recur_function" and not all(isinstance(v, LuaTable) for v in f.upvalues):
            raise Reject("bad-value", "a type 8 upvalue is not a {name, value} table")
        return f

    def torch(self, body: Any, idx: int) -> Any:
        name = body.class_name
        version = body.version if body.has_version else None  # a Lua number (lua_versions)
        if not name:
            raise Reject("bad-value", "empty class name")
        kind, dtype, device = _class_info(name)
        payload = body.payload
        if kind == "tensor":
            return self.tensor(payload, idx, dtype, device)
        if kind == "storage":
            s = self.storage(payload, dtype, device)
            self.index[idx] = s
            return s
        if kind in ("tds_hash", "tds_vec"):
            self.longs_read = True
        if kind == "tds_hash":
            obj = TorchObject(name, version, LuaTable())
            self.index[idx] = obj
            self._pairs(obj.value, payload.pairs, "tds.Hash", tds=True)
            return obj
        if kind == "tds_vec":
            obj = TorchObject(name, version, [])
            self.index[idx] = obj
            obj.value.extend(self.value(item) for item in payload.items)
            return obj
        obj = TorchObject(name, version)
        self.index[idx] = obj
        if payload.type_code.name != "table":
            raise Reject("bad-value", f"the payload of torch class {name} is not a table of fields "
                                      "(a class with its own write() is not readable generically)")
        obj.value = self.value(payload)
        return obj

    def tensor(self, p: Any, idx: int, dtype: DType, device: str) -> Tensor:
        self.longs_read = True
        self.index[idx] = _Pending()
        ndim = self._int(p.num_dims)
        if ndim > MAX_NDIM:
            raise Reject("limit-exceeded", f"a tensor of {ndim} dimensions")
        sizes = self._ints(p.sizes, ndim)
        strides = self._ints(p.strides, ndim)
        offset = self._int(p.storage_offset) - 1
        if any(s < 0 for s in sizes) or any(s < 0 for s in strides):
            raise Reject("bad-length", f"negative size or stride in {sizes} / {strides}")
        if offset < 0:
            raise Reject("out-of-bounds", f"storage offset {offset + 1} is below 1")
        storage = self.value(p.storage)
        if storage is not None and not (isinstance(storage, Storage) and storage.dtype is dtype
                                        and storage.device == device):
            raise Reject("bad-value", f"a {device} {dtype.name} tensor's storage is "
                                      f"{type(storage).__name__}, not a matching storage")
        t = Tensor(dtype, tuple(sizes), tuple(strides), offset, storage, device, lua=True)
        if t.numel:
            if storage is None:
                raise Reject("out-of-bounds", f"a tensor of {t.numel} elements has no storage")
            last = offset + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
            if last >= storage.numel:
                raise Reject("out-of-bounds", f"the view reaches element {last} of a storage of "
                                              f"{storage.numel}")
        self.index[idx] = t
        return t

    def storage(self, p: Any, dtype: DType, device: str) -> Storage:
        self.longs_read = True
        n = self._int(p.num_elements)
        if n < 0:
            raise Reject("bad-length", f"negative storage size {n}")
        if not self.ascii:
            width = p.element_size
            return Storage(dtype, n, device, p.data, "big" if self.big else "little",
                           stored_width=width if width != dtype.itemsize else None)
        if hasattr(p, "raw"):
            return Storage(dtype, n, device, p.raw)
        toks = self._tokens(p.tokens)
        if dtype.numpy.kind in "iu":
            ints = [_int_token(t) for t in toks]
            info = np.iinfo(dtype.numpy)
            if any(not info.min <= v <= info.max for v in ints):
                raise Reject("bad-value", f"a {dtype.name} storage value out of range")
            arr = np.array(ints, dtype=dtype.numpy.newbyteorder("<"))
        else:
            arr = _ascii_floats(toks, dtype)
        return Storage(dtype, n, device, arr.view(np.uint8).reshape(n, dtype.itemsize))


# -- the whole stream (spec/t7.md#t7-detect) ------------------------------------------------------------

def _sniff_byte_order(head: bytes) -> str | None:
    for pos in range(0, len(head) - 3, 4):
        word = head[pos:pos + 4]
        if word != b"\0\0\0\0":
            if 0 < word[0] <= 8 and word[1:] == b"\0\0\0":
                return "little"
            if 0 < word[3] <= 8 and word[:3] == b"\0\0\0":
                return "big"
            raise Reject("bad-type-code", f"{word.hex()} at byte {pos} is no type code in either byte order")
    return None


def _ascii_token_error(e: BaseException, mode: str) -> Reject | None:
    """A type code line that is no integer token at all is malformed ascii (``bad-value``), not an
    unknown type code (spec/t7.md#t7-ascii)."""
    if mode == "ascii" and isinstance(e, kaitaistruct.ValidationNotAnyOfError) \
            and isinstance(e.actual, str) and not _INT_TOKEN.fullmatch(e.actual):
        return Reject("bad-value", f"{e.actual[:40]!r} is not an integer token")
    return None


def _partial_error(e: BaseException) -> Reject | None:
    """The first problem, in reading order, of the objects that were still being read when the parse
    failed: what the grammar leaves to a reader but a reader would have met first (spec/t7.md).

    The generated parser keeps no partial result, so the objects are found in the failure's frames
    (outermost first): a generic class payload that is not a table (spec/t7.md#t7-custom-write), a
    function's upvalues that are not a table (#t7-function), a tensor whose sizes, strides or offset are
    negative (#t7-tensor) or whose storage is not a storage object, a table with a nil, NaN or repeated
    key (#t7-table), nesting deeper than :data:`MAX_NESTING` (#t7-limits)."""
    tb = e.__traceback__
    depth = 0
    seen: set[int] = set()
    while tb is not None:
        obj = tb.tb_frame.f_locals.get("self")
        if type(obj).__name__ in ("TableBody", "TorchObject", "FunctionBody") and id(obj) not in seen:
            seen.add(id(obj))
            depth += 1
            if depth > MAX_NESTING:
                return Reject("limit-exceeded", f"objects nest deeper than {MAX_NESTING}")
        try:
            found = _frame_error(obj)
        except (*_PARSE_ERRORS, Reject, AttributeError):  # a half-read field that does not evaluate
            found = None
        if found is not None:
            return found
        tb = tb.tb_next
    return None


def _frame_error(obj: Any) -> Reject | None:
    """The problem of one half-read grammar object, if any (see :func:`_partial_error`)."""
    if obj is not None:
        kind = type(obj).__name__
        parent = getattr(obj, "_parent", None)
        pkind = type(parent).__name__
        code = getattr(getattr(obj, "type_code", None), "name", None)
        if kind == "T7Object" and code is not None:
            if pkind == "TorchObject" and not hasattr(parent, "payload") and code != "table" \
                    and _class_info(parent.class_name)[0] == "generic":
                return Reject("bad-value", f"the payload of torch class {parent.class_name} starts with type "
                                           f"code {code}, not a table of fields (a class with its own "
                                           "write() is not readable generically)")
            if pkind == "FunctionBody" and not hasattr(parent, "upvalues") and code != "table":
                return Reject("bad-value", f"a function's upvalues start with type code {code}, not a table")
            if pkind == "Tensor" and not hasattr(parent, "storage") and code not in ("lua_nil", "torch"):
                return Reject("bad-value", f"a tensor's storage starts with type code {code}, not a storage")
        if kind == "TorchObject" and hasattr(obj, "version_or_class") \
                and (not obj.has_version or hasattr(obj, "class_after_version")) and not obj.class_name:
            return Reject("bad-value", "empty class name")
        if kind in ("TableBody", "TdsHash") and hasattr(obj, "pairs"):
            seen: set[Any] = set()
            for kv in obj.pairs:  # the pairs read in full so far: nil, NaN and repeated simple keys
                kc = kv.key.type_code.name
                if kc == "lua_nil":
                    return Reject("bad-value", "a table key is nil")
                if kc == "number":
                    number = kv.key.number
                    value = c_double(number.text) if hasattr(number, "text") else number
                    ident: Any = ("number", value + 0.0)
                    if math.isnan(ident[1]):
                        return Reject("bad-value", "a table key is NaN")
                elif kc == "string":
                    ident = ("string", bytes(kv.key.string.value))
                else:
                    continue
                if ident in seen:
                    return Reject("bad-value", f"a table key appears twice ({ident[1]!r:.40})")
                seen.add(ident)
        if kind == "Tensor" and hasattr(obj, "storage_offset"):
            if hasattr(obj.sizes, "num_items"):  # ascii token arrays
                toks = (*getattr(obj.sizes, "leading", []), getattr(obj.sizes, "last_token", "0"),
                        *getattr(obj.strides, "leading", []), getattr(obj.strides, "last_token", "0"))
                longs = [int(t) for t in toks]
            else:
                longs = [v.value for v in (*obj.sizes, *obj.strides)]
            offset = obj.storage_offset.value
            if any(v < 0 for v in longs):
                return Reject("bad-length", f"a tensor with negative sizes or strides ({longs})")
            if offset < 1:
                return Reject("out-of-bounds", f"a tensor with storage offset {offset} (below 1)")
    return None


_WHITESPACE = b" \t\n\v\f\r"


def _only_tail(io: KaitaiStream, ascii_mode: bool) -> bool:
    """Whether what is left after an object is what may end a stream: the NUL a torch.serialize
    MemoryFile ends with, after whitespace in ascii (spec/t7.md#t7-serialize, #t7-stream)."""
    pos = io.pos()
    rest = io.read_bytes(min(io.size() - pos, 4096))
    io.seek(pos)
    if len(rest) == 4096:
        return False
    if ascii_mode:
        rest = rest.rstrip(b"\0") if rest.endswith(b"\0") and not rest.endswith(b"\0\0") else rest
        return rest.strip(_WHITESPACE) == b""
    return rest == b"\0"


class _Attempt:
    """One reading of the stream: its description, or the failure and how far it got.

    The grammar's ``stream`` is a repetition of ``object``, each starting from the highest index its
    predecessor used; this class runs that repetition itself (with the grammar's own ``object`` type), so
    that each top-level object is given its meaning before the next is parsed and the first problem in
    file order is the one reported (spec/canonical.md#canonical-error-codes)."""

    def __init__(self, f: Any, size: int, mode: str, long_size: int = 8, byte_order: str = "little") -> None:
        self.description: dict[str, Any] | None = None
        self.error: Reject | Decline | None = None
        self.reach = 0  # where the reading was when it met its error
        self.longs_read = False
        f.seek(0)
        io = KaitaiStream(f)
        if mode == "ascii":
            def parse_object(max_index: int) -> Any:
                return torch_t7_ascii.TorchT7Ascii.T7Object(max_index, io, None, None)
        else:
            root = torch_t7.TorchT7(io)

            def parse_object(max_index: int) -> Any:
                return torch_t7.TorchT7.Stream.T7Object(long_size, max_index, io, None, root,
                                                      byte_order != "big")
        b = Builder(mode == "ascii", long_size, byte_order == "big")
        values: list[Any] = []
        max_index = 0
        try:
            while not io.is_eof() and not _only_tail(io, mode == "ascii"):
                try:
                    o = parse_object(max_index)
                except _PARSE_ERRORS as e:
                    partial = _partial_error(e) or _ascii_token_error(e, mode)
                    self.error = partial or from_kaitai(
                        e, "torch_t7", f"{mode} t7 stream (long {long_size}, {byte_order}-endian)")
                    self.reach = io.pos()
                    return
                try:
                    values.append(b.value(o))
                    max_index = o.last_index
                except _PARSE_ERRORS as e:  # a lazy instance of the grammar (an ascii token's .to_i)
                    raise from_kaitai(e, "torch_t7", f"{mode} t7 stream") from None
            if not values:
                raise Reject("truncated", "the stream holds no object")
            self.longs_read = b.longs_read
            _check_nesting(values)
            self.description = describe(f"t7-{mode}", values, depth_limit=None)  # measured just above
        except (Reject, Decline) as e:
            self.reach = io.pos()
            self.error = e


def _check_nesting(values: list[Any]) -> None:
    """The depth at which the description writes each table, torch object, function and list: a shared
    one is written in full where first reached, which can be deeper than where it was read
    (spec/t7.md#t7-limits).  A walk in the description's order, without recursion."""
    seen: set[int] = set()
    stack = [(v, 0) for v in reversed(values)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, LuaTable):
            kids = [x for kv in v.items for x in kv]
        elif isinstance(v, TorchObject):
            kids = [v.value]
        elif isinstance(v, LuaFunction):
            kids = list(v.upvalues)
        elif isinstance(v, list):
            kids = list(v)
        else:
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if depth + 1 > MAX_T7_NESTING:
            raise Reject("limit-exceeded", f"the description would nest objects deeper than {MAX_T7_NESTING}")
        stack.extend((k, depth + 1) for k in reversed(kids))


@contextmanager
def lua_versions() -> Iterator[None]:
    """While a stream is read, the grammars' ``has_version`` also asks that the text after ``V `` be a
    number Lua's ``tonumber`` accepts, as torch7 does (spec/t7.md#t7-class-version): a header ``V <x>``
    that is no number is the class name of a generic class (#t7-custom-write).  No Kaitai expression
    can say "a Lua number"; torch_t7.ksy and torch_t7_ascii.ksy take every ``V `` header for a version.
    Restored afterwards: other users of the generated parsers see the grammars as they are."""
    classes = (torch_t7.TorchT7.Stream.TorchObject, torch_t7_ascii.TorchT7Ascii.TorchObject)
    originals = [cls.__dict__["has_version"] for cls in classes]

    def wrap(grammar: property) -> property:
        def has_version(self: Any) -> bool:
            if "_m_lua_version" not in self.__dict__:
                text = self.version_or_class.value
                self._m_lua_version = bool(grammar.fget(self)) and _is_lua_number(text[2:])
                self._m_has_version = self._m_lua_version  # what the grammar's other instances read
            return self._m_lua_version
        return property(has_version, doc=grammar.__doc__)

    for cls, original in zip(classes, originals, strict=True):
        cls.has_version = wrap(original)
    try:
        yield
    finally:
        for cls, original in zip(classes, originals, strict=True):
            cls.has_version = original


def read_t7(f: Any, size: int, head: bytes) -> dict[str, Any]:
    """The description of a .t7 stream: hints first, else detection (spec/t7.md#t7-detect)."""
    with lua_versions():
        return _read_t7(f, size, head)


def _read_t7(f: Any, size: int, head: bytes) -> dict[str, Any]:
    h = hints()
    if size == 0:
        raise Reject("truncated", "empty file")
    mode = h.get("mode")
    if mode is None:
        if head[0] <= 8:
            mode = "binary"
        elif head[0] in ASCII_START:
            mode = "ascii"
        else:
            raise Reject("unknown-format", f"first byte 0x{head[0]:02x} starts neither a binary nor an "
                                           "ascii .t7 stream")
    if mode == "ascii":
        return _result(_Attempt(f, size, "ascii"))
    order = h.get("byte_order") or _sniff_byte_order(head) or "little"
    sizes = [int(h["long_size"])] if "long_size" in h else [8, 4]
    first = _Attempt(f, size, "binary", sizes[0], order)
    if len(sizes) == 1 or (first.description is not None and not first.longs_read):
        return _result(first)
    second = _Attempt(f, size, "binary", sizes[1], order)
    if first.description is not None and second.description is not None:
        # torch.save writes one object: the reading that gives exactly one wins, the 8-byte one of two
        # such; neither giving one stays undecidable (spec/t7.md#t7-detect).
        ones = [a for a in (first, second) if len(a.description["objects"]) == 1]  # type: ignore[index]
        if not ones:
            raise Reject("ambiguous", "the stream reads completely both with 8-byte and with 4-byte longs, "
                                      "neither as one object; give the long size as a hint")
        return ones[0].description  # type: ignore[return-value]
    if first.description is not None:
        return first.description
    if second.description is not None:
        return second.description
    return _result(second if second.reach > first.reach else first)


def _result(a: _Attempt) -> dict[str, Any]:
    if a.error is not None:
        raise a.error
    assert a.description is not None
    return a.description
