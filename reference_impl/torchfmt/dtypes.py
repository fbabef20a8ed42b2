"""The dtype table: the one home of every element-type fact (spec/tensors.md#tensors-dtype-table).

Readers, writers, :mod:`torchfmt.describe`, the spec's dtype table and the grammars' enums all come
from :data:`DTYPES` or are checked against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    ``negation`` is how PyTorch negates an element when it resolves a negative or conjugate view
    (spec/tensors.md#tensors-conj-neg): ``"sign"`` flips the sign bit of each ``swap_unit``-wide float
    part (NaN and zero included; complex: both parts, or the imaginary part only for a conjugate),
    ``"sign-quiet"`` does the same and then quiets a signaling NaN among the flipped parts (torch
    negates half-precision parts in float32, which sets the NaN's quiet bit), ``"twos"`` is
    two's-complement negation modulo 2^bits, ``None`` means torch 2.13 has no negation
    for the dtype (``neg`` is "not implemented"), so no view of it may carry either bit.  ``neg_conj``
    is false where torch has no kernel for both bits at once (``complex32``: "neg_conj_cpu" is not
    implemented).
    ``differentiable`` says whether a tensor of the dtype may have ``requires_grad`` set (torch:
    floating-point and complex dtypes only; spec/tensors.md#tensors-requires-grad).
    """

    name: str
    itemsize: int
    numpy_type: str
    swap_unit: int
    storage_class: str | None
    t7_class: str | None
    quantized: bool = False
    per_byte: int = 1
    negation: str | None = None
    differentiable: bool = False
    neg_conj: bool = True

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype (numpy and ml_dtypes are imported on first use: describing a file whose
        storages are little-endian needs neither, so the command starts without them)."""
        return _numpy_dtype(self.numpy_type)

    @property
    def is_complex(self) -> bool:
        """A complex dtype: two float parts, the only dtypes a conjugate bit may be set on."""
        return self.name.startswith("complex")

    def __repr__(self) -> str:
        return f"DType({self.name})"

    def __str__(self) -> str:
        """The name torch gives the dtype after ``torch.``: ``str(t.dtype) == "float32"``."""
        return self.name


#: The width in bytes of the numpy types not named by a type string that ends in it.
_WIDTHS = {"bool": 1, "complex32": 4, "ml_dtypes.bfloat16": 2}


def _d(name: str, numpy_type: str, storage_class: str | None, t7_class: str | None = None,
       swap_unit: int | None = None, quantized: bool = False, per_byte: int = 1,
       negation: str | None = None, differentiable: bool = False, neg_conj: bool = True) -> DType:
    """``numpy_type`` is a numpy type string (``"<f4"``: little-endian, width in bytes last), ``"bool"``,
    ``"complex32"`` (two float16 parts) or ``"ml_dtypes.<name>"`` (one byte wide unless
    :data:`_WIDTHS` says otherwise); reference_impl/tests/test_lazy_numpy.py checks every width against
    numpy's."""
    itemsize = int(numpy_type[2:]) if numpy_type.startswith("<") else _WIDTHS.get(numpy_type, 1)
    return DType(name, itemsize, numpy_type, swap_unit or itemsize, storage_class, t7_class, quantized,
                 per_byte, negation, differentiable, neg_conj)


@cache
def _numpy_dtype(numpy_type: str) -> np.dtype:
    import numpy as np

    if numpy_type == "complex32":
        return np.dtype([("real", "<f2"), ("imag", "<f2")])
    if numpy_type.startswith("ml_dtypes."):
        import ml_dtypes

        return np.dtype(getattr(ml_dtypes, numpy_type.removeprefix("ml_dtypes.")))
    return np.dtype(numpy_type)


#: Every dtype, in the order of the spec's table.
DTYPES: tuple[DType, ...] = (
    _d("bool", "bool", "BoolStorage"),
    _d("uint8", "<u1", "ByteStorage", "Byte", negation="twos"),
    _d("int8", "<i1", "CharStorage", "Char", negation="twos"),
    _d("int16", "<i2", "ShortStorage", "Short", negation="twos"),
    _d("int32", "<i4", "IntStorage", "Int", negation="twos"),
    _d("int64", "<i8", "LongStorage", "Long", negation="twos"),
    _d("uint16", "<u2", None),
    _d("uint32", "<u4", None),
    _d("uint64", "<u8", None),
    _d("float16", "<f2", "HalfStorage", "Half", negation="sign-quiet", differentiable=True),
    _d("bfloat16", "ml_dtypes.bfloat16", "BFloat16Storage", negation="sign", differentiable=True),
    _d("float32", "<f4", "FloatStorage", "Float", negation="sign", differentiable=True),
    _d("float64", "<f8", "DoubleStorage", "Double", negation="sign", differentiable=True),
    _d("complex32", "complex32", None, swap_unit=2, negation="sign-quiet", differentiable=True,
       neg_conj=False),
    _d("complex64", "<c8", "ComplexFloatStorage", swap_unit=4, negation="sign",
       differentiable=True),
    _d("complex128", "<c16", "ComplexDoubleStorage", swap_unit=8, negation="sign",
       differentiable=True),
    _d("float8_e4m3fn", "ml_dtypes.float8_e4m3fn", None, differentiable=True),
    _d("float8_e5m2", "ml_dtypes.float8_e5m2", None, differentiable=True),
    _d("float8_e4m3fnuz", "ml_dtypes.float8_e4m3fnuz", None, differentiable=True),
    _d("float8_e5m2fnuz", "ml_dtypes.float8_e5m2fnuz", None, differentiable=True),
    _d("float8_e8m0fnu", "ml_dtypes.float8_e8m0fnu", None, differentiable=True),
    # one element is a byte packing two float4_e2m1fn values
    _d("float4_e2m1fn_x2", "<u1", None, differentiable=True),
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

#: Our dtype names -> safetensors' dtype codes, for the dtypes both have.  A test writes one tensor of
#: each and checks that ``safetensors.torch.load_file`` gives torch's dtype of the same name.
SAFETENSORS_DTYPES: dict[str, str] = {
    "float64": "F64", "float32": "F32", "float16": "F16", "bfloat16": "BF16", "complex64": "C64",
    "int64": "I64", "int32": "I32", "int16": "I16", "int8": "I8",
    "uint64": "U64", "uint32": "U32", "uint16": "U16", "uint8": "U8", "bool": "BOOL",
    "float8_e5m2": "F8_E5M2", "float8_e4m3fn": "F8_E4M3",
}


def by_name(name: str) -> DType:
    """The dtype called ``name`` (KeyError if the table has none)."""
    return BY_NAME[name]


def to_little_endian(raw: np.ndarray, dtype: DType) -> np.ndarray:
    """Reinterpret big-endian element bytes ``raw`` (uint8, 1-D) as little-endian elements of ``dtype``.

    Each ``swap_unit``-wide part is swapped on its own (spec/tensors.md#tensors-byte-order).
    """
    import numpy as np

    if dtype.swap_unit == 1:
        return raw.view(dtype.numpy)
    unit = np.dtype(f">u{dtype.swap_unit}")
    return raw.view(unit).astype(unit.newbyteorder("<")).view(dtype.numpy)


def resolve_bits(values: np.ndarray, dtype: DType, conj: bool, neg: bool) -> np.ndarray:
    """The elements ``values`` (of ``dtype``) as PyTorch presents a view with the conjugate and/or
    negative bit (spec/tensors.md#tensors-conj-neg), as a new array.  Floats are negated by flipping
    the sign bit of each part, exactly as torch does (NaN and zero included); ``conj`` flips the
    imaginary part's only.  The caller has checked that ``dtype`` has a negation (and, for ``conj``,
    is complex)."""
    import numpy as np

    out = np.array(values, copy=True, order="C")
    if dtype.negation == "twos":
        return np.negative(out) if neg else out
    unit = dtype.swap_unit
    parts = out.reshape(-1).view(f"<u{unit}").reshape(-1, dtype.itemsize // unit)
    sign = np.array(1 << (8 * unit - 1), dtype=f"<u{unit}")
    flipped = parts if neg and not conj else parts[:, :1] if neg else parts[:, -1:]
    flipped ^= sign
    if dtype.negation == "sign-quiet":  # binary16: exponent 0x7c00, mantissa 0x03ff, quiet bit 0x0200
        nan = ((flipped & 0x7C00) == 0x7C00) & ((flipped & 0x03FF) != 0)
        flipped |= np.where(nan, np.uint16(0x0200), np.uint16(0))
    return out
