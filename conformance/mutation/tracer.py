"""The tracing server of :mod:`mutation.coverage`, a process of its own: it imports nothing of the reader
(nor of the harness, whose ``strict_json`` imports it) before its tracer is set, so that the lines the
reader runs as it is imported are seen."""

from __future__ import annotations

import json
import os
import resource
import sys
import threading

from .scope import TARGETS

MEMORY_LIMIT = 2 << 30


def serve(package: str) -> None:
    """Trace the reader under ``package`` (the folder holding ``torchfmt/``): one JSON request per line
    on stdin, ``{"path", "hints", "out"}``; one reply line ``{"status"}`` per request once the child ended
    (its lines are in ``out``)."""
    root = os.path.join(os.path.realpath(package), "torchfmt") + os.sep
    hits: set[tuple[str, int]] = set()
    add = hits.add

    def local(frame, event, arg):  # noqa: ANN001, ANN202 - sys.settrace's signature
        if event == "line":
            add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def call(frame, event, arg):  # noqa: ANN001, ANN202
        name = frame.f_code.co_filename
        if name.startswith(root):
            add((name, frame.f_lineno))
            return local
        return None

    def lines() -> dict[str, list[int]]:
        out: dict[str, set[int]] = {}
        for name, n in hits:
            out.setdefault(name[len(root):].replace(os.sep, "/"), set()).add(n)
        return {m: sorted(v) for m, v in out.items() if m in TARGETS}

    assert not any(m == "torchfmt" or m.startswith("torchfmt.") for m in sys.modules), \
        "the reader was imported before the tracer was set: its import lines would be missed"
    sys.settrace(call)
    threading.settrace(call)
    from conformance.harness.warm import warm_up

    warm_up()
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    replies.write(json.dumps({"imports": lines()}) + "\n")
    replies.flush()
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            status = 70
            try:
                hits.clear()
                os.setsid()
                resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
                for k in [k for k in os.environ if k.startswith("TORCHFMT_T7_")]:
                    del os.environ[k]
                os.environ.update(request["env"])
                for fd in (0, 1, 2):
                    os.dup2(os.open(os.devnull, os.O_RDWR), fd)
                from torchfmt.cli import main

                try:
                    status = main(["dump", request["path"]])
                except SystemExit as e:
                    status = e.code if isinstance(e.code, int) else 1
                with open(request["out"], "w") as f:
                    json.dump(lines(), f)
            except BaseException:  # noqa: BLE001 - the child never returns into the server
                pass
            os._exit(status if isinstance(status, int) else 1)
        _, st = os.waitpid(pid, 0)
        replies.write(json.dumps({"status": os.waitstatus_to_exitcode(st)}) + "\n")
        replies.flush()


