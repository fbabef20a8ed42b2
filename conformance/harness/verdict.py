"""Judge one run against its case (spec/canonical.md#canonical-reader-cli).

accept: exit 0 and a description equal to the expected one; reject: exit 1 with one of the expected
codes; impl: either.  A declined case (exit 2) is reported apart for third-party readers, and is a
failure for the reference reader, which must read everything the suite holds.  A broken run fails
whatever the case expects.
"""

from __future__ import annotations

from dataclasses import dataclass

from .cases import Case
from .compare import compare
from .runner import Run

MAX_DIFFERENCES_SHOWN = 15


@dataclass(frozen=True)
class Verdict:
    outcome: str  # "pass" | "fail" | "declined"
    detail: str


def judge(case: Case, run: Run | None, *, declined_fails: bool) -> Verdict:
    """The verdict for ``run`` of ``case``; ``declined_fails`` for the reference reader."""
    if case.problems:
        return Verdict("fail", "invalid case: " + "; ".join(case.problems))
    if run is None:
        return Verdict("fail", "the reader was not run")
    if run.outcome == "broken":
        return Verdict("fail", run.summary())
    if run.outcome == "declined":
        if declined_fails:
            return Verdict("fail", f"declined by the reference reader: {run.message}")
        return Verdict("declined", f"declined: {run.message}")
    if run.outcome == "rejected":
        if not case.reject_ok:
            return Verdict("fail", f"rejected an {case.category} case: {run.message}")
        if case.errors and run.code not in case.errors:
            return Verdict("fail", f"rejected with {run.code!r}, expected one of {list(case.errors)}: "
                                   f"{run.message}")
        return Verdict("pass", f"rejected: {run.message}")
    # accepted
    if not case.accept_ok:
        expected = f" (expected {' or '.join(case.errors)})" if case.errors else ""
        return Verdict("fail", f"accepted a {case.category} case{expected}")
    if case.description is None:
        return Verdict("pass", "accepted (the case fixes no description)")
    diffs = compare(case.description, run.description)
    if diffs:
        shown = "\n  ".join(str(d) for d in diffs[:MAX_DIFFERENCES_SHOWN])
        more = f"\n  ... and {len(diffs) - MAX_DIFFERENCES_SHOWN} more" \
            if len(diffs) > MAX_DIFFERENCES_SHOWN else ""
        return Verdict("fail", f"{len(diffs)} difference(s) from the expected description:\n  {shown}{more}")
    return Verdict("pass", "accepted; description equal")
