"""The report never disagrees with pytest (conformance/conftest.py, harness/verdict.py ``harness-error``):
a case whose judging raises, or whose test pytest fails for any other reason, is recorded as failed in
``--report-json`` and in the summary table.

Before, an exception inside the harness (a 5,000-digit integer's ``ValueError`` out of the parser) failed
14 tests while the report and the table said 58 pass, 0 fail: the cases were never recorded.  Here a
pytest run in a subprocess gets faults injected by a plugin: the comparator raises for every accept case,
a fixture raises in the setup of one reject case and in the teardown of another.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.spec("canonical.md#canonical-comparison", "canonical.md#canonical-reader-cli")

ROOT = Path(__file__).resolve().parents[2]
ACCEPT = ("pt-zip/dtype-bfloat16", "pt-zip/dtype-float32")
REJECT_PASSES = "pt-zip/adv-arity-device-three"
REJECT_SETUP = "pt-zip/adv-arity-newobj-ex-args-list"
REJECT_TEARDOWN = "pt-zip/adv-arity-ordered-dict-two"
CASES = (*ACCEPT, REJECT_PASSES, REJECT_SETUP, REJECT_TEARDOWN)

PLUGIN = textwrap.dedent(f'''
    import pytest

    def pytest_configure(config):
        import conformance.harness.verdict  # the suite's package, importable from the repository root

        def compare(*args, **kwargs):
            raise RuntimeError("injected comparator fault")

        conformance.harness.verdict.compare = compare
        conformance.harness.verdict.same_text = compare  # the shortcut for a document of the expected text

    @pytest.fixture(autouse=True)
    def injected(request):
        callspec = getattr(request.node, "callspec", None)
        case_id = getattr(callspec.params.get("case"), "id", None) if callspec else None
        if case_id == {REJECT_SETUP!r}:
            raise RuntimeError("injected setup fault")
        yield
        if case_id == {REJECT_TEARDOWN!r}:
            raise RuntimeError("injected teardown fault")
''')


def pytest_verdicts(junit: Path) -> dict[str, str]:
    """case id -> pytest's outcome (``failed`` for a failure or an error in any phase)."""
    out: dict[str, str] = {}
    for test in ET.parse(junit).getroot().iter("testcase"):
        m = re.fullmatch(r"test_case\[(.+)\]", test.get("name", ""))
        if not m:
            continue
        kinds = {child.tag for child in test}
        out[m.group(1)] = "failed" if kinds & {"failure", "error"} else \
            "skipped" if "skipped" in kinds else "passed"
    return out


def test_a_harness_exception_and_any_other_pytest_failure_are_failures_in_the_report(tmp_path: Path) -> None:
    (tmp_path / "inject_faults.py").write_text(PLUGIN)
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *(f"conformance/test_cases.py::test_case[{c}]" for c in CASES),
         "-q", "-p", "no:cacheprovider", "-p", "inject_faults", "--reader-jobs", "1",
         "--report-json", str(report), "--junitxml", str(junit)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-2000:]
    said = pytest_verdicts(junit)
    assert said == {**dict.fromkeys(CASES, "failed"), REJECT_PASSES: "passed"}, proc.stdout[-3000:]
    records = {r["id"]: r for r in json.loads(report.read_text())["results"]}
    assert {k: r["outcome"] for k, r in records.items()} == \
        {k: "pass" if v == "passed" else "fail" for k, v in said.items()}
    assert {records[c]["kind"] for c in CASES if c != REJECT_PASSES} == {"harness-error"}
    assert all("injected comparator fault" in records[c]["detail"] for c in ACCEPT)
    assert "in its setup before it was judged" in records[REJECT_SETUP]["detail"]
    assert "in its teardown after it was judged pass" in records[REJECT_TEARDOWN]["detail"]
    counts = json.loads(report.read_text())["counts"]
    assert counts == {"pass": 1, "fail": 4}
    table = re.search(r"^all\s+(\d+)\s+(\d+)\s+(\d+)$", proc.stdout, re.MULTILINE)
    assert table and table.groups() == ("1", "4", "0"), proc.stdout[-3000:]
