"""The traceability matrix holds (spec/README.md#traceability): every MUST requirement has a citation (a
case, a corpus-tier file of conformance/corpus.yaml or a test marked @pytest.mark.spec), every citation
names an existing anchor, anchors are unique and well formed, spec/TRACEABILITY.md is current.

The first tests read the project as it is; the last ones run spec/traceability.py on small made-up trees,
so that each check is known to catch what it claims to.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from spec_scripts import load_script

ROOT = Path(__file__).resolve().parents[2]


trace = load_script("spec_traceability", ROOT / "spec" / "traceability.py")


@pytest.fixture(scope="module")
def matrix():  # type: ignore[no-untyped-def]
    return trace.build(ROOT)


def test_the_spec_has_requirements_and_cases_cite_them(matrix) -> None:  # type: ignore[no-untyped-def]
    files = set(matrix.spec_files)
    assert {"canonical.md", "tensors.md"} <= files
    assert {r.file for r in matrix.requirements} == files
    assert matrix.citations


def test_every_must_requirement_has_a_case(matrix) -> None:  # type: ignore[no-untyped-def]
    missing = [r.ref for r in matrix.uncited_musts()]
    assert not missing, f"{len(missing)} MUST requirements without a case: {missing}"


def test_every_citation_names_an_existing_requirement(matrix) -> None:  # type: ignore[no-untyped-def]
    assert not matrix.dangling, f"{len(matrix.dangling)} citations of missing anchors: {matrix.dangling}"


def test_anchors_are_unique_and_well_formed(matrix) -> None:  # type: ignore[no-untyped-def]
    assert not matrix.duplicates, matrix.duplicates
    assert not matrix.malformed, matrix.malformed


def test_the_matrix_is_current(matrix) -> None:  # type: ignore[no-untyped-def]
    path = ROOT / "spec" / trace.MATRIX_NAME
    assert path.is_file(), "spec/TRACEABILITY.md is missing: run python spec/traceability.py"
    assert path.read_text(encoding="utf-8") == trace.render(matrix), (
        "spec/TRACEABILITY.md is stale: run python spec/traceability.py")


# -- the checks themselves, on made-up trees --------------------------------------------------------

def _tree(tmp_path: Path, specs: dict[str, str], cases: dict[str, list[str]]) -> Path:
    (tmp_path / "spec").mkdir()
    for name, text in specs.items():
        (tmp_path / "spec" / name).write_text(text, encoding="utf-8")
    for case_id, cites in cases.items():
        folder = tmp_path / "conformance" / "cases" / case_id
        folder.mkdir(parents=True)
        (folder / "case.yaml").write_text(f"id: {case_id}\nspec: {cites}\n", encoding="utf-8")
    return tmp_path


SPEC = """# Demo

The key words are those of RFC 2119: MUST, SHOULD, MAY.

## Part

<a id="demo-a"></a>**[demo-a]** A reader MUST do a.

<a id="demo-b"></a>**[demo-b]** A reader SHOULD do b; the `MUST` in code does not count.

- and a list that belongs to demo-b.

<a id="demo-c"></a>**[demo-c]** A reader MAY do c.

```text
MUST in a fenced block does not count
```

<a id="demo-d"></a>**[demo-d]** Informative.

## Other

Explanation that says MUST outside any requirement.

<a id="demo-e"></a>**[demo-e]** Text.

A later paragraph of demo-e: a reader MUST NOT do e.
"""


def test_levels_spans_and_warnings(tmp_path: Path) -> None:
    m = trace.build(_tree(tmp_path, {"demo.md": SPEC, "README.md": "MUST everywhere"}, {}))
    assert [(r.anchor, r.level) for r in m.requirements] == [
        ("demo-a", "MUST"), ("demo-b", "SHOULD"), ("demo-c", "MAY"), ("demo-d", ""), ("demo-e", "MUST")]
    assert m.spec_files == ["demo.md"]
    assert len(m.unanchored) == 1 and m.unanchored[0].startswith("demo.md:23: MUST")
    assert [r.ref for r in m.uncited_musts()] == ["demo.md#demo-a", "demo.md#demo-e"]


def test_citations_cover_musts_and_dangling_ones_are_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"demo.md": SPEC}, {
        "t7-binary/one": ["demo.md#demo-a", "demo.md#demo-e"],
        "t7-binary/two": ["demo.md#demo-zz", "other.md#demo-a", "demo.md"],
    })
    m = trace.build(root)
    assert not m.uncited_musts()
    assert len(m.dangling) == 3
    assert "t7-binary/two cites demo.md#demo-zz (no such requirement)" in m.dangling
    assert "t7-binary/two cites other.md#demo-a (no spec/other.md)" in m.dangling
    assert len(m.errors()) == 3
    text = trace.render(m)
    link = "[t7-binary/one](../conformance/cases/t7-binary/one/case.yaml)"
    assert f"| [demo-a](demo.md#demo-a) | MUST | 1 | {link} |" in text
    assert trace.render(trace.build(root)) == text  # deterministic


def test_duplicate_and_malformed_anchors_are_caught(tmp_path: Path) -> None:
    bad = ('<a id="demo-a"></a>**[demo-a]** MUST.\n\n<a id="demo-a"></a>**[demo-a]** MUST again.\n\n'
           '<a id="demo-x"></a>**[demo-y]** MUST.\n\n<a id="other-z"></a>**[other-z]** MUST.\n\n'
           'Text then <a id="demo-q"></a>**[demo-q]** MUST.\n')
    m = trace.build(_tree(tmp_path, {"demo.md": bad}, {}))
    assert m.duplicates == ["demo.md#demo-a (lines 1 and 3)"]
    assert len(m.malformed) == 3
    assert any("**[demo-y]**" in x for x in m.malformed)
    assert any("prefix demo-" in x for x in m.malformed)
    assert any("must start its paragraph" in x for x in m.malformed)


def test_check_mode_reports_a_stale_matrix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(tmp_path, {"demo.md": '<a id="demo-a"></a>**[demo-a]** A reader MAY.\n'}, {})
    monkeypatch.setattr(trace, "ROOT", root)
    monkeypatch.setattr(trace, "SPEC_DIR", root / "spec")
    assert trace.main(["--check"]) == 1
    assert "stale" in capsys.readouterr().err
    assert trace.main([]) == 0
    assert trace.main(["--check"]) == 0
    (root / "spec" / "demo.md").write_text('<a id="demo-a"></a>**[demo-a]** A reader MUST.\n')
    assert trace.main(["--check"]) == 1


def test_corpus_tier_and_marked_tests_are_citations(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"demo.md": SPEC}, {"t7-binary/one": ["demo.md#demo-e"]})
    (root / "conformance" / "corpus.yaml").write_text(
        "files:\n  pt/wild/a.pt:\n    features: [tar-archive]\n    spec: [demo.md#demo-a, demo.md#demo-zz]\n"
        "  pt/wild/b.pt:\n    spec: demo.md#demo-a\n", encoding="utf-8")
    tests = root / "conformance" / "tests"
    tests.mkdir()
    (tests / "test_x.py").write_text(
        'import pytest\n\npytestmark = [pytest.mark.slow, pytest.mark.spec("demo.md#demo-b")]\n\n\n'
        '@pytest.mark.spec("demo.md#demo-e", "demo.md#demo-c")\ndef test_one():\n    pass\n\n\n'
        '@pytest.mark.spec(REF)\nclass TestTwo:\n    pass\n\n\n'
        '@pytest.mark.parametrize("x", [1])\ndef test_unmarked(x):\n    pass\n', encoding="utf-8")
    (root / "conformance" / "helper.py").write_text('@pytest.mark.spec("demo.md#demo-a")\ndef f(): pass\n')
    m = trace.build(root)
    kinds = sorted((c.kind, c.case, c.target) for c in m.citations if c.kind != "case")
    assert kinds == [
        ("corpus", "corpus/pt/wild/a.pt", "demo.md#demo-a"),
        ("corpus", "corpus/pt/wild/a.pt", "demo.md#demo-zz"),
        ("test", "conformance/tests/test_x.py", "demo.md#demo-b"),
        ("test", "conformance/tests/test_x.py::test_one", "demo.md#demo-c"),
        ("test", "conformance/tests/test_x.py::test_one", "demo.md#demo-e")]
    assert not m.uncited_musts()  # demo-a only by the corpus tier, demo-e by a case and a test
    assert [r.ref for r in m.corpus_only_musts()] == ["demo.md#demo-a"]
    assert m.dangling == ["corpus/pt/wild/a.pt cites demo.md#demo-zz (no such requirement)"]
    assert any("b.pt: spec: is not a list" in u for u in m.unreadable)
    assert any("TestTwo: pytest.mark.spec takes string literals only" in u for u in m.unreadable)
    text = trace.render(m)
    assert "| [demo-a](demo.md#demo-a) | MUST (corpus tier only) | 1 | " \
           "[corpus/pt/wild/a.pt](../conformance/corpus.yaml) (corpus tier) |" in text
    assert ("| [demo-e](demo.md#demo-e) | MUST | 2 | [t7-binary/one](../conformance/cases/t7-binary/one/"
            "case.yaml), [conformance/tests/test_x.py::test_one](../conformance/tests/test_x.py) (test) |"
            ) in text
    assert "MUST requirements cited only by the corpus tier (1;" in text


def test_the_tar_requirements_are_cited_by_committed_cases(matrix) -> None:  # type: ignore[no-untyped-def]
    """The tar requirements past the container were once cited only by the shared corpus's one real tar
    file; the committed pt-tar accept cases (torch 0.1's layout, judged by torch's own tar loader) now
    cite them, so the matrix counts none of them as covered by the corpus tier alone."""
    only = {r.ref for r in matrix.corpus_only_musts()}
    tar = {"pt-tar.md#pt-tar-members", "pt-tar.md#pt-tar-storages", "pt-tar.md#pt-tar-tensors",
           "pt-tar.md#pt-tar-pickle"}
    assert not tar & only, tar & only
    kinds = {c.kind for c in matrix.citations}
    assert kinds == {"case", "corpus", "test"}
