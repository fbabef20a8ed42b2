"""The pickle machine's tensor fast path (torchfmt/fast/pickle_entry.py) changes nothing but speed.

Every committed and corpus ``.pt`` case, the adversarial families and seeded mutations of the accept files
read the same with the fast path and without it: the same description, or the same error (class, code,
offset, message).  Single-byte changes at every offset of several torch-written pickles, and every limit
set just at and just below what a file needs, give the same outcome both ways too.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fast_switch import fast_paths
from torchfmt import describe_document, read_bytes, writer
from torchfmt.dtypes import BY_NAME
from torchfmt.errors import FormatError, Unsupported
from torchfmt.fast import pickle_entry, pickle_run
from torchfmt.model import Document, Storage, Tensor
from torchfmt.pickle.machine import LIMITS, Limits, Machine
from torchfmt.pt.archive import Archive, StorageRecords
from torchfmt.pt.ziparchive import read_members
from torchfmt.windows import MemoryWindows

from conformance.differential.variants import family_variants, mutation_variants
from conformance.harness.cases import committed_cases, corpus_cases, corpus_root

ROOT = Path(__file__).resolve().parents[2]


PICKLED = ("pt-zip", "pt-legacy", "pt-tar", "pt-torchscript")
#: torch-written files whose pickles get a changed byte at every offset.
MUTATED = ("many-tensors", "empty-tensors", "requires-grad", "zero-dim", "checkpoint-adam",
           "views-shared-storage", "sparse-parameter", "conj-view-torch1.13", "state-dict-keep-vars")
#: Bytes of each pickle changed: its first tensors (the fast path takes every tensor after the first).
SPAN = 500
#: Bytes each offset is set to: the opcodes of the sequence, and values at the edges of their arguments.
REPLACEMENTS = b"hjqrKMJ()t\x85\x86\x87\x88\x89XQRN\x00\x01\xff"


def outcome(read: Callable[[], Any]) -> tuple[Any, ...]:
    """What a reading gives: its description, or its error (class, code, offset, message)."""
    try:
        return ("read", read())
    except FormatError as e:
        return ("error", "FormatError", e.code, e.offset, str(e))
    except Unsupported as e:
        return ("error", "Unsupported", str(e))


def both_ways(read: Callable[[], Any]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    with fast_paths(True):
        fast = outcome(read)
    with fast_paths(False):
        slow = outcome(read)
    return fast, slow


@contextmanager
def no_runs() -> Iterator[None]:
    """The fast path taking one entry at a time: no entry it takes starts a run (pickle_run.py)."""
    layout = pickle_run.layout
    pickle_run.layout = lambda *args: None
    try:
        yield
    finally:
        pickle_run.layout = layout


def describe_bytes(data: bytes) -> Callable[[], Any]:
    return lambda: describe_document(read_bytes(data))


def _files() -> Iterator[tuple[str, bytes]]:
    for case in committed_cases() + corpus_cases():
        if case.format in PICKLED and case.path.is_file():
            yield case.id, case.path.read_bytes()


def test_every_case_reads_the_same_both_ways() -> None:
    differ, taken = [], 0
    for name, data in _files():
        fast, slow = both_ways(describe_bytes(data))
        taken += 1
        if fast != slow:
            differ.append(name)
    assert taken > 300
    assert differ == []


def test_every_case_reads_the_same_without_runs() -> None:
    """Runs (pickle_run.py) change nothing on any case: the fast path taking one entry at a time gives the
    same description or error (so a run that is never made only costs time)."""
    differ, taken = [], 0
    for name, data in _files():
        with fast_paths(True):
            with_runs = outcome(describe_bytes(data))
            with no_runs():
                without = outcome(describe_bytes(data))
        taken += 1
        if with_runs != without:
            differ.append(name)
    assert taken > 300
    assert differ == []


@pytest.mark.skipif(not corpus_root().is_dir(), reason="the adversarial families start from ../shared/corpus")
def test_hostile_variants_read_the_same_both_ways() -> None:
    differ, taken = [], 0
    variants = [*family_variants(), *mutation_variants(seed=12, per_file=2)]
    for v in variants:
        if v.format.startswith("t7"):
            continue
        fast, slow = both_ways(describe_bytes(v.data))
        taken += 1
        if fast != slow:
            differ.append(v.name)
    assert taken > 500
    assert differ == []


@dataclasses.dataclass
class _Pickle:
    """A zip case's data.pkl, run by the machine directly over the case's own storage records."""

    archive: Archive
    pkl: bytes

    @classmethod
    def of(cls, case_id: str) -> _Pickle:
        data = (ROOT / "conformance" / "cases" / "pt-zip" / case_id / "data.pt").read_bytes()
        buf = MemoryWindows(data)
        root, members = read_members(buf)
        archive = Archive.open(buf, root, members)
        return cls(archive, bytes(members["data.pkl"].data(buf)))

    def run(self, pkl: bytes, limits: Limits = LIMITS) -> tuple[Any, ...]:
        def read() -> Any:
            machine = Machine(pkl, persistent_load=StorageRecords(self.archive, "data/"), limits=limits)
            value = machine.load_exact(0, len(pkl))
            return describe_document(Document("pt-zip", [value], extra=self.archive.info())), machine.work
        fast, slow = both_ways(read)
        assert fast == slow, f"{fast!r:.300} != {slow!r:.300}"
        return fast


@pytest.mark.parametrize("case_id", MUTATED)
def test_one_changed_byte_anywhere_reads_the_same_both_ways(case_id: str, monkeypatch: Any) -> None:
    p = _Pickle.of(case_id)
    taken: list[int] = []
    effects = pickle_entry._effects
    monkeypatch.setattr(pickle_entry, "_effects", lambda *a: (taken.append(1), effects(*a))[1])
    assert p.run(p.pkl)[0] == "read"
    assert taken, "the fast path never ran on the unchanged pickle"
    outcomes = set()
    for i in range(min(len(p.pkl), SPAN)):
        for b in REPLACEMENTS:
            if p.pkl[i] != b:
                outcomes.add(p.run(p.pkl[:i] + bytes([b]) + p.pkl[i + 1:])[0])
    assert outcomes == {"read", "error"}


def _work(p: _Pickle) -> int:
    """The call work the unchanged pickle needs, from a run without the fast path."""
    with fast_paths(False):
        machine = Machine(p.pkl, persistent_load=StorageRecords(p.archive, "data/"))
        machine.load_exact(0, len(p.pkl))
        return machine.work


@pytest.mark.parametrize("case_id", MUTATED)
def test_limits_at_the_edge_read_the_same_both_ways(case_id: str) -> None:
    p = _Pickle.of(case_id)
    work = _work(p)
    opcodes = _opcodes(p.pkl)
    for field, need in (("max_call_work", work), ("max_opcodes", opcodes)):
        at = p.run(p.pkl, dataclasses.replace(LIMITS, **{field: need}))
        below = p.run(p.pkl, dataclasses.replace(LIMITS, **{field: need - 1}))
        assert at[0] == "read" and below[0] == "error" and below[2] == "limit-exceeded", (field, need)
    for field, values in (("max_marks", (1, 2, 3)), ("max_depth", (1, 2, 3, 4))):
        for value in values:
            p.run(p.pkl, dataclasses.replace(LIMITS, **{field: value}))


def _opcodes(pkl: bytes) -> int:
    import pickletools

    return sum(1 for _ in pickletools.genops(pkl))


# -- runs (torchfmt/fast/pickle_run.py): entries laid out as the last one taken, in one loop ------------
def three_ways(read: Callable[[], Any]) -> tuple[Any, ...]:
    """The outcome with runs, and checks it equals the outcomes with the fast path alone and with
    neither."""
    with fast_paths(True):
        fast = outcome(read)
    with no_runs():
        single, slow = both_ways(read)
    assert fast == single == slow, f"{fast!r:.300} / {single!r:.300} / {slow!r:.300}"
    return fast


def _state_dict(n: int) -> dict[str, Any]:
    """A state_dict whose entries change layout now and then: key lengths, dtypes, ints of every width,
    0-d, empty and long tensors, requires_grad, two views of one storage, a non-ASCII key, and runs of
    one geometry (whose views the run makes without rechecking)."""
    g = np.random.default_rng(12)
    out: dict[str, Any] = {}
    for i in range(n):
        kind = (i // 7) % 9
        if kind == 0:
            v: Any = g.standard_normal((3, 4)).astype(np.float32)
        elif kind == 1:
            v = g.standard_normal((i % 3 + 1, 2)).astype(np.float64)
        elif kind == 2:
            v = np.array(i, dtype=np.int64)  # 0-d: EMPTY_TUPLE size and stride
        elif kind == 3:
            v = np.zeros((0, 3), dtype=np.float32)
        elif kind == 4:
            v = np.arange(300 + i % 2, dtype=np.int16)  # BININT2
        elif kind == 5:
            v = np.zeros((1, 70000), dtype=np.uint8)  # BININT numel, size and stride
        elif kind == 6:
            dtype = BY_NAME["float32"]
            v = Tensor(dtype, (2, 2), (2, 1), 0, Storage(dtype, 4, data=np.ones(4, np.float32)),
                       requires_grad=True)
        elif kind == 7:
            dtype = BY_NAME["float32"]
            s = Storage(dtype, 6, data=np.arange(6, dtype=np.float32))
            out[f"shared{i}.a"] = Tensor(dtype, (3,), (1,), 0, s)
            v = Tensor(dtype, (3,), (1,), 3, s)  # the storage key fetched by GET: the run ends
        else:
            v = g.standard_normal(5).astype(np.float16)
        out[("gewicht.ä" if i == 40 else "k" * (i % 4) + f"layer{i}.weight")] = v
    return out


def _written(obj: Any) -> bytes:
    buf = io.BytesIO()
    writer.write(obj, buf, "pt-zip")
    return buf.getvalue()


@dataclasses.dataclass
class _Written(_Pickle):
    """A state_dict written by the reference writer (the same opcode sequences as torch.save), its
    pickle run by the machine directly."""

    @classmethod
    def of_dict(cls, obj: Any) -> _Written:
        buf = MemoryWindows(_written(obj))
        root, members = read_members(buf)
        return cls(Archive.open(buf, root, members), bytes(members["data.pkl"].data(buf)))

    def run3(self, pkl: bytes, limits: Limits = LIMITS) -> tuple[Any, ...]:
        def read() -> Any:
            machine = Machine(pkl, persistent_load=StorageRecords(self.archive, "data/"), limits=limits)
            value = machine.load_exact(0, len(pkl))
            return (describe_document(Document("pt-zip", [value], extra=self.archive.info())), machine.work,
                    len(machine.memo))
        return three_ways(read)


def _counting_runs(monkeypatch: Any) -> list[int]:
    """Entries each run takes, as they are taken."""
    taken: list[int] = []
    take = pickle_run.take

    def counted(m: Any, lay: Any, *args: Any) -> int:
        before = len(m.stack)
        n = take(m, lay, *args)
        taken.append((len(m.stack) - before) // 2)  # each entry pushes its key and its tensor
        return n
    monkeypatch.setattr(pickle_run, "take", counted)
    return taken


def test_a_varied_state_dict_reads_the_same_three_ways(monkeypatch: Any) -> None:
    taken = _counting_runs(monkeypatch)
    data = _written(_state_dict(400))
    assert three_ways(describe_bytes(data))[0] == "read"
    # runs switch among the layouts met; each new one ends a run (its first entry is taken alone)
    assert sum(taken) > 250 and max(taken) >= 20 and len(taken) > 10


def test_a_run_makes_the_objects_the_checked_path_makes() -> None:
    data = _written(_state_dict(120))
    with fast_paths(True):
        fast = read_bytes(data).objects[0]
    with fast_paths(False):
        slow = read_bytes(data).objects[0]
    assert list(fast) == list(slow)
    for k in fast:
        a, b = fast[k], slow[k]
        assert _fields(a) == _fields(b), k
        assert type(a) is type(b) and type(a.shape) is tuple and type(a.stride) is tuple
    tensors = list(fast.values())
    assert len({id(t.attrs) for t in tensors}) == len(tensors)  # each its own (a default factory's field)


def _fields(v: Any) -> Any:
    """A record's fields, recursively, a storage's buffer as its bytes."""
    if dataclasses.is_dataclass(v):
        return (type(v), [(f.name, _fields(getattr(v, f.name))) for f in dataclasses.fields(v)])
    if isinstance(v, memoryview):
        return bytes(v)
    return v


def test_changed_bytes_inside_a_run_read_the_same_three_ways() -> None:
    obj = {f"layer{i}.weight": np.full((2, 3), i, dtype=np.float32) for i in range(12)}
    p = _Written.of_dict(obj)
    starts = [i for i in range(len(p.pkl)) if p.pkl.startswith(b"X\x0d\x00\x00\x00layer", i)]
    assert len(starts) >= 8
    outcomes = set()
    for i in range(starts[6], starts[8]):  # two entries well inside the run that starts at the second
        for b in REPLACEMENTS:
            if p.pkl[i] != b:
                outcomes.add(p.run3(p.pkl[:i] + bytes([b]) + p.pkl[i + 1:])[0])
    assert outcomes == {"read", "error"}


def test_an_entry_differing_in_one_field_ends_the_run_and_reads_the_same(monkeypatch: Any) -> None:
    taken = _counting_runs(monkeypatch)
    base = {f"layer{i}.weight": np.zeros((2, 3), dtype=np.float32) for i in range(20)}
    changes: list[tuple[str, Any]] = [
        ("shape", np.zeros((3, 2), dtype=np.float32)),  # values differ, layout the same: the run goes on
        ("ndim", np.zeros((6,), dtype=np.float32)),
        ("dtype", np.zeros((2, 3), dtype=np.float64)),
        ("width", np.zeros((2, 300), dtype=np.float32)),
        ("grad", Tensor(BY_NAME["float32"], (2, 3), (3, 1), 0, Storage(BY_NAME["float32"], 6,
                                                                          data=np.zeros(6, np.float32)),
                        requires_grad=True)),
    ]
    for what, value in changes:
        taken.clear()
        obj = dict(base)
        obj["layer10.weight"] = value
        assert _Written.of_dict(obj).run3(_Written.of_dict(obj).pkl)[0] == "read", what
        # entries 2-19 in one run, or 2-9 and 11-19 (the tenth taken alone, its layout made; the run
        # that starts after it switches back to the first layout at the eleventh); a new dtype's tenth
        # entry names its storage type by GLOBAL, and the machine reads it: 2-9 and 12-19
        expected = {"shape": 18, "dtype": 16}.get(what, 17)
        assert sum(taken) == expected, (what, taken)


def _entry_needs(p: _Written) -> tuple[int, int]:
    """(opcodes, call work) of the unchanged pickle, from a run without the fast path."""
    return _opcodes(p.pkl), _work(p)


def test_limits_reached_inside_a_run_read_the_same_three_ways() -> None:
    obj = {f"layer{i}.weight": np.zeros((2, 3), dtype=np.float32) for i in range(30)}
    p = _Written.of_dict(obj)
    opcodes, work = _entry_needs(p)
    errors = 0
    for field, need, per in (("max_opcodes", opcodes, 26), ("max_call_work", work, 12)):
        for less in range(0, 10 * per, 3):  # the limit falls on every opcode of several entries
            got = p.run3(p.pkl, dataclasses.replace(LIMITS, **{field: need - less}))
            errors += got[0] == "error"
            assert (got[0] == "read") == (less == 0), (field, less)
    assert errors > 50
    for field, values in (("max_marks", (1, 2, 3)), ("max_depth", (1, 2, 3))):
        for value in values:
            p.run3(p.pkl, dataclasses.replace(LIMITS, **{field: value}))


def test_a_memo_key_put_over_a_key_the_run_gets_ends_it() -> None:
    obj = {f"layer{i}.weight": np.zeros((2, 3), dtype=np.float32) for i in range(8)}
    p = _Written.of_dict(obj)
    starts = [i for i in range(len(p.pkl)) if p.pkl.startswith(b"X\x0d\x00\x00\x00layer", i)]
    # the fifth entry's key PUT over each memo key the entries GET (the rebuild function, the storage
    # tag and type, the location, OrderedDict): the sixth entry then GETs the key string there
    put_at = starts[4] + 5 + 13
    assert p.pkl[put_at] == 0x71
    for key in range(0, 12):
        changed = p.pkl[:put_at + 1] + bytes([key]) + p.pkl[put_at + 2:]
        p.run3(changed)


def test_alternating_layouts_are_taken_in_one_run(monkeypatch: Any) -> None:
    """A weight and its bias, then the next layer's: two layouts, switched between at every entry."""
    taken = _counting_runs(monkeypatch)
    obj: dict[str, Any] = {}
    for i in range(60):
        obj[f"layers.{i}.weight"] = np.full((3, 2), i, dtype=np.float32)
        obj[f"layers.{i}.bias"] = np.full((3,), i, dtype=np.float32)
        if i % 20 == 19:
            obj[f"layers.{i}.scale"] = np.float64(i)  # a third, now and then
    p = _Written.of_dict(obj)
    assert p.run3(p.pkl)[0] == "read"
    assert sum(taken) >= len(obj) - 12, taken  # the memo keys' width changes at 256 and 65,536
    # memo keys PUT over the keys the layouts GET, at the eleventh entry's key: the layouts made before
    # no longer hold, and read the same three ways
    starts = [i for i in range(len(p.pkl)) if p.pkl.startswith(b"X", i) and p.pkl[i + 5:i + 12] == b"layers."]
    put_at = starts[10] + 5 + int.from_bytes(p.pkl[starts[10] + 1:starts[10] + 5], "little")
    assert p.pkl[put_at] == 0x71
    for key in range(0, 16):
        p.run3(p.pkl[:put_at + 1] + bytes([key]) + p.pkl[put_at + 2:])
