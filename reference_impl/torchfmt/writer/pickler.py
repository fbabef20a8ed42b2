"""A protocol-2 pickle writer over the opcode table (spec/pt-zip.md#pt-zip-write-pickle).

It writes what Python's own pickler writes for the same values at protocol 2, as ``torch.save`` uses it
(memo PUTs, batched APPENDS/SETITEMS, ``_codecs.encode`` for bytes, ``__builtin__`` names), with opcode
bytes taken from :data:`torchfmt.pickle.opcodes.OPCODES`.  Values it has no form for are handed to a
``reduce`` hook, which returns a :class:`Reduce`: a global called with arguments, as
``__reduce_ex__`` would give.  Storages are written by a ``persistent_id`` hook.  Nothing is imported
or called by name.
"""

from __future__ import annotations

import collections
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..limits import WALK_FRAMES
from ..model import Global
from ..pickle.globals import MODULE_ALIASES
from ..pickle.opcodes import OPCODES
from ..recursion import recursion_limit

#: Opcode bytes by name, from the one opcode table.
OP: dict[str, bytes] = {op.name: bytes([op.code]) for op in OPCODES}
PROTOCOL = 2
#: Items per APPENDS/SETITEMS, as CPython's pickler batches them.
BATCH = 1000
#: Protocol 2 writes Python 2 module names (pickle's fix_imports): the reverse of the reader's renames
#: that concern modules a protocol-2 pickle names.
PY2_MODULES: dict[str, str] = {new: old for old, new in MODULE_ALIASES.items() if not old.startswith("torch")}


@dataclass
class Reduce:
    """``func(*args)``, then ``items`` set into it (dict items) and ``state`` given to BUILD."""

    func: Global
    args: tuple[Any, ...]
    state: Any = None
    items: list[tuple[Any, Any]] | None = None
    #: Keep the source object alive while its id is in the memo.
    source: Any = field(default=None, repr=False)


class PicklingError(ValueError):
    """A value the writer has no pickle form for."""


class Pickler:
    """Writes one pickle to ``write``.  ``persistent_id(obj)`` returns the id tuple of a value written
    by reference (a storage), or ``None``; ``reduce(obj)`` returns a :class:`Reduce` for any value that
    is not a plain Python one."""

    def __init__(self, write: Callable[[bytes], Any], persistent_id: Callable[[Any], Any],
                 reduce: Callable[[Any], Reduce],
                 global_reduce: Callable[[Global], Reduce | None] = lambda g: None) -> None:
        self.write = write
        self.global_reduce = global_reduce
        self.persistent_id = persistent_id
        self.reduce = reduce
        self.memo: dict[int, tuple[int, Any]] = {}
        #: Strings and globals are memoized by value (CPython's pickler memoizes the one object torch
        #: reuses for each, e.g. ``"storage"`` and ``"cpu"``).
        self.values: dict[tuple[str, Any], int] = {}
        self.next_memo = 0
        self._open_tuples: set[int] = set()

    def dump(self, obj: Any) -> None:
        with recursion_limit(WALK_FRAMES):
            self.write(OP["PROTO"] + bytes([PROTOCOL]))
            self.save(obj)
            self.write(OP["STOP"])

    # -- memo -------------------------------------------------------------------------------------
    def _put(self, obj: Any) -> int:
        n = self.next_memo
        self.next_memo += 1
        if obj is not None and type(obj) not in (str, Global):  # those are memoized by value
            self.memo[id(obj)] = (n, obj)
        self.write(OP["BINPUT"] + bytes([n]) if n < 256 else OP["LONG_BINPUT"] + struct.pack("<I", n))
        return n

    def _get(self, n: int) -> None:
        self.write(OP["BINGET"] + bytes([n]) if n < 256 else OP["LONG_BINGET"] + struct.pack("<I", n))

    # -- values -----------------------------------------------------------------------------------
    def save(self, obj: Any) -> None:
        pid = self.persistent_id(obj)
        if pid is not None:
            self.save(pid)
            self.write(OP["BINPERSID"])
            return
        if isinstance(obj, np.generic):  # a numpy scalar is written as the Python number it holds
            obj = obj.item()
        t = type(obj)
        if obj is None:
            self.write(OP["NONE"])
        elif t is bool:
            self.write(OP["NEWTRUE"] if obj else OP["NEWFALSE"])
        elif t is int:
            self._int(obj)
        elif t is float:
            self.write(OP["BINFLOAT"] + struct.pack(">d", obj))
        elif t is str:
            known = self.values.get(("str", obj))
            if known is not None:
                self._get(known)
                return
            raw = obj.encode("utf-8", "surrogatepass")
            self.write(OP["BINUNICODE"] + struct.pack("<I", len(raw)) + raw)
            self.values[("str", obj)] = self._put(obj)
        elif id(obj) in self.memo:
            self._get(self.memo[id(obj)][0])
        elif t in (bytes, bytearray):
            self._reduce(Reduce(Global("_codecs", "encode"), (bytes(obj).decode("latin-1"), "latin1")), obj)
        elif t is tuple:
            self._tuple(obj)
        elif t is list:
            self.write(OP["EMPTY_LIST"])
            self._put(obj)
            self._batch(obj, "APPEND", "APPENDS")
        elif t is dict:
            self.write(OP["EMPTY_DICT"])
            self._put(obj)
            self._batch(list(obj.items()), "SETITEM", "SETITEMS")
        elif t is collections.OrderedDict:
            state = dict(vars(obj)) or None
            self._reduce(Reduce(Global("collections", "OrderedDict"), (), state, list(obj.items())), obj)
        elif t in (set, frozenset):
            self._reduce(Reduce(Global("builtins", t.__name__), (list(obj),)), obj)
        elif t is Global:
            self._global_value(obj)
        elif t is Reduce:
            self._reduce(obj, obj.source)
        else:
            self._reduce(self.reduce(obj), obj)

    def _int(self, v: int) -> None:
        if 0 <= v < 256:
            self.write(OP["BININT1"] + bytes([v]))
        elif 0 <= v < 65536:
            self.write(OP["BININT2"] + struct.pack("<H", v))
        elif -(1 << 31) <= v < (1 << 31):
            self.write(OP["BININT"] + struct.pack("<i", v))
        else:
            raw = encode_long(v)
            if len(raw) < 256:
                self.write(OP["LONG1"] + bytes([len(raw)]) + raw)
            else:
                self.write(OP["LONG4"] + struct.pack("<i", len(raw)) + raw)

    def _global(self, g: Global) -> None:
        known = self.values.get(("global", g))
        if known is not None:
            self._get(known)
            return
        module = PY2_MODULES.get(g.module, g.module)
        self.write(OP["GLOBAL"] + f"{module}\n{g.name}\n".encode())
        self.values[("global", g)] = self._put(g)

    def _global_value(self, g: Global) -> None:
        """A global as a value: itself, or the reduction ``global_reduce`` gives (a torch layout)."""
        r = self.global_reduce(g)
        if r is None:
            self._global(g)
            return
        known = self.values.get(("value", g))
        if known is not None:
            self._get(known)
            return
        self._reduce(r, None)
        self.values[("value", g)] = self.next_memo - 1

    def _tuple(self, obj: tuple[Any, ...]) -> None:
        if id(obj) in self._open_tuples:
            raise PicklingError("a tuple that contains itself has no pickle form")
        if not obj:
            self.write(OP["EMPTY_TUPLE"])
            return
        self._open_tuples.add(id(obj))
        try:
            small = len(obj) <= 3
            if not small:
                self.write(OP["MARK"])
            for item in obj:
                self.save(item)
        finally:
            self._open_tuples.discard(id(obj))
        if id(obj) in self.memo:  # an item referred back to the tuple through a list or dict
            n = self.memo[id(obj)][0]
            self.write(OP["POP"] * len(obj) if small else OP["POP_MARK"])
            self._get(n)
            return
        self.write(OP[("TUPLE1", "TUPLE2", "TUPLE3")[len(obj) - 1]] if small else OP["TUPLE"])
        self._put(obj)

    def _batch(self, items: list[Any], one: str, many: str) -> None:
        pair = one == "SETITEM"
        for start in range(0, len(items), BATCH):
            chunk = items[start:start + BATCH]
            if len(chunk) > 1:
                self.write(OP["MARK"])
            for item in chunk:
                if pair:
                    self.save(item[0])
                    self.save(item[1])
                else:
                    self.save(item)
            self.write(OP[many] if len(chunk) > 1 else OP[one])

    def _reduce(self, r: Reduce, source: Any) -> None:
        self._global(r.func)
        self._tuple(r.args)
        self.write(OP["REDUCE"])
        self._put(source)  # CPython memoizes every reduced object, a nested tensor's data too
        if r.items:
            self._batch(r.items, "SETITEM", "SETITEMS")
        if r.state is not None:
            self.save(r.state)
            self.write(OP["BUILD"])


def encode_long(v: int) -> bytes:
    """Two's-complement little-endian bytes of ``v``, as pickle's LONG1/LONG4 hold it (0 is empty)."""
    if v == 0:
        return b""
    n = (v.bit_length() >> 3) + 1
    raw = v.to_bytes(n, "little", signed=True)
    if v < 0 and n > 1 and raw[-1] == 0xFF and raw[-2] & 0x80:
        raw = raw[:-1]
    return raw


def dumps(obj: Any, persistent_id: Callable[[Any], Any] = lambda o: None,
          reduce: Callable[[Any], Reduce] | None = None) -> bytes:
    """The pickle of ``obj`` as bytes (small pickles: headers of the legacy stream)."""
    out: list[bytes] = []

    def refuse(o: Any) -> Reduce:
        raise PicklingError(f"no pickle form for {type(o).__name__}")

    Pickler(out.append, persistent_id, reduce or refuse).dump(obj)
    return b"".join(out)
