"""A safetensors file, streamed (spec/t7.md#t7-convert-safetensors).

The format is small and fully specified (huggingface/safetensors' README): an unsigned 64-bit
little-endian header length, the JSON header (each name's ``dtype``, ``shape`` and ``data_offsets``
``[begin, end)`` into the data, and an optional ``__metadata__`` map of strings), padded with spaces to a
multiple of 8 bytes, then the data: every tensor's elements C-contiguous and little-endian, back to back.
The header is computed from shapes alone and written first; each tensor is then written from its
storage (a map of the input file), a slice at a time, so the output is never held in memory whole.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any, BinaryIO

import numpy as np

from ..dtypes import SAFETENSORS_DTYPES
from ..model import Tensor

#: Bytes copied at once from a tensor that is not one contiguous run of its storage.
CHUNK = 1 << 24


#: The most dimensions a numpy array holds (NPY_MAXDIMS: 64 from numpy 2.0, 32 before); the writer streams
#: every tensor through one.
NUMPY_MAX_DIMS = 64 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 32

def header(tensors: dict[str, Tensor], metadata: dict[str, str] | None) -> tuple[bytes, int]:
    """The header bytes (length prefix and padding included) and the data's size."""
    entries: dict[str, Any] = {}
    if metadata:
        entries["__metadata__"] = metadata
    offset = 0
    for name, t in tensors.items():
        size = math.prod(t.shape) * t.dtype.itemsize
        entries[name] = {"dtype": SAFETENSORS_DTYPES[t.dtype.name], "shape": list(t.shape),
                         "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(entries, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return len(text).to_bytes(8, "little") + text, offset


def tensor_chunks(t: Tensor) -> Any:
    """The bytes of ``t``'s elements in C order, as a few large buffers: slices of the storage itself
    when ``t`` is one contiguous run of it, else copies of at most about :data:`CHUNK` bytes."""
    if any(n == 0 for n in t.shape):
        return
    view = t.numpy().reshape(t.shape)
    if view.flags.c_contiguous:
        flat = view.reshape(-1).view(np.uint8)
        for i in range(0, flat.size, CHUNK):
            yield memoryview(flat[i:i + CHUNK])
        return
    rows = view.reshape(-1, *view.shape[-1:]) if view.ndim > 1 else view.reshape(1, -1)
    per = max(1, CHUNK // max(1, rows.shape[-1] * view.itemsize))
    if rows.shape[0] == 1:  # one long strided row: cut it along its length
        row = rows[0]
        step = max(1, CHUNK // view.itemsize)
        for i in range(0, row.shape[0], step):
            yield memoryview(np.ascontiguousarray(row[i:i + step]).view(np.uint8))
        return
    for i in range(0, rows.shape[0], per):
        yield memoryview(np.ascontiguousarray(rows[i:i + per]).reshape(-1).view(np.uint8))


def write_safetensors(tensors: dict[str, Tensor], f: BinaryIO, metadata: dict[str, str] | None = None,
                      progress: Callable[[int], None] | None = None) -> int:
    """Write ``tensors`` (name -> tensor of a dtype in :data:`SAFETENSORS_DTYPES`, no conjugate or
    negative view) to ``f`` in order; ``progress`` is told each count of data bytes written.  The
    bytes written."""
    head, size = header(tensors, metadata)
    f.write(head)
    for t in tensors.values():
        for chunk in tensor_chunks(t):
            f.write(chunk)
            if progress is not None:
                progress(chunk.nbytes)
        if t.storage is not None:
            t.storage.release()  # its pages go back: the input is never resident whole
    return len(head) + size
