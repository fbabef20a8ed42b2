"""Sections of benchmarks/RESULTS.md that a script of their own writes, between ``<!-- NAME:begin -->`` and
``<!-- NAME:end -->`` (batch_speed.py, capture_memory.py, tools_refusals.py): one writer each, and
benchmarks/results.py, which writes the rest of the page, keeps every one of them as it is."""

from __future__ import annotations

import re
from pathlib import Path

_SECTION = re.compile(r"<!-- ([a-z0-9-]+):begin -->.*?<!-- \1:end -->\n?", re.DOTALL)


def kept(page: str) -> str:
    """Every marked section of ``page``, in its order, each ending with a newline."""
    return "".join(m.group(0).rstrip("\n") + "\n" for m in _SECTION.finditer(page))


def write(out: Path, name: str, text: str) -> None:
    """Put ``text`` (the section, markers included) in place of section ``name`` of ``out``, or at its end."""
    page = out.read_text(encoding="utf-8") if out.is_file() else ""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    if begin in page and end in page:
        page = page[:page.index(begin)] + text.rstrip("\n") + "\n" + page[page.index(end) + len(end) + 1:]
    else:
        page = page.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
    out.write_text(page, encoding="utf-8")
