"""Detecting a ``.t7`` file's mode, byte order and long size, and honouring hints (spec/t7.md#t7-detect,
#t7-hints).

Successful reads are checked against the expected descriptions real Lua Torch's loader gave
(``conformance/cases/t7-*``, imported from the shared corpus), never against our own writer.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from t7_bytes import i, number
from torchfmt import Hints, read_bytes
from torchfmt.describe import describe_document
from torchfmt.errors import FormatError
from torchfmt.recursion import recursion_limit
from torchfmt.t7.detection import sniff_byte_order, sniff_mode

from conformance.harness.cases import load_case
from conformance.harness.compare import compare

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "conformance" / "cases"

# The real files that read completely with either long size; only the 8-byte reading gives the one
# object torch.save writes (spec/t7.md#t7-detect).
BOTH_READ = {"storage-double", "tensor-double-2x3", "tensor-empty-nostorage"}


def _golden() -> list[Path]:
    out = []
    for folder in sorted(CASES.glob("t7-*/*")):
        if (folder / "case.yaml").is_file():
            case = load_case(folder)
            if case.category == "accept" and case.description is not None:
                out.append(folder)
    return out


GOLDEN = _golden()


def _case(folder: Path) -> tuple[bytes, dict[str, Any], dict[str, Any]]:
    case = load_case(folder)
    assert case.description is not None, case.problems
    return case.path.read_bytes(), case.hints, case.description


def test_the_golden_cases_are_there() -> None:
    assert len(GOLDEN) >= 70


@pytest.mark.parametrize("folder", GOLDEN, ids=[f"{p.parent.name}/{p.name}" for p in GOLDEN])
def test_detection_without_hints_agrees_with_the_writer(folder: Path) -> None:
    with recursion_limit(20_000):  # the spec-nesting-* cases nest 1,024 levels (spec/t7.md#t7-limits)
        _detect_and_compare(folder)


def _detect_and_compare(folder: Path) -> None:
    data, hints, expected = _case(folder)
    doc = read_bytes(data)
    if folder.name.removesuffix("-no-hints") in BOTH_READ:
        note = describe_document(doc)["_t7_long_size"]
        assert note["long_size"] == hints.get("long_size", 8) == 8
        assert note["other_reading"]["long_size"] == 4 and note["other_reading"]["objects"] > 1
        assert note["other_reading"]["document"]["format"] == "t7-binary"
    elif folder.name.startswith("spec-") and doc.notes:  # generated streams may read both ways too
        assert doc.notes["t7_long_size"]["long_size"] == hints.get("long_size", 8)
    else:
        assert doc.notes == {}
    mode = hints.get("mode", "binary")
    assert doc.format == f"t7-{mode}"
    found = doc.extra["t7"]
    if mode == "binary" and "byte_order" in hints:
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


def test_one_object_reading_wins_and_the_other_is_a_note() -> None:
    """A stream both long sizes read: the 8-byte reading gives the one object torch.save writes, the
    4-byte one the same tensor and a nil (spec/t7.md#t7-detect)."""
    data, _, expected = _case(CASES / "t7-binary" / "tensor-empty-nostorage")
    desc = describe_document(read_bytes(data))
    assert compare(expected, desc) == []
    other = desc["_t7_long_size"]["other_reading"]
    assert other["objects"] == 2 and other["document"]["objects"][1] == {"type": "none"}


def test_two_readings_that_both_give_several_objects_stay_ambiguous() -> None:
    """The real empty tensor followed by a nil: 2 objects with 8-byte longs, 3 with 4-byte ones; neither
    is what torch.save writes, so nothing decides (spec/t7.md#t7-detect)."""
    data, _, _ = _case(CASES / "t7-binary" / "tensor-empty-nostorage")
    with pytest.raises(FormatError) as e:
        read_bytes(data + i(0))
    assert e.value.code == "ambiguous"
    assert len(read_bytes(data + i(0), Hints(long_size=8)).objects) == 2
    assert len(read_bytes(data + i(0), Hints(long_size=4)).objects) == 3


CORPUS = Path(os.environ.get("TORCHFMT_CORPUS") or ROOT.parent / "shared" / "corpus") / "t7"
CORPUS_FILES = sorted(CORPUS.glob("*/*.t7")) if CORPUS.is_dir() else []


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[f"{p.parent.name}/{p.name}" for p in CORPUS_FILES])
def test_every_corpus_file_reads_without_hints_as_its_writer_loaded_it(path: Path) -> None:
    """Every .t7 of the shared corpus (lua-torch, torchfile, wild), read with no hint at all, is what
    real torch7 loaded, or fails as it did (spec/t7.md#t7-detect); the four files both long sizes read
    (lua-torch storage_double, tensor_double_2x3, tensor_empty_nostorage; torchfile tds_vec) included."""
    expected = json.loads(path.with_name(path.name + ".expected.json").read_text(encoding="utf-8"))
    if "error" in expected:
        with pytest.raises(FormatError):
            read_bytes(path.read_bytes())
        return
    assert compare(expected, describe_document(read_bytes(path.read_bytes()))) == []


def test_the_corpus_is_there_for_the_no_hint_reading() -> None:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus not present")
    assert len(CORPUS_FILES) >= 110
    both = {"storage_double.t7", "tensor_double_2x3.t7", "tensor_empty_nostorage.t7", "tds_vec.t7"}
    for p in CORPUS_FILES:
        if p.name in both:
            notes = describe_document(read_bytes(p.read_bytes()))
            assert notes["_t7_long_size"]["long_size"] == 8, p
