"""What one variant's two runs say together (spec/canonical.md#canonical-differential).

torch's run (the torch adapter: ``torch.load(weights_only=True)`` described by torch_describe) and the
reference's run (``torchfmt dump``) are each a :class:`harness.runner.Run`, checked by the suite's
contract rules; when both accept, the descriptions are compared by the suite's comparator
(:func:`harness.compare.compare`, torch's description as the expected one).

The classes, real disagreements first:

- ``reference-contract-break``: the reference's run broke the contract (exit not 0/1/2, not exactly one
  stderr line, a traceback, over the time limit), or its one line owns up to a reader bug (``torchfmt``'s
  CLI turns an unexpected exception into ``unsupported: internal-error (...)`` and a MemoryError or
  RecursionError into ``limit-exceeded: Python ...``: the contract kept, the bug still there);
- ``accepted-different``: both accept and the descriptions differ;
- ``looser-than-torch``: the reference accepts what torch refuses (or what torch's run could not finish);
- ``accepted-undescribable``: torch loads a value the description has no form for, the reference accepts;
- ``unexplained-refusal``: torch loads it, the reference refuses, and no rule of ``documented.yaml`` says why;
- ``stricter-documented``: torch loads it, the reference refuses by a documented rule;
- ``looser-documented``: torch refuses it, the reference accepts, and a rule of ``documented.yaml`` for
  torch's message gives the spec's reason (spec/pickle.md#pickle-weights-only);
- ``agree-accept``, ``agree-refuse``: the same verdict (refusal codes are not compared);
- ``torch-broken``: torch's run crashed or timed out, the reference refused;
- ``not-comparable``: torch does not read this kind of file (``.t7``, tar, TorchScript: the adapter declines),
  or the reference reads the bytes as a ``.t7`` file (a mutant whose first bytes no longer start a ``.pt``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conformance.harness.compare import compare
from conformance.harness.runner import Run

from . import documented

REAL = ("reference-contract-break", "accepted-different", "looser-than-torch", "accepted-undescribable",
        "unexplained-refusal")
FINE = ("stricter-documented", "looser-documented", "agree-accept", "agree-refuse", "torch-broken",
        "not-comparable")
CLASSES = REAL + FINE
#: The reference's own lines for a bug it caught (reference_impl/torchfmt/cli.py).
READER_BUG = re.compile(r"unsupported: internal-error \(|limit-exceeded: Python (MemoryError|RecursionError) "
                        r"while reading")
#: torch adapter declines that mean "torch does not read this kind of file" (torch_reader.py).
FORMAT_DECLINES = ("unsupported: t7-", "unsupported: tar-archive", "unsupported: torchscript-archive")


@dataclass
class Verdict:
    klass: str
    detail: str
    rule: str = ""

    @property
    def real(self) -> bool:
        return self.klass in REAL


def _said(run: Run) -> str:
    return run.message if run.outcome in ("rejected", "declined") else run.summary()


def classify(torch: Run | None, reference: Run, fmt: str = "") -> Verdict:
    """The class of one variant of format ``fmt`` from torch's run (``None``: torch was not asked) and
    the reference's."""
    if reference.outcome == "broken":
        return Verdict("reference-contract-break", "; ".join(reference.problems)[:500])
    if reference.outcome in ("rejected", "declined") and READER_BUG.match(reference.message):
        return Verdict("reference-contract-break", reference.message[:500])
    if torch is None or (torch.outcome == "declined" and torch.message.startswith(FORMAT_DECLINES)):
        return Verdict("not-comparable", torch.message if torch else "torch is not asked about this format")
    ref_accepts = reference.outcome == "accepted"
    if ref_accepts and str(reference.description.get("format", "")).startswith("t7-"):
        return Verdict("not-comparable", "the reference reads it as a Lua Torch .t7 file, which torch "
                                         "does not read (spec/canonical.md#canonical-detect)")
    if torch.outcome == "broken":
        if ref_accepts:
            return Verdict("looser-than-torch", f"torch's run broke ({torch.summary()[:300]}); the reference "
                                                "accepts")
        return Verdict("torch-broken", f"torch: {torch.summary()[:200]}; reference: {_said(reference)[:200]}")
    if torch.outcome == "declined":
        if ref_accepts:
            return Verdict("accepted-undescribable", f"torch: {torch.message[:300]}")
        return Verdict("agree-refuse", f"torch: {torch.message[:150]}; reference: {_said(reference)[:150]}")
    if torch.outcome == "rejected":
        if ref_accepts:
            rule = documented.match(torch.message, "torch", fmt)
            if rule is not None:
                return Verdict("looser-documented", torch.message[:300], rule.id)
            return Verdict("looser-than-torch", f"torch refuses: {torch.message[:300]}")
        return Verdict("agree-refuse", f"torch: {torch.message[:150]}; reference: {_said(reference)[:150]}")
    # torch accepts
    if ref_accepts:
        diffs = compare(torch.description, reference.description)
        if not diffs:
            return Verdict("agree-accept", "")
        return Verdict("accepted-different", "; ".join(map(str, diffs[:5]))[:800])
    rule = documented.match(reference.message, "reference", fmt)
    if rule is not None:
        return Verdict("stricter-documented", reference.message[:300], rule.id)
    return Verdict("unexplained-refusal", f"torch loads it; the reference: {reference.message[:300]}")
