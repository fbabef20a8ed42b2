"""spec/t7.md agrees with the reader's tables (facts live once, as data; the spec's tables are checked).

The type-code table against :data:`torchfmt.t7.reader.TYPE_CODES`, the class table against
:data:`torchfmt.t7.classes.CLASSES` and :mod:`torchfmt.dtypes`, the limits against the reader's
constants, and every ``spec/t7.md#anchor`` the code cites against the anchors the spec defines.
"""

from __future__ import annotations

import re
from pathlib import Path

from torchfmt.limits import T7_DEPTH, T7_NDIM, VIEW_BYTES
from torchfmt.t7 import classes, reader

ROOT = Path(__file__).resolve().parents[2]
SPEC = (ROOT / "spec" / "t7.md").read_text(encoding="utf-8")
AGREED = ("t7-encodings t7-binary t7-ascii t7-long-size t7-byte-order t7-detect t7-type-codes t7-nil "
          "t7-number t7-string t7-boolean t7-table t7-reference-index t7-torch-object t7-class-version "
          "t7-tensor t7-storage t7-tensor-offset t7-function t7-tds t7-stream t7-serialize t7-cuda "
          "t7-custom-write").split()


def _anchors() -> set[str]:
    return set(re.findall(r'<a id="([a-z0-9-]+)"></a>\*\*\[\1\]\*\*', SPEC))


def _table_after(anchor: str) -> list[list[str]]:
    start = SPEC.index(f'<a id="{anchor}">')
    rows = []
    for line in SPEC[start:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]  # skip the header and the rule


def test_agreed_anchors_are_defined_each_once() -> None:
    defined = re.findall(r'<a id="([a-z0-9-]+)"></a>', SPEC)
    assert len(defined) == len(set(defined))
    assert set(AGREED) <= set(defined)
    assert all(a.startswith("t7-") for a in defined)


def test_anchors_cited_by_the_code_exist() -> None:
    cited: set[str] = set()
    for path in (ROOT / "reference_impl" / "torchfmt" / "t7").glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"spec/t7\.md((?:#t7-[a-z0-9-]+|, #t7-[a-z0-9-]+)+)", text):
            cited |= set(re.findall(r"#(t7-[a-z0-9-]+)", m.group(1)))
    assert cited and cited <= _anchors(), cited - _anchors()


def test_type_code_table_is_the_reader_table() -> None:
    rows = _table_after("t7-type-codes")
    table = {int(r[0]): (r[1].strip("`"), r[2] == "yes") for r in rows}
    assert table == reader.TYPE_CODES
    kinds = {int(r[0]): r[4] for r in rows}
    for code, kind in reader.FUNCTION_KINDS.items():
        assert f"kind `{kind}`" in kinds[code]


def test_class_table_is_the_class_lookup() -> None:
    listed: dict[str, str] = {}
    for stem, cpu, cuda, dtype, _width in _table_after("t7-tensor"):
        for name in re.findall(r"`([^`]+)`", cpu + cuda):
            listed[name] = dtype.strip("`")
        assert stem in cpu
    known = {name: info.dtype.name for name, info in classes.CLASSES.items()
             if info.kind in (classes.TENSOR, classes.STORAGE) and info.dtype is not None}
    assert listed == known
    cuda = {n for n, info in classes.CLASSES.items() if info.device == "cuda"}
    assert cuda == {n for n in listed if ".Cuda" in n}


def test_limits_in_the_spec_are_the_reader_limits() -> None:
    limits = SPEC[SPEC.index('<a id="t7-limits">'):]
    assert f"allows {T7_DEPTH.value:,}" in limits
    assert VIEW_BYTES.value == 2**28 and "2^28 bytes" in limits
    assert f"ndim above {T7_NDIM.value:,}" in SPEC
