"""``conformance/RESULTS.md``: the readers matrix, made from the stored results alone (harness/results.py).

Sections: the readers (what each wraps, its version, how it is judged); a summary per case category and
per format (pass / fail / declined, and cases the reader's last run did not see); failures by kind (a crash,
a time-out, a contract breach, code that ran, versus rejected-wrongly, a wrong code, accepted-wrongly and a
wrong description); a per-feature view; the cases where readers disagree; each reader's findings.
Nothing here runs a reader, so the page can be checked anywhere (conformance/test_results_page.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from .readers import metadata
from .results import Finding, ReaderResults, unshown
from .runner import BREAKAGES
from .vocabulary import FORMATS

COLUMNS = ("accept", "reject", "impl", "corpus")
#: Failure kinds in the order the page shows them; contract breaks first.
KINDS = (*BREAKAGES, "rejected-wrongly", "wrong-code", "accepted-wrongly", "wrong-description",
         "declined", "invalid-case", "not-run", "batch-differs", "harness-error")
SYMBOL = {"pass": "pass", "declined": "declined"}


def counts(records: Iterable[dict]) -> Counter:
    return Counter(r["outcome"] for r in records)


def cell(c: Counter, not_run: int = 0) -> str:
    if not sum(c.values()) and not not_run:
        return "—"
    text = f"{c['pass']} pass / {c['fail']} fail / {c['declined']} declined"
    return text + (f" / {not_run} not run" if not_run else "")


def absent_row(name: str, width: int, why: str) -> str:
    return f"| {name} | " + " | ".join([f"absent ({why})"] + ["absent"] * (width - 1)) + " |"


def summary_table(readers: Sequence[ReaderResults], committed: dict[str, dict]) -> list[str]:
    """reader x case column; the README shows this table too."""
    lines = ["| reader | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for r in readers:
        if r.absent:
            lines.append(absent_row(r.reader, len(COLUMNS), r.absent))
            continue
        by_col: dict[str, list[dict]] = defaultdict(list)
        for rec in r.cases.values():
            by_col[rec["column"]].append(rec)
        missing = Counter(committed[c]["column"] for c in committed if c not in r.cases)
        cells = [cell(counts(by_col[c]), missing[c]) for c in COLUMNS]
        lines.append(f"| {r.reader} | " + " | ".join(cells) + " |")
    return lines


def format_table(readers: Sequence[ReaderResults]) -> list[str]:
    lines = ["| reader | " + " | ".join(FORMATS) + " |", "|---" * (len(FORMATS) + 1) + "|"]
    for r in readers:
        if r.absent:
            continue
        by_fmt: dict[str, list[dict]] = defaultdict(list)
        for rec in r.cases.values():
            by_fmt[rec["format"]].append(rec)
        lines.append(f"| {r.reader} | " + " | ".join(cell(counts(by_fmt[f])) for f in FORMATS) + " |")
    return lines


def kind_table(readers: Sequence[ReaderResults]) -> list[str]:
    shown = [k for k in KINDS if any(rec["kind"] == k and rec["outcome"] == "fail"
                                     for r in readers for rec in r.cases.values())]
    lines = ["| reader | " + " | ".join(shown) + " |", "|---" * (len(shown) + 1) + "|"]
    for r in readers:
        if r.absent:
            continue
        c = Counter(rec["kind"] for rec in r.cases.values() if rec["outcome"] == "fail")
        lines.append(f"| {r.reader} | " + " | ".join(str(c[k]) if c[k] else "" for k in shown) + " |")
    return lines


def feature_table(readers: Sequence[ReaderResults]) -> list[str]:
    """Features where at least one reader fails a case: failed / run, per reader."""
    present = [r for r in readers if not r.absent]
    tally: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    for r in present:
        for rec in r.cases.values():
            for f in rec["features"]:
                tally[f][r.reader][rec["outcome"]] += 1
    rows = sorted(f for f, per in tally.items() if any(c["fail"] for c in per.values()))
    lines = ["| feature | " + " | ".join(r.reader for r in present) + " |", "|---" * (len(present) + 1) + "|"]
    for f in rows:
        cells = []
        for r in present:
            c = tally[f][r.reader]
            ran = c["pass"] + c["fail"]
            cells.append("" if not ran else (f"**{c['fail']}/{ran}**" if c["fail"] else f"{ran}/{ran} ok"))
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    return lines


def disagreement_table(readers: Sequence[ReaderResults]) -> list[str]:
    """Cases that at least one reader passes and another fails (declined and not-run cells are blank)."""
    present = [r for r in readers if not r.absent]
    ids = sorted({i for r in present for i in r.cases})
    lines = ["| case | " + " | ".join(r.reader for r in present) + " |", "|---" * (len(present) + 1) + "|"]
    for i in ids:
        recs = [r.cases.get(i) for r in present]
        outcomes = {rec["outcome"] for rec in recs if rec}
        if not {"pass", "fail"} <= outcomes:
            continue
        cells = ["" if not rec or rec["outcome"] == "declined" else
                 "pass" if rec["outcome"] == "pass" else f"**{rec['kind']}**" for rec in recs]
        lines.append(f"| {i} | " + " | ".join(cells) + " |")
    return lines


def reader_table(readers: Sequence[ReaderResults]) -> list[str]:
    lines = ["| reader | wraps | language | version | last run | judged |", "|---" * 6 + "|"]
    for r in readers:
        meta = metadata(r.reader)
        judged = []
        if meta.get("inert"):
            judged.append("inert by design: gadget cases judged by the inert mode "
                          "(canonical.md#canonical-inert)")
        if meta.get("trusted_only"):
            judged.append("runs code from files: given only the real writers' accept cases")
        if meta.get("unexpressed"):
            judged.append("compared without " + ", ".join(f"`{f}`" for f in meta["unexpressed"]))
        run = f"absent: {r.absent}" if r.absent else f"{r.date}, {len(r.cases)} cases"
        lines.append(f"| {r.reader} | {meta.get('reader', r.reader)} | {meta.get('language', 'Python')} | "
                     f"{r.version} | {run} | {'; '.join(judged) or 'strict'} |")
    return lines


def findings_section(readers: Sequence[ReaderResults], found: dict[str, list[Finding]]) -> list[str]:
    lines: list[str] = []
    for r in readers:
        items = found.get(r.reader, [])
        if not items:
            continue
        lines += ["", f"### {r.reader}", ""]
        for f in items:
            cases = ", ".join(f"`{c}`" for c in f.cases)
            missing = [] if r.absent else unshown(f, r)
            note = f" (not shown by the last run: {', '.join(missing)})" if missing else ""
            lines.append(f"- {f.text} Cases: {cases}.{note}")
    return lines


def page(readers: Sequence[ReaderResults], committed: dict[str, dict], found: dict[str, list[Finding]],
         header: str) -> str:
    parts = [
        "# Conformance results: every reader over the suite", "", header, "",
        "Outcomes per case live in [results/](results/) (one file per reader). A reader shown absent was "
        "not installed where its results were made; it is never counted as passing. *Not run*: committed "
        "cases the reader's last run did not see.", "",
        "## Readers", "", *reader_table(readers), "",
        "## Summary by case category", "", *summary_table(readers, committed), "",
        "## Summary by format", "", *format_table(readers), "",
        "## Failures by kind", "",
        "Contract breaks (`crash`: a signal or an exit status other than 0, 1, 2; `timeout`; `output`: "
        "output that breaks the contract's table; `side-effect`; `code-ran`: a canary was created or "
        "touched) come first; then `rejected-wrongly` (a good file refused), `wrong-code`, "
        "`accepted-wrongly` (a bad file accepted) and `wrong-description` (accepted, described otherwise "
        "than the real writer's loader sees it).", "",
        *kind_table(readers), "",
        "## By feature", "",
        "Features some reader fails: failed / judged cases (declined ones left out).", "",
        *feature_table(readers), "",
        "## Where readers disagree", "",
        "Cases that one reader passes and another fails; a blank cell is declined or not run.", "",
        *disagreement_table(readers), "",
        "## Findings", "",
        "Per reader, what its users should know, with the cases that show it "
        "(`conformance/adapters/<name>/findings.yaml`).",
        *findings_section(readers, found), "",
    ]
    return "\n".join(parts)
