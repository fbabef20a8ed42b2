"""Judge one run against its case (spec/canonical.md#canonical-reader-cli).

accept: exit 0 and a description equal to the expected one; reject: exit 1 with one of the expected
codes; impl: either.  A declined case (exit 2) is reported apart for third-party readers, and is a
failure for the reference reader, which must read everything the suite holds.  A broken run fails
whatever the case expects.

Two kinds of reader are judged apart (harness/readers.py): a reader that runs code from files
(``trusted_only``) is never given a case that is not :attr:`Case.trusted`, and each such case is declined
for it; an ``inert`` reader (one that never calls a pickle global, by design) passes a case that expects
only ``unsafe-global`` by accepting it, provided the run is otherwise sound, the canaries untouched
included (spec/canonical.md#canonical-inert).  A reader whose adapter names ``unexpressed`` fields is
compared on everything else, and its verdict says the comparison was partial.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cases import Case
from .compare import compare, same_text
from .runner import Run
from .schema import document_problems

MAX_DIFFERENCES_SHOWN = 15


#: What a failure was, for the results matrix: a breakage of the run (harness/runner.py BREAKAGES), or
#: one of these (``batch-differs``: a reader's batch answer and its run alone judge differently,
#: spec/canonical.md#canonical-reader-batch; ``harness-error``: the harness raised while judging the case,
#: or pytest failed its test for another reason: conftest.py; both fail the case).
FAILURES = ("invalid-case", "not-run", "declined", "rejected-wrongly", "wrong-code", "accepted-wrongly",
            "wrong-description", "batch-differs", "harness-error")


@dataclass(frozen=True)
class Verdict:
    outcome: str  # "pass" | "fail" | "declined"
    detail: str
    kind: str = ""  # for a failure: one of FAILURES or a run breakage; else the outcome

    def __post_init__(self) -> None:
        if not self.kind:
            object.__setattr__(self, "kind", self.outcome)


#: How much of a case's note a failure quotes.
NOTE_SHOWN = 240


def why(case: Case) -> str:
    """The rule a case checks and its note, for a failure message: what to read to mend it."""
    out = f"\n  spec: {', '.join(case.spec)}" if case.spec else ""
    note = " ".join(str(case.provenance.get("notes", "")).split())
    if note:
        out += "\n  case note: " + (note if len(note) <= NOTE_SHOWN else note[:NOTE_SHOWN] + " ...")
    return out


def harness_error(error: BaseException, what: str = "judging the case") -> Verdict:
    """The failure of a case whose judging raised: the reader may be right, but nothing showed it."""
    return Verdict("fail", f"the harness raised while {what} (the case fails: a pass must be shown): "
                           f"{type(error).__name__}: {str(error)[:500]}", "harness-error")


UNTRUSTED = "declined: not a real writer's accept case, never given to a reader that runs code from files"


def judge(case: Case, run: Run | None, *, declined_fails: bool, inert: bool = False,
          trusted_only: bool = False, unexpressed: frozenset[str] = frozenset()) -> Verdict:
    """The verdict for ``run`` of ``case``; ``declined_fails`` for the reference reader, ``inert`` and
    ``trusted_only`` and ``unexpressed`` as the reader's adapter.yaml says."""
    case.loaded()
    if case.problems:
        return Verdict("fail", "invalid case: " + "; ".join(case.problems), "invalid-case")
    if trusted_only and not case.trusted:
        return Verdict("declined", UNTRUSTED)
    if run is None:
        return Verdict("fail", "the reader was not run", "not-run")
    if run.outcome == "broken":
        return Verdict("fail", run.summary(), run.breakage or "output")
    if run.outcome == "declined":
        if declined_fails:
            return Verdict("fail", f"declined by the reference reader: {run.message}", "declined")
        return Verdict("declined", f"declined: {run.message}")
    if run.outcome == "rejected":
        if not case.reject_ok:
            return Verdict("fail", f"rejected an {case.category} case: {run.message}{why(case)}",
                           "rejected-wrongly")
        if case.errors and run.code not in case.errors:
            return Verdict("fail", f"rejected with {run.code!r}, expected one of {list(case.errors)}: "
                                   f"{run.message}{why(case)}", "wrong-code")
        return Verdict("pass", f"rejected: {run.message}")
    # accepted: a description document first, whatever the case expects
    # (spec/canonical.md#canonical-document; a case that fixes no description has nothing else to check)
    problems = document_problems(run.description, unexpressed)
    if problems:
        return Verdict("fail", f"output: not a description document: {'; '.join(problems)}", "output")
    if inert and not case.accept_ok and case.errors == ("unsafe-global",):
        return Verdict("pass", "accepted inertly: judged by the inert mode "
                               "(spec/canonical.md#canonical-inert); no canary was touched")
    if not case.accept_ok:
        expected = f" (expected {' or '.join(case.errors)})" if case.errors else ""
        return Verdict("fail", f"accepted a {case.category} case{expected}{why(case)}", "accepted-wrongly")
    if case.description is None:
        return Verdict("pass", "accepted (the case fixes no description)")
    diffs = [] if not unexpressed and same_text(case.description, run.description) \
        else compare(case.description, run.description, unexpressed)
    partial = f" (partial comparison: {', '.join(sorted(unexpressed))} not compared)" if unexpressed else ""
    if diffs:
        shown = "\n  ".join(str(d) for d in diffs[:MAX_DIFFERENCES_SHOWN])
        more = f"\n  ... and {len(diffs) - MAX_DIFFERENCES_SHOWN} more" \
            if len(diffs) > MAX_DIFFERENCES_SHOWN else ""
        return Verdict("fail", f"{len(diffs)} difference(s) from the expected description{partial}:"
                               f"\n  {shown}{more}",
                       "wrong-description")
    return Verdict("pass", f"accepted; description equal{partial}")
