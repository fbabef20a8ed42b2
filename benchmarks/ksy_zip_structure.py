"""How much of a large .pt the Kaitai grammar reads to parse its structure (ksy/pytorch_zip.ksy).

Writes a ~1 GB zip checkpoint with torch into a temporary folder (deleted afterwards), parses its
structure with the generated parser through a file object that counts the bytes actually read (end
records, central directory, every local header and the data.pkl pickle; no storage body), and prints
the figure.  The target (spec/pt-zip.md#pt-zip-storage-records: storages are mapped, not read) is
under 1 MB.

    PYTHONPATH=ksy/generated python benchmarks/ksy_zip_structure.py [--gib 1.0] [--keep PATH]

(``PYTHONPATH``: the generated parsers are top-level modules of ``ksy/generated/``, as for the tests.)
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

from kaitaistruct import KaitaiStream
from pytorch_zip import PytorchZip

ROOT = Path(__file__).resolve().parents[1]

TARGET_BYTES = 1 << 20


class CountingFile(io.RawIOBase):
    """A read-only unbuffered file that counts the bytes handed out by read() and the calls made."""

    def __init__(self, path: Path) -> None:
        self._f = open(path, "rb", buffering=0)  # noqa: SIM115 - closed in close()
        self.bytes_read = 0
        self.reads = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        self.bytes_read += len(data)
        self.reads += 1
        return data

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def close(self) -> None:
        self._f.close()
        super().close()


def write_checkpoint(path: Path, gib: float) -> int:
    """A state_dict-like dict of 64 MiB float32 tensors adding up to about ``gib`` GiB."""
    import torch

    chunk = 16 * 1024 * 1024  # float32 elements: 64 MiB
    count = max(1, round(gib * 1024 / 64))
    state = {f"layer{i}.weight": torch.full((chunk,), float(i), dtype=torch.float32) for i in range(count)}
    state["step"] = 1000
    torch.save(state, path)
    return path.stat().st_size


def parse_structure(path: Path) -> tuple[CountingFile, dict[str, object]]:
    """Everything but the storage bodies: end records, central directory, local headers, data.pkl."""
    counting = CountingFile(path)
    parsed = PytorchZip(KaitaiStream(counting))
    entries = parsed.central_dir.entries
    storages = 0
    payload_bytes = 0
    for entry in entries:
        local = entry.local_file
        assert local.file_name == entry.file_name and local.is_aligned
        if local.is_pickle:
            ops = local.pickle.ops
        elif "/data/" in entry.file_name:
            storages += 1
            payload_bytes += entry.len_body
    facts = {
        "records": len(entries),
        "storages": storages,
        "storage_bytes": payload_bytes,
        "pickle_ops": len(ops),
    }
    return counting, facts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=1.0, help="checkpoint size in GiB (default 1)")
    ap.add_argument("--keep", type=Path, help="parse this existing .pt instead of writing one")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ksy-bench-") as tmp:
        if args.keep:
            path, size = args.keep, args.keep.stat().st_size
        else:
            path = Path(tmp) / "big.pt"
            t0 = time.perf_counter()
            size = write_checkpoint(path, args.gib)
            print(f"wrote {size / 2**30:.2f} GiB with torch.save in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        counting, facts = parse_structure(path)
        elapsed = time.perf_counter() - t0
        counting.close()
    gib_bodies = facts["storage_bytes"] / 2**30  # type: ignore[operator]
    print(f"records: {facts['records']}, storages: {facts['storages']} "
          f"({gib_bodies:.2f} GiB of storage bodies), data.pkl: {facts['pickle_ops']} opcodes")
    print(f"structure parsed in {elapsed * 1000:.1f} ms with {counting.reads} reads")
    share = counting.bytes_read / size * 100
    print(f"bytes read: {counting.bytes_read} of {size} ({share:.5f}% of the file); "
          f"target < {TARGET_BYTES}: {'met' if counting.bytes_read < TARGET_BYTES else 'MISSED'}")
    return 0 if counting.bytes_read < TARGET_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
