"""The in-process worker of :mod:`mutation.run`, a process of its own on the mutant's copy of the package.

It imports ``torchfmt.cli`` once (from its ``PYTHONPATH``: the copy that holds the mutant) and then runs
one case per request line on stdin, ``{"path", "env"}``, as ``torchfmt dump PATH`` runs it: the case's
``TORCHFMT_T7_*`` hints in the environment (and no others), ``torchfmt.cli.main(["dump", PATH])``
with standard output and standard error caught, under the contract's address-space limit; its reply line
is ``{"status", "stdout", "stderr", "seconds"}`` (the outputs as Latin-1 text of their bytes).  The
harness judges the reply as it judges a run (``harness.runner.check_output``, ``harness.verdict.judge``).
It imports nothing of the harness.
"""

from __future__ import annotations

import io
import json
import os
import resource
import sys
import time

MEMORY_LIMIT = 2 << 30
HINT_PREFIX = "TORCHFMT_T7_"


def _capture() -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace", newline="\n",
                            write_through=True)


def serve() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    from torchfmt.cli import main

    replies = os.fdopen(os.dup(1), "w")
    requests = os.fdopen(os.dup(0), "r")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    for line in requests:
        request = json.loads(line)
        for k in [k for k in os.environ if k.startswith(HINT_PREFIX)]:
            del os.environ[k]
        os.environ.update(request["env"])
        out, err = _capture(), _capture()
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        start = time.monotonic()
        try:
            status = main(["dump", request["path"]])
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 1
        except BaseException as e:  # noqa: BLE001 - as Python ends a script that raises: status 1
            print(f"Traceback (most recent call last):\n{type(e).__name__}: {e!r:.200}", file=sys.stderr)
            status = 1
        finally:
            sys.stdout, sys.stderr = saved
        seconds = time.monotonic() - start
        out.flush()
        err.flush()
        reply = {"status": status, "stdout": out.buffer.getvalue().decode("latin-1"),  # type: ignore[attr-defined]
                 "stderr": err.buffer.getvalue().decode("latin-1"), "seconds": seconds}  # type: ignore[attr-defined]
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


if __name__ == "__main__":
    serve()
