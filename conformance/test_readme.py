"""The README stays true: its results matrix is as conformance/matrix.py wrote it, its all-tests
command is the one .ci/run runs, and its local links lead somewhere."""

from __future__ import annotations

import os
import re

from conformance import matrix
from conformance.harness.vocabulary import ROOT

README = ROOT / "README.md"
CI_RUN = ROOT / ".ci" / "run"


def test_matrix_block_is_generated() -> None:
    assert matrix.check_block(README.read_text(encoding="utf-8")) == []


def test_matrix_check_catches_hand_edits() -> None:
    text = README.read_text(encoding="utf-8")
    edited = re.sub(r"\| (\d+) pass", lambda m: f"| {int(m.group(1)) + 1} pass", text, count=1)
    assert edited != text and matrix.check_block(edited) != []
    assert matrix.check_block(text.replace(matrix.END, "")) != []


def test_readme_runs_what_ci_runs() -> None:
    lines = CI_RUN.read_text(encoding="utf-8").splitlines()
    assert "set -euo pipefail" in lines
    assert os.access(CI_RUN, os.X_OK)
    command = lines[lines.index("# readme: all-tests") + 1].split("||")[0].strip()
    assert command.startswith("python -m pytest ")
    readme = README.read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("   ") and line.endswith(f" {command}") for line in readme)


def test_readme_links_exist() -> None:
    links = re.findall(r"\]\(([^)]+)\)", README.read_text(encoding="utf-8"))
    local = [link.split("#")[0] for link in links if not re.match(r"[a-z]+://", link)]
    missing = [link for link in local if link and not (ROOT / link).exists()]
    assert local and not missing, missing
