"""Hostile state_dicts for the tensor runs (torchfmt/fast/pickle_run.py): memo keys PUT between runs
over the keys a layout GETs, storage keys named twice, duplicate dict keys.  Each file is written opcode by
opcode as torch.save lays out a state_dict, then changed where a hostile writer would; it must read the
same with runs, with the single-entry fast path alone and with neither, and as torch 2.13 loads it
(``torch.load(weights_only=True)``, conformance/generators/torch_describe.py).
"""

from __future__ import annotations

import io
import pickle
import struct
import zipfile
from pathlib import Path
from typing import Any

import pytest
from test_tensor_entry import describe_bytes, three_ways
from torchfmt.fast import pickle_run

from conformance.harness.compare import compare

ROOT = Path(__file__).resolve().parents[2]

try:
    from conformance.generators import torch_describe as td
except ImportError:  # the torch comparison needs torch 2.13 (CI installs it)
    td = None

needs_torch = pytest.mark.skipif(td is None, reason="torch is not installed")

#: Storage types by dtype, with the element size of each.
STYPES = {"float32": ("FloatStorage", 4), "float64": ("DoubleStorage", 8), "int64": ("LongStorage", 8),
          "float16": ("HalfStorage", 2)}


class StateDict:
    """A protocol-2 state_dict pickle written as torch.save writes one (an OrderedDict, each entry's
    ``_rebuild_tensor_v2`` call with its strings and globals PUT once and fetched by GET after), with
    hooks for a hostile writer: a global PUT at a memo key chosen, and storage keys chosen."""

    def __init__(self, long_keys: bool = False) -> None:
        self.long_keys = long_keys  # every memo key LONG_BINPUT/LONG_BINGET: layouts stay past key 255
        self.out = bytearray(b"\x80\x02")
        self.memo: dict[Any, int] = {}
        self.next_key = 0
        self.records: dict[str, bytes] = {}
        self.glob("collections", "OrderedDict")
        self.out += b")R"
        self.put()
        self.out += b"("

    def put(self, name: Any = None, key: int | None = None) -> None:
        if key is None:
            key, self.next_key = self.next_key, self.next_key + 1
        self.out += b"q" + bytes([key]) if key < 256 and not self.long_keys else b"r" + struct.pack("<I", key)
        if name is not None:
            self.memo[name] = key

    def get(self, name: Any) -> bool:
        if name not in self.memo:
            return False
        key = self.memo[name]
        self.out += b"h" + bytes([key]) if key < 256 and not self.long_keys else b"j" + struct.pack("<I", key)
        return True

    def text(self, s: str, name: Any = None, at: int | None = None) -> None:
        if name is not None and self.get(name):
            return
        raw = s.encode()
        self.out += pickle.BINUNICODE + struct.pack("<I", len(raw)) + raw
        self.put(name, at)

    def glob(self, module: str, name: str, at: int | None = None) -> None:
        if at is None and self.get((module, name)):
            return
        self.out += f"c{module}\n{name}\n".encode()
        self.put((module, name), at)

    def ints(self, values: tuple[int, ...]) -> None:
        for v in values:
            self.out += b"K" + bytes([v]) if v < 256 else b"M" + struct.pack("<H", v)
        self.out += {0: b")", 1: b"\x85", 2: b"\x86", 3: b"\x87"}[len(values)] if len(values) <= 3 else b"t"
        if len(values) > 3:
            raise ValueError("at most 3 dimensions here")
        if values:
            self.put()

    def tensor(self, key: str, dtype: str, shape: tuple[int, ...], storage: str | None = None,
               stype_at: int | None = None, skey_at: int | None = None, grad: bool = False,
               numel: int | None = None, offset: int = 0) -> None:
        """One entry; ``storage`` names an existing storage (its key written afresh, as a hostile file
        may); ``stype_at`` writes the storage type by GLOBAL and PUTs it at that memo key, ``skey_at``
        PUTs the storage key at that memo key; ``numel`` the persistent id's element count."""
        stype, size = STYPES[dtype]
        elements = 1
        for n in shape:
            elements *= n
        numel = elements if numel is None else numel
        if storage is None:  # a record of the shape's elements
            storage = str(len(self.records))
            self.records[storage] = bytes((i * 7 + len(self.records)) % 251 for i in range(elements * size))
        self.text(key)
        self.glob("torch._utils", "_rebuild_tensor_v2")
        self.out += b"(("
        self.text("storage", "storage")
        if stype_at is None:
            self.glob("torch", stype)
        else:
            self.glob("torch", stype, at=stype_at)
        self.text(storage, at=skey_at)
        self.text("cpu", "cpu")
        self.out += b"K" + bytes([numel]) + b"t"
        self.put()
        self.out += b"QK" + bytes([offset])
        self.ints(shape)
        stride, acc = [], 1
        for n in reversed(shape):
            stride.insert(0, acc)
            acc *= n
        self.ints(tuple(stride))
        self.out += b"\x88" if grad else b"\x89"
        self.get(("collections", "OrderedDict"))
        self.out += b")R"
        self.put()
        self.out += b"t"
        self.put()
        self.out += b"R"
        self.put()

    def archive(self) -> bytes:
        pkl = bytes(self.out) + b"u."
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
            z.writestr("archive/data.pkl", pkl)
            z.writestr("archive/byteorder", "little")
            for k, v in self.records.items():
                z.writestr(f"archive/data/{k}", v)
            z.writestr("archive/version", "3\n")
        return buf.getvalue()


def _counting_runs(monkeypatch: Any) -> list[int]:
    """Entries each run takes, as they are taken (a run that raises counts those before the error)."""
    taken: list[int] = []
    take = pickle_run.take

    def counted(m: Any, lay: Any, *args: Any) -> int:
        before = len(m.stack)
        try:
            return take(m, lay, *args)
        finally:
            taken.append((len(m.stack) - before + 1) // 2)  # each entry pushes its key, then its tensor
    monkeypatch.setattr(pickle_run, "take", counted)
    return taken


def torch_agrees(data: bytes, ours: tuple[Any, ...], tmp_path: Path) -> None:
    """Where we read the file, torch 2.13 loads it and describes it as we do."""
    path = tmp_path / "f.pt"
    path.write_bytes(data)
    try:
        loaded = td.torch_load(path, True)
    except Exception as e:  # noqa: BLE001 - any refusal of torch's
        assert ours[0] == "error", f"torch refuses ({td.last_line(e)}), we read it"
        return
    if ours[0] == "error":  # a refusal the spec gives where torch loads (a storage named twice...)
        return
    theirs = td.describe(loaded.obj, "pt-zip", locations=loaded.locations)
    assert compare(theirs, ours[1]) == []


def _stale_next() -> StateDict:
    """Layouts L1 (float32 2-d), L3 (float32 1-d) and L2 (float64 1-d, which GETs DoubleStorage's memo
    key); a run switches L1 -> L2 (L1.next = L2); then a long tensor's entry PUTs LongStorage over
    DoubleStorage's memo key, so L2 no longer holds; a later run of L1 and L3 meets an entry laid out as
    L2, whose GET now fetches LongStorage: an int64 tensor, as torch loads it."""
    w = StateDict()
    w.tensor("w0", "float32", (2, 3))
    w.tensor("w1", "float32", (2, 3))  # L1
    w.tensor("b1", "float32", (3,))  # L3
    w.tensor("d2", "float64", (3,))  # DoubleStorage by GLOBAL
    w.tensor("d3", "float64", (3,))  # L2
    w.tensor("w4", "float32", (2, 3))  # L2 -> L1
    w.tensor("d5", "float64", (3,))  # L1 -> L2
    w.tensor("l6", "int64", (4,), stype_at=w.memo[("torch", "DoubleStorage")])
    w.tensor("w7", "float32", (2, 3))  # a run of L1 (L1 and L3 hold, L2 does not)
    w.tensor("x8", "float64", (3,))  # laid out as L2: GETs the memo key that now holds LongStorage
    w.tensor("b9", "float32", (3,))
    return w


def test_a_layout_that_no_longer_holds_is_not_switched_to(tmp_path: Path, monkeypatch: Any) -> None:
    taken = _counting_runs(monkeypatch)
    data = _stale_next().archive()
    got = three_ways(describe_bytes(data))
    assert got[0] == "read"
    assert sum(taken) >= 3, taken  # runs were taken (the file exercises them)
    dtypes = [(k["value"], v["dtype"]) for k, v in got[1]["objects"][0]["items"]]
    assert dtypes[7:10] == [("l6", "int64"), ("w7", "float32"), ("x8", "int64")]
    if td is not None:
        torch_agrees(data, got, tmp_path)


SHAPES = ((), (3,), (2, 3), (2, 1, 2))


def test_a_layout_dropped_past_the_limit_is_not_switched_to(tmp_path: Path, monkeypatch: Any) -> None:
    """E (float16) follows A (float32 2-d) in a run, then 15 more layouts drop E (MAX_LAYOUTS): its
    storage type's memo key is then one no layout the machine holds GETs, and a run of A PUTs a storage
    key there; the next entry, laid out as E, GETs that str as its storage type, which torch refuses."""
    taken = _counting_runs(monkeypatch)
    w = StateDict(long_keys=True)
    w.tensor("h0", "float16", (3,))
    w.tensor("h1", "float16", (3,))  # E
    w.tensor("a0", "float32", (2, 3))
    w.tensor("a1", "float32", (2, 3))  # A
    w.tensor("h2", "float16", (3,))  # A -> E
    more = [("float32", s, False) for s in SHAPES if s != (2, 3)]
    more += [("float32", s, True) for s in SHAPES] + [("float64", s, False) for s in SHAPES]
    more += [("int64", s, False) for s in SHAPES]
    assert len(more) == pickle_run.MAX_LAYOUTS - 1
    for i, (dtype, shape, grad) in enumerate(more):
        if dtype in ("float64", "int64") and shape == ():
            w.tensor(f"first{i}", dtype, shape)  # its storage type by GLOBAL: no layout yet
        w.tensor(f"m{i}", dtype, shape, grad=grad)
    w.tensor("a2", "float32", (2, 3))
    w.tensor("a3", "float32", (2, 3), skey_at=w.memo[("torch", "HalfStorage")])
    w.tensor("h3", "float16", (3,))
    data = w.archive()
    got = three_ways(describe_bytes(data))
    assert got[:3] == ("error", "FormatError", "bad-reference"), got
    assert sum(taken) >= 3, taken
    if td is not None:
        torch_agrees(data, got, tmp_path)


#: Hostile changes to the fourth entry of a run of float32 (2, 3) tensors: (name, tensor() keywords,
#: outcome).  Storage keys written afresh where torch.save would GET them, with the same or another
#: element count; a record missing or of another size; a view past its storage; a key met before.
CHANGES: list[tuple[str, dict[str, Any], str]] = [
    ("storage-twice", {"storage": "1"}, "read"),
    ("storage-twice-offset", {"storage": "1", "shape": (2, 2), "numel": 6, "offset": 2}, "read"),
    ("storage-twice-other-numel", {"storage": "1", "numel": 5}, "bad-reference"),
    ("storage-twice-past-its-end", {"storage": "1", "offset": 1}, "out-of-bounds"),
    ("no-record", {"storage": "zz"}, "bad-reference"),
    ("record-of-another-size", {"numel": 5}, "bad-value"),
    ("numel-past-the-record", {"numel": 7}, "bad-value"),
    ("duplicate-key", {"key": "w1"}, "read"),
    ("duplicate-key-first", {"key": "w0"}, "read"),
]


@pytest.mark.parametrize(("name", "change", "expected"), CHANGES, ids=[c[0] for c in CHANGES])
def test_a_changed_entry_inside_a_run(name: str, change: dict[str, Any], expected: str, tmp_path: Path,
                                      monkeypatch: Any) -> None:
    taken = _counting_runs(monkeypatch)
    w = StateDict()
    for i in range(8):
        kw: dict[str, Any] = {"key": f"w{i}", "dtype": "float32", "shape": (2, 3)}
        if i == 3:
            kw.update(change)
        w.tensor(**kw)
    data = w.archive()
    got = three_ways(describe_bytes(data))
    assert (got[0] if got[0] == "read" else got[2]) == expected, got
    assert taken and taken[0] >= 2, taken  # the entry changed lies inside a run (entries 2-3 at least)
    if td is not None:
        torch_agrees(data, got, tmp_path)


@pytest.mark.parametrize("at", range(12))
def test_a_storage_key_put_over_a_key_two_layouts_get(at: int, tmp_path: Path) -> None:
    """Weights and biases alternate (two layouts, one run); the fifth entry's storage key is PUT at
    memo key ``at`` (the OrderedDict global, the dict, a key, the rebuild function, the ``'storage'`` tag,
    the storage type, a storage key, the location ...), which the entries after it may GET."""
    w = StateDict()
    for i in range(8):
        shape = (2, 3) if i % 2 == 0 else (3,)
        w.tensor(f"t{i}", "float32", shape, skey_at=at if i == 4 else None)
    data = w.archive()
    got = three_ways(describe_bytes(data))
    if td is not None:
        torch_agrees(data, got, tmp_path)
