"""case.yaml is validated strictly, and the corpus tier reads its hints from PROVENANCE.txt."""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.harness import vocabulary
from conformance.harness.cases import _provenance_hints, committed_cases, corpus_cases, load_case
from conformance.harness.expected import ExpectedError, read_expected_bytes

DESCRIPTION = {"description_version": 0, "format": "t7-binary", "objects": [{"type": "nil"}], "storages": {}}


def write_case(root: Path, data: dict[str, Any], *, fmt: str = "t7-binary", name: str = "c",
               raw: str | None = None) -> Path:
    folder = root / fmt / name
    folder.mkdir(parents=True)
    (folder / "data.t7").write_bytes(b"\0\0\0\0")
    (folder / "expected.json").write_text(json.dumps({**DESCRIPTION, "format": fmt}))
    (folder / "case.yaml").write_text(raw if raw is not None else yaml.safe_dump(data))
    return folder


def good(**over: Any) -> dict[str, Any]:
    data = {"id": "t7-binary/c", "category": "accept", "format": "t7-binary", "file": "data.t7",
            "features": ["t7-binary", "t7-nil"], "spec": ["t7.md#t7-nil"],
            "provenance": {"writer": "Lua Torch7", "generator": "hand", "notes": "n"},
            "expect": {"description": "expected.json"},
            "hints": {"mode": "binary", "long_size": 8, "byte_order": "little"}}
    data.update(over)
    return {k: v for k, v in data.items() if v is not None}


def test_a_good_case_has_no_problems(tmp_path: Path) -> None:
    case = load_case(write_case(tmp_path, good()))
    assert case.problems == []
    lua = {"verdict": "refuses", "detail": "d", "sha256": "0" * 64, "torch_load": "loads"}
    assert load_case(write_case(tmp_path, good(id="t7-binary/l", lua=lua), name="l")).problems == []
    assert (case.id, case.category, case.accept_ok, case.reject_ok) == ("t7-binary/c", "accept", True, False)
    assert case.description is not None and case.hints["long_size"] == 8
    reject = load_case(write_case(tmp_path, good(id="t7-binary/r", category="reject",
                                                 expect={"errors": ["truncated", "bad-length"]}), name="r"))
    assert reject.problems == [] and reject.errors == ("truncated", "bad-length")
    named = load_case(write_case(tmp_path, good(id="t7-binary/k", canary="/tmp/torchfmt-canary-k"), name="k"))
    assert named.problems == [] and named.canaries == (Path("/tmp/torchfmt-canary-k"),)


@pytest.mark.parametrize("over,problem", [
    ({"colour": "red"}, "unknown fields"),
    ({"spec": None}, "missing fields"),
    ({"category": "maybe"}, "category"),
    ({"id": "t7-binary/other"}, "id"),
    ({"format": "t7-ascii"}, "lives under"),
    ({"format": "t8"}, "format"),
    ({"file": "missing.t7"}, "does not exist"),
    ({"file": "../data.t7"}, "plain file name"),
    ({"features": ["t7-binary", "no-such-feature"]}, "features not in"),
    ({"features": []}, "non-empty list"),
    ({"features": ["t7-nil", "t7-nil"]}, "duplicates"),
    ({"spec": ["t7.md"]}, "file.md#anchor"),
    ({"provenance": {"writer": "x"}}, "provenance.generator"),
    ({"provenance": {"writer": "x", "generator": "y", "when": "z"}}, "unknown provenance"),
    ({"expect": {"description": "expected.json", "error": "truncated"}}, "an accept case"),
    ({"category": "reject", "expect": {"description": "expected.json"}}, "a reject case"),
    ({"category": "reject", "expect": {"error": "no-such-code"}}, "closed set"),
    ({"category": "reject", "expect": {"errors": ["truncated", "oops"]}}, "closed set"),
    ({"category": "reject", "expect": {"error": "truncated", "errors": ["truncated"]}}, "not both"),
    ({"category": "impl", "expect": {}}, "an impl case"),
    ({"expect": {"description": "expected.json", "why": 1}}, "unknown expect"),
    ({"expect": {"description": "nothere.json"}}, "must name a file"),
    ({"hints": {"mode": "binary", "endianness": "little"}}, "unknown hint"),
    ({"hints": {"long_size": 2}}, "hint long_size"),
    ({"hints": {"mode": "ascii"}}, "contradicts"),
    ({"hints": {"long_size": True}}, "hint long_size"),
    ({"canary": "relative/canary"}, "canary"),
    ({"canary": "/etc/torchfmt-canary-x"}, "canary"),
    ({"canary": "/tmp/torchfmt-canary-../../etc/passwd"}, "canary"),
    # Lua Torch's recorded verdict (harness/cases.py LUA_KEYS): its fields, no others
    ({"lua": {"verdict": "loads", "detail": "d", "sha256": "0" * 64, "colour": "red"}}, "unknown ['colour']"),
    ({"lua": {"detail": "d", "sha256": "0" * 64}}, "missing ['verdict']"),
    ({"lua": {"verdict": "maybe", "detail": "d", "sha256": "0" * 64}}, "lua.verdict"),
])
def test_schema_breaches_are_problems(tmp_path: Path, over: dict[str, Any], problem: str) -> None:
    case = load_case(write_case(tmp_path, good(**over)))
    assert any(problem in p for p in case.problems), case.problems


def test_expected_description_is_checked(tmp_path: Path) -> None:
    folder = write_case(tmp_path, good())
    (folder / "expected.json").write_text(json.dumps({**DESCRIPTION, "format": "t7-ascii"}))
    assert any("format" in p for p in load_case(folder).problems)
    (folder / "expected.json").write_text('{"format": "t7-binary", "objects": [], "storages": {}, "x": NaN}')
    assert any("non-standard" in p for p in load_case(folder).problems)
    (folder / "expected.json").write_text('{"error": "could not load"}')
    assert any("error document" in p for p in load_case(folder).problems)


def _gzipped(folder: Path, data: bytes) -> None:
    (folder / "expected.json").unlink()
    (folder / "expected.json.gz").write_bytes(data)


def test_a_gzipped_expected_description_is_read_as_the_plain_one(tmp_path: Path) -> None:
    text = json.dumps({**DESCRIPTION, "objects": [{"type": "nil"}] * 3}).encode()
    folder = write_case(tmp_path, good(expect={"description": "expected.json.gz"}))
    _gzipped(folder, gzip.compress(text, mtime=0))
    case = load_case(folder)
    assert case.problems == [] and case.description == json.loads(text)
    assert read_expected_bytes(folder / "expected.json.gz") == text
    (folder / "expected.json.gz").write_bytes(gzip.compress(text.replace(b"}", b"} ") + b"NaN"))
    assert any(p.startswith("expected.json.gz: ") for p in load_case(folder).problems)  # strict JSON still
    # the name says which: gzip bytes in expected.json are no JSON
    plain = write_case(tmp_path, good(id="t7-binary/p"), name="p")
    (plain / "expected.json").write_bytes(gzip.compress(text))
    assert any("expected.json: " in p for p in load_case(plain).problems)


@pytest.mark.parametrize("make,problem", [
    (lambda text: gzip.compress(text)[:-9], "cut short"),
    (lambda text: gzip.compress(text)[:-4] + b"\0\0\0\0", "not a gzip stream"),  # the length is wrong
    (lambda text: b"\x1f\x8b" + text, "not a gzip stream"),
    (lambda text: text, "not a gzip stream"),
    (lambda text: gzip.compress(text) + gzip.compress(text), "bytes after"),
    (lambda text: gzip.compress(text + b" " * (64 << 20)), "more than 67108864 bytes"),
    (lambda text: b"", "cut short"),
])
def test_a_corrupt_or_oversized_gzip_is_a_problem(tmp_path: Path, make: Any, problem: str) -> None:
    folder = write_case(tmp_path, good(expect={"description": "expected.json.gz"}))
    _gzipped(folder, make(json.dumps(DESCRIPTION).encode()))
    case = load_case(folder)
    assert case.description is None
    assert any(p.startswith("expected.json.gz: ") and problem in p for p in case.problems), case.problems


def test_the_bound_holds_for_a_bomb_and_a_plain_file(tmp_path: Path) -> None:
    """A gzip bomb is inflated no further than the bound (64 KiB compress to about 100 bytes here), and a
    plain file is read no further either."""
    bomb = tmp_path / "expected.json.gz"
    bomb.write_bytes(gzip.compress(b" " * (1 << 16)))
    with pytest.raises(ExpectedError, match="decompresses to more than 4096 bytes"):
        read_expected_bytes(bomb, limit=4096)
    assert len(read_expected_bytes(bomb, limit=1 << 16)) == 1 << 16
    plain = tmp_path / "expected.json"
    plain.write_bytes(b" " * 4097)
    with pytest.raises(ExpectedError, match="more than 4096 bytes"):
        read_expected_bytes(plain, limit=4096)


def test_the_generators_write_gzip_above_the_threshold_only(tmp_path: Path) -> None:
    from conformance.generators.case_folder import GZIP_ABOVE, write_case_folder

    small = {**DESCRIPTION}
    large = {**DESCRIPTION, "objects": [{"type": "string", "value": "x" * 100}] * (GZIP_ABOVE // 100)}
    for name, doc, written in (("s", small, "expected.json"), ("l", large, "expected.json.gz")):
        folder = tmp_path / "t7-binary" / name
        write_case_folder(folder, "data.t7", b"\0\0\0\0", good(id=f"t7-binary/{name}"), doc)
        assert sorted(p.name for p in folder.iterdir()) == sorted(["case.yaml", "data.t7", written])
        case = load_case(folder)
        assert case.problems == [] and case.description == doc
    assert (tmp_path / "t7-binary" / "l" / "expected.json.gz").read_bytes()[4:8] == b"\0\0\0\0"  # mtime 0


def test_hints_are_for_t7_only(tmp_path: Path) -> None:
    case = load_case(write_case(tmp_path, good(id="pt-zip/c", format="pt-zip", features=["zip-archive"]),
                                fmt="pt-zip"))
    assert any("t7 cases only" in p for p in case.problems)


def test_duplicate_yaml_keys_and_garbage_are_problems(tmp_path: Path) -> None:
    text = yaml.safe_dump(good()) + "category: reject\n"
    assert any("duplicate" in p for p in load_case(write_case(tmp_path, {}, raw=text)).problems)
    assert load_case(write_case(tmp_path, {}, raw="- a list\n", name="d")).problems


def test_discovery_reports_misplaced_cases(tmp_path: Path) -> None:
    write_case(tmp_path, good())
    (tmp_path / "t7-binary" / "no-yaml").mkdir()
    deep = tmp_path / "t7-binary" / "c" / "nested"
    deep.mkdir()
    (deep / "case.yaml").write_text("id: x\n")
    found = {c.id: c for c in committed_cases(tmp_path)}
    assert found["t7-binary/c"].problems == []
    assert found["t7-binary/no-yaml"].problems == ["case folder without case.yaml"]
    assert any("wrong depth" in p for p in found["stray/t7-binary/c/nested/case.yaml"].problems)


@pytest.mark.parametrize("order", ["lazy-first", "full-read-first"])
def test_a_lazy_case_reads_as_the_full_read_once_loaded(tmp_path: Path, order: str) -> None:
    """``committed_cases(lazy=True)`` (the suite's collection) knows ids, formats and tiers alone until a
    case is loaded; loaded, every case (good, broken, misplaced) is what the full read makes of it, read
    from its folder or from the last full read's memory."""
    write_case(tmp_path, good())
    write_case(tmp_path, good(id="t7-binary/d", category="reject", expect={"error": "truncated"}), name="d")
    broken = write_case(tmp_path, good(id="t7-binary/b"), name="b")
    (broken / "expected.json").write_text('{"format": "t7-binary", "objects": [], "objects": []}')
    write_case(tmp_path, {}, raw="- a list\n", name="y")
    (tmp_path / "t7-binary" / "no-yaml").mkdir()
    write_case(tmp_path, good(id="t9/x", format="t9"), fmt="t9", name="x")
    (tmp_path / "t7-binary" / "c" / "nested").mkdir()
    (tmp_path / "t7-binary" / "c" / "nested" / "case.yaml").write_text("id: x\n")
    full = committed_cases(tmp_path) if order == "full-read-first" else None
    lazy = committed_cases(tmp_path, lazy=True)
    assert all(c.category == "?" and c.description is None for c in lazy if c.pending is not None)
    assert sum(c.pending is not None for c in lazy) == 6
    loaded = [c.loaded() for c in lazy]
    full = full or committed_cases(tmp_path)
    assert [c.id for c in loaded] == [c.id for c in full]
    assert [vars(c) for c in loaded] == [vars(c) for c in full]
    problems = {c.id: c.problems for c in full}
    assert problems["t7-binary/c"] == [] and any("duplicate" in p for p in problems["t7-binary/b"])
    assert any("not a format folder" in p for p in problems["t9/x"])
    assert loaded[0].loaded() is loaded[0] and loaded[0].problems == full[0].problems  # once


def test_error_codes_are_read_from_errors_py_as_data(tmp_path: Path) -> None:
    codes = vocabulary.error_codes()
    assert {"truncated", "unsafe-global", "bad-magic"} <= codes
    # the same literal, parsed independently: every key of the ERROR_CODES dict display
    tree = ast.parse(vocabulary.ERRORS_FILE.read_text())
    literal = next(n.value for n in tree.body if isinstance(n, ast.AnnAssign)
                   and getattr(n.target, "id", None) == "ERROR_CODES")
    assert codes == {k.value for k in literal.keys}


def test_provenance_hints(tmp_path: Path) -> None:
    (tmp_path / "PROVENANCE.txt").write_text(
        "Format column: binary = native little-endian, int32 + int64 longs; ascii = text mode.\n"
        "file | repo | format | content\n"
        "a.t7 | r | binary | x\n"
        "b.t7 | r | ASCII | y\n")
    assert _provenance_hints(tmp_path, "a.t7") == {"mode": "binary", "byte_order": "little", "long_size": 8}
    assert _provenance_hints(tmp_path, "b.t7") == {"mode": "ascii"}
    assert _provenance_hints(tmp_path, "c.t7") == {}
    (tmp_path / "PROVENANCE.txt").write_text('README: "created on Linux x86_64" with real Lua Torch\n'
                                             "(binary mode, little-endian, 8-byte long).\n")
    assert _provenance_hints(tmp_path, "x.t7") == {"mode": "binary", "byte_order": "little", "long_size": 8}


def test_corpus_tier_reads_in_place(tmp_path: Path) -> None:
    tier = tmp_path / "pt" / "wild"
    tier.mkdir(parents=True)
    (tier / "legacy_a.pt").write_bytes(b"\x80\x02")
    (tier / "legacy_a.pt.expected.json").write_text('{"error": "torch could not load it"}')
    (tier / "zip_b.pt").write_bytes(b"PK")
    obj = {"type": "object", "class": "__main__.Net", "args": [], "state": None}
    (tier / "zip_b.pt.expected.json").write_text(json.dumps(
        {"format": "pt-zip", "objects": [obj], "storages": {}, "_loaded_with": "stubs"}))
    (tier / "manifest.json").write_text(json.dumps({"zip_b.pt": {"load": "weights_only=False + stubs"}}))
    (tier / "orphan.pt.expected.json").write_text("{}")
    cases = {c.id: c for c in corpus_cases(tmp_path)}
    a, b = cases["corpus/pt/wild/legacy_a.pt"], cases["corpus/pt/wild/zip_b.pt"]
    assert (a.category, a.format, a.errors, a.path) == ("reject", "pt-legacy", (), tier / "legacy_a.pt")
    assert (b.category, b.errors, b.column) == ("impl", ("unsafe-global",), "corpus")
    assert "whole-module" in b.features and "zip-archive" in b.features
    assert cases["corpus/pt/wild/orphan.pt"].problems


def test_corpus_metadata_fields_are_each_optional(tmp_path: Path) -> None:
    """A corpus.yaml entry adds what it has of features, spec anchors and notes (harness/cases.py
    CORPUS_METADATA_KEYS): an entry with notes alone adds no feature and is no problem
    (``_apply_metadata``: ``"features" in meta``; a judge that read every entry's features failed it)."""
    tier = tmp_path / "pt" / "wild"
    tier.mkdir(parents=True)
    for name in ("legacy_a.pt", "legacy_b.pt"):
        (tier / name).write_bytes(b"\x80\x02")
        (tier / f"{name}.expected.json").write_text('{"error": "torch could not load it"}')
    metadata = {"pt/wild/legacy_a.pt": {"notes": "only notes"},
                "pt/wild/legacy_b.pt": {"features": ["legacy-magic"], "spec": ["pt.md#pt-legacy"]}}
    plain = {c.id: c for c in corpus_cases(tmp_path, {})}
    cases = {c.id: c for c in corpus_cases(tmp_path, metadata)}
    a, b = cases["corpus/pt/wild/legacy_a.pt"], cases["corpus/pt/wild/legacy_b.pt"]
    assert (a.problems, a.provenance["notes"]) == ([], "only notes"), a.problems
    alone = plain["corpus/pt/wild/legacy_a.pt"]
    assert (a.features, a.spec) == (alone.features, alone.spec)
    assert b.problems == [] and "legacy-magic" in b.features and b.spec == ["pt.md#pt-legacy"], b.problems
