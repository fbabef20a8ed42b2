"""A checkpoint larger than the reader's address space (spec/canonical.md#canonical-node-budget).

Writes a valid ~2.2 GB zip checkpoint with torch (a dict of float32 tensors) into a temporary folder
(deleted afterwards), runs ``torchfmt dump`` on it in a subprocess under a 2 GiB address-space limit
(``ulimit -v 2097152``), and prints its wall time and peak RSS next to torch's own
``torch.load(weights_only=True)`` of the same file (without a limit, and under the same limit).  The
reference reader reads the zip through bounded windows and maps one storage record at a time, so it
must succeed where a reader that maps the whole file fails.

    python benchmarks/big_file.py [--gb 2.2] [--tensors 8] [--limit-gib 2]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WRITE = r"""
import sys, torch
path, n, numel = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.save({f"w{i}": torch.arange(numel, dtype=torch.float32).add_(i) for i in range(n)}, path)
"""
TORCH_LOAD = r"""
import sys, torch
obj = torch.load(sys.argv[1], weights_only=True, mmap=sys.argv[2] == "mmap")
print(len(obj))
"""


def run(cmd: list[str], limit: int | None, env: dict[str, str], out: Path) -> tuple[int, float, int, str]:
    """(exit status, wall seconds, peak RSS in bytes, last stderr line) of ``cmd`` under an address-space
    limit of ``limit`` bytes (none when None); its standard output goes to ``out``."""

    def set_limit() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    start = time.perf_counter()
    with open(out, "wb") as stdout:
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, preexec_fn=set_limit, env=env)
        assert proc.stderr is not None
        err = proc.stderr.read().decode(errors="replace").strip().splitlines()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, seconds, usage.ru_maxrss * 1024, err[-1][:160] if err else ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gb", type=float, default=2.2, help="file size in GB (10^9 bytes)")
    p.add_argument("--tensors", type=int, default=8, help="number of tensors (records)")
    p.add_argument("--limit-gib", type=float, default=2.0, help="address-space limit of the reader")
    args = p.parse_args(argv)
    numel = int(args.gb * 1e9) // 4 // args.tensors
    limit = int(args.limit_gib * (1 << 30))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "reference_impl"), OMP_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="torchfmt-big-") as tmp:
        path = Path(tmp) / "big.pt"
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", WRITE, str(path), str(args.tensors), str(numel)], check=True,
                       env=env)
        size = path.stat().st_size
        print(f"wrote {size / 1e9:.2f} GB ({args.tensors} float32 tensors of {numel:,} elements) with torch "
              f"in {time.perf_counter() - start:.1f} s")
        rows = [
            ("torchfmt dump, AS limit", [sys.executable, "-m", "torchfmt", "dump", str(path)], limit),
            ("torch.load(weights_only=True), no limit", [sys.executable, "-c", TORCH_LOAD, str(path), "read"],
             None),
            ("torch.load(weights_only=True, mmap=True), no limit",
             [sys.executable, "-c", TORCH_LOAD, str(path), "mmap"], None),
            ("torch.load(weights_only=True), AS limit", [sys.executable, "-c", TORCH_LOAD, str(path), "read"],
             limit),
        ]
        print(f"address-space limit: {limit / (1 << 30):.2f} GiB")
        print(f"{'reader':52} {'exit':>4} {'seconds':>8} {'peak RSS':>10}")
        codes = []
        for i, (label, cmd, lim) in enumerate(rows):
            code, seconds, rss, err = run(cmd, lim, env, Path(tmp) / f"out{i}")
            codes.append(code)
            note = f"  {err}" if code else ""
            print(f"{label:52} {code:>4} {seconds:8.1f} {rss / (1 << 20):6.0f} MiB{note}")
        tensors = 0
        if codes[0] == 0:
            doc = json.loads((Path(tmp) / "out0").read_text())
            tensors = len(doc["objects"][0]["items"])
            print(f"torchfmt's description: {tensors} tensors, {len(doc['storages'])} storages")
    return 0 if codes[0] == 0 and tensors == args.tensors else 1


if __name__ == "__main__":
    sys.exit(main())
