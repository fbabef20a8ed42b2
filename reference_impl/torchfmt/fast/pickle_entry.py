"""The machine's fast path for the opcodes ``torch.save`` writes for one dense tensor (issue 12).

Nothing here changes what a pickle means (spec/pickle.md): it is how :class:`~torchfmt.pickle.machine.
Machine` runs one very common opcode sequence.  From the GET of ``torch._utils._rebuild_tensor_v2`` to the
PUT of its result, torch's pickler (protocol 2) writes, for every tensor after the first::

    GET rebuild  MARK  MARK  GET 'storage'  GET <storage type>  (BINUNICODE key PUT | GET key)
    (BINUNICODE location PUT | GET location)  <int numel>  TUPLE PUT  BINPERSID
    <int offset>  <ints size> [PUT]  <ints stride> [PUT]  NEWFALSE|NEWTRUE
    GET OrderedDict  EMPTY_TUPLE  REDUCE PUT  TUPLE PUT  REDUCE PUT

where an int is BININT1, BININT2 or BININT and a tuple of ints is EMPTY_TUPLE, TUPLE1-3 or MARK ...
TUPLE (each but the empty one followed by a PUT); in a state_dict the entry's key, BINUNICODE PUT, comes
just before and is taken with it.  :func:`run` recognizes exactly that sequence and does
what the machine's opcodes would do, in one step: the same memo entries, tuple nesting records, opcode and
call-work counts, the same ``persistent_load`` call and the same allowlisted handler with the same offsets.

It declines — returns 0 having changed nothing — when any opcode of the sequence could fail or act other
than in that common case (a memo key never PUT or PUT within the sequence, a global other than the two
named, a text that does not decode, a protocol below 2, a limit the sequence would reach, the pickle's
end); the machine then runs the opcodes one at a time and reports the error itself.  The only errors
raised from here are those of ``persistent_load`` and of the rebuild function, which the machine would
raise at the same opcode with the same offset.  The machine calls :func:`run` only when
:data:`torchfmt.fast.ENABLED`; the two allowlist entries come from the machine (:meth:`Running.allowed`),
so that the allowlist stays the one place a global is resolved (spec/pickle.md#pickle-globals).
``reference_impl/tests/test_tensor_entry.py`` checks that every committed, corpus and fuzz case reads the
same with the fast path and without it.
"""

from __future__ import annotations

import collections
import struct
from typing import TYPE_CHECKING, Any

from ..errors import FormatError, Unsupported
from ..model import Global, Storage
from . import pickle_run

if TYPE_CHECKING:
    from .running import Allowed, Running

_BINGET, _LONG_BINGET = 0x68, 0x6A  # h, j
_BINPUT, _LONG_BINPUT = 0x71, 0x72  # q, r
_BININT1, _BININT2, _BININT = 0x4B, 0x4D, 0x4A  # K, M, J
_MARK, _TUPLE, _EMPTY_TUPLE = 0x28, 0x74, 0x29  # ( t )
_TUPLE1, _TUPLE2, _TUPLE3 = 0x85, 0x86, 0x87
_NEWTRUE, _NEWFALSE = 0x88, 0x89
_BINUNICODE, _BINPERSID, _REDUCE = 0x58, 0x51, 0x52  # X Q R
_TUPLE_N = {_TUPLE1: 1, _TUPLE2: 2, _TUPLE3: 3}
_INTS = (_BININT1, _BININT2, _BININT)
_PUTS = (_BINPUT, _LONG_BINPUT)
_GETS = (_BINGET, _LONG_BINGET)

_U16 = struct.Struct("<H")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")

REBUILD = ("torch._utils", "_rebuild_tensor_v2")
ORDERED_DICT = ("collections", "OrderedDict")
#: Arguments of ``_rebuild_tensor_v2`` without metadata: what the call work counts beyond the tuples.
_ARGS = 6


class _Decline(Exception):
    """The sequence is not the common one: the machine runs it opcode by opcode."""


def _is(v: Any, name: tuple[str, str]) -> bool:
    return type(v) is Global and v.name == name[1] and v.module == name[0]


def run(m: Running, pos: int, ran: int) -> int:
    """Run the tensor sequence at ``pos`` (a GET, or a state_dict key's BINUNICODE PUT before it) if it is
    one: the number of opcodes it took, else 0 with the machine unchanged.  ``ran`` is the number of
    opcodes run before it."""
    try:
        seq = _read(m, pos)
    except (_Decline, IndexError, struct.error, FormatError, Unsupported):
        return 0
    ops, size, stride = seq[3], seq[13], seq[14]
    limits = m.limits
    m_work = m.work
    work = m_work + 2 + _ARGS + len(size or ()) + len(stride or ())
    entry = m.allowed(*REBUILD)
    if (ran + ops > limits.max_opcodes or len(m.metastack) + 2 > limits.max_marks
            or work > limits.max_call_work or limits.max_depth < 2 or entry is None or entry.handler is None
            or entry.role != "callable" or m.allowed(*ORDERED_DICT) is None):
        return 0
    _effects(m, seq, entry, work)
    keyed, key_fresh, location_fresh = seq[18], seq[7], seq[9]
    if not (keyed and key_fresh and not location_fresh):
        return ops
    lay = pickle_run.layout(m, pos, m.pos, None if size is None else len(size),
                            None if stride is None else len(stride), ops, work - m_work,
                            (seq[4], seq[5], seq[8], seq[15]))
    if lay is None:
        return ops
    return ops + pickle_run.take(m, lay, entry, ran + ops)


def _effects(m: Running, seq: tuple[Any, ...], entry: Allowed, work: int) -> None:
    """Do what the sequence's opcodes do, in their order (nothing before this changed the machine).

    Tuples are recorded by :meth:`Machine.made_hashable`, as :meth:`Machine.tuple_of` records them, with
    their nesting given rather than computed: the
    persistent id's items are a str, a global, two strs and an int (:func:`_read` checked), a size or
    stride holds ints, so each nests 1 deep, and the argument tuple 2 unless ``persistent_load`` returned
    a tuple or frozenset."""
    (puts, last_put, end, _, tag, stype, key, key_fresh, location, location_fresh, numel, persid_at, offset,
     size, stride, requires_grad, hooks_at, reduce_at, keyed, dict_key) = seq
    memo = m.memo
    i = 0
    if keyed:
        memo[puts[0]] = dict_key
        m.stack.append(dict_key)
        i = 1
    if key_fresh:
        memo[puts[i]] = key
        i += 1
    if location_fresh:
        memo[puts[i]] = location
        i += 1
    pid = m.made_hashable((tag, stype, key, location, numel), 1)
    memo[puts[i]] = pid
    i += 1
    m.at = persid_at
    storage = m.persistent(pid)
    views: list[tuple[int, ...]] = []
    for ints in (size, stride):  # EMPTY_TUPLE pushes () unrecorded; TUPLEn and MARK..TUPLE record theirs
        if ints is not None:
            m.made_hashable(ints, 1)
            memo[puts[i]] = ints
            i += 1
        views.append(() if ints is None else ints)
    size, stride = views
    m.work += 1  # the OrderedDict() call: one for its empty argument tuple
    m.at = hooks_at
    hooks: collections.OrderedDict[Any, Any] = collections.OrderedDict()
    memo[puts[i]] = hooks
    if type(storage) is Storage:
        args = m.made_hashable((storage, offset, size, stride, requires_grad, hooks), 2)
    else:
        args = m.tuple_of([storage, offset, size, stride, requires_grad, hooks])
    memo[puts[i + 1]] = args
    m.work = work
    m.at = reduce_at
    if type(storage) is not Storage:  # every other argument's kind is given by its opcodes
        entry.check_args(args, reduce_at)
    tensor = entry.handler(args, m.call_context())
    memo[puts[i + 2]] = tensor
    m.stack.append(tensor)
    m.at = last_put
    m.pos = end


def _get(buf: Any, p: int, memo: dict[int, Any], got: list[int]) -> tuple[Any, int]:
    code = buf[p]
    if code == _BINGET:
        key, p = buf[p + 1], p + 2
    elif code == _LONG_BINGET:
        key, p = _U32.unpack_from(buf, p + 1)[0], p + 5
    else:
        raise _Decline
    if key not in memo:
        raise _Decline
    got.append(key)
    return memo[key], p


def _put(buf: Any, p: int, puts: list[int]) -> int:
    code = buf[p]
    if code == _BINPUT:
        puts.append(buf[p + 1])
        return p + 2
    if code == _LONG_BINPUT:
        puts.append(_U32.unpack_from(buf, p + 1)[0])
        return p + 5
    raise _Decline


def _int(buf: Any, p: int) -> tuple[int, int]:
    code = buf[p]
    if code == _BININT1:
        return buf[p + 1], p + 2
    if code == _BININT2:
        return _U16.unpack_from(buf, p + 1)[0], p + 3
    if code == _BININT:
        return _I32.unpack_from(buf, p + 1)[0], p + 5
    raise _Decline


def _str(m: Running, p: int, got: list[int], puts: list[int]) -> tuple[Any, bool, int]:
    """A str written afresh (BINUNICODE PUT) or fetched (GET): (value, fresh, offset after)."""
    buf = m.buf
    if buf[p] != _BINUNICODE:
        v, p = _get(buf, p, m.memo, got)
        if type(v) is not str:
            raise _Decline
        return v, False, p
    n = _U32.unpack_from(buf, p + 1)[0]
    if p + 5 + n > m.end:
        raise _Decline
    s = m.text(buf[p + 5:p + 5 + n], "utf-8", "surrogatepass")  # FormatError: declined
    return s, True, _put(buf, p + 5 + n, puts)


def _ints(buf: Any, p: int, puts: list[int]) -> tuple[tuple[int, ...] | None, int, int]:
    """A tuple of ints: (items, opcodes, offset after); items is None for EMPTY_TUPLE (no PUT)."""
    code = buf[p]
    if code == _EMPTY_TUPLE:
        return None, 1, p + 1
    marked = code == _MARK
    q = p + marked
    items: list[int] = []
    while buf[q] in _INTS:
        v, q = _int(buf, q)
        items.append(v)
    code = buf[q]
    if (code != _TUPLE) if marked else (_TUPLE_N.get(code) != len(items)):
        raise _Decline
    return tuple(items), len(items) + 2 + marked, _put(buf, q + 1, puts)


def _read(m: Running, pos: int) -> tuple[Any, ...]:
    """Read the sequence at ``pos`` without changing the machine; :class:`_Decline` if it is not one.
    The tuple: (memo keys PUT in order, offset of the last PUT, offset after it, opcodes, the persistent
    id's five items with whether key and location were fresh, BINPERSID's offset, the view's offset,
    size, stride (None: EMPTY_TUPLE, no PUT), requires_grad, the hooks REDUCE's and the rebuild REDUCE's
    offsets)."""
    buf, memo = m.buf, m.memo
    if m.proto is None or m.proto < 2:
        raise _Decline
    got: list[int] = []  # memo keys the sequence reads: one it also PUTs declines
    puts: list[int] = []
    keyed = buf[pos] == _BINUNICODE
    dict_key = None
    if keyed:  # a state_dict entry's key first: BINUNICODE PUT, then the GET of the rebuild function
        after = pos + 5 + _U32.unpack_from(buf, pos + 1)[0]
        if buf[after] not in _PUTS or buf[after + (2 if buf[after] == _BINPUT else 5)] not in _GETS:
            raise _Decline
        dict_key, _, pos = _str(m, pos, got, puts)
    fn, p = _get(buf, pos, memo, got)
    if not _is(fn, REBUILD) or buf[p] != _MARK or buf[p + 1] != _MARK:
        raise _Decline
    tag, p = _get(buf, p + 2, memo, got)
    stype, p = _get(buf, p, memo, got)
    if type(tag) is not str or type(stype) is not Global:
        raise _Decline
    key, key_fresh, p = _str(m, p, got, puts)
    location, location_fresh, p = _str(m, p, got, puts)
    numel, p = _int(buf, p)
    if buf[p] != _TUPLE:
        raise _Decline
    p = _put(buf, p + 1, puts)
    persid_at = p
    if buf[p] != _BINPERSID:
        raise _Decline
    offset, p = _int(buf, p + 1)
    size, size_ops, p = _ints(buf, p, puts)
    stride, stride_ops, p = _ints(buf, p, puts)
    code = buf[p]
    if code != _NEWTRUE and code != _NEWFALSE:
        raise _Decline
    hooks_fn, p = _get(buf, p + 1, memo, got)
    if not _is(hooks_fn, ORDERED_DICT) or buf[p] != _EMPTY_TUPLE or buf[p + 1] != _REDUCE:
        raise _Decline
    hooks_at = p + 1
    p = _put(buf, p + 2, puts)
    if buf[p] != _TUPLE:
        raise _Decline
    p = _put(buf, p + 1, puts)
    reduce_at = p
    if buf[p] != _REDUCE:
        raise _Decline
    last_put = p + 1
    p = _put(buf, p + 1, puts)
    if p > m.end or not set(got).isdisjoint(puts):
        raise _Decline
    # GET MARK MARK GET GET <key> <location> <numel> TUPLE PUT BINPERSID <offset> <size> <stride> <bool>
    # GET EMPTY_TUPLE REDUCE PUT TUPLE PUT REDUCE PUT
    ops = 19 + 2 * keyed + (1 + key_fresh) + (1 + location_fresh) + size_ops + stride_ops
    return (puts, last_put, p, ops, tag, stype, key, key_fresh, location, location_fresh, numel, persid_at,
            offset, size, stride, code == _NEWTRUE, hooks_at, reduce_at, keyed, dict_key)
