"""The ``kaitai`` reader: a second, independent reader built on the generated Kaitai parsers
(spec/canonical.md#canonical-reader-cli).

``kaitai_reader.py PATH`` prints PATH's canonical description; exit 1 with one stderr line
``<code>: <message>`` when the file is malformed (codes: the closed set of reference_impl/torchfmt/errors.py,
read as data), exit 2 ``unsupported: <feature>`` for what it declines.  Its own bugs keep the contract
(spec/canonical.md#canonical-reader-cli): an unexpected exception is exit 2 ``unsupported: internal-error
(...; a reader bug)``, a MemoryError or RecursionError exit 1 ``limit-exceeded``, an unreadable path exit 2
``unsupported: unreadable-path``; ``--batch`` answers file after file in one process
(spec/canonical.md#canonical-reader-batch).  It never imports torchfmt: every byte layout is
read by ksy/generated/ (the grammars of ksy/*.ksy), and the package ``kaitai/`` beside this file holds
only what a grammar cannot say: the pickle stack machine (pickle_vm.py) and the allowlisted rebuild
functions (rebuild.py), the .t7 reference table and detection (t7.py), the .pt containers' semantics
(pt.py), hashing and sharing (describe.py).  .t7 hints come from ``TORCHFMT_T7_*``.

Where a grammar stops short, the glue takes over as little as it can: it searches for the zip end
record (pytorch_zip.ksy takes it at a fixed place, as torch writes it), drives the grammars' own
repetitions (t7 ``stream``, pickle ``ops``) one item at a time so that each is given its meaning before
the next is parsed, and after a grammar failure looks at the fields of the half-read objects (the
generated parsers keep no partial result) so that the first problem in reading order is the one reported.

Misses: none (conformance/results/kaitai.json, ``python -m conformance.matrix --readers kaitai``: every
committed and corpus case passes).  Lone surrogates in a pickle's str arguments are read since
python_pickle.ksy keeps those arguments as bytes and the pickle machine decodes them with
``surrogatepass`` (spec/pickle.md#pickle-protocols); a high surrogate followed by a low one is
``bad-value`` (spec/canonical.md#canonical-surrogates).  Every budget and limit is read from
spec/canonical.md's reader-limits table (kaitai/facts.py ``limits()``).

Known limits (same cause: what the grammar fixes):

- t7 ascii: torch7 skips any whitespace before a number; torch_t7_ascii.ksy accepts exactly the single
  spaces and newlines the writer puts there (a final number without its newline is ``truncated``).
- t7 class header ``V <x>``: the grammars take every ``V `` header for a version; while a stream is read,
  kaitai/t7.py's ``lua_versions`` makes their ``has_version`` also ask that ``<x>`` be a Lua number
  (spec/t7.md#t7-class-version), which no Kaitai expression can say.  Class names are read as ASCII
  (a UTF-8 name outside ASCII is ``bad-value``).
- zip: an end record followed by a comment, or a zip64 end record with extensible data reaching past
  the file, fail the grammar's fixed layout (``bad-container`` / ``truncated``).
- legacy streams whose ``sys_info`` says big-endian with a big-endian storage count: the grammar reads
  counts little-endian; declined.
- Counts checked against the bytes left before a table's pairs are read (spec/t7.md#t7-limits): the grammar
  reads until the end of the file and fails there, so a file with a second, later fault may be rejected
  with that fault's code instead of ``truncated``.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

#: The repository root: the suite's package and ksy/generated/ (the parsers Kaitai compiled), imported
#: from it when this file runs as a command (see the end of the file).
_ROOT = Path(__file__).resolve().parents[2]

STACK_SIZE = 512 << 20
RECURSION_LIMIT = 200_000
ZIP_MAGIC = b"PK\x03\x04"
#: Bytes an ascii .t7 stream starts with (spec/t7.md#t7-detect): never the first byte of a tar torch wrote.
T7_ASCII_START = [bytes([c]) for c in b" \t\n\v\f\r+-0123456789"]


def _not_a_checkpoint(head: bytes) -> str:
    """What the first bytes plainly are when they are no checkpoint (spec/canonical.md#canonical-detect):
    signatures after leading ASCII whitespace, ASCII case ignored; a JSON body; a safetensors header."""
    text = head.lstrip(b" \t\r\n\x0b\x0c").lower()
    for magic, what in ((b"version https://git-lfs", "a git LFS pointer"), (b"\x1f\x8b", "a gzip stream"),
                        (b"<!doctype", "an HTML page"), (b"<html", "an HTML page"),
                        (b"<?xml", "an XML document"), (b"<error>", "an XML error body"),
                        (b"entry not found", "an 'Entry not found' error text"),
                        (b"\x93numpy", "a numpy .npy file")):
        if text.startswith(magic):
            return what
    if text[:1] in (b"{", b"[") and text[1:2] in (b'"', b"{", b"[", b"]", b"}"):
        return "a JSON document"
    if _safetensors(head):
        return "a safetensors file"
    return ""


def _safetensors(head: bytes) -> bool:
    """A header length n, ``{"``, and n bytes from offset 8 that parse as one JSON object (``head`` holds
    them: :func:`read` reads them whole)."""
    n = int.from_bytes(head[:8], "little")
    if head[8:10] != b'{"' or not 0 < n <= 100_000_000 or 8 + n > len(head):
        return False
    try:
        return isinstance(json.loads(head[8:8 + n].decode("utf-8")), dict)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False


def read(path: str) -> dict[str, Any]:
    """The description of the file at ``path`` (spec/canonical.md#canonical-detect)."""
    from conformance.adapters.kaitai import pt, t7
    from conformance.adapters.kaitai.describe import describe
    from conformance.adapters.kaitai.failure import Reject

    with open(path, "rb") as f:
        head = f.read(512)
        size = f.seek(0, 2)
        f.seek(0)
        if not head:
            raise Reject("truncated", "empty file")
        sniffed = head
        if head[8:10] == b'{"':  # a safetensors header is parsed whole
            sniffed = f.read(min(int.from_bytes(head[:8], "little"), 100_000_000) + 8)
            f.seek(0)
        what = _not_a_checkpoint(sniffed)
        if what:
            raise Reject("unknown-format", f"this is {what}")
        if head.startswith(ZIP_MAGIC):
            mm = pt.open_mmap(f, size)
            fmt, objects = pt.read_zip(f, mm, size)
        elif head[0] > 8 and head[:1] not in T7_ASCII_START and pt.is_tar_header(head):  # not a .t7 start
            fmt, objects = pt.read_tar(f)
        elif head[0] == 0x80 or head[:1] in (b"L", b"\x8a"):
            fmt, objects = pt.read_legacy(f, size)
        else:
            return t7.read_t7(f, size, head)
        return describe(fmt, objects)


def _quote(e: BaseException) -> str:
    """A short, safe quote of an exception's first argument (never ``str(e)``: the repr of a file's deep
    value may itself recurse)."""
    arg = e.args[0] if e.args else ""
    text = arg if isinstance(arg, str) else type(arg).__name__
    return " ".join(text.split())[:120]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("unsupported: usage: kaitai_reader.py PATH", file=sys.stderr)
        return 2
    from conformance.adapters.kaitai.failure import Decline, Reject

    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["text"] = json.dumps(read(argv[1]), separators=(",", ":"))
        except Reject as e:
            result["exit"] = (1, f"{e.code}: {e.message}")
        except Decline as e:
            result["exit"] = (2, f"unsupported: {e.feature}")
        except (RecursionError, MemoryError) as e:
            result["exit"] = (1, f"limit-exceeded: Python {type(e).__name__} while reading (the reader's own "
                                 "limits did not stop it first: a reader bug)")
        except OSError as e:  # the path, not the bytes
            result["exit"] = (2, f"unsupported: unreadable-path ({e.strerror or type(e).__name__})")
        except BaseException as e:  # noqa: BLE001 - a bug of this reader, never a traceback
            result["exit"] = (2, f"unsupported: internal-error ({type(e).__name__}: {_quote(e)}; "
                                 "a reader bug)")

    sys.setrecursionlimit(RECURSION_LIMIT)
    threading.stack_size(STACK_SIZE)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    if "text" in result:
        sys.stdout.write(result["text"] + "\n")
        return 0
    status, line = result.get("exit", (2, "unsupported: internal-error (no result: a reader bug)"))
    sys.stderr.write(" ".join(line.split()) + "\n")
    return status


def batch() -> int:
    """``--batch``: the same command on request after request (spec/canonical.md#canonical-reader-batch)."""
    from conformance.adapters import batch_protocol

    return batch_protocol.serve(lambda path: main([sys.argv[0], path]))


if __name__ == "__main__":
    # A command of its own (the harness's, in a reader's sandbox, where only adapters/, harness/ and
    # generators/ of conformance/ show): the suite's package and the generated parsers from this checkout.
    # Imported (conformance.adapters.kaitai_reader), its importer found both (pyproject.toml's pythonpath).
    sys.path.insert(0, str(_ROOT / "ksy" / "generated"))
    sys.path.insert(0, str(_ROOT))
    sys.exit(batch() if sys.argv[1:] == ["--batch"] else main(sys.argv))
