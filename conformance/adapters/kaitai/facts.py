"""The project's facts, read as data (never imported from torchfmt): the closed set of error codes
(reference_impl/torchfmt/errors.py ``ERROR_CODES``, spec/canonical.md#canonical-error-codes; read by the
torch-free harness, conformance/harness/vocabulary.py, which needs conformance/ on ``sys.path``), and the
tables the spec holds as generated tables (read by conformance/harness/facts.py: the reader limits, the
.t7 hints): opcodes and the allowlist (spec/pickle.md#pickle-opcodes,
#pickle-globals), dtypes (spec/tensors.md#tensors-dtype-table).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import ml_dtypes
import numpy as np

from conformance.harness.facts import generated_table, hint_env, limits  # noqa: F401  (the suite's facts, re-exported)
from conformance.harness.vocabulary import error_codes as error_codes  # the suite's own reading of errors.py

ROOT = Path(__file__).resolve().parents[3]
PICKLE_SPEC = ROOT / "spec" / "pickle.md"


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


#: Values one byte packs, for the packed quantized dtypes (spec/tensors.md#tensors-dtype-table, the
#: text under the table: "one byte packs two 4-bit or four 2-bit unsigned values").
PACKED = {"quint4x2": 2, "quint2x4": 4}
TENSORS_SPEC = ROOT / "spec" / "tensors.md"


def _compute_type(name: str, width: int) -> np.dtype:
    """The numpy type a dtype's values are negated or conjugated in (complex32: its float16 halves);
    opaque dtypes (bits*, packed and quantized ones) are unsigned integers of their width."""
    if name == "complex32":
        return np.dtype("<f2")
    if hasattr(ml_dtypes, name):
        return np.dtype(getattr(ml_dtypes, name))
    try:
        dt = np.dtype(name)
    except TypeError:
        return np.dtype(f"<u{width}")
    return dt.newbyteorder("<") if dt.itemsize > 1 else dt


@cache
def dtypes() -> dict[str, DType]:
    """The dtype table of spec/tensors.md, by name."""
    out = {}
    for row in generated_table(TENSORS_SPEC.read_text(encoding="utf-8"), "dtype-table"):
        name, width, swap, storage_class, t7_class, quantized = row[:6]
        out[name] = DType(name, int(width), _compute_type(name, int(width)), int(swap), storage_class or None,
                          t7_class or None, quantized == "yes", PACKED.get(name, 1))
    return out


DTYPES: dict[str, DType] = dtypes()
BY_STORAGE_CLASS: dict[str, DType] = {d.storage_class: d for d in DTYPES.values() if d.storage_class}
BY_T7_CLASS: dict[str, DType] = {d.t7_class: d for d in DTYPES.values() if d.t7_class}


@cache
def dtype_arith() -> dict[str, tuple[str | None, bool, bool, bool]]:
    """Per dtype: its negation (``sign``, ``sign-quiet``, ``twos`` or None), whether a conjugate bit may
    be set on it, whether both bits may, and whether it may require grad
    (spec/tensors.md#tensors-requires-grad, #tensors-conj-neg)."""
    out = {}
    for row in generated_table(TENSORS_SPEC.read_text(encoding="utf-8"), "dtype-arith"):
        name, negation, conj, both, differentiable = row[:5]
        out[name] = (None if negation == "none" else negation, conj == "yes", both == "yes",
                     differentiable == "yes")
    return out


@cache
def tensor_properties() -> frozenset[str]:
    """The names a tensor's pickled state may not set (spec/tensors.md#tensors-python-state)."""
    return frozenset(row[0] for row in generated_table(TENSORS_SPEC.read_text(encoding="utf-8"),
                                                       "tensor-properties"))
