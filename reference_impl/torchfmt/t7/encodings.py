"""The encodings of a ``.t7`` object stream: binary (little/big endian, 4/8-byte long) and ascii
(spec/t7.md#t7-encodings).  The object grammar is written once, in :mod:`torchfmt.t7.reader`, over these.

An encoding reads torch7's ``File`` primitives (``readInt``, ``readLong``, ``readDouble``, ``readChar``
and the typed ``read*Raw`` arrays a storage uses) from a buffer, checking every count against the bytes
left before anything is allocated for it.
"""

from __future__ import annotations

import math
import os
import re
import struct
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING

from ..dtypes import DType
from ..errors import FormatError, Unsupported, quote
from ..model import Storage

if TYPE_CHECKING:
    import numpy as np

#: Environment variables through which the conformance suite hands a case's hints to any reader
#: (spec/canonical.md#canonical-t7-hints).
HINT_ENV = {
    "mode": "TORCHFMT_T7_MODE",
    "long_size": "TORCHFMT_T7_LONG_SIZE",
    "byte_order": "TORCHFMT_T7_BYTE_ORDER",
}

#: The values each hint may take (spec/t7.md#t7-hints).
HINT_VALUES: dict[str, tuple[object, ...]] = {
    "mode": ("binary", "ascii"),
    "long_size": (4, 8),
    "byte_order": ("little", "big"),
}


@dataclass(frozen=True)
class Hints:
    """What the writer's setup is known to have been; ``None`` means "detect it"."""

    mode: str | None = None  # "binary" | "ascii"
    long_size: int | None = None  # 4 | 8
    byte_order: str | None = None  # "little" | "big"

    def __post_init__(self) -> None:
        for name, allowed in HINT_VALUES.items():
            value = getattr(self, name)
            if value is not None and value not in allowed:
                raise ValueError(f".t7 hint {name}={value!r} is not one of {allowed}")

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Hints:
        """The hints the ``TORCHFMT_T7_*`` variables give (spec/canonical.md#canonical-t7-hints); an unset or
        empty variable gives none.  A value outside the table is refused before any file is read, whatever
        the file (spec/t7.md#t7-hints): :class:`~torchfmt.errors.Unsupported` ``t7-hint``."""
        env = os.environ if environ is None else environ
        given: dict[str, object] = {}
        for name, var in HINT_ENV.items():
            text = env.get(var, "").strip()
            if not text:
                continue
            allowed = HINT_VALUES[name]
            value = next((a for a in allowed if str(a) == text), None)
            if value is None:
                raise Unsupported(f"t7-hint ({var}={quote(text)} is not one of "
                                  f"{', '.join(str(a) for a in allowed)})")
            given[name] = value
        return cls(**given)  # type: ignore[arg-type]

    def override(self, **given: object) -> Hints:
        """These hints with every non-``None`` value of ``given`` replacing the old one."""
        return replace(self, **{k: v for k, v in given.items() if v is not None})


INT32 = (-(1 << 31), (1 << 31) - 1)
#: Significant digits of the widest integer an ascii stream holds (2^63 has 19).
_INT_DIGITS = 19
INT64 = (-(1 << 63), (1 << 63) - 1)
#: Ranges of the integer element types an ascii storage may hold, by dtype name.
_ASCII_INT_RANGES = {"int16": (-(1 << 15), (1 << 15) - 1), "int32": INT32, "int64": INT64}


class Encoding:
    """A cursor over a buffer that reads torch7 ``File`` primitives (spec/t7.md#t7-encodings)."""

    #: ``t7-binary`` or ``t7-ascii``: the ``format`` of the description.
    format: str
    #: The fewest bytes any encoded object takes (a bare type code), for checking counts.
    min_object_size: int
    #: The fewest bytes a long takes.
    min_long_size: int = 1

    def __init__(self, buf: memoryview) -> None:
        self.buf = buf
        self.size = len(buf)
        self.pos = 0
        #: Whether any ``long`` was read: only then does the long size matter (spec/t7.md#t7-detect).
        self.longs_read = False

    def remaining(self) -> int:
        return self.size - self.pos

    def need(self, nbytes: int, what: str, at: int | None = None) -> None:
        """Fail with ``truncated`` unless ``nbytes`` bytes are left."""
        if nbytes > self.size - self.pos:
            raise FormatError("truncated", self.pos if at is None else at,
                              f"{what} needs {nbytes} bytes, {self.size - self.pos} left",
                              needed_end=self.pos + nbytes)

    # The primitives; each subclass implements them.
    def read_int(self) -> int:
        raise NotImplementedError

    def read_long(self) -> int:
        raise NotImplementedError

    def read_longs(self, n: int) -> list[int]:
        raise NotImplementedError

    def read_double(self) -> float:
        raise NotImplementedError

    def read_chars(self, n: int) -> bytes:
        raise NotImplementedError

    def read_storage(self, dtype: DType, n: int, device: str) -> Storage:
        raise NotImplementedError

    def at_end(self) -> bool:
        """Whether the stream holds no further object (spec/t7.md#t7-stream)."""
        raise NotImplementedError

    def describe(self) -> dict[str, object]:
        raise NotImplementedError


class BinaryEncoding(Encoding):
    """torch7's binary mode: fixed-width scalars in one byte order; ``long`` is 4 or 8 bytes
    (spec/t7.md#t7-binary, #t7-long-size, #t7-byte-order)."""

    format = "t7-binary"
    min_object_size = 4

    def __init__(self, buf: memoryview, byte_order: str = "little", long_size: int = 8) -> None:
        super().__init__(buf)
        if byte_order not in ("little", "big") or long_size not in (4, 8):
            raise ValueError("byte_order must be little|big and long_size 4|8")
        self.byte_order = byte_order
        self.long_size = long_size
        self.min_long_size = long_size
        e = "<" if byte_order == "little" else ">"
        self._e = e
        self._int = struct.Struct(e + "i")
        self._unpack_int = self._int.unpack_from
        self._long_code = "q" if long_size == 8 else "i"
        self._long = struct.Struct(e + self._long_code)
        self._double = struct.Struct(e + "d")

    def _scalar(self, st: struct.Struct, what: str) -> int | float:
        self.need(st.size, what)
        (value,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return value

    def read_int(self) -> int:
        pos = self.pos
        if pos + 4 > self.size:  # the hot path of every object's type code: no call to need()
            self.need(4, "an int")
        self.pos = pos + 4
        return self._unpack_int(self.buf, pos)[0]

    def read_long(self) -> int:
        self.longs_read = True
        return int(self._scalar(self._long, "a long"))

    def read_longs(self, n: int) -> list[int]:
        self.longs_read = True
        if n * self.long_size > self.size - self.pos:  # the message is made only for the error
            self.need(n * self.long_size, f"{n} longs")
        values = struct.unpack_from(f"{self._e}{n}{self._long_code}", self.buf, self.pos)
        self.pos += n * self.long_size
        return list(values)

    def read_double(self) -> float:
        return float(self._scalar(self._double, "a double"))

    def read_chars(self, n: int) -> bytes:
        if n > self.size - self.pos:
            self.need(n, f"a string of {n} bytes")
        out = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return out

    def read_storage(self, dtype: DType, n: int, device: str) -> Storage:
        """``n`` raw elements: a zero-copy slice where the file's width matches the dtype's, else a
        widened copy (a 4-byte-long LongStorage) (spec/t7.md#t7-storage)."""
        is_long = dtype.name == "int64"
        width = self.long_size if is_long else dtype.itemsize
        if n * width > self.size - self.pos:
            self.need(n * width, f"a storage of {n} {dtype.name} elements ({width} bytes each)")
        raw = self.buf[self.pos:self.pos + n * width]
        self.pos += n * width
        if is_long:
            self.longs_read = True
            if width == 4:
                import numpy as np

                narrow = np.frombuffer(raw, dtype=np.dtype(self._e + "i4"), count=n)
                return Storage(dtype, n, device, data=narrow.astype("<i8"))
        return Storage(dtype, n, device, buffer=raw, byte_order=self.byte_order)

    def at_end(self) -> bool:
        left = self.size - self.pos
        # torch.serialize strings end with the NUL of the MemoryFile's storage (spec/t7.md#t7-serialize).
        return left == 0 or (left == 1 and self.buf[self.pos] == 0)

    def describe(self) -> dict[str, object]:
        return {"mode": "binary", "byte_order": self.byte_order, "long_size": self.long_size}


# -- ascii ------------------------------------------------------------------------------------------

#: C's isspace(): what fscanf skips before a number (spec/t7.md#t7-ascii).  Every pattern below is
#: ASCII-only (bytes patterns: ``[0-9]`` is never a Unicode digit) and has one way to match each input
#: (the runs of digits before and after a point are separate), so matching runs in linear time.
_WHITESPACE = b" \t\n\v\f\r"
_SKIP_WS = re.compile(rb"[ \t\n\v\f\r]*")
_INT_TOKEN = re.compile(rb"[+-]?[0-9]+")
#: Whitespace, an integer token of at most 11 characters and the newline that ends it.
_SHORT_INT_LINE = re.compile(rb"[ \t\v\f\r\n]*([+-]?[0-9]{1,10})\n")
_FLOAT_TOKEN = re.compile(
    rb"[+-]?(?:0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
    rb"|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    rb"|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?"
    rb"|[nN][aA][nN])"
)

#: The characters a token of each kind is made of: a run of them reaching the end is a cut token.
_TOKEN_CHARS = {_INT_TOKEN: re.compile(rb"[+\-0-9]*"), _FLOAT_TOKEN: re.compile(rb"[+\-0-9A-Za-z.]*")}


def parse_c_double(token: bytes) -> float:
    """The double C's ``strtod`` gives for a token matched by the ascii number grammar (overflow is
    an infinity, as strtod's ``HUGE_VAL``)."""
    text = token.decode("ascii")
    body = text.lstrip("+-")
    negative = text.startswith("-")
    lowered = body.lower()
    if lowered.startswith("0x"):
        try:
            value = float.fromhex(body)
        except OverflowError:
            value = math.inf
    elif lowered.startswith("nan"):
        value = math.nan
    else:
        value = float(body)  # decimal, inf, infinity: correctly rounded, like glibc
    return -value if negative else value


def _compare_exact(token: bytes, target: float) -> int:
    """-1, 0 or 1 as the exact value of a finite number token is below, at or above ``target``."""
    text = token.decode("ascii")
    body = text.lstrip("+-")
    sign = -1 if text.startswith("-") else 1
    if body[:2].lower() != "0x":
        exact: Decimal | Fraction = Decimal(text)  # any length, any exponent: exact
        goal: Decimal | Fraction = Decimal(target)
    else:
        mant, _, exp = body[2:].lower().partition("p")
        whole, _, frac = mant.partition(".")
        exp_digits = exp.lstrip("+-").lstrip("0") or "0"
        if len(exp_digits) > 18:  # no finite double is written so; nothing to settle
            return 0
        power = (-1 if exp.startswith("-") else 1) * int(exp_digits) - 4 * len(frac)
        exact = sign * Fraction(int((whole + frac) or "0", 16)) * Fraction(2) ** power
        goal = Fraction(target)
    return (exact > goal) - (exact < goal)


#: Halfway between FLT_MAX and 2**128: a double.
_F32_MAX_MID = float(2**128 - 2**103)


def to_float32(values: np.ndarray, tokens: list[bytes]) -> np.ndarray:
    """Round decimal tokens to float32 the way ``strtof`` does: once, to nearest even.

    ``values`` are the tokens already rounded to double; rounding that double again to float32 is
    right except when the double lands exactly halfway between two float32 values, which is settled
    here on the token's exact value (spec/t7.md#t7-ascii).
    """
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        f32 = values.astype(np.float32)
    back = f32.astype(np.float64)
    for i in np.nonzero(np.isfinite(values) & (back != values))[0]:
        d = float(values[i])
        with np.errstate(over="ignore"):
            lo, hi, mid = _float32_neighbours(d, f32[i])
        if d == mid:
            side = _compare_exact(tokens[i], mid)
            if side:
                f32[i] = hi if side > 0 else lo
    return f32


def _float32_neighbours(d: float, rounded: np.float32) -> tuple[np.float32, np.float32, float]:
    """The float32 values just below and above ``d`` (``rounded`` is one of them) and their midpoint,
    which a double holds exactly."""
    import numpy as np

    inf = np.float32(np.inf)
    top = np.float32(3.4028234663852886e38)
    if math.isinf(float(rounded)):
        return (top, inf, _F32_MAX_MID) if rounded > 0 else (-inf, -top, -_F32_MAX_MID)
    if float(rounded) < d:
        lo, hi = rounded, np.nextafter(rounded, inf)
    else:
        lo, hi = np.nextafter(rounded, -inf), rounded
    if math.isinf(float(hi)):
        return lo, hi, _F32_MAX_MID
    if math.isinf(float(lo)):
        return lo, hi, -_F32_MAX_MID
    return lo, hi, (float(lo) + float(hi)) / 2


def float32_to_half(f32: np.ndarray) -> np.ndarray:
    """torch7's ``TH_float2half``: round to nearest even, every NaN becomes 0x7fff."""
    import numpy as np

    with np.errstate(over="ignore", invalid="ignore"):
        half = f32.astype(np.float16)
    bits = half.view(np.uint16).copy()
    bits[np.isnan(f32)] = 0x7FFF
    return bits.view(np.float16)


class AsciiEncoding(Encoding):
    """torch7's ascii mode: numbers as decimal text, chars raw, each array followed by one newline
    (spec/t7.md#t7-ascii)."""

    format = "t7-ascii"
    min_object_size = 1

    def _skip_ws(self, what: str) -> None:
        m = _SKIP_WS.match(self.buf, self.pos)
        assert m is not None
        self.pos = m.end()
        if self.pos >= self.size:
            raise FormatError("truncated", self.pos, f"the file ends where {what} was expected")

    def _token(self, pattern: re.Pattern[bytes], what: str) -> bytes:
        self._skip_ws(what)
        m = pattern.match(self.buf, self.pos)
        end = m.end() if m else self.pos
        # a token ends at whitespace, at the end of the stream, or at the NUL that is the last byte of a
        # torch.serialize string, which ends the stream (spec/t7.md#t7-serialize)
        if m is None or (end < self.size and self.buf[end] not in _WHITESPACE
                         and not (end == self.size - 1 and self.buf[end] == 0)):
            word = _TOKEN_CHARS[pattern].match(self.buf, self.pos)
            assert word is not None
            if word.end() == self.size:  # a token cut short by the end of the file
                raise FormatError("truncated", self.pos, f"the file ends inside {what}")
            shown = bytes(self.buf[self.pos:self.pos + 16])
            raise FormatError("bad-value", self.pos, f"expected {what}, found {ascii(shown)}...")
        self.pos = end
        return m.group()

    def _integer(self, what: str, bounds: tuple[int, int]) -> int:
        """An integer token in ``bounds``.  Its digits are counted before ``int()`` sees them (leading
        zeros do not count: fscanf reads ``0001`` as 1), so no token reaches Python's digit limit."""
        at = self._skip_and_pos(what)
        token = self._token(_INT_TOKEN, what)
        digits = token.lstrip(b"+-").lstrip(b"0")
        if len(digits) > _INT_DIGITS:
            raise FormatError("bad-value", at, f"{what} of {len(digits)} digits is out of range")
        value = int(digits or b"0") * (-1 if token.startswith(b"-") else 1)
        if not bounds[0] <= value <= bounds[1]:
            raise FormatError("bad-value", at, f"{what} {value} is out of range")
        return value

    def _skip_and_pos(self, what: str) -> int:
        self._skip_ws(what)
        return self.pos

    def _end_array(self, n: int) -> None:
        """After an array of ``n > 0`` items, one newline is consumed if present (auto-spacing)."""
        if n > 0 and self.pos < self.size and self.buf[self.pos] == 0x0A:
            self.pos += 1

    def read_int(self) -> int:
        # The hot path (every type code, index and count): a short token ended by whitespace, and the
        # one newline after it, in one match.  Anything else takes the checked path for its error.
        m = _SHORT_INT_LINE.match(self.buf, self.pos)
        if m is not None:
            value = int(m.group(1))
            if INT32[0] <= value <= INT32[1]:
                self.pos = m.end()
                return value
        value = self._integer("an integer", INT32)
        self._end_array(1)
        return value

    def read_long(self) -> int:
        self.longs_read = True
        value = self._integer("a long integer", INT64)
        self._end_array(1)
        return value

    def read_longs(self, n: int) -> list[int]:
        self.longs_read = True
        self.need(n, f"{n} long integers")
        out = [self._integer("a long integer", INT64) for _ in range(n)]
        self._end_array(n)
        return out

    def read_double(self) -> float:
        value = parse_c_double(self._token(_FLOAT_TOKEN, "a number"))
        self._end_array(1)
        return value

    def _raw(self, n: int, what: str) -> memoryview:
        self.need(n, what)
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        self._end_array(n)
        return out

    def read_chars(self, n: int) -> bytes:
        return bytes(self._raw(n, f"a string of {n} bytes"))

    def read_storage(self, dtype: DType, n: int, device: str) -> Storage:
        """Byte/Char elements are raw bytes (a zero-copy slice); the others decimal tokens
        (spec/t7.md#t7-ascii, #t7-storage)."""
        import numpy as np

        if dtype.itemsize == 1:
            return Storage(dtype, n, device, buffer=self._raw(n, f"a storage of {n} bytes"))
        self.need(n, f"a storage of {n} {dtype.name} elements")
        if dtype.name in _ASCII_INT_RANGES:
            bounds = _ASCII_INT_RANGES[dtype.name]
            ints = [self._integer(f"a {dtype.name} element", bounds) for _ in range(n)]
            self._end_array(n)
            if dtype.name == "int64":
                self.longs_read = True
            return Storage(dtype, n, device, data=np.array(ints, dtype=dtype.numpy))
        tokens = [self._token(_FLOAT_TOKEN, f"a {dtype.name} element") for _ in range(n)]
        self._end_array(n)
        doubles = np.array([parse_c_double(t) for t in tokens], dtype=np.float64)
        if dtype.name == "float64":
            data = doubles
        elif dtype.name == "float32":
            data = to_float32(doubles, tokens)
        elif dtype.name == "float16":
            data = float32_to_half(to_float32(doubles, tokens))
        else:
            raise FormatError("bad-value", self.pos, f"no ascii form for {dtype.name} elements")
        return Storage(dtype, n, device, data=data)

    def at_end(self) -> bool:
        m = _SKIP_WS.match(self.buf, self.pos)
        assert m is not None
        rest = self.size - m.end()
        # Trailing whitespace, and the NUL ending a torch.serialize string (spec/t7.md#t7-serialize).
        return rest == 0 or (rest == 1 and self.buf[m.end()] == 0)

    def describe(self) -> dict[str, object]:
        return {"mode": "ascii"}
