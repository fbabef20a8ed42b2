"""The ``.t7`` differential run: real Lua Torch against the reference on hostile ``.t7`` variants
(spec/canonical.md#canonical-differential, spec/t7.md#where-this-spec-is-stricter).

``python -m conformance.differential --t7 [--seed S] [--per-file N] [--out DIR]`` runs every committed case of
the ``.t7`` adversarial family and seeded mutations of the committed ``.t7`` accept files (byte flips, cuts,
a field of the binary grammar set to an edge value, a number of the ascii text replaced) through Lua Torch's
``File:readObject`` (conformance/adapters/lua-torch: one LuaJIT forks a child per file, under a time and an
address-space limit) and through the reference (its sandboxed fork-server worker), with the case's hints,
and classifies each variant (:func:`classify`).  Real disagreements are saved under ``DIR/findings/<class>/``
to be frozen as cases, as for the ``.pt`` run.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import struct
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from conformance.adapters.luatorch.worker import Answer, LuaWorker, installed  # noqa: F401
from conformance.generators.adversarial.t7 import Walk, WalkError
from conformance.harness.cases import Case, committed_cases
from conformance.harness.compare import compare
from conformance.harness.runner import Run, check_output, hint_env

from . import documented
from .classify import READER_BUG, Verdict
from .forkserver import Worker
from .mutations import INTERESTING_INTS, flip, truncate
from .run import REFERENCE_SECONDS, Row, as_run
from .variants import MAX_BASE, Variant, committed_family_variants

REAL = ("reference-contract-break", "accepted-different", "looser-than-lua", "unexplained-refusal")
FINE = (
    "stricter-documented",
    "looser-documented",
    "agree-accept",
    "agree-refuse",
    "lua-broken",
    "not-comparable",
)
CLASSES = REAL + FINE
#: torch7 loads a function whose bytecode its VM cannot load as nil (type 6 without upvalues) or fails.
BYTECODE_RULE = "bytecode-not-loaded"
#: What a loaded Lua object cannot show (the lua-torch adapter's unexpressed fields).
IGNORE = frozenset({"version"})
INT32 = tuple(v for v in INTERESTING_INTS if -(1 << 31) <= v < (1 << 31))
INT64 = tuple(v for v in INTERESTING_INTS if -(1 << 63) <= v < (1 << 63))
_NUMBER = re.compile(rb"-?[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?")


def binary_field(data: bytes, rng: random.Random) -> bytes | None:
    """One int or long of the binary grammar (a type code, an index, a count, a size, a stride, an offset)
    set to an edge value or moved by one."""
    try:
        fields = [
            f for f in Walk.of(data).fields if f[2] in (4, 8) and not f[0].endswith((".number", ".data"))
        ]
    except (WalkError, struct.error):
        return None
    if not fields:
        return None
    name, offset, width = rng.choice(fields)
    fmt = "<i" if width == 4 else "<q"
    (old,) = struct.unpack_from(fmt, data, offset)
    value = rng.choice(INT32 if width == 4 else INT64) if rng.random() < 0.7 else old + rng.choice((-1, 1))
    out = bytearray(data)
    try:
        struct.pack_into(fmt, out, offset, value)
    except struct.error:
        return None
    return bytes(out)


def ascii_number(data: bytes, rng: random.Random) -> bytes | None:
    """One number of an ascii stream replaced by an edge value, its negation or garbage."""
    spans = [m.span() for m in _NUMBER.finditer(data)]
    if not spans:
        return None
    start, end = rng.choice(spans)
    new = rng.choice(
        (str(rng.choice(INT64)).encode(), b"-" + data[start:end], b"0", b"nan", b"1e999", b"12x")
    )
    return data[:start] + new + data[end:]


#: Mutators by name, and the formats each applies to.
MUTATORS = {
    "flip": (flip, ("t7-binary", "t7-ascii")),
    "truncate": (truncate, ("t7-binary", "t7-ascii")),
    "t7-field": (binary_field, ("t7-binary",)),
    "t7-ascii-number": (ascii_number, ("t7-ascii",)),
}


def bases(cases: list[Case] | None = None) -> list[Case]:
    """The committed ``.t7`` accept cases (files up to MAX_BASE)."""
    cases = committed_cases() if cases is None else cases
    return [
        c
        for c in cases
        if c.category == "accept"
        and c.format.startswith("t7-")
        and not c.problems
        and c.path.is_file()
        and c.path.stat().st_size <= MAX_BASE
    ]


def mutation_variants(seed: int, per_file: int, base: list[Case] | None = None) -> Iterator[Variant]:
    """``per_file`` mutations of each base by each mutator that applies, seeded by ``seed`` (a variant's bytes
    depend on the seed, the case, the mutator and ``n`` only); repeats and no-ops left out."""
    seen: set[bytes] = set()
    for case in bases() if base is None else base:
        data = case.path.read_bytes()
        seen.add(hashlib.sha256(data).digest())
        for name, (fn, formats) in sorted(MUTATORS.items()):
            if case.format not in formats:
                continue
            for n in range(per_file):
                new = fn(data, random.Random(f"{seed}:{case.id}:{name}:{n}"))
                if new is None or hashlib.sha256(new).digest() in seen:
                    continue
                seen.add(hashlib.sha256(new).digest())
                yield Variant(
                    f"mutation/{name}/{case.id}/{n}",
                    "mutation",
                    name,
                    case.format,
                    new,
                    dict(case.hints),
                    case.id,
                )


def family_variants() -> list[Variant]:
    """The committed cases of the ``.t7`` adversarial family."""
    return committed_family_variants(["t7"])


def as_lua_run(answer: Answer) -> Run:
    """Lua's answer as the harness's Run (for the report): a signal is a crash, a time-out a time-out."""
    if answer.ended == "signal":
        run = Run(["lua-torch"], -answer.code, b"", answer.summary().encode(), 0.0)
    else:
        run = Run(
            ["lua-torch"],
            answer.status,
            answer.stdout.encode(),
            (answer.stderr + "\n").encode() if answer.stderr else b"",
            0.0,
        )
    check_output(run)
    if run.problems:
        run.outcome = "broken"
    return run


def classify(lua: Answer, reference: Run, fmt: str = "") -> Verdict:
    """The class of one variant: real disagreements are a contract break of the reference, an accepted file
    described otherwise than Lua describes what it loaded, a file the reference accepts that Lua refuses or
    crashes on, and a refusal of a file Lua loads that no rule of documented_lua.yaml explains."""
    if reference.outcome == "broken":
        return Verdict("reference-contract-break", "; ".join(reference.problems)[:500])
    if reference.outcome in ("rejected", "declined") and READER_BUG.match(reference.message):
        return Verdict("reference-contract-break", reference.message[:500])
    ref_accepts = reference.outcome == "accepted"
    outcome = lua.outcome
    if outcome == "declined" or reference.outcome == "declined":
        return Verdict("not-comparable", lua.stderr[:200] or reference.message[:200])
    if outcome in ("crashes", "timeout", "broken"):
        if ref_accepts:
            return Verdict("looser-than-lua", f"Lua: {lua.summary()[:300]}; the reference accepts")
        return Verdict("lua-broken", f"Lua: {lua.summary()[:200]}; reference: {reference.message[:200]}")
    if outcome == "refuses":
        if ref_accepts:
            rule = documented.match(lua.stderr, "lua", fmt, documented.LUA_RULES_FILE)
            if rule is not None:
                return Verdict("looser-documented", lua.stderr[:300], rule.id)
            return Verdict("looser-than-lua", f"Lua refuses: {lua.summary()[:300]}")
        return Verdict("agree-refuse", f"Lua: {lua.summary()[:150]}; reference: {reference.message[:150]}")
    if ref_accepts:
        diffs = compare(json.loads(lua.stdout), reference.description, ignore=IGNORE)
        if not diffs:
            return Verdict("agree-accept", "")
        if all(d.message == "type: expected 'none', got 'function'" for d in diffs):  # damaged bytecode:
            return Verdict("looser-documented", "Lua loads the function as nil", BYTECODE_RULE)  # nil in Lua
        return Verdict("accepted-different", "; ".join(map(str, diffs[:5]))[:800])
    rule = documented.match(reference.message, "reference", fmt, documented.LUA_RULES_FILE)
    if rule is not None:
        return Verdict("stricter-documented", reference.message[:300], rule.id)
    return Verdict("unexplained-refusal", f"Lua loads it; the reference: {reference.message[:300]}")


class T7Differential:
    """Lua's worker and the reference's, started on entry; :meth:`check` answers one variant."""

    def __init__(self, reference_seconds: float = REFERENCE_SECONDS) -> None:
        self.lua = LuaWorker()
        self.reference = Worker("reference", reference_seconds)
        self.pool = ThreadPoolExecutor(2)
        self.folder: Path | None = None

    def __enter__(self) -> T7Differential:
        self.lua.__enter__()
        self.reference.start()
        self.folder = Path(self.lua.folder)
        return self

    def __exit__(self, *exc: object) -> None:
        self.reference.stop()
        self.lua.__exit__(*exc)
        self.pool.shutdown()

    def check(self, v: Variant) -> Row:
        assert self.folder is not None
        path = self.folder / f"variant-{hashlib.sha256(v.data).hexdigest()[:16]}.t7"
        path.write_bytes(v.data)
        lua = self.pool.submit(self.lua.run, path, v.hints)
        ref = as_run(
            self.pool.submit(self.reference.run, path, hint_env(v.hints)).result(), ["torchfmt", "dump"]
        )
        answer = lua.result()
        path.unlink()
        return Row(v, as_lua_run(answer), ref, classify(answer, ref, v.format))
