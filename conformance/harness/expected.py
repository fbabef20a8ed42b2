"""Reading a case's expected description file (``expect: description:`` in case.yaml, conformance/README.md).

The file is ``expected.json``, or ``expected.json.gz`` (gzip) for a description too large to commit as
text: a generator writes the compressed form above ``generators/case_folder.GZIP_ABOVE`` bytes.  Every
reader of an expected file (the harness, the generators' cross-checks, the tests) goes through
:func:`read_expected_bytes` or :func:`load_expected` (the harness's ``load_case`` through it), so that both
forms are read one way and within one bound.

:func:`read_expected_bytes` needs only the standard library (torch_pt.py and rejects.py, which never
import torchfmt, use it); :func:`load_expected` parses strictly (spec/canonical.md#canonical-document).
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

#: The suffix that marks a gzip-compressed expected file.
GZIP_SUFFIX = ".gz"
#: The most bytes an expected description may hold, decompressed or not (the largest case,
#: pt-zip/adv-edge-nodes-500000-sparse, a description of exactly 500,000 nodes, holds 12 MB of text,
#: 31 kB gzipped).
MAX_BYTES = 64 << 20


class ExpectedError(ValueError):
    """The expected file cannot be read (the message names no file): not gzip, cut short, bytes after
    the stream, or larger than :data:`MAX_BYTES`."""


def read_expected_bytes(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The JSON text of the expected file ``path``: its bytes, decompressed when its name ends in
    :data:`GZIP_SUFFIX`; at most ``limit`` bytes, else :class:`ExpectedError` (also for a corrupt gzip
    stream).  A compressed file is inflated in bounded steps, so a gzip bomb costs ``limit`` at most."""
    with path.open("rb") as f:
        raw = f.read(limit + 1)
    if len(raw) > limit:
        raise ExpectedError(f"more than {limit} bytes")
    if not path.name.endswith(GZIP_SUFFIX):
        return raw
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)  # a gzip header and trailer, one member
    out = bytearray()
    try:
        pending = raw
        while pending:
            out += inflate.decompress(pending, limit + 1 - len(out))
            if len(out) > limit:
                raise ExpectedError(f"decompresses to more than {limit} bytes")
            pending = inflate.unconsumed_tail
        out += inflate.flush()
    except zlib.error as e:
        raise ExpectedError(f"not a gzip stream ({e})") from None
    if len(out) > limit:
        raise ExpectedError(f"decompresses to more than {limit} bytes")
    if not inflate.eof:
        raise ExpectedError("the gzip stream is cut short")
    if inflate.unused_data:
        raise ExpectedError("bytes after the gzip stream")
    return bytes(out)


def load_expected(path: Path, limit: int = MAX_BYTES) -> Any:
    """The expected description in ``path``, parsed as one strict JSON document: :class:`ExpectedError`
    or ``strict_json.JSONError`` (both ``ValueError``) when it cannot be."""
    from . import strict_json  # imports torchfmt (its recursion guard): only for the strict parse

    return strict_json.loads(read_expected_bytes(path, limit))
