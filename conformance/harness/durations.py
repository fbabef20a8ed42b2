"""How long each case took a reader the last time, to start the slow ones first.

The suite starts its runs in a small pool (conformance/conftest.py); a case that takes a reader tens of
seconds (an expansion bomb) started last keeps one worker busy after all the others are done, and the
run's wall time is that case's plus everything before it.  Started first, it runs beside the rest.
Which cases are slow is a reader's own trait, learnt from its last run:
``~/.cache/torchfmt/durations/<reader>.json`` (``$TORCHFMT_DURATIONS_DIR`` elsewhere) maps a case's id
to its seconds.  Only the order of the runs depends on it, never a verdict (answers must not depend on
order, spec/canonical.md#canonical-reader-batch, which the suite's rechecks test).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeVar

#: A case that took at least this long last time is started before the others.
SLOW_SECONDS = 1.0
T = TypeVar("T")


def store_dir() -> Path:
    env = os.environ.get("TORCHFMT_DURATIONS_DIR")
    return Path(env) if env else Path.home() / ".cache" / "torchfmt" / "durations"


def store_path(reader: str) -> Path:
    """The file of a reader: its name, or for a command line a digest of it."""
    name = reader if re.fullmatch(r"[A-Za-z0-9_.-]+", reader) else \
        "command-" + hashlib.sha256(reader.encode()).hexdigest()[:16]
    return store_dir() / f"{name}.json"


def load(reader: str) -> dict[str, float]:
    """The seconds each case took ``reader`` last time (empty when unknown or unreadable)."""
    try:
        data = json.loads(store_path(reader).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: float(v) for k, v in data.items() if isinstance(k, str) and isinstance(v, (int, float))}


def save(reader: str, seconds: Mapping[str, float]) -> None:
    """Add this run's seconds to the stored ones (a run of some cases keeps the others'); best effort."""
    if not seconds:
        return
    merged = {**load(reader), **{k: round(v, 3) for k, v in seconds.items()}}
    path = store_path(reader)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(merged, sort_keys=True, indent=0) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass


def slow_first(items: Sequence[T], ids: Sequence[str], known: Mapping[str, float]) -> list[T]:
    """``items`` with those whose id took :data:`SLOW_SECONDS` or more last time first (slowest first),
    the others after them in their own order (the order their tests judge them in)."""
    slow = sorted((i for i, k in enumerate(ids) if known.get(k, 0.0) >= SLOW_SECONDS),
                  key=lambda i: -known[ids[i]])
    chosen = set(slow)
    return [items[i] for i in slow] + [x for i, x in enumerate(items) if i not in chosen]
