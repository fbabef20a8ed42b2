"""The harness's red team (issue 25): readers that misbehave on purpose, run through the real harness.

Each reader under ``redteam/readers/`` is a thin wrapper of the reference reader that breaks one rule
of the contract (spec/canonical.md#canonical-reader-cli, #canonical-reader-batch) on its trigger files;
``redteam/table.yaml`` says, as data, which cases each runs and the verdict each case must get.  Every
run is ``pytest conformance --reader "python READER ..." [--reader-batch] --report-json ...`` in a
subprocess over the table's small selection of cases, started when collection ends (two at a time,
``nice``) in a private ``/tmp`` (bubblewrap: the shared canary the readers touch is theirs alone, and no
other suite on the machine is charged with it).  A test per run and mode then checks the verdict of
every case, that a side effect after the last request is named somewhere in the report, that the
canary stays still once the suite is done, and that ``--report-json`` and pytest agree case for case
(the report may never say pass where pytest failed).
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from conformance.harness.cases import load_case

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-cli", "canonical.md#canonical-reader-batch")

CONFORMANCE = Path(__file__).resolve().parents[1]
ROOT = CONFORMANCE.parent
REDTEAM = Path(__file__).resolve().parent / "redteam"
TABLE = yaml.safe_load((REDTEAM / "table.yaml").read_text(encoding="utf-8"))
MODES = ("per-process", "batch")
RUNS = [(run, mode) for run in TABLE["runs"] for mode in run.get("modes", MODES)]
#: Per reader run: the tricks take well under a second each; a flood or a hang must end anyway.
READER_TIMEOUT = 30
#: A whole suite run (collection of every case included).
SUITE_TIMEOUT = 600
#: How long the canary must stay still after the suite (the setsid grandchild acts 4 s after its run).
QUIET_SECONDS = 4.5
BWRAP = shutil.which("bwrap")


def node(case_id: str) -> str:
    if case_id.startswith("generated/truncation/"):
        return f"conformance/test_truncations.py::test_truncated[{case_id}]"
    return f"conformance/test_cases.py::test_case[{case_id}]"


def file_bytes(case_id: str) -> bytes:
    """The bytes the reader is given for a case of the selection (a truncation: the committed file cut)."""
    if case_id.startswith("generated/truncation/"):
        base, _, offset = case_id.removeprefix("generated/truncation/").rpartition("@")
        return load_case(CONFORMANCE / "cases" / base).path.read_bytes()[:int(offset)]
    return load_case(CONFORMANCE / "cases" / case_id).path.read_bytes()


#: Where the readers are, as the suite run sees them: copied into its private /tmp (a sandboxed run sees
#: nothing of the project's tests, and binds a folder under /tmp that its command names).
READERS = Path("/tmp/redteam-readers")


def kept_under_tmp(env: dict[str, str]) -> list[str]:
    """bwrap's arguments that bind back, over the run's private ``/tmp``, what the suite run itself needs
    from the real ``/tmp``: the interpreter's prefixes (CI's venv lives there), the checkout and the
    folders its environment names (a clone under /tmp, its adapters' home); bound as they are."""
    tmp = Path("/tmp")
    wanted = [sys.prefix, sys.base_prefix, sys.exec_prefix, str(ROOT)]
    for key in ("PYTHONPATH", "TORCHFMT_ADAPTERS_HOME", "TORCHFMT_CORPUS", "VIRTUAL_ENV"):
        wanted += [p for p in env.get(key, "").split(os.pathsep) if p]
    kept: list[Path] = []
    for arg in wanted:
        path = Path(arg)
        if not path.is_absolute() or not path.exists():
            continue
        path = path.resolve()
        if not path.is_relative_to(tmp) or path == tmp or any(path.is_relative_to(k) for k in kept):
            continue
        kept = [k for k in kept if not k.is_relative_to(path)] + [path]
    return [a for k in kept for a in ("--bind", str(k), str(k))]


def reader_command(run: dict[str, Any]) -> list[str]:
    args = [a.format(conformance=CONFORMANCE) for a in run.get("args", [])]
    on = [hashlib.sha256(file_bytes(TABLE["cases"][k])).hexdigest() for k in run.get("trigger", [])]
    return [sys.executable, str(READERS / run["reader"]), *args, "--on", ",".join(on) or "-"]


@dataclass
class SuiteRun:
    status: int
    output: str
    report: dict[str, Any] | None
    #: pytest's own outcome per case id (junit XML): passed, failed, skipped
    pytest_outcomes: dict[str, str]
    canary_moved_after: bool


def junit_outcomes(path: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    if not path.is_file():
        return out
    for case in ET.parse(path).iter("testcase"):
        name = case.get("name", "")
        if "[" not in name:
            continue
        cid = name[name.index("[") + 1:-1]
        kinds = {child.tag for child in case}
        out[cid] = "failed" if kinds & {"failure", "error"} else "skipped" if "skipped" in kinds else "passed"
    return out


def suite_run(run: dict[str, Any], mode: str) -> SuiteRun:
    private = Path(tempfile.mkdtemp(prefix="torchfmt-redteam-"))
    try:
        shutil.copytree(REDTEAM / "readers", private / READERS.name,
                        ignore=shutil.ignore_patterns("__pycache__"))
        reader = shlex.join(reader_command(run))
        path = os.pathsep.join([str(ROOT / "reference_impl"), os.environ.get("PYTHONPATH", "")])
        env = {**os.environ, **run.get("env", {}), "PYTHONPATH": path}
        cmd = ["nice", "-n", "10", BWRAP or "", "--dev-bind", "/", "/", "--bind", str(private), "/tmp",
               *kept_under_tmp(env), "--die-with-parent", "--chdir", str(ROOT),
               sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               *[node(c) for c in TABLE["cases"].values()],
               "--reader", reader, "--reader-jobs", "1", "--reader-timeout", str(READER_TIMEOUT),
               "--report-json", "/tmp/report.json", "--junitxml", "/tmp/junit.xml"]
        if mode == "batch":
            cmd += ["--reader-batch", "--reader-per-process", reader, "--batch-recheck", "0",
                    "--batch-seed", "1"]
        cmd += run.get("harness", [])
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=SUITE_TIMEOUT)
        canary = private / "torchfmt-conformance-canary"
        before = canary.stat().st_mtime_ns if canary.exists() else None
        if run.get("canary-quiet"):
            time.sleep(QUIET_SECONDS)
        after = canary.stat().st_mtime_ns if canary.exists() else None
        report_path = private / "report.json"
        report = json.loads(report_path.read_text()) if report_path.is_file() else None
        return SuiteRun(r.returncode, (r.stdout + r.stderr)[-4000:], report,
                        junit_outcomes(private / "junit.xml"), before != after)
    finally:
        shutil.rmtree(private, ignore_errors=True)


STARTED: dict[str, Future[SuiteRun]] = {}


def run_id(run: dict[str, Any], mode: str) -> str:
    return f"{run['name']}[{mode}]"


def start_runs(selected: list[pytest.Item]) -> None:
    """Start the selected runs (conftest.py calls this when collection ends), two at a time."""
    start({item.callspec.params["key"] for item in selected if hasattr(item, "callspec")})


def start(keys: set[str]) -> None:
    if BWRAP is None:
        return
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="redteam")
    for run, mode in RUNS:
        key = run_id(run, mode)
        if key not in STARTED and key in keys:
            STARTED[key] = pool.submit(suite_run, run, mode)
    pool.shutdown(wait=False)


def allowed(spec: str, outcome: str, kind: str, late: bool = False) -> bool:
    """Whether a verdict (outcome, kind) is one of ``spec``'s alternatives ("pass", "fail/a|b", ...);
    ``late``: the alternative "late" holds when the run failed the batch session as a whole for what the
    process did after a verdict was given (the report's ``batch.late``, pytest failing)."""
    for alternative in spec.split(" or "):
        want, _, kinds = alternative.strip().partition("/")
        if want == "late" and late:
            return True
        if want == outcome and (not kinds or kind in kinds.split("|")):
            return True
    return False


def expectations(run: dict[str, Any], mode: str) -> dict[str, str]:
    said = run.get(f"expect-{mode}", run.get("expect", {}))
    everyone = said.get("*", "pass")
    return {key: said.get(key, everyone) for key in TABLE["cases"]}


PYTEST_SAYS = {"pass": "passed", "fail": "failed", "declined": "skipped"}


def mismatches(run: dict[str, Any], mode: str, got: SuiteRun) -> list[str]:
    """Everything the run got other than the table says (empty: the judge got this reader right)."""
    if got.report is None:
        return [f"no --report-json written (pytest exit {got.status}): {got.output[-1500:]}"]
    results = {r["id"]: r for r in got.report["results"]}
    late = bool(got.report.get("batch", {}).get("late")) and got.status != 0
    wrong = []
    for key, spec in expectations(run, mode).items():
        cid = TABLE["cases"][key]
        r = results.get(cid)
        if r is None:
            wrong.append(f"{key} ({cid}): not in the report (pytest: {got.pytest_outcomes.get(cid)})")
        elif not allowed(spec, r["outcome"], r["kind"], late):
            wrong.append(f"{key} ({cid}): expected {spec}, judged {r['outcome']}/{r['kind']}: "
                         f"{str(r['detail'])[:300]}")
    for cid, said in got.pytest_outcomes.items():
        reported = results.get(cid, {}).get("outcome")
        if PYTEST_SAYS.get(reported) != said:
            wrong.append(f"{cid}: pytest says {said}, the report {reported}")
    session = run.get(f"session-{mode}")
    if session:
        rest = json.dumps({k: v for k, v in got.report.items() if k != "results"})
        named = any(r["kind"] == session for r in results.values()) or session in rest or late
        if not named or got.status == 0:
            wrong.append(f"the reader's {session} after its last request is named nowhere in the report "
                         f"(pytest exit {got.status})")
    if run.get("canary-quiet") and got.canary_moved_after:
        wrong.append("the canary moved after the suite had ended: a process the reader started outlived it")
    failed = any(r["outcome"] == "fail" for r in results.values()) or late
    if not wrong and (got.status == 0) == failed:
        wrong.append(f"pytest exit {got.status} disagrees with the report's outcomes")
    return wrong


@pytest.mark.parametrize("key", [run_id(r, m) for r, m in RUNS])
def test_redteam_reader_is_judged_as_the_table_says(key: str) -> None:
    if BWRAP is None:
        pytest.skip("needs bubblewrap (bwrap) for a private /tmp: the readers touch the shared canary")
    start({key})
    run, mode = next((r, m) for r, m in RUNS if run_id(r, m) == key)
    wrong = mismatches(run, mode, STARTED[key].result())
    assert not wrong, f"{key}: the judge got this reader wrong:\n  " + "\n  ".join(wrong)


#: What a run of the table may say (a YAML 1.1 boolean such as ``on`` would be read as ``True``).
RUN_KEYS = {"name", "reader", "args", "trigger", "env", "harness", "modes", "expect", "expect-per-process",
            "expect-batch", "session-per-process", "session-batch", "canary-quiet"}


def test_every_reader_of_the_table_exists_and_every_case_is_a_case() -> None:
    for run in TABLE["runs"]:
        assert set(run) <= RUN_KEYS, (run["name"], set(run) - RUN_KEYS)
        assert (REDTEAM / "readers" / run["reader"]).is_file(), run["reader"]
        for key in run.get("trigger", []) + [k for k in run.get("expect", {}) if k != "*"]:
            assert key in TABLE["cases"], (run["name"], key)
    for case_id in TABLE["cases"].values():
        assert file_bytes(case_id)


def test_the_expectation_grammar() -> None:
    assert allowed("fail/code-ran or pass", "pass", "pass")
    assert allowed("fail/code-ran or pass", "fail", "code-ran")
    assert not allowed("fail/code-ran or pass", "fail", "output")
    assert allowed("fail", "fail", "anything")
    assert not allowed("fail/output", "pass", "pass")
    assert allowed("fail/output or late", "pass", "pass", late=True)
    assert not allowed("fail/output or late", "pass", "pass", late=False)
