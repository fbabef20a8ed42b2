"""A stack machine over the opcodes python_pickle.ksy parses (spec/pickle.md): the grammar reads each
opcode and its argument; this module gives them their meaning, without running anything.

Globals are looked up in the allowlist spec/pickle.md holds (read by :mod:`.facts`); an allowed callable
is applied by :mod:`.rebuild`, which builds the value torch's function would return from the arguments.
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import kaitaistruct
import python_pickle

from . import rebuild
from .facts import Allowed, allowlist, limits, opcodes
from .failure import Decline, Reject, half_read
from .values import Global, ODict, Opaque, Tensor

MODULE_RENAMES = {"__builtin__": "builtins", "copy_reg": "copyreg", "torch.tensor": "torch._tensor"}
#: spec/canonical.md's reader-limits table (spec/pickle.md#pickle-limits, #pickle-nesting).
LIMITS = limits()
MAX_MARKS = LIMITS["OPEN_MARKS"]
MAX_INT_BYTES = LIMITS["INT_BYTES"]
MAX_DIGITS = LIMITS["INT_DIGITS"]
MAX_OPCODES = LIMITS["PICKLE_OPCODES"]
MAX_CALL_WORK = LIMITS["CALL_WORK"]
MAX_DEPTH = LIMITS["VALUE_DEPTH"]
#: A ``str`` or ``bytes`` argument costs one unit of call work per this many code points or bytes.
TEXT_PER_WORK = 64

#: spec/pickle.md#pickle-number-text: the anchored grammars of the text number arguments.
NUMBER_TEXT = {
    "INT": re.compile(r"0|-?[1-9][0-9]*"),
    "LONG": re.compile(r"(0|-?[1-9][0-9]*)L?"),
    "GET": re.compile(r"-?[0-9]+"),
    "PUT": re.compile(r"-?[0-9]+"),
    "FLOAT": re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf|infinity|nan)", re.I),
}
#: A high surrogate followed by a low one: JSON would read its escapes back as one astral character
#: (spec/canonical.md#canonical-surrogates).
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_WORK_TYPES = frozenset({str, bytes, bytearray, list, tuple, set, frozenset, dict, ODict, Opaque})
_PARSE_ERRORS = (kaitaistruct.KaitaiStructError, EOFError, ValueError, UnicodeDecodeError, OverflowError)


class _Mark:
    """What MARK leaves on the metastack (never a value)."""


PersistentLoad = Callable[[Any], Any]


def _decimal(text: str, what: str) -> int:
    """An INT, LONG, GET or PUT argument: its grammar, then its digit count, then its value
    (spec/pickle.md#pickle-number-text)."""
    if NUMBER_TEXT[what].fullmatch(text) is None:
        raise Reject("bad-value", f"{what} argument {text[:40]!r} is not a decimal of its grammar")
    body = text.lstrip("-").rstrip("L")
    if len(body) > MAX_DIGITS:
        raise Reject("limit-exceeded", f"{what} argument of {len(body)} digits (limit {MAX_DIGITS})")
    return int(body) * (-1 if text.startswith("-") else 1)


def _str(text: str, what: str) -> str:
    if _SURROGATE_PAIR.search(text):
        raise Reject("bad-value", f"{what}: a str holding a surrogate pair, which its JSON form would name "
                                  "as another (astral) character")
    return text


def _utf8(raw: bytes, what: str, errors: str = "strict") -> str:
    try:
        return raw.decode("utf-8", errors)
    except UnicodeDecodeError:
        raise Reject("bad-value", f"{what}: bytes that are not UTF-8") from None


def _string_literal(raw: bytes) -> str:
    """STRING's argument: a quoted Python 2 literal, unescaped, then UTF-8
    (spec/pickle.md#pickle-protocols)."""
    if len(raw) < 2 or raw[:1] != raw[-1:] or raw[:1] not in (b"'", b'"'):
        raise Reject("bad-value", "STRING argument is not a quoted literal")
    try:
        body = codecs.escape_decode(raw[1:-1])[0]
    except ValueError as e:
        raise Reject("bad-value", f"STRING argument: {e}") from None
    return _utf8(body, "STRING")


_LENGTH_FIELD = {"BytesU1": 1, "BytesS4": 4, "BytesU4": 4, "BytesU8": 8, "UnicodeU1": 1, "UnicodeU4": 4,
                 "UnicodeU8": 8}


#: python_pickle.ksy's argument fields: structures, then numbers by width (one switch per C++ type).
ARG_FIELDS = ("arg", "int_arg", "u4_arg", "u8_arg", "float_arg")


def argument(op: Any) -> Any:
    """The argument of the parsed opcode ``op``, whichever field holds it (None for none)."""
    for name in ARG_FIELDS:
        if hasattr(op, name):
            return getattr(op, name)
    return None


def op_size(op: Any, width: int | None) -> int:
    """How many bytes the parsed opcode ``op`` took (the grammar keeps no offsets)."""
    arg = argument(op)
    if arg is None:
        return 1
    kind = type(arg).__name__
    if kind in _LENGTH_FIELD:
        return 1 + _LENGTH_FIELD[kind] + arg.len
    if kind == "GlobalPair":
        return 1 + len(arg.module_name.encode("utf-8")) + len(arg.name.encode("utf-8")) + 2
    if kind in ("DecimalLine", "TextLine"):
        return 1 + len(arg.value.encode("utf-8")) + 1
    if kind == "RawLine":
        return 1 + len(arg.value) + 1
    return 1 + (width or 0)


def ops_from(io: Any, record: bool = False) -> Iterator[Any]:
    """The opcodes of the pickle at ``io``'s position, parsed one at a time with python_pickle.ksy's
    ``op`` type (the grammar's own repetition, until STOP), so that a machine runs each before the next
    is parsed.  A ``record`` (a zip record, a tar member) that ends between two opcodes has no STOP:
    ``bad-pickle``, where a stream's pickle that runs into the end of the file is ``truncated``
    (spec/pickle.md#pickle-stack)."""
    while True:
        if record and io.is_eof():
            raise Reject("bad-pickle", "the pickle ends without STOP")
        try:
            op = python_pickle.PythonPickle.Op(io, None, None)
        except _PARSE_ERRORS as e:
            over_limit(e)
            raise
        yield op
        if op.code == python_pickle.PythonPickle.Opcode.stop:
            return


def over_limit(e: BaseException) -> None:
    """After the grammar failed inside a LONG4: a length over the integer limit wins over the bytes it
    reaches past (spec/pickle.md#pickle-limits: the length is judged before the bytes are looked for)."""
    op = half_read(e, "Op")
    arg = half_read(e, "BytesS4")
    long4 = python_pickle.PythonPickle.Opcode.long4
    if op is not None and arg is not None and getattr(op, "code", None) == long4 \
            and getattr(arg, "len", 0) > MAX_INT_BYTES:
        raise Reject("limit-exceeded", f"LONG4: an integer of {arg.len} bytes (limit {MAX_INT_BYTES})") \
            from None


def pickle_length(pickle: Any) -> int:
    """How many bytes a parsed python_pickle took."""
    table = opcodes()
    return sum(op_size(op, table[int(op.code)].width if int(op.code) in table else None) for op in pickle.ops)


class Machine:
    """One pickle's machine; ``persistent_load`` gives persistent ids their meaning (None: a pickle in
    which they mean nothing, spec/pickle.md#pickle-persistent-id)."""

    def __init__(self, persistent_load: PersistentLoad | None = None, *,
                 scopes: frozenset[str] = frozenset({"torch"}), opaque_modules: tuple[str, ...] = ()) -> None:
        self.persistent_load = persistent_load
        self.scopes = scopes
        self.opaque_modules = opaque_modules
        self.allowed = allowlist()
        self.table = opcodes()

    # -- the program ----------------------------------------------------------------------------------
    def run(self, ops: Iterable[Any], what: str, limit: int | None = None) -> Any:
        """The value of the opcodes ``ops`` (a parsed python_pickle), which end with STOP; ``limit`` is
        how many bytes the pickle may span (its record, or the rest of the file), for FRAME."""
        self.what = what
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []
        self.memo: dict[int, Any] = {}
        self.protocol = 1
        self.work = 0  # items handed to calls and BUILDs (CALL_WORK)
        self.depths: dict[int, tuple[Any, int]] = {}  # tuples and frozensets deeper than 1: (value, depth)
        pos = 0
        for i, op in enumerate(ops):
            if i >= MAX_OPCODES:
                raise Reject("limit-exceeded", f"{what}: more than {MAX_OPCODES} opcodes")
            code = int(op.code)
            info = self.table.get(code)
            if info is None:
                raise Reject("bad-opcode", f"{what}: opcode 0x{code:02x} is not in the table")
            self.name = info.name
            pos += op_size(op, info.width)
            if info.rejected:
                raise Reject("bad-opcode", f"{what}: {info.name} cannot appear in a checkpoint")
            if info.name == "PROTO":
                if i != 0:
                    raise Reject("bad-pickle", f"{what}: PROTO is not the first opcode")
                if op.int_arg > 5:
                    raise Reject("bad-magic", f"{what}: pickle protocol {op.int_arg}")
                self.protocol = op.int_arg
                continue
            if info.protocol > self.protocol:
                raise Reject("bad-opcode", f"{what}: {info.name} (protocol {info.protocol}) in a protocol "
                                           f"{self.protocol} pickle")
            if info.name == "FRAME" and limit is not None and pos + op.u8_arg > limit:
                raise Reject("truncated", f"{what}: a FRAME of {op.u8_arg} bytes reaches past the end of the "
                                          "pickle")
            if info.name == "STOP":
                if self.metastack or len(self.stack) != 1:
                    raise Reject("bad-pickle", f"{what}: STOP with {len(self.stack)} items and "
                                               f"{len(self.metastack)} open marks")
                return self.stack[0]
            getattr(self, "op_" + info.name)(argument(op))
        raise Reject("bad-pickle", f"{what}: no STOP")

    # -- stack helpers ---------------------------------------------------------------------------------
    def fail(self, message: str, code: str = "bad-pickle") -> Reject:
        return Reject(code, f"{self.what}: {self.name}: {message}")

    def pop(self) -> Any:
        if not self.stack:
            raise self.fail("stack underflow")
        return self.stack.pop()

    def top(self) -> Any:
        if not self.stack:
            raise self.fail("stack underflow")
        return self.stack[-1]

    def pop_mark(self) -> list[Any]:
        if not self.metastack:
            raise self.fail("no MARK")
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def push(self, v: Any) -> None:
        self.stack.append(v)

    # -- constants --------------------------------------------------------------------------------------
    def op_INT(self, arg: Any) -> None:
        text = arg.value
        if text in ("00", "01"):
            self.push(text == "01")
        else:
            self.push(_decimal(text, "INT"))

    def op_LONG(self, arg: Any) -> None:
        text = arg.value
        self.push(_decimal(text[:-1] if text.endswith("L") else text, "LONG"))

    def op_BININT(self, arg: int) -> None:
        self.push(arg)

    op_BININT1 = op_BININT2 = op_BININT

    def op_LONG1(self, arg: Any) -> None:
        if len(arg.value) > MAX_INT_BYTES:
            raise self.fail(f"an integer of {len(arg.value)} bytes", "limit-exceeded")
        self.push(int.from_bytes(arg.value, "little", signed=True))

    op_LONG4 = op_LONG1

    def op_FLOAT(self, arg: Any) -> None:
        """C ``_pickle``'s grammar; a decimal that rounds to an infinity is refused, as C ``_pickle``
        refuses it (spec/pickle.md#pickle-number-text)."""
        text = arg.value
        if NUMBER_TEXT["FLOAT"].fullmatch(text) is None:
            raise self.fail(f"{text[:40]!r} is not a float of its grammar", "bad-value")
        value = float(text)
        if math.isinf(value) and "inf" not in text.lower():
            raise self.fail(f"{text[:40]!r} does not fit a double", "bad-value")
        self.push(value)

    def op_BINFLOAT(self, arg: float) -> None:
        self.push(arg)

    def op_STRING(self, arg: Any) -> None:
        self.push(_string_literal(arg.value))

    def op_BINSTRING(self, arg: Any) -> None:
        self.push(_utf8(arg.value, self.name))

    op_SHORT_BINSTRING = op_BINSTRING

    def op_BINBYTES(self, arg: Any) -> None:
        self.push(bytes(arg.value))

    op_SHORT_BINBYTES = op_BINBYTES8 = op_BINBYTES

    def op_BYTEARRAY8(self, arg: Any) -> None:
        self.push(bytearray(arg.value))

    def op_UNICODE(self, arg: Any) -> None:
        try:
            self.push(_str(bytes(arg.value).decode("raw-unicode-escape"), self.name))
        except UnicodeDecodeError:
            raise self.fail("text that is not raw-unicode-escape", "bad-value") from None

    def op_BINUNICODE(self, arg: Any) -> None:
        """The grammar keeps the bytes; UTF-8 allowing lone surrogates, as CPython's unpickler
        (spec/pickle.md#pickle-protocols)."""
        self.push(_str(_utf8(arg.value, self.name, "surrogatepass"), self.name))

    op_SHORT_BINUNICODE = op_BINUNICODE8 = op_BINUNICODE

    def op_NONE(self, arg: Any) -> None:
        self.push(None)

    def op_NEWTRUE(self, arg: Any) -> None:
        self.push(True)

    def op_NEWFALSE(self, arg: Any) -> None:
        self.push(False)

    def op_FRAME(self, arg: Any) -> None:
        pass  # a read hint

    # -- containers -------------------------------------------------------------------------------------
    def op_EMPTY_LIST(self, arg: Any) -> None:
        self.push([])

    def op_EMPTY_TUPLE(self, arg: Any) -> None:
        self.push(())

    def op_EMPTY_DICT(self, arg: Any) -> None:
        self.push({})

    def op_EMPTY_SET(self, arg: Any) -> None:
        self.push(set())

    def op_MARK(self, arg: Any) -> None:
        if len(self.metastack) >= MAX_MARKS:
            raise self.fail(f"more than {MAX_MARKS} open MARKs", "limit-exceeded")
        self.metastack.append(self.stack)
        self.stack = []

    def op_POP_MARK(self, arg: Any) -> None:
        self.pop_mark()

    def op_POP(self, arg: Any) -> None:
        if self.stack:
            self.stack.pop()
        elif self.metastack:
            self.stack = self.metastack.pop()
        else:
            raise self.fail("stack underflow")

    def op_DUP(self, arg: Any) -> None:
        self.push(self.top())

    def depth(self, v: Any) -> int:
        """The nesting of a tuple or frozenset this machine built (1 for any other value): hashing or
        comparing one recurses through it in C (spec/pickle.md#pickle-nesting)."""
        known = self.depths.get(id(v))
        if known is not None and known[0] is v:
            return known[1]
        return 2 if type(v) in (tuple, frozenset) and v else 1  # only deeper ones are kept

    def nested(self, v: Any) -> Any:
        """``v``, a new tuple or frozenset, after its nesting is checked, when it is built."""
        d = 1 + max((self.depth(x) for x in v), default=0)
        if d > MAX_DEPTH:
            raise self.fail(f"a {type(v).__name__} nested deeper than {MAX_DEPTH}", "limit-exceeded")
        if d > 2:
            self.depths[id(v)] = (v, d)
        return v

    def op_TUPLE(self, arg: Any) -> None:
        self.push(self.nested(tuple(self.pop_mark())))

    def _tuple_n(self, n: int) -> None:
        if len(self.stack) < n:
            raise self.fail("stack underflow")
        items = tuple(self.stack[len(self.stack) - n:])
        del self.stack[len(self.stack) - n:]
        self.push(self.nested(items))

    def op_TUPLE1(self, arg: Any) -> None:
        self._tuple_n(1)

    def op_TUPLE2(self, arg: Any) -> None:
        self._tuple_n(2)

    def op_TUPLE3(self, arg: Any) -> None:
        self._tuple_n(3)

    def op_LIST(self, arg: Any) -> None:
        self.push(list(self.pop_mark()))

    def op_DICT(self, arg: Any) -> None:
        items = self.pop_mark()
        if len(items) % 2:
            raise self.fail("an odd number of items")
        d: dict[Any, Any] = {}
        self._set_items(d, items)
        self.push(d)

    def op_FROZENSET(self, arg: Any) -> None:
        items = self.pop_mark()
        self.push(self.frozenset_(items))

    def op_APPEND(self, arg: Any) -> None:
        item = self.pop()
        target = self.top()
        if type(target) is not list:
            raise self.fail(f"APPEND to a {type(target).__name__}")
        target.append(item)

    def op_APPENDS(self, arg: Any) -> None:
        items = self.pop_mark()
        target = self.top()
        if type(target) is not list:
            raise self.fail(f"APPENDS to a {type(target).__name__}")
        target.extend(items)

    def op_SETITEM(self, arg: Any) -> None:
        value = self.pop()
        key = self.pop()
        self._set_items(self._dict_below(), [key, value])

    def op_SETITEMS(self, arg: Any) -> None:
        items = self.pop_mark()
        if len(items) % 2:
            raise self.fail("an odd number of items")
        self._set_items(self._dict_below(), items)

    def op_ADDITEMS(self, arg: Any) -> None:
        items = self.pop_mark()
        target = self.top()
        if type(target) is not set:
            raise self.fail(f"ADDITEMS to a {type(target).__name__}")
        target.update(self.hashed(set, items))

    def _dict_below(self) -> dict[Any, Any]:
        target = self.top()
        if not isinstance(target, dict):
            raise self.fail(f"{self.name} on a {type(target).__name__}")
        return target

    def frozenset_(self, items: Iterable[Any]) -> frozenset[Any]:
        """A frozenset of ``items``, its nesting checked before its items are hashed."""
        items = list(items)
        d = 1 + max((self.depth(x) for x in items), default=0)
        if d > MAX_DEPTH:
            raise self.fail(f"a frozenset nested deeper than {MAX_DEPTH}", "limit-exceeded")
        v = self.hashed(frozenset, items)
        if d > 2:
            self.depths[id(v)] = (v, d)
        return v

    def hashed(self, make: Callable[[Iterable[Any]], Any], items: Iterable[Any]) -> Any:
        """``make(items)`` (a set or frozenset); an item that cannot be hashed is ``bad-value``."""
        try:
            return make(items)
        except TypeError:
            raise self.fail("an unhashable item (a list, dict or set) in a set", "bad-value") from None

    def _hashable(self, key: Any) -> Any:
        try:
            hash(key)
        except TypeError:
            raise self.fail(f"an unhashable {type(key).__name__} as a key or set item", "bad-value") from None
        return key

    def _set_items(self, d: dict[Any, Any], items: list[Any]) -> None:
        for i in range(0, len(items), 2):
            d[self._hashable(items[i])] = items[i + 1]

    # -- the memo ---------------------------------------------------------------------------------------
    def _put(self, key: int) -> None:
        if key < 0:
            raise self.fail(f"negative memo key {key}", "bad-reference")
        if not self.stack:
            raise self.fail("nothing to memoize")
        self.memo[key] = self.stack[-1]

    def _get(self, key: int) -> None:
        if key not in self.memo:
            raise self.fail(f"memo key {key} was never stored", "bad-reference")
        self.push(self.memo[key])

    def op_PUT(self, arg: Any) -> None:
        self._put(_decimal(arg.value, "PUT"))

    def op_BINPUT(self, arg: int) -> None:
        self._put(arg)

    op_LONG_BINPUT = op_BINPUT

    def op_MEMOIZE(self, arg: Any) -> None:
        self._put(len(self.memo))

    def op_GET(self, arg: Any) -> None:
        self._get(_decimal(arg.value, "GET"))

    def op_BINGET(self, arg: int) -> None:
        self._get(arg)

    op_LONG_BINGET = op_BINGET

    # -- persistent ids ---------------------------------------------------------------------------------
    def _persistent(self, pid: Any) -> None:
        if self.persistent_load is None:
            raise self.fail("a persistent id where the container gives them no meaning", "bad-reference")
        self.push(self.persistent_load(pid))

    def op_PERSID(self, arg: Any) -> None:
        if not arg.value.isascii():
            raise self.fail("PERSID text is not ASCII", "bad-value")
        self._persistent(arg.value)

    def op_BINPERSID(self, arg: Any) -> None:
        self._persistent(self.pop())

    # -- globals and calls ------------------------------------------------------------------------------
    def global_(self, module: str, name: str) -> Global:
        """The token for ``module.name``, or ``unsafe-global`` (spec/pickle.md#pickle-globals)."""
        module = MODULE_RENAMES.get(module, module)
        qualname = f"{module}.{name}"
        if any(module == m or module.startswith(m + ".") for m in self.opaque_modules):
            return Global(module, name)
        entry = self.allowed.get(qualname)
        if entry is None or entry.scope not in self.scopes:
            raise self.fail(f"{qualname} is not in the allowlist", "unsafe-global")
        return Global(module, name)

    def op_GLOBAL(self, arg: Any) -> None:
        self.push(self.global_(arg.module_name, arg.name))

    def op_STACK_GLOBAL(self, arg: Any) -> None:
        name = self.pop()
        module = self.pop()
        if type(module) is not str or type(name) is not str:
            raise self.fail("STACK_GLOBAL needs two str items")
        self.push(self.global_(module, name))

    def _entry(self, g: Any) -> Allowed | None:
        """The allowlist entry of a callable token; None for a TorchScript class."""
        if not isinstance(g, Global):
            raise self.fail(f"calling a {type(g).__name__}, not a global")
        if any(g.module == m or g.module.startswith(m + ".") for m in self.opaque_modules):
            return None
        entry = self.allowed.get(g.qualname)
        if entry is None or entry.role == "value":  # a dtype, layout, qscheme, storage or tensor type
            raise self.fail(f"{g.qualname} is a value, not a callable")
        if entry.role == "declined":
            raise Decline(f"{g.qualname} ({self.what})")
        return entry

    def charge(self, value: Any) -> None:
        """Count the items handed to a call or BUILD (each item of a container and of the containers
        inside it, once per call; a ``str`` or ``bytes`` one per 64 units) against the pickle's call-work
        limit, before the call works on them (spec/pickle.md#pickle-limits)."""
        seen: set[int] = set()
        todo = [value]
        while todo:
            v = todo.pop()
            if isinstance(v, (str, bytes, bytearray)):
                self.work += len(v) // TEXT_PER_WORK
            elif isinstance(v, (list, tuple, set, frozenset, dict, Opaque)):
                if id(v) in seen:
                    continue
                seen.add(id(v))
                if isinstance(v, dict):
                    items: list[Any] = [x for kv in v.items() for x in kv]
                    if isinstance(v, ODict):
                        items.extend(v.attrs.values())
                    self.work += len(v)
                elif isinstance(v, Opaque):
                    items = [*v.args, v.state]
                else:
                    items = list(v)
                    self.work += len(items)
                if not _WORK_TYPES.isdisjoint(map(type, items)):
                    todo.extend(x for x in items if type(x) in _WORK_TYPES)
            if self.work > MAX_CALL_WORK:
                raise self.fail(f"the calls and BUILDs of this pickle are handed more than {MAX_CALL_WORK} "
                                "items", "limit-exceeded")

    def call(self, g: Any, args: Any, *, newobj: bool = False) -> Any:
        """Apply the allowed callable ``g`` to ``args`` (spec/pickle.md#what-the-allowed-callables-build)."""
        if type(args) is not tuple:
            raise self.fail(f"arguments must be a tuple, not {type(args).__name__}")
        self.charge(args)
        entry = self._entry(g)
        if entry is None:
            return Opaque(g.qualname, list(args))
        if newobj and not entry.newobj:
            raise self.fail(f"{g.qualname} cannot be made by NEWOBJ")
        required = sum(not p.optional for p in entry.params)
        if not required <= len(args) <= len(entry.params):
            raise self.fail(f"{g.qualname} takes {entry.signature()}, got {len(args)} arguments")
        for p, a in zip(entry.params, args, strict=False):
            if not rebuild.is_kind(p.kind, a):
                raise self.fail(f"{g.qualname}: argument {p.name} must be of kind {p.kind}, "
                                f"not {type(a).__name__}")
        handler = rebuild.HANDLERS.get(g.qualname)
        if handler is None:
            raise Decline(f"{g.qualname} (no rebuild function in this reader)")
        return handler(args, self)

    def op_REDUCE(self, arg: Any) -> None:
        args = self.pop()
        func = self.pop()
        self.push(self.call(func, args))

    def op_NEWOBJ(self, arg: Any) -> None:
        args = self.pop()
        cls = self.pop()
        self.push(self.call(cls, args, newobj=True))

    def op_NEWOBJ_EX(self, arg: Any) -> None:
        kwargs = self.pop()
        args = self.pop()
        cls = self.pop()
        if not isinstance(kwargs, dict) or kwargs:
            raise self.fail("NEWOBJ_EX with keyword arguments")
        self.push(self.call(cls, args, newobj=True))

    def op_INST(self, arg: Any) -> None:
        g = self.global_(arg.module_name, arg.name)
        self.push(self.call(g, tuple(self.pop_mark())))

    def op_OBJ(self, arg: Any) -> None:
        items = self.pop_mark()
        if not items:
            raise self.fail("OBJ without a callable")
        self.push(self.call(items[0], tuple(items[1:])))

    def op_BUILD(self, arg: Any) -> None:
        state = self.pop()
        obj = self.top()
        self.charge(state)
        if isinstance(obj, ODict):
            if not isinstance(state, dict) or not all(type(k) is str for k in state):
                raise self.fail("an OrderedDict's state must be a dict of str keys")
            obj.attrs.update(state)
        elif isinstance(obj, Tensor):
            rebuild.build_tensor(obj, state, self)
        elif isinstance(obj, Opaque) and obj.state is None and any(
                obj.class_name.startswith(m + ".") for m in self.opaque_modules):
            obj.state = state
        else:
            raise self.fail(f"BUILD on a {type(obj).__name__}")
