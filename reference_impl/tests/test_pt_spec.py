"""The .pt and pickle spec files define the agreed anchors, and every anchor the readers' docstrings and
these spec files cite exists (.conventions.md, "Spec anchors")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
OURS = ("pickle", "pt-zip", "pt-legacy", "pt-tar", "torchscript")
CODE = [*(ROOT / "reference_impl" / "torchfmt" / "pickle").glob("*.py"),
        *(ROOT / "reference_impl" / "torchfmt" / "pt").glob("*.py")]


def anchors(stem: str) -> set[str]:
    text = (SPEC / f"{stem}.md").read_text(encoding="utf-8")
    defined = re.findall(r'<a id="([a-z0-9-]+)"></a>\*\*\[([a-z0-9-]+)\]\*\*', text)
    assert all(a == b for a, b in defined), f"{stem}.md: anchor and bold id differ"
    return {a for a, _ in defined}


def agreed() -> dict[str, set[str]]:
    """The anchor list of .conventions.md, by file stem."""
    text = (ROOT / ".conventions.md").read_text(encoding="utf-8")
    out: dict[str, set[str]] = {}
    for stem, names in re.findall(r"^- ([a-z0-9-]+)\.md: (.*(?:\n  .*)*)", text, re.M):
        out[stem] = set(re.findall(r"[a-z0-9-]+", names))
    return out


@pytest.mark.parametrize("stem", OURS)
def test_agreed_anchors_are_defined_with_the_file_prefix(stem: str) -> None:
    defined = anchors(stem)
    assert agreed()[stem] <= defined
    assert all(a.startswith(f"{stem}-") for a in defined)


def test_every_cited_anchor_exists() -> None:
    cited: set[tuple[str, str]] = set()
    for path in CODE:
        cited |= set(re.findall(r"spec/([a-z0-9-]+)\.md#([a-z0-9-]+)", path.read_text(encoding="utf-8")))
    for stem in OURS:
        text = (SPEC / f"{stem}.md").read_text(encoding="utf-8")
        cited |= set(re.findall(r"\(([a-z0-9-]+)\.md#([a-z0-9-]+)\)", text))
        cited |= {(stem, a) for a in re.findall(r"\(#([a-z0-9-]+)\)", text) if a.startswith(stem)}
    assert cited
    for stem, anchor in sorted(cited):
        if (SPEC / f"{stem}.md").exists():  # tensors.md and t7.md are another file's to write
            assert anchor in anchors(stem), f"{stem}.md#{anchor} is cited but not defined"
        else:
            assert anchor in agreed().get(stem, set()), f"{stem}.md#{anchor} is not an agreed anchor"
