"""The documented ways the spec is stricter than torch (``stricter.yaml``;
spec/canonical.md#canonical-differential).

Each rule names an error code, a regular expression the reference's message must match from its start
(the text after ``<code>: ``), the spec anchors that say why a file is refused, a one-line reason, and
committed cases that show it (``stricter-than-torch`` cases, whose notes hold the full reason).  A
refusal of a file that torch loads is *documented* only when a rule matches it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

RULES_FILE = Path(__file__).resolve().parent / "stricter.yaml"
RULE_KEYS = frozenset({"id", "code", "message", "spec", "why", "cases"})


@dataclass(frozen=True)
class Rule:
    id: str
    code: str
    message: re.Pattern[str]
    spec: tuple[str, ...]
    why: str
    cases: tuple[str, ...]


@cache
def rules(path: Path = RULES_FILE) -> tuple[Rule, ...]:
    """The rules of ``stricter.yaml``, validated (unknown keys, no spec anchor: an error)."""
    out = []
    for raw in yaml.safe_load(path.read_text(encoding="utf-8")):
        if set(raw) - RULE_KEYS or not raw.get("spec") or not raw.get("why"):
            raise ValueError(f"stricter.yaml: bad rule {raw!r}")
        out.append(Rule(raw["id"], raw["code"], re.compile(raw["message"]), tuple(raw["spec"]), raw["why"],
                        tuple(raw.get("cases", ()))))
    ids = [r.id for r in out]
    if len(set(ids)) != len(ids):
        raise ValueError("stricter.yaml: duplicate rule ids")
    return tuple(out)


def match(line: str) -> Rule | None:
    """The rule that documents the reference's refusal ``line`` (``<code>: <message>``), if any."""
    code, _, message = line.partition(": ")
    for rule in rules():
        if rule.code == code and rule.message.match(message):
            return rule
    return None
