"""torchfmt: a torch-free reader of Lua Torch ``.t7`` and PyTorch ``.pt`` files.

Public API (spec/canonical.md):

- :func:`open_document` reads a file into a :class:`~torchfmt.model.Document` (variant + objects);
- :func:`load` returns the first object, as ``torch.load`` would;
- :func:`load_file` returns ``{dotted.name: numpy.ndarray}``, as ``safetensors.numpy.load_file`` would;
- :func:`describe` returns the canonical description as a JSON-ready ``dict``;
- :func:`save` writes what :func:`load` returns (and plain Python values, numpy arrays) as ``pt-zip``,
  ``pt-legacy`` or ``t7`` (:mod:`torchfmt.writer`).

Nothing from a file is ever executed.  Storages are views into an mmap of the file where the byte order
allows (read-only arrays: ``mmap=False`` reads the file into memory instead, for people who will
overwrite it while its arrays live; ``copy=True`` gives writable arrays), and nothing is read until
asked for; a zip file is read through bounded windows and its storage
records are mapped one at a time (:mod:`torchfmt.windows`), so that a checkpoint larger than the address
space can be described.
"""

from __future__ import annotations

import contextlib
import gc
import mmap as _mmap
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .describe import describe_document
from .detect import detect
from .errors import ERROR_CODES, FormatError, Unsupported
from .inputs import open_file
from .model import Document
from .t7.encodings import Hints
from .windows import FileWindows, MemoryWindows

if TYPE_CHECKING:
    import numpy as np

    from .writer import save

__all__ = ["ERROR_CODES", "Document", "FormatError", "Hints", "Unsupported", "describe", "load",
           "load_file", "open_document", "read_bytes", "save"]


def __getattr__(name: str) -> Any:
    """``torchfmt.save``, imported on first use: reading and describing a file need neither the writer
    nor numpy, and ``torchfmt dump`` starts faster without them (issue 12)."""
    if name == "save":
        from .writer import save

        return save
    raise AttributeError(f"module 'torchfmt' has no attribute {name!r}")


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


def load(path: str | os.PathLike[str], hints: Hints | None = None, *, inert: bool = False,
         mmap: bool = True) -> Any:
    """The file's first object, with tensors as :class:`~torchfmt.model.Tensor` (``np.asarray(t)`` is
    its values); ``mmap`` as :func:`open_document`."""
    doc = open_document(path, hints, inert=inert, mmap=mmap)
    if not doc.objects:
        raise FormatError("truncated", 0, "the file holds no object")
    return doc.objects[0]


def load_file(path: str | os.PathLike[str], hints: Hints | None = None, *, copy: bool = False,
              mmap: bool = True) -> dict[str, np.ndarray]:
    """``{dotted.name: ndarray}`` of every dense tensor of the file's first object
    (:mod:`torchfmt.tools.flat`, a tool over the reader), like ``safetensors.numpy.load_file``: read-only
    views of the file unless ``copy``."""
    from .tools.flat import arrays

    return arrays(load(path, hints, mmap=mmap), copy=copy)


def describe(path: str | os.PathLike[str], hints: Hints | None = None, *,
             inert: bool = False) -> dict[str, Any]:
    """The canonical description of the file at ``path``."""
    return describe_document(open_document(path, hints, inert=inert))
