"""Many ``.t7`` files through real Lua Torch at the cost of one start: serve.lua loads torch, nn, nngraph and
tds once and forks a child per file, under a time and an address-space limit, in a temporary folder.

For the project's own tools (conformance/lua_verdicts.py, conformance/differential/t7.py, the writer's
tests in reference_impl/tests/test_writer_lua.py) and the adapter's batch mode (``lua-torch/run.py --batch``,
spec/canonical.md#canonical-reader-batch); ``lua-torch/run.py PATH`` runs one LuaJIT for its file.
Each answer is what run.py would answer for the file (graph.answer), plus how the child ended.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import graph
from .prefix import ADAPTER, PREFIX, lua_command

SECONDS = 30
MEMORY = 2 << 30


def installed() -> bool:
    """Whether a Lua Torch prefix is there to run (setup built or linked it, or $TORCHFMT_LUA_TORCH)."""
    return (PREFIX / "env.sh").is_file()


@dataclass
class Answer:
    """How a child ended (``exit`` with ``code``, ``signal`` with its number, ``timeout``) and, for a child
    that finished, what run.py would say: ``status`` (0, 1, 2; 3 the adapter's trouble), ``stdout``,
    ``stderr``."""

    ended: str
    code: int
    status: int | None = None
    stdout: str = ""
    stderr: str = ""
    #: torch7's own message and the objects read before it, when readObject raised a Lua error.
    lua_error: tuple[str, int] | None = None

    @property
    def outcome(self) -> str:
        """``loads``, ``refuses`` (a Lua error), ``declined`` (no form here, or a class not loaded),
        ``crashes`` (a signal) or ``timeout``."""
        if self.ended == "signal":
            return "timeout" if self.code == signal.SIGALRM else "crashes"
        if self.ended != "exit" or self.status not in (0, 1, 2):
            return "broken"
        return {0: "loads", 1: "refuses", 2: "declined"}[self.status]

    def summary(self) -> str:
        if self.ended == "signal":
            name = signal.Signals(self.code).name if self.code in iter(signal.Signals) else str(self.code)
            return f"LuaJIT killed by {name}" + (f" after {SECONDS} s" if self.code == signal.SIGALRM else "")
        if self.lua_error is not None:
            return graph.one_line(self.lua_error[0], 200)
        return self.stderr or "loads"


class LuaWorker:
    """serve.lua, started on entry; :meth:`run` answers one file (one at a time; thread-safe)."""

    def __init__(self, seconds: int = SECONDS, memory: int = MEMORY, *, env: dict[str, str] | None = None,
                 own_session: bool = True, stderr: int | None = subprocess.DEVNULL) -> None:
        """``seconds``: each child's alarm (0: none); ``memory``: its address-space limit;
        ``env``: serve.lua's environment (default: a minimal one); ``own_session``: serve.lua in a session
        of its own (the adapter's batch mode keeps it in its process group, which the harness ends as a
        whole); ``stderr``: where serve.lua's goes (default: nowhere; torch7's warnings)."""
        self.seconds, self.memory = seconds, memory
        self.env, self.own_session, self.stderr = env, own_session, stderr
        self.proc: subprocess.Popen[str] | None = None
        self.folder = ""
        self.lock = threading.Lock()
        self.n = 0

    def __enter__(self) -> LuaWorker:
        self.folder = tempfile.mkdtemp(prefix="torchfmt-lua-")
        env = self.env if self.env is not None else {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.folder,
            "TMPDIR": self.folder,
            "OMP_NUM_THREADS": "1",
        }
        self.proc = subprocess.Popen(
            lua_command(str(ADAPTER / "serve.lua")),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,  # torch7's warnings (a function's bytecode LuaJIT cannot load)
            text=True,
            cwd=self.folder,
            env=env,
            start_new_session=self.own_session,
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.folder, ignore_errors=True)

    def run(self, path: Path, hints: dict[str, Any] | None = None, first_only: bool = False) -> Answer:
        """Lua's answer for ``path`` read with the case's ``hints`` (``mode``, ``long_size``, ``byte_order``;
        torch.load's defaults for the ones not given); ``first_only`` reads one object, as torch.load does."""
        hints = hints or {}
        opts = [f"mode={hints.get('mode', 'binary')}"]
        if hints.get("long_size"):
            opts.append(f"long={hints['long_size']}")
        if hints.get("byte_order"):
            opts.append(f"order={hints['byte_order']}")
        if first_only:
            opts.append("max=1")
        with self.lock:
            assert self.proc is not None and self.proc.stdin is not None and self.proc.stdout is not None
            self.n += 1
            work = Path(self.folder) / f"r{self.n}"
            work.mkdir()
            out, blobs = work / "out.jsonl", work / "blobs.bin"
            request = [
                str(self.n),
                str(Path(path).resolve()),
                str(blobs),
                str(out),
                str(self.seconds),
                str(self.memory),
                " ".join(opts),
            ]
            self.proc.stdin.write("\t".join(request) + "\n")
            self.proc.stdin.flush()
            reply = self.proc.stdout.readline()
            if not reply:
                raise RuntimeError("serve.lua ended")
            _, ended = reply.rstrip("\n").split("\t", 1)
            kind, _, number = ended.partition(" ")
            answer = Answer(kind, int(number))
            if kind == "exit" and answer.code == 0:
                lines = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
                answer.status, answer.stdout, answer.stderr = graph.answer(
                    lines, blobs.read_bytes() if blobs.exists() else b"", hints.get("mode", "binary")
                )
                answer.lua_error = graph.lua_error(lines)
            shutil.rmtree(work, ignore_errors=True)
            return answer
