"""The traceability matrix: every spec requirement and the conformance cases that cite it.

    python spec/traceability.py           # write spec/TRACEABILITY.md
    python spec/traceability.py --check   # change nothing; exit 1 when the matrix is stale or broken

A requirement is a paragraph of ``spec/*.md`` (README.md and TRACEABILITY.md excepted) that starts with
``<a id="ID"></a>**[ID]**``; it runs until the next anchor or heading, and its level is the strongest
RFC 2119 key word in it (MUST, MUST NOT, SHALL, SHALL NOT, REQUIRED -> MUST; SHOULD, SHOULD NOT,
RECOMMENDED, NOT RECOMMENDED -> SHOULD; MAY, OPTIONAL -> MAY; none -> informative).  Key words inside
code spans and fenced blocks do not count.  A requirement is cited, as ``<file>.md#<anchor>``
(spec/README.md#traceability), by three kinds of evidence:

- ``case``: a committed case, in the ``spec:`` list of ``conformance/cases/<format>/<id>/case.yaml``;
- ``corpus``: a file of the corpus tier (read in place from ``../shared/corpus``), in its ``spec:`` list
  in ``conformance/corpus.yaml``; checking it needs the shared corpus;
- ``test``: a test of the suite (``conformance/**/test_*.py``, ``reference_impl/tests/test_*.py``) that
  declares
  ``@pytest.mark.spec("<file>.md#<anchor>", ...)`` on a test function or class, or as the module's
  ``pytestmark``; read with ``ast``, never imported.

The matrix is broken (``--check`` fails, and so do the tests in
``reference_impl/tests/test_spec_traceability.py``) when a MUST requirement has no citation, a citation
names an anchor that does not exist, an anchor is defined twice or malformed, or TRACEABILITY.md is
stale.  Normative key words outside any requirement, and citations that cannot be read, are warnings.

Only the standard library and PyYAML are used, so that the matrix can be built without torchfmt.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

SPEC_DIR = Path(__file__).resolve().parent
ROOT = SPEC_DIR.parent
MATRIX_NAME = "TRACEABILITY.md"
CORPUS_METADATA = "conformance/corpus.yaml"
KINDS = ("case", "corpus", "test")  # the kinds of evidence, in the order the matrix lists them
NOT_REQUIREMENTS = frozenset({"README.md", MATRIX_NAME})
LEVELS = ("MUST", "SHOULD", "MAY", "")  # strongest first; "" is informative

_KEYWORDS = re.compile(r"\b(MUST NOT|MUST|SHALL NOT|SHALL|REQUIRED|SHOULD NOT|SHOULD|NOT RECOMMENDED|"
                       r"RECOMMENDED|MAY|OPTIONAL)\b")
_LEVEL_OF = {"MUST NOT": "MUST", "MUST": "MUST", "SHALL NOT": "MUST", "SHALL": "MUST", "REQUIRED": "MUST",
             "SHOULD NOT": "SHOULD", "SHOULD": "SHOULD", "NOT RECOMMENDED": "SHOULD",
             "RECOMMENDED": "SHOULD", "MAY": "MAY", "OPTIONAL": "MAY"}
_REQUIREMENT = re.compile(r'^<a id="(?P<id>[^"]*)"></a>\*\*\[(?P<bold>[^\]]*)\]\*\*')
_ANY_ANCHOR = re.compile(r'<a\s+(?:name|id)\s*=\s*"([^"]*)"')
_ANCHOR_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_CITATION = re.compile(r"^(?P<file>[a-z0-9][a-z0-9-]*\.md)#(?P<anchor>[a-z0-9][a-z0-9-]*)$")
_HEADING = re.compile(r"^#{1,6}\s")
_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"`+[^`]*`+")
_COMMENT = re.compile(r"<!--.*?-->")
_BOILERPLATE = re.compile(r"RFC\s*2119|RFC\s*8174|BCP\s*14")


@dataclass(frozen=True)
class Requirement:
    """One anchored requirement paragraph of a spec file."""

    file: str
    anchor: str
    level: str
    line: int

    @property
    def ref(self) -> str:
        return f"{self.file}#{self.anchor}"


@dataclass(frozen=True)
class Citation:
    """One cited requirement: a ``spec:`` entry of a case or corpus file, or a test's ``spec`` mark."""

    case: str  # the case id, "corpus/<path>" or the test ("<file>" or "<file>::<name>")
    path: str  # the file that holds the citation, relative to the project root
    target: str  # as written, e.g. "tensors.md#tensors-view"
    kind: str = "case"  # one of KINDS


@dataclass
class Matrix:
    """Requirements, citations and everything wrong with them."""

    spec_files: list[str] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    citations: list[Citation] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    dangling: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    unanchored: list[str] = field(default_factory=list)

    def cases_of(self) -> dict[str, list[Citation]]:
        """Requirement ref -> the citations naming it (every requirement has a key)."""
        out: dict[str, list[Citation]] = {r.ref: [] for r in self.requirements}
        for c in self.citations:
            if c.target in out:
                out[c.target].append(c)
        return out

    def uncited_musts(self) -> list[Requirement]:
        cited = self.cases_of()
        return [r for r in self.requirements if r.level == "MUST" and not cited[r.ref]]

    def corpus_only_musts(self) -> list[Requirement]:
        """MUST requirements that only corpus-tier files cite (checking them needs ../shared/corpus)."""
        cited = self.cases_of()
        return [r for r in self.requirements if r.level == "MUST" and cited[r.ref]
                and all(c.kind == "corpus" for c in cited[r.ref])]

    def errors(self) -> list[str]:
        """Everything that breaks the matrix (warnings excluded)."""
        return ([f"MUST requirement without a citation (case, corpus file or test): {r.ref}"
                 for r in self.uncited_musts()]
                + [f"citation of a missing anchor: {d}" for d in self.dangling]
                + [f"duplicate anchor: {d}" for d in self.duplicates]
                + [f"malformed anchor: {m}" for m in self.malformed])


# -- spec files ------------------------------------------------------------------------------------

def _prose(line: str) -> str:
    return _CODE_SPAN.sub("", _COMMENT.sub("", line))


def _level(text: str) -> str:
    found = {_LEVEL_OF[k] for k in _KEYWORDS.findall(text)}
    return next((lvl for lvl in LEVELS if lvl in found), "")


def parse_spec(path: Path, matrix: Matrix) -> None:
    """Add ``path``'s requirements to ``matrix``, and whatever is wrong with its anchors."""
    name, stem = path.name, path.stem
    lines = path.read_text(encoding="utf-8").splitlines()
    seen: dict[str, int] = {}
    current: tuple[str, int] | None = None  # (anchor, line) of the open requirement
    text: list[str] = []
    paragraph: list[tuple[int, str]] = []  # prose outside any requirement, for the warnings

    def close() -> None:
        nonlocal current
        if current is not None:
            matrix.requirements.append(Requirement(name, current[0], _level("\n".join(text)), current[1]))
        current = None
        text.clear()

    def flush_paragraph() -> None:
        body = " ".join(t for _, t in paragraph)
        words = sorted(set(_KEYWORDS.findall(body)))
        if words and not _BOILERPLATE.search(body):
            matrix.unanchored.append(f"{name}:{paragraph[0][0]}: {', '.join(words)} outside a requirement")
        paragraph.clear()

    in_fence = False
    for no, raw in enumerate(lines, 1):
        if _FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        for anchor in _ANY_ANCHOR.findall(raw):
            if anchor in seen:
                matrix.duplicates.append(f"{name}#{anchor} (lines {seen[anchor]} and {no})")
            else:
                seen[anchor] = no
        m = _REQUIREMENT.match(raw)
        if m:
            close()
            flush_paragraph()
            anchor, bold = m["id"], m["bold"]
            if bold != anchor:
                matrix.malformed.append(f"{name}:{no}: <a id=\"{anchor}\"> but **[{bold}]**")
            if not _ANCHOR_ID.match(anchor) or not anchor.startswith(stem + "-"):
                matrix.malformed.append(f"{name}:{no}: {anchor!r} is not lowercase-hyphenated with the "
                                        f"prefix {stem}-")
            current = (anchor, no)
            text.append(_prose(raw[m.end():]))
            continue
        if _ANY_ANCHOR.search(raw) and "**[" in raw:
            matrix.malformed.append(f"{name}:{no}: a requirement anchor must start its paragraph's line")
        if _HEADING.match(raw):
            close()
            flush_paragraph()
            continue
        if current is not None:
            text.append(_prose(raw))
        elif raw.strip():
            paragraph.append((no, _prose(raw)))
        else:
            flush_paragraph()
    close()
    flush_paragraph()


# -- cases -----------------------------------------------------------------------------------------

def parse_cases(root: Path, matrix: Matrix) -> None:
    """Add every case's ``spec:`` citations to ``matrix``."""
    cases_dir = root / "conformance" / "cases"
    if not cases_dir.is_dir():
        return
    for path in sorted(cases_dir.rglob("case.yaml")):
        rel = path.relative_to(root).as_posix()
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
            matrix.unreadable.append(f"{rel}: {type(e).__name__}")
            continue
        if not isinstance(data, dict):
            matrix.unreadable.append(f"{rel}: not a mapping")
            continue
        case_id = data.get("id") if isinstance(data.get("id"), str) else path.parent.relative_to(
            cases_dir).as_posix()
        spec = data.get("spec")
        if not isinstance(spec, list) or not all(isinstance(s, str) for s in spec):
            matrix.unreadable.append(f"{rel}: spec: is not a list of strings")
            continue
        for target in spec:
            matrix.citations.append(Citation(case_id, rel, target))


def parse_corpus(root: Path, matrix: Matrix) -> None:
    """Add the ``spec:`` citations of ``conformance/corpus.yaml`` (corpus-tier files) to ``matrix``."""
    path = root / CORPUS_METADATA
    if not path.is_file():
        return
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        matrix.unreadable.append(f"{CORPUS_METADATA}: {type(e).__name__}")
        return
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        matrix.unreadable.append(f"{CORPUS_METADATA}: no files: mapping")
        return
    for name, entry in files.items():
        spec = entry.get("spec", []) if isinstance(entry, dict) else None
        if not isinstance(spec, list) or not all(isinstance(s, str) for s in spec):
            matrix.unreadable.append(f"{CORPUS_METADATA}: {name}: spec: is not a list of strings")
            continue
        for target in spec:
            matrix.citations.append(Citation(f"corpus/{name}", CORPUS_METADATA, target, "corpus"))


def _spec_marks(decorators: list[ast.expr]) -> list[ast.Call]:
    """The ``pytest.mark.spec(...)`` calls among ``decorators`` (or a ``pytestmark`` value's items)."""
    return [d for d in decorators if isinstance(d, ast.Call) and ast.unparse(d.func) == "pytest.mark.spec"]


def parse_tests(root: Path, matrix: Matrix) -> None:
    """Add the ``@pytest.mark.spec`` citations of the suite's tests (``conformance/**/test_*.py`` and
    ``reference_impl/tests/test_*.py``)."""
    paths = [p for folder in (root / "conformance", root / "reference_impl" / "tests") if folder.is_dir()
             for p in sorted(folder.rglob("test_*.py"))]
    for path in paths:
        rel = path.relative_to(root).as_posix()
        if rel.startswith("conformance/cases/"):
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
        except (OSError, UnicodeDecodeError, SyntaxError) as e:
            matrix.unreadable.append(f"{rel}: {type(e).__name__}")
            continue
        marked: list[tuple[str, ast.Call]] = []
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
                items = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
                marked += [(rel, call) for call in _spec_marks(items)]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                marked += [(f"{rel}::{node.name}", call) for call in _spec_marks(node.decorator_list)]
        for test, call in marked:
            if call.keywords or not call.args or not all(
                    isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args):
                matrix.unreadable.append(f"{test}: pytest.mark.spec takes string literals only")
                continue
            for arg in call.args:
                matrix.citations.append(Citation(test, rel, str(arg.value), "test"))


def build(root: Path = ROOT) -> Matrix:
    """The matrix of the project at ``root``."""
    matrix = Matrix()
    spec_dir = root / "spec"
    for path in sorted(spec_dir.glob("*.md")):
        if path.name not in NOT_REQUIREMENTS:
            matrix.spec_files.append(path.name)
            parse_spec(path, matrix)
    parse_cases(root, matrix)
    parse_corpus(root, matrix)
    parse_tests(root, matrix)
    anchors = {r.ref for r in matrix.requirements}
    for c in matrix.citations:
        m = _CITATION.match(c.target)
        if not m:
            matrix.dangling.append(f"{c.case} cites {c.target!r}, which is not <file>.md#<anchor>")
        elif c.target not in anchors:
            why = "no such requirement" if m["file"] in matrix.spec_files else f"no spec/{m['file']}"
            matrix.dangling.append(f"{c.case} cites {c.target} ({why})")
    return matrix


# -- the document ----------------------------------------------------------------------------------

def _cell(level: str) -> str:
    return level or "—"


_TAG = {"case": "", "corpus": " (corpus tier)", "test": " (test)"}


def _link(c: Citation) -> str:
    """A citation's link: to the case.yaml, to corpus.yaml (tagged corpus tier) or to the test file."""
    return f"[{c.case}](../{c.path}){_TAG[c.kind]}"


def _order(c: Citation) -> tuple[int, str, str]:
    return (KINDS.index(c.kind), c.case, c.path)


def render(matrix: Matrix) -> str:
    """TRACEABILITY.md for ``matrix``: a pure function of it, so that staleness is an equality test."""
    cases_of = matrix.cases_of()
    by_file: dict[str, list[Requirement]] = defaultdict(list)
    for r in matrix.requirements:
        by_file[r.file].append(r)
    citers = {kind: sorted({c.case for c in matrix.citations if c.kind == kind}) for kind in KINDS}
    count = {kind: sum(c.kind == kind for c in matrix.citations) for kind in KINDS}
    out = [
        "# Traceability matrix",
        "",
        "<!-- Generated by spec/traceability.py; do not edit. Regenerate: python spec/traceability.py -->",
        "",
        "Every requirement of the spec (an anchored paragraph of `spec/*.md`), its level (the strongest "
        "RFC 2119 key word in it; — for none) and what cites it: committed conformance cases (the `spec:` "
        "list of their `case.yaml`), files of the corpus tier (their `spec:` list in "
        "[conformance/corpus.yaml](../conformance/corpus.yaml), marked *corpus tier*: they are read in place "
        "from `../shared/corpus`, and without it their requirements go unchecked) and tests of the suite "
        "that declare `@pytest.mark.spec` (marked *test*). How to read it and how to cite requirements: "
        "[README.md](README.md#traceability).",
        "",
        "## Summary",
        "",
        "| spec file | requirements | MUST | SHOULD | MAY | — | MUST without a citation | citations "
        "| of which corpus tier | of which tests |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    totals = [0] * 9
    for name in matrix.spec_files:
        reqs = by_file.get(name, [])
        counts = [len(reqs)] + [sum(r.level == lvl for r in reqs) for lvl in LEVELS]
        counts.append(sum(r.level == "MUST" and not cases_of[r.ref] for r in reqs))
        counts.append(sum(len(cases_of[r.ref]) for r in reqs))
        counts += [sum(c.kind == kind for r in reqs for c in cases_of[r.ref]) for kind in ("corpus", "test")]
        totals = [t + c for t, c in zip(totals, counts, strict=True)]
        out.append(f"| [{name}]({name}) | " + " | ".join(map(str, counts)) + " |")
    out.append("| **all** | " + " | ".join(f"**{t}**" for t in totals) + " |")
    out += ["", f"Citing at least one requirement: cases {len(citers['case'])}, corpus-tier files "
                f"{len(citers['corpus'])}, tests {len(citers['test'])}. Citations: {len(matrix.citations)} "
                f"({count['case']} by cases, {count['corpus']} by the corpus tier, {count['test']} by "
                f"tests).", ""]

    problems = [
        ("MUST requirements without a citation", [f"[{r.ref}]({r.ref})" for r in matrix.uncited_musts()]),
        ("Citations of anchors that do not exist", matrix.dangling),
        ("Duplicate anchors", matrix.duplicates),
        ("Malformed anchors", matrix.malformed),
        ("Unreadable citations (warning)", matrix.unreadable),
        ("Normative key words outside a requirement (warning)", matrix.unanchored),
    ]
    out += ["## Problems", ""]
    if not any(items for _, items in problems):
        out += ["None.", ""]
    for title, items in problems:
        if items:
            out += [f"### {title} ({len(items)})", ""] + [f"- {x}" for x in items] + [""]

    out += ["## Corpus tier and tests", "",
            "The citations that are not committed cases, by what holds them.", ""]
    only_corpus = matrix.corpus_only_musts()
    corpus_only = [f"[{r.ref}]({r.ref})" for r in only_corpus]
    out += [f"MUST requirements cited only by the corpus tier ({len(corpus_only)}; they need "
            f"`../shared/corpus`): " + (", ".join(corpus_only) if corpus_only else "none") + ".", ""]
    held: dict[tuple[int, str, str], list[str]] = defaultdict(list)
    for c in matrix.citations:
        if c.kind != "case":
            held[_order(c)].append(c.target)
    if held:
        out += ["| cited by | kind | requirements |", "| --- | --- | --- |"]
        for (kind, case, path), targets in sorted(held.items()):
            refs = ", ".join(f"[{t}]({t})" for t in targets)
            out.append(f"| [{case}](../{path}) | {'corpus tier' if KINDS[kind] == 'corpus' else 'test'} "
                       f"| {refs} |")
    else:
        out.append("None.")
    out.append("")

    for name in matrix.spec_files:
        out += [f"## {name}", "", "| requirement | level | citations | cited by |",
                "| --- | --- | --- | --- |"]
        for r in by_file.get(name, []):
            cites = sorted({(_order(c), _link(c)) for c in cases_of[r.ref]})
            links = ", ".join(link for _, link in cites)
            flag = ""
            if r.level == "MUST" and not cites:
                flag = " **(no citation)**"
            elif r in only_corpus:
                flag = " (corpus tier only)"
            out.append(f"| [{r.anchor}]({r.ref}) | {_cell(r.level)}{flag} | {len(cites)} |"
                       + (f" {links} |" if links else " |"))
        if not by_file.get(name):
            out.append("| (no requirements) | | | |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if TRACEABILITY.md is stale or the matrix is broken")
    args = parser.parse_args(argv)
    matrix = build(ROOT)
    text = render(matrix)
    target = SPEC_DIR / MATRIX_NAME
    errors = matrix.errors()
    if args.check:
        current = target.read_text(encoding="utf-8") if target.is_file() else ""
        if current != text:
            errors.append(f"spec/{MATRIX_NAME} is stale: run python spec/traceability.py")
    else:
        target.write_text(text, encoding="utf-8")
    for e in errors:
        print(e, file=sys.stderr)
    musts = sum(r.level == "MUST" for r in matrix.requirements)
    kinds = ", ".join(f"{sum(c.kind == k for c in matrix.citations)} by {k}" for k in ("corpus", "test"))
    print(f"{len(matrix.requirements)} requirements ({musts} MUST, {len(matrix.uncited_musts())} without a "
          f"citation), {len(matrix.citations)} citations ({kinds}), {len(errors)} problems", file=sys.stderr)
    return 1 if args.check and errors else 0


if __name__ == "__main__":
    sys.exit(main())
