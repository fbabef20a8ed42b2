"""Meta tensors (spec/tensors.md#tensors-meta, spec/canonical.md#canonical-meta): what torch writes reads
as torch loads it; geometries torch's loader refuses are refused too (and the one it silently repairs,
a negative stride, is refused as well)."""

from __future__ import annotations

import io
import struct
import warnings
import zipfile
from typing import Any

import pytest
import torch
from torchfmt import read_bytes
from torchfmt.describe import describe_document
from torchfmt.errors import FormatError
from torchfmt.model import MetaTensor


def save(obj: Any, legacy: bool = False) -> bytes:
    f = io.BytesIO()
    torch.save(obj, f, _use_new_zipfile_serialization=not legacy)
    return f.getvalue()


def torch_load(data: bytes) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.load(io.BytesIO(data), weights_only=True)


def written() -> dict[str, Any]:
    t = torch.empty(2, 3, device="meta")
    return {"plain": t, "again": t, "view": torch.empty(4, 6, device="meta")[1:, ::2].t(),
            "zero_dim": torch.empty((), dtype=torch.int64, device="meta"),
            "empty": torch.empty(0, 5, dtype=torch.float16, device="meta"),
            "grad": torch.empty(3, device="meta", requires_grad=True),
            "param": torch.nn.Linear(3, 4, device="meta").weight,
            "frozen": torch.nn.Parameter(torch.empty(2, device="meta"), requires_grad=False),
            "state": torch.nn.BatchNorm1d(4, device="meta").state_dict()}


def _flat(obj: Any) -> dict[str, Any]:
    out = {k: v for k, v in obj.items() if k != "state"}
    out.update({f"state.{k}": v for k, v in obj["state"].items()})
    return out


@pytest.mark.parametrize("legacy", [False, True])
def test_meta_tensors_read_as_torch_loads_them(legacy: bool) -> None:
    data = save(written(), legacy)
    theirs, ours = _flat(torch_load(data)), _flat(read_bytes(data).objects[0])
    assert list(ours) == list(theirs)
    for key, t in theirs.items():
        m = ours[key]
        assert isinstance(m, MetaTensor) and t.device.type == "meta", key
        assert (m.dtype.name, m.shape, m.stride) == (str(t.dtype)[6:], tuple(t.shape), t.stride()), key
        assert (m.requires_grad, m.parameter) == (t.requires_grad, isinstance(t, torch.nn.Parameter)), key
        assert t.storage_offset() == 0, key  # the file has no offset: torch's loader always makes 0
    assert ours["plain"] is ours["again"]  # the memo's sharing, as torch's


def test_meta_tensor_description_and_sharing() -> None:
    t = torch.empty(2, 3, device="meta")
    doc = describe_document(read_bytes(save([t, t, torch.nn.Parameter(torch.empty(1, device="meta"))])))
    first, again, param = doc["objects"][0]["items"]
    assert first == {"type": "meta_tensor", "dtype": "float32", "shape": [2, 3], "stride": [3, 1],
                     "requires_grad": False, "id": "o0"}
    assert again == {"type": "ref", "id": "o0"}
    assert param["parameter"] is True and param["requires_grad"] is True
    assert doc["storages"] == {}


def test_meta_tensor_with_python_attributes_keeps_them_apart() -> None:
    t = torch.empty(2, device="meta")
    t.tag = "x"
    ours = read_bytes(save(t)).objects[0]
    assert isinstance(ours, MetaTensor) and ours.attrs == {"tag": "x"}
    assert torch_load(save(t)).tag == "x"


# -- hand-made pickles: torch's loader is the judge --------------------------------------------------

def zipped(pickle: bytes) -> bytes:
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickle)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    return f.getvalue()


def meta_pickle(size: bytes, stride: bytes, dtype: bytes = b"float32") -> bytes:
    return (b"\x80\x02ctorch._utils\n_rebuild_meta_tensor_no_storage\n(ctorch\n" + dtype + b"\n" + size
            + stride + b"\x89tR.")


def _int(n: int) -> bytes:
    if 0 <= n < 256:
        return b"K" + bytes([n])
    if -2**31 <= n < 2**31:
        return b"J" + struct.pack("<i", n)
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(raw)]) + raw


def _tuple(*ns: int) -> bytes:
    return b"(" + b"".join(map(_int, ns)) + b"t"


def _code(data: bytes) -> str:
    with pytest.raises(FormatError) as e:
        read_bytes(data)
    return e.value.code


def test_a_geometry_torch_accepts_reads() -> None:
    data = zipped(meta_pickle(_tuple(2**62, 1), _tuple(2**63 - 1, 1)))
    t = torch_load(data)
    ours = read_bytes(data).objects[0]
    assert (ours.shape, ours.stride) == (tuple(t.shape), t.stride())


@pytest.mark.parametrize(("name", "size", "stride", "dtype", "code"), [
    ("lengths differ", (2, 3), (1,), b"float32", "bad-length"),
    ("negative size", (-1,), (1,), b"float32", "bad-length"),
    ("numel overflows", (2**40, 2**40, 0), (1, 1, 1), b"float32", "bad-length"),
    ("quantized dtype", (2, 3), (3, 1), b"qint8", "bad-value"),
])
def test_a_geometry_torch_refuses_is_refused(name: str, size: tuple[int, ...], stride: tuple[int, ...],
                                              dtype: bytes, code: str) -> None:
    data = zipped(meta_pickle(_tuple(*size), _tuple(*stride), dtype))
    with pytest.raises((RuntimeError, NotImplementedError)):
        torch_load(data)
    assert _code(data) == code, name


def test_a_negative_stride_is_refused_though_torch_repairs_it() -> None:
    data = zipped(meta_pickle(_tuple(2, 3), _tuple(-1, 1)))
    assert torch_load(data).stride() == (3, 1)  # torch silently makes it contiguous
    assert _code(data) == "bad-length"
    assert _code(zipped(meta_pickle(_tuple(1), _tuple(2**63)))) == "bad-length"
