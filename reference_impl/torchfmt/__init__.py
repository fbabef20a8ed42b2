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

import os
from typing import TYPE_CHECKING, Any

from .describe import describe_document
from .errors import ERROR_CODES, FormatError, Unsupported
from .model import Document
from .source import Source, load_document, open_document, read_bytes
from .t7.encodings import Hints

if TYPE_CHECKING:
    import numpy as np

    from .writer import save

__all__ = ["ERROR_CODES", "Document", "FormatError", "Hints", "Source", "Unsupported", "describe", "load",
           "load_document", "load_file", "open_document", "read_bytes", "save"]


def __getattr__(name: str) -> Any:
    """``torchfmt.save``, imported on first use: reading and describing a file need neither the writer
    nor numpy, and ``torchfmt dump`` starts faster without them (issue 12)."""
    if name == "save":
        from .writer import save

        return save
    raise AttributeError(f"module 'torchfmt' has no attribute {name!r}")


def _hints(hints: Hints | None, mode: str | None, long_size: int | None, byte_order: str | None) -> Hints:
    """``hints`` with the keywords that stand for ``--mode``, ``--long-size`` and ``--byte-order``."""
    return (hints or Hints()).override(mode=mode, long_size=long_size, byte_order=byte_order)


def load(source: Source, hints: Hints | None = None, *, inert: bool = False, mmap: bool = True,
         mode: str | None = None, long_size: int | None = None, byte_order: str | None = None) -> Any:
    """The first object of ``source`` (:data:`Source`: a path, bytes or a binary file object, as
    ``torch.load`` takes them), with tensors as :class:`~torchfmt.model.Tensor` (``np.asarray(t)`` is
    its values); ``inert`` as ``dump --inert``; ``mmap`` as :func:`open_document`; ``mode``,
    ``long_size`` and ``byte_order`` are the ``.t7`` hints (``--mode`` ...)."""
    doc = load_document(source, _hints(hints, mode, long_size, byte_order), inert=inert, mmap=mmap)
    if not doc.objects:
        raise FormatError("truncated", 0, "the file holds no object")
    return doc.objects[0]


def load_file(source: Source, hints: Hints | None = None, *, copy: bool = False, mmap: bool = True,
              inert: bool = False, mode: str | None = None, long_size: int | None = None,
              byte_order: str | None = None) -> dict[str, np.ndarray]:
    """``{dotted.name: ndarray}`` of every dense tensor of the first object of ``source`` (as
    :func:`load`; :mod:`torchfmt.tools.flat`, a tool over the reader), like
    ``safetensors.numpy.load_file``: read-only views of the file unless ``copy``."""
    from .tools.flat import arrays

    return arrays(load(source, hints, inert=inert, mmap=mmap, mode=mode, long_size=long_size,
                       byte_order=byte_order), copy=copy)


def describe(path: Source, hints: Hints | None = None, *, inert: bool = False, mode: str | None = None,
             long_size: int | None = None, byte_order: str | None = None) -> dict[str, Any]:
    """The canonical description of the file at ``path`` (or of bytes, or a file object, as :func:`load`)."""
    if isinstance(path, (str, os.PathLike)):  # dump's path: raised as the reader raises it
        return describe_document(open_document(path, _hints(hints, mode, long_size, byte_order), inert=inert))
    return describe_document(load_document(path, _hints(hints, mode, long_size, byte_order), inert=inert))
