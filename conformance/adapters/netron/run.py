"""The netron 9.3.3 adapter (spec/canonical.md#canonical-reader-cli): runs ``node driver.mjs`` on the
file and maps netron's exceptions onto the closed set of codes by the words of their messages
(adapter.yaml notes); adds no check of its own.  ``run.py --batch`` (spec/canonical.md#canonical-reader-batch)
keeps one ``node driver.mjs --batch`` for every request (node and netron's modules start once) and maps its
answers the same way; a node that dies is started anew for the next request."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
HOME = Path(os.environ.get("TORCHFMT_ADAPTERS_HOME") or Path.home() / ".cache/torchfmt/adapters") / "netron"
NETRON = HOME / "netron"
#: V8 reserves far more address space than it uses; a 1 GiB heap keeps it under the harness's RLIMIT_AS.
NODE_FLAGS = ["--max-old-space-size=1024", "--stack-size=4000"]
#: netron's message words -> the code they describe (first match wins), then the default per format.
CODES = [
    (r"unexpected end|end of (file|stream|data)|outside|exceeds? (the )?(buffer|stream)|offset is out",
     "truncated"),
    (r"memo", "bad-reference"),
    (r"opcode|unknown (pickle|operation)", "bad-opcode"),
    (r"magic|protocol version|signature", "bad-magic"),
    (r"invalid type|format has invalid type", "bad-type-code"),
    (r"size mismatch|invalid (array )?length", "bad-length"),
    (r"zip|central directory|compression|tar", "bad-container"),
    (r"not found|persistent", "bad-reference"),
    (r"big-endian|unsupported", "bad-value"),
]


def code_for(message: str) -> str:
    """``message`` is ``<family>: <JS class>: <text>``, family ``pt`` or ``t7``."""
    for pattern, code in CODES:
        if re.search(pattern, message, re.IGNORECASE):
            return code
    return "bad-type-code" if message.startswith("t7:") else "bad-pickle"


def main(argv: list[str]) -> int:
    node = shutil.which("node") or shutil.which("nodejs")
    if argv[1:] == ["--probe"]:
        if node is None or not (NETRON / "python.js").is_file():
            print(f"netron 9.3.3 not installed under {HOME} (or no node)")
            return 1
        version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
        print(f"netron 9.3.3 on node {version}")
        return 0
    if argv[1:] == ["--batch"]:
        sys.path.insert(0, str(HERE.parents[2]))  # the repository root
        from conformance.adapters import batch_protocol

        driver = Driver(node)
        return batch_protocol.serve(lambda path: answer(*driver.run(path)))
    proc = subprocess.run([node, *NODE_FLAGS, str(HERE / "driver.mjs"), str(NETRON), argv[1]],
                          capture_output=True, stdin=subprocess.DEVNULL)
    return answer(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace").strip())


def answer(status: int, out: bytes, err: str) -> int:
    """Print what the driver's run (``status``, its stdout, its stderr) means in the contract's terms."""
    if status == 0:
        sys.stdout.buffer.write(out)
        return 0
    if status == 2:
        print(err.splitlines()[-1], file=sys.stderr)
        return 2
    if status == 1 and err.startswith("netron-error: "):
        message = err.splitlines()[0][len("netron-error: "):]
        print(f"{code_for(message)}: netron: {message}", file=sys.stderr)
        return 1
    # the driver broke (exit 3), or node died (signal, out of memory): the adapter's failure, shown as such
    last = err.splitlines()[-1] if err else f"node exit status {status}"
    print(f"adapter error: {last[:300]}", file=sys.stderr)
    return 3


class Driver:
    """One ``node driver.mjs --batch`` for file after file: a path line in, a header line
    ``{"status", "err", "bytes"}`` and that many bytes of stdout back.  Its stderr is the batch process's
    (the suite ignores it); a node that died is started again for the next file."""

    def __init__(self, node: str) -> None:
        self.node = node
        self.proc: subprocess.Popen[bytes] | None = None

    def run(self, path: str) -> tuple[int, bytes, str]:
        if self.proc is None or self.proc.poll() is not None:
            command = [self.node, *NODE_FLAGS, str(HERE / "driver.mjs"), str(NETRON), "--batch"]
            self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(path.encode("utf-8", "surrogateescape") + b"\n")
            self.proc.stdin.flush()
            head = json.loads(self.proc.stdout.readline() or b"null")
        except (OSError, ValueError):
            head = None
        if not isinstance(head, dict):  # node died on this file (a signal, V8 out of memory)
            status = self.proc.wait()
            self.proc = None
            return 3, b"", f"node exit status {status}"
        out = self.proc.stdout.read(head["bytes"])
        return head["status"], out, head["err"]


if __name__ == "__main__":
    sys.exit(main(sys.argv))
