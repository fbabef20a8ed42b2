"""A file read through bounded windows, so that a 2 GiB address space reads a checkpoint larger than
that (spec/canonical.md#canonical-node-budget): the zip reader asks for small slices (headers, the central
directory, metadata and pickle records), which are read, and for storage records.  A storage record is
a view of one map of the whole file when the process's address space has room for it several times
over; otherwise it is mapped alone when its bytes are hashed or converted and unmapped afterwards.  One
map for the whole file also keeps the open files to one: each map holds a file descriptor of its own, and
a model of thousands of tensors mapped one by one would run out of them.  Small records are read.

:class:`MemoryWindows` gives bytes already in memory the same interface.
"""

from __future__ import annotations

import mmap
import os
import resource
from typing import IO, Any

#: The whole file is mapped once when it takes at most this share of the address-space limit.
WHOLE_MAP_SHARE = 4


def whole_map_fits(size: int) -> bool:
    """Whether a map of ``size`` bytes leaves the address space (``RLIMIT_AS``) room enough."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return soft == resource.RLIM_INFINITY or size * WHOLE_MAP_SHARE <= soft


class FileWindows:
    """An open file, read by slices (``os.pread``) and by per-record maps (:meth:`record`)."""

    def __init__(self, file: IO[bytes]) -> None:
        self.file = file  # kept open while a record may still be mapped
        self.fd = file.fileno()
        self.size = os.fstat(self.fd).st_size
        self._whole: mmap.mmap | None = None
        self._whole_tried = False

    def whole(self) -> mmap.mmap | None:
        """The map of the whole file, made at the first record that asks for it, if it fits."""
        if not self._whole_tried:
            self._whole_tried = True
            if self.size and whole_map_fits(self.size):
                try:
                    self._whole = mmap.mmap(self.fd, 0, access=mmap.ACCESS_READ)
                except (OSError, ValueError):  # no room after all: records are mapped one at a time
                    self._whole = None
        return self._whole

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
        record = _new(Record)  # Record(self, offset, size) without the call of __init__ (issue 12)
        record.source, record.offset, record.size = self, offset, size
        return record


class Record:
    """A storage record of a :class:`FileWindows`: mapped on demand, unmapped when no view is left."""

    __slots__ = ("offset", "size", "source")

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
        """The record's bytes, read-only: a slice of the whole file's map, or a map of just this record
        (from the allocation boundary before it); a small record's bytes, read."""
        if self.size == 0:
            return memoryview(b"")
        if self.size <= self.READ_BELOW:
            return memoryview(self.source[self.offset:self.offset + self.size])
        whole = self.source.whole()
        if whole is not None:
            return memoryview(whole)[self.offset:self.offset + self.size]
        start = self.offset - self.offset % mmap.ALLOCATIONGRANULARITY
        mm = mmap.mmap(self.source.fd, self.offset + self.size - start, offset=start, access=mmap.ACCESS_READ)
        return memoryview(mm)[self.offset - start:]

    def drop(self) -> None:
        """Give back the pages of the record that the whole file's map holds resident: the map is of a
        file, read-only, so a page dropped (``MADV_DONTNEED``) is read again if touched again.  Streaming
        a big file through (``convert``) then keeps about one record resident, not the file."""
        whole = self.source._whole
        if whole is None or self.size <= self.READ_BELOW or not hasattr(mmap, "MADV_DONTNEED"):
            return
        start = self.offset - self.offset % mmap.PAGESIZE
        whole.madvise(mmap.MADV_DONTNEED, start, min(len(whole), self.offset + self.size) - start)


_new = object.__new__


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
