"""The tools keep the reader's promises (issue 20): one reading path (an input ``dump`` refuses is refused
by ``inspect``, ``slim`` and ``convert`` with ``dump``'s line and status), nothing lost (colliding flat
names, None in a ``.t7`` table, values a target has no form for are refused naming the value; what is
written reads back as what was meant), and no temporary file left, a stop signal included.

The files are those that showed each problem (tests/tool_inputs.py), made by torch; truth about them is
torch's (``torch.load(weights_only=True)`` of the input, ``torch.load``/safetensors of the output).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tool_inputs
import torchfmt
from torchfmt.cli import main
from torchfmt.tools.flat import NameClash

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
#: ``inspect`` with ``--strict-status`` exits as ``dump`` does (without it, 0 once it read the file, inert
#: included: test_inspect_exits_0_once_it_read_the_file).
TOOLS: list[list[str]] = [["inspect", "--strict-status"], ["inspect", "--json", "--strict-status"], ["slim"],
                          *(["convert", "--to", to] for to in ("pt-zip", "pt-legacy", "safetensors", "t7"))]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return tool_inputs.make(tmp_path_factory.mktemp("tool-inputs"))


def run(argv: list[str]) -> tuple[int, list[str], str]:
    """``torchfmt ARGV`` in this process: exit status, stderr lines, stdout."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, err.getvalue().splitlines(), out.getvalue()


def tool_argv(tool: list[str], path: Path, out: Path) -> list[str]:
    if tool[0] == "inspect":
        return [tool[0], str(path), *tool[1:]]
    return [tool[0], str(path), str(out), *tool[1:]]


def left_behind(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# -- nothing lost -----------------------------------------------------------------------------------

@pytest.mark.spec("t7.md#t7-convert-nothing-lost")
@pytest.mark.parametrize(("name", "paths"), [
    ("collide-dotted-key", ["$['a.b']", "$['a']['b']"]),
    ("collide-int-key", ["$[0]", "$['0']"]),
    ("collide-list-index", ["$['m'][0]", "$['m.0']"]),
    ("t7-keys-1-and-str-1", ["$[1]", "$['1']"]),
])
def test_colliding_flat_names_are_refused_naming_both_paths(inputs: dict[str, Path], tmp_path: Path,
                                                            name: str, paths: list[str]) -> None:
    pytest.importorskip("safetensors")
    out = tmp_path / "out.safetensors"
    status, err, _ = run(["convert", str(inputs[name]), str(out)])
    assert status == 2 and len(err) == 1 and err[0].startswith("unsupported: safetensors-name (")
    assert all(p in err[0] for p in paths), err[0]
    assert not out.exists() and left_behind(tmp_path) == []


@pytest.mark.parametrize(("name", "paths"), [
    ("collide-dotted-key", ["$['a.b']", "$['a']['b']"]),
    ("collide-int-key", ["$[0]", "$['0']"]),
    ("collide-list-index", ["$['m'][0]", "$['m.0']"]),
    ("collide-float-key", ["$[2.0]", "$['2']"]),
    ("t7-keys-1-and-str-1", ["$[1.0]", "$['1']"]),
])
def test_load_file_refuses_colliding_names(inputs: dict[str, Path], name: str, paths: list[str]) -> None:
    with pytest.raises(NameClash) as e:
        torchfmt.load_file(inputs[name])
    assert e.value.paths == paths


def test_load_file_names_a_container_reached_twice(inputs: dict[str, Path]) -> None:
    flat = torchfmt.load_file(inputs["container-twice"])
    assert sorted(flat) == ["dec.w", "enc.w"]
    assert flat["enc.w"].tolist() == flat["dec.w"].tolist() == [1.0, 2.0]


@pytest.mark.spec("t7.md#t7-convert-nothing-lost")
def test_an_empty_key_keeps_its_place_in_the_name(inputs: dict[str, Path], tmp_path: Path) -> None:
    """``{'': {'a': x}, 'a': y}``: ``.a`` and ``a``, both kept (torch's own view has both tensors)."""
    pytest.importorskip("safetensors")
    from safetensors.torch import load_file

    assert sorted(torchfmt.load_file(inputs["collide-empty-prefix"])) == [".a", "a"]
    out = tmp_path / "out.safetensors"
    assert run(["convert", str(inputs["collide-empty-prefix"]), str(out)])[0] == 0
    want = torch.load(inputs["collide-empty-prefix"], weights_only=True)
    got = load_file(out)
    assert torch.equal(got[".a"], want[""]["a"]) and torch.equal(got["a"], want["a"])


@pytest.mark.spec("t7.md#t7-convert-nothing-lost")
@pytest.mark.parametrize(("name", "words"), [
    ("none-values", ["t7-value", "'n'", "None"]),
    ("nan-key", ["t7-value", "NaN"]),
    ("dims-1025", ["t7-value", "1025 dimensions"]),  # 65 to 1,024 are read as Lua reads them (T7_NDIM)
])
def test_t7_refuses_what_lua_cannot_hold(inputs: dict[str, Path], tmp_path: Path, name: str,
                                         words: list[str]) -> None:
    out = tmp_path / "out.t7"
    status, err, _ = run(["convert", str(inputs[name]), str(out), "--to", "t7"])
    assert status == 2 and len(err) == 1 and all(w in err[0] for w in words), err
    assert not out.exists() and left_behind(tmp_path) == []


@pytest.mark.spec("t7.md#t7-convert-nothing-lost", "tensors.md#tensors-empty")
def test_an_empty_tensor_with_a_dimension_of_2p62_converts_to_t7(inputs: dict[str, Path],
                                                                 tmp_path: Path) -> None:
    """An empty tensor holds no element whatever its other sizes (tensors-empty; issue 18 question 4 made
    the .t7 reader accept [0, 2^62]): it is written, and reads back with its shape."""
    out = tmp_path / "out.t7"
    status, err, _ = run(["convert", str(inputs["empty-dim-2p62"]), str(out), "--to", "t7"])
    assert status == 0 and err == [], err
    assert torchfmt.load(out)["w"].shape == (0, 1 << 62)


@pytest.mark.spec("t7.md#t7-convert-nothing-lost")
def test_torchscript_is_refused_by_convert_as_by_slim(inputs: dict[str, Path], tmp_path: Path) -> None:
    for argv in (["convert", str(inputs["torchscript"]), str(tmp_path / "o.pt")],
                 ["slim", str(inputs["torchscript"]), str(tmp_path / "o.pt")]):
        status, err, _ = run(argv)
        assert status == 2 and len(err) == 1 and err[0].startswith("unsupported: torchscript-archive ("), err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.spec("t7.md#t7-convert-nothing-lost")
def test_a_write_that_does_not_read_back_replaces_nothing(tmp_path: Path) -> None:
    """The check runs on the complete temporary file: a refusal leaves the old output as it was."""
    from torchfmt.tools.convert import ConvertError, checked

    src, out = tmp_path / "in.pt", tmp_path / "out.pt"
    torch.save({"w": torch.arange(3.0)}, src)
    out.write_bytes(b"old")
    meant = {"w": torchfmt.load(src)["w"], "extra": 1}  # not what the file holds
    with pytest.raises(ConvertError) as e:
        torchfmt.save(meant, out, check=lambda tmp: checked(tmp, {"w": meant["w"]}, "pt-zip"))
    assert e.value.feature == "read-back" and "entries" in e.value.detail
    assert out.read_bytes() == b"old" and left_behind(tmp_path) == []


# -- one reading path ---------------------------------------------------------------------------------

def _amplified(tmp_path: Path) -> dict[str, Path]:
    base = torch.zeros(1 << 18)  # 1 MB
    text = "x" * (1 << 20)
    # 300 MB of tensors over a 1 MB storage: past VIEW_FACTOR times the storages' bytes plus VIEW_BYTES
    files = {"views-300-full": [base[:] for _ in range(300)],
             "text-300-refs": [text] * 300}  # 300 MB of JSON text from a 1 MB string
    out = {}
    for name, obj in files.items():
        out[name] = tmp_path / f"{name}.pt"
        torch.save(obj, out[name])
    return out


@pytest.mark.spec("t7.md#t7-convert-refusals", "slim.md#slim-files", "inspect.md#inspect-cli")
def test_every_tool_refuses_what_dump_refuses_over_its_limits(tmp_path: Path) -> None:
    for name, path in _amplified(tmp_path).items():
        status, err, _ = run(["dump", str(path)])
        assert status == 1 and err[0].startswith("limit-exceeded: "), (name, err)
        for tool in TOOLS:
            out = tmp_path / ("out." + {"t7": "t7", "safetensors": "safetensors"}.get(tool[-1], "bin"))
            got = run(tool_argv(tool, path, out))
            assert (got[0], got[1]) == (status, err), (name, tool)
            assert not out.exists() and left_behind(tmp_path) == []


def test_a_deep_list_dump_reads_is_slimmed_and_converted(inputs: dict[str, Path], tmp_path: Path) -> None:
    path = inputs["deep-list-990"]
    assert run(["dump", str(path)])[0] == 0
    for tool in (["slim"], ["convert", "--to", "pt-legacy"]):
        out = tmp_path / "out.pt"
        status, err, _ = run(tool_argv(tool, path, out) + ["--force"])
        assert (status, err) == (0, []), tool
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(5_000)
        try:
            got, want = torch.load(out, weights_only=True), torch.load(path, weights_only=True)
        finally:
            sys.setrecursionlimit(limit)
        for _ in range(989):
            assert isinstance(got, list) and len(got) == 1
            got, want = got[0], want[0]
        assert torch.equal(got[0], want[0])


@pytest.mark.spec("inspect.md#inspect-cli")
def test_inspect_exits_as_dump_on_a_whole_pickled_model_with_strict_status(tmp_path: Path) -> None:
    """dump refuses a whole pickled model (unsafe-global, 1); inspect --strict-status still shows it, read
    inert, and exits with dump's line and status, the line printed once (on stderr, not in the report)."""
    path = tmp_path / "model.pt"
    torch.save(torch.nn.Linear(2, 2), path)
    status, err, _ = run(["dump", str(path)])
    assert status == 1 and err[0].startswith("unsafe-global: ")
    got_status, got_err, text = run(["inspect", str(path), "--strict-status"])
    assert (got_status, got_err) == (status, err)
    assert "Linear" in text and "unsafe-global" not in text


# -- stop signals -----------------------------------------------------------------------------------

_SLOW_CHECK = r"""
import sys, time
import torchfmt.tools.convert as convert
from torchfmt.cli import main

def slow(tmp, meant, target):
    print("checking", flush=True)
    time.sleep(60)

convert.checked = slow
sys.exit(main(["convert", sys.argv[1], sys.argv[2]]))
"""


@pytest.mark.spec("t7.md#t7-convert-nothing-lost")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_mid_write_leaves_no_temporary(tmp_path: Path, signum: int) -> None:
    src, out = tmp_path / "in.pt", tmp_path / "out.pt"
    torch.save({"w": torch.arange(10.0)}, src)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "reference_impl"))
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_CHECK, str(src), str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "checking"  # the temporary file is complete, not yet renamed
    assert len(left_behind(tmp_path)) == 1
    proc.send_signal(signum)
    deadline = time.monotonic() + 30
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is not None
    if signum == signal.SIGTERM:
        assert proc.returncode == -signal.SIGTERM  # ended by the signal, as it would have been
    else:
        assert proc.returncode != 0 and "KeyboardInterrupt" in (proc.stderr.read() if proc.stderr else "")
    assert left_behind(tmp_path) == [] and not out.exists()
