"""Wall and CPU time of ``python -m pytest conformance --reader NAME`` in batch mode
(spec/canonical.md#canonical-reader-batch) and one process per file (``--per-process``), measured in one
run, with the pass / fail / declined counts of each and whether every case's verdict is the same
(issue 21: netron ≤ 40 s on an idle 2-core machine with the per-process counts; the torch adapter ≤ 2
minutes).  Writes its section of ``benchmarks/RESULTS.md`` (between the ``batch-speed`` markers; the rest
of the page is ``benchmarks/results.py``'s, which keeps this section as it is).

    python -m benchmarks.batch_speed [--readers netron torch lua-torch] [--per-process netron lua-torch]
                                     [--baseline REF [--baseline-readers netron]] [--out FILE]
                                     [--reports DIR]

``--baseline REF`` also runs the batch mode of a git revision (in a temporary worktree of it), in the same
run, to show what a change of the harness or an adapter did.  ``--reports DIR`` keeps each run's
``--report-json`` there (``<reader>-<mode>.json``), to compare its verdicts with the stored ones
(conformance/results/) without writing those.
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import datetime
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import sections

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
BEGIN, END = "<!-- batch-speed:begin -->", "<!-- batch-speed:end -->"
#: issue 21's goals: (reader, seconds of wall time in batch mode on an idle 2-core machine).
GOALS = {"netron": 40.0, "torch": 120.0}


def run(reader: str, mode: list[str], root: Path = ROOT, keep: Path | None = None) -> dict:
    """One ``pytest conformance --reader`` run in the checkout ``root``: wall and CPU seconds, load average
    before and after, the report's counts and per-case verdicts (the report copied to ``keep``)."""
    # the corpus tier of this checkout for every run (a baseline's temporary worktree has no ../shared)
    env = {"TORCHFMT_CORPUS": str((ROOT.parent / "shared" / "corpus").resolve()), **os.environ,
           "PYTHONPATH": os.pathsep.join([str(root / "reference_impl"), str(root)])}
    with tempfile.TemporaryDirectory(prefix="torchfmt-batch-speed-") as tmp:
        report = Path(tmp) / "report.json"
        load = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        command = [sys.executable, "-m", "pytest", "conformance", "--reader", reader, *mode, "-q", "-p",
                   "no:cacheprovider", "--report-json", str(report)]
        proc = subprocess.run(command, cwd=root, capture_output=True, text=True, env=env)
        wall = time.monotonic() - start
        reap()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if not report.is_file():
            raise SystemExit(f"--reader {reader} {' '.join(mode)}: no report (pytest exit "
                             f"{proc.returncode}):\n" + proc.stdout[-2000:])
        doc = json.loads(report.read_text())
        if keep is not None:
            keep.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(report, keep)
    batch = [line for line in proc.stdout.splitlines() if line.startswith("batch mode:")]
    return {"wall": wall, "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "load": (load, os.getloadavg()[0]), "counts": doc["counts"], "mode": doc.get("mode", "?"),
            "verdicts": {r["id"]: (r["outcome"], r["kind"], r["code"]) for r in doc["results"]},
            "batch": batch[-1] if batch else ""}


def subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux ``PR_SET_CHILD_SUBREAPER``), so that
    the CPU time of a reader a batch adapter started (netron's node under ``run.py --batch``, which nobody
    waits for once ``run.py`` has exited) is counted with the rest: :func:`reap` waits for them."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def reap(seconds: float = 10.0) -> None:
    """Wait for the orphans handed to this process (their CPU time then counts in RUSAGE_CHILDREN)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            if time.monotonic() > deadline:
                return
            time.sleep(0.1)


def counts(r: dict) -> str:
    c = r["counts"]
    return f"{c.get('pass', 0)} / {c.get('fail', 0)} / {c.get('declined', 0)}"


def section(rows: list[tuple[str, dict, dict | None, dict | None]], started: datetime.datetime,
            baseline: str | None, reaped: bool) -> str:
    """The page's section: ``rows`` are (reader, batch run, per-process run or None, baseline batch run or
    None)."""
    lines = [BEGIN, "## Batch mode (issue 21)", "",
             "Generated by `python -m benchmarks.batch_speed` (this section only; `benchmarks/results.py` "
             "keeps it).  `python -m pytest conformance --reader NAME` in batch mode "
             "([spec/canonical.md#canonical-reader-batch](../spec/canonical.md#canonical-reader-batch): one "
             "process answers file after file; 20 cases rerun one process per file) and with `--per-process` "
             "(a process per file, as before), measured in one run"
             + (f"; `batch at {baseline}` is the same batch run from that revision of the project, before "
                "the change measured" if baseline else "") + ".",
             "",
             f"- date: {started:%Y-%m-%d %H:%M} UTC; machine: {os.cpu_count()} cores, shared; the 1-minute "
             "load average before and after each run is in its row (above the core count: the machine was "
             "busy and wall times are inflated; compare CPU seconds too)",
             "- CPU s: user + system time of the run and of every process it started"
             + (" (orphans included: this process is their subreaper)" if reaped else
                " (a reader's process left orphaned by its adapter is not counted here)"),
             "",
             "| reader | mode | wall s | CPU s | load before / after | pass / fail / declined | goal |",
             "| --- | --- | ---: | ---: | --- | --- | --- |"]
    notes = []
    for reader, batch, alone, base in rows:
        goal = GOALS.get(reader)
        met = "" if goal is None else \
            f"≤ {goal:g} s idle: {'met' if batch['wall'] <= goal else 'not met here'}"
        for mode, r in (("batch", batch), ("per process", alone), (f"batch at {baseline}", base)):
            if r is None:
                continue
            lines.append(f"| {reader} | {mode} | {r['wall']:.1f} | {r['cpu']:.1f} | {r['load'][0]:.1f} / "
                         f"{r['load'][1]:.1f} | {counts(r)} | {met if mode == 'batch' else ''} |")
        if batch["batch"]:
            notes.append(f"- {reader}: {batch['batch']}")
        for label, other in (("per process", alone), (f"batch at {baseline}", base)):
            if other is None:
                continue
            differ = sorted(k for k in batch["verdicts"].keys() | other["verdicts"].keys()
                            if batch["verdicts"].get(k) != other["verdicts"].get(k))
            shown = ", ".join(f"{k} {other['verdicts'].get(k)} -> {batch['verdicts'].get(k)}"
                              for k in differ[:8])
            notes.append(f"- {reader}: batch / {label}: wall {batch['wall'] / other['wall']:.2f}, CPU "
                         f"{batch['cpu'] / other['cpu']:.2f}; cases whose verdict (outcome, kind, code) "
                         f"differs: " + (f"{len(differ)}: {shown}" if differ else "none"))
    return "\n".join([*lines, "", *notes, END]) + "\n"


def write(text: str, out: Path) -> None:
    sections.write(out, "batch-speed", text)



def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readers", nargs="+", default=["netron", "torch", "lua-torch"])
    ap.add_argument("--per-process", nargs="*", default=["netron", "lua-torch"], metavar="READER",
                    help="readers also run one process per file (default: netron and lua-torch; "
                         "torch's takes 12+ minutes)")
    ap.add_argument("--baseline", metavar="REF", help="also run the batch mode of this git revision")
    ap.add_argument("--baseline-readers", nargs="*", default=["netron"], metavar="READER")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--reports", type=Path, metavar="DIR", help="keep each run's report JSON here")
    args = ap.parse_args(argv)
    reaped = subreaper()
    started = datetime.datetime.now(datetime.timezone.utc)
    base_root = None
    if args.baseline:
        base_root = Path(tempfile.mkdtemp(prefix="torchfmt-baseline-")) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", str(base_root), args.baseline], cwd=ROOT,
                       check=True, capture_output=True)
    rows = []

    def keep(reader: str, mode: str) -> Path | None:
        return args.reports / f"{reader}-{mode}.json" if args.reports else None

    try:
        for reader in args.readers:
            print(f"{reader}: batch ...", file=sys.stderr, flush=True)
            batch = run(reader, [], keep=keep(reader, "batch"))
            alone = base = None
            if reader in args.per_process:
                print(f"{reader}: per process ...", file=sys.stderr, flush=True)
                alone = run(reader, ["--per-process"], keep=keep(reader, "per-process"))
            if base_root is not None and reader in args.baseline_readers:
                print(f"{reader}: batch at {args.baseline} ...", file=sys.stderr, flush=True)
                base = run(reader, [], base_root, keep(reader, "baseline"))
            rows.append((reader, batch, alone, base))
    finally:
        if base_root is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(base_root)], cwd=ROOT,
                           capture_output=True)
            shutil.rmtree(base_root.parent, ignore_errors=True)
    text = section(rows, started, args.baseline, reaped)
    write(text, args.out)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
