"""``torchfmt convert`` never changes what a file means (issue 26): what it writes is read back as
strictly as the format's own readers read it (the safetensors library itself), names those readers
refuse and names the writer's own header keys take are refused by name, and the output's extension
agrees with ``--to``."""

from __future__ import annotations

import builtins
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torchfmt
from torchfmt.tools import convert as convert_module
from torchfmt.tools.convert import ConvertError, convert

torch = pytest.importorskip("torch")


def _saved(obj: Any, path: Path) -> Path:
    torch.save(obj, path)
    return path


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "torchfmt", "convert", *args], capture_output=True,
                          text=True, check=False, timeout=120)


@pytest.mark.spec("t7.md#t7-convert-safetensors-names", "t7.md#t7-convert-refusals")
@pytest.mark.parametrize(("obj", "flags", "said"), [
    ({"\ud800": torch.ones(2)}, [], "the name '\\ud800' is no valid Unicode string"),
    ({"a": torch.ones(2), "note": "x\ud800"}, ["--metadata"], "the --metadata value 'note' holds a lone"),
    ({"a": torch.ones(2), "torchfmt": {"aliases": "mine"}}, ["--metadata"],
     "the --metadata value named 'torchfmt.aliases' collides with the writer's own metadata key"),
    ({"__metadata__": torch.ones(2)}, [], "a tensor named '__metadata__'"),
], ids=["lone-surrogate-name", "lone-surrogate-value", "aliases-key", "metadata-key"])
def test_names_safetensors_readers_refuse_are_refused(obj: Any, flags: list[str], said: str,
                                                      tmp_path: Path) -> None:
    """Before: exit 0 with a header the safetensors library refuses (a lone surrogate), or a user's
    ``torchfmt.aliases`` value silently replaced by the writer's alias map."""
    source = _saved(obj, tmp_path / "in.pt")
    out = tmp_path / "out.safetensors"
    proc = _cli(str(source), str(out), *flags)
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.startswith("unsupported: safetensors-name (") and said in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and not out.exists()


@pytest.mark.spec("t7.md#t7-convert-nothing-lost", "t7.md#t7-convert-safetensors")
@pytest.mark.parametrize("library", [True, False], ids=["safetensors", "without-safetensors"])
def test_read_back_is_as_strict_as_safetensors(library: bool, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """With the name check out of the way, the read-back itself refuses the header a lone surrogate
    makes: by the safetensors library when installed, by a strict JSON reading without it (Python's
    ``json`` alone accepted it)."""
    pytest.importorskip("safetensors")
    monkeypatch.setattr(convert_module, "check_safetensors_names", lambda *a: None)
    if not library:
        real_import = builtins.__import__

        def no_safetensors(name: str, *args: Any, **kwargs: Any) -> Any:
            if name.startswith("safetensors"):
                raise ImportError(name)
            return real_import(name, *args, **kwargs)

        monkeypatch.setattr(builtins, "__import__", no_safetensors)
    source = _saved({"\udc80": torch.ones(2)}, tmp_path / "in.pt")
    with pytest.raises(ConvertError) as e:
        convert(str(source), str(tmp_path / "out.safetensors"))
    assert e.value.feature == "read-back"
    assert ("safetensors library refuses" if library else "no strict JSON") in e.value.line()
    assert not (tmp_path / "out.safetensors").exists()


@pytest.mark.spec("t7.md#t7-convert-safetensors")
def test_metadata_and_bfloat16_read_back_by_the_library(tmp_path: Path) -> None:
    from safetensors import safe_open

    w = torch.ones(3)
    obj = {"a": w, "b": w, "h": torch.zeros(4, dtype=torch.bfloat16), "note": "hi"}
    source = _saved(obj, tmp_path / "in.pt")
    out = tmp_path / "out.safetensors"
    report = convert(str(source), str(out), metadata=True)
    assert report.aliases == {"b": "a"}
    with safe_open(str(out), "pt") as f:
        assert f.metadata() == {"note": '"hi"', "torchfmt.aliases": '{"b": "a"}'}
        assert f.get_tensor("h").dtype == torch.bfloat16


@pytest.mark.spec("tensors.md#tensors-dtype-table")
@pytest.mark.parametrize("dtype", ["quint4x2", "quint2x4"])
@pytest.mark.parametrize("shape", [(8,), (3, 3)])
def test_load_file_gives_a_packed_tensor_as_torchs_int_repr(dtype: str, shape: tuple[int, ...],
                                                            tmp_path: Path) -> None:
    """Issue 26 expected ``uint8[8]`` for 8 ``quint4x2`` values; torch 2.13's ``int_repr()`` of a
    sub-byte quantized tensor is its packed bytes (``uint8[4]``, 1-d; ``uint8[5]`` for 3 x 3), and
    ``load_file`` gives what torch gives."""
    import numpy as np
    import torchfmt

    q = torch.quantize_per_tensor(torch.arange(9.0)[:int(np.prod(shape))].reshape(shape) % 4, 1.0, 0,
                                  getattr(torch, dtype))
    torch.save({"q": q}, tmp_path / "q.pt")
    want = torch.load(tmp_path / "q.pt", weights_only=True)["q"].int_repr().numpy()
    got = torchfmt.load_file(tmp_path / "q.pt")["q"]
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    assert got.tobytes() == want.tobytes()


@pytest.mark.spec("t7.md#t7-convert-extension", "t7.md#t7-convert-refusals")
@pytest.mark.parametrize(("name", "flags", "accepted"), [
    ("out.onnx", [], ".pt, .pth, .bin, .ckpt, .tar"),
    ("out.safetensors", ["--to", "pt-legacy"], ".pt, .pth, .bin, .ckpt, .tar"),
    ("out.pt", ["--to", "t7"], ".t7, .th, .net"),
    ("out.t7", ["--to", "safetensors"], ".safetensors"),
])
def test_the_extension_agrees_with_the_format(name: str, flags: list[str], accepted: str,
                                              tmp_path: Path) -> None:
    source = _saved({"w": torch.ones(2)}, tmp_path / "in.pt")
    proc = _cli(str(source), str(tmp_path / name), *flags)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("unsupported: output-extension (") and accepted in proc.stderr
    assert not (tmp_path / name).exists()


@pytest.mark.spec("t7.md#t7-convert-extension")
@pytest.mark.parametrize(("name", "flags", "target"), [
    ("model.pth.tar", [], "pt-zip"), ("pytorch_model.bin", ["--to", "pt-legacy"], "pt-legacy"),
    ("face.net", [], "t7"), ("plain", ["--to", "safetensors"], "safetensors"), ("plain2", [], "pt-zip"),
])
def test_accepted_extensions_write_their_format(name: str, flags: list[str], target: str,
                                                tmp_path: Path) -> None:
    source = _saved({"w": torch.ones(2)}, tmp_path / "in.pt")
    proc = _cli(str(source), str(tmp_path / name), *flags, "--json")
    assert proc.returncode == 0, proc.stderr
    assert f'"target": "{target}"' in proc.stdout


@pytest.mark.spec("t7.md#t7-convert-limits", "t7.md#t7-limits")
def test_t7_limits_are_checked_before_writing_and_agree_with_the_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A list of n numbers is 1 + 2n objects (the table, each key and value): 124,999 numbers make
    249,999 (the reader reads them), 125,000 make 250,001, refused before a byte is written; with the
    check out of the way, the reader refuses that stream by its own limit (the count is the reader's)."""
    from torchfmt.errors import FormatError
    from torchfmt.limits import T7_OBJECTS
    from torchfmt.writer import t7 as t7_writer

    n_ok = (T7_OBJECTS.value - 1) // 2
    ok = tmp_path / "ok.t7"
    torchfmt.save(list(range(n_ok)), ok, "t7")
    assert len(torchfmt.load(ok)) == n_ok
    big = _saved({f"k{i}": i for i in range(200_000)}, tmp_path / "big.pt")
    proc = _cli(str(big), str(tmp_path / "big.t7"))
    assert proc.returncode == 2 and "T7_OBJECTS" in proc.stderr and "read-back" not in proc.stderr
    assert not (tmp_path / "big.t7").exists()
    with pytest.raises(t7_writer.T7Error, match="250,000 objects"):
        torchfmt.save(list(range(n_ok + 1)), tmp_path / "over.t7", "t7")
    monkeypatch.setattr(t7_writer, "check_limits", lambda *a: None)
    torchfmt.save(list(range(n_ok + 1)), tmp_path / "over.t7", "t7")
    with pytest.raises(FormatError, match="more than 250000 objects"):
        torchfmt.load(tmp_path / "over.t7")


@pytest.mark.spec("t7.md#t7-convert-limits")
def test_t7_depth_is_checked_before_writing(tmp_path: Path) -> None:
    from torchfmt.limits import T7_DEPTH
    from torchfmt.writer.t7 import T7Error

    deep: list[Any] = [1.0]
    for _ in range(T7_DEPTH.value - 1):
        deep = [deep]
    torchfmt.save(deep, tmp_path / "ok.t7", "t7")  # 1,024 tables open at once: the reader reads it
    torchfmt.load(tmp_path / "ok.t7")
    with pytest.raises(T7Error, match="nest deeper than 1024"):
        torchfmt.save([deep], tmp_path / "deep.t7", "t7")
