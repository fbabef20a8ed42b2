"""The reader's contract under hostile pickles (spec/pickle.md#pickle-nesting, #pickle-number-text,
#pickle-keys, #pickle-limits, spec/canonical.md#canonical-node-budget, #canonical-surrogates,
#canonical-reader-cli): deep keys never reach a C hash, number text never reaches ``int()``'s own limit,
keys merge as in Python, budgets count what the description writes, and messages quote a bounded prefix.
Files that would crash a process run in a subprocess; nothing here times anything."""

from __future__ import annotations

import io
import itertools
import math
import pickle
import re
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from torchfmt import cli
from torchfmt.describe import describe_document
from torchfmt.errors import FormatError, quote
from torchfmt.limits import INT_DIGITS, NODE_BUDGET, TEXT_BUDGET, VALUE_DEPTH
from torchfmt.model import Document, KeyedObject
from torchfmt.pickle.machine import Limits, Machine, _float_syntax
from torchfmt.walk import json_text_size

REFERENCE = Path(__file__).resolve().parents[1]


def run(data: bytes, **kw: Any) -> Any:
    return Machine(data, **kw).load_exact(0, len(data))


def error(data: bytes, **kw: Any) -> FormatError:
    with pytest.raises(FormatError) as e:
        run(data, **kw)
    return e.value


def described(data: bytes) -> dict[str, Any]:
    return describe_document(Document("pt-zip", [run(data)]))["objects"][0]


def binunicode(s: str) -> bytes:
    raw = s.encode("utf-8", "surrogatepass")
    return pickle.BINUNICODE + struct.pack("<I", len(raw)) + raw


def binfloat(x: float) -> bytes:
    return pickle.BINFLOAT + struct.pack(">d", x)


SIZE_12 = b"ctorch\nSize\nK\x01K\x02\x86\x85R"  # torch.Size((1, 2))
COMPLEX_10 = b"c__builtin__\ncomplex\n" + binfloat(1.0) + binfloat(0.0) + b"\x86R"


def pt_zip(pkl: bytes) -> bytes:
    """A minimal torch zip checkpoint holding ``pkl`` as its data.pkl (no storages)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    return out.getvalue()


def dump(tmp_path: Path, pkl: bytes) -> subprocess.CompletedProcess[str]:
    """``torchfmt dump`` in a subprocess, so that a crash shows as a signal, not a dead test run."""
    path = tmp_path / "f.pt"
    path.write_bytes(pt_zip(pkl))
    return subprocess.run([sys.executable, "-m", "torchfmt", "dump", str(path)], capture_output=True,
                          text=True, env={"PYTHONPATH": str(REFERENCE)}, timeout=120)


# -- nesting: checked where tuples and frozensets are built --------------------------------------------

@pytest.mark.parametrize("container", ["dict-key", "set-item", "frozenset-item"])
def test_a_million_deep_key_is_refused_before_anything_hashes_it(tmp_path: Path, container: str) -> None:
    deep = b")" + b"\x85" * 1_000_000
    pkl = {"dict-key": b"\x80\x02}" + deep + b"K\x01s.",
           "set-item": b"\x80\x04\x8f(" + deep + b"\x90.",
           "frozenset-item": b"\x80\x04(" + deep + b"\x91."}[container]
    r = dump(tmp_path, pkl)
    assert r.returncode == 1, (r.returncode, r.stderr[-300:])
    assert r.stderr.startswith("limit-exceeded: ") and r.stderr.count("\n") == 1


def test_nesting_limit_is_exact_for_tuples() -> None:
    at_limit = b"\x80\x02)" + b"\x85" * (VALUE_DEPTH.value - 1) + b"."
    assert isinstance(run(at_limit), tuple)
    over = b"\x80\x02)" + b"\x85" * VALUE_DEPTH.value + b"."
    assert error(over).code == "limit-exceeded"


def test_a_deep_tuple_is_refused_even_when_the_pickle_discards_it() -> None:
    assert error(b"\x80\x02)" + b"\x85" * 5_000 + b"0N.").code == "limit-exceeded"


def test_deep_equal_keys_compare_without_recursion_error() -> None:
    """Two distinct 999-deep equal tuples as keys: Python compares them element by element."""
    t = b")" + b"\x85" * 998
    d = run(b"\x80\x02}" + t + b"K\x01s" + t + b"K\x02s.")
    assert list(d.values()) == [2]


# -- number text ---------------------------------------------------------------------------------

def test_digit_limit_counts_digits_only() -> None:
    n = INT_DIGITS.value
    assert run(b"L-" + b"9" * n + b"L\n.") == -int("9" * n)
    assert run(b"I-" + b"9" * n + b"\n.") == -int("9" * n)
    assert error(b"L-" + b"9" * (n + 1) + b"L\n.").code == "limit-exceeded"


@pytest.mark.parametrize("text", ["²", "١", "1_0", " 1", "+1", "010", "-0", "0x10", "1 "])
def test_int_text_outside_the_ascii_grammar_is_bad_value(text: str) -> None:
    assert error(b"I" + text.encode() + b"\n.").code == "bad-value"


@pytest.mark.parametrize(("text", "value"), [("NaN", math.nan), ("-Infinity", -math.inf), ("inf", math.inf),
                                             ("1e-999", 0.0), (".5", 0.5), ("1.", 1.0), ("+2E3", 2000.0)])
def test_float_text_read_as_c_pickle_reads_it(text: str, value: float) -> None:
    got = run(b"F" + text.encode() + b"\n.")
    assert (math.isnan(got) and math.isnan(value)) or got == value
    assert pickle.loads(b"F" + text.encode() + b"\n.") == got or math.isnan(got)  # C _pickle agrees


@pytest.mark.parametrize("text", ["1e999", "-1e400", "1_0.5", " 1.5", "0x1p3", "١.٥", "infinit", "nanx"])
def test_float_text_c_pickle_refuses_is_bad_value(text: str) -> None:
    assert error(b"F" + text.encode() + b"\n.").code == "bad-value"
    with pytest.raises((ValueError, OverflowError)):
        pickle.loads(b"F" + text.encode() + b"\n.")  # C _pickle refuses it too


#: FLOAT's grammar as spec/pickle.md#pickle-number-text writes it.
FLOAT_GRAMMAR = re.compile(rb"[+-]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|inf|infinity|nan)", re.I)


def test_float_syntax_is_the_spec_grammar() -> None:
    alphabet = [b"1", b"0", b".", b"e", b"E", b"+", b"-", b"x", b"i", b"n", b"f", b"a", b" ", b"_", b"\xd9"]
    for n in range(5):
        for chars in itertools.product(alphabet, repeat=n):
            text = b"".join(chars)
            assert _float_syntax(text) == bool(FLOAT_GRAMMAR.fullmatch(text)), text
    for word in (b"Infinity", b"-INF", b"+nan", b"infinit", b"nanx", b"infinityy"):
        assert _float_syntax(word) == bool(FLOAT_GRAMMAR.fullmatch(word)), word


def test_a_16_mb_float_text_that_ends_badly_is_bad_value() -> None:
    assert error(b"F" + b"1" * 16_000_000 + b"x\n.").code == "bad-value"


def test_explicit_proto_0_declares_protocol_1() -> None:
    assert run(b"\x80\x00K\x05.") == 5
    assert error(b"\x80\x00\x88.").code == "bad-opcode"


# -- keys merge as in Python ---------------------------------------------------------------------

def test_size_and_tuple_are_one_key_keeping_the_first_key_object() -> None:
    d = described(b"\x80\x02}(K\x01K\x02\x86X\x01\x00\x00\x00a" + SIZE_12 + b"X\x01\x00\x00\x00bu.")
    assert d["items"] == [[{"type": "tuple", "items": [{"type": "int", "value": "1"},
                                                       {"type": "int", "value": "2"}]},
                           {"type": "str", "value": "b"}]]


def test_int_complex_true_float_are_one_key_with_the_last_value() -> None:
    d = run(b"\x80\x02}(K\x01K\x0a" + COMPLEX_10 + b"K\x0b\x88K\x0c" + binfloat(1.0) + b"K\x0du.")
    assert list(d.items()) == [(1, 13)] and type(next(iter(d))) is int


def test_nan_keys_are_distinct_unless_one_object() -> None:
    nan = binfloat(math.nan)
    assert len(run(b"\x80\x02}(" + nan + b"K\x01" + nan + b"K\x02u.")) == 2
    assert len(run(b"\x80\x02}(" + nan + b"q\x00K\x01h\x00K\x02u.")) == 1


def test_normal_forms_of_size_and_complex() -> None:
    size = run(b"\x80\x02ctorch\nSize\n]q\x00(K\x03K\x04e\x85R.")  # torch.Size([3, 4]): a list argument
    assert isinstance(size, KeyedObject) and size.args == [(3, 4)] and size == (3, 4)
    c = run(b"\x80\x02c__builtin__\ncomplex\nK\x02\x85R.")  # complex(2)
    assert c.args == [2.0, 0.0] and all(type(x) is float for x in c.args) and c == 2


# -- budgets count what the description writes ---------------------------------------------------

def test_json_text_size_is_the_length_json_writes() -> None:
    import json
    for s in ["abc", 'a"b', "a\\b", "\x01", "é", "\U0001f600", "\udc80", "\x7f", ""]:
        assert json_text_size(s) == len(json.dumps(s))


def test_a_values_texts_are_counted_as_json_writes_each() -> None:
    """The short strs among a value's children are escaped as one (machine._texts): the sum is what
    json.dumps writes for each, whatever lies next to what (escapes, surrogates, astral characters)."""
    import json
    import random

    from torchfmt.pickle.machine import _texts

    rng = random.Random(12)
    alphabet = ["a", '"', "\\", "\n", "\x00", "\x7f", "é", "\ud800", "\udc00", "\U0001f600", "\u2028"]
    for _ in range(3_000):
        kids: list[Any] = []
        for _ in range(rng.randrange(8)):
            k = rng.random()
            if k < 0.6:
                n = rng.choice([0, 1, 3, 255, 256, 300])
                kids.append("".join(rng.choice(alphabet) for _ in range(n)))
            elif k < 0.8:
                kids.append(rng.choice([b"xy", bytearray(3), b""]))
            else:
                kids.append(rng.choice([1, None, 2.5, ("a",)]))
        expected = sum(len(json.dumps(c)) if isinstance(c, str) else 2 * len(c) + 2
                       for c in kids if type(c) in (str, bytes, bytearray))
        assert _texts(kids, {}) == expected, kids


def test_text_budget_counts_escaped_output_at_every_reference() -> None:
    s = "\U0001f600" * 1_000  # 12,002 bytes of JSON, 1,000 code points
    times = TEXT_BUDGET.value // 12_002 + 1
    pkl = (b"\x80\x02" + binunicode(s) + b"q\x000](" + b"h\x00" * times + b"e.")
    assert error(pkl).code == "limit-exceeded"
    assert 1_000 * times < TEXT_BUDGET.value  # a code-point count would have let it through


def test_node_budget_applies_to_tuples_written_in_full() -> None:
    inner = b"(" + b"N" * 1_000 + b"tq\x000"
    n = NODE_BUDGET.value // 1_001 + 1
    assert error(b"\x80\x02" + inner + b"(" + b"h\x00" * n + b"t.").code == "limit-exceeded"


def test_opcode_budget() -> None:
    limits = Limits(max_opcodes=1_000)
    assert run(b"N" + b"N0" * 400 + b".", limits=limits) is None
    assert error(b"N" + b"N0" * 600 + b".", limits=limits).code == "limit-exceeded"


def test_a_16_mb_pop_loop_is_refused_by_the_opcode_budget(tmp_path: Path) -> None:
    r = dump(tmp_path, b"\x80\x02N" + b"N0" * 8_000_000 + b".")
    assert r.returncode == 1 and r.stderr.startswith("limit-exceeded: ")


def test_limit_wins_over_truncation() -> None:
    assert error(b"\x80\x02\x8b\xff\xff\xff\x7f\x00.").code == "limit-exceeded"


# -- strings and messages ------------------------------------------------------------------------

def test_surrogate_pair_is_refused_lone_surrogates_are_kept() -> None:
    assert error(b"\x80\x02" + binunicode("\ud83d\ude00") + b".").code == "bad-value"
    assert run(b"\x80\x02" + binunicode("\ude00\ud83d") + b".") == "\ude00\ud83d"
    assert run(b"\x80\x02" + binunicode("\U0001f600") + b".") == "\U0001f600"


def test_quote_is_short_escaped_and_never_recurses() -> None:
    t: Any = ()
    for _ in range(200_000):
        t = (t,)
    for v in (t, "x\n" * 10**6, b"\x00" * 10**6, 10**100_000, {i: [i] * 9 for i in range(100)}):
        q = quote(v)
        assert len(q) <= 130 and "\n" not in q and q.isascii()


def test_unsafe_global_message_is_one_line_and_names_inert() -> None:
    e = error(b"c" + b"m" * 100_000 + b"\nx\n.")
    assert e.code == "unsafe-global" and len(e.line()) < 300 and "--inert" in e.line()


def test_a_reader_bug_is_still_one_line(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    deep: Any = ()
    for _ in range(100_000):
        deep = (deep,)

    def broken(*args: Any, **kw: Any) -> None:
        raise ValueError(deep)

    monkeypatch.setattr(cli, "describe", broken)
    assert cli.main(["dump", "/dev/null"]) == 2  # exit 0, 1 or 2 only, whatever happens
    err = capsys.readouterr().err
    assert err.startswith("unsupported: internal-error (ValueError: ") and err.count("\n") == 1
    assert len(err) < 200


def test_calls_handed_a_memoized_list_again_and_again_are_refused() -> None:
    big = b"](" + b"K\x07" * 1_000 + b"eq\x000"  # a 1,000-item list in memo 0
    call = b"c__builtin__\nset\nh\x00\x85R0"  # set(memo 0), discarded
    limits = Limits(max_call_work=50_000)
    assert run(b"\x80\x02" + big + call * 40 + b"N.", limits=limits) is None
    assert error(b"\x80\x02" + big + call * 60 + b"N.", limits=limits).code == "limit-exceeded"


def test_build_state_counts_as_call_work() -> None:
    keys = b"".join(b"X\x01\x00\x00\x00" + bytes([97 + i]) + b"N" for i in range(26))
    state = b"}(" + keys + b"uq\x000"
    od = b"ccollections\nOrderedDict\n)R"
    limits = Limits(max_call_work=500)
    assert error(b"\x80\x02" + state + (od + b"h\x00b0") * 30 + b"N.", limits=limits).code == "limit-exceeded"


def test_views_of_one_storage_are_bounded_before_anything_is_hashed() -> None:
    from torchfmt import limits
    from torchfmt.dtypes import BY_NAME
    from torchfmt.model import Storage, Tensor

    fits = 4 + limits.VIEW_BYTES.value // 4_000_000  # 4 MB views: 4 times the storage plus VIEW_BYTES
    s = Storage(BY_NAME["float32"], 1_000_000)
    views = [Tensor(BY_NAME["float32"], (1_000_000,), (1,), 0, s) for _ in range(fits + 1)]
    with pytest.raises(FormatError) as e:
        describe_document(Document("pt-zip", [views]))
    assert e.value.code == "limit-exceeded"
    s2 = Storage(BY_NAME["float32"], 1_000_000)
    ok = describe_document(Document("pt-zip", [[Tensor(BY_NAME["float32"], (1_000_000,), (1,), 0, s2)
                                                 for _ in range(fits)]]))
    assert len(ok["objects"][0]["items"]) == fits


@pytest.mark.parametrize("error", [MemoryError(), RecursionError("maximum recursion depth exceeded")])
def test_running_out_of_memory_or_stack_is_a_limit_not_a_crash(
        error: Exception, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def broken(*args: Any, **kw: Any) -> None:
        raise error

    monkeypatch.setattr(cli, "describe", broken)
    assert cli.main(["dump", "/dev/null"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("limit-exceeded: Python ") and err.count("\n") == 1


def test_a_path_that_cannot_be_read_is_declined_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["dump", str(tmp_path)]) == 2  # a folder
    assert cli.main(["dump", str(tmp_path / "missing.pt")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("unsupported: not-a-regular-file (a directory: ")
    assert len(err) == 2 and err[1].startswith("unsupported: missing-input (no such file: ")
