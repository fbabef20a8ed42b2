"""The describer's contract rules (spec/canonical.md): sharing, ids, hashes, float forms."""

from __future__ import annotations

import collections
import hashlib
import math

import numpy as np
import pytest
from torchfmt import limits
from torchfmt.describe import describe_document, format_float, sha256_of_array
from torchfmt.dtypes import BY_NAME, to_little_endian
from torchfmt.errors import FormatError
from torchfmt.model import Document, LuaTable, Storage, Tensor

EMPTY = hashlib.sha256(b"").hexdigest()


def _storage(values: list[float], dtype: str = "float32") -> Storage:
    d = BY_NAME[dtype]
    return Storage(d, len(values), data=np.array(values, dtype=d.numpy))


def test_float_forms() -> None:
    assert [format_float(x) for x in (42.0, -0.0, math.inf, -math.inf, math.nan, 0.1)] == [
        "42.0", "-0.0", "inf", "-inf", "nan", "0.1"]
    assert float(format_float(1 / 3)) == 1 / 3


def test_shared_storage_gets_one_id_and_views_hash_logical_elements() -> None:
    s = _storage([0, 1, 2, 3, 4, 5])
    a = Tensor(BY_NAME["float32"], (2, 3), (3, 1), 0, s)
    t = Tensor(BY_NAME["float32"], (3, 2), (1, 3), 0, s)  # the transpose
    desc = describe_document(Document("pt-zip", [[a, t]]))
    items = desc["objects"][0]["items"]
    assert items[0]["storage"] == items[1]["storage"] == "s0"
    assert list(desc["storages"]) == ["s0"]
    expected_t = np.array([0, 3, 1, 4, 2, 5], dtype="<f4").tobytes()
    assert items[1]["sha256"] == hashlib.sha256(expected_t).hexdigest()
    assert desc["storages"]["s0"]["sha256"] == hashlib.sha256(np.arange(6, dtype="<f4").tobytes()).hexdigest()


def test_second_occurrence_is_a_ref_and_tuples_are_always_full() -> None:
    shared: list[int] = [1]
    tup = (2,)
    desc = describe_document(Document("pt-zip", [{"a": shared, "b": shared, "c": tup, "d": tup}]))
    a, b, c, d = (kv[1] for kv in desc["objects"][0]["items"])
    assert a["id"] and b == {"type": "ref", "id": a["id"]}
    assert c == d == {"type": "tuple", "items": [{"type": "int", "value": "2"}]}


def test_cycle_and_table_keys() -> None:
    t = LuaTable()
    t.items.append((t, 1.0))
    desc = describe_document(Document("t7-binary", [t]))
    obj = desc["objects"][0]
    assert obj["items"][0][0] == {"type": "ref", "id": obj["id"]}


def test_ordered_dict_attrs() -> None:
    od: collections.OrderedDict[str, int] = collections.OrderedDict(w=1)
    od._metadata = collections.OrderedDict()  # type: ignore[attr-defined]
    out = describe_document(Document("pt-zip", [od]))["objects"][0]
    assert out["type"] == "ordered_dict" and set(out["attrs"]) == {"_metadata"}


def test_lua_zero_dim_tensor_holds_no_element_but_pytorch_one_does() -> None:
    s = _storage([7.0])
    lua = Tensor(BY_NAME["float32"], (), (), 0, s, lua=True)
    py = Tensor(BY_NAME["float32"], (), (), 0, s)
    desc = describe_document(Document("t7-binary", [lua, py]))
    assert desc["objects"][0]["sha256"] == EMPTY
    assert desc["objects"][1]["sha256"] == hashlib.sha256(np.float32(7).tobytes()).hexdigest()


def test_big_endian_storage_is_swapped_per_unit() -> None:
    raw = np.array([1.5, -2.0], dtype=">c8").view(np.uint8)
    le = to_little_endian(raw, BY_NAME["complex64"])
    assert le.tolist() == [1.5 + 0j, -2.0 + 0j]
    assert sha256_of_array(np.array([3], dtype=">i4")) == hashlib.sha256(b"\x03\0\0\0").hexdigest()


def test_node_budget_is_enforced(monkeypatch: pytest.MonkeyPatch) -> None:
    real = limits.NODE_BUDGET.value
    monkeypatch.setattr(limits, "NODE_BUDGET", limits.Limit("NODE_BUDGET", 10_000, (), "test"))
    leaf: tuple = ()
    for _ in range(30):  # 2**30 leaves if tuples were expanded naively: must stop at the budget
        leaf = (leaf, leaf)
    with pytest.raises(FormatError) as e:
        describe_document(Document("pt-zip", [leaf]))
    assert e.value.code == "limit-exceeded"
    assert real < 2**30  # the real budget, too, is far below the expansion
