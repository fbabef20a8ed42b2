"""A file read through bounded windows, so that a 2 GiB address space reads a checkpoint larger than
that (spec/canonical.md#canonical-node-budget): the zip reader asks for small slices (headers, the central
directory, metadata and pickle records), which are read, and for storage records, which are mapped one
at a time when their bytes are hashed or converted and unmapped afterwards.

:class:`MemoryWindows` gives bytes already in memory the same interface.
"""

from __future__ import annotations

import mmap
import os
from typing import IO, Any


class FileWindows:
    """An open file, read by slices (``os.pread``) and by per-record maps (:meth:`record`)."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file  # kept open while a record may still be mapped
        self.fd = file.fileno()
        self.size = os.fstat(self.fd).st_size

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: slice) -> bytes:
        start, stop, _ = index.indices(self.size)
        if stop <= start:
            return b""
        out = os.pread(self.fd, stop - start, start)
        while len(out) < stop - start:  # pread may return less than asked for
            more = os.pread(self.fd, stop - start - len(out), start + len(out))
            if not more:
                break
            out += more
        return out

    def record(self, offset: int, size: int) -> Record:
        """The bytes ``[offset, offset + size)``, mapped only when :meth:`Record.view` is called."""
        return Record(self, offset, size)


class Record:
    """A storage record of a :class:`FileWindows`: mapped on demand, unmapped when no view is left."""

    def __init__(self, source: FileWindows, offset: int, size: int) -> None:
        self.source = source
        self.offset = offset
        self.size = size

    def __len__(self) -> int:
        return self.size

    #: Records up to this size are read rather than mapped: a map and its unmap cost more than reading
    #: a few pages, and a state_dict of 20,000 small tensors would make 20,000 maps (issue 12).
    READ_BELOW = 1 << 16

    def view(self) -> memoryview:
        """A read-only map of just this record (from the allocation boundary before it); a small record's
        bytes, read."""
        if self.size == 0:
            return memoryview(b"")
        if self.size <= self.READ_BELOW:
            return memoryview(self.source[self.offset:self.offset + self.size])
        start = self.offset - self.offset % mmap.ALLOCATIONGRANULARITY
        mm = mmap.mmap(self.source.fd, self.offset + self.size - start, offset=start, access=mmap.ACCESS_READ)
        return memoryview(mm)[self.offset - start:]


class MemoryWindows:
    """Bytes in memory (or a whole-file map) with the interface of :class:`FileWindows`."""

    def __init__(self, buf: Any) -> None:
        self.buf = buf if isinstance(buf, memoryview) else memoryview(buf)

    def __len__(self) -> int:
        return len(self.buf)

    def __getitem__(self, index: slice) -> memoryview:
        return self.buf[index]

    def record(self, offset: int, size: int) -> memoryview:
        return self.buf[offset:offset + size]


def windows(buf: Any) -> FileWindows | MemoryWindows:
    """``buf`` as windows: a :class:`FileWindows` as it is, anything else through :class:`MemoryWindows`."""
    return buf if isinstance(buf, (FileWindows, MemoryWindows)) else MemoryWindows(buf)
