"""Every relative link in spec/*.md resolves: to a file of the project and, with a ``#fragment``, to an
anchor or a heading of that file (spec/README.md#conventions).  Links into spec files that are still being
written fail until those files land, which is the point.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "spec"
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _prose(text: str) -> str:
    """``text`` without fenced code blocks and code spans."""
    out, fenced = [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return "\n".join(out)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def targets(path: Path) -> set[str]:
    """The fragments a link may name in ``path``: its anchors and its headings' slugs."""
    text = path.read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a\s+id="([^"]+)"', text))
    return anchors | {slug(h) for h in re.findall(r"^#{1,6}\s+(.+)$", _prose(text), re.M)}


def _links() -> list[tuple[str, str]]:
    out = []
    for path in sorted(SPEC.glob("*.md")):
        for link in _LINK.findall(_prose(path.read_text(encoding="utf-8"))):
            if not re.match(r"^[a-z][a-z0-9+.-]*:", link):  # skip https:, mailto:
                out.append((path.name, link))
    return out


def test_slugs_follow_github() -> None:
    assert slug("Budgets and expansion bombs") == "budgets-and-expansion-bombs"
    assert slug("The `.t7` hints (v0)") == "the-t7-hints-v0"


@pytest.mark.parametrize(("source", "link"), _links())
def test_link_resolves(source: str, link: str) -> None:
    file, _, fragment = link.partition("#")
    target = (SPEC / file).resolve() if file else SPEC / source
    assert target.exists(), f"spec/{source}: {link}: no {target.relative_to(ROOT)}"
    if fragment:
        assert target.is_file() and target.suffix == ".md", f"spec/{source}: {link}: not a markdown file"
        assert fragment in targets(target), f"spec/{source}: {link}: no anchor or heading {fragment!r}"
