"""Put an object pickle into a real torch-written container (spec/pt-zip.md#pt-zip-data-pkl,
spec/pt-legacy.md#pt-legacy-object).

The zip form keeps every member torch wrote and replaces ``archive/data.pkl``; the legacy form keeps
torch's magic, protocol-version and sys_info pickles and replaces the object pickle, the storage-key
list and the storages after it.  The torch-written object pickle itself is available, with an ``inject``
helper that adds one more key to its top-level dict, so a payload can sit beside real tensors.
"""

from __future__ import annotations

import io
import pickletools
import struct

from . import assemble as a
from . import rawzip, sources


def zip_pickle() -> bytes:
    """torch's ``archive/data.pkl`` for the two-tensor dict (storages ``0`` and ``1``)."""
    return next(m.data for m in sources.zip_members() if m.name.endswith("/data.pkl"))


def inject(pkl: bytes, key: str, value: bytes) -> bytes:
    """torch's dict pickle with one more item ``key: value`` before its closing SETITEMS."""
    assert pkl.endswith(b"u."), pkl[-4:]
    return pkl[:-2] + a.binunicode(key) + value + b"u."


def in_zip(
    pkl: bytes, *, drop: tuple[str, ...] = (), add: list[rawzip.Member] | None = None, **build: object
) -> bytes:
    """A zip ``.pt`` with torch's members, ``data.pkl`` replaced by ``pkl``."""
    members = [m for m in sources.zip_members() if not any(m.name.endswith(d) for d in drop)]
    for m in members:
        if m.name.endswith("/data.pkl"):
            m.data = pkl
    return rawzip.build(members + (add or []), **build)  # type: ignore[arg-type]


def legacy_spans(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of the five pickles at the head of a legacy stream (listed, never run)."""
    f = io.BytesIO(data)
    spans = []
    for _ in range(5):
        start = f.tell()
        for _op in pickletools.genops(f):
            pass
        spans.append((start, f.tell()))
    return spans


def legacy_pickle() -> bytes:
    """torch's legacy object pickle for the two-tensor dict."""
    data = sources.torch_legacy().data
    start, end = legacy_spans(data)[3]
    return data[start:end]


def in_legacy(obj: bytes, keys: list[str] | None = None, storages: bytes | None = None) -> bytes:
    """A legacy stream: torch's first three pickles, then ``obj``, the key list ``keys`` (default: none)
    and ``storages`` (each an int64 count and the raw bytes; default: none)."""
    data = sources.torch_legacy().data
    spans = legacy_spans(data)
    head = data[: spans[2][1]]
    keys = keys or []
    key_pickle = a.program(a.list_(*(a.binunicode(k) for k in keys)))
    return head + obj + key_pickle + (storages or b"")


def legacy_tail() -> tuple[list[str], bytes]:
    """torch's storage keys and the storage bytes after them, for reuse with an edited object pickle."""
    data = sources.torch_legacy().data
    spans = legacy_spans(data)
    keys_start, keys_end = spans[4]
    keys = [arg for op, arg, _ in pickletools.genops(data[keys_start:keys_end]) if op.name == "BINUNICODE"]
    return keys, data[keys_end:]


def legacy_with(obj: bytes) -> bytes:
    """torch's legacy stream with only the object pickle replaced (keys and storages kept)."""
    keys, tail = legacy_tail()
    return in_legacy(obj, keys, tail)


def storage_record(numel: int, raw: bytes) -> bytes:
    """One legacy storage: the int64 element count and the raw bytes."""
    return struct.pack("<q", numel) + raw
