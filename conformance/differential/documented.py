"""The documented ways the spec differs from torch (``documented.yaml``;
spec/canonical.md#canonical-differential).

Each rule names the reader whose refusal it explains (``reference``: the spec is stricter than torch;
``torch``: the spec is looser, spec/pickle.md#pickle-weights-only), optionally the variant formats it
applies to, the error code (a regular expression matched in full), a regular expression that reader's
message must match from its start (the text after ``<code>: ``), the spec anchors that say why, a
one-line reason, and committed cases that show it (``stricter-than-torch`` cases, whose notes hold the
full reason).  A verdict that differs from torch's is *documented* only when a rule matches it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import yaml

RULES_FILE = Path(__file__).resolve().parent / "documented.yaml"
#: The same for .t7 files against real Lua Torch (conformance/lua_verdicts.py, differential/t7.py): where the
#: spec refuses what torch7's File:readObject loads.
LUA_RULES_FILE = Path(__file__).resolve().parent / "documented_lua.yaml"
RULE_KEYS = frozenset({"id", "reader", "formats", "code", "message", "spec", "why", "cases"})
READERS = ("reference", "torch", "lua")


@dataclass(frozen=True)
class Rule:
    id: str
    reader: str
    code: str
    message: re.Pattern[str]
    spec: tuple[str, ...]
    why: str
    cases: tuple[str, ...]
    formats: tuple[str, ...] = ()  # the variant formats it applies to (empty: all)


@cache
def rules(path: Path = RULES_FILE) -> tuple[Rule, ...]:
    """The rules of ``documented.yaml``, validated (unknown keys, no spec anchor: an error)."""
    out = []
    for raw in yaml.safe_load(path.read_text(encoding="utf-8")):
        reader = raw.get("reader", "reference")
        if set(raw) - RULE_KEYS or not raw.get("spec") or not raw.get("why") or reader not in READERS:
            raise ValueError(f"documented.yaml: bad rule {raw!r}")
        out.append(Rule(raw["id"], reader, raw["code"], re.compile(raw["message"]), tuple(raw["spec"]),
                        raw["why"], tuple(raw.get("cases", ())), tuple(raw.get("formats", ()))))
    ids = [r.id for r in out]
    if len(set(ids)) != len(ids):
        raise ValueError("documented.yaml: duplicate rule ids")
    return tuple(out)


def match(line: str, reader: str = "reference", fmt: str = "", path: Path = RULES_FILE) -> Rule | None:
    """The rule of ``path`` (default documented.yaml, against torch; ``LUA_RULES_FILE``: against Lua Torch)
    that documents ``reader``'s refusal ``line`` (``<code>: <message>``) of a file of format ``fmt``, if
    any."""
    code, _, message = line.partition(": ")
    for rule in rules(path):
        if rule.formats and fmt not in rule.formats:
            continue
        if rule.reader == reader and re.fullmatch(rule.code, code) and rule.message.match(message):
            return rule
    return None
