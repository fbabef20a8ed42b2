"""``torchfmt inspect``'s ``weights_only`` verdict (spec/inspect.md#inspect-readiness) against what torch
2.13's ``torch.load(weights_only=True)`` does with the same file: pickle protocols and their opcodes, tar
files, globals; the ``add_safe_globals`` lines followed in a fresh interpreter, the ``convert`` line run."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from torchfmt.cli import main
from torchfmt.pickle.opcodes import OPCODES, WEIGHTS_ONLY
from torchfmt.tools.inspect import inspect, render

torch = pytest.importorskip("torch")
from torch import _weights_only_unpickler as wou  # noqa: E402


def torch_loads(path: Path) -> bool:
    """Whether torch 2.13 loads ``path`` with ``weights_only=True`` (its warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch.load(path, weights_only=True)
        except Exception:  # noqa: BLE001 - any refusal is a refusal
            return False
    return True


@pytest.mark.spec("inspect.md#inspect-readiness")
@pytest.mark.parametrize("op", OPCODES, ids=lambda op: op.name)
def test_weights_only_opcodes_are_torchs(op) -> None:  # noqa: ANN001
    """WEIGHTS_ONLY holds exactly the opcodes torch's weights_only unpickler runs: each opcode byte is fed
    to it, and it refuses those outside the set with 'Unsupported operand'."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            wou.Unpickler(io.BytesIO(bytes([op.code]) + b"\x00" * 32 + b"\n\n")).load()
        refused = False
    except Exception as e:  # noqa: BLE001 - any other failure is the opcode running on junk
        refused = str(e).startswith(f"Unsupported operand {op.code}")  # not the junk after it (0x00)
    assert refused == (op.name not in WEIGHTS_ONLY)


def _verdict(path: Path) -> dict:
    report, status = inspect(str(path))
    # a whole pickled model is reported (read inert) with dump's status and line (spec/inspect.md#inspect-cli)
    assert status == 0 or (status == 1 and report["error"]["code"] == "unsafe-global"), report["error"]
    return report["readiness"]


@pytest.mark.spec("inspect.md#inspect-readiness")
@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
@pytest.mark.parametrize("extra", ["plain", "bytes", "model"])
def test_protocols_as_torch_decides(tmp_path: Path, protocol: int, extra: str) -> None:
    """Files torch.save writes with each pickle protocol: inspect says ready exactly when torch loads it
    (protocol 3 loads unless it holds bytes, SHORT_BINBYTES; 4 and 5 never: FRAME, MEMOIZE, ...), and
    the convert line it prints writes a file torch loads."""
    value = {"plain": {"w": torch.ones(3)}, "bytes": {"w": torch.ones(3), "b": b"xy"},
             "model": torch.nn.Linear(2, 2)}[extra]
    path = tmp_path / f"p{protocol}.pt"
    torch.save(value, path, pickle_protocol=protocol)
    r = _verdict(path)
    assert r["ready"] == torch_loads(path)
    assert r["protocols"] == [protocol]
    if extra == "model" or protocol >= 4:
        assert not r["ready"]
    assert (protocol >= 4 or (protocol == 3 and extra == "bytes")) == bool(r["opcodes"])
    if r["opcodes"]:
        assert r["add_safe_globals"] is None  # allowlisting cannot make torch run these opcodes
        assert "opcode" in r["summary"] and f"protocol {protocol}" in r["summary"]
    if not r["ready"]:
        assert r["convert"] == ("torchfmt convert --inert" if extra == "model" else "torchfmt convert")
        out = tmp_path / "out.pt"
        assert main(r["convert"].split()[1:] + [str(path), str(out)]) == 0
        assert torch_loads(out)


@pytest.mark.spec("inspect.md#inspect-readiness")
def test_tar_files_are_refused(tmp_path: Path) -> None:
    """torch.load(weights_only=True) refuses every 0.1.x tar file, whatever it holds."""
    from test_pt_tar import archive, members

    path = tmp_path / "old.pt"
    path.write_bytes(archive(members()))
    assert not torch_loads(path)
    r = _verdict(path)
    assert not r["ready"] and "tar" in r["container"] and r["add_safe_globals"] is None
    assert r["convert"] == "torchfmt convert"
    out = tmp_path / "new.pt"
    assert main(["convert", str(path), str(out)]) == 0 and torch_loads(out)


@pytest.mark.spec("inspect.md#inspect-readiness")
def test_main_model_recipe_works_when_followed(tmp_path: Path) -> None:
    """A whole model whose class was defined in a script (``__main__.Net``): the lines printed, pasted
    into a script that defines the class as the comment says, make torch 2.13 load the file."""
    cls = textwrap.dedent("""\
        import torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = torch.nn.Linear(3, 2)
                self.bn = torch.nn.BatchNorm1d(2)
        """)
    path = tmp_path / "net.pt"
    subprocess.run([sys.executable, "-c", cls + f"torch.save(Net(), {str(path)!r})"], check=True)
    r = _verdict(path)
    assert not r["ready"] and r["opcodes"] == [] and r["convert"] == "torchfmt convert --inert"
    recipe = r["add_safe_globals"]
    assert "# Net: pickled from a script (__main__)" in recipe
    load = f"m = torch.load({str(path)!r}, weights_only=True)\nprint(type(m).__name__, m.fc.weight.shape)"
    run = subprocess.run([sys.executable, "-c", cls + recipe + "\n" + load], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["Net", "torch.Size([2,", "3])"]
    without = subprocess.run([sys.executable, "-c", cls + load], capture_output=True, text=True)
    assert without.returncode != 0  # the recipe is what made the difference
    text = render(inspect(str(path))[0])
    assert f"torchfmt convert --inert {path} OUT.pt" in text


@pytest.mark.spec("inspect.md#inspect-readiness")
def test_ready_file_names_no_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    torch.save({"w": torch.ones(2)}, tmp_path / "sd.pt")
    assert main(["inspect", str(tmp_path / "sd.pt"), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)["readiness"]
    assert r["ready"] and r["convert"] is None and r["opcodes"] == [] and r["protocols"] == [2]
    assert torch_loads(tmp_path / "sd.pt")


def test_not_weights_only_is_torchs_difference() -> None:
    """NOT_WEIGHTS_ONLY is exactly what the reader's torch allowlist has beyond torch's weights_only one."""
    from torch._weights_only_unpickler import _get_allowed_globals
    from torchfmt.pickle.globals import ALLOWED_LIST, NOT_WEIGHTS_ONLY

    theirs = set(_get_allowed_globals())
    ours = {a.qualname for a in ALLOWED_LIST if a.scope == "torch"}
    assert NOT_WEIGHTS_ONLY == ours - theirs


@pytest.mark.spec("inspect.md#inspect-readiness")
@pytest.mark.parametrize("name", ["python-bytes", "python-frozenset", "python-bytes-torch1.13"])
def test_globals_the_reader_allows_and_torch_does_not(name: str, tmp_path: Path) -> None:
    """Committed cases torch reads only with weights_only=False (a bytes, a frozenset in a protocol-2
    pickle): not ready, and the add_safe_globals line printed makes torch load them."""
    root = Path(__file__).resolve().parents[2] / "conformance" / "cases" / "pt-legacy" / name
    path = root / "data.pt"
    r = _verdict(path)
    assert not torch_loads(path) and not r["ready"] and r["add_safe_globals"]
    script = f"import torch\n{r['add_safe_globals']}\ntorch.load({str(path)!r}, weights_only=True)\n"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-300:]
