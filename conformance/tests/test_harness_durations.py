"""The order runs start in: slowest first by the reader's last run (harness/durations.py), the rest in the
order their tests judge them; only the order, never a verdict (spec/canonical.md#canonical-reader-batch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.harness import durations

pytestmark = pytest.mark.spec("canonical.md#canonical-reader-batch")


def test_slow_cases_go_first_slowest_first_and_the_rest_keep_their_order() -> None:
    ids = ["a", "b", "c", "d", "e"]
    known = {"b": 0.2, "c": 30.0, "d": 1.0, "e": 4.5, "zz": 99.0}
    assert durations.slow_first(ids, ids, known) == ["c", "e", "d", "a", "b"]
    assert durations.slow_first(ids, ids, {}) == ids


def test_a_run_adds_its_seconds_to_the_stored_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHFMT_DURATIONS_DIR", str(tmp_path))
    assert durations.load("netron") == {}
    durations.save("netron", {"x": 1.23456, "y": 2.0})
    durations.save("netron", {"y": 0.5})
    assert durations.load("netron") == {"x": 1.235, "y": 0.5}
    assert [p.name for p in tmp_path.iterdir()] == ["netron.json"]
    command = durations.store_path("python3 my reader.py")
    assert command.parent == tmp_path and command.name.startswith("command-") and " " not in command.name


def test_an_unreadable_store_is_no_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCHFMT_DURATIONS_DIR", str(tmp_path))
    (tmp_path / "torch.json").write_text("[not json")
    assert durations.load("torch") == {}
    (tmp_path / "torch.json").write_text(json.dumps({"a": "slow", "b": 3}))
    assert durations.load("torch") == {"b": 3.0}
