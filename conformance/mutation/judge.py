"""Mutation testing of the judge (issue 25): ``python -m conformance.mutation --judge``.

The reader's mutants are judged by the cases; the judge's (the harness modules that decide a verdict,
:data:`TARGETS`) by the harness's own self-tests, ``conformance/tests/test_harness_*.py``, the red team
(``test_harness_redteam.py``, issue 25) among them.  Each mutant is written into a copy of
``conformance/`` (:class:`JudgeWorkspace`: the code copied, the cases and the other big folders linked,
the rest of the checkout linked beside it), and the self-tests of that copy run against it in a new
pytest process (``nice``), stopping at the first failure: a failure kills the mutant, a run past
``--mutant-time-limit`` counts as killed by timeout, and a survivor passed every test.

Only tests that pass on the unmutated copy count (:func:`baseline`): while the judge is being fixed a red
team run fails on it today, and a test that fails anyway would kill every mutant.  The red team's runs
are a second stage, run only for mutants the other self-tests leave alive (``--redteam``; each of its
runs is a whole suite run, minutes per mutant on a shared machine).

The seeded sample is carried across edits of the judge as the reader's is (:mod:`mutation.carry`): each
stored mutant is matched with the current mutant changing the same node the same way, the seeded draw
tops the sample up, and ``--resume`` keeps a stored outcome only while its module's source is the one it
was run against (each outcome stores that module's digest).

Outcomes land in ``mutation/judge_results.json``; judgments of equivalent mutants share
``equivalent.yaml`` with the reader's (their ids start with ``harness/``); ``MUTATION.md`` shows the
judge's score in a section of its own (:mod:`mutation.page`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from . import carry, store
from .carry import sample  # the seeded draw, as the reader's (carried across edits)
from .operators import Mutant, apply, mutants

CONFORMANCE = Path(__file__).resolve().parents[1]
ROOT = CONFORMANCE.parent
#: The judge: what decides a verdict (the runs, the contract's checks, the comparison, the cases).
TARGETS = ("harness/compare.py", "harness/verdict.py", "harness/runner.py", "harness/batch.py",
           "harness/cases.py")
RESULTS = Path(__file__).resolve().parent / "judge_results.json"
DEFAULT_SAMPLE = 60
DEFAULT_SEED = 25
MUTANT_TIME_LIMIT = 400.0
#: Folders of conformance/ linked, not copied, into a workspace (data, or not the judge's tests).
LINKED = ("cases", "results", "mutation", "adapters", "differential", "generators")
REDTEAM = "tests/test_harness_redteam.py"
#: A test that kills a mutant is run again without it; one that fails there too is left out and the
#: mutant's tests run again, this many times at most (tests of time limits fail on a loaded machine).
FLAKY_RETRIES = 2


def self_tests(redteam: bool) -> list[str]:
    tests = sorted(str(p.relative_to(ROOT)) for p in (CONFORMANCE / "tests").glob("test_harness_*.py"))
    red = f"conformance/{REDTEAM}"
    return [red] if redteam else [t for t in tests if t != red]


def first_for(module: str, tests: list[str]) -> list[str]:
    """``tests`` with the module's own self-tests first (``harness/runner.py``: ``test_harness_runner.py``):
    the run stops at the first failure, and those are the likeliest to fail."""
    own = f"test_harness_{Path(module).stem}.py"
    return sorted(tests, key=lambda t: not t.endswith(own))


def population() -> tuple[list[Mutant], dict[str, str]]:
    sources = {m: (CONFORMANCE / m).read_text(encoding="utf-8") for m in TARGETS}
    return [x for m in TARGETS for x in mutants(m, sources[m])], sources


def _with_detail(entries: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Stored entries with the operator's detail (older entries keep it only in their id)."""
    out = {}
    for k, v in entries.items():
        parts = carry._ID.match(k)
        out[k] = {**v, "detail": v.get("detail", parts["detail"] if parts else "")}
    return out


def carried(entries: dict[str, dict[str, Any]], pop: list[Mutant]) -> dict[str, dict[str, Any]]:
    """The stored entries renamed to the current mutants they carry to (:func:`mutation.carry.stored`);
    those whose code is gone drop out."""
    entries = _with_detail(entries)
    moved = carry.stored(entries, pop)
    return {moved[k].id: {**v, "line": moved[k].line, "col": moved[k].col} for k, v in entries.items()
            if k in moved}


def _entry(m: Mutant) -> dict[str, Any]:
    """What a stored mutant records of itself (enough for :func:`carried` to find it again)."""
    return {"module": m.module, "line": m.line, "col": m.col, "operator": m.operator, "detail": m.detail,
            "function": m.function, "original": m.original, "mutated": m.mutated}


class JudgeWorkspace:
    """A checkout whose ``conformance/`` is a copy (its code) in which one harness module at a time is
    replaced by a mutant; everything else links to the real checkout."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="torchfmt-judge-mutant-"))
        for entry in ROOT.iterdir():
            if entry.name not in ("conformance", ".git"):
                (self.root / entry.name).symlink_to(entry)
        ignore = shutil.ignore_patterns("__pycache__", *LINKED)
        shutil.copytree(CONFORMANCE, self.root / "conformance", ignore=ignore, symlinks=True)
        for name in LINKED:
            (self.root / "conformance" / name).symlink_to(CONFORMANCE / name)

    def pytest(self, tests: list[str], extra: list[str], timeout: float) -> tuple[str, str]:
        """Run the tests in the workspace: ("passed" | "failed" | "timeout", the tail of the output)."""
        cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider",
               *tests, *extra]
        path = os.pathsep.join([str(ROOT / "reference_impl"), os.environ.get("PYTHONPATH", "")])
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": path}
        try:
            r = subprocess.run(cmd, cwd=self.root, capture_output=True, text=True, timeout=timeout, env=env,
                               start_new_session=True)
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            return "timeout", out[-1500:]
        return ("passed" if r.returncode == 0 else "failed"), (r.stdout + r.stderr)[-1500:]

    def run(self, m: Mutant, source: str, tests: list[str], deselect: list[str],
            timeout: float) -> tuple[str, str]:
        target = self.root / "conformance" / m.module
        target.write_text(apply(m, source), encoding="utf-8")
        try:
            return self.pytest(tests, [a for d in deselect for a in ("--deselect", d)], timeout)
        finally:
            target.write_text(source, encoding="utf-8")

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def baseline(tests: list[str]) -> list[str]:
    """The self-tests that fail on the unmutated judge (node ids, to deselect: they would kill every
    mutant)."""
    ws = JudgeWorkspace()
    try:
        junit = ws.root / "baseline.xml"
        cmd = ["nice", "-n", "10", sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests,
               "--junitxml", str(junit)]
        subprocess.run(cmd, cwd=ws.root, capture_output=True, timeout=3600)
        failing = []
        for case in ET.parse(junit).iter("testcase"):
            if any(child.tag in ("failure", "error") for child in case):
                path = case.get("classname", "").replace(".", "/") + ".py"
                failing.append(f"{path}::{case.get('name')}")
        return failing
    finally:
        ws.close()


def load() -> dict[str, Any]:
    """The stored draws: ``carried`` (the seeded sample) and ``fresh`` (the latest fresh seed)."""
    return json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.is_file() else {}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m conformance.mutation --judge",
                                description=__doc__.splitlines()[0])
    p.add_argument("--sample", type=int, default=DEFAULT_SAMPLE,
                   help=f"mutants drawn (default {DEFAULT_SAMPLE})")
    p.add_argument("--seed", default=str(DEFAULT_SEED),
                   help=f"sampling seed (default {DEFAULT_SEED}); 'fresh': a new one, stored as the "
                        "fresh draw")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--mutant-time-limit", type=float, default=MUTANT_TIME_LIMIT)
    p.add_argument("--redteam", action="store_true",
                   help="run the red team's suite runs too, for the mutants the other self-tests leave "
                        "alive")
    p.add_argument("--list", action="store_true", help="print the sampled mutants and stop")
    p.add_argument("--resume", action="store_true",
                   help="skip the mutants already run against their module's current source: stored in "
                        "judge_results.json (the carried sample) or by the interrupted run of the seed")
    p.add_argument("--survivors", action="store_true",
                   help="with --resume: run the stored survivors again (after new self-tests), skip only "
                        "the killed")
    p.add_argument("--rerun", nargs="+", metavar="ID", default=[],
                   help="with --resume: run these stored mutants again (a self-test written for them)")
    p.add_argument("--store-partial", action="store_true",
                   help="store what the interrupted run of the seed ran, as its draw, and stop")
    p.add_argument("--left-out", nargs="*", metavar="NODE",
                   help="the self-tests to leave out, instead of a baseline run finding those that fail")
    args = p.parse_args(argv)
    seed = random.SystemRandom().randrange(1 << 31) if args.seed == "fresh" else int(args.seed)
    pop, sources = population()
    digests = {m: _digest(s) for m, s in sources.items()}
    previous = {} if args.seed == "fresh" else load().get("carried", {})
    kept = carried(previous.get("mutants", {}), pop) \
        if previous.get("settings", {}).get("seed") == seed else {}
    by_id = {m.id: m for m in pop}
    # outcomes kept outside conformance/ while tests run (a suite run watches that tree), and the sample
    # the interrupted run drew (its top-up over another population would be another draw)
    progress = store.progress_file(seed).with_name(f"judge-progress-{seed}.json")
    drawn = progress.with_name(f"judge-sample-{seed}.json")
    interrupted = carried(json.loads(drawn.read_text()), pop) \
        if (args.resume or args.store_partial) and drawn.is_file() else {}
    picked = sample(pop, args.sample, seed, [by_id[k] for k in {**interrupted, **kept}])
    if args.list:
        for m in picked:
            print(m.id, "|", m.original, "->", m.mutated)
        return 0
    stages = [self_tests(False)] + ([self_tests(True)] if args.redteam else [])
    print(f"judge mutation: {len(picked)} of {len(pop)} mutants (seed {seed}); baseline ...", flush=True)
    failing = args.left_out if args.left_out is not None or args.store_partial else \
        [f for tests in stages for f in baseline(tests)]
    failing = failing or []
    print(f"baseline: {len(failing)} self-tests fail on the unmutated judge (left out): {failing[:8]}",
          flush=True)
    progress.parent.mkdir(parents=True, exist_ok=True)
    drawn.write_text(json.dumps({m.id: _entry(m) for m in picked}, indent=1) + "\n", encoding="utf-8")
    results: dict[str, dict[str, Any]] = {}
    if args.resume or args.store_partial:
        results = dict(kept)
        if progress.is_file():
            results.update(carried(json.loads(progress.read_text()), pop))
        results = {k: v for k, v in results.items() if v.get("source") == digests[v["module"]]
                   and (not args.survivors or v.get("status") in store.KILLED) and k not in args.rerun}
    picked_all = picked
    results = {k: v for k, v in results.items() if k in {m.id for m in picked_all}}
    # the stored survivors last: an interrupted run has the most new outcomes
    picked = sorted((m for m in picked if m.id not in results),
                    key=lambda m: kept.get(m.id, {}).get("status") == "survived")
    print(f"{len(picked)} mutants to run ({len(picked_all) - len(picked)} stored for the current source)",
          flush=True)
    workspaces: list[JudgeWorkspace] = []
    free: list[JudgeWorkspace] = []
    start = time.monotonic()
    lock = threading.Lock()
    done: list[str] = []

    def one(m: Mutant) -> None:
        ws = free.pop() if free else JudgeWorkspace()
        if ws not in workspaces:
            workspaces.append(ws)
        t0 = time.monotonic()
        status, tail = "survived", ""
        first = ""
        try:
            for tests in stages:
                skip = list(failing)
                for _ in range(FLAKY_RETRIES + 1):
                    outcome, tail = ws.run(m, sources[m.module], first_for(m.module, tests), skip,
                                           args.mutant_time_limit)
                    first = next((ln for ln in tail.splitlines() if ln.startswith(("FAILED", "ERROR"))), "")
                    node = first.split(" ", 1)[1].split(" - ", 1)[0] if outcome == "failed" and first else ""
                    if outcome != "failed" or not node or ws.pytest([node], [], args.mutant_time_limit)[0] \
                            != "failed":
                        break
                    skip.append(node)  # fails without the mutant too (a shared machine): not a kill
                    outcome = "passed"
                if outcome != "passed":
                    status = "killed" if outcome == "failed" else "timeout"
                    break
        finally:
            free.append(ws)
        results[m.id] = {**_entry(m), "source": digests[m.module], "status": status, "case": first[:300],
                         "seconds": round(time.monotonic() - t0, 1)}
        with lock:
            done.append(m.id)
            progress.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        took = time.monotonic() - t0
        print(f"[{len(done)}/{len(picked)}] {status:8} {m.id} ({took:.0f} s) {first[:120]}", flush=True)

    if not args.store_partial:
        try:
            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                list(pool.map(one, picked))
        finally:
            for ws in workspaces:
                ws.close()
    doc = {"settings": {"sample": len(picked_all), "seed": seed, "population": len(pop),
                        **({"run": len(results), "partial": True} if len(results) < len(picked_all) else {}),
                        "modules": list(TARGETS), "redteam": args.redteam,
                        "tests": [t for s in stages for t in s], "left_out": failing,
                        "source": _digest("".join(sources[m] for m in TARGETS)),
                        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())},
           "mutants": results}
    key = "fresh" if args.seed == "fresh" else "carried"
    stored = load()
    stored[key] = {"settings": doc["settings"], "mutants": dict(sorted(results.items()))}
    RESULTS.write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    if key == "carried":  # the judgments of the judge's mutants follow them, as the reader's do
        judged = {k: j for k, j in store.load_judgments().items() if k.startswith("harness/")}
        moves = carry.stored(_with_detail(previous.get("mutants", {})), pop) \
            if previous.get("settings", {}).get("seed") == seed else {}
        renamed = carry.judged(judged, pop, moves)
        if any(old != new for old, new in renamed.items()):
            print(f"equivalent.yaml: {carry.rename_judgments(renamed)} judgments of the judge renamed")
    print(f"done in {time.monotonic() - start:.0f} s: {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
