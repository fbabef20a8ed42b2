"""Executions per second of each atheris harness under ``fuzz/`` (fuzz/README.md; issue 8 asks >= 500/s).

Each harness runs under libFuzzer for ``--seconds`` on its seed corpus (``fuzz/corpus/<target>/``, made
by ``fuzz/seeds.py``; read only: new units go to a temporary folder), with ``-print_final_stats=1``;
the table shows libFuzzer's own figures: executions, executions per second, and the seconds spent.
``--max-len N`` passes libFuzzer's ``-max_len=N`` (default: none, so each harness's own default applies,
``fuzz/target.py``; 0: libFuzzer's default, the longest seed, as the harnesses ran before); the seeds
longer than it are still run once when the corpus is loaded.

    PYTHONPATH=reference_impl /work/venv/bin/python benchmarks/fuzz_speed.py [--seconds 30] [--only pickle]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FUZZ = Path(__file__).resolve().parents[1] / "fuzz"
TARGETS = ("t7_binary", "t7_ascii", "pt_zip", "pt_legacy", "pt_tar", "pickle", "differential")
_STAT = re.compile(r"stat::(\w+):\s+(\d+)")


def measure(target: str, seconds: int, max_len: int | None) -> dict[str, float]:
    """libFuzzer's final statistics for one run of ``fuzz_<target>.py``."""
    seeds = FUZZ / "corpus" / target
    with tempfile.TemporaryDirectory(prefix=f"fuzz-speed-{target}-") as tmp:
        cmd = [sys.executable, str(FUZZ / f"fuzz_{target}.py"), tmp]
        if seeds.is_dir():
            cmd.append(str(seeds))
        cmd += [f"-max_total_time={seconds}", *([f"-max_len={max_len}"] if max_len is not None else []),
                "-timeout=60", "-rss_limit_mb=2048",
                "-print_final_stats=1", f"-artifact_prefix={tmp}/"]
        start = time.monotonic()
        out = subprocess.run(cmd, cwd=FUZZ, capture_output=True, text=True, env=os.environ.copy(),
                             timeout=seconds + 600)
        wall = time.monotonic() - start
    stats = {k: float(v) for k, v in _STAT.findall(out.stderr)}
    stats["wall"] = wall
    stats["status"] = out.returncode
    return stats


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=int, default=30)
    p.add_argument("--max-len", type=int, default=None)
    p.add_argument("--only", action="append", choices=TARGETS)
    args = p.parse_args()
    print(f"{'target':14} {'executions':>11} {'exec/s':>8} {'seconds':>8} {'status':>6}")
    for target in args.only or TARGETS[:-1]:
        s = measure(target, args.seconds, args.max_len)
        print(f"{target:14} {s.get('number_of_executed_units', 0):11.0f} "
              f"{s.get('average_exec_per_sec', 0):8.0f} {s['wall']:8.1f} {s['status']:6.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
