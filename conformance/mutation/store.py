"""The stored results (``results.json``) and the judgments of surviving mutants (``equivalent.yaml``).

``results.json`` holds the run's settings and one entry per sampled mutant (its id, where it is, what it
changes, and its outcome).  ``equivalent.yaml`` is written by people: a list of
``{id, original, reason}`` (``original``: the mutated node's source as the results show it, so that a
judgment stops applying when the code under it changes; ``test``: for a fast path that only falls back
to the slow path, the test showing that both give the same result).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results.json"
#: The latest fresh draw of the reader's mutants (``--seed fresh``), beside the carried sample.
FRESH = HERE / "fresh.json"
EQUIVALENT = HERE / "equivalent.yaml"
PAGE = HERE.parent / "MUTATION.md"
#: Outcomes that count as killed.
KILLED = ("killed", "timeout")


@dataclass(frozen=True)
class Judgment:
    id: str
    original: str
    reason: str
    test: str = ""


def progress_file(seed: int) -> Path:
    """Where a run keeps its outcomes while it runs: outside ``conformance/``, which the harness watches
    for side effects of each run (a file written there while a case runs would fail that case)."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "torchfmt-mutation" / \
        f"progress-{seed}.json"


def load_results(path: Path = RESULTS) -> dict[str, Any]:
    if not path.is_file():
        return {"settings": {}, "mutants": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def save_results(doc: dict[str, Any], path: Path = RESULTS) -> None:
    doc = {"settings": doc["settings"], "mutants": dict(sorted(doc["mutants"].items(), key=_order))}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def _order(item: tuple[str, Any]) -> tuple[str, int, int, str]:
    m = item[1]
    return (m["module"], m["line"], m["col"], item[0])


def load_judgments(path: Path = EQUIVALENT) -> dict[str, Judgment]:
    if not path.is_file():
        return {}
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    out = {}
    for entry in doc:
        unknown = set(entry) - {"id", "original", "reason", "test"}
        if unknown or not entry.get("reason") or "original" not in entry:
            raise ValueError(f"{path.name}: {entry.get('id')}: needs id, original and reason "
                             f"(and at most test); unknown keys {sorted(unknown)}")
        if entry["id"] in out:
            raise ValueError(f"{path.name}: {entry['id']} judged twice")
        reason = " ".join(str(entry["reason"]).split())
        out[entry["id"]] = Judgment(entry["id"], str(entry["original"]), reason, str(entry.get("test", "")))
    return out
