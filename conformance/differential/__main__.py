"""``python -m conformance.differential [--per-file N] [--seed S] [--out DIR]``: the full differential run
(spec/canonical.md#canonical-differential).  ``--files PATH...`` runs given ``.pt`` files instead (a fuzz
campaign's saved disagreements, say); ``--t7`` runs the ``.t7`` one, real Lua Torch against the reference
(differential/t7.py).  Exits 1 when a real disagreement was found."""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from differential import report  # noqa: E402
from differential.run import Differential  # noqa: E402
from differential.variants import family_variants, file_variant, mutation_variants  # noqa: E402


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
    args = p.parse_args(argv)
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


def main_t7(args: argparse.Namespace) -> int:
    """The .t7 run (differential/t7.py); its report goes to ``--out`` (default ...-differential-t7)."""
    from differential import t7

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
