"""House rules for the Kaitai grammars in ksy/ (gallery style; loadable by the Web IDE).

Compilation itself and the generated parsers' freshness are checked by `bash ksy/build.sh --check`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KSY = ROOT / "ksy"
GRAMMARS = sorted(KSY.glob("*.ksy"))
ANCHOR = re.compile(r"spec/([a-z0-9-]+)\.md#([a-z0-9-]+)")


def _load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def _walk_types(types: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, body in (types or {}).items():
        yield f"{where}/{name}", body
        yield from _walk_types(body.get("types", {}), f"{where}/{name}")


def _keys(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield k
            yield from _keys(v)
    elif isinstance(node, list):
        for v in node:
            yield from _keys(v)


def test_there_are_the_grammars_the_issue_names() -> None:
    named = {"torch_t7", "python_pickle", "pytorch_zip", "pytorch_legacy", "pytorch_tar"}
    assert {p.stem for p in GRAMMARS} >= named


@pytest.mark.parametrize("path", GRAMMARS, ids=lambda p: p.name)
def test_meta_and_docs(path: Path) -> None:
    ksy = _load(path)
    meta = ksy["meta"]
    assert meta["id"] == path.stem
    assert meta["title"] and meta["license"] and meta["file-extension"]
    assert str(meta["ks-version"]) == "0.11"
    assert ksy.get("doc") and ksy.get("doc-ref")
    for where, body in _walk_types(ksy.get("types", {}), path.stem):
        assert body.get("doc"), f"{where} has no doc"
        assert body.get("doc-ref"), f"{where} has no doc-ref"
    for imported in meta.get("imports", []):
        assert (KSY / f"{imported}.ksy").is_file()


@pytest.mark.parametrize("path", GRAMMARS, ids=lambda p: p.name)
def test_no_custom_process_routines(path: Path) -> None:
    """The Web IDE cannot run custom `process:` code; none of the grammars uses any process at all."""
    assert "process" not in set(_keys(_load(path)))


@pytest.mark.parametrize("path", GRAMMARS, ids=lambda p: p.name)
def test_doc_refs_name_spec_anchors(path: Path) -> None:
    """Every cited anchor is prefixed by its spec file's stem and, once that file exists, defined in it."""
    cited = set(ANCHOR.findall(path.read_text()))
    assert cited
    for stem, anchor in cited:
        assert anchor.startswith(stem + "-"), (stem, anchor)
        spec = ROOT / "spec" / f"{stem}.md"
        if spec.is_file():
            assert f'id="{anchor}"' in spec.read_text(), f"{anchor} not defined in spec/{stem}.md"


def test_build_script_compiles_every_grammar() -> None:
    listed = re.search(r"^grammars=\(([^)]*)\)", (KSY / "build.sh").read_text(), re.M)
    assert listed and sorted(listed.group(1).split()) == sorted(p.stem for p in GRAMMARS)
    stems = sorted(p.stem for p in GRAMMARS)
    assert sorted(p.stem for p in (KSY / "generated").glob("*.py")) == stems
    assert sorted(p.stem for p in (ROOT / "spec" / "figures").glob("*.dot")) == stems


def test_compiler_is_pinned() -> None:
    pkg = json.loads((KSY / "package.json").read_text())
    lock = json.loads((KSY / "package-lock.json").read_text())
    assert pkg["devDependencies"]["kaitai-struct-compiler"] == "0.11.0"
    assert lock["packages"]["node_modules/kaitai-struct-compiler"]["version"] == "0.11.0"
    for name in ("torch_t7", "pytorch_zip"):
        head = (KSY / "generated" / f"{name}.py").read_text()[:400]
        assert "API_VERSION" in head or "kaitaistruct" in head
