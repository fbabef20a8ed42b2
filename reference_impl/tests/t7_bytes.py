"""Tiny builders of binary ``.t7`` fragments, for the error-path tests only (spec/t7.md#t7-binary).

Successful reads are checked against files real Lua Torch wrote, never against bytes built here.
"""

from __future__ import annotations

import struct

LE8 = {"mode": "binary", "long_size": 8, "byte_order": "little"}


def i(v: int) -> bytes:
    return struct.pack("<i", v)


def q(v: int) -> bytes:
    return struct.pack("<q", v)


def d(v: float) -> bytes:
    return struct.pack("<d", v)


def chars(b: bytes) -> bytes:
    return i(len(b)) + b


def number(v: float) -> bytes:
    return i(1) + d(v)


def string(b: bytes) -> bytes:
    return i(2) + chars(b)


def table(index: int, *pairs: bytes) -> bytes:
    """A new table: ``pairs`` are encoded key, value, key, value, ..."""
    return i(3) + i(index) + i(len(pairs) // 2) + b"".join(pairs)


def ref(code: int, index: int) -> bytes:
    return i(code) + i(index)


def torch(index: int, cls: bytes, payload: bytes, version: bytes | None = b"1") -> bytes:
    header = chars(cls) if version is None else chars(b"V " + version) + chars(cls)
    return i(4) + i(index) + header + payload


def storage(index: int, cls: bytes, n: int, raw: bytes) -> bytes:
    return torch(index, cls, q(n) + raw)


def tensor(index: int, cls: bytes, sizes: list[int], strides: list[int], offset: int,
           storage_obj: bytes) -> bytes:
    body = i(len(sizes)) + b"".join(q(s) for s in sizes) + b"".join(q(s) for s in strides) + q(offset)
    return torch(index, cls, body + storage_obj)


def float_tensor(sizes: list[int], strides: list[int], offset: int, n: int) -> bytes:
    """A FloatTensor (index 1) over a new FloatStorage (index 2) of ``n`` zeros."""
    return tensor(1, b"torch.FloatTensor", sizes, strides, offset,
                  storage(2, b"torch.FloatStorage", n, b"\0" * 4 * n))
