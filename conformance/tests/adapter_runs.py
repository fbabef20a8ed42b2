"""Running one named adapter on committed cases, for the ``test_adapter_*.py`` files (harness/readers.py,
spec/canonical.md#canonical-reader-cli).  An adapter that is not installed here skips its tests, unless
``TORCHFMT_REQUIRE_ADAPTERS`` is set (CI sets it after running the adapter's setup): then it fails."""

from __future__ import annotations

import functools
import os

import pytest
from harness import readers
from harness.cases import CASES_DIR, Case, load_case
from harness.runner import run_reader
from harness.verdict import judge


@functools.cache
def resolved(name: str) -> readers.Reader | str:
    """The named reader, or why it is not installed here (probed once per session)."""
    try:
        return readers.resolve(name)
    except readers.UnknownReader as e:
        return str(e)


def reader(name: str) -> readers.Reader:
    """The named reader; skips the test when it is absent (fails under TORCHFMT_REQUIRE_ADAPTERS)."""
    found = resolved(name)
    if isinstance(found, str):
        if os.environ.get("TORCHFMT_REQUIRE_ADAPTERS"):
            pytest.fail(f"TORCHFMT_REQUIRE_ADAPTERS is set but {found}")
        pytest.skip(found)
    return found


def committed(case_id: str) -> Case:
    return load_case(CASES_DIR / case_id)


def verdict(name: str, case: Case | str) -> tuple[str, str, str]:
    """(verdict outcome, verdict kind, run message) of the reader ``name`` on a case; a case that a
    ``trusted_only`` reader must not see is never run."""
    r = reader(name)
    case = committed(case) if isinstance(case, str) else case
    run = run_reader(r.command, case.path, case.hints, extra_env=r.env) \
        if case.trusted or not r.trusted_only else None
    v = judge(case, run, declined_fails=False, inert=r.inert, trusted_only=r.trusted_only,
              unexpressed=r.unexpressed)
    return v.outcome, v.kind, run.message if run else ""
