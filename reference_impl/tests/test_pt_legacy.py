"""The legacy .pt stream against real torch (spec/pt-legacy.md): files written by ``torch.save(...,
_use_new_zipfile_serialization=False)`` read as ``torch.load`` reads them; storage views, module
persistent ids and the stream's invariants."""

from __future__ import annotations

import collections
import io
import pickle
import struct
from typing import Any

import numpy as np
import pytest
import torch
from test_pt_zip import Pairing, assert_like_torch, rich, save
from torchfmt import read_bytes
from torchfmt.errors import FormatError, Unsupported
from torchfmt.model import OpaqueObject
from torchfmt.pt.legacy import MAGIC_NUMBER, PROTOCOL_VERSION

LEGACY = {"_use_new_zipfile_serialization": False}
#: dtypes torch 2.13 writes to the legacy stream as untyped storages but cannot load back
UNTYPED_ONLY = ("torch.uint16", "torch.uint32", "torch.uint64", "torch.float8_e4m3fn", "torch.float8_e5m2",
                "torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz")


def rich_legacy() -> dict[str, Any]:
    obj = rich()
    obj["dtypes"] = {k: v for k, v in obj["dtypes"].items() if k not in UNTYPED_ONLY}
    return obj


@pytest.mark.parametrize("protocol", [1, 2, 3, 4, 5])
def test_torch_save_legacy_reads_as_torch_loads(protocol: int) -> None:
    doc = assert_like_torch(save(rich_legacy(), pickle_protocol=protocol, **LEGACY), "pt-legacy")
    assert doc.extra["sys_info"]["protocol_version"] == PROTOCOL_VERSION


def test_untyped_storage_dtypes_read_as_written() -> None:
    """torch writes these to the legacy stream but its own loader fails on them; the written tensors
    are the truth."""
    written = {name: torch.tensor([1, 0, 3]).to(getattr(torch, name[6:])) for name in UNTYPED_ONLY}
    doc = read_bytes(save(written, **LEGACY))
    for name, t in written.items():
        ours = doc.objects[0][name]
        assert ours.dtype.name == name[6:]
        assert np.ascontiguousarray(ours.numpy()).tobytes() == t.view(torch.uint8).numpy().tobytes()


# -- hand-assembled streams (torch reads them: they are the truth) ----------------------------------------

class _Storage:
    """Stands for a storage in a pickle: its persistent id is given."""

    def __init__(self, pid: tuple[Any, ...]) -> None:
        self.pid = pid


class _Tensor:
    """Pickles as ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False, {})``."""

    def __init__(self, storage: _Storage, offset: int, size: tuple[int, ...],
                 stride: tuple[int, ...]) -> None:
        self.args = (storage, offset, size, stride, False, collections.OrderedDict())

    def __reduce__(self) -> tuple[Any, ...]:
        return (torch._utils._rebuild_tensor_v2, self.args)


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj: Any) -> Any:
        return obj.pid if isinstance(obj, _Storage) else None


def stream(obj: Any, keys: list[Any], storages: list[bytes], *, counts: list[bytes] | None = None,
           sys_info: dict[str, Any] | None = None, protocol: int = 2) -> bytes:
    """magic, protocol version, sys_info, the object, the key list, then each storage's count and data."""
    info = sys_info or {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
                        "type_sizes": {"short": 2, "int": 4, "long": 4}}
    out = io.BytesIO()
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, info):
        pickle.dump(header, out, protocol=protocol)
    _Pickler(out, protocol=protocol).dump(obj)
    pickle.dump(keys, out, protocol=protocol)
    for i, data in enumerate(storages):
        out.write(counts[i] if counts else struct.pack("<q", len(data) // 4))
        out.write(data)
    return out.getvalue()


DATA = np.arange(10, dtype=np.float32).tobytes()


def test_storage_views_read_as_torch_loads() -> None:
    root = ("storage", torch.FloatStorage, "100", "cpu", 10)
    view_a = _Storage((*root, ("200", 2, 5)))
    view_b = _Storage((*root, ("200", 2, 5)))  # the same view named again
    whole = _Storage((*root, None))
    obj = [_Tensor(view_a, 1, (2, 2), (2, 1)), _Tensor(view_b, 0, (5,), (1,)), _Tensor(whole, 0, (10,), (1,))]
    data = stream(obj, ["100"], [DATA])
    doc = assert_like_torch(data, "pt-legacy")
    a, b, w = doc.objects[0]
    assert a.storage is b.storage and a.storage is not w.storage and a.storage.numel == 5
    assert a.numpy().tolist() == [[3.0, 4.0], [5.0, 6.0]]


def test_storage_view_outside_its_root() -> None:
    view = _Storage(("storage", torch.FloatStorage, "100", "cpu", 10, ("200", 8, 5)))
    with pytest.raises(FormatError) as e:
        read_bytes(stream([_Tensor(view, 0, (5,), (1,))], ["100"], [DATA]))
    assert e.value.code == "out-of-bounds"


def test_cuda_locations_and_4_argument_rebuild() -> None:
    class V1(_Tensor):
        def __reduce__(self) -> tuple[Any, ...]:
            return (torch._utils._rebuild_tensor, self.args[:4])

    s = _Storage(("storage", torch.cuda.FloatStorage, "94318", "cuda:0", 10, None))
    doc = read_bytes(stream({"w": V1(s, 0, (2, 5), (5, 1))}, ["94318"], [DATA]))
    w = doc.objects[0]["w"]
    assert (w.device, w.storage.device, w.requires_grad) == ("cuda:0", "cuda:0", False)
    theirs = torch.load(io.BytesIO(stream({"w": V1(s, 0, (2, 5), (5, 1))}, ["94318"], [DATA])),
                        map_location="cpu", weights_only=True)
    Pairing().check(theirs, doc.objects[0].__class__({"w": w}))


class Net:
    def __init__(self) -> None:
        self.weight = _Tensor(_Storage(("storage", torch.FloatStorage, "7", "cpu", 10, None)), 0, (10,), (1,))


class _ModulePickler(_Pickler):
    """torch 0.1's legacy writer: a module class is named once by a ('module', ...) persistent id."""

    named = False

    def persistent_id(self, obj: Any) -> Any:
        if obj is Net and not self.named:
            self.named = True
            return ("module", Net, "net.py", "class Net: ...")
        return super().persistent_id(obj)


def test_module_persistent_ids_strict_and_inert() -> None:
    out = io.BytesIO()
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, {"protocol_version": 1001, "little_endian": True,
                                                    "type_sizes": {"short": 2, "int": 4, "long": 8}}):
        pickle.dump(header, out, protocol=2)
    _ModulePickler(out, protocol=2).dump(Net())
    pickle.dump(["7"], out, protocol=2)
    out.write(struct.pack("<q", 10) + DATA)
    with pytest.raises(FormatError) as e:
        read_bytes(out.getvalue())
    assert e.value.code == "unsafe-global"
    net = read_bytes(out.getvalue(), inert=True).objects[0]
    assert isinstance(net, OpaqueObject) and net.class_name.endswith("Net") and net.args == []
    assert net.state["weight"].numpy().tolist() == list(range(10))


def _one(**kw: Any) -> bytes:
    s = _Storage(("storage", torch.FloatStorage, "1", "cpu", 10, None))
    return stream(_Tensor(s, 0, (10,), (1,)), kw.pop("keys", ["1"]), kw.pop("storages", [DATA]), **kw)


@pytest.mark.parametrize("kw, expected", [
    ({"keys": ["2"]}, "bad-reference"),  # a key the pickle never named
    ({"keys": []}, "bad-reference"),  # a storage the pickle named without data
    ({"keys": ["1", "1"], "storages": [DATA, DATA]}, "bad-reference"),
    ({"counts": [struct.pack("<q", 9)]}, "bad-value"),  # count disagrees with the persistent id
    ({"storages": [DATA[:20]], "counts": [struct.pack("<q", 10)]}, "truncated"),
    ({"storages": [DATA + b"x"]}, "bad-container"),  # bytes after the last storage
    ({"sys_info": {"protocol_version": 1000, "little_endian": True, "type_sizes": {}}}, "bad-value"),
    ({"sys_info": {"protocol_version": 1001, "little_endian": 1, "type_sizes": {}}}, "bad-value"),
])
def test_stream_invariants(kw: dict[str, Any], expected: str) -> None:
    with pytest.raises(FormatError) as e:
        read_bytes(_one(**kw))
    assert e.value.code == expected


def test_unusual_type_sizes_are_declined() -> None:
    info = {"protocol_version": 1001, "little_endian": True, "type_sizes": {"short": 2, "int": 8, "long": 8}}
    with pytest.raises(Unsupported):
        read_bytes(_one(sys_info=info))


def test_big_endian_writers_count_in_native_order() -> None:
    info = {"protocol_version": 1001, "little_endian": False, "type_sizes": {"short": 2, "int": 4, "long": 8}}
    doc = read_bytes(_one(sys_info=info, counts=[struct.pack(">q", 10)]))
    assert doc.objects[0].numpy().tolist() == list(range(10))  # elements are little-endian regardless
    with pytest.raises(FormatError) as e:  # a little-endian writer's count is little-endian only
        read_bytes(_one(counts=[struct.pack(">q", 10)]))
    assert e.value.code == "bad-value"


def test_protocol_0_header_and_old_magic_form() -> None:
    data = _one(protocol=1)  # no PROTO opcode: the magic number is a text LONG
    assert data[:1] == b"L"
    assert read_bytes(data).objects[0].numpy().tolist() == list(range(10))


def test_expanded_views_are_limited() -> None:
    s = _Storage(("storage", torch.FloatStorage, "1", "cpu", 10, None))
    ok = read_bytes(stream(_Tensor(s, 3, (1000, 1000), (0, 0)), ["1"], [DATA])).objects[0]
    assert ok.numpy().shape == (1000, 1000) and float(ok.numpy()[999, 999]) == 3.0
    with pytest.raises(FormatError) as e:
        read_bytes(stream(_Tensor(s, 0, (2**31, 2**31), (0, 0)), ["1"], [DATA]))
    assert e.value.code == "limit-exceeded"
