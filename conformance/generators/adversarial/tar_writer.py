"""torch 0.1's tar checkpoint layout written from real torch 2.13 objects (spec/pt-tar.md).

No installable writer makes tar checkpoints any more, so :func:`tar_checkpoint` does what torch 0.1's
``torch.save`` did (PR #713 removed it in February 2017): one :class:`pickle.Pickler` (protocol 2) runs
over the object with a ``persistent_id`` that names every tensor and storage by ``str(key)`` and records
it; then the ``tensors`` member holds, per tensor, a pickled ``(key, storage_key, tensor_type)`` and its
raw view (ndim as 8 bytes whose high half 0.1 left as garbage, sizes, strides, offset), and the
``storages`` member the count, per storage a pickled ``(key, location, storage_type)`` and the element
count and bytes that torch 2.13's own ``UntypedStorage._write_file`` writes, and the pickled list of
storage views.  Keys are small ints in order of first use (0.1 used ``_cdata`` addresses), so the bytes
are the same on every run.  Parameters pickle as 0.1's Variables did: NEWOBJ of ``Parameter``, then BUILD
with ``(data, grad, backward_hooks, requires_grad, volatile)``.
"""

from __future__ import annotations

import collections
import copyreg
import io
import pickle
import struct
import tarfile
from dataclasses import dataclass, field
from typing import Any

SYS_INFO = {"protocol_version": 1000, "little_endian": True, "type_sizes": {"short": 2, "int": 4, "long": 8}}
ORDER = ("sys_info", "pickle", "tensors", "storages")  # the order 0.1's _save added them
BLOCK = 512


@dataclass(eq=False)
class StorageView:
    """A storage view of 0.1 (``storage[offset:offset + numel]``): ``root`` is a tensor whose storage it
    cuts; the pickle names the view like a storage."""

    root: Any
    offset: int
    numel: int


@dataclass(eq=False)
class ViewTensor:
    """A tensor over a :class:`StorageView` (torch 2.x tensors cannot view one)."""

    view: StorageView
    size: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int = 0


@dataclass(eq=False)
class OnDevice:
    """A tensor whose storage the file places at ``location`` (``cuda:0``: ``torch.cuda.*Storage``)."""

    tensor: Any
    location: str


@dataclass
class Layout:
    """The members' records as they are collected."""

    keys: dict[int, int] = field(default_factory=dict)  # id(object) or storage _cdata -> key
    tensors: list[tuple[int, int, str, bytes]] = field(default_factory=list)  # key, storage key, type, view
    storages: dict[int, tuple[str, str, bytes]] = field(default_factory=dict)  # key -> location, type, data
    views: list[tuple[int, int, int, int]] = field(default_factory=list)
    alive: list[Any] = field(default_factory=list)  # keeps ids stable while the walk runs
    garbage: bytes = b"\0\0\0\0"

    def key(self, ident: int) -> tuple[int, bool]:
        """The key of ``ident`` and whether it is new."""
        if ident in self.keys:
            return self.keys[ident], False
        self.keys[ident] = len(self.keys) + 1
        return self.keys[ident], True


def _storage_class(dtype: Any) -> str:
    import torch

    return torch.storage._dtype_to_storage_type_map()[dtype]


def _storage_key(lay: Layout, t: Any, location: str = "cpu") -> int:
    """The key of the storage under tensor ``t``, its record written the first time."""
    return _untyped_key(lay, t.untyped_storage(), t.dtype, location)


def _untyped_key(lay: Layout, u: Any, dtype: Any, location: str = "cpu") -> int:
    import torch

    lay.alive.append(u)
    key, new = lay.key(u._cdata)
    if new:
        out = io.BytesIO()
        u._write_file(out, False, True, torch._utils._element_size(dtype))  # torch's own: count, bytes
        lay.storages[key] = (location, _storage_class(dtype), out.getvalue())
    return key


def _view_bytes(size: tuple[int, ...], stride: tuple[int, ...], offset: int, garbage: bytes) -> bytes:
    n = len(size)
    return (struct.pack("<i", n) + garbage + struct.pack(f"<{n}q", *size) + struct.pack(f"<{n}q", *stride)
            + struct.pack("<q", offset))


def _legacy_tensor_type(dtype: Any) -> str:
    return _storage_class(dtype).removesuffix("Storage") + "Tensor"


class _Pickler(pickle.Pickler):
    """0.1's object pickler: tensors, storages and views by ``str(key)``; Parameters as Variables."""

    def __init__(self, f: io.BytesIO, lay: Layout) -> None:
        super().__init__(f, protocol=2)
        self.lay = lay

    def persistent_id(self, obj: Any) -> str | None:
        import torch

        lay = self.lay
        if isinstance(obj, OnDevice):
            return self._tensor(obj.tensor, obj.location)
        if isinstance(obj, StorageView):
            return str(self._view(obj))
        if isinstance(obj, ViewTensor):
            lay.alive.append(obj)
            key, new = lay.key(id(obj))
            if new:
                view = self._view(obj.view)
                dtype = obj.view.root.dtype
                lay.tensors.append((key, view, _legacy_tensor_type(dtype),
                                    _view_bytes(obj.size, obj.stride, obj.offset, lay.garbage)))
            return str(key)
        if isinstance(obj, torch.nn.Parameter):
            return None  # reduced below, as a Variable
        if isinstance(obj, torch.Tensor):
            return self._tensor(obj, "cpu")
        if isinstance(obj, torch.storage.TypedStorage):
            return str(_untyped_key(lay, obj._untyped_storage, obj.dtype))
        return None

    def _tensor(self, t: Any, location: str) -> str:
        lay = self.lay
        lay.alive.append(t)
        key, new = lay.key(id(t))
        if new:
            skey = _storage_key(lay, t, location)
            lay.tensors.append((key, skey, _legacy_tensor_type(t.dtype),
                                _view_bytes(tuple(t.shape), t.stride(), t.storage_offset(), lay.garbage)))
        return str(key)

    def _view(self, v: StorageView) -> int:
        lay = self.lay
        lay.alive.append(v)
        key, new = lay.key(id(v))
        if new:
            lay.views.append((key, _storage_key(lay, v.root), v.offset, v.numel))
        return key

    def reducer_override(self, obj: Any) -> Any:
        import torch

        if isinstance(obj, torch.nn.Parameter):
            data = obj.detach()
            self.lay.alive.append(data)
            state = (data, None, collections.OrderedDict(), obj.requires_grad, False)
            return copyreg.__newobj__, (torch.nn.Parameter,), state
        return NotImplemented


def _storage_type(location: str, name: str) -> Any:
    import torch

    return getattr(torch.cuda if location.startswith("cuda") else torch, name)


def members(obj: Any, garbage: bytes = b"\0\0\0\0") -> dict[str, bytes]:
    """The four members of ``obj``'s tar checkpoint; ``garbage`` fills the high half of each ndim."""
    import torch

    lay = Layout(garbage=garbage)
    out = io.BytesIO()
    _Pickler(out, lay).dump(obj)
    tensors = pickle.dumps(len(lay.tensors), protocol=2)
    for key, skey, ttype, view in lay.tensors:
        location = lay.storages[skey][0] if skey in lay.storages else "cpu"
        module = torch.cuda if location.startswith("cuda") else torch
        tensors += pickle.dumps((key, skey, getattr(module, ttype)), protocol=2) + view
    storages = pickle.dumps(len(lay.storages), protocol=2)
    for key, (location, name, data) in lay.storages.items():
        storages += pickle.dumps((key, location, _storage_type(location, name)), protocol=2) + data
    storages += pickle.dumps(lay.views, protocol=2)
    return {"sys_info": pickle.dumps(SYS_INFO, protocol=2), "pickle": out.getvalue(), "tensors": tensors,
            "storages": storages}


def archive(parts: dict[str, bytes], *, order: tuple[str, ...] = ORDER,
            size_field: dict[str, bytes] | None = None) -> bytes:
    """A PAX tar of ``parts`` as Python's ``tarfile`` writes one (0.1 used it), with fixed metadata;
    ``size_field`` replaces a member's 12-byte size field (its checksum recomputed)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in order:
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(parts[name]), 1485049682, 0o600
            tar.addfile(info, io.BytesIO(parts[name]))
    data = bytearray(out.getvalue())
    for name, raw in (size_field or {}).items():
        at = data.index(name.encode() + b"\0")  # the member's header starts with its name
        assert at % BLOCK == 0 and len(raw) == 12
        data[at + 124:at + 136] = raw
        data[at + 148:at + 156] = b" " * 8
        data[at + 148:at + 156] = b"%06o\0 " % sum(data[at:at + BLOCK])
    return bytes(data)


def tar_checkpoint(obj: Any, **kw: Any) -> bytes:
    """``obj`` saved as torch 0.1's ``torch.save`` laid it out."""
    return archive(members(obj), **kw)
