"""The order runs start in: slowest first by the reader's last run (harness/durations.py), the rest in the
order their tests judge them; only the order, never a verdict (spec/canonical.md#canonical-reader-batch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.harness import durations

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-batch")


def test_slow_cases_are_apart_slowest_first_and_the_rest_keep_their_order() -> None:
    ids = ["a", "b", "c", "d", "e"]
    known = {"b": 0.2, "c": 30.0, "d": 1.0, "e": 4.5, "zz": 99.0}
    assert durations.split(ids, ids, known) == (["c", "e", "d"], ["a", "b"])
    assert durations.split(ids, ids, {}) == ([], ids)


def test_a_bomb_the_reader_has_not_run_is_slow_one_it_ran_quickly_is_not() -> None:
    ids = ["a", "bomb", "b", "known-bomb"]
    features = [[], ["adv-expansion-bomb"], ["dtype-float32"], ["adv-expansion-bomb"]]
    assert durations.split(ids, ids, {"known-bomb": 0.1}, features) == (["bomb"], ["a", "b", "known-bomb"])


def test_the_first_worker_takes_the_slow_runs_first_the_others_the_quick_ones() -> None:
    import threading

    from conformance.harness.lanes import Lanes

    gate, started, seen = threading.Event(), threading.Event(), []

    def job(name: str) -> str:
        seen.append((threading.current_thread().name, name))
        if name == "slow-1":
            started.set()
            gate.wait(10)
        elif name.startswith("quick"):
            started.wait(10)  # the quick ones end only once the first worker runs slow-1
        return name

    lanes = Lanes(2)
    *futures, = lanes.submit_all([(job, ("slow-1",), True), (job, ("slow-2",), True),
                                  *((job, (f"quick-{i}",), False) for i in range(5))])
    futures, quick = futures[:2], futures[2:]
    assert [f.result(10) for f in quick] == [f"quick-{i}" for i in range(5)]  # while slow-1 still runs
    gate.set()
    assert [f.result(10) for f in futures] == ["slow-1", "slow-2"]
    lanes.shutdown()
    assert ("reader_0", "slow-1") in seen and all(t == "reader_1" for t, n in seen if n.startswith("quick"))
    started.set()
    one, hold = Lanes(1), threading.Event()
    one.submit(hold.wait, 10)  # the worker busy while both are queued
    order = [one.submit(job, "s", slow=True), one.submit(job, "q")]
    hold.set()
    assert [f.result(10) for f in order] == ["s", "q"]
    one.shutdown()
    assert seen[-2:] == [("reader_0", "q"), ("reader_0", "s")]  # one worker: the quick ones first


def test_a_job_s_exception_reaches_its_waiter_and_shutdown_cancels_what_has_not_started() -> None:
    import threading

    from conformance.harness.lanes import Lanes

    lanes, hold = Lanes(1), threading.Event()
    failing = lanes.submit(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.result(10)
    busy = lanes.submit(hold.wait, 10)
    while not busy.running():
        threading.Event().wait(0.01)
    waiting = lanes.submit(lambda: "never")
    threading.Timer(0.2, hold.set).start()
    lanes.shutdown(cancel_futures=True)
    assert busy.result(10) is True and waiting.cancelled()


def test_a_run_adds_its_seconds_to_the_stored_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHFMT_DURATIONS_DIR", str(tmp_path))
    assert durations.load("netron") == {}
    durations.save("netron", {"x": 1.23456, "y": 2.0})
    durations.save("netron", {"y": 0.5})
    assert durations.load("netron") == {"x": 1.235, "y": 0.5}
    assert [p.name for p in tmp_path.iterdir()] == ["netron.json"]
    command = durations.store_path("python3 my reader.py")
    assert command.parent == tmp_path and command.name.startswith("command-") and " " not in command.name


def test_an_unreadable_store_is_no_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHFMT_DURATIONS_DIR", str(tmp_path))
    (tmp_path / "torch.json").write_text("[not json")
    assert durations.load("torch") == {}
    (tmp_path / "torch.json").write_text(json.dumps({"a": "slow", "b": 3}))
    assert durations.load("torch") == {"b": 3.0}


def test_batch_processes_outlive_the_workers_that_started_them_until_their_sessions_end() -> None:
    """A sandboxed batch process dies with the thread that started it (bubblewrap's --die-with-parent):
    the suite ends its sessions before its workers (conftest.py ``Suite.close``, lanes.py ``quiet``); it
    ended the workers first, and every session failed as a process killed before its input ended."""
    import os
    import subprocess
    import sys

    from conformance.harness import sandbox

    if not sandbox.bwrap_works():
        pytest.skip("no bubblewrap here: no parent-death signal")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-m", "pytest", "conformance", "-q", "-p", "no:cacheprovider",
                          "--reader-batch", "--format", "pt-tar", "-k", "storage-views"], cwd=root,
                         capture_output=True, text=True, timeout=600, env={**os.environ})
    assert "batch mode:" in out.stdout and "started" in out.stdout, out.stdout[-2000:]
    assert "the batch session" not in out.stdout and out.returncode == 0, out.stdout[-2000:]
