"""The zip .pt reader against real torch (spec/pt-zip.md): files written by ``torch.save`` read as
``torch.load`` reads them, and the container's invariants hold (hand-broken archives are refused).

:func:`assert_like_torch` walks torch's loaded object and ours together; the legacy, tar and TorchScript
tests use it too.
"""

from __future__ import annotations

import collections
import io
import math
import mmap
import os
import struct
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torchfmt
from torchfmt import open_document, read_bytes, windows
from torchfmt.errors import FormatError
from torchfmt.model import Global, OpaqueObject, QuantizedTensor, SparseTensor, Storage, Tensor
from torchfmt.windows import Record

warnings.filterwarnings("ignore", category=UserWarning)


# -- comparing with what torch loads ------------------------------------------------------------------

def torch_bytes(t: torch.Tensor) -> bytes:
    """A dense tensor's logical elements, row-major, as torch presents them (conj/neg applied)."""
    if t.is_quantized:
        t = t.int_repr()
    t = t.detach().resolve_conj().resolve_neg().contiguous()
    return t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""


class Pairing:
    """Walks torch's value and ours together; storages must pair one-to-one."""

    def __init__(self) -> None:
        self.storages: dict[int, int] = {}
        self.objects: dict[int, int] = {}

    def storage(self, theirs: Any, ours: Storage) -> None:
        key = theirs.untyped_storage()._cdata if isinstance(theirs, torch.Tensor) else theirs._cdata
        assert self.storages.setdefault(key, id(ours)) == id(ours), "storage sharing differs"
        assert list(self.storages.values()).count(id(ours)) == 1, "storage sharing differs"

    def check(self, theirs: Any, ours: Any) -> None:
        if isinstance(theirs, (list, dict, set, torch.Tensor)):
            assert self.objects.setdefault(id(theirs), id(ours)) == id(ours), "object sharing differs"
        if isinstance(theirs, torch.Tensor) and theirs.layout != torch.strided:
            assert isinstance(ours, SparseTensor) and ours.layout == str(theirs.layout)[6:]
            assert ours.shape == tuple(theirs.shape) and ours.dtype.name == str(theirs.dtype)[6:]
            if ours.layout == "sparse_coo":
                self.tensor(theirs._indices(), ours.indices)  # accessors make new objects: no identity
                self.tensor(theirs._values(), ours.values)
            return
        if isinstance(theirs, torch.Tensor):
            self.tensor(theirs, ours)
        elif isinstance(theirs, torch.dtype):
            assert ours == Global("torch", str(theirs)[6:])
        elif isinstance(theirs, torch.layout):
            assert ours == Global("torch", str(theirs)[6:])
        elif isinstance(theirs, torch.Size):
            assert isinstance(ours, OpaqueObject)
            assert (ours.class_name, ours.args) == ("torch.Size", [tuple(theirs)])
        elif isinstance(theirs, torch.device):
            assert isinstance(ours, OpaqueObject) and ours.class_name == "torch.device"
            assert torch.device(*ours.args) == theirs
        elif isinstance(theirs, dict):
            assert type(ours) is type(theirs) and list(ours) == list(theirs)
            for k in theirs:
                self.check(theirs[k], ours[k])
            if isinstance(theirs, collections.OrderedDict):
                assert set(vars(ours)) == set(vars(theirs))
                for k in vars(theirs):
                    self.check(vars(theirs)[k], vars(ours)[k])
        elif isinstance(theirs, (list, tuple)):
            assert type(ours) is type(theirs) and len(ours) == len(theirs)
            for a, b in zip(theirs, ours, strict=True):
                self.check(a, b)
        elif isinstance(theirs, (torch.storage.TypedStorage, torch.UntypedStorage)):
            assert isinstance(ours, Storage)
            dtype = theirs.dtype if isinstance(theirs, torch.storage.TypedStorage) else torch.uint8
            assert ours.dtype.name == str(dtype)[6:] and ours.numel * ours.dtype.itemsize == theirs.nbytes()
            assert ours.array().tobytes() == bytes(theirs.untyped() if hasattr(theirs, "untyped") else theirs)
            self.storage(theirs.untyped() if hasattr(theirs, "untyped") else theirs, ours)
        elif isinstance(theirs, complex):
            assert isinstance(ours, OpaqueObject) and ours.class_name == "builtins.complex"
            assert complex(*ours.args) == theirs
        elif isinstance(theirs, float):
            assert isinstance(ours, float) and (ours == theirs or math.isnan(ours) and math.isnan(theirs))
        else:
            assert type(ours) is type(theirs) and ours == theirs, (theirs, ours)

    def tensor(self, t: torch.Tensor, ours: Any) -> None:
        assert isinstance(ours, Tensor), f"{type(ours).__name__} for a tensor"
        assert ours.dtype.name == str(t.dtype)[6:]
        assert (ours.shape, ours.stride) == (tuple(t.shape), t.stride())
        assert ours.storage_offset == t.storage_offset()
        assert ours.requires_grad == t.requires_grad
        assert ours.parameter == isinstance(t, torch.nn.Parameter)
        assert (ours.conj, ours.neg) == (t.is_conj(), t.is_neg())
        assert np.ascontiguousarray(ours.numpy()).tobytes() == torch_bytes(t)
        assert ours.storage is not None
        assert ours.storage.numel * ours.dtype.itemsize == t.untyped_storage().nbytes()
        self.storage(t, ours.storage)
        if t.is_quantized:
            assert isinstance(ours, QuantizedTensor) and ours.qscheme == str(t.qscheme())[6:]
            if ours.scales is None:
                assert (ours.scale, ours.zero_point) == (t.q_scale(), t.q_zero_point())
            else:
                self.tensor(t.q_per_channel_scales(), ours.scales)
                self.tensor(t.q_per_channel_zero_points(), ours.zero_points)
                assert ours.axis == t.q_per_channel_axis()
        for k, v in vars(t).items():
            self.check(v, ours.attrs[k])


def assert_like_torch(path_or_bytes: Path | bytes, format: str | None = None) -> Any:
    """Read with torchfmt and with torch.load(weights_only=False) (our own test files only), and compare."""
    data = path_or_bytes.read_bytes() if isinstance(path_or_bytes, Path) else path_or_bytes
    doc = read_bytes(data)
    theirs = torch.load(io.BytesIO(data), weights_only=False, map_location="cpu")
    if format is not None:
        assert doc.format == format
    Pairing().check(theirs, doc.objects[0])
    return doc


def save(obj: Any, **kw: Any) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, **kw)
    return buf.getvalue()


class Tagged(torch.Tensor):
    pass


def rich() -> dict[str, Any]:
    """One object exercising every form torch.save writes for plain values and tensors."""
    torch.manual_seed(0)
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2), torch.nn.Embedding(5, 3))
    p = torch.nn.Parameter(torch.randn(3))
    p.tag = "kept"  # Parameter with Python state: _rebuild_parameter_with_state
    attributed = torch.ones(2)
    attributed.note = {"k": 1}  # tensor with Python state: _rebuild_from_type_v2
    dtypes = {str(d): torch.tensor([1, 0, 3], dtype=torch.int64).to(d) for d in (
        torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16,
        torch.uint32, torch.uint64, torch.float16, torch.bfloat16, torch.float32, torch.float64,
        torch.complex64, torch.complex128, torch.float8_e4m3fn, torch.float8_e5m2,
        torch.float8_e4m3fnuz, torch.float8_e5m2fnuz)}
    return {
        "state": model.state_dict(),
        "views": [base, base[1:, 2:], base.t(), base[:, 1], base[0].expand(3, 6), base.reshape(-1)[5:]],
        "zero_d": torch.tensor(2.5), "empty": torch.empty(0, 3), "big": torch.arange(100000) * 7,
        "dtypes": dtypes,
        "conj": torch.tensor([1 + 2j, 3 - 4j]).conj(), "neg": torch.tensor([1.0 + 1j])._neg_view(),
        "param": torch.nn.Parameter(torch.ones(2, 2), requires_grad=False), "param_state": p,
        "attributed": attributed, "grad": torch.ones(3, requires_grad=True),
        "qt": torch.quantize_per_tensor(torch.rand(2, 3), 0.05, 3, torch.quint8),
        "qc": torch.quantize_per_channel(torch.randn(3, 4), torch.tensor([0.1, 0.2, 0.3]),
                                         torch.tensor([0, 1, 2]), 0, torch.qint8),
        "q4": torch.quantize_per_tensor(torch.rand(7), 0.3, 1, torch.quint4x2),
        "q2": torch.quantize_per_tensor(torch.rand(2, 5), 0.5, 0, torch.quint2x4),
        "qf": torch.quantize_per_channel(torch.randn(2, 3), torch.tensor([0.1, 0.2]),
                                         torch.tensor([0.5, 1.0]), 0, torch.quint8),  # float_qparams
        "coo": torch.sparse_coo_tensor([[0, 1], [2, 0]], [3.0, 4.0], (2, 3)),
        "csr": torch.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_csr(),
        "meta": [torch.Size([2, 3]), torch.device("cuda", 1), torch.device("cpu"), torch.float16,
                 torch.sparse_coo],
        "py": [None, True, 2**70, -1.5, math.inf, "text ü", b"\x00\xff", bytearray(b"ab"), (1, (2,)),
               {1: "a", (2, 3): None}, collections.OrderedDict(b=1, a=2), 1 + 2j],
    }


@pytest.mark.parametrize("protocol", [1, 2, 3, 4, 5])
def test_torch_save_reads_as_torch_loads(protocol: int) -> None:
    doc = assert_like_torch(save(rich(), pickle_protocol=protocol), "pt-zip")
    assert doc.extra["version"] >= 1 and doc.extra["byteorder"] == "little"


def test_shared_storages_and_sets() -> None:
    t = torch.arange(6.0)
    doc = assert_like_torch(save({"a": t, "b": t[2:], "s": {1, 2}, "f": frozenset({3})}))
    obj = doc.objects[0]
    assert obj["a"].storage is obj["b"].storage
    assert obj["s"] == {1, 2} and obj["f"] == frozenset({3})


def test_untyped_storage_v3_retypes_once() -> None:
    t = torch.tensor([1, 2, 3], dtype=torch.uint16)
    doc = assert_like_torch(save([t, t[1:], t.untyped_storage()[:0]]))
    a, b, _ = doc.objects[0]
    assert a.storage is b.storage and (a.storage.dtype.name, a.storage.numel) == ("uint16", 3)


def test_storages_are_records_mapped_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the address space has no room for the whole file, a storage is its record, mapped (alone) when
    its bytes are asked for and forgotten on release, so that a file larger than the address space is read
    record by record; a small record is read instead (a map would cost more than its pages)."""
    monkeypatch.setattr(windows, "whole_map_fits", lambda size: False)
    n = 100_000
    path = tmp_path / "m.pt"
    torch.save({"w": torch.arange(float(n)), "v": torch.ones(3)}, path)
    doc = open_document(path)
    storage = doc.objects[0]["w"].storage
    raw = path.read_bytes()
    offset = raw.index(np.arange(float(n), dtype=np.float32).tobytes())
    assert offset % 64 == 0  # torch aligns records
    assert isinstance(storage.buffer, Record)
    assert (storage.buffer.offset, len(storage.buffer)) == (offset, 4 * n)
    assert 4 * n > Record.READ_BELOW
    view = storage.buffer.view()
    assert isinstance(view.obj, mmap.mmap) and len(view.obj) < len(raw)  # only this record's pages
    first = storage.array()
    assert np.shares_memory(first, storage.array())  # zero-copy, kept until released
    assert first.tolist() == list(range(n))
    storage.release()
    assert storage.data is None and storage.array().tolist() == list(range(n))
    small = doc.objects[0]["v"].storage
    assert isinstance(small.buffer, Record) and len(small.buffer) <= Record.READ_BELOW
    assert isinstance(small.buffer.view().obj, bytes) and small.array().tolist() == [1.0, 1.0, 1.0]


def test_records_share_one_map_of_the_file(tmp_path: Path) -> None:
    """With room in the address space, every large record is a view of one map of the whole file: a model
    of thousands of tensors, all touched at once, holds one file descriptor, not one per map."""
    n, count = 20_000, 1_500  # 80 KB records, above Record.READ_BELOW
    path = tmp_path / "many.pt"
    torch.save({f"w{i}": torch.full((n,), float(i)) for i in range(count)}, path)
    arrays = torchfmt.load_file(path)
    assert _descriptors_of(path) <= 2  # the open file and the map's own
    assert all(a[0] == i and a[-1] == i for i, a in enumerate(arrays.values()))
    views = [t.storage.buffer.view() for t in torchfmt.load(path).values()]
    assert {id(v.obj) for v in views} == {id(views[0].obj)} and isinstance(views[0].obj, mmap.mmap)
    assert len(views[0].obj) == path.stat().st_size


def _descriptors_of(path: Path) -> int:
    """How many of this process's open file descriptors are ``path``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == str(path)
        except OSError:  # closed meanwhile
            pass
    return count


def test_any_root_name(tmp_path: Path) -> None:
    path = tmp_path / "my model v2.weights"
    torch.save({"w": torch.ones(1)}, path)
    doc = assert_like_torch(path)
    assert doc.extra["root"] == "my model v2"  # torch names the root after the file's stem


def test_crc_is_not_checked_like_torch() -> None:
    data = bytearray(save({"w": torch.arange(4.0)}))
    i = bytes(data).index(np.arange(4.0, dtype=np.float32).tobytes())
    data[i + 1] ^= 0xFF
    assert_like_torch(bytes(data))


# -- byte order -----------------------------------------------------------------------------------

def _records(data: bytes) -> dict[str, bytes]:
    z = zipfile.ZipFile(io.BytesIO(data))
    return {i.filename: z.read(i) for i in z.infolist()}


def _rezip(records: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as z:
        for name, data in records.items():
            z.writestr(name, data)
    return out.getvalue()


def test_big_endian_archives_are_swapped_per_element_like_torch() -> None:
    obj = {d: torch.tensor([1.5, -2.0, 3.25]).to(getattr(torch, d)) for d in
           ("int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
            "uint8", "bool")}
    records = _records(save(obj))
    doc = read_bytes(save(obj))
    root = doc.extra["root"]
    for t in doc.objects[0].values():
        key = f"{root}/data/{t.storage.key}"
        width = t.dtype.swap_unit
        raw = np.frombuffer(records[key], dtype=np.uint8).reshape(-1, width)[:, ::-1]
        records[key] = raw.tobytes()
    records[f"{root}/byteorder"] = b"big"
    big = _rezip(records)
    doc = assert_like_torch(big)
    assert doc.extra["byteorder"] == "big" and doc.objects[0]["float32"].storage.byte_order == "big"


# -- container invariants -------------------------------------------------------------------------

def _small() -> dict[str, bytes]:
    return _records(save({"w": torch.arange(6.0).reshape(2, 3)}))


def code(data: bytes) -> str:
    with pytest.raises(FormatError) as e:
        read_bytes(data)
    return e.value.code


def _edit(**changes: bytes | None) -> bytes:
    records = _small()
    root = next(iter(records)).split("/")[0]
    for name, value in changes.items():
        name = f"{root}/{name.replace('__', '/').replace('_dot_', '.')}"
        if value is None:
            records.pop(name)
        else:
            records[name] = value
    return _rezip(records)


@pytest.mark.parametrize("changes, expected", [
    ({"version": None}, "bad-container"),
    ({"version": b"11\n"}, "bad-magic"),
    ({"version": b"0\n"}, "bad-magic"),
    ({"version": b"three"}, "bad-value"),
    ({"byteorder": b"middle"}, "bad-value"),
    ({"data_dot_pkl": None}, "bad-container"),
    ({"data__0": None}, "bad-reference"),
    ({"data__0": b"\x00" * 8}, "bad-value"),
    ({"data__0": b"\x00" * 28}, "bad-value"),
    ({"_dot_storage_alignment": b"0"}, "bad-value"),
])
def test_metadata_records(changes: dict[str, bytes | None], expected: str) -> None:
    assert code(_edit(**changes)) == expected


def test_missing_optional_records_are_defaults() -> None:
    doc = read_bytes(_edit(byteorder=None, _dot_format_version=None, _dot_storage_alignment=None))
    assert doc.extra["byteorder"] == "little"
    assert doc.objects[0]["w"].numpy().tolist() == [[0, 1, 2], [3, 4, 5]]


def test_names_are_keys_under_one_root() -> None:
    records = _small()
    root = next(iter(records)).split("/")[0]
    for bad in (f"{root}/../evil", f"/{root}/x", f"{root}//x", f"{root}/./x", "other/x", f"{root}\\x", "top"):
        assert code(_rezip({**records, bad: b"1"})) == "bad-container", bad
    dup = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(dup, "w") as z:
        warnings.simplefilter("ignore")
        for name, data in [*records.items(), (f"{root}/version", b"3\n")]:
            z.writestr(name, data)
    assert code(dup.getvalue()) == "bad-container"


def test_compressed_records_are_refused_only_when_read() -> None:
    records = _small()
    root = next(iter(records)).split("/")[0]
    assert code(_rezip(records, zipfile.ZIP_DEFLATED)) == "bad-container"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in records.items():
            z.writestr(name, data)
        z.writestr(f"{root}/notes.txt", b"not read" * 100, compress_type=zipfile.ZIP_DEFLATED)
    assert read_bytes(out.getvalue()).format == "pt-zip"


def _patch(data: bytes, offset: int, new: bytes) -> bytes:
    return data[:offset] + new + data[offset + len(new):]


def test_header_consistency() -> None:
    data = save({"w": torch.ones(3)})
    cd = data.index(b"PK\x01\x02")
    local = data.index(b"PK\x03\x04", 4)  # the second member's local header
    name_len = struct.unpack_from("<H", data, local + 26)[0]
    assert code(_patch(data, local + 30 + name_len - 1, b"Z")) == "bad-container"  # local name differs
    assert code(_patch(data, cd + 8, b"\x09")) == "bad-container"  # encrypted flag in the central entry
    assert code(_patch(data, local, b"PK\x03\x05")) == "bad-container"  # no local header there
    assert code(data + b"junk") == "bad-container"  # bytes after the end records
    eocd = data.rindex(b"PK\x05\x06")
    inner = data[:eocd + 20] + struct.pack("<H", len(data)) + data  # the comment holds the archive again
    assert code(inner) == "ambiguous"
    assert code(data[:-30]) in ("truncated", "bad-container")
    z64 = data.rindex(b"PK\x06\x06")
    entries = struct.unpack_from("<Q", data, z64 + 32)[0]
    assert code(_patch(data, z64 + 32, struct.pack("<Q", entries + 1))) == "bad-container"


def _mini_zip(members: list[tuple[str, bytes]], extra_central: list[tuple[str, int, int]]) -> bytes:
    """A stored zip laid out by hand; ``extra_central`` adds (name, header offset, size) entries."""
    out, central = b"", []
    for name, data in members:
        central.append((name, len(out), len(data)))
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, len(data), len(data),
                           len(name), 0) + name.encode() + data
    cd = b""
    for name, header, size in central + extra_central:
        cd += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, size, size, len(name), 0, 0,
                          0, 0, 0, header) + name.encode()
    n = len(central) + len(extra_central)
    return out + cd + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, n, n, len(cd), len(out), 0)


def test_overlapping_members_are_refused() -> None:
    records = _small()
    names = list(records)
    inner = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 1, 1, len("r/x"), 0) + b"r/x" + b"1"
    base = [(n.replace(n.split("/")[0], "r", 1), d) for n, d in records.items()]
    good = _mini_zip(base, [])
    assert read_bytes(good).format == "pt-zip" and len(names) == len(base)
    # a member whose data holds another member's local header, and a central entry pointing into it
    hidden = _mini_zip([*base, ("r/hide", inner)], [])
    offset = hidden.index(inner)
    assert code(_mini_zip([*base, ("r/hide", inner)], [("r/x", offset, 1)])) == "bad-container"
