"""Every requirement anchor is prefixed by its file's stem, and every anchor that the reader's docstrings,
the grammars and the spec files cite exists (spec/README.md#conventions)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
STEMS = sorted(p.stem for p in SPEC.glob("*.md") if p.stem not in ("README", "TRACEABILITY"))
CITERS = [*(ROOT / "reference_impl" / "torchfmt").rglob("*.py"), *(ROOT / "ksy").glob("*.ksy")]


def anchors(stem: str) -> set[str]:
    text = (SPEC / f"{stem}.md").read_text(encoding="utf-8")
    defined = re.findall(r'<a id="([a-z0-9-]+)"></a>\*\*\[([a-z0-9-]+)\]\*\*', text)
    assert all(a == b for a, b in defined), f"{stem}.md: anchor and bold id differ"
    return {a for a, _ in defined}


@pytest.mark.parametrize("stem", STEMS)
def test_anchors_carry_the_file_prefix(stem: str) -> None:
    defined = anchors(stem)
    assert defined, f"{stem}.md defines no requirement"
    assert all(a.startswith(f"{stem}-") for a in defined)


def test_every_cited_anchor_exists() -> None:
    cited: set[tuple[str, str]] = set()
    for path in CITERS:
        cited |= set(re.findall(r"spec/([a-z0-9-]+)\.md#([a-z0-9-]+)", path.read_text(encoding="utf-8")))
    for stem in STEMS:
        text = (SPEC / f"{stem}.md").read_text(encoding="utf-8")
        cited |= set(re.findall(r"\(([a-z0-9-]+)\.md#([a-z0-9-]+)\)", text))
        cited |= {(stem, a) for a in re.findall(r"\(#([a-z0-9-]+)\)", text) if a.startswith(stem)}
    assert len(cited) > 50
    known = {stem: anchors(stem) for stem in STEMS}
    missing = sorted(f"{s}.md#{a}" for s, a in cited
                     if s in known and a not in known[s])
    assert not missing, f"cited but not defined: {missing}"
