"""``python -m conformance.lua_verdicts [--check] [CASE_ID...]``: what real Lua Torch does with every
committed ``.t7`` case, written into its case.yaml as ``lua`` (harness/cases.py ``LUA_KEYS``;
spec/t7.md#where-this-spec-is-stricter).

Each case's file goes through real Lua Torch (conformance/adapters/lua-torch: ``torch.DiskFile`` with the
case's hints, ``File:readObject`` until the end of the stream; many files through one LuaJIT that forks a
sandboxed child per file, conformance/adapters/luatorch/worker.py): ``verdict`` is ``loads``,
``refuses`` (a Lua error), ``crashes``
(a signal), ``timeout`` or ``declined`` (a class Lua Torch has not loaded, a value with no canonical form
here), and ``torch_load`` what reading the first object only (``torch.load``) does, when that differs.  An
accept case records whether Lua's description equals expected.json (``expected``).  Where Lua loads a file
the reference refuses, the refusal must be one of ``differential/documented_lua.yaml``'s rules: its reason
becomes ``stricter`` and the case gets the feature ``stricter-than-lua``; a refusal no rule explains stops the
script (exit 1), as does, with ``--check``, any case whose recorded verdict is not what Lua does now.

Rerun it after adding or regenerating ``.t7`` cases (the generators keep a verdict while the file's bytes
are the ones it judged, generators/case_folder.py).  Needs Lua Torch (conformance/adapters/lua-torch/setup).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from conformance.adapters.luatorch.worker import Answer, LuaWorker, installed
from conformance.differential import documented
from conformance.differential.forkserver import Worker
from conformance.differential.run import REFERENCE_SECONDS, as_run
from conformance.harness.cases import Case, committed_cases
from conformance.harness.compare import compare
from conformance.harness.runner import hint_env

HERE = Path(__file__).resolve().parent

import yaml  # noqa: E402

#: The rule for a stream whose first object torch.load reads and whose rest does not read.
STREAM_RULE = "stream-bytes-after-object"
#: The fields Lua Torch's loaded objects cannot show (the lua-torch adapter's ``unexpressed``).
UNEXPRESSED = frozenset({"version"})


def loaded_summary(answer: Answer) -> str:
    """A short line on what Lua loaded: the top-level objects' kinds (classes)."""
    doc = json.loads(answer.stdout)
    kinds = [
        o.get("class") or o.get("dtype") and f"{o['dtype']} {o['type']}" or o["type"] for o in doc["objects"]
    ]
    shown = ", ".join(kinds[:3]) + (f", ... ({len(kinds)} in all)" if len(kinds) > 3 else "")
    return f"{len(kinds)} object{'s' if len(kinds) != 1 else ''}: {shown}"


def judge(case: Case, lua: LuaWorker, reference: Worker) -> tuple[dict[str, Any], str]:
    """(the case's ``lua`` entry, a problem or ``""``)."""
    answer = lua.run(case.path, case.hints)
    entry: dict[str, Any] = {
        "verdict": answer.outcome,
        # the project's own path left out: a message naming describe.lua holds where the checkout lies
        "detail": (loaded_summary(answer) if answer.outcome == "loads" else answer.summary()).replace(
            f"{HERE.parent}/", ""),
    }
    if answer.lua_error is not None and answer.lua_error[1] >= 1:
        first = lua.run(case.path, case.hints, first_only=True)
        if first.outcome != answer.outcome:
            entry["torch_load"] = first.outcome
    if case.description is not None and answer.outcome == "loads":
        diffs = compare(case.description, json.loads(answer.stdout), ignore=UNEXPRESSED)
        entry["expected"] = "same" if not diffs else "; ".join(str(d) for d in diffs[:3])[:400]
    problem = ""
    if "loads" in (entry["verdict"], entry.get("torch_load")) and case.category != "accept":
        ref = as_run(reference.run(case.path, hint_env(case.hints)), ["torchfmt", "dump"])
        if ref.outcome == "rejected":
            rule = documented.match(ref.message, "reference", case.format, documented.LUA_RULES_FILE)
            if entry["verdict"] != "loads":  # torch.load reads the first object; the whole stream fails
                rule = next(r for r in documented.rules(documented.LUA_RULES_FILE) if r.id == STREAM_RULE)
            if rule is None:
                problem = (
                    f"{case.id}: Lua loads it, the reference refuses it and no rule says why: {ref.message}"
                )
            else:
                entry["stricter"] = f"{rule.why} (documented_lua.yaml {rule.id}; {', '.join(rule.spec)})"
    entry["sha256"] = hashlib.sha256(case.path.read_bytes()).hexdigest()
    return entry, problem


def rewrite(case: Case, entry: dict[str, Any]) -> bool:
    """Write ``entry`` as the case's ``lua``, the last key of case.yaml, and the feature stricter-than-lua
    with its ``stricter``; the rest of the file stays as its generator wrote it.  True if it changed."""
    yml = case.path.parent / "case.yaml"
    text = yml.read_text(encoding="utf-8")
    body = text.split("\nlua:\n", 1)[0].rstrip("\n") + "\n"
    lines = body.splitlines(keepends=True)
    start = lines.index("features:\n") + 1
    end = start
    while end < len(lines) and lines[end].startswith("- "):
        end += 1
    features = [x[2:].strip() for x in lines[start:end] if x[2:].strip() != "stricter-than-lua"]
    if "stricter" in entry:
        features = sorted([*features, "stricter-than-lua"]) if features == sorted(features) else [
            *features, "stricter-than-lua"]
    lines[start:end] = [f"- {f}\n" for f in features]
    new = "".join(lines) + yaml.safe_dump({"lua": entry}, sort_keys=False, width=100, allow_unicode=True)
    if new == text:
        return False
    yml.write_text(new, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m conformance.lua_verdicts", description=__doc__.splitlines()[0]
    )
    p.add_argument(
        "--check", action="store_true", help="write nothing; exit 1 if a recorded verdict is stale"
    )
    p.add_argument("cases", nargs="*", help="only these case ids (default: every .t7 case)")
    args = p.parse_args(argv)
    sys.setrecursionlimit(100_000)  # descriptions of the deep-nesting cases
    if not installed():
        print(
            "lua_verdicts: Lua Torch is not installed (conformance/adapters/lua-torch/setup)", file=sys.stderr
        )
        return 1
    cases = [
        c
        for c in committed_cases()
        if c.format.startswith("t7-") and not c.problems and (not args.cases or c.id in args.cases)
    ]
    counts: Counter[str] = Counter()
    problems, changed = [], []
    with LuaWorker() as lua, Worker("reference", REFERENCE_SECONDS) as reference:
        for case in cases:
            entry, problem = judge(case, lua, reference)
            counts[f"{case.category}/{entry['verdict']}"] += 1
            counts["stricter-than-lua"] += "stricter" in entry
            if entry.get("expected", "same") != "same":
                counts["accept-differs"] += 1
                print(f"  {case.id}: Lua loads something else: {entry['expected'][:300]}")
            if problem:
                problems.append(problem)
                continue
            if args.check:
                yml = yaml.safe_load((case.path.parent / "case.yaml").read_text(encoding="utf-8"))
                if yml.get("lua") != entry:
                    changed.append(case.id)
            elif rewrite(case, entry):
                changed.append(case.id)
    print(f"{len(cases)} .t7 cases: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    for line in problems:
        print(line, file=sys.stderr)
    if args.check and changed:
        print(f"stale Lua verdicts ({len(changed)}): {', '.join(changed[:20])}", file=sys.stderr)
        return 1
    if changed and not args.check:
        print(f"rewrote {len(changed)} case.yaml files")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
