"""The legacy ``.pt`` stream of ``torch.save(..., _use_new_zipfile_serialization=False)``
(spec/pt-legacy.md#pt-legacy-write).

Five protocol-2 pickles: the magic number, the protocol version 1001, ``sys_info``, the object (its
storages named by ``("storage", type, key, location, numel, None)``), and the sorted list of storage
keys; then each storage in that order as its element count (8 bytes, little-endian) and its
little-endian elements.
"""

from __future__ import annotations

from typing import Any, BinaryIO

from ..model import Storage
from ..pt.legacy import MAGIC_NUMBER, PROTOCOL_VERSION
from .pickler import Pickler, PicklingError, dumps
from .reduce import StorageKeys, global_reduce, reduce, storage_bytes, storage_type
from .zip import chunks

#: What torch 2.13 on a little-endian 64-bit Linux host writes (``struct.calcsize`` of ``=h``, ``=i``,
#: ``=l``: standard sizes, so ``long`` is 4).
SYS_INFO = {"protocol_version": PROTOCOL_VERSION, "little_endian": True,
            "type_sizes": {"short": 2, "int": 4, "long": 4}}


def write_legacy(obj: Any, f: BinaryIO) -> None:
    """Write ``obj`` as a legacy ``.pt`` stream to ``f``."""
    keys = StorageKeys()

    def persistent_id(o: Any) -> tuple[Any, ...] | None:
        if not isinstance(o, Storage):
            return None
        if o.dtype.storage_class is None:
            raise PicklingError(f"pt-legacy cannot hold {o.dtype.name} elements: the dtype has no typed "
                                "storage class and torch 2.13 cannot load an UntypedStorage from a legacy "
                                "stream (spec/pt-legacy.md#pt-legacy-write); write pt-zip")
        stype, numel = storage_type(o)
        return ("storage", stype, keys.key(o), o.device, numel, None)

    for head in (MAGIC_NUMBER, PROTOCOL_VERSION, SYS_INFO):
        f.write(dumps(head))
    Pickler(f.write, persistent_id, reduce, global_reduce).dump(obj)
    ordered = sorted(keys.storages(), key=lambda ks: ks[0])  # torch sorts its str keys
    f.write(dumps([k for k, _ in ordered]))
    for _, storage in ordered:
        data = storage_bytes(storage)
        _, numel = storage_type(storage)
        f.write(numel.to_bytes(8, "little"))
        for chunk in chunks(data):
            f.write(chunk)
        storage.release()
