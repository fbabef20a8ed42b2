"""The pickle opcode table: every opcode of protocols 0-5 as data (spec/pickle.md#pickle-opcodes).

One record per opcode, in the spirit of CPython's ``Lib/pickletools.py`` (whose table a test checks this
one against): name, code byte, argument kind, the protocol that introduced it, the stack effect and a
one-line meaning.  :mod:`torchfmt.pickle.machine` is driven by this table: the code byte selects the
record, the argument kind says how many bytes follow and how to decode them, ``proto`` bounds where the
opcode may appear, and ``stack_before`` is checked before the opcode acts.  ``refused`` names the few
opcodes a file may not use, with the reason; the spec's table is generated from :func:`markdown_table`.
"""

from __future__ import annotations

from dataclasses import dataclass

# How an argument's length is known (the same sentinels as pickletools).
UP_TO_NEWLINE = -1  # text up to and including b"\n"
LENGTH_UINT1 = -2  # a 1-byte unsigned length, then that many bytes
LENGTH_INT4 = -3  # a 4-byte little-endian signed length, then that many bytes
LENGTH_UINT4 = -4  # a 4-byte little-endian unsigned length, then that many bytes
LENGTH_UINT8 = -5  # an 8-byte little-endian unsigned length, then that many bytes

_LENGTH_WORDS = {
    UP_TO_NEWLINE: "text up to a newline",
    LENGTH_UINT1: "uint1 length + bytes",
    LENGTH_INT4: "int4 length + bytes",
    LENGTH_UINT4: "uint4 length + bytes",
    LENGTH_UINT8: "uint8 length + bytes",
}


@dataclass(frozen=True)
class ArgKind:
    """How an opcode's inline argument is laid out: ``size`` bytes when positive, else one of the
    length sentinels above."""

    name: str
    size: int
    doc: str

    def layout(self) -> str:
        """The layout in words, for the spec table."""
        if self.size > 0:
            return f"{self.size} byte" + ("s" if self.size > 1 else "")
        return _LENGTH_WORDS[self.size]


def _a(name: str, size: int, doc: str) -> ArgKind:
    return ArgKind(name, size, doc)


UINT1 = _a("uint1", 1, "one unsigned byte")
UINT2 = _a("uint2", 2, "2-byte little-endian unsigned int")
INT4 = _a("int4", 4, "4-byte little-endian signed int")
UINT4 = _a("uint4", 4, "4-byte little-endian unsigned int")
UINT8 = _a("uint8", 8, "8-byte little-endian unsigned int")
FLOAT8 = _a("float8", 8, "8-byte big-endian IEEE-754 double")
LONG1 = _a("long1", LENGTH_UINT1, "two's-complement little-endian integer, uint1 length")
LONG4 = _a("long4", LENGTH_INT4, "two's-complement little-endian integer, int4 length")
DECIMALNL_SHORT = _a("decimalnl_short", UP_TO_NEWLINE, "decimal integer text; for INT, 00/01 mean False/True")
DECIMALNL_LONG = _a("decimalnl_long", UP_TO_NEWLINE, "decimal integer text with an optional trailing L")
FLOATNL = _a("floatnl", UP_TO_NEWLINE, "decimal float text (repr of a float)")
STRINGNL = _a("stringnl", UP_TO_NEWLINE, "a quoted Python string literal with backslash escapes")
STRINGNL_NOESCAPE = _a("stringnl_noescape", UP_TO_NEWLINE, "printable ASCII text")
STRINGNL_NOESCAPE_PAIR = _a("stringnl_noescape_pair", UP_TO_NEWLINE, "two newline-terminated texts")
STRING1 = _a("string1", LENGTH_UINT1, "Python 2 str bytes, uint1 length")
STRING4 = _a("string4", LENGTH_INT4, "Python 2 str bytes, int4 length")
BYTES1 = _a("bytes1", LENGTH_UINT1, "bytes, uint1 length")
BYTES4 = _a("bytes4", LENGTH_UINT4, "bytes, uint4 length")
BYTES8 = _a("bytes8", LENGTH_UINT8, "bytes, uint8 length")
BYTEARRAY8 = _a("bytearray8", LENGTH_UINT8, "bytearray, uint8 length")
UNICODESTRINGNL = _a("unicodestringnl", UP_TO_NEWLINE, "raw-unicode-escape text")
UNICODESTRING1 = _a("unicodestring1", LENGTH_UINT1, "UTF-8 bytes, uint1 length")
UNICODESTRING4 = _a("unicodestring4", LENGTH_UINT4, "UTF-8 bytes, uint4 length")
UNICODESTRING8 = _a("unicodestring8", LENGTH_UINT8, "UTF-8 bytes, uint8 length")

ARG_KINDS: tuple[ArgKind, ...] = (
    UINT1, UINT2, INT4, UINT4, UINT8, FLOAT8, LONG1, LONG4, DECIMALNL_SHORT, DECIMALNL_LONG, FLOATNL,
    STRINGNL, STRINGNL_NOESCAPE, STRINGNL_NOESCAPE_PAIR, STRING1, STRING4, BYTES1, BYTES4, BYTES8,
    BYTEARRAY8, UNICODESTRINGNL, UNICODESTRING1, UNICODESTRING4, UNICODESTRING8,
)


@dataclass(frozen=True)
class Opcode:
    """One pickle opcode.  ``stack_before``/``stack_after`` name the stack items the opcode consumes and
    produces, topmost last, with pickletools' names (``mark`` is a MARK, ``stackslice`` the items above
    it, ``any`` one item of any type)."""

    name: str
    code: int
    arg: ArgKind | None
    proto: int
    stack_before: tuple[str, ...]
    stack_after: tuple[str, ...]
    doc: str
    refused: str | None = None  # why a file may not use this opcode (spec/pickle.md#pickle-opcodes)

    @property
    def char(self) -> str:
        """The code byte as pickletools writes it (a one-character latin-1 string)."""
        return chr(self.code)


def _o(name: str, code: str, arg: ArgKind | None, proto: int, before: str, after: str, doc: str,
       refused: str | None = None) -> Opcode:
    return Opcode(name, ord(code), arg, proto, tuple(before.split()), tuple(after.split()), doc, refused)


_NO_BUFFERS = "out-of-band buffers cannot travel in a file"
_NO_REGISTRY = "the copyreg extension registry names globals outside the allowlist"

#: Every opcode of protocols 0-5, in pickletools' order.
OPCODES: tuple[Opcode, ...] = (
    # integers
    _o("INT", "I", DECIMALNL_SHORT, 0, "", "int_or_bool", "push an int; 00/01 push False/True"),
    _o("BININT", "J", INT4, 1, "", "int", "push a 4-byte signed int"),
    _o("BININT1", "K", UINT1, 1, "", "int", "push a 1-byte unsigned int"),
    _o("BININT2", "M", UINT2, 1, "", "int", "push a 2-byte unsigned int"),
    _o("LONG", "L", DECIMALNL_LONG, 0, "", "int", "push an int written in decimal"),
    _o("LONG1", "\x8a", LONG1, 2, "", "int", "push an int of up to 255 bytes"),
    _o("LONG4", "\x8b", LONG4, 2, "", "int", "push an int of an int4 byte count"),
    # strings and bytes
    _o("STRING", "S", STRINGNL, 0, "", "bytes_or_str", "push a Python 2 str from a quoted literal"),
    _o("BINSTRING", "T", STRING4, 1, "", "bytes_or_str", "push a Python 2 str, int4 length"),
    _o("SHORT_BINSTRING", "U", STRING1, 1, "", "bytes_or_str", "push a Python 2 str, uint1 length"),
    _o("BINBYTES", "B", BYTES4, 3, "", "bytes", "push bytes, uint4 length"),
    _o("SHORT_BINBYTES", "C", BYTES1, 3, "", "bytes", "push bytes, uint1 length"),
    _o("BINBYTES8", "\x8e", BYTES8, 4, "", "bytes", "push bytes, uint8 length"),
    _o("BYTEARRAY8", "\x96", BYTEARRAY8, 5, "", "bytearray", "push a bytearray, uint8 length"),
    _o("NEXT_BUFFER", "\x97", None, 5, "", "buffer", "push the next out-of-band buffer", _NO_BUFFERS),
    _o("READONLY_BUFFER", "\x98", None, 5, "buffer", "buffer", "make the top buffer read-only",
       _NO_BUFFERS),
    # constants
    _o("NONE", "N", None, 0, "", "None", "push None"),
    _o("NEWTRUE", "\x88", None, 2, "", "bool", "push True"),
    _o("NEWFALSE", "\x89", None, 2, "", "bool", "push False"),
    # text
    _o("UNICODE", "V", UNICODESTRINGNL, 0, "", "str", "push a str from raw-unicode-escape text"),
    _o("SHORT_BINUNICODE", "\x8c", UNICODESTRING1, 4, "", "str", "push a UTF-8 str, uint1 length"),
    _o("BINUNICODE", "X", UNICODESTRING4, 1, "", "str", "push a UTF-8 str, uint4 length"),
    _o("BINUNICODE8", "\x8d", UNICODESTRING8, 4, "", "str", "push a UTF-8 str, uint8 length"),
    # floats
    _o("FLOAT", "F", FLOATNL, 0, "", "float", "push a float written in decimal"),
    _o("BINFLOAT", "G", FLOAT8, 1, "", "float", "push an 8-byte big-endian double"),
    # lists
    _o("EMPTY_LIST", "]", None, 1, "", "list", "push an empty list"),
    _o("APPEND", "a", None, 0, "list any", "list", "append the top item to the list below it"),
    _o("APPENDS", "e", None, 1, "list mark stackslice", "list", "extend the list below the mark"),
    _o("LIST", "l", None, 0, "mark stackslice", "list", "replace the mark and items with a list"),
    # tuples
    _o("EMPTY_TUPLE", ")", None, 1, "", "tuple", "push an empty tuple"),
    _o("TUPLE", "t", None, 0, "mark stackslice", "tuple", "replace the mark and items with a tuple"),
    _o("TUPLE1", "\x85", None, 2, "any", "tuple", "replace the top item with a 1-tuple"),
    _o("TUPLE2", "\x86", None, 2, "any any", "tuple", "replace the top two items with a 2-tuple"),
    _o("TUPLE3", "\x87", None, 2, "any any any", "tuple", "replace the top three items with a 3-tuple"),
    # dicts
    _o("EMPTY_DICT", "}", None, 1, "", "dict", "push an empty dict"),
    _o("DICT", "d", None, 0, "mark stackslice", "dict", "replace the mark and key/value items with a dict"),
    _o("SETITEM", "s", None, 0, "dict any any", "dict", "set dict[key] = value from the top two items"),
    _o("SETITEMS", "u", None, 1, "dict mark stackslice", "dict", "set key/value items into the dict below"),
    # sets
    _o("EMPTY_SET", "\x8f", None, 4, "", "set", "push an empty set"),
    _o("ADDITEMS", "\x90", None, 4, "set mark stackslice", "set", "add the items to the set below"),
    _o("FROZENSET", "\x91", None, 4, "mark stackslice", "frozenset", "mark and items -> frozenset"),
    # stack
    _o("POP", "0", None, 0, "any", "", "discard the top item (or the topmost mark when none is above it)"),
    _o("DUP", "2", None, 0, "any", "any any", "push the top item again"),
    _o("MARK", "(", None, 0, "", "mark", "push a mark"),
    _o("POP_MARK", "1", None, 1, "mark stackslice", "", "discard the topmost mark and the items above it"),
    # memo
    _o("GET", "g", DECIMALNL_SHORT, 0, "", "any", "push memo[n], n in decimal"),
    _o("BINGET", "h", UINT1, 1, "", "any", "push memo[n], n a uint1"),
    _o("LONG_BINGET", "j", UINT4, 1, "", "any", "push memo[n], n a uint4"),
    _o("PUT", "p", DECIMALNL_SHORT, 0, "", "", "memo[n] = top item, n in decimal"),
    _o("BINPUT", "q", UINT1, 1, "", "", "memo[n] = top item, n a uint1"),
    _o("LONG_BINPUT", "r", UINT4, 1, "", "", "memo[n] = top item, n a uint4"),
    _o("MEMOIZE", "\x94", None, 4, "any", "any", "memo[len(memo)] = top item"),
    # extension registry
    _o("EXT1", "\x82", UINT1, 2, "", "any", "push the global registered under a 1-byte code", _NO_REGISTRY),
    _o("EXT2", "\x83", UINT2, 2, "", "any", "push the global registered under a 2-byte code", _NO_REGISTRY),
    _o("EXT4", "\x84", INT4, 2, "", "any", "push the global registered under a 4-byte code", _NO_REGISTRY),
    # globals and objects
    _o("GLOBAL", "c", STRINGNL_NOESCAPE_PAIR, 0, "", "any", "push the global module.name (allowlist)"),
    _o("STACK_GLOBAL", "\x93", None, 4, "str str", "any", "push the global named by two str items"),
    _o("REDUCE", "R", None, 0, "any any", "any", "call the callable below with the argument tuple on top"),
    _o("BUILD", "b", None, 0, "any any", "any", "set the state on top into the object below it"),
    _o("INST", "i", STRINGNL_NOESCAPE_PAIR, 0, "mark stackslice", "any", "call module.name with the items"),
    _o("OBJ", "o", None, 1, "mark any stackslice", "any", "call the first item after the mark with the rest"),
    _o("NEWOBJ", "\x81", None, 2, "any any", "any", "cls.__new__(cls, *args) from the top two items"),
    _o("NEWOBJ_EX", "\x92", None, 4, "any any any", "any", "cls.__new__(cls, *args, **kwargs)"),
    # machine control
    _o("PROTO", "\x80", UINT1, 2, "", "", "declare the protocol (0-5); first opcode only"),
    _o("STOP", ".", None, 0, "any", "", "end: the one item on the stack is the result"),
    _o("FRAME", "\x95", UINT8, 4, "", "", "the next n bytes form a frame (a read hint)"),
    # persistent ids
    _o("PERSID", "P", STRINGNL_NOESCAPE, 0, "", "any", "push the object named by a text persistent id"),
    _o("BINPERSID", "Q", None, 1, "any", "any", "replace the top item with the object it names"),
)

BY_CODE: dict[int, Opcode] = {op.code: op for op in OPCODES}
BY_NAME: dict[str, Opcode] = {op.name: op for op in OPCODES}
HIGHEST_PROTOCOL = max(op.proto for op in OPCODES)


def markdown_table() -> str:
    """The opcode table of spec/pickle.md#pickle-opcodes, generated from :data:`OPCODES`."""
    rows = [
        "| opcode | byte | argument | protocol | stack before → after | meaning | reader |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for op in OPCODES:
        arg = "—" if op.arg is None else f"{op.arg.name} ({op.arg.layout()})"
        stack = f"{' '.join(op.stack_before) or '·'} → {' '.join(op.stack_after) or '·'}"
        reader = f"MUST reject (`bad-opcode`): {op.refused}" if op.refused else "MUST support"
        rows.append(f"| {op.name} | `0x{op.code:02x}` | {arg} | {op.proto} | {stack} | {op.doc} | {reader} |")
    return "\n".join(rows) + "\n"


#: The opcodes torch 2.13's ``weights_only`` unpickler runs (``torch/_weights_only_unpickler.py``): a
#: pickle holding any other is refused (``Unsupported operand``) whatever the allowlist holds, so files of
#: protocols 0, 1, 4 and 5 are refused as soon as they use an opcode of their own (FRAME, MEMOIZE,
#: SHORT_BINUNICODE, STACK_GLOBAL, PUT, ...; spec/inspect.md#inspect-readiness).  A test checks this set
#: against torch opcode by opcode.
WEIGHTS_ONLY: frozenset[str] = frozenset({
    "GLOBAL", "NEWOBJ", "REDUCE", "BUILD", "APPEND", "APPENDS", "SETITEM", "SETITEMS", "MARK", "TUPLE",
    "TUPLE1", "TUPLE2", "TUPLE3", "NONE", "NEWFALSE", "NEWTRUE", "EMPTY_TUPLE", "EMPTY_LIST", "EMPTY_DICT",
    "EMPTY_SET", "BININT", "BININT1", "BININT2", "BINFLOAT", "BINUNICODE", "SHORT_BINSTRING", "BINPERSID",
    "BINGET", "LONG_BINGET", "BINPUT", "LONG_BINPUT", "LONG1", "PROTO", "STOP",
})


def walk(buf: bytes | memoryview, start: int, end: int) -> list[tuple[int, Opcode]]:
    """``(offset, opcode)`` of each opcode of a pickle already run from ``start`` to ``end`` (the offset
    after its STOP), its arguments skipped by the table's layouts."""
    data = bytes(buf[start:end])  # one copy of the pickle alone, searched for newlines
    out: list[tuple[int, Opcode]] = []
    pos, n = 0, len(data)
    while pos < n:
        op = BY_CODE[data[pos]]
        out.append((start + pos, op))
        pos += 1
        if op.arg is None:
            continue
        size = op.arg.size
        if size > 0:
            pos += size
        elif size == UP_TO_NEWLINE:
            for _ in range(2 if op.arg is STRINGNL_NOESCAPE_PAIR else 1):
                nl = data.find(b"\n", pos)
                pos = n if nl < 0 else nl + 1
        else:
            width = {LENGTH_UINT1: 1, LENGTH_INT4: 4, LENGTH_UINT4: 4, LENGTH_UINT8: 8}[size]
            pos += width + int.from_bytes(data[pos:pos + width], "little", signed=size == LENGTH_INT4)
    return out
