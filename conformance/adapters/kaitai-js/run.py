"""The kaitai-js adapter (spec/canonical.md#canonical-reader-cli): ``node reader.js PATH``, the second Kaitai
reader, in JavaScript, over the generated JavaScript parsers of ksy/ and the pinned Kaitai runtime
(package-lock.json) that ``setup`` installs under the adapters home.  ``run.py --batch`` hands the process
over to ``node reader.js --batch``, which speaks the batch protocol itself
(spec/canonical.md#canonical-reader-batch); ``run.py --probe`` says whether node and the runtime are there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ADAPTERS = os.environ.get("TORCHFMT_ADAPTERS_HOME") or Path.home() / ".cache/torchfmt/adapters"
HOME = Path(ADAPTERS) / "kaitai-js"
MODULES = HOME / "node_modules"
PARSERS = HERE.parents[2] / "ksy" / "generated" / "javascript"
#: V8 reserves far more address space than it uses; a 1 GiB heap keeps it under the harness's RLIMIT_AS,
#: and a larger stack lets the generated parsers recurse through deep files.
NODE_FLAGS = ["--max-old-space-size=1024", "--stack-size=4000"]


def command(node: str, *args: str) -> list[str]:
    return [node, *NODE_FLAGS, str(HERE / "reader.js"), *args]


def environment() -> dict[str, str]:
    return {**os.environ, "NODE_PATH": str(MODULES)}


def main(argv: list[str]) -> int:
    node = shutil.which("node") or shutil.which("nodejs")
    if argv[1:] == ["--probe"]:
        if node is None or not (MODULES / "kaitai-struct" / "KaitaiStream.js").is_file():
            print(f"kaitai-struct 0.11.0 not installed under {HOME} (run its setup), or no node")
            return 1
        if not (PARSERS / "PythonPickle.js").is_file():
            print(f"no generated JavaScript parsers in {PARSERS} (bash ksy/build.sh)")
            return 1
        version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()
        print(f"kaitai-js (kaitai-struct 0.11.0) on node {version}")
        return 0
    if node is None:
        print("unsupported: node is not installed", file=sys.stderr)
        return 2
    if argv[1:] == ["--batch"]:
        os.execve(node, command(node, "--batch"), environment())
    if len(argv) != 2:
        print("unsupported: usage: run.py PATH", file=sys.stderr)
        return 2
    proc = subprocess.run(command(node, argv[1]), env=environment(), stdin=subprocess.DEVNULL)
    return proc.returncode if proc.returncode in (0, 1, 2) else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
