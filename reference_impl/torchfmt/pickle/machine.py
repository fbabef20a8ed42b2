"""The safe pickle machine: one stack machine driven by the opcode table (spec/pickle.md).

:data:`~torchfmt.pickle.opcodes.OPCODES` decides which bytes are opcodes, how their arguments are laid
out, which protocol each needs and how many stack items each consumes; this module gives each opcode its
meaning over inert values.  Globals come from the allowlist in :mod:`torchfmt.pickle.globals` and are
never imported; callables are our own handlers.  Persistent ids go to the container reader's
``persistent_load``.  Every length is checked against the bytes before anything is sliced, and the
finished value is measured against the reader's depth and node limits (spec/pickle.md#pickle-limits).
"""

from __future__ import annotations

import codecs
import collections
import contextlib
import contextvars
import math
import re
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .. import fast
from ..errors import FormatError, quote
from ..fast import pickle_entry
from ..limits import Limits
from ..model import Global, OpaqueObject, Storage, Tensor
from ..recursion import recursion_limit
from ..walk import SHAREABLE, children, json_text_size
from . import opcodes as oc
from . import rebuild
from .call import Call
from .globals import Allowed, canonical_name, lookup, set_item
from .opcodes import HIGHEST_PROTOCOL, Opcode

LIMITS = Limits()
DEFAULT_SCOPES = frozenset({"torch"})

#: ``persistent_load(pid, offset)``: the object a persistent id names (spec/pickle.md#pickle-persistent-id).
PersistentLoad = Callable[[Any, int], Any]

#: The text grammars of spec/pickle.md#pickle-number-text, ASCII only.  INT and LONG take the forms
#: CPython's picklers write (``repr``): CPython's two unpicklers read a leading zero, a ``+`` or a two-
#: character ``-0``/``+1`` differently (C ``strtol`` base 0 makes ``010`` eight and INT ``-0`` False).
_INT_TEXT = re.compile(rb"0|-?[1-9][0-9]*")
_LONG_TEXT = re.compile(rb"-?(0|[1-9][0-9]*)L?")
_MEMO_TEXT = re.compile(rb"-?[0-9]+")
#: A high surrogate then a low one: two code points whose JSON escapes read back as one
#: (spec/canonical.md#canonical-surrogates).
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_FLOAT_WORDS = re.compile(rb"[+-]?(inf|infinity|nan)", re.IGNORECASE)


#: BINGET, LONG_BINGET, BINUNICODE: where :mod:`~torchfmt.fast.pickle_entry`'s sequence may start.
_FAST_STARTS = (0x68, 0x6A, 0x58)


def _stack_needs(op: Opcode) -> tuple[bool, int, int]:
    """(needs a mark, items needed below the mark, items needed above it) from ``stack_before``."""
    before = [s for s in op.stack_before if s != "stackslice"]
    if "mark" not in before:
        return False, 0, 0 if op.name == "POP" else len(before)  # POP may discard a bare mark
    i = before.index("mark")
    return True, i, len(before) - i - 1


#: How each argument kind's fixed part is unpacked: the value itself, or the length that follows.
_FIXED = {"uint1": "<B", "uint2": "<H", "int4": "<i", "uint4": "<I", "uint8": "<Q", "float8": ">d"}
_LENGTH_FORMATS = {oc.LENGTH_UINT1: "<B", oc.LENGTH_INT4: "<i", oc.LENGTH_UINT4: "<I", oc.LENGTH_UINT8: "<Q"}


@dataclass(frozen=True)
class _Step:
    """What the machine precomputes per code byte from the opcode table."""

    op: Opcode
    needs_mark: bool
    below: int
    above: int
    fixed: struct.Struct | None  # a fixed-size argument
    length: struct.Struct | None  # the length prefix of a length-prefixed argument
    checked: bool  # :meth:`Machine._admit` has more to check than the stack's height
    meaning: Callable[[Machine, Any], None]


#: The globals every machine resolves while :func:`recording_globals` is active.
_RECORDED: contextvars.ContextVar[list[tuple[str, str, int]] | None] = contextvars.ContextVar(
    "torchfmt_recorded_globals", default=None)


@contextlib.contextmanager
def recording_globals() -> Iterator[list[tuple[str, str, int]]]:
    """Collect ``(module, name, offset)`` of every GLOBAL, STACK_GLOBAL and INST any machine resolves
    in this context, allowed or not (after the module renames): the readiness report of ``torchfmt
    inspect`` reads them from the one reading of the file (spec/inspect.md#inspect-readiness)."""
    found: list[tuple[str, str, int]] = []
    token = _RECORDED.set(found)
    try:
        yield found
    finally:
        _RECORDED.reset(token)


@dataclass
class PickleUse:
    """The protocols and opcodes of every pickle run while :func:`recording_opcodes` is active: what
    ``torch.load(weights_only=True)`` refuses besides globals (spec/inspect.md#inspect-readiness)."""

    protocols: list[int | None]
    opcodes: dict[str, list[int]]  # name -> [first file offset, count]

    def add(self, buf: memoryview, start: int, end: int, proto: int | None, origin: int) -> None:
        self.protocols.append(proto)
        for pos, op in oc.walk(buf, start, end):
            seen = self.opcodes.setdefault(op.name, [origin + pos, 0])
            seen[1] += 1


_USED: contextvars.ContextVar[PickleUse | None] = contextvars.ContextVar("torchfmt_pickle_use", default=None)


@contextlib.contextmanager
def recording_opcodes() -> Iterator[PickleUse]:
    """Collect the protocol and the opcodes of every pickle any machine runs to its STOP in this
    context (the readiness report of ``torchfmt inspect``, read from the one reading of the file)."""
    found = PickleUse([], {})
    token = _USED.set(found)
    try:
        yield found
    finally:
        _USED.reset(token)


#: What the unsafe-global refusal advises (the command line's words; :func:`torchfmt.load` names its
#: keyword instead).
INERT_ADVICE = ("a pickled object such as a whole torch.save(model) is read, without running it, by dump "
                "--inert and inspect, and convert --inert writes a whole model's state_dict")


class Machine:
    """Runs pickle programs over ``buf`` (a file's bytes; offsets are file offsets).

    ``inert`` turns globals outside the allowlist into :class:`~torchfmt.model.Global` /
    :class:`~torchfmt.model.OpaqueObject` records instead of rejecting them
    (spec/canonical.md#canonical-inert);
    ``opaque_modules`` does so for named modules only (TorchScript's ``__torch__``).  ``scopes`` selects
    allowlist entries (spec/pickle.md#pickle-globals).
    """

    def __init__(self, buf: Any, *, persistent_load: PersistentLoad | None = None, inert: bool = False,
                 scopes: frozenset[str] = DEFAULT_SCOPES, opaque_modules: tuple[str, ...] = (),
                 limits: Limits = LIMITS, origin: int = 0) -> None:
        self.buf = buf if isinstance(buf, memoryview) else memoryview(buf)
        self.origin = origin  # where ``buf`` starts in the file: error offsets are the file's
        self.persistent_load = persistent_load
        self.inert = inert
        self.scopes = scopes | {"inert"} if inert else scopes
        self.opaque_modules = opaque_modules
        self.limits = limits

    # -- running ------------------------------------------------------------------------------------
    def load(self, start: int, end: int | None = None) -> tuple[Any, int]:
        """Run the pickle at ``start`` to its STOP: (value, offset after STOP).  ``end`` bounds a pickle
        stored as a record of its own; without it the pickle is part of a stream that the file's end
        bounds."""
        try:
            return self._load(start, end)
        except FormatError as e:
            if self.origin and e.offset is not None:
                e.offset += self.origin
                e.args = (e.line(),)
            raise

    def _load(self, start: int, end: int | None) -> tuple[Any, int]:
        missing_stop = "bad-pickle" if end is not None else "truncated"
        end = len(self.buf) if end is None else end
        self.start, self.end = start, end
        self.stack: list[Any] = []
        self.metastack: list[list[Any]] = []
        self.memo: dict[int, Any] = {}
        self.nest: dict[int, int] = {}  # id -> nesting of each tuple/frozenset made
        self.made: list[Any] = []  # keeps them alive so their ids stay theirs
        self.layouts: list[Any] = []  # the tensor entries' layouts met (fast.pickle_run.Layout)
        self.work = 0  # items handed to calls and BUILDs so far (CALL_WORK)
        self.proto: int | None = None
        self.done = False
        self.pos = start
        buf = self.buf
        # Equal-hash keys compare element by element (C recursion that counts against Python's limit);
        # tuples nest at most max_depth deep here, so a limit above it keeps such a comparison legal.
        ran, max_ops = 0, self.limits.max_opcodes
        fast_on = fast.ENABLED
        with recursion_limit(4 * self.limits.max_depth + 1_000):
            while not self.done:
                self.at = pos = self.pos
                if pos >= end:
                    raise FormatError(missing_stop, pos, "the pickle ends without STOP")
                if fast_on and buf[pos] in _FAST_STARTS:
                    taken = pickle_entry.run(self, pos, ran)
                    if taken:
                        ran += taken
                        continue
                ran += 1
                if ran > max_ops:
                    raise FormatError("limit-exceeded", pos, f"the pickle runs more than {max_ops} opcodes")
                step = _STEPS[buf[pos]]
                if step is None:
                    raise FormatError("bad-opcode", pos, f"unknown opcode 0x{buf[pos]:02x}")
                if step.checked:
                    self._admit(step)
                elif len(self.stack) < step.above:
                    raise FormatError("bad-pickle", pos, f"stack underflow at {step.op.name}")
                fixed = step.fixed
                if fixed is not None and pos + 1 + fixed.size <= end:  # the common case, inline
                    self.pos = pos + 1 + fixed.size
                    step.meaning(self, fixed.unpack_from(buf, pos + 1)[0])
                else:
                    self.pos = pos + 1
                    step.meaning(self, None if step.op.arg is None else self._arg(step))
        used = _USED.get()
        if used is not None:
            used.add(buf, start, self.pos, self.proto, self.origin)
        result = self.stack[0]
        self.nest.clear()
        self.made.clear()
        self.layouts.clear()
        measure(result, self.limits, self.at)
        return result, self.pos

    def load_exact(self, start: int, end: int) -> Any:
        """Run a pickle that must fill ``buf[start:end]`` exactly (a zip record)."""
        value, stop = self.load(start, end)
        if stop != end:
            raise FormatError("bad-pickle", stop, f"{end - stop} bytes after the pickle's STOP")
        return value

    def _admit(self, step: _Step) -> None:
        """Table checks before an opcode acts: refusal, protocol, stack (spec/pickle.md#pickle-stack)."""
        op = step.op
        if op.refused:
            raise FormatError("bad-opcode", self.at, f"{op.name}: {op.refused}")
        if op.proto > 1 and op.proto > (self.proto or 1) and op.name != "PROTO":  # no PROTO: 0 or 1
            raise FormatError("bad-opcode", self.at, f"{op.name} needs protocol {op.proto}, "
                                                     f"the pickle declares {self.proto or 1}")
        if step.needs_mark and not self.metastack:
            raise FormatError("bad-pickle", self.at, f"{op.name} without a MARK")
        if len(self.stack) < step.above or step.needs_mark and len(self.metastack[-1]) < step.below:
            raise FormatError("bad-pickle", self.at, f"stack underflow at {op.name}")

    # -- arguments ----------------------------------------------------------------------------------
    def _take(self, n: int) -> memoryview:
        if n < 0:
            raise FormatError("bad-length", self.pos, f"negative length {n}")
        if n > self.end - self.pos:
            raise FormatError("truncated", self.pos, f"{n} bytes needed, {self.end - self.pos} left",
                              needed_end=self.pos + n)
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def _unpack(self, s: struct.Struct) -> Any:
        if s.size > self.end - self.pos:
            raise FormatError("truncated", self.pos, f"{s.size} bytes needed, {self.end - self.pos} left",
                              needed_end=self.pos + s.size)
        value = s.unpack_from(self.buf, self.pos)[0]
        self.pos += s.size
        return value

    def _line(self) -> bytes:
        """Text up to a newline (the newline consumed, not returned)."""
        chunk = 256
        while True:
            window = bytes(self.buf[self.pos:min(self.end, self.pos + chunk)])
            i = window.find(b"\n")
            if i >= 0:
                self.pos += i + 1
                return window[:i]
            if self.pos + chunk >= self.end:
                raise FormatError("truncated", self.pos, "text argument without a newline")
            chunk *= 4

    def _arg(self, step: _Step) -> Any:
        """The inline argument, laid out as the opcode's argument kind says."""
        if step.fixed is not None:
            return self._unpack(step.fixed)
        kind = step.op.arg
        assert kind is not None
        if step.length is None:  # text up to a newline
            return self._line() if kind is not oc.STRINGNL_NOESCAPE_PAIR else (self._line(), self._line())
        n = self._unpack(step.length)
        if kind.name in ("long1", "long4") and n > self.limits.max_int_bytes:
            raise FormatError("limit-exceeded", self.at, f"a {n}-byte integer")
        return self._take(n)

    # -- helpers ------------------------------------------------------------------------------------
    def push(self, v: Any) -> None:
        self.stack.append(v)

    def pop(self) -> Any:
        return self.stack.pop()

    def pop_mark(self) -> list[Any]:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def fail(self, code: str, message: str) -> FormatError:
        return FormatError(code, self.at, message)

    def text(self, raw: bytes | memoryview, encoding: str, errors: str = "strict") -> str:
        try:
            s = str(raw, encoding, errors)
        except UnicodeDecodeError as e:
            raise self.fail("bad-value", f"text is not valid {encoding}: {e.reason}") from None
        if not s.isascii() and (errors == "surrogatepass" or encoding == "raw-unicode-escape"):
            pair = _SURROGATE_PAIR.search(s)
            if pair:
                raise self.fail("bad-value", f"a str holds the surrogate pair {quote(pair.group())}, whose "
                                             "JSON escapes read back as one astral character")
        return s

    def integer(self, raw: bytes, pattern: re.Pattern[bytes]) -> int:
        """A decimal argument: ASCII grammar first, then its digits (sign and ``L`` not counted) against
        the limit, so ``int()`` never meets Python's 4300-digit limit (spec/pickle.md#pickle-number-text)."""
        if not pattern.fullmatch(raw):
            raise self.fail("bad-value", f"{quote(raw)} is not a decimal integer in the spec's grammar")
        digits = raw.strip(b"-L")
        if len(digits) > self.limits.max_int_digits:
            raise self.fail("limit-exceeded", f"a {len(digits)}-digit integer "
                                              f"(at most {self.limits.max_int_digits})")
        return int(digits) * (-1 if raw[:1] == b"-" else 1)

    def nesting(self, items: Any) -> int:
        """The nesting a tuple or frozenset of ``items`` will have (tuples and frozensets inside count,
        spec/pickle.md#pickle-nesting), refused past the depth limit *before* the container is made:
        making a frozenset, or using a tuple as a dict key or set item, hashes and compares it
        recursively in C, which a million-deep tuple would crash."""
        get = self.nest.get
        depth = 1 + max([get(id(x), 0) for x in items], default=0)
        if depth > self.limits.max_depth:
            raise self.fail("limit-exceeded", f"tuples/frozensets nest deeper than {self.limits.max_depth}")
        return depth

    def made_hashable(self, v: Any, depth: int) -> Any:
        """Record the nesting of a tuple or frozenset just made (see :meth:`nesting`)."""
        self.nest[id(v)] = depth
        self.made.append(v)
        return v

    def tuple_of(self, items: list[Any]) -> tuple[Any, ...]:
        depth = self.nesting(items)
        return self.made_hashable(tuple(items), depth)

    def memo_key(self, key: int) -> int:
        if key < 0:
            raise self.fail("bad-reference", f"negative memo key {key}")
        return key

    def resolve(self, module: str, name: str, python2: bool = True) -> Global:
        """GLOBAL: the allowlist decides (spec/pickle.md#pickle-globals), after the renames
        (:func:`canonical_name`: the Python 2 ones where ``python2``)."""
        module, name = canonical_name(module, name, python2)
        recorded = _RECORDED.get()
        if recorded is not None:
            recorded.append((module, name, self.at))
        if lookup(module, name, self.scopes) is None and not self.inert and not any(
                module == m or module.startswith(m + ".") for m in self.opaque_modules):
            raise self.fail("unsafe-global", f"{quote(module + '.' + name)} is not in the allowlist; "
                                             + INERT_ADVICE)
        return Global(module, name)

    def apply(self, func: Any, args: Any, via: str, kwargs: dict[Any, Any] | None = None) -> Any:
        """REDUCE/NEWOBJ/INST/OBJ: run an allowed handler, or keep an opaque object (inert mode)."""
        if not isinstance(func, Global):
            raise self.fail("bad-pickle", f"{via} on a {type(func).__name__}, not a global")
        if type(args) is not tuple:
            raise self.fail("bad-pickle", f"{via} arguments must be a tuple, not {type(args).__name__}")
        self.charge(args)
        entry = lookup(func.module, func.name, self.scopes)
        if entry is None and func.module == "torch" and func.name in rebuild.LAYOUTS:
            # the layout _get_layout returns is a value, never a callable (spec/pickle.md#pickle-globals)
            raise self.fail("bad-pickle", f"{func.module}.{func.name} is not callable")
        if entry is None:
            return OpaqueObject(f"{func.module}.{func.name}", [*args, kwargs] if kwargs else list(args))
        if entry.role == "value":
            raise self.fail("bad-pickle", f"{entry.qualname} is not callable")
        if via.startswith("NEWOBJ") and not entry.newobj or kwargs:
            raise self.fail("bad-pickle", f"{entry.qualname} cannot be made by {via}")
        entry.check_args(args, self.at)
        assert entry.handler is not None
        result = entry.handler(args, self.call_context())
        if type(result) in (tuple, frozenset):
            self.made_hashable(result, self.nesting(result))
        return result

    def charge(self, args: Any) -> None:
        """Count what a call or BUILD is handed against ``max_call_work`` (spec/pickle.md#pickle-limits):
        the items of ``args`` and of the containers inside it, text one per 64 units.  Each count is
        added before the next, longer one is taken, so the counting itself stays within the budget."""
        self.work += 1 + _weight(args)
        if self.work <= self.limits.max_call_work and type(args) in _CONTAINERS:
            for a in args.values() if isinstance(args, dict) else args:
                self.work += _weight(a)
                if self.work > self.limits.max_call_work:
                    break
                if type(a) in _CONTAINERS:
                    self.work += sum(map(_weight, a.values() if isinstance(a, dict) else a))
        if self.work > self.limits.max_call_work:
            raise self.fail("limit-exceeded", f"the pickle's calls are handed more than "
                                              f"{self.limits.max_call_work} items")

    def call_context(self) -> Call:
        """What a handler may know: offset, mode, and how to apply another allowed callable."""
        return Call(self.at, self.inert, self._reduce)

    def _reduce(self, func: Any, args: Any) -> Any:
        return self.apply(func, args, "REDUCE")

    def setitems(self, target: Any, items: list[Any]) -> None:
        if not isinstance(target, dict):
            raise self.fail("bad-pickle", f"SETITEM(S) on a {type(target).__name__}, not a dict")
        if len(items) % 2:
            raise self.fail("bad-pickle", "SETITEMS with an odd number of items")
        for i in range(0, len(items), 2):
            set_item(target, items[i], items[i + 1], self.at)

    def persistent(self, pid: Any) -> Any:
        if self.persistent_load is None:
            raise self.fail("bad-reference", "a persistent id where the format allows none")
        return self.persistent_load(pid, self.at)

    # -- what the fast paths ask (torchfmt/fast/running.py) -------------------------------------------
    #: The handler whose tensor a run of :mod:`torchfmt.fast.pickle_run` makes itself, for a view it has
    #: accepted before.
    tensor_rebuild = staticmethod(rebuild.rebuild_tensor_v2)

    def allowed(self, module: str, name: str) -> Allowed | None:
        """The allowlist entry for ``module.name`` in the machine's scopes (spec/pickle.md#pickle-globals)."""
        return lookup(module, name, self.scopes)

    def build(self, inst: Any, state: Any) -> None:
        """BUILD: only on opaque objects, OrderedDicts (attributes) and tensors (legacy state)."""
        self.charge(state)
        if isinstance(inst, OpaqueObject):
            if inst.state is not None:
                raise self.fail("bad-pickle", f"a second BUILD on {inst.class_name}")
            inst.state = state
        elif type(inst) is collections.OrderedDict:
            if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
                raise self.fail("bad-pickle", "an OrderedDict's BUILD state must be a dict of str keys")
            vars(inst).update(state)
        elif isinstance(inst, Tensor):
            rebuild.build_tensor(inst, state, self.call_context())
        else:
            raise self.fail("bad-pickle", f"BUILD on a {type(inst).__name__}")


# -- the opcodes' meanings (one function per opcode name) -----------------------------------------
def _int(m: Machine, raw: bytes) -> None:
    """INT: protocol 0 writes False/True as 00/01."""
    m.push(_INT_BOOLS[raw] if raw in _INT_BOOLS else m.integer(raw, _INT_TEXT))


_INT_BOOLS = {b"00": False, b"01": True}


def _py2_str(m: Machine, raw: Any) -> None:
    """Python 2 ``str``: decoded as UTF-8, as torch.load does (spec/pickle.md#pickle-protocols)."""
    m.push(m.text(raw, "utf-8"))


def _string(m: Machine, raw: bytes) -> None:
    if len(raw) < 2 or raw[0] != raw[-1] or raw[:1] not in (b"'", b'"'):
        raise m.fail("bad-value", "STRING argument must be quoted")
    try:
        data = codecs.escape_decode(raw[1:-1])[0]  # a pure decoder: backslash escapes only
    except ValueError as e:
        raise m.fail("bad-value", f"bad escape in STRING: {e}") from None
    _py2_str(m, data)


def _float(m: Machine, raw: bytes) -> None:
    """FLOAT: C ``_pickle``'s grammar; a decimal that overflows to an infinity is refused, as C
    ``_pickle`` refuses it (spec/pickle.md#pickle-number-text)."""
    if not _float_syntax(raw):
        raise m.fail("bad-value", f"{quote(raw)} is not a float literal in the spec's grammar")
    value = float(raw)
    if math.isinf(value) and not _FLOAT_WORDS.fullmatch(raw):
        raise m.fail("bad-value", f"{quote(raw)} overflows a double")
    m.push(value)


_FLOAT_WORDS_LOWER = (b"inf", b"infinity", b"nan")


def _float_syntax(raw: bytes) -> bool:
    """FLOAT's grammar, what C ``_pickle`` (``PyOS_string_to_double``) reads: ``[+-]?`` then
    ``inf``/``infinity``/``nan`` in any case, or ASCII digits with an optional point and exponent
    (``1.``, ``.5``, ``2E-3``); no space, ``_`` or hex (spec/pickle.md#pickle-number-text).  Byte
    methods, linear in the text: a regular expression backtracks on a long run of digits."""
    body = raw[1:] if raw[:1] in (b"+", b"-") else raw
    low = body.lower()
    if low in _FLOAT_WORDS_LOWER:
        return True
    mantissa, e, exponent = low.partition(b"e")
    if e and not (exponent[1:] if exponent[:1] in (b"+", b"-") else exponent).isdigit():
        return False
    whole, _, fraction = mantissa.partition(b".")
    return bool(whole or fraction) and (not whole or whole.isdigit()) and (not fraction or fraction.isdigit())


def _long(m: Machine, raw: memoryview) -> None:
    m.push(int.from_bytes(raw, "little", signed=True))


def _get(m: Machine, key: int) -> None:
    if key not in m.memo:
        raise m.fail("bad-reference", f"memo key {key} was never PUT")
    m.push(m.memo[key])


def _put(m: Machine, key: int) -> None:
    if not m.stack:
        raise m.fail("bad-pickle", "PUT with nothing above the mark")
    m.memo[m.memo_key(key)] = m.stack[-1]


def _tuple_n(n: int) -> Callable[[Machine, Any], None]:
    def op(m: Machine, _: Any) -> None:
        stack = m.stack
        items = stack[-n:]
        stack[-n:] = [m.tuple_of(items)]
    return op


def _mark(m: Machine, _: Any) -> None:
    if len(m.metastack) >= m.limits.max_marks:
        raise m.fail("limit-exceeded", f"more than {m.limits.max_marks} open MARKs")
    m.metastack.append(m.stack)
    m.stack = []


def _pop(m: Machine, _: Any) -> None:
    if m.stack:
        m.pop()
    elif m.metastack:
        m.pop_mark()
    else:
        raise m.fail("bad-pickle", "POP on an empty stack")


def _append(m: Machine, _: Any) -> None:
    item = m.pop()
    _extend(m, m.stack[-1], [item])


def _extend(m: Machine, target: Any, items: list[Any]) -> None:
    if type(target) is not list:
        raise m.fail("bad-pickle", f"APPEND(S) on a {type(target).__name__}, not a list")
    target.extend(items)


def _appends(m: Machine, _: Any) -> None:
    items = m.pop_mark()
    _extend(m, m.stack[-1], items)


def _additems(m: Machine, _: Any) -> None:
    items = m.pop_mark()
    if type(m.stack[-1]) is not set:
        raise m.fail("bad-pickle", f"ADDITEMS on a {type(m.stack[-1]).__name__}, not a set")
    try:
        m.stack[-1].update(items)
    except TypeError:
        raise m.fail("bad-value", "unhashable set item") from None


def _frozenset(m: Machine, _: Any) -> None:
    items = m.pop_mark()
    depth = m.nesting(items)
    try:
        m.push(m.made_hashable(frozenset(items), depth))
    except TypeError:
        raise m.fail("bad-value", "unhashable frozenset item") from None


def _dict(m: Machine, _: Any) -> None:
    items = m.pop_mark()
    d: dict[Any, Any] = {}
    m.setitems(d, items)
    m.push(d)


def _setitem(m: Machine, _: Any) -> None:
    v = m.pop()
    k = m.pop()
    m.setitems(m.stack[-1], [k, v])


def _setitems(m: Machine, _: Any) -> None:
    items = m.pop_mark()
    m.setitems(m.stack[-1], items)


def _global(m: Machine, pair: tuple[bytes, bytes]) -> None:
    m.push(m.resolve(m.text(pair[0], "utf-8"), m.text(pair[1], "utf-8")))


def _stack_global(m: Machine, _: Any) -> None:
    name = m.pop()
    module = m.pop()
    if type(module) is not str or type(name) is not str:
        raise m.fail("bad-pickle", "STACK_GLOBAL needs two str items")
    m.push(m.resolve(module, name, python2=False))  # protocol 4 or later: CPython renames below 3 only


def _reduce(m: Machine, _: Any) -> None:
    args = m.pop()
    m.stack[-1] = m.apply(m.stack[-1], args, "REDUCE")


def _newobj(m: Machine, _: Any) -> None:
    args = m.pop()
    m.stack[-1] = m.apply(m.stack[-1], args, "NEWOBJ")


def _newobj_ex(m: Machine, _: Any) -> None:
    kwargs = m.pop()
    args = m.pop()
    if not isinstance(kwargs, dict):
        raise m.fail("bad-pickle", "NEWOBJ_EX keyword arguments must be a dict")
    m.stack[-1] = m.apply(m.stack[-1], args, "NEWOBJ_EX", kwargs)


def _inst(m: Machine, pair: tuple[bytes, bytes]) -> None:
    cls = m.resolve(m.text(pair[0], "utf-8"), m.text(pair[1], "utf-8"), python2=(m.proto or 0) < 3)
    m.push(m.apply(cls, tuple(m.pop_mark()), "INST"))


def _obj(m: Machine, _: Any) -> None:
    items = m.pop_mark()
    m.push(m.apply(items[0], tuple(items[1:]), "OBJ"))


def _build(m: Machine, _: Any) -> None:
    state = m.pop()
    m.build(m.stack[-1], state)


def _proto(m: Machine, n: int) -> None:
    if m.at != m.start:
        raise m.fail("bad-pickle", "PROTO after the first opcode")
    if n > HIGHEST_PROTOCOL:
        raise m.fail("bad-magic", f"pickle protocol {n} (highest known is {HIGHEST_PROTOCOL})")
    m.proto = n


def _stop(m: Machine, _: Any) -> None:
    if m.metastack or len(m.stack) != 1:
        raise m.fail("bad-pickle", f"STOP with {len(m.stack)} items and {len(m.metastack)} open MARKs")
    m.done = True


def _frame(m: Machine, n: int) -> None:
    if n > m.end - m.pos:
        raise m.fail("truncated", f"a frame of {n} bytes, {m.end - m.pos} left")


def _persid(m: Machine, raw: bytes) -> None:
    m.push(m.persistent(m.text(raw, "ascii")))


_MEANINGS: dict[str, Callable[[Machine, Any], None]] = {
    "INT": _int,
    "BININT": lambda m, v: m.stack.append(v),
    "BININT1": lambda m, v: m.stack.append(v),
    "BININT2": lambda m, v: m.stack.append(v),
    "LONG": lambda m, raw: m.stack.append(m.integer(raw, _LONG_TEXT)),
    "LONG1": _long,
    "LONG4": _long,
    "STRING": _string,
    "BINSTRING": _py2_str,
    "SHORT_BINSTRING": _py2_str,
    "BINBYTES": lambda m, raw: m.stack.append(bytes(raw)),
    "SHORT_BINBYTES": lambda m, raw: m.stack.append(bytes(raw)),
    "BINBYTES8": lambda m, raw: m.stack.append(bytes(raw)),
    "BYTEARRAY8": lambda m, raw: m.stack.append(bytearray(raw)),
    "NONE": lambda m, _: m.stack.append(None),
    "NEWTRUE": lambda m, _: m.stack.append(True),
    "NEWFALSE": lambda m, _: m.stack.append(False),
    "UNICODE": lambda m, raw: m.stack.append(m.text(raw, "raw-unicode-escape")),
    "SHORT_BINUNICODE": lambda m, raw: m.stack.append(m.text(raw, "utf-8", "surrogatepass")),
    "BINUNICODE": lambda m, raw: m.stack.append(m.text(raw, "utf-8", "surrogatepass")),
    "BINUNICODE8": lambda m, raw: m.stack.append(m.text(raw, "utf-8", "surrogatepass")),
    "FLOAT": _float,
    "BINFLOAT": lambda m, v: m.stack.append(v),
    "EMPTY_LIST": lambda m, _: m.stack.append([]),
    "APPEND": _append,
    "APPENDS": _appends,
    "LIST": lambda m, _: m.push(m.pop_mark()),
    "EMPTY_TUPLE": lambda m, _: m.stack.append(()),
    "TUPLE": lambda m, _: m.push(m.tuple_of(m.pop_mark())),
    "TUPLE1": _tuple_n(1),
    "TUPLE2": _tuple_n(2),
    "TUPLE3": _tuple_n(3),
    "EMPTY_DICT": lambda m, _: m.stack.append({}),
    "DICT": _dict,
    "SETITEM": _setitem,
    "SETITEMS": _setitems,
    "EMPTY_SET": lambda m, _: m.stack.append(set()),
    "ADDITEMS": _additems,
    "FROZENSET": _frozenset,
    "POP": _pop,
    "DUP": lambda m, _: m.stack.append(m.stack[-1]),
    "MARK": _mark,
    "POP_MARK": lambda m, _: m.pop_mark(),
    "GET": lambda m, raw: _get(m, m.integer(raw, _MEMO_TEXT)),
    "BINGET": _get,
    "LONG_BINGET": _get,
    "PUT": lambda m, raw: _put(m, m.integer(raw, _MEMO_TEXT)),
    "BINPUT": _put,
    "LONG_BINPUT": _put,
    "MEMOIZE": lambda m, _: _put(m, len(m.memo)),
    "GLOBAL": _global,
    "STACK_GLOBAL": _stack_global,
    "REDUCE": _reduce,
    "BUILD": _build,
    "INST": _inst,
    "OBJ": _obj,
    "NEWOBJ": _newobj,
    "NEWOBJ_EX": _newobj_ex,
    "PROTO": _proto,
    "STOP": _stop,
    "FRAME": _frame,
    "PERSID": _persid,
    "BINPERSID": lambda m, _: m.stack.append(m.persistent(m.pop())),
}






def _step(op: Opcode) -> _Step:
    kind = op.arg
    fixed = struct.Struct(_FIXED[kind.name]) if kind is not None and kind.size > 0 else None
    length = struct.Struct(_LENGTH_FORMATS[kind.size]) if kind is not None and kind.size in _LENGTH_FORMATS \
        else None
    needs_mark, below, above = _stack_needs(op)
    checked = bool(op.refused) or op.proto > 1 or needs_mark
    return _Step(op, needs_mark, below, above, fixed, length, checked, _MEANINGS.get(op.name, _refused))


def _refused(m: Machine, _: Any) -> None:  # pragma: no cover - _admit refuses these opcodes first
    raise m.fail("bad-opcode", "refused opcode")


#: The opcode table, indexed by code byte, and each opcode's meaning by code byte.
_STEPS: list[_Step | None] = [None] * 256
for _op in oc.OPCODES:
    _STEPS[_op.code] = _step(_op)


def measure(value: Any, limits: Limits, where: int | None) -> None:
    """Walk ``value`` as spec/canonical.md writes it (shared mutable values once, immutable ones at every
    occurrence, in document order) and reject it (``limit-exceeded``) if it nests deeper than
    ``limits.max_depth``, needs more than ``limits.max_nodes`` nodes or more than ``limits.max_text``
    bytes of JSON text for its str and bytes values (spec/pickle.md#pickle-limits,
    spec/canonical.md#canonical-node-budget).

    The totals do not depend on the order of the walk: every shared value is written in full once and as
    a one-node ref elsewhere.  So an immutable container is walked at its first occurrence only; at every
    later one it costs its size with each shared value inside taken as a ref, computed once and cached.
    A tuple bomb fetched from the memo again and again thus costs one step per distinct value, and a
    string fetched again and again one escape count."""
    seen: set[int] = set()
    sizes: dict[int, _Size] = {}
    texts: dict[int, int] = {}
    nodes, text = 1, _text(value, texts)
    todo = [(value, 1)]
    while todo:
        v, depth = todo.pop()
        kids: list[Any] = []
        if isinstance(v, (tuple, frozenset)) and not isinstance(v, SHAREABLE) and id(v) in seen:
            n, d, t = _ref_size(v, sizes, texts)
            nodes += n - 1
            depth += d - 1
            text += t
        elif not (isinstance(v, SHAREABLE) and id(v) in seen):
            if isinstance(v, (tuple, frozenset, *SHAREABLE)):
                seen.add(id(v))
            kids = children(v)
            text += _texts(kids, texts)
        if nodes + len(kids) > limits.max_nodes:
            raise FormatError("limit-exceeded", where, f"the value needs more than {limits.max_nodes} nodes")
        if text > limits.max_text:
            raise FormatError("limit-exceeded", where,
                              f"the value needs more than {limits.max_text} bytes of JSON text")
        if depth + bool(kids) > limits.max_depth:
            raise FormatError("limit-exceeded", where, f"values nest deeper than {limits.max_depth}")
        nodes += len(kids)
        todo.extend((c, depth + 1) for c in reversed(kids) if type(c) not in _LEAVES)


_TEXTS = frozenset({str, bytes, bytearray})
_CONTAINERS = frozenset({list, tuple, set, frozenset, dict, collections.OrderedDict})


def _weight(v: Any) -> int:
    """What handing ``v`` to a call costs at its own level: its length (text: one per 64 units)."""
    t = type(v)
    if t in _CONTAINERS:
        return len(v)
    if t in _TEXTS:
        return len(v) >> 6
    return 0

#: Values that are one node and hold nothing.  A dense :class:`Tensor` holds nothing either
#: (:func:`~torchfmt.walk.children`) and, shared or not, is measured as its holder's child only.
_LEAVES = frozenset({type(None), bool, int, float, str, bytes, bytearray, Global, Storage, Tensor})
_Size = tuple[int, int, int]  # (nodes, depth, text) of an immutable container, shared values as refs


def _texts(kids: list[Any], cache: dict[int, int]) -> int:
    """:func:`_text` summed over ``kids``: the short strs escaped as one (each code point's escape is
    the same in any str, so the joined escape is their escapes' sum less the quotes of all but one; a
    state_dict's 20,000 keys are then one call, issue 12), the others one by one."""
    found = [c for c in kids if type(c) in _TEXTS]
    if not found:
        return 0
    if set(map(type, found)) == {str} and max(map(len, found)) < 256:  # the common case, in C loops
        return json_text_size("".join(found)) + 2 * len(found) - 2
    short = [c for c in found if type(c) is str and len(c) < 256]
    n = sum([_text(c, cache) for c in found if not (type(c) is str and len(c) < 256)])
    return n + json_text_size("".join(short)) + 2 * len(short) - 2 if short else n


def _text(v: Any, cache: dict[int, int]) -> int:
    """Bytes of JSON text ``v`` writes itself: a str as an escaped JSON string, a bytes value as hex."""
    if isinstance(v, (bytes, bytearray)):
        return 2 * len(v) + 2
    if not isinstance(v, str):
        return 0
    if len(v) < 256:  # cheaper to escape again than to cache
        return json_text_size(v)
    n = cache.get(id(v))
    if n is None:
        n = cache[id(v)] = json_text_size(v)
    return n


def _ref_size(v: tuple[Any, ...] | frozenset[Any], cache: dict[int, _Size], texts: dict[int, int]) -> _Size:
    """(nodes, depth, text) of an immutable container written with every shared value inside as a ref."""
    todo: list[tuple[Any, bool]] = [(v, False)]
    while todo:
        x, ready = todo.pop()
        if id(x) in cache:
            continue
        inner = [c for c in x if isinstance(c, (tuple, frozenset)) and not isinstance(c, SHAREABLE)]
        if not ready:
            todo.append((x, True))
            todo.extend((c, False) for c in inner if id(c) not in cache)
        else:
            sub = [cache[id(c)] for c in inner]
            cache[id(x)] = (1 + len(x) - len(inner) + sum(n for n, _, _ in sub),
                            1 + max([1] * (len(x) > len(inner)) + [d for _, d, _ in sub], default=0),
                            sum(_text(c, texts) for c in x) + sum(t for _, _, t in sub))
    return cache[id(v)]
