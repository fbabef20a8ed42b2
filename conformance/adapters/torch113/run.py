"""The ``torch113`` reader: Debian bookworm's ``python3-torch`` 1.13, ``torch.load(weights_only=True)``.

``run.py PATH`` runs ``conformance/adapters/torch_reader.py PATH`` under ``/usr/bin/python3`` (Debian's
Python, where ``apt-get install python3-torch`` puts torch 1.13), so the description and the error codes
are made exactly as for ``--reader torch``, from what torch 1.13's own weights_only unpickler loads.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PYTHON = "/usr/bin/python3"
TORCH_READER = Path(__file__).resolve().parents[1] / "torch_reader.py"


def probe() -> int:
    try:
        # the installed distribution's version, found without importing torch (a second of the suite's)
        proc = subprocess.run([PYTHON, "-c", "import importlib.util, importlib.metadata as m; "
                               "assert importlib.util.find_spec('torch'); print(m.version('torch'))"],
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=100)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"{PYTHON} did not run: {e}")
        return 1
    version = proc.stdout.strip()
    if proc.returncode != 0 or not version.startswith("1.13"):
        print(f"{PYTHON} has no torch 1.13 ({version or 'no torch'}): apt-get install python3-torch")
        return 1
    print(f"torch {version} (Debian python3-torch, {PYTHON}) torch.load(weights_only=True)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--probe"]:
        sys.exit(probe())
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    os.execve(PYTHON, [PYTHON, str(TORCH_READER), *sys.argv[1:]], env)
