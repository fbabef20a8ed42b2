"""The ``kaitai`` reader: a second, independent reader built on the generated Kaitai parsers
(spec/canonical.md#canonical-reader-cli).

``kaitai_reader.py PATH`` prints PATH's canonical description; exit 1 with one stderr line
``<code>: <message>`` when the file is malformed (codes: the closed set of reference_impl/torchfmt/errors.py,
read as data), exit 2 ``unsupported: <feature>`` for what it declines, exit 3 ``internal-error: ...`` for
its own bugs (so the suite counts them as failures).  It never imports torchfmt: every byte layout is
read by ksy/generated/ (the grammars of ksy/*.ksy), and the package ``kaitai/`` beside this file holds
only what a grammar cannot say: the pickle stack machine (pickle_vm.py) and the allowlisted rebuild
functions (rebuild.py), the .t7 reference table and detection (t7.py), the .pt containers' semantics
(pt.py), hashing and sharing (describe.py).  .t7 hints come from ``TORCHFMT_T7_*``.

Misses: committed and corpus cases this reader does not pass, each with what the grammars (or this
glue) cannot express.  Figures from ``pytest conformance/ --reader kaitai``; case ids as the suite names
them.  <none yet: filled in from the runs>
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(_HERE.parents[1] / "ksy" / "generated"))
sys.path.insert(0, str(_HERE))

STACK_SIZE = 512 << 20
RECURSION_LIMIT = 200_000
ZIP_MAGIC = b"PK\x03\x04"


def read(path: str) -> dict[str, Any]:
    """The description of the file at ``path`` (spec/canonical.md#canonical-detect)."""
    from kaitai import pt, t7
    from kaitai.describe import describe
    from kaitai.failure import Reject

    with open(path, "rb") as f:
        head = f.read(512)
        size = f.seek(0, 2)
        f.seek(0)
        if not head:
            raise Reject("truncated", "empty file")
        for magic, what in ((b"version https://git-lfs", "a git LFS pointer"), (b"\x1f\x8b", "a gzip stream"),
                            (b"<!DOCTYPE", "an HTML page"), (b"<html", "an HTML page"),
                            (b"\x93NUMPY", "a numpy .npy file")):
            if head.startswith(magic):
                raise Reject("unknown-format", f"this is {what}")
        if head.startswith(ZIP_MAGIC):
            mm = pt.open_mmap(f, size)
            fmt, objects = pt.read_zip(f, mm, size)
        elif head[257:262] == b"ustar":
            fmt, objects = pt.read_tar(f)
        elif head[0] == 0x80 or head[:1] in (b"L", b"\x8a"):
            fmt, objects = pt.read_legacy(f, size)
        else:
            return t7.read_t7(f, size, head)
        return describe(fmt, objects)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: kaitai_reader.py PATH", file=sys.stderr)
        return 3
    from kaitai.failure import Decline, Reject

    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["text"] = json.dumps(read(argv[1]), separators=(",", ":"))
        except Reject as e:
            result["exit"] = (1, f"{e.code}: {e.message}")
        except Decline as e:
            result["exit"] = (2, f"unsupported: {e.feature}")
        except RecursionError:
            result["exit"] = (1, "limit-exceeded: the file nests deeper than this reader's stack")
        except MemoryError:
            result["exit"] = (1, "limit-exceeded: out of memory")
        except BaseException as e:  # noqa: BLE001 - a bug of this reader, never a traceback
            result["exit"] = (3, f"internal-error: {type(e).__name__}: {e}")

    sys.setrecursionlimit(RECURSION_LIMIT)
    threading.stack_size(STACK_SIZE)
    t = threading.Thread(target=work)
    t.start()
    t.join()
    if "text" in result:
        sys.stdout.write(result["text"] + "\n")
        return 0
    status, line = result.get("exit", (3, "internal-error: no result"))
    sys.stderr.write(" ".join(line.split()) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
