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
        src: Source,
        data: bytes,
        errors: list[str],
        feats: list[str],
        spec: list[str],
        how: str,
        *,
        category: str = "reject",
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
                hints=dict(HINTS),
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
    return out
