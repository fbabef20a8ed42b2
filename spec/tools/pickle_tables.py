"""Regenerate (or, with --check, verify) the generated tables of spec/pickle.md.

The tables are rendered by the modules that hold the facts: ``torchfmt.pickle.opcodes.markdown_table``
(the opcode table) and ``torchfmt.pickle.globals.markdown_table`` / ``kinds_table`` (the allowlist and
its argument kinds).  Each table sits between ``<!-- generated: NAME ... -->`` and
``<!-- end generated: NAME -->`` lines; everything else in the file is left alone.

    python spec/tools/pickle_tables.py          # rewrite spec/pickle.md
    python spec/tools/pickle_tables.py --check  # exit 1 if the file differs from the code
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from torchfmt.pickle import globals as allowlist
from torchfmt.pickle import opcodes

SPEC = Path(__file__).resolve().parents[1] / "pickle.md"
TABLES: dict[str, Callable[[], str]] = {
    "pickle-opcodes": opcodes.markdown_table,
    "pickle-globals": allowlist.markdown_table,
    "pickle-kinds": allowlist.kinds_table,
}


def render(text: str) -> str:
    """``text`` with every generated block replaced by what the code renders now."""
    for name, table in TABLES.items():
        start, end = rf"<!-- generated: {name}\b[^\n]*-->\n", rf"<!-- end generated: {name} -->"
        block = re.compile(f"({start})(.*?)({end})", re.S)
        if not block.search(text):
            raise SystemExit(f"{SPEC}: no generated block {name!r}")
        text = block.sub(lambda m, t=table: m.group(1) + t() + m.group(3), text)
    return text


def main(argv: list[str]) -> int:
    text = SPEC.read_text(encoding="utf-8")
    new = render(text)
    if "--check" in argv:
        if new != text:
            print(f"{SPEC} is stale: run python spec/tools/pickle_tables.py", file=sys.stderr)
            return 1
        return 0
    SPEC.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
