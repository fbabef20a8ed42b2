"""ksy/python_pickle.ksy's opcode enum and argument layouts against the project's opcode table
(torchfmt/pickle/opcodes.py, the one home of the fact) and CPython's pickletools
(spec/pickle.md#pickle-opcodes).
"""

from __future__ import annotations

import pickle
import pickletools
import struct
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

from python_pickle import PythonPickle  # noqa: E402
from torchfmt.pickle import opcodes  # noqa: E402

# Enum ids no target may spell verbatim (`global` is a Python keyword, `tuple` a Nim one; the compiler
# escapes no keyword, test_ksy_ids.py), so the grammar spells them with a suffix.
SPELLING = {"global_opcode": "global", "tuple_opcode": "tuple"}


def _grammar_opcodes() -> dict[str, int]:
    return {SPELLING.get(m.name, m.name).upper(): m.value for m in PythonPickle.Opcode}


def test_enum_matches_the_project_table() -> None:
    assert _grammar_opcodes() == {op.name: op.code for op in opcodes.OPCODES}


def test_enum_matches_pickletools() -> None:
    assert _grammar_opcodes() == {op.name: ord(op.code) for op in pickletools.opcodes}


# One sample argument per argument kind, as bytes, for the kinds whose length the data decides.
SAMPLE_ARGS = {
    "decimalnl_short": b"12\n",
    "decimalnl_long": b"12L\n",
    "floatnl": b"0.5\n",
    "stringnl": b"'ab'\n",
    "stringnl_noescape": b"pid\n",
    "stringnl_noescape_pair": b"torch\nFloatStorage\n",
    "unicodestringnl": b"ab\n",
    "long1": b"\x02\x01\x02",
    "long4": struct.pack("<i", 2) + b"\x01\x02",
    "string1": b"\x02ab",
    "string4": struct.pack("<i", 2) + b"ab",
    "bytes1": b"\x02ab",
    "bytes4": struct.pack("<I", 2) + b"ab",
    "bytes8": struct.pack("<Q", 2) + b"ab",
    "bytearray8": struct.pack("<Q", 2) + b"ab",
    "unicodestring1": b"\x02ab",
    "unicodestring4": struct.pack("<I", 2) + b"ab",
    "unicodestring8": struct.pack("<Q", 2) + b"ab",
}


@pytest.mark.parametrize("op", opcodes.OPCODES, ids=lambda op: op.name)
def test_argument_layout_matches_the_table(op: opcodes.Opcode) -> None:
    """The grammar consumes exactly the argument the table describes, and the next byte is STOP."""
    if op.arg is None:
        arg = b""
    elif op.arg.size > 0:
        arg = bytes(range(1, op.arg.size + 1))
    else:
        arg = SAMPLE_ARGS[op.arg.name]
    stop = b"" if op.name == "STOP" else pickle.STOP
    program = bytes([op.code]) + arg + stop
    parsed = PythonPickle.from_bytes(program)
    assert [o.code.value for o in parsed.ops] == list(bytes([op.code]) + stop)
    assert parsed._io.pos() == len(program)


def test_unknown_opcode_is_rejected() -> None:
    from kaitaistruct import ValidationNotInEnumError

    unused = next(c for c in range(256) if c not in opcodes.BY_CODE)
    with pytest.raises(ValidationNotInEnumError):
        PythonPickle.from_bytes(bytes([unused]) + b".")


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_ops_match_pickletools_genops(protocol: int) -> None:
    """Real pickles of every protocol: same opcodes, positions and simple arguments as genops."""
    value = {"a": [1, -2, 2**70, 0.5, "x\u00e9", b"\x00\xff", None, True, (1, 2)], "b": {1, 2},
             "c": frozenset([3])}
    data = pickle.dumps(value, protocol=protocol)
    parsed = PythonPickle.from_bytes(data)
    want = list(pickletools.genops(data))
    assert [o.code.value for o in parsed.ops] == [ord(op.code) for op, _, _ in want]
    for ours, (op, arg, _) in zip(parsed.ops, want, strict=True):
        if op.name in ("BININT", "BININT1", "BININT2", "BINPUT", "BINGET", "PROTO"):
            assert ours.int_arg == arg
        elif op.name in ("LONG_BINPUT", "LONG_BINGET"):
            assert ours.u4_arg == arg
        elif op.name == "FRAME":
            assert ours.u8_arg == arg
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8"):
            assert ours.arg.value.decode("utf-8", "surrogatepass") == arg
        elif op.name in ("SHORT_BINBYTES", "BINBYTES", "BINBYTES8"):
            assert ours.arg.value == arg
        elif op.name == "BINFLOAT":
            assert ours.float_arg == arg
        elif op.name == "LONG1":
            assert int.from_bytes(ours.arg.value, "little", signed=True) == arg


@pytest.mark.parametrize("protocol", range(1, pickle.HIGHEST_PROTOCOL + 1))
def test_str_arguments_are_bytes_and_keep_lone_surrogates(protocol: int) -> None:
    """CPython pickles a lone surrogate with surrogatepass and loads it back
    (spec/pickle.md#pickle-protocols): the grammar keeps the str arguments as bytes, so it parses them."""
    text = "a\ud800b"
    data = pickle.dumps([text, "x" * 300], protocol=protocol)
    assert pickle.loads(data)[0] == text
    parsed = PythonPickle.from_bytes(data)
    kinds = {"SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8"}
    args = [o.arg.value for o in parsed.ops if SPELLING.get(o.code.name, o.code.name).upper() in kinds]
    assert args and all(isinstance(a, bytes) for a in args)
    assert [a.decode("utf-8", "surrogatepass") for a in args] == [text, "x" * 300]
    with pytest.raises(UnicodeDecodeError):
        args[0].decode("utf-8")
