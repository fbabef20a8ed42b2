"""Which lines of the reader each case executes, measured once on the unmutated reader.

A tracing server (:func:`mutation.tracer.serve`, a process of its own with the package at ``package``
first on its path) sets a line tracer on the reader's files, imports what ``torchfmt dump`` imports
(:func:`harness.warm.warm_up`: the lines run then are run by every case), and forks one child per
case; the child takes the case's ``.t7`` hints as the harness gives them (``TORCHFMT_T7_*``), calls
``torchfmt.cli.main(["dump", PATH])`` with its output thrown away, and writes the
lines it executed.  A case that the tracer makes too slow (:data:`TIMEOUT`) counts as executing every
line: it is then run against every mutant.

Why this is sound: the reader is deterministic, and a mutant changes one statement; a case whose run
never executes that statement's lines runs the same code with the mutant as without, so its verdict
cannot change, and running it proves nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from conformance.harness.cases import Case
from conformance.harness.runner import hint_env

from .scope import PACKAGE

#: A traced run that takes longer counts as executing every line.
TIMEOUT = 300.0
CACHE_VERSION = 1


@dataclass
class Coverage:
    """Lines of each target module executed at import (every case) and by each case (by case id)."""

    imports: dict[str, set[int]] = field(default_factory=dict)
    cases: dict[str, dict[str, set[int]] | None] = field(default_factory=dict)  # None: every line
    seconds: dict[str, float] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)

    def index(self) -> dict[str, dict[int, set[str]]]:
        """module -> line -> ids of the cases that execute it."""
        out: dict[str, dict[int, set[str]]] = {}
        for case_id, lines in self.cases.items():
            for module, numbers in (lines or {}).items():
                per_line = out.setdefault(module, {})
                for n in numbers:
                    per_line.setdefault(n, set()).add(case_id)
        return out

    def relevant(self, module: str, lines: range, index: dict[str, dict[int, set[str]]]) -> set[str] | None:
        """The cases that execute any of ``lines`` of ``module``; ``None``: every case (import time)."""
        if any(n in self.imports.get(module, ()) for n in lines):
            return None
        found = {c for c, lines_of in self.cases.items() if lines_of is None}
        per_line = index.get(module, {})
        for n in lines:
            found |= per_line.get(n, set())
        return found

    def to_json(self) -> dict:
        def enc(lines: dict[str, set[int]] | None) -> dict | None:
            return None if lines is None else {m: sorted(v) for m, v in sorted(lines.items())}
        return {"version": CACHE_VERSION, "imports": enc(self.imports),
                "cases": {k: enc(v) for k, v in self.cases.items()}, "seconds": self.seconds,
                "statuses": self.statuses}

    @classmethod
    def from_json(cls, doc: dict) -> Coverage:
        def dec(lines: dict | None) -> dict[str, set[int]] | None:
            return None if lines is None else {m: set(v) for m, v in lines.items()}
        return cls(dec(doc["imports"]) or {}, {k: dec(v) for k, v in doc["cases"].items()},
                   dict(doc["seconds"]), dict(doc.get("statuses", {})))


# -- the client ----------------------------------------------------------------------------------------

class _Tracer:
    def __init__(self, package: Path) -> None:
        self.package = package
        self.files = tempfile.mkdtemp(prefix="torchfmt-mutation-trace-")
        self.start()

    def start(self) -> None:
        package = self.package
        env = {**os.environ, "PYTHONPATH": str(package), "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("PYTHONPYCACHEPREFIX", None)
        code = f"from conformance.mutation.tracer import serve; serve({str(package)!r})"
        # cwd the repository root: ``-c`` imports the suite's package from there, torchfmt from PYTHONPATH
        self.proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=str(Path(__file__).resolve().parents[2]), env=env, text=True)
        self.imports = json.loads(self._line(120.0) or "{}").get("imports", {})

    def _line(self, timeout: float) -> str | None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        return self.proc.stdout.readline() if ready else None

    def trace(self, case: Case) -> tuple[dict[str, set[int]] | None, float, int]:
        out = os.path.join(self.files, "lines.json")
        assert self.proc.stdin is not None
        start = time.monotonic()
        self.proc.stdin.write(json.dumps({"path": str(case.path), "env": hint_env(case.hints),
                                          "out": out}) + "\n")
        self.proc.stdin.flush()
        reply = self._line(TIMEOUT)
        seconds = time.monotonic() - start
        if not reply:  # too slow: it counts as executing everything; a new server for the next case
            self.close(kill=True)
            self.start()
            return None, seconds, -9
        try:
            with open(out) as f:
                lines = {m: set(v) for m, v in json.load(f).items()}
            os.unlink(out)
        except (OSError, ValueError):
            lines = None  # the child died before writing: unknown, so every line
        return lines, seconds, int(json.loads(reply)["status"])

    def close(self, kill: bool = False) -> None:
        if kill:
            self.proc.kill()
        elif self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def measure(cases: list[Case], package: Path, jobs: int = 2, progress: bool = True) -> Coverage:
    """Trace every case on the reader at ``package`` (the folder holding ``torchfmt/``), ``jobs`` at once."""
    cov = Coverage()
    todo = list(cases)
    lock = threading.Lock()

    def work() -> None:
        tracer = _Tracer(package)
        with lock:
            cov.imports = {m: set(v) for m, v in tracer.imports.items()}
        while True:
            with lock:
                if not todo:
                    break
                case = todo.pop(0)
            lines, seconds, status = tracer.trace(case)
            with lock:
                cov.cases[case.id] = lines
                cov.seconds[case.id] = round(seconds, 3)
                cov.statuses[case.id] = status
                if progress and len(cov.cases) % 100 == 0:
                    print(f"  coverage: {len(cov.cases)}/{len(cases)} cases", flush=True)
        tracer.close()
        shutil.rmtree(tracer.files, ignore_errors=True)

    threads = [threading.Thread(target=work) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return cov


def cache_key(cases: list[Case], package: Path = PACKAGE) -> str:
    """What the coverage depends on: the reader's sources and each case's file and hints."""
    h = hashlib.sha256(str(CACHE_VERSION).encode())
    for path in sorted(package.rglob("*.py")):
        h.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes())
    for c in cases:
        st = c.path.stat()
        h.update(f"{c.id}\0{st.st_size}\0{json.dumps(c.hints, sort_keys=True)}\0".encode())
    return h.hexdigest()[:24]


def cached(cases: list[Case], jobs: int = 2, cache_dir: Path | None = None) -> Coverage:
    """:func:`measure` of the project's reader, kept in a cache file named by :func:`cache_key`."""
    folder = cache_dir or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "torchfmt-mutation"
    path = folder / f"coverage-{cache_key(cases)}.json"
    if path.is_file():
        return Coverage.from_json(json.loads(path.read_text()))
    print(f"measuring which lines each of {len(cases)} cases executes (once per source state) ...",
          flush=True)
    cov = measure(cases, PACKAGE.parent, jobs)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(cov.to_json()))
    tmp.replace(path)
    return cov
