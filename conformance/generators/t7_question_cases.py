"""The cases of conformance/generators/t7_questions.py: the ``.t7`` questions of issue 18, each a small
stream built from the grammar of spec/t7.md (binary ones little-endian with 8-byte longs unless a case
says otherwise), with the spec anchors it decides and why it is stricter than Lua Torch where it is.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

from conformance.generators import lua_torch

PREFIX = "spec-"
WRITER = "generated (t7 spec questions)"

NIL, NUMBER, STRING, TABLE, TORCH, BOOLEAN, FUNCTION, LEGACY_RECUR, RECUR = range(9)


# -- binary builders (little-endian, 8-byte longs unless told) ----------------------------------------
def i(v: int) -> bytes:
    return struct.pack("<i", v)


def q(v: int) -> bytes:
    return struct.pack("<q", v)


def d(v: float) -> bytes:
    return struct.pack("<d", v)


def chars(b: bytes) -> bytes:
    return i(len(b)) + b


def num(v: float) -> bytes:
    return i(NUMBER) + d(v)


def string(b: bytes) -> bytes:
    return i(STRING) + chars(b)


def table(index: int, *pairs: bytes) -> bytes:
    return i(TABLE) + i(index) + i(len(pairs) // 2) + b"".join(pairs)


def ref(code: int, index: int) -> bytes:
    return i(code) + i(index)


def torch_obj(index: int, cls: bytes, payload: bytes, version: bytes | None = b"1") -> bytes:
    header = chars(cls) if version is None else chars(b"V " + version) + chars(cls)
    return i(TORCH) + i(index) + header + payload


def storage(index: int, stem: str, values: list[float] | list[int]) -> bytes:
    fmt = {"Float": "<f", "Double": "<d", "Long": "<q", "Int": "<i", "Byte": "<B"}[stem]
    raw = b"".join(struct.pack(fmt, v) for v in values)
    return torch_obj(index, f"torch.{stem}Storage".encode(), q(len(values)) + raw)


def tensor(
    index: int,
    stem: str,
    sizes: list[int],
    strides: list[int],
    offset: int,
    storage_obj: bytes,
    version: bytes = b"1",
) -> bytes:
    body = i(len(sizes)) + b"".join(q(s) for s in sizes) + b"".join(q(s) for s in strides) + q(offset)
    return torch_obj(index, f"torch.{stem}Tensor".encode(), body + storage_obj, version)


# -- the case record -----------------------------------------------------------------------------------
@dataclass
class Case:
    name: str
    fmt: str  # t7-binary | t7-ascii
    data: bytes
    category: str  # accept | reject | impl
    errors: list[str]
    features: list[str]
    spec: list[str]
    how: str
    hints: dict[str, Any]
    why: str = ""  # reject/impl that Lua Torch loads: why this spec is stricter
    versions: dict[str, str | None] = field(default_factory=dict)  # class -> version text, for expected
    functions: list[tuple[str, bytes]] = field(default_factory=list)  # (kind, bytecode) in document order
    writer: str = WRITER
    lua: tuple[bool, str] | None = None  # (loads, what Lua said), filled in by run_lua

    @property
    def folder(self) -> str:
        return f"{self.fmt}/{PREFIX}{self.name}"

    def lua_args(self) -> list[str]:
        return [
            self.hints.get("mode") or ("ascii" if self.fmt == "t7-ascii" else "binary"),
            str(self.hints.get("long_size") or 8),
            self.hints.get("byte_order") or "little",
        ]


BIN = {"mode": "binary", "long_size": 8, "byte_order": "little"}
ASC = {"mode": "ascii"}


#: LuaJIT 2.1 bytecode (``string.dump(f, true)``) of ``function() return u end`` (one upvalue) and of
#: ``function() return 1 end`` (none), as the Lua Torch of lua_torch.py writes them.
B1 = bytes.fromhex("1b4c4a020a11000001010000022d0000004c00020000c000")
B0 = bytes.fromhex("1b4c4a020a0f00000100000002290001004c00020000")

DETECT = ["t7.md#t7-detect", "t7.md#t7-long-size"]
ASCII = ["t7.md#t7-ascii", "t7.md#t7-encodings"]
LIMITS = ["t7.md#t7-limits"]
NO_LONG = {"mode": "binary", "byte_order": "little"}


def fn(code: int, index: int | None, bytecode: bytes, upvalues: bytes) -> bytes:
    """A function of type ``code`` (6: no index)."""
    return i(code) + (b"" if index is None else i(index)) + chars(bytecode) + upvalues


def detection_cases() -> list[Case]:
    """spec/t7.md#t7-detect step 3: both long sizes fail; the reading that consumed more bytes wins."""
    head = i(TORCH) + i(1) + chars(b"V 1") + chars(b"torch.FloatStorage")  # 37 bytes, then the count
    how = (
        "a FloatStorage header (37 bytes) and then {}; read without a long size hint. With 8-byte longs {}; "
        "with 4-byte longs {}"
    )
    feats = ["t7-binary", "t7-long-size-ambiguous", "t7-torch-object", "dtype-float32", "multi-object"]
    return [
        Case(
            "detect-both-fail-tie",
            "t7-binary",
            head + i(0) + i(9),
            "reject",
            ["truncated"],
            feats,
            DETECT,
            how.format(
                "the words 0, 9",
                "the count is 9 * 2^32: truncated, 45 bytes consumed (the count, not its elements)",
                "the count is 0 and the next object's type code is "
                "9: bad-type-code, 45 bytes consumed (the type code read whole). A tie: the "
                "8-byte reading's error. A reader that compares the offsets its errors name "
                "(37 and 41) answers bad-type-code",
            ),
            NO_LONG,
        ),
        Case(
            "detect-both-fail-four-further",
            "t7-binary",
            head + i(1) + i(1) + i(9),
            "reject",
            ["bad-type-code"],
            feats,
            DETECT,
            how.format(
                "the words 1, 1, 9",
                "the count is 2^32 + 1: truncated after 45 bytes",
                "one element (the word 1), then type code 9: bad-type-code after 49 "
                "bytes, further, so it is the error",
            ),
            NO_LONG,
        ),
        Case(
            "detect-both-fail-eight-further",
            "t7-binary",
            head + i(2) + i(0) + i(0x3F800000) + i(TABLE) + i(NIL) + i(9),
            "reject",
            ["bad-type-code"],
            feats,
            DETECT,
            how.format(
                "the words 2, 0, then two floats (1.0 and the bits of 3), a nil and 9",
                "two elements, a nil, then type code 9: bad-type-code after 61 bytes",
                "two elements (the words 0 and "
                "1.0), then a table (the word 3) whose index is 0: bad-reference after 57 bytes. The "
                "8-byte reading went further",
            ),
            NO_LONG,
        ),
    ]


def ascii_int_cases() -> list[Case]:
    """spec/t7.md#t7-ascii: integer bounds, tokens that run to the end of the file."""
    feats = ["t7-ascii", "t7-nil"]
    storage_head = b"4\n1\n3\nV 1\n18\ntorch.FloatStorage\n"
    cut = "the file ends inside the token: what follows it is missing"
    overflow = (
        "fscanf's conversion of an integer beyond its type is undefined in C; this spec rejects the token"
    )
    return [
        Case(
            "ascii-int-above-int32-at-eof",
            "t7-ascii",
            b"0\n2147483648",
            "reject",
            ["bad-value"],
            feats + ["adv-digit-text"],
            ASCII,
            "a nil, then the type code 2147483648 (2^31) running to the end of "
            "the file: a whole integer token, out of range for an int",
            ASC,
            why=overflow,
        ),
        Case(
            "ascii-int-max-int32-at-eof",
            "t7-ascii",
            b"0\n2147483647",
            "reject",
            ["bad-type-code"],
            feats + ["adv-bad-type-code"],
            ASCII + ["t7.md#t7-type-codes"],
            "a nil, then the type code 2147483647 (2^31 - 1) running to the end of the file: an int, no type "
            "code",
            ASC,
        ),
        Case(
            "ascii-int-below-int32",
            "t7-ascii",
            b"0\n-2147483649\n",
            "reject",
            ["bad-value"],
            feats + ["adv-digit-text"],
            ASCII,
            "a nil, then the type code -2147483649 (-2^31 - 1): out of range for an int",
            ASC,
            why=overflow,
        ),
        Case(
            "ascii-int-min-int32",
            "t7-ascii",
            b"0\n-2147483648\n",
            "reject",
            ["bad-type-code"],
            feats + ["adv-bad-type-code"],
            ASCII + ["t7.md#t7-type-codes"],
            "a nil, then the type code -2147483648 (-2^31): an int, no type code",
            ASC,
        ),
        Case(
            "ascii-table-count-int32-max",
            "t7-ascii",
            b"3\n1\n2147483647\n",
            "reject",
            ["truncated"],
            ["t7-ascii", "t7-table", "adv-huge-count"],
            ASCII + ["t7.md#t7-table", "t7.md#t7-limits"],
            "a table whose count is 2^31 - 1: an int, more pairs than the bytes left",
            ASC,
        ),
        Case(
            "ascii-table-count-above-int32",
            "t7-ascii",
            b"3\n1\n2147483648\n",
            "reject",
            ["bad-value"],
            ["t7-ascii", "t7-table", "adv-digit-text"],
            ASCII + ["t7.md#t7-table"],
            "a table whose count is 2^31: out of range for an int (it is no count at all)",
            ASC,
            why=overflow,
        ),
        Case(
            "ascii-long-int64-max",
            "t7-ascii",
            storage_head + b"9223372036854775807\n",
            "reject",
            ["truncated"],
            ["t7-ascii", "t7-torch-object", "t7-class-version", "dtype-float32", "adv-huge-count"],
            ASCII + ["t7.md#t7-storage", "t7.md#t7-limits"],
            "a FloatStorage whose count (a long) is 2^63 - 1: in range, more elements than the bytes left",
            ASC,
        ),
        Case(
            "ascii-long-above-int64",
            "t7-ascii",
            storage_head + b"9223372036854775808\n",
            "reject",
            ["bad-value"],
            ["t7-ascii", "t7-torch-object", "t7-class-version", "dtype-float32", "adv-digit-text"],
            ASCII + ["t7.md#t7-storage"],
            "a FloatStorage whose count (a long) is 2^63: out of range",
            ASC,
            why=overflow,
        ),
        Case(
            "ascii-number-cut-in-exponent",
            "t7-ascii",
            b"1\n1e",
            "reject",
            ["truncated"],
            ["t7-ascii", "t7-number", "adv-truncated"],
            ASCII,
            "a number whose token '1e' runs to the end of the file: an exponent without digits, " + cut,
            ASC,
            why="fscanf reads '1e' as 1; the token is no number, and the file ends inside it",
        ),
        Case(
            "ascii-number-cut-at-sign",
            "t7-ascii",
            b"1\n-",
            "reject",
            ["truncated"],
            ["t7-ascii", "t7-number", "adv-truncated"],
            ASCII,
            "a number whose token is a lone '-' at the end of the file: " + cut,
            ASC,
        ),
        Case(
            "ascii-count-cut-at-sign",
            "t7-ascii",
            b"3\n1\n+",
            "reject",
            ["truncated"],
            ["t7-ascii", "t7-table", "adv-truncated"],
            ASCII,
            "a table whose count is a lone '+' at the end of the file: " + cut,
            ASC,
        ),
        Case(
            "ascii-number-bad-exponent",
            "t7-ascii",
            b"1\n1ex\n",
            "reject",
            ["bad-value"],
            ["t7-ascii", "t7-number", "adv-number-text"],
            ASCII,
            "a number whose token is '1ex', followed by a newline: no number, and not cut by the end",
            ASC,
            why="fscanf reads the '1e' of it as 1; a token must be a number followed by whitespace",
        ),
    ]


def ascii_number_cases() -> list[Case]:
    """spec/t7.md#t7-ascii: the floating token grammar, overflow, and the final NUL of torch.serialize."""

    def number(name: str, token: bytes, category: str, errors: list[str], how: str, why: str = "") -> Case:
        return Case(
            name,
            "t7-ascii",
            b"1\n" + token + b"\n",
            category,
            errors,
            ["t7-ascii", "t7-number"],
            ASCII + ["t7.md#t7-number"],
            f"a number written as the token {token.decode()!r}: {how}",
            ASC,
            why=why,
        )

    return [
        number(
            "ascii-number-trailing-point", b"1.", "accept", [], "digits and a point without a fraction, 1"
        ),
        number(
            "ascii-number-point-exponent", b"1.e5", "accept", [], "a point, no fraction, an exponent: 100000"
        ),
        number(
            "ascii-number-hex-no-exponent",
            b"0x1.8",
            "accept",
            [],
            "a C hexadecimal float without its binary exponent: 1.5",
        ),
        number(
            "ascii-number-overflow",
            b"1e999",
            "accept",
            [],
            "beyond the largest double: infinity, as strtod gives",
        ),
        number("ascii-number-underflow", b"-1e-400", "accept", [], "below the smallest subnormal: -0.0"),
        number(
            "ascii-number-hex-empty-exponent",
            b"0x1p",
            "reject",
            ["bad-value"],
            "a binary exponent without digits: no token",
            why="glibc's fscanf consumes '0x1p' and gives 1; strtod would stop before the 'p': the token is "
            "no number, and a reader cannot tell which the writer meant",
        ),
        number(
            "ascii-number-exponent-only",
            b"e5",
            "reject",
            ["bad-value"],
            "an exponent without digits before it: no number",
        ),
        number("ascii-number-lone-point", b".", "reject", ["bad-value"], "a point without digits: no number"),
        number(
            "ascii-number-nan-payload",
            b"nan(1)",
            "reject",
            ["bad-value"],
            "nan with a parenthesised payload, which glibc's fscanf (unlike strtod) does not read",
        ),
        Case(
            "ascii-token-then-final-nul",
            "t7-ascii",
            b"1\n0.5\x00",
            "accept",
            [],
            ["t7-ascii", "t7-number", "t7-serialize"],
            ASCII + ["t7.md#t7-serialize", "t7.md#t7-stream"],
            "a number whose token '0.5' is followed directly by one NUL, the last byte (a torch.serialize "
            "string whose writer left out the newline): the final NUL ends the stream, so the token is "
            "followed by the end",
            ASC,
        ),
        Case(
            "ascii-nil-then-final-nul",
            "t7-ascii",
            b"0\x00",
            "accept",
            [],
            ["t7-ascii", "t7-nil", "t7-serialize"],
            ASCII + ["t7.md#t7-serialize", "t7.md#t7-stream"],
            "the type code '0' (a nil) followed directly by one NUL, the last byte",
            ASC,
        ),
        Case(
            "ascii-token-then-two-nuls",
            "t7-ascii",
            b"0\x00\x00",
            "reject",
            ["bad-value"],
            ["t7-ascii", "t7-nil", "t7-serialize", "adv-trailing-data"],
            ASCII + ["t7.md#t7-serialize", "t7.md#t7-stream"],
            "the type code '0' followed by two NULs: only "
            "the last byte may be the NUL that ends a "
            "stream, so the token is followed by a byte "
            "that is neither whitespace nor the end",
            ASC,
        ),
    ]


def tensor_cases() -> list[Case]:
    """spec/t7.md#t7-tensor against spec/tensors.md#tensors-empty: counts in elements, empty tensors."""
    feats = ["t7-binary", "t7-torch-object", "t7-class-version"]
    spec = ["t7.md#t7-tensor", "tensors.md#tensors-empty", "tensors.md#tensors-view"]
    empty_storage = storage(2, "Float", [])
    return [
        Case(
            "tensor-empty-size-product-2p64",
            "t7-binary",
            tensor(1, "Float", [0, 1 << 62, 4], [16, 4, 1], 1, empty_storage),
            "accept",
            [],
            feats + ["empty-tensor", "dtype-float32"],
            spec + DETECT,
            "a FloatTensor of sizes [0, 2^62, 4] (strides [16, 4, 1]) over an empty FloatStorage, read "
            "without "
            "a long size hint: no element, whatever the product of the other sizes (2^64). The 8-byte "
            "reading "
            "is one object; a reader that refuses it must not fall back to the 4-byte reading",
            NO_LONG,
        ),
        Case(
            "tensor-stride-2p61-float",
            "t7-binary",
            tensor(1, "Float", [1], [1 << 61], 1, storage(2, "Float", [1.5])),
            "accept",
            [],
            feats + ["dtype-float32"],
            spec + ["tensors.md#tensors-stride"],
            "a one-element FloatTensor whose one stride is 2^61 elements (2^63 bytes): strides count "
            "elements, "
            "and a stride below 2^63 is a stride",
            BIN,
        ),
        Case(
            "tensor-empty-stride-2p62-double",
            "t7-binary",
            tensor(1, "Double", [0], [1 << 62], 5, storage(2, "Double", [])),
            "accept",
            [],
            feats + ["empty-tensor", "dtype-float64", "storage-offset"],
            spec,
            "an empty DoubleTensor whose stride is 2^62 elements (2^65 bytes) and whose offset (5) lies "
            "beyond "
            "its empty storage",
            BIN,
        ),
        Case(
            "tensor-view-3d-outside",
            "t7-binary",
            tensor(1, "Float", [2, 2, 2], [4, 2, 1], 1, storage(2, "Float", [0.0] * 7)),
            "reject",
            ["out-of-bounds"],
            feats + ["dtype-float32", "adv-view-out-of-bounds"],
            ["t7.md#t7-tensor-offset", "tensors.md#tensors-view-bounds"],
            "a 2x2x2 FloatTensor, contiguous, over 7 elements: its last element is element 7 (0-based)",
            BIN,
            why="torch7 checks no view against its storage and reads past it (spec/t7.md, stricter)",
        ),
        Case(
            "tensor-view-1d-outside",
            "t7-binary",
            tensor(1, "Float", [4], [2], 1, storage(2, "Float", [0.0] * 6)),
            "reject",
            ["out-of-bounds"],
            feats + ["dtype-float32", "adv-view-out-of-bounds"],
            ["t7.md#t7-tensor-offset", "tensors.md#tensors-view-bounds"],
            "a 4-element FloatTensor of stride 2 over 6 elements: its last element is element 6",
            BIN,
            why="torch7 checks no view against its storage and reads past it (spec/t7.md, stricter)",
        ),
        Case(
            "tensor-elements-without-storage",
            "t7-binary",
            tensor(1, "Float", [2], [1], 1, i(NIL)),
            "reject",
            ["out-of-bounds"],
            feats + ["dtype-float32", "no-storage", "adv-view-out-of-bounds"],
            ["t7.md#t7-tensor-offset"],
            "a 2-element FloatTensor whose storage is nil",
            BIN,
            why="torch7 makes a tensor whose elements point nowhere; it crashes when they are read",
        ),
    ]


def _nest_tables(n: int, bottom: bytes, first: int = 1) -> bytes:
    """``n`` new tables, each the value of key 1 in the one before; the last holds key 1 -> ``bottom``
    (``bottom`` empty: the last table is empty)."""
    out = b""
    for k in range(n):
        last = k == n - 1
        out += i(TABLE) + i(first + k) + i(0 if last and not bottom else 1)
        if not last or bottom:
            out += num(1.0)
    return out + bottom


def nesting_cases() -> list[Case]:
    """spec/t7.md#t7-limits: what one level is, read at 1,022 to 1,025 levels."""
    out = []
    spec = LIMITS + ["t7.md#t7-table"]
    feats = ["t7-binary", "adv-deep-nesting"]
    for depth in (1022, 1023, 1024, 1025):
        out.append(
            Case(
                f"nesting-tables-{depth}",
                "t7-binary",
                _nest_tables(depth, b""),
                "accept" if depth <= 1024 else "impl",
                [] if depth <= 1024 else ["limit-exceeded"],
                feats + ["t7-table", "t7-number"],
                spec,
                f"{depth} tables, each the value of key 1 in the one before, the last empty: {depth} levels",
                BIN,
                why="a reader may refuse objects deeper than 1,024 levels",
            )
        )

    def objects(n: int, bottom: bytes) -> bytes:
        """``n`` nn.Identity objects, each the field 'next' of the one before (2 levels each: the object
        and its fields table); the last one's fields table holds 'x' -> ``bottom`` (or nothing)."""
        data = b""
        for k in range(n):
            data += i(TORCH) + i(2 * k + 1) + chars(b"V 1") + chars(b"nn.Identity") + i(TABLE) + i(2 * k + 2)
            if k < n - 1:
                data += i(1) + string(b"next")
            else:
                data += (i(1) + string(b"x") + bottom) if bottom else i(0)
        return data

    obj = ["t7-torch-object", "t7-nn-module", "t7-class-version", "t7-table", "t7-string"]
    out.append(
        Case(
            "nesting-objects-1024",
            "t7-binary",
            objects(512, b""),
            "accept",
            [],
            feats + obj,
            spec + ["t7.md#t7-custom-write"],
            "512 nn.Identity objects, each the field 'next' of the one "
            "before: an object and its fields table are a level each, the last fields table (empty) is "
            "level 1,024",
            BIN,
        )
    )
    out.append(
        Case(
            "nesting-objects-1025",
            "t7-binary",
            objects(512, i(TABLE) + i(1025) + i(0)),
            "impl",
            ["limit-exceeded"],
            feats + obj,
            spec + ["t7.md#t7-custom-write"],
            "512 nn.Identity objects as in spec-nesting-objects-1024, the last fields table holding an "
            "empty table (level 1,025)",
            BIN,
            why="a reader may refuse objects deeper than 1,024 levels",
        )
    )

    def functions(n: int, last_upvalues: bytes) -> bytes:
        """``n`` functions of type 7, each the one upvalue of the one before (2 levels each: the function
        and its upvalues table); the last one's upvalues table is ``last_upvalues``."""
        data = b""
        for k in range(n):
            last = k == n - 1
            data += (
                i(LEGACY_RECUR)
                + i(2 * k + 1)
                + chars(B0 if last and not last_upvalues[8:12].strip(b"\0") else B1)
            )
            data += last_upvalues if last else i(TABLE) + i(2 * k + 2) + i(1) + num(1.0)
        return data

    fun = ["t7-function", "t7-legacy-function", "t7-table", "t7-number"]
    fspec = spec + ["t7.md#t7-function"]
    out.append(
        Case(
            "nesting-functions-1024",
            "t7-binary",
            functions(512, i(TABLE) + i(1024) + i(0)),
            "accept",
            [],
            feats + fun,
            fspec,
            "512 functions of type 7 (LuaJIT bytecode), each the one upvalue "
            "of the one before: a function and its upvalues table are a level each; the last function "
            "has no upvalue and its upvalues table (empty) is level 1,024",
            BIN,
            functions=[("legacy_recursive", B1)] * 511 + [("legacy_recursive", B0)],
        )
    )
    out.append(
        Case(
            "nesting-functions-1025",
            "t7-binary",
            functions(512, i(TABLE) + i(1024) + i(1) + num(1.0) + i(TABLE) + i(1025) + i(0)),
            "impl",
            ["limit-exceeded"],
            feats + fun,
            fspec,
            "512 functions as in spec-nesting-functions-1024, the "
            "last one's upvalue an empty table (level 1,025)",
            BIN,
            why="a reader may refuse objects deeper than 1,024 levels",
        )
    )

    def tds(cls: bytes, n: int, bottom: bytes) -> bytes:
        """``n`` tds objects of class ``cls``, each holding the next (at key 'next' of a Hash, or as the
        one element of a Vec): 2 levels each, the object and the table or list it is described with."""
        data = b""
        for k in range(n):
            data += i(TORCH) + i(k + 1) + chars(b"V 0") + chars(cls)
            last = k == n - 1
            if last and not bottom:
                data += q(0)
            elif cls == b"tds.Hash":
                data += q(1) + string(b"next" if not last else b"x") + (bottom if last else b"")
            else:
                data += q(1) + (bottom if last else b"")
        return data

    tspec = spec + ["t7.md#t7-tds"]
    for cls, name in ((b"tds.Hash", "hash"), (b"tds.Vec", "vec")):
        tfeat = (
            feats
            + ["t7-tds", "t7-torch-object", "t7-class-version"]
            + (["t7-string"] if name == "hash" else [])
        )
        out.append(
            Case(
                f"nesting-tds-{name}-1024",
                "t7-binary",
                tds(cls, 512, b""),
                "accept",
                [],
                tfeat,
                tspec,
                f"512 {cls.decode()} objects, each holding the next: a tds object and the "
                f"{'table' if name == 'hash' else 'list'} it is described with are a level each; the "
                "last one is empty, its items would be level 1,025",
                BIN,
                versions={cls.decode(): "0"},
            )
        )
        bottom = i(TORCH) + i(513) + chars(b"V 0") + chars(cls) + q(0)
        out.append(
            Case(
                f"nesting-tds-{name}-1025",
                "t7-binary",
                tds(cls, 512, bottom),
                "impl",
                ["limit-exceeded"],
                tfeat,
                tspec,
                f"513 {cls.decode()} objects nested as in "
                f"spec-nesting-tds-{name}-1024: the last, empty, is level 1,025",
                BIN,
                why="a reader may refuse objects deeper than 1,024 levels",
            )
        )
    for depth in (1024, 1025):
        tables = depth - 2
        bottom = tensor(tables + 1, "Float", [2], [1], 1, storage(tables + 2, "Float", [1.0, 2.0]))
        out.append(
            Case(
                f"nesting-tensor-storage-{depth}",
                "t7-binary",
                _nest_tables(tables, bottom),
                "accept" if depth == 1024 else "impl",
                [] if depth == 1024 else ["limit-exceeded"],
                feats + ["t7-table", "t7-number", "t7-torch-object", "dtype-float32", "t7-class-version"],
                spec + ["t7.md#t7-tensor"],
                f"{tables} nested tables, the last holding a FloatTensor "
                f"(level {depth - 1}) whose storage is level {depth}",
                BIN,
                why="a reader may refuse objects deeper than 1,024 levels",
            )
        )
    return out


def budget_and_function_cases() -> list[Case]:
    """A node-budget bomb through type 6 upvalues; upvalues taken from a table still being read."""
    items = b"".join(num(float(k)) + string(b"x") for k in range(1, 1001))
    fns = b"".join(num(float(k)) + fn(FUNCTION, None, B0, ref(TABLE, 2)) for k in range(2, 522))
    bomb = i(TABLE) + i(1) + i(521) + num(1.0) + i(TABLE) + i(2) + i(1000) + items + fns
    fun = ["t7-function", "t7-legacy-function", "t7-table", "t7-reference"]
    being_read = table(1, num(1.0), string(b"up1"), num(2.0), fn(LEGACY_RECUR, 2, B1, ref(TABLE, 1)))
    gap = table(1, num(2.0), string(b"b"), num(1.0), fn(LEGACY_RECUR, 2, B1, ref(TABLE, 1)))
    return [
        Case(
            "budget-type6-upvalues",
            "t7-binary",
            bomb,
            "reject",
            ["limit-exceeded"],
            ["t7-binary", "adv-expansion-bomb", "t7-number", "t7-string"] + fun,
            ["canonical.md#canonical-node-budget", "t7.md#t7-limits", "t7.md#t7-function"],
            f"a table holding a table T of 1,000 strings and 520 functions of type 6 whose upvalues table "
            f"is a "
            f"back-reference to T ({len(bomb)} bytes): a type 6 function cannot be shared, so each is "
            f"described "
            "with its 1,000 upvalues, 521,000 nodes and more",
            BIN,
            why=(
                "the description would hold more than 500,000 nodes (spec/canonical.md#canonical-node-budget)"
            ),
        ),
        Case(
            "function-upvalues-table-being-read",
            "t7-binary",
            being_read,
            "accept",
            [],
            ["t7-binary", "t7-string", "t7-number", "t7-self-reference"] + fun,
            ["t7.md#t7-function"],
            "a table {1 = 'up1', 2 = f} where f (type 7) has as upvalues table a back-reference to that "
            "table, "
            "still being read: its upvalues are the pairs read so far, 'up1' (torch7 sets them as it reads "
            "the upvalues object)",
            BIN,
            functions=[("legacy_recursive", B1)],
        ),
        Case(
            "function-upvalues-table-being-read-gap",
            "t7-binary",
            gap,
            "reject",
            ["bad-value"],
            ["t7-binary", "t7-string", "t7-number", "t7-self-reference"] + fun,
            ["t7.md#t7-function"],
            "a table {2 = 'b', 1 = f} where f's upvalues table is a back-reference to that table, still "
            "being "
            "read: the pairs read so far have the key 2 alone, not 1..k",
            BIN,
            why="torch7 takes upvalues up to the first gap, here none; the keys must be exactly 1..k",
        ),
    ]


def table_cases() -> list[Case]:
    """spec/t7.md#t7-table: a key repeated after a nil value; a table reached only as a nil-valued key."""
    feats = ["t7-binary", "t7-table", "t7-string", "t7-nil"]
    return [
        Case(
            "table-key-repeated-after-nil-value",
            "t7-binary",
            table(1, string(b"a"), i(NIL), string(b"a"), num(2.0)),
            "reject",
            ["bad-value"],
            feats + ["t7-number"],
            ["t7.md#t7-table"],
            "a table whose pairs are 'a' -> nil, then 'a' -> 2: the key appears twice, the first time "
            "without "
            "an item",
            BIN,
            why="torch7 assigns t.a = nil then t.a = 2; no writer writes a key twice (pairs "
            "visits each key once and never a nil value)",
        ),
        Case(
            "table-key-repeated-before-nil-value",
            "t7-binary",
            table(1, string(b"a"), num(2.0), string(b"a"), i(NIL)),
            "reject",
            ["bad-value"],
            feats + ["t7-number"],
            ["t7.md#t7-table"],
            "a table whose pairs are 'a' -> 2, then 'a' -> nil",
            BIN,
            why="torch7 assigns t.a = 2 then t.a = nil; no writer writes a key twice",
        ),
        Case(
            "table-key-negative-zero",
            "t7-binary",
            table(1, num(-0.0), num(1.0), num(2.0), num(-0.0)),
            "accept",
            [],
            feats + ["t7-number"],
            ["t7.md#t7-table"],
            "a table whose pairs are -0.0 -> 1 and 2 -> -0.0: LuaJIT stores a number key that is an integer "
            "as that integer, so the key -0.0 is the key 0; a value keeps its sign",
            BIN,
        ),
        Case(
            "tds-hash-key-negative-zero",
            "t7-binary",
            i(TORCH) + i(1) + chars(b"V 0") + chars(b"tds.Hash") + q(2) + num(-0.0) + num(1.0) + num(2.0)
            + num(-0.0),
            "accept",
            [],
            feats + ["t7-number", "t7-tds", "t7-torch-object", "t7-class-version"],
            ["t7.md#t7-table", "t7.md#t7-tds"],
            "a tds.Hash whose pairs are -0.0 -> 1 and 2 -> -0.0: tds keeps the key's sign (its hash holds "
            "the double as read), unlike a Lua table",
            BIN,
            versions={"tds.Hash": "0"},
        ),
        Case(
            "table-only-as-nil-valued-key",
            "t7-binary",
            table(1, table(2, string(b"x"), num(1.0)), i(NIL)) + ref(TABLE, 2),
            "accept",
            [],
            feats + ["t7-number", "t7-table-key", "t7-reference", "multi-object"],
            ["t7.md#t7-table", "t7.md#t7-stream", "canonical.md#canonical-sharing"],
            "a table whose one pair is a table {x = 1} -> nil (no item), then a second top-level object, a "
            "back-reference to that inner table: the first object is an empty table, the second the inner "
            "table, described in full where it is first reached",
            BIN,
        ),
    ]


def version_cases() -> list[Case]:
    """spec/t7.md#t7-class-version: what LuaJIT 2.1's tonumber takes after 'V '."""
    out = []
    spec = ["t7.md#t7-class-version", "t7.md#t7-torch-object"]
    feats = ["t7-binary", "t7-torch-object", "t7-class-version", "dtype-float32"]
    for name, version, ok in (
        ("inf", b"inf", True),
        ("hex-float", b"0x1p4", True),
        ("exponent", b"1e5", True),
        ("spaces", b" 1 ", True),
        ("binary", b"0b1", True),
        ("nan", b"NaN", True),
        ("hex-point", b"0x.8", True),
        ("letter", b"1x", False),
        ("hex-empty-exponent", b"0x1p", False),
        ("trailing-nul", b"1\x00", False),
        ("nan-payload", b"nan(1)", False),
    ):
        data = tensor(1, "Float", [2], [1], 1, storage(2, "Float", [1.0, 2.0]), version=version)
        header = ("V " + version.decode()).encode("unicode_escape").decode()
        if ok:
            out.append(
                Case(
                    f"class-version-{name}",
                    "t7-binary",
                    data,
                    "accept",
                    [],
                    feats,
                    spec,
                    f"a FloatTensor whose class header is {header!r}: LuaJIT's tonumber takes "
                    f"{version.decode()!r}, so it is a version header and the class name follows",
                    BIN,
                )
            )
        else:
            out.append(
                Case(
                    f"class-version-{name}",
                    "t7-binary",
                    data,
                    "reject",
                    ["bad-type-code"],
                    feats + ["t7-custom-class"],
                    spec + ["t7.md#t7-custom-write"],
                    f"a FloatTensor whose class header is {header!r}: LuaJIT's tonumber refuses "
                    f"{version.decode('latin-1')!r}, so the header is the class name of a generic class, "
                    "whose payload starts with the int 17 (the length of 'torch.FloatTensor'), no type "
                    "code",
                    BIN,
                )
            )
    return out


def stream_cases() -> list[Case]:
    """spec/t7.md#t7-serialize and the byte order of a stream whose last word is cut."""
    # torch.serialize at 814ea4a drops the NUL (serializeToStorage resizes the storage); the storage of
    # the MemoryFile it writes to, as earlier torch7's torch.serialize returned it, ends with it
    chunk = (
        "local f = torch.MemoryFile(); f:MODE(); f:writeObject({1, 2.5, 'x', {a = true}}); "
        "io.write(f:storage():string())"
    )
    binary = lua_torch.run(chunk.replace("MODE", "binary"))
    ascii_ = lua_torch.run(chunk.replace("MODE", "ascii"))
    modern = lua_torch.run("io.write(torch.serialize({1, 2.5, 'x', {a = true}}, 'binary'))")
    assert binary.endswith(b"\0") and ascii_.endswith(b"\0") and binary[:-1] == modern, "one NUL"
    how = (
        "the bytes of the torch.MemoryFile that torch.serialize({{1, 2.5, 'x', {{a = true}}}}, '{}') writes "
        "to, from real Lua Torch (f:storage():string(), what torch7 before serializeToStorage returned): "
        "the stream and one NUL, the terminator of the storage"
    )
    feats = ["t7-serialize", "t7-table", "t7-number", "t7-string", "t7-boolean"]
    spec = ["t7.md#t7-serialize", "t7.md#t7-stream"]
    return [
        Case(
            "serialize-binary",
            "t7-binary",
            binary,
            "accept",
            [],
            ["t7-binary"] + feats,
            spec,
            how.format("binary"),
            BIN,
            writer=lua_torch.WRITER,
        ),
        Case(
            "serialize-ascii",
            "t7-ascii",
            ascii_,
            "accept",
            [],
            ["t7-ascii"] + feats,
            spec + ASCII,
            how.format("ascii"),
            ASC,
            writer=lua_torch.WRITER,
        ),
        Case(
            "serialize-binary-two-nuls",
            "t7-binary",
            binary + b"\0",
            "reject",
            ["truncated"],
            ["t7-binary", "adv-trailing-data"] + feats,
            spec,
            how.format("binary") + ", and a second NUL: two bytes where a type code needs four",
            BIN,
        ),
        Case(
            "serialize-ascii-two-nuls",
            "t7-ascii",
            ascii_ + b"\0",
            "reject",
            ["bad-value"],
            ["t7-ascii", "adv-trailing-data"] + feats,
            spec + ASCII,
            how.format("ascii") + ", and a second NUL: a NUL where a type code was expected",
            ASC,
        ),
        Case(
            "byte-order-partial-last-word",
            "t7-binary",
            bytes(4) + b"\x05\x00",
            "reject",
            ["truncated"],
            ["t7-binary", "t7-nil", "adv-truncated"],
            ["t7.md#t7-detect", "t7.md#t7-byte-order"],
            "a nil, then two bytes 05 00: the first non-zero byte lies in a word the file cuts short, which "
            "decides no byte order; read either way the next type code is cut: truncated, never "
            "bad-type-code",
            {"mode": "binary", "long_size": 8},
        ),
        Case(
            "byte-order-big-hint-partial-last-word",
            "t7-binary",
            bytes(4) + b"\x00\x05",
            "reject",
            ["truncated"],
            ["t7-binary", "t7-big-endian", "t7-nil", "adv-truncated"],
            ["t7.md#t7-hints", "t7.md#t7-byte-order"],
            "a nil, then two bytes 00 05, read with a big-endian hint: the next type code is cut",
            {"mode": "binary", "long_size": 8, "byte_order": "big"},
        ),
    ]


def _tar_header_string() -> bytes:
    """A string object whose bytes make the first 512 of the file a tar header Python's tarfile accepts
    (name '\\x02', numbers empty, type '0', ustar magic, a matching checksum)."""
    n = 1024
    block = bytearray(struct.pack("<ii", STRING, n) + bytes(n))
    block[156:157] = b"0"
    block[257:265] = b"ustar\x0000"
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block[:512])
    return bytes(block)


def _ascii_tar_header_string() -> bytes:
    """An ascii string object ('2', its length, its raw bytes) whose first 512 file bytes are a tar header
    Python's tarfile accepts (name '2\\n1024\\n', numbers empty, ustar magic, a matching checksum)."""
    n = 1024
    block = bytearray(b"2\n%d\n" % n + bytes(n) + b"\n")
    block[156:157] = b"0"
    block[257:265] = b"ustar\x0000"
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % sum(block[:512])
    return bytes(block)


def polyglot_cases() -> list[Case]:
    """spec/canonical.md#canonical-detect: valid binary .t7 streams that start like a tar or safetensors "
    "file."""
    ustar = bytearray(600)
    ustar[249:257] = b"ustar\x0000"
    (double,) = struct.unpack("<d", b'\x00\x00\x00\x00{"\x00\x40')
    spec = ["canonical.md#canonical-detect", "t7.md#t7-detect"]
    return [
        Case(
            "polyglot-ustar-in-string",
            "t7-binary",
            string(bytes(ustar)),
            "accept",
            [],
            ["t7-binary", "t7-string", "adv-polyglot"],
            spec,
            "a string of 600 bytes holding 'ustar\\x0000' at file offset 257 (no valid tar header: its "
            "checksum field is empty): a .t7 stream, not a tar archive",
            BIN,
        ),
        Case(
            "polyglot-tar-header-in-string",
            "t7-binary",
            _tar_header_string(),
            "accept",
            [],
            ["t7-binary", "t7-string", "adv-polyglot"],
            spec,
            "a string of 1,024 bytes whose first 512 file bytes are also a tar header Python's tarfile "
            "accepts (checksum matching, ustar magic, member name '\\x02'): the first byte is a type code "
            "(0x00-0x08), which no tar member name torch wrote starts with, so it is a .t7 stream",
            BIN,
        ),
        Case(
            "ascii-polyglot-tar-header-in-string",
            "t7-ascii",
            _ascii_tar_header_string(),
            "accept",
            [],
            ["t7-ascii", "t7-string", "adv-polyglot"],
            spec,
            "an ascii string of 1,024 bytes whose first 512 file bytes (with the type code and length lines) "
            "are also a tar header Python's tarfile accepts: the first byte is a digit, an ascii .t7 start, "
            "which no tar member name torch wrote starts with",
            ASC,
        ),
        Case(
            "polyglot-safetensors-prefix-number",
            "t7-binary",
            num(double),
            "accept",
            [],
            ["t7-binary", "t7-number", "adv-polyglot"],
            spec,
            "a number whose file bytes 0-9 are 01 00 00 00 00 00 00 00 7b 22 (an 8-byte length 1, then "
            "'{\"'), as a safetensors file starts: its 1-byte header '{' is no JSON object, so it is a .t7 "
            "stream",
            BIN,
        ),
    ]


#: The features and sections of a state_dict table of FloatTensor entries (fast_run_cases and
#: fast_path_guard_cases; never changed in place).
RUN_FEATURES = ("t7-binary", "t7-table", "t7-string", "t7-torch-object", "t7-class-version", "dtype-float32",
                "state-dict")
RUN_SPEC = ("t7.md#t7-table", "t7.md#t7-tensor", "t7.md#t7-storage")


def _entry(
    key: bytes,
    index: int,
    stem: str,
    sizes: list[int],
    strides: list[int],
    offset: int,
    values: list[float],
    storage_obj: bytes | None = None,
) -> bytes:
    """A state_dict entry: a string key and a tensor with a new storage (or ``storage_obj``)."""
    sto = storage(index + 1, stem, values) if storage_obj is None else storage_obj
    return string(key) + tensor(index, stem, sizes, strides, offset, sto)


def fast_run_cases() -> list[Case]:
    """A table of tensor entries laid out alike (the reader's fast path) whose third entry breaks the run."""
    six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]

    def state(third: bytes, count: int = 3) -> bytes:
        return (
            i(TABLE)
            + i(1)
            + i(count)
            + _entry(b"a.weight", 2, "Float", [2, 3], [3, 1], 1, six)
            + _entry(b"b.weight", 4, "Float", [2, 3], [3, 1], 1, six)
            + third
        )

    feats, spec = list(RUN_FEATURES), list(RUN_SPEC)
    how = "a table of three FloatTensor entries (2x3 over their own 6-element storages), the third "
    stricter = "torch7 checks no view against its storage (spec/t7.md, stricter)"
    return [
        Case(
            "run-third-view-outside",
            "t7-binary",
            state(_entry(b"c.weight", 6, "Float", [2, 3], [3, 1], 2, six)),
            "reject",
            ["out-of-bounds"],
            feats + ["adv-view-out-of-bounds", "storage-offset"],
            spec + ["t7.md#t7-tensor-offset"],
            how + "with offset 2 (1-based): its last element is element 6 of 6",
            BIN,
            why=stricter,
        ),
        Case(
            "run-third-offset-zero",
            "t7-binary",
            state(_entry(b"c.weight", 6, "Float", [2, 3], [3, 1], 0, six)),
            "reject",
            ["out-of-bounds"],
            feats + ["adv-view-out-of-bounds", "storage-offset"],
            spec + ["t7.md#t7-tensor-offset"],
            how + "with the 1-based offset 0",
            BIN,
            why=stricter,
        ),
        Case(
            "run-third-negative-stride",
            "t7-binary",
            state(_entry(b"c.weight", 6, "Float", [2, 3], [-3, 1], 4, six)),
            "reject",
            ["bad-length"],
            feats + ["adv-negative-length"],
            spec,
            how + "with strides [-3, 1]",
            BIN,
            why="torch7 writes no negative stride; it reads one without a check",
        ),
        Case(
            "run-third-key-repeated",
            "t7-binary",
            state(_entry(b"a.weight", 6, "Float", [2, 3], [3, 1], 1, six)),
            "reject",
            ["bad-value"],
            feats,
            spec,
            how + "with the key of the first, 'a.weight'",
            BIN,
            why="torch7 keeps the later value; no writer writes a key twice",
        ),
        Case(
            "run-third-storage-beyond-eof",
            "t7-binary",
            state(
                string(b"c.weight")
                + tensor(
                    6,
                    "Float",
                    [2, 3],
                    [3, 1],
                    1,
                    torch_obj(7, b"torch.FloatStorage", q(1000) + struct.pack("<6f", *six)),
                )
            ),
            "reject",
            ["truncated"],
            feats + ["adv-size-beyond-eof"],
            spec + ["t7.md#t7-limits"],
            how + "with a storage that declares 1,000 elements and holds 6",
            BIN,
        ),
        Case(
            "run-third-index-skips",
            "t7-binary",
            state(_entry(b"c.weight", 7, "Float", [2, 3], [3, 1], 1, six)),
            "reject",
            ["bad-reference"],
            feats + ["adv-bad-reference"],
            spec + ["t7.md#t7-reference-index"],
            how + "with the reference index 7 where 6 is next",
            BIN,
            why="torch7 takes any index it has not seen as a new object",
        ),
        Case(
            "run-third-key-not-utf8",
            "t7-binary",
            state(_entry(b"c.\xff", 6, "Float", [2, 3], [3, 1], 1, six)),
            "accept",
            [],
            feats,
            spec,
            how + "under the key 'c.\\xff', not UTF-8 (bytes)",
            BIN,
        ),
        Case(
            "run-third-shares-storage",
            "t7-binary",
            state(_entry(b"c.weight", 6, "Float", [3], [2], 1, [], ref(TORCH, 3))),
            "accept",
            [],
            feats + ["shared-storage", "t7-reference", "non-contiguous"],
            spec + ["t7.md#t7-reference-index", "canonical.md#canonical-sharing"],
            how + "a 3-element view of stride 2 over the first entry's storage (a back-reference)",
            BIN,
        ),
        Case(
            "run-third-expanded",
            "t7-binary",
            state(_entry(b"c.weight", 6, "Float", [2, 3], [0, 1], 1, [7.0, 8.0, 9.0])),
            "accept",
            [],
            feats + ["expanded-stride0"],
            spec + ["tensors.md#tensors-stride"],
            how + "a 2x3 view of stride [0, 1] over a 3-element storage (expand: more elements than its "
            "storage)",
            BIN,
        ),
        Case(
            "run-third-double",
            "t7-binary",
            state(_entry(b"c.weight", 6, "Double", [2, 3], [3, 1], 1, six)),
            "accept",
            [],
            feats + ["dtype-float64"],
            spec,
            how + "a DoubleTensor",
            BIN,
        ),
        Case(
            "run-second-view-outside",
            "t7-binary",
            i(TABLE)
            + i(1)
            + i(2)
            + _entry(b"a.weight", 2, "Float", [2, 3], [3, 1], 1, six)
            + _entry(b"b.weight", 4, "Float", [2, 3], [3, 2], 1, six),
            "reject",
            ["out-of-bounds"],
            feats + ["adv-view-out-of-bounds"],
            spec + ["t7.md#t7-tensor-offset"],
            "a table of two FloatTensor entries laid out alike, the second with strides [3, 2]: its last "
            "element is element 7 of 6",
            BIN,
            why=stricter,
        ),
    ]


def survivor_cases() -> list[Case]:
    """Inputs that tell apart the mutants of detection and ascii float rounding that no case killed."""
    # float elements whose token rounds to a binary64 exactly halfway between two floats: strtof rounds
    # the token once, by its exact value (spec/t7.md#t7-ascii); decimal and hexadecimal, both signs, and
    # the midpoint between FLT_MAX and 2^128
    tokens = [
        "1.00000005960464477539062500000000000000001",  # above 1 + 2^-24: 1 + 2^-23
        "1.00000005960464477539062499999999999999999",  # below: 1
        "0x1.0000010000000000000001p0",  # above, hexadecimal
        "0x1.000000ffffffffffffffffp0",  # below, hexadecimal
        "-0x1.0000010000000000000001p0",
        "-340282356779733661637539395458142568447.9999",  # below the FLT_MAX midpoint: -FLT_MAX
        "340282356779733661637539395458142568448.0001",  # above it: inf
        "1.000000059604644775390625",  # exactly halfway: to even, 1
    ]
    floats = (b"4\n1\n3\nV 1\n18\ntorch.FloatStorage\n%d\n" % len(tokens)) + " ".join(tokens).encode() + b"\n"
    return [
        Case(
            "ascii-float-halfway-tokens",
            "t7-ascii",
            floats,
            "accept",
            [],
            ["t7-ascii", "t7-torch-object", "t7-class-version", "dtype-float32", "bare-storage"],
            ASCII + ["t7.md#t7-storage"],
            "a FloatStorage whose tokens round to a double exactly halfway between two floats (above, "
            "below and at the midpoint, decimal and hexadecimal, near 1 and near FLT_MAX): each element is "
            "the token rounded once to binary32, as strtof does, never through the double",
            ASC,
        ),
        Case(
            "one-byte-not-a-stream",
            "t7-binary",
            b"x",
            "reject",
            ["unknown-format"],
            ["t7-binary", "adv-not-a-checkpoint"],
            ["t7.md#t7-detect", "canonical.md#canonical-detect"],
            "one byte 'x': not empty (truncated is for an empty file), and no .t7 encoding starts with it",
            {},
        ),
        Case(
            "byte-order-big-last-word",
            "t7-binary",
            bytes(4) + b"\x00\x00\x00\x05",
            "reject",
            ["truncated"],
            ["t7-binary", "t7-big-endian", "t7-nil", "t7-boolean", "adv-truncated"],
            ["t7.md#t7-detect", "t7.md#t7-byte-order"],
            "a nil, then the word 00 00 00 05 that ends the file, read without a byte order hint: the last "
            "word is whole, a big-endian boolean type code, whose value is missing (truncated); read "
            "little-endian it would be type code 0x05000000 (bad-type-code)",
            {"mode": "binary", "long_size": 8},
        ),
        Case(
            "hint-binary-on-ascii-bytes",
            "t7-binary",
            b"0\n\n\n",
            "reject",
            ["bad-type-code"],
            ["t7-binary", "adv-bad-type-code"],
            ["t7.md#t7-hints", "canonical.md#canonical-t7-hints"],
            "the bytes '0\\n\\n\\n' (an ascii nil) read with the hint mode binary: the hint is not "
            "detected again, and the binary type code 0x0a0a0a30 is none",
            {"mode": "binary", "long_size": 8, "byte_order": "little"},
        ),
    ]


def mutation_round2_cases() -> list[Case]:
    """Inputs that tell apart the open mutants of issue 18's second round: an int cut to 3 bytes, and a
    state_dict run whose storage runs past the end of the file where a check follows the table."""
    six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    # a function (type 6) whose upvalues table holds two FloatTensor entries laid out alike (the reader's
    # run reads the second), the second's storage declaring 1,000 elements where 6 are left: a reader that
    # took it would next check the upvalues' keys (strings, not 1..k), not the storage's bytes
    beyond = torch_obj(5, b"torch.FloatStorage", q(1000) + struct.pack("<6f", *six))
    upvalues = (
        i(TABLE)
        + i(1)
        + i(2)
        + _entry(b"a.weight", 2, "Float", [2, 3], [3, 1], 1, six)
        + string(b"b.weight")
        + tensor(4, "Float", [2, 3], [3, 1], 1, beyond)
    )
    return [
        Case(
            "truncated-int-three-bytes",
            "t7-binary",
            i(NIL) + bytes(3),
            "reject",
            ["truncated"],
            ["t7-binary", "t7-nil", "multi-object", "adv-truncated"],
            ["t7.md#t7-stream", "t7.md#t7-binary", "t7.md#t7-limits"],
            "a nil, then 3 zero bytes ending the file: the next object's type code (an int) is cut one "
            "byte short",
            BIN,
        ),
        Case(
            "run-in-upvalues-storage-beyond-eof",
            "t7-binary",
            fn(FUNCTION, None, B0, upvalues),
            "reject",
            ["truncated"],
            [
                "t7-binary",
                "t7-function",
                "t7-legacy-function",
                "t7-table",
                "t7-string",
                "t7-torch-object",
                "t7-class-version",
                "dtype-float32",
                "state-dict",
                "adv-size-beyond-eof",
            ],
            ["t7.md#t7-function", "t7.md#t7-table", "t7.md#t7-storage", "t7.md#t7-limits"],
            "a function (type 6) whose upvalues table holds two FloatTensor entries (2x3 over their own "
            "storages, laid out alike) under string keys, the second's storage declaring 1,000 elements "
            "where 6 are left before the end of the file",
            BIN,
        ),
    ]


def fast_path_guard_cases() -> list[Case]:
    """Inputs on which a broken guard of the reader's fast paths (a state_dict entry read in one go) would
    give another answer than the checked path: each breaks one guard on an entry after the first."""
    six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    first = _entry(b"a.weight", 2, "Float", [2, 3], [3, 1], 1, six)

    def state(*entries: bytes) -> bytes:
        return i(TABLE) + i(1) + i(1 + len(entries)) + first + b"".join(entries)

    feats, spec = list(RUN_FEATURES), list(RUN_SPEC)
    how = "a table of FloatTensor entries (2x3 over their own 6-element storages, laid out alike), "
    # the second entry's tensor written as a table (type code 3) where the first's is a torch object: its
    # index (4) equals the torch type code, and every other byte is laid out as the first entry's
    second = tensor(4, "Float", [2, 3], [3, 1], 1, storage(5, "Float", six))
    as_table = string(b"b.weight") + i(TABLE) + second[4:]
    # a ShortTensor (its class name as long as FloatTensor's) whose new storage is a FloatStorage
    short_over_float = string(b"b.weight") + tensor(4, "Short", [2, 3], [3, 1], 1, storage(5, "Float", six))
    # an empty tensor whose 1-based offset 2^32 has a low word 0 (a nil's type code) and a high word 1
    empty_far = _entry(b"b.weight", 4, "Float", [0, 3], [3, 1], 1 << 32, six)
    # the dimension count -1, the geometry words after it those of a 2-D tensor
    neg_ndim = (
        string(b"b.weight")
        + i(TORCH) + i(4) + chars(b"V 1") + chars(b"torch.FloatTensor") + i(-1)
        + b"".join(q(v) for v in (2, 3, 3, 1, 1))
        + storage(5, "Float", six)
    )
    return [
        Case(
            "run-second-type-code-table",
            "t7-binary",
            state(as_table),
            "reject",
            ["bad-type-code"],
            feats + ["adv-bad-type-code"],
            spec + ["t7.md#t7-type-codes"],
            how + "the second's type code 3 (a table) where a torch object's 4 is: a table of index 4 "
            "whose size is the int 3 (the length of 'V 1'), whose first key's type code is the bytes "
            "'V 1' and the next: no type code",
            BIN,
        ),
        Case(
            "run-second-short-tensor-float-storage",
            "t7-binary",
            state(short_over_float),
            "reject",
            ["bad-value"],
            feats + ["dtype-int16"],
            spec,
            how + "the second a ShortTensor (a class name as long as FloatTensor's) whose new storage is a "
            "FloatStorage: a tensor's storage is of its own element type",
            BIN,
            why="torch7 checks no storage's class against its tensor's",
        ),
        Case(
            "run-second-empty-offset-2p32",
            "t7-binary",
            state(empty_far),
            "accept",
            [],
            feats + ["storage-offset"],
            spec + ["t7.md#t7-tensor-offset", "tensors.md#tensors-empty"],
            how + "the second a 0x3 tensor whose 1-based offset is 2^32 (the low word 0, the type code of a "
            "nil): no element, so any offset; its storage is the object after the offset's 8 bytes",
            BIN,
        ),
        Case(
            "run-second-ndim-minus-one",
            "t7-binary",
            state(neg_ndim),
            "reject",
            ["bad-length"],
            feats + ["adv-negative-length"],
            spec,
            how + "the second with the dimension count -1, followed by the longs of a 2x3 geometry",
            BIN,
            why="torch7 reads a negative dimension count as none",
        ),
        Case(
            "run-third-negative-size",
            "t7-binary",
            state(
                _entry(b"b.weight", 4, "Float", [2, 3], [3, 1], 1, six),
                _entry(b"c.weight", 6, "Float", [-1, 3], [3, 1], 1, six),
            ),
            "reject",
            ["bad-length"],
            feats + ["adv-negative-length"],
            spec,
            how + "three of them, the third with sizes [-1, 3]",
            BIN,
            why="torch7 writes no negative size; it reads one without a check",
        ),
        Case(
            "tensor-stride-minus-one",
            "t7-binary",
            tensor(1, "Float", [3], [-1], 3, storage(2, "Float", [1.0, 2.0, 3.0])),
            "reject",
            ["bad-length"],
            ["t7-binary", "t7-torch-object", "t7-class-version", "dtype-float32", "adv-negative-length"],
            ["t7.md#t7-tensor"],
            "a 3-element FloatTensor of stride -1 from the 1-based offset 3 over 3 elements (the storage "
            "reversed; every element inside it): strides are not negative",
            BIN,
            why="torch7 writes no negative stride; it reads one without a check",
        ),
        Case(
            "class-version-lowercase-v",
            "t7-binary",
            tensor(1, "Float", [2], [1], 1, storage(2, "Float", [1.0, 2.0]), version=b"1")
            .replace(chars(b"V 1"), chars(b"v 1"), 1),
            "reject",
            ["bad-type-code"],
            ["t7-binary", "t7-torch-object", "t7-class-version", "dtype-float32", "t7-custom-class"],
            ["t7.md#t7-class-version", "t7.md#t7-torch-object", "t7.md#t7-custom-write"],
            "a FloatTensor whose class header is 'v 1' (a lowercase v): only 'V ' starts a version header, "
            "so 'v 1' is the class name of a generic class, whose payload starts with the int 17 (the "
            "length of 'torch.FloatTensor'), no type code",
            BIN,
        ),
    ]


def expansion_cases() -> list[Case]:
    """spec/t7.md#t7-limits, #t7-tensor: expanded views at the sizes real models hold them (the hash bound
    is bytes, spec/pickle.md#pickle-limits) and dimension counts past numpy's 64, written by real Lua
    Torch (issue 27: torch7 reads all four; the spec refused the first three)."""
    feats = ["t7-binary", "t7-torch-object", "t7-class-version", "dtype-float32"]
    spec = ["t7.md#t7-tensor", "t7.md#t7-limits", "tensors.md#tensors-view", "canonical.md#canonical-hash"]
    cmul = lua_torch.run(
        "require 'nn'; local m = nn.CMul(1); m.weight:fill(0.5); m:forward(torch.ones(16800000)); "
        "m.output = torch.DoubleTensor(); m._output = nil; m.gradInput = torch.DoubleTensor(); "
        "io.write(torch.serialize(m, 'binary'))"
    )
    expand = lua_torch.run(
        "local t = torch.FloatTensor(1, 1):fill(3); io.write(torch.serialize(t:expand(5000, 5000), 'binary'))"
    )
    dims = ("local t = torch.FloatTensor(torch.LongStorage(N):fill(1)):fill(2); "
            "io.write(torch.serialize(t, 'binary'))")
    return [
        Case(
            "cmul-expand-buffer",
            "t7-binary",
            cmul,
            "accept",
            [],
            ["t7-binary", "t7-torch-object", "t7-class-version", "t7-nn-module", "t7-table", "dtype-float64",
             "expanded-stride0", "shared-storage"],
            spec,
            "nn.CMul(1) (weight filled with 0.5) after a forward pass over torch.ones(16800000), saved with "
            "torch.serialize: its _expand buffer is a 16,800,000-element stride-0 view of the 1-element "
            "weight (134.4 MB of doubles to hash, within the 2^28-byte bound); output and gradInput "
            "emptied and _output (a view of the output) dropped, so the file is 792 bytes",
            BIN,
            writer=lua_torch.WRITER,
        ),
        Case(
            "tensor-expand-5000x5000",
            "t7-binary",
            expand,
            "accept",
            [],
            feats + ["expanded-stride0"],
            spec,
            "torch.FloatTensor(1, 1):fill(3):expand(5000, 5000), saved with torch.serialize: 25,000,000 "
            "elements of stride (0, 0) over a 1-element storage (100 MB to hash)",
            BIN,
            writer=lua_torch.WRITER,
        ),
        Case(
            "tensor-65-dims",
            "t7-binary",
            lua_torch.run(dims.replace("N", "65")),
            "accept",
            [],
            feats,
            spec,
            "torch.FloatTensor(torch.LongStorage(65):fill(1)):fill(2), saved with torch.serialize: 65 "
            "dimensions of size 1 (numpy allows 64; the dimensions of size 1 change no element's place)",
            BIN,
            writer=lua_torch.WRITER,
        ),
        Case(
            "tensor-1025-dims",
            "t7-binary",
            lua_torch.run(dims.replace("N", "1025")),
            "reject",
            ["limit-exceeded"],
            feats,
            ["t7.md#t7-tensor", "t7.md#t7-limits"],
            "torch.FloatTensor(torch.LongStorage(1025):fill(1)):fill(2), saved with torch.serialize: 1,025 "
            "dimensions of size 1, one past the spec's bound",
            BIN,
            why="torch7 reads any dimension count the file holds; the spec bounds it at 1,024 so that a "
            "tensor header's work and its description's shape stay bounded, far above real tensors",
            writer=lua_torch.WRITER,
        ),
    ]


def all_cases() -> list[Case]:
    return (
        detection_cases()
        + ascii_int_cases()
        + ascii_number_cases()
        + tensor_cases()
        + nesting_cases()
        + budget_and_function_cases()
        + table_cases()
        + version_cases()
        + stream_cases()
        + polyglot_cases()
        + fast_run_cases()
        + survivor_cases()
        + fast_path_guard_cases()
        + mutation_round2_cases()
        + expansion_cases()
    )
