"""``inspect`` and ``slim`` read only the bytes they need (spec/inspect.md#inspect-bytes,
spec/slim.md#slim-trim): on a file that is one small view of a 128 MB storage, the pages of the input
in the page cache after the command, when none were before, are under 5% of the file (the count of
``benchmarks/tools_big.py``, which measures the same on 1.5 GB)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks import tools_big  # the repository root is importable (pyproject.toml's pythonpath)

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def view_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("view") / "view.pt"
    big = torch.randn(32 << 20, generator=torch.Generator().manual_seed(0))  # 128 MB
    torch.save({"row": big[1000:1010]}, path)
    return path


@pytest.mark.spec("inspect.md#inspect-bytes", "slim.md#slim-trim")
@pytest.mark.parametrize("command", [["inspect", "--json"], ["slim"]])
def test_a_small_view_reads_a_small_part(view_file: Path, tmp_path: Path, command: list[str]) -> None:
    out = [str(tmp_path / "slim.pt")] if command == ["slim"] else []
    cmd = [sys.executable, "-m", "torchfmt", command[0], str(view_file), *out, *command[1:]]
    r = tools_big.bytes_read(view_file, cmd)
    assert r["status"] == 0, r["stderr"]
    assert r["before"] == 0  # evicted: what is resident after was read by the command
    assert r["read"] < 0.05 * r["file_bytes"], r
    if out:  # and what it wrote is the ten elements, as torch reads them
        assert torch.equal(torch.load(out[0], weights_only=True)["row"],
                           torch.load(view_file, weights_only=True)["row"])
