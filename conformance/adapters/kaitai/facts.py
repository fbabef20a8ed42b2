"""The project's facts, read as data (never imported from torchfmt): the closed set of error codes
(reference_impl/torchfmt/errors.py ``ERROR_CODES``, spec/canonical.md#canonical-error-codes), and the
opcode and allowlist tables that spec/pickle.md holds as generated tables (spec/pickle.md#pickle-opcodes,
spec/pickle.md#pickle-globals).  The dtype table is this reader's own (spec/tensors.md#tensors-dtype-table);
reference_impl/tests/test_kaitai_reader.py checks it against the project's one table.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import ml_dtypes
import numpy as np

ROOT = Path(__file__).resolve().parents[3]
ERRORS_FILE = ROOT / "reference_impl" / "torchfmt" / "errors.py"
PICKLE_SPEC = ROOT / "spec" / "pickle.md"


@cache
def error_codes() -> frozenset[str]:
    """errors.py's ``ERROR_CODES`` keys, read with :mod:`ast`."""
    tree = ast.parse(ERRORS_FILE.read_text(encoding="utf-8"))
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "ERROR_CODES" and node.value is not None:
            return frozenset(ast.literal_eval(node.value))
    raise LookupError(f"{ERRORS_FILE}: no ERROR_CODES")


def generated_table(text: str, name: str) -> list[list[str]]:
    """The body rows of the table between ``<!-- generated: NAME ...-->`` and its end marker, each
    cell stripped of spaces and backticks."""
    key = re.escape(name)
    m = re.search(rf"<!-- generated: {key};.*?-->\n(.*?)<!-- end generated: {key} -->", text, re.S)
    if m is None:
        raise LookupError(f"no generated table {name!r}")
    rows = [line for line in m.group(1).splitlines() if line.startswith("|")]
    return [[c.strip().strip("`") for c in row.strip().strip("|").split("|")] for row in rows[2:]]


# -- pickle opcodes (spec/pickle.md#pickle-opcodes) --------------------------------------------------

@dataclass(frozen=True)
class Opcode:
    name: str
    protocol: int
    rejected: bool  # "MUST reject" in the spec's reader column
    width: int | None  # the argument's size when it is fixed ("uint4 (4 bytes)"), else None


@cache
def opcodes() -> dict[int, Opcode]:
    """Opcode byte -> its name, protocol and whether a reader must reject it."""
    out = {}
    for row in generated_table(PICKLE_SPEC.read_text(encoding="utf-8"), "pickle-opcodes"):
        name, byte, arg, protocol, _stack, _meaning, reader = row[:7]
        fixed = re.fullmatch(r"\w+ \((\d+) bytes?\)", arg)
        out[int(byte, 16)] = Opcode(name, int(protocol), reader.startswith("MUST reject"),
                                    int(fixed.group(1)) if fixed else None)
    return out


# -- the allowlist (spec/pickle.md#pickle-globals) ---------------------------------------------------

@dataclass(frozen=True)
class Param:
    name: str
    kind: str
    optional: bool


@dataclass(frozen=True)
class Allowed:
    qualname: str
    role: str  # value | callable | declined
    params: tuple[Param, ...]
    newobj: bool
    scope: str  # torch | torchscript | inert

    def signature(self) -> str:
        return "(" + ", ".join(f"{p.name}: {p.kind}{'?' if p.optional else ''}" for p in self.params) + ")"


_PARAM = re.compile(r"(\w+): (\w+)(\?)?")


@cache
def allowlist() -> dict[str, Allowed]:
    """``module.name`` -> its allowlist entry."""
    out = {}
    for row in generated_table(PICKLE_SPEC.read_text(encoding="utf-8"), "pickle-globals"):
        qualname, role, args, scope = row[:4]
        params = tuple(Param(n, k, bool(q)) for n, k, q in _PARAM.findall(args.split(")")[0]))
        out[qualname] = Allowed(qualname, role, params, "also NEWOBJ" in args, scope)
    return out


# -- dtypes (spec/tensors.md#tensors-dtype-table) ----------------------------------------------------

@dataclass(frozen=True)
class DType:
    """An element type: its width, the numpy type its values are computed in, the width of each
    independently byte-swapped part, its PyTorch storage class / Lua Torch class stem, and how many
    values one byte packs (spec/tensors.md#tensors-dtype-table)."""

    name: str
    itemsize: int
    numpy: np.dtype
    swap_unit: int
    storage_class: str | None
    t7_class: str | None
    quantized: bool = False
    per_byte: int = 1  # values packed in one byte (quint4x2, quint2x4)


def _d(name: str, np_type: object, itemsize: int, storage_class: str | None = None,
       t7_class: str | None = None, swap_unit: int | None = None, quantized: bool = False,
       per_byte: int = 1) -> DType:
    return DType(name, itemsize, np.dtype(np_type), swap_unit or itemsize, storage_class, t7_class, quantized,
                 per_byte)


DTYPES: dict[str, DType] = {d.name: d for d in (
    _d("bool", np.uint8, 1, "BoolStorage"),
    _d("uint8", np.uint8, 1, "ByteStorage", "Byte"),
    _d("int8", np.int8, 1, "CharStorage", "Char"),
    _d("int16", "<i2", 2, "ShortStorage", "Short"),
    _d("int32", "<i4", 4, "IntStorage", "Int"),
    _d("int64", "<i8", 8, "LongStorage", "Long"),
    _d("uint16", "<u2", 2),
    _d("uint32", "<u4", 4),
    _d("uint64", "<u8", 8),
    _d("float16", "<f2", 2, "HalfStorage", "Half"),
    _d("bfloat16", ml_dtypes.bfloat16, 2, "BFloat16Storage"),
    _d("float32", "<f4", 4, "FloatStorage", "Float"),
    _d("float64", "<f8", 8, "DoubleStorage", "Double"),
    _d("complex32", "<f2", 4, swap_unit=2),  # computed as pairs of float16
    _d("complex64", "<c8", 8, "ComplexFloatStorage", swap_unit=4),
    _d("complex128", "<c16", 16, "ComplexDoubleStorage", swap_unit=8),
    _d("float8_e4m3fn", ml_dtypes.float8_e4m3fn, 1),
    _d("float8_e5m2", ml_dtypes.float8_e5m2, 1),
    _d("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 1),
    _d("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 1),
    _d("qint8", np.int8, 1, "QInt8Storage", quantized=True),
    _d("quint8", np.uint8, 1, "QUInt8Storage", quantized=True),
    _d("qint32", "<i4", 4, "QInt32Storage", quantized=True),
    _d("quint4x2", np.uint8, 1, "QUInt4x2Storage", quantized=True, per_byte=2),
    _d("quint2x4", np.uint8, 1, "QUInt2x4Storage", quantized=True, per_byte=4),
)}
BY_STORAGE_CLASS: dict[str, DType] = {d.storage_class: d for d in DTYPES.values() if d.storage_class}
BY_T7_CLASS: dict[str, DType] = {d.t7_class: d for d in DTYPES.values() if d.t7_class}
