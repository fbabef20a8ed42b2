"""conformance/corpus.yaml: what corpus-tier files exercise (spec/README.md#traceability).

The file is well formed and names only corpus files that exist; the corpus tier applies each entry to
its case; a bad entry is a problem of that case, never ignored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.harness import vocabulary
from conformance.harness.cases import (
    CORPUS_METADATA,
    CORPUS_METADATA_KEYS,
    CORPUS_TIERS,
    corpus_cases,
    corpus_metadata,
    corpus_root,
)

METADATA = corpus_metadata()


def test_entries_are_sorted_and_in_a_corpus_tier() -> None:
    assert CORPUS_METADATA.is_file() and METADATA
    assert list(METADATA) == sorted(METADATA)
    outside = [k for k in METADATA if not any(k.startswith(t + "/") for t in CORPUS_TIERS)]
    assert not outside, f"corpus.yaml names files outside the corpus tiers {CORPUS_TIERS}: {outside}"


@pytest.mark.parametrize("name", sorted(METADATA))
def test_entry_is_well_formed(name: str) -> None:
    entry = METADATA[name]
    assert isinstance(entry, dict) and set(entry) <= set(CORPUS_METADATA_KEYS), entry
    assert set(entry.get("features", [])) <= set(vocabulary.features())
    assert isinstance(entry.get("notes", ""), str)
    spec = entry.get("spec", [])
    assert spec and len(set(spec)) == len(spec)
    for ref in spec:
        m = vocabulary.ANCHOR_RE.match(ref)
        assert m, ref
        defined = vocabulary.spec_anchors(vocabulary.SPEC_DIR / m.group(1))
        assert m.group(2) in defined, f"{ref} is not defined"


def test_entries_name_corpus_cases_and_are_applied() -> None:
    root = corpus_root()
    if not root.is_dir():
        pytest.skip(f"corpus tier not run: {root} does not exist")
    cases = {c.id: c for c in corpus_cases()}
    for name, entry in METADATA.items():
        case = cases.get(f"corpus/{name}")
        assert case is not None, f"corpus.yaml names {name}, which is no corpus case under {root}"
        assert not case.problems, case.problems
        assert case.spec == entry["spec"]
        assert set(entry.get("features", [])) <= set(case.features)
        if "notes" in entry:
            assert case.provenance["notes"] == entry["notes"]


def _corpus(tmp_path: Path) -> Path:
    tier = tmp_path / "pt" / "wild"
    tier.mkdir(parents=True)
    for name in ("zip_a.pt", "zip_b.pt"):
        (tier / name).write_bytes(b"PK")
        (tier / f"{name}.expected.json").write_text(json.dumps(
            {"format": "pt-zip", "objects": [], "storages": {}}))
    return tmp_path


def test_an_entry_adds_features_spec_and_notes(tmp_path: Path) -> None:
    meta = {"pt/wild/zip_a.pt": {"features": ["pickle-persistent-id"], "spec": ["pt-zip.md#pt-zip-records"],
                                 "notes": "why"}}
    cases = {c.id: c for c in corpus_cases(_corpus(tmp_path), meta)}
    a, b = cases["corpus/pt/wild/zip_a.pt"], cases["corpus/pt/wild/zip_b.pt"]
    assert a.features == ["pickle-persistent-id", "zip-archive"] and a.spec == ["pt-zip.md#pt-zip-records"]
    assert a.provenance["notes"] == "why" and not a.problems
    assert (b.spec, b.features, b.problems) == ([], ["zip-archive"], [])


@pytest.mark.parametrize("entry,problem", [
    ("not a mapping", "not a mapping"),
    ({"spec": ["pt-zip.md#pt-zip-records"], "anchors": []}, "unknown fields"),
    ({"features": ["no-such-feature"]}, "features not in conformance/features.yaml"),
    ({"spec": "pt-zip.md#pt-zip-records"}, "spec must be a non-empty list"),
    ({"spec": ["pt-zip.md"]}, "file.md#anchor"),
    ({"notes": 3}, "notes must be a string"),
])
def test_a_bad_entry_is_a_problem_of_its_case(tmp_path: Path, entry: object, problem: str) -> None:
    cases = {c.id: c for c in corpus_cases(_corpus(tmp_path), {"pt/wild/zip_a.pt": entry})}
    problems = cases["corpus/pt/wild/zip_a.pt"].problems
    assert any(problem in p for p in problems), problems
    assert not cases["corpus/pt/wild/zip_b.pt"].problems
