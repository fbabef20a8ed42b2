"""``torchfmt slim`` never grows a file (spec/slim.md#slim-no-gain): with nothing to save it says so,
exits 0 and writes nothing, unless ``--force``; and its messages name only flags that exist."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest
from torchfmt.cli import _parser, main
from torchfmt.t7.encodings import Hints
from torchfmt.tools.slim import slim

torch = pytest.importorskip("torch")


@pytest.mark.spec("slim.md#slim-no-gain")
def test_nothing_to_save_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = tmp_path / "clean.pt", tmp_path / "out.pt"
    torch.save({"w": torch.randn(10, 10), "b": torch.zeros(10)}, src)
    assert main(["slim", str(src), str(out)]) == 0
    line = capsys.readouterr().out
    assert "nothing to save at level heavy" in line and "no file written" in line
    assert not out.exists() and not list(tmp_path.glob(".out.pt.*"))
    assert main(["slim", str(src), str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["written"] is False and report["bytes_after"] is None and not out.exists()
    # --force writes it all the same, and torch reads it as the input
    assert main(["slim", str(src), str(out), "--force"]) == 0
    assert out.exists() and "wrote" in capsys.readouterr().out
    a, b = torch.load(src, weights_only=True), torch.load(out, weights_only=True)
    assert torch.equal(a["w"], b["w"]) and torch.equal(a["b"], b["b"])


def _long4_view(n: int) -> bytes:
    """A .t7 LongTensor of one element viewing element 2 of an ``n``-element LongStorage, written with
    4-byte longs: trimming saves (n - 1) * 4 bytes, and the writer's 8-byte longs add more than that."""
    i = lambda v: struct.pack("<i", v)  # noqa: E731 - a long is an int here
    chars = lambda b: i(len(b)) + b  # noqa: E731
    elements = b"".join(i(k) for k in range(n))
    storage = i(4) + i(2) + chars(b"V 1") + chars(b"torch.LongStorage") + i(n) + elements
    return (i(4) + i(1) + chars(b"V 1") + chars(b"torch.LongTensor") + i(1) + i(1) + i(1) + i(2)
            + storage)


@pytest.mark.spec("slim.md#slim-no-gain")
def test_a_rewrite_no_smaller_is_not_written(tmp_path: Path) -> None:
    src, out = tmp_path / "long4.t7", tmp_path / "out.t7"
    src.write_bytes(_long4_view(3))
    hints = Hints(mode="binary", long_size=4, byte_order="little")
    report = slim(str(src), str(out), hints=hints)
    assert report.storages_trimmed == 1 and not report.written
    assert report.bytes_after is not None and report.bytes_after >= src.stat().st_size
    assert "not smaller" in report.line() and "no file written" in report.line()
    assert not out.exists() and not list(tmp_path.glob(".out.t7.*"))
    dry = slim(str(src), str(out), hints=hints, dry_run=True)
    assert not dry.written and not out.exists()
    forced = slim(str(src), str(out), hints=hints, force=True)
    assert forced.written and out.stat().st_size == forced.bytes_after > src.stat().st_size
    # a storage large enough that trimming it pays: written
    big = tmp_path / "big.t7"
    big.write_bytes(_long4_view(1000))
    shrunk = slim(str(big), str(tmp_path / "small.t7"), hints=hints)
    assert shrunk.written and shrunk.bytes_after < big.stat().st_size


@pytest.mark.spec("slim.md#slim-files")
def test_refusal_lines_name_flags_that_exist(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """slim of a whole pickled model is refused with the reader's line; every `<command> --flag` that
    line names is a flag of that command (slim has no --inert)."""
    torch.save(torch.nn.Sequential(torch.nn.Linear(2, 2)), tmp_path / "model.pt")
    assert main(["slim", str(tmp_path / "model.pt"), str(tmp_path / "out.pt")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("unsafe-global:") and err.count("\n") == 1
    named = re.findall(r"\b(dump|inspect|convert|slim) (--[a-z-]+)", err)
    assert named and ("slim", "--inert") not in named
    commands = {a.dest: a for a in _parser()._subparsers._group_actions}["command"].choices
    for command, flag in named:
        assert flag in commands[command]._option_string_actions, (command, flag)
