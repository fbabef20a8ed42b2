"""The reference writer: :func:`save`, the counterpart of :func:`torchfmt.load` (spec/pt-zip.md#pt-zip-write,
spec/pt-legacy.md#pt-legacy-write, spec/t7.md#t7-write).

It takes what ``load`` returns (model records: tensors, storages, Lua tables, torch objects ...) and
plain Python values and numpy arrays, and writes them in one of :data:`FORMATS`, atomically.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, BinaryIO

from .atomic import atomic_file
from .pickler import PicklingError

#: The formats :func:`save` writes.
FORMATS = ("pt-zip", "pt-legacy", "t7")
T7_MODES = ("binary", "ascii")

__all__ = ["FORMATS", "PicklingError", "save", "write"]


def save(obj: Any, path: str | os.PathLike[str], format: str = "pt-zip", *, t7_mode: str = "binary",
         check: Callable[[str], None] | None = None) -> None:
    """Write ``obj`` to ``path`` as ``format`` (``pt-zip``, ``pt-legacy`` or ``t7``; a ``.t7`` file in
    ``t7_mode`` ``binary`` or ``ascii``).  The file at ``path`` is replaced atomically: until the new
    one is complete, any file already there is left as it was; ``check``, given the complete temporary
    file's path, may refuse it by raising (nothing is then replaced)."""
    if format not in FORMATS:
        raise ValueError(f"format {format!r} is not one of {FORMATS}")
    if t7_mode not in T7_MODES:
        raise ValueError(f"t7_mode {t7_mode!r} is not one of {T7_MODES}")
    with atomic_file(path, check) as f:
        write(obj, f, format, t7_mode=t7_mode, path=path)


def write(obj: Any, f: BinaryIO, format: str = "pt-zip", *, t7_mode: str = "binary",
          path: str | os.PathLike[str] = "archive") -> None:
    """Write ``obj`` as ``format`` to the open binary file ``f`` (only ``f.write`` is called); a zip
    archive's root folder is named after ``path`` as torch names it."""
    if format == "pt-zip":
        from .zip import root_name, write_zip

        write_zip(obj, f, root_name(path))
    elif format == "pt-legacy":
        from .legacy import write_legacy

        write_legacy(obj, f)
    else:
        from .t7 import write_t7

        write_t7(obj, f, t7_mode)
