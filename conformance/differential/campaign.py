"""The differential mode against any reader: seeded mutations of the committed accept cases, run through the
reader under test and through the reference, and every disagreement kept as a candidate case
(spec/canonical.md#canonical-differential; ``python -m conformance.differential --reader CMD``).

The reader under test runs as the suite runs it (harness/runner.py one process per file, or its batch mode,
harness/batch.py), so the contract's rules judge its runs; the reference runs in its fork-server worker
(differential/forkserver.py).  A variant's bytes depend only on the seed, the case, the mutator and the
variant's number, and a variant belongs to shard ``K`` of ``N`` by its SHA-256, so ``--shard K/N`` runs
are disjoint and together run every variant of the seed: a CI matrix or any batch scheduler can split a
large campaign without a scheduler of ours.  Variants are made round by round (every base and mutator
once, the bases in an order of the seed's, formats mixed, then again), so a campaign cut by ``--count`` or
``--budget`` early has tried every format, and one that ran a round has touched every base.

A disagreement (:func:`disagreement`) is what the suite would judge differently if the reference's answer
were the case's expectation: the reader broke the contract, accepted what the reference refuses, refused
what it accepts, described it otherwise (the suite's comparator, harness/compare.py) or refused with another
code.  Each is shrunk while it persists (differential/minimize.py) and written as a candidate case folder
(differential/candidates.py) for the implementer to read; the truth is torch's or Lua's, recorded there
where installed, never the reference's alone.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.harness import readers
from conformance.harness.batch import BatchSession
from conformance.harness.cases import Case, committed_cases
from conformance.harness.compare import compare
from conformance.harness.runner import DEFAULT_MEMORY_LIMIT, Run, hint_env, run_reader

from . import mutations, t7, tar_mutations
from .forkserver import Worker
from .run import REFERENCE_SECONDS, as_run
from .variants import MAX_BASE, Variant

#: Formats whose committed accept cases are mutated.
FORMATS = ("pt-zip", "pt-legacy", "pt-tar", "pt-torchscript", "t7-binary", "t7-ascii")
#: FLOAT texts on the edge of the grammar (spec/pickle.md#pickle-number-text): C's strtod stops at a NUL
#: or a space, Python's float() takes ``_`` and spaces, hex is no decimal.
FLOAT_TEXTS = (b"-0\x000", b"1\x00", b"1.5\x00x", b"inf\x00", b" 1", b"1 ", b"1_0", b"0x10", b"1e5x", b"--1",
               b"1e", b".", b"+.5", b"1.5", b"-0", b"nan", b"1e308", b"1e309")


def nul_text(pkl: bytes, rng: random.Random) -> bytes | None:
    """One string of the pickle with a NUL inserted, or a NUL and a tail appended (a reader that cuts at
    the NUL, as a C string does, reads another value)."""
    picks = [o for o in mutations._ops(pkl) if o[0] in ("BINUNICODE", "SHORT_BINUNICODE", "BINUNICODE8")
             and isinstance(o[1], str)]
    if not picks:
        return None
    _, arg, start, end = rng.choice(picks)
    text = str(arg)
    cut = rng.randint(0, len(text))
    new = text[:cut] + "\0" + text[cut:] if rng.random() < 0.5 else text + "\0" + rng.choice(("x", "0", "1"))
    return pkl[:start] + mutations._string(new) + pkl[end:]


def float_text(pkl: bytes, rng: random.Random) -> bytes | None:
    """A FLOAT opcode with an edge text, and a POP, inserted before one opcode of the pickle (after its
    PROTO): the value is dropped, so only the text's reading decides."""
    ops = mutations._ops(pkl)
    if len(ops) < 2:
        return None
    _, _, start, _ = ops[rng.randrange(1, len(ops))]
    return pkl[:start] + b"F" + rng.choice(FLOAT_TEXTS) + b"\n0" + pkl[start:]


def _in_pickles(edit: Callable[[bytes, random.Random], bytes | None]) -> mutations.Mutator:
    """A mutator applying the pickle edit ``edit`` to one pickle of whatever container the file is."""
    def mutate(data: bytes, rng: random.Random) -> bytes | None:
        if data.startswith(b"PK"):
            return mutations.zip_pickle(data, rng, edit)
        if tar_mutations.is_tar(data):
            return tar_mutations.tar_pickle(data, rng, edit)
        return mutations.legacy_pickle(data, rng, edit)
    mutate.__doc__ = f"{edit.__name__} in one pickle of the file."
    return mutate


_PT = ("pt-zip", "pt-legacy", "pt-tar", "pt-torchscript")
#: Mutators by name, and the formats each applies to: the torch campaign's (differential/mutations.py), the
#: .t7 campaign's (differential/t7.py), the tar ones (differential/tar_mutations.py) and the two text edits
#: above.
MUTATORS: dict[str, tuple[mutations.Mutator, tuple[str, ...]]] = {
    "flip": (mutations.flip, FORMATS),
    "truncate": (mutations.truncate, FORMATS),
    "zip-pickle": (mutations.zip_pickle, ("pt-zip", "pt-torchscript")),
    "zip-members": (mutations.zip_members, ("pt-zip", "pt-torchscript")),
    "legacy-pickle": (mutations.legacy_pickle, ("pt-legacy",)),
    "tar-pickle": (tar_mutations.tar_pickle, ("pt-tar",)),
    "tar-keys": (tar_mutations.tar_keys, ("pt-tar",)),
    "nul-text": (_in_pickles(nul_text), ("pt-zip", "pt-legacy", "pt-tar")),
    "float-text": (_in_pickles(float_text), ("pt-zip", "pt-legacy", "pt-tar")),
    "t7-field": t7.MUTATORS["t7-field"],
    "t7-ascii-number": t7.MUTATORS["t7-ascii-number"],
}
assert all(set(f) <= set(FORMATS) for _, f in MUTATORS.values())


def bases(cases: list[Case] | None = None, formats: tuple[str, ...] = FORMATS) -> list[Case]:
    """The committed accept cases of ``formats`` (files up to MAX_BASE), by id."""
    cases = committed_cases() if cases is None else cases
    return sorted((c for c in cases if c.category == "accept" and c.format in formats and not c.problems
                   and c.path.is_file() and c.path.stat().st_size <= MAX_BASE), key=lambda c: c.id)


def shard_of(data: bytes, count: int) -> int:
    """The shard (1..count) a variant's bytes belong to."""
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big") % count + 1


def variants(seed: int, rounds: int, base: list[Case], shard: tuple[int, int] = (1, 1),
             mutators: list[str] | None = None) -> Iterator[Variant]:
    """Round ``n`` of 0..rounds-1 mutates every base once by each mutator that applies; the bytes of
    ``mutation/<mutator>/<case>/<n>`` depend on ``seed`` and that name only.  Repeats (of a base, or of an
    earlier variant) and variants of other shards are left out."""
    k, count = shard
    # a seeded order of the bases, formats mixed: a campaign cut short has tried every format
    base = sorted(base, key=lambda c: hashlib.sha256(f"{seed}:{c.id}".encode()).digest())
    datas = {c.id: c.path.read_bytes() for c in base}
    seen = {hashlib.sha256(d).digest() for d in datas.values()}
    names = sorted(mutators or MUTATORS)
    for n in range(rounds):
        for case in base:
            for name in names:
                fn, formats = MUTATORS[name]
                if case.format not in formats:
                    continue
                new = fn(datas[case.id], random.Random(f"{seed}:{case.id}:{name}:{n}"))
                if not new:
                    continue
                digest = hashlib.sha256(new).digest()
                if digest in seen:
                    continue
                seen.add(digest)
                if shard_of(new, count) != k:
                    continue
                yield Variant(f"mutation/{name}/{case.id}/{n}", "mutation", name, case.format, new,
                              dict(case.hints), case.id)


# -- judging two runs ------------------------------------------------------------------------------

#: Disagreements (the suite would judge the reader otherwise), then what is not one.
REAL = ("reader-broken", "reader-accepts", "reader-refuses", "different-description", "different-code")
OTHER = ("agree", "reader-declines", "reference-declines", "reference-broken")
CLASSES = REAL + OTHER


@dataclass
class Finding:
    klass: str
    detail: str = ""

    @property
    def real(self) -> bool:
        return self.klass in REAL


def disagreement(reader: Run, reference: Run, unexpressed: frozenset[str] = frozenset()) -> Finding:
    """What the reader's run and the reference's say together."""
    if reference.outcome == "broken":
        return Finding("reference-broken", "; ".join(reference.problems)[:300])
    if reader.outcome == "broken":
        return Finding("reader-broken", "; ".join(reader.problems)[:300])
    if reference.outcome == "declined":
        return Finding("reference-declines", reference.message[:200])
    if reader.outcome == "declined":
        klass = "reader-declines" if reference.outcome == "accepted" else "agree"
        return Finding(klass, reader.message[:200])
    if reader.outcome == "accepted" and reference.outcome == "accepted":
        diffs = compare(reference.description, reader.description, unexpressed)
        return Finding("different-description", "; ".join(map(str, diffs[:3]))[:500]) if diffs \
            else Finding("agree")
    if reader.outcome == "accepted":
        return Finding("reader-accepts", f"the reference refuses it: {reference.message[:300]}")
    if reference.outcome == "accepted":
        return Finding("reader-refuses", f"the reader: {reader.message[:300]}")
    if reader.code != reference.code:
        return Finding("different-code", f"the reader: {reader.message[:200]}; the reference: "
                                         f"{reference.message[:200]}")
    return Finding("agree")


def same(a: Finding, b: Finding, ref_a: Run, ref_b: Run, run_a: Run, run_b: Run) -> bool:
    """Whether a shrunk variant still shows the disagreement it was shrunk for (class and both codes)."""
    return a.klass == b.klass and ref_a.code == ref_b.code and run_a.code == run_b.code


# -- running both readers --------------------------------------------------------------------------

class Subject:
    """The reader under test, run as the suite runs it: its batch mode (``batch``) or one process per file."""

    def __init__(self, reader: readers.Reader, batch: list[str] | None, time_limit: float,
                 memory_limit: int = DEFAULT_MEMORY_LIMIT) -> None:
        self.reader, self.time_limit, self.memory_limit = reader, time_limit, memory_limit
        self.session = BatchSession(batch, time_limit=time_limit, memory_limit=memory_limit,
                                    extra_env=reader.env) if batch else None

    def run(self, path: Path, hints: dict[str, Any]) -> Run:
        if self.session is not None:
            return self.session.run(path, hints)
        return run_reader(self.reader.command, path, hints, time_limit=self.time_limit,
                          memory_limit=self.memory_limit, extra_env=self.reader.env)

    def close(self) -> None:
        if self.session is not None:
            self.session.close()


@dataclass
class Pair:
    """One file's two runs and what they say together."""

    variant: Variant
    reader: Run
    reference: Run
    finding: Finding
    shrunk_from: int = 0  # the variant's size before minimizing (0: not minimized)
    truth: dict[str, Any] = field(default_factory=dict)
    at: float = 0.0  # seconds into the campaign when the pair was judged


class Campaign:
    """The reader under test and the reference's worker; :meth:`pair` runs one file through both."""

    def __init__(self, subject: Subject, reference_seconds: float = REFERENCE_SECONDS) -> None:
        self.subject = subject
        self.reference = Worker("reference", reference_seconds)
        self.folder = Path(tempfile.mkdtemp(prefix="torchfmt-campaign-"))
        self.files = 0

    def __enter__(self) -> Campaign:
        self.reference.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.reference.stop()
        self.subject.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def runs(self, data: bytes, fmt: str, hints: dict[str, Any]) -> tuple[Run, Run]:
        """The reader's and the reference's run on ``data``, each given the file alone in a folder of its
        own."""
        self.files += 1
        folder = self.folder / str(self.files)
        folder.mkdir()
        path = folder / ("data.t7" if fmt.startswith("t7-") else "data.pt")
        path.write_bytes(data)
        try:
            ref = as_run(self.reference.run(path, hint_env(hints)), ["torchfmt", "dump"])
            return self.subject.run(path, hints), ref
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def pair(self, v: Variant) -> Pair:
        run, ref = self.runs(v.data, v.format, v.hints)
        return Pair(v, run, ref, disagreement(run, ref, self.subject.reader.unexpressed))


def campaign(c: Campaign, stream: Iterator[Variant], *, count: int | None = None,
             budget: float | None = None, on_pair: Callable[[Pair], None] | None = None) -> list[Pair]:
    """Run variants of ``stream`` until it ends, ``count`` were run or ``budget`` seconds passed."""
    start = time.monotonic()
    pairs = []
    for v in stream:
        if (count is not None and len(pairs) >= count) or (budget is not None
                                                            and time.monotonic() - start >= budget):
            break
        p = c.pair(v)
        p.at = round(time.monotonic() - start, 2)
        pairs.append(p)
        if on_pair is not None:
            on_pair(p)
    return pairs


def shrunk(c: Campaign, p: Pair, seconds: float) -> Pair:
    """``p`` with its variant shrunk while both readers still disagree the same way
    (differential/minimize.py)."""
    from .minimize import shrink

    v, unexpressed = p.variant, c.subject.reader.unexpressed
    last: list[Pair] = []

    def holds(data: bytes) -> bool:
        run, ref = c.runs(data, v.format, v.hints)
        f = disagreement(run, ref, unexpressed)
        if same(f, p.finding, ref, p.reference, run, p.reader):
            small = Variant(v.name, v.source, v.group, v.format, data, v.hints, v.origin)
            last[:] = [Pair(small, run, ref, f, len(v.data))]
            return True
        return False

    small = shrink(v.data, holds, seconds=seconds)
    if small == v.data or not last or last[0].variant.data != small:
        return p
    return last[0]


def pick(pairs: list[Pair], most: int) -> list[Pair]:
    """At most ``most`` disagreements to write as candidates, one per (class, mutator, reference code)
    first, then one per further base case, in the order found."""
    real = [p for p in pairs if p.finding.real]
    chosen: list[Pair] = []
    for key in (lambda p: (p.finding.klass, p.variant.group, p.reference.code),
                lambda p: (p.finding.klass, p.variant.group, p.reference.code, p.variant.origin)):
        seen = {key(p) for p in chosen}
        for p in real:
            if len(chosen) >= most:
                return chosen
            if key(p) not in seen and p not in chosen:
                seen.add(key(p))
                chosen.append(p)
    return chosen
