"""The ``torch`` reader: real PyTorch's own view of a .pt file (spec/canonical.md#canonical-reader-cli).

``torch_reader.py PATH`` loads PATH with ``torch.load(map_location="cpu", weights_only=True)`` (never
anything laxer: no pickled code runs) and prints the canonical description made from torch's loaded
objects by ``conformance/generators/torch_describe.py``.  When torch refuses the file it exits 1 with one
stderr line ``<code>: <message>``, the code the closest of the closed set (read as data from
reference_impl/torchfmt/errors.py, not imported).  It declines (exit 2) what torch cannot or will not
read safely: Lua Torch ``.t7`` files, TorchScript archives (``weights_only=True`` refuses them; set
``TORCHFMT_TORCH_JIT=1`` to read them with ``torch.jit.load``, which compiles the archive's code) and
values with no version-0 form (nested tensors, storages on the meta device).  ``torch_reader.py --batch``
answers file after file in one process (spec/canonical.md#canonical-reader-batch).

Other adapters reuse it with a parameter: ``torch113`` runs this file under Debian's Python and torch 1.13,
``torch-full`` calls :func:`main` with ``weights_only=False`` (trusted files only: the pickle's globals are
called and TorchScript code is compiled, as ``torch.load`` itself does).
"""

from __future__ import annotations

import json
import os
import re
import sys
import warnings
from pathlib import Path

#: The repository root: the suite's package ``conformance`` (torch_describe, the closed set of error codes)
#: is imported from it when this file runs as a command (see the end of the file).
_ROOT = Path(__file__).resolve().parents[2]

#: torch's failure messages -> the closest code, first match wins (spec/canonical.md#canonical-error-codes).
_RULES: tuple[tuple[str, str], ...] = (
    (r"Unsupported (global|class)|is blocked|unrecognized function|Can only create new object|Can only build"
     r"|must be imported to load|not an allowed global", "unsafe-global"),
    (r"Unsupported operand|invalid load key|unknown opcode", "bad-opcode"),
    (r"[Ii]nvalid magic number|[Ii]nvalid protocol version|Unknown endianness|unsupported pickle protocol",
     "bad-magic"),
    (r"^EOFError|Ran out of input|truncated|unexpected end|EOF|file read failed|failed reading file"
     r"|failed finding central directory", "truncated"),
    (r"central directory|zip archive|PytorchStreamReader|not a zip|BadZipFile|record|zip file",
     "bad-container"),
    (r"out of bounds|setStorage|resize storage|not resizable|size mismatch|exceeds|storage of size"
     r"|wrong byte size",
     "out-of-bounds"),
    (r"persistent_load|persistent id|Memo value not found|^KeyError", "bad-reference"),
    (r"String is too long|negative|[Oo]verflow|too large", "bad-length"),
    (r"UnicodeDecodeError|codec can't decode", "bad-value"),
    (r"^UnpicklingError|^IndexError|pop from empty|MARK|STOP", "bad-pickle"),
)


def classify(e: BaseException, codes: frozenset[str]) -> str:
    """The error code for an exception torch raised while loading."""
    text = f"{type(e).__name__}: {e}"
    for pattern, code in _RULES:
        if re.search(pattern, text, re.MULTILINE) and code in codes:
            return code
    return "bad-value"


def _pickle_start(path: str) -> bool:
    """Whether the file starts like the legacy stream's magic-number pickle (PROTO, or LONG opcodes)."""
    with open(path, "rb") as f:
        return f.read(1) in (b"\x80", b"L", b"\x8a")


def _fail(code: str, message: str, status: int) -> int:
    print(f"{code}: {' '.join(message.split())[:400]}", file=sys.stderr)
    return status


def main(argv: list[str], *, weights_only: bool = True) -> int:
    """The contract command; ``weights_only=False`` loads as ``torch.load(weights_only=False)`` does
    (tar archives by the legacy loader, TorchScript archives by ``torch.jit.load``)."""
    if len(argv) != 2:
        return _fail("usage", "torch_reader.py PATH", 3)
    path = argv[1]
    from conformance.harness.facts import hint_variables, walk_frames  # the spec's tables, as data

    if path.endswith(".t7") or any(v in os.environ for v in hint_variables()):
        return _fail("unsupported", "t7-binary/t7-ascii (PyTorch cannot read Lua Torch files)", 2)
    warnings.simplefilter("ignore")
    sys.setrecursionlimit(max(sys.getrecursionlimit(), walk_frames()))  # deep nesting, JSON output included
    import torch  # noqa: F401  (imported late: a usage error needs no torch)

    from conformance.generators import torch_describe as td
    from conformance.harness.vocabulary import error_codes  # read from errors.py as data

    codes = error_codes()
    try:
        fmt = td.detect_format(path)
    except OSError as e:
        return _fail("io-error", str(e), 3)
    if os.path.getsize(path) == 0:
        return _fail("truncated", "empty file", 1)
    try:
        if fmt == "pt-tar" and weights_only:
            return _fail("unsupported", "tar-archive (torch.load(weights_only=True) refuses tar files)", 2)
        if fmt == "pt-torchscript":
            if weights_only and os.environ.get("TORCHFMT_TORCH_JIT") != "1":
                return _fail("unsupported", "torchscript-archive (torch.load(weights_only=True) refuses "
                             "TorchScript archives; TORCHFMT_TORCH_JIT=1 uses torch.jit.load)", 2)
            module = torch.jit.load(path, map_location="cpu")
            desc = td.describe_script_module(module)
        else:
            loaded = td.torch_load(path, weights_only=weights_only)
            desc = td.describe(loaded.obj, fmt, locations=loaded.locations)
    except td.Declined as e:
        return _fail("unsupported", str(e), 2)
    except Exception as e:  # torch refused the file: map its message to the closed set
        code = classify(e, codes)
        if fmt == "pt-legacy" and not _pickle_start(path):
            code = "unknown-format"  # neither zip, tar nor a pickle: no checkpoint at all
        return _fail(code, f"{type(e).__name__}: {td.last_line(e)}", 1)
    json.dump(desc, sys.stdout, ensure_ascii=True)
    sys.stdout.write("\n")
    return 0


def batch(*, weights_only: bool = True) -> int:
    """``--batch``: the same command on request after request (spec/canonical.md#canonical-reader-batch),
    torch imported once."""
    import torch  # noqa: F401

    from conformance.adapters import batch_protocol

    return batch_protocol.serve(lambda path: main([sys.argv[0], path], weights_only=weights_only))


if __name__ == "__main__":
    # A command of its own (the harness's, in a reader's sandbox, or torch113's Python): the suite's package
    # from this checkout.  Imported (conformance.adapters.torch_reader), its importer found the package.
    sys.path.insert(0, str(_ROOT))
    sys.exit(batch() if sys.argv[1:] == ["--batch"] else main(sys.argv))
