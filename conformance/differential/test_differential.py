"""The differential harness on a bounded sample, and proof that it catches a planted disagreement
(spec/canonical.md#canonical-differential).

The sample: one seeded mutation per mutator of every fifth committed accept ``.pt`` file, and the
``zip-lookup`` adversarial family; torch 2.13 and the reference each run in their sandboxed worker.
"""

from __future__ import annotations

import copy
import importlib.util
import random
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conformance.differential import documented
from conformance.differential.classify import REAL, classify
from conformance.differential.mutations import MUTATORS, mutate
from conformance.differential.run import Differential
from conformance.differential.variants import accept_bases, committed_family_variants, mutation_variants
from conformance.harness.runner import Run

ROOT = Path(__file__).resolve().parents[2]
SEED = 2026


def _sample(bases) -> list:
    return list(mutation_variants(SEED, 1, bases[::5])) + committed_family_variants(["zip-lookup"])


#: The sample's run, started by :func:`start_runs`: its :class:`Differential` and (variants, rows).
STARTED: dict[str, Any] = {}


def start_runs(selected: list[pytest.Item] | None = None) -> None:
    """Start the workers and the sample's runs in a thread (conftest.py calls this when collection ends,
    when the sample's test is selected and torch is installed); the tests take them in turn.  torch's
    worker is persistent (it runs every file itself, as for the fuzz target: a fork of a process that has
    imported torch costs more than most files;
    :func:`test_persistent_torch_worker_answers_as_forked_children` holds it to the forked children's
    answers)."""
    if STARTED or importlib.util.find_spec("torch") is None:
        return
    if selected is not None and not any(i.originalname == "test_sample_has_no_real_disagreement"
                                        for i in selected if isinstance(i, pytest.Function)):
        return
    d = Differential(persistent_torch=True)

    def sample() -> tuple[list, list]:
        d.__enter__()  # the persistent worker's start waits for torch's import
        variants = _sample(accept_bases())
        return variants, [d.check(v) for v in variants]

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="differential")
    STARTED.update(diff=d, rows=pool.submit(sample))
    pool.shutdown(wait=False)


@pytest.fixture(scope="module")
def diff(needs_torch):
    """The sample's :class:`Differential`, once the sample is through it (its workers answer one file at
    a time), or a new one when the sample's test is not selected."""
    if not STARTED:
        with Differential(persistent_torch=True) as d:
            yield d
        return
    d = STARTED["diff"]
    try:
        STARTED["rows"].exception()
        yield d
    finally:
        d.__exit__(None, None, None)


@pytest.fixture(scope="module")
def bases():
    return accept_bases()


@pytest.mark.spec("canonical.md#canonical-differential")
def test_sample_has_no_real_disagreement(diff) -> None:
    if STARTED:
        variants, rows = STARTED["rows"].result()
    else:  # not started at collection (conftest.py did not select it then)
        variants = _sample(accept_bases())
        rows = [diff.check(v) for v in variants]
    assert len(variants) > 100
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
                fmt = case.split("/", 1)[0]  # a rule may hold for some formats only
                assert documented.match(e.line(), "reference", fmt) == rule, (rule.id, case, e.line())
            else:
                raise AssertionError(f"{rule.id}: the reference accepts {case}")


def test_deep_descriptions_parse() -> None:
    """A description of values nested as deep as every reader must accept (1,000 levels, about three
    JSON containers each) parses; the fuzzer found the suite's parser stopping at Python's 1,000."""
    from conformance.harness import strict_json

    depth = 3_500
    doc = strict_json.loads('{"objects": ' + "[" * depth + "]" * depth + "}")
    node, n = doc["objects"], 1
    while node:
        node, n = node[0], n + 1
    assert n == depth


@pytest.fixture(scope="module")
def forked(needs_torch):
    """torch's worker as the differential CLI runs it: a forked child per file."""
    from conformance.differential.forkserver import Worker

    with Worker("torch", 30) as w:
        yield w


@pytest.fixture(scope="module")
def persistent(diff):
    """The sample's torch worker (persistent: it runs every file itself, as the fuzz target's)."""
    assert diff.torch.persistent
    return diff.torch


@pytest.mark.spec("canonical.md#canonical-differential")
def test_persistent_torch_worker_answers_as_forked_children(persistent, forked, bases) -> None:
    """The persistent worker (torch loaded in one process, which ran the sample) answers each file as the
    forked children do: same status, same stdout, same stderr line."""
    cases = ROOT / "conformance" / "cases"
    files = [next(c for c in bases if c.id == "pt-zip/dtype-float32").path,
             cases / "pt-zip" / "adv-pickle-stop-two-values" / "data.pt",
             cases / "pt-legacy" / "adv-stricter-legacy-magic-after-mark" / "data.pt"]
    restarts = persistent.restarts
    for path in files:
        child, inline = forked.run(path), persistent.run(path)
        assert (inline.status, inline.stdout, inline.stderr) == (child.status, child.stdout, child.stderr)
    assert persistent.restarts == restarts and persistent.cpu > 0


@pytest.mark.spec("canonical.md#canonical-differential")
def test_persistent_torch_worker_survives_time_limits_and_crashes(persistent) -> None:
    """A file past the time limit is stopped by the worker's timer (a broken run, no new worker); a worker
    that dies while it reads a file gives that file a broken run, and the next file a new worker.  (The
    module's last test: it kills the sample's worker.)"""
    import os
    import signal

    from conformance.differential.run import as_run

    path = ROOT / "conformance" / "cases" / "pt-zip" / "dtype-float32" / "data.pt"
    restarts, limit = persistent.restarts, persistent.timeout
    persistent.timeout = 1e-6
    try:
        reply = persistent.run(path)
    finally:
        persistent.timeout = limit
    assert reply.timed_out and reply.status == -signal.SIGKILL and persistent.restarts == restarts
    assert as_run(reply, ["torch_reader.py"]).outcome == "broken"
    assert persistent.run(path).status == 0
    assert persistent.proc is not None
    pid = persistent.proc.pid
    os.kill(pid, signal.SIGSTOP)  # the file is sent to a worker that cannot answer, then killed
    persistent.begin(path)
    os.kill(pid, signal.SIGKILL)
    reply = persistent.finish()
    assert reply.status == -signal.SIGKILL and not reply.timed_out and persistent.restarts == restarts + 1
    assert as_run(reply, ["torch_reader.py"]).outcome == "broken"
    again = persistent.run(path)
    assert again.status == 0 and b'"format": "pt-zip"' in again.stdout
