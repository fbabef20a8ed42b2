"""``torchfmt convert`` fit for big files: safetensors written as a stream (header first, then each
tensor from its storage, never the whole output in memory) that the safetensors library reads as torch
reads the input; CPU tags unless ``--keep-devices``; a progress bar on a terminal only
(spec/t7.md#t7-convert-safetensors, #t7-convert-devices, spec/slim.md#slim-report)."""

from __future__ import annotations

import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import numpy as np
import pytest
import torchfmt
from torchfmt.cli import main
from torchfmt.dtypes import BY_NAME
from torchfmt.model import Storage, Tensor
from torchfmt.writer import safetensors as stw

torch = pytest.importorskip("torch")
st_torch = pytest.importorskip("safetensors.torch")

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}


def _bits(t: torch.Tensor) -> torch.Tensor:
    """Byte-wide floats as their bits (torch compares no float8 values)."""
    return t.view(torch.uint8) if t.dtype.itemsize == 1 and t.dtype not in (torch.bool, torch.int8) else t


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(_bits(a), _bits(b))


@pytest.mark.spec("t7.md#t7-convert-safetensors")
def test_views_and_dtypes_read_back_by_safetensors(tmp_path: Path) -> None:
    """Every dtype the writer maps, and views that are not one contiguous run (transposed, strided, a
    column, a long strided row, empty), read back by safetensors.torch as torch reads the input."""
    g = torch.Generator().manual_seed(0)
    base = torch.randn(64, 48, generator=g)
    state = {
        "t": base.t(), "col": base[:, 3], "strided": base[::3, ::2], "row": torch.arange(200_000.)[::7],
        "empty": base[:0], "scalar": torch.tensor(2.5), "c": base[5:9],
    }
    for name in stw.SAFETENSORS_DTYPES:
        dtype = getattr(torch, name)
        state[f"d_{name}"] = (torch.randn(5, 3, generator=g) * 10).to(dtype).t()
    src, out = tmp_path / "in.pt", tmp_path / "out.safetensors"
    torch.save(state, src)
    assert main(["convert", str(src), str(out)]) == 0
    theirs = torch.load(src, weights_only=True)
    ours = st_torch.load_file(str(out))
    assert set(ours) == set(theirs)
    for k, v in theirs.items():
        assert _same(ours[k].contiguous(), v.contiguous()), k
    # the header is first and names every tensor's bytes back to back
    raw = out.read_bytes()
    n = int.from_bytes(raw[:8], "little")
    assert n % 8 == 0 and raw[8:9] == b"{"


def test_written_a_slice_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """No write holds more than the header or one chunk: a tensor of 3 MB, strided or not, goes out in
    pieces of at most CHUNK bytes, taken from the storage (no copy) when it is one run of it."""
    monkeypatch.setattr(stw, "CHUNK", 1 << 20)
    data = np.arange(3 << 18, dtype=np.float32)  # 3 MB
    storage = Storage(BY_NAME["float32"], data.size, data=data)
    flat = Tensor(BY_NAME["float32"], (data.size,), (1,), 0, storage)
    cols = Tensor(BY_NAME["float32"], (768, 1024), (1, 768), 0, storage)  # a transposed view
    sizes: list[int] = []

    class Spy(io.BytesIO):
        def write(self, b):  # noqa: ANN001, ANN202
            sizes.append(memoryview(b).nbytes)
            return super().write(b)

    f = Spy()
    total = stw.write_safetensors({"flat": flat, "cols": cols}, f)
    head = sizes[0]
    assert total == f.tell() == head + 2 * data.nbytes
    assert max(sizes[1:]) <= 1 << 20 and len(sizes) >= 7
    chunks = list(stw.tensor_chunks(flat))
    assert np.shares_memory(np.frombuffer(chunks[0], np.uint8), data)  # straight from the storage
    from safetensors.numpy import load

    back = load(f.getvalue())
    assert np.array_equal(back["flat"], data) and np.array_equal(back["cols"], data.reshape(1024, 768).T)


def _cuda_tagged(path: Path) -> None:
    """A checkpoint whose storages say cuda:0 (as an old GPU training run saved them), written by the
    reference writer: torch 2.13 without a GPU refuses it unless given map_location."""
    data = np.arange(6, dtype=np.float32)
    s = Storage(BY_NAME["float32"], 6, "cuda:0", data=data)
    torchfmt.save({"w": Tensor(BY_NAME["float32"], (2, 3), (3, 1), 0, s, "cuda:0")}, path)


@pytest.mark.spec("t7.md#t7-convert-devices")
@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU machine loads cuda:0 tags as they are")
def test_cpu_tags_unless_keep_devices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "gpu.pt"
    _cuda_tagged(src)
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(src, weights_only=True)
    expect = torch.load(src, weights_only=True, map_location="cpu")["w"]
    assert main(["convert", str(src), str(tmp_path / "cpu.pt")]) == 0
    assert "tagged cpu (1 from cuda:0" in capsys.readouterr().out  # one tensor (was 2: with its storage)
    got = torch.load(tmp_path / "cpu.pt", weights_only=True)["w"]  # no map_location needed
    assert got.device.type == "cpu" and torch.equal(got, expect)
    assert main(["convert", str(src), str(tmp_path / "kept.pt"), "--keep-devices"]) == 0
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(tmp_path / "kept.pt", weights_only=True)
    assert torch.equal(torch.load(tmp_path / "kept.pt", weights_only=True, map_location="cpu")["w"], expect)


_RUN = ("import sys; import torchfmt.tools.progress as p; p.THRESHOLD = 1000; "
        "from torchfmt.cli import main; sys.exit(main(sys.argv[1:]))")


def _in_pty(args: list[str]) -> tuple[int, str]:
    """Run the command with a terminal as stdout and stderr: its status and what the terminal showed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # a 100-column terminal
    proc = subprocess.Popen([sys.executable, "-c", _RUN, *args], stdout=slave, stderr=slave,
                            env={**ENV, "TERM": "xterm"})
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 30)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(), out.decode("utf-8", "replace")


@pytest.mark.spec("slim.md#slim-report")
@pytest.mark.parametrize("target", ["out.safetensors", "out.pt"])
def test_progress_on_a_terminal_only(tmp_path: Path, target: str) -> None:
    """The bar is drawn on a terminal (here with the threshold lowered to 1 KB), and nothing at all is
    written to stderr when it is a pipe."""
    src = tmp_path / "in.pt"
    torch.save({"w": torch.zeros(100_000)}, src)
    status, screen = _in_pty(["convert", str(src), str(tmp_path / target)])
    assert status == 0 and "convert: writing:" in screen and "/400k" in screen and "B/s" in screen
    piped = subprocess.run([sys.executable, "-c", _RUN, "convert", str(src), str(tmp_path / f"2{target}")],
                           capture_output=True, text=True, env=ENV)
    assert piped.returncode == 0 and piped.stderr == "" and piped.stdout.startswith("converted ")


def test_released_pages_read_again(tmp_path: Path) -> None:
    """A storage released after use gives its mapped pages back (MADV_DONTNEED), and reads the same
    values when asked again: the map is of the file, read-only."""
    torch.save({"w": torch.arange(1 << 20, dtype=torch.float32)}, tmp_path / "w.pt")
    doc = torchfmt.open_document(tmp_path / "w.pt")
    s = doc.objects[0]["w"].storage
    first = s.array().copy()
    s.release()
    assert s.data is None
    assert np.array_equal(s.array(), first) and first[-1] == (1 << 20) - 1
