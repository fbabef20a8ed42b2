"""The harness's two shortcuts change nothing a run is judged on (spec/canonical.md#canonical-reader-cli):
the reference reader's warm start (harness/warm.py) gives what ``python -m torchfmt dump`` gives, and the
kernel watch of a tree (harness/fswatch.py) sees every change a snapshot sees."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from conformance.harness import warm
from conformance.harness.cases import CASES_DIR, committed_cases
from conformance.harness.fswatch import TreeWatch
from conformance.harness.readers import resolve
from conformance.harness.runner import Run, run_reader

pytestmark = [pytest.mark.spec("canonical.md#canonical-reader-cli"),
              pytest.mark.skipif(not warm.available(), reason="no fork here: the harness runs the command")]

REFERENCE = resolve("reference").command


@pytest.fixture(scope="module")
def server():
    s = warm.WarmServer()
    yield s
    s.close()


def _cases() -> list:
    """A few cases of every outcome and format: accepts, rejects, hints, a deep and a big output."""
    by_id = {c.id: c for c in committed_cases()}
    chosen = [c for c in by_id.values() if c.category in ("accept", "reject")]
    formats = sorted({c.format for c in chosen})
    picked = []
    for fmt in formats:
        for category in ("accept", "reject"):
            picked += [c for c in chosen if c.format == fmt and c.category == category][:3]
    return picked + [by_id[i] for i in ("t7-ascii/" + "table-nested",) if i in by_id]


CASES = _cases()


#: The command's run of each case (a new interpreter each), started side by side by :func:`start_runs`.
COMMANDS: dict[str, Future[Run]] = {}


def start_runs(selected: list[pytest.Item] | None = None) -> None:
    """Start the command's runs (conftest.py calls this when collection ends); the tests make the warm
    runs one by one and compare."""
    if not COMMANDS and (selected is None or any(i.originalname == "test_a_warm_run_is_the_command"
                                                 for i in selected if isinstance(i, pytest.Function))):
        pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="command")
        COMMANDS.update({c.id: pool.submit(run_reader, REFERENCE, c.path, c.hints) for c in CASES})
        pool.shutdown(wait=False)


@pytest.fixture(scope="module")
def commands() -> dict[str, Future[Run]]:
    start_runs()
    return COMMANDS


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_warm_run_is_the_command(case, server, commands: dict[str, Future[Run]]) -> None:
    hot = run_reader(REFERENCE, case.path, case.hints, launch=server.start)
    cold = commands[case.id].result()
    assert (hot.status, hot.stdout, hot.stderr) == (cold.status, cold.stdout, cold.stderr)
    assert hot.outcome == cold.outcome and hot.problems == cold.problems == []


def test_a_warm_run_keeps_the_limits(server, tmp_path: Path) -> None:
    big = tmp_path / "x.pt"
    big.write_bytes(b"PK" + b"\0" * 100)
    slow = run_reader(REFERENCE, big, launch=server.start, memory_limit=64 << 20)
    # 64 MiB of address space is less than the warm server already holds: the child cannot run
    assert slow.outcome in ("broken", "rejected"), slow.summary()
    again = run_reader(REFERENCE, next(c for c in committed_cases() if c.category == "accept").path,
                       launch=server.start)
    assert again.outcome == "accepted", again.summary()  # the server survives a child's failure


def test_a_warm_run_that_hangs_is_killed(server) -> None:
    # a file the reader works on for seconds (the call-work case at its limit: 2^23 call items), with half
    # a second to do it: a FIFO no longer hangs the reference, which refuses a non-regular file at once
    # (spec/canonical.md#canonical-reader-input), and a .t7 stream of more objects than the reader
    # counts is refused at once too
    slow = CASES_DIR / "pt-zip" / "adv-bounds-call-work-at-limit" / "data.pt"
    run = run_reader(REFERENCE, slow, launch=server.start, time_limit=0.5)
    assert run.breakage == "timeout", run.summary()


def test_the_tree_watch_sees_what_a_snapshot_sees(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "case" / "__pycache__").mkdir(parents=True)
    (root / "case" / "data.pt").write_bytes(b"x")
    (root / "case" / "gone").write_bytes(b"x")
    watch = TreeWatch.open(root, frozenset({"__pycache__"}))
    if watch is None:
        pytest.skip("no inotify here: the harness snapshots instead")
    try:
        mark = watch.mark()
        assert watch.since(mark) == []
        code = (f"import os; open({str(root / 'case' / 'data.pt')!r}, 'ab').write(b'y'); "
                f"open({str(root / 'new')!r}, 'w').close(); os.remove({str(root / 'case' / 'gone')!r}); "
                f"open({str(root / 'case' / '__pycache__' / 'x.pyc')!r}, 'w').close()")
        subprocess.run([sys.executable, "-c", code], check=True)
        changes = watch.since(mark)
        assert any(c.startswith("modified ") and c.endswith("data.pt") for c in changes), changes
        assert any(c.startswith("created ") and c.endswith("new") for c in changes), changes
        assert any(c.startswith("removed ") and c.endswith("gone") for c in changes), changes
        assert not any("__pycache__" in c for c in changes), changes
        assert watch.since(watch.mark()) == []
    finally:
        watch.close()


def test_runs_that_end_at_once_are_not_lost(server, tmp_path: Path) -> None:
    """A run can end before its start is acknowledged, both replies in one read of the pipe."""
    empty = tmp_path / "empty.t7"
    empty.write_bytes(b"")
    runs = [run_reader(REFERENCE, empty, launch=server.start, time_limit=10) for _ in range(30)]
    assert {(r.outcome, r.code) for r in runs} == {("rejected", "truncated")}, [r.summary() for r in runs]


ADAPTER_SCRIPT = '''
import json, sys
DOC = {"description_version": 0, "format": "pt-zip", "objects": [], "storages": {}}
path = sys.argv[1]
kind = open(path).read().strip()
if kind == "accept":
    print(json.dumps(DOC))
elif kind == "reject":
    print("bad-magic: not a checkpoint (at byte 0)", file=sys.stderr)
    sys.exit(1)
elif kind == "decline":
    sys.exit("unsupported: torchscript-archive")
elif kind == "raise":
    raise ValueError("a reader bug")
elif kind == "thread":  # the output comes from a thread the interpreter waits for as it ends
    import threading, time
    threading.Thread(target=lambda: (time.sleep(0.2), print(json.dumps(DOC)))).start()
elif kind == "atexit":  # and from an exit handler
    import atexit
    atexit.register(lambda: print(json.dumps(DOC)))
elif kind == "start-up":  # what the interpreter took from the environment as it started
    print(json.dumps({"dont_write_bytecode": sys.flags.dont_write_bytecode}))
'''


@pytest.mark.parametrize("kind", ["accept", "reject", "decline", "raise", "thread", "atexit", "start-up"])
def test_an_adapters_warm_run_is_its_command(tmp_path: Path, kind: str) -> None:
    """An adapter's warm server (adapter.yaml ``warm``) runs its script as ``python SCRIPT PATH`` would:
    same status, output and last error line, whether the script ends, calls sys.exit with a status or a
    message, or raises, and what its threads and exit handlers print as the interpreter ends; and its
    interpreter started with the variables a run's starts with (the server's environment here lacks
    them, as the suite's may)."""
    script = tmp_path / "run.py"
    script.write_text(ADAPTER_SCRIPT)
    (tmp_path / "case").mkdir()
    path = tmp_path / "case" / "data.pt"
    path.write_text(kind)
    command = [sys.executable, str(script)]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "OMP_NUM_THREADS")}
    s = warm.WarmServer(str(script), ["json"], env=env)
    try:
        warm_run = run_reader(command, path, launch=s.start)
    finally:
        s.close()
    run = run_reader(command, path)
    assert (warm_run.status, warm_run.stdout, warm_run.stderr.splitlines()[-1:]) == \
        (run.status, run.stdout, run.stderr.splitlines()[-1:])
    assert (warm_run.outcome, warm_run.breakage) == (run.outcome, run.breakage)
    assert run.status == {"accept": 0, "reject": 1, "decline": 1, "raise": 1, "thread": 0, "atexit": 0,
                          "start-up": 0}[kind]


def test_a_warm_entry_names_only_known_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.harness import readers

    folder = tmp_path / "fake"
    folder.mkdir()
    (folder / "run.py").write_text("")
    (folder / "adapter.yaml").write_text("reader: fake 1.0\nwarm:\n  preload: [json]\n  scirpt: run.py\n")
    monkeypatch.setattr(readers, "ADAPTERS_DIR", tmp_path)
    with pytest.raises(readers.UnknownReader, match="warm.scirpt"):
        readers.metadata("fake")
    (folder / "adapter.yaml").write_text("reader: fake 1.0\nwarm:\n  preload: [json]\n  script: run.py\n")
    assert readers.metadata("fake")["warm"] == {"preload": ["json"], "script": "run.py"}


HANDS_ON = '''
import os, sys
env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
reader = os.path.join(os.path.dirname(__file__), "reader.py")
os.execve(sys.executable, [sys.executable, reader, *sys.argv[1:]], env)
'''


def test_a_warm_python_of_its_own_runs_without_pythonpath(tmp_path: Path) -> None:
    """An adapter whose ``run.py`` hands the file to another interpreter without ``PYTHONPATH``
    (torch113's warm ``python``): its warm runs see the environment that interpreter sees."""
    (tmp_path / "run.py").write_text(HANDS_ON)
    (tmp_path / "reader.py").write_text("import json, os\n"
                                        "print(json.dumps({'path': os.environ.get('PYTHONPATH')}))\n")
    (tmp_path / "case").mkdir()
    path = tmp_path / "case" / "data.pt"
    path.write_text("")
    command, extra = [sys.executable, str(tmp_path / "run.py")], {"PYTHONPATH": str(tmp_path)}
    s = warm.WarmServer(str(tmp_path / "reader.py"), ["json"], python=sys.executable)
    try:
        warm_run = run_reader(command, path, launch=s.start, extra_env=extra)
    finally:
        s.close()
    run = run_reader(command, path, extra_env=extra)
    assert run.outcome == "accepted" and run.description == {"path": None}, run.summary()
    assert (warm_run.status, warm_run.stdout, warm_run.stderr) == (run.status, run.stdout, run.stderr)
