"""Seeded mutations of a 2017 tar ``.pt`` file (spec/pt-tar.md#pt-tar-storages, #pt-tar-tensors,
#pt-tar-pickle), for the differential mode against any reader (differential/campaign.py).

The archive is taken apart with :mod:`tarfile` (the five members), one member is changed, and the archive
is written again with :mod:`tarfile` (ustar headers; the member order kept).  Two mutators:

- ``tar-pickle``: one of the member's pickles edited by :func:`.mutations.edit_pickle` (the ``sys_info``
  or object pickle, the storages member's record headers or view list, a tensor header);
- ``tar-keys``: the keys that tie the members together (spec/pt-tar.md#pt-tar-pickle: one decimal ``str``
  names "a tensor or storage"): a tensor renamed to a storage's key (the object's ids following), a
  storage renamed to a tensor's key (the tensor headers following), or a persistent id written in another
  decimal spelling (``"02"``, ``"+2"``, ``" 2"``, ``"2 "``).
"""

from __future__ import annotations

import io
import pickle
import pickletools
import random
import struct
import tarfile
from dataclasses import dataclass

from conformance.generators.adversarial import assemble as a

from .mutations import Edit, _ops, _string, edit_pickle

#: The members of a tar checkpoint, in torch's order.
MEMBERS = ("sys_info", "pickle", "tensors", "storages")


def is_tar(data: bytes) -> bool:
    """Whether ``data`` starts with a ustar or GNU tar header (spec/pt-tar.md#pt-tar-members)."""
    return data[257:262] == b"ustar"


def _members(data: bytes) -> list[tuple[str, bytes]] | None:
    """(name, bytes) of the archive's regular members, in order; ``None`` when it is no tar archive."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            out = []
            for info in tar.getmembers():
                f = tar.extractfile(info)
                if f is None:
                    return None
                out.append((info.name, f.read()))
            return out
    except (tarfile.TarError, OSError, EOFError, ValueError):
        return None


def _build(members: list[tuple[str, bytes]]) -> bytes | None:
    out = io.BytesIO()
    try:
        with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            for name, body in members:
                info = tarfile.TarInfo(name)
                info.size = len(body)
                tar.addfile(info, io.BytesIO(body))
    except (ValueError, tarfile.TarError):
        return None
    return out.getvalue()


def _pickle_end(data: bytes, at: int) -> int | None:
    """Where the pickle starting at ``at`` ends (after its STOP), or ``None``."""
    try:
        for op, _, pos in pickletools.genops(io.BytesIO(data[at:])):
            if op.name == "STOP":
                return at + pos + 1
    except Exception:  # noqa: BLE001 - not a pickle pickletools can list
        return None
    return None


@dataclass
class _Record:
    """One pickle of a member (``start``..``end``) and its value, loaded by :mod:`pickle` with no global
    resolved (a record header names a storage class: it comes back as a name pair)."""

    start: int
    end: int
    value: object


class _NoGlobals(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> tuple[str, str]:  # type: ignore[override]
        return (module, name)


def _value(raw: bytes) -> object:
    try:
        return _NoGlobals(io.BytesIO(raw)).load()
    except Exception:  # noqa: BLE001 - a pickle an earlier mutation broke
        return None


def tensor_records(body: bytes) -> list[_Record] | None:
    """The tensors member's pickles: the count, then each header (the raw view after it skipped)."""
    end = _pickle_end(body, 0)
    if end is None:
        return None
    out = [_Record(0, end, _value(body[:end]))]
    pos = end
    while pos < len(body):
        stop = _pickle_end(body, pos)
        if stop is None or stop + 8 > len(body):
            break
        out.append(_Record(pos, stop, _value(body[pos:stop])))
        ndim = struct.unpack_from("<i", body, stop)[0]
        if ndim < 0:
            break
        pos = stop + 16 + 16 * ndim
    return out


def storage_records(body: bytes) -> list[_Record] | None:
    """The storages member's pickles: the count, each header (its raw elements skipped), the view list."""
    end = _pickle_end(body, 0)
    if end is None:
        return None
    out = [_Record(0, end, _value(body[:end]))]
    pos = end
    while pos < len(body):
        stop = _pickle_end(body, pos)
        if stop is None:
            break
        value = _value(body[pos:stop])
        out.append(_Record(pos, stop, value))
        if not isinstance(value, tuple) or stop + 8 > len(body):
            break  # the view list ends the member
        numel = int.from_bytes(body[stop:stop + 8], "little")
        width = _WIDTHS.get(str(value[2][1]) if isinstance(value[2], tuple) else "", 4)
        pos = stop + 8 + numel * width
    return out


_WIDTHS = {"DoubleStorage": 8, "FloatStorage": 4, "HalfStorage": 2, "LongStorage": 8, "IntStorage": 4,
           "ShortStorage": 2, "CharStorage": 1, "ByteStorage": 1, "BoolStorage": 1, "BFloat16Storage": 2}


def _replace(body: bytes, rec: _Record, new: bytes) -> bytes:
    return body[:rec.start] + new + body[rec.end:]


def tar_pickle(data: bytes, rng: random.Random, edit: Edit = edit_pickle) -> bytes | None:
    """One pickle of one member edited by ``edit`` (default :func:`.mutations.edit_pickle`)."""
    members = _members(data)
    if not members:
        return None
    i = rng.randrange(len(members))
    name, body = members[i]
    base = name.rsplit("/", 1)[-1]
    records = (tensor_records(body) if base == "tensors" else storage_records(body) if base == "storages"
               else [_Record(0, len(body), None)])
    if not records:
        return None
    rec = rng.choice(records)
    new = edit(body[rec.start:rec.end], rng)
    if new is None:
        return None
    members[i] = (name, _replace(body, rec, new))
    return _build(members)


def _keys(records: list[_Record]) -> list[tuple[_Record, int]]:
    return [(r, r.value[0]) for r in records[1:] if isinstance(r.value, tuple) and len(r.value) == 3
            and type(r.value[0]) is int]


def _rename_ids(body: bytes, old: int, new: str) -> bytes:
    """The object pickle with every string op spelling ``old`` as a decimal replaced by ``new``."""
    for name, arg, start, end in reversed(_ops(body)):
        if name in ("BINUNICODE", "SHORT_BINUNICODE", "UNICODE", "BINPERSID") and arg == str(old):
            body = body[:start] + _string(new) + body[end:]
    return body


_INTS = ("BININT", "BININT1", "BININT2", "LONG1", "INT")


def _set_int(raw: bytes, old: int, new: int, last: bool = False) -> bytes:
    """``raw`` (a record header pickle) with its first (``last``: its last) integer ``old`` set to ``new``."""
    ops = [o for o in _ops(raw) if o[0] in _INTS and o[1] == old]
    if not ops:
        return raw
    _, _, start, end = ops[-1] if last else ops[0]
    return raw[:start] + a.integer(new) + raw[end:]


def tar_keys(data: bytes, rng: random.Random) -> bytes | None:
    """One edit of the keys that tie the members together (see the module's docstring)."""
    members = _members(data)
    if not members:
        return None
    where = {n.rsplit("/", 1)[-1]: k for k, (n, _) in enumerate(members)}
    if not all(m in where for m in ("pickle", "tensors", "storages")):
        return None
    tensors = tensor_records(members[where["tensors"]][1]) or []
    storages = storage_records(members[where["storages"]][1]) or []
    tkeys, skeys = _keys(tensors), _keys(storages)
    kind = rng.choice(("tensor-to-storage", "storage-to-tensor", "spelling"))
    obj_name, obj = members[where["pickle"]]
    if kind == "spelling" and (tkeys or skeys):
        _, key = rng.choice(tkeys + skeys)
        spelled = rng.choice((f"0{key}", f"+{key}", f" {key}", f"{key} ", f"{key}\0", f"-0{key}"))
        members[where["pickle"]] = (obj_name, _rename_ids(obj, key, spelled))
        return _build(members)
    if kind == "tensor-to-storage" and tkeys and skeys:
        rec, key = rng.choice(tkeys)
        _, target = rng.choice(skeys)
        name, body = members[where["tensors"]]
        renamed = _set_int(body[rec.start:rec.end], key, target)
        members[where["tensors"]] = (name, _replace(body, rec, renamed))
        members[where["pickle"]] = (obj_name, _rename_ids(obj, key, str(target)))
        return _build(members)
    if kind == "storage-to-tensor" and tkeys and skeys:
        rec, key = rng.choice(skeys)
        _, target = rng.choice(tkeys)
        name, body = members[where["storages"]]
        renamed = _set_int(body[rec.start:rec.end], key, target)
        members[where["storages"]] = (name, _replace(body, rec, renamed))
        tname, tbody = members[where["tensors"]]
        for trec in reversed(tensor_records(tbody) or []):
            value = trec.value
            if isinstance(value, tuple) and len(value) == 3 and value[1] == key:
                tbody = _replace(tbody, trec, _set_int(tbody[trec.start:trec.end], key, target, last=True))
        members[where["tensors"]] = (tname, tbody)
        return _build(members)
    return None
