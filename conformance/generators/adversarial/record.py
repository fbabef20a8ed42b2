"""The adversarial case record and how it is written to ``conformance/cases/<format>/adv-*/``.

Each case is derived from a real writer's file where it can be (its :class:`Source`), names the spec
anchors it enforces and the error codes the spec's judgement allows (spec/canonical.md#canonical-error-codes),
and carries what real torch 2.13 said of it (``torchcheck``).  Its judge is torch's
``weights_only=True`` loader, or ``weights_only=False`` for a tar checkpoint (which ``weights_only=True``
refuses unread) and for a pickle of opcodes that loader lacks (``cpython_opcodes``).  A ``reject`` case
that the judge accepts is tagged ``stricter-than-torch`` and must say why the spec is stricter
(``why_stricter``): the generator stops otherwise.  An ``accept`` case is a hostile file torch loads: its
``expected.json`` is torch's own description of what the judge loaded (``torchcheck``, through
generators/torch_describe.py), and the generator stops when torch refuses it.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..case_folder import write_case_folder
from .torchcheck import Verdict

ROOT = Path(__file__).resolve().parents[3]
CASES = ROOT / "conformance" / "cases"
PACKAGE = "conformance/generators/adversarial"
#: The harness's fixed canary (conformance/harness/runner.py CANARY when TMPDIR is /tmp); gadget
#: payloads touch it as well as their own.
HARNESS_CANARY = "/tmp/torchfmt-conformance-canary"


@dataclass(frozen=True)
class Source:
    """The real writer's file a case was derived from."""

    data: bytes
    label: str  # a committed path, a corpus path, or the call that wrote it
    writer: str  # "torch 2.13.0+cpu", "Lua Torch7 @814ea4a (LuaJIT 2.1)"

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass
class AdvCase:
    folder: str  # "<format>/adv-<name>"
    data: bytes
    errors: list[str]
    features: list[str]
    spec: list[str]
    how: str
    source: Source | None
    generator: str  # the family module, e.g. "pickle_gadgets.py"
    category: str = "reject"
    hints: dict[str, Any] | None = None
    canary: str | None = None  # a path the payload touches if a naive loader runs it
    why_stricter: str = ""  # why the spec rejects what torch's weights_only loader accepts
    #: The case uses opcodes torch's weights_only loader lacks (protocol 0 text, ...): CPython's C
    #: unpickler, which ``torch.load(weights_only=False)`` runs, is the authority (spec/pickle.md
    #: #pickle-weights-only).
    cpython_opcodes: bool = False
    torch: dict[str, Verdict] = field(default_factory=dict)

    def __post_init__(self) -> None:
        name = self.folder.split("/", 1)[1]
        assert name.startswith("adv-"), self.folder
        assert self.category in ("reject", "impl", "accept"), self.category
        assert (self.category == "accept") == (not self.errors), (self.folder, self.errors)
        assert self.category != "accept" or self.format.startswith("pt-"), self.folder

    @property
    def format(self) -> str:
        return self.folder.split("/")[0]

    @property
    def name(self) -> str:
        return self.folder.split("/", 1)[1]

    @property
    def file(self) -> str:
        return "data.t7" if self.format.startswith("t7-") else "data.pt"

    @property
    def canaries(self) -> list[str]:
        return [self.canary, HARNESS_CANARY] if self.canary else []

    @property
    def judge(self) -> str:
        """The ``weights_only`` mode of torch's load that judges the case: ``"True"``, or ``"False"`` for a
        tar checkpoint, which torch 2.13 refuses with ``weights_only=True`` before reading it
        (spec/pt-tar.md), and for a pickle whose opcodes only CPython's unpickler has
        (spec/pickle.md#pickle-weights-only)."""
        return "False" if self.format == "pt-tar" or self.cpython_opcodes else "True"

    def stricter_than_torch(self) -> bool:
        return self.category == "reject" and self.judge in self.torch and self.torch[self.judge].loads

    def expected(self) -> dict[str, Any]:
        """An accept case's expectation: torch's description of what its judging load (``weights_only=True``,
        ``False`` for a tar checkpoint or opcodes it lacks) loads."""
        verdict = self.torch.get(self.judge)
        if verdict is None or not verdict.loads:
            why = verdict.detail if verdict else "not checked"
            raise SystemExit(f"{self.folder}: an accept case torch does not load ({why})")
        if not isinstance(verdict.description, dict):
            raise SystemExit(f"{self.folder}: torch loads it, with no description: {verdict.description}")
        return verdict.description


def canary_path(name: str) -> str:
    """The canary of case ``adv-<name>``: ``/tmp/torchfmt-canary-<name>``."""
    return f"/tmp/torchfmt-canary-{name}"


def case_yaml(c: AdvCase) -> dict[str, Any]:
    notes = []
    if c.source is not None:
        notes.append(
            f"derived from {c.source.label} (sha256 {c.source.sha256[:16]}..., written by {c.source.writer})"
        )
    notes.append(c.how)
    if c.torch:
        notes.append(
            "; ".join(c.torch[m].text(m) for m in ("True", "False") if m in c.torch) + " (torch "
            "2.13.0+cpu, in a sandboxed subprocess)"
        )
    elif c.format.startswith("t7-"):
        notes.append("what real Lua Torch does with it: case.yaml lua (conformance/lua_verdicts.py)")
    features = set(c.features)
    if c.stricter_than_torch():
        if not c.why_stricter:
            raise SystemExit(
                f"{c.folder}: torch's judging loader accepts it; say why the spec rejects "
                "it (why_stricter) or change the case"
            )
        features.add("stricter-than-torch")
        notes.append(f"stricter than torch: {c.why_stricter}")
    if c.canary:
        notes.append(f"if a loader runs the payload it only touches {c.canary} and {HARNESS_CANARY}")
    expect: dict[str, Any]
    if c.category == "accept":
        expect = {"description": "expected.json"}
    elif len(c.errors) == 1:
        expect = {"error": c.errors[0]}
    else:
        expect = {"errors": list(c.errors)}
    data: dict[str, Any] = {
        "id": c.folder,
        "category": c.category,
        "format": c.format,
        "file": c.file,
        "features": sorted(features),
        "spec": list(dict.fromkeys(c.spec)),
        "provenance": {
            "writer": "generated (adversarial)",
            "generator": f"{PACKAGE}/{c.generator}",
            "notes": ". ".join(n.rstrip(".") for n in notes) + ".",
        },
        "expect": expect,
    }
    if c.hints:
        data["hints"] = c.hints
    if c.canary:
        data["canary"] = c.canary
    return data


def owned_folders() -> list[Path]:
    """Case folders this package wrote before: ``adv-*`` folders whose provenance names it."""
    out = []
    for yml in CASES.glob("*/adv-*/case.yaml"):
        try:
            data = yaml.safe_load(yml.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue
        gen = str(((data or {}).get("provenance") or {}).get("generator", ""))
        if gen.startswith(PACKAGE + "/"):
            out.append(yml.parent)
    return out


def generator_of(folder: Path) -> str:
    """The family module named by a written case's provenance (``pickle_gadgets.py``), or ``""``."""
    try:
        data = yaml.safe_load((folder / "case.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return ""
    return str(((data or {}).get("provenance") or {}).get("generator", "")).rsplit("/", 1)[-1]


def write(cases: list[AdvCase], keep: list[Path] | None = None) -> list[Path]:
    """(Re)write every case folder and remove the ones this package no longer makes (except ``keep``)."""
    names = [c.folder for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit(f"duplicate case folders: {sorted(dup)}")
    written = []
    for c in cases:
        folder = CASES / c.folder
        expected = c.expected() if c.category == "accept" else None
        write_case_folder(folder, c.file, c.data, case_yaml(c), expected)
        written.append(folder)
    for stale in set(owned_folders()) - set(written) - set(keep or []):
        shutil.rmtree(stale)
    return written
