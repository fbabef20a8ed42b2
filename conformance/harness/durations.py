"""How long each case took a reader the last time, to run the slow ones beside the others.

The suite starts its runs in a small pool (conformance/conftest.py, harness/lanes.py); a case that takes
a reader tens of seconds (an expansion bomb) started last keeps one worker busy after all the others are
done, and the run's wall time is that case's plus everything before it; started first on every worker,
it keeps the first verdicts off the screen.  One worker takes them first, the others the rest.
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

#: A case that took at least this long last time is slow: started beside the others (harness/lanes.py).
SLOW_SECONDS = 1.0
#: The cases a reader has not run yet that are taken as slow: bombs, which a reader without bounds ends
#: at the time limit.
SLOW_FEATURES = frozenset({"adv-expansion-bomb"})
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


def split(items: Sequence[T], ids: Sequence[str], known: Mapping[str, float],
          features: Sequence[Sequence[str]] | None = None) -> tuple[list[T], list[T]]:
    """``items`` as (the slow ones, slowest first; the others in their own order, the order their tests
    judge them in): slow is :data:`SLOW_SECONDS` or more last time, or, for a case the reader has no
    seconds of yet, a feature of :data:`SLOW_FEATURES` (``features``: each item's).  harness/lanes.py
    runs the slow ones beside the others, so that the first verdicts show at once."""
    def slow(i: int) -> bool:
        if ids[i] in known:
            return known[ids[i]] >= SLOW_SECONDS
        return features is not None and bool(SLOW_FEATURES & set(features[i]))

    chosen = sorted((i for i in range(len(items)) if slow(i)), key=lambda i: -known.get(ids[i], 0.0))
    picked = set(chosen)
    return [items[i] for i in chosen], [x for i, x in enumerate(items) if i not in picked]
