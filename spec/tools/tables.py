"""The spec's generated tables, rendered from the one place each fact lives.

Each table sits in a spec file between two marker comments::

    <!-- generated: NAME; source: ...; regenerate: python spec/tools/tables.py -->
    | ... the table ... |
    <!-- end generated: NAME -->

``python spec/tools/tables.py`` rewrites every marked region named in :data:`GENERATORS` (regions of
other names belong to other tools, e.g. ``spec/tools/pickle_tables.py``, and are left alone);
``--check`` only reports stale regions (exit status 1).  The tests in
``reference_impl/tests/test_spec_tables.py`` fail when a region differs from what its generator renders.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from torchfmt.dtypes import DTYPES
from torchfmt.errors import ERROR_CODES
from torchfmt.limits import LIMITS

SPEC_DIR = Path(__file__).resolve().parents[1]

_REGION = re.compile(
    r"(?P<begin><!-- generated: (?P<name>[a-z0-9-]+);[^\n]*-->\n)(?P<body>.*?)"
    r"(?P<end><!-- end generated: (?P=name) -->)",
    re.DOTALL,
)
_FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A GitHub-flavoured markdown table, one line per row, ending in a newline."""
    def line(cells: Sequence[str]) -> str:
        return "|" + "|".join(f" {c} " if c else " " for c in cells) + "|"

    return "\n".join([line(header), line(["---"] * len(header)), *map(line, rows)]) + "\n"


def _code(text: str | None) -> str:
    return f"`{text}`" if text else ""


def dtype_table() -> str:
    """The dtype table of spec/tensors.md#tensors-dtype-table, from :data:`torchfmt.dtypes.DTYPES`."""
    header = ("dtype", "width (bytes)", "swap unit (bytes)", "PyTorch storage class", "t7 class",
              "quantized")
    rows = [(_code(d.name), str(d.itemsize), str(d.swap_unit), _code(d.storage_class), _code(d.t7_class),
             "yes" if d.quantized else "") for d in DTYPES]
    return markdown_table(header, rows)


def dtype_arith_table() -> str:
    """Per dtype, how torch negates it and whether it may require grad (spec/tensors.md#tensors-conj-neg,
    #tensors-requires-grad), from :data:`torchfmt.dtypes.DTYPES`."""
    header = ("dtype", "negation", "conjugate bit", "both bits", "differentiable")
    rows = [(_code(d.name), _code(d.negation) or "none", "yes" if d.is_complex else "",
             "yes" if d.is_complex and d.neg_conj else "", "yes" if d.differentiable else "")
            for d in DTYPES]
    return markdown_table(header, rows)


def tensor_properties_table() -> str:
    """The names a tensor's pickled state may not set (spec/tensors.md#tensors-python-state), from
    :data:`torchfmt.pickle.rebuild.TENSOR_PROPERTIES`."""
    from torchfmt.pickle.rebuild import TENSOR_PROPERTIES

    return markdown_table(("property",), [(_code(n),) for n in sorted(TENSOR_PROPERTIES)])


def error_table() -> str:
    """The closed set of error codes of spec/canonical.md#canonical-error-codes, from
    :data:`torchfmt.errors.ERROR_CODES` (same names, same order)."""
    rows = [(_code(code), meaning) for code, meaning in ERROR_CODES.items()]
    return markdown_table(("code", "meaning"), rows)


def _anchor_link(anchor: str, here: str = "canonical.md") -> str:
    file, name = anchor.split("#")
    return f"[{name}](#{name})" if file == here else f"[{name}]({anchor})"


def limits_table() -> str:
    """The reader limits of spec/canonical.md#canonical-node-budget, from :data:`torchfmt.limits.LIMITS`
    (name, value, what is counted, the requirements that state it)."""
    rows = [(_code(lim.name), f"{lim.value:,}", lim.what, ", ".join(map(_anchor_link, lim.anchors)))
            for lim in LIMITS]
    return markdown_table(("limit", "value", "counts", "stated in"), rows)


def t7_hints_table() -> str:
    """The hints the suite hands a reader (spec/canonical.md#canonical-t7-hints): each ``case.yaml`` key,
    its environment variable and the values it may take, from :data:`torchfmt.t7.encodings.HINT_ENV` and
    :data:`~torchfmt.t7.encodings.HINT_VALUES`."""
    from torchfmt.t7.encodings import HINT_ENV, HINT_VALUES

    rows = [(_code(key), _code(var), ", ".join(_code(str(v)) for v in HINT_VALUES[key]))
            for key, var in HINT_ENV.items()]
    return markdown_table(("hint (`case.yaml` key)", "environment variable", "values"), rows)


def refusal_table() -> str:
    """What ``torchfmt convert`` and ``slim`` refuse (spec/t7.md#t7-convert-refusals), from
    :data:`torchfmt.tools.convert.REFUSALS` (same words, same order)."""
    from torchfmt.tools.convert import REFUSALS

    return markdown_table(("feature", "refused"), [(_code(f), why) for f, why in REFUSALS.items()])


#: Region name -> the function that renders it.
GENERATORS: dict[str, Callable[[], str]] = {
    "dtype-table": dtype_table,
    "dtype-arith": dtype_arith_table,
    "tensor-properties": tensor_properties_table,
    "error-codes": error_table,
    "reader-limits": limits_table,
    "convert-refusals": refusal_table,
    "t7-hints": t7_hints_table,
}


def _fenced(text: str) -> list[tuple[int, int]]:
    """Character ranges of fenced code blocks (a marker shown as an example there is no region)."""
    spans, start, pos = [], None, 0
    for line in text.splitlines(keepends=True):
        if _FENCE.match(line):
            if start is None:
                start = pos
            else:
                spans.append((start, pos + len(line)))
                start = None
        pos += len(line)
    return spans


def _matches(text: str) -> list[re.Match[str]]:
    fences = _fenced(text)
    return [m for m in _REGION.finditer(text) if not any(a <= m.start() < b for a, b in fences)]


def regions(text: str) -> dict[str, str]:
    """The generated regions of a spec file's text: name -> current body."""
    return {m["name"]: m["body"] for m in _matches(text)}


def render(text: str) -> str:
    """``text`` with every generated region replaced by what its generator renders now."""
    out, pos = [], 0
    for m in _matches(text):
        gen = GENERATORS.get(m["name"])
        if gen is not None:
            out += [text[pos:m.start()], m["begin"], gen(), m["end"]]
            pos = m.end()
    return "".join(out) + text[pos:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report stale regions, change nothing")
    args = parser.parse_args(argv)
    stale = []
    for path in sorted(SPEC_DIR.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if not set(regions(text)) & set(GENERATORS):
            continue
        new = render(text)
        if new != text:
            stale.append(path.name)
            if not args.check:
                path.write_text(new, encoding="utf-8")
    verb = "stale" if args.check else "regenerated"
    for name in stale:
        print(f"{verb}: spec/{name}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
