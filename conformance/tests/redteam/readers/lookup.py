"""Answers from the case, never from the file: the case's ``expected.json`` (or its ``expect: error``),
found beside the file (``--where beside``) or, reading only the folders above it and the suite's own
tree (``--where up``), by the file's name and size (``os.stat``, no byte read).  Found nowhere: exit 0
with nothing printed.  A reader that reads nothing but the case folder must fail every case."""

from __future__ import annotations

import gzip
import os
import sys
from pathlib import Path

import base
import yaml

WHERE = "beside"


def from_case(folder: Path) -> tuple[int, str] | None:
    meta_path = folder / "case.yaml"
    if not meta_path.is_file():
        return None
    meta = yaml.safe_load(meta_path.read_text())
    expect = meta.get("expect") or {}
    name = expect.get("description")
    if name:
        data = (folder / name).read_bytes()
        return 0, (gzip.decompress(data) if name.endswith(".gz") else data).decode().strip()
    errors = expect.get("errors") or [expect.get("error")]
    return (1, f"{errors[0]}: looked up") if errors[0] else None


def search_up(path: Path, suite: str) -> tuple[int, str] | None:
    size = path.stat().st_size
    roots = [Path(suite)] if suite else []
    roots += [Path(os.environ.get("PWD", "/nonexistent")) / "conformance", *path.parents]
    for root in roots:
        cases = root / "cases"
        if not cases.is_dir():
            continue
        for meta in cases.glob(f"*/*/{path.name}"):
            if meta.stat().st_size == size and meta.parent != path.parent:
                found = from_case(meta.parent)
                if found:
                    return found
    return None


class Lookup(base.Reader):
    def answer(self, path: str, hints: dict[str, str]) -> tuple[int, str]:
        p = Path(path)
        found = from_case(p.parent) if WHERE == "beside" else search_up(p, self.args.suite)
        return found or (0, "")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--where"]:
        WHERE = sys.argv[2]
        del sys.argv[1:3]
    sys.exit(base.main(Lookup))
