"""The torchfile 0.1.0 adapter (spec/canonical.md#canonical-reader-cli): runs driver.py with the adapter's
venv python and maps torchfile's exceptions onto the closed set of codes by their kind (adapter.yaml
notes); adds no check of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = os.environ.get("TORCHFMT_ADAPTERS_HOME") or Path.home() / ".cache/torchfmt/adapters"
HOME = Path(ROOT) / "torchfile"
PYTHON = HOME / "venv" / "bin" / "python"
CODES = {"error": "truncated",  # struct.error: a short read
         "EOFError": "truncated", "T7ReaderException": "bad-type-code", "NotImplementedError": "bad-value",
         "RecursionError": "limit-exceeded", "MemoryError": "limit-exceeded"}
#: zip, pickle protocol 2+, and the legacy magic number pickled at protocol 0/1 (``L<digits>L``).
PT_MAGIC = (b"PK\x03\x04", b"\x80\x02\x8a", b"\x80", b"L119547037146038801333356L")


def main(argv: list[str]) -> int:
    if argv[1:] == ["--probe"]:
        if not PYTHON.is_file():
            print(f"torchfile not installed under {HOME}")
            return 1
        version = "import importlib.metadata as m; print(m.version('torchfile'))"
        proc = subprocess.run([str(PYTHON), "-c", version], capture_output=True, text=True)
        if proc.returncode:
            print("torchfile is not importable in its venv")
            return 1
        print(f"torchfile {proc.stdout.strip()}")
        return 0
    path = argv[1]
    with open(path, "rb") as f:
        head = f.read(512)
    if head.startswith(PT_MAGIC) or head[257:262] == b"ustar":
        print("unsupported: pt files (torchfile reads only .t7)", file=sys.stderr)
        return 2
    proc = subprocess.run([str(PYTHON), str(HERE / "driver.py"), path], capture_output=True,
                          stdin=subprocess.DEVNULL)
    err = proc.stderr.decode("utf-8", "replace").strip()
    if proc.returncode == 0:
        sys.stdout.buffer.write(proc.stdout)
        return 0
    if proc.returncode == 2:
        print(err.splitlines()[-1], file=sys.stderr)
        return 2
    if proc.returncode == 1 and err.startswith("torchfile-error: "):
        message = err.splitlines()[0][len("torchfile-error: "):]
        kind = message.split(":", 1)[0]
        print(f"{CODES.get(kind, 'bad-value')}: torchfile: {message}", file=sys.stderr)
        return 1
    last = err.splitlines()[-1] if err else f"driver exit status {proc.returncode}"
    last = last.removeprefix("adapter error: ")
    print(f"adapter error: {last[:300]}", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
