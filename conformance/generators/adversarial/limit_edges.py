"""The budgets of spec/canonical.md#canonical-node-budget and pickle.md#pickle-limits at their edges: a
description of exactly 500,000 VALUE nodes (a file torch.save wrote, a sparse COO tensor among them) and
of 500,001, bytes text four bytes a copy past the text budget, tensors holding exactly 4 times their
storages' bytes plus 268,435,456 (VIEW_BYTES) and one more.  Each hand-made pickle sits in torch's zip
container as ``archive/data.pkl``; the accept cases' expectation is torch's description of what
``weights_only=True`` loads (torchcheck)."""

from __future__ import annotations

import io
import pickle
from functools import cache

from conformance.harness.facts import limit

from . import assemble as a
from . import rawzip, sources, wrap
from .pickle_bounds import MAX_NODES
from .record import AdvCase, Source

GEN = "limit_edges.py"
BUDGET = "canonical.md#canonical-node-budget"
NO_STORAGE = ("/data/0", "/data/1")
VIEW_BYTES = limit("VIEW_BYTES")  # spec/pickle.md#pickle-limits (the spec's table: harness/facts.py)
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


#: The list torch saves for the case at the node budget: a sparse COO tensor (3 nodes: itself, its indices
#: and its values), one tuple of TUPLE_NONES Nones TUPLES times (torch's pickler memoizes it: written once,
#: fetched again by BINGET; a tuple is written in full at every occurrence, canonical-sharing) and NONES
#: Nones, with the list itself 1 + 3 + 499 x 1,000 + 996 = 500,000 nodes.
TUPLE_NONES, TUPLES = 999, 499
NONES = MAX_NODES - 1 - 3 - TUPLES * (1 + TUPLE_NONES)
SPARSE_AT_BUDGET = (
    "torch.save([torch.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 4.5]]).to_sparse(), *[(None,) * "
    f"{TUPLE_NONES}] * {TUPLES}, *[None] * {NONES}], f)"
)


@cache
def sparse_at_budget() -> Source:
    """The file torch writes for :data:`SPARSE_AT_BUDGET` (torch's bytes unchanged: its zip records are
    reproducible, the serialization_id derived from the content)."""
    import torch

    coo = torch.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 4.5]]).to_sparse()
    buf = io.BytesIO()
    torch.save([coo, *[(None,) * TUPLE_NONES] * TUPLES, *[None] * NONES], buf)
    return Source(buf.getvalue(), f"the file written by {SPARSE_AT_BUDGET}, unchanged",
                  f"torch {torch.__version__}")


def limit_edge_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    def case(name: str, data: bytes, errors: list[str], feats: list[str], spec: list[str], how: str,
             protocol: int = 2, source: Source | None = None) -> None:
        out.append(AdvCase(f"pt-zip/adv-edge-{name}", data, errors,
                           ["zip-archive", f"pickle-protocol-{protocol}", *feats],
                           [*spec, "pt-zip.md#pt-zip-data-pkl"], how, source or sources.zip_source(), GEN,
                           category="reject" if errors else "accept", why_stricter=WHY if errors else ""))

    def in_zip(body: bytes, protocol: int = 2) -> bytes:
        return wrap.in_zip(a.program(body, protocol), drop=NO_STORAGE)

    written = sparse_at_budget()
    case("nodes-500000-sparse", written.data, [],
         ["adv-expansion-bomb", "sparse-coo", "dtype-float32", "dtype-int64", "contiguous", "pickle-list",
          "pickle-memo", "pickle-tuple", "pickle-persistent-id", "pickle-reduce"],
         [BUDGET, "pickle.md#pickle-limits", "canonical.md#canonical-sharing",
          "canonical.md#canonical-sparse", "tensors.md#tensors-sparse", "pickle.md#pickle-memo",
          "pickle.md#pickle-persistent-id", "pt-zip.md#pt-zip-storage-records"],
         f"The case's file is that file byte for byte. Its description holds exactly {MAX_NODES:,} VALUE "
         f"nodes, the budget: the list, the sparse_tensor with its indices and values tensors (3), {TUPLES} "
         f"copies of the memoized tuple of {TUPLE_NONES} Nones ({TUPLES} x {1 + TUPLE_NONES:,}) and {NONES} "
         "Nones. A reader that also counted the compressed layouts' parts a COO tensor lacks would count "
         f"{MAX_NODES + 2:,} and reject it", source=written)
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
    half = VIEW_BYTES // 2
    case("view-elements-at-bound", _expanded_views(half + 2, half + 2), [],
         ["dtype-uint8", "shared-storage", "pickle-persistent-id"], [BUDGET, "tensors.md#tensors-view"],
         "a one-element uint8 storage and two tensors over it with stride 0 (as expand saves them) of "
         f"{half + 2:,} elements each: {2 * half + 4:,} bytes, exactly 4 times the storage's 1 plus "
         f"{VIEW_BYTES:,}, the most the budget allows")
    case("view-elements-past-bound", _expanded_views(half + 2, half + 3), ["limit-exceeded"],
         ["dtype-uint8", "shared-storage", "pickle-persistent-id", "adv-expansion-bomb"],
         [BUDGET, "tensors.md#tensors-view"],
         f"the same storage and tensors of {half + 2:,} and {half + 3:,} elements: {2 * half + 5:,} bytes, "
         f"one past 4 times the storage's 1 plus {VIEW_BYTES:,}")
    return out
