"""The differential mode against any reader (differential/campaign.py): deterministic variants, disjoint and
complete shards, shrinking, and each planted reader bug (differential/planted.py) found, with a candidate
case folder that the suite's judge fails for that reader and passes for the reference
(spec/canonical.md#canonical-differential)."""

from __future__ import annotations

import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path

import pytest

from conformance.differential import campaign, candidates, tar_mutations
from conformance.differential.__main__ import main
from conformance.differential.minimize import shrink
from conformance.differential.variants import Variant
from conformance.harness import readers
from conformance.harness.cases import committed_cases, load_case
from conformance.harness.runner import Run, run_reader
from conformance.harness.verdict import judge

# counted by spec/traceability.py
pytestmark = pytest.mark.spec("canonical.md#canonical-differential-any-reader")
PLANTED = Path(__file__).resolve().parent / "planted.py"
CASES = {c.id: c for c in committed_cases()}


def planted(bug: str) -> list[str]:
    return [sys.executable, str(PLANTED), bug, "dump"]


def _bases(*ids: str) -> list:
    return [CASES[i] for i in ids]


def test_variants_depend_on_the_seed_only() -> None:
    base = _bases("pt-legacy/many-tensors", "pt-tar/adv-tar-storage-views", "t7-binary/long8-tensor-double-t")
    first = [(v.name, v.sha256) for v in campaign.variants(7, 2, base)]
    again = [(v.name, v.sha256) for v in campaign.variants(7, 2, base)]
    other = [(v.name, v.sha256) for v in campaign.variants(8, 2, base)]
    assert first == again and len(first) > 20
    assert dict(first).keys() & dict(other).keys() and dict(first) != dict(other)
    assert {v.split("/")[1] for v, _ in first} >= {"flip", "truncate", "tar-keys", "float-text", "t7-field"}


def test_shards_are_disjoint_and_together_complete() -> None:
    base = _bases("pt-legacy/many-tensors", "pt-zip/many-tensors", "pt-tar/adv-tar-state-dict")
    whole = {v.sha256 for v in campaign.variants(3, 2, base)}
    parts = [{v.sha256 for v in campaign.variants(3, 2, base, (k, 3))} for k in (1, 2, 3)]
    assert all(parts) and sum(map(len, parts)) == len(whole) and set().union(*parts) == whole


def test_shrink_keeps_what_the_predicate_needs() -> None:
    data = bytes(range(256)) * 4
    small = shrink(data, lambda d: b"\x10\x11\x12" in d)
    assert small == b"\x10\x11\x12"
    assert shrink(data, lambda d: False) == data  # nothing holds: the file as it was
    calls = []
    shrink(data, lambda d: bool(calls.append(1)), trials=5)
    assert len(calls) == 5  # bounded


def test_tar_keys_renames_a_tensor_to_a_storage_key() -> None:
    """spec/pt-tar.md#pt-tar-pickle: one decimal ``str`` names a tensor or a storage; the mutator makes a
    tensor take a storage's key (the object's ids following), which a reader keeping the two apart reads."""
    data = CASES["pt-tar/adv-tar-storage-views"].path.read_bytes()
    found = False
    for n in range(12):
        new = tar_mutations.tar_keys(data, __import__("random").Random(n))
        if new is None:
            continue
        with tarfile.open(fileobj=io.BytesIO(new)) as tar:
            body = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
        tkeys = {r.value[0] for r in tar_mutations.tensor_records(body["tensors"])[1:]}
        skeys = {r.value[0] for r in tar_mutations.storage_records(body["storages"])[1:-1]}
        found |= bool(tkeys & skeys)
    assert found


@pytest.mark.parametrize(("bug", "case", "mutator", "round_"), [
    ("nul-cut", "pt-legacy/quantized-qint32-per-tensor", "nul-text", 0),
    ("tar-namespace", "pt-tar/adv-tar-storage-views", "tar-keys", 0),
])
def test_a_planted_bug_is_a_candidate_the_suite_judges(bug: str, case: str, mutator: str, round_: int,
                                                        tmp_path: Path) -> None:
    """A variant on which the planted reader and the reference disagree becomes a candidate case folder that
    the suite's judge (harness/verdict.py) fails for the planted reader and passes for the reference."""
    reader = readers.resolve(" ".join(planted(bug)))
    with campaign.Campaign(campaign.Subject(reader, None, 20.0)) as c:
        pairs = [c.pair(v) for v in campaign.variants(0, round_ + 1, _bases(case), mutators=[mutator])]
        real = [p for p in pairs if p.finding.real]
        assert real, [p.finding for p in pairs]
        folder = candidates.write(real[0], tmp_path, CASES[case], 0)
    assert_judged(folder, planted(bug))


def assert_judged(folder: Path, command: list[str]) -> None:
    cand = load_case(folder)
    assert not cand.problems, cand.problems
    bad = judge(cand, run_reader(command, cand.path), declined_fails=False)
    good = judge(cand, run_reader([sys.executable, "-m", "torchfmt", "dump"], cand.path), declined_fails=True)
    assert (bad.outcome, good.outcome) == ("fail", "pass"), (bad, good)


def test_the_command_finds_a_lenient_float_reader(tmp_path: Path) -> None:
    """``python -m conformance.differential --reader CMD``, as an implementer runs it: it exits 1, its summary
    groups the disagreement by spec anchor, and its shrunk candidate fails the reader and passes the
    reference."""
    out = tmp_path / "out"
    status = main(["--reader", " ".join(planted("lenient-float")), "--format", "pt-legacy", "--mutator",
                   "float-text", "--count", "16", "--candidates", "1", "--minimize-seconds", "8",
                   "--out", str(out)])
    assert status == 1
    summary = json.loads((out / "report.json").read_text())["summary"]
    assert summary["by_class"].get("reader-accepts"), summary
    assert any(a.startswith("pickle.md#") for a in summary["by_spec_anchor"]), summary
    (folder,) = map(Path, summary["candidates"])
    assert len(folder.joinpath("data.pt").read_bytes()) < max(
        len(CASES[o].path.read_bytes()) for o in CASES if o.startswith("pt-legacy/"))
    reference = json.loads((folder / "reference.json").read_text())
    assert reference["code"] == "bad-value" and "float" in reference["message"]
    assert_judged(folder, planted("lenient-float"))


def test_the_reference_against_itself_agrees() -> None:
    """The reference run as the reader under test disagrees with itself nowhere (the mode adds no finding
    of its own)."""
    reader = readers.resolve("reference")
    base = _bases("pt-legacy/many-tensors", "pt-tar/adv-tar-storage-views")
    with campaign.Campaign(campaign.Subject(reader, None, 20.0)) as c:
        pairs = campaign.campaign(c, campaign.variants(1, 3, base), count=12)
    assert len(pairs) == 12 and not [p for p in pairs if p.finding.real]


def test_candidate_names_are_case_folders() -> None:
    v = Variant("mutation/flip/pt-zip/x/0", "mutation", "flip", "pt-zip", b"PK\x03\x04", {},
                "pt-zip/Some_Case")

    run = Run([], 1, b"", b"", 0.0)
    p = campaign.Pair(v, run, run, campaign.Finding("different-code"))
    assert candidates.name_of(p) == f"diff-different-code-some-case-{hashlib.sha256(v.data).hexdigest()[:8]}"
