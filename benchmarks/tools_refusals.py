"""What a refusal costs each command (issue 26: "refuse early and cheaply").

Files up to 16 MB that the reader refuses over its limits, written by torch 2.13 (``torch.save``): many
full views of one storage (the view budget), many distinct views (the pickle's opcode budget), one string
referred to many times (the text budget).  Each command runs as its own process on each file; its CPU
time (user + system, from ``wait4``) is the median of ``--repeat`` runs taken in turns.  (No peak RSS: a
child spawned from this process, which has torch loaded, reports this process's RSS at the spawn.)
The target: no tool's refusal costs more CPU than ``dump``'s on the same file (a margin of 0.3 s for a
process's start), and ``dump``'s stays within 10 s.

    python benchmarks/tools_refusals.py [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = (("dump",), ("inspect",), ("inspect", "--json"), ("slim",), ("convert", "--to", "pt-zip"),
            ("convert", "--to", "safetensors"), ("convert", "--to", "t7"))
#: Seconds a process's start may add over ``dump``'s (imports of the tool's own modules).
MARGIN = 0.3


def make(folder: Path) -> dict[str, Path]:
    import torch

    files: dict[str, Any] = {}
    base = torch.zeros(1 << 18)
    files["60,000 full views of 1 MB"] = [base[:] for _ in range(60_000)]
    big = torch.zeros(1 << 20)
    files["100,000 distinct views of 4 MB"] = [big[i:i + 1000] for i in range(100_000)]
    files["200,000 distinct views of 4 MB"] = [big[i % 500_000:] for i in range(200_000)]
    files["1 MB string, 300 references"] = ["x" * (1 << 20)] * 300
    out = {}
    for n, (name, obj) in enumerate(files.items()):
        out[name] = folder / f"f{n}.pt"
        torch.save(obj, out[name])
    return out


def measure(argv: list[str], cwd: Path) -> tuple[float, int, str]:
    """CPU seconds, exit status and stderr of ``python -m torchfmt ARGV`` run in ``cwd``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "reference_impl"))
    pid = os.posix_spawn(sys.executable, [sys.executable, "-m", "torchfmt", *argv],
                         {**env, "PWD": str(cwd)},
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
                                       (os.POSIX_SPAWN_OPEN, 2, str(cwd / "err"), os.O_WRONLY | os.O_CREAT
                                        | os.O_TRUNC, 0o600)])
    _, status, usage = os.wait4(pid, 0)
    err = (cwd / "err").read_text()
    return usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status), err


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, path in make(folder).items():
            times: dict[tuple[str, ...], list[float]] = {c: [] for c in COMMANDS}
            lines: dict[tuple[str, ...], str] = {}
            for _ in range(args.repeat):
                for c in COMMANDS:
                    out = [str(folder / "out.bin")] if c[0] in ("slim", "convert") else []
                    argv = [c[0], str(path), *out, *c[1:]]
                    cpu, status, err = measure(argv, folder)
                    times[c].append(cpu)
                    lines[c] = f"{status} {err.strip()[:70]}"
            dump = statistics.median(times[("dump",)])
            for c in COMMANDS:
                cpu = statistics.median(times[c])
                rows.append({"file": name, "bytes": path.stat().st_size, "command": " ".join(c),
                             "cpu_s": round(cpu, 2),
                             "outcome": lines[c],
                             "ok": cpu <= dump + MARGIN and (c != ("dump",) or cpu <= 10)})
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print("| file | MB | command | CPU s | outcome | within target |")
        print("| --- | ---: | --- | ---: | --- | --- |")
        for r in rows:
            print(f"| {r['file']} | {r['bytes'] / 1e6:.1f} | `{r['command']}` | {r['cpu_s']} | "
                  f"{r['outcome']} | {'yes' if r['ok'] else 'NO'} |")
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
