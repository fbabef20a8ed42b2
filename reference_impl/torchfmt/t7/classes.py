"""The torch classes whose payload the ``.t7`` reader knows by name (spec/t7.md#t7-torch-object).

Every other class is read generically: its payload is one table of fields.  The tensor and storage
classes come from the dtype table (:data:`torchfmt.dtypes.DTYPES`, column ``t7_class``); cutorch's
``Cuda*`` classes share the CPU layout of the same element type (spec/t7.md#t7-cuda).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dtypes import DTYPES, DType

TENSOR = "tensor"
STORAGE = "storage"
TDS_HASH = "tds_hash"
TDS_VEC = "tds_vec"
DECLINED = "declined"


@dataclass(frozen=True)
class ClassInfo:
    """What a class name means: its payload ``kind``, and for tensors/storages the element dtype and
    device (``cpu`` or ``cuda``).  ``why`` explains a declined class."""

    kind: str
    dtype: DType | None = None
    device: str = "cpu"
    why: str = ""


def _cuda_stem(t7_class: str) -> str:
    # cutorch names its float classes torch.CudaTensor / torch.CudaStorage (no "Float").
    return "Cuda" if t7_class == "Float" else f"Cuda{t7_class}"


def _build() -> dict[str, ClassInfo]:
    table: dict[str, ClassInfo] = {}
    for d in DTYPES:
        if d.t7_class is None:
            continue
        for stem, device in ((d.t7_class, "cpu"), (_cuda_stem(d.t7_class), "cuda")):
            table[f"torch.{stem}Tensor"] = ClassInfo(TENSOR, d, device)
            table[f"torch.{stem}Storage"] = ClassInfo(STORAGE, d, device)
    # tds (spec/t7.md#t7-tds): "tds_hash" is the name older tds releases registered.
    for name in ("tds.Hash", "tds_hash"):
        table[name] = ClassInfo(TDS_HASH)
    table["tds.Vec"] = ClassInfo(TDS_VEC)
    # Classes whose write() dumps a C struct: no portable layout (spec/t7.md#t7-custom-write).
    table["torch.Generator"] = ClassInfo(
        DECLINED, why="torch.Generator (its write() dumps the machine's THGenerator struct)")
    return table


#: Every class name with a known payload layout.
CLASSES: dict[str, ClassInfo] = _build()

GENERIC = ClassInfo("generic")


def lookup(name: str) -> ClassInfo:
    """The payload layout of class ``name``: a known one, or the generic table of fields."""
    return CLASSES.get(name, GENERIC)
