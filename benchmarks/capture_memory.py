"""The harness's peak memory while a reader floods it (spec/canonical.md#canonical-reader-cli, bounded
capture; conformance/harness/capture.py), against an honest run of the reference reader on the case with
the largest expected description.

Each measurement is one fresh Python process that imports the harness, runs one reader once (per process
with ``run_reader``, or one request of a ``BatchSession``) and reports its own peak RSS (``ru_maxrss``:
the harness's alone, not the reader's).  The floods write ``--gib`` GiB (default 4) to stdout, to stderr,
or as one answer line.  The target: a flood's excess over the honest run at most twice the largest
expected description plus 200 MB.

    python benchmarks/capture_memory.py [--gib 4] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFORMANCE = ROOT / "conformance"

#: What each flood's reader does: Python code run with ``GIB`` set.
FLOODS = {
    "stdout": "import sys\nb = b'x' * (1 << 24)\nfor _ in range(64 * GIB):\n    sys.stdout.buffer.write(b)\n",
    "stderr": "import sys\nb = b'x' * (1 << 24)\nfor _ in range(64 * GIB):\n    sys.stderr.buffer.write(b)\n"
              "sys.stderr.write('\\n'); sys.exit(1)\n",
    "one line": "import sys\nsys.stdin.readline()\nb = b'x' * (1 << 24)\n"
                "sys.stdout.buffer.write(b'{\"id\": 1, \"x\": \"')\n"
                "for _ in range(64 * GIB):\n    sys.stdout.buffer.write(b)\n",
}

#: The measuring process: argv = mode, reader command (JSON), the case file.
PROBE = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[4])
from harness.batch import BatchSession
from harness.runner import run_reader
mode, command, path = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
start = time.monotonic()
if mode == "per-process":
    run = run_reader(command, path, time_limit=600)
else:
    session = BatchSession(command, time_limit=600)
    run = session.run(path)
    session.close()
print(json.dumps({"rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss << 10,
                  "seconds": time.monotonic() - start, "outcome": run.outcome, "breakage": run.breakage,
                  "problem": (run.problems or [""])[0][:160]}))
"""


def largest_expected() -> Path:
    return max((CONFORMANCE / "cases").rglob("expected.json"), key=lambda p: p.stat().st_size)


def measure(mode: str, command: list[str], path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "reference_impl"),
                                                        os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", PROBE, mode, json.dumps(command), str(path),
                           str(CONFORMANCE)], capture_output=True, text=True, env=env, timeout=3600)
    if proc.returncode != 0:
        raise SystemExit(f"{mode} {command[:3]}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=int, default=4)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    expected = largest_expected()
    case_file = next(p for p in expected.parent.iterdir() if p.name not in ("expected.json", "case.yaml"))
    reference = [sys.executable, "-m", "torchfmt", "dump"]
    rows = []
    for mode in ("per-process", "batch"):
        honest = measure(mode, reference + (["--batch"] if mode == "batch" else []), case_file)
        rows.append((mode, "honest (reference reader)", honest, 0))
        for name, code in FLOODS.items():
            if mode == "per-process" and name == "one line":
                continue  # per process, one line is stdout
            flood = measure(mode, [sys.executable, "-c", f"GIB = {args.gib}\n" + code], case_file)
            rows.append((mode, f"{args.gib} GiB {name}", flood, flood["rss"] - honest["rss"]))
    budget = 2 * expected.stat().st_size + 200_000_000
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.markdown:
        print(f"Measured {stamp}; largest expected description {expected.stat().st_size:,} bytes "
              f"({expected.parent.relative_to(CONFORMANCE / 'cases')}); target excess <= "
              f"{budget / 1e6:.1f} MB.\n")
        print("| mode | reader | harness peak RSS | excess over honest | seconds | verdict |")
        print("| --- | --- | ---: | ---: | ---: | --- |")
        for mode, what, r, excess in rows:
            verdict = r["outcome"] + (f" ({r['breakage']})" if r["breakage"] else "")
            print(f"| {mode} | {what} | {r['rss'] / 1e6:.1f} MB | {excess / 1e6:+.1f} MB | "
                  f"{r['seconds']:.1f} | {verdict} |")
    else:
        for mode, what, r, excess in rows:
            print(f"{mode:12} {what:28} rss {r['rss'] / 1e6:8.1f} MB  excess {excess / 1e6:+8.1f} MB  "
                  f"{r['seconds']:6.1f} s  {r['outcome']} {r['breakage']} {r['problem'][:80]}")
        print(f"target: excess <= {budget / 1e6:.1f} MB")
    if any(excess > budget for *_, excess in rows):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
