"""How long the differential mode against any reader takes to find each planted reader bug
(conformance/differential/planted.py; issue 27: each within 30 minutes).

``python -m benchmarks.differential_find [--budget SECONDS] [--seed S]`` runs one unrestricted campaign (every
format, every mutator) per planted bug, the planted reader in its batch mode, and prints, per bug, the
variants run, the seconds to the first disagreement and the candidate folders written, each checked by the
suite's judge: it fails the planted reader and passes the reference.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from conformance.differential.campaign import REAL
from conformance.harness.cases import load_case
from conformance.harness.runner import run_reader
from conformance.harness.verdict import judge

ROOT = Path(__file__).resolve().parents[1]


PLANTED = ROOT / "conformance" / "differential" / "planted.py"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=float, default=1800.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--bug", action="append", help="only these bugs")
    args = p.parse_args()
    out = Path(tempfile.mkdtemp(prefix="torchfmt-find-"))
    rows = []
    for bug in args.bug or ("nul-cut", "lenient-float", "tar-namespace"):
        folder = out / bug
        batch = f"{sys.executable} {PLANTED} {bug} dump --batch"
        subprocess.run([sys.executable, "-m", "conformance.differential", "--reader", batch, "--reader-batch",
                        "--budget", str(args.budget), "--seed", str(args.seed), "--candidates", "3",
                        "--minimize-seconds", "30", "--out", str(folder)], cwd=ROOT, check=False,
                       stdout=subprocess.DEVNULL)
        report = json.loads((folder / "report.json").read_text())
        real = [r for r in report["rows"] if r["class"] in REAL]
        judged = []
        for cand in report["summary"]["candidates"]:
            case = load_case(Path(cand))
            bad = judge(case, run_reader([sys.executable, str(PLANTED), bug, "dump"], case.path),
                        declined_fails=False).outcome
            good = judge(case, run_reader([sys.executable, "-m", "torchfmt", "dump"], case.path),
                         declined_fails=True).outcome
            judged.append(f"{Path(cand).name}: planted {bad}, reference {good}")
        rows.append((bug, len(report["rows"]), len(real), real[0]["at"] if real else None,
                     real[0]["name"] if real else "", judged))
    print(f"| bug | variants in {args.budget:g} s | disagreements | first found at | first variant |")
    print("| --- | ---: | ---: | ---: | --- |")
    for bug, n, k, at, name, _ in rows:
        print(f"| {bug} | {n} | {k} | {'—' if at is None else f'{at:.0f} s'} | `{name}` |")
    for bug, *_, judged in rows:
        for line in judged:
            print(f"- {bug}: {line}")
    return 0 if all(r[3] is not None for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
