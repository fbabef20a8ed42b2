"""The one reading every tool makes of its input (issue 20): ``dump``'s.

:func:`read` is :func:`torchfmt.open_document` (strict unless ``inert``, as ``dump --inert``) followed by
the description's budgets (:func:`torchfmt.describe.check_limits`), so that an input ``dump`` refuses is
refused by ``inspect``, ``slim`` and ``convert`` with ``dump``'s line and exit status, and a tool's own
walks over what was read run under the recursion bound ``dump``'s description runs under (the reader's
depth limits cap the data's nesting; spec/canonical.md#canonical-node-budget).
"""

from __future__ import annotations

import os

from ..describe import check_limits
from ..model import Document
from ..source import open_document
from ..t7.encodings import Hints

#: The recursion bound of a tool's walks (the command line runs each tool under it): the one ``dump``'s
#: description runs under.
TOOL_RECURSION = 20_000


def read(path: str | os.PathLike[str], hints: Hints | None = None, *, inert: bool = False) -> Document:
    """The document ``dump`` (``dump --inert`` with ``inert``) reads from ``path``, or its refusal."""
    doc = open_document(path, hints, inert=inert)
    check_limits(doc)
    return doc
