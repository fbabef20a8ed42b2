"""What a Cython build of the reader's hot modules gains on many small ``.pt`` tensors (issue 12).

Issue 12 allows an optional compiled build of the same modules (Cython in pure-Python mode) that falls
back to the plain ones when not built.  This script measures whether one is worth having, on the file
where the reader is slowest against torch: a state_dict of ``--tensors`` float32 tensors of 300 elements
(``layer{i}.weight``), written by ``torch.save``.  It builds, in a temporary copy of
``reference_impl/torchfmt`` (nothing is written into the tree), two variants of :data:`MODULES`:

- ``compiled``: the ``.py`` files cythonized as they are.  ``annotation_typing`` is off: with it on,
  Cython turns the type hints into checks that differ from Python (a ``Records``, a ``dict`` subclass,
  refused where ``dict`` is annotated);
- ``typed``: the same plus the augmenting ``.pxd`` files under ``benchmarks/cython/`` (C ints for the
  pickle fast path's offsets and opcodes and for zip header fields; the ``.py`` files unchanged).

Each variant, the plain modules and torch 2.13's ``load(mmap=True, weights_only=True)`` (the peer) then
load the file in fresh processes, one after the other, for ``--rounds`` rounds of ``--repeat`` loads
each; the table gives the medians of wall and CPU time, and the ratios against the plain modules and
against torch.  CPU time is the figure to read on a shared machine (the load average is printed).
Before timing, every variant's description of the file (:func:`torchfmt.describe`) must equal the plain
one's, and each compiled variant must have imported its extension modules.

    PYTHONPATH=reference_impl python benchmarks/compiled_speed.py [--rounds 3] [--repeat 7]

Needs torch and Cython 3 (``pip install 'cython>=3'``) with a C compiler.

Measured on this 2-core machine (2026-11-26, Cython 3.3.1, CPython 3.11, load average 3.1-3.7, CPU time):
plain 371 ms, compiled as is 334 ms (1.11x), compiled + ``.pxd`` 306 ms (1.21x), torch 918 ms (torch /
typed build 3.0x, against 2.5x plain).  Three quarters of the compiled build's samples (``perf``) lie in
libpython: allocating, freeing and looking up the records a tensor makes, which compiling does not remove
(making those records alone costs about 3.7 us a tensor in plain Python, where 10x torch allows 4.6 us for
everything).  Below the 1.5x that would pay for shipping and testing a second build, so torchfmt has none;
both builds pass the conformance suite (1,014 cases with the corpus) and
``reference_impl/tests/test_tensor_entry.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "reference_impl" / "torchfmt"
PXDS = Path(__file__).resolve().parent / "cython"
#: The modules a ``.pt`` load spends its time in (profile of issue 12): the pickle machine and its
#: tensor fast path, the allowlist, the tensor records, the zip container and its windows.
MODULES = ("torchfmt.pickle.machine", "torchfmt.fast.pickle_entry", "torchfmt.pickle.globals",
           "torchfmt.pickle.rebuild", "torchfmt.pt.zip", "torchfmt.pt.ziparchive", "torchfmt.windows")

#: One reader in a fresh process: ``python -c WORKER kind path repeat``; prints one JSON line.
WORKER = r"""
import json, sys, time
kind, path, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3])
if kind == "torch":
    import torch
    load = lambda p: torch.load(p, mmap=True, weights_only=True)
else:
    import torchfmt
    load = torchfmt.load
    import importlib
    mods = {m: importlib.import_module(m).__file__ for m in sys.argv[4:]}
load(path)
walls, cpus = [], []
for _ in range(repeat):
    w, c = time.perf_counter(), time.process_time()
    obj = load(path)
    cpus.append(time.process_time() - c)
    walls.append(time.perf_counter() - w)
    del obj
print(json.dumps({"wall": walls, "cpu": cpus, "files": mods if kind != "torch" else {}}))
"""

DESCRIBE = "import json, sys, torchfmt; print(json.dumps(torchfmt.describe(sys.argv[1]), sort_keys=True))"


def make_file(folder: Path, tensors: int) -> Path:
    """The issue's file: ``tensors`` float32 tensors of 300 elements in a dict, by ``torch.save``."""
    import torch

    gen = torch.Generator().manual_seed(12)
    path = folder / "small.pt"
    torch.save({f"layer{i}.weight": torch.randn(300, generator=gen) for i in range(tensors)}, path)
    return path


#: Builds :data:`MODULES` in place in the tree ``sys.argv[1]`` (run in a subprocess: the compiler's output
#: is kept, and shown only if the build fails).
BUILD = r"""
import os, sys
from Cython.Build import cythonize
from setuptools import Extension, setup
os.chdir(sys.argv[1])
exts = [Extension(m, [m.replace(".", "/") + ".py"]) for m in sys.argv[2:]]
setup(script_args=["build_ext", "--inplace", "-j", "2"],
      ext_modules=cythonize(exts, language_level=3, quiet=True, nthreads=2,
                            compiler_directives={"annotation_typing": False}))
"""


def build(folder: Path, typed: bool) -> Path:
    """A copy of the package with :data:`MODULES` built in place (plus the ``.pxd`` files if ``typed``);
    the folder to put on ``PYTHONPATH``."""
    tree = folder / ("typed" if typed else "compiled")
    shutil.copytree(PACKAGE, tree / "torchfmt", ignore=shutil.ignore_patterns("__pycache__"))
    if typed:
        for pxd in PXDS.rglob("*.pxd"):
            shutil.copy(pxd, tree / pxd.relative_to(PXDS))
    out = subprocess.run([sys.executable, "-c", BUILD, str(tree), *MODULES], capture_output=True, text=True,
                         check=False)
    if out.returncode != 0:
        raise SystemExit(f"building the {tree.name} variant failed:\n"
                         f"{out.stdout[-3000:]}{out.stderr[-3000:]}")
    return tree


def _env(pythonpath: Path) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(pythonpath), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")


def run(kind: str, pythonpath: Path, path: Path, repeat: int) -> dict[str, list[float]]:
    cmd = [sys.executable, "-c", WORKER, "torch" if kind == "torch" else "torchfmt", str(path), str(repeat),
           *MODULES]
    out = subprocess.run(cmd, capture_output=True, text=True, env=_env(pythonpath), check=True)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if kind in ("compiled", "typed"):
        plain = [m for m, f in r["files"].items() if not f.endswith(".so")]
        if plain:
            raise SystemExit(f"{kind}: {', '.join(plain)} ran as plain Python")
    return r


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tensors", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    try:
        import Cython  # noqa: F401
        import torch  # noqa: F401
    except ImportError as e:
        raise SystemExit(f"compiled_speed needs torch and Cython 3: {e}") from None
    with tempfile.TemporaryDirectory(prefix="torchfmt-compiled-") as tmp:
        folder = Path(tmp)
        path = make_file(folder, args.tensors)
        trees = {"plain": ROOT / "reference_impl", "compiled": build(folder, False),
                 "typed": build(folder, True), "torch": ROOT / "reference_impl"}
        plain = subprocess.run([sys.executable, "-c", DESCRIBE, str(path)], capture_output=True, text=True,
                               env=_env(trees["plain"]), check=True).stdout
        for kind in ("compiled", "typed"):
            got = subprocess.run([sys.executable, "-c", DESCRIBE, str(path)], capture_output=True, text=True,
                                 env=_env(trees[kind]), check=True).stdout
            if got != plain:
                raise SystemExit(f"{kind}: the description differs from the plain modules'")
        load_before = os.getloadavg()
        walls: dict[str, list[float]] = {k: [] for k in trees}
        cpus: dict[str, list[float]] = {k: [] for k in trees}
        for _ in range(args.rounds):
            for kind, tree in trees.items():
                r = run(kind, tree, path, args.repeat)
                walls[kind] += r["wall"]
                cpus[kind] += r["cpu"]
        load_after = os.getloadavg()
    wall = {k: statistics.median(v) for k, v in walls.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    print(f"{args.tensors} float32 tensors of 300 elements (torch.save), {args.rounds} rounds x "
          f"{args.repeat} loads per reader; load average {load_before[0]:.2f} before, "
          f"{load_after[0]:.2f} after")
    print()
    print("| reader | wall ms | CPU ms | CPU: plain / this | CPU: torch mmap / this "
          "| wall: torch mmap / this |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    names = {"plain": "torchfmt.load, plain modules", "compiled": "torchfmt.load, compiled as is",
             "typed": "torchfmt.load, compiled + .pxd", "torch": "torch.load(mmap=True, weights_only=True)"}
    for kind in trees:
        print(f"| {names[kind]} | {wall[kind] * 1e3:.1f} | {cpu[kind] * 1e3:.1f} | "
              f"{cpu['plain'] / cpu[kind]:.2f}x | {cpu['torch'] / cpu[kind]:.2f}x | "
              f"{wall['torch'] / wall[kind]:.2f}x |")


if __name__ == "__main__":
    main()
