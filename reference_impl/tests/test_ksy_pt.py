"""The generated pytorch_zip, pytorch_legacy and pytorch_tar parsers (ksy/) against files real PyTorch wrote.

Files are written by torch in the test (torch is installed in CI) and taken from ../shared/corpus/pt/wild
when present.  Expectations come from torch itself and from independent readers of the containers
(Python's zipfile, tarfile and pickletools), never from our reader (spec/pt-zip.md, spec/pt-legacy.md,
spec/pt-tar.md).
"""

from __future__ import annotations

import pickletools
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

import torch  # noqa: E402  (the [torch] extra: CI installs it; a missing torch must fail, not skip)
from kaitaistruct import KaitaiStructError  # noqa: E402
from pytorch_legacy import PytorchLegacy  # noqa: E402
from pytorch_tar import PytorchTar  # noqa: E402
from pytorch_zip import PytorchZip  # noqa: E402

WILD = ROOT.parent / "shared" / "corpus" / "pt" / "wild"


def _opcodes(data: bytes) -> list[int]:
    return [ord(op.code) for op, _, _ in pickletools.genops(data)]


def _check_zip(path: Path) -> PytorchZip:
    """Every record: name, size and body offset agree with zipfile; *.pkl records parse like genops."""
    parsed = PytorchZip.from_file(str(path))
    with zipfile.ZipFile(path) as zf, path.open("rb") as raw:
        infos = zf.infolist()
        entries = parsed.central_dir.entries
        assert [e.file_name for e in entries] == [i.filename for i in infos]
        for entry, info in zip(entries, infos, strict=True):
            assert entry.len_body == info.compress_size
            assert entry.ofs_local_header == info.header_offset
            local = entry.local_file
            assert local.file_name == entry.file_name
            raw.seek(local.ofs_body)
            body = raw.read(entry.len_body)
            if info.compress_type == zipfile.ZIP_STORED:
                assert body == zf.read(info)
                assert local.body == body
            if local.has_data_descriptor:
                assert local.data_descriptor.crc32 == info.CRC
            if local.is_pickle and entry.is_stored:
                assert [o.code.value for o in local.pickle.ops] == _opcodes(body)
    return parsed


def _save(tmp_path: Path, name: str, obj: object, **kw: object) -> Path:
    path = tmp_path / name
    torch.save(obj, path, **kw)
    return path


SAMPLES = {
    "tensor": lambda: torch.arange(12, dtype=torch.float32).reshape(3, 4),
    "state_dict": lambda: torch.nn.Linear(3, 2).state_dict(),
    "mixed": lambda: {"h": torch.ones(2, dtype=torch.float16), "i": torch.arange(5),
                      "b": torch.tensor([True]), "view": torch.arange(10.0)[2:5], "n": 3, "s": "x"},
}


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_torch_written_zip(tmp_path: Path, sample: str) -> None:
    parsed = _check_zip(_save(tmp_path, "m.pt", SAMPLES[sample]()))
    eocd = parsed.end_of_central_dir
    assert eocd.len_comment == 0
    assert parsed.zip64_end_of_central_dir.num_entries_total == len(parsed.central_dir.entries)
    for entry in parsed.central_dir.entries:
        local = entry.local_file
        assert entry.is_stored and local.is_aligned
        assert (local.dos_time, local.dos_date, local.crc32, local.len_compressed) == (0, 0, 0, 0)
    names = {e.file_name.split("/", 1)[1] for e in parsed.central_dir.entries}
    assert {"data.pkl", "byteorder", ".format_version"} <= names


def test_storage_records_hold_the_tensor_bytes(tmp_path: Path) -> None:
    t = torch.arange(100, dtype=torch.int64) * 3
    parsed = PytorchZip.from_file(str(_save(tmp_path, "t.pt", t)))
    (record,) = [e for e in parsed.central_dir.entries if "/data/" in e.file_name]
    assert record.local_file.body == t.numpy().tobytes()


def test_comment_or_truncation_is_rejected(tmp_path: Path) -> None:
    """The grammar's fixed EOCD position: a trailing comment or a cut file fails the signature check."""
    good = _save(tmp_path, "g.pt", torch.ones(3)).read_bytes()
    with zipfile.ZipFile(tmp_path / "g.pt", "a") as zf:
        zf.comment = b"hello"
    for bad in ((tmp_path / "g.pt").read_bytes(), good[:-1], good[:-30]):
        with pytest.raises((KaitaiStructError, EOFError)):
            PytorchZip.from_bytes(bad).central_dir  # noqa: B018


def _check_legacy(path: Path) -> PytorchLegacy:
    """The five pickles are exactly the ones pickletools finds back to back."""
    data = path.read_bytes()
    parsed = PytorchLegacy.from_file(str(path))
    pos = 0
    for field in ("magic_number", "protocol_version", "sys_info", "object", "storage_keys"):
        ops = list(pickletools.genops(data[pos:]))
        assert [o.code.value for o in getattr(parsed, field).ops] == [ord(op.code) for op, _, _ in ops]
        pos += ops[-1][2] + 1
    assert parsed.storages.ofs_start == pos
    return parsed


def test_torch_written_legacy(tmp_path: Path) -> None:
    """The storages follow the pickles; with the widths torch saved, they hold the tensors' bytes."""
    from kaitaistruct import KaitaiStream

    a = torch.arange(6, dtype=torch.float64)
    b = torch.arange(4, dtype=torch.int16)
    path = _save(tmp_path, "l.pt", {"a": a, "b": b}, _use_new_zipfile_serialization=False)
    parsed = _check_legacy(path)
    by_numel = {6: (8, a.numpy().tobytes()), 4: (2, b.numpy().tobytes())}
    with path.open("rb") as f:
        io = KaitaiStream(f)
        io.seek(parsed.storages.ofs_start)
        found = []
        for _ in range(2):
            numel = io.read_s8le()
            io.seek(io.pos() - 8)
            width, want = by_numel[numel]
            found.append((PytorchLegacy.Storage(width, io).data, want))
        assert io.is_eof()
    assert all(got == want for got, want in found)


def test_bad_legacy_magic_is_rejected(tmp_path: Path) -> None:
    path = _save(tmp_path, "l.pt", torch.ones(2), _use_new_zipfile_serialization=False)
    data = bytearray(path.read_bytes())
    data[5] ^= 0xFF  # inside the LONG1 magic number
    with pytest.raises(KaitaiStructError):
        PytorchLegacy.from_bytes(bytes(data))


def _wild(prefix: str) -> list[Path]:
    if not WILD.is_dir():
        return []
    return sorted(p for p in WILD.glob(prefix + "*") if not p.name.endswith(".json"))


@pytest.mark.skipif(not WILD.is_dir(), reason="../shared/corpus not present")
def test_wild_zip_files() -> None:
    files = _wild("zip_") + _wild("torchscript_")
    assert len(files) >= 5
    for path in files:
        _check_zip(path)


@pytest.mark.skipif(not WILD.is_dir(), reason="../shared/corpus not present")
def test_wild_legacy_files() -> None:
    files = _wild("legacy_")
    assert len(files) >= 10
    for path in files:
        parsed = _check_legacy(path)
        assert parsed.storages.has_storages


@pytest.mark.skipif(not WILD.is_dir(), reason="../shared/corpus not present")
def test_wild_tar_file() -> None:
    (path,) = _wild("tar_")
    parsed = PytorchTar.from_file(str(path))
    members = {m.header.member_name: m for m in parsed.members
               if not m.is_end and m.header.type_flag != ord("x")}
    with tarfile.open(path) as tf:
        assert sorted(members) == sorted(tf.getnames())
        for name, member in members.items():
            assert member.header.len_body == tf.getmember(name).size
        storages_raw = tf.extractfile("storages").read()
        tensors_raw = tf.extractfile("tensors").read()
    storages = members["storages"].body
    # torch's own tar loader reads the same layout: count, then (record pickle, int64 numel, data) each.
    assert storages.count.value == len(storages.storages) == 8
    assert sum(8 + len(s.data) for s in storages.storages) < len(storages_raw)
    assert storages.storage_views.ops[-1].code.name == "stop"
    assert all(s.storage_class == "FloatStorage" and s.element_size == 4 for s in storages.storages)
    tensors = members["tensors"].body
    assert tensors.count.value == len(tensors.tensors) == 8
    assert members["tensors"].body._io.size() == len(tensors_raw)
    assert members["tensors"].body._io.is_eof()
    for t in tensors.tensors:
        numel = 1
        for s in t.sizes:
            numel *= s
        assert t.num_dims in (1, 2) and numel > 0 and list(t.strides)[-1] == 1
