"""The torchfile adapter maps torchfile's view onto the contract (conformance/adapters/torchfile/): checked on
committed cases whenever its setup has run (CI runs it; a set-up but broken install fails, never skips)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conformance.harness.cases import CASES_DIR, load_case
from conformance.harness.readers import ADAPTERS_DIR, adapters_home

RUN = ADAPTERS_DIR / "torchfile" / "run.py"
#: setup leaves a marker; CI sets TORCHFMT_REQUIRE_ADAPTERS=1 after running it, so nothing skips there.
INSTALLED = ((adapters_home() / "torchfile" / ".installed").is_file()
             or bool(os.environ.get("TORCHFMT_REQUIRE_ADAPTERS")))
pytestmark = pytest.mark.skipif(not INSTALLED, reason="conformance/adapters/torchfile/setup has not run here")


def run(case_id: str) -> subprocess.CompletedProcess[str]:
    case = load_case(CASES_DIR / case_id)
    return subprocess.run([sys.executable, str(RUN), str(case.path)], capture_output=True, text=True,
                          timeout=120)


def test_probe_finds_the_installed_reader() -> None:
    proc = subprocess.run([sys.executable, str(RUN), "--probe"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout
    assert "torchfile 0.1.0" in proc.stdout


def test_a_pt_file_is_declined() -> None:
    proc = run("pt-zip/dtype-float32")
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.startswith("unsupported: pt files")


def test_a_t7_table_is_described() -> None:
    proc = run("t7-binary/adv-t7-boolean-two")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["format"] == "t7-binary"
    assert doc["objects"][0]["type"] == "table"
