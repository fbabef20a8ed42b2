"""The budgets of spec/canonical.md#canonical-node-budget and pickle.md#pickle-limits at their edges: a
description of exactly 500,001 VALUE nodes, bytes text four bytes a copy past the text budget, tensors
holding exactly 4 times their storages' elements plus 16,777,216 and one more, a value nested exactly
1,000 deep.  Each pickle sits in torch's zip container as ``archive/data.pkl``; the accept cases' expectation
is torch's description of what ``weights_only=True`` loads (torchcheck)."""

from __future__ import annotations

import pickle

from . import assemble as a
from . import rawzip, sources, wrap
from .record import AdvCase

GEN = "limit_edges.py"
BUDGET = "canonical.md#canonical-node-budget"
NO_STORAGE = ("/data/0", "/data/1")
VIEW_ELEMENTS = 1 << 24
WHY = ("the spec bounds a description (nodes, text, the elements its tensors' hashes read) so that a small "
       "file cannot make a reader build or hash without end; torch builds the value and never describes it")


def _referenced(value: bytes, times: int) -> bytes:
    """A list holding ``value`` (memo 0) ``times`` times: written in full at each reference (no POP, which
    torch's weights_only unpickler does not run)."""
    return pickle.EMPTY_LIST + pickle.MARK + value + a.put(0) + a.get(0) * (times - 1) + pickle.APPENDS


def _expanded_views(*numels: int) -> bytes:
    """torch's zip members with storage ``0``, one uint8 element, and a list of tensors over it, each of
    ``numel`` elements with stride 0 (what ``expand`` saves)."""
    pid = a.storage_pid("ByteStorage", "0", "cpu", 1)
    tensors = b"".join(a.rebuild_tensor(pid, 0, (n,), (0,)) for n in numels)
    pkl = a.program(pickle.EMPTY_LIST + pickle.MARK + tensors + pickle.APPENDS)
    members = [m for m in sources.zip_members() if not m.name.endswith("/data/1")]
    for m in members:
        if m.name.endswith("/data/0"):
            m.data = b"\x07"
        elif m.name.endswith("/data.pkl"):
            m.data = pkl
    return rawzip.build(members)


def limit_edge_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    def case(name: str, data: bytes, errors: list[str], feats: list[str], spec: list[str], how: str,
             protocol: int = 2) -> None:
        out.append(AdvCase(f"pt-zip/adv-edge-{name}", data, errors,
                           ["zip-archive", f"pickle-protocol-{protocol}", *feats],
                           [*spec, "pt-zip.md#pt-zip-data-pkl"], how, sources.zip_source(), GEN,
                           category="reject" if errors else "accept", why_stricter=WHY if errors else ""))

    def in_zip(body: bytes, protocol: int = 2) -> bytes:
        return wrap.in_zip(a.program(body, protocol), drop=NO_STORAGE)

    nones = pickle.MARK + pickle.NONE * 999 + pickle.TUPLE
    case("nodes-500001", in_zip(_referenced(nones, 500)), ["limit-exceeded"],
         ["adv-expansion-bomb", "pickle-memo", "pickle-tuple"], [BUDGET, "pickle.md#pickle-limits"],
         "a list holding one memoized tuple of 999 Nones 500 times: 1 + 500 x 1,000 = 500,001 VALUE nodes, "
         "one past the 500,000-node budget")
    blob = pickle.BINBYTES + (1 << 16).to_bytes(4, "little") + bytes(range(256)) * 256
    case("text-bytes-past-budget", in_zip(_referenced(blob, 2048), 3), ["limit-exceeded"],
         ["adv-expansion-bomb", "pickle-memo", "pickle-bytes"], [BUDGET],
         "a protocol-3 pickle (BINBYTES) of a list holding one memoized 65,536-byte bytes value 2,048 "
         "times: each copy writes 131,074 bytes of JSON text (two hex digits a byte and two quotes), "
         "268,439,552 in all, 4,096 past the "
         "268,435,456-byte text budget", protocol=3)
    half = VIEW_ELEMENTS // 2
    case("view-elements-at-bound", _expanded_views(half + 2, half + 2), [],
         ["dtype-uint8", "shared-storage", "pickle-persistent-id"], [BUDGET, "tensors.md#tensors-view"],
         "a one-element uint8 storage and two tensors over it with stride 0 (as expand saves them) of "
         "8,388,610 elements each: 16,777,220 elements, exactly 4 times the storage's 1 plus 16,777,216, "
         "the most the budget allows")
    case("view-elements-past-bound", _expanded_views(half + 2, half + 3), ["limit-exceeded"],
         ["dtype-uint8", "shared-storage", "pickle-persistent-id", "adv-expansion-bomb"],
         [BUDGET, "tensors.md#tensors-view"],
         "the same storage and tensors of 8,388,610 and 8,388,611 elements: 16,777,221 elements, one past "
         "4 times the storage's 1 plus 16,777,216")
    return out
