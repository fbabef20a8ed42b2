"""The truncation tier's cases: real files cut at their structural boundaries are ``truncated``
(spec/canonical.md#canonical-error-codes).

Written when asked (:func:`write_cut_cases`; conformance/test_truncations.py at collection, the mutation
driver), never committed, never on import: a few committed accept cases per format are cut at offsets where
a structure starts (or, for a few fields, in its middle), each cut is written to a temporary folder and
run through the reader under test, which must exit 1 with ``truncated``.  Each cut is its own
test, ``generated/truncation/<case-id>@<offset>``, recorded in ``--report-json`` with tier ``generated``.

Boundaries, found from the file's own layout (never by reading it with torchfmt):

- ``t7-binary``: :func:`.adversarial.t7.truncation_points` (spec/t7.md#t7-stream: a cut between
  two top-level objects is a shorter valid stream, so those are left out);
- ``t7-ascii``: :func:`.adversarial.t7.ascii_truncation_points`, every offset after whitespace up
  to the last token of the one object (spec/t7.md#t7-ascii: a cut inside the last number is a shorter
  number);
- ``pt-zip``: each local header and record data start, the central directory and each of its entries,
  the zip64 end record, its locator and the end record: a cut anywhere leaves no end record at the end of
  the file (spec/pt-zip.md#pt-zip-container);
- ``pt-legacy``: the start of each of the five pickles and a few opcodes of the object pickle (listed
  with :func:`pickletools.genops`, never loaded), each storage's count and data, and the middle of the
  last storage (spec/pt-legacy.md#pt-legacy-storages, spec/pickle.md#pickle-opcodes);
- ``pt-tar``: each 512-byte header, the middle of each header, each member's data start and middle, and
  the end-of-archive block: a cut anywhere before that block leaves an archive without its end
  (spec/pt-tar.md#pt-tar-members), except in the first header before its ustar magic (no tar file then);
- ``pt-torchscript``: as ``pt-zip`` (a TorchScript archive is a zip file).
"""

from __future__ import annotations

import atexit
import io
import pickletools
import shutil
import struct
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from conformance.harness.cases import Case, committed_cases

from .adversarial.t7 import ascii_truncation_points, truncation_points

#: The committed accept cases that are cut, per format.
BASES = {
    "t7-binary": ["long8-tensor-double-t", "table-nested", "nn-sequential-float", "shared-storage-views"],
    "t7-ascii": ["ascii-shared-storage-views", "ascii-table-mixed", "ascii-tensor-half-2x3"],
    "pt-zip": ["state-dict-mlp", "storage-offset", "python-containers"],
    "pt-legacy": ["state-dict-mlp", "views-shared-storage", "python-containers"],
    "pt-tar": ["adv-tar-state-dict", "adv-tar-storage-views"],
    "pt-torchscript": ["torchscript-tiny"],
}
#: At most this many cuts per file (spread evenly over its boundaries).
MAX_CUTS = 20
#: Opcode boundaries of a legacy file's object pickle that are cut (spread evenly).
OBJECT_OPCODES = 5
EOCD, ZIP64_LOCATOR, ZIP64_EOCD = b"PK\x05\x06", b"PK\x06\x07", b"PK\x06\x06"
TAR_BLOCK, TAR_MAGIC_END = 512, 265


def zip_points(data: bytes) -> list[int]:
    """Each local header, each record's data start, the central directory and each entry, the zip64 end
    record and locator, and the end record (spec/pt-zip.md#pt-zip-container)."""
    eocd = data.rfind(EOCD)
    points = {0, eocd}
    cd_count, cd_offset = struct.unpack_from("<H4xL", data, eocd + 10)
    if data[eocd - 20:eocd - 16] == ZIP64_LOCATOR:
        points.add(eocd - 20)
        (z64,) = struct.unpack_from("<Q", data, eocd - 12)
        points.add(z64)
        cd_count, cd_offset = struct.unpack_from("<QxxxxxxxxQ", data, z64 + 32)
    pos = cd_offset
    for _ in range(cd_count):
        points.add(pos)
        n, m, k = struct.unpack_from("<3H", data, pos + 28)
        pos += 46 + n + m + k
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in z.infolist():
            points.add(info.header_offset)
            n, m = struct.unpack_from("<2H", data, info.header_offset + 26)
            points.add(info.header_offset + 30 + n + m)
    return sorted(p for p in points if p < len(data))


def _pickle_ops(data: bytes, start: int) -> tuple[list[int], int]:
    """The opcode offsets of the pickle at ``start`` and the offset just after its STOP."""
    stream = io.BytesIO(data)
    stream.seek(start)
    offsets = [pos for _, _, pos in pickletools.genops(stream)]
    return offsets, stream.tell()


def _storage_counts(data: bytes, pos: int, keys: int) -> list[int] | None:
    """The offsets of ``keys`` storages' count fields from ``pos`` to the end of the file, trying each
    element width (the layout must end exactly at the end of the file); ``None`` when none fits."""
    if keys == 0:
        return [] if pos == len(data) else None
    if pos + 8 > len(data):
        return None
    (numel,) = struct.unpack_from("<q", data, pos)
    if numel < 0 or pos + 8 + numel > len(data):
        return None
    for width in (1, 2, 4, 8, 16):
        rest = _storage_counts(data, pos + 8 + numel * width, keys - 1)
        if rest is not None:
            return [pos, *rest]
    return None


def legacy_points(data: bytes) -> list[int]:
    """The five pickles' starts, a few opcodes of the object pickle, each storage's count and data start,
    and the middle of the last storage (spec/pt-legacy.md#pt-legacy-storages)."""
    points = {0}
    pos = 0
    ops: list[list[int]] = []
    for _ in range(5):  # magic, protocol version, sys_info, object, storage keys
        points.add(pos)
        offsets, pos = _pickle_ops(data, pos)
        ops.append(offsets)
    step = max(1, len(ops[3]) // OBJECT_OPCODES)
    points.update(ops[3][step::step][:OBJECT_OPCODES])
    keys = sum(1 for op, _, _ in pickletools.genops(data[ops[4][0]:pos]) if op.name in
               ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINSTRING", "SHORT_BINSTRING", "STRING"))
    counts = _storage_counts(data, pos, keys)
    assert counts is not None, "the storages after the keys pickle do not fill the file"
    for c in counts:
        points.update((c, c + 8))
    if counts:
        points.add((counts[-1] + 8 + len(data)) // 2)
    return sorted(p for p in points if p < len(data))


def tar_points(data: bytes) -> list[int]:
    """Each header and its middle, each member's data start and middle, and the end-of-archive block,
    found from the headers' octal size fields (spec/pt-tar.md#pt-tar-members)."""
    points = set()
    pos = 0
    while data[pos:pos + TAR_BLOCK] != bytes(TAR_BLOCK):
        size = int(data[pos + 124:pos + 136].rstrip(b"\0 ") or b"0", 8)
        points.update((pos, pos + TAR_BLOCK // 2, pos + TAR_BLOCK, pos + TAR_BLOCK + size // 2))
        pos += TAR_BLOCK + -(-size // TAR_BLOCK) * TAR_BLOCK
    points.add(pos)
    # a cut of the first header before its ustar magic ends is no tar file (canonical-detect): left out
    return sorted(p for p in points if p <= pos and not 0 < p < TAR_MAGIC_END)


POINTS: dict[str, Callable[[bytes], list[int]]] = {
    "t7-binary": truncation_points, "t7-ascii": ascii_truncation_points, "pt-zip": zip_points,
    "pt-legacy": legacy_points, "pt-tar": tar_points, "pt-torchscript": zip_points}


def spread(points: list[int], limit: int = MAX_CUTS) -> list[int]:
    """At most ``limit`` of ``points``, evenly spread, always with the first and the last."""
    if len(points) <= limit:
        return points
    chosen = {points[round(i * (len(points) - 1) / (limit - 1))] for i in range(limit)}
    return sorted(chosen)


def cuts() -> list[tuple[Case, int]]:
    """Every (base case, offset) of the tier: :data:`BASES` cut at their spread boundaries, in a fixed
    order (read from the committed files' bytes only)."""
    committed = {c.id: c for c in committed_cases(lazy=True)}
    out = []
    for fmt, names in BASES.items():
        for name in names:
            base = committed[f"{fmt}/{name}"].loaded()
            assert base.category == "accept" and not base.problems, base.id
            out.extend((base, cut) for cut in spread(POINTS[fmt](base.path.read_bytes())))
    return out



def write_cut_cases(cuts: list[tuple[Case, int]]) -> list[Case]:
    """Every cut written to a temporary folder (removed when the process ends) as a reject case
    (spec/canonical.md#canonical-error-codes: ``truncated``).  Called by the suite's test module at
    collection, so that the suite starts their runs with the committed cases' (conftest.py), and by the
    mutation driver, which runs the same tier."""
    top = Path(tempfile.mkdtemp(prefix="torchfmt-truncations-"))
    atexit.register(shutil.rmtree, top, ignore_errors=True)
    # named as pytest's tmp_path_factory.mktemp("truncations") names its first folder: the sample of cuts
    # run by the command (conftest.cold_sample, fixed by folder and file name) stays the same
    folder = top / "truncations0"
    folder.mkdir()
    cases = []
    for base, cut in cuts:
        case_id = f"generated/truncation/{base.id}@{cut}"
        path = folder / f"{base.id.replace('/', '--')}@{cut}{base.path.suffix}"
        path.write_bytes(base.path.read_bytes()[:cut])
        cases.append(Case(id=case_id, tier="generated", category="reject", format=base.format,
                          path=path, features=sorted({*base.features, "adv-truncated"}),
                          spec=["canonical.md#canonical-error-codes"], hints=base.hints,
                          errors=("truncated",)))
    return cases
