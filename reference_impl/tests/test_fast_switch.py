"""The reader's one fast-path switch (torchfmt/fast/__init__.py): ``TORCHFMT_FAST`` is read at import, and
with the switch off the reader enters no fast path."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from fast_switch import fast_paths
from torchfmt import Hints, read_bytes
from torchfmt.fast import pickle_entry
from torchfmt.fast import t7 as fast_t7
from torchfmt.pt import ziparchive

from conformance.harness.cases import committed_cases

SHOW = "import torchfmt.fast as f; print(f.ENABLED)"


def _run(value: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "TORCHFMT_FAST"}
    if value is not None:
        env["TORCHFMT_FAST"] = value
    return subprocess.run([sys.executable, "-c", SHOW], capture_output=True, text=True, env=env, check=False)


@pytest.mark.parametrize(("value", "enabled"), [(None, "True"), ("1", "True"), ("0", "False")])
def test_the_environment_sets_the_switch(value: str | None, enabled: str) -> None:
    done = _run(value)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == enabled


@pytest.mark.parametrize("value", ["", "off", "false", "2"])
def test_any_other_value_is_refused_by_name(value: str) -> None:
    """A misspelt value is an error, not a silent ``on``."""
    done = _run(value)
    assert done.returncode != 0
    assert f"TORCHFMT_FAST={value!r}" in done.stderr


# -- the switch off: no fast path is entered -----------------------------------------------------------

def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Calls of each fast path's entry: the pickle tensor entry, the .t7 entries (one per binary reading)
    and the zip reader's local header pass naming members under the root (its ``prefix``)."""
    calls = {"pickle": 0, "t7": 0, "zip": 0}
    run, init, local_pass = pickle_entry.run, fast_t7.Entries.__init__, ziparchive._locals

    def counted_run(*args: Any) -> int:
        calls["pickle"] += 1
        return run(*args)

    def counted_init(self: fast_t7.Entries, *args: Any) -> None:
        calls["t7"] += 1
        init(self, *args)

    def counted_locals(*args: Any) -> Any:
        calls["zip"] += len(args) > 4 and args[4] is not None
        return local_pass(*args)

    monkeypatch.setattr(pickle_entry, "run", counted_run)
    monkeypatch.setattr(fast_t7.Entries, "__init__", counted_init)
    monkeypatch.setattr(ziparchive, "_locals", counted_locals)
    return calls


CASES = [c for c in committed_cases()
         if c.category == "accept" and c.format in ("pt-zip", "pt-legacy", "t7-binary") and c.path.is_file()]


@pytest.mark.parametrize("on", [True, False], ids=["on", "off"])
def test_the_switch_off_enters_no_fast_path(on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every committed accept case of the formats with fast paths read with the switch on enters each of
    them; with it off, none (so the suite run with TORCHFMT_FAST=0 judges the pure path alone)."""
    calls = _counting(monkeypatch)
    assert len(CASES) > 100
    with fast_paths(on):
        for case in CASES:
            read_bytes(case.path.read_bytes(), Hints(**case.hints))
    if on:
        assert min(calls.values()) > 0, calls
    else:
        assert calls == {"pickle": 0, "t7": 0, "zip": 0}
