"""State dicts whose second tensor entry is torch's bytes with one opcode or memo key changed, so that a
reader that takes such entries at once (the reference does: ``fast/pickle_entry.py``, spec/pickle.md:
nothing a reader does for speed changes what a pickle means) must notice the change exactly where the
opcode-by-opcode reading would (spec/pickle.md#pickle-opcodes, spec/pickle.md#pickle-memo,
spec/pickle.md#pickle-limits, spec/pickle.md#pickle-rebuild).

Each case is torch's zip of an ``OrderedDict`` of six float32 2x3 tensors (:mod:`.tensor_runs`'s file)
with ``data.pkl`` edited opcode by opcode (pickletools' reading of torch's bytes, each opcode's bytes
kept unless changed): the first entry is written with the rebuild function's GLOBAL, every later one with
GETs of what the first PUT, so ``l1`` is the first entry a reader may take in one step, and the changes
are made there.  Some changes move a memo key so that a byte next to a changed spot is an opcode (a
LONG_BINGET of key ``0x4B000007`` ends in ``0x4B``, BININT1): a reader that misplaces an argument by one
byte then reads another pickle.  The rejects are refused by torch 2.13 or break a limit; the accepts are
loaded by it, and their expectations are its description.
"""

from __future__ import annotations

import pickle
import pickletools
import struct
from dataclasses import dataclass

from conformance.harness.facts import limit

from . import assemble as a
from . import rawzip, tensor_runs
from .record import AdvCase

GEN = "fast_paths.py"
BASE = ["zip-archive", "state-dict", "pickle-ordered-dict", "pickle-persistent-id", "pickle-memo",
        "pickle-reduce", "pickle-protocol-2", "dtype-float32"]
SPEC = ["pickle.md#pickle-rebuild", "pt-zip.md#pt-zip-data-pkl"]
#: The limits of spec/pickle.md#pickle-limits these cases reach (the spec's table: harness/facts.py)
OPEN_MARKS = limit("OPEN_MARKS")
VALUE_DEPTH = limit("VALUE_DEPTH")
PICKLE_OPCODES = limit("PICKLE_OPCODES")


@dataclass
class Op:
    name: str
    arg: object
    raw: bytes


def _ops(pkl: bytes) -> list[Op]:
    """torch's pickle as its opcodes, each with its own bytes."""
    found = list(pickletools.genops(pkl))
    ends = [pos for _, _, pos in found[1:]] + [found[-1][2] + 1]
    return [Op(op.name, arg, pkl[pos:end]) for (op, arg, pos), end in zip(found, ends, strict=True)]


def _join(ops: list[Op]) -> bytes:
    return b"".join(o.raw for o in ops)


def _long_put(n: int) -> bytes:
    return pickle.LONG_BINPUT + struct.pack("<I", n)


def _long_get(n: int) -> bytes:
    return pickle.LONG_BINGET + struct.pack("<I", n)


class Entry:
    """Where entry ``l<i>`` (its key's BINUNICODE, then the tensor) lies in ``ops``."""

    def __init__(self, ops: list[Op], i: int) -> None:
        self.ops = ops
        self.start = next(j for j, o in enumerate(ops) if o.name == "BINUNICODE" and o.arg == f"l{i}")
        self.persid = next(j for j in range(self.start, len(ops)) if ops[j].name == "BINPERSID")

    def at(self, k: int) -> Op:
        """The opcode ``k`` places after BINPERSID (negative: before it)."""
        return self.ops[self.persid + k]


def _source() -> tuple[list[rawzip.Member], list[Op]]:
    members, _ = tensor_runs._torch_file()
    copy = [rawzip.Member(m.name, m.data) for m in members]
    pkl = next(m for m in copy if m.name.endswith("/data.pkl"))
    return copy, _ops(pkl.data)


def _file(members: list[rawzip.Member], ops: list[Op], records: dict[int, bytes] | None = None) -> bytes:
    for m in members:
        if m.name.endswith("/data.pkl"):
            m.data = _join(ops)
    for k, raw in (records or {}).items():
        next(m for m in members if m.name.endswith(f"/data/{k}")).data = raw
    return rawzip.build(members)


def _remap(ops: list[Op], old: int, new: int) -> None:
    """Move memo key ``old`` to ``new`` (written LONG_BINPUT/LONG_BINGET) at every PUT and GET of it."""
    for o in ops:
        if o.arg == old and o.name in ("BINPUT", "LONG_BINPUT"):
            o.name, o.arg, o.raw = "LONG_BINPUT", new, _long_put(new)
        elif o.arg == old and o.name in ("BINGET", "LONG_BINGET"):
            o.name, o.arg, o.raw = "LONG_BINGET", new, _long_get(new)


def _floats(n: int) -> bytes:
    return struct.pack(f"<{n}f", *(float(i) for i in range(n)))


def _ints(*values: int) -> list[Op]:
    return [Op("INT", v, a.integer(v)) for v in values]


def _tuple(code: bytes) -> Op:
    return Op(pickletools.code2op[code.decode("latin-1")].name, None, code)


def fast_cases() -> list[AdvCase]:
    out: list[AdvCase] = []
    src = tensor_runs._torch_file()[1]

    def case(name: str, data: bytes, errors: list[str], feats: list[str], spec: list[str], how: str,
             why: str = "") -> None:
        out.append(AdvCase(f"pt-zip/adv-fast-{name}", data, errors, BASE + feats, SPEC + spec,
                           f"torch's state dict of six float32 2x3 tensors with entry l1 (the first written "
                           f"with GETs of what l0 PUT) changed: {how}", src, GEN,
                           category="reject" if errors else "accept", why_stricter=why))

    opcodes = ["pickle.md#pickle-opcodes"]
    limits = ["pickle.md#pickle-limits"]
    # -- a text LONG where a binary int goes: torch's weights_only unpickler has no LONG
    members, ops = _source()
    e = Entry(ops, 1)
    numel = e.at(-3)
    assert numel.name == "BININT1" and e.at(-2).name == "TUPLE"
    numel.raw = pickle.LONG + b"6\n"
    long_numel = struct.unpack("<H", b"6\n")[0]  # what BININT2's argument would be: 2614
    case("numel-text-long", _file(members, ops, {1: _floats(long_numel)}), ["bad-value"],
         ["adv-storage-size-mismatch"],
         opcodes + ["pickle.md#pickle-weights-only", "pt-zip.md#pt-zip-storage-records"],
         f"its persistent id's numel BININT1 6 written as the text LONG 'L6\\n' (three bytes, as a BININT2 "
         f"whose argument is {long_numel}), its record l1's storage made {long_numel} elements: numel 6 "
         f"is not the record's size")
    # -- EMPTY_TUPLE where torch writes the rebuild call's two MARKs
    members, ops = _source()
    e = Entry(ops, 1)
    marks = [j for j in range(e.start, e.persid) if ops[j].name == "MARK"]
    assert len(marks) == 2 and marks[1] == marks[0] + 1
    for j in marks:
        ops[j].raw = pickle.EMPTY_TUPLE
    case("marks-as-empty-tuples", _file(members, ops), ["bad-reference"], ["adv-stack-misuse"], opcodes,
         "the two MARKs after its GET of _rebuild_tensor_v2 written as EMPTY_TUPLE: the persistent id's "
         "TUPLE then reaches back to the state dict's MARK")
    # -- a TUPLE2 over three ints (size and stride): the call gets eight arguments
    members, ops = _source()
    e = Entry(ops, 1)
    assert [e.at(k).name for k in range(1, 10)] == ["BININT1", "BININT1", "BININT1", "TUPLE2", "BINPUT",
                                                    "BININT1", "BININT1", "TUPLE2", "BINPUT"]
    ops[e.persid + 2:e.persid + 4] = _ints(1, 2, 3)
    ops[e.persid + 7:e.persid + 9] = _ints(6, 3, 1)
    case("tuple2-of-three-ints", _file(members, ops), ["bad-pickle"], ["adv-stack-misuse"],
         opcodes + ["pickle.md#pickle-globals"],
         "its size (2, 3) written as BININT1 1, 2, 3 then TUPLE2 and its stride (3, 1) as 6, 3, 1 then "
         "TUPLE2: each TUPLE2 takes the last two ints, and _rebuild_tensor_v2 is called with eight arguments")
    # -- a TUPLE2 where the persistent id's TUPLE goes
    members, ops = _source()
    e = Entry(ops, 1)
    pid_tuple = e.at(-2)
    assert pid_tuple.name == "TUPLE"
    pid_tuple.raw = pickle.TUPLE2
    case("persistent-id-tuple2", _file(members, ops), ["bad-reference"], ["adv-stack-misuse"], opcodes,
         "its persistent id's TUPLE written as TUPLE2: the id is ('cpu', 6)")
    # -- a memo key whose last byte is an opcode: the byte after a GET misread by one is BININT2
    members, ops = _source()
    cpu = Entry(ops, 1).at(-4)
    assert cpu.name == "BINGET"
    _remap(ops, cpu.arg, 0x4D000000 | cpu.arg)
    case("location-long-binget-4d", _file(members, ops), [], [],
         ["pickle.md#pickle-memo"],
         f"the memo key of 'cpu' (PUT by l0, got by every later entry) moved from {cpu.arg} to "
         f"0x4D0000{cpu.arg:02X}, written LONG_BINPUT and LONG_BINGET: the GET's last byte is 0x4D "
         f"(BININT2), and the numel BININT1 6 follows it")
    # -- the storage offset a BININT2 whose high byte is BININT1, then EMPTY_TUPLE and a TUPLE2 of one int
    members, ops = _source()
    e = Entry(ops, 1)
    j = e.persid
    assert [o.name for o in ops[j + 1:j + 11]] == ["BININT1", "BININT1", "BININT1", "TUPLE2", "BINPUT",
                                                   "BININT1", "BININT1", "TUPLE2", "BINPUT", "NEWFALSE"]
    stride_put = ops[j + 9]
    ops[j + 1:j + 10] = [Op("BININT2", 0x4B00, pickle.BININT2 + struct.pack("<H", 0x4B00)),
                         _tuple(pickle.EMPTY_TUPLE), *_ints(3), _tuple(pickle.TUPLE2), stride_put]
    case("empty-size-then-tuple2", _file(members, ops), ["bad-pickle"], ["adv-stack-misuse"],
         opcodes + ["pickle.md#pickle-globals"],
         "its storage offset written as BININT2 0x4B00 (its high byte 0x4B is BININT1's opcode), its size as "
         "EMPTY_TUPLE and its stride as BININT1 3 then TUPLE2: the TUPLE2 takes the size () with the 3, "
         "and _rebuild_tensor_v2 is called with five arguments")
    # -- the persistent id's PUT a memo key whose last byte is BININT1, then an offset and a TUPLE2 of one int
    members, ops = _source()
    e = Entry(ops, 1)
    j = e.persid
    pid_put = ops[j - 1]
    assert pid_put.name == "BINPUT"
    pid_put.raw = _long_put(0x4B000000 | pid_put.arg)
    ops[j + 2:j + 9] = [*_ints(6), ops[j + 4], ops[j + 5], *_ints(1), _tuple(pickle.TUPLE1)]
    assert [o.name for o in ops[j + 1:j + 8]] == ["BININT1", "INT", "TUPLE2", "BINPUT", "INT", "TUPLE1",
                                                  "BINPUT"]
    case("offset-after-long-put-4b", _file(members, ops), ["bad-pickle"], ["adv-stack-misuse"],
         opcodes + ["pickle.md#pickle-globals", "pickle.md#pickle-memo"],
         f"its persistent id PUT to memo key 0x4B0000{pid_put.arg:02X} (LONG_BINPUT: its last byte 0x4B is "
         "BININT1's opcode), its size written as BININT1 6 then TUPLE2 and its stride as BININT1 1 then "
         "TUPLE1: the TUPLE2 takes the offset 0 with the 6, and _rebuild_tensor_v2 is called with five "
         "arguments")
    # -- the location written afresh (BINUNICODE 'cpu' PUT) and got by the later entries under that key
    members, ops = _source()
    e = Entry(ops, 1)
    cpu = e.at(-4)
    fresh = 200
    cpu.raw = a.binunicode("cpu") + a.put(fresh)
    for o in ops[e.persid:]:
        if o.name == "BINGET" and o.arg == cpu.arg:
            o.raw = a.get(fresh)
    case("location-fresh-then-got", _file(members, ops), [], [], ["pickle.md#pickle-memo"],
         f"its location written afresh (BINUNICODE 'cpu', PUT to memo key {fresh}) where torch GETs l0's, "
         f"and every later entry's location a GET of key {fresh}")
    # -- a size tuple of the entry nested in tuples to one level past the depth limit, then dropped
    members, ops = _source()
    e = Entry(ops, 1)
    size_put = ops[e.persid + 5]
    assert size_put.name == "BINPUT"
    setitems = next(j for j, o in enumerate(ops) if o.name == "SETITEMS")
    deep = (a.binunicode("deep") + a.get(size_put.arg) + pickle.TUPLE1 * VALUE_DEPTH
            + a.binunicode("deep") + pickle.NONE)
    ops.insert(setitems, Op("RAW", None, deep))
    case("size-nested-past-depth", _file(members, ops), ["limit-exceeded"],
         ["pickle-deep-nesting", "pickle-tuple"],
         limits + ["pickle.md#pickle-nesting"],
         f"one more state dict key 'deep' whose value is its size tuple (2, 3) (a GET of it) inside "
         f"{VALUE_DEPTH} TUPLE1s, nesting {VALUE_DEPTH + 1} deep, then set again to None",
         why="tuples nest past the depth limit when the TUPLE1 that builds them runs, and hashing or "
         "comparing such a tuple recurses in C; torch builds it, and the value is dropped before the end")
    # -- the entry's tensor built with the MARKs open at the limit
    members, ops = _source()
    e = Entry(ops, 1)
    end = next(j for j in range(e.persid, len(ops)) if ops[j].name == "REDUCE" and ops[j - 2].name == "TUPLE")
    tensor_put = ops[end + 1]
    wrap = OPEN_MARKS - 2
    ops.insert(end + 2, Op("RAW", None, pickle.TUPLE * wrap + a.binunicode("l1") + a.get(tensor_put.arg)))
    ops.insert(e.start + 2, Op("RAW", None, pickle.MARK * wrap))
    case("marks-open-at-limit", _file(members, ops), ["limit-exceeded"],
         ["pickle-deep-nesting", "pickle-tuple"], limits,
         f"its tensor built with {wrap} MARKs opened after its key ({wrap + 1} open with the state dict's "
         f"own, and its rebuild call opens two more) and closed by {wrap} TUPLEs after it; "
         f"the key l1 is then set again to the tensor (a GET of it)",
         why=f"at most {OPEN_MARKS} MARKs may be open at once; torch's loader has no such limit")
    # -- the opcode limit reached exactly, and passed by one, with entries taken in one step
    for name, n, errors in (("opcodes-at-limit", PICKLE_OPCODES, []),
                            ("opcodes-one-past-limit", PICKLE_OPCODES + 1, ["limit-exceeded"])):
        members, ops = _source()
        e1, e2 = Entry(ops, 1), Entry(ops, 2)
        again = _join(ops[e1.start:e2.start])  # l1 again: its key, its tensor (the same memo keys PUT)
        setitems = next(j for j, o in enumerate(ops) if o.name == "SETITEMS")
        times, rest = divmod(n - len(ops), e2.start - e1.start)
        # rest opcodes of NONEs (key None: value None), one a PUT if rest is odd (a NONE pushes one item)
        tail = pickle.NONE * (rest - rest % 2) + (a.put(250) if rest % 2 else b"")
        ops.insert(setitems, Op("RAW", None, again * times + tail))
        count = sum(1 for _ in pickletools.genops(_join(ops)))
        assert count == n, (count, n)
        case(name, _file(members, ops), errors, [], limits,
             f"entry l1 (its key and its tensor, the same bytes) written {times} more times before the "
             f"SETITEMS, then {rest - rest % 2} NONEs{' and a PUT' if rest % 2 else ''}: the pickle runs "
             f"{n:,} opcodes (PROTO and STOP included)",
             why=f"a pickle may run at most {PICKLE_OPCODES:,} opcodes; torch's loader has no such limit"
             if errors else "")
    # -- the opcode limit passed inside an entry whose view is out of bounds: the limit comes first
    members, ops = _source()
    e1, e2 = Entry(ops, 1), Entry(ops, 2)
    per, k = e2.start - e1.start, e1.persid - e1.start  # k opcodes of an entry run before its BINPERSID
    offset = e1.at(1)
    assert offset.name == "BININT1" and offset.arg == 0 and e1.at(17).name == "REDUCE"
    again = _join(ops[e1.start:e2.start])
    offset.raw = pickle.BININT1 + bytes([200])
    bad = _join(ops[e1.start:e2.start])  # l1 again, its view at offset 200 of its 6 elements
    offset.raw = pickle.BININT1 + b"\x00"
    setitems = next(j for j, o in enumerate(ops) if o.name == "SETITEMS")
    # before the copies: setitems opcodes, then rest NONEs (a PUT if odd); the last copy's BINPERSID is
    # opcode PICKLE_OPCODES + 1
    times, rest = divmod(PICKLE_OPCODES - setitems - k, per)
    tail = pickle.NONE * (rest - rest % 2) + (a.put(250) if rest % 2 else b"")
    ops.insert(setitems, Op("RAW", None, tail + again * times + bad))
    found = list(pickletools.genops(_join(ops)))
    assert found[PICKLE_OPCODES][0].name == "BINPERSID" and found[PICKLE_OPCODES + 17][0].name == "REDUCE"
    case("opcodes-past-limit-before-bad-view", _file(members, ops), ["limit-exceeded"],
         ["adv-view-out-of-bounds"], limits + ["tensors.md#tensors-view-bounds"],
         f"{rest - rest % 2} NONEs{' and a PUT' if rest % 2 else ''} before the SETITEMS, then entry l1 (its "
         f"key and its tensor, the same bytes) written {times} more times and once more with its storage "
         f"offset 200 (its storage holds 6 elements): opcode {PICKLE_OPCODES + 1:,} is that last entry's "
         "BINPERSID, before the REDUCE whose view reaches outside its storage, so the opcode limit is the "
         "first problem in reading order")
    # -- a storage key that is a GET of something other than a str
    members, ops = _source()
    e = Entry(ops, 1)
    key, key_put, size0_put = e.at(-6), e.at(-5), Entry(ops, 0).at(5)
    assert key.name == "BINUNICODE" and key_put.name == "BINPUT" and size0_put.name == "BINPUT"
    key.raw, key_put.raw = a.get(size0_put.arg), b""
    case("key-got-tuple", _file(members, ops), ["bad-reference"], ["adv-bad-reference"],
         ["pt-zip.md#pt-zip-storage-records"], "its storage key a GET of l0's size tuple (2, 3)")
    return out
