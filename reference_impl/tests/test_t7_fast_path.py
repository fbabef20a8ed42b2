"""The ``.t7`` reader's fast paths read exactly what its checked path reads (spec/t7.md#t7-tensor).

Every binary ``.t7`` file of the committed cases and of the shared corpus (when present), every cut of
a few of them, thousands of seeded byte mutations, and state_dict-like streams built here (shared,
nil, 4-byte-long and big-endian storages, views, bad geometry) are read with the fast paths on and
off: the description, or the error's class, code, offset and message, must be the same; so must the
object count a limit sees and the nesting a depth limit sees.
"""

from __future__ import annotations

import json
import os
import random
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from t7_bytes import chars, i, q, string, table
from torchfmt import Hints, open_document, read_bytes
from torchfmt.describe import describe_document
from torchfmt.errors import FormatError, Unsupported
from torchfmt.fast import t7 as fast_t7
from torchfmt.recursion import recursion_limit
from torchfmt.t7 import reader
from torchfmt.t7.encodings import BinaryEncoding
from torchfmt.t7.reader import ObjectReader

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "conformance" / "cases"
CORPUS = Path(os.environ.get("TORCHFMT_CORPUS", ROOT.parent / "shared" / "corpus"))


def _binary_files() -> list[Path]:
    files = sorted(CASES.glob("t7-binary/*/*.t7"))
    if (CORPUS / "t7").is_dir():
        files += sorted(p for p in (CORPUS / "t7").rglob("*.t7") if b"V 1" in p.read_bytes()[:4096])
    return files


FILES = _binary_files()


def _json(desc: dict[str, Any]) -> str:
    """A description as text; descriptions nest up to T7_DEPTH deep (the CLI raises the limit so too)."""
    with recursion_limit(20_000):
        return json.dumps(desc, sort_keys=True, default=repr)


def _outcome(data: bytes, hints: Hints, fast: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr("torchfmt.fast.ENABLED", fast)
    try:
        return _json(describe_document(read_bytes(data, hints)))
    except (FormatError, Unsupported) as e:
        return (type(e).__name__, getattr(e, "code", None), getattr(e, "offset", None), str(e))


def _same(data: bytes, monkeypatch: pytest.MonkeyPatch, hints: Hints | None = None) -> Any:
    hints = hints or Hints()
    fast = _outcome(data, hints, True, monkeypatch)
    slow = _outcome(data, hints, False, monkeypatch)
    assert fast == slow
    return fast


def test_the_fast_path_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A state_dict-like table goes through the fast path (else the other tests prove nothing)."""
    data = _state_dict([(f"w{k}", _float_entry(2 * k + 2, [3], [1], 1, 3)) for k in range(50)])
    calls: list[int] = []  # entries read by each call of a fast path
    real, real_run = fast_t7.Entries.tensor, fast_t7.Entries.run

    def spy(self: fast_t7.Entries, r: ObjectReader) -> Any:
        out = real(self, r)
        calls.append(out is not fast_t7.SLOW)
        return out

    def spy_run(self: fast_t7.Entries, *args: Any) -> int:
        done = real_run(self, *args)
        calls.append(done)
        return done

    monkeypatch.setattr(fast_t7.Entries, "tensor", spy)
    monkeypatch.setattr(fast_t7.Entries, "run", spy_run)
    assert not isinstance(_same(data, monkeypatch), tuple)
    assert sum(calls) == 50
    assert max(calls) == 49  # the first entry makes the layout, the run reads the others


def _id(p: Path) -> str:
    return p.parent.name if p.is_relative_to(CASES) else p.name


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_every_binary_file_reads_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _same(path.read_bytes(), monkeypatch)


def _mutations(data: bytes, rng: random.Random, n: int) -> Iterator[bytes]:
    """Seeded mutations: a byte set to a random or boundary value, an int overwritten, a cut."""
    for _ in range(n):
        b = bytearray(data)
        kind = rng.randrange(4)
        at = rng.randrange(len(b))
        if kind == 0:
            b[at] = rng.randrange(256)
        elif kind == 1:
            b[at] = rng.choice((0, 1, 2, 3, 4, 0x7F, 0x80, 0xFF))
        elif kind == 2 and at + 4 <= len(b):
            b[at:at + 4] = struct.pack("<i", rng.choice((-1, 0, 1, 2, 3, 8, 64, 65, 1 << 30, -(1 << 31))))
        else:
            del b[at:]
        yield bytes(b)


@pytest.mark.parametrize("path", [p for p in FILES if p.stat().st_size < 200_000][:40], ids=_id)
def test_mutated_files_read_the_same(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = path.read_bytes()
    rng = random.Random(path.name)
    for mutated in _mutations(data, rng, 150):
        _same(mutated, monkeypatch)


# -- state_dict-like streams built here ---------------------------------------------------------------

def _float_entry(index: int, sizes: list[int], strides: list[int], offset: int, n: int | None,
                 cls: bytes = b"Float", long: str = "<q", storage_ref: int | None = None) -> bytes:
    """A tensor (``index``) over a new storage of ``n`` elements (index + 1), a known one
    (``storage_ref``) or nil (``n`` None)."""
    def lq(v: int) -> bytes:
        return struct.pack(long, v)

    def ii(v: int) -> bytes:
        return struct.pack(long[0] + "i", v)

    name = b"torch." + cls + b"Tensor"
    head = ii(4) + ii(index) + ii(3) + b"V 1" + ii(len(name)) + name
    geometry = ii(len(sizes)) + b"".join(lq(s) for s in sizes + strides) + lq(offset)
    if storage_ref is not None:
        return head + geometry + ii(4) + ii(storage_ref)
    if n is None:
        return head + geometry + ii(0)
    width = {b"Float": 4, b"Double": 8, b"Long": struct.calcsize(long), b"Byte": 1}[cls]
    name = b"torch." + cls + b"Storage"
    return (head + geometry + ii(4) + ii(index + 1) + ii(3) + b"V 1" + ii(len(name)) + name + lq(n)
            + b"\x01" * (width * n))


def _state_dict(entries: list[tuple[str, bytes]], index: int = 1) -> bytes:
    return table(index, *[x for name, value in entries for x in (string(name.encode()), value)])


def _entries() -> list[bytes]:
    """Streams of table entries, each read fast or falling back."""
    out = []
    # tensors with new storages, then views sharing them, nil storages and empty tensors
    good = [("a", _float_entry(2, [2, 3], [3, 1], 1, 6)), ("b", _float_entry(4, [3], [2], 1, 6)),
            ("c", _float_entry(6, [3, 2], [1, 3], 1, None, storage_ref=3)),
            ("d", _float_entry(7, [], [], 1, None)), ("e", _float_entry(8, [0], [1], 1, None)),
            ("f", _float_entry(9, [1, 1, 4], [4, 4, 1], 3, 8)), ("g", _float_entry(11, [2], [0], 1, 1)),
            ("h", _float_entry(13, [4], [1], 1, 4, cls=b"Long")),
            ("i", _float_entry(15, [2], [1], 1, 3, cls=b"Double")),
            ("j", _float_entry(17, [5], [1], 1, 5, cls=b"Byte"))]
    out.append(_state_dict(good))
    # each bad variant: geometry out of bounds, negative values, wrong storage class or reference
    bad = [_float_entry(2, [4], [1], 1, 3), _float_entry(2, [2, 2], [2, 1], 2, 4),
           _float_entry(2, [-1], [1], 1, 3), _float_entry(2, [3], [-1], 1, 3),
           _float_entry(2, [3], [1], 0, 3), _float_entry(2, [3], [1], 1, -1),
           _float_entry(2, [3], [1], 1, None), _float_entry(2, [3], [1 << 62], 1, 3),
           _float_entry(2, [1 << 40, 1 << 40], [1, 1], 1, 3),
           _float_entry(2, [3], [1], 1, None, storage_ref=1),
           _float_entry(2, [3], [1], 1, None, storage_ref=2),
           _float_entry(2, [3], [1], 1, None, storage_ref=3), _float_entry(2, [1] * 65, [1] * 65, 1, 3),
           _float_entry(2, [2, 2], [0, 0], 1, 1),
           _float_entry(2, [1 << 25], [0], 1, 1)]
    for b in bad:
        out.append(_state_dict([("y", b)]))
    # a storage of another class; a tensor class with no version header; duplicate and odd keys
    out.append(_state_dict([("y", _float_entry(2, [3], [1], 1, 3).replace(b"FloatStorage", b"ByteStorage"))]))
    out.append(_state_dict([("y", _float_entry(2, [3], [1], 1, 3)), ("y", _float_entry(4, [3], [1], 1, 3))]))
    out.append(table(1, string(b"\xff\xfe"), _float_entry(2, [3], [1], 1, 3),
                     i(1) + struct.pack("<d", 1.0), _float_entry(4, [3], [1], 1, 3),
                     i(1) + struct.pack("<d", float("nan")), _float_entry(6, [3], [1], 1, 3)))
    out += [_alternating(), _alternating(bad=True)]
    return out


def _alternating(bad: bool = False) -> bytes:
    """Weights and biases taking turns (the run switches between the layouts it has met), a Double and a
    Long tensor among them; ``bad``: then a FloatTensor over a ShortStorage (a known tensor layout whose
    storage class is not its own)."""
    entries = []
    for k in range(4):
        entries += [(f"w{k}", _float_entry(4 * k + 2, [2, 3], [3, 1], 1, 6)),
                    (f"b{k}", _float_entry(4 * k + 4, [3], [1], 1, 3))]
    entries += [("d", _float_entry(18, [2, 3], [3, 1], 1, 6, cls=b"Double")),
                ("w4", _float_entry(20, [2, 3], [3, 1], 1, 6)),
                ("l", _float_entry(22, [3], [1], 1, 3, cls=b"Long")),
                ("b4", _float_entry(24, [3], [1], 1, 3))]
    if bad:
        entries += [("x", _float_entry(26, [3], [1], 1, 3).replace(b"FloatStorage", b"ShortStorage")),
                    ("y", _float_entry(28, [3], [1], 1, 3))]
    return _state_dict(entries)


@pytest.mark.parametrize("k", range(len(_entries())))
def test_built_streams_read_the_same(k: int, monkeypatch: pytest.MonkeyPatch) -> None:
    data = _entries()[k]
    for hints in (Hints(), Hints(mode="binary", long_size=8, byte_order="little")):
        _same(data, monkeypatch, hints)
    for cut in range(1, len(data)):
        _same(data[:cut], monkeypatch)


def test_four_byte_longs_and_big_endian_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    for long in ("<i", ">q", ">i"):
        e = long[0]
        entries = [("a", _float_entry(2, [2, 3], [3, 1], 1, 6, long=long)),
                   ("b", _float_entry(4, [3], [1], 1, 3, cls=b"Long", long=long)),
                   ("c", _float_entry(6, [3], [1], 2, None, storage_ref=3, long=long))]
        data = (struct.pack(e + "iii", 3, 1, len(entries))
                + b"".join(struct.pack(e + "ii", 2, len(k)) + k.encode() + v for k, v in entries))
        size = 4 if long[1] == "i" else 8
        hints = Hints(mode="binary", long_size=size, byte_order="little" if e == "<" else "big")
        assert not isinstance(_same(data, monkeypatch, hints), tuple)
        _same(data, monkeypatch)


def test_limits_see_the_same_objects_and_depth(monkeypatch: pytest.MonkeyPatch) -> None:
    """The object count and nesting a fast read reaches are the checked path's, limit by limit."""
    inner = _state_dict([(f"w{k}", _float_entry(2 * k + 3, [2], [1], 1, 2)) for k in range(4)], index=2)
    data = table(1, string(b"inner"), inner, string(b"x"), _float_entry(11, [2], [1], 1, 2))

    def read(fast: bool, **limits: int) -> Any:
        monkeypatch.setattr("torchfmt.fast.ENABLED", fast)
        try:
            objs = ObjectReader(BinaryEncoding(memoryview(data)), **limits).read_stream()
            return _json(describe_document(reader.Document("t7-binary", objs)))
        except FormatError as e:
            return (e.code, e.offset, str(e))

    for n in range(1, 30):
        assert read(True, max_objects=n) == read(False, max_objects=n)
    for depth in range(1, 5):
        assert read(True, max_depth=depth) == read(False, max_depth=depth)


def test_strings_and_numbers_as_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    data = table(1, string(b"a"), string(b"b"), i(1) + struct.pack("<d", 2.0), string(b"c"),
                 i(1) + struct.pack("<d", -0.0), i(5) + i(1), i(1) + struct.pack("<d", 0.0), i(0),
                 i(2) + chars(b"\x80"), i(0))
    _same(data, monkeypatch)
    _same(q(0) + data, monkeypatch)


@pytest.mark.parametrize("stream", ["mixed", "alternating"])
def test_every_int_of_a_built_stream_set_to_boundary_values(stream: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Each aligned 4-byte field of a state_dict-like stream (type codes, indexes, lengths, dimension
    counts, the halves of longs) set in turn to values at the edges of what the fast paths accept."""
    data = _state_dict([("w", _float_entry(2, [2, 3], [3, 1], 1, 6)), ("b", _float_entry(4, [3], [1], 1, 3)),
                        ("v", _float_entry(6, [3], [2], 1, None, storage_ref=3))])
    if stream == "alternating":
        data = _alternating()
    for at in range(0, len(data) - 3, 4):
        for v in (-(1 << 31), -9, -1, 0, 1, 2, 3, 4, 5, 7, 8, 64, 65, 1 << 20):
            _same(data[:at] + struct.pack("<i", v) + data[at + 4:], monkeypatch)


# -- read through the file: the map and pread (spec/t7.md#t7-tensor) ----------------------------------

def _same_through_file(data: bytes, path: Path, monkeypatch: pytest.MonkeyPatch,
                       hints: Hints | None = None) -> Any:
    """The file at ``path`` holding ``data``, read fast through :func:`open_document` (a map of the file,
    some headers read from it with pread), against the checked path reading the bytes."""
    hints = hints or Hints()
    path.write_bytes(data)
    monkeypatch.setattr("torchfmt.fast.ENABLED", True)
    try:
        fast = _json(describe_document(open_document(path, hints)))
    except (FormatError, Unsupported) as e:
        fast = (type(e).__name__, getattr(e, "code", None), getattr(e, "offset", None), str(e))
    assert fast == _outcome(data, hints, False, monkeypatch)
    return fast


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_every_binary_file_reads_the_same_through_the_file(path: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _same_through_file(path.read_bytes(), tmp_path / "x.t7", monkeypatch)


def _big_entries() -> bytes:
    """A state_dict of storages past ``_PEEK_AFTER`` bytes, so that the run reads each next entry with
    pread: a key longer than what pread reads, a key that is not UTF-8, a number key, views, and
    weights and biases taking turns."""
    big = 20_000  # float32 elements: 80,000 bytes
    return table(1, string(b"a"), _float_entry(2, [big], [1], 1, big),
                 string(b"b"), _float_entry(4, [big // 2], [2], 1, big),
                 string(b"c" * 1500), _float_entry(6, [big], [1], 1, big),
                 string(b"d"), _float_entry(8, [100, 200], [200, 1], 1, big),
                 string(b"\xff"), _float_entry(10, [big], [1], 1, big),
                 i(1) + struct.pack("<d", 3.0), _float_entry(12, [big], [1], 1, big),
                 string(b"e"), _float_entry(14, [big], [1], 1, big),
                 string(b"f"), _float_entry(16, [100, 200], [200, 1], 1, big),
                 string(b"g"), _float_entry(18, [big], [1], 1, big),
                 string(b"h"), _float_entry(20, [200, 100], [100, 1], 1, big),
                 string(b"i"), _float_entry(22, [big], [1], 1, big))


@pytest.mark.parametrize("peek_after", [fast_t7._PEEK_AFTER, 0])
def test_big_storages_read_the_same_through_the_file(peek_after: int, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Every entry after a big storage (or, with ``peek_after`` 0, every entry) read with pread: whole,
    cut anywhere in a header, and with each 4-byte field of a header set to boundary values."""
    monkeypatch.setattr(fast_t7, "_PEEK_AFTER", peek_after)
    read_at: list[int] = []

    def pread(fd: int, n: int, at: int) -> bytes:
        read_at.append(at)
        return os.pread(fd, n, at)

    monkeypatch.setattr(fast_t7, "_PREAD", pread)
    data = _big_entries()
    path = tmp_path / "x.t7"
    assert not isinstance(_same_through_file(data, path, monkeypatch), tuple)
    assert len(read_at) >= 8  # the entries after big storages (and a retry from the map: the long key)
    # the headers: everything but the storages' elements
    headers = [k for k in range(len(data)) if data[k:k + 1] != b"\x01"]
    for cut in headers[1::7]:
        _same_through_file(data[:cut], path, monkeypatch)
    for at in headers[::4][:300]:
        for v in (-1, 0, 2, 4, 65, 1 << 20):
            _same_through_file(data[:at] + struct.pack("<i", v) + data[at + 4:], path, monkeypatch)


def test_a_run_makes_the_objects_the_checked_path_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every field of every tensor and storage a run makes (it calls the constructors positionally)
    is the checked path's; the storages' bytes too."""
    data = _big_entries() + _state_dict([(f"w{k}", _float_entry(2 * k + 25, [3, 2], [2, 1], 1, 6))
                                         for k in range(5)], index=24)

    def objects(fast: bool) -> list[Any]:
        monkeypatch.setattr("torchfmt.fast.ENABLED", fast)
        enc = BinaryEncoding(memoryview(data))
        r = ObjectReader(enc)
        return [r.read_object(), r.read_object(), *r.objects]

    fast, slow = objects(True), objects(False)
    assert len(fast) == len(slow)
    for a, b in zip(fast, slow, strict=True):
        assert type(a) is type(b)
        if isinstance(a, (reader.Tensor, reader.Storage)):
            fields_a, fields_b = dict(vars(a)), dict(vars(b))
            for f, objs in ((fields_a, fast), (fields_b, slow)):
                if f.get("storage") is not None:  # the storage's place among the objects
                    f["storage"] = next(k for k, o in enumerate(objs) if o is f["storage"])
                if f.get("buffer") is not None:
                    f["buffer"] = bytes(f["buffer"])
            assert fields_a == fields_b
    tensors = [a for a in fast if isinstance(a, reader.Tensor)]
    assert len(tensors) == 16
    assert len({id(t.attrs) for t in tensors}) == 16  # each its own (a field with a default factory)


def test_the_description_nests_no_deeper_than_the_composites_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """The nesting walk is skipped where a reading made no more composite values than the depth limit:
    sound only if the description never nests deeper than that count.  Checked on every file and
    mutation above that reads (the walk raises when the depth exceeds its limit)."""
    rng = random.Random(7)
    checked = 0
    for path in FILES:
        data = path.read_bytes()
        for variant in [data, *(_mutations(data, rng, 20) if len(data) < 200_000 else [])]:
            for long_size in (8, 4):
                r = ObjectReader(BinaryEncoding(memoryview(variant), "little", long_size))
                try:
                    objects = r.read_stream()
                except (FormatError, Unsupported):
                    continue
                reader._check_described_depth(objects, r.composites)
                checked += 1
    assert checked > len(FILES) // 2
