"""Invalid ``TORCHFMT_T7_*`` values through the command line (spec/t7.md#t7-hints,
spec/canonical.md#canonical-t7-hints, #canonical-reader-cli): one stderr line ``unsupported: t7-hint (...)``
and exit status 2 for every command and every file, a ``.pt`` file included, never a traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
T7 = ROOT / "conformance/cases/t7-binary/table-map/table_map.t7"
PT = next((ROOT / "conformance/cases/pt-zip/empty-tensors").glob("*.pt"))
LINE = re.compile(r"unsupported: t7-hint \((TORCHFMT_T7_[A-Z_]+)='[^'\n]*' is not one of [a-z0-9, ]+\)\n")

INVALID = [
    ("TORCHFMT_T7_LONG_SIZE", "5"),
    ("TORCHFMT_T7_LONG_SIZE", "8x"),
    ("TORCHFMT_T7_MODE", "foo"),
    ("TORCHFMT_T7_MODE", "BINARY"),
    ("TORCHFMT_T7_BYTE_ORDER", "middle"),
]


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("TORCHFMT_T7_")}
    full.update(PYTHONPATH=os.pathsep.join(p for p in sys.path if p), **env)
    return subprocess.run(
        [sys.executable, "-m", "torchfmt", *args], capture_output=True, text=True, env=full, timeout=120
    )


@pytest.mark.spec("t7.md#t7-hints", "canonical.md#canonical-t7-hints", "canonical.md#canonical-reader-cli")
@pytest.mark.parametrize("var,value", INVALID, ids=[f"{v}={x}" for v, x in INVALID])
@pytest.mark.parametrize("path", [T7, PT], ids=["t7", "pt"])
def test_invalid_hint_dump(var: str, value: str, path: Path) -> None:
    proc = _run("dump", str(path), env={var: value})
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    m = LINE.fullmatch(proc.stderr)
    assert m and m[1] == var, proc.stderr


@pytest.mark.spec("t7.md#t7-hints", "canonical.md#canonical-reader-cli")
@pytest.mark.parametrize("command", ["inspect", "convert", "slim"])
def test_invalid_hint_other_commands(command: str, tmp_path: Path) -> None:
    args = [command, str(PT)] + ([] if command == "inspect" else [str(tmp_path / "out.pt")])
    proc = _run(*args, env={"TORCHFMT_T7_MODE": "foo"})
    assert proc.returncode == 2, proc.stderr
    assert LINE.fullmatch(proc.stderr), proc.stderr
    assert not (tmp_path / "out.pt").exists()


@pytest.mark.spec("t7.md#t7-hints", "canonical.md#canonical-t7-hints")
def test_valid_hints_are_taken_and_empty_ones_ignored() -> None:
    """Surrounding whitespace is ignored, an empty variable is no hint, and a valid hint is applied: the
    binary file read as ascii is malformed ascii (spec/t7.md#t7-hints)."""
    ok = _run("dump", str(T7), env={"TORCHFMT_T7_LONG_SIZE": " 8 ", "TORCHFMT_T7_MODE": ""})
    assert ok.returncode == 0 and '"t7-binary"' in ok.stdout, ok.stderr
    ascii_read = _run("dump", str(T7), env={"TORCHFMT_T7_MODE": "ascii"})
    assert ascii_read.returncode == 1 and ascii_read.stderr.count("\n") == 1, ascii_read.stderr
    pt = _run("dump", str(PT), env={"TORCHFMT_T7_MODE": "ascii", "TORCHFMT_T7_LONG_SIZE": "4"})
    assert pt.returncode == 0, pt.stderr  # valid hints never apply to a .pt file
