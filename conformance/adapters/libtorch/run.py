"""The ``libtorch`` reader: C++ ``torch::pickle_load`` (torch 2.13's libtorch) on a .pt zip archive.

``run.py PATH`` runs the program ``setup`` built from ``describe.cpp`` (under
``$TORCHFMT_ADAPTERS_HOME/libtorch``), which loads the file's bytes with ``torch::jit::pickle_load`` (what
``torch::pickle_load`` calls) and prints the canonical description of the IValue it returns
(spec/canonical.md#canonical-document).  When libtorch throws, libtorch's message is mapped onto the
closest code of the closed set by ``torch_reader.classify`` (libtorch's unpickler has messages of its own,
matched first); a signal or a crash of the program is passed on as it is.  Declined (exit 2): Lua Torch
files, the legacy stream and tar archives (libtorch reads zip archives only), TorchScript archives (the
``libtorch-jit`` reader: ``torch::jit::load`` compiles their code) and values with no version-0 form.
No check of the file is made here.  ``run.py --batch`` answers file after file
(spec/canonical.md#canonical-reader-batch): Python starts once, the program still once per file.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository root: the suite's package

# classify: torch's messages -> codes; imports no torch
from conformance.adapters import torch_reader  # noqa: E402
from conformance.harness.facts import hint_variables  # noqa: E402  (spec/canonical.md#canonical-t7-hints)

_T7_HINTS = hint_variables()
#: libtorch's own unpickler and reader messages -> codes, tried before torch_reader's rules.
_RULES: tuple[tuple[str, str], ...] = (
    (r"^std::bad_alloc", "limit-exceeded"),  # an allocation refused under the run's address-space limit
    (r"Unknown opcode", "bad-opcode"),
    (r"Expected PROTO opcode|Only Pickle protocol 2 is supported|stoull|stoll", "bad-magic"),
    (r"Unpickler found unknown type|Unknown (type|global|class)|Unsupported rebuild function",
     "unsafe-global"),
    (r"memo_table_|failed locating file data/|toStringRef\(\) == \"storage\"", "bad-reference"),
    (r"Unexpected end of pickler archive", "truncated"),
    (r"require a storage of at least|invalid storage offset", "out-of-bounds"),
    (r"hasRecord|not in a subdirectory", "bad-container"),
    (r"stack_|marks_|Unpickler expected \d+ element|Unknown IValue list kind|globals_|INTERNAL ASSERT FAILED",
     "bad-pickle"),
)


def binary() -> Path:
    home = os.environ.get("TORCHFMT_ADAPTERS_HOME") or str(Path.home() / ".cache" / "torchfmt" / "adapters")
    return Path(home) / "libtorch" / "torchfmt-libtorch"


def classify(message: str) -> str:
    from conformance.harness.vocabulary import error_codes

    codes = error_codes()
    for pattern, code in _RULES:
        if re.search(pattern, message) and code in codes:
            return code
    return torch_reader.classify(RuntimeError(message), codes)


def _say(line: str, status: int) -> int:
    print(" ".join(line.split())[:500], file=sys.stderr)
    return status


def run(path: str, jit: bool = False) -> int:
    """Run the built program on ``path`` and pass its answer on in the contract's terms."""
    proc = subprocess.run([str(binary()), *(["--jit"] if jit else []), path], stdin=subprocess.DEVNULL,
                          capture_output=True)
    err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    last = err[-1] if err else "no message"
    if proc.returncode < 0:  # killed by a signal (a segfault, an abort): die the same way
        signal.signal(-proc.returncode, signal.SIG_DFL)
        sys.stderr.write("\n".join(err[-3:]) + "\n")
        os.kill(os.getpid(), -proc.returncode)
    if proc.returncode == 0:
        sys.stdout.buffer.write(proc.stdout)
        return 0
    if proc.returncode == 1 and last.startswith("error: "):
        message = last.removeprefix("error: ")
        with open(path, "rb") as f:
            head = f.read(2)
        # no byte at all: truncated; bytes that are no zip archive: unknown-format; else by the message
        code = "truncated" if not head else classify(message) if head == b"PK" else "unknown-format"
        return _say(f"{code}: {message}", 1)
    if proc.returncode == 2:
        return _say(last, 2)
    sys.stderr.write("\n".join(err[-3:]) + "\n")
    return proc.returncode


def declined_format(path: str) -> str | None:
    """What libtorch cannot read at all, by the file's first bytes: the contract's feature name."""
    if any(v in os.environ for v in _T7_HINTS) or path.endswith(".t7"):
        return "t7-binary/t7-ascii (libtorch cannot read Lua Torch files)"
    with open(path, "rb") as f:
        head = f.read(512)
    if len(head) > 262 and head[257:262] == b"ustar":
        return "tar-archive (libtorch reads zip archives only)"
    if head[:1] in (b"\x80", b"L", b"\x8a"):
        return "legacy-stream (libtorch reads zip archives only; torch.load's legacy loader is Python)"
    return None


def probe() -> int:
    exe = binary()
    if not exe.is_file():
        print(f"{exe} not built: run conformance/adapters/libtorch/setup")
        return 1
    proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    print(proc.stdout.strip() or proc.stderr.strip())
    return proc.returncode


def main(argv: list[str]) -> int:
    if argv[1:] == ["--probe"]:
        return probe()
    if argv[1:] == ["--batch"]:
        from conformance.adapters import batch_protocol

        return batch_protocol.serve(lambda path: main([argv[0], path]))
    if len(argv) != 2:
        return _say("usage: run.py PATH | --probe", 3)
    feature = declined_format(argv[1])
    if feature:
        return _say(f"unsupported: {feature}", 2)
    return run(argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
