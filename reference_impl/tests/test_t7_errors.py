"""Error paths of the ``.t7`` reader: every bad input is a FormatError with the spec's code, found
before anything is allocated for it (spec/t7.md#t7-limits and the paragraphs cited per test).

The bad inputs are small byte strings built here or cut from files real Lua Torch wrote.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from t7_bytes import (
    LE8,
    chars,
    d,
    float_tensor,
    i,
    number,
    q,
    ref,
    storage,
    string,
    table,
    tensor,
    torch,
)
from torchfmt import Hints, read_bytes
from torchfmt.errors import FormatError, Unsupported
from torchfmt.limits import T7_DEPTH, T7_NDIM

CASES = Path(__file__).resolve().parents[2] / "conformance" / "cases"
HINTS = Hints(**LE8)


def _code(data: bytes, hints: Hints = HINTS) -> str:
    with pytest.raises(FormatError) as e:
        read_bytes(data, hints)
    return e.value.code


def _golden(name: str) -> bytes:
    folder = next(CASES.glob(f"t7-*/{name}"))
    return next(p for p in folder.iterdir() if p.suffix == ".t7").read_bytes()


# -- truncation (spec/t7.md#t7-stream) -------------------------------------------------------------

@pytest.mark.parametrize("name", ["tensor-float-2x3", "table-map", "func-upvalues", "tds-hash-vec",
                                  "nn-sequential-float", "class-self-ref", "storage-long"])
def test_every_cut_of_a_binary_file_is_truncated(name: str) -> None:
    data = _golden(name)
    assert read_bytes(data, HINTS).objects  # the whole file reads
    for cut in range(1, len(data)):
        assert _code(data[:cut]) == "truncated", f"cut at {cut}"


@pytest.mark.parametrize("name", ["ascii-tensor-double-2x3", "ascii-class-plain", "ascii-func",
                                  "ascii-strings", "ascii-numbers-list"])
def test_every_cut_of_an_ascii_file_is_truncated(name: str) -> None:
    data = _golden(name)
    hints = Hints(mode="ascii")
    assert read_bytes(data, hints).objects
    body = data.rstrip(b"\n")
    last_token = max(body.rfind(b" "), body.rfind(b"\n")) + 1
    for cut in range(1, last_token):
        assert _code(data[:cut], hints) == "truncated", f"cut at {cut}"
    # Ascii has no terminator: a cut inside the last number leaves a shorter number, or a cut token.
    for cut in range(last_token, len(data)):
        try:
            read_bytes(data[:cut], hints)
        except FormatError as e:
            assert e.code == "truncated", f"cut at {cut}"


def test_empty_stream_and_lone_nul() -> None:
    assert _code(b"\0") == "truncated"  # a serialize terminator, but no object


# -- type codes and lengths (spec/t7.md#t7-type-codes, #t7-string, #t7-table) -------------------

@pytest.mark.parametrize("data", [i(9), i(-1), table(1, string(b"k"), i(42)), i(0) + i(1 << 24)])
def test_unknown_type_codes(data: bytes) -> None:
    assert _code(data) == "bad-type-code"


def test_the_real_primitive_stream_is_rejected_at_its_int() -> None:
    assert _code(_golden("raw-primitives-stream")) == "bad-type-code"


@pytest.mark.parametrize("data", [
    i(2) + i(-1),                                   # string length
    i(3) + i(1) + i(-5),                            # table count
    storage(1, b"torch.FloatStorage", -1, b""),     # storage size
    torch(1, b"torch.FloatTensor", i(-1)),          # ndim
    tensor(1, b"torch.FloatTensor", [-2], [1], 1, i(0)),   # a size
    tensor(1, b"torch.FloatTensor", [2], [-1], 1, i(0)),   # a stride
    i(4) + i(1) + i(-3),                            # class header length
    i(8) + i(1) + i(-2),                            # bytecode length
    torch(1, b"tds.Vec", q(-1)),                    # tds count
])
def test_negative_lengths(data: bytes) -> None:
    assert _code(data) == "bad-length"


@pytest.mark.spec("t7.md#t7-tensor", "tensors.md#tensors-empty")
@pytest.mark.parametrize("data,shape", [
    (float_tensor([1, 2], [2**61, 1], 1, 2), [1, 2]),          # a stride of 2^63 bytes: 2^61 elements
    (float_tensor([0, 2**62], [1, 1], 1, 2), [0, 2**62]),      # empty, whatever the other sizes
    (float_tensor([0, 2**62, 4], [16, 4, 1], 9, 2), [0, 2**62, 4]),  # and whatever its offset
])
def test_sizes_and_strides_count_elements(data: bytes, shape: list[int]) -> None:
    """Strides and sizes are counts of elements below 2^63, never bytes (real Lua Torch loads these:
    conformance/cases/t7-binary/spec-tensor-*)."""
    (t,) = read_bytes(data, HINTS).objects
    assert list(t.shape) == shape


@pytest.mark.parametrize("data", [
    i(2) + i(2**31 - 1) + b"abc",
    i(3) + i(1) + i(2**31 - 1) + number(1.0),
    storage(1, b"torch.DoubleStorage", 2**60, b"\0" * 16),
    storage(1, b"torch.LongStorage", 2**62, b""),
    torch(1, b"tds.Hash", q(2**62)),
])
def test_sizes_beyond_the_end_are_rejected_without_allocating(data: bytes) -> None:
    tracemalloc.start()
    try:
        assert _code(data) == "truncated"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


# -- references (spec/t7.md#t7-reference-index) ---------------------------------------------------

@pytest.mark.parametrize("data", [
    ref(3, 2),                                                # nothing read yet: 1 is next
    table(2),                                                 # skips index 1
    table(1, number(1), ref(3, 3)),                           # beyond the next new index
    table(1, number(1), ref(4, 1)),                           # code 4 naming a table
    table(1, number(1), ref(8, 1)),                           # code 8 naming a table
    table(1, number(1), i(3) + i(0) + i(0)),                  # index 0
    tensor(1, b"torch.FloatTensor", [1], [1], 1, ref(4, 1)),  # a tensor's storage is itself
])
def test_bad_references(data: bytes) -> None:
    assert _code(data) == "bad-reference"


def test_cycles_and_shared_objects_are_fine() -> None:
    (t,) = read_bytes(table(1, string(b"self"), ref(3, 1), number(1), table(2)), HINTS).objects
    items = dict(t.items)
    assert items["self"] is t and items[1.0].items == []


# -- values (spec/t7.md#t7-boolean, #t7-table, #t7-torch-object, #t7-function) --------------------

@pytest.mark.parametrize("data", [
    i(5) + i(2),                                                     # boolean 2
    table(1, i(0), number(1)),                                       # nil key
    table(1, number(float("nan")), number(1)),                       # NaN key
    table(1, number(0.0), number(1), number(-0.0), number(2)),       # one key twice
    table(1, string(b"a"), number(1), string(b"a"), number(2)),
    torch(1, b"test.Custom", i(7) + d(2.5)),                         # generic payload not a table
    torch(1, b"test.Custom", number(1)),
    torch(1, b"\xff\xfe", table(2)),                                 # class name not UTF-8
    torch(1, b"", table(2), version=None),                           # empty class name
    tensor(1, b"torch.FloatTensor", [1], [1], 1,
           storage(2, b"torch.DoubleStorage", 1, d(1.0))),           # storage of another type
    tensor(1, b"torch.FloatTensor", [1], [1], 1, table(2)),          # not a storage
    torch(1, b"tds.Hash", q(1) + table(2) + number(1)),              # tds key not string/number
    i(8) + i(1) + chars(b"\x1bLJ") + number(1),                      # upvalues not a table
    i(8) + i(1) + chars(b"\x1bLJ") + table(2, number(2), table(3)),  # upvalue keys not 1..n
    i(8) + i(1) + chars(b"\x1bLJ") + table(2, number(1), number(5)),  # type 8 record not a table
    i(6) + chars(b"\x1bLJ") + table(1, string(b"x"), number(1)),     # type 6 upvalue keys
])
def test_bad_values(data: bytes) -> None:
    assert _code(data) == "bad-value"


def test_the_real_custom_write_payload_is_rejected() -> None:
    assert _code(_golden("class-custom-write")) == "bad-value"


def test_nil_values_add_no_item_and_legacy_headers_have_no_version() -> None:
    (t,) = read_bytes(table(1, string(b"a"), i(0), string(b"b"), number(1)), HINTS).objects
    assert t.items == [("b", 1.0)]
    (o,) = read_bytes(torch(1, b"test.Old", table(2), version=None), HINTS).objects
    assert (o.class_name, o.version) == ("test.Old", None)
    (o,) = read_bytes(torch(1, b"V x", table(2), version=None), HINTS).objects
    assert (o.class_name, o.version) == ("V x", None)  # "V x" is no version header: a class name


def test_torch_generator_is_declined() -> None:
    with pytest.raises(Unsupported):
        read_bytes(torch(1, b"torch.Generator", b"\0" * 64), HINTS)


# -- views (spec/t7.md#t7-tensor-offset, #t7-limits) ------------------------------------------------

@pytest.mark.parametrize("data", [
    float_tensor([2, 3], [3, 1], 2, 6),     # offset 1 (0-based) + 5 reaches element 6 of 6
    float_tensor([7], [1], 1, 6),
    float_tensor([2], [6], 1, 6),
    tensor(1, b"torch.FloatTensor", [2], [1], 1, i(0)),   # elements but no storage
    tensor(1, b"torch.FloatTensor", [], [], 0, i(0)),      # 1-based offset 0: before the storage
    float_tensor([2], [1], -5, 6),
])
def test_views_outside_their_storage(data: bytes) -> None:
    assert _code(data) == "out-of-bounds"


def test_views_inside_their_storage_read() -> None:
    for data in (float_tensor([2, 3], [3, 1], 1, 6), float_tensor([0, 9], [9, 1], 50, 6),
                 float_tensor([4, 3], [0, 1], 4, 6), tensor(1, b"torch.FloatTensor", [], [], 1, i(0))):
        assert read_bytes(data, HINTS).objects


def test_expansion_bomb_and_too_many_dimensions() -> None:
    assert _code(float_tensor([2**40, 2**20], [0, 0], 1, 1)) == "limit-exceeded"
    n = T7_NDIM.value + 1  # spec/t7.md#t7-tensor: past the bound once the longs fit, truncated before
    assert _code(torch(1, b"torch.FloatTensor", i(n) + q(1) * (2 * n + 1))) == "limit-exceeded"
    assert _code(torch(1, b"torch.FloatTensor", i(n) + q(1) * (2 * n))) == "truncated"
    assert _code(torch(1, b"torch.FloatTensor", i(2**30) + q(1) * 10)) == "truncated"


def test_nesting_limit() -> None:
    def nested(depth: int) -> bytes:
        out = b"".join(i(3) + i(k + 1) + i(1) + number(1) for k in range(depth))
        return out + number(7)

    assert read_bytes(nested(T7_DEPTH.value), HINTS).objects
    assert T7_DEPTH.value >= 1000  # spec/canonical.md#canonical-node-budget
    assert _code(nested(T7_DEPTH.value + 1)) == "limit-exceeded"


# -- streams (spec/t7.md#t7-stream, #t7-serialize) ------------------------------------------------

def test_serialize_terminator() -> None:
    for name, hints in (("table-map", HINTS), ("serialize-ascii", Hints(mode="ascii"))):
        data = _golden(name)
        plain = read_bytes(data, hints).objects
        assert len(read_bytes(data + b"\0", hints).objects) == len(plain) == 1
        with pytest.raises(FormatError):
            read_bytes(data + b"\0\0", hints)
