"""Executions per second of each atheris harness under ``fuzz/`` (fuzz/README.md; issue 8 asks >= 500/s).

Each harness runs under libFuzzer for ``--seconds`` on its seed corpus (``fuzz/corpus/<target>/``, made
by ``fuzz/seeds.py``; read only: new units go to a temporary folder), with ``-print_final_stats=1``;
the table shows libFuzzer's own figures: executions, executions per second, and the seconds spent.
``--max-len N`` passes libFuzzer's ``-max_len=N`` (default: none, so each harness's own default applies,
``fuzz/target.py``; 0: libFuzzer's default, the longest seed, as the harnesses ran before); the seeds
longer than it are still run once when the corpus is loaded.

libFuzzer's exec/s counts the loading of the seeds (the differential target's seeds hold bombs that take
torch seconds each); the ``fuzzing`` column is the rate after it (from the ``INITED`` line to the end, each
stderr line timed as it arrives), and ``cpu ms`` is the CPU time per execution of the harness and of the
differential target's torch worker (as the target counts it, up to its last report): on a machine shared
with other work the wall-clock rates fall, the CPU cost does not.  The differential target (``--only
differential``; not run by default, it needs torch) gets ``TORCHFMT_DIFF_TORCH_SECONDS=--torch-seconds``
and its verdict counts (``differential-counts.json``) are printed after the table.

    PYTHONPATH=reference_impl python benchmarks/fuzz_speed.py [--seconds 30] [--only pickle]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"
TARGETS = ("t7_binary", "t7_ascii", "pt_zip", "pt_legacy", "pt_tar", "pickle", "differential")
_STAT = re.compile(r"stat::(\w+):\s+(\d+)")
_UNITS = re.compile(r"#(\d+)\s+(\w+)")


def _cpu_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def measure(target: str, seconds: int, max_len: int | None, torch_seconds: float = 5.0) -> dict[str, float]:
    """libFuzzer's final statistics for one run of ``fuzz_<target>.py``, with the rate after the seeds
    (``fuzzing``), the CPU seconds per execution (``cpu``) and, for the differential target, its counts."""
    seeds = FUZZ / "corpus" / target
    # the repository root on the path: fuzz_differential.py imports the suite's package (fuzz/README.md)
    path = os.pathsep.join([*filter(None, [os.environ.get("PYTHONPATH")]), str(FUZZ.parent)])
    env = {**os.environ, "TORCHFMT_DIFF_TORCH_SECONDS": str(torch_seconds), "PYTHONPATH": path}
    with tempfile.TemporaryDirectory(prefix=f"fuzz-speed-{target}-") as tmp:
        cmd = [sys.executable, str(FUZZ / f"fuzz_{target}.py"), tmp]
        if seeds.is_dir():
            cmd.append(str(seeds))
        cmd += [f"-max_total_time={seconds}", *([f"-max_len={max_len}"] if max_len is not None else []),
                "-timeout=60", "-rss_limit_mb=2048",
                "-print_final_stats=1", f"-artifact_prefix={tmp}/"]
        cpu0 = _cpu_children()
        start = time.monotonic()
        inited: tuple[float, int] | None = None
        last: tuple[float, int] = (start, 0)
        lines = []
        with subprocess.Popen(cmd, cwd=FUZZ, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              env=env, errors="replace") as proc:
            assert proc.stderr is not None
            for line in proc.stderr:
                lines.append(line)
                m = _UNITS.match(line)
                if m:
                    last = (time.monotonic(), int(m.group(1)))
                    if m.group(2) == "INITED":
                        inited = last
            status = proc.wait(timeout=seconds + 600)
        wall = time.monotonic() - start
        counts = Path(tmp) / "differential-counts.json"
        verdicts = json.loads(counts.read_text()) if counts.is_file() else {}
    stats: dict = {k: float(v) for k, v in _STAT.findall("".join(lines))}
    stats["wall"] = wall
    stats["status"] = status
    units = stats.get("number_of_executed_units", last[1])
    # the torch worker outlives the fuzzer by a moment and is not its waited child: its own count
    stats["cpu"] = (_cpu_children() - cpu0 + verdicts.pop("worker-cpu-seconds", 0.0)) / max(units, 1)
    if inited is not None and last[0] > inited[0]:
        stats["fuzzing"] = (last[1] - inited[1]) / (last[0] - inited[0])
    stats["counts"] = verdicts
    return stats


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=int, default=30)
    p.add_argument("--max-len", type=int, default=None)
    p.add_argument("--only", action="append", choices=TARGETS)
    p.add_argument("--torch-seconds", type=float, default=5.0,
                   help="the differential target's time limit for torch per input (default 5)")
    args = p.parse_args()
    print(f"{'target':14} {'executions':>11} {'exec/s':>8} {'fuzzing':>8} {'cpu ms':>7} {'seconds':>8} "
          f"{'status':>6}")
    for target in args.only or TARGETS[:-1]:
        s = measure(target, args.seconds, args.max_len, args.torch_seconds)
        print(f"{target:14} {s.get('number_of_executed_units', 0):11.0f} "
              f"{s.get('average_exec_per_sec', 0):8.0f} {s.get('fuzzing', 0):8.0f} {s['cpu'] * 1000:7.2f} "
              f"{s['wall']:8.1f} {s['status']:6.0f}", flush=True)
        if s["counts"]:
            print(f"{'':14} {json.dumps(s['counts'], sort_keys=True)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
