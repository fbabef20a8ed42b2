"""Running one named adapter on committed cases, for the ``test_adapter_*.py`` files (harness/readers.py,
spec/canonical.md#canonical-reader-cli).  An adapter that is not installed here skips its tests, unless
``TORCHFMT_REQUIRE_ADAPTERS`` is set (CI sets it after running the adapter's setup): then it fails.

Each run is the adapter's own command, a process per file (most start torch: a second or more each); a
test module names the cases it will judge with :func:`start` in its ``start_runs`` (called by conftest.py
when collection ends), so that they run side by side while other tests run, and each test still judges
the run of its case.  An adapter with a ``warm`` entry in its adapter.yaml runs the first case it is
started on as its command and the others in children of one warm server (harness/warm.py: torch
imported once), each judged by the same harness.runner checks."""

from __future__ import annotations

import atexit
import functools
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from conformance.harness import readers, warm
from conformance.harness.cases import CASES_DIR, Case, load_case
from conformance.harness.runner import Run, run_reader
from conformance.harness.verdict import judge

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
#: The warm runs of the first case each :func:`start` was given, by the same key.
_TWINS: dict[tuple[str, str, str], Future[Run | None]] = {}
_POOL = ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 1), thread_name_prefix="adapter")


def _gives(r: readers.Reader, case: Case) -> bool:
    return case.trusted or not r.trusted_only


#: Each warm adapter's server (made by its first warm run) and the lock its runs take turns under.
_WARM: dict[str, tuple[threading.Lock, list[warm.WarmServer]]] = {}


def _warm_run(r: readers.Reader, case: Case) -> Run:
    """``case`` through the reader's warm server (one run at a time: a server answers in order)."""
    assert r.warm is not None
    lock, servers = _WARM.setdefault(r.name, (threading.Lock(), []))
    with lock:
        if not servers:
            servers.append(warm.WarmServer(r.warm["script"], r.warm["preload"], r.warm["python"]))
            atexit.register(servers[0].close)
        return run_reader(r.command, case.path, case.hints, extra_env=r.env, launch=servers[0].start)


def _run(name: str, case: Case, command: bool = True) -> Run | None:
    """The reader's run on ``case`` (``None``: not installed here, or a case it must not be given): its
    command, or (``command`` false, an adapter with a warm entry) a warm run."""
    found = resolved(name)
    if isinstance(found, str) or not _gives(found, case):
        return None
    if not command and found.warm is not None and warm.available():
        return _warm_run(found, case)
    return run_reader(found.command, case.path, case.hints, extra_env=found.env)


def _warm_twin(name: str, case: Case) -> Run | None:
    """A warm run of ``case``, for an adapter with a warm entry (``None`` for the others)."""
    found = resolved(name)
    if isinstance(found, str) or found.warm is None or not warm.available() or not _gives(found, case):
        return None
    return _warm_run(found, case)


def start(name: str, case_ids: list[str]) -> None:
    """Start the runs of the reader ``name`` on these committed cases, side by side, in threads (the
    reader is probed there too: this returns at once).  The first is the command's run, and, where the
    adapter has a warm entry, also a warm run (:func:`warm_and_command`); the others are warm there."""
    for n, case_id in enumerate(case_ids):
        case = committed(case_id)
        key = (name, case.id, str(case.path))
        if key not in _STARTED:
            _STARTED[key] = _POOL.submit(_run, name, case, n == 0)
        if n == 0 and key not in _TWINS:
            _TWINS[key] = _POOL.submit(_warm_twin, name, case)


def warm_and_command(name: str, case_id: str) -> tuple[Run, Run]:
    """(the command's run, a warm run) of the reader ``name`` on the first case its ``start`` was given:
    what an adapter's warm entry is held to."""
    r = reader(name)
    assert r.warm is not None, f"{name} has no warm entry"
    case = committed(case_id)
    key = (name, case.id, str(case.path))
    command = _STARTED[key].result() if key in _STARTED else _run(name, case)
    twin = _TWINS[key].result() if key in _TWINS else _warm_twin(name, case)
    assert command is not None and twin is not None
    return command, twin


def verdict(name: str, case: Case | str) -> tuple[str, str, str]:
    """(verdict outcome, verdict kind, run message) of the reader ``name`` on a case (its run started by
    :func:`start`, or run now); a case that a ``trusted_only`` reader must not see is never run."""
    r = reader(name)
    case = committed(case) if isinstance(case, str) else case
    started = _STARTED.get((name, case.id, str(case.path)))  # kept: warm_and_command reads it again
    if started is not None:
        run: Run | None = started.result()
    else:
        run = run_reader(r.command, case.path, case.hints, extra_env=r.env) if _gives(r, case) else None
    v = judge(case, run, declined_fails=False, inert=r.inert, trusted_only=r.trusted_only,
              unexpressed=r.unexpressed)
    return v.outcome, v.kind, run.message if run else ""
