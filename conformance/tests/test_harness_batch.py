"""A reader's batch mode is judged as its per-process runs are (spec/canonical.md#canonical-reader-batch):
a fake reader that speaks both, and misbehaves on given files, gets the same verdict kind either way, and
after a crash, a timeout, a memory blow-up or garbage mid-batch the next file is still answered."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conformance.harness.batch import MORE_THAN_ONE_LINE, BatchSession
from conformance.harness.runner import run_reader
from conformance.harness.sandbox import bwrap_works

SANDBOX = bwrap_works()

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-batch", "canonical.md#canonical-reader-cli")

DESCRIPTION = {"description_version": 0, "format": "pt-zip", "objects": [], "storages": {}}

#: The fake reader: ``fake.py PATH`` (one process) or ``fake.py --batch``; what it does to a file is
#: the file's first word.
FAKE = textwrap.dedent('''
    import json, os, signal, sys, time

    def read(path, out):
        word = open(path).read().split()[0]
        if word == "ok":
            return 0, json.dumps(DESCRIPTION | {"_hint": os.environ.get("TORCHFMT_T7_MODE")}), ""
        if word == "reject":
            return 1, "", "truncated: ends at byte 3"
        if word == "crash":
            os.kill(os.getpid(), signal.SIGSEGV)
        if word == "hang":
            time.sleep(600)
        if word in ("eat", "eat-die"):
            hoard = []
            try:
                while True:
                    hoard.append(bytearray(64 << 20))
            except MemoryError:
                hoard.clear()
                if word == "eat-die":
                    os.abort()  # as a C++ reader's uncaught std::bad_alloc ends
                return 1, "", "limit-exceeded: out of memory"
        if word == "garbage":
            out.write("this is no JSON\\n")
            out.flush()
            return None
        if word == "side":
            open(os.path.join(os.path.dirname(path), "left-behind"), "w").close()
            return 0, json.dumps(DESCRIPTION), ""
        return 2, "", "unsupported: " + word

    if sys.argv[1:] == ["--batch"]:
        answers = os.fdopen(os.dup(1), "w")
        os.dup2(2, 1)
        for line in sys.stdin:
            request = json.loads(line)
            os.environ.pop("TORCHFMT_T7_MODE", None)
            os.environ.update(request["hints"])
            result = read(request["path"], answers)
            if result is None:
                continue
            status, out, err = result
            body = '"description": ' + out if status == 0 else '"error": ' + json.dumps(err)
            answers.write('{"id": %d, "status": %d, %s}\\n' % (request["id"], status, body))
            answers.flush()
    else:
        result = read(sys.argv[1], sys.stdout)
        if result is not None:
            status, out, err = result
            sys.stdout.write(out)
            sys.stderr.write(err)
            sys.exit(status)
''').replace("DESCRIPTION", repr(DESCRIPTION))


@pytest.fixture
def fake(tmp_path: Path) -> list[str]:
    (tmp_path / "reader").mkdir()
    script = tmp_path / "reader" / "fake.py"  # a folder of its own: a sandbox shows the reader its folder
    script.write_text(FAKE)
    return [sys.executable, str(script)]


def case(tmp_path: Path, name: str, word: str) -> Path:
    folder = tmp_path / "cases" / name
    folder.mkdir(parents=True)
    path = folder / "data.pt"
    path.write_text(word)
    return path


_D = json.dumps(DESCRIPTION)
LIMITS = {"time_limit": 5.0, "memory_limit": 512 << 20}


@pytest.mark.parametrize("sandbox", [SANDBOX, False], ids=["sandbox", "fallback"])
@pytest.mark.parametrize("word,kind", [
    ("crash", "crash"), ("hang", "timeout"), ("eat-die", "crash"), ("garbage", "output"),
    ("side", "side-effect"),
])
def test_a_broken_request_is_judged_as_alone_and_the_next_file_is_answered(
        fake: list[str], tmp_path: Path, word: str, kind: str, sandbox: bool) -> None:
    if word == "side" and sandbox:
        pytest.skip("in the sandbox the file's folder cannot be written: test_harness_hermetic.py")
    ok, bad, after = (case(tmp_path, n, w) for n, w in (("a", "ok"), ("b", word), ("c", "ok")))
    limits = {**LIMITS, "time_limit": 2.0, "sandbox": sandbox} if word == "hang" else \
        {**LIMITS, "sandbox": sandbox}
    alone = run_reader(fake, bad, **limits)
    session = BatchSession([*fake, "--batch"], **limits)
    try:
        first, broken, next_one = (session.run(p) for p in (ok, bad, after))
    finally:
        session.close()
    assert alone.outcome == "broken" and alone.breakage == kind, alone.summary()
    assert broken.outcome == "broken" and broken.breakage == kind, broken.summary()
    assert first.outcome == "accepted" and next_one.outcome == "accepted", next_one.summary()
    # a broken answer ends the process; a line that is no answer, or a side effect, is asked again of a new
    # process (was it the earlier answer's doing?) and the same again is the file's own
    assert session.starts == {"side-effect": 2, "output": 3}.get(kind, 2)


def test_the_memory_limit_holds_for_the_process(fake: list[str], tmp_path: Path) -> None:
    """A file that eats memory meets the limit in the batch process as alone (limit-exceeded, then the
    memory is free again); the same reader with more room is not refused by the limit."""
    eat, after = case(tmp_path, "a", "eat"), case(tmp_path, "b", "ok")
    alone = run_reader(fake, eat, **LIMITS)
    session = BatchSession([*fake, "--batch"], **LIMITS)
    try:
        runs = [session.run(eat), session.run(after), session.run(eat)]
    finally:
        session.close()
    assert (alone.outcome, alone.code) == ("rejected", "limit-exceeded"), alone.summary()
    assert [(r.outcome, r.code) for r in runs] == [("rejected", "limit-exceeded"), ("accepted", None),
                                                   ("rejected", "limit-exceeded")]
    assert session.starts == 1


def test_answers_carry_the_outcomes_and_the_hints(fake: list[str], tmp_path: Path) -> None:
    ok, reject, other = case(tmp_path, "a", "ok"), case(tmp_path, "b", "reject"), case(tmp_path, "c", "x")
    session = BatchSession([*fake, "--batch"], **LIMITS)
    try:
        hinted = session.run(ok, {"mode": "ascii"})
        plain = session.run(ok)
        rejected, declined = session.run(reject), session.run(other)
    finally:
        session.close()
    assert hinted.description["_hint"] == "ascii" and plain.description["_hint"] is None
    assert (rejected.outcome, rejected.code) == ("rejected", "truncated")
    assert declined.outcome == "declined" and declined.message == "unsupported: x"
    assert session.starts == 1 and session.requests == 4


@pytest.mark.spec("canonical.md#canonical-json-numbers")
@pytest.mark.parametrize("answer,problem", [
    ('{"id": 7, "status": 0, "description": {}}', "id"),
    ('{"id": 1, "status": "0"}', "status"),
    ('{"id": 1, "status": 0, "description": []}', "not a JSON object"),
    ('{"id": 1, "status": 1, "error": "no-such-code: x"}', "closed set"),
    ('{"id": 1, "status": 1, "error": "truncated: x", "description": {}}', "description"),
    ('{"id": 1, "status": 2, "error": "truncated: x"}', "unsupported"),
    ('{"id": 1, "status": 3, "error": "x"}', "exit status 3"),
    ('{"id": 1, "status": 0, "description": {}, "extra": 1}', "members"),
    ('{"id": 1, "status": 0, "description": {"a": 1, "a": 2}}', "duplicate key"),
    # ids and statuses are JSON integers: nothing Python calls equal to one (spec#canonical-reader-batch)
    (f'{{"id": 1.0, "status": 0, "description": {_D}}}', "id"),
    (f'{{"id": true, "status": 0, "description": {_D}}}', "id"),
    (f'{{"id": 1, "status": 0.0, "description": {_D}}}', "status"),
    (f'{{"id": 1, "status": false, "description": {_D}}}', "status"),
    # numbers without a form, anywhere in the answer (spec/canonical.md#canonical-json-numbers)
    (f'{{"id": 1, "status": 0, "_n": {"9" * 5000}, "description": {_D}}}', "5,000 digits"),
    (f'{{"id": 1, "status": 0, "description": {_D[:-1]}, "_x": 1e999}}}}', "overflows"),
    (f'{{"id": 1, "status": 0, "description": {_D[:-1]}, "_x": NaN}}}}', "NaN"),
])
def test_answers_that_break_the_contract(tmp_path: Path, answer: str, problem: str) -> None:
    """Each answer is held to the per-process table: a well-framed but wrong answer is an output (or crash)
    failure of that file."""
    script = tmp_path / "reader.py"
    script.write_text(f"import json, sys\nfor line in sys.stdin:\n    n = json.loads(line)['id']\n"
                      f"    print({answer!r}.replace('\"id\": 1,', '\"id\": %d,' % n), flush=True)\n")
    path = case(tmp_path, "a", "ok")
    session = BatchSession([sys.executable, str(script)], **LIMITS)
    try:
        run = session.run(path)
    finally:
        session.close()
    assert run.outcome == "broken" and problem in "; ".join(run.problems), run.problems


def test_a_line_written_after_the_last_answer_is_charged_to_it(tmp_path: Path) -> None:
    """A process writes nothing after its answer (spec/canonical.md#canonical-reader-batch): a line written
    a moment after the session's last answer, before its standard input ends, is found when the session
    ends and charged to that answer, its process's first (``_Process.pending``: the line read there is
    output, not the end of the process)."""
    script = tmp_path / "reader.py"
    script.write_text(textwrap.dedent(f'''
        import json, sys, time
        for line in sys.stdin:
            n = json.loads(line)["id"]
            print(json.dumps({{"id": n, "status": 0, "description": {DESCRIPTION!r}}}), flush=True)
            time.sleep(0.3)
            print("a line after the answer", flush=True)
    '''))
    session = BatchSession([sys.executable, str(script)], **LIMITS)
    try:
        run = session.run(case(tmp_path, "a", "ok"))
    finally:
        session.close()
    # (on a loaded machine the line may be there as the answer is checked: more than one line, as well)
    assert (run.outcome, run.breakage) == ("broken", "output"), run.summary()
    assert any("after this answer" in p or p == MORE_THAN_ONE_LINE for p in run.problems), run.problems


def test_a_reader_that_cannot_start(tmp_path: Path) -> None:
    session = BatchSession([str(tmp_path / "no-such-reader")], **LIMITS)
    run = session.run(case(tmp_path, "a", "ok"))
    session.close()
    assert run.breakage == "start", run.summary()


def test_the_suite_fails_a_case_whose_batch_answer_depends_on_order(tmp_path: Path) -> None:
    """A reader that answers its first request as alone and the later ones otherwise: the suite's rerun
    one process per file fails those cases, naming both verdicts."""
    script = tmp_path / "forgetful.py"
    script.write_text(textwrap.dedent('''
        import json, sys
        if sys.argv[1:] != ["--batch"]:
            sys.stderr.write("unsupported: everything\\n")
            sys.exit(2)
        for n, line in enumerate(sys.stdin):
            request = json.loads(line)
            error = "unsupported: everything" if n == 0 else "truncated: remembered an earlier file"
            print(json.dumps({"id": request["id"], "status": 2 if n == 0 else 1, "error": error}), flush=True)
    '''))
    report = tmp_path / "report.json"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/test_cases.py", "-q", "-p", "no:cacheprovider",
         "--reader", f"{sys.executable} {script} --batch", "--reader-batch", "--batch-recheck", "all",
         "--reader-per-process", f"{sys.executable} {script}",
         "--format", "pt-tar", "--reader-jobs", "1", "--report-json", str(report)],
        cwd=root, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-2000:]
    results = json.loads(report.read_text())["results"]
    differ = [r for r in results if r["kind"] == "batch-differs"]
    assert len(differ) == len(results) - 1 and len(results) > 2, [r["kind"] for r in results]
    assert "one process per file declined/declined" in differ[0]["detail"], differ[0]["detail"]
    assert f"from `{sys.executable} {script} PATH`" in differ[0]["detail"], differ[0]["detail"]
    assert "rerun one process per file" in proc.stdout and f"{len(differ)} differ" in proc.stdout


README = Path(__file__).resolve().parents[1] / "README.md"


def readme_loop(language: str) -> str:
    """The example loop of conformance/README.md in ``language`` (its fenced block)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("### Batch mode"):]
    blocks = section.split(f"```{language}\n")[1:]
    assert blocks, f"no {language} loop in conformance/README.md"
    return blocks[-1].split("```")[0]


@pytest.mark.parametrize("language", ["python", "js", "cpp"])
def test_the_readme_loops_speak_the_protocol(tmp_path: Path, language: str) -> None:
    """Each example loop of conformance/README.md is under 30 lines and, around its placeholder reader
    (which declines every file), gives answers the suite reads as declines, file after file."""
    code = readme_loop(language)
    assert len(code.strip().splitlines()) < 30, f"the {language} loop has {len(code.splitlines())} lines"
    if language == "python":
        script = tmp_path / "batch.py"
        script.write_text(code)
        command = [sys.executable, str(script)]
    elif language == "js":
        node = shutil.which("node")
        if node is None:
            pytest.skip("no node here")
        script = tmp_path / "batch.mjs"
        script.write_text(code)
        command = [node, str(script)]
    else:
        if not os.environ.get("TORCHFMT_BATCH_EQUIVALENCE"):
            pytest.skip("compiling takes seconds: set TORCHFMT_BATCH_EQUIVALENCE=1 (.ci/run does)")
        compiler = shutil.which("g++")
        if compiler is None or not Path("/usr/include/nlohmann/json.hpp").is_file():
            pytest.skip("no g++ with nlohmann/json here (apt-get install g++ nlohmann-json3-dev)")
        source = tmp_path / "batch.cpp"
        source.write_text(code + "\nint read_file(const std::string&, const json&, json&, std::string& e) {\n"
                                 '    e = "unsupported: everything";\n    return 2;\n}\n')
        subprocess.run([compiler, "-std=c++17", "-O0", "-o", str(tmp_path / "batch"), str(source)],
                       check=True)
        command = [str(tmp_path / "batch")]
    session = BatchSession(command, time_limit=30.0)  # the suite's memory limit: V8 reserves much
    try:
        runs = [session.run(case(tmp_path, name, "ok"), {"mode": "binary"}) for name in ("a", "b")]
    finally:
        session.close()
    assert [r.outcome for r in runs] == ["declined", "declined"], [r.summary() for r in runs]
    assert session.starts == 1


def test_cases_that_allow_more_than_one_answer_are_always_rechecked(tmp_path: Path) -> None:
    """A batch mode that declines every file (a decline fails no case of a reader other than the
    reference): with no random sample (``--batch-recheck 0``) the recheck still reruns every case whose
    expectation allows more than one answer, with the declared per-process command, and fails it."""
    folder = tmp_path / "reader"
    folder.mkdir()
    script = folder / "decliner.py"
    script.write_text("import json, sys\nfor line in sys.stdin:\n    request = json.loads(line)\n"
                      "    print(json.dumps({'id': request['id'], 'status': 2, 'error': 'unsupported: all'}),"
                      " flush=True)\n")
    report = tmp_path / "report.json"
    root = Path(__file__).resolve().parents[2]
    per_process = f"{sys.executable} -m torchfmt dump"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "conformance/test_cases.py", "-q", "-p", "no:cacheprovider",
         "--reader", f"{sys.executable} {script}", "--reader-batch", "--reader-per-process", per_process,
         "--batch-recheck", "0", "--format", "pt-torchscript", "--report-json", str(report)],
        cwd=root, capture_output=True, text=True, timeout=600)
    doc = json.loads(report.read_text())
    from conformance.conftest import recheck_always
    from conformance.harness.cases import committed_cases

    always = sorted(c.id for c in committed_cases() if c.format == "pt-torchscript" and recheck_always(c))
    assert always, "pt-torchscript has an impl case"
    assert doc["batch"]["rechecked"] == always, doc["batch"]
    differ = sorted(r["id"] for r in doc["results"] if r["kind"] == "batch-differs")
    assert differ == always and proc.returncode == 1, proc.stdout[-2000:]
    detail = next(r["detail"] for r in doc["results"] if r["kind"] == "batch-differs")
    assert f"from `{per_process} PATH`" in detail, detail
