"""The runner holds any reader to the command-line contract (spec/canonical.md#canonical-reader-cli),
whatever the case expects: fake readers that break one rule each are caught."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.harness.runner import run_reader
from conformance.harness.sandbox import bwrap_works

#: The sandboxed variant of a test runs where bubblewrap does (harness/sandbox.py); elsewhere it runs the
#: fallback twice.
SANDBOX = bwrap_works()

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli")  # counted by spec/traceability.py


@pytest.fixture
def case_file(tmp_path: Path) -> Path:
    folder = tmp_path / "case"
    folder.mkdir()
    path = folder / "data.pt"
    path.write_bytes(b"not really a checkpoint")
    return path


def fake(code: str) -> list[str]:
    """A reader: Python code run with the file's path as sys.argv[1]."""
    return [sys.executable, "-c", textwrap.dedent(code)]


DESCRIPTION = json.dumps({"description_version": 0, "format": "pt-zip", "objects": [], "storages": {}})


def test_a_well_behaved_reader_is_classified(case_file: Path) -> None:
    ok = run_reader(fake(f"print({DESCRIPTION!r})"), case_file)
    assert ok.outcome == "accepted" and ok.description["format"] == "pt-zip", ok.problems
    rejected = run_reader(fake("import sys; print('truncated: ends at byte 3', file=sys.stderr); "
                               "sys.exit(1)"), case_file)
    assert (rejected.outcome, rejected.code) == ("rejected", "truncated"), rejected.problems
    declined = run_reader(fake("import sys; sys.stderr.write('unsupported: complex32\\n'); sys.exit(2)"),
                          case_file)
    assert declined.outcome == "declined" and declined.message == "unsupported: complex32"


@pytest.mark.parametrize("code,problem", [
    ("import sys; sys.exit(3)", "exit status 3"),
    ("import os; os.kill(os.getpid(), 9)", "signal 9"),
    ("import sys; sys.stdout.write('x' * 10)", "not one JSON document"),
    ("print('not json')", "not one JSON document"),
    (f"print({DESCRIPTION!r}); print({DESCRIPTION!r})", "not one JSON document"),
    ("print('{\"a\": NaN}')", "non-standard JSON literal"),
    ("print('{\"a\": 1, \"a\": 2}')", "duplicate key"),
    ("print('[]')", "not an object"),
    ("import sys; print('truncated: x\\nmore', file=sys.stderr); sys.exit(1)", "exactly one stderr line"),
    ("import sys; sys.exit(1)", "exactly one stderr line"),
    ("import sys; print('no-such-code: x', file=sys.stderr); sys.exit(1)", "closed set"),
    ("import sys; print('Truncated: x', file=sys.stderr); sys.exit(1)", "closed set"),
    ("import sys; print('x'); print('truncated: x', file=sys.stderr); sys.exit(1)", "stdout is not empty"),
    ("import sys; print('declined: x', file=sys.stderr); sys.exit(2)", "unsupported: "),
    ("raise ValueError('a traceback is not a rejection')", "exactly one stderr line"),
])
def test_contract_breaches_are_broken_runs(case_file: Path, code: str, problem: str) -> None:
    run = run_reader(fake(code), case_file)
    assert run.outcome == "broken"
    assert any(problem in p for p in run.problems), run.problems
    assert run.breakage == ("crash" if "exit status" in problem or "signal" in problem else "output")


def test_time_limit(case_file: Path) -> None:
    run = run_reader(fake("import time; time.sleep(30)"), case_file, time_limit=1)
    assert run.outcome == "broken" and run.seconds < 10 and run.breakage == "timeout"
    assert any("time limit" in p for p in run.problems)


def test_memory_limit(case_file: Path) -> None:
    code = "b = bytearray(600 << 20); print('{}')"
    assert run_reader(fake(code), case_file, memory_limit=2 << 30).outcome == "accepted"
    run = run_reader(fake(code), case_file, memory_limit=300 << 20)
    assert run.outcome == "broken", run.summary()


@pytest.mark.parametrize("sandbox", [SANDBOX, False], ids=["sandbox", "fallback"])
def test_sandbox_environment(case_file: Path, sandbox: bool) -> None:
    code = """
        import json, os, sys
        print(json.dumps({"cwd": os.getcwd(), "tmp": os.environ["TMPDIR"], "home": os.environ["HOME"],
                          "stdin": sys.stdin.read(), "argv": sys.argv[1:],
                          "beside": sorted(os.listdir(os.path.dirname(sys.argv[1]))),
                          "data": open(sys.argv[1], "rb").read().decode(),
                          "hints": {k: v for k, v in os.environ.items() if k.startswith("TORCHFMT_T7_")}}))
    """
    run = run_reader(fake(code), case_file, {"mode": "ascii", "long_size": 4}, sandbox=sandbox)
    got = run.description
    assert run.outcome == "accepted", run.problems
    assert got["cwd"] == got["tmp"] == got["home"]
    if sandbox:
        assert got["cwd"] == "/tmp"
    else:
        assert "torchfmt-run-" in got["cwd"] and not Path(got["cwd"]).exists(), "removed after the run"
    assert got["stdin"] == ""
    # a copy of the file, alone in a folder of its own (never the case's folder)
    assert len(got["argv"]) == 1 and got["argv"][0] != str(case_file.resolve())
    assert Path(got["argv"][0]).name == case_file.name and got["beside"] == [case_file.name]
    assert got["data"] == case_file.read_text()
    assert got["hints"] == {"TORCHFMT_T7_MODE": "ascii", "TORCHFMT_T7_LONG_SIZE": "4"}
    plain = run_reader(fake(code), case_file, sandbox=sandbox)
    assert plain.description["hints"] == {}


def test_writing_in_the_temp_folder_is_allowed(case_file: Path) -> None:
    code = f"open('scratch.bin', 'wb').write(b'x'); import os; os.mkdir('d'); print({DESCRIPTION!r})"
    assert run_reader(fake(code), case_file).outcome == "accepted"


@pytest.mark.parametrize("where", ["case-folder", "case-file", "parent", "watched", "canary", "delete"])
def test_side_effects_outside_the_temp_folder_are_caught(case_file: Path, tmp_path: Path,
                                                         where: str) -> None:
    watched = tmp_path / "watched"
    watched.mkdir()
    canary = tmp_path / "canary"  # not the shared CANARY: other sessions may be running the suite
    (watched / "keep").write_text("x")
    action = {
        "case-folder": f"open({str(case_file.parent / 'new')!r}, 'w').write('x')",
        "case-file": f"open({str(case_file)!r}, 'ab').write(b'x')",
        "parent": "open('../escaped', 'w').write('x')",
        "watched": f"open({str(watched / 'keep')!r}, 'a').write('more')",
        "canary": f"open({str(canary)!r}, 'w').write('x')",
        "delete": f"import os; os.remove({str(watched / 'keep')!r})",
    }[where]
    run = run_reader(fake(f"{action}; print({DESCRIPTION!r})"), case_file, watch=[watched],
                     canaries=[canary], sandbox=False)
    assert run.outcome == "broken", run.summary()
    assert any("side effects" in p or "canary" in p for p in run.problems), run.problems
    assert run.breakage == ("code-ran" if where == "canary" else "side-effect")


def test_a_canary_left_by_an_earlier_run_hides_no_later_one(case_file: Path, tmp_path: Path) -> None:
    """A canary that exists before the run (an earlier reader ran a gadget) counts when touched again,
    and only then."""
    canary = tmp_path / "canary"
    canary.write_text("")
    os.utime(canary, ns=(10**18, 10**18))
    quiet = run_reader(fake(f"print({DESCRIPTION!r})"), case_file, canaries=[canary], sandbox=False)
    assert quiet.outcome == "accepted", quiet.summary()
    touch = f"import subprocess; subprocess.run(['touch', {str(canary)!r}]); print({DESCRIPTION!r})"
    run = run_reader(fake(touch), case_file, canaries=[canary], sandbox=False)
    assert (run.outcome, run.breakage) == ("broken", "code-ran"), run.summary()


@pytest.mark.parametrize("sandbox", [SANDBOX, False], ids=["sandbox", "fallback"])
def test_a_reader_that_cannot_start_is_broken(case_file: Path, sandbox: bool) -> None:
    run = run_reader(["/nonexistent/reader"], case_file, sandbox=sandbox)
    assert run.outcome == "broken" and "cannot start" in run.problems[0] and run.breakage == "start"


def test_side_effects_are_named_ten_at_most(case_file: Path, tmp_path: Path) -> None:
    """A run that leaves many files behind is broken once, its problem naming the first ten of them
    (``harness/runner.py`` ``Watch.check``: ``changes[:10]``; a judge's mutant named eleven)."""
    watched = tmp_path / "watched"
    watched.mkdir()
    make = f"import os; [open(os.path.join({str(watched)!r}, 'f%02d' % k), 'w').close() for k in range(12)]"
    run = run_reader(fake(f"{make}; print({DESCRIPTION!r})"), case_file, watch=[watched], sandbox=False)
    assert (run.outcome, run.breakage) == ("broken", "side-effect"), run.summary()
    named = [p for p in run.problems if "side effects" in p]
    assert len(named) == 1 and named[0].count("created ") == 10, run.problems
    assert all(f"f{k:02d}" in named[0] for k in range(10)) and "f10" not in named[0], named[0]


def test_a_stderr_line_is_quoted_once(case_file: Path) -> None:
    """A broken run quotes its stderr's first and last line: a single line once, not as its own first and
    last (``harness/runner.py`` ``_ends``: ``len(lines) == 1``)."""
    run = run_reader(fake("import sys; sys.stderr.write('boom\\n'); sys.exit(3)"), case_file, sandbox=False)
    assert (run.outcome, run.breakage) == ("broken", "crash"), run.summary()
    assert run.problems == ["exit status 3 (only 0, 1, 2 are allowed); stderr: 'boom'"], run.problems
    two = fake("import sys; sys.stderr.write('truncated: a\\n\\nmiddle\\nlast\\n'); sys.exit(1)")
    run = run_reader(two, case_file, sandbox=False)
    assert run.problems == ["exit 1 needs exactly one stderr line, got 4: 'truncated: a' | ... | 'last'"], \
        run.problems
    blank = fake("import sys; sys.stderr.write('truncated: a\\n\\n'); sys.exit(1)")
    run = run_reader(blank, case_file, sandbox=False)
    assert run.problems == ["exit 1 needs exactly one stderr line, got 2: 'truncated: a'"], run.problems


def test_a_reader_past_its_time_limit_is_stopped_at_the_limit(case_file: Path) -> None:
    """The time limit is the limit: a hanging reader is stopped when it passes, not at the next second the
    output wait would have woken anyway (``harness/runner.py`` ``collect``: the wait is bounded by
    ``deadline - now``)."""
    run = run_reader(fake("import time; time.sleep(30)"), case_file, time_limit=0.5, sandbox=False)
    assert (run.outcome, run.breakage) == ("broken", "timeout"), run.summary()
    assert run.seconds < 0.95, run.seconds


def test_output_written_after_the_reader_exits_is_its_output(case_file: Path) -> None:
    """What the reader's process group writes on stdout after the reader exited, while it still holds the
    pipe (up to harness/runner.py's LINGER, a second from when the exit is seen), is the run's output: a
    rejection whose child then writes on stdout breaks the rule that stdout is empty for exit 1
    (spec/canonical.md#canonical-reader-cli; ``collect``: ``now - exited > LINGER``).  The exit is seen
    when the output wait wakes, a second after the error line; the child writes half a second later."""
    code = """
        import os, sys, time
        if os.fork() == 0:
            time.sleep(1.5)
            os.write(1, b"late output of a child\\n")
            os._exit(0)
        sys.stderr.write("truncated: ends early\\n")
        sys.exit(1)
    """
    run = run_reader(fake(code), case_file, sandbox=False)
    assert (run.outcome, run.breakage) == ("broken", "output"), run.summary()
    assert any("stdout is not empty" in p for p in run.problems), run.problems


def test_a_run_environment_is_taken_while_pytest_changes_its_own() -> None:
    """A prefetched run builds its environment in a thread while pytest sets and removes
    ``PYTEST_CURRENT_TEST`` in the main one: no KeyError escapes (CI: a case failed as a harness error)."""
    import threading

    from conformance.harness.runner import environ

    stop = threading.Event()
    errors: list[BaseException] = []

    def copy() -> None:
        while not stop.is_set():
            try:
                environ()
            except BaseException as e:  # noqa: BLE001 - what escapes is the failure
                errors.append(e)
                return

    thread = threading.Thread(target=copy)
    thread.start()
    try:
        for i in range(20_000):
            os.environ["TORCHFMT_TEST_CHURN"] = str(i)
            del os.environ["TORCHFMT_TEST_CHURN"]
    finally:
        stop.set()
        thread.join()
    assert errors == []
