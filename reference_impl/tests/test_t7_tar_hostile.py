"""Hostile ``.t7`` and tar inputs keep the reader's contract: digits counted before ``int()``, ASCII
digits only, patterns without backtracking, the object limit, the description's nesting measured before
describing, and error messages that quote short prefixes (spec/t7.md#t7-ascii, #t7-class-version,
#t7-limits; spec/pt-tar.md#pt-tar-members).  Timings live in ``benchmarks/t7_tar_hostile.py``; these
tests check the answers.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
import torch
from t7_bytes import LE8, chars, i, number, table
from test_pt_tar import Ref, archive, members
from torchfmt import Hints, read_bytes
from torchfmt.describe import describe_document
from torchfmt.errors import FormatError
from torchfmt.limits import T7_DEPTH, T7_OBJECTS
from torchfmt.model import LuaTable
from torchfmt.pt.tar import _decimal, read_members
from torchfmt.t7.encodings import BinaryEncoding
from torchfmt.t7.reader import ObjectReader, _check_described_depth, _is_lua_number

from conformance.harness.cases import load_case
from conformance.harness.compare import compare

ROOT = Path(__file__).resolve().parents[2]

ASCII_CASE = ROOT / "conformance" / "cases" / "t7-ascii" / "ascii-tensor-float-2x3"


def _error(data: bytes, hints: Hints | None = None) -> FormatError:
    with pytest.raises(FormatError) as e:
        read_bytes(data, hints or Hints(**LE8))
    return e.value


@pytest.mark.parametrize(("text", "number"), [
    (b"1", True), (b" 1 ", True), (b"\t4\n", True), (b"1.0", True), (b"5.", True), (b".5", True),
    (b"1e5", True), (b"1.5e-3", True), (b"0x1F", True), (b"-2", True), (b"+3", True),
    (b"", False), (b"x", False), (b"1x", False), (b"0x", False), (b"1e", False), (b".", False),
    (b"1.2.3", False), (b"- 1", False), (b"1 2", False), (b"\xc2\xb2", False),
])
def test_lua_number(text: bytes, number: bool) -> None:
    assert _is_lua_number(text) is number


def test_a_megabyte_of_digits_is_a_class_name_not_a_version() -> None:
    """``V 111...1x``: no version, so the whole header is the name of a generic class
    (spec/t7.md#t7-class-version); the former pattern needed minutes for it."""
    header = b"V " + b"1" * 1_000_000 + b"x"
    doc = read_bytes(i(4) + i(1) + chars(header) + table(2), Hints(**LE8))
    assert doc.objects[0].class_name == header.decode() and doc.objects[0].version is None


def _ascii_case() -> tuple[bytes, dict]:
    data = (ASCII_CASE / "ascii_tensor_float_2x3.t7").read_bytes()
    expected = load_case(ASCII_CASE).description
    assert expected is not None
    return data, expected


def test_leading_zeros_are_not_digits_that_count() -> None:
    """The real file with its first type code written as 5000 zeros and a 4 reads as fscanf reads it:
    the same tensor (spec/t7.md#t7-ascii)."""
    data, expected = _ascii_case()
    assert data.startswith(b"4\n")
    padded = b"0" * 5000 + data
    assert compare(expected, describe_document(read_bytes(padded, Hints(mode="ascii")))) == []


@pytest.mark.parametrize("first", [b"1" + b"0" * 5000, b"9" * 20, "\u00b2".encode(), "\u0666".encode()])
def test_ascii_integers_out_of_range_or_not_ascii(first: bytes) -> None:
    data, _ = _ascii_case()
    e = _error(first + data[1:], Hints(mode="ascii"))
    assert e.code == "bad-value" and len(e.line()) < 200


def test_the_object_limit_counts_every_object() -> None:
    data = i(0) * 10 + number(1.0)
    assert len(ObjectReader(BinaryEncoding(memoryview(data)), max_objects=11).read_stream()) == 11
    with pytest.raises(FormatError) as e:
        ObjectReader(BinaryEncoding(memoryview(data)), max_objects=10).read_stream()
    assert e.value.code == "limit-exceeded" and e.value.offset == 40
    assert T7_OBJECTS.value >= 100_000  # the suite's largest real file holds about 14,400


def _chain(n: int, bottom: object) -> LuaTable:
    t = LuaTable([(1.0, bottom)])
    for _ in range(n - 1):
        t = LuaTable([(1.0, t)])
    return t


def test_the_described_depth_counts_where_a_shared_table_is_first_written() -> None:
    """A chain first reached through another chain is written inside it (spec/t7.md#t7-limits)."""
    first = _chain(600, None)
    second = _chain(600, first)
    _check_described_depth([first, second], T7_DEPTH.value)  # first written at the top: 600 deep
    with pytest.raises(FormatError) as e:
        _check_described_depth([LuaTable(), second], T7_DEPTH.value)  # first written inside: 1200
    assert e.value.code == "limit-exceeded"
    cycle = LuaTable()
    cycle.items.append((1.0, cycle))
    _check_described_depth([cycle, cycle], 2)


def test_a_repeated_deep_key_is_named_by_its_kind() -> None:
    """Two keys that are one 900-deep table: the message names a table, it does not print it."""
    nested = b"".join(i(3) + i(k + 2) + i(1) + number(1.0) for k in range(900)) + table(902)
    data = i(3) + i(1) + i(2) + nested + number(1.0) + i(3) + i(2) + number(2.0)
    e = _error(data)
    assert e.code == "bad-value" and "a table" in e.message and len(e.line()) < 200


def test_a_long_class_name_is_quoted_by_a_prefix() -> None:
    e = _error(i(4) + i(1) + chars(b"V 1") + chars(b"\xff" * 100_000))
    assert e.code == "bad-value" and len(e.line()) < 200


# -- tar ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "most", "value"), [
    ("12", 100, 12), ("0012", 100, 12), ("0", 5, 0), ("101", 100, None), ("1" * 5000, 10**9, None),
    ("0" * 5000 + "7", 10, 7), ("\u00b2", 10, None), ("\u0666", 10, None), ("1_0", 100, None),
    (" 1", 10, None), ("+1", 10, None), ("", 10, None), (b"42", 100, 42),
])
def test_decimal(text: str | bytes, most: int, value: int | None) -> None:
    assert _decimal(text, most) == value


def _with_pax(records: dict[str, str]) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("sys_info")
        info.pax_headers = records
        tar.addfile(info, io.BytesIO(b""))
    return out.getvalue()


@pytest.mark.parametrize(("size", "code"), [("\u00b2", "bad-container"), ("\u0666", "bad-container"),
                                             ("1" * 5000, "truncated"), ("0" * 5000, None)])
def test_pax_size_records(size: str, code: str | None) -> None:
    """``0`` * 5000 is the size 0: the walk goes on and finds the other members missing."""
    with pytest.raises(FormatError) as e:
        read_members(memoryview(_with_pax({"size": size})))
    if code is None:
        assert e.value.code == "bad-container" and "no 'pickle' member" in e.value.message
    else:
        assert e.value.code == code and len(e.value.line()) < 200


def test_persistent_ids_are_ascii_decimals(tmp_path: Path) -> None:
    """torch takes ``int(pid)``: ``"010"`` names tensor 10, as here; digits ``int`` alone calls digits
    are refused (stricter than torch), and so are 5000 of them, which ``int`` refuses too."""
    path = tmp_path / "old.pt"
    path.write_bytes(archive(members({"w": Ref("010")})))
    theirs = torch.load(path, weights_only=False)
    ours = read_bytes(path.read_bytes()).objects[0]
    assert ours["w"].numpy().tolist() == theirs["w"].tolist()
    for pid in ("\u0661\u0660", "1" * 5000, "1_0"):
        with pytest.raises(FormatError) as e:
            read_bytes(archive(members({"w": Ref(pid)})))
        assert e.value.code == "bad-reference" and len(e.value.line()) < 200
