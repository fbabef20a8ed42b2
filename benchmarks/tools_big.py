"""The tools on big files (issue 20), for ``benchmarks/results.py`` (or alone, printing JSON).

- ``torchfmt convert IN OUT.safetensors`` of a 1.5 GB state_dict that torch wrote, against torch and
  safetensors by hand (``torch.load(weights_only=True)`` then ``safetensors.torch.save_file``): wall
  time, CPU time (user + system, the command and its children) and peak RSS of each command, run in
  turns on the same file in the same run; medians of ``--repeat`` runs.
- The bytes of the input ``torchfmt inspect --json`` and ``torchfmt slim`` read where the file is one small
  view of a big storage (torch saves the whole storage), and ``inspect`` where it holds two big storages of
  one size with different bytes (candidate duplicates).  Counted page-cache-insensitively: the file's
  pages are written out and evicted first (``fsync``, ``POSIX_FADV_DONTNEED``; the count before the command
  must be 0), and the pages of the file resident after it are counted (``mincore``): every page read by
  the command, or by the kernel's read-ahead for it, and nothing else.

    python benchmarks/tools_big.py [--gb 1.5] [--repeat 3] [--screen FILE]

``--screen FILE`` also runs the conversion once in a terminal (a pty of 100 columns) and saves what the
terminal showed last before the bar was cleared: the progress bar.
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import json
import mmap
import os
import pty
import select
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

STATE_DICT = r"""
import sys, torch
path, total = sys.argv[1], int(sys.argv[2])
g = torch.Generator().manual_seed(0)
rows = 4096
n = max(1, total // (rows * rows * 4))
sd = {}
for i in range(n):
    sd[f"layers.{i}.weight"] = torch.randn(rows, rows, generator=g)
    sd[f"layers.{i}.bias"] = torch.randn(rows, generator=g)
torch.save(sd, path)
"""
VIEW = r"""
import sys, torch
path, total, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
g = torch.Generator().manual_seed(1)
if kind == "view":  # one 10-element view of a big storage: torch saves the whole storage
    big = torch.randn(total // 4, generator=g)
    torch.save({"embedding_row": big[1000:1010]}, path)
else:  # two storages of one size, different bytes: candidates for duplicates
    torch.save({"a": torch.randn(total // 8, generator=g), "b": torch.randn(total // 8, generator=g)}, path)
"""
BY_HAND = r"""
import sys, torch
from safetensors.torch import save_file
save_file(torch.load(sys.argv[1], weights_only=True), sys.argv[2])
"""

_libc = ctypes.CDLL("libc.so.6", use_errno=True)


def env() -> dict[str, str]:
    """This tree's reader first on the path."""
    path = os.pathsep.join([str(ROOT / "reference_impl"), str(ROOT)])
    return {**os.environ, "PYTHONPATH": path}


def run(cmd: list[str]) -> dict[str, Any]:
    """Wall and CPU seconds and peak RSS (bytes) of ``cmd`` and its children; its exit status."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env())
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace").strip()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return {"status": os.waitstatus_to_exitcode(status), "wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_rss": usage.ru_maxrss * 1024, "stderr": err[-200:]}


def evict(path: Path) -> None:
    """Write the file's pages out and drop them from the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def resident(path: Path) -> int:
    """Bytes of the file in the page cache (``mincore`` over a map of it, in pages)."""
    size = path.stat().st_size
    if not size:
        return 0
    page = mmap.PAGESIZE
    with open(path, "rb") as f, mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ) as mm:
        vec = (ctypes.c_ubyte * ((size + page - 1) // page))()
        arr = np.frombuffer(mm, np.uint8)
        if _libc.mincore(ctypes.c_void_p(arr.ctypes.data), ctypes.c_size_t(size), vec) != 0:
            raise OSError(ctypes.get_errno(), "mincore")
        del arr
    return sum(v & 1 for v in vec) * page


def bytes_read(path: Path, cmd: list[str]) -> dict[str, Any]:
    """The bytes of ``path`` read by ``cmd`` (resident after, none before), and its run figures."""
    evict(path)
    before = resident(path)
    out = run(cmd)
    out.update(before=before, read=resident(path), file_bytes=path.stat().st_size)
    return out


def screen(src: Path, out: Path) -> str:
    """The last screen a 100-column terminal showed while ``convert`` ran, the bar still drawn."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "torchfmt", "convert", str(src), str(out)],
                            stdout=slave, stderr=slave, env={**env(), "TERM": "xterm"})
    os.close(slave)
    raw = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        raw += chunk
    os.close(master)
    proc.wait()
    text = raw.decode("utf-8", "replace")
    frames = [f for f in text.replace("\r\n", "\n").split("\r") if "convert: writing" in f and "%|" in f]
    last = [f for f in frames if "100%" not in f][-1:] or frames[-1:]
    result = [ln for ln in text.replace("\r", "\n").splitlines() if ln.startswith("converted ")]
    return "\n".join([f"$ torchfmt convert {src.name} {out.name}", *(f.rstrip() for f in last),
                      *result]) + "\n"


def measure(folder: Path, gb: float = 1.5, repeat: int = 3, screen_to: Path | None = None) -> dict[str, Any]:
    """Every figure of this benchmark, as a JSON-able dict."""
    total = int(gb * 1e9)
    sd = folder / "state_dict.pt"
    subprocess.run([sys.executable, "-c", STATE_DICT, str(sd), str(total)], check=True, env=env())
    out: dict[str, Any] = {"gb": gb, "repeat": repeat, "state_dict_bytes": sd.stat().st_size,
                           "convert": [], "by_hand": []}
    for i in range(repeat):  # in turns, so that a busy moment hurts both
        for key, cmd in (("convert", [sys.executable, "-m", "torchfmt", "convert", str(sd),
                                      str(folder / f"ours{i}.safetensors")]),
                         ("by_hand", [sys.executable, "-c", BY_HAND, str(sd),
                                      str(folder / f"hand{i}.safetensors")])):
            out[key].append(run(cmd))
        for p in folder.glob("*.safetensors"):
            p.unlink()
    if screen_to is not None:
        screen_to.write_text(screen(sd, folder / "screen.safetensors"))
        out["screen"] = str(screen_to)
    sd.unlink()
    for kind in ("view", "two"):
        path = folder / f"{kind}.pt"
        subprocess.run([sys.executable, "-c", VIEW, str(path), str(total), kind], check=True, env=env())
        out[f"inspect_{kind}"] = bytes_read(path, [sys.executable, "-m", "torchfmt", "inspect", str(path),
                                                   "--json"])
        if kind == "view":
            out["slim_view"] = bytes_read(path, [sys.executable, "-m", "torchfmt", "slim", str(path),
                                                 str(folder / "slim.pt")])
            out["slim_view"]["output_bytes"] = (folder / "slim.pt").stat().st_size
        path.unlink()
    return out


def medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu", "peak_rss")}


def section(m: dict[str, Any]) -> list[str]:
    """The RESULTS.md section of these figures."""
    ours, hand = medians(m["convert"]), medians(m["by_hand"])
    failed = [r["stderr"] for r in m["convert"] + m["by_hand"] if r["status"]]
    lines = [
        "## The tools on big files (issue 20)", "",
        f"Measured by `benchmarks/tools_big.py` (`--gb {m['gb']}`, medians of {m['repeat']} runs taken in "
        "turns).  `convert` streams the safetensors output (header first, then each tensor from the input's "
        "map, its pages given back once written); the bytes read are the input's pages resident after the "
        "command when none were before (evicted first: page-cache-insensitive), read-ahead included.", "",
        f"`convert --to safetensors` of a {m['state_dict_bytes'] / 1e9:.2f} GB state_dict (torch 2.13 "
        "`torch.save`), against torch + safetensors by hand (`safetensors.torch.save_file(torch.load(p, "
        "weights_only=True), out)`):", "",
        "| command | wall s | CPU s | peak RSS MB |", "| --- | ---: | ---: | ---: |",
        f"| `torchfmt convert IN OUT.safetensors` | {ours['wall']:.1f} | {ours['cpu']:.1f} | "
        f"{ours['peak_rss'] / 1e6:.0f} |",
        f"| torch + safetensors by hand | {hand['wall']:.1f} | {hand['cpu']:.1f} | "
        f"{hand['peak_rss'] / 1e6:.0f} |",
        "", "Bytes of the input read:", "",
        "| file | command | file | read | share of the file |", "| --- | --- | ---: | ---: | ---: |",
    ]
    for key, what, cmd in (("inspect_view", "one 10-element view of a big storage", "`inspect --json`"),
                           ("slim_view", "one 10-element view of a big storage", "`slim`"),
                           ("inspect_two", "two same-sized storages, different bytes", "`inspect --json`")):
        r = m[key]
        lines.append(f"| {what} | {cmd} | {r['file_bytes'] / 1e6:,.1f} MB | {r['read'] / 1e6:,.2f} MB | "
                     f"{100 * r['read'] / r['file_bytes']:.2f}% |")
    if "output_bytes" in m["slim_view"]:
        lines += ["", f"`slim` wrote {m['slim_view']['output_bytes']:,} bytes (the 10 elements and the "
                      "container)."]
    for err in failed:
        lines += ["", f"**a run failed**: `{err}`"]
    return lines + [""]


def targets(m: dict[str, Any]) -> list[tuple[str, str, float | None, float | None, str]]:
    """(what, kind, value, cpu value, unit) for results.py's targets table: kind ``ratio`` (at least
    1×) or ``max`` (at most the goal)."""
    ours, hand = medians(m["convert"]), medians(m["by_hand"])
    return [
        ("1.5 GB state_dict: `convert --to safetensors` vs torch + safetensors by hand (speed-up)", "ratio",
         hand["wall"] / ours["wall"], hand["cpu"] / ours["cpu"], "×"),
        ("1.5 GB state_dict: peak RSS of `convert` / by hand", "max", ours["peak_rss"] / hand["peak_rss"],
         None, "×"),
        ("small view of a big storage: bytes `inspect` reads / payload", "max",
         100 * m["inspect_view"]["read"] / m["inspect_view"]["file_bytes"], None, "%"),
        ("small view of a big storage: bytes `slim` reads / payload", "max",
         100 * m["slim_view"]["read"] / m["slim_view"]["file_bytes"], None, "%"),
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=1.5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--screen", type=Path, help="save the progress bar's screen here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="torchfmt-tools-") as tmp:
        m = measure(Path(tmp), args.gb, args.repeat, args.screen)
    print(json.dumps(m, indent=1))
    print("\n".join(section(m)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
