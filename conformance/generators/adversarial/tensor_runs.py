"""State dicts whose run of like entries breaks on a later entry (spec/pickle.md#pickle-rebuild,
spec/tensors.md#tensors-view-bounds, spec/pt-zip.md#pt-zip-storage-records).

torch writes every tensor entry of a state dict after the first with the same opcodes; a reader may take
such a run of entries at once (the reference does: ``fast/pickle_entry.py``, ``fast/pickle_run.py``),
which is only right if every entry of the run gets every check.  Each case is torch's own zip of an
``OrderedDict`` of six float32 2x3 tensors (``l0`` to ``l5``) with one value of one later entry changed
in place (a one-byte int of its persistent id or view, its storage key, its requires_grad opcode) and,
where the case says, its storage record: the third entry (``l2``, the second of the run after the entry
whose layout the others share) or the fifth (``l4``).  The rejects break one check there; the accepts
change the entry in a way the run must follow (a shared storage, an empty or offset view, a larger
storage, requires_grad).
"""

from __future__ import annotations

import collections
import io
import pickle
import pickletools
import struct
from dataclasses import dataclass
from functools import cache

from . import rawzip, sources
from .record import AdvCase, Source

GEN = "tensor_runs.py"
ENTRIES = 6
LATER = (2, 4)  # the entries changed: the run's second element and a later one
CALL = ("torch.save(collections.OrderedDict((f'l{i}', torch.arange(6, dtype=torch.float32).reshape(2, 3) "
        "+ i) for i in range(6)), f)")


@cache
def _torch_file() -> tuple[tuple[rawzip.Member, ...], Source]:
    import torch

    sd = collections.OrderedDict(
        (f"l{i}", torch.arange(6, dtype=torch.float32).reshape(2, 3) + i) for i in range(ENTRIES))
    buf = io.BytesIO()
    torch.save(sd, buf)
    members = sources._fixed_id(buf.getvalue())
    return tuple(members), Source(rawzip.build(members), f"a file written by {CALL} (not committed; "
                                  "serialization_id fixed)", sources._torch_version())


@dataclass
class Entry:
    """Where one entry's values lie in data.pkl: each a BININT1's argument byte (or the key's text)."""

    key_text: int  # the storage key's first character (BINUNICODE '<i>')
    numel: int
    offset: int
    size: tuple[int, int]
    stride: tuple[int, int]
    grad: int  # the NEWFALSE opcode


def _entries(pkl: bytes) -> list[Entry]:
    ops = list(pickletools.genops(pkl))
    out = []
    for i, (op, _arg, _pos) in enumerate(ops):
        if op.name != "BINPERSID":
            continue
        # ... BINUNICODE key [PUT] [GET location|BINUNICODE location PUT] BININT1 numel TUPLE PUT BINPERSID
        numel = ops[i - 3]
        assert numel[0].name == "BININT1" and ops[i - 2][0].name == "TUPLE", ops[i - 3:i]
        key = next(o for o in reversed(ops[:i - 3]) if o[0].name == "BINUNICODE" and o[1] != "cpu")
        after = ops[i + 1:i + 12]
        names = [o[0].name for o in after]
        assert names[:3] == ["BININT1"] * 3 and names[5:7] == ["BININT1"] * 2, names
        assert names[9] == "NEWFALSE", names
        out.append(Entry(key[2] + 5, numel[2] + 1, after[0][2] + 1, (after[1][2] + 1, after[2][2] + 1),
                         (after[5][2] + 1, after[6][2] + 1), after[9][2]))
    assert len(out) == ENTRIES
    return out


def _file(entry: int, edits: dict[str, int | bytes], record: bytes | None = None) -> bytes:
    """torch's file with ``edits`` (field -> new byte value) made in entry ``entry`` and its storage
    record replaced by ``record``."""
    members = [rawzip.Member(m.name, m.data) for m in _torch_file()[0]]
    pkl_member = next(m for m in members if m.name.endswith("/data.pkl"))
    pkl = bytearray(pkl_member.data)
    e = _entries(bytes(pkl))[entry]
    spots = {"numel": e.numel, "offset": e.offset, "size0": e.size[0], "size1": e.size[1],
             "stride0": e.stride[0], "stride1": e.stride[1], "grad": e.grad, "key": e.key_text}
    for field, value in edits.items():
        pkl[spots[field]:spots[field] + 1] = value if isinstance(value, bytes) else bytes([value])
    pkl_member.data = bytes(pkl)
    if record is not None:
        next(m for m in members if m.name.endswith(f"/data/{entry}")).data = record
    return rawzip.build(members)


def _floats(n: int, start: float = 0.0) -> bytes:
    return struct.pack(f"<{n}f", *(start + i for i in range(n)))


SHARED_WHY = ("torch caches the storage by its key and ignores the numel of every later persistent id "
              "naming it, so the file names one storage with two sizes and a reader cannot know which the "
              "writer meant (spec/pt-zip.md#pt-zip-storage-records: a later id MUST give the same numel)")


def run_cases() -> list[AdvCase]:
    _, src = _torch_file()
    out: list[AdvCase] = []
    bounds = ["tensors.md#tensors-view-bounds", "tensors.md#tensors-view"]
    records = ["pt-zip.md#pt-zip-storage-records"]
    base_feats = ["zip-archive", "state-dict", "pickle-ordered-dict", "pickle-persistent-id", "pickle-memo",
                  "pickle-reduce", "pickle-protocol-2", "dtype-float32"]
    spec_base = ["pickle.md#pickle-rebuild", "pt-zip.md#pt-zip-data-pkl"]
    changes: list[tuple[str, dict[str, int | bytes], bytes | None, list[str], list[str], list[str], str]] = [
        # reject
        ("stride-out-of-bounds", {"stride0": 4}, None, ["out-of-bounds"], ["adv-view-out-of-bounds"], bounds,
         "its stride (3, 1) made (4, 1): the view reaches element 6 of 6"),
        ("offset-out-of-bounds", {"offset": 1}, None, ["out-of-bounds"], ["adv-view-out-of-bounds"], bounds,
         "its storage offset 0 made 1: the view reaches element 6 of 6"),
        ("numel-not-record-size", {"numel": 5}, None, ["bad-value"], ["adv-storage-size-mismatch"], records,
         "its persistent id's numel 6 made 5 while its record holds 24 bytes"),
        ("storage-too-small", {"numel": 5}, _floats(5), ["out-of-bounds"], ["adv-view-out-of-bounds"],
         bounds, "its storage made 5 elements (numel 5, a 20-byte record) under the same 2x3 view, which "
                 "the earlier entries' storages of 6 held"),
        ("key-shared-other-numel", {"key": b"0", "numel": 5}, None, ["bad-reference"],
         ["adv-bad-reference"], records,
         "its storage key made '0' (l0's storage, 6 elements) with numel 5: one key, two sizes"),
        ("key-no-record", {"key": b"9"}, None, ["bad-reference"], ["adv-bad-reference"], records,
         "its storage key made '9', which names no record"),
        # accept
        ("key-shared", {"key": b"0"}, None, [], ["shared-storage"], records,
         "its storage key made '0': it views l0's storage (its own record is left unread)"),
        ("empty-view", {"size0": 0}, None, [], ["empty-tensor"], bounds + ["tensors.md#tensors-empty"],
         "its size (2, 3) made (0, 3): an empty view"),
        ("offset-view", {"offset": 3, "size0": 1}, None, [], ["storage-offset"], bounds,
         "its storage offset made 3 and its size (1, 3): the second row"),
        ("strided-view", {"stride0": 1, "stride1": 2}, None, [], ["non-contiguous"], bounds,
         "its stride (3, 1) made (1, 2): a column-major view"),
        ("larger-storage", {"numel": 8}, _floats(8, 40.0), [], ["partial-view"], records,
         "its storage made 8 elements (numel 8, a 32-byte record) under the same 2x3 view"),
        ("requires-grad", {"grad": pickle.NEWTRUE}, None, [], ["requires-grad"],
         ["tensors.md#tensors-requires-grad"], "its requires_grad NEWFALSE made NEWTRUE"),
    ]
    for name, edits, record, errors, feats, spec, how in changes:
        for entry in LATER:
            out.append(AdvCase(
                f"pt-zip/adv-run-later-{entry}-{name}", _file(entry, edits, record), errors,
                base_feats + feats, spec_base + spec,
                f"torch's state dict of six float32 2x3 tensors with entry l{entry} changed: {how}", src,
                GEN, category="reject" if errors else "accept",
                why_stricter=SHARED_WHY if name == "key-shared-other-numel" else ""))
    return out
