"""harness/gate.py: runs share the workers, a case that names its own canary runs alone."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from conformance.harness.gate import Gate, runs_alone
from conformance.harness.runner import CANARY


def test_only_a_case_with_its_own_canary_runs_alone() -> None:
    assert not runs_alone((CANARY,), CANARY)
    assert runs_alone((CANARY, CANARY.with_name("torchfmt-canary-x")), CANARY)


def test_an_exclusive_run_overlaps_no_other_and_shared_runs_overlap() -> None:
    gate, lock = Gate(), threading.Lock()
    inside: list[str] = []
    overlaps: list[tuple[str, ...]] = []
    most_shared = 0

    def job(kind: str) -> None:
        nonlocal most_shared
        with gate.hold(kind == "alone"):
            with lock:
                inside.append(kind)
                if "alone" in inside and len(inside) > 1:
                    overlaps.append(tuple(inside))
                most_shared = max(most_shared, inside.count("shared"))
            time.sleep(0.02)
            with lock:
                inside.remove(kind)

    kinds = ["shared", "shared", "alone", "shared", "shared", "alone", "alone", "shared"] * 5
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(job, kinds))
    assert overlaps == []
    assert most_shared >= 2
