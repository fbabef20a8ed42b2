"""A pickle assembler: opcodes written by name, byte for byte (spec/pickle.md#pickle-opcodes).

Adversarial pickles are programs no pickler writes (a REDUCE with nothing on the stack, a BUILD on a
tensor), so they are assembled here from the opcode bytes of CPython's :mod:`pickle` module, the writer
the spec's table is checked against.  Nothing here ever unpickles.
"""

from __future__ import annotations

import pickle
import struct


def proto(n: int) -> bytes:
    return pickle.PROTO + bytes([n])


def stop() -> bytes:
    return pickle.STOP


def mark() -> bytes:
    return pickle.MARK


def global_(module: str, name: str) -> bytes:
    """GLOBAL: text module and name, each ended by a newline (protocols 0-3)."""
    return pickle.GLOBAL + module.encode() + b"\n" + name.encode() + b"\n"


def inst(module: str, name: str) -> bytes:
    """INST: like GLOBAL, then calls the class with the items above the MARK (protocol 0)."""
    return pickle.INST + module.encode() + b"\n" + name.encode() + b"\n"


def unicode(s: str) -> bytes:
    """SHORT_BINUNICODE (when short) or BINUNICODE."""
    raw = s.encode("utf-8")
    if len(raw) < 256:
        return pickle.SHORT_BINUNICODE + bytes([len(raw)]) + raw
    return pickle.BINUNICODE + struct.pack("<I", len(raw)) + raw


def binunicode(s: str) -> bytes:
    """BINUNICODE, the form torch's zip pickles use for every string (protocol 2)."""
    raw = s.encode("utf-8")
    return pickle.BINUNICODE + struct.pack("<I", len(raw)) + raw


def stack_global(module: str, name: str) -> bytes:
    """STACK_GLOBAL with both strings pushed right before it (protocol 4)."""
    return unicode(module) + unicode(name) + pickle.STACK_GLOBAL


def integer(n: int) -> bytes:
    """The shortest binary integer opcode for ``n``: BININT1/BININT2/BININT/LONG1."""
    if 0 <= n < 256:
        return pickle.BININT1 + bytes([n])
    if 0 <= n < 65536:
        return pickle.BININT2 + struct.pack("<H", n)
    if -(1 << 31) <= n < (1 << 31):
        return pickle.BININT + struct.pack("<i", n)
    raw = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return pickle.LONG1 + bytes([len(raw)]) + raw


def binint(n: int) -> bytes:
    """BININT: a 4-byte signed integer."""
    return pickle.BININT + struct.pack("<i", n)


def tuple_(*items: bytes) -> bytes:
    """A tuple of already assembled items (TUPLE1-3 when short, MARK ... TUPLE else)."""
    if not items:
        return pickle.EMPTY_TUPLE
    body = b"".join(items)
    if len(items) <= 3:
        return body + (pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3)[len(items) - 1]
    return pickle.MARK + body + pickle.TUPLE


def list_(*items: bytes) -> bytes:
    return pickle.EMPTY_LIST + (pickle.MARK + b"".join(items) + pickle.APPENDS if items else b"")


def dict_(*pairs: tuple[bytes, bytes]) -> bytes:
    body = b"".join(k + v for k, v in pairs)
    return pickle.EMPTY_DICT + (pickle.MARK + body + pickle.SETITEMS if pairs else b"")


def put(n: int) -> bytes:
    return pickle.BINPUT + bytes([n]) if n < 256 else pickle.LONG_BINPUT + struct.pack("<I", n)


def get(n: int) -> bytes:
    return pickle.BINGET + bytes([n]) if n < 256 else pickle.LONG_BINGET + struct.pack("<I", n)


def call(func: bytes, *args: bytes) -> bytes:
    """``func(*args)`` as REDUCE."""
    return func + tuple_(*args) + pickle.REDUCE


def storage_pid(storage_class: str, key: str, location: str, numel: int) -> bytes:
    """A zip-format persistent id ``('storage', torch.<class>, key, location, numel)`` and BINPERSID
    (spec/pt-zip.md#pt-zip-storage-records)."""
    return (
        tuple_(
            binunicode("storage"),
            global_("torch", storage_class),
            binunicode(key),
            binunicode(location),
            integer(numel),
        )
        + pickle.BINPERSID
    )


def ordered_dict(*pairs: tuple[bytes, bytes]) -> bytes:
    """``collections.OrderedDict()`` then SETITEMS, as torch writes a state dict."""
    od = global_("collections", "OrderedDict") + pickle.EMPTY_TUPLE + pickle.REDUCE
    body = b"".join(k + v for k, v in pairs)
    return od + (pickle.MARK + body + pickle.SETITEMS if pairs else b"")


def rebuild_tensor(
    pid: bytes, offset: int, size: tuple[int, ...], stride: tuple[int, ...], requires_grad: bool = False
) -> bytes:
    """``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())``,
    the call torch writes for a dense tensor (spec/pt-zip.md#pt-zip-data-pkl)."""
    return call(
        global_("torch._utils", "_rebuild_tensor_v2"),
        pid,
        integer(offset),
        tuple_(*(integer(s) for s in size)),
        tuple_(*(integer(s) for s in stride)),
        pickle.NEWTRUE if requires_grad else pickle.NEWFALSE,
        ordered_dict(),
    )


def program(body: bytes, protocol: int = 2) -> bytes:
    """PROTO ``protocol``, ``body``, STOP."""
    return proto(protocol) + body + stop()
