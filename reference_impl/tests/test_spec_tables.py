"""The spec's generated tables equal what their data renders (spec/README.md#conventions).

The dtype table of spec/tensors.md#tensors-dtype-table comes from ``torchfmt.dtypes.DTYPES``, the
error table of spec/canonical.md#canonical-error-codes from ``torchfmt.errors.ERROR_CODES`` and the
limits table of spec/canonical.md#canonical-node-budget from ``torchfmt.limits.LIMITS``; all are
rendered by spec/tools/tables.py.  Besides comparing each region with its renderer, the tables are parsed
back and compared with the data field by field, so a renderer that drops a column fails too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from spec_scripts import load_script
from torchfmt.dtypes import DTYPES
from torchfmt.errors import ERROR_CODES
from torchfmt.limits import LIMITS

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"


tables = load_script("spec_tools_tables", SPEC / "tools" / "tables.py")


def _rows(body: str) -> list[list[str]]:
    """The cells of a markdown table's body rows (header and separator dropped, backticks removed)."""
    lines = [line for line in body.splitlines() if line.startswith("|")]
    assert len(lines) >= 2 and set(lines[1].replace("|", "").split()) == {"---"}
    return [[c.strip().strip("`") for c in line.strip().strip("|").split("|")] for line in lines[2:]]


def _region(file: str, name: str) -> str:
    regions = tables.regions((SPEC / file).read_text(encoding="utf-8"))
    assert name in regions, f"spec/{file} has no generated region {name!r}"
    return regions[name]


@pytest.mark.parametrize(("file", "name"), [("tensors.md", "dtype-table"), ("canonical.md", "error-codes"),
                                           ("canonical.md", "reader-limits"), ("t7.md", "convert-refusals")])
def test_generated_region_is_what_its_data_renders(file: str, name: str) -> None:
    assert _region(file, name) == tables.GENERATORS[name](), (
        f"spec/{file}: the {name} table is stale; run python spec/tools/tables.py")


def test_dtype_table_lists_every_dtype_with_its_facts() -> None:
    rows = _rows(_region("tensors.md", "dtype-table"))
    assert [r[0] for r in rows] == [d.name for d in DTYPES]
    for row, d in zip(rows, DTYPES, strict=True):
        assert row == [d.name, str(d.itemsize), str(d.swap_unit), d.storage_class or "", d.t7_class or "",
                       "yes" if d.quantized else ""], d.name
        assert d.itemsize % d.swap_unit == 0 and d.itemsize == d.numpy.itemsize, d.name


def test_error_table_is_the_closed_set_in_order() -> None:
    rows = _rows(_region("canonical.md", "error-codes"))
    assert [r[0] for r in rows] == list(ERROR_CODES)
    assert [r[1] for r in rows] == list(ERROR_CODES.values())


@pytest.mark.spec("t7.md#t7-convert-refusals")
def test_refusal_table_is_the_closed_set_in_order() -> None:
    from torchfmt.tools.convert import REFUSALS, ConvertError

    rows = _rows(_region("t7.md", "convert-refusals"))
    assert [r[0] for r in rows] == list(REFUSALS)
    assert [r[1] for r in rows] == list(REFUSALS.values())
    with pytest.raises(ValueError):
        ConvertError("refused", "a word outside the table")


def test_limits_table_lists_every_limit_with_its_value_and_anchors() -> None:
    rows = _rows(_region("canonical.md", "reader-limits"))
    assert [r[0] for r in rows] == [lim.name for lim in LIMITS]
    for row, lim in zip(rows, LIMITS, strict=True):
        assert int(row[1].replace(",", "")) == lim.value, lim.name
        assert row[2] == lim.what, lim.name
        assert re.findall(r"\[([a-z0-9-]+)\]", row[3]) == [a.split("#")[1] for a in lim.anchors], lim.name


def test_the_error_table_sits_in_the_error_codes_requirement() -> None:
    text = (SPEC / "canonical.md").read_text(encoding="utf-8")
    anchor = text.index('<a id="canonical-error-codes">')
    following = text.find("<a id=", anchor + 1)
    assert anchor < text.index("<!-- generated: error-codes;") < following


def test_render_refreshes_its_own_regions_and_leaves_others_alone() -> None:
    example = ("```markdown\n<!-- generated: error-codes; x -->\n| ... |\n"
               "<!-- end generated: error-codes -->\n```\n")
    stale = ("intro\n<!-- generated: error-codes; source: x -->\n| old |\n"
             "<!-- end generated: error-codes -->\n"
             "<!-- generated: pickle-opcodes; source: y -->\n| theirs |\n"
             "<!-- end generated: pickle-opcodes -->\n" + example)
    fresh = tables.render(stale)
    assert tables.regions(fresh)["error-codes"] == tables.error_table()
    assert tables.regions(fresh)["pickle-opcodes"] == "| theirs |\n"
    assert fresh.startswith("intro\n") and fresh.endswith(example)  # examples in code blocks stay
    assert tables.render(fresh) == fresh


def test_tables_tool_check_passes_on_the_committed_spec() -> None:
    assert tables.main(["--check"]) == 0
