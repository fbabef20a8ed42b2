"""The dtype table: the one home of every element-type fact (spec/tensors.md#tensors-dtype-table).

Readers, writers, :mod:`torchfmt.describe`, the spec's dtype table and the grammars' enums all come
from :data:`DTYPES` or are checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np


@dataclass(frozen=True)
class DType:
    """One element type.

    ``numpy`` is the little-endian numpy dtype an element is read as (for quantized types: the integer
    representation; for the bits types and ``float4_e2m1fn_x2``, which numpy has no type for, an
    unsigned integer of the element's width: descriptions only ever hash an element's bytes).
    ``swap_unit`` is the width in bytes of each independently byte-swapped part of an element (complex
    numbers swap their halves separately).  ``storage_class`` is PyTorch's legacy typed
    storage class name (``FloatStorage``), ``t7_class`` the Lua Torch class stem (``Float`` for
    ``torch.FloatTensor``); either is ``None`` where that writer has no such class.  ``per_byte`` is how
    many elements one byte packs (the packed quantized types; their storages count bytes).
    """

    name: str
    itemsize: int
    numpy: np.dtype
    swap_unit: int
    storage_class: str | None
    t7_class: str | None
    quantized: bool = False
    per_byte: int = 1

    def __repr__(self) -> str:
        return f"DType({self.name})"


def _d(name: str, np_type: object, storage_class: str | None, t7_class: str | None = None,
       swap_unit: int | None = None, quantized: bool = False, per_byte: int = 1) -> DType:
    dt = np.dtype(np_type)
    return DType(name, dt.itemsize, dt, swap_unit or dt.itemsize, storage_class, t7_class, quantized,
                 per_byte)


_COMPLEX32 = np.dtype([("real", "<f2"), ("imag", "<f2")])

#: Every dtype, in the order of the spec's table.
DTYPES: tuple[DType, ...] = (
    _d("bool", np.bool_, "BoolStorage"),
    _d("uint8", "<u1", "ByteStorage", "Byte"),
    _d("int8", "<i1", "CharStorage", "Char"),
    _d("int16", "<i2", "ShortStorage", "Short"),
    _d("int32", "<i4", "IntStorage", "Int"),
    _d("int64", "<i8", "LongStorage", "Long"),
    _d("uint16", "<u2", None),
    _d("uint32", "<u4", None),
    _d("uint64", "<u8", None),
    _d("float16", "<f2", "HalfStorage", "Half"),
    _d("bfloat16", ml_dtypes.bfloat16, "BFloat16Storage"),
    _d("float32", "<f4", "FloatStorage", "Float"),
    _d("float64", "<f8", "DoubleStorage", "Double"),
    _d("complex32", _COMPLEX32, None, swap_unit=2),
    _d("complex64", "<c8", "ComplexFloatStorage", swap_unit=4),
    _d("complex128", "<c16", "ComplexDoubleStorage", swap_unit=8),
    _d("float8_e4m3fn", ml_dtypes.float8_e4m3fn, None),
    _d("float8_e5m2", ml_dtypes.float8_e5m2, None),
    _d("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz, None),
    _d("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz, None),
    _d("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, None),
    _d("float4_e2m1fn_x2", "<u1", None),  # one element is a byte packing two float4_e2m1fn values
    _d("bits1x8", "<u1", None),  # bits*: opaque elements, read as unsigned integers of their width
    _d("bits2x4", "<u1", None),
    _d("bits4x2", "<u1", None),
    _d("bits8", "<u1", None),
    _d("bits16", "<u2", None),
    _d("qint8", "<i1", "QInt8Storage", quantized=True),
    _d("quint8", "<u1", "QUInt8Storage", quantized=True),
    _d("qint32", "<i4", "QInt32Storage", quantized=True),
    _d("quint4x2", "<u1", "QUInt4x2Storage", quantized=True, per_byte=2),
    _d("quint2x4", "<u1", "QUInt2x4Storage", quantized=True, per_byte=4),
)

BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES}
BY_STORAGE_CLASS: dict[str, DType] = {d.storage_class: d for d in DTYPES if d.storage_class}
BY_T7_CLASS: dict[str, DType] = {d.t7_class: d for d in DTYPES if d.t7_class}


def by_name(name: str) -> DType:
    """The dtype called ``name`` (KeyError if the table has none)."""
    return BY_NAME[name]


def to_little_endian(raw: np.ndarray, dtype: DType) -> np.ndarray:
    """Reinterpret big-endian element bytes ``raw`` (uint8, 1-D) as little-endian elements of ``dtype``.

    Each ``swap_unit``-wide part is swapped on its own (spec/tensors.md#tensors-byte-order).
    """
    if dtype.swap_unit == 1:
        return raw.view(dtype.numpy)
    unit = np.dtype(f">u{dtype.swap_unit}")
    return raw.view(unit).astype(unit.newbyteorder("<")).view(dtype.numpy)
