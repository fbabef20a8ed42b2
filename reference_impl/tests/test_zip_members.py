"""The zip reader's plain-archive path (torchfmt/pt/ziparchive.py, taken when :data:`torchfmt.fast.ENABLED`)
changes nothing but speed.

Where every member is a record under the root folder, in file order without overlaps, the local header
pass names the members relative to the root at once; any other archive goes through the overlap and root
checks.  Every committed, corpus and variant zip, and single-byte changes of the central directories and
local headers of torch-written files, read the same both ways: the same members, or the same error
(code, offset, message).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fast_switch import fast_paths
from torchfmt.errors import FormatError
from torchfmt.pt import ziparchive
from torchfmt.windows import MemoryWindows

from conformance.differential.variants import committed_family_variants, family_variants, mutation_variants
from conformance.harness.cases import committed_cases, corpus_cases

ROOT = Path(__file__).resolve().parents[2]


#: torch-written archives whose directories and local headers get changed bytes.
MUTATED = ("state-dict-mlp", "checkpoint-adam", "empty-tensors")
REPLACEMENTS = (0x00, 0x01, 0x2F, 0x41, 0x5C, 0xFF)


def members(data: bytes) -> tuple[Any, ...]:
    try:
        root, records = ziparchive.read_members(MemoryWindows(data))
    except FormatError as e:
        return ("error", e.code, e.offset, str(e))
    return ("read", root, list(records.items()), records.names)


def both_ways(data: bytes) -> tuple[Any, ...]:
    with fast_paths(True):
        fast = members(data)
    with fast_paths(False):
        slow = members(data)
    assert fast == slow, f"{fast!r:.300} != {slow!r:.300}"
    return fast


def _zips() -> Iterator[tuple[str, bytes]]:
    for case in committed_cases() + corpus_cases():
        if case.path.is_file():
            data = case.path.read_bytes()
            if data[:4] == b"PK\x03\x04" or b"PK\x05\x06" in data[-(1 << 16) - 22:]:
                yield case.id, data
    from conformance.generators.adversarial import families

    # every family but the .t7 one, which makes no zip and reads the corpus (absent on a bare clone)
    zip_families = sorted(name for name in families.FAMILIES if name != "t7")
    for v in [*family_variants(zip_families), *mutation_variants(seed=12, per_file=2)]:
        if v.data[:4] == b"PK\x03\x04":
            yield v.name, v.data


def test_the_committed_zip_lookup_family_is_what_its_generator_makes() -> None:
    """The differential's sample reads the zip-lookup family from conformance/cases (no torch in the
    suite's process); that is the generator's output byte for byte."""
    made = {v.origin: v.data for v in family_variants(["zip-lookup"])}
    committed = {v.origin: v.data for v in committed_family_variants(["zip-lookup"])}
    assert len(made) > 10 and committed == made


def test_every_zip_reads_the_same_both_ways() -> None:
    outcomes = [both_ways(data)[0] for _, data in _zips()]
    assert outcomes.count("read") > 300 and outcomes.count("error") > 50


def _spots(data: bytes) -> list[int]:
    """The central directory and end records, and the fixed part and name of every local header."""
    cd = data.find(b"PK\x01\x02")
    spots = set(range(cd, len(data)))
    at = data.find(b"PK\x03\x04")
    while 0 <= at < cd:
        spots.update(range(at, at + 30 + int.from_bytes(data[at + 26:at + 28], "little")))
        at = data.find(b"PK\x03\x04", at + 4)
    return sorted(spots)


def test_one_changed_byte_in_the_headers_reads_the_same_both_ways() -> None:
    seen: set[str] = set()
    for case_id in MUTATED:
        data = (ROOT / "conformance" / "cases" / "pt-zip" / case_id / "data.pt").read_bytes()
        assert both_ways(data)[0] == "read"
        for i in _spots(data):
            for b in REPLACEMENTS:
                if data[i] != b:
                    got = both_ways(data[:i] + bytes([b]) + data[i + 1:])
                    seen.add(got[0] if got[0] == "read" else got[1])
    assert {"read", "bad-container", "out-of-bounds", "truncated"} <= seen


def test_archives_the_plain_path_leaves_to_the_checks() -> None:
    """A directory entry, a member outside the root, and members out of file order or overlapping."""
    import zipfile
    from io import BytesIO

    def archive(names: list[str], order: list[int] | None = None) -> bytes:
        buf = BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for n in names:
                if n.endswith("/"):
                    z.writestr(zipfile.ZipInfo(n), b"")
                else:
                    z.writestr(n, b"1" if n.endswith("version") else b"")
        data = buf.getvalue()
        if order is None:
            return data
        # rewrite the central directory with its entries in another order
        zf = zipfile.ZipFile(BytesIO(data))
        cd = data.find(b"PK\x01\x02")
        entries, at = [], cd
        for _ in zf.infolist():
            n, x, c = (int.from_bytes(data[at + k:at + k + 2], "little") for k in (28, 30, 32))
            entries.append(data[at:at + 46 + n + x + c])
            at += 46 + n + x + c
        return data[:cd] + b"".join(entries[i] for i in order) + data[at:]

    outcomes = [
        both_ways(archive(["a/", "a/version", "a/data.pkl"])),
        both_ways(archive(["a/version", "b/data.pkl"])),
        both_ways(archive(["a/version", "a/data.pkl", "a/data/0"], order=[2, 0, 1])),
        both_ways(archive(["a/version", "a"])),
    ]
    assert [o[0] for o in outcomes] == ["read", "error", "read", "error"]
