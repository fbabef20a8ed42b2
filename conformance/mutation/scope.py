"""Which modules are mutated: the reader's parsing and describing code, what ``torchfmt dump`` runs.

Left out: the command line's wiring (``cli.py``, checked by the harness's own tests of the contract), the
Python API around it (``__init__.py``, ``flat.py``, ``display.py``: the ``repr`` of a tensor, no part of a
description or an error), the error classes (``errors.py``: the suite judges
codes, which live in one table), and the tools that are no reading (``writer/``, ``convert.py``,
``slim.py``, ``inspect.py``, ``plot.py``, ``roles.py``, ``sizes.py``).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "reference_impl" / "torchfmt"

#: Module paths under ``reference_impl/torchfmt/``.
TARGETS = (
    "detect.py", "describe.py", "model.py", "dtypes.py", "limits.py", "walk.py", "windows.py",
    "recursion.py",
    "pickle/globals.py", "pickle/machine.py", "pickle/opcodes.py", "pickle/rebuild.py",
    "fast/t7.py", "fast/pickle_entry.py", "fast/pickle_run.py",
    "pt/legacy.py", "pt/tar.py", "pt/torchscript.py", "pt/zip.py", "pt/ziparchive.py",
    "t7/classes.py", "t7/detection.py", "t7/encodings.py", "t7/reader.py",
)


def module_source(module: str, package: Path = PACKAGE) -> str:
    return (package / module).read_text(encoding="utf-8")
