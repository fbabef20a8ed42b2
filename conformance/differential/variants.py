"""The hostile variants the differential harness runs: the adversarial families' cases, and seeded
mutations of the committed accept ``.pt`` files (spec/canonical.md#canonical-differential).

A variant's name is stable for a given seed: ``family/<case folder>`` or
``mutation/<mutator>/<case id>/<n>``; its bytes are derived from the seed, the case id, the mutator and
``n`` only, so a finding is reproduced by rerunning the same command.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.harness.cases import Case, committed_cases

from .mutations import MUTATORS, mutate

#: Formats whose accept files are mutated (torch reads them with weights_only=True).
MUTATED_FORMATS = ("pt-zip", "pt-legacy")
#: Accept files larger than this are not mutated (the mutations look for logic, not for slowness).
MAX_BASE = 1 << 20


@dataclass
class Variant:
    """One hostile file: where it came from, its format as made, its bytes, and .t7 hints."""

    name: str
    source: str  # "family" | "mutation"
    group: str  # the family name, or the mutator name
    format: str
    data: bytes
    hints: dict[str, Any] = field(default_factory=dict)
    origin: str = ""  # the case id it was made from

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def suffix(self) -> str:
        return ".t7" if self.format.startswith("t7-") else ".pt"


def family_variants(names: list[str] | None = None) -> list[Variant]:
    """Every case of the adversarial families (``generators/adversarial/families.py``), as its bytes."""
    from conformance.generators.adversarial import families

    out = []
    for name in names or sorted(families.FAMILIES):
        for c in families.FAMILIES[name]():
            out.append(Variant(f"family/{c.folder}", "family", name, c.format, c.data, dict(c.hints or {}),
                               c.folder))
    return out


def committed_family_variants(names: list[str], cases: list[Case] | None = None) -> list[Variant]:
    """The committed cases of the adversarial families ``names`` (their case.yaml names the family's
    generator), as their bytes: what :func:`family_variants` makes, read from ``conformance/cases``
    without running the generators (several start from a torch-written file, and importing torch costs
    seconds)."""
    from conformance.generators.adversarial import families

    folder = "conformance/generators/adversarial/"
    out = []
    for c in committed_cases() if cases is None else cases:
        generator = str(c.provenance.get("generator", ""))
        family = families.MODULES.get(generator.removeprefix(folder))  # a bare file name: not a family
        if family in names:
            out.append(Variant(f"family/{c.id}", "family", family, c.format, c.path.read_bytes(),
                               dict(c.hints), c.id))
    return out


def file_variant(path: Path) -> Variant:
    """A given ``.pt`` file as a variant (its format guessed from its first bytes, for the report only)."""
    data = path.read_bytes()
    fmt = "pt-zip" if data.startswith(b"PK") else "pt-legacy"
    return Variant(f"file/{path.name}", "file", "files", fmt, data, {}, str(path))


def accept_bases(cases: list[Case] | None = None) -> list[Case]:
    """The committed accept cases of the mutated formats (files up to :data:`MAX_BASE`)."""
    cases = committed_cases() if cases is None else cases
    return [c for c in cases if c.category == "accept" and c.format in MUTATED_FORMATS and not c.problems
            and c.path.is_file() and c.path.stat().st_size <= MAX_BASE]


def mutation_variants(seed: int, per_file: int, bases: list[Case] | None = None,
                      mutators: list[str] | None = None) -> Iterator[Variant]:
    """``per_file`` mutations of each base by each mutator that applies, seeded by ``seed``; mutations
    that change nothing or repeat an earlier variant's bytes are left out."""
    seen: set[bytes] = set()
    for case in accept_bases() if bases is None else bases:
        data = case.path.read_bytes()
        seen.add(hashlib.sha256(data).digest())
        for name in mutators or sorted(MUTATORS):
            for n in range(per_file):
                rng = random.Random(f"{seed}:{case.id}:{name}:{n}")
                new = mutate(data, case.format, name, rng)
                if new is None:
                    continue
                digest = hashlib.sha256(new).digest()
                if digest in seen:
                    continue
                seen.add(digest)
                yield Variant(f"mutation/{name}/{case.id}/{n}", "mutation", name, case.format, new, {},
                              case.id)
