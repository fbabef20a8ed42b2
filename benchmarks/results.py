"""Regenerate ``benchmarks/RESULTS.md``: the reference reader against its peers on the files of issue 12,
every figure a ratio against a peer measured in the same run on the same file.

Builds its inputs in a temporary folder (deleted afterwards) from one set of float32 weights per file:
``.pt`` with real torch (``torch.save``), ``.t7`` with the project's own writer
(``torchfmt.save(..., format="t7")``) and ``.safetensors`` with ``safetensors.numpy.save_file``.  Each
reader then runs in a fresh subprocess of its own, so that its RSS is its own: one load first (the RSS it
adds, and its peak), then ``--repeat`` timed loads, each followed by a copy of every array it gives
(``np.copy``: touching every byte).  The peers are torch 2.13's ``load(weights_only=True)`` with and
without ``mmap``, ``safetensors.numpy.load_file`` on the same weights, torchfile 0.1.0 for ``.t7`` (in
the venv ``conformance/adapters/torchfile/setup`` makes), and a plain ``np.copy`` of the file's mapped
bytes (in pieces of one tensor's size, as the readers' arrays are copied: one copy of the whole file
would pay for faulting in a fresh destination as large).  ``torchfmt dump`` is timed as a command (wall
time, interpreter start included).  The conformance suite's wall time is measured as
``benchmarks/suite_speed.py`` measures it (``--no-suite`` skips it: it is slow).  The tools on big files
(issue 20: ``convert`` to safetensors against torch + safetensors by hand, the bytes ``inspect`` and
``slim`` read) are measured by ``benchmarks/tools_big.py`` (``--no-tools`` skips them; ``--screen FILE``
saves the progress bar's screen).  The batch-mode section (``benchmarks/batch_speed.py``, issue 21) is
kept as the page holds it.

    PYTHONPATH=reference_impl python -m benchmarks.results [--quick] [--repeat 5] [--no-suite] [--no-tools]
                                                           [--screen FILE] [--out benchmarks/RESULTS.md]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

from benchmarks import tools_big  # noqa: E402
from benchmarks.big_file import run as run_command  # noqa: E402  (wall time and peak RSS of a command)
from benchmarks.sections import kept as kept_sections  # noqa: E402  (the sections other scripts write, kept)
from benchmarks.suite_speed import Timed  # noqa: E402
from benchmarks.suite_speed import run as run_suite  # noqa: E402

TORCHFILE_SETUP = ROOT / "conformance" / "adapters" / "torchfile" / "setup"
ADAPTERS = Path(os.environ.get("TORCHFMT_ADAPTERS_HOME", Path.home() / ".cache" / "torchfmt" / "adapters"))
TORCHFILE_PYTHON = ADAPTERS / "torchfile" / "venv" / "bin" / "python"

#: One reader in a fresh process (run with ``python -c WORKER kind path repeat``; it needs only numpy and
#: the reader it measures, so torchfile's venv runs it too).  Prints one JSON line.
WORKER = r"""
import gc, json, os, sys, time
import numpy as np
kind, path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

if kind.startswith("torchfmt"):
    import torchfmt
    from torchfmt.tools.flat import arrays
    if kind == "torchfmt.load":
        load = torchfmt.load
        values = lambda obj: arrays(obj).values()
    else:
        load = torchfmt.load_file
        values = lambda obj: obj.values()
elif kind.startswith("torch."):
    import torch
    mmap = kind == "torch.load(mmap)"
    load = lambda p: torch.load(p, weights_only=True, mmap=mmap)
    values = lambda obj: (t.numpy() for t in obj.values())
elif kind == "safetensors":
    from safetensors.numpy import load_file as load
    values = lambda obj: obj.values()
elif kind == "torchfile":
    import torchfile
    load = torchfile.load
    values = lambda obj: obj.values()
elif kind == "np.copy":
    piece = int(sys.argv[4])
    load = lambda p: np.memmap(p, dtype=np.uint8, mode="r")
    values = lambda obj: (obj[i:i + piece] for i in range(0, len(obj), piece))
else:
    raise SystemExit(f"unknown reader {kind}")

base = rss()
obj = load(path)
grown = rss() - base
count = nbytes = 0
for a in values(obj):
    count += 1
    nbytes += a.nbytes
del obj
gc.collect()
walls, cpus, touches = [], [], []
for _ in range(repeat):
    w, c = time.perf_counter(), time.process_time()
    obj = load(path)
    cpus.append(time.process_time() - c)
    walls.append(time.perf_counter() - w)
    t = time.perf_counter()
    for a in values(obj):
        np.copy(a)
    touches.append(time.perf_counter() - t)
    del obj
    gc.collect()
with open("/proc/self/status") as f:  # ru_maxrss would count the parent's peak before exec
    peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))
print(json.dumps({"wall": walls, "cpu": cpus, "touch": touches, "rss_growth": grown,
                  "peak_rss": peak, "base_rss": base, "arrays": count, "bytes": nbytes}))
"""


@dataclass
class Spec:
    """One input: ``tensors`` float32 tensors of ``numel`` elements, as ``fmt`` (pt or t7)."""

    key: str
    title: str
    fmt: str
    tensors: int
    numel: int


@dataclass
class Figures:
    """One reader's medians on one file (seconds and bytes)."""

    wall: float
    cpu: float | None = None
    touch: float | None = None
    rss_growth: int | None = None
    peak_rss: int | None = None
    arrays: int | None = None
    nbytes: int | None = None


@dataclass
class Measured:
    spec: Spec
    path: Path
    size: int
    readers: dict[str, Figures] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    quick: bool = False


def specs(quick: bool) -> list[Spec]:
    """The files of issue 12 (``--quick``: an eighth of the large ones, a quarter of the small counts)."""
    big, small = (8, 4) if quick else (1, 1)
    return [
        Spec("pt-512", "512 MB state_dict, 256 tensors", "pt", 256, (1 << 19) // big),
        Spec("pt-small", "25 MB state_dict, 20,000 small tensors", "pt", 20_000 // small, 300),
        Spec("pt-1g", "1 GB state_dict, 200 tensors", "pt", 200, 1_310_720 // big),
        Spec("t7-268", "268 MB binary .t7, 128 tensors", "t7", 128, (1 << 19) // big),
        Spec("t7-small", "23 MB binary .t7, 20,000 small tensors", "t7", 20_000 // small, 256),
    ]


def weights(spec: Spec) -> dict[str, np.ndarray]:
    """Deterministic float32 weights with state_dict-like names."""
    rng = np.random.default_rng(12)
    return {f"layers.{k // 8}.block{k % 8}.weight": rng.standard_normal(spec.numel, dtype=np.float32)
            for k in range(spec.tensors)}


def build(spec: Spec, folder: Path) -> tuple[Path, Path]:
    """The file under test and the same weights as ``.safetensors``."""
    import torch
    import torchfmt
    from safetensors.numpy import save_file

    w = weights(spec)
    path = folder / f"{spec.key}.{spec.fmt}"
    if spec.fmt == "pt":
        torch.save({k: torch.from_numpy(v) for k, v in w.items()}, path)
    else:
        torchfmt.save(w, path, format="t7")
    st = folder / f"{spec.key}.safetensors"
    save_file(w, str(st))
    return path, st


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT / "reference_impl"), OMP_NUM_THREADS="1",
                OPENBLAS_NUM_THREADS="1")



def worker(python: str, kind: str, path: Path, repeat: int, piece: int) -> Figures:
    cmd = [python, "-c", WORKER, kind, str(path), str(repeat), str(piece)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env(), check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{kind}: exit {out.returncode}: {out.stderr.strip().splitlines()[-1:]}")
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return Figures(statistics.median(r["wall"]), statistics.median(r["cpu"]), statistics.median(r["touch"]),
                   r["rss_growth"], r["peak_rss"], r["arrays"], r["bytes"])


def dump(path: Path, repeat: int, folder: Path) -> Figures:
    """``torchfmt dump PATH``: median wall time of the command, and its peak RSS."""
    walls, peaks = [], []
    for _ in range(repeat):
        cmd = [sys.executable, "-m", "torchfmt", "dump", str(path)]
        code, seconds, peak, err = run_command(cmd, None, env(), folder / "dump.json")
        if code != 0:
            raise RuntimeError(f"torchfmt dump: exit {code}: {err}")
        walls.append(seconds)
        peaks.append(peak)
    return Figures(statistics.median(walls), peak_rss=max(peaks))


def readers_of(spec: Spec) -> list[str]:
    own = ["torchfmt.load", "torchfmt.load_file"]
    if spec.fmt == "pt":
        return [*own, "torch.load(mmap)", "torch.load", "safetensors", "np.copy"]
    return [*own, "torchfile", "safetensors", "np.copy"]


def measure(spec: Spec, folder: Path, repeat: int, quick: bool) -> Measured:
    path, st = build(spec, folder)
    m = Measured(spec, path, path.stat().st_size, quick=quick)
    for kind in readers_of(spec):
        python = str(TORCHFILE_PYTHON) if kind == "torchfile" else sys.executable
        target = st if kind == "safetensors" else path
        try:
            m.readers[kind] = worker(python, kind, target, repeat, 4 * spec.numel)
        except RuntimeError as e:
            m.errors[kind] = str(e)
    try:
        m.readers["torchfmt dump"] = dump(path, repeat, folder)
    except RuntimeError as e:
        m.errors["torchfmt dump"] = str(e)
    path.unlink()
    st.unlink()
    return m


# -- the page -----------------------------------------------------------------------------------------

def _ms(s: float | None) -> str:
    return "–" if s is None else f"{s * 1000:,.1f}" if s < 1 else f"{s * 1000:,.0f}"


def _mb(b: int | None) -> str:
    return "–" if b is None else f"{b / 1e6:,.1f}"


def _x(peer: float | None, this: float | None) -> str:
    """How many times faster ``this`` is than ``peer``."""
    if not peer or not this:
        return "–"
    return f"{peer / this:.2f}×"


def peer_of(spec: Spec) -> str:
    return "torch.load(mmap)" if spec.fmt == "pt" else "torchfile"


PEER_NAMES = {"torch.load(mmap)": "torch `load(mmap=True, weights_only=True)`",
              "torch.load": "torch `load(weights_only=True)`", "torchfile": "torchfile 0.1.0 `load`",
              "safetensors": "`safetensors.numpy.load_file` (same weights)",
              "np.copy": "`np.memmap` of the file, `np.copy` of it in pieces of one tensor's size (touch)",
              "torchfmt.load": "`torchfmt.load`", "torchfmt.load_file": "`torchfmt.load_file`",
              "torchfmt dump": "`torchfmt dump` (the command, wall time)"}


def table(m: Measured) -> list[str]:
    peer = m.readers.get(peer_of(m.spec))
    st = m.readers.get("safetensors")
    copy = m.readers.get("np.copy")
    torch_read = m.readers.get("torch.load")
    what = "state_dict" if m.spec.fmt == "pt" else "binary .t7"
    title = m.spec.title if not m.quick else (f"{m.size / 1e6:,.0f} MB {what}, {m.spec.tensors:,} tensors "
                                              f"(quick run; full: {m.spec.title})")
    lines = [f"### {title}", "",
             f"`{m.path.name}`: {m.size / 1e6:,.1f} MB, {m.spec.tensors:,} float32 tensors of "
             f"{m.spec.numel:,} elements.  Speed-ups are the peer's time over the reader's (above 1: the "
             f"reader is faster); touch is copying every array the reader gives, against `np.copy` of the "
             f"mapped file; RSS growth is what one load adds (before touching); peak RSS is the process's "
             f"high-water mark over all its runs, touching included (mapped pages of the file count).", "",
             f"| reader | load ms | CPU ms | vs {peer_of(m.spec)} | vs {peer_of(m.spec)} (CPU) | "
             + ("vs torch.load | " if m.spec.fmt == "pt" else "")
             + "vs safetensors | touch ms | touch / np.copy | RSS growth MB | peak RSS MB |",
             "| --- | ---: | ---: | ---: | ---: | " + ("---: | " if m.spec.fmt == "pt" else "")
             + "---: | ---: | ---: | ---: | ---: |"]
    for kind, f in m.readers.items():
        loads = kind != "np.copy"  # mapping a file is no load: its row gives the touch peer only
        row = [PEER_NAMES.get(kind, kind), _ms(f.wall), _ms(f.cpu),
               _x(peer and peer.wall, f.wall if loads else 0), _x(peer and peer.cpu, f.cpu if loads else 0)]
        if m.spec.fmt == "pt":
            row.append(_x(torch_read and torch_read.wall, f.wall if loads else 0))
        row += [_x(st and st.wall, f.wall if loads else 0), _ms(f.touch),
                f"{f.touch / copy.touch:.2f}" if f.touch is not None and copy and copy.touch else "–",
                _mb(f.rss_growth), _mb(f.peak_rss)]
        lines.append("| " + " | ".join(row) + " |")
    counts = {k: (f.arrays, f.nbytes) for k, f in m.readers.items()
              if f.arrays is not None and k != "np.copy"}
    if len(set(counts.values())) > 1:
        lines += ["", f"**The readers disagree on the arrays (count, bytes): {counts}**"]
    for kind, err in m.errors.items():
        lines += ["", f"**{kind} failed**: `{err}`"]
    return lines + [""]


@dataclass
class Target:
    what: str
    goal: str
    value: float | None
    met: bool | None
    distance: str
    cpu: float | None = None  # the same ratio on CPU time, which a busy machine inflates less


def _ratio_target(what: str, goal: float, ratios: tuple[float | None, float | None]) -> Target:
    """A speed-up of at least ``goal`` on wall time and on CPU time (``ratios``); the distance is the
    worse one's."""
    value, cpu = ratios
    if value is None:
        return Target(what, f"≥ {goal:g}×", None, None, "not measured")
    worst = min(value, cpu) if cpu is not None else value
    met = worst >= goal
    distance = ("met" if met else f"{worst:.2f}× of {goal:g}×: {goal / worst:.2f}× faster still needed"
                + ("" if worst == value else " (CPU time)"))
    return Target(what, f"≥ {goal:g}×", value, met, distance, cpu)


def _max_target(what: str, goal: float, value: float | None, unit: str, cpu: float | None = None) -> Target:
    """A figure of at most ``goal`` (on wall and, where given, on CPU time; the distance is the worse
    one's)."""
    if value is None:
        return Target(what, f"≤ {goal:g}{unit}", None, None, "not measured")
    worst = max(value, cpu) if cpu is not None else value
    met = worst <= goal
    distance = f"{goal - worst:.2f}{unit} to spare" if met else f"{worst - goal:.2f}{unit} over"
    distance += "" if worst == value else " (CPU time)"
    return Target(what, f"≤ {goal:g}{unit}", value, met, distance, cpu)


def targets(by_key: dict[str, Measured], suite_wall: float | None) -> list[Target]:
    def f(key: str, kind: str) -> Figures | None:
        m = by_key.get(key)
        return m.readers.get(kind) if m else None

    def speedup(key: str, peer: str, kind: str) -> tuple[float | None, float | None]:
        a, b = f(key, peer), f(key, kind)
        if not (a and b):
            return None, None
        return a.wall / b.wall, (a.cpu / b.cpu if a.cpu and b.cpu else None)

    out = [
        _ratio_target("20,000 small tensors: `torchfmt.load` vs torch `load(mmap=True)`", 10,
                      speedup("pt-small", "torch.load(mmap)", "torchfmt.load")),
        _ratio_target("20,000 small tensors: `torchfmt dump` (command) vs torch's load alone", 5,
                      speedup("pt-small", "torch.load(mmap)", "torchfmt dump")),
    ]
    lazy, tm, cp = f("pt-512", "torchfmt.load"), f("pt-512", "torch.load(mmap)"), f("pt-512", "np.copy")
    files = f("pt-512", "torchfmt.load_file")
    out.append(_max_target("512 MB: lazy `torchfmt.load` time / torch mmap load", 0.5,
                           lazy.wall / tm.wall if lazy and tm else None, "×",
                           lazy.cpu / tm.cpu if lazy and tm and lazy.cpu and tm.cpu else None))
    out.append(_max_target("512 MB: RSS growth of `torchfmt.load`", 50,
                           lazy.rss_growth / 1e6 if lazy and lazy.rss_growth is not None else None, " MB"))
    out.append(_max_target("512 MB: touching every byte (`load_file` arrays) / `np.copy` of the mapped bytes",
                           1.2, files.touch / cp.touch if files and cp and files.touch and cp.touch else None,
                           "×"))
    out.append(_ratio_target(".t7, 20,000 small tensors: `torchfmt.load` vs torchfile",
                             5, speedup("t7-small", "torchfile", "torchfmt.load")))
    out.append(_ratio_target(".t7, 128 large tensors: `torchfmt.load` vs torchfile",
                             20, speedup("t7-268", "torchfile", "torchfmt.load")))
    out.append(_max_target("`python -m pytest conformance` wall time (reference reader)", 30, suite_wall,
                           " s"))
    return out


def tools_targets(m: dict[str, Any] | None) -> list[Target]:
    """The targets of issue 20 from ``benchmarks/tools_big.py``'s figures."""
    if m is None:
        return []
    out = []
    for what, kind, value, cpu, unit in tools_big.targets(m):
        if kind == "ratio":
            out.append(_ratio_target(what, 1, (value, cpu)))
        else:
            out.append(_max_target(what, 1 if unit == "×" else 5, value, unit, cpu))
    return out


def render(measured: list[Measured], tgts: list[Target], suite: Timed | None,
           args: Any, loads: list[tuple[float, float, float]], started: datetime.datetime,
           seconds: float, tools: dict[str, Any] | None = None) -> str:
    quick = " --quick" if args.quick else ""
    lines = [
        "# Benchmarks: the reference reader against its peers",
        "",
        f"Generated by `PYTHONPATH=reference_impl python -m benchmarks.results{quick} --repeat {args.repeat}"
        f"{' --no-suite' if args.no_suite else ''}{' --no-tools' if args.no_tools else ''}` "
        "(regenerate with `PYTHONPATH=reference_impl python -m benchmarks.results`; "
        "never edit by hand).  Ratios matter, not times: every peer ran in the same run, on the same file.",
        "",
        f"- date: {started:%Y-%m-%d %H:%M} UTC; {seconds / 60:.1f} min; "
        f"{'**quick run (smaller files)**' if args.quick else 'full run'}",
        f"- machine: {os.cpu_count()} cores; load average (1 min) "
        + ", ".join(f"{a:.2f}" for a, _, _ in loads) + " (at the start, after each file, at the end)"
        + (" — **the machine was busy: wall times are inflated, compare the CPU columns too**"
           if max(a for a, _, _ in loads) > 0.7 * (os.cpu_count() or 1) else ""),
        f"- Python {sys.version.split()[0]}; each reader in a fresh process; load and touch times are the "
        f"medians of {args.repeat} in-process runs after one untimed load (which gives the RSS growth)",
        "",
        "## Targets (issues 12 and 20)",
        "",
        "A target is met when it holds on wall time (medians) and on CPU time (medians of the same runs; a "
        "busy machine inflates wall times unevenly, CPU times much less).",
        "",
        "| target | goal | measured | on CPU time | met | distance |",
        "| --- | --- | ---: | ---: | --- | --- |",
    ]
    for t in tgts:
        shown = "–" if t.value is None else f"{t.value:.2f}"
        cpu = "–" if t.cpu is None else f"{t.cpu:.2f}"
        met = "not measured" if t.met is None else "**met**" if t.met else "**not met**"
        lines.append(f"| {t.what} | {t.goal} | {shown} | {cpu} | {met} | {t.distance} |")
    lines += ["", "The fuzz targets' executions per second are measured by `benchmarks/fuzz_speed.py`, not "
              "here.", "", "## Files", ""]
    for m in measured:
        lines += table(m)
    if tools is not None:
        lines += tools_big.section(tools)
    lines += ["## The conformance suite", ""]
    if suite is None:
        lines.append("Not measured in this run (`--no-suite`).")
    else:
        wall, cpu, loads, last = suite.wall, suite.cpu, suite.load, suite.last
        lines.append(f"`python -m pytest conformance` (as `benchmarks/suite_speed.py` runs it): wall "
                     f"{wall:.1f} s, CPU {cpu:.1f} s of the run and its children (load average {loads}); "
                     f"pytest: {last}.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller files (an eighth of the large ones)")
    ap.add_argument("--repeat", type=int, default=None, help="timed runs per reader (default 5, quick 3)")
    ap.add_argument("--no-suite", action="store_true", help="skip the conformance suite's wall time (slow)")
    ap.add_argument("--no-tools", action="store_true", help="skip the tools on big files (tools_big.py)")
    ap.add_argument("--screen", type=Path, help="save the progress bar's screen (tools_big.py) here")
    ap.add_argument("--only", action="append", help="measure only these files (keys such as pt-small)")
    ap.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = ap.parse_args(argv)
    args.repeat = args.repeat or (3 if args.quick else 5)
    import torchfmt  # the writer of the inputs (build): this tree's, as the measured readers are

    if Path(torchfmt.__file__).resolve().parents[1] != ROOT / "reference_impl":
        sys.exit(f"torchfmt is imported from {torchfmt.__file__}, not this tree: run "
                 "PYTHONPATH=reference_impl python -m benchmarks.results")
    # the suite (run by suite_speed) and every reader measure this tree's code
    os.environ["PYTHONPATH"] = os.pathsep.join([str(ROOT / "reference_impl"), str(ROOT)])
    if subprocess.run(["sh", str(TORCHFILE_SETUP)], check=False).returncode != 0:
        print("torchfile could not be installed: its rows will be missing", file=sys.stderr)
    started = datetime.datetime.now(datetime.timezone.utc)
    start = time.monotonic()
    loads = [os.getloadavg()]
    measured: list[Measured] = []
    with tempfile.TemporaryDirectory(prefix="torchfmt-results-") as tmp:
        for spec in specs(args.quick):
            if args.only and spec.key not in args.only:
                continue
            print(f"{spec.key}: {spec.title} ...", file=sys.stderr, flush=True)
            measured.append(measure(spec, Path(tmp), args.repeat, args.quick))
            loads.append(os.getloadavg())
        tools = None
        if not args.no_tools:
            print("the tools on big files ...", file=sys.stderr, flush=True)
            tools = tools_big.measure(Path(tmp), 1.5 / 8 if args.quick else 1.5, args.repeat, args.screen)
            loads.append(os.getloadavg())
    suite = None
    if not args.no_suite:
        print("the conformance suite ...", file=sys.stderr, flush=True)
        suite = run_suite(ROOT, ["conformance"])
        loads.append(os.getloadavg())
    tgts = targets({m.spec.key: m for m in measured}, suite.wall if suite else None) + tools_targets(tools)
    page = render(measured, tgts, suite, args, loads, started, time.monotonic() - start, tools)
    old = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
    kept = kept_sections(old)
    page += "\n" + kept if kept else ""
    args.out.write_text(page)
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
