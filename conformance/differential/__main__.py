"""``python -m conformance.differential [--per-file N] [--seed S] [--out DIR]``: the full differential run
(spec/canonical.md#canonical-differential).  ``--files PATH...`` runs given ``.pt`` files instead (a fuzz
campaign's saved disagreements, say); ``--t7`` runs the ``.t7`` one, real Lua Torch against the reference
(differential/t7.py); ``--reader CMD`` runs any reader against the reference on seeded mutations of every
committed accept case and writes each disagreement as a candidate case (differential/campaign.py).  Exits 1
when a real disagreement was found."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

from conformance.differential import report
from conformance.differential.run import Differential
from conformance.differential.variants import family_variants, file_variant, mutation_variants


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m conformance.differential",
                                description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0, help="mutation seed (default 0)")
    p.add_argument("--per-file", type=int, default=3,
                   help="mutations per accept file and mutator (default 3; 0: families only)")
    p.add_argument("--family", action="append", help="only these adversarial families (default: all)")
    p.add_argument("--no-families", action="store_true", help="mutations only")
    p.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "torchfmt-differential",
                   help="report folder (default $TMPDIR/torchfmt-differential)")
    p.add_argument("--files", nargs="+", type=Path, help="run these .pt files only")
    p.add_argument("--t7", action="store_true", help="the .t7 run: real Lua Torch against the reference")
    g = p.add_argument_group("against any reader (--reader)")
    g.add_argument("--reader", help="the reader under test: a name the suite knows (an adapter) or a command "
                                    "line, shell-split, to which the file's path is appended")
    g.add_argument("--reader-batch", action="store_true",
                   help="the --reader command speaks the batch protocol "
                        "(spec/canonical.md#canonical-reader-batch)")
    g.add_argument("--per-process", action="store_true", help="one process per file even for a batch adapter")
    g.add_argument("--reader-timeout", type=float, default=10.0, help="seconds per file (default 10)")
    g.add_argument("--rounds", type=int, default=1000,
                   help="rounds of mutations (each: every base case once by each mutator; default 1000, "
                        "--count or --budget end a campaign first)")
    g.add_argument("--count", type=int, help="stop after this many variants")
    g.add_argument("--budget", type=float, help="stop after this many seconds")
    g.add_argument("--shard", default="1/1", metavar="K/N", help="run shard K of N only (default 1/1)")
    g.add_argument("--format", action="append", help="mutate only the accept cases of this format")
    g.add_argument("--mutator", action="append", help="only these mutators (default: all)")
    g.add_argument("--candidates", type=int, default=20, help="candidate case folders to write (default 20)")
    g.add_argument("--minimize-seconds", type=float, default=60.0,
                   help="seconds to shrink each candidate (0: keep the variant as it is; default 60)")
    args = p.parse_args(argv)
    if args.reader:
        return main_reader(args)
    if args.t7:
        return main_t7(args)
    start = time.monotonic()
    if args.files:
        variants = [file_variant(f) for f in args.files]
    else:
        variants = [] if args.no_families else family_variants(args.family)
        variants += list(mutation_variants(args.seed, args.per_file)) if args.per_file else []
    print(f"{len(variants)} variants", flush=True)
    rows = []
    with Differential() as diff:
        for n, v in enumerate(variants, 1):
            row = diff.check(v)
            rows.append(row)
            if row.verdict.real:
                print(f"  {row.verdict.klass:26} {v.name}: {row.verdict.detail[:160]}", flush=True)
            if n % 500 == 0:
                print(f"{n}/{len(variants)} ({time.monotonic() - start:.0f} s)", flush=True)
    settings = {"seed": args.seed, "per_file": args.per_file, "families": args.family or "all",
                "seconds": round(time.monotonic() - start, 1)}
    summary = report.write(rows, args.out, settings)
    print(f"{summary['variants']} variants, {summary['real']} real disagreements, "
          f"{settings['seconds']} s: {summary['by_class']}")
    print(f"report: {args.out / 'summary.md'}")
    return 1 if summary["real"] else 0


def shard(text: str) -> tuple[int, int]:
    """``K/N`` as (K, N), 1 <= K <= N."""
    k, _, n = text.partition("/")
    if not (k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise SystemExit(f"--shard {text!r}: give K/N with 1 <= K <= N")
    return int(k), int(n)


def main_reader(args: argparse.Namespace) -> int:
    """Any reader against the reference (differential/campaign.py); the report and the candidate case folders
    go to ``--out`` (default ...-differential-reader)."""
    from conformance.differential import campaign, candidates
    from conformance.harness import readers

    try:
        reader = readers.resolve(args.reader)
    except readers.UnknownReader as e:
        raise SystemExit(str(e)) from None
    if args.reader_batch and args.per_process:
        raise SystemExit("--reader-batch and --per-process exclude each other")
    named = reader.name in readers.names()
    batch = (reader.batch if named and not args.per_process else None) or \
        (list(reader.command) if args.reader_batch and not named else None)
    out = args.out.with_name(args.out.name + "-reader") if args.out.name == "torchfmt-differential" \
        else args.out
    formats = tuple(args.format or campaign.FORMATS)
    unknown = sorted(set(formats) - set(campaign.FORMATS)) \
        + sorted(set(args.mutator or ()) - set(campaign.MUTATORS))
    if unknown:
        raise SystemExit(f"unknown formats or mutators: {unknown} (formats {campaign.FORMATS}, mutators "
                         f"{sorted(campaign.MUTATORS)})")
    bases = campaign.bases(formats=formats)
    part = shard(args.shard)
    shutil.rmtree(out / "candidates", ignore_errors=True)  # an earlier run's
    start = time.monotonic()
    print(f"reader {reader.name!r} ({' '.join(batch or reader.command)}), "
          f"{'batch' if batch else 'one process per file'}; {len(bases)} accept cases mutated, "
          f"seed {args.seed}, "
          f"shard {part[0]}/{part[1]}", flush=True)

    def shown(p: campaign.Pair) -> None:
        if p.finding.real:
            print(f"  {p.finding.klass:22} {p.variant.name}: {p.finding.detail[:150]}", flush=True)

    subject = campaign.Subject(reader, batch, args.reader_timeout)
    written: dict[str, str] = {}
    with campaign.Campaign(subject) as c:
        stream = campaign.variants(args.seed, args.rounds, bases, part, args.mutator)
        pairs = campaign.campaign(c, stream, count=args.count, budget=args.budget, on_pair=shown)
        truth = candidates.Truth()
        try:
            by_id = {b.id: b for b in bases}
            for p in campaign.pick(pairs, args.candidates):
                small = campaign.shrunk(c, p, args.minimize_seconds) if args.minimize_seconds > 0 else p
                small.truth = truth.of(small.variant.data, small.variant.format, small.variant.hints)
                folder = candidates.write(small, out, by_id[p.variant.origin], args.seed)
                written[p.variant.name] = str(folder)
        finally:
            truth.close()
    settings = {"reader": reader.name, "command": batch or reader.command, "seed": args.seed,
                "shard": args.shard, "count": args.count, "budget": args.budget, "formats": list(formats),
                "mutators": args.mutator or "all", "seconds": round(time.monotonic() - start, 1)}
    summary = report.write_campaign(pairs, written, out, settings,
                                    {b.id: list(b.spec) for b in bases})
    print(f"{summary['variants']} variants, {summary['disagreements']} disagreements, "
          f"{settings['seconds']} s: {summary['by_class']}")
    print(f"report: {out / 'summary.md'}; {len(written)} candidate case folders under {out / 'candidates'}")
    return 1 if summary["disagreements"] else 0


def main_t7(args: argparse.Namespace) -> int:
    """The .t7 run (differential/t7.py); its report goes to ``--out`` (default ...-differential-t7)."""
    from conformance.differential import t7

    start = time.monotonic()
    out = args.out.with_name(args.out.name + "-t7") if args.out.name == "torchfmt-differential" else args.out
    variants = [] if args.no_families else t7.family_variants()
    variants += list(t7.mutation_variants(args.seed, args.per_file)) if args.per_file else []
    print(f"{len(variants)} .t7 variants", flush=True)
    rows = []
    with t7.T7Differential() as diff:
        for n, v in enumerate(variants, 1):
            row = diff.check(v)
            rows.append(row)
            if row.verdict.klass in t7.REAL:
                print(f"  {row.verdict.klass:26} {v.name}: {row.verdict.detail[:160]}", flush=True)
            if n % 200 == 0:
                print(f"{n}/{len(variants)} ({time.monotonic() - start:.0f} s)", flush=True)
    settings = {"seed": args.seed, "per_file": args.per_file, "seconds": round(time.monotonic() - start, 1)}
    summary = report.write(rows, out, settings, t7.CLASSES, t7.REAL,
                           "real Lua Torch `File:readObject` vs the reference on .t7 variants")
    print(f"{summary['variants']} variants, {summary['real']} real disagreements, {settings['seconds']} s: "
          f"{summary['by_class']}")
    print(f"report: {out / 'summary.md'}")
    return 1 if summary["real"] else 0


if __name__ == "__main__":
    sys.exit(main())
