"""Run variants through torch and the reference and classify each (spec/canonical.md#canonical-differential).

:class:`Differential` holds one persistent worker per reader (:mod:`.forkserver`): torch's sandboxed
worker imports torch once and forks a child per file (or, ``persistent_torch``, runs every file itself:
half the CPU time, the fuzz target's mode); the reference's forks a child per file with ``torchfmt``.
Both readers get the same file at once (two threads waiting on two processes).
"""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from conformance.harness.runner import Run, check_output, hint_env

from .classify import Verdict, classify
from .forkserver import Reply, Worker
from .variants import Variant

#: The contract's time limit for the reference (spec/canonical.md#canonical-budgets); torch gets more.
REFERENCE_SECONDS = 10.0
TORCH_SECONDS = 30.0


@dataclass
class Row:
    variant: Variant
    torch: Run | None
    reference: Run
    verdict: Verdict


def as_run(reply: Reply, command: list[str]) -> Run:
    """A worker's reply as the harness's :class:`Run`, checked by the contract's rules."""
    run = Run(command, reply.status, reply.stdout, reply.stderr, reply.seconds)
    if reply.status is None:
        run.broken("start", reply.stderr.decode(errors="replace"))
    elif reply.timed_out:
        run.broken("timeout", f"time limit of {reply.seconds:.0f} s exceeded")
    else:
        check_output(run)
    if run.problems:
        run.outcome = "broken"
    return run


def torch_reads(fmt: str) -> bool:
    """Whether torch is asked at all: not for Lua Torch files."""
    return not fmt.startswith("t7-")


class Differential:
    """Both workers, started on entry and stopped on exit; :meth:`check` answers one variant."""

    def __init__(self, reference_seconds: float = REFERENCE_SECONDS, torch_seconds: float = TORCH_SECONDS,
                 persistent_torch: bool = False):
        self.torch = Worker("torch", torch_seconds, persistent=persistent_torch)
        self.reference = Worker("reference", reference_seconds)
        self.folder = ""
        self.pool = ThreadPoolExecutor(2)

    def __enter__(self) -> Differential:
        self.folder = tempfile.mkdtemp(prefix="torchfmt-differential-")
        self.torch.start()
        self.reference.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.torch.stop()
        self.reference.stop()
        self.pool.shutdown()
        shutil.rmtree(self.folder, ignore_errors=True)

    def runs(self, data: bytes, fmt: str, hints: dict | None = None) -> tuple[Run | None, Run]:
        """torch's run (``None`` for .t7) and the reference's on ``data``."""
        path = Path(self.folder) / ("variant.t7" if fmt.startswith("t7-") else "variant.pt")
        path.write_bytes(data)
        t = self.pool.submit(self.torch.run, path) if torch_reads(fmt) else None
        r = self.pool.submit(self.reference.run, path, hint_env(hints or {}))
        ref = as_run(r.result(), ["torchfmt", "dump"])
        tor = as_run(t.result(), ["torch_reader.py"]) if t is not None else None
        path.unlink()
        return tor, ref

    def check(self, v: Variant) -> Row:
        tor, ref = self.runs(v.data, v.format, v.hints)
        return Row(v, tor, ref, classify(tor, ref, v.format))
