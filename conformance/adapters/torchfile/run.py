"""The torchfile 0.1.0 adapter (spec/canonical.md#canonical-reader-cli): runs driver.py with the adapter's
venv python and maps torchfile's exceptions onto the closed set of codes by their kind (adapter.yaml
notes); adds no check of its own.  ``run.py --batch`` (spec/canonical.md#canonical-reader-batch) runs
itself in the venv and calls driver.py's ``main`` in that one process for every file."""

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
    if argv[1:] == ["--batch"]:
        os.execv(PYTHON, [str(PYTHON), str(Path(__file__).resolve()), "--serve"])
    if argv[1:] == ["--serve"]:  # in the venv: the driver in this process
        sys.path[:0] = [str(HERE.parents[2]), str(HERE.parent), str(HERE)]  # the repository root first
        import driver

        from conformance.adapters import batch_protocol

        def in_process(path: str) -> tuple[int, bytes, str]:
            status, out, err = batch_protocol.call(driver.main, path)
            return status, out, err.decode("utf-8", "replace").strip()

        return batch_protocol.serve(lambda path: answer(path, in_process))
    return answer(argv[1], in_subprocess)


def in_subprocess(path: str) -> tuple[int, bytes, str]:
    """driver.py on ``path`` with the venv's Python: (exit status, stdout, stderr)."""
    proc = subprocess.run([str(PYTHON), str(HERE / "driver.py"), path], capture_output=True,
                          stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace").strip()


def answer(path: str, run_driver) -> int:
    """The contract's answer for ``path``: .pt files declined, torchfile's exceptions mapped to codes."""
    with open(path, "rb") as f:
        head = f.read(512)
    if head.startswith(PT_MAGIC) or head[257:262] == b"ustar":
        print("unsupported: pt files (torchfile reads only .t7)", file=sys.stderr)
        return 2
    status, out, err = run_driver(path)
    if status == 0:
        sys.stdout.buffer.write(out)
        return 0
    if status == 2:
        print(err.splitlines()[-1], file=sys.stderr)
        return 2
    if status == 1 and err.startswith("torchfile-error: "):
        message = err.splitlines()[0][len("torchfile-error: "):]
        kind = message.split(":", 1)[0]
        print(f"{CODES.get(kind, 'bad-value')}: torchfile: {message}", file=sys.stderr)
        return 1
    last = err.splitlines()[-1] if err else f"driver exit status {status}"
    last = last.removeprefix("adapter error: ")
    print(f"adapter error: {last[:300]}", file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
