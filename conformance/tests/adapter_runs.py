"""Running one named adapter on committed cases, for the ``test_adapter_*.py`` files (harness/readers.py,
spec/canonical.md#canonical-reader-cli).  An adapter that is not installed here skips its tests, unless
``TORCHFMT_REQUIRE_ADAPTERS`` is set (CI sets it after running the adapter's setup): then it fails.

Each run is the adapter's own command, a process per file (most start torch: a second or more each); a
test module names the cases it will judge with :func:`start` in its ``start_runs`` (called by conftest.py
when collection ends), so that they run side by side while other tests run, and each test still judges
the run of its case."""

from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pytest
from harness import readers
from harness.cases import CASES_DIR, Case, load_case
from harness.runner import Run, run_reader
from harness.verdict import judge

_PROBING = threading.Lock()


@functools.cache
def _resolved(name: str) -> readers.Reader | str:
    try:
        return readers.resolve(name)
    except readers.UnknownReader as e:
        return str(e)


def resolved(name: str) -> readers.Reader | str:
    """The named reader, or why it is not installed here (probed once per session, by one thread)."""
    with _PROBING:
        return _resolved(name)


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


#: Runs started ahead by :func:`start`: (reader, case id, file) -> the run.
_STARTED: dict[tuple[str, str, str], Future[Run]] = {}
_POOL = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1), thread_name_prefix="adapter")


def _gives(r: readers.Reader, case: Case) -> bool:
    return case.trusted or not r.trusted_only


def _run(name: str, case: Case) -> Run | None:
    """The reader's run on ``case`` (``None``: not installed here, or a case it must not be given)."""
    found = resolved(name)
    if isinstance(found, str) or not _gives(found, case):
        return None
    return run_reader(found.command, case.path, case.hints, extra_env=found.env)


def start(name: str, case_ids: list[str]) -> None:
    """Start the runs of the reader ``name`` on these committed cases, side by side, in threads (the
    reader is probed there too: this returns at once)."""
    for case_id in case_ids:
        case = committed(case_id)
        key = (name, case.id, str(case.path))
        if key not in _STARTED:
            _STARTED[key] = _POOL.submit(_run, name, case)


def verdict(name: str, case: Case | str) -> tuple[str, str, str]:
    """(verdict outcome, verdict kind, run message) of the reader ``name`` on a case (its run started by
    :func:`start`, or run now); a case that a ``trusted_only`` reader must not see is never run."""
    r = reader(name)
    case = committed(case) if isinstance(case, str) else case
    started = _STARTED.pop((name, case.id, str(case.path)), None)
    if started is not None:
        run: Run | None = started.result()
    else:
        run = run_reader(r.command, case.path, case.hints, extra_env=r.env) if _gives(r, case) else None
    v = judge(case, run, declined_fails=False, inert=r.inert, trusted_only=r.trusted_only,
              unexpressed=r.unexpressed)
    return v.outcome, v.kind, run.message if run else ""
