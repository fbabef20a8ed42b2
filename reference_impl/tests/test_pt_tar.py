"""The tar .pt format of torch 0.1.x (spec/pt-tar.md).  Archives are assembled here member by member as
torch 0.1's writer laid them out, and torch 2.13's own tar loader (``torch.load(weights_only=False)`` on
these test-made files) is the truth they are compared with.  The container's invariants are checked on
hand-broken archives."""

from __future__ import annotations

import io
import pickle
import struct
import tarfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from test_pt_zip import Pairing
from torchfmt import read_bytes
from torchfmt.errors import FormatError
from torchfmt.model import OpaqueObject

SYS_INFO = {"protocol_version": 1000, "little_endian": True, "type_sizes": {"short": 2, "int": 4, "long": 4}}


class Ref:
    """An object the pickle names by persistent id (a tensor or storage key, or a module 3-tuple)."""

    def __init__(self, pid: Any) -> None:
        self.pid = pid


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        return obj.pid if isinstance(obj, Ref) else None


def _pickles(*values: Any) -> bytes:
    return b"".join(pickle.dumps(v, protocol=2) for v in values)


def tensor_record(key: int, storage: int, size: tuple[int, ...], stride: tuple[int, ...], offset: int,
                  garbage: bytes = b"\0\0\0\0") -> bytes:
    n = len(size)
    return (_pickles((key, storage, torch.FloatTensor)) + struct.pack("<i", n) + garbage
            + struct.pack(f"<{n}q", *size) + struct.pack(f"<{n}q", *stride) + struct.pack("<q", offset))


def archive(members: dict[str, bytes], order: tuple[str, ...] = ("sys_info", "pickle", "tensors", "storages"),
            ) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in order:
            info = tarfile.TarInfo(name)
            info.size = len(members[name])
            info.mtime = 1485049682
            tar.addfile(info, io.BytesIO(members[name]))
    return out.getvalue()


DATA = np.arange(12, dtype=np.float32).tobytes()


def members(obj: Any | None = None, garbage: bytes = b"\x01\0\0\x80") -> dict[str, bytes]:
    """Two storages (one with a view), three tensors, and an object naming them."""
    storages = (_pickles(2) + _pickles((1, "cpu", torch.FloatStorage)) + struct.pack("<q", 12) + DATA
                + _pickles((2, "cpu", torch.DoubleStorage)) + struct.pack("<q", 1) + struct.pack("<d", 2.5)
                + _pickles([(3, 1, 4, 6)]))  # storage view 3: elements 4-9 of storage 1
    tensors = (_pickles(3) + tensor_record(10, 1, (3, 4), (4, 1), 0, garbage)
               + tensor_record(11, 3, (2, 2), (1, 2), 1) + tensor_record(12, 1, (), (), 5))
    buf = io.BytesIO()
    _Pickler(buf, protocol=2).dump(obj if obj is not None else
                                   {"w": Ref("10"), "t": Ref("11"), "s": Ref("2"), "again": Ref("10"),
                                    "scalar": Ref("12"), "view": Ref("3")})
    return {"sys_info": _pickles(SYS_INFO), "pickle": buf.getvalue(), "tensors": tensors,
            "storages": storages}


def test_tar_archives_read_as_torch_loads(tmp_path: Path) -> None:
    path = tmp_path / "old.pt"
    path.write_bytes(archive(members()))
    theirs = torch.load(path, weights_only=False)
    doc = read_bytes(path.read_bytes())
    assert doc.format == "pt-tar" and doc.extra["sys_info"] == SYS_INFO
    Pairing().check(theirs, doc.objects[0])
    obj = doc.objects[0]
    assert obj["w"] is obj["again"] and obj["t"].numpy().tolist() == [[5.0, 7.0], [6.0, 8.0]]
    assert obj["w"].storage is not obj["t"].storage and obj["view"] is obj["t"].storage


def test_member_order_is_free(tmp_path: Path) -> None:
    data = archive(members(), order=("storages", "tensors", "pickle", "sys_info"))
    assert read_bytes(data).objects[0]["s"].array().tolist() == [2.5]


class Model:
    pass


class _ModulePickler(_Pickler):
    """torch 0.1: a module class is named once by ``(class, source_file, source)``."""

    named = False

    def persistent_id(self, obj: Any) -> Any:
        if obj is Model and not self.named:
            self.named = True
            return (Model, "model.py", "class Model: ...")
        return super().persistent_id(obj)


def test_pickled_modules_are_unsafe_in_strict_mode_and_opaque_in_inert_mode() -> None:
    m = Model()
    m.__dict__.update(weight=Ref("10"), training=True)
    buf = io.BytesIO()
    _ModulePickler(buf, protocol=2).dump(m)
    data = archive({**members(), "pickle": buf.getvalue()})
    with pytest.raises(FormatError) as e:
        read_bytes(data)
    assert e.value.code == "unsafe-global"
    obj = read_bytes(data, inert=True).objects[0]
    assert isinstance(obj, OpaqueObject) and obj.class_name.endswith("Model")
    assert obj.state["weight"].shape == (3, 4) and obj.state["training"] is True


def code(data: bytes) -> str:
    with pytest.raises(FormatError) as e:
        read_bytes(data)
    return e.value.code


def test_member_invariants() -> None:
    good = members()
    assert code(archive({k: v for k, v in good.items()}, order=("sys_info", "pickle", "tensors"))) \
        == "bad-container"  # no storages member
    data = archive(good)
    header = data.index(b"pickle\0")  # a later member's header
    assert header >= 512
    assert code(data[:header + 100] + b"X" + data[header + 101:]) == "bad-container"  # checksum
    # the first header decides the format: with a wrong checksum it is no tar file (torch's tarfile
    # refuses it too, and its loader goes on to a legacy pickle), so the bytes are no checkpoint
    # (spec/canonical.md#canonical-detect)
    first = data.index(b"sys_info\0")
    assert first < 512
    assert code(data[:first + 100] + b"X" + data[first + 101:]) == "unknown-format"
    assert code(data + b"\x01") == "bad-container"  # not zeros after the end
    assert code(data[:1024]) == "truncated"
    dup = io.BytesIO()
    with tarfile.open(fileobj=dup, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in ("sys_info", "pickle", "tensors", "storages", "pickle"):
            info = tarfile.TarInfo(name)
            info.size = len(good[name])
            tar.addfile(info, io.BytesIO(good[name]))
    assert code(dup.getvalue()) == "bad-container"
    link = io.BytesIO()
    with tarfile.open(fileobj=link, mode="w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("evil")
        info.type, info.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tar.addfile(info)
    assert code(link.getvalue()) == "bad-container"


@pytest.mark.parametrize("change, expected", [
    ({"sys_info": _pickles({**SYS_INFO, "protocol_version": 1001})}, "bad-value"),
    ({"tensors": _pickles(1) + tensor_record(10, 9, (2,), (1,), 0)}, "bad-reference"),  # unknown storage
    ({"tensors": _pickles(1) + tensor_record(10, 1, (4, 4), (4, 1), 0)}, "out-of-bounds"),
    ({"tensors": _pickles(1) + tensor_record(10, 1, (2,), (1,), 0) + b"x"}, "bad-container"),
    ({"tensors": _pickles(2) + tensor_record(10, 1, (2,), (1,), 0)}, "truncated"),  # one record missing
])
def test_record_invariants(change: dict[str, bytes], expected: str) -> None:
    assert code(archive({**members({"w": Ref("10")}), **change})) == expected


def test_a_persistent_id_that_names_nothing() -> None:
    assert code(archive(members({"w": Ref("99")}))) == "bad-reference"


def test_storage_counts_are_little_endian_unless_a_big_endian_writer_says_so() -> None:
    """spec/pt-tar.md#pt-tar-storages: torch reads the counts little-endian whatever sys_info says; a
    0.1 writer on a big-endian host (sys_info little_endian False) wrote them big-endian, which is read
    when the little-endian count runs past the member."""
    good = members({"w": Ref("10"), "s": Ref("2")})
    flag_false = {**good, "sys_info": _pickles({**SYS_INFO, "little_endian": False})}
    swapped = flag_false["storages"].replace(struct.pack("<q", 12), struct.pack(">q", 12), 1)
    swapped = swapped.replace(struct.pack("<q", 1) + struct.pack("<d", 2.5), struct.pack(">q", 1)
                              + struct.pack("<d", 2.5), 1)
    expected = read_bytes(archive(good)).objects[0]
    for variant in (flag_false, {**flag_false, "storages": swapped}):
        obj = read_bytes(archive(variant)).objects[0]
        assert obj["w"].numpy().tolist() == expected["w"].numpy().tolist()
        assert obj["s"].array().tolist() == [2.5]
    assert code(archive({**good, "storages": swapped})) == "truncated"  # big-endian counts need the flag
