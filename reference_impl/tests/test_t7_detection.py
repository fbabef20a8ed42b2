"""Detecting a ``.t7`` file's mode, byte order and long size, and honouring hints (spec/t7.md#t7-detect,
#t7-hints).

Successful reads are checked against the expected descriptions real Lua Torch's loader gave
(``conformance/cases/t7-*``, imported from the shared corpus), never against our own writer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from t7_bytes import i, number
from torchfmt import Hints, read_bytes
from torchfmt.describe import describe_document
from torchfmt.errors import FormatError
from torchfmt.t7.detection import sniff_byte_order, sniff_mode

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "conformance" / "cases"
sys.path.insert(0, str(ROOT / "conformance"))
from harness.compare import compare  # noqa: E402

# The real files whose long size no reading can decide (both readings succeed).
AMBIGUOUS = {"storage-double", "tensor-double-2x3", "tensor-empty-nostorage"}


def _golden() -> list[Path]:
    out = []
    for folder in sorted(CASES.glob("t7-*/*")):
        case = folder / "case.yaml"
        if (folder / "expected.json").is_file() and case.is_file() and "category: accept" in case.read_text():
            out.append(folder)
    return out


GOLDEN = _golden()


def _case(folder: Path) -> tuple[bytes, dict[str, Any], dict[str, Any]]:
    import yaml

    meta = yaml.safe_load((folder / "case.yaml").read_text())
    data = (folder / meta["file"]).read_bytes()
    return data, meta.get("hints", {}), json.loads((folder / "expected.json").read_text())


def test_the_golden_cases_are_there() -> None:
    assert len(GOLDEN) >= 70


@pytest.mark.parametrize("folder", GOLDEN, ids=[f"{p.parent.name}/{p.name}" for p in GOLDEN])
def test_detection_without_hints_agrees_with_the_writer(folder: Path) -> None:
    data, hints, expected = _case(folder)
    if folder.name in AMBIGUOUS:
        with pytest.raises(FormatError) as e:
            read_bytes(data)
        assert e.value.code == "ambiguous"
        doc = read_bytes(data, Hints(long_size=hints["long_size"]))
    else:
        doc = read_bytes(data)
    assert doc.format == f"t7-{hints['mode']}"
    found = doc.extra["t7"]
    if hints["mode"] == "binary":
        assert found["byte_order"] == hints["byte_order"]
        if "t7-long4" in (folder / "case.yaml").read_text():
            assert found["long_size"] == 4
    assert compare(expected, describe_document(doc)) == []


def test_long4_is_detected_and_widened() -> None:
    data, _, expected = _case(CASES / "t7-binary" / "long4-longstorage")
    doc = read_bytes(data)
    assert doc.extra["t7"] == {"mode": "binary", "byte_order": "little", "long_size": 4}
    assert compare(expected, describe_document(doc)) == []


def test_hints_are_honoured_even_against_the_bytes() -> None:
    data, _, _ = _case(CASES / "t7-binary" / "table-map")
    for hints, code in ((Hints(mode="ascii"), "bad-value"), (Hints(byte_order="big"), "bad-type-code")):
        with pytest.raises(FormatError) as e:
            read_bytes(data, hints)
        assert e.value.code == code
    data, _, _ = _case(CASES / "t7-binary" / "long8-tensor-double-t")
    with pytest.raises(FormatError):
        read_bytes(data, Hints(long_size=4))


def test_when_both_long_sizes_fail_the_further_error_is_reported() -> None:
    data, _, _ = _case(CASES / "t7-binary" / "long4-tensor-double-t")
    with pytest.raises(FormatError) as e:
        read_bytes(data[:-3])
    assert e.value.code == "truncated"
    assert e.value.offset is not None and e.value.offset > 100  # the 4-byte reading, near the end


@pytest.mark.parametrize("first,mode", [(b"\x00", "binary"), (b"\x08", "binary"), (b"4", "ascii"),
                                        (b"\n", "ascii"), (b"-", "ascii")])
def test_mode_from_the_first_byte(first: bytes, mode: str) -> None:
    assert sniff_mode(memoryview(first + b"\0\0\0")) == mode


@pytest.mark.parametrize("data,code", [(b"", "truncated"), (b"\x0e", "unknown-format"),
                                       (b"{", "unknown-format"), (b"\xff\xfe", "unknown-format")])
def test_mode_rejections(data: bytes, code: str) -> None:
    with pytest.raises(FormatError) as e:
        sniff_mode(memoryview(data))
    assert e.value.code == code


def test_byte_order_from_the_first_non_nil_type_code() -> None:
    assert sniff_byte_order(memoryview(i(0) * 3 + i(3))) == "little"
    assert sniff_byte_order(memoryview(i(0) + b"\0\0\0\x05")) == "big"
    assert sniff_byte_order(memoryview(i(0) * 2 + b"\0\0")) is None
    with pytest.raises(FormatError) as e:
        sniff_byte_order(memoryview(i(0) + i(0x0300)))
    assert (e.value.code, e.value.offset) == ("bad-type-code", 4)


def test_nil_only_streams_read_in_either_order() -> None:
    doc = read_bytes(i(0) * 2)
    assert doc.objects == [None, None]
    # A number after leading nils decides the order; no long is read, so no second reading.
    doc = read_bytes(i(0) + number(2.5))
    assert doc.objects == [None, 2.5] and doc.extra["t7"]["byte_order"] == "little"
