"""The safe pickle machine: CPython's own pickles of plain values read back equal (protocols 0-5), and
every error path gives its code (spec/pickle.md#pickle-stack, #pickle-mark, #pickle-memo,
#pickle-protocols, #pickle-limits).  Bad pickles are built by hand."""

from __future__ import annotations

import collections
import math
import pickle
import struct
import time
from typing import Any

import pytest
from torchfmt.errors import FormatError
from torchfmt.model import Global, OpaqueObject
from torchfmt.pickle.machine import Limits, Machine


def run(data: bytes, **kw: Any) -> Any:
    return Machine(data, **kw).load_exact(0, len(data))


def code_of(data: bytes, **kw: Any) -> str:
    with pytest.raises(FormatError) as e:
        run(data, **kw)
    return e.value.code


def same(a: Any, b: Any) -> bool:
    """Equal as values, NaN equal to NaN and -0.0 told from 0.0."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a) and vars(a) == vars(b) \
            if isinstance(a, collections.OrderedDict) else \
            list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


PLAIN = [
    None, True, False, 0, 1, -1, 255, 256, 65535, 65536, -(2**31), 2**31, 2**63, -(2**100), 10**300,
    0.0, -0.0, 1.5, -2.25e-300, math.inf, -math.inf, math.nan,
    "", "ascii", "é ü 中文 😀", "a\nb\\c'\"", "\ud800 lone surrogate",
    b"", b"\x00\xff bytes", bytearray(b"\x01\x02"),
    (), (1,), (1, 2), (1, 2, 3), (1, (2, (3, ()))), [], [1, [2, [3]]],
    {}, {"a": 1, 2: "b", (1, 2): [3]}, {1, 2, 3}, frozenset({"x", "y"}),
    collections.OrderedDict([("w", 1), ("b", 2)]),
    list(range(1000)), {str(i): i for i in range(300)},
]


@pytest.mark.parametrize("protocol", range(6))
def test_cpython_pickles_of_plain_values_read_back_equal(protocol: int) -> None:
    for value in PLAIN:
        got = run(pickle.dumps(value, protocol=protocol))
        assert same(got, value), (protocol, value, got)


@pytest.mark.parametrize("protocol", range(6))
def test_memo_sharing_and_cycles_are_kept(protocol: int) -> None:
    shared = [1, 2]
    cyclic: list[Any] = ["self"]
    cyclic.append(cyclic)
    od = collections.OrderedDict(a=1)
    od._metadata = {"": {"version": 1}}  # type: ignore[attr-defined]
    got = run(pickle.dumps({"x": shared, "y": shared, "c": cyclic, "od": od}, protocol=protocol))
    assert got["x"] is got["y"] and got["x"] == [1, 2]
    assert got["c"][1] is got["c"]
    assert vars(got["od"]) == {"_metadata": {"": {"version": 1}}} and got["od"] == od


def test_memo_keys_above_255_use_long_binput() -> None:
    values = [[i] for i in range(600)]
    data = pickle.dumps(values + values, protocol=2)
    got = run(data)
    assert got[599] is got[1199] and got[599] == [599]


def test_pop_with_no_item_above_the_mark_discards_the_mark() -> None:
    assert run(b"(0N.") is None  # MARK, POP (the mark), NONE, STOP


# -- error paths --------------------------------------------------------------------------------------

@pytest.mark.parametrize("data, code", [
    (b"\xff.", "bad-opcode"),  # not an opcode
    (b"\x80\x05\x97.", "bad-opcode"),  # NEXT_BUFFER
    (b"\x80\x02\x82\x01.", "bad-opcode"),  # EXT1
    (b"\x80\x06N.", "bad-magic"),  # protocol 6
    (b"N\x80\x02.", "bad-pickle"),  # PROTO after the first opcode
    (b"\x80\x02\x8c\x01a.", "bad-opcode"),  # SHORT_BINUNICODE (protocol 4) in a protocol 2 pickle
    (b"\x88.", "bad-opcode"),  # NEWTRUE without PROTO (protocol 0-1)
    (b"\x80\x02R.", "bad-pickle"),  # REDUCE on an empty stack
    (b"t.", "bad-pickle"),  # TUPLE without MARK
    (b"(N.", "bad-pickle"),  # STOP with an open MARK
    (b"NN.", "bad-pickle"),  # STOP with two items
    (b"N", "bad-pickle"),  # no STOP
    (b"N.N", "bad-pickle"),  # bytes after STOP in a record
    (b"0.", "bad-pickle"),  # POP on an empty stack
    (b"h\x05.", "bad-reference"),  # BINGET of a key never PUT
    (b"g7\n.", "bad-reference"),  # GET of a key never PUT
    (b"(q\x00N.", "bad-pickle"),  # BINPUT with nothing above the mark
    (b"Np-1\n.", "bad-reference"),  # negative PUT key
    (b"X\x10\x00\x00\x00ab.", "truncated"),  # string longer than the pickle
    (b"T\xff\xff\xff\xffab.", "bad-length"),  # BINSTRING with a negative length
    (b"Vab", "truncated"),  # text argument without a newline
    (b"X\x02\x00\x00\x00\xff\xfe.", "bad-value"),  # not UTF-8
    (b"U\x02\xff\xfe.", "bad-value"),  # Python 2 str that is not UTF-8
    (b"S'ab\n.", "bad-value"),  # STRING not quoted at both ends
    (b"I12x\n.", "bad-value"),  # INT that is not decimal
    (b"F1.5.5\n.", "bad-value"),  # FLOAT that is not a literal
    (b"}(NNNu.", "bad-pickle"),  # SETITEMS with an odd number of items
    (b"}Na.", "bad-pickle"),  # APPEND to a dict
    (b"]NNs.", "bad-pickle"),  # SETITEM on a list
    (b"}]Ns.", "bad-value"),  # unhashable dict key
    (b"\x80\x04\x8f(]\x90.", "bad-value"),  # unhashable set item
    (b"\x80\x02]]b.", "bad-pickle"),  # BUILD on a list
    (b"\x80\x02N)R.", "bad-pickle"),  # REDUCE on None
    (b"\x80\x02N\x81.", "bad-pickle"),  # NEWOBJ with a single item
    (b"\x80\x04K\x01K\x02\x93.", "bad-pickle"),  # STACK_GLOBAL of ints
    (b"\x80\x04\x95\xff\x00\x00\x00\x00\x00\x00\x00N.", "truncated"),  # frame past the end
    (b"\x80\x02X\x01\x00\x00\x00aQ.", "bad-reference"),  # persistent id where none is meaningful
    (b"Pabc\n.", "bad-reference"),
])
def test_error_paths(data: bytes, code: str) -> None:
    assert code_of(data) == code


def test_error_offsets_point_at_the_opcode() -> None:
    with pytest.raises(FormatError) as e:
        run(b"\x80\x02NNh\x09.")
    assert (e.value.code, e.value.offset) == ("bad-reference", 4)


def test_stream_pickles_are_read_one_after_another() -> None:
    data = pickle.dumps(1, protocol=2) + pickle.dumps("two", protocol=2) + b"tail"
    m = Machine(data)
    first, pos = m.load(0)
    second, end = m.load(pos)
    assert (first, second) == (1, "two") and data[end:] == b"tail"
    with pytest.raises(FormatError) as e:  # a stream's pickle cut at an opcode boundary
        Machine(data[:pos + 3]).load(pos)
    assert e.value.code == "truncated"


# -- limits ---------------------------------------------------------------------------------------

def test_too_many_open_marks() -> None:
    assert code_of(b"(" * 1001 + b"N.") == "limit-exceeded"
    assert run(b"(" * 999 + b"N" + b"t" * 999 + b".") is not None  # 999 + the top: within the limit


def _chain(n: int) -> bytes:
    """A list nested ``n + 1`` deep, built through the memo with a stack never more than two deep."""
    u32 = struct.Struct("<I").pack
    data = b"\x80\x02]r" + u32(0)
    for i in range(1, n + 1):  # push a new list, memoize it, append it to the previous one, fetch it
        data += b"]r" + u32(i) + b"a0j" + u32(i)
    return data + b"0j" + u32(0) + b"."


def test_deep_nesting_through_the_memo() -> None:
    assert code_of(_chain(1000)) == "limit-exceeded"  # 1001 deep
    assert isinstance(run(_chain(999)), list)  # 1000 deep: the depth a reader must accept
    assert isinstance(run(_chain(1500), limits=Limits(max_depth=2000)), list)


def test_expansion_bomb_of_shared_tuples_is_rejected_quickly() -> None:
    # t0 = (0, 0); t(i+1) = (ti, ti): 2**60 nodes when written out, a few hundred bytes of pickle
    data = b"\x80\x02K\x00K\x00\x86q\x000"
    for i in range(1, 61):
        data += (b"h" + bytes([i - 1])) * 2 + b"\x86q" + bytes([i]) + (b"0" if i < 60 else b"")
    start = time.monotonic()
    assert code_of(data + b".") == "limit-exceeded"
    assert time.monotonic() - start < 60
    assert isinstance(run(data[:data.index(b"q\x05") + 2] + b"."), tuple)  # 2**5 leaves: fine


def test_huge_integers_are_limited() -> None:
    assert code_of(b"\x80\x02\x8b" + struct.pack("<i", 5000) + b"\x01" * 5000 + b".") == "limit-exceeded"
    assert code_of(b"L" + b"9" * 5000 + b"L\n.") == "limit-exceeded"
    assert run(b"\x80\x02\x8a\x02\x00\x80.") == -(2**15)


# -- globals --------------------------------------------------------------------------------------

def test_strict_mode_rejects_a_global_outside_the_allowlist_where_it_is_named() -> None:
    data = b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00trueR."
    with pytest.raises(FormatError) as e:
        run(data)
    assert (e.value.code, e.value.offset) == ("unsafe-global", 2)


def test_inert_mode_keeps_unknown_globals_and_calls_as_records() -> None:
    data = pickle.dumps(OpaqueLike(3), protocol=2)
    got = run(data, inert=True)
    assert isinstance(got, OpaqueObject) and got.class_name.endswith("OpaqueLike")
    assert got.args == [] and got.state == {"n": 3}
    bare = run(b"\x80\x02cos\nsystem\n.", inert=True)
    assert bare == Global("os", "system")


def test_allowed_value_globals_are_not_callable() -> None:
    assert run(b"\x80\x02ctorch\nfloat32\n.") == Global("torch", "float32")
    assert code_of(b"\x80\x02ctorch\nfloat32\n)R.") == "bad-pickle"


def test_allowed_callables_check_their_arguments() -> None:
    assert code_of(b"\x80\x02ctorch\nSize\nK\x01\x85R.") == "bad-pickle"  # Size(1): not a tuple of ints
    assert code_of(b"\x80\x02c_codecs\nencode\nX\x01\x00\x00\x00aX\x05\x00\x00\x00utf-8\x86R.") == "bad-value"
    size = run(b"\x80\x02ctorch\nSize\nK\x02K\x03\x86\x85R.")
    assert isinstance(size, OpaqueObject) and (size.class_name, size.args) == ("torch.Size", [(2, 3)])


def test_python2_module_names_are_renamed_before_lookup() -> None:
    assert run(b"c__builtin__\nset\n((lp0\nI1\naI2\natR.") == {1, 2}


class OpaqueLike:
    def __init__(self, n: int) -> None:
        self.n = n
