"""Reading a source into a :class:`~torchfmt.model.Document`: a path, the bytes of a file or a binary
file object, detected (spec/canonical.md#canonical-detect) and handed to its container's reader (the
zip archive, the legacy stream, the tar archive, the ``.t7`` file).

The package's face (:mod:`torchfmt`) names these; the tools (:mod:`torchfmt.tools`) read through them
without importing the face, which reaches a tool (``load_file``).
"""

from __future__ import annotations

import contextlib
import gc
import mmap as _mmap
import os
from collections.abc import Iterator
from typing import BinaryIO, Union

from .detect import detect
from .errors import FormatError
from .inputs import open_file
from .model import Document
from .pickle.machine import INERT_ADVICE
from .t7.encodings import Hints
from .windows import FileWindows, MemoryWindows


def read_bytes(buf: bytes | memoryview | _mmap.mmap, hints: Hints | None = None, *,
               inert: bool = False) -> Document:
    """Read a whole file held in ``buf`` (spec/canonical.md#canonical-detect).  ``inert`` keeps pickle
    globals outside the allowlist as opaque records instead of rejecting them
    (spec/canonical.md#canonical-inert)."""
    return _read(buf, detect(buf), hints, inert)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a file is read: a reading makes hundreds of thousands
    of container objects that all stay alive, and each collection would walk every one of them again
    (a quarter of the time of a 20,000-tensor state_dict, issue 12).  Reference counting still frees
    what dies; the collector runs again once the reading ends."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _read(buf: bytes | memoryview | _mmap.mmap | FileWindows, kind: str, hints: Hints | None,
          inert: bool, fd: int | None = None) -> Document:
    with _collector_paused():
        return _read_kind(buf, kind, hints, inert, fd)


def _read_kind(buf: bytes | memoryview | _mmap.mmap | FileWindows, kind: str, hints: Hints | None,
               inert: bool, fd: int | None) -> Document:
    if kind == "zip":
        from .pt.zip import read_zip

        # the command reads a zip file through FileWindows; bytes or a map from the API through MemoryWindows
        return read_zip(buf if isinstance(buf, FileWindows) else MemoryWindows(buf), inert=inert)
    if kind == "pt-legacy":
        from .pt.legacy import read_legacy

        return read_legacy(buf, inert=inert)
    if kind == "pt-tar":
        from .pt.tar import read_tar

        return read_tar(buf, inert=inert)
    from .t7.reader import read_t7

    return read_t7(buf, hints or Hints(), fd)


def open_document(path: str | os.PathLike[str], hints: Hints | None = None, *,
                  inert: bool = False, mmap: bool = True) -> Document:
    """Read the file at ``path`` into a :class:`Document`: a zip file through bounded windows, any other
    variant through a map of the whole file; ``mmap=False`` reads the whole file into memory first (its
    arrays then survive the file being overwritten, which ends a process holding mapped ones)."""
    if not mmap:
        with open_file(path) as g:
            return read_bytes(g.read(), hints, inert=inert)
    # unbuffered: it is only ever read by pread and maps (FileWindows, the .t7 reader)
    f = open_file(path, buffering=0)  # a zip file's windows keep it open while records may be mapped
    try:
        source = FileWindows(f)
        if len(source) == 0:
            raise FormatError("truncated", 0, "empty file")
        kind = detect(source[0:512])
        if kind == "zip":
            return _read(source, kind, hints, inert)
        mm = _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_READ)
    except BaseException:
        f.close()
        raise
    with f:  # open while it is read: the .t7 reader reads some headers from it (pread)
        return _read(memoryview(mm), kind, hints, inert, f.fileno())


#: What :func:`load` and :func:`load_file` read: a path, the bytes of a file, or a binary file object
#: read from its position (as ``torch.load`` takes them).
Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO]


def _api_error(e: FormatError) -> FormatError:
    """A refusal raised to Python code names the keyword, not the command's flag."""
    if e.code == "unsafe-global" and INERT_ADVICE in e.message:
        return FormatError(e.code, e.offset, e.message.replace(INERT_ADVICE, API_INERT_ADVICE),
                           needed_end=e.needed_end)
    return e


#: What the reader's unsafe-global refusal advises, for a caller of the Python API.
API_INERT_ADVICE = ("a pickled object such as a whole torch.save(model) is read, without running it, by "
                    "torchfmt.load(..., inert=True)")


def load_document(source: Source, hints: Hints | None = None, *, inert: bool = False,
                  mmap: bool = True) -> Document:
    """:func:`open_document` of a path, :func:`read_bytes` of bytes, or the document a binary file object
    holds from its position: a legacy stream's first object, the position left just after it (so that
    the next call reads the next object saved into the same stream, spec/pt-legacy.md#pt-legacy-stream),
    a ``gzip.open`` object included; any other variant read to the end."""
    try:
        if isinstance(source, (str, os.PathLike)):
            return open_document(source, hints, inert=inert, mmap=mmap)
        if isinstance(source, (bytes, bytearray, memoryview)):
            return read_bytes(bytes(source), hints, inert=inert)
        if not hasattr(source, "read"):
            raise TypeError(f"load takes a path, bytes or a binary file object, not {type(source).__name__}")
        return _read_stream(source, hints, inert)
    except FormatError as e:
        raise _api_error(e) from None


def _read_stream(f: BinaryIO, hints: Hints | None, inert: bool) -> Document:
    start = f.tell() if f.seekable() else None
    data = f.read()
    if not isinstance(data, bytes):
        raise TypeError("load reads a binary file object (open(path, 'rb')), not a text one")
    if not data:
        raise FormatError("truncated", 0, "empty file" if not start else "nothing left in the stream")
    kind = detect(data[:512])
    if kind != "pt-legacy":
        return read_bytes(data, hints, inert=inert)
    from .pt.legacy import read_legacy

    with _collector_paused():
        doc = read_legacy(data, inert=inert, stream=True)
    end = doc.extra.pop("end")
    if end != len(data):
        if start is None:
            raise FormatError("bad-container", end, f"{len(data) - end} bytes after the object, in a stream "
                                                    "that cannot seek back to them (open the file itself)")
        f.seek(start + end)
    return doc
