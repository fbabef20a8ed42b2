"""The zip ``.pt`` format of ``torch.save`` (torch >= 1.6; spec/pt-zip.md).

``<root>/data.pkl`` is the object pickle; each storage it names by persistent id
``('storage', type, key, location, numel)`` is the record ``<root>/data/<key>``, read as a zero-copy view
of the file (:mod:`torchfmt.pt.archive`).  An archive with a ``constants.pkl`` record is TorchScript
(spec/torchscript.md#torchscript-detect).
"""

from __future__ import annotations

from ..errors import FormatError
from ..model import Document
from ..windows import FileWindows, MemoryWindows
from .archive import Archive
from .torchscript import read_torchscript
from .ziparchive import read_members


def read_zip(buf: FileWindows | MemoryWindows, *, inert: bool = False) -> Document:
    """Read a zip ``.pt`` file (or a TorchScript archive) held in ``buf``: a file read through
    :class:`~torchfmt.windows.FileWindows`, or bytes or a map through
    :class:`~torchfmt.windows.MemoryWindows`."""
    root, members = read_members(buf)
    if members.exact("constants.pkl"):  # torch's _is_torchscript_zip: constants.pkl (exactly), nothing else
        return read_torchscript(buf, root, members, inert=inert)
    if "data.pkl" not in members and "model.json" in members:
        raise FormatError("bad-container", None, "a TorchScript archive of the model.json era (torch < 1.4) "
                          "has no data.pkl (spec/torchscript.md#torchscript-model-json)")
    archive = Archive.open(buf, root, members)
    obj = archive.unpickle("data.pkl", "data/", inert=inert)
    sid = members.get(".data/serialization_id")
    if sid is not None:  # torch decodes it as UTF-8 once the object is loaded (spec/pt-zip.md#pt-zip-records)
        try:
            bytes(sid.data(buf)).decode("utf-8")
        except UnicodeDecodeError as e:
            raise FormatError("bad-value", sid.offset + e.start,
                              "the .data/serialization_id record is not UTF-8 text") from None
    return Document("pt-zip", [obj], extra=archive.info())
