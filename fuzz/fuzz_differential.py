"""Atheris fuzz target: torch 2.13 against the reference reader on ``.pt`` input (fuzz/README.md,
spec/canonical.md#canonical-differential).

Each input is read by the reference in this process (``torchfmt.read_bytes`` and the description, as
``torchfmt dump`` does) and by ``torch.load(weights_only=True)`` through the torch adapter in a persistent
sandboxed worker (``conformance/differential/forkserver.py``, ``--persistent``: torch imported once, every
input loaded in that one process under its address-space limit, no fork; the worker is killed at the time
limit or when it crashes, and that input's verdict is torch's broken run, then a new worker starts).  torch
reads the input while the reference does.  The two verdicts are classified by the differential
harness (``conformance/differential/classify.py``, descriptions compared by the suite's comparator).

A real disagreement is saved as ``disagreement-<class>-<sha1>`` (with a ``.json`` of both verdicts) under
``-artifact_prefix`` (default ``./``), at most three per kind, and the campaign goes on; a contract break of
the reference (an exception other than FormatError/Unsupported) is a crash, as in the other targets.
``TORCHFMT_DIFF_TORCH_SECONDS`` sets torch's time limit per input (default 30: a bomb torch builds quickly
can take its describer long; a campaign may lower it, and such inputs are then ``torch-broken``; each one
costs a new worker, seconds of importing torch).
The verdicts so far (every class, real or not) are kept in ``<artifact_prefix>differential-counts.json``.
Seeds: ``fuzz/corpus/differential`` (the pt-zip and pt-legacy seeds, ``fuzz/seeds.py``).  Run from
``fuzz/`` with the repository root on ``PYTHONPATH`` (``PYTHONPATH=.. python fuzz_differential.py
CORPUS``): it imports the suite's package ``conformance``.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import sys
from pathlib import Path

import atheris

from conformance.differential.classify import classify
from conformance.differential.forkserver import Worker
from conformance.differential.run import TORCH_SECONDS, as_run
from conformance.harness.facts import walk_frames
from conformance.harness.runner import Run

ROOT = Path(__file__).resolve().parents[1]

from target import MAX_INPUT, READERS, libfuzzer_args  # noqa: E402

with atheris.instrument_imports(include=["torchfmt"]):
    import torchfmt
    from torchfmt.errors import FormatError, Unsupported

#: Inputs over this size are skipped (torch's describer hashes every element: big inputs are slow).
MAX_DIFF_INPUT = 1 << 16
PER_KIND = 3
_worker: Worker | None = None
_seen: dict[str, int] = {}
_prefix = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("-artifact_prefix=")), "./")
#: Where torch's worker keeps its folder, and each input is written for it: memory, not disk (writing a
#: file in /tmp cost milliseconds).  The worker removes it when the fuzzer exits.
_TMP = os.environ.get("TORCHFMT_FUZZ_TMP", "/dev/shm" if os.path.isdir("/dev/shm") else None)
counts: dict[str, int] = {}


def _torch() -> Worker:
    global _worker
    if _worker is None:
        seconds = float(os.environ.get("TORCHFMT_DIFF_TORCH_SECONDS", TORCH_SECONDS))
        _worker = Worker("torch", seconds, persistent=True, root=_TMP)
        _worker.start()
        atexit.register(_worker.stop)
    return _worker


def reference_run(data: bytes) -> Run:
    """The reference's verdict on ``data`` as a contract run (in this process)."""
    run = Run(["torchfmt", "dump"], 0, b"", b"", 0.0)
    try:
        desc = torchfmt.describe_document(torchfmt.read_bytes(data))
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, walk_frames()))  # as torchfmt's CLI does to write deep descriptions
        try:
            run.description = json.loads(json.dumps(desc))
        finally:
            sys.setrecursionlimit(limit)
        run.outcome = "accepted"
    except FormatError as e:
        run.status, run.outcome, run.code, run.message = 1, "rejected", e.code, e.line()
    except Unsupported as e:
        run.status, run.outcome, run.message = 2, "declined", e.line()
    return run


def _kind(klass: str, detail: str) -> str:
    return klass + ":" + re.sub(r"\d+", "N", re.sub(r"'[^']*'", "Q", detail))[:80]


def test_one_input(data: bytes) -> None:
    if len(data) > MAX_DIFF_INPUT or len(data) > MAX_INPUT or not data:
        return
    worker = _torch()
    path = worker.scratch() / "input.pt"
    path.write_bytes(data)
    worker.begin(path)  # torch reads it while the reference does
    ref = reference_run(data)
    tor = as_run(worker.finish(), ["torch_reader.py"])
    verdict = classify(tor, ref, "pt-zip" if data.startswith(b"PK") else "pt-legacy")
    counts[verdict.klass] = counts.get(verdict.klass, 0) + 1
    if sum(counts.values()) % 200 == 0:
        _report()
    if not verdict.real:
        return
    kind = _kind(verdict.klass, verdict.detail)
    _seen[kind] = _seen.get(kind, 0) + 1
    if _seen[kind] > PER_KIND:
        return
    name = f"{_prefix}disagreement-{verdict.klass}-{hashlib.sha1(data).hexdigest()}"
    Path(name).write_bytes(data)
    Path(name + ".json").write_text(json.dumps({"class": verdict.klass, "detail": verdict.detail,
                                                "torch": tor.summary(), "reference": ref.summary()}) + "\n")
    print(f"DISAGREEMENT {verdict.klass}: {verdict.detail[:200]} -> {name}", file=sys.stderr, flush=True)


def _report() -> None:
    """The verdicts so far, in ``<artifact_prefix>differential-counts.json`` (with the torch workers
    started after a crash, a time-out or a memory recycle under ``"worker-restarts"``, and the CPU seconds
    torch's workers spent under ``"worker-cpu-seconds"``)."""
    restarts = {"worker-restarts": _worker.restarts, "worker-cpu-seconds": round(_worker.cpu, 3)} \
        if _worker is not None else {}
    Path(f"{_prefix}differential-counts.json").write_text(json.dumps({**counts, **restarts}, sort_keys=True)
                                                          + "\n")


if __name__ == "__main__":
    assert "pt_zip" in READERS
    atheris.Setup(libfuzzer_args(sys.argv), test_one_input)
    atheris.Fuzz()
