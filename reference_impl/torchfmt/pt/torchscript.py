"""TorchScript archives (``torch.jit.save``; spec/torchscript.md), described, never compiled.

The archive is a ``.pt`` zip whose ``data.pkl`` holds the module tree as objects of TorchScript classes
(globals under ``__torch__``, which name code in the ``code/`` records and are kept opaque: they are not
Python and are never looked up), with storages in ``data/``; ``constants.pkl`` holds the tensors the code
refers to as constants, with storages in ``constants/``.  The ``code/`` records are listed, not read.
"""

from __future__ import annotations

from typing import Any

from ..errors import Unsupported
from ..model import Document
from .archive import Archive
from .ziparchive import Records, Source

#: Globals under these modules are TorchScript classes: opaque objects in every mode.
TORCHSCRIPT_MODULES = ("__torch__",)
SCOPES = frozenset({"torch", "torchscript"})


def read_torchscript(buf: Source, root: str, members: Records, *,
                     inert: bool = False) -> Document:
    """Describe a TorchScript archive: ``objects`` holds the ``data.pkl`` module tree; ``extra`` the
    ``constants.pkl`` value and the names of the ``code/`` records
    (spec/torchscript.md#torchscript-records)."""
    if "data.pkl" not in members and "model.json" in members:
        raise Unsupported("TorchScript archive of the model.json era (torch < 1.4)")
    archive = Archive.open(buf, root, members)
    kw: dict[str, Any] = {"inert": inert, "scopes": SCOPES, "opaque_modules": TORCHSCRIPT_MODULES}
    module = archive.unpickle("data.pkl", "data/", **kw)
    constants = archive.unpickle("constants.pkl", "constants/", **kw) if "constants.pkl" in members else None
    code = sorted(name for name in members.names if name.startswith("code/"))
    extra = {**archive.info(), "constants": constants, "code": code}
    return Document("pt-torchscript", [module], extra=extra)
