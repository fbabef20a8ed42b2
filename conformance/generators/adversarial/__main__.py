"""``python -m conformance.generators.adversarial [--check] [--family NAME]``: (re)write the adversarial
cases."""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from conformance.generators.adversarial import families, record, torchcheck


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m conformance.generators.adversarial", description=__doc__)
    p.add_argument("--check", action="store_true", help="build and report; write nothing")
    p.add_argument(
        "--family",
        action="append",
        choices=sorted(families.FAMILIES),
        help="only these families (default: all); other families' folders are kept",
    )
    args = p.parse_args(argv)
    chosen = args.family or sorted(families.FAMILIES)
    cases = [c for name in chosen for c in families.FAMILIES[name]()]
    pt = {c.folder: c.data for c in cases if c.format.startswith("pt-")}
    verdicts = torchcheck.check(
        pt,
        {c.folder: c.canaries for c in cases if c.canary},
        {c.folder: c.format for c in cases if c.category == "accept"},
        {c.folder: c.judge for c in cases},
    )
    for c in cases:
        c.torch = verdicts.get(c.folder, {})
    for c in cases:
        t = c.torch
        flag = "STRICTER" if c.stricter_than_torch() else ""
        ran = "RAN" if t and t["False"].ran else ""
        print(
            f"{c.folder:60} {c.category:6} {','.join(c.errors):32} "
            f"{f'wo={c.judge[0]} ' + ('loads' if t[c.judge].loads else 'refuses') if t else '':14} "
            f"{flag} {ran}"
        )
    print(dict(Counter(c.format for c in cases)), len(cases), "cases")
    refused = [c.folder for c in cases if c.category == "accept" and not (c.torch and c.torch[c.judge].loads)]
    if refused:
        raise SystemExit(f"accept cases torch refuses: {refused}")
    if not args.check:
        if args.family:
            keep = [
                f
                for f in record.owned_folders()
                if families.MODULES.get(record.generator_of(f)) not in chosen
            ]
            record.write(cases, keep=keep)
        else:
            record.write(cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
