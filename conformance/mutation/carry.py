"""Carry the stored sample and its judgments across edits of the reader.

A mutant's id holds its line and column, so an edit above it (or a new mutant before it in the module)
renames it, and the seeded draw over a population of another size is another sample.  A run therefore
keeps the mutants it stored before: each stored mutant, and each judged one, is matched with the current
mutant that changes the same node the same way (module, operator, detail and the node's source; the
enclosing function too where it is stored), the nearest one to its old place; mutants whose code is gone
drop out and the seeded draw tops the sample up (:func:`sample`).  The stored outcome of
a carried mutant is run again whenever its module's source changed (``--resume`` compares digests).
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from typing import Any

from .operators import Mutant
from .store import EQUIVALENT, Judgment

_ID = re.compile(
    r"(?P<module>[^:]+):(?P<line>\d+):(?P<col>\d+):(?P<operator>[^:]+):(?P<detail>.*?)(?:@\d+:\d+)?$"
)


def _nearest(cands: list[Mutant], line: int, col: int, taken: set[str]) -> Mutant | None:
    free = [m for m in cands if m.id not in taken]
    return min(free, key=lambda m: (abs(m.line - line), abs(m.col - col)), default=None)


def stored(entries: dict[str, dict[str, Any]], pop: list[Mutant]) -> dict[str, Mutant]:
    """Old id -> current mutant, for the stored entries of ``results.json``."""
    by_key: dict[tuple[str, ...], list[Mutant]] = defaultdict(list)
    for m in pop:
        by_key[(m.module, m.function, m.operator, m.detail, m.original, m.mutated)].append(m)
    out: dict[str, Mutant] = {}
    taken: set[str] = set()
    ids = {m.id: m for m in pop}
    for old, e in entries.items():  # unchanged ids first: they keep their mutant
        m = ids.get(old)
        if m is not None and (m.original, m.mutated) == (e["original"], e["mutated"]):
            out[old] = m
            taken.add(m.id)
    for old, e in sorted(entries.items(), key=lambda kv: (kv[1]["module"], kv[1]["line"], kv[1]["col"])):
        if old in out:
            continue
        key = (e["module"], e["function"], e["operator"], e["detail"], e["original"], e["mutated"])
        m = _nearest(by_key.get(key, []), e["line"], e["col"], taken)
        if m is not None:
            out[old] = m
            taken.add(m.id)
    return out


def judged(judgments: dict[str, Judgment], pop: list[Mutant], carried: dict[str, Mutant]) -> dict[str, str]:
    """Judgment id -> current id: through the carried sample where the judgment names a stored mutant,
    else the nearest current mutant of the same module, operator, detail and node source."""
    by_key: dict[tuple[str, ...], list[Mutant]] = defaultdict(list)
    for m in pop:
        by_key[(m.module, m.operator, m.detail, m.original)].append(m)
    ids = {m.id: m for m in pop}
    out: dict[str, str] = {}
    taken: set[str] = set()
    for j in judgments.values():
        if j.id in carried:
            out[j.id] = carried[j.id].id
        elif j.id in ids and ids[j.id].original == j.original:
            out[j.id] = j.id
        taken.update(out.values())
    for j in judgments.values():
        parts = _ID.match(j.id)
        if j.id in out or parts is None:
            continue
        m = _nearest(by_key.get((parts["module"], parts["operator"], parts["detail"], j.original), []),
                     int(parts["line"]), int(parts["col"]), taken)
        if m is not None:
            out[j.id] = m.id
            taken.add(m.id)
    if len(set(out.values())) != len(out):  # two judgments on one mutant: leave the file as people wrote it
        return {k: k for k in out}
    return out


def rename_judgments(renamed: dict[str, str]) -> int:
    """Rewrite the ``id:`` lines of ``equivalent.yaml`` (the file is written by people: only those lines
    change).  The number renamed."""
    text = EQUIVALENT.read_text(encoding="utf-8")
    n = 0
    lines = text.splitlines(keepends=True)
    for k, line in enumerate(lines):
        if line.startswith("- id: "):
            old = line[len("- id: "):].strip()
            new = renamed.get(old, old)
            if new != old:
                lines[k] = f"- id: {new}\n"
                n += 1
    EQUIVALENT.write_text("".join(lines), encoding="utf-8")
    return n


def sample(pop: list[Mutant], size: int, seed: int, keep: list[Mutant] | None = None) -> list[Mutant]:
    """``keep`` (the stored sample carried across edits, :func:`stored`), topped up to ``size`` by a
    seeded shuffle of ``pop``, each part taken in the shuffle's order: a larger sample of one seed holds a
    smaller one, so a run can be extended (``--resume``) without running the first mutants again.  With
    ``keep`` the sample is the seed's draw carried through the edits since it was stored (results.json),
    not the seed's draw over today's population.  Here because the reader's driver and the judge's both
    draw with it (the driver runs the judge: the judge may not import the driver)."""
    order = list(range(len(pop)))
    random.Random(seed).shuffle(order)
    rank = {k: r for r, k in enumerate(order)}
    at = {m.id: k for k, m in enumerate(pop)}
    picked = sorted((at[m.id] for m in (keep or [])), key=rank.__getitem__)[:size]
    seen = set(picked)
    for k in order:
        if len(picked) >= size:
            break
        if k not in seen:
            picked.append(k)
            seen.add(k)
    return [pop[i] for i in sorted(picked)]
