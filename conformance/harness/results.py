"""Each reader's results over the suite, kept as data, and the findings written about them.

A reader's last run is ``conformance/results/<reader>.json`` (written by ``conformance/matrix.py`` from the
suite's ``--report-json``): the reader's version, the date, whether the corpus tier ran, and per case id its
``outcome`` (pass, fail, declined), ``kind`` (harness/verdict.py: the failure's kind), the ``code`` the
reader gave, and the case's facts as the run saw them (``category``, ``column``, ``format``, ``features``),
so that the results page is a function of these files alone (the corpus tier need not be present to
make it).  A committed case the reader's last run did not see is counted as *not run*.

Findings are what a reader's users should know, each a sentence with the case ids that show it:
``conformance/adapters/<name>/findings.yaml`` (folder adapters) or
``conformance/adapters/<name>.findings.yaml`` (single-file ones), a list of ``{finding: str, cases: [id,
...], outcome: fail|declined}`` (``outcome`` defaults to ``fail``).  A finding is *shown* by a run when
every case it names has that outcome for that reader.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .readers import ADAPTERS_DIR
from .vocabulary import CONFORMANCE, load_yaml

RESULTS_DIR = CONFORMANCE / "results"
RECORD_KEYS = ("outcome", "kind", "code", "category", "column", "format", "features")


@dataclass
class ReaderResults:
    """One reader's last run: ``cases`` maps case id -> the record of RECORD_KEYS."""

    reader: str
    version: str = ""
    date: str = ""
    corpus_present: bool = False
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: Why the reader did not run here (not installed), when it has no results.
    absent: str = ""

    def to_json(self) -> str:
        head = {"reader": self.reader, "version": self.version, "date": self.date,
                "corpus_present": self.corpus_present}
        lines = [json.dumps(head, ensure_ascii=False)[:-1] + ', "cases": {']
        items = sorted(self.cases.items())
        for i, (case_id, rec) in enumerate(items):
            sep = "," if i < len(items) - 1 else ""
            lines.append(f" {json.dumps(case_id)}: {json.dumps({k: rec.get(k) for k in RECORD_KEYS})}{sep}")
        lines.append("}}")
        return "\n".join(lines) + "\n"


def path_of(reader: str) -> Path:
    return RESULTS_DIR / f"{reader}.json"


def from_report(report: dict[str, Any], version: str) -> ReaderResults:
    """A reader's results from the suite's --report-json document."""
    return ReaderResults(
        reader=report["reader"], version=version, date=report["finished"][:10],
        corpus_present=bool(report.get("corpus", {}).get("present")),
        cases={r["id"]: {k: r.get(k) for k in RECORD_KEYS} for r in report["results"]})


def load(reader: str) -> ReaderResults | None:
    p = path_of(reader)
    if not p.is_file():
        return None
    doc = json.loads(p.read_text(encoding="utf-8"))
    return ReaderResults(reader=doc["reader"], version=doc.get("version", ""), date=doc.get("date", ""),
                         corpus_present=bool(doc.get("corpus_present")), cases=doc["cases"])


def save(results: ReaderResults) -> None:
    RESULTS_DIR.mkdir(exist_ok=True)
    path_of(results.reader).write_text(results.to_json(), encoding="utf-8")


#: What shows a finding: its cases fail for the reader, or (``outcome: declined``) the reader's adapter
#: declines them, as the torch adapters decline a file torch loads whose description is past the
#: canonical budget (spec/canonical.md#canonical-node-budget).
FINDING_OUTCOMES = ("fail", "declined")


@dataclass(frozen=True)
class Finding:
    text: str
    cases: tuple[str, ...]
    outcome: str = "fail"


def findings_path(reader: str) -> Path:
    folder = ADAPTERS_DIR / reader
    return folder / "findings.yaml" if folder.is_dir() else ADAPTERS_DIR / f"{reader}.findings.yaml"


def findings(reader: str) -> list[Finding]:
    """The reader's findings file, validated (a malformed one raises ValueError)."""
    p = findings_path(reader)
    if not p.is_file():
        return []
    doc = load_yaml(p) or []
    if not isinstance(doc, list):
        raise ValueError(f"{p}: a list of {{finding, cases}} is expected")
    out = []
    for i, item in enumerate(doc):
        keys = set(item) if isinstance(item, dict) else set()
        if not ({"finding", "cases"} <= keys <= {"finding", "cases", "outcome"}
                and isinstance(item["finding"], str) and item["finding"].strip()
                and isinstance(item["cases"], list) and item["cases"]
                and all(isinstance(c, str) for c in item["cases"])
                and item.get("outcome", "fail") in FINDING_OUTCOMES):
            raise ValueError(f"{p}: item {i} needs exactly a non-empty 'finding' and a list of case ids "
                             f"'cases', and optionally an 'outcome' of {FINDING_OUTCOMES}")
        out.append(Finding(" ".join(item["finding"].split()), tuple(item["cases"]),
                           item.get("outcome", "fail")))
    return out


def unshown(finding: Finding, results: ReaderResults) -> list[str]:
    """The cases of ``finding`` whose outcome for the reader is not the finding's (empty: the run shows
    the finding)."""
    return [c for c in finding.cases if results.cases.get(c, {}).get("outcome") != finding.outcome]
