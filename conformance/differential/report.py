"""The differential run's report: ``report.json``, ``summary.md``, and each real disagreement's file
saved under ``findings/<class>/`` with what both readers said, ready to be frozen as a case
(spec/canonical.md#canonical-differential)."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from .classify import CLASSES, REAL
from .run import Row

TITLE = "torch 2.13 `torch.load(weights_only=True)` vs the reference"


def _run_json(run: Any) -> dict[str, Any] | None:
    if run is None:
        return None
    return {"outcome": run.outcome, "status": run.status, "code": run.code, "message": run.message[:500],
            "problems": run.problems[:3], "seconds": round(run.seconds, 3)}


def row_json(row: Row) -> dict[str, Any]:
    v = row.variant
    return {"name": v.name, "source": v.source, "group": v.group, "format": v.format, "origin": v.origin,
            "sha256": v.sha256, "size": len(v.data), "class": row.verdict.klass, "detail": row.verdict.detail,
            "rule": row.verdict.rule, "torch": _run_json(row.torch), "reference": _run_json(row.reference)}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)[:150]


def write(rows: list[Row], out: Path, settings: dict[str, Any], classes: tuple[str, ...] = CLASSES,
          real_classes: tuple[str, ...] = REAL, title: str = TITLE) -> dict[str, Any]:
    """Write the report into ``out`` and return its summary (``classes``, ``real_classes`` and ``title``: the
    .t7 run's, differential/t7.py, where they are not torch's)."""
    out.mkdir(parents=True, exist_ok=True)
    by_class = Counter(r.verdict.klass for r in rows)
    by_group: dict[str, Counter[str]] = {}
    for r in rows:
        by_group.setdefault(f"{r.variant.source}/{r.variant.group}", Counter())[r.verdict.klass] += 1
    real = [r for r in rows if r.verdict.klass in real_classes]
    for r in real:
        folder = out / "findings" / r.verdict.klass
        folder.mkdir(parents=True, exist_ok=True)
        stem = _safe(r.variant.name)
        (folder / (stem + r.variant.suffix)).write_bytes(r.variant.data)
        (folder / (stem + ".json")).write_text(json.dumps(row_json(r), indent=1) + "\n")
    summary = {"settings": settings, "variants": len(rows), "real": len(real),
               "by_class": {k: by_class[k] for k in classes if by_class[k]},
               "by_group": {g: dict(c) for g, c in sorted(by_group.items())},
               "rules_used": dict(Counter(r.verdict.rule for r in rows if r.verdict.rule))}
    (out / "report.json").write_text(json.dumps({"summary": summary, "rows": [row_json(r) for r in rows]},
                                                indent=1) + "\n")
    (out / "summary.md").write_text(markdown(summary, real, classes, real_classes, title))
    return summary


def markdown(summary: dict[str, Any], real: list[Row], classes: tuple[str, ...] = CLASSES,
             real_classes: tuple[str, ...] = REAL, title: str = TITLE) -> str:
    cols = [k for k in classes if k in summary["by_class"]]
    lines = [f"# Differential run: {title}", "",
             f"{summary['variants']} variants, {summary['real']} real disagreements; settings: "
             f"`{json.dumps(summary['settings'])}`.", "",
             "| source/group | " + " | ".join(cols) + " |", "| --- |" + " ---: |" * len(cols)]
    for group, counts in summary["by_group"].items():
        lines.append(f"| {group} | " + " | ".join(str(counts.get(k, "")) for k in cols) + " |")
    lines.append("| **all** | " + " | ".join(f"**{summary['by_class'][k]}**" for k in cols) + " |")
    lines += ["", f"Real classes: {', '.join(real_classes)}.", "", "## Real disagreements", ""]
    if not real:
        lines.append("None.")
    for r in real:
        lines.append(f"- `{r.variant.name}` ({r.verdict.klass}): {r.verdict.detail[:300]}")
    return "\n".join(lines) + "\n"


def write_campaign(pairs: list[Any], written: dict[str, str], out: Path, settings: dict[str, Any],
                   anchors: dict[str, list[str]]) -> dict[str, Any]:
    """The report of a campaign against any reader (differential/campaign.py): ``report.json`` and
    ``summary.md`` in ``out``; ``written`` maps a variant's name to its candidate folder, ``anchors`` a base
    case to its spec anchors (case.yaml ``spec``)."""
    from .campaign import CLASSES, REAL

    out.mkdir(parents=True, exist_ok=True)
    real = [p for p in pairs if p.finding.real]
    by_class = Counter(p.finding.klass for p in pairs)
    by_group: dict[str, Counter[str]] = {}
    for p in pairs:
        by_group.setdefault(p.variant.group, Counter())[p.finding.klass] += 1
    by_anchor = Counter(a for p in real for a in anchors.get(p.variant.origin, []))
    by_code = Counter(f"{p.finding.klass}: reference {p.reference.code or p.reference.outcome}, reader "
                      f"{p.reader.code or p.reader.outcome}" for p in real)
    rows = [{"name": p.variant.name, "format": p.variant.format, "origin": p.variant.origin,
             "sha256": p.variant.sha256, "class": p.finding.klass, "detail": p.finding.detail, "at": p.at,
             "reader": _run_json(p.reader), "reference": _run_json(p.reference),
             "candidate": written.get(p.variant.name)} for p in pairs]
    summary = {"settings": settings, "variants": len(pairs), "disagreements": len(real),
               "by_class": {k: by_class[k] for k in CLASSES if by_class[k]},
               "by_mutator": {g: dict(c) for g, c in sorted(by_group.items())},
               "by_spec_anchor": dict(by_anchor.most_common()), "by_answers": dict(by_code.most_common()),
               "candidates": sorted(set(written.values()))}
    (out / "report.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n")
    lines = [f"# Differential run: `{settings['reader']}` vs the reference", "",
             f"{len(pairs)} variants, {len(real)} disagreements; settings: `{json.dumps(settings)}`.", "",
             "| class | variants |", "| --- | ---: |"]
    lines += [f"| {k}{' (disagreement)' if k in REAL else ''} | {n} |"
              for k, n in summary["by_class"].items()]
    lines += ["", "## Disagreements by spec anchor (the base cases' `spec:`)", ""]
    lines += [f"- `{a}`: {n}" for a, n in by_anchor.most_common(40)] or ["None."]
    lines += ["", "## Disagreements by answers", ""]
    lines += [f"- {k}: {n}" for k, n in by_code.most_common(40)] or ["None."]
    lines += ["", "## Candidate case folders", "",
              "Each holds the file, a case.yaml whose expectation is the reference's answer, both answers "
              "and truth.json (torch's or Lua's verdict where installed): read truth.json first.", ""]
    lines += [f"- `{f}`" for f in summary["candidates"]] or ["None."]
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    return summary
