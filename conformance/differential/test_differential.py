"""The differential harness on a bounded sample, and proof that it catches a planted disagreement
(spec/canonical.md#canonical-differential).

The sample: one seeded mutation per mutator of every fifth committed accept ``.pt`` file, and the
``zip-lookup`` adversarial family; torch 2.13 and the reference each run in their sandboxed worker.
"""

from __future__ import annotations

import copy
import random
import re
from pathlib import Path

import pytest
from harness.runner import Run

from differential import documented
from differential.classify import REAL, classify
from differential.mutations import MUTATORS, mutate
from differential.run import Differential
from differential.variants import accept_bases, family_variants, mutation_variants

ROOT = Path(__file__).resolve().parents[2]
SEED = 2026


@pytest.fixture(scope="module")
def diff(needs_torch):
    with Differential() as d:
        yield d


@pytest.fixture(scope="module")
def bases():
    return accept_bases()


def _sample(bases) -> list:
    return list(mutation_variants(SEED, 1, bases[::5])) + family_variants(["zip-lookup"])


@pytest.mark.spec("canonical.md#canonical-differential")
def test_sample_has_no_real_disagreement(diff, bases) -> None:
    variants = _sample(bases)
    assert len(variants) > 100
    rows = [diff.check(v) for v in variants]
    real = [f"{r.variant.name}: {r.verdict.klass}: {r.verdict.detail[:200]}" for r in rows if r.verdict.real]
    assert not real, "\n".join(real)
    classes = {r.verdict.klass for r in rows}
    assert {"agree-accept", "agree-refuse", "stricter-documented"} <= classes  # the sample exercises both


def _accepted_pair(diff, bases) -> tuple[Run, Run]:
    base = next(c for c in bases if c.id == "pt-zip/dtype-float32")
    tor, ref = diff.runs(base.path.read_bytes(), base.format)
    assert tor is not None and tor.outcome == ref.outcome == "accepted"
    assert classify(tor, ref).klass == "agree-accept"
    return tor, ref


def _first_tensor(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            if n.get("type") == "tensor":
                return n
            stack.extend(n.values())
        elif isinstance(n, list):
            stack.extend(n)
    raise AssertionError("no tensor")


@pytest.mark.spec("canonical.md#canonical-differential")
def test_planted_disagreements_are_caught(diff, bases) -> None:
    tor, ref = _accepted_pair(diff, bases)
    # the reference describes other tensor values than torch loads
    planted = copy.deepcopy(ref)
    _first_tensor(planted.description)["sha256"] = "0" * 64
    v = classify(tor, planted)
    assert v.klass == "accepted-different" and "sha256" in v.detail and v.real
    # the reference accepts what torch refuses, for no documented reason
    refused = copy.deepcopy(tor)
    refused.outcome, refused.code = "rejected", "bad-value"
    refused.message = "bad-value: RuntimeError: planted"
    assert classify(refused, ref).klass == "looser-than-torch"
    # the reference refuses what torch loads, with a reason no rule documents, then with one that does
    refusing = copy.deepcopy(ref)
    refusing.outcome, refusing.code, refusing.description = "rejected", "bad-value", None
    refusing.message = "bad-value: a planted reason (at byte 0)"
    assert classify(tor, refusing).klass == "unexplained-refusal"
    refusing.message = "bad-value: tensor state sets the tensor's own 'data' (at byte 9)"
    assert classify(tor, refusing).klass == "stricter-documented"
    # a contract break of the reference outranks everything
    broken = copy.deepcopy(ref)
    broken.broken("output", "exit 1 needs exactly one stderr line, got 12")
    broken.outcome = "broken"
    assert classify(tor, broken).klass == "reference-contract-break"
    bug = copy.deepcopy(refusing)
    bug.outcome, bug.message = "declined", "unsupported: internal-error (IndexError: 'x'; a reader bug)"
    assert classify(tor, bug).klass == "reference-contract-break"
    # bytes the reference reads as Lua Torch .t7 are not torch's to judge
    t7 = copy.deepcopy(ref)
    t7.description["format"] = "t7-binary"
    assert classify(refused, t7).klass == "not-comparable"
    assert set(REAL) >= {"accepted-different", "looser-than-torch", "unexplained-refusal"}


def test_mutations_are_seeded_and_change_the_file(bases) -> None:
    base = bases[0]
    data = base.path.read_bytes()
    for name in MUTATORS:
        a = mutate(data, base.format, name, random.Random(f"{SEED}:{name}"))
        b = mutate(data, base.format, name, random.Random(f"{SEED}:{name}"))
        assert a == b
        assert a is None or a != data or name == "zip-members"


def test_documented_rules_cite_the_spec_and_match_their_cases() -> None:
    import torchfmt
    from torchfmt.errors import FormatError, Unsupported

    anchors = {f"{p.name}#{m}" for p in (ROOT / "spec").glob("*.md")
               for m in re.findall(r'<a id="([a-z0-9-]+)"></a>', p.read_text(encoding="utf-8"))}
    for rule in documented.rules():
        assert set(rule.spec) <= anchors, (rule.id, set(rule.spec) - anchors)
        for case in rule.cases:
            folder = ROOT / "conformance" / "cases" / case
            assert folder.is_dir(), (rule.id, case)
            if rule.reader != "reference":
                continue
            try:
                torchfmt.describe(next(folder.glob("data.*")))
            except (FormatError, Unsupported) as e:
                assert documented.match(e.line()) == rule, (rule.id, case, e.line())
            else:
                raise AssertionError(f"{rule.id}: the reference accepts {case}")


def test_deep_descriptions_parse() -> None:
    """A description of values nested as deep as every reader must accept (1,000 levels, about three
    JSON containers each) parses; the fuzzer found the suite's parser stopping at Python's 1,000."""
    from harness import strict_json

    depth = 3_500
    doc = strict_json.loads('{"objects": ' + "[" * depth + "]" * depth + "}")
    node, n = doc["objects"], 1
    while node:
        node, n = node[0], n + 1
    assert n == depth
