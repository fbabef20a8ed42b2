"""Tensors that lie about their storage: views outside it, negative or overflowing sizes and strides,
storage records whose size disagrees with the element count (the CVE-2026-24747 family), one storage key
used with two dtypes (spec/tensors.md#tensors-view-bounds, spec/pt-zip.md#pt-zip-consistency).

Each pickle is torch's ``_rebuild_tensor_v2`` call as torch writes it (checked: the unedited program
loads), with one argument changed; storages are torch's own records.
"""

from __future__ import annotations

from . import assemble as a
from . import rawzip, sources, wrap
from .record import AdvCase

GEN = "tensors.py"
BASE = ["zip-archive", "pickle-protocol-2", "pickle-persistent-id", "pickle-reduce", "dtype-float32"]
VIEW = ["tensors.md#tensors-view-bounds", "pt-zip.md#pt-zip-data-pkl"]


def _doc(*tensors: tuple[str, bytes]) -> bytes:
    return a.program(a.dict_(*((a.binunicode(k), v) for k, v in tensors)))


def _weight(
    offset: int = 0,
    size: tuple[int, ...] = (2, 3),
    stride: tuple[int, ...] = (3, 1),
    numel: int = 6,
    cls: str = "FloatStorage",
    key: str = "0",
) -> bytes:
    return a.rebuild_tensor(a.storage_pid(cls, key, "cpu", numel), offset, size, stride)


def _bias(numel: int = 2, cls: str = "FloatStorage", key: str = "1", size: tuple[int, ...] = (2,)) -> bytes:
    return a.rebuild_tensor(a.storage_pid(cls, key, "cpu", numel), 0, size, (1,))


def baseline() -> bytes:
    """The unedited program, re-assembled: must load in torch like torch's own file."""
    return _doc(("weight", _weight()), ("bias", _bias()))


def tensor_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    def case(
        name: str,
        pkl: bytes,
        errors: list[str],
        feats: list[str],
        spec: list[str],
        how: str,
        *,
        why: str = "",
        category: str = "reject",
        data: bytes | None = None,
    ) -> None:
        out.append(
            AdvCase(
                f"pt-zip/adv-{name}",
                data if data is not None else wrap.in_zip(pkl),
                errors,
                BASE + feats,
                VIEW + spec,
                how,
                sources.zip_source(),
                GEN,
                category=category,
                why_stricter=why,
            )
        )

    oob, neg = ["adv-view-out-of-bounds"], ["adv-negative-length"]
    case(
        "tensor-view-one-past-end",
        _doc(("weight", _weight(offset=1)), ("bias", _bias())),
        ["out-of-bounds"],
        oob + ["storage-offset", "partial-view"],
        ["tensors.md#tensors-storage-offset"],
        "weight's storage offset set from 0 to 1: the 2x3 view ends one element past its 6-element storage",
    )
    case(
        "tensor-stride-outside-storage",
        _doc(("weight", _weight(stride=(300, 1))), ("bias", _bias())),
        ["out-of-bounds"],
        oob + ["non-contiguous"],
        ["tensors.md#tensors-stride"],
        "weight's stride set to (300, 1): its last element is element 302 of a 6-element storage",
    )
    case(
        "tensor-negative-size",
        _doc(("weight", _weight(size=(-1, 3))), ("bias", _bias())),
        ["bad-length"],
        neg,
        ["tensors.md#tensors-view"],
        "weight's size set to (-1, 3)",
    )
    case(
        "tensor-negative-stride",
        _doc(("weight", _weight(stride=(-3, 1), offset=3)), ("bias", _bias())),
        ["bad-length", "out-of-bounds"],
        neg + ["storage-offset"],
        ["tensors.md#tensors-stride"],
        "weight's stride set to (-3, 1) with offset 3 (all its elements would lie inside the storage, "
        "walking backwards): PyTorch tensors have no negative strides",
    )
    case(
        "tensor-negative-offset",
        _doc(("weight", _weight(offset=-3)), ("bias", _bias())),
        ["bad-length", "out-of-bounds"],
        neg + ["storage-offset"],
        ["tensors.md#tensors-storage-offset"],
        "weight's storage offset set to -3",
    )
    case(
        "tensor-size-overflow",
        _doc(("weight", _weight(size=(1 << 62, 4), stride=(4, 1))), ("bias", _bias())),
        ["bad-length", "out-of-bounds"],
        ["adv-huge-count"],
        ["tensors.md#tensors-view"],
        "weight's size set to (2^62, 4): the element count 2^64 overflows int64",
    )
    case(
        "tensor-stride-overflow",
        _doc(("weight", _weight(size=(2, 3), stride=(1 << 62, 1))), ("bias", _bias())),
        ["bad-length", "out-of-bounds"],
        ["adv-huge-count"],
        ["tensors.md#tensors-stride"],
        "weight's stride set to (2^62, 1): the offset of its last element overflows int64 when multiplied "
        "by 4 bytes",
    )
    case(
        "tensor-huge-expanded-view",
        _doc(("weight", _weight(size=(1 << 31, 1 << 31), stride=(0, 0))), ("bias", _bias())),
        ["limit-exceeded"],
        ["adv-huge-count", "expanded-stride0"],
        ["canonical.md#canonical-hash"],
        "weight's size set to (2^31, 2^31) with strides (0, 0): in bounds (every element is element 0), but "
        "its description hashes 2^62 logical elements",
        why="the view is legal for torch (an expand of one element); the spec's tensor hash walks the "
        "logical elements, so a reader must refuse it with limit-exceeded rather than run for ever",
    )
    case(
        "tensor-size-stride-rank-mismatch",
        _doc(("weight", _weight(size=(2, 3), stride=(3, 1, 1))), ("bias", _bias())),
        ["bad-value", "bad-length"],
        [],
        ["tensors.md#tensors-stride"],
        "weight's size has 2 dimensions and its stride 3",
    )
    # -- storage records that disagree with the persistent id (CVE-2026-24747)
    cve = ["adv-storage-size-mismatch"]
    case(
        "storage-numel-exceeds-record",
        _doc(("weight", _weight(numel=1000)), ("bias", _bias())),
        ["bad-value"],
        cve,
        ["pt-zip.md#pt-zip-storage-records"],
        "storage 0's persistent id says 1000 elements; its record holds 24 bytes (6 floats)",
    )
    case(
        "storage-numel-below-view",
        _doc(("weight", _weight(numel=2)), ("bias", _bias())),
        ["bad-value"],
        cve + oob,
        ["pt-zip.md#pt-zip-storage-records"],
        "storage 0's persistent id says 2 elements (its record holds 6): the 2x3 view reaches past the "
        "declared storage",
    )
    members = sources.zip_members()
    for m in members:
        if m.name.endswith("/data/0"):
            m.data = m.data + bytes(16)
    case(
        "storage-record-longer",
        baseline(),
        ["bad-value"],
        cve,
        ["pt-zip.md#pt-zip-storage-records"],
        "torch's data/0 record grown by 16 zero bytes (40 bytes for a 6-element float storage); the "
        "pickle unchanged",
        data=rawzip.build(members),
    )
    two = _doc(("weight", _weight()), ("bias", _bias(numel=3, cls="DoubleStorage", key="0", size=(3,))))
    case(
        "storage-key-two-dtypes",
        two,
        ["bad-reference", "bad-value"],
        ["dtype-float64", "shared-storage"],
        ["pt-zip.md#pt-zip-consistency"],
        "storage key '0' named as torch.FloatStorage (6 elements) by weight and as torch.DoubleStorage "
        "(3 elements, the same 24 bytes) by bias",
        why="torch keeps the first typed view of a key and reinterprets the bytes for the second name; the "
        "spec requires every persistent id of one key to agree, so no reader has to pick one reading",
    )
    two_n = _doc(("weight", _weight()), ("bias", _bias(numel=2, key="0")))
    case(
        "storage-key-two-numels",
        two_n,
        ["bad-reference", "bad-value"],
        ["shared-storage"],
        ["pt-zip.md#pt-zip-consistency"],
        "storage key '0' named with 6 elements by weight and 2 by bias (same type)",
        why="torch loads the record once and ignores the second count; the spec requires every persistent "
        "id of one key to agree",
    )
    case(
        "storage-negative-numel",
        _doc(("weight", _weight(numel=-6)), ("bias", _bias())),
        ["bad-length", "bad-value"],
        neg,
        ["pt-zip.md#pt-zip-storage-records"],
        "storage 0's persistent id says -6 elements",
    )
    unknown = _doc(("weight", _weight(cls="QuantumStorage")), ("bias", _bias()))
    case(
        "storage-unknown-type",
        unknown,
        ["unsafe-global", "bad-value", "bad-reference"],
        [],
        ["tensors.md#tensors-dtype-table"],
        "storage 0's type global is torch.QuantumStorage (no such type)",
    )
    # -- legacy stream: the count before the raw bytes disagrees with the persistent id
    keys, tail = wrap.legacy_tail()
    legacy = bytearray(wrap.legacy_with(wrap.legacy_pickle()))
    pos = len(legacy) - len(tail)
    count = int.from_bytes(legacy[pos : pos + 8], "little", signed=True)
    legacy[pos : pos + 8] = (count - 3).to_bytes(8, "little", signed=True)
    out.append(
        AdvCase(
            "pt-legacy/adv-storage-count-below-pid",
            bytes(legacy),
            ["bad-value"],
            ["legacy-stream", "pickle-persistent-id", "adv-storage-size-mismatch", "dtype-float32"],
            ["pt-legacy.md#pt-legacy-storages", "tensors.md#tensors-view-bounds"],
            f"in torch's legacy stream the first storage's element count (int64 at byte {pos}) set "
            f"from {count} to {count - 3}: the bytes after it no longer line up with the next "
            "storage, and the pickle's persistent id still says " + str(count),
            sources.torch_legacy(),
            GEN,
        )
    )
    return out
