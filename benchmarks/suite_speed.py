"""Wall and CPU time of the conformance suite against the reference reader (issue 12: < 30 s on a 2-core
machine): the committed and corpus cases (``conformance/test_cases.py``) run with the harness's warm start
(harness/warm.py; one case in sixteen still runs the command) and with ``--cold`` (every case a new
``python -m torchfmt dump``), in the same run, so the ratio holds on a busy machine; and the whole
``pytest conformance`` with its self-tests, warm (the issue's figure: < 30 s), with its CPU seconds and
the load average around each run.

    python benchmarks/suite_speed.py [--repeat 1] [--no-full]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(args: list[str]) -> tuple[float, float, str, str]:
    """(wall seconds, CPU seconds of the run and its children, the 1-minute load average before and after
    it, pytest's last line).  CPU seconds are the figure to compare on a busy machine: other processes
    stretch the wall time, hardly the CPU time."""
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "pytest", *args, "-q", "-p", "no:cacheprovider"], cwd=ROOT,
                         capture_output=True, text=True, env=os.environ.copy())
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = [line for line in out.stdout.splitlines() if re.search(r"\d+ (passed|failed)", line)]
    loads = f"{load:.1f} / {os.getloadavg()[0]:.1f}"
    return wall, cpu, loads, (last[-1].strip("= ") if last else out.stdout[-200:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--no-full", action="store_true", help="skip the whole suite with its self-tests")
    args = ap.parse_args()
    rows = []
    for _ in range(args.repeat):
        rows.append(("cases, cold (a process per case)", *run(["conformance/test_cases.py", "--cold"])))
        rows.append(("cases, warm", *run(["conformance/test_cases.py"])))
    if not args.no_full:
        rows.append(("pytest conformance (with self-tests), warm", *run(["conformance"])))
    print(f"machine: {os.cpu_count()} cores\n")
    print("| run | wall s | CPU s | load before / after | pytest |\n| --- | ---: | ---: | --- | --- |")
    for name, wall, cpu, load, last in rows:
        print(f"| {name} | {wall:.1f} | {cpu:.1f} | {load} | {last} |")
    cold = [r for r in rows if r[0].startswith("cases, cold")]
    warm = [r for r in rows if r[0] == "cases, warm"]
    if cold and warm:
        print(f"\nwarm / cold: wall {sum(r[1] for r in warm) / sum(r[1] for r in cold):.2f}, "
              f"CPU {sum(r[2] for r in warm) / sum(r[2] for r in cold):.2f}")


if __name__ == "__main__":
    main()
