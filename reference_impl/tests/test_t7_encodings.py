"""The ``.t7`` encodings' primitives (spec/t7.md#t7-encodings, #t7-binary, #t7-ascii)."""

from __future__ import annotations

import math
import struct
from decimal import Decimal, localcontext

import numpy as np
import pytest
from torchfmt.dtypes import BY_NAME
from torchfmt.errors import FormatError, Unsupported
from torchfmt.t7.encodings import (
    AsciiEncoding,
    BinaryEncoding,
    Hints,
    float32_to_half,
    parse_c_double,
    to_float32,
)


def _bin(data: bytes, order: str = "little", long_size: int = 8) -> BinaryEncoding:
    return BinaryEncoding(memoryview(data), order, long_size)


def _asc(data: bytes) -> AsciiEncoding:
    return AsciiEncoding(memoryview(data))


@pytest.mark.parametrize("order,fmt", [("little", "<"), ("big", ">")])
@pytest.mark.parametrize("long_size,code", [(4, "i"), (8, "q")])
def test_binary_scalars_follow_byte_order_and_long_size(order: str, fmt: str, long_size: int,
                                                        code: str) -> None:
    data = struct.pack(f"{fmt}i{code}d3{code}", -7, -(2**31), -0.0, 1, -2, 3) + b"abc"
    enc = _bin(data, order, long_size)
    assert enc.read_int() == -7
    assert enc.read_long() == -(2**31)
    x = enc.read_double()
    assert x == 0.0 and math.copysign(1, x) == -1
    assert enc.read_longs(3) == [1, -2, 3]
    assert enc.read_chars(3) == b"abc"
    assert enc.longs_read and enc.at_end()


def test_binary_long4_storage_is_sign_extended() -> None:
    enc = _bin(struct.pack("<3i", 1, -2, 2**31 - 1), long_size=4)
    s = enc.read_storage(BY_NAME["int64"], 3, "cpu")
    assert s.array().dtype == np.dtype("<i8")
    assert s.array().tolist() == [1, -2, 2**31 - 1]


def test_binary_storage_is_a_view_when_order_and_width_match() -> None:
    data = np.arange(4, dtype="<f4").tobytes()
    buf = memoryview(data)
    s = BinaryEncoding(buf, "little", 8).read_storage(BY_NAME["float32"], 4, "cpu")
    assert isinstance(s.buffer, memoryview) and s.buffer.obj is data and s.data is None
    big = BinaryEncoding(memoryview(np.arange(4, dtype=">f4").tobytes()), "big", 8)
    assert big.read_storage(BY_NAME["float32"], 4, "cpu").array().tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("what", ["int", "chars", "storage"])
def test_binary_reads_past_the_end_are_truncated(what: str) -> None:
    enc = _bin(b"\x01\x02\x03")
    with pytest.raises(FormatError) as e:
        if what == "int":
            enc.read_int()
        elif what == "chars":
            enc.read_chars(4)
        else:
            enc.read_storage(BY_NAME["float64"], 1, "cpu")
    assert e.value.code == "truncated" and e.value.offset == 0
    assert enc.pos == 0


def test_binary_end_allows_one_serialize_nul_only() -> None:
    assert _bin(b"\0").at_end()
    assert not _bin(b"\0\0").at_end()
    assert not _bin(b"\x01").at_end()


def test_ascii_numbers_skip_whitespace_and_consume_one_newline() -> None:
    enc = _asc(b" \t3\n\nV 1\n-5 6\n0x1.8p1\n")
    assert enc.read_int() == 3
    # After "3\n" one newline was consumed: the next chars start at the second "\n".
    assert enc.read_chars(4) == b"\nV 1"
    assert enc.read_longs(2) == [-5, 6]
    assert enc.read_double() == 3.0
    assert enc.at_end()


def test_ascii_chars_start_right_after_the_length() -> None:
    enc = _asc(b"5\n 12\n3\n")
    assert enc.read_chars(enc.read_int()) == b" 12\n3"
    assert enc.at_end()


@pytest.mark.parametrize("data,code", [
    (b"12abc\n", "bad-value"),        # a token must end at whitespace
    (b"2147483648\n", "bad-value"),   # beyond int32
    (b"x\n", "bad-value"),
    (b"  \n", "truncated"),
    (b"", "truncated"),
])
def test_ascii_int_errors(data: bytes, code: str) -> None:
    with pytest.raises(FormatError) as e:
        _asc(data).read_int()
    assert e.value.code == code


def test_ascii_short_elements_must_fit() -> None:
    with pytest.raises(FormatError) as e:
        _asc(b"1 32768\n").read_storage(BY_NAME["int16"], 2, "cpu")
    assert e.value.code == "bad-value"


@pytest.mark.parametrize("token,bits", [
    (b"-nan", 0xFFF8000000000000), (b"nan", 0x7FF8000000000000), (b"NaN(123)", 0x7FF8000000000000),
    (b"-0", 0x8000000000000000), (b"inf", 0x7FF0000000000000), (b"-Infinity", 0xFFF0000000000000),
    (b"4.9406564584124654e-324", 1), (b"0x1p-1074", 1), (b"-0x.8p1", 0xBFF0000000000000),
    (b"-0x1p99999", 0xFFF0000000000000), (b"1e99999", 0x7FF0000000000000), (b"0x1p-99999", 0),
])
def test_c_double_tokens(token: bytes, bits: int) -> None:
    assert struct.unpack("<Q", struct.pack("<d", parse_c_double(token)))[0] == bits


def test_float32_is_rounded_once_from_the_decimal() -> None:
    # 1 + 2**-24 is halfway between the float32 values 1 and 1 + 2**-23; a decimal a hair above it
    # rounds to exactly that double, whose float32 rounding (ties to even) is 1: wrong for strtof.
    with localcontext() as ctx:
        ctx.prec = 200
        above = Decimal(1) + Decimal(2) ** -24 + Decimal(2) ** -80
        below = Decimal(1) + Decimal(2) ** -24 - Decimal(2) ** -80
    long_digits = b"1.000000059604644775390625" + b"0" * 5000 + b"1"  # beyond int()'s digit limit
    tokens = [str(above).encode(), str(below).encode(), b"1.000000059604644775390625", long_digits,
              b"0x1.000001p0", b"0x1.0000010000000000000000001p0"]
    doubles = np.array([parse_c_double(t) for t in tokens])
    assert (doubles == 1 + 2**-24).all()
    assert np.float32(doubles[0]) == 1.0  # the naive double rounding
    got = to_float32(doubles, tokens)
    # exact midpoints tie to even (1.0); values above it round up
    assert got.tolist() == [1 + 2**-23, 1.0, 1.0, 1 + 2**-23, 1.0, 1 + 2**-23]


def test_float32_rounding_at_the_top_of_the_range() -> None:
    mid = 2**128 - 2**103  # halfway between FLT_MAX and 2**128, exactly a double
    tokens = [b"3.40282347e+38", str(mid).encode(), str(mid - 1).encode(), b"1e39"]
    doubles = np.array([float(t) for t in tokens])
    assert doubles[1] == doubles[2] == mid
    got = to_float32(doubles, tokens)
    top = np.finfo(np.float32).max
    assert got[0] == top
    assert math.isinf(got[1])  # the exact midpoint: ties to even, which is 2**128, overflows
    assert got[2] == top  # just below it
    assert math.isinf(got[3])


def test_half_from_float_turns_every_nan_into_7fff() -> None:
    f = np.array([1.0, -np.nan, 65520.0, 2.0**-25], dtype=np.float32)
    assert float32_to_half(f).view(np.uint16).tolist() == [0x3C00, 0x7FFF, 0x7C00, 0x0000]


def test_hints_from_env() -> None:
    env = {"TORCHFMT_T7_MODE": "binary", "TORCHFMT_T7_LONG_SIZE": "4", "TORCHFMT_T7_BYTE_ORDER": "big"}
    assert Hints.from_env(env) == Hints("binary", 4, "big")
    assert Hints.from_env({}) == Hints()
    for bad in ({"TORCHFMT_T7_LONG_SIZE": "2"}, {"TORCHFMT_T7_LONG_SIZE": "eight"},
                {"TORCHFMT_T7_MODE": "text"}, {"TORCHFMT_T7_BYTE_ORDER": "middle"}):
        with pytest.raises(Unsupported, match="t7-hint"):
            Hints.from_env(bad)
