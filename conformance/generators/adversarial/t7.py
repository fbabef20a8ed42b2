"""Lua Torch ``.t7`` attacks (spec/t7.md), and the structural truncation points used at test time.

:class:`Walk` follows the binary object grammar of spec/t7.md (little-endian, 4-byte int, 8-byte long,
the encoding of the Lua Torch corpus) over a real file and records where each field starts; cases edit
one field there.  :func:`truncation_points` gives every offset where a field starts or that splits a
multi-byte field, except the boundaries between top-level objects (a stream cut there is a shorter valid
stream): the property tests and the conformance suite cut real files at each of them at test time
(nothing is committed for them).  The walker is written from the spec's layout for the generator's own
use and never imports torchfmt.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from . import sources
from .record import AdvCase, Source

GEN = "t7.py"
HINTS = {"mode": "binary", "long_size": 8, "byte_order": "little"}
NIL, NUMBER, STRING, TABLE, TORCH, BOOLEAN, FUNCTION, LEGACY_RECUR, RECUR = range(9)


class WalkError(Exception):
    """The file uses something this walker does not follow (a custom class write, Lua 5.3 numbers)."""


@dataclass
class Walk:
    """Field offsets of a binary t7 file: ``fields`` is ``[(name, offset, width)]`` in file order."""

    data: bytes
    pos: int = 0
    fields: list[tuple[str, int, int]] = field(default_factory=list)
    objects: dict[int, str] = field(default_factory=dict)  # index -> kind
    tops: list[int] = field(default_factory=list)  # start offset of each top-level object
    depth: int = 0

    @classmethod
    def of(cls, data: bytes) -> Walk:
        w = cls(data)
        while w.pos < len(data):
            w.tops.append(w.pos)
            w.obj("top")
        return w

    def _take(self, name: str, fmt: str) -> int | float:
        width = struct.calcsize(fmt)
        if self.pos + width > len(self.data):
            raise WalkError(f"{name} past the end")
        self.fields.append((name, self.pos, width))
        (v,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += width
        return v

    def int(self, name: str) -> int:
        return int(self._take(name, "<i"))

    def long(self, name: str) -> int:
        return int(self._take(name, "<q"))

    def string(self, name: str) -> bytes:
        n = self.int(name + ".len")
        if n < 0 or self.pos + n > len(self.data):
            raise WalkError(f"{name} length {n}")
        self.fields.append((name, self.pos, n))
        self.pos += n
        return self.data[self.pos - n : self.pos]

    def obj(self, path: str) -> None:
        self.depth += 1
        if self.depth > 200:
            raise WalkError("too deep for the walker")
        t = self.int(path + ".type")
        if t == NIL:
            pass
        elif t == NUMBER:
            self._take(path + ".number", "<d")
        elif t == BOOLEAN:
            self.int(path + ".boolean")
        elif t == STRING:
            self.string(path + ".string")
        elif t in (TABLE, TORCH, FUNCTION, LEGACY_RECUR, RECUR):
            index = self.int(path + ".index")
            if index in self.objects:
                self.depth -= 1
                return
            if t == TABLE:
                self.objects[index] = "table"
                n = self.int(path + ".size")
                for i in range(n):
                    self.obj(f"{path}.k{i}")
                    self.obj(f"{path}.v{i}")
            elif t == TORCH:
                version = self.string(path + ".version")
                cls = self.string(path + ".class") if version.startswith(b"V ") else version
                self.objects[index] = "torch:" + cls.decode("latin-1")
                self.torch_payload(path, cls.decode("latin-1"))
            else:
                self.objects[index] = "function"
                self.string(path + ".bytecode")
                self.obj(path + ".upvalues")
        else:
            raise WalkError(f"type code {t}")
        self.depth -= 1

    def torch_payload(self, path: str, cls: str) -> None:
        if cls.endswith("Tensor"):
            nd = self.int(path + ".ndim")
            for i in range(nd):
                self.long(f"{path}.size{i}")
            for i in range(nd):
                self.long(f"{path}.stride{i}")
            self.long(path + ".offset")
            self.obj(path + ".storage")
        elif cls.endswith("Storage"):
            n = self.long(path + ".numel")
            width = {
                "Byte": 1,
                "Char": 1,
                "Short": 2,
                "Int": 4,
                "Long": 8,
                "Float": 4,
                "Double": 8,
                "Half": 2,
            }.get(cls.split(".")[-1][: -len("Storage")].replace("Cuda", "") or "Float")
            if width is None or n < 0 or self.pos + n * width > len(self.data):
                raise WalkError(f"storage {cls}")
            self.fields.append((path + ".data", self.pos, n * width))
            self.pos += n * width
        elif cls.startswith(("tds.", "torch.CudaTensor")):
            raise WalkError(f"custom class {cls}")
        else:
            self.obj(path + ".object")

    def at(self, name: str) -> int:
        """The offset of the field ``name``."""
        return next(off for n, off, _ in self.fields if n == name)


def truncation_points(data: bytes) -> list[int]:
    """Offsets to cut a binary t7 file at: each field start and the middle of each multi-byte field,
    except boundaries between top-level objects.  Raises :class:`WalkError` for files the walker does not
    follow."""
    w = Walk.of(data)
    cuts = {0}
    for _, off, width in w.fields:
        cuts.add(off)
        if width > 1:
            cuts.add(off + width // 2)
    cuts -= set(w.tops[1:])
    return sorted(c for c in cuts if c < len(data))


#: C whitespace, which ends an ascii token (spec/t7.md#t7-ascii).
_ASCII_SPACE = b" \t\n\v\f\r"


def ascii_truncation_points(data: bytes) -> list[int]:
    """Offsets to cut an ascii t7 file of one top-level object at: 0 and every offset just after
    whitespace, up to the start of the last token.  Whatever the bytes there are (a token's start, or
    the middle of a run of chars that holds a space), the object is left without its last token: a cut
    stream, ``truncated``.  Offsets inside the last token are left out: a shorter number is a valid
    stream (spec/t7.md#t7-ascii)."""
    body = data.rstrip(_ASCII_SPACE + b"\0")
    last = max(body.rfind(bytes([c])) for c in _ASCII_SPACE) + 1
    return [0] + [c for c in range(1, last + 1)
                  if data[c - 1] in _ASCII_SPACE and data[c] not in _ASCII_SPACE]


def _patch(data: bytes, offset: int, fmt: str, value: int | float) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def _splice_string(data: bytes, len_offset: int, new: bytes) -> bytes:
    (n,) = struct.unpack_from("<i", data, len_offset)
    return data[:len_offset] + struct.pack("<i", len(new)) + new + data[len_offset + 4 + n :]


def t7_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    def case(
        name: str,
        src: Source | None,
        data: bytes,
        errors: list[str],
        feats: list[str],
        spec: list[str],
        how: str,
        *,
        category: str = "reject",
        hints: dict[str, object] | None = HINTS,
    ) -> None:
        out.append(
            AdvCase(
                f"t7-binary/adv-t7-{name}",
                data,
                errors,
                ["t7-binary"] + feats,
                ["t7.md#t7-binary"] + spec,
                how,
                src,
                GEN,
                category=category,
                hints=dict(hints) if hints else None,
            )
        )

    tmap = sources.t7("table_map.t7")
    w = Walk.of(tmap.data)
    table = ["t7-table", "t7-string", "t7-number", "t7-boolean"]
    k0, v0 = w.at("top.k0.type"), w.at("top.v0.type")
    case(
        "key-unknown-type-code",
        tmap,
        _patch(tmap.data, k0, "<i", 42),
        ["bad-type-code"],
        ["adv-bad-type-code"] + table,
        ["t7.md#t7-type-codes", "t7.md#t7-table"],
        f"the first key's type code (byte {k0}) set from 2 (string) to 42",
    )
    case(
        "value-negative-type-code",
        tmap,
        _patch(tmap.data, v0, "<i", -1),
        ["bad-type-code"],
        ["adv-bad-type-code"] + table,
        ["t7.md#t7-type-codes"],
        f"the first value's type code (byte {v0}) set from 1 (number) to -1",
    )
    size = w.at("top.size")
    case(
        "table-negative-size",
        tmap,
        _patch(tmap.data, size, "<i", -1),
        ["bad-length"],
        ["adv-negative-length"] + table,
        ["t7.md#t7-table"],
        f"the table's entry count (byte {size}) set to -1",
    )
    case(
        "table-huge-size",
        tmap,
        _patch(tmap.data, size, "<i", 0x7FFFFFFF),
        ["truncated", "limit-exceeded"],
        ["adv-huge-count"] + table,
        ["t7.md#t7-table", "t7.md#t7-limits"],
        f"the table's entry count (byte {size}) set to 2^31-1 in an 81-byte file: a reader must not size "
        "anything by it",
    )
    slen = w.at("top.k0.string.len")
    case(
        "string-length-huge",
        tmap,
        _patch(tmap.data, slen, "<i", 0x7FFFFFFF),
        ["truncated"],
        ["adv-size-beyond-eof"] + table,
        ["t7.md#t7-string", "t7.md#t7-limits"],
        f"the first key's string length (byte {slen}) set to 2^31-1",
    )
    key_end = w.at("top.v0.type")
    case(
        "key-nil",
        tmap,
        tmap.data[:k0] + struct.pack("<i", NIL) + tmap.data[key_end:],
        ["bad-value"],
        ["t7-nil"] + table,
        ["t7.md#t7-table", "t7.md#t7-nil"],
        f"the first key (bytes {k0}-{key_end}, the string 'alpha') replaced by a nil (type code 0): Lua "
        "tables have no nil keys",
    )
    bool_at = w.at("top.v2.boolean")
    case(
        "boolean-two",
        tmap,
        _patch(tmap.data, bool_at, "<i", 2),
        ["bad-value"],
        table,
        ["t7.md#t7-boolean"],
        f"gamma's boolean (int at byte {bool_at}) set from 1 to 2: Lua Torch reads any value but 1 as false; "
        "a reader may do the same or reject it",
        category="impl",
    )

    sparse = sources.t7("table_sparse_list.t7")
    ws = Walk.of(sparse.data)
    key = ws.at("top.k0.number")
    case(
        "key-nan",
        sparse,
        _patch(sparse.data, key, "<d", float("nan")),
        ["bad-value"],
        ["t7-table", "t7-number"],
        ["t7.md#t7-table", "t7.md#t7-number"],
        f"the first key (double at byte {key}) set from 1 to NaN: Lua tables have no NaN keys",
    )

    tf = sources.t7("tensor_float_2x3.t7")
    wt = Walk.of(tf.data)
    tensor = ["t7-torch-object", "dtype-float32", "t7-class-version"]
    numel = wt.at("top.storage.numel")
    case(
        "storage-2p40-elements",
        tf,
        _patch(tf.data, numel, "<q", 1 << 40),
        ["truncated", "limit-exceeded"],
        ["adv-huge-count", "adv-size-beyond-eof"] + tensor,
        ["t7.md#t7-storage", "t7.md#t7-limits"],
        f"the storage's element count (long at byte {numel}) set from 6 to 2^40 (4 TiB of floats declared, "
        "24 bytes present): a reader must reject before allocating",
    )
    case(
        "storage-size-overflow",
        tf,
        _patch(tf.data, numel, "<q", 1 << 62),
        ["truncated", "bad-length", "limit-exceeded"],
        ["adv-huge-count"] + tensor,
        ["t7.md#t7-storage", "t7.md#t7-limits"],
        f"the storage's element count (long at byte {numel}) set to 2^62: times 4 bytes it overflows int64",
    )
    off = wt.at("top.offset")
    case(
        "offset-zero",
        tf,
        _patch(tf.data, off, "<q", 0),
        ["out-of-bounds", "bad-value", "bad-length"],
        ["adv-view-out-of-bounds", "storage-offset"] + tensor,
        ["t7.md#t7-tensor-offset"],
        f"the tensor's 1-based storage offset (long at byte {off}) set from 1 to 0",
    )
    case(
        "offset-negative",
        tf,
        _patch(tf.data, off, "<q", -5),
        ["out-of-bounds", "bad-value", "bad-length"],
        ["adv-view-out-of-bounds", "storage-offset"] + tensor,
        ["t7.md#t7-tensor-offset"],
        f"the tensor's 1-based storage offset (long at byte {off}) set to -5",
    )
    nd = wt.at("top.ndim")
    case(
        "ndim-huge",
        tf,
        _patch(tf.data, nd, "<i", 1 << 30),
        ["truncated", "bad-length", "limit-exceeded"],
        ["adv-huge-count"] + tensor,
        ["t7.md#t7-tensor", "t7.md#t7-limits"],
        f"the tensor's dimension count (int at byte {nd}) set to 2^30",
    )
    s0 = wt.at("top.size0")
    case(
        "tensor-negative-size",
        tf,
        _patch(tf.data, s0, "<q", -3),
        ["bad-length"],
        ["adv-negative-length"] + tensor,
        ["t7.md#t7-tensor"],
        f"the tensor's first size (byte {s0}) set to -3",
    )
    st = wt.at("top.stride0")
    case(
        "tensor-negative-stride",
        tf,
        _patch(tf.data, st, "<q", -3),
        ["bad-length", "out-of-bounds"],
        ["adv-negative-length"] + tensor,
        ["t7.md#t7-tensor", "tensors.md#tensors-stride"],
        f"the tensor's first stride (byte {st}) set from 3 to -3",
    )
    st1 = wt.at("top.stride1")
    case(
        "tensor-stride-overflow",
        tf,
        _patch(tf.data, st1, "<q", 1 << 62),
        ["bad-length", "out-of-bounds"],
        ["adv-huge-count", "adv-view-out-of-bounds"] + tensor,
        ["t7.md#t7-tensor", "tensors.md#tensors-view-bounds"],
        f"the tensor's second stride (byte {st1}) set to 2^62",
    )
    stype = wt.at("top.storage.type")
    case(
        "storage-type-code-string",
        tf,
        _patch(tf.data, stype, "<i", STRING),
        ["bad-value", "bad-reference", "truncated", "bad-length"],
        ["adv-type-confusion"] + tensor,
        ["t7.md#t7-tensor"],
        f"the tensor's storage type code (byte {stype}) set from 4 (torch object) to 2 (string): a tensor's "
        "storage must be a storage object or nil",
    )

    shared = sources.t7("shared_storage_views.t7")
    wv = Walk.of(shared.data)
    views = ["t7-table", "t7-torch-object", "t7-reference", "shared-storage", "dtype-float32"]
    ref_at = next(off for n, off, _ in wv.fields if n.endswith(".storage.index") and n.startswith("top.v1"))
    case(
        "storage-ref-to-table",
        shared,
        _patch(shared.data, ref_at, "<i", 1),
        ["bad-reference"],
        ["adv-bad-reference"] + views,
        ["t7.md#t7-reference-index", "t7.md#t7-tensor"],
        f"the second tensor's storage reference (index at byte {ref_at}) set from 3 (the storage) to 1 "
        "(the enclosing table)",
    )
    own = wv.at("top.v0.storage.index")
    tensor_index = struct.unpack_from("<i", shared.data, wv.at("top.v0.index"))[0]
    case(
        "tensor-storage-is-itself",
        shared,
        _patch(shared.data, own, "<i", tensor_index),
        ["bad-reference"],
        ["adv-bad-reference", "t7-self-reference"] + views,
        ["t7.md#t7-reference-index", "t7.md#t7-tensor"],
        f"the first tensor's storage (a new object, index at byte {own}) given the tensor's own index "
        f"{tensor_index}: the tensor's storage is the tensor itself",
    )
    cls1 = next(off for n, off, _ in wv.fields if n == "top.v1.class.len")
    case(
        "storage-ref-wrong-dtype",
        shared,
        _splice_string(shared.data, cls1, b"torch.DoubleTensor"),
        ["bad-reference", "bad-value"],
        ["adv-bad-reference", "dtype-float64"] + views,
        ["t7.md#t7-tensor", "t7.md#t7-reference-index"],
        "the second tensor's class changed from torch.FloatTensor to torch.DoubleTensor; its storage is "
        "still a reference to the FloatStorage (Lua Torch fails in set())",
    )

    sref = sources.t7("table_shared_ref.t7")
    wr = Walk.of(sref.data)
    last_type = max((off for n, off, _ in wr.fields if n.endswith(".type")), default=0)
    case(
        "ref-type-code-mismatch",
        sref,
        _patch(sref.data, last_type, "<i", TORCH),
        ["bad-reference"],
        ["adv-bad-reference", "t7-table", "t7-reference"],
        ["t7.md#t7-reference-index"],
        f"the last back-reference's type code (byte {last_type}) set from 3 (table) to 4 (torch object); its "
        "index still names the table (Lua Torch returns the table whatever the type code says)",
    )

    func = sources.t7("func_upvalues.t7")
    wf = Walk.of(func.data)
    bl = wf.at("top.bytecode.len")
    fn = ["t7-function"]
    case(
        "function-bytecode-beyond-eof",
        func,
        _patch(func.data, bl, "<i", 0x7FFFFFFF),
        ["truncated"],
        ["adv-size-beyond-eof"] + fn,
        ["t7.md#t7-function", "t7.md#t7-limits"],
        f"the function's bytecode length (byte {bl}) set to 2^31-1",
    )
    case(
        "function-negative-bytecode",
        func,
        _patch(func.data, bl, "<i", -93),
        ["bad-length"],
        ["adv-negative-length"] + fn,
        ["t7.md#t7-function"],
        f"the function's bytecode length (byte {bl}) set to -93",
    )
    up = wf.at("top.upvalues.type")
    case(
        "function-upvalues-not-a-table",
        func,
        _patch(func.data, up, "<i", NUMBER),
        ["bad-value", "bad-type-code"],
        ["adv-type-confusion"] + fn,
        ["t7.md#t7-function"],
        f"the function's upvalue object's type code (byte {up}) set from 3 (table) to 1 (number)",
    )

    nested = sources.t7("table_nested.t7")
    depth = 10_000
    deep = b"".join(
        struct.pack("<iiii", TABLE, i + 1, 1, NUMBER) + struct.pack("<d", 1.0) for i in range(depth)
    ) + struct.pack("<iii", TABLE, depth + 1, 0)
    case(
        "deep-tables",
        nested,
        deep,
        ["limit-exceeded"],
        ["adv-deep-nesting", "t7-table", "t7-number"],
        ["t7.md#t7-table", "canonical.md#canonical-node-budget", "t7.md#t7-limits"],
        f"{depth} tables nested through key 1, in the layout of table_nested.t7 ({len(deep)} bytes): Lua "
        "Torch's own recursive reader overflows its C stack on it. Accept without recursion, or "
        "limit-exceeded",
        category="impl",
    )

    hostile_cases(case, tf, wt, tensor)

    # ascii mode
    asc = sources.t7("ascii_tensor_float_2x3.t7")
    lines = asc.data.split(b"\n")

    def ascii_case(
        name: str, data: bytes, errors: list[str], feats: list[str], spec: list[str], how: str
    ) -> None:
        out.append(
            AdvCase(
                f"t7-ascii/adv-t7-{name}",
                data,
                errors,
                ["t7-ascii"] + feats,
                ["t7.md#t7-ascii"] + spec,
                how,
                asc,
                GEN,
                hints={"mode": "ascii"},
            )
        )

    def with_line(i: int, new: bytes) -> bytes:
        return b"\n".join(lines[:i] + [new] + lines[i + 1 :])

    storage_size = lines.index(b"torch.FloatStorage") + 1
    ascii_case(
        "ascii-storage-2p40",
        with_line(storage_size, str(1 << 40).encode()),
        ["truncated", "limit-exceeded"],
        ["adv-huge-count"] + tensor,
        ["t7.md#t7-storage", "t7.md#t7-limits"],
        f"line {storage_size + 1}, the storage's element count, set from 6 to 2^40",
    )
    ascii_case(
        "ascii-unknown-type-code",
        with_line(0, b"42"),
        ["bad-type-code", "unknown-format"],
        ["adv-bad-type-code"] + tensor,
        ["t7.md#t7-type-codes"],
        "the first type code set from 4 to 42",
    )
    cls_len = lines.index(b"torch.FloatTensor") - 1
    ascii_case(
        "ascii-negative-string-length",
        with_line(cls_len, b"-17"),
        ["bad-length"],
        ["adv-negative-length"] + tensor,
        ["t7.md#t7-string"],
        f"line {cls_len + 1}, the class name's length, set from 17 to -17",
    )
    ascii_case(
        "ascii-number-garbage",
        with_line(storage_size, b"6abc"),
        ["bad-value", "bad-length"],
        tensor,
        ["t7.md#t7-ascii"],
        f"line {storage_size + 1}, the storage's element count, set to '6abc'",
    )
    type_line = 0
    ascii_case(
        "ascii-type-code-5001-digits",
        with_line(type_line, b"1" + b"0" * 5000),
        ["bad-value", "bad-type-code"],
        ["adv-digit-text"] + tensor,
        ["t7.md#t7-ascii", "t7.md#t7-limits"],
        "the first type code (line 1) set from 4 to 1 followed by 5000 zeros: out of range for an int "
        "(bad-value) and no type code (bad-type-code), which a reader must find without converting 5001 "
        "digits (Python's int() refuses more than 4300)",
    )
    ascii_case(
        "ascii-storage-count-30-digits",
        with_line(storage_size, b"9" * 30),
        ["bad-value", "truncated"],
        ["adv-digit-text", "adv-huge-count"] + tensor,
        ["t7.md#t7-ascii", "t7.md#t7-storage"],
        f"line {storage_size + 1}, the storage's element count, set to 30 nines: beyond a 64-bit long "
        "(bad-value) and beyond the bytes left (truncated); no reader may convert or allocate by it",
    )
    ascii_case(
        "ascii-storage-count-superscript-two",
        with_line(storage_size, "\u00b2".encode()),
        ["bad-value"],
        ["adv-digit-text"] + tensor,
        ["t7.md#t7-ascii"],
        f"line {storage_size + 1}, the storage's element count, set to '\u00b2' (UTF-8 c2 b2): Python's "
        "str.isdigit() takes it for a digit; the ascii grammar has ASCII digits only",
    )
    ascii_case(
        "ascii-storage-count-arabic-indic-six",
        with_line(storage_size, "\u0666".encode()),
        ["bad-value"],
        ["adv-digit-text"] + tensor,
        ["t7.md#t7-ascii"],
        f"line {storage_size + 1}, the storage's element count, set to '\u0666' (ARABIC-INDIC DIGIT SIX, "
        "UTF-8 d9 a6), which Python's int() reads as 6",
    )
    header = lines.index(b"V 1")
    slow = b"V " + b"1" * 30_000 + b"x"
    ascii_case(
        "ascii-class-header-30k-digits",
        b"\n".join(lines[: header - 1] + [str(len(slow)).encode(), slow] + lines[header + 1 :]),
        ["bad-type-code"],
        ["adv-quadratic-pattern"] + tensor,
        ["t7.md#t7-class-version", "t7.md#t7-limits", "t7.md#t7-custom-write"],
        f"the class header (line {header + 1}) 'V 1' replaced by 'V ' + 30,000 ones + 'x': no version, so "
        "it is the class name of a generic class, whose payload then starts with the number 17 (no type "
        "code). A backtracking pattern with two ways to split the run of digits took 17 s on it",
    )
    return out


def _chain(first_index: int, depth: int, bottom: bytes) -> bytes:
    """``depth`` new tables, each holding the next as the value of key 1.0, the last holding ``bottom``."""
    out = b""
    for k in range(depth):
        out += struct.pack("<iiii", TABLE, first_index + k, 1, NUMBER) + struct.pack("<d", 1.0)
    return out + bottom


def hostile_cases(case, tf: Source, wt: Walk, tensor: list[str]) -> None:  # noqa: ANN001 - the local maker
    """Inputs that broke the reader's contract (spec/canonical.md#canonical-reader-cli): quadratic
    patterns, digit limits, floods of tiny objects, nesting the description deepens, error messages that
    quoted whole values."""
    hdr = wt.at("top.version.len")
    slow = b"V " + b"1" * 30_000 + b"x"
    case(
        "class-header-30k-digits",
        tf,
        _splice_string(tf.data, hdr, slow),
        ["bad-type-code"],
        ["adv-quadratic-pattern"] + tensor,
        ["t7.md#t7-class-version", "t7.md#t7-limits", "t7.md#t7-custom-write"],
        f"the class header at byte {hdr} ('V 1') replaced by 'V ' + 30,000 ones + 'x': not a version, so "
        "it is the class name of a generic class, whose payload then starts with the int 17 (the length of "
        "'torch.FloatTensor'), no type code. A backtracking pattern with two ways to split the run of digits "
        "([0-9]+\\.?[0-9]*) took 17 s on it",
    )
    name_len = wt.at("top.class.len")
    case(
        "class-name-100k-not-utf8",
        tf,
        _splice_string(tf.data, name_len, b"\xff" * 100_000),
        ["bad-value"],
        ["adv-long-quote"] + tensor,
        ["t7.md#t7-torch-object", "canonical.md#canonical-reader-cli"],
        f"the class name at byte {name_len} replaced by 100,000 bytes 0xff: not UTF-8. The error line "
        "quotes at most a short escaped prefix",
    )
    nils = 250_001
    case(
        "nil-flood",
        None,
        bytes(4 * nils),
        ["limit-exceeded"],
        ["adv-object-flood", "t7-nil", "multi-object"],
        ["t7.md#t7-limits", "t7.md#t7-stream", "t7.md#t7-nil"],
        f"{4 * nils} zero bytes: {nils} nil objects, one more than the reference reader's object limit. A "
        "16 MB file of zeros is 4 M nils; reading and describing each took the reader past 10 s. Describe "
        "them all, or limit-exceeded",
        category="impl",
        hints=None,
    )
    chain = 600
    data = struct.pack("<iii", TABLE, 1, 2)  # a holder: two keys, each a chain, each with a nil value
    data += _chain(2, chain, struct.pack("<iii", TABLE, 2 + chain, 0)) + struct.pack("<i", NIL)
    second = 3 + chain
    data += _chain(second, chain, struct.pack("<ii", TABLE, 2)) + struct.pack("<i", NIL)
    # a second top-level object, whose value is the second chain: described, it holds both in full
    data += struct.pack("<iiii", TABLE, second + chain, 1, NUMBER) + struct.pack("<d", 1.0)
    data += struct.pack("<ii", TABLE, second)
    case(
        "deep-description-through-nil-values",
        None,
        data,
        ["limit-exceeded"],
        ["adv-deep-nesting", "t7-table", "t7-nil", "t7-reference", "t7-table-key", "multi-object"],
        ["t7.md#t7-limits", "t7.md#t7-table", "t7.md#t7-reference-index", "canonical.md#canonical-sharing"],
        f"a table whose two keys are chains of {chain} nested tables with nil values (so neither is an "
        "item), the second chain ending in a back-reference to the first; then a table holding the second "
        f"chain. Read {chain + 2} deep, but described {2 * chain + 1} deep: each chain is described in full "
        "where it is first reached. Chains of 1000 in 16 MB describe a million deep (RecursionError). "
        "Describe it, or limit-exceeded",
        category="impl",
    )
    depth = 1000
    nested = _chain(2, depth, struct.pack("<iii", TABLE, 2 + depth, 0))
    data = struct.pack("<iii", TABLE, 1, 2) + nested + struct.pack("<i", NUMBER) + struct.pack("<d", 1.0)
    data += struct.pack("<ii", TABLE, 2) + struct.pack("<i", NUMBER) + struct.pack("<d", 2.0)
    case(
        "duplicate-key-deep-table",
        None,
        data,
        ["bad-value"],
        ["adv-long-quote", "t7-table", "t7-table-key", "t7-reference"],
        ["t7.md#t7-table", "canonical.md#canonical-reader-cli"],
        f"a table whose two keys are one table ({depth} tables nested through key 1.0), the second a "
        "back-reference: a repeated key. An error message that printed the key recursed a thousand levels "
        "(RecursionError)",
    )
    empty = sources.t7("tensor_empty_nostorage.t7")
    case(
        "long-size-several-objects-both-ways",
        empty,
        empty.data + struct.pack("<i", NIL),
        ["ambiguous"],
        ["t7-long-size-ambiguous", "t7-nil", "no-storage", "zero-dim", "multi-object", "dtype-float64"],
        ["t7.md#t7-detect", "t7.md#t7-long-size"],
        "the real empty DoubleTensor without storage followed by a nil, read without hints: 2 objects with "
        "8-byte longs, 3 with 4-byte longs (the offset long's high half is a nil). Neither reading is the "
        "one object torch.save writes, so nothing decides the long size",
        hints={"mode": "binary", "byte_order": "little"},
    )
