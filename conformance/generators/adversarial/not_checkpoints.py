"""Bytes that are no checkpoint at all, as users meet them behind a ``.pt`` name: HTML pages and XML,
JSON or plain-text error bodies of a failed download, a git LFS pointer, a safetensors or numpy file, a
gzipped checkpoint and zip archives that are not torch's (spec/canonical.md#canonical-detect,
spec/pt-zip.md#pt-zip-records).  Each one is refused as ``unknown-format`` with a message naming what it
is, not as a broken checkpoint of some variant.

torch tries these as a legacy stream (a zip as a zip archive) and refuses each of them.
"""

from __future__ import annotations

import gzip
import io
import struct
import zipfile

import numpy as np

from . import sources
from .record import AdvCase

GEN = "not_checkpoints.py"
DETECT = "canonical.md#canonical-detect"

HTML = (b'<html lang="en">\n<head><title>404 Not Found</title></head>\n<body><h1>Not Found</h1>'
        b"</body>\n</html>\n")
#: (name, bytes, what the file is): each read by torch as a legacy stream and refused.
TEXTS: list[tuple[str, bytes, str]] = [
    ("html-doctype-lower-case", b"<!doctype html>\n" + HTML,
     "an HTML page starting '<!doctype html>' in lower case (a download that fetched a web page)"),
    ("html-after-whitespace", b"\r\n\n   <!DOCTYPE html>\n" + HTML,
     "an HTML page whose '<!DOCTYPE html>' follows a blank line and spaces"),
    ("s3-xml-error", b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>'
     b"Access Denied</Message><RequestId>0123456789ABCDEF</RequestId></Error>",
     "an S3 error body (an XML document)"),
    ("xml-error-body", b"<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message>"
     b"<Key>model.pt</Key></Error>",
     "an XML error body without an XML declaration"),
    ("json-error-body", b'{"error":"Repository Not Found for url: https://example.invalid/model.pt."}',
     "a JSON error body of a model hub"),
    ("entry-not-found", b"Entry not found",
     "the text 'Entry not found' (a model hub's answer for a missing file)"),
    ("git-lfs-pointer", b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"0" * 64
     + b"\nsize 1234\n", "a git LFS pointer, not the file it points to"),
]


def _safetensors() -> bytes:
    """A safetensors file of one float32 tensor of two elements: an 8-byte little-endian header length,
    the JSON header (padded with spaces to 8 bytes, as the writer does), the data."""
    header = b'{"weight":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + struct.pack("<2f", 0.5, -1.0)


def _npy() -> bytes:
    f = io.BytesIO()
    np.save(f, np.arange(4, dtype=np.float32))
    return f.getvalue()


def _plain_zip(names: list[str]) -> bytes:
    f = io.BytesIO()
    with zipfile.ZipFile(f, "w") as z:
        for n in names:
            info = zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0))
            z.writestr(info, b"not a checkpoint\n")
    return f.getvalue()


def not_checkpoint_cases() -> list[AdvCase]:
    out: list[AdvCase] = []

    def case(fmt: str, name: str, data: bytes, how: str, spec: tuple[str, ...] = ()) -> None:
        out.append(AdvCase(f"{fmt}/adv-not-{name}", data, ["unknown-format"], ["adv-not-a-checkpoint"],
                           [DETECT, *spec], how, None, GEN))

    for name, data, how in TEXTS:
        case("pt-legacy", name, data, how)
    case("pt-legacy", "safetensors", _safetensors(),
         "a safetensors file (an 8-byte little-endian header length, then the JSON header "
         "'{\"weight\": ...')")
    case("pt-legacy", "numpy-npy", _npy(), "a numpy .npy file written by numpy.save (np.arange(4, float32))")
    zipped = sources.zip_source()
    case("pt-legacy", "gzip-of-checkpoint", gzip.compress(zipped.data, mtime=0),
         "a gzip stream of a checkpoint torch wrote (model.pt.gz renamed): gunzip it first")
    case("pt-zip", "plain-zip", _plain_zip(["readme.txt", "weights.bin"]),
         "a zip archive written by Python's zipfile holding readme.txt and weights.bin: no record torch "
         "writes",
         ("pt-zip.md#pt-zip-records",))
    case("pt-zip", "plain-zip-in-folder", _plain_zip(["model/readme.txt", "model/weights.bin"]),
         "a zip archive written by Python's zipfile whose files lie in one folder, as a checkpoint's do, "
         "but hold no record torch writes (no data.pkl, version or constants.pkl)",
         ("pt-zip.md#pt-zip-records",))
    return out
