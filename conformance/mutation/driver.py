"""``python -m conformance.mutation``: sample mutants, run them, store the outcomes, render the page.

The sample is drawn from every target module's mutants with ``--seed`` (``--sample N``: the first N of a
seeded shuffle, so a larger sample of one seed holds a smaller one), so that ``--modules`` shards of one
sample can be run apart (and on other machines) and merged: a run updates the entries of the mutants it
ran in ``results.json`` and keeps the others of the sample when the seed is the same.  ``--resume`` skips
mutants already stored for the same source (a run keeps its outcomes outside ``conformance/`` until it
ends, :func:`mutation.store.progress_file`, and resumes from there).
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sys
import threading
import time

from conformance.generators import truncations
from conformance.harness.cases import Case, committed_cases

from . import carry, coverage, store
from .carry import sample
from .operators import Mutant, module_level_uses, mutants
from .page import current
from .run import CASE_TIME_LIMIT, MUTANT_TIME_LIMIT, Outcome, Workspace
from .scope import PACKAGE, TARGETS, module_source

DEFAULT_SAMPLE = 320
DEFAULT_SEED = 18


def population() -> tuple[list[Mutant], dict[str, str]]:
    """Every mutant of every target module, in a fixed order, and each module's source."""
    sources = {m: module_source(m) for m in TARGETS}
    return [x for m in TARGETS for x in mutants(m, sources[m])], sources


def uses_by_module(sources: dict[str, str]) -> dict[str, dict[int, list[tuple[int, int]] | None]]:
    """:func:`mutation.operators.module_level_uses` of every target, the rest of the package as
    ``elsewhere``."""
    texts = {p: p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}
    out = {}
    for module, source in sources.items():
        own = PACKAGE / module
        out[module] = module_level_uses(source, "\n".join(t for p, t in texts.items() if p != own))
    return out


def relevant_lines(m: Mutant, uses: dict[str, dict[int, list[tuple[int, int]] | None]]) -> list[range]:
    """The lines a case must execute for ``m`` to change what it does: the mutated statement's, or for
    plain data assigned at the top of a module, the statements that read it."""
    if m.function == "<module>":
        spans = uses[m.module].get(m.stmt_lines[0])
        if spans is not None:
            return [range(a, b + 1) for a, b in spans]
    return [range(min(m.line, m.stmt_lines[0] or m.line), max(m.end_line, m.stmt_lines[1]) + 1)]


def suite_cases() -> list[Case]:
    """The committed cases and the truncation tier (conformance/generators/truncations.py, written to a
    temporary folder here), as the suite runs them; the corpus tier is left out (it is not part of the
    project's files)."""
    cases = [c for c in committed_cases() if not c.problems]
    return cases + truncations.write_cut_cases(truncations.cuts())


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def baseline(cases: list[Case], jobs: int) -> list[str]:
    """Run every case on the unmutated package through the mutants' runner: the failures (none expected:
    the runner judges as the suite does, and the suite passes)."""
    failures: list[str] = []
    parts = [cases[k::jobs] for k in range(jobs)]

    def work(part: list[Case]) -> None:
        ws = Workspace()
        try:
            failures.extend(ws.failures(part))
        finally:
            ws.close()

    threads = [threading.Thread(target=work, args=(p,)) for p in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return failures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m conformance.mutation", description=__doc__.splitlines()[0])
    p.add_argument("--sample", type=int, default=DEFAULT_SAMPLE,
                   help=f"mutants drawn (default {DEFAULT_SAMPLE})")
    p.add_argument("--seed", default=str(DEFAULT_SEED),
                   help=f"sampling seed (default {DEFAULT_SEED}); 'fresh': a new seed, a plain draw (nothing "
                        "carried) stored in mutation/fresh.json, the carried sample's results untouched")
    p.add_argument("--modules", nargs="+", metavar="MODULE",
                   help="run only the sampled mutants of these modules (paths under torchfmt/, or a prefix "
                        "such as pt/): a shard")
    p.add_argument("--jobs", type=int, default=2, help="mutants run at once (default 2)")
    p.add_argument("--case-time-limit", type=float, default=CASE_TIME_LIMIT)
    p.add_argument("--mutant-time-limit", type=float, default=MUTANT_TIME_LIMIT)
    p.add_argument("--resume", action="store_true", help="skip mutants already stored for the same source")
    p.add_argument("--survivors", action="store_true",
                   help="with --resume: run the stored survivors again (after new cases), skip only the "
                        "killed")
    p.add_argument("--no-baseline", action="store_true",
                   help="skip the check that every case passes on the unmutated reader through the runner")
    p.add_argument("--all-cases", action="store_true",
                   help="run each mutant against every case, not only those that execute its line")
    p.add_argument("--render", action="store_true", help="only rewrite MUTATION.md from the stored files")
    p.add_argument("--judge", action="store_true",
                   help="mutate the judge (conformance/harness) instead, against the harness's self-tests: "
                        "python -m conformance.mutation --judge --help (mutation/judge.py)")
    p.add_argument("--list", action="store_true", help="print the sampled mutants and stop")
    p.add_argument("--try", dest="try_ids", nargs="+", metavar="ID",
                   help="run these mutants (any of the population) and print their outcomes; nothing is "
                        "stored (does a new case kill them?)")
    if argv is None:
        argv = sys.argv[1:]
    if "--judge" in argv:  # the judge's mutants against the harness's self-tests (mutation/judge.py)
        from . import judge

        return judge.main([a for a in argv if a != "--judge"])
    args = p.parse_args(argv)
    fresh = args.seed == "fresh"
    args.seed = random.SystemRandom().randrange(1 << 31) if fresh else int(args.seed)
    results_path = store.FRESH if fresh else store.RESULTS
    judgments = store.load_judgments()
    if args.render:
        store.PAGE.write_text(current(), encoding="utf-8")
        return 0
    pop, sources = population()
    previous = store.load_results()
    carried = carry.stored(previous["mutants"], pop) \
        if previous["settings"].get("seed") == args.seed and not fresh else {}
    chosen = sample(pop, args.sample, args.seed, list(carried.values()))
    renamed = carry.judged(judgments, pop, carried)
    judgments = {renamed.get(k, k): j for k, j in judgments.items()}  # written with the results, below
    shard = chosen
    if args.modules:
        shard = [m for m in chosen if any(m.module == x or m.module.startswith(x) for x in args.modules)]
    if args.try_ids:
        wanted = set(args.try_ids)
        shard = [m for m in pop if m.id in wanted]
        if len(shard) != len(wanted):
            print(f"unknown ids: {sorted(wanted - {m.id for m in shard})}", file=sys.stderr)
            return 2
        args.no_baseline = True
    if args.list:
        for m in shard:
            print(f"{m.id}\t{m.original} -> {m.mutated}")
        return 0
    start = time.monotonic()
    cases = suite_cases()
    by_id = {c.id: c for c in cases}
    cov = coverage.cached(cases, args.jobs)
    index = cov.index()
    uses = uses_by_module(sources)
    if not args.no_baseline:
        print(f"baseline: {len(cases)} cases on the unmutated reader ...", flush=True)
        failures = baseline(cases, args.jobs)
        if failures:
            print("the suite does not pass on the unmutated reader through the runner:\n  " +
                  "\n  ".join(failures), file=sys.stderr)
            return 1
    progress = store.progress_file(args.seed)
    doc = store.load_results(progress if args.resume and progress.is_file() else results_path)
    settings = {"seed": args.seed, "sample": args.sample, "population": len(pop), "cases": len(cases),
                **({"fresh": True, "date": time.strftime("%Y-%m-%d", time.gmtime())} if fresh else {})}
    if doc["settings"].get("seed") != args.seed:
        doc = {"settings": {}, "mutants": {}}
    moved = carry.stored(doc["mutants"], pop)
    doc["mutants"] = {moved[k].id: {**v, "line": moved[k].line, "col": moved[k].col}
                      for k, v in doc["mutants"].items() if k in moved}
    kept = {m.id for m in chosen}
    doc["mutants"] = {k: v for k, v in doc["mutants"].items() if k in kept}
    doc["settings"] = {**settings, "case_time_limit": args.case_time_limit,
                       "mutant_time_limit": args.mutant_time_limit}
    digests = {m: _digest(s) for m, s in sources.items()}
    def stored(m: Mutant) -> bool:
        old = doc["mutants"].get(m.id, {})
        return old.get("source") == digests[m.module] and \
            (not args.survivors or old.get("status") in store.KILLED)

    todo = [m for m in shard if not (args.resume and stored(m))]
    print(f"{len(todo)} mutants to run (sample {len(chosen)} of {len(pop)}, seed {args.seed}), "
          f"{len(cases)} cases", flush=True)
    lock = threading.Lock()
    queue = list(todo)
    done = [0]

    def record(m: Mutant, o: Outcome) -> None:
        if args.try_ids:
            how = f" by {o.case} ({o.kind})" if o.case else f" ({o.cases_run} cases)"
            print(f"{o.status:9} {m.id}{how}", flush=True)
            return
        with lock:
            doc["mutants"][m.id] = {
                "module": m.module, "line": m.line, "col": m.col, "operator": m.operator, "detail": m.detail,
                "function": m.function, "original": m.original, "mutated": m.mutated, "status": o.status,
                "case": o.case, "kind": o.kind, "cases_run": o.cases_run, "seconds": round(o.seconds, 2),
                "source": digests[m.module]}
            done[0] += 1
            store.save_results(doc, progress)
            print(f"[{done[0]}/{len(todo)} {time.monotonic() - start:.0f}s] {o.status:9} {m.id}"
                  + (f" by {o.case} ({o.kind})" if o.case else f" ({o.cases_run} cases)"), flush=True)

    def work() -> None:
        ws = Workspace()
        try:
            while True:
                with lock:
                    if not queue:
                        return
                    m = queue.pop(0)
                relevant: set[str] | None = set()
                for lines in relevant_lines(m, uses):
                    more = None if args.all_cases else cov.relevant(m.module, lines, index)
                    if more is None or relevant is None:
                        relevant = None
                    else:
                        relevant |= more
                chosen_cases = cases if relevant is None else [by_id[i] for i in relevant if i in by_id]
                chosen_cases.sort(key=lambda c: (cov.seconds.get(c.id, 0.0), c.id))
                if not chosen_cases:
                    record(m, Outcome("uncovered"))
                    continue
                record(m, ws.run_mutant(m, sources[m.module], chosen_cases,
                                        case_time_limit=args.case_time_limit,
                                        mutant_time_limit=args.mutant_time_limit))
        finally:
            ws.close()

    threads = [threading.Thread(target=work) for _ in range(max(1, args.jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if args.try_ids:
        return 0
    store.save_results(doc, results_path)  # into conformance/ only now that no case runs
    if not fresh and any(old != new for old, new in renamed.items()):
        carry.rename_judgments(renamed)
        judgments = store.load_judgments()
    progress.unlink(missing_ok=True)
    store.PAGE.write_text(current(), encoding="utf-8")  # as --render orders it
    print(f"done in {time.monotonic() - start:.0f} s; page: {store.PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
