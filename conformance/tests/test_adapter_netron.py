"""The netron adapter maps netron's view onto the contract (conformance/adapters/netron/): checked on
committed cases whenever its setup has run (CI runs it; a set-up but broken install fails, never skips)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conformance.harness.cases import CASES_DIR, load_case
from conformance.harness.compare import compare
from conformance.harness.readers import ADAPTERS_DIR, adapters_home

RUN = ADAPTERS_DIR / "netron" / "run.py"
#: setup leaves a marker; CI sets TORCHFMT_REQUIRE_ADAPTERS=1 after running it, so nothing skips there.
INSTALLED = ((adapters_home() / "netron" / ".installed").is_file()
             or bool(os.environ.get("TORCHFMT_REQUIRE_ADAPTERS")))
pytestmark = pytest.mark.skipif(not INSTALLED, reason="conformance/adapters/netron/setup has not run here")


def run(case_id: str) -> subprocess.CompletedProcess[str]:
    case = load_case(CASES_DIR / case_id)
    return subprocess.run([sys.executable, str(RUN), str(case.path)], capture_output=True, text=True,
                          timeout=120)


def test_probe_finds_the_installed_reader() -> None:
    proc = subprocess.run([sys.executable, str(RUN), "--probe"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout
    assert "netron 9.3.3" in proc.stdout


def test_a_float32_tensor_is_described_as_torch_loads_it() -> None:
    case = load_case(CASES_DIR / "pt-zip/dtype-float32")
    proc = run("pt-zip/dtype-float32")
    assert proc.returncode == 0, proc.stderr
    assert compare(case.description, json.loads(proc.stdout)) == []


def test_a_t7_file_goes_through_torch_js() -> None:
    proc = run("t7-binary/bigendian-table")
    assert proc.returncode == 1, proc.stdout
    assert proc.stderr.startswith("bad-type-code: netron: t7:"), proc.stderr
