"""The pickle machine's tensor fast path (torchfmt/pickle/tensor_entry.py) changes nothing but speed.

Every committed and corpus ``.pt`` case, the adversarial families and seeded mutations of the accept files
read the same with the fast path and without it: the same description, or the same error (class, code,
offset, message).  Single-byte changes at every offset of several torch-written pickles, and every limit
set just at and just below what a file needs, give the same outcome both ways too.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from torchfmt import describe_document, read_bytes
from torchfmt.errors import FormatError, Unsupported
from torchfmt.model import Document
from torchfmt.pickle import tensor_entry
from torchfmt.pickle.machine import LIMITS, Limits, Machine
from torchfmt.pt.zip import Archive, StorageRecords
from torchfmt.pt.ziparchive import read_members
from torchfmt.windows import windows

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "conformance"))

from differential.variants import family_variants, mutation_variants  # noqa: E402
from harness.cases import committed_cases, corpus_cases, corpus_root  # noqa: E402

PICKLED = ("pt-zip", "pt-legacy", "pt-tar", "pt-torchscript")
#: torch-written files whose pickles get a changed byte at every offset.
MUTATED = ("many-tensors", "empty-tensors", "requires-grad", "zero-dim", "checkpoint-adam",
           "views-shared-storage", "sparse-parameter", "conj-view-torch1.13", "state-dict-keep-vars")
#: Bytes of each pickle changed: its first tensors (the fast path takes every tensor after the first).
SPAN = 500
#: Bytes each offset is set to: the opcodes of the sequence, and values at the edges of their arguments.
REPLACEMENTS = b"hjqrKMJ()t\x85\x86\x87\x88\x89XQRN\x00\x01\xff"


def outcome(read: Callable[[], Any]) -> tuple[Any, ...]:
    """What a reading gives: its description, or its error (class, code, offset, message)."""
    try:
        return ("read", read())
    except FormatError as e:
        return ("error", "FormatError", e.code, e.offset, str(e))
    except Unsupported as e:
        return ("error", "Unsupported", str(e))


def both_ways(read: Callable[[], Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    fast = outcome(read)
    tensor_entry.ENABLED = False
    try:
        slow = outcome(read)
    finally:
        tensor_entry.ENABLED = True
    return fast, slow


def describe_bytes(data: bytes) -> Callable[[], Any]:
    return lambda: describe_document(read_bytes(data))


def _files() -> Iterator[tuple[str, bytes]]:
    for case in committed_cases() + corpus_cases():
        if case.format in PICKLED and case.path.is_file():
            yield case.id, case.path.read_bytes()


def test_every_case_reads_the_same_both_ways() -> None:
    differ, taken = [], 0
    for name, data in _files():
        fast, slow = both_ways(describe_bytes(data))
        taken += 1
        if fast != slow:
            differ.append(name)
    assert taken > 300
    assert differ == []


@pytest.mark.skipif(not corpus_root().is_dir(), reason="the adversarial families start from ../shared/corpus")
def test_hostile_variants_read_the_same_both_ways() -> None:
    differ, taken = [], 0
    variants = [*family_variants(), *mutation_variants(seed=12, per_file=2)]
    for v in variants:
        if v.format.startswith("t7"):
            continue
        fast, slow = both_ways(describe_bytes(v.data))
        taken += 1
        if fast != slow:
            differ.append(v.name)
    assert taken > 500
    assert differ == []


@dataclasses.dataclass
class _Pickle:
    """A zip case's data.pkl, run by the machine directly over the case's own storage records."""

    archive: Archive
    pkl: bytes

    @classmethod
    def of(cls, case_id: str) -> _Pickle:
        data = (ROOT / "conformance" / "cases" / "pt-zip" / case_id / "data.pt").read_bytes()
        buf = windows(data)
        root, members = read_members(buf)
        archive = Archive.open(buf, root, members)
        return cls(archive, bytes(members["data.pkl"].data(buf)))

    def run(self, pkl: bytes, limits: Limits = LIMITS) -> tuple[Any, ...]:
        def read() -> Any:
            machine = Machine(pkl, persistent_load=StorageRecords(self.archive, "data/"), limits=limits)
            value = machine.load_exact(0, len(pkl))
            return describe_document(Document("pt-zip", [value], extra=self.archive.info())), machine.work
        fast, slow = both_ways(read)
        assert fast == slow, f"{fast!r:.300} != {slow!r:.300}"
        return fast


@pytest.mark.parametrize("case_id", MUTATED)
def test_one_changed_byte_anywhere_reads_the_same_both_ways(case_id: str, monkeypatch: Any) -> None:
    p = _Pickle.of(case_id)
    taken: list[int] = []
    effects = tensor_entry._effects
    monkeypatch.setattr(tensor_entry, "_effects", lambda *a: (taken.append(1), effects(*a))[1])
    assert p.run(p.pkl)[0] == "read"
    assert taken, "the fast path never ran on the unchanged pickle"
    outcomes = set()
    for i in range(min(len(p.pkl), SPAN)):
        for b in REPLACEMENTS:
            if p.pkl[i] != b:
                outcomes.add(p.run(p.pkl[:i] + bytes([b]) + p.pkl[i + 1:])[0])
    assert outcomes == {"read", "error"}


def _work(p: _Pickle) -> int:
    """The call work the unchanged pickle needs, from a run without the fast path."""
    tensor_entry.ENABLED = False
    try:
        machine = Machine(p.pkl, persistent_load=StorageRecords(p.archive, "data/"))
        machine.load_exact(0, len(p.pkl))
        return machine.work
    finally:
        tensor_entry.ENABLED = True


@pytest.mark.parametrize("case_id", MUTATED)
def test_limits_at_the_edge_read_the_same_both_ways(case_id: str) -> None:
    p = _Pickle.of(case_id)
    work = _work(p)
    opcodes = _opcodes(p.pkl)
    for field, need in (("max_call_work", work), ("max_opcodes", opcodes)):
        at = p.run(p.pkl, dataclasses.replace(LIMITS, **{field: need}))
        below = p.run(p.pkl, dataclasses.replace(LIMITS, **{field: need - 1}))
        assert at[0] == "read" and below[0] == "error" and below[2] == "limit-exceeded", (field, need)
    for field, values in (("max_marks", (1, 2, 3)), ("max_depth", (1, 2, 3, 4))):
        for value in values:
            p.run(p.pkl, dataclasses.replace(LIMITS, **{field: value}))


def _opcodes(pkl: bytes) -> int:
    import pickletools

    return sum(1 for _ in pickletools.genops(pkl))
