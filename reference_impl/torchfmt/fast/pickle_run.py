"""Runs of state_dict entries laid out as entries already taken, taken in one loop (issue 12).

:func:`torchfmt.fast.pickle_entry.run` takes one tensor entry (its key, then the opcodes ``torch.save``
writes for a dense tensor) at a time, returning to the machine's dispatch after each and reading the
next with a dozen small parsers.  Once it has taken an entry whose key, storage key and location are laid
out as torch writes them after the first (key and storage key ``BINUNICODE PUT``, everything else a
``GET`` of a memo key an earlier entry PUT), :func:`layout` gives that entry's :class:`Layout`: the
entry split at its two strings into two fixed-size parts, each unpacked with one ``struct`` format,
whose opcodes and ``GET`` keys must equal the taken entry's and whose memo keys, ints and string
lengths may differ.  The machine keeps the layouts made (a weight's and its bias's, say), and
:func:`take` takes the following entries that fit one of them in one loop, with the same effects as
:func:`~torchfmt.fast.pickle_entry._effects` (the same memo entries, nesting records, opcode and
call-work counts, ``persistent_load`` calls, offsets and errors) (spec/pickle.md: nothing here changes
what a pickle means).  The first entry that fits none, or that could fail or act otherwise (a key that
does not decode or is not ASCII, a memo key PUT that a layout GETs, a limit reached, the pickle's end),
ends the run, and the machine reads it as before.

A layout is used only while its ``GET`` keys fetch the values they fetched when it was made (the rebuild
function and ``OrderedDict`` globals, the ``'storage'`` tag, a storage type, a location, all checked
when that entry was taken), and no entry of a run may PUT one of them, so each entry needs only the
checks that depend on what differs: its storage key, element count and view.  A view with the geometry
of one :func:`~torchfmt.pickle.rebuild.rebuild_tensor_v2` accepted before with the same layout, over a
storage of the same type and size, is accepted again without running the checks (they depend on
nothing else), and its :class:`~torchfmt.model.Tensor` is made as that function makes it.
``reference_impl/tests/test_tensor_entry.py`` checks that files read the same with runs and without.
"""

from __future__ import annotations

import collections
import struct
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from ..model import Storage, Tensor

if TYPE_CHECKING:
    from collections.abc import Callable

    from .running import Allowed, Running

_BINUNICODE = 0x58
#: Argument formats of the opcodes a layout holds (struct codes); ``None``: no argument.
_ARGS: dict[int, str | None] = {
    0x68: "B", 0x6A: "I",  # BINGET, LONG_BINGET
    0x71: "B", 0x72: "I",  # BINPUT, LONG_BINPUT
    0x4B: "B", 0x4D: "H", 0x4A: "i",  # BININT1, BININT2, BININT
    0x28: None, 0x74: None, 0x29: None, 0x85: None, 0x86: None, 0x87: None,  # MARK TUPLE EMPTY_TUPLE TUPLE1-3
    0x88: None, 0x89: None, 0x51: None, 0x52: None,  # NEWTRUE NEWFALSE BINPERSID REDUCE
}
_GETS = (0x68, 0x6A)
_PUTS = (0x71, 0x72)
_U32 = struct.Struct("<I")


@dataclass(frozen=True)
class _Part:
    """A fixed-size stretch of an entry: its format, which of its fields must equal the taken entry's
    (opcodes and GET keys) and their values, which vary (memo keys PUT, ints, a string's length), and
    where each opcode lies from the part's start."""

    format: struct.Struct
    fixed: Callable[[tuple[Any, ...]], Any]
    expected: tuple[Any, ...]
    varying: Callable[[tuple[Any, ...]], Any]
    gets: tuple[int, ...]
    codes: tuple[tuple[int, int], ...]  # (opcode, offset from the part's start)


def _part(buf: Any, p: int, stop: int) -> tuple[_Part, int]:
    """The part from ``p`` up to the next BINUNICODE (its length included) or to ``stop``: (part, offset
    after it).  :class:`KeyError` for an opcode a layout does not hold."""
    fmt, values, fixed, varying, gets, codes = ["<"], [], [], [], [], []
    start = p
    while p < stop:
        code = buf[p]
        codes.append((code, p - start))
        fixed.append(len(values))
        values.append(code)
        fmt.append("B")
        if code == _BINUNICODE:
            fmt.append("I")
            varying.append(len(values))
            values.append(_U32.unpack_from(buf, p + 1)[0])
            p += 5
            break
        arg = _ARGS[code]
        p += 1
        if arg is not None:
            s = struct.Struct("<" + arg)
            v = s.unpack_from(buf, p)[0]
            (fixed if code in _GETS else varying).append(len(values))
            if code in _GETS:
                gets.append(v)
            values.append(v)
            fmt.append(arg)
            p += s.size
    return _Part(struct.Struct("".join(fmt)), itemgetter(*fixed), itemgetter(*fixed)(values),
                 itemgetter(*varying), tuple(gets), tuple(codes)), p


class Layout:
    """An entry's layout: ``key`` (the fixed part from the key's PUT through the storage key's length)
    and ``view`` (from the storage key's PUT to the entry's end), what an entry counts, where in
    ``view`` its BINPERSID, its last REDUCE and its last PUT lie, the values its GETs fetched when it
    was made (``got``: memo key and value; ``taken``: tag, storage type, location, requires_grad), and
    what :func:`take` keeps between entries: the view geometry last accepted, the last size and stride
    made, and the layout that followed this one last (a weight, then its bias)."""

    def __init__(self, key: _Part, view: _Part, n_size: int | None, n_stride: int | None, ops: int,
                 work: int, persid_at: int, reduce_at: int, last_put: int, got: tuple[tuple[int, Any], ...],
                 taken: tuple[Any, ...]) -> None:
        self.key, self.view = key, view
        self.gets = frozenset(k for k, _ in got)
        self.got, self.taken = got, taken
        # the varying fields of the view part: storage key PUT, numel, pid PUT, offset, size ints [PUT],
        # stride ints [PUT], hooks PUT, arguments PUT, tensor PUT
        size_end = 4 + (n_size or 0)
        stride_at = size_end + (n_size is not None)
        stride_end = stride_at + (n_stride or 0)
        # the memo keys the view part PUTs: storage key, pid, size and stride (unless EMPTY_TUPLE), hooks,
        # arguments, tensor
        view_puts = itemgetter(0, 2, *([size_end] if n_size is not None else []),
                               *([stride_end] if n_stride is not None else []), -3, -2, -1)
        #: what :func:`take` binds to locals while the entries are laid out as this
        self.locals = (key.format, key.fixed, key.expected, key.varying, key.format.size, view.format,
                       view.fixed, view.expected, view.varying, view.format.size, view_puts, ops, work,
                       n_size, n_stride, size_end, stride_at, stride_end, persid_at, reduce_at, last_put,
                       *taken)
        self.head: tuple[Any, str] | None = None  # the storage's dtype and device, for StorageRecords.named
        self.checked: tuple[Any, ...] | None = None  # (numel, dtype, offset, size, stride) of a view accepted
        # the last size and stride made: an equal one is that tuple again (the first always a new record:
        # the empty tuple is one object, which the machine records when a MARK TUPLE makes it)
        self.last_size: tuple[int, ...] | None = None
        self.last_stride: tuple[int, ...] | None = None
        self.next: Layout | None = None

    def holds(self, memo: dict[int, Any]) -> bool:
        """Whether its GETs still fetch the values they fetched when it was made."""
        return all(memo.get(k, memo) is v for k, v in self.got)

    def fits(self, buf: Any, p: int) -> int:
        """Where the entry at ``p`` ends if it is laid out as this one, else -1 (bounds not checked)."""
        key, view = self.key, self.view
        try:
            if buf[p] != _BINUNICODE:
                return -1
            q = p + 5 + _U32.unpack_from(buf, p + 1)[0]
            k = key.format.unpack_from(buf, q)
            if key.fixed(k) != key.expected:
                return -1
            r = q + key.format.size + key.varying(k)[1]
            if view.fixed(view.format.unpack_from(buf, r)) != view.expected:
                return -1
        except (IndexError, struct.error):
            return -1
        return r + view.format.size


#: Layouts a machine keeps (the first made are dropped past it).
MAX_LAYOUTS = 16


def layout(m: Running, start: int, end: int, n_size: int | None, n_stride: int | None, ops: int, work: int,
           taken: tuple[Any, ...]) -> Layout | None:
    """The layout of the entry just taken at ``buf[start:end]``: one the machine has made before that
    fits it and still holds, else a new one (kept by the machine); None if the entry holds an opcode a
    layout does not (see :data:`_ARGS`) or its strings lie elsewhere."""
    buf, memo = m.buf, m.memo
    for lay in m.layouts:
        if lay.fits(buf, start) == end and lay.holds(memo):
            return lay
    try:
        p = start + 5 + _U32.unpack_from(buf, start + 1)[0]
        key, p = _part(buf, p, end)
        if key.codes[-1][0] != _BINUNICODE:
            return None
        view, p = _part(buf, p + _U32.unpack_from(buf, p - 4)[0], end)
    except KeyError:
        return None
    codes = view.codes
    if p != end or any(c == _BINUNICODE for c, _ in codes):
        return None
    lay = Layout(key, view, n_size, n_stride, ops, work, next(at for c, at in codes if c == 0x51),
                 max(at for c, at in codes if c == 0x52), max(at for c, at in codes if c in _PUTS),
                 tuple((k, memo[k]) for k in dict.fromkeys(key.gets + view.gets)), taken)
    if len(m.layouts) >= MAX_LAYOUTS:
        del m.layouts[0]
    m.layouts.append(lay)
    return lay


def _other(lay: Layout, layouts: list[Layout], buf: Any, p: int) -> Layout | None:
    """A layout of ``layouts`` (those that held when the run began, whose GETs its entries never PUT)
    other than ``lay`` that the entry at ``p`` fits: the one that followed ``lay`` last, else the first
    that fits.  The one that followed ``lay`` in an earlier run may no longer hold (a memo key it GETs
    PUT since) or may have been dropped past :data:`MAX_LAYOUTS`: it is then not among them."""
    nxt = lay.next
    if nxt is not None and nxt in layouts and nxt.fits(buf, p) >= 0:  # in: by identity (no __eq__)
        return nxt
    for other in layouts:
        if other is not lay and other is not nxt and other.fits(buf, p) >= 0:
            return other
    return None


def take(m: Running, lay: Layout, entry: Allowed, ran: int) -> int:
    """Take the entries at ``m.pos`` laid out as ``lay`` or as another layout the machine holds; the
    number of opcodes taken (``ran`` were run before)."""
    buf, memo, stack, nest, made = m.buf, m.memo, m.stack, m.nest, m.made
    push, remember = stack.append, made.append
    limits = m.limits
    max_ops, max_work = limits.max_opcodes, limits.max_call_work
    layouts = [other for other in m.layouts if other.holds(memo)]  # lay among them
    gets = frozenset().union(*(other.gets for other in layouts))  # no entry taken may PUT one of them
    # persistent ids: zip archives' storage records expose their checks past the id's fixed items
    records = m.persistent_load
    named = getattr(records, "named", None)
    fast_tensor = entry.handler is m.tensor_rebuild
    handler = entry.handler
    new, tensor_init = object.__new__, Tensor.__init__
    mend = m.end
    text = buf.obj  # the bytes under the view, where it is all of them (offsets are then the same)
    if not (type(text) is bytes and buf.nbytes == len(text) and buf.format == "B"):
        text = None
    p = m.pos
    total = 0
    last_put = None
    switched_at = -1
    while True:
        (key_format, key_fixed, key_expected, key_varying, key_size, view_format, view_fixed, view_expected,
         view_varying, view_size, view_puts, ops, per_work, ns, nst, size_end, stride_at, stride_end,
         persid_rel, reduce_rel, last_put_rel, tag, stype, location, requires_grad) = lay.locals
        if named is not None and lay.head is None:
            lay.head = records.head(stype, location)
        head = lay.head
        checked, last_size, last_stride = lay.checked, lay.last_size, lay.last_stride
        while True:
            try:
                if buf[p] != _BINUNICODE:
                    break
                q = p + 5 + _U32.unpack_from(buf, p + 1)[0]
                k = key_format.unpack_from(buf, q)
                if key_fixed(k) != key_expected:
                    break
                key_put, n = key_varying(k)
                r = q + key_size + n
                v = view_format.unpack_from(buf, r)
            except (IndexError, struct.error):
                break
            e = r + view_size
            if view_fixed(v) != view_expected:
                break
            if e > mend:
                break
            f = view_varying(v)
            if key_put in gets or not gets.isdisjoint(view_puts(f)):
                break
            work = m.work + per_work
            if ran + total + ops > max_ops or work > max_work:
                break
            # ASCII only (the machine checks a str's surrogate pairs): decoded from the bytes where they are
            try:
                if text is not None:
                    key = text[p + 5:q].decode("ascii")
                    skey = text[q + key_size:r].decode("ascii")
                else:
                    key = str(buf[p + 5:q], "ascii")
                    skey = str(buf[q + key_size:r], "ascii")
            except UnicodeDecodeError:
                break
            # the effects, in the opcodes' order (as pickle_entry._effects)
            memo[key_put] = key
            push(key)
            memo[f[0]] = skey
            numel = f[1]
            pid = (tag, stype, skey, location, numel)
            nest[id(pid)] = 1
            remember(pid)
            memo[f[2]] = pid
            persid_at = r + persid_rel
            m.at = persid_at
            if head is None:
                storage = m.persistent(pid)
            else:
                storage = named(skey, skey, head[0], head[1], numel, persid_at)
            offset = f[3]
            if ns is None:
                size: tuple[int, ...] = ()
            else:
                size = f[4:size_end]
                if size == last_size:
                    size = last_size
                else:
                    nest[id(size)] = 1
                    remember(size)
                    last_size = size
                memo[f[size_end]] = size
            if nst is None:
                stride: tuple[int, ...] = ()
            else:
                stride = f[stride_at:stride_end]
                if stride == last_stride:
                    stride = last_stride
                else:
                    nest[id(stride)] = 1
                    remember(stride)
                    last_stride = stride
                memo[f[stride_end]] = stride
            hooks: collections.OrderedDict[Any, Any] = collections.OrderedDict()
            memo[f[-3]] = hooks
            args = (storage, offset, size, stride, requires_grad, hooks)
            if type(storage) is Storage:
                nest[id(args)] = 2
                remember(args)
            else:
                args = m.tuple_of(list(args))
            memo[f[-2]] = args
            m.work = work
            m.at = reduce_at = r + reduce_rel
            if (fast_tensor and type(storage) is Storage and checked is not None and not storage.retyped
                    and (storage.numel, storage.dtype, offset, size, stride) == checked):
                storage.viewed = True
                tensor = new(Tensor)
                tensor_init(tensor, storage.dtype, size, stride, offset, storage, storage.device,
                            requires_grad, False, False, False, {}, False)
            else:
                if type(storage) is not Storage:
                    entry.check_args(args, reduce_at)
                tensor = handler(args, m.call_context())
                if fast_tensor and type(storage) is Storage:
                    checked = (storage.numel, storage.dtype, offset, size, stride)
            memo[f[-1]] = tensor
            push(tensor)
            total += ops
            last_put = r + last_put_rel
            p = m.pos = e
        lay.checked, lay.last_size, lay.last_stride = checked, last_size, last_stride
        # the entry at p is laid out otherwise, or ends the run: another layout takes it, if one fits
        # (once: if the entry stops that one too, the machine reads it)
        other = _other(lay, layouts, buf, p) if len(layouts) > 1 and p != switched_at else None
        if other is None:
            break
        switched_at = p
        lay.next = other
        lay = other
    if last_put is not None:
        m.at = last_put
    return total
