"""The committed reject cases are exactly what conformance/generators/rejects.py derives from the
committed real-writer files (no hand edits, no stale sources), and the derivation edits what it says."""

from __future__ import annotations

import struct

import pytest
import yaml

from conformance.generators import rejects
from conformance.harness.cases import load_case

DERIVED = [r for build in rejects.BUILDERS.values() for r in build()]


def test_at_least_fifteen_reject_cases() -> None:
    assert len(DERIVED) >= 15
    assert {r.format for r in DERIVED} == set(rejects.BUILDERS)


@pytest.mark.parametrize("reject", DERIVED, ids=[r.folder for r in DERIVED])
def test_committed_case_matches_the_generator(reject: rejects.Reject) -> None:
    folder = rejects.CASES / reject.folder
    case = load_case(folder)
    assert case.problems == []
    assert case.path.read_bytes() == reject.data, f"{reject.folder}: rerun {rejects.GENERATOR}"
    assert list(case.errors) == reject.errors and case.category == "reject"
    meta = yaml.safe_load((folder / "case.yaml").read_text())
    assert reject.source.label in meta["provenance"]["notes"]
    assert meta["provenance"]["generator"] == rejects.GENERATOR
    assert reject.data != reject.source.data


def test_t7_layout_walk_finds_the_documented_fields() -> None:
    src = rejects.t7_source("tensor_float_2x3.t7")
    at = rejects.t7_tensor_layout(src.data)
    d = src.data
    assert struct.unpack_from("<i", d, at["ndim"])[0] == 2
    assert [struct.unpack_from("<q", d, at[f"size{i}"])[0] for i in range(2)] == [2, 3]
    assert [struct.unpack_from("<q", d, at[f"stride{i}"])[0] for i in range(2)] == [3, 1]
    assert struct.unpack_from("<q", d, at["offset"])[0] == 1
    assert struct.unpack_from("<q", d, at["storage_size"])[0] == 6
    assert len(d) - at["storage_data"] == 6 * 4


def test_zip_replace_keeps_a_valid_zip() -> None:
    import io
    import zipfile

    src = rejects.pt_source("pt-zip")
    members = rejects.zip_members(src.data)
    name = next(n for n in members if n.endswith("/data.pkl"))
    old = zipfile.ZipFile(io.BytesIO(src.data)).read(name)
    new = bytes(reversed(old))
    patched = rejects.zip_replace(src.data, "/data.pkl", new)
    z = zipfile.ZipFile(io.BytesIO(patched))
    assert z.testzip() is None  # every CRC-32 agrees with the new bytes
    assert z.read(name) == new and len(patched) == len(src.data)
