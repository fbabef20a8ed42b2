"""Readers that try to pass without reading the file, to outlive their run, or to flood the harness
(spec/canonical.md#canonical-reader-cli, #canonical-reader-batch; harness/sandbox.py, harness/capture.py):
each is judged a wrong or broken reader, per process and in batch mode, in the sandbox and without it."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conformance.harness import batch, readers, runner
from conformance.harness.batch import BatchSession
from conformance.harness.runner import run_reader
from conformance.harness.sandbox import bwrap_works
from conformance.harness.vocabulary import CONFORMANCE

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli", "canonical.md#canonical-reader-batch")

SANDBOX = bwrap_works()
MODES = pytest.mark.parametrize("sandbox", [SANDBOX, False], ids=["sandbox", "fallback"])
DESCRIPTION = {"description_version": 0, "format": "pt-zip", "objects": [], "storages": {}}

#: ``reader.py PATH`` or ``reader.py --batch``: ``answer(path)`` gives (status, description, error line).
LOOP = textwrap.dedent('''
    import json, os, sys
    ANSWER
    if sys.argv[1:] == ["--batch"]:
        for line in sys.stdin:
            request = json.loads(line)
            status, description, error = answer(request["path"])
            doc = {"id": request["id"], "status": status}
            doc.update({"description": description} if status == 0 else {"error": error})
            print(json.dumps(doc), flush=True)
    else:
        status, description, error = answer(sys.argv[1])
        if status == 0:
            print(json.dumps(description))
        else:
            print(error, file=sys.stderr)
        sys.exit(status)
''')


def reader(tmp_path: Path, answer: str) -> list[str]:
    folder = tmp_path / "reader"  # a folder of its own: the sandbox shows a reader its command's folder
    folder.mkdir(exist_ok=True)
    script = folder / "reader.py"
    script.write_text(LOOP.replace("ANSWER", textwrap.dedent(answer)))
    return [sys.executable, str(script)]


def case(tmp_path: Path, name: str = "a") -> Path:
    """A case folder as the suite has them: the file beside expected.json and case.yaml."""
    folder = tmp_path / "cases" / name
    folder.mkdir(parents=True)
    (folder / "expected.json").write_text(json.dumps(DESCRIPTION))
    (folder / "case.yaml").write_text("category: accept\n")
    path = folder / "data.pt"
    path.write_bytes(b"the reader must read this")
    return path


def both(command: list[str], path: Path, sandbox: bool, **kw: object) -> tuple[runner.Run, runner.Run]:
    """The file's per-process run and its batch answer (the batch command: ``command --batch``)."""
    alone = run_reader(command, path, sandbox=sandbox, time_limit=20, **kw)  # type: ignore[arg-type]
    session = BatchSession([*command, "--batch"], sandbox=sandbox, time_limit=20)
    try:
        answered = session.run(path, **kw)  # type: ignore[arg-type]
    finally:
        session.close()
    return alone, answered


LOOKUP = '''
    def answer(path):
        beside = os.path.join(os.path.dirname(path), "expected.json")
        if os.path.exists(beside):
            return 0, json.load(open(beside)), ""
        return 2, None, "unsupported: no expected.json beside the file"
'''


@MODES
def test_a_reader_that_answers_from_the_case_folder_finds_nothing(tmp_path: Path, sandbox: bool) -> None:
    alone, answered = both(reader(tmp_path, LOOKUP), case(tmp_path), sandbox)
    assert alone.outcome == answered.outcome == "declined", (alone.summary(), answered.summary())


@pytest.mark.skipif(not SANDBOX, reason="bubblewrap does not run here")
def test_the_sandbox_hides_the_suite_and_shows_the_readers_files(tmp_path: Path) -> None:
    """Nothing of the cases or of the results is visible; the reference reader's package and the adapters
    are; nothing but the run's /tmp is writable; no network."""
    probe = f'''
    def answer(path):
        import socket
        seen = {{p: os.path.exists(p) for p in {[str(CONFORMANCE / "cases"), str(CONFORMANCE / "results"),
                                                str(CONFORMANCE / "adapters" / "torch_reader.py"),
                                                str(CONFORMANCE.parent / "reference_impl" / "torchfmt"),
                                                str(tmp_path / "cases")]!r}}}
        try:
            open({str(CONFORMANCE.parent / "escaped")!r}, "w")
            seen["write"] = True
        except OSError:
            seen["write"] = False
        try:
            socket.create_connection(("1.1.1.1", 53), timeout=2)
            seen["net"] = True
        except OSError:
            seen["net"] = False
        return 0, {{**{DESCRIPTION!r}, "_seen": seen}}, ""
    '''
    alone, answered = both(reader(tmp_path, probe), case(tmp_path), True)
    for run in (alone, answered):
        assert run.outcome == "accepted", run.summary()
        cases, results, adapter, package, here = (str(CONFORMANCE / "cases"), str(CONFORMANCE / "results"),
                                                  str(CONFORMANCE / "adapters" / "torch_reader.py"),
                                                  str(CONFORMANCE.parent / "reference_impl" / "torchfmt"),
                                                  str(tmp_path / "cases"))
        seen = run.description["_seen"]
        assert not seen[cases] and not seen[results] and not seen[here], seen
        assert seen[adapter] and seen[package], seen
        assert not seen["write"] and not seen["net"], seen


@pytest.mark.skipif(not SANDBOX, reason="bubblewrap does not run here")
def test_the_folders_an_adapter_needs_are_shown_to_its_runs(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder under /tmp that an adapter's ``needs`` file names (libtorch's program is linked against a
    wheel's lib/, which CI's venv keeps under /tmp) is visible to its runs, read-only; unnamed, it is not."""
    lib = Path(tempfile.mkdtemp(prefix="torchfmt-needed-", dir="/tmp"))
    try:
        (lib / "libneeded.so").write_text("needed")
        home = tmp_path / "home"
        (home / "fake").mkdir(parents=True)
        (home / "fake" / "needs").write_text(f"{lib}\nnot absolute\n")
        monkeypatch.setenv("TORCHFMT_ADAPTERS_HOME", str(home))
        env = readers.adapter_env("fake")
        assert env[readers.NEEDS_ENV] == str(lib)
        probe = f'''
        def answer(path):
            seen = os.path.exists({str(lib / "libneeded.so")!r})
            try:
                open({str(lib / "written")!r}, "w")
                wrote = True
            except OSError:
                wrote = False
            return 0, {{**{DESCRIPTION!r}, "_seen": [seen, wrote]}}, ""
        '''
        command = reader(tmp_path, probe)
        shown = run_reader(command, case(tmp_path), sandbox=True, time_limit=20, extra_env=env)
        hidden = run_reader(command, case(tmp_path, "b"), sandbox=True, time_limit=20)
        assert shown.description["_seen"] == [True, False], shown.summary()
        assert hidden.description["_seen"] == [False, False], hidden.summary()
    finally:
        shutil.rmtree(lib, ignore_errors=True)


@MODES
def test_nothing_a_reader_starts_outlives_its_run(tmp_path: Path, sandbox: bool) -> None:
    """A ``setsid`` grandchild that would touch the canary 2 s after the answer: it is gone with the run
    (a PID namespace, or killed by its run's token), and the canary stays untouched."""
    canary = Path(f"/tmp/torchfmt-canary-hermetic-{os.getpid()}-{int(sandbox)}")
    marker = f"torchfmt-escape-{time.time_ns()}"
    late = f'''
    def answer(path):
        import subprocess
        subprocess.Popen(["sh", "-c", "sleep 2; : {marker}; touch {canary}"], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return 0, {DESCRIPTION!r}, ""
    '''
    alone, answered = both(reader(tmp_path, late), case(tmp_path), sandbox, canaries=[canary])
    time.sleep(3)
    left = [p for p in os.listdir("/proc") if p.isdigit() and marker.encode() in _cmdline(p)]
    assert not left, f"processes left behind: {left}"
    assert not canary.exists()
    assert alone.outcome == answered.outcome == "accepted", (alone.summary(), answered.summary())


def _cmdline(pid: str) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""


@MODES
def test_floods_are_refused_and_not_kept(tmp_path: Path, sandbox: bool,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """stdout (an answer line) past the output limit is refused as ``output``; a flood of stderr is kept
    as its first line and a bounded tail (the limit made 1 MiB here: the suite's is the text budget plus
    64 MiB, harness/capture.py)."""
    monkeypatch.setattr(runner, "output_limit", lambda: 1 << 20)
    monkeypatch.setattr(batch, "output_limit", lambda: 1 << 20)
    flood = '''
    def answer(path):
        return 0, {"format": "pt-zip", "objects": [], "storages": {}, "x": "x" * (4 << 20)}, ""
    '''
    alone, answered = both(reader(tmp_path, flood), case(tmp_path), sandbox)
    for run in (alone, answered):
        assert run.breakage == "output" and "passed 1048576 bytes" in run.problems[0], run.summary()
        assert len(run.stdout) == 0
    noisy = '''
    def answer(path):
        sys.stderr.write("truncated: first\\n" + "noise\\n" * (2 << 20) + "last words\\n")
        sys.stderr.flush()
        return 1, None, "truncated: the error line"
    '''
    run = run_reader(reader(tmp_path, noisy), case(tmp_path, "b"), sandbox=sandbox, time_limit=20)
    assert run.breakage == "output" and len(run.stderr) < 100_000, run.summary()
    assert run.stderr_size >= 12 << 20 and "'truncated: first' | ... | 'truncated: the error line'" \
        in run.problems[0], run.problems


@MODES
def test_an_unfinished_answer_line_is_not_an_answer(tmp_path: Path, sandbox: bool) -> None:
    command = reader(tmp_path, 'def answer(path):\n    return 0, {}, ""\n')
    script = Path(command[1])
    script.write_text("import sys\nfor line in sys.stdin:\n    sys.stdout.write('{\"id\": 1'); break\n")
    session = BatchSession(command, sandbox=sandbox, time_limit=20)
    try:
        run = session.run(case(tmp_path))
    finally:
        session.close()
    assert run.breakage == "output" and "without a newline" in run.problems[0], run.summary()


def test_a_write_that_keeps_size_and_mtime_is_caught(tmp_path: Path) -> None:
    """Without a sandbox a reader can reach a generated case's file (outside the watched tree): a write
    that keeps its size and modification time is found by the file's content hash."""
    path = case(tmp_path)
    sneaky = f'''
    def answer(path):
        target = {str(path)!r}
        st = os.stat(target)
        with open(target, "r+b") as f:
            f.write(b"T")
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
        return 0, {DESCRIPTION!r}, ""
    '''
    run = run_reader(reader(tmp_path, sneaky), path, sandbox=False)
    assert run.breakage == "side-effect" and "its content" in run.problems[0], run.summary()


#: A batch reader that misbehaves after answering a file whose first word says how.
FRAMING = textwrap.dedent('''
    import json, os, subprocess, sys, threading, time
    DESCRIPTION = %r
    CANARY = %r

    def write(doc):
        sys.stdout.write(json.dumps(doc) + "\\n")
        sys.stdout.flush()

    for line in sys.stdin:
        request = json.loads(line)
        word = open(request["path"]).read().split()[0]
        if word == "slow":
            time.sleep(0.4)
        answer = {"id": request["id"], "status": 0, "description": DESCRIPTION}
        write(answer)
        if word == "double":  # the same answer again, 0.3 s late
            threading.Timer(0.3, write, [answer]).start()
        elif word == "quit":  # exit just after an answer
            sys.exit(0)
        elif word == "stray":  # a child's line on the answers' stream
            subprocess.Popen(["sh", "-c", "sleep 0.1; echo stray"])
        elif word == "early":  # an answer to the next request, before it arrives
            write({"id": request["id"] + 1, "status": 0, "description": DESCRIPTION})
        elif word == "early-late":  # an answer to the next request, 0.2 s late (while it is read)
            threading.Timer(0.2, write, [{"id": request["id"] + 1, "status": 0,
                                          "description": DESCRIPTION}]).start()
        elif word == "touch":  # the canary, 50 ms after the answer
            threading.Timer(0.05, lambda: open(CANARY, "w").close()).start()
''')


@MODES
@pytest.mark.parametrize("trick,pause,then", [
    ("double", 0.0, "ok"), ("quit", 0.0, "ok"), ("quit", 0.5, "ok"), ("stray", 0.0, "slow"),
    ("stray", 0.5, "ok"), ("early", 0.0, "ok"), ("touch", 0.0, "slow"), ("touch", 0.5, "ok")])
def test_what_a_process_does_after_an_answer_is_charged_to_that_answer(
        tmp_path: Path, sandbox: bool, trick: str, pause: float, then: str) -> None:
    """The file whose answer the trick follows fails; the file after it, innocent, is answered (by a new
    process when the trick broke its request: ``slow`` makes the trick land while the next file is read),
    whether the trick lands before the next request or during it."""
    canary = Path(f"/tmp/torchfmt-canary-framing-{os.getpid()}-{trick}-{int(sandbox)}")
    canary.unlink(missing_ok=True)
    folder = tmp_path / "reader"
    folder.mkdir()
    (folder / "reader.py").write_text(FRAMING % (DESCRIPTION, str(canary)))
    files = []
    for name, word in (("a", "ok"), ("b", trick), ("c", then), ("d", "ok")):
        path = case(tmp_path, name)
        path.write_text(word)
        files.append(path)
    session = BatchSession([sys.executable, str(folder / "reader.py")], sandbox=sandbox, time_limit=20)
    try:
        a, b = session.run(files[0], canaries=[canary]), session.run(files[1], canaries=[canary])
        time.sleep(pause)
        c = session.run(files[2], canaries=[canary])
        time.sleep(0.5)
        d = session.run(files[3], canaries=[canary])
    finally:
        session.close()
        canary.unlink(missing_ok=True)
    assert a.outcome == "accepted", a.summary()
    assert b.outcome == "broken", b.summary()
    assert b.breakage == ("code-ran" if trick == "touch" else "output"), b.summary()
    assert c.outcome == "accepted" and d.outcome == "accepted", (c.summary(), d.summary())
    assert not session.late, session.late


@MODES
def test_a_verdict_waits_for_the_request_in_flight_that_finds_its_answers_breakage(
        tmp_path: Path, sandbox: bool) -> None:
    """An answer's verdict is given once the request in flight after it is done: the early answer that
    lands while the next (slow) file is read is the earlier answer's breakage, charged to it before its
    verdict, not found after it (the session would fail, the trick's own case pass)."""
    folder = tmp_path / "reader"
    folder.mkdir()
    (folder / "reader.py").write_text(FRAMING % (DESCRIPTION, "/nonexistent/canary"))
    files = []
    for name, word in (("a", "ok"), ("b", "early-late"), ("c", "slow")):
        path = case(tmp_path, name)
        path.write_text(word)
        files.append(path)
    session = BatchSession([sys.executable, str(folder / "reader.py")], sandbox=sandbox, time_limit=20)
    try:
        a, b = session.run(files[0]), session.run(files[1])
        later = threading.Thread(target=session.run, args=(files[2],))
        later.start()
        time.sleep(0.05)  # the next request in flight, its gap checked (clean: the line is 0.2 s late)
        assert b.settle is not None
        b.settle()  # what the suite calls before judging b
        outcome, breakage = b.outcome, b.breakage
        later.join()
    finally:
        session.close()
    assert a.outcome == "accepted", a.summary()
    assert (outcome, breakage) == ("broken", "output"), b.summary()
    assert not session.late, session.late


#: A batch reader that writes a stray line after the answer to its process's third request, whatever the
#: file: no request alone causes it (as a child started by an earlier request whose line lands late).
THIRD = textwrap.dedent('''
    import json, sys
    DESCRIPTION = %r
    for n, line in enumerate(sys.stdin, 1):
        request = json.loads(line)
        sys.stdout.write(json.dumps({"id": request["id"], "status": 0, "description": DESCRIPTION}) + "\\n")
        sys.stdout.write("stray\\n" if n == 3 else "")
        sys.stdout.flush()
''')


@MODES
@pytest.mark.parametrize("pause", [0.0, 0.5])
def test_a_stray_line_no_request_causes_alone_fails_the_session_not_an_innocent_case(
        tmp_path: Path, sandbox: bool, pause: float) -> None:
    """The line after the third answer is no single request's: each, asked alone of a new process, is
    answered cleanly, so every file keeps its answer and the session fails as a whole
    (spec/canonical.md#canonical-reader-batch)."""
    folder = tmp_path / "reader"
    folder.mkdir()
    (folder / "reader.py").write_text(THIRD % (DESCRIPTION,))
    files = [case(tmp_path, name) for name in "abcd"]
    session = BatchSession([sys.executable, str(folder / "reader.py")], sandbox=sandbox, time_limit=20)
    try:
        runs = []
        for path in files:
            runs.append(session.run(path))
            time.sleep(pause)
    finally:
        session.close()
    assert all(r.outcome == "accepted" for r in runs), [r.summary() for r in runs]
    assert session.late and "an earlier request of the same process did" in session.late[0], session.late


@pytest.mark.skipif(not SANDBOX, reason="bubblewrap does not run here")
def test_no_state_carries_from_one_run_to_the_next(tmp_path: Path) -> None:
    """A cache kept outside the run's folder (the real home's cache, /var/tmp, /dev/shm, the project)
    cannot be written, or is the run's own: the next run, batch or per process, finds nothing."""
    places = [str(Path.home() / ".cache" / "torchfmt-state"), "/var/tmp/torchfmt-state",
              "/dev/shm/torchfmt-state", str(CONFORMANCE / "adapters" / "torchfmt-state")]
    keeper = f'''
    def answer(path):
        found = [p for p in {places!r} if os.path.exists(p)]
        for p in {places!r}:
            try:
                open(p, "w").close()
            except OSError:
                pass
        return 0, {{**{DESCRIPTION!r}, "_found": found}}, ""
    '''
    command = reader(tmp_path, keeper)
    first, second = (run_reader(command, case(tmp_path, n), sandbox=True) for n in ("a", "b"))
    session = BatchSession([*command, "--batch"], sandbox=True)
    try:
        answered = session.run(case(tmp_path, "c"))
    finally:
        session.close()
    for run in (first, second, answered):
        assert run.outcome == "accepted" and run.description["_found"] == [], run.summary()
    assert not any(Path(p).exists() for p in places)
